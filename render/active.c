/* active.c — the stacked "active memory" plot (ML_PLOT_ACTIVE).
 *
 * Every pixel column shows the buffers live at one tick stacked from the
 * bottom in the scene's rank order (the longest-lived at the bottom), so
 * the top of the stack is the live total. When a column spans several
 * ticks it shows the tick with the most live bytes there (the curve's
 * points), so peaks never vanish when zoomed out. A sweep over the
 * columns keeps the live set: O(items visible + columns × live log live).
 */
#include "render/timeline-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/array.h"

typedef struct {
  uint32_t rank, item;
} Live;

static int
by_rank (const void *a, const void *b)
{
  uint32_t x = ((const Live *) a)->rank, y = ((const Live *) b)->rank;
  return x < y ? -1 : x > y;
}

typedef struct {
  const MlScene *s;
  Live   *live;
  size_t  n, cap;
  size_t  next;     /* the next item to enter */
  size_t  curve_i;  /* the first curve point not yet passed */
  double  last_tick;
} Sweep;

static void
sweep_init (Sweep *w, const MlScene *s, double t0)
{
  memset (w, 0, sizeof *w);
  w->s = s;
  w->next = ml_scene_first_visible (s, t0);
  w->last_tick = -1;
}

/* The tick column [lo, hi) shows: the one with the most live bytes among
 * the curve's points there, else the state at floor(lo). */
static double
column_tick (Sweep *w, double lo, double hi)
{
  const MlCurve *c = &w->s->curve;
  double t = floor (lo);
  if (t < 0)
    t = 0;
  size_t i = w->curve_i;
  while (i < c->n && (double) c->pts[i].tick < lo)
    i++;
  uint64_t best = 0;
  bool any = false;
  for (; i < c->n && (double) c->pts[i].tick < hi; i++)
    if (!any || c->pts[i].live > best)
      {
        best = c->pts[i].live;
        t = (double) c->pts[i].tick;
        any = true;
      }
  w->curve_i = i > 0 ? i - 1 : 0;
  if (t < w->last_tick)
    t = w->last_tick;
  return t;
}

/* Brings the live set to tick @t (nondecreasing between calls) and sorts
 * it by rank. Returns FALSE when out of memory. */
static bool
sweep_to (Sweep *w, double t)
{
  const MlScene *s = w->s;
  size_t k = 0;
  for (size_t i = 0; i < w->n; i++)
    if ((double) s->items[w->live[i].item].end > t)
      w->live[k++] = w->live[i];
  w->n = k;
  while (w->next < s->n_items && (double) s->items[w->next].start <= t)
    {
      const MlSceneItem *it = &s->items[w->next];
      if ((double) it->end > t)
        {
          if (ML_ARRAY_RESERVE (w->live, w->n, w->cap, 256) < 0)
            return false;
          w->live[w->n++] = (Live) { s->rank[w->next], (uint32_t) w->next };
        }
      w->next++;
    }
  if (w->n > 1)   /* qsort may not be given the NULL of an empty list */
    qsort (w->live, w->n, sizeof *w->live, by_rank);
  w->last_tick = t;
  return true;
}

static void
sweep_free (Sweep *w)
{
  free (w->live);
}

void
ml_active_draw (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  int W = (int) ceil (v->pw), H = (int) ceil (v->ph);
  if (W <= 0 || H <= 0)
    return;
  cairo_surface_t *img = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, W, H);
  if (cairo_surface_status (img) != CAIRO_STATUS_SUCCESS)
    {
      cairo_surface_destroy (img);
      return;
    }
  unsigned by = (unsigned) st->color_by < ML_COLOR_BY__COUNT ? (unsigned) st->color_by : 0;
  uint32_t argb[ML_PALETTE_N + 1];
  for (unsigned cls = 0; cls <= ML_PALETTE_N; cls++)
    argb[cls] = _ml_argb (ml_style_class_color (st, cls));
  /* a thin line of the background between buffers taller than 6 px */
  uint32_t sep = _ml_argb (ml_style_bg (st));
  cairo_surface_flush (img);
  unsigned char *data = cairo_image_surface_get_data (img);
  int stride = cairo_image_surface_get_stride (img);
  double bpp = ml_view_bytes_per_px (v);
  Sweep w;
  sweep_init (&w, s, v->t0);
  for (int c = 0; c < W; c++)
    {
      /* the ticks of pixel column c (the axis may be real time) */
      double lo = ml_view_x_to_time (v, v->px + c), hi = ml_view_x_to_time (v, v->px + c + 1);
      if (lo >= (double) s->end_tick)
        break;
      if (!sweep_to (&w, column_tick (&w, lo, hi)))
        break;
      double cum = 0;
      for (size_t i = 0; i < w.n; i++)
        {
          const MlSceneItem *it = &s->items[w.live[i].item];
          double a0 = cum, a1 = cum + (double) it->size;
          cum = a1;
          if (a1 <= v->a0 || a0 >= v->a1)
            continue;
          long r0 = lround ((v->a1 - a1) / bpp), r1 = lround ((v->a1 - a0) / bpp);
          if (r1 <= r0)
            r1 = r0 + 1;   /* sub-pixel buffers keep a row: the top one shows */
          if (r0 < 0)
            r0 = 0;
          if (r1 > H)
            r1 = H;
          uint32_t px = argb[it->cls[by] <= ML_PALETTE_N ? it->cls[by] : ML_PALETTE_N];
          for (long r = r0; r < r1; r++)
            *(uint32_t *) (data + (size_t) r * (size_t) stride + (size_t) c * 4) = px;
          if (r1 - r0 >= 6 && r0 < H)
            *(uint32_t *) (data + (size_t) r0 * (size_t) stride + (size_t) c * 4) = sep;
        }
    }
  sweep_free (&w);
  cairo_surface_mark_dirty (img);
  cairo_save (cr);
  cairo_translate (cr, v->px, v->py);
  cairo_set_source_surface (cr, img, 0, 0);
  cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
  cairo_rectangle (cr, 0, 0, W, H);
  cairo_fill (cr);
  cairo_restore (cr);
  cairo_surface_destroy (img);
}

/* The item under (@x, @y): the one whose stacked bytes contain the point
 * in the column under @x, else the nearest within two pixels. */
long
ml_active_hit (const MlScene *s, const MlView *v, double x, double y)
{
  if (x < v->px || x > v->px + v->pw || y < v->py || y > v->py + v->ph)
    return -1;
  double bpp = ml_view_bytes_per_px (v);
  double c = floor (x - v->px);
  double lo = ml_view_x_to_time (v, v->px + c), hi = ml_view_x_to_time (v, v->px + c + 1);
  Sweep w;
  sweep_init (&w, s, lo);
  long best = -1;
  if (sweep_to (&w, column_tick (&w, lo, hi)))
    {
      double a = ml_view_y_to_addr (v, y), cum = 0, best_d = 2 * bpp;   /* within two pixels */
      for (size_t i = 0; i < w.n; i++)
        {
          const MlSceneItem *it = &s->items[w.live[i].item];
          double a0 = cum, a1 = cum + (double) it->size;
          cum = a1;
          double d = a < a0 ? a0 - a : a >= a1 ? a - a1 : 0;
          if (d < best_d || (d == 0 && best_d == 0))
            {
              best = (long) w.live[i].item;
              best_d = d;
            }
        }
    }
  sweep_free (&w);
  return best;
}

void
ml_active_draw_highlight (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, size_t item,
                          MlMark mark)
{
  if (item >= s->n_items)
    return;
  const MlSceneItem *target = &s->items[item];
  double x_start = ml_view_time_to_x (v, (double) target->start), x_end = ml_view_time_to_x (v, (double) target->end);
  int c0 = (int) floor (fmax (x_start, v->px) - v->px), c1 = (int) ceil (fmin (x_end, v->px + v->pw) - v->px);
  if (c1 <= c0)
    c1 = c0 + 1;
  int W = c1 - c0;
  double *top = malloc ((size_t) W * sizeof *top), *bot = malloc ((size_t) W * sizeof *bot);
  if (!top || !bot)
    {
      free (top);
      free (bot);
      return;
    }
  Sweep w;
  sweep_init (&w, s, ml_view_x_to_time (v, v->px + c0));
  int first = -1, last = -1;
  for (int c = c0; c < c1; c++)
    {
      top[c - c0] = bot[c - c0] = NAN;
      double lo = ml_view_x_to_time (v, v->px + c), hi = ml_view_x_to_time (v, v->px + c + 1);
      if (!sweep_to (&w, column_tick (&w, lo, hi)))
        break;
      double cum = 0;
      for (size_t i = 0; i < w.n; i++)
        {
          double sz = (double) s->items[w.live[i].item].size;
          if (w.live[i].item == item)
            {
              top[c - c0] = ml_view_addr_to_y (v, cum + sz);
              bot[c - c0] = ml_view_addr_to_y (v, cum);
              if (bot[c - c0] - top[c - c0] < 3)
                {
                  double m = (top[c - c0] + bot[c - c0]) / 2;
                  top[c - c0] = m - 1.5, bot[c - c0] = m + 1.5;
                }
              if (first < 0)
                first = c;
              last = c;
              break;
            }
          cum += sz;
        }
    }
  sweep_free (&w);
  if (first >= 0)
    {
      static const MlRgb match = { 0.85, 0.10, 0.55 };
      MlRgb col = mark == ML_MARK_MATCH ? match : ml_style_fg (st);
      double lw = mark == ML_MARK_SELECTED ? 2.5 : mark == ML_MARK_MATCH ? 1.5 : 1.0;
      cairo_save (cr);
      cairo_rectangle (cr, v->px, v->py, v->pw, v->ph);
      cairo_clip (cr);
      /* the staircase outline: along the tops, back along the bottoms */
      cairo_new_path (cr);
      bool pen = false;
      for (int c = first; c <= last; c++)
        {
          double t = top[c - c0];
          if (isnan (t))
            continue;
          double x = v->px + c;
          if (!pen)
            cairo_move_to (cr, x, t);
          else
            cairo_line_to (cr, x, t);
          cairo_line_to (cr, x + 1, t);
          pen = true;
        }
      for (int c = last; c >= first; c--)
        {
          double b = bot[c - c0];
          if (isnan (b))
            continue;
          double x = v->px + c;
          cairo_line_to (cr, x + 1, b);
          cairo_line_to (cr, x, b);
        }
      cairo_close_path (cr);
      if (mark == ML_MARK_SELECTED)
        {
          cairo_set_source_rgba (cr, col.r, col.g, col.b, 0.25);
          cairo_fill_preserve (cr);
        }
      cairo_set_line_width (cr, lw);
      cairo_set_source_rgba (cr, col.r, col.g, col.b, 0.95);
      cairo_stroke (cr);
      cairo_restore (cr);
    }
  free (top);
  free (bot);
}

bool
ml_active_item_point (const MlScene *s, const MlView *v, size_t item, double *x, double *y)
{
  if (item >= s->n_items)
    return false;
  const MlSceneItem *it = &s->items[item];
  double t0 = fmax ((double) it->start, v->t0), t1 = fmin ((double) it->end, v->t1);
  if (t1 <= t0)
    return false;
  /* the pixel column the drawing and the hit test use: columns start at
   * the plot's left edge, which need not be a whole pixel */
  double cx = v->px + floor (ml_view_time_to_x (v, (t0 + t1) / 2) - v->px);
  double lo = ml_view_x_to_time (v, cx), hi = ml_view_x_to_time (v, cx + 1);
  Sweep w;
  sweep_init (&w, s, lo);
  bool found = false;
  if (sweep_to (&w, column_tick (&w, lo, hi)))
    {
      double cum = 0, bpp = ml_view_bytes_per_px (v);
      long H = (long) ceil (v->ph);
      for (size_t i = 0; i < w.n && !found; i++)
        {
          double sz = (double) s->items[w.live[i].item].size;
          if (w.live[i].item == item)
            {
              /* the rows ml_active_draw paints for it (a sub-pixel
               * buffer gets one, unless it is the plot's edge) */
              long r0 = lround ((v->a1 - cum - sz) / bpp), r1 = lround ((v->a1 - cum) / bpp);
              if (r1 <= r0)
                r1 = r0 + 1;
              r0 = r0 < 0 ? 0 : r0;
              r1 = r1 > H ? H : r1;
              *x = cx + 0.5;
              *y = v->py + (double) (r0 + r1) / 2;
              found = r1 > r0;
            }
          cum += sz;
        }
    }
  sweep_free (&w);
  return found;
}
