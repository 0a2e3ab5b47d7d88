#include "render/timeline.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <pango/pangocairo.h>

#include "render/axis.h"
#include "sim/base/io.h"
#include "sim/base/units.h"

/* ---- small helpers ------------------------------------------------------ */

static void
set_rgb (cairo_t *cr, MlRgb c, double alpha)
{
  cairo_set_source_rgba (cr, c.r, c.g, c.b, alpha);
}

static MlRgb
shade (MlRgb c, double f)   /* f < 1 darker, > 1 lighter */
{
  if (f < 1.0)
    return (MlRgb) { c.r * f, c.g * f, c.b * f };
  double k = f - 1.0;
  return (MlRgb) { c.r + (1 - c.r) * k, c.g + (1 - c.g) * k, c.b + (1 - c.b) * k };
}

static double
luminance (MlRgb c)
{
  return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
}

static double
font_px (const MlStyle *st)
{
  return st->font_size * 96.0 / 72.0;
}

enum { AL_LEFT = 0, AL_CENTER = 1, AL_RIGHT = 2 };
enum { VA_TOP = 0, VA_MIDDLE = 1, VA_BOTTOM = 2 };

/* Lays out @text in the style's font scaled by @scale; @max_w > 0
 * ellipsizes in the middle. Caller unrefs. */
static PangoLayout *
make_layout (cairo_t *cr, const MlStyle *st, const char *text, double scale, bool bold, double max_w)
{
  PangoLayout *l = pango_cairo_create_layout (cr);
  PangoFontDescription *fd = pango_font_description_new ();
  pango_font_description_set_family (fd, st->font ? st->font : "Sans");
  pango_font_description_set_absolute_size (fd, font_px (st) * scale * PANGO_SCALE);
  if (bold)
    pango_font_description_set_weight (fd, PANGO_WEIGHT_BOLD);
  pango_layout_set_font_description (l, fd);
  pango_font_description_free (fd);
  if (max_w > 0)
    {
      pango_layout_set_width (l, (int) (max_w * PANGO_SCALE));
      pango_layout_set_ellipsize (l, PANGO_ELLIPSIZE_MIDDLE);
    }
  pango_layout_set_text (l, text, -1);
  return l;
}

static void
text_size (cairo_t *cr, const MlStyle *st, const char *text, double scale, bool bold, double *w, double *h)
{
  PangoLayout *l = make_layout (cr, st, text, scale, bold, 0);
  int iw, ih;
  pango_layout_get_pixel_size (l, &iw, &ih);
  g_object_unref (l);
  *w = iw;
  *h = ih;
}

/* Draws @text anchored at (@x, @y); returns its width. */
static double
text_at (cairo_t *cr, const MlStyle *st, const char *text, double x, double y, int align, int valign,
         double scale, bool bold, MlRgb color, double alpha, double max_w)
{
  PangoLayout *l = make_layout (cr, st, text, scale, bold, max_w);
  int iw, ih;
  pango_layout_get_pixel_size (l, &iw, &ih);
  double tx = align == AL_CENTER ? x - iw / 2.0 : align == AL_RIGHT ? x - iw : x;
  double ty = valign == VA_MIDDLE ? y - ih / 2.0 : valign == VA_BOTTOM ? y - ih : y;
  set_rgb (cr, color, alpha);
  cairo_move_to (cr, tx, ty);
  pango_cairo_show_layout (cr, l);
  g_object_unref (l);
  return iw;
}

static double
clampd (double v, double lo, double hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

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

/* "12.3 ms": three significant digits. */
static void
fmt_ns (double ns, char *buf, size_t len)
{
  static const char *const un[] = { "ns", "µs", "ms", "s" };
  double v = ns < 0 ? 0 : ns;
  int k = 0;
  while (k < 3 && v >= 1000.0)
    {
      v /= 1000.0;
      k++;
    }
  snprintf (buf, len, v >= 100 || v == floor (v) ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v, un[k]);
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
  if (both)
    ml_scene_tick_to_ns (s, (double) s->first_tick, &base);
  for (size_t i = 0; i < n; i++)
    {
      tt->tick[i] = vals[i];
      ml_axis_label (ML_AXIS_COUNT, vals[i], step, tt->label[i], sizeof tt->label[0]);
      tt->label2[i][0] = 0;
      double ns;
      if (both && ml_scene_tick_to_ns (s, vals[i], &ns))
        fmt_ns (ns - base, tt->label2[i], sizeof tt->label2[0]);
    }
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

static void
time_grid (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, double y0, double y1)
{
  TimeTicks tt;
  time_ticks (v, s, st, &tt);
  set_rgb (cr, ml_style_grid (st), 1.0);
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

/* ---- the address × time layout ----------------------------------------- */

typedef struct {
  double x0, y0, x1, y1;
  uint32_t item;
  uint8_t cls;
} BigRect;

static const char *
item_name (const MlScene *s, const MlSceneItem *it, char *buf, size_t len)
{
  const MlBuffer *b = &s->bufs->buf[it->buffer];
  const MlTrace *t = s->bufs->trace;
  const char *n = t && b->name ? ml_trace_str (t, b->name) : NULL;
  if (!n || !*n)
    {
      if (t && b->stack && b->stack < t->n_stacks && t->stacks[b->stack].site)
        n = ml_trace_str (t, t->stacks[b->stack].site);
    }
  char size[32], shortened[256];
  ml_format_size (b->rsize, size, sizeof size);
  if (n && *n)
    snprintf (buf, len, "%s  %s", ml_short_label (n, shortened, sizeof shortened), size);
  else
    snprintf (buf, len, "#%" PRIu64 "  %s", b->id, size);
  return buf;
}

static int
by_area_desc (const void *a, const void *b)
{
  const BigRect *x = a, *y = b;
  double ax = (x->x1 - x->x0) * (x->y1 - x->y0), ay = (y->x1 - y->x0) * (y->y1 - y->y0);
  if (ax != ay)
    return ax > ay ? -1 : 1;
  return x->item < y->item ? -1 : x->item > y->item;
}

/* Adds ticks [@t0, @t1) x addresses [@lo, @hi) to the path, in whole
 * pixels, when any of it is in view. */
static void
band_rect (cairo_t *cr, const MlView *v, double t0, double t1, double lo, double hi)
{
  double x0 = clampd (ml_view_time_to_x (v, t0), v->px - 2, v->px + v->pw + 2);
  double x1 = clampd (ml_view_time_to_x (v, t1), v->px - 2, v->px + v->pw + 2);
  if (hi < v->a0 || lo > v->a1 || x1 <= v->px || x0 >= v->px + v->pw)
    return;
  double y0 = clampd (ml_view_addr_to_y (v, hi), v->py - 2, v->py + v->ph + 2);
  double y1 = clampd (ml_view_addr_to_y (v, lo), v->py - 2, v->py + v->ph + 2);
  cairo_rectangle (cr, round (x0), round (y0), fmax (1, round (x1) - round (x0)), fmax (1, round (y1) - round (y0)));
}

static void
draw_segments (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  const MlPlan *p = s->plan;
  MlRgb band = st->dark ? (MlRgb) { 0.18, 0.18, 0.20 } : (MlRgb) { 0.945, 0.945, 0.955 };
  set_rgb (cr, band, 1.0);
  double bpp = ml_view_bytes_per_px (v);
  for (size_t g = 0; g < p->n_segments; g++)
    {
      const MlSegment *seg = &p->segments[g];
      if (seg->flags & ML_SEG_PAGED)
        {
          /* reserved where its pages are mapped, while they are */
          for (size_t k = s->seg_map_first[g]; k < s->seg_map_first[g + 1]; k++)
            {
              const MlMapping *m = &p->maps[s->map_order[k]];
              double lo = (double) (s->seg_base[g] + m->offset);
              band_rect (cr, v, (double) m->start, (double) m->end, lo, lo + (double) m->size);
            }
          continue;
        }
      double lo = (double) s->seg_base[g];
      band_rect (cr, v, (double) seg->start, (double) seg->end, lo, lo + (double) s->seg_extent[g]);
    }
  cairo_fill (cr);
  /* boundaries between segments, when they are at least 4 px apart */
  if (p->n_segments > 1)
    {
      set_rgb (cr, ml_style_fg (st), 0.18);
      cairo_set_line_width (cr, 1.0);
      double last = -1e9;
      for (size_t g = 0; g < p->n_segments; g++)
        {
          double y = ml_view_addr_to_y (v, (double) s->seg_base[g]);
          if (y < v->py || y > v->py + v->ph || (double) s->seg_extent[g] / bpp < 4 || fabs (y - last) < 4)
            continue;
          last = y;
          cairo_move_to (cr, v->px, floor (y) + 0.5);
          cairo_line_to (cr, v->px + v->pw, floor (y) + 0.5);
        }
      cairo_stroke (cr);
    }
}

/* The rectangle of buffer @b's bytes [off, off + bytes) of its segment
 * over ticks [t0, t1), in pixels, grown to at least @min px each way. */
static void
issue_rect (cairo_t *cr, const MlView *v, const MlScene *s, uint32_t seg, uint64_t off, uint64_t bytes,
            double t0, double t1, double min)
{
  double lo = (double) s->seg_base[seg] + (double) off, hi = lo + (double) bytes;
  double x0 = ml_view_time_to_x (v, t0), x1 = ml_view_time_to_x (v, t1);
  double y0 = ml_view_addr_to_y (v, hi), y1 = ml_view_addr_to_y (v, lo);
  if (x1 - x0 < min)
    {
      double c = (x0 + x1) / 2;
      x0 = c - min / 2;
      x1 = c + min / 2;
    }
  if (y1 - y0 < min)
    {
      double c = (y0 + y1) / 2;
      y0 = c - min / 2;
      y1 = c + min / 2;
    }
  x0 = clampd (x0, v->px - 4, v->px + v->pw + 4);
  x1 = clampd (x1, v->px - 4, v->px + v->pw + 4);
  y0 = clampd (y0, v->py - 4, v->py + v->ph + 4);
  y1 = clampd (y1, v->py - 4, v->py + v->ph + 4);
  cairo_rectangle (cr, x0, y0, x1 - x0, y1 - y0);
}

static void
buffer_rect (cairo_t *cr, const MlView *v, const MlScene *s, uint32_t buf, double min)
{
  const MlBuffer *b = &s->bufs->buf[buf];
  uint32_t g = s->plan->segment[buf];
  if (g >= s->plan->n_segments)
    return;
  double end = b->end > b->start ? (double) b->end : (double) b->start + 1;
  issue_rect (cr, v, s, g, s->plan->offset[buf], b->rsize ? b->rsize : 1, (double) b->start, end, min);
}

static void
draw_issues (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  const MlIssues *is = s->issues;
  if (!is || !is->n)
    return;
  MlRgb red = ml_style_race (st);
  cairo_set_line_width (cr, 1.5);
  for (size_t i = 0; i < is->n; i++)
    {
      const MlIssue *x = &is->items[i];
      if (x->a >= s->bufs->n || x->b >= s->bufs->n || x->segment >= s->plan->n_segments)
        continue;
      const MlBuffer *a = &s->bufs->buf[x->a], *b = &s->bufs->buf[x->b];
      double t0, t1;
      if (x->kind == ML_ISSUE_CONFLICT)
        {
          t0 = (double) (a->start > b->start ? a->start : b->start);
          t1 = (double) (a->end < b->end ? a->end : b->end);
        }
      else
        {
          t0 = (double) (x->tick < x->tick_b ? x->tick : x->tick_b);
          t1 = (double) (x->tick < x->tick_b ? x->tick_b : x->tick) + 1.0;
        }
      /* the buffer that is hurt (the later one), outlined thinly */
      cairo_set_line_width (cr, 1.0);
      set_rgb (cr, red, 0.7);
      buffer_rect (cr, v, s, x->b, 3);
      cairo_stroke (cr);
      cairo_set_line_width (cr, 1.5);
      /* the racing bytes and ticks, filled */
      issue_rect (cr, v, s, x->segment, x->offset, x->bytes ? x->bytes : 1, t0, t1, 5);
      set_rgb (cr, red, 0.55);
      cairo_fill_preserve (cr);
      set_rgb (cr, red, 1.0);
      cairo_stroke (cr);
    }
}

static void
dashed_vline (cairo_t *cr, double x, double y0, double y1, MlRgb c, double alpha, double width)
{
  static const double dash[] = { 4.0, 3.0 };
  cairo_save (cr);
  cairo_set_dash (cr, dash, 2, 0);
  cairo_set_line_width (cr, width);
  set_rgb (cr, c, alpha);
  cairo_move_to (cr, floor (x) + 0.5, y0);
  cairo_line_to (cr, floor (x) + 0.5, y1);
  cairo_stroke (cr);
  cairo_restore (cr);
}

static void
dashed_hline (cairo_t *cr, double x0, double x1, double y, MlRgb c, double alpha, double width)
{
  static const double dash[] = { 6.0, 4.0 };
  cairo_save (cr);
  cairo_set_dash (cr, dash, 2, 0);
  cairo_set_line_width (cr, width);
  set_rgb (cr, c, alpha);
  cairo_move_to (cr, x0, floor (y) + 0.5);
  cairo_line_to (cr, x1, floor (y) + 0.5);
  cairo_stroke (cr);
  cairo_restore (cr);
}

/* The OOM's label and the box it takes at the top of the plot. */
static void
oom_label (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, char *text, size_t len, MlRect *box)
{
  char req[32];
  snprintf (text, len, "OOM: %s request (%s)", ml_format_size (s->plan->oom.request, req, sizeof req),
            ml_oom_verdict_name (s->plan->oom.verdict));
  double x = ml_view_time_to_x (v, (double) s->plan->oom.tick);
  double tw, th;
  text_size (cr, st, text, 0.95, true, &tw, &th);
  /* right of the line, or right of the refused request's box when that
   * reaches the top; left of the line near the right edge */
  MlRect rq;
  double right = x;
  if (ml_timeline_oom_request_box (v, s, st, &rq) && rq.y < v->py + th + 6)
    right = rq.x + rq.w;
  double tx = right + 4 + tw > v->px + v->pw ? x - 4 - tw : right + 4;
  *box = (MlRect) { tx - 2, v->py + 3, tw + 4, th + 2 };
}

bool
ml_timeline_oom_label_box (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, MlRect *box)
{
  if (!s->plan->oom.hit)
    return false;
  char text[128];
  oom_label (cr, v, s, st, text, sizeof text, box);
  return true;
}

static bool
rects_meet (const MlRect *a, const MlRect *b)
{
  return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

bool
ml_timeline_oom_request_box (const MlView *v, const MlScene *s, const MlStyle *st, MlRect *box)
{
  if (!s->oom_drawn)
    return false;
  double t = (double) s->plan->oom.tick;
  double x0 = ml_view_time_to_x (v, t), x1 = ml_view_time_to_x (v, t + 1);
  if (x1 - x0 < 12)
    x1 = x0 + 12;   /* a tick may be narrower than a pixel: keep it in sight */
  double lo = (double) (st->plot == ML_PLOT_ACTIVE ? s->oom_stack : s->oom_addr), hi = lo + (double) s->oom_bytes;
  double y0 = ml_view_addr_to_y (v, hi), y1 = ml_view_addr_to_y (v, lo);
  if (y1 - y0 < 3)
    {
      double c = (y0 + y1) / 2;
      y0 = c - 1.5;
      y1 = c + 1.5;
    }
  *box = (MlRect) { x0, y0, x1 - x0, y1 - y0 };
  return true;
}

/* The OOM: a red line at its tick, the label at the top, the refused
 * request hatched where it would have gone with its size beside it (in
 * the address plots, the strategy's placement once the capacity was
 * lifted is outlined over the request's lifetime). Clipped to the plot by
 * the caller. */
static void
draw_oom (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  if (!s->plan->oom.hit)
    return;
  MlRgb red = ml_style_race (st);
  double x = ml_view_time_to_x (v, (double) s->plan->oom.tick);
  if (x < v->px - 1 || x > v->px + v->pw + 1)
    return;
  cairo_save (cr);
  cairo_set_line_width (cr, 2.0);
  set_rgb (cr, red, 0.9);
  cairo_move_to (cr, round (x), v->py);
  cairo_line_to (cr, round (x), v->py + v->ph);
  cairo_stroke (cr);
  if (st->plot != ML_PLOT_ACTIVE && s->plan->oom.buffer < s->bufs->n)
    {
      static const double dash[] = { 3.0, 2.0 };
      cairo_set_dash (cr, dash, 2, 0);
      buffer_rect (cr, v, s, s->plan->oom.buffer, 4);
      cairo_stroke (cr);
      cairo_set_dash (cr, NULL, 0, 0);
    }
  char text[128];
  MlRect top;
  oom_label (cr, v, s, st, text, sizeof text, &top);
  MlRect b;
  if (ml_timeline_oom_request_box (v, s, st, &b))
    {
      /* hatched: a light red fill, red diagonals, a red frame */
      cairo_save (cr);
      cairo_rectangle (cr, b.x, b.y, b.w, b.h);
      cairo_clip (cr);
      set_rgb (cr, ml_style_bg (st), 1.0);
      cairo_paint (cr);
      set_rgb (cr, red, 0.25);
      cairo_paint (cr);
      set_rgb (cr, red, 0.85);
      cairo_set_line_width (cr, 1.5);
      for (double d = -b.h; d < b.w; d += 7)
        {
          cairo_move_to (cr, b.x + d, b.y + b.h);
          cairo_line_to (cr, b.x + d + b.h, b.y);
        }
      cairo_stroke (cr);
      cairo_restore (cr);
      set_rgb (cr, red, 1.0);
      cairo_set_line_width (cr, 1.5);
      cairo_rectangle (cr, b.x + 0.75, b.y + 0.75, fmax (b.w - 1.5, 1), fmax (b.h - 1.5, 1));
      cairo_stroke (cr);
      /* its size beside it: right of the box (left near the right edge),
       * at its middle within the plot, under the OOM's label if they meet */
      char sz[32], lab[64];
      snprintf (lab, sizeof lab, "refused %s", ml_format_size (s->oom_bytes, sz, sizeof sz));
      double tw, th;
      text_size (cr, st, lab, 0.9, true, &tw, &th);
      double lx = b.x + b.w + 4 + tw <= v->px + v->pw - 2 ? b.x + b.w + 4 : b.x - 4 - tw;
      double ly = clampd (b.y + b.h / 2 - th / 2, v->py + 2, v->py + v->ph - th - 2);
      MlRect r = { lx - 2, ly, tw + 4, th };
      if (rects_meet (&r, &top))
        r.y = ly = top.y + top.h + 2;
      set_rgb (cr, ml_style_bg (st), 0.85);
      cairo_rectangle (cr, r.x, r.y, r.w, r.h);
      cairo_fill (cr);
      text_at (cr, st, lab, lx, ly, AL_LEFT, VA_TOP, 0.9, true, red, 1.0, 0);
    }
  set_rgb (cr, ml_style_bg (st), 0.85);
  cairo_rectangle (cr, top.x, top.y, top.w, top.h);
  cairo_fill (cr);
  text_at (cr, st, text, top.x + 2, top.y + 1, AL_LEFT, VA_TOP, 0.95, true, red, 1.0, 0);
  cairo_restore (cr);
}

static void draw_segment_outlines (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st);
static void draw_frame (cairo_t *cr, const MlView *v, const MlStyle *st);

static void
draw_active_layout (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  cairo_save (cr);
  cairo_rectangle (cr, v->px, v->py, v->pw, v->ph);
  cairo_clip (cr);
  set_rgb (cr, ml_style_bg (st), 1.0);
  cairo_paint (cr);
  time_grid (cr, v, s, st, v->py, v->py + v->ph);
  ml_active_draw (cr, v, s, st);
  if (st->show_peaks && s->metrics.lower_bound_tick < s->end_tick)
    {
      double x = ml_view_time_to_x (v, (double) s->metrics.lower_bound_tick);
      if (x >= v->px && x <= v->px + v->pw)
        dashed_vline (cr, x, v->py, v->py + v->ph, ml_style_fg (st), 0.55, 1.0);
    }
  if (st->show_oom)
    draw_oom (cr, v, s, st);
  cairo_restore (cr);
  draw_frame (cr, v, st);
}

long
ml_timeline_hit (const MlView *v, const MlScene *s, const MlStyle *st, double x, double y)
{
  return st->plot == ML_PLOT_ACTIVE ? ml_active_hit (s, v, x, y) : ml_scene_hit (s, v, x, y);
}

void
ml_timeline_draw_layout (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  if (st->plot == ML_PLOT_ACTIVE)
    {
      draw_active_layout (cr, v, s, st);
      return;
    }
  cairo_save (cr);
  cairo_rectangle (cr, v->px, v->py, v->pw, v->ph);
  cairo_clip (cr);
  set_rgb (cr, ml_style_bg (st), 1.0);
  cairo_paint (cr);
  draw_segments (cr, v, s, st);
  time_grid (cr, v, s, st, v->py, v->py + v->ph);
  /* keep the grid under the segment bands faint: redraw bands lightly */

  size_t W = (size_t) ceil (v->pw), H = (size_t) ceil (v->ph);
  double bpp = ml_view_bytes_per_px (v);
  size_t i0 = ml_scene_first_visible (s, v->t0), i1 = ml_scene_end_visible (s, v->t1);
  uint32_t *grid = NULL;
  BigRect *big = NULL;
  size_t n_big = 0, cap_big = 0;
  bool any_small = false;
  unsigned by = (unsigned) st->color_by < ML_COLOR_BY__COUNT ? (unsigned) st->color_by : 0;
  for (size_t i = i0; i < i1; i++)
    {
      const MlSceneItem *it = &s->items[i];
      if ((double) it->end <= v->t0)
        continue;
      double lo = (double) it->addr, hi = lo + (double) it->size;
      if (hi <= v->a0 || lo >= v->a1)
        continue;
      double x0 = ml_view_time_to_x (v, (double) it->start) - v->px, x1 = ml_view_time_to_x (v, (double) it->end) - v->px;
      double y0 = (v->a1 - hi) / bpp, y1 = (v->a1 - lo) / bpp;
      if (x1 - x0 >= 2.0 && y1 - y0 >= 2.0)
        {
          if (n_big == cap_big)
            {
              size_t cap = cap_big ? cap_big * 2 : 1024;
              BigRect *p = realloc (big, cap * sizeof *p);
              if (!p)
                break;
              big = p;
              cap_big = cap;
            }
          big[n_big++] = (BigRect) { clampd (x0, -2, (double) W + 2), clampd (y0, -2, (double) H + 2),
                                     clampd (x1, -2, (double) W + 2), clampd (y1, -2, (double) H + 2),
                                     (uint32_t) i, it->cls[by] };
          continue;
        }
      if (!grid)
        {
          grid = malloc (W * H * sizeof *grid);
          if (!grid)
            break;
          memset (grid, 0xff, W * H * sizeof *grid);
        }
      any_small = true;
      long c0 = (long) floor (x0), c1 = (long) ceil (x1) - 1;
      long r0 = (long) floor (y0), r1 = (long) ceil (y1) - 1;
      if (c1 < c0) c1 = c0;
      if (r1 < r0) r1 = r0;
      if (c0 < 0) c0 = 0;
      if (r0 < 0) r0 = 0;
      if (c1 >= (long) W) c1 = (long) W - 1;
      if (r1 >= (long) H) r1 = (long) H - 1;
      for (long r = r0; r <= r1; r++)
        {
          uint32_t *row = grid + (size_t) r * W;
          for (long c = c0; c <= c1; c++)
            if (row[c] == UINT32_MAX || s->items[row[c]].size < it->size)
              row[c] = (uint32_t) i;
        }
    }

  cairo_antialias_t aa = cairo_get_antialias (cr);
  cairo_set_antialias (cr, CAIRO_ANTIALIAS_NONE);
  /* the merged sub-pixel items: one pixel per grid cell, in the colour
   * of the largest buffer there, painted as one image (compact in SVG and
   * PDF too, whatever the number of buffers) */
  if (any_small)
    {
      cairo_surface_t *img = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, (int) W, (int) H);
      if (cairo_surface_status (img) == CAIRO_STATUS_SUCCESS)
        {
          uint32_t argb[ML_PALETTE_N + 1];
          for (unsigned cls = 0; cls <= ML_PALETTE_N; cls++)
            {
              MlRgb c = ml_style_class_color (st, cls);
              argb[cls] = 0xff000000u | (uint32_t) lround (c.r * 255) << 16 | (uint32_t) lround (c.g * 255) << 8
                          | (uint32_t) lround (c.b * 255);
            }
          cairo_surface_flush (img);
          unsigned char *data = cairo_image_surface_get_data (img);
          int stride = cairo_image_surface_get_stride (img);
          for (size_t r = 0; r < H; r++)
            {
              uint32_t *row = (uint32_t *) (data + r * (size_t) stride);
              const uint32_t *g = grid + r * W;
              for (size_t c = 0; c < W; c++)
                row[c] = g[c] == UINT32_MAX ? 0 : argb[s->items[g[c]].cls[by] <= ML_PALETTE_N ? s->items[g[c]].cls[by] : ML_PALETTE_N];
            }
          cairo_surface_mark_dirty (img);
          cairo_save (cr);
          cairo_translate (cr, v->px, v->py);
          cairo_set_source_surface (cr, img, 0, 0);
          cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
          cairo_rectangle (cr, 0, 0, (double) W, (double) H);
          cairo_fill (cr);
          cairo_restore (cr);
        }
      cairo_surface_destroy (img);
    }
  /* the buffers at least two pixels each way: one fill per colour */
  for (unsigned cls = 0; cls <= ML_PALETTE_N; cls++)
    {
      bool any = false;
      for (size_t k = 0; k < n_big; k++)
        if (big[k].cls == cls)
          {
            const BigRect *b = &big[k];
            double x0 = round (b->x0), x1 = round (b->x1), y0 = round (b->y0), y1 = round (b->y1);
            cairo_rectangle (cr, v->px + x0, v->py + y0, fmax (1, x1 - x0), fmax (1, y1 - y0));
            any = true;
          }
      if (any)
        {
          set_rgb (cr, ml_style_class_color (st, cls), 1.0);
          cairo_fill (cr);
        }
    }
  cairo_set_antialias (cr, aa);
  /* outlines where they help tell neighbours apart */
  cairo_set_line_width (cr, 1.0);
  bool any_outline = false;
  for (size_t k = 0; k < n_big; k++)
    {
      const BigRect *b = &big[k];
      if (b->x1 - b->x0 < 6 || b->y1 - b->y0 < 6)
        continue;
      double x0 = round (b->x0), x1 = round (b->x1), y0 = round (b->y0), y1 = round (b->y1);
      cairo_rectangle (cr, v->px + x0 + 0.5, v->py + y0 + 0.5, x1 - x0 - 1, y1 - y0 - 1);
      any_outline = true;
    }
  if (any_outline)
    {
      set_rgb (cr, ml_style_bg (st), 0.85);
      cairo_stroke (cr);
    }
  /* labels where they fit, largest buffers first */
  if (st->show_labels && n_big)
    {
      double fh = font_px (st) * 0.9 * 1.1;
      qsort (big, n_big, sizeof *big, by_area_desc);
      size_t shown = 0;
      for (size_t k = 0; k < n_big && shown < 200; k++)
        {
          const BigRect *b = &big[k];
          double x0 = fmax (b->x0, 0), x1 = fmin (b->x1, (double) W);
          double y0 = fmax (b->y0, 0), y1 = fmin (b->y1, (double) H);
          if (x1 - x0 < 40 || y1 - y0 < fh + 2)
            break;   /* sorted by area: later ones rarely fit; cheap stop */
          char text[200];
          item_name (s, &s->items[b->item], text, sizeof text);
          double tw, th;
          text_size (cr, st, text, 0.9, false, &tw, &th);
          MlRgb fill = ml_style_class_color (st, b->cls);
          MlRgb ink = luminance (fill) > 0.45 ? (MlRgb) { 0.1, 0.1, 0.1 } : (MlRgb) { 1, 1, 1 };
          double maxw = x1 - x0 - 6;
          if (maxw < 30)
            continue;
          text_at (cr, st, text, v->px + x0 + 3, v->py + (y0 + y1) / 2, AL_LEFT, VA_MIDDLE, 0.9, false, ink, 0.95,
                   tw > maxw ? maxw : 0);
          shown++;
        }
    }
  free (big);
  free (grid);
  if (s->n_items == 0)
    text_at (cr, st, "no buffers with bytes in this trace", v->px + v->pw / 2, v->py + v->ph / 2, AL_CENTER, VA_MIDDLE,
             1.2, false, ml_style_fg (st), 0.6, 0);

  if (st->show_peaks && s->metrics.lower_bound)
    {
      double x = ml_view_time_to_x (v, (double) s->metrics.lower_bound_tick);
      if (x >= v->px && x <= v->px + v->pw)
        dashed_vline (cr, x, v->py, v->py + v->ph, ml_style_fg (st), 0.55, 1.0);
    }
  if (st->show_issues)
    draw_issues (cr, v, s, st);
  if (st->show_oom)
    draw_oom (cr, v, s, st);
  if (st->plot == ML_PLOT_SEGMENTS)
    draw_segment_outlines (cr, v, s, st);
  cairo_restore (cr);
  draw_frame (cr, v, st);
}

static void
draw_frame (cairo_t *cr, const MlView *v, const MlStyle *st)
{
  set_rgb (cr, ml_style_fg (st), 0.35);
  cairo_set_line_width (cr, 1.0);
  cairo_rectangle (cr, floor (v->px) + 0.5, floor (v->py) + 0.5, round (v->pw) - 1, round (v->ph) - 1);
  cairo_stroke (cr);
}

/* A range of offsets [lo, hi) of a segment. */
typedef struct {
  uint64_t lo, hi;
} Span;

static int
span_by_lo (const void *a, const void *b)
{
  const Span *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts and merges @n spans in place (touching ones join); returns how
 * many remain. */
static size_t
spans_merge (Span *sp, size_t n)
{
  if (n > 1)
    qsort (sp, n, sizeof *sp, span_by_lo);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (k && sp[i].lo <= sp[k - 1].hi)
      sp[k - 1].hi = sp[i].hi > sp[k - 1].hi ? sp[i].hi : sp[k - 1].hi;
    else
      sp[k++] = sp[i];
  return k;
}

/* Adds to the path the vertical edge at @x of the offsets covered by
 * exactly one of @a and @b (both merged): where the mapped set changes. */
static void
xor_edges (cairo_t *cr, const MlView *v, uint64_t base, double x, const Span *a, size_t na, const Span *b, size_t nb)
{
  size_t i = 0, j = 0;
  bool open = false;
  uint64_t from = 0;
  while (i < 2 * na || j < 2 * nb)
    {
      /* the next boundary of either list; the coverage of each after it */
      uint64_t ca = i < 2 * na ? (i % 2 ? a[i / 2].hi : a[i / 2].lo) : UINT64_MAX;
      uint64_t cb = j < 2 * nb ? (j % 2 ? b[j / 2].hi : b[j / 2].lo) : UINT64_MAX;
      uint64_t at = ca < cb ? ca : cb;
      while (i < 2 * na && (i % 2 ? a[i / 2].hi : a[i / 2].lo) == at)
        i++;
      while (j < 2 * nb && (j % 2 ? b[j / 2].hi : b[j / 2].lo) == at)
        j++;
      bool x_now = (i % 2) != (j % 2);
      if (x_now && !open)
        from = at, open = true;
      else if (!x_now && open)
        {
          cairo_move_to (cr, x, ml_view_addr_to_y (v, (double) (base + from)));
          cairo_line_to (cr, x, ml_view_addr_to_y (v, (double) (base + at)));
          open = false;
        }
    }
}

/* The outline of paged segment @g over the visible ticks: the union of its
 * mappings, which grows and shrinks as pages are mapped and unmapped.
 * Between two consecutive map / unmap ticks (a slab) the mapped ranges,
 * merged, give horizontal edges at their ends; at each slab boundary a
 * vertical edge covers the ranges mapped on one side only. Adds to the
 * path; false when out of memory (nothing then). O(m log m + slabs x a log a) for m mappings in
 * view, a of them mapped at once. */
static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static bool
paged_outline (cairo_t *cr, const MlView *v, const MlScene *s, size_t g)
{
  const MlPlan *p = s->plan;
  size_t first = s->seg_map_first[g], n = s->seg_map_first[g + 1] - first;
  double t0 = floor (fmax (v->t0, 0)), t1 = ceil (v->t1);
  double *ticks = malloc ((2 * n + 1) * sizeof *ticks);
  Span *cur = malloc ((n + 1) * sizeof *cur), *prev = malloc ((n + 1) * sizeof *prev);
  uint32_t *act = malloc ((n + 1) * sizeof *act);   /* the mappings live in the slab */
  size_t n_act = 0, next = 0;
  if (!ticks || !cur || !prev || !act)
    {
      free (ticks), free (cur), free (prev), free (act);
      return false;
    }
  size_t nt = 0;
  for (size_t k = 0; k < n; k++)
    {
      const MlMapping *m = &p->maps[s->map_order[first + k]];
      double a = fmax ((double) m->start, t0), b = fmin ((double) m->end, t1);
      if (b > a && m->size)
        ticks[nt++] = a, ticks[nt++] = b;
    }
  qsort (ticks, nt, sizeof *ticks, cmp_double);
  size_t u = 0;
  for (size_t k = 0; k < nt; k++)
    if (!u || ticks[k] != ticks[u - 1])
      ticks[u++] = ticks[k];
  nt = u;
  size_t np = 0;
  uint64_t base = s->seg_base[g];
  for (size_t k = 0; k + 1 <= nt; k++)
    {
      double x = round (ml_view_time_to_x (v, ticks[k])) + 0.5;
      size_t nc = 0;
      if (k + 1 < nt)
        {
          /* the slab [ticks[k], ticks[k + 1]): the mappings covering it.
           * They are sorted by start: keep those begun and not ended (no
           * mapping ends inside a slab, the ticks hold every end) */
          size_t na = 0;
          for (size_t j = 0; j < n_act; j++)
            if (fmin ((double) p->maps[act[j]].end, t1) > ticks[k])
              act[na++] = act[j];
          n_act = na;
          for (; next < n; next++)
            {
              uint32_t mi = s->map_order[first + next];
              const MlMapping *m = &p->maps[mi];
              if (fmax ((double) m->start, t0) > ticks[k])
                break;
              if (fmin ((double) m->end, t1) > ticks[k] && m->size)
                act[n_act++] = mi;
            }
          for (size_t j = 0; j < n_act; j++)
            cur[nc++] = (Span) { p->maps[act[j]].offset, p->maps[act[j]].offset + p->maps[act[j]].size };
          nc = spans_merge (cur, nc);
        }
      xor_edges (cr, v, base, x, prev, np, cur, nc);
      if (k + 1 < nt)
        {
          double x1 = round (ml_view_time_to_x (v, ticks[k + 1])) + 0.5;
          for (size_t j = 0; j < nc; j++)
            {
              double ylo = round (ml_view_addr_to_y (v, (double) (base + cur[j].lo))) - 0.5;
              double yhi = round (ml_view_addr_to_y (v, (double) (base + cur[j].hi))) + 0.5;
              cairo_move_to (cr, x, yhi);
              cairo_line_to (cr, x1, yhi);
              cairo_move_to (cr, x, ylo);
              cairo_line_to (cr, x1, ylo);
            }
        }
      Span *t = prev;
      prev = cur, cur = t;
      np = nc;
    }
  free (ticks), free (cur), free (prev), free (act);
  return true;
}

/* The segments plot: each segment outlined over its lifetime (a paged
 * one, an expandable segment, following its mapped pages), with its
 * index and size where they fit. */
static void
draw_segment_outlines (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  const MlPlan *p = s->plan;
  MlRgb ink = ml_style_fg (st);
  cairo_set_line_width (cr, 1.5);
  for (size_t g = 0; g < p->n_segments; g++)
    {
      const MlSegment *seg = &p->segments[g];
      double x0 = clampd (ml_view_time_to_x (v, (double) seg->start), v->px - 2, v->px + v->pw + 2);
      double x1 = clampd (ml_view_time_to_x (v, (double) seg->end), v->px - 2, v->px + v->pw + 2);
      double lo = (double) s->seg_base[g], hi = lo + (double) s->seg_extent[g];
      if (hi < v->a0 || lo > v->a1 || x1 <= v->px || x0 >= v->px + v->pw)
        continue;
      double y0 = clampd (ml_view_addr_to_y (v, hi), v->py - 2, v->py + v->ph + 2);
      double y1 = clampd (ml_view_addr_to_y (v, lo), v->py - 2, v->py + v->ph + 2);
      if (y1 - y0 < 1)
        continue;
      char text[128], sz[32], mp[32];
      set_rgb (cr, ink, 0.75);
      if (seg->flags & ML_SEG_PAGED)
        {
          bool drawn = paged_outline (cr, v, s, g);
          cairo_stroke (cr);
          if (!drawn)
            continue;
          snprintf (text, sizeof text, "segment %zu · %s range%s, %s mapped at most", g,
                    ml_format_size (seg->size, sz, sizeof sz), seg->flags & ML_SEG_EXPANDABLE ? " · expandable" : "",
                    ml_format_size (s->seg_mapped_max[g], mp, sizeof mp));
        }
      else
        {
          cairo_rectangle (cr, round (x0) + 0.75, round (y0) + 0.75, fmax (1, round (x1) - round (x0) - 1.5),
                           fmax (1, round (y1) - round (y0) - 1.5));
          cairo_stroke (cr);
          snprintf (text, sizeof text, "segment %zu · %s%s", g, ml_format_size (seg->size, sz, sizeof sz),
                    seg->flags & ML_SEG_EXPANDABLE ? " · expandable" : "");
        }
      double tw, th;
      text_size (cr, st, text, 0.85, false, &tw, &th);
      /* at the segment's bottom right: the top of the plot carries the
       * OOM and marker labels, the left the buffers' names */
      if (tw + 6 < x1 - x0 && th + 4 < y1 - y0)
        {
          double tx = fmin (x1, v->px + v->pw) - tw - 6, ty = fmin (y1, v->py + v->ph) - th - 3;
          set_rgb (cr, ml_style_bg (st), 0.8);
          cairo_rectangle (cr, tx - 2, ty, tw + 4, th);
          cairo_fill (cr);
          text_at (cr, st, text, tx, ty, AL_LEFT, VA_TOP, 0.85, false, ink, 0.9, 0);
        }
    }
}

void
ml_timeline_item_rect (const MlView *v, const MlScene *s, size_t item, MlRect *out)
{
  const MlSceneItem *it = &s->items[item];
  double x0 = ml_view_time_to_x (v, (double) it->start), x1 = ml_view_time_to_x (v, (double) it->end);
  double y0 = ml_view_addr_to_y (v, (double) it->addr + (double) it->size), y1 = ml_view_addr_to_y (v, (double) it->addr);
  *out = (MlRect) { x0, y0, x1 - x0, y1 - y0 };
}

void
ml_timeline_draw_highlight (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, size_t item, MlMark mark)
{
  if (item >= s->n_items)
    return;
  if (st->plot == ML_PLOT_ACTIVE)
    {
      ml_active_draw_highlight (cr, v, s, st, item, mark);
      return;
    }
  MlRect r;
  ml_timeline_item_rect (v, s, item, &r);
  double min = 3.0;
  if (r.w < min)
    {
      r.x -= (min - r.w) / 2;
      r.w = min;
    }
  if (r.h < min)
    {
      r.y -= (min - r.h) / 2;
      r.h = min;
    }
  double x0 = clampd (r.x, v->px - 4, v->px + v->pw + 4), x1 = clampd (r.x + r.w, v->px - 4, v->px + v->pw + 4);
  double y0 = clampd (r.y, v->py - 4, v->py + v->ph + 4), y1 = clampd (r.y + r.h, v->py - 4, v->py + v->ph + 4);
  if (x1 <= x0 || y1 <= y0)
    return;
  /* match: magenta, thin; hover: the text colour, thin; selected: heavier,
   * with a veil over the buffer */
  static const MlRgb match = { 0.85, 0.10, 0.55 };
  MlRgb c = mark == ML_MARK_MATCH ? match : ml_style_fg (st);
  double lw = mark == ML_MARK_SELECTED ? 2.5 : mark == ML_MARK_MATCH ? 1.5 : 1.0;
  cairo_save (cr);
  cairo_rectangle (cr, v->px, v->py, v->pw, v->ph);
  cairo_clip (cr);
  if (mark == ML_MARK_SELECTED)
    {
      cairo_rectangle (cr, x0, y0, x1 - x0, y1 - y0);
      set_rgb (cr, c, 0.25);
      cairo_fill (cr);
    }
  /* the stroke lies inside the rectangle, so neighbours stay visible */
  cairo_rectangle (cr, x0 + lw / 2, y0 + lw / 2, fmax (x1 - x0 - lw, 1), fmax (y1 - y0 - lw, 1));
  cairo_set_line_width (cr, lw);
  set_rgb (cr, c, 0.95);
  cairo_stroke (cr);
  cairo_restore (cr);
}

void
ml_timeline_draw_marker (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, double tick,
                         const char *label, double bottom)
{
  double x = round (ml_view_time_to_x (v, tick)) + 0.5;
  if (tick < 0 || x < v->px || x > v->px + v->pw)
    return;
  MlRgb red = ml_style_race (st);
  cairo_save (cr);
  set_rgb (cr, red, 0.9);
  cairo_set_line_width (cr, 1.5);
  static const double dash[] = { 5, 3 };
  cairo_set_dash (cr, dash, 2, 0);
  cairo_move_to (cr, x, v->py);
  cairo_line_to (cr, x, bottom);
  cairo_stroke (cr);
  cairo_set_dash (cr, NULL, 0, 0);
  if (label && *label)
    {
      double tw, th;
      text_size (cr, st, label, 1.0, true, &tw, &th);
      double lx = fmin (x + 4, v->px + v->pw - tw - 4), ly = v->py + 2;
      /* under the OOM's label when they would meet */
      MlRect r;
      if (s && st->show_oom && ml_timeline_oom_label_box (cr, v, s, st, &r) && lx - 2 < r.x + r.w && lx + tw + 2 > r.x)
        ly = r.y + r.h + 2;
      set_rgb (cr, ml_style_bg (st), 0.85);
      cairo_rectangle (cr, lx - 2, ly, tw + 4, th);
      cairo_fill (cr);
      text_at (cr, st, label, lx, ly, AL_LEFT, VA_TOP, 1.0, true, shade (red, 0.85), 1.0, 0);
    }
  cairo_restore (cr);
}

/* ---- axes ------------------------------------------------------------------ */

static void
bytes_axis (cairo_t *cr, const MlStyle *st, double x, double y_top, double h, double lo, double hi, int target,
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
          set_rgb (cr, ml_style_grid (st), 1.0);
          cairo_set_line_width (cr, 1.0);
          cairo_move_to (cr, grid_x0, floor (y) + 0.5);
          cairo_line_to (cr, grid_x1, floor (y) + 0.5);
          cairo_stroke (cr);
          continue;
        }
      char label[32];
      ml_axis_label (ML_AXIS_BYTES, vals[i], step, label, sizeof label);
      set_rgb (cr, fg, 0.5);
      cairo_set_line_width (cr, 1.0);
      cairo_move_to (cr, x - 4, floor (y) + 0.5);
      cairo_line_to (cr, x, floor (y) + 0.5);
      cairo_stroke (cr);
      double ty = clampd (y, y_top + font_px (st) * 0.5, y_top + h - font_px (st) * 0.5);
      text_at (cr, st, label, x - 6, ty, AL_RIGHT, VA_MIDDLE, 0.9, false, fg, 0.8, 0);
    }
}

void
ml_timeline_draw_addr_axis (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  int target = (int) (v->ph / 60.0);
  bytes_axis (cr, st, v->px, v->py, v->ph, v->a0, v->a1, target < 2 ? 2 : target, 0, 0);
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
      set_rgb (cr, fg, 0.5);
      cairo_set_line_width (cr, 1.0);
      cairo_move_to (cr, floor (x) + 0.5, area->y);
      cairo_line_to (cr, floor (x) + 0.5, area->y + 4);
      cairo_stroke (cr);
      double tw, th, tw2 = 0, th2 = 0;
      text_size (cr, st, tt.label[i], 0.9, false, &tw, &th);
      if (tt.label2[i][0])
        text_size (cr, st, tt.label2[i], 0.8, false, &tw2, &th2);
      double w = tw > tw2 ? tw : tw2;
      double cx = clampd (x, v->px + w / 2, v->px + v->pw - w / 2);
      if (cx - w / 2 < last_right + 8)
        continue;
      text_at (cr, st, tt.label[i], cx, area->y + 5, AL_CENTER, VA_TOP, 0.9, false, fg, 0.8, 0);
      if (tt.label2[i][0])
        text_at (cr, st, tt.label2[i], cx, area->y + 5 + th, AL_CENTER, VA_TOP, 0.8, false, fg, 0.55, 0);
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
  text_at (cr, st, unit, v->px + v->pw, area->y + area->h, AL_RIGHT, VA_BOTTOM, 0.85, false, fg, 0.6, 0);
}

/* ---- curves ---------------------------------------------------------------- */

typedef struct {
  double *live, *res, *frag;
  size_t  W;
} Cols;

/* The largest value of each curve within each pixel column (a step
 * function: a point's values hold until the next point). */
static bool
columns (const MlView *v, const MlScene *s, double x0, double w, Cols *c)
{
  size_t W = (size_t) ceil (w);
  if (W == 0)
    return false;
  c->W = W;
  c->live = calloc (W, sizeof *c->live);
  c->res = calloc (W, sizeof *c->res);
  c->frag = calloc (W, sizeof *c->frag);
  if (!c->live || !c->res || !c->frag)
    {
      free (c->live);
      free (c->res);
      free (c->frag);
      return false;
    }
  const MlCurve *cv = &s->curve;
  if (!cv->n)
    return true;
  double t0 = ml_view_x_to_time (v, x0);
  /* the last point at or before t0 */
  size_t lo = 0, hi = cv->n;
  while (lo < hi)
    {
      size_t mid = (lo + hi) / 2;
      if ((double) cv->pts[mid].tick <= t0)
        lo = mid + 1;
      else
        hi = mid;
    }
  size_t i = lo;   /* next point to take */
  double cl = 0, cr_ = 0, cf = 0;
  if (lo > 0)
    {
      const MlCurvePoint *p = &cv->pts[lo - 1];
      cl = (double) p->live;
      cr_ = (double) p->reserved;
      cf = p->frag;
    }
  for (size_t col = 0; col < W; col++)
    {
      double tend = ml_view_x_to_time (v, x0 + (double) (col + 1));
      double ml = cl, mr = cr_, mf = cf;
      while (i < cv->n && (double) cv->pts[i].tick < tend)
        {
          const MlCurvePoint *p = &cv->pts[i++];
          cl = (double) p->live;
          cr_ = (double) p->reserved;
          cf = p->frag;
          if (cl > ml) ml = cl;
          if (cr_ > mr) mr = cr_;
          if (cf > mf) mf = cf;
        }
      c->live[col] = ml;
      c->res[col] = mr;
      c->frag[col] = mf;
    }
  return true;
}

static void
cols_free (Cols *c)
{
  free (c->live);
  free (c->res);
  free (c->frag);
}

static void
step_path (cairo_t *cr, const double *vals, size_t W, double x0, double ybase, double yscale, double top, bool close)
{
  if (close)
    cairo_move_to (cr, x0, ybase);
  for (size_t c = 0; c < W; c++)
    {
      double y = ybase - vals[c] * yscale;
      if (y < top)
        y = top;
      if (c == 0 && !close)
        cairo_move_to (cr, x0, y);
      else
        cairo_line_to (cr, x0 + (double) c, y);
      cairo_line_to (cr, x0 + (double) c + 1, y);
    }
  if (close)
    {
      cairo_line_to (cr, x0 + (double) W, ybase);
      cairo_close_path (cr);
    }
}

static const MlRgb live_color = { 0.306, 0.475, 0.655 };
static const MlRgb res_color  = { 0.85, 0.45, 0.10 };
static const MlRgb frag_color = { 0.55, 0.35, 0.65 };

static uint64_t
capacity_of (const MlScene *s)
{
  const MlOom *o = &s->plan->oom;
  return o->hit ? o->live + o->free_bytes : 0;
}

/* The row of swatches with their labels at (@x, @y) (the middle of the
 * row); with @draw false only measures. Returns the box it takes. */
static MlRect
swatch_legend_at (cairo_t *cr, const MlStyle *st, double x, double y, const char *const *labels,
                  const MlRgb *colors, const int *styles, size_t n, bool draw)
{
  /* styles: 0 filled box, 1 line, 2 dashed line */
  MlRgb fg = ml_style_fg (st);
  MlRect box = { x - 2, y, 0, 0 };
  for (size_t i = 0; i < n; i++)
    {
      double tw, th;
      text_size (cr, st, labels[i], 0.85, false, &tw, &th);
      if (th + 2 > box.h)
        box.h = th + 2, box.y = y - th / 2 - 1;
      box.w = x + tw + 26 - box.x;
      if (draw)
        {
          set_rgb (cr, ml_style_bg (st), 0.8);
          cairo_rectangle (cr, x - 2, y - th / 2 - 1, tw + 26, th + 2);
          cairo_fill (cr);
          if (styles[i] == 0)
            {
              set_rgb (cr, colors[i], 0.45);
              cairo_rectangle (cr, x, y - 4, 16, 8);
              cairo_fill (cr);
            }
          else
            {
              if (styles[i] == 2)
                {
                  static const double dash[] = { 4.0, 2.0 };
                  cairo_set_dash (cr, dash, 2, 0);
                }
              set_rgb (cr, colors[i], 1.0);
              cairo_set_line_width (cr, 2.0);
              cairo_move_to (cr, x, floor (y) + 0.5);
              cairo_line_to (cr, x + 16, floor (y) + 0.5);
              cairo_stroke (cr);
              cairo_set_dash (cr, NULL, 0, 0);
            }
          text_at (cr, st, labels[i], x + 20, y, AL_LEFT, VA_MIDDLE, 0.85, false, fg, 0.85, 0);
        }
      x += 20 + tw + 14;
    }
  return box;
}

static void
swatch_legend (cairo_t *cr, const MlStyle *st, double x, double y, const char *const *labels,
               const MlRgb *colors, const int *styles, size_t n)
{
  swatch_legend_at (cr, st, x, y, labels, colors, styles, n, true);
}

/* The curves panel's own legend, drawn or only measured. */
static MlRect
curves_legend (cairo_t *cr, const MlStyle *st, const MlRect *a, bool draw)
{
  const char *labels[] = { "live", "reserved", "lower bound" };
  const MlRgb colors[] = { live_color, res_color, ml_style_fg (st) };
  const int styles[] = { 0, 1, 2 };
  return swatch_legend_at (cr, st, a->x + 6, a->y + font_px (st) * 0.75, labels, colors, styles, 3, draw);
}

/* The vertical scale of the curves panel @a: bytes b sit at
 * ybase - b * yscale. */
static void
curves_scale (const MlScene *s, const MlRect *a, double *ymax_out, double *ybase, double *yscale)
{
  uint64_t cap = capacity_of (s);
  double ymax = (double) (s->curve_max > cap ? s->curve_max : cap);
  if (ymax <= 0)
    ymax = 1;
  ymax *= 1.25;   /* room for the legend and the peak labels above the data */
  *ymax_out = ymax;
  *yscale = a->h / ymax;
  *ybase = a->y + a->h;
}

/* Whether @r lies inside @area and clear of the @n labels placed. */
static bool
label_fits (const MlCurveLabel *placed, size_t n, const MlRect *r, const MlRect *area)
{
  if (r->x < area->x || r->y < area->y || r->x + r->w > area->x + area->w || r->y + r->h > area->y + area->h)
    return false;
  for (size_t i = 0; i < n; i++)
    if (rects_meet (&placed[i].box, r))
      return false;
  return true;
}

/* How much of @r lies outside @area or over the @n labels placed, in
 * square pixels. */
static double
label_overlap (const MlCurveLabel *placed, size_t n, const MlRect *r, const MlRect *area)
{
  double in_w = fmax (0, fmin (r->x + r->w, area->x + area->w) - fmax (r->x, area->x));
  double in_h = fmax (0, fmin (r->y + r->h, area->y + area->h) - fmax (r->y, area->y));
  double o = r->w * r->h - in_w * in_h;
  for (size_t i = 0; i < n; i++)
    {
      const MlRect *b = &placed[i].box;
      double w = fmin (r->x + r->w, b->x + b->w) - fmax (r->x, b->x);
      double h = fmin (r->y + r->h, b->y + b->h) - fmax (r->y, b->y);
      if (w > 0 && h > 0)
        o += w * h;
    }
  return o;
}

/* Places @text (@tw × @th) at the first of the @n candidate top-left
 * corners where it fits; else, when @force, where it covers least, else
 * not at all. Returns whether it was placed. */
static bool
place_label (MlCurveLabel *out, size_t *n, size_t cap, const MlRect *area, MlCurveLabelKind kind, const char *text,
             bool bold, double tw, double th, const double (*cand)[2], size_t n_cand, bool force)
{
  if (*n >= cap || !n_cand)
    return false;
  size_t pick = n_cand;
  for (size_t k = 0; k < n_cand && pick == n_cand; k++)
    {
      MlRect r = { cand[k][0] - 2, cand[k][1], tw + 4, th };
      if (label_fits (out, *n, &r, area))
        pick = k;
    }
  if (pick == n_cand)
    {
      if (!force)
        return false;
      double best = INFINITY;
      for (size_t k = 0; k < n_cand; k++)
        {
          MlRect r = { cand[k][0] - 2, cand[k][1], tw + 4, th };
          double o = label_overlap (out, *n, &r, area);
          if (o < best)
            best = o, pick = k;
        }
    }
  MlCurveLabel *l = &out[(*n)++];
  l->kind = kind;
  l->box = (MlRect) { cand[pick][0] - 2, cand[pick][1], tw + 4, th };
  l->bold = bold;
  snprintf (l->text, sizeof l->text, "%s", text);
  return true;
}

size_t
ml_timeline_curve_labels (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, const MlRect *a,
                          MlCurveLabel *out, size_t cap)
{
  size_t n = 0;
  if (!cap)
    return 0;
  double ymax, ybase, yscale;
  curves_scale (s, a, &ymax, &ybase, &yscale);
  out[n++] = (MlCurveLabel) { .kind = ML_CURVE_LEGEND, .box = curves_legend (cr, st, a, false) };
  MlRect legend = out[0].box;
  char text[64], sz[32];
  double tw, th, right = a->x + a->w;
  uint64_t capb = capacity_of (s);
  if (capb)
    {
      double y = ybase - (double) capb * yscale;
      snprintf (text, sizeof text, "capacity %s", ml_format_size (capb, sz, sizeof sz));
      text_size (cr, st, text, 0.85, true, &tw, &th);
      const double cand[][2] = { { right - 4 - tw, y - 1 - th }, { right - 4 - tw, y + 2 } };
      place_label (out, &n, cap, a, ML_CURVE_CAPACITY, text, true, tw, th, cand, 2, true);
    }
  if (!st->show_peaks)
    return n;
  /* the reserved peak: by its marker where it is first reached, or, when
   * the plan reserves it from the start (a static arena), on the line at
   * the right */
  bool flat = s->curve.n && s->curve.pts[0].reserved >= s->metrics.peak;
  if (s->metrics.peak)
    {
      double y = ybase - (double) s->metrics.peak * yscale;
      if (flat)
        {
          snprintf (text, sizeof text, "reserved %s", ml_format_size (s->metrics.peak, sz, sizeof sz));
          text_size (cr, st, text, 0.85, true, &tw, &th);
          const double cand[][2] = { { right - 4 - tw, y - 2 - th }, { right - 4 - tw, y + 2 },
                                     { right - 4 - tw, legend.y + legend.h + 2 } };
          place_label (out, &n, cap, a, ML_CURVE_RESERVED, text, true, tw, th, cand, 3, true);
        }
      else
        {
          double x = ml_view_time_to_x (v, (double) s->metrics.peak_tick);
          if (x >= a->x && x <= right)
            {
              snprintf (text, sizeof text, "peak %s", ml_format_size (s->metrics.peak, sz, sizeof sz));
              text_size (cr, st, text, 0.85, true, &tw, &th);
              double rx = clampd (x + 8, a->x + 2, right - tw - 2), lx = clampd (x - 8 - tw, a->x + 2, right - tw - 2);
              /* above the line right of the marker, left of it, below the
               * line, then under the legend */
              const double cand[][2] = { { rx, y - 4 - th }, { lx, y - 4 - th }, { rx, y + 3 }, { lx, y + 3 },
                                         { rx, legend.y + legend.h + 2 }, { legend.x + legend.w + 6, y - 4 - th } };
              place_label (out, &n, cap, a, ML_CURVE_RESERVED, text, true, tw, th, cand, 6, true);
            }
        }
    }
  for (size_t k = 0; k < s->peaks.n; k++)
    {
      const MlPeak *p = &s->peaks.peaks[k];
      double x = ml_view_time_to_x (v, (double) p->tick);
      if (x < a->x || x > right)
        continue;
      double y = ybase - (double) p->live * yscale;
      snprintf (text, sizeof text, "%s%s", k == 0 ? "live max " : "", ml_format_size (p->live, sz, sizeof sz));
      text_size (cr, st, text, 0.85, k == 0, &tw, &th);
      double cx = clampd (x - tw / 2, a->x + 2, right - tw - 2);
      /* under the point, above it, right of it, left of it; the first
       * (the lower bound) always shows, the others where they fit */
      double rx = clampd (x + 8, a->x + 2, right - tw - 2), lx = clampd (x - 8 - tw, a->x + 2, right - tw - 2);
      const double cand[][2] = { { cx, y + 6 }, { cx, y - 6 - th }, { rx, y - th / 2 }, { lx, y - th / 2 },
                                 { cx, y + 8 + th }, { rx, y + 6 }, { rx, y + 8 + th } };
      place_label (out, &n, cap, a, ML_CURVE_LIVE, text, k == 0, tw, th, cand, 7, k == 0);
    }
  return n;
}

void
ml_timeline_draw_curves (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, const MlRect *a)
{
  uint64_t cap = capacity_of (s);
  double ymax, ybase, yscale;
  curves_scale (s, a, &ymax, &ybase, &yscale);
  cairo_save (cr);
  cairo_rectangle (cr, a->x, a->y, a->w, a->h);
  cairo_clip (cr);
  set_rgb (cr, ml_style_bg (st), 1.0);
  cairo_paint (cr);
  time_grid (cr, v, s, st, a->y, a->y + a->h);
  bytes_axis (cr, st, a->x, a->y, a->h, 0, ymax, (int) (a->h / 45) < 2 ? 2 : (int) (a->h / 45), a->x, a->x + a->w);
  Cols c;
  if (columns (v, s, a->x, a->w, &c))
    {
      step_path (cr, c.live, c.W, a->x, ybase, yscale, a->y, true);
      set_rgb (cr, live_color, 0.35);
      cairo_fill (cr);
      step_path (cr, c.live, c.W, a->x, ybase, yscale, a->y, false);
      set_rgb (cr, live_color, 1.0);
      cairo_set_line_width (cr, 1.2);
      cairo_stroke (cr);
      step_path (cr, c.res, c.W, a->x, ybase, yscale, a->y, false);
      set_rgb (cr, res_color, 1.0);
      cairo_set_line_width (cr, 1.6);
      cairo_stroke (cr);
      cols_free (&c);
    }
  MlRgb fg = ml_style_fg (st);
  if (s->metrics.lower_bound)
    {
      double y = ybase - (double) s->metrics.lower_bound * yscale;
      dashed_hline (cr, a->x, a->x + a->w, y, fg, 0.55, 1.0);
    }
  if (cap)
    {
      double y = ybase - (double) cap * yscale;
      dashed_hline (cr, a->x, a->x + a->w, y, ml_style_race (st), 0.9, 1.5);
    }
  if (st->show_oom && s->plan->oom.hit)
    {
      double x = ml_view_time_to_x (v, (double) s->plan->oom.tick);
      cairo_set_line_width (cr, 2.0);
      set_rgb (cr, ml_style_race (st), 0.9);
      cairo_move_to (cr, round (x), a->y);
      cairo_line_to (cr, round (x), a->y + a->h);
      cairo_stroke (cr);
    }
  if (st->show_peaks)
    {
      bool flat = s->curve.n && s->curve.pts[0].reserved >= s->metrics.peak;
      double x = ml_view_time_to_x (v, (double) s->metrics.peak_tick);
      if (s->metrics.peak && !flat && x >= a->x && x <= a->x + a->w)
        {
          double y = ybase - (double) s->metrics.peak * yscale;
          set_rgb (cr, res_color, 1.0);
          cairo_move_to (cr, x, y - 1);
          cairo_line_to (cr, x - 5, y - 9);
          cairo_line_to (cr, x + 5, y - 9);
          cairo_close_path (cr);
          cairo_fill (cr);
        }
      for (size_t k = 0; k < s->peaks.n; k++)
        {
          const MlPeak *p = &s->peaks.peaks[k];
          double px = ml_view_time_to_x (v, (double) p->tick);
          if (px < a->x || px > a->x + a->w)
            continue;
          double y = ybase - (double) p->live * yscale;
          set_rgb (cr, ml_style_bg (st), 1.0);
          cairo_arc (cr, px, y, 4.5, 0, 2 * M_PI);
          cairo_fill (cr);
          set_rgb (cr, k == 0 ? fg : live_color, 1.0);
          cairo_arc (cr, px, y, 3.2, 0, 2 * M_PI);
          cairo_fill (cr);
        }
    }
  /* the legend and the labels, placed clear of each other */
  curves_legend (cr, st, a, true);
  size_t n_cap = 3 + s->peaks.n, n = 0;
  MlCurveLabel *labels = malloc (n_cap * sizeof *labels);
  if (labels)
    n = ml_timeline_curve_labels (cr, v, s, st, a, labels, n_cap);
  for (size_t i = 0; i < n; i++)
    {
      const MlCurveLabel *l = &labels[i];
      if (l->kind == ML_CURVE_LEGEND)
        continue;
      MlRgb ink = l->kind == ML_CURVE_CAPACITY ? ml_style_race (st)
                  : l->kind == ML_CURVE_RESERVED ? shade (res_color, 0.8) : fg;
      set_rgb (cr, ml_style_bg (st), 0.75);
      cairo_rectangle (cr, l->box.x, l->box.y, l->box.w, l->box.h);
      cairo_fill (cr);
      text_at (cr, st, l->text, l->box.x + 2, l->box.y, AL_LEFT, VA_TOP, 0.85, l->bold, ink,
               l->kind == ML_CURVE_LIVE ? 0.9 : 1.0, 0);
    }
  free (labels);
  cairo_restore (cr);
  set_rgb (cr, fg, 0.35);
  cairo_set_line_width (cr, 1.0);
  cairo_rectangle (cr, floor (a->x) + 0.5, floor (a->y) + 0.5, round (a->w) - 1, round (a->h) - 1);
  cairo_stroke (cr);
  /* the axis labels outside the clip */
  bytes_axis (cr, st, a->x, a->y, a->h, 0, ymax, (int) (a->h / 45) < 2 ? 2 : (int) (a->h / 45), 0, 0);
}

void
ml_timeline_draw_frag (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, const MlRect *a)
{
  MlRgb fg = ml_style_fg (st);
  cairo_save (cr);
  cairo_rectangle (cr, a->x, a->y, a->w, a->h);
  cairo_clip (cr);
  set_rgb (cr, ml_style_bg (st), 1.0);
  cairo_paint (cr);
  time_grid (cr, v, s, st, a->y, a->y + a->h);
  set_rgb (cr, ml_style_grid (st), 1.0);
  cairo_move_to (cr, a->x, floor (a->y + a->h / 2) + 0.5);
  cairo_line_to (cr, a->x + a->w, floor (a->y + a->h / 2) + 0.5);
  cairo_stroke (cr);
  double top = a->y + 2, h = a->h - 2;
  Cols c;
  if (columns (v, s, a->x, a->w, &c))
    {
      step_path (cr, c.frag, c.W, a->x, top + h, h, top, true);
      set_rgb (cr, frag_color, 0.35);
      cairo_fill (cr);
      step_path (cr, c.frag, c.W, a->x, top + h, h, top, false);
      set_rgb (cr, frag_color, 1.0);
      cairo_set_line_width (cr, 1.0);
      cairo_stroke (cr);
      cols_free (&c);
    }
  if (st->show_oom && s->plan->oom.hit)
    {
      double x = ml_view_time_to_x (v, (double) s->plan->oom.tick);
      cairo_set_line_width (cr, 2.0);
      set_rgb (cr, ml_style_race (st), 0.9);
      cairo_move_to (cr, round (x), a->y);
      cairo_line_to (cr, round (x), a->y + a->h);
      cairo_stroke (cr);
    }
  /* what the number means, said where it is drawn: for a recorded
   * caching allocator (segments at real addresses) the free bytes are its
   * cached blocks, so a high value is a split cache, not lost memory */
  bool cached = s->plan->n_segments && s->plan->segments[0].addr;
  char text[256];
  snprintf (text, sizeof text, "fragmentation = 1 − largest free block / free reserved bytes (max %.0f%%, mean %.0f%%)%s",
            s->metrics.frag_max * 100.0, s->metrics.frag_mean * 100.0,
            cached ? "; the allocator's cached free blocks count as free" : "");
  const char *labels[] = { text };
  const MlRgb colors[] = { frag_color };
  const int styles[] = { 0 };
  swatch_legend (cr, st, a->x + 6, a->y + font_px (st) * 0.75, labels, colors, styles, 1);
  cairo_restore (cr);
  set_rgb (cr, fg, 0.35);
  cairo_set_line_width (cr, 1.0);
  cairo_rectangle (cr, floor (a->x) + 0.5, floor (a->y) + 0.5, round (a->w) - 1, round (a->h) - 1);
  cairo_stroke (cr);
  const char *ticks[] = { "0%", "50%", "100%" };
  /* three labels only where they do not overprint each other */
  bool three = a->h >= 3.2 * font_px (st);
  for (int i = 0; i < 3; i++)
    {
      if (i == 1 && !three)
        continue;
      if (!three && a->h < 2.2 * font_px (st) && i == 0)
        continue;
      double y = top + h - h * i / 2.0;
      y = clampd (y, a->y + font_px (st) * 0.5, a->y + a->h - font_px (st) * 0.5);
      text_at (cr, st, ticks[i], a->x - 6, y, AL_RIGHT, VA_MIDDLE, 0.9, false, fg, 0.8, 0);
    }
}

/* ---- title and legend -------------------------------------------------- */

static const char *const by_titles[] = { "call site", "stream", "kind" };

void
ml_timeline_draw_legend (cairo_t *cr, const MlScene *s, const MlStyle *st, const MlRect *a)
{
  unsigned by = (unsigned) st->color_by < ML_COLOR_BY__COUNT ? (unsigned) st->color_by : 0;
  MlRgb fg = ml_style_fg (st);
  double fh = font_px (st) * 1.5;
  if (s->n_items == 0)
    return;
  double x = a->x, y = a->y + fh / 2;
  char head[64];
  snprintf (head, sizeof head, "colour by %s:", by_titles[by]);
  x += text_at (cr, st, head, x, y, AL_LEFT, VA_MIDDLE, 0.9, true, fg, 0.85, 0) + 12;
  if (by == ML_COLOR_BY_SITE && s->site_per_buffer)
    {
      text_at (cr, st, "one colour per buffer (the input names no call sites)", x, y, AL_LEFT, VA_MIDDLE, 0.85,
               false, fg, 0.8, 0);
      return;
    }
  double entry_w = 0;
  size_t n = s->n_classes[by];
  bool other = s->classes[by][ML_PALETTE_N].count > 0;
  size_t total = n + other;
  /* entries in columns as wide as the space allows, at most 5 per row */
  size_t per_row = total < 5 ? total : 5;
  if (per_row == 0)
    return;
  double x_start = x;
  entry_w = (a->x + a->w - x_start) / (double) per_row;
  if (entry_w < 150 && per_row > 1)
    {
      per_row = (size_t) ((a->x + a->w - x_start) / 150);
      if (per_row < 1)
        per_row = 1;
      entry_w = (a->x + a->w - x_start) / (double) per_row;
    }
  for (size_t k = 0; k < total; k++)
    {
      unsigned cls = k < n ? (unsigned) k : ML_PALETTE_N;
      const MlSceneClass *c = &s->classes[by][cls];
      size_t col = k % per_row, row = k / per_row;
      double ex = x_start + (double) col * entry_w, ey = y + (double) row * fh;
      if (ey + fh / 2 > a->y + a->h + 2)
        break;
      set_rgb (cr, ml_style_class_color (st, cls), 1.0);
      cairo_rectangle (cr, ex, ey - 5, 10, 10);
      cairo_fill (cr);
      char text[256], sz[32];
      if (c->peak_bytes)
        snprintf (text, sizeof text, "%s (%s at peak)", c->label ? c->label : "?",
                  ml_format_size (c->peak_bytes, sz, sizeof sz));
      else
        snprintf (text, sizeof text, "%s", c->label ? c->label : "?");
      text_at (cr, st, text, ex + 14, ey, AL_LEFT, VA_MIDDLE, 0.85, false, fg, 0.9, entry_w - 22);
    }
}

static size_t
issue_total (const MlScene *s)
{
  return s->issues ? ml_issues_count (s->issues) : 0;
}

void
ml_timeline_draw_title (cairo_t *cr, const MlScene *s, const MlStyle *st, const MlRect *a)
{
  MlRgb fg = ml_style_fg (st);
  char line[512], pk[32], lb[32];
  const char *strategy = s->plan->strategy ? s->plan->strategy : "plan";
  if (st->title)
    snprintf (line, sizeof line, "%s", st->title);
  else if (s->name && *s->name)
    snprintf (line, sizeof line, "%s — %s", s->name, strategy);
  else
    snprintf (line, sizeof line, "%s", strategy);
  double tw = text_at (cr, st, line, a->x, a->y, AL_LEFT, VA_TOP, 1.35, true, fg, 1.0, a->w);
  (void) tw;
  const MlMetrics *m = &s->metrics;
  int len = snprintf (line, sizeof line, "peak %s · lower bound %s (%+.1f%%) · fragmentation max %.0f%% · %zu buffers · %zu segment%s",
                      ml_format_size (m->peak, pk, sizeof pk), ml_format_size (m->lower_bound, lb, sizeof lb),
                      m->overhead * 100.0, m->frag_max * 100.0, s->bufs->n, s->plan->n_segments,
                      s->plan->n_segments == 1 ? "" : "s");
  double sub_y = a->y + font_px (st) * 1.35 * 1.35;
  double x = a->x + text_at (cr, st, line, a->x, sub_y, AL_LEFT, VA_TOP, 1.0, false, fg, 0.75, 0);
  (void) len;
  size_t ni = issue_total (s);
  if (s->plan->oom.hit || ni)
    {
      char warn[256], req[32];
      int o = 0;
      if (s->plan->oom.hit)
        o += snprintf (warn + o, sizeof warn - (size_t) o, " · OOM at tick %" PRIu64 ": %s request, %s",
                       s->plan->oom.tick, ml_format_size (s->plan->oom.request, req, sizeof req),
                       ml_oom_verdict_name (s->plan->oom.verdict));
      for (int k = 0; ni && k < ML_ISSUE__COUNT && o < (int) sizeof warn - 40; k++)
        if (s->issues->total[k])
          {
            static const char *const what[ML_ISSUE__COUNT] = {
              "conflicts", "misaligned offsets", "outside their segment", "cross-stream races", "in-place hazards",
              "broken constraints",
            };
            o += snprintf (warn + o, sizeof warn - (size_t) o, " · %zu %s", s->issues->total[k], what[k]);
          }
      if (ni)
        snprintf (warn + o, sizeof warn - (size_t) o, " (red)");
      text_at (cr, st, warn, x, sub_y, AL_LEFT, VA_TOP, 1.0, true, ml_style_race (st), 1.0, 0);
    }
}

/* ---- the figure -------------------------------------------------------- */

void
ml_figure_layout (const MlScene *s, const MlStyle *st, double width, double height, MlFigureLayout *out)
{
  memset (out, 0, sizeof *out);
  double fp = font_px (st);
  double left = fp * 6.2, right = fp * 1.3, top = fp * 0.9;
  double y = top;
  if (st->show_title)
    {
      out->title = (MlRect) { left * 0.25, y, width - left * 0.25 - right, fp * 3.4 };
      y += out->title.h;
    }
  double legend_h = 0;
  if (st->show_legend)
    {
      unsigned by = (unsigned) st->color_by < ML_COLOR_BY__COUNT ? (unsigned) st->color_by : 0;
      size_t total = s->n_classes[by] + (s->classes[by][ML_PALETTE_N].count > 0);
      if (total == 0)
        total = 1;
      double avail = width - left - right - fp * 9;
      size_t per_row = total < 5 ? total : 5;
      if (per_row && avail / (double) per_row < 150)
        per_row = avail / 150 >= 1 ? (size_t) (avail / 150) : 1;
      size_t rows = per_row ? (total + per_row - 1) / per_row : 1;
      legend_h = (double) rows * fp * 1.5 + fp * 0.5;
    }
  bool two_lines = !ml_scene_real_time (s, st->time_axis) && s->n_times >= 2 && st->time_axis == ML_TIME_AXIS_AUTO;
  double axis_h = fp * (two_lines ? 4.1 : 2.9);   /* two label lines with times */
  double bottom = height - fp * 0.6 - legend_h;
  double gap = fp * 0.7;
  double avail = bottom - axis_h - y;
  int panels = 1 + (st->show_curves ? 1 : 0) + (st->show_frag ? 1 : 0);
  avail -= gap * (panels - 1);
  if (avail < 30)
    avail = 30;
  double wl = 1.0, wc = st->show_curves ? 0.42 : 0, wf = st->show_frag ? 0.16 : 0;
  double unit = avail / (wl + wc + wf);
  out->layout = (MlRect) { left, y, width - left - right, unit * wl };
  y += out->layout.h;
  if (st->show_curves)
    {
      y += gap;
      out->curves = (MlRect) { left, y, width - left - right, unit * wc };
      y += out->curves.h;
    }
  if (st->show_frag)
    {
      y += gap;
      out->frag = (MlRect) { left, y, width - left - right, unit * wf };
      y += out->frag.h;
    }
  out->time_axis = (MlRect) { left, y, width - left - right, axis_h };
  y += axis_h;
  if (st->show_legend)
    out->legend = (MlRect) { left * 0.25, y, width - left * 0.25 - right, legend_h };
}

void
ml_timeline_draw_figure (cairo_t *cr, const MlScene *s, const MlStyle *st, double width, double height,
                         const MlView *range)
{
  MlFigureLayout fl;
  ml_figure_layout (s, st, width, height, &fl);
  MlView v;
  ml_scene_view_init_style (s, st, &v, fl.layout.x, fl.layout.y, fl.layout.w, fl.layout.h);
  if (range)
    {
      /* a range may reach past this scene's own data: two runs drawn on
       * one time and byte scale */
      v.t_max = fmax (v.t_max, range->t_max);
      v.a_max = fmax (v.a_max, range->a_max);
      ml_view_set_time (&v, range->t0, range->t1);
      ml_view_set_addr (&v, range->a0, range->a1);
    }
  cairo_save (cr);
  set_rgb (cr, ml_style_bg (st), 1.0);
  cairo_paint (cr);
  if (st->show_title)
    ml_timeline_draw_title (cr, s, st, &fl.title);
  ml_timeline_draw_layout (cr, &v, s, st);
  ml_timeline_draw_addr_axis (cr, &v, s, st);
  if (st->show_curves)
    ml_timeline_draw_curves (cr, &v, s, st, &fl.curves);
  if (st->show_frag)
    ml_timeline_draw_frag (cr, &v, s, st, &fl.frag);
  ml_timeline_draw_time_axis (cr, &v, s, st, &fl.time_axis);
  if (st->show_legend)
    ml_timeline_draw_legend (cr, s, st, &fl.legend);
  cairo_restore (cr);
}

/* ---- files --------------------------------------------------------------- */

int
ml_render_format_from_path (const char *path, MlRenderFormat *fmt, MlError *err)
{
  char ext[16];
  bool gz;
  ml_path_ext (path, ext, sizeof ext, &gz);
  if (strcmp (ext, "png") == 0)
    *fmt = ML_RENDER_PNG;
  else if (strcmp (ext, "svg") == 0)
    *fmt = ML_RENDER_SVG;
  else if (strcmp (ext, "pdf") == 0)
    *fmt = ML_RENDER_PDF;
  else
    return ml_error_set (err, ML_EUSAGE, "%s: unknown picture format \"%s\" (use .png, .svg or .pdf)", path, ext);
  return 0;
}

static cairo_status_t
write_fp (void *closure, const unsigned char *data, unsigned int length)
{
  return fwrite (data, 1, length, closure) == length ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

int
ml_render_check_size (int width, int height, MlError *err)
{
  if (width < ML_RENDER_MIN_W || height < ML_RENDER_MIN_H || width > ML_RENDER_MAX_SIDE || height > ML_RENDER_MAX_SIDE)
    return ml_error_set (err, ML_EUSAGE, "picture size %dx%d is outside %dx%d .. %dx%d", width, height, ML_RENDER_MIN_W,
                         ML_RENDER_MIN_H, ML_RENDER_MAX_SIDE, ML_RENDER_MAX_SIDE);
  if ((int64_t) width * height > ML_RENDER_MAX_PIXELS)
    return ml_error_set (err, ML_EUSAGE,
                         "%dx%d is %" PRId64 " pixels, more than the %d million a picture may have (an 8K screen is 7680x4320)",
                         width, height, (int64_t) width * height, ML_RENDER_MAX_PIXELS / 1000000);
  return 0;
}

int
ml_render_write (FILE *fp, MlRenderFormat fmt, int width, int height, MlDrawFunc draw, void *data, MlError *err)
{
  int rc = ml_render_check_size (width, height, err);
  if (rc < 0)
    return rc;
  cairo_surface_t *surf;
  switch (fmt)
    {
    case ML_RENDER_SVG:
      surf = cairo_svg_surface_create_for_stream (write_fp, fp, width, height);
      /* sized in pixels, as the PNG of the same figure (cairo's default
       * unit, pt, opens a third larger) */
      cairo_svg_surface_set_document_unit (surf, CAIRO_SVG_UNIT_PX);
      break;
    case ML_RENDER_PDF:
      surf = cairo_pdf_surface_create_for_stream (write_fp, fp, width, height);
      break;
    default:
      surf = cairo_image_surface_create (CAIRO_FORMAT_RGB24, width, height);
    }
  if (cairo_surface_status (surf) != CAIRO_STATUS_SUCCESS)
    {
      cairo_surface_destroy (surf);
      return ml_error_set (err, ML_ENOMEM, "cannot create a %dx%d picture", width, height);
    }
  cairo_t *cr = cairo_create (surf);
  draw (cr, width, height, data);
  cairo_status_t cs = cairo_status (cr);
  cairo_destroy (cr);
  if (cs == CAIRO_STATUS_SUCCESS)
    {
      if (fmt == ML_RENDER_PNG)
        cs = cairo_surface_write_to_png_stream (surf, write_fp, fp);
      else
        {
          cairo_surface_finish (surf);
          cs = cairo_surface_status (surf);
        }
    }
  cairo_surface_destroy (surf);
  if (cs != CAIRO_STATUS_SUCCESS)
    return ml_error_set (err, cs == CAIRO_STATUS_WRITE_ERROR ? ML_EIO : ML_ENOMEM, "drawing failed: %s",
                         cairo_status_to_string (cs));
  return 0;
}

int
ml_render_to_file (const char *path, int width, int height, MlDrawFunc draw, void *data, MlError *err)
{
  MlRenderFormat fmt = ML_RENDER_PNG;
  if (strcmp (path, "-") != 0)
    {
      int rc = ml_render_format_from_path (path, &fmt, err);
      if (rc < 0)
        return rc;
    }
  MlOut *out = ml_out_open (path, err);
  if (!out)
    return err ? err->code : ML_EIO;
  int rc = ml_render_write (ml_out_file (out), fmt, width, height, draw, data, err);
  if (rc < 0)
    {
      ml_out_abort (out);
      return rc;
    }
  return ml_out_commit (out, err);
}

typedef struct {
  const MlScene *scene;
  const MlStyle *style;
  const MlView  *range;
} FigureArgs;

static void
draw_figure_cb (cairo_t *cr, int width, int height, void *data)
{
  const FigureArgs *a = data;
  ml_timeline_draw_figure (cr, a->scene, a->style, width, height, a->range);
}

int
ml_render_figure_write (FILE *fp, MlRenderFormat fmt, const MlScene *s, const MlStyle *st,
                        int width, int height, const MlView *range, MlError *err)
{
  FigureArgs a = { s, st, range };
  return ml_render_write (fp, fmt, width, height, draw_figure_cb, &a, err);
}

int
ml_render_figure_to_file (const char *path, const MlScene *s, const MlStyle *st,
                          int width, int height, const MlView *range, MlError *err)
{
  FigureArgs a = { s, st, range };
  return ml_render_to_file (path, width, height, draw_figure_cb, &a, err);
}
