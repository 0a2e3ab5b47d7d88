/* state.c — the allocator state panel (see state.h). */
#include "render/state.h"
#include "render/timeline-private.h"

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
  uint64_t key;      /* the order shown: band, then place on the address axis */
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
by_key (const void *a, const void *b)
{
  uint64_t x = ((const SegKey *) a)->key, y = ((const SegKey *) b)->key;
  return x < y ? -1 : x > y;
}

/* What every row of the panel needs. */
typedef struct {
  const MlState  *state;
  const MlScene  *s;
  const MlStyle  *st;
  const int32_t  *item_of;   /* buffer -> scene item, for the colour class; may be NULL */
  MlRgb           fg, bg, free_c;
  double          fs, row_h, x, w;
} Panel;

/* The annotate texts of allocated block @blk ("; "-joined into @out),
 * and how many there are (0: none). */
static size_t
block_notes (const Panel *pn, const MlBlock *blk, char *out, size_t len)
{
  out[0] = 0;
  if (blk->kind != ML_BLOCK_ALLOCATED)
    return 0;
  return ml_scene_buffer_notes (pn->s, blk->buffer, out, len);
}

/* One segment's row at @y: its name, then its blocks in address order. */
static void
draw_segment_row (cairo_t *cr, const Panel *pn, const MlSegmentState *ss, double y)
{
  const MlScene *s = pn->s;
  const MlStyle *st = pn->st;
  char name[160], sz[32];
  const MlSegment *seg = &s->plan->segments[ss->segment];
  snprintf (name, sizeof name, "segment %" PRIu32 " · %s%s", ss->segment, ml_format_size (ss->size, sz, sizeof sz),
            seg->flags & ML_SEG_EXPANDABLE ? " · expandable" : seg->flags & ML_SEG_GROWABLE ? " · growable" : "");
  label (cr, st, name, pn->x, y, pn->w, false, pn->fg);
  unsigned by = (unsigned) st->color_by < ML_COLOR_BY__COUNT ? (unsigned) st->color_by : 0;
  double by0 = y + pn->fs * 1.25, bh = pn->row_h - pn->fs * 1.25;
  double scale = ss->size ? pn->w / (double) ss->size : 0;
  for (size_t b = ss->first; b < ss->first + ss->n; b++)
    {
      const MlBlock *blk = &pn->state->blocks[b];
      double x0 = pn->x + (double) blk->offset * scale, w = fmax ((double) blk->size * scale, 1.0);
      MlRgb c = pn->free_c;
      if (blk->kind == ML_BLOCK_ALLOCATED)
        {
          int32_t it = pn->item_of && blk->buffer < s->bufs->n ? pn->item_of[blk->buffer] : -1;
          c = ml_style_class_color (st, it >= 0 ? s->items[it].cls[by] : ML_PALETTE_N);
        }
      if (blk->kind == ML_BLOCK_UNMAPPED)
        {
          static const double dash[] = { 3, 2 };
          cairo_set_dash (cr, dash, 2, 0);
          cairo_set_line_width (cr, 1);
          cairo_set_source_rgba (cr, pn->fg.r, pn->fg.g, pn->fg.b, 0.5);
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
              cairo_set_source_rgb (cr, pn->bg.r, pn->bg.g, pn->bg.b);
              cairo_rectangle (cr, x0, by0, 1, bh);
              cairo_fill (cr);
            }
        }
      char text[64], notes[8];
      if (block_notes (pn, blk, notes, sizeof notes))
        {
          /* annotated: a notch in its top left corner, its texts listed
           * under the rows */
          double m = fmin (7, fmax (w, 3));
          cairo_set_source_rgb (cr, pn->fg.r, pn->fg.g, pn->fg.b);
          cairo_move_to (cr, x0, by0);
          cairo_line_to (cr, x0 + m, by0);
          cairo_line_to (cr, x0, by0 + m);
          cairo_close_path (cr);
          cairo_fill (cr);
        }
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

/* The head of band @band (scene.h) at @y, two lines: its label, and
 * what its segments reserved at the tick hold; a rule across the panel
 * above. */
static void
draw_band_head (cairo_t *cr, const Panel *pn, size_t band, double y)
{
  const MlSceneBand *b = &pn->s->bands[band];
  uint64_t al = 0, fr = 0, un = 0;
  size_t n = 0;
  for (size_t i = 0; i < pn->state->n_segs; i++)
    {
      const MlSegmentState *ss = &pn->state->segs[i];
      if (pn->s->seg_band[ss->segment] == band)
        al += ss->allocated, fr += ss->free, un += ss->unmapped, n++;
    }
  char text[160], x1[32], x2[32], x3[32];
  snprintf (text, sizeof text, "%zu segment%s: allocated %s, free (cached) %s%s%s", n, n == 1 ? "" : "s",
            ml_format_size (al, x1, sizeof x1), ml_format_size (fr, x2, sizeof x2), un ? ", unmapped " : "",
            un ? ml_format_size (un, x3, sizeof x3) : "");
  cairo_set_source_rgba (cr, pn->fg.r, pn->fg.g, pn->fg.b, 0.5);
  cairo_set_line_width (cr, 1);
  cairo_move_to (cr, pn->x, floor (y) + 0.5);
  cairo_line_to (cr, pn->x + pn->w, floor (y) + 0.5);
  cairo_stroke (cr);
  label (cr, pn->st, b->label, pn->x, y + 2, pn->w, true, pn->fg);
  label (cr, pn->st, text, pn->x, y + 2 + pn->fs * 1.3, pn->w, false, pn->fg);
  _ml_note (cr, "state-band", &(MlRect) { pn->x, y, pn->w, pn->fs * 2.9 }, b->label, text);
}

/* The annotated blocks of the segments shown (@order[0 .. @shown)), in
 * that order: how many there are. */
static size_t
count_notes (const Panel *pn, const SegKey *order, size_t shown)
{
  size_t n = 0;
  char notes[8];
  for (size_t k = 0; k < shown; k++)
    {
      const MlSegmentState *ss = &pn->state->segs[order[k].index];
      for (size_t b = ss->first; b < ss->first + ss->n; b++)
        n += block_notes (pn, &pn->state->blocks[b], notes, sizeof notes) > 0;
    }
  return n;
}

/* Under the rows from @y: "annotated blocks:", then a line per annotated
 * block, its segment, offset and size and its texts, at most @lines. */
static void
draw_notes (cairo_t *cr, const Panel *pn, const SegKey *order, size_t shown, size_t total, size_t lines, double y)
{
  double lh = pn->fs * 1.3;
  char head[64];
  snprintf (head, sizeof head, "annotated block%s (annotate entries):", total == 1 ? "" : "s");
  label (cr, pn->st, head, pn->x, y, pn->w, true, pn->fg);
  y += lh;
  size_t drawn = 0;
  for (size_t k = 0; k < shown && drawn < lines; k++)
    {
      const MlSegmentState *ss = &pn->state->segs[order[k].index];
      for (size_t b = ss->first; b < ss->first + ss->n && drawn < lines; b++)
        {
          const MlBlock *blk = &pn->state->blocks[b];
          char notes[512], text[640], full[640], o1[32], o2[32];
          if (!block_notes (pn, blk, notes, sizeof notes))
            continue;
          snprintf (text, sizeof text, "segment %" PRIu32 " +%s (%s): %s", ss->segment,
                    ml_format_size (blk->offset, o1, sizeof o1), ml_format_size (blk->size, o2, sizeof o2), notes);
          snprintf (full, sizeof full, "segment %" PRIu32 " + %" PRIu64 " bytes, %" PRIu64 " bytes: %s", ss->segment,
                    blk->offset, blk->size, notes);
          label (cr, pn->st, text, pn->x + 8, y, pn->w - 8, false, pn->fg);
          _ml_note (cr, "state-annotation", &(MlRect) { pn->x + 8, y, pn->w - 8, lh }, text, full);
          y += lh;
          drawn++;
        }
    }
  if (drawn < total)
    {
      char more[64];
      snprintf (more, sizeof more, "… and %zu more", total - drawn);
      label (cr, pn->st, more, pn->x + 8, y, pn->w - 8, false, pn->fg);
      _ml_note (cr, "state-annotation-more", &(MlRect) { pn->x + 8, y, pn->w - 8, lh }, more, more);
    }
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
  double top = a->y + fs * 1.6 + 6, row_h = fs * 3.0, gap = 4, head_h = fs * 2.9 + 4;
  size_t n = state->n_segs;
  /* the bands with a segment reserved at the tick each take a head row */
  size_t heads = 0;
  bool *seen = s->n_bands ? calloc (s->n_bands, sizeof *seen) : NULL;
  for (size_t i = 0; seen && i < n; i++)
    if (!seen[s->seg_band[state->segs[i].segment]])
      seen[s->seg_band[state->segs[i].segment]] = true, heads++;
  free (seen);
  /* the annotated blocks' listing under the rows: room for up to 6 lines */
  size_t all_notes = 0;
  Panel pn = { state, s, st, NULL, fg, bg, st->dark ? (MlRgb) { 0.35, 0.35, 0.38 } : (MlRgb) { 0.80, 0.80, 0.82 },
               fs, row_h, a->x + 4, a->w - 8 };
  char scratch[8];
  for (size_t b = 0; s->n_note_ids && b < state->n_blocks; b++)
    all_notes += block_notes (&pn, &state->blocks[b], scratch, sizeof scratch) > 0;
  size_t note_lines = all_notes < 6 ? all_notes : 6;
  double notes_h = all_notes ? (double) (note_lines + 1 + (all_notes > note_lines)) * fs * 1.3 + gap : 0;
  size_t fit = (size_t) fmax (1, floor ((a->y + a->h - top - notes_h - (double) heads * head_h) / (row_h + gap)));
  size_t shown = n <= fit ? n : fit - 1;
  SegKey *order = malloc ((n ? n : 1) * sizeof *order);
  uint32_t *place = malloc ((s->plan->n_segments + 1) * sizeof *place);   /* segment -> place on the axis */
  if (!order || !place)
    {
      free (order), free (place);
      cairo_restore (cr);
      return;
    }
  for (size_t k = 0; k < s->plan->n_segments; k++)
    place[s->seg_order[k]] = (uint32_t) k;
  for (size_t i = 0; i < n; i++)
    {
      uint32_t g = state->segs[i].segment;
      /* with bands: by band, then by place; else by index */
      uint64_t key = s->n_bands ? (uint64_t) s->seg_band[g] << 32 | place[g] : g;
      order[i] = (SegKey) { state->segs[i].allocated + state->segs[i].free, i, key };
    }
  if (shown < n)
    qsort (order, n, sizeof *order, by_reserved_desc);
  qsort (order, shown, sizeof *order, by_key);
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
  pn.item_of = item_of;
  double y = top;
  for (size_t k = 0; k < shown; k++)
    {
      const MlSegmentState *ss = &state->segs[order[k].index];
      if (s->n_bands && (k == 0 || order[k].key >> 32 != order[k - 1].key >> 32))
        {
          draw_band_head (cr, &pn, s->seg_band[ss->segment], y);
          y += head_h;
        }
      draw_segment_row (cr, &pn, ss, y);
      y += row_h + gap;
    }
  if (shown < n)
    {
      char more[96];
      snprintf (more, sizeof more, "… and %zu more segments (the ones with the most reserved bytes are shown)", n - shown);
      label (cr, st, more, pn.x, y, pn.w, false, fg);
      y += fs * 1.3;
    }
  size_t notes = all_notes ? count_notes (&pn, order, shown) : 0;
  if (notes)
    draw_notes (cr, &pn, order, shown, notes, note_lines, y + gap);
  free (item_of);
  free (order);
  free (place);
  cairo_restore (cr);
}
