/* timeline-marks.c — what the layout panel marks over the buffers: the
 * issues (conflicts, races) and the OOM with its refused request in red,
 * the trace's stages as bands. */
#include "render/timeline-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/analysis/stages.h"
#include "sim/base/units.h"

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
  x0 = _ml_clamp (x0, v->px - 4, v->px + v->pw + 4);
  x1 = _ml_clamp (x1, v->px - 4, v->px + v->pw + 4);
  y0 = _ml_clamp (y0, v->py - 4, v->py + v->ph + 4);
  y1 = _ml_clamp (y1, v->py - 4, v->py + v->ph + 4);
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

void
_ml_draw_issues (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
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
      _ml_set_rgb (cr, red, 0.7);
      buffer_rect (cr, v, s, x->b, 3);
      cairo_stroke (cr);
      cairo_set_line_width (cr, 1.5);
      /* the racing bytes and ticks, filled */
      issue_rect (cr, v, s, x->segment, x->offset, x->bytes ? x->bytes : 1, t0, t1, 5);
      _ml_set_rgb (cr, red, 0.55);
      cairo_fill_preserve (cr);
      _ml_set_rgb (cr, red, 1.0);
      cairo_stroke (cr);
    }
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
  _ml_text_size (cr, st, text, 0.95, true, &tw, &th);
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
void
_ml_draw_oom (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  if (!s->plan->oom.hit)
    return;
  MlRgb red = ml_style_race (st);
  double x = ml_view_time_to_x (v, (double) s->plan->oom.tick);
  if (x < v->px - 1 || x > v->px + v->pw + 1)
    return;
  cairo_save (cr);
  cairo_set_line_width (cr, 2.0);
  _ml_set_rgb (cr, red, 0.9);
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
      _ml_set_rgb (cr, ml_style_bg (st), 1.0);
      cairo_paint (cr);
      _ml_set_rgb (cr, red, 0.25);
      cairo_paint (cr);
      _ml_set_rgb (cr, red, 0.85);
      cairo_set_line_width (cr, 1.5);
      for (double d = -b.h; d < b.w; d += 7)
        {
          cairo_move_to (cr, b.x + d, b.y + b.h);
          cairo_line_to (cr, b.x + d + b.h, b.y);
        }
      cairo_stroke (cr);
      cairo_restore (cr);
      _ml_set_rgb (cr, red, 1.0);
      cairo_set_line_width (cr, 1.5);
      cairo_rectangle (cr, b.x + 0.75, b.y + 0.75, fmax (b.w - 1.5, 1), fmax (b.h - 1.5, 1));
      cairo_stroke (cr);
      /* its size beside it: right of the box (left near the right edge),
       * at its middle within the plot, under the OOM's label if they meet */
      char sz[32], lab[64];
      snprintf (lab, sizeof lab, "refused %s", ml_format_size (s->oom_bytes, sz, sizeof sz));
      double tw, th;
      _ml_text_size (cr, st, lab, 0.9, true, &tw, &th);
      double lx = b.x + b.w + 4 + tw <= v->px + v->pw - 2 ? b.x + b.w + 4 : b.x - 4 - tw;
      double ly = _ml_clamp (b.y + b.h / 2 - th / 2, v->py + 2, v->py + v->ph - th - 2);
      MlRect r = { lx - 2, ly, tw + 4, th };
      if (_ml_rects_meet (&r, &top))
        r.y = ly = top.y + top.h + 2;
      _ml_set_rgb (cr, ml_style_bg (st), 0.85);
      cairo_rectangle (cr, r.x, r.y, r.w, r.h);
      cairo_fill (cr);
      _ml_text_at (cr, st, lab, lx, ly, AL_LEFT, VA_TOP, 0.9, true, red, 1.0, 0);
    }
  _ml_set_rgb (cr, ml_style_bg (st), 0.85);
  cairo_rectangle (cr, top.x, top.y, top.w, top.h);
  cairo_fill (cr);
  _ml_text_at (cr, st, text, top.x + 2, top.y + 1, AL_LEFT, VA_TOP, 0.95, true, red, 1.0, 0);
  cairo_restore (cr);
}

/* The trace's stages (external_annotations START / END, sim/analysis/
 * stages.h) as bands over their ticks: a light tint, its edges, and the
 * name at the band's foot (two rows, so that neighbours do not meet).
 * Clipped to the plot by the caller. */
void
_ml_draw_stages (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  MlStage *stages;
  size_t n;
  MlError err = { 0 };
  if (ml_stages_find (s->bufs->trace, &stages, &n, &err) < 0)
    return;   /* out of memory: a picture without its bands */
  MlRgb fg = ml_style_fg (st);
  for (size_t k = 0; k < n; k++)
    {
      double x0 = ml_view_time_to_x (v, (double) stages[k].start), x1 = ml_view_time_to_x (v, (double) stages[k].end);
      if (x1 < v->px || x0 > v->px + v->pw)
        continue;
      x0 = _ml_clamp (x0, v->px, v->px + v->pw);
      x1 = _ml_clamp (x1, v->px, v->px + v->pw);
      _ml_set_rgb (cr, fg, k % 2 ? 0.05 : 0.08);
      cairo_rectangle (cr, x0, v->py, fmax (x1 - x0, 1), v->ph);
      cairo_fill (cr);
      _ml_dashed_vline (cr, x0, v->py, v->py + v->ph, fg, 0.35, 1.0);
      _ml_dashed_vline (cr, x1, v->py, v->py + v->ph, fg, 0.35, 1.0);
      char name[96];
      snprintf (name, sizeof name, "%.*s", (int) (stages[k].len < 95 ? stages[k].len : 95), stages[k].name);
      double tw, th;
      _ml_text_size (cr, st, name, 0.85, false, &tw, &th);
      if (x1 - x0 < 24)
        continue;
      double y = v->py + 3 + (double) (k % 2) * (th + 2);
      _ml_text_at (cr, st, name, x0 + 3, y, AL_LEFT, VA_TOP, 0.85, false, fg, 0.8, x1 - x0 - 6);
    }
  free (stages);
}
