/* timeline-axis.c — the figure's axes: time ticks (ticks, or round real
 * times on a real-time axis) with their grid, and byte axes. */
#include "render/timeline-private.h"

#include <math.h>
#include <string.h>

#include "render/axis.h"

/* Nice tick positions on the view's time axis, in ticks, with labels. */
typedef struct {
  double tick[64];
  char   label[64][32];
  char   label2[64][32];   /* second line: the real time of a tick label */
  size_t n;
} TimeTicks;

/* Labels at round real times on a real-time axis (the view's warp): x is
 * linear in time, so they are evenly spaced. */
static bool
use_time (const MlView *v)
{
  return v->warp != NULL;
}

/* A tick axis of a trace with times: each tick label gets its real time
 * under it (automatic axis, some events untimed). */
static bool
both_axes (const MlView *v, const MlScene *s, const MlStyle *st)
{
  return !v->warp && s->n_times >= 2 && st->time_axis == ML_TIME_AXIS_AUTO;
}

/* "12.3 ms": @digits significant digits (at least the whole part). */
static void
fmt_ns (double ns, int digits, char *buf, size_t len)
{
  static const char *const un[] = { "ns", "µs", "ms", "s" };
  double v = ns < 0 ? 0 : ns;
  int k = 0;
  while (k < 3 && v >= 1000.0)
    {
      v /= 1000.0;
      k++;
    }
  int whole = v >= 100 ? 3 : v >= 10 ? 2 : 1;
  int dec = k == 0 || digits <= whole ? 0 : digits - whole;   /* no fractions of a nanosecond */
  if (v == floor (v) && digits <= 3)
    dec = 0;
  snprintf (buf, len, "%.*f %s", dec, v, un[k]);
}

/* The real times under tick labels: three significant digits, more
 * (up to 9) while two labels of different times would read the same
 * ("1.20 s" twice for 1.2012 s and 1.2049 s). */
static bool
tick_times_apart (const double *ns, const bool *has, size_t n, int digits, char (*out)[32])
{
  for (size_t i = 0; i < n; i++)
    {
      out[i][0] = 0;
      if (has[i])
        fmt_ns (ns[i], digits, out[i], 32);
    }
  for (size_t i = 0; i + 1 < n; i++)
    if (has[i] && has[i + 1] && llround (fmax (ns[i], 0)) != llround (fmax (ns[i + 1], 0))
        && strcmp (out[i], out[i + 1]) == 0)
      return false;
  return true;
}

static void
fmt_tick_times (const double *ns, const bool *has, size_t n, char (*out)[32])
{
  for (int digits = 3; digits <= 9; digits++)
    if (tick_times_apart (ns, has, n, digits, out))
      return;
  tick_times_apart (ns, has, n, 3, out);   /* never apart: as few digits as any */
}

static void
time_ticks (const MlView *v, const MlScene *s, const MlStyle *st, TimeTicks *tt)
{
  int target = (int) (v->pw / 110.0);
  if (target < 2)
    target = 2;
  double vals[64], step;
  tt->n = 0;
  if (use_time (v))
    {
      /* round times since the first event, placed by the view's own
       * tick <-> time mapping */
      double base = ml_view_tick_ns (v, (double) s->first_tick);
      double n0 = ml_view_tick_ns (v, v->t0) - base, n1 = ml_view_tick_ns (v, v->t1) - base;
      if (n0 < 0)
        n0 = 0;
      size_t n = ml_axis_ticks (ML_AXIS_NS, n0, n1, target, vals, 64, &step);
      for (size_t i = 0; i < n; i++)
        {
          double t = ml_view_ns_tick (v, vals[i] + base);
          tt->tick[tt->n] = t;
          tt->label2[tt->n][0] = 0;
          ml_axis_label (ML_AXIS_NS, vals[i], step, tt->label[tt->n], sizeof tt->label[0]);
          tt->n++;
        }
      return;
    }
  size_t n = ml_axis_ticks (ML_AXIS_COUNT, v->t0, v->t1, target, vals, 64, &step);
  double base = 0;
  bool both = both_axes (v, s, st);
  if (both)   /* since the first event with a time, as the axis says */
    base = (double) s->time_ns[0];
  double ns[64];
  bool has[64];
  for (size_t i = 0; i < n; i++)
    {
      tt->tick[i] = vals[i];
      ml_axis_label (ML_AXIS_COUNT, vals[i], step, tt->label[i], sizeof tt->label[0]);
      has[i] = both && ml_scene_tick_to_ns (s, vals[i], &ns[i]);
      if (has[i])
        ns[i] -= base;
    }
  fmt_tick_times (ns, has, n, tt->label2);
  tt->n = n;
}

size_t
ml_timeline_time_labels (const MlView *v, const MlScene *s, const MlStyle *st, MlTimeLabel *out, size_t cap)
{
  TimeTicks tt;
  time_ticks (v, s, st, &tt);
  size_t n = 0;
  for (size_t i = 0; i < tt.n && n < cap; i++)
    {
      out[n].x = ml_view_time_to_x (v, tt.tick[i]);
      out[n].tick = tt.tick[i];
      snprintf (out[n].text, sizeof out[n].text, "%s", tt.label[i]);
      snprintf (out[n].text2, sizeof out[n].text2, "%s", tt.label2[i]);
      n++;
    }
  return n;
}

void
_ml_time_grid (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, double y0, double y1)
{
  TimeTicks tt;
  time_ticks (v, s, st, &tt);
  _ml_set_rgb (cr, ml_style_grid (st), 1.0);
  cairo_set_line_width (cr, 1.0);
  for (size_t i = 0; i < tt.n; i++)
    {
      double x = floor (ml_view_time_to_x (v, tt.tick[i])) + 0.5;
      if (x < v->px || x > v->px + v->pw)
        continue;
      cairo_move_to (cr, x, y0);
      cairo_line_to (cr, x, y1);
    }
  cairo_stroke (cr);
}

void
_ml_bytes_axis (cairo_t *cr, const MlStyle *st, double x, double y_top, double h, double lo, double hi, int target,
            double grid_x0, double grid_x1)
{
  double vals[32], step;
  size_t n = ml_axis_ticks (ML_AXIS_BYTES, lo, hi, target, vals, 32, &step);
  MlRgb fg = ml_style_fg (st);
  for (size_t i = 0; i < n; i++)
    {
      double y = y_top + h - (vals[i] - lo) / (hi - lo) * h;
      if (grid_x1 > grid_x0)
        {
          _ml_set_rgb (cr, ml_style_grid (st), 1.0);
          cairo_set_line_width (cr, 1.0);
          cairo_move_to (cr, grid_x0, floor (y) + 0.5);
          cairo_line_to (cr, grid_x1, floor (y) + 0.5);
          cairo_stroke (cr);
          continue;
        }
      char label[32];
      ml_axis_label (ML_AXIS_BYTES, vals[i], step, label, sizeof label);
      _ml_set_rgb (cr, fg, 0.5);
      cairo_set_line_width (cr, 1.0);
      cairo_move_to (cr, x - 4, floor (y) + 0.5);
      cairo_line_to (cr, x, floor (y) + 0.5);
      cairo_stroke (cr);
      double ty = _ml_clamp (y, y_top + _ml_font_px (st) * 0.5, y_top + h - _ml_font_px (st) * 0.5);
      _ml_text_at (cr, st, label, x - 6, ty, AL_RIGHT, VA_MIDDLE, 0.9, false, fg, 0.8, 0);
    }
}

void
ml_timeline_draw_time_axis (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, const MlRect *area)
{
  TimeTicks tt;
  time_ticks (v, s, st, &tt);
  MlRgb fg = ml_style_fg (st);
  double last_right = -1e9;
  for (size_t i = 0; i < tt.n; i++)
    {
      double x = ml_view_time_to_x (v, tt.tick[i]);
      if (x < v->px - 0.5 || x > v->px + v->pw + 0.5)
        continue;
      _ml_set_rgb (cr, fg, 0.5);
      cairo_set_line_width (cr, 1.0);
      cairo_move_to (cr, floor (x) + 0.5, area->y);
      cairo_line_to (cr, floor (x) + 0.5, area->y + 4);
      cairo_stroke (cr);
      double tw, th, tw2 = 0, th2 = 0;
      _ml_text_size (cr, st, tt.label[i], 0.9, false, &tw, &th);
      if (tt.label2[i][0])
        _ml_text_size (cr, st, tt.label2[i], 0.8, false, &tw2, &th2);
      double w = tw > tw2 ? tw : tw2;
      double cx = _ml_clamp (x, v->px + w / 2, v->px + v->pw - w / 2);
      if (cx - w / 2 < last_right + 8)
        continue;
      _ml_text_at (cr, st, tt.label[i], cx, area->y + 5, AL_CENTER, VA_TOP, 0.9, false, fg, 0.8, 0);
      if (tt.label2[i][0])
        _ml_text_at (cr, st, tt.label2[i], cx, area->y + 5 + th, AL_CENTER, VA_TOP, 0.8, false, fg, 0.55, 0);
      char both[72], where[48];
      snprintf (both, sizeof both, "%s%s%s", tt.label[i], tt.label2[i][0] ? " | " : "", tt.label2[i]);
      snprintf (where, sizeof where, "tick %.17g", tt.tick[i]);
      _ml_note (cr, "time-label", &(MlRect) { cx - w / 2, area->y + 5, w, th + th2 }, both, where);
      last_right = cx + w / 2;
    }
  const char *unit = use_time (v) ? "time since the first event"
                   : both_axes (v, s, st) ? "tick (event index), and time since the first event" : "tick (event index)";
  if (s->bufs->trace && s->bufs->trace->source && !use_time (v))
    {
      const char *src = ml_trace_str (s->bufs->trace, s->bufs->trace->source);
      if (src && strcmp (src, "csv") == 0)
        unit = "time step";
    }
  _ml_text_at (cr, st, unit, v->px + v->pw, area->y + area->h, AL_RIGHT, VA_BOTTOM, 0.85, false, fg, 0.6, 0);
}
