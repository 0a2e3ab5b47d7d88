/* figure.c — the whole figure: where its panels go, the title, the
 * colour legend, and all of it drawn in order. */
#include "render/timeline-private.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "sim/base/units.h"

void
ml_timeline_draw_legend (cairo_t *cr, const MlScene *s, const MlStyle *st, const MlRect *a)
{
  MlRgb fg = ml_style_fg (st);
  double fh = _ml_font_px (st) * 1.5;
  if (s->n_items == 0)
    return;
  double y = a->y + fh / 2;
  char head[ML_LEGEND_HEAD];
  _ml_legend_head (s, st->color_by, head, sizeof head);
  double hw = _ml_text_at (cr, st, head, a->x, y, AL_LEFT, VA_MIDDLE, 0.9, true, fg, 0.85, 0);
  _ml_note (cr, "legend-head", &(MlRect) { a->x, y - fh / 2, hw, fh }, head, head);
  MlLegendEntry e[ML_PALETTE_N + 1];
  unsigned rows;
  double x0;
  size_t n = _ml_legend_entries (cr, s, st, a->w, e, ML_PALETTE_N + 1, &rows, &x0);
  if (st->color_by == ML_COLOR_BY_SITE && s->site_per_buffer)
    {
      _ml_text_at (cr, st, "one colour per buffer (the input names no call sites)", a->x + x0, y, AL_LEFT, VA_MIDDLE,
                   0.85, false, fg, 0.8, 0);
      return;
    }
  for (size_t k = 0; k < n; k++)
    {
      double ex = a->x + x0 + e[k].x, ey = y + (double) e[k].row * fh;
      if (ey + fh / 2 > a->y + a->h + 2)
        break;
      _ml_set_rgb (cr, ml_style_class_color (st, e[k].cls), 1.0);
      cairo_rectangle (cr, ex, ey - 5, 10, 10);
      cairo_fill (cr);
      double tw = _ml_text_at (cr, st, e[k].text, ex + ML_LEGEND_SWATCH, ey, AL_LEFT, VA_MIDDLE, ML_LEGEND_SCALE, false,
                               fg, 0.9, 0);
      _ml_note (cr, "legend", &(MlRect) { ex, ey - fh / 2, ML_LEGEND_SWATCH + tw, fh }, e[k].text, e[k].full);
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
  double tw = _ml_text_at (cr, st, line, a->x, a->y, AL_LEFT, VA_TOP, 1.35, true, fg, 1.0, a->w);
  (void) tw;
  const MlMetrics *m = &s->metrics;
  char frag[32] = "n/a";   /* the plan's free space is not known */
  if (!m->frag_unknown)
    snprintf (frag, sizeof frag, "%.0f%%", m->frag_max * 100.0);
  int len = snprintf (line, sizeof line, "peak %s · lower bound %s (%+.1f%%) · fragmentation max %s · %zu buffers · %zu segment%s",
                      ml_format_size (m->peak, pk, sizeof pk), ml_format_size (m->lower_bound, lb, sizeof lb),
                      m->overhead * 100.0, frag, s->bufs->n, s->plan->n_segments, s->plan->n_segments == 1 ? "" : "s");
  double sub_y = a->y + _ml_font_px (st) * 1.35 * 1.35;
  double x = a->x + _ml_text_at (cr, st, line, a->x, sub_y, AL_LEFT, VA_TOP, 1.0, false, fg, 0.75, 0);
  _ml_note (cr, "subtitle", &(MlRect) { a->x, sub_y, x - a->x, _ml_font_px (st) * 1.2 }, line, NULL);
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
      _ml_text_at (cr, st, warn, x, sub_y, AL_LEFT, VA_TOP, 1.0, true, ml_style_race (st), 1.0, 0);
    }
}

void
ml_figure_layout (const MlScene *s, const MlStyle *st, double width, double height, MlFigureLayout *out)
{
  memset (out, 0, sizeof *out);
  double fp = _ml_font_px (st);
  /* raw addresses ("0x737a18000000") need a wider margin than bytes */
  bool raw = s->addr_raw && st->plot != ML_PLOT_ACTIVE;
  double left = fp * (raw ? 9.4 : 6.2), right = fp * 1.3, top = fp * 0.9;
  double y = top;
  if (st->show_title)
    {
      out->title = (MlRect) { left * 0.25, y, width - left * 0.25 - right, fp * 3.4 };
      y += out->title.h;
    }
  double legend_h = 0;
  if (st->show_legend)
    {
      MlLegendEntry e[ML_PALETTE_N + 1];
      unsigned rows = 1;
      double x0;
      if (!(st->color_by == ML_COLOR_BY_SITE && s->site_per_buffer))
        _ml_legend_entries (NULL, s, st, width - left * 0.25 - right, e, ML_PALETTE_N + 1, &rows, &x0);
      if (rows == 0)
        rows = 1;
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
  _ml_set_rgb (cr, ml_style_bg (st), 1.0);
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
