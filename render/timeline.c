/* timeline.c — the layout panel: address × time, one rectangle per
 * buffer over the segments' bands, with the marks drawn over it
 * (timeline-marks.c, timeline-segments.c); or the stacked plot
 * (active.c). See timeline.h for the level of detail. */
#include "render/timeline-private.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/units.h"

typedef struct {
  double x0, y0, x1, y1;
  uint32_t item;
  uint8_t cls;
} BigRect;

/* The buffer's name (shortened paths) into @name (empty without one) and
 * its size into @size. */
static void
item_parts (const MlScene *s, const MlSceneItem *it, char *name, size_t nlen, char *size, size_t slen)
{
  const MlBuffer *b = &s->bufs->buf[it->buffer];
  const MlTrace *t = s->bufs->trace;
  const char *n = t && b->name ? ml_trace_str (t, b->name) : NULL;
  if ((!n || !*n) && t && b->stack && b->stack < t->n_stacks && t->stacks[b->stack].site)
    n = ml_trace_str (t, t->stacks[b->stack].site);
  ml_format_size (b->rsize, size, slen);
  if (n && *n)
    ml_short_label (n, name, nlen);
  else
    snprintf (name, nlen, "#%" PRIu64, b->id);
}

/* What a rectangle @maxw wide says: "name  size"; too long, the name
 * loses its start ("…optimizer.py:71:step  147.24 MiB"), never its last
 * word; then the name alone; else nothing (NULL). */
static const char *
fit_label (cairo_t *cr, const MlStyle *st, const char *name, const char *size, double maxw, char *buf, size_t len)
{
  double tw, th;
  snprintf (buf, len, "%s  %s", name, size);
  _ml_text_size (cr, st, buf, 0.9, false, &tw, &th);
  if (tw <= maxw)
    return buf;
  const char *sp = strrchr (name, ' ');
  if (sp)
    {
      snprintf (buf, len, "\xe2\x80\xa6%s  %s", sp + 1, size);
      _ml_text_size (cr, st, buf, 0.9, false, &tw, &th);
      if (tw <= maxw)
        return buf;
    }
  snprintf (buf, len, "%s%s", sp ? "\xe2\x80\xa6" : "", sp ? sp + 1 : name);
  _ml_text_size (cr, st, buf, 0.9, false, &tw, &th);
  return tw <= maxw ? buf : NULL;
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
  double x0 = _ml_clamp (ml_view_time_to_x (v, t0), v->px - 2, v->px + v->pw + 2);
  double x1 = _ml_clamp (ml_view_time_to_x (v, t1), v->px - 2, v->px + v->pw + 2);
  if (hi < v->a0 || lo > v->a1 || x1 <= v->px || x0 >= v->px + v->pw)
    return;
  double y0 = _ml_clamp (ml_view_addr_to_y (v, hi), v->py - 2, v->py + v->ph + 2);
  double y1 = _ml_clamp (ml_view_addr_to_y (v, lo), v->py - 2, v->py + v->ph + 2);
  cairo_rectangle (cr, round (x0), round (y0), fmax (1, round (x1) - round (x0)), fmax (1, round (y1) - round (y0)));
}

static void
draw_segments (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  const MlPlan *p = s->plan;
  MlRgb band = st->dark ? (MlRgb) { 0.18, 0.18, 0.20 } : (MlRgb) { 0.945, 0.945, 0.955 };
  _ml_set_rgb (cr, band, 1.0);
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
      _ml_set_rgb (cr, ml_style_fg (st), 0.18);
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

static void
draw_active_layout (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  cairo_save (cr);
  cairo_rectangle (cr, v->px, v->py, v->pw, v->ph);
  cairo_clip (cr);
  _ml_set_rgb (cr, ml_style_bg (st), 1.0);
  cairo_paint (cr);
  _ml_time_grid (cr, v, s, st, v->py, v->py + v->ph);
  ml_active_draw (cr, v, s, st);
  _ml_draw_stages (cr, v, s, st);
  if (st->show_peaks && s->metrics.lower_bound_tick < s->end_tick)
    {
      double x = ml_view_time_to_x (v, (double) s->metrics.lower_bound_tick);
      if (x >= v->px && x <= v->px + v->pw)
        _ml_dashed_vline (cr, x, v->py, v->py + v->ph, ml_style_fg (st), 0.55, 1.0);
    }
  if (st->show_oom)
    _ml_draw_oom (cr, v, s, st);
  cairo_restore (cr);
  _ml_draw_frame (cr, v, st);
}

/* The visible buffers of the layout sorted out: those at least two
 * pixels each way as rectangles (pixels relative to the plot), the rest
 * merged into a grid of W × H cells that keeps, for each pixel, the
 * largest item covering it (UINT32_MAX: none). */
typedef struct {
  BigRect  *big;
  size_t    n_big, cap_big;
  uint32_t *grid;       /* NULL until a small item shows */
  size_t    W, H;
  unsigned  by;         /* the colouring */
} Visible;

static void
visible_free (Visible *vis)
{
  free (vis->big);
  free (vis->grid);
}

/* Adds item @i (pixels [x0, x1) x [y0, y1)) as a rectangle; false when out
 * of memory. */
static bool
add_big (Visible *vis, const MlSceneItem *it, size_t i, double x0, double y0, double x1, double y1)
{
  if (vis->n_big == vis->cap_big)
    {
      size_t cap = vis->cap_big ? vis->cap_big * 2 : 1024;
      BigRect *p = realloc (vis->big, cap * sizeof *p);
      if (!p)
        return false;
      vis->big = p;
      vis->cap_big = cap;
    }
  double W = (double) vis->W, H = (double) vis->H;
  vis->big[vis->n_big++] = (BigRect) { _ml_clamp (x0, -2, W + 2), _ml_clamp (y0, -2, H + 2), _ml_clamp (x1, -2, W + 2),
                                       _ml_clamp (y1, -2, H + 2), (uint32_t) i, it->cls[vis->by] };
  return true;
}

/* Marks the grid cells item @i covers where it is the largest; false when
 * out of memory. */
static bool
add_small (Visible *vis, const MlScene *s, size_t i, double x0, double y0, double x1, double y1)
{
  size_t W = vis->W, H = vis->H;
  if (!vis->grid)
    {
      vis->grid = malloc (W * H * sizeof *vis->grid);
      if (!vis->grid)
        return false;
      memset (vis->grid, 0xff, W * H * sizeof *vis->grid);
    }
  const MlSceneItem *it = &s->items[i];
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
      uint32_t *row = vis->grid + (size_t) r * W;
      for (long c = c0; c <= c1; c++)
        if (row[c] == UINT32_MAX || s->items[row[c]].size < it->size)
          row[c] = (uint32_t) i;
    }
  return true;
}

/* Sorts the items in view into rectangles and the grid: only those
 * overlapping the visible ticks are visited (two binary searches). */
static void
collect_visible (const MlView *v, const MlScene *s, const MlStyle *st, Visible *vis)
{
  memset (vis, 0, sizeof *vis);
  vis->W = (size_t) ceil (v->pw);
  vis->H = (size_t) ceil (v->ph);
  vis->by = (unsigned) st->color_by < ML_COLOR_BY__COUNT ? (unsigned) st->color_by : 0;
  double bpp = ml_view_bytes_per_px (v);
  size_t i0 = ml_scene_first_visible (s, v->t0), i1 = ml_scene_end_visible (s, v->t1);
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
      bool big = x1 - x0 >= 2.0 && y1 - y0 >= 2.0;
      if (!(big ? add_big (vis, it, i, x0, y0, x1, y1) : add_small (vis, s, i, x0, y0, x1, y1)))
        break;
    }
}

/* The merged sub-pixel items: one pixel per grid cell, in the colour of
 * the largest buffer there, painted as one image (compact in SVG and PDF
 * too, whatever the number of buffers). */
static void
paint_grid (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, const Visible *vis)
{
  size_t W = vis->W, H = vis->H;
  cairo_surface_t *img = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, (int) W, (int) H);
  if (cairo_surface_status (img) == CAIRO_STATUS_SUCCESS)
    {
      uint32_t argb[ML_PALETTE_N + 1];
      for (unsigned cls = 0; cls <= ML_PALETTE_N; cls++)
        argb[cls] = _ml_argb (ml_style_class_color (st, cls));
      cairo_surface_flush (img);
      unsigned char *data = cairo_image_surface_get_data (img);
      int stride = cairo_image_surface_get_stride (img);
      for (size_t r = 0; r < H; r++)
        {
          uint32_t *row = (uint32_t *) (data + r * (size_t) stride);
          const uint32_t *g = vis->grid + r * W;
          for (size_t c = 0; c < W; c++)
            {
              unsigned cls = g[c] == UINT32_MAX ? 0 : s->items[g[c]].cls[vis->by];
              row[c] = g[c] == UINT32_MAX ? 0 : argb[cls <= ML_PALETTE_N ? cls : ML_PALETTE_N];
            }
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

/* The buffers at least two pixels each way: one fill per colour, then
 * outlines where they help tell neighbours apart. */
static void
paint_rects (cairo_t *cr, const MlView *v, const MlStyle *st, const Visible *vis)
{
  for (unsigned cls = 0; cls <= ML_PALETTE_N; cls++)
    {
      bool any = false;
      for (size_t k = 0; k < vis->n_big; k++)
        if (vis->big[k].cls == cls)
          {
            const BigRect *b = &vis->big[k];
            double x0 = round (b->x0), x1 = round (b->x1), y0 = round (b->y0), y1 = round (b->y1);
            cairo_rectangle (cr, v->px + x0, v->py + y0, fmax (1, x1 - x0), fmax (1, y1 - y0));
            any = true;
          }
      if (any)
        {
          _ml_set_rgb (cr, ml_style_class_color (st, cls), 1.0);
          cairo_fill (cr);
        }
    }
}

static void
outline_rects (cairo_t *cr, const MlView *v, const MlStyle *st, const Visible *vis)
{
  cairo_set_line_width (cr, 1.0);
  bool any_outline = false;
  for (size_t k = 0; k < vis->n_big; k++)
    {
      const BigRect *b = &vis->big[k];
      if (b->x1 - b->x0 < 6 || b->y1 - b->y0 < 6)
        continue;
      double x0 = round (b->x0), x1 = round (b->x1), y0 = round (b->y0), y1 = round (b->y1);
      cairo_rectangle (cr, v->px + x0 + 0.5, v->py + y0 + 0.5, x1 - x0 - 1, y1 - y0 - 1);
      any_outline = true;
    }
  if (any_outline)
    {
      _ml_set_rgb (cr, ml_style_bg (st), 0.85);
      cairo_stroke (cr);
    }
}

/* Names and sizes where they fit, largest buffers first (at most 200). */
static void
label_rects (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, Visible *vis)
{
  double fh = _ml_font_px (st) * 0.9 * 1.1;
  qsort (vis->big, vis->n_big, sizeof *vis->big, by_area_desc);
  size_t shown = 0;
  for (size_t k = 0; k < vis->n_big && shown < 200; k++)
    {
      const BigRect *b = &vis->big[k];
      double x0 = fmax (b->x0, 0), x1 = fmin (b->x1, (double) vis->W);
      double y0 = fmax (b->y0, 0), y1 = fmin (b->y1, (double) vis->H);
      if (x1 - x0 < 40 || y1 - y0 < fh + 2)
        break;   /* sorted by area: later ones rarely fit; cheap stop */
      char text[600], name[200], size[32], notes[256];
      item_parts (s, &s->items[b->item], name, sizeof name, size, sizeof size);
      MlRgb fill = ml_style_class_color (st, b->cls);
      MlRgb ink = _ml_luminance (fill) > 0.45 ? (MlRgb) { 0.1, 0.1, 0.1 } : (MlRgb) { 1, 1, 1 };
      double maxw = x1 - x0 - 6, tw, th;
      /* an annotated buffer says its annotate texts after its name and
       * size where they fit whole */
      bool noted = ml_scene_buffer_notes (s, s->items[b->item].buffer, notes, sizeof notes) > 0;
      if (noted)
        {
          snprintf (text, sizeof text, "%s  %s  \xe2\x80\x9c%s\xe2\x80\x9d", name, size, notes);
          _ml_text_size (cr, st, text, 0.9, false, &tw, &th);
          noted = tw <= maxw;
        }
      if (!noted && (maxw < 30 || !fit_label (cr, st, name, size, maxw, text, sizeof text)))
        continue;
      double tx = v->px + x0 + 3, ty = v->py + (y0 + y1) / 2;
      tw = _ml_text_at (cr, st, text, tx, ty, AL_LEFT, VA_MIDDLE, 0.9, false, ink, 0.95, 0);
      if (noted)
        _ml_note (cr, "annotation", &(MlRect) { tx, ty - fh / 2, tw, fh }, text, notes);
      shown++;
    }
}

/* What is drawn over the buffers: the stages' bands, the lower-bound tick, the issues, the
 * OOM, the segments' outlines. */
static void
draw_marks (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  _ml_draw_stages (cr, v, s, st);
  if (st->show_peaks && s->metrics.lower_bound)
    {
      double x = ml_view_time_to_x (v, (double) s->metrics.lower_bound_tick);
      if (x >= v->px && x <= v->px + v->pw)
        _ml_dashed_vline (cr, x, v->py, v->py + v->ph, ml_style_fg (st), 0.55, 1.0);
    }
  if (st->show_issues)
    _ml_draw_issues (cr, v, s, st);
  if (st->show_oom)
    _ml_draw_oom (cr, v, s, st);
  if (st->plot == ML_PLOT_SEGMENTS)
    _ml_draw_segment_outlines (cr, v, s, st);
  _ml_draw_bands (cr, v, s, st);
}

/* The buffers sorted out by collect_visible: the merged grid, the
 * rectangles, their outlines. */
static void
paint_visible (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, const Visible *vis)
{
  cairo_antialias_t aa = cairo_get_antialias (cr);
  cairo_set_antialias (cr, CAIRO_ANTIALIAS_NONE);
  if (vis->grid)
    paint_grid (cr, v, s, st, vis);
  paint_rects (cr, v, st, vis);
  cairo_set_antialias (cr, aa);
  outline_rects (cr, v, st, vis);
}

void
ml_timeline_draw_buffers (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  Visible vis;
  collect_visible (v, s, st, &vis);
  cairo_save (cr);
  cairo_rectangle (cr, v->px, v->py, v->pw, v->ph);
  cairo_clip (cr);
  paint_visible (cr, v, s, st, &vis);
  cairo_restore (cr);
  visible_free (&vis);
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
  _ml_set_rgb (cr, ml_style_bg (st), 1.0);
  cairo_paint (cr);
  draw_segments (cr, v, s, st);
  _ml_time_grid (cr, v, s, st, v->py, v->py + v->ph);
  Visible vis;
  collect_visible (v, s, st, &vis);
  paint_visible (cr, v, s, st, &vis);
  if (st->show_labels && vis.n_big)
    label_rects (cr, v, s, st, &vis);
  visible_free (&vis);
  if (s->n_items == 0)
    _ml_text_at (cr, st, "no buffers with bytes in this trace", v->px + v->pw / 2, v->py + v->ph / 2, AL_CENTER,
                 VA_MIDDLE, 1.2, false, ml_style_fg (st), 0.6, 0);
  draw_marks (cr, v, s, st);
  cairo_restore (cr);
  _ml_draw_frame (cr, v, st);
}
