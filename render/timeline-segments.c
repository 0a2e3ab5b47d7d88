/* timeline-segments.c — the segments plot's outlines: each segment over
 * its lifetime, a paged (expandable) one following its mapped pages; and
 * the bands of (pool, stream) on the address plots. */
#include "render/timeline-private.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/base/units.h"

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

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* The outline of paged segment @g over the visible ticks: the union of its
 * mappings, which grows and shrinks as pages are mapped and unmapped.
 * Between two consecutive map / unmap ticks (a slab) the mapped ranges,
 * merged, give horizontal edges at their ends; at each slab boundary a
 * vertical edge covers the ranges mapped on one side only. Adds to the
 * path; false when out of memory (nothing then). O(m log m + slabs x a log a) for m mappings in
 * view, a of them mapped at once. */
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
void
_ml_draw_segment_outlines (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  const MlPlan *p = s->plan;
  MlRgb ink = ml_style_fg (st);
  cairo_set_line_width (cr, 1.5);
  for (size_t g = 0; g < p->n_segments; g++)
    {
      const MlSegment *seg = &p->segments[g];
      double x0 = _ml_clamp (ml_view_time_to_x (v, (double) seg->start), v->px - 2, v->px + v->pw + 2);
      double x1 = _ml_clamp (ml_view_time_to_x (v, (double) seg->end), v->px - 2, v->px + v->pw + 2);
      double lo = (double) s->seg_base[g], hi = lo + (double) s->seg_extent[g];
      if (hi < v->a0 || lo > v->a1 || x1 <= v->px || x0 >= v->px + v->pw)
        continue;
      double y0 = _ml_clamp (ml_view_addr_to_y (v, hi), v->py - 2, v->py + v->ph + 2);
      double y1 = _ml_clamp (ml_view_addr_to_y (v, lo), v->py - 2, v->py + v->ph + 2);
      char text[128], sz[32], mp[32];
      if (y1 - y0 < 1)
        {
          /* under a pixel high: a short mark at the plot's left edge, so
           * that every segment the title counts is drawn and the buffers
           * of the small ones stay visible */
          _ml_set_rgb (cr, ink, 0.75);
          cairo_move_to (cr, fmax (x0, v->px), floor (y1) + 0.5);
          cairo_line_to (cr, fmax (x0, v->px) + 6, floor (y1) + 0.5);
          cairo_stroke (cr);
          snprintf (text, sizeof text, "segment %zu · %s", g, ml_format_size (seg->size, sz, sizeof sz));
          _ml_note (cr, "outline", &(MlRect) { fmax (x0, v->px), y1 - 1, 6, 1 }, text, NULL);
          continue;
        }
      _ml_set_rgb (cr, ink, 0.75);
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
      _ml_note (cr, "outline", &(MlRect) { x0, y0, x1 - x0, y1 - y0 }, text, NULL);
      double tw, th;
      _ml_text_size (cr, st, text, 0.85, false, &tw, &th);
      /* at the segment's bottom right: the top of the plot carries the
       * OOM and marker labels, the left the buffers' names */
      if (tw + 6 < x1 - x0 && th + 4 < y1 - y0)
        {
          double tx = fmin (x1, v->px + v->pw) - tw - 6, ty = fmin (y1, v->py + v->ph) - th - 3;
          _ml_set_rgb (cr, ml_style_bg (st), 0.8);
          cairo_rectangle (cr, tx - 2, ty, tw + 4, th);
          cairo_fill (cr);
          _ml_text_at (cr, st, text, tx, ty, AL_LEFT, VA_TOP, 0.85, false, ink, 0.9, 0);
        }
    }
}

/* The SVG note of band @b: its label, then its segments ("0x7f60050…"
 * where recorded, else "seg 4"), for readers of the picture. */
static void
note_band (cairo_t *cr, const MlScene *s, const MlSceneBand *b, const MlRect *r)
{
  if (!cairo_get_user_data (cr, &_ml_notes_key))
    return;
  size_t cap = sizeof b->label + 32 + b->n * 24, o;
  char *full = malloc (cap);
  if (!full)
    return;
  o = (size_t) snprintf (full, cap, "%s: %zu segment%s:", b->label, b->n, b->n == 1 ? "" : "s");
  for (size_t k = b->first; k < b->first + b->n && o < cap; k++)
    {
      uint32_t g = s->seg_order[k];
      uint64_t a = s->plan->segments[g].addr;
      o += (size_t) (a ? snprintf (full + o, cap - o, " 0x%" PRIx64, a) : snprintf (full + o, cap - o, " seg %u", g));
    }
  _ml_note (cr, "band", r, b->label, full);
  free (full);
}

static bool
clear_of (const MlRect *r, const MlRect *placed, size_t np)
{
  for (size_t k = 0; k < np; k++)
    if (_ml_rects_meet (r, &placed[k]))
      return false;
  return true;
}

/* Where a band's label of @w x @h goes, its band's visible part being
 * [@y0, @y1): inside it at the top left, or lower down inside it clear of
 * the labels placed before; a band too low for it has it just above the
 * band (*@side -1), else just below (+1); always inside the plot and
 * clear of @placed (false: nowhere). */
static bool
band_label_place (const MlView *v, double y0, double y1, double w, double h, const MlRect *placed, size_t np,
                  MlRect *out, int *side)
{
  double x = v->px + 4;
  if (x + w > v->px + v->pw - 2)
    return false;   /* wider than the plot: never cut, left out */
  *side = 0;
  for (double y = fmax (y0, v->py) + 2; y + h <= fmin (y1, v->py + v->ph) - 2;)
    {
      MlRect r = { x, y, w, h };
      if (clear_of (&r, placed, np))
        {
          *out = r;
          return true;
        }
      /* below the lowest label it meets */
      double next = y;
      for (size_t k = 0; k < np; k++)
        if (_ml_rects_meet (&r, &placed[k]) && placed[k].y + placed[k].h + 1 > next)
          next = placed[k].y + placed[k].h + 1;
      y = next;
    }
  const double ys[2] = { y0 - h - 1, y1 + 1 };
  for (int c = 0; c < 2; c++)
    {
      MlRect r = { x, ys[c], w, h };
      if (r.y >= v->py && r.y + r.h <= v->py + v->ph && clear_of (&r, placed, np))
        {
          *out = r;
          *side = c ? 1 : -1;
          return true;
        }
    }
  return false;
}

/* The bands of (pool, stream) over the address plots (scene.h): a dashed
 * line where one band ends and the next begins, and each band's label at
 * the top left of its visible part on a veil (band_label_place: beside a
 * band too thin for it, with an arrow at the band); one with no room for
 * its label nearby has none drawn, its hover text says it. */
void
_ml_draw_bands (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  if (!s->n_bands)
    return;
  MlRgb fg = ml_style_fg (st), bg = ml_style_bg (st);
  static const double dash[] = { 6, 3 };
  cairo_save (cr);
  cairo_set_dash (cr, dash, 2, 0);
  cairo_set_line_width (cr, 1.5);
  _ml_set_rgb (cr, fg, 0.6);
  for (size_t b = 1; b < s->n_bands; b++)
    {
      double y = floor (ml_view_addr_to_y (v, (double) s->bands[b].lo)) + 0.5;
      if (y > v->py && y < v->py + v->ph)
        {
          cairo_move_to (cr, v->px, y);
          cairo_line_to (cr, v->px + v->pw, y);
        }
    }
  cairo_stroke (cr);
  cairo_restore (cr);
  MlRect *placed = malloc ((s->n_bands + 1) * sizeof *placed);
  if (!placed)
    return;
  size_t np = 0;
  if (st->show_oom && ml_timeline_oom_label_box (cr, v, s, st, &placed[np]))
    np++;
  /* the top band first: labels above a thin band go into the one above */
  for (size_t b = s->n_bands; b-- > 0;)
    {
      const MlSceneBand *band = &s->bands[b];
      double lo = fmax ((double) band->lo, v->a0), hi = fmin ((double) band->hi, v->a1);
      if (hi <= lo)
        continue;
      double y0 = ml_view_addr_to_y (v, hi), y1 = ml_view_addr_to_y (v, lo), tw, th;
      note_band (cr, s, band, &(MlRect) { v->px, y0, v->pw, y1 - y0 });
      /* a label beside its band, not in it, points at it */
      char text[ML_SCENE_BAND_LABEL + 8];
      snprintf (text, sizeof text, "%s ↓", band->label);
      _ml_text_size (cr, st, text, 0.85, true, &tw, &th);
      MlRect r;
      int side;
      if (!band_label_place (v, y0, y1, tw + 8, th + 2, placed, np, &r, &side))
        continue;
      snprintf (text, sizeof text, "%s%s", band->label, side < 0 ? " ↓" : side > 0 ? " ↑" : "");
      if (!side)
        {
          _ml_text_size (cr, st, text, 0.85, true, &tw, &th);
          r.w = tw + 8;
        }
      placed[np++] = r;
      _ml_set_rgb (cr, bg, 0.88);
      cairo_rectangle (cr, r.x, r.y, r.w, r.h);
      cairo_fill (cr);
      _ml_set_rgb (cr, fg, 0.6);
      cairo_set_line_width (cr, 1);
      cairo_rectangle (cr, r.x + 0.5, r.y + 0.5, r.w - 1, r.h - 1);
      cairo_stroke (cr);
      _ml_text_at (cr, st, text, r.x + 4, r.y + 1, AL_LEFT, VA_TOP, 0.85, true, fg, 0.95, 0);
      _ml_note (cr, "band-label", &r, band->label, text);
    }
  free (placed);
}
