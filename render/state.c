/* state.c — the allocator state panel (see state.h). */
#include "render/state.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <pango/pangocairo.h>

#include "sim/base/units.h"

static PangoLayout *
layout (cairo_t *cr, const MlStyle *st, const char *text, bool bold)
{
  PangoLayout *l = pango_cairo_create_layout (cr);
  PangoFontDescription *fd = pango_font_description_from_string (st->font ? st->font : "Sans");
  pango_font_description_set_absolute_size (fd, (st->font_size > 0 ? st->font_size : 9) * 0.9 * 96.0 / 72.0 * PANGO_SCALE);
  if (bold)
    pango_font_description_set_weight (fd, PANGO_WEIGHT_BOLD);
  pango_layout_set_font_description (l, fd);
  pango_font_description_free (fd);
  pango_layout_set_text (l, text, -1);
  return l;
}

static void
label (cairo_t *cr, const MlStyle *st, const char *text, double x, double y, double max_w, bool bold, MlRgb c)
{
  PangoLayout *l = layout (cr, st, text, bold);
  if (max_w > 0)
    {
      pango_layout_set_width (l, (int) (max_w * PANGO_SCALE));
      pango_layout_set_ellipsize (l, PANGO_ELLIPSIZE_END);
    }
  cairo_set_source_rgb (cr, c.r, c.g, c.b);
  cairo_move_to (cr, x, y);
  pango_cairo_show_layout (cr, l);
  g_object_unref (l);
}

typedef struct {
  uint64_t reserved;
  size_t   index;
} SegKey;

static int
by_reserved_desc (const void *a, const void *b)
{
  const SegKey *x = a, *y = b;
  if (x->reserved != y->reserved)
    return x->reserved > y->reserved ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static int
by_index (const void *a, const void *b)
{
  size_t x = ((const SegKey *) a)->index, y = ((const SegKey *) b)->index;
  return x < y ? -1 : x > y;
}

void
ml_state_draw (cairo_t *cr, const MlRect *a, const MlState *state, const MlScene *s, const MlStyle *st)
{
  MlRgb fg = ml_style_fg (st), bg = ml_style_bg (st);
  cairo_save (cr);
  cairo_rectangle (cr, a->x, a->y, a->w, a->h);
  cairo_clip (cr);
  cairo_set_source_rgb (cr, bg.r, bg.g, bg.b);
  cairo_paint (cr);
  char head[256], x1[32], x2[32], x3[32];
  snprintf (head, sizeof head, "tick %" PRIu64 ": %zu segment%s — allocated %s, free (cached) %s, unmapped %s",
            state->tick, state->n_segs, state->n_segs == 1 ? "" : "s", ml_format_size (state->allocated, x1, sizeof x1),
            ml_format_size (state->free, x2, sizeof x2), ml_format_size (state->unmapped, x3, sizeof x3));
  double fs = (st->font_size > 0 ? st->font_size : 9) * 96.0 / 72.0;
  label (cr, st, head, a->x + 4, a->y + 2, a->w - 8, true, fg);
  double top = a->y + fs * 1.6 + 6, row_h = fs * 3.0, gap = 4;
  size_t fit = (size_t) fmax (1, floor ((a->y + a->h - top) / (row_h + gap)));
  size_t n = state->n_segs, shown = n <= fit ? n : fit - 1;
  SegKey *order = malloc ((n ? n : 1) * sizeof *order);
  if (!order)
    {
      cairo_restore (cr);
      return;
    }
  for (size_t i = 0; i < n; i++)
    order[i] = (SegKey) { state->segs[i].allocated + state->segs[i].free, i };
  if (shown < n)
    {
      qsort (order, n, sizeof *order, by_reserved_desc);
      qsort (order, shown, sizeof *order, by_index);   /* the shown ones in index order */
    }
  unsigned by = (unsigned) st->color_by < ML_COLOR_BY__COUNT ? (unsigned) st->color_by : 0;
  /* buffer -> item, for the colour class */
  const MlBuffers *bufs = s->bufs;
  int32_t *item_of = malloc ((bufs->n ? bufs->n : 1) * sizeof *item_of);
  if (item_of)
    {
      for (size_t i = 0; i < bufs->n; i++)
        item_of[i] = -1;
      for (size_t i = 0; i < s->n_items; i++)
        item_of[s->items[i].buffer] = (int32_t) i;
    }
  MlRgb free_c = st->dark ? (MlRgb) { 0.35, 0.35, 0.38 } : (MlRgb) { 0.80, 0.80, 0.82 };
  double bar_x = a->x + 4, bar_w = a->w - 8;
  for (size_t k = 0; k < shown; k++)
    {
      const MlSegmentState *ss = &state->segs[order[k].index];
      double y = top + (double) k * (row_h + gap);
      char name[160], sz[32];
      const MlSegment *seg = &s->plan->segments[ss->segment];
      snprintf (name, sizeof name, "segment %" PRIu32 " · %s%s", ss->segment, ml_format_size (ss->size, sz, sizeof sz),
                seg->flags & ML_SEG_EXPANDABLE ? " · expandable" : seg->flags & ML_SEG_GROWABLE ? " · growable" : "");
      label (cr, st, name, bar_x, y, bar_w, false, fg);
      double by0 = y + fs * 1.25, bh = row_h - fs * 1.25;
      double scale = ss->size ? bar_w / (double) ss->size : 0;
      for (size_t b = ss->first; b < ss->first + ss->n; b++)
        {
          const MlBlock *blk = &state->blocks[b];
          double x0 = bar_x + (double) blk->offset * scale, w = fmax ((double) blk->size * scale, 1.0);
          MlRgb c = free_c;
          if (blk->kind == ML_BLOCK_ALLOCATED)
            {
              int32_t it = item_of && blk->buffer < bufs->n ? item_of[blk->buffer] : -1;
              c = ml_style_class_color (st, it >= 0 ? s->items[it].cls[by] : ML_PALETTE_N);
            }
          if (blk->kind == ML_BLOCK_UNMAPPED)
            {
              static const double dash[] = { 3, 2 };
              cairo_set_dash (cr, dash, 2, 0);
              cairo_set_line_width (cr, 1);
              cairo_set_source_rgba (cr, fg.r, fg.g, fg.b, 0.5);
              cairo_rectangle (cr, x0 + 0.5, by0 + 0.5, w - 1, bh - 1);
              cairo_stroke (cr);
              cairo_set_dash (cr, NULL, 0, 0);
            }
          else
            {
              cairo_set_source_rgb (cr, c.r, c.g, c.b);
              cairo_rectangle (cr, x0, by0, w, bh);
              cairo_fill (cr);
              /* a hairline of the background between neighbours */
              if (w >= 4)
                {
                  cairo_set_source_rgb (cr, bg.r, bg.g, bg.b);
                  cairo_rectangle (cr, x0, by0, 1, bh);
                  cairo_fill (cr);
                }
            }
          char text[64];
          ml_format_size (blk->size, text, sizeof text);
          PangoLayout *l = layout (cr, st, text, false);
          int tw, th;
          pango_layout_get_pixel_size (l, &tw, &th);
          g_object_unref (l);
          if (tw + 6 < w && th <= bh)
            {
              double lum = 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
              MlRgb ink = blk->kind == ML_BLOCK_UNMAPPED || lum > 0.5 ? (MlRgb) { 0.1, 0.1, 0.1 } : (MlRgb) { 1, 1, 1 };
              label (cr, st, text, x0 + 3, by0 + (bh - th) / 2, 0, false, ink);
            }
        }
    }
  if (shown < n)
    {
      char more[96];
      snprintf (more, sizeof more, "… and %zu more segments (the ones with the most reserved bytes are shown)", n - shown);
      label (cr, st, more, bar_x, top + (double) shown * (row_h + gap), bar_w, false, fg);
    }
  free (item_of);
  free (order);
  cairo_restore (cr);
}
