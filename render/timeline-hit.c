/* timeline-hit.c — what is under the pointer and how it is marked:
 * the hit test of each plot, an item's rectangle, the hover / selection
 * outline and the marker line drawn over a cached layout. */
#include "render/timeline-private.h"

#include <math.h>

long
ml_timeline_hit (const MlView *v, const MlScene *s, const MlStyle *st, double x, double y)
{
  return st->plot == ML_PLOT_ACTIVE ? ml_active_hit (s, v, x, y) : ml_scene_hit (s, v, x, y);
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
  double x0 = _ml_clamp (r.x, v->px - 4, v->px + v->pw + 4), x1 = _ml_clamp (r.x + r.w, v->px - 4, v->px + v->pw + 4);
  double y0 = _ml_clamp (r.y, v->py - 4, v->py + v->ph + 4), y1 = _ml_clamp (r.y + r.h, v->py - 4, v->py + v->ph + 4);
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
      _ml_set_rgb (cr, c, 0.25);
      cairo_fill (cr);
    }
  /* the stroke lies inside the rectangle, so neighbours stay visible */
  cairo_rectangle (cr, x0 + lw / 2, y0 + lw / 2, fmax (x1 - x0 - lw, 1), fmax (y1 - y0 - lw, 1));
  cairo_set_line_width (cr, lw);
  _ml_set_rgb (cr, c, 0.95);
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
  _ml_set_rgb (cr, red, 0.9);
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
      _ml_text_size (cr, st, label, 1.0, true, &tw, &th);
      double lx = fmin (x + 4, v->px + v->pw - tw - 4), ly = v->py + 2;
      /* under the OOM's label when they would meet */
      MlRect r;
      if (s && st->show_oom && ml_timeline_oom_label_box (cr, v, s, st, &r) && lx - 2 < r.x + r.w && lx + tw + 2 > r.x)
        ly = r.y + r.h + 2;
      _ml_set_rgb (cr, ml_style_bg (st), 0.85);
      cairo_rectangle (cr, lx - 2, ly, tw + 4, th);
      cairo_fill (cr);
      _ml_text_at (cr, st, label, lx, ly, AL_LEFT, VA_TOP, 1.0, true, _ml_shade (red, 0.85), 1.0, 0);
    }
  cairo_restore (cr);
}
