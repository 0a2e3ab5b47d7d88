/* timeline-curves.c — the curves panel (live and reserved bytes, the
 * lower bound, the capacity, the peak points and their labels) and the
 * fragmentation panel: each curve reduced to its largest value per pixel
 * column, so peaks never vanish. */
#include "render/timeline-private.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "sim/base/units.h"

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
      _ml_text_size (cr, st, labels[i], 0.85, false, &tw, &th);
      if (th + 2 > box.h)
        box.h = th + 2, box.y = y - th / 2 - 1;
      box.w = x + tw + 26 - box.x;
      if (draw)
        {
          _ml_set_rgb (cr, ml_style_bg (st), 0.8);
          cairo_rectangle (cr, x - 2, y - th / 2 - 1, tw + 26, th + 2);
          cairo_fill (cr);
          if (styles[i] == 0)
            {
              _ml_set_rgb (cr, colors[i], 0.45);
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
              _ml_set_rgb (cr, colors[i], 1.0);
              cairo_set_line_width (cr, 2.0);
              cairo_move_to (cr, x, floor (y) + 0.5);
              cairo_line_to (cr, x + 16, floor (y) + 0.5);
              cairo_stroke (cr);
              cairo_set_dash (cr, NULL, 0, 0);
            }
          _ml_text_at (cr, st, labels[i], x + 20, y, AL_LEFT, VA_MIDDLE, 0.85, false, fg, 0.85, 0);
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
  return swatch_legend_at (cr, st, a->x + 6, a->y + _ml_font_px (st) * 0.75, labels, colors, styles, 3, draw);
}

/* The OOM's tick across panel @a, in red. */
static void
oom_line (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, const MlRect *a)
{
  double x = ml_view_time_to_x (v, (double) s->plan->oom.tick);
  cairo_set_line_width (cr, 2.0);
  _ml_set_rgb (cr, ml_style_race (st), 0.9);
  cairo_move_to (cr, round (x), a->y);
  cairo_line_to (cr, round (x), a->y + a->h);
  cairo_stroke (cr);
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
    if (_ml_rects_meet (&placed[i].box, r))
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
  char text[112], sz[32];
  double tw, th, right = a->x + a->w;
  uint64_t capb = capacity_of (s);
  if (capb)
    {
      double y = ybase - (double) capb * yscale;
      snprintf (text, sizeof text, "capacity %s", ml_format_size (capb, sz, sizeof sz));
      _ml_text_size (cr, st, text, 0.85, true, &tw, &th);
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
          _ml_text_size (cr, st, text, 0.85, true, &tw, &th);
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
              _ml_text_size (cr, st, text, 0.85, true, &tw, &th);
              double rx = _ml_clamp (x + 8, a->x + 2, right - tw - 2), lx = _ml_clamp (x - 8 - tw, a->x + 2, right - tw - 2);
              /* above the line right of the marker, left of it, below the
               * line, then under the legend */
              const double cand[][2] = { { rx, y - 4 - th }, { lx, y - 4 - th }, { rx, y + 3 }, { lx, y + 3 },
                                         { rx, legend.y + legend.h + 2 }, { legend.x + legend.w + 6, y - 4 - th } };
              place_label (out, &n, cap, a, ML_CURVE_RESERVED, text, true, tw, th, cand, 6, true);
            }
        }
    }
  for (size_t k = 0; k < s->groups.n; k++)
    {
      /* a level once, by its first occurrence in view */
      const MlPeakGroup *g = &s->groups.groups[k];
      size_t i = 0;
      double x = 0;
      for (; i < g->n; i++)
        {
          x = ml_view_time_to_x (v, (double) g->ticks[i]);
          if (x >= a->x && x <= right)
            break;
        }
      if (i == g->n)
        continue;
      double y = ybase - (double) g->lives[i] * yscale;
      char what[96];
      snprintf (text, sizeof text, "%s%s", k == 0 ? "live max " : "", ml_peak_group_describe (g, what, sizeof what));
      _ml_text_size (cr, st, text, 0.85, k == 0, &tw, &th);
      double cx = _ml_clamp (x - tw / 2, a->x + 2, right - tw - 2);
      /* under the point, above it, right of it, left of it; the first
       * (the lower bound) always shows, the others where they fit */
      double rx = _ml_clamp (x + 8, a->x + 2, right - tw - 2), lx = _ml_clamp (x - 8 - tw, a->x + 2, right - tw - 2);
      const double cand[][2] = { { cx, y + 6 }, { cx, y - 6 - th }, { rx, y - th / 2 }, { lx, y - th / 2 },
                                 { cx, y + 8 + th }, { rx, y + 6 }, { rx, y + 8 + th } };
      place_label (out, &n, cap, a, ML_CURVE_LIVE, text, k == 0, tw, th, cand, 7, k == 0);
    }
  return n;
}

/* Every occurrence of each peak level (the first level's in the ink
 * colour), and where the trace repeats, the iterations' boundaries
 * (dashed). */
static void
draw_peak_marks (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, const MlRect *a, double ybase,
                 double yscale)
{
  MlRgb fg = ml_style_fg (st);
  for (size_t k = 0; k < s->groups.n_boundaries; k++)
    {
      double x = ml_view_time_to_x (v, (double) s->groups.boundaries[k]);
      if (x < a->x || x > a->x + a->w)
        continue;
      _ml_dashed_vline (cr, x, a->y, a->y + a->h, fg, 0.35, 1.0);
      char what[64];
      snprintf (what, sizeof what, "iteration %zu starts at tick %" PRIu64, k + 2, s->groups.boundaries[k]);
      _ml_note (cr, "iteration", &(MlRect) { x - 1, a->y, 2, a->h }, what, NULL);
    }
  for (size_t k = s->groups.n; k-- > 0;)
    {
      const MlPeakGroup *g = &s->groups.groups[k];
      for (size_t i = 0; i < g->n; i++)
        {
          double px = ml_view_time_to_x (v, (double) g->ticks[i]);
          if (px < a->x || px > a->x + a->w)
            continue;
          double y = ybase - (double) g->lives[i] * yscale;
          _ml_set_rgb (cr, ml_style_bg (st), 1.0);
          cairo_arc (cr, px, y, 4.5, 0, 2 * M_PI);
          cairo_fill (cr);
          _ml_set_rgb (cr, k == 0 ? fg : live_color, 1.0);
          cairo_arc (cr, px, y, 3.2, 0, 2 * M_PI);
          cairo_fill (cr);
          char what[64], sz[32];
          snprintf (what, sizeof what, "peak %zu at tick %" PRIu64 ": %s", k + 1, g->ticks[i],
                    ml_format_size (g->lives[i], sz, sizeof sz));
          _ml_note (cr, "peak", &(MlRect) { px - 4, y - 4, 8, 8 }, what, NULL);
        }
    }
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
  _ml_set_rgb (cr, ml_style_bg (st), 1.0);
  cairo_paint (cr);
  _ml_time_grid (cr, v, s, st, a->y, a->y + a->h);
  _ml_bytes_axis (cr, st, a->x, a->y, a->h, 0, ymax, (int) (a->h / 45) < 2 ? 2 : (int) (a->h / 45), a->x, a->x + a->w);
  Cols c;
  if (columns (v, s, a->x, a->w, &c))
    {
      step_path (cr, c.live, c.W, a->x, ybase, yscale, a->y, true);
      _ml_set_rgb (cr, live_color, 0.35);
      cairo_fill (cr);
      step_path (cr, c.live, c.W, a->x, ybase, yscale, a->y, false);
      _ml_set_rgb (cr, live_color, 1.0);
      cairo_set_line_width (cr, 1.2);
      cairo_stroke (cr);
      step_path (cr, c.res, c.W, a->x, ybase, yscale, a->y, false);
      _ml_set_rgb (cr, res_color, 1.0);
      cairo_set_line_width (cr, 1.6);
      cairo_stroke (cr);
      cols_free (&c);
    }
  MlRgb fg = ml_style_fg (st);
  if (s->metrics.lower_bound)
    {
      double y = ybase - (double) s->metrics.lower_bound * yscale;
      _ml_dashed_hline (cr, a->x, a->x + a->w, y, fg, 0.55, 1.0);
    }
  if (cap)
    {
      double y = ybase - (double) cap * yscale;
      _ml_dashed_hline (cr, a->x, a->x + a->w, y, ml_style_race (st), 0.9, 1.5);
    }
  if (st->show_oom && s->plan->oom.hit)
    oom_line (cr, v, s, st, a);
  if (st->show_peaks)
    {
      bool flat = s->curve.n && s->curve.pts[0].reserved >= s->metrics.peak;
      double x = ml_view_time_to_x (v, (double) s->metrics.peak_tick);
      if (s->metrics.peak && !flat && x >= a->x && x <= a->x + a->w)
        {
          double y = ybase - (double) s->metrics.peak * yscale;
          _ml_set_rgb (cr, res_color, 1.0);
          cairo_move_to (cr, x, y - 1);
          cairo_line_to (cr, x - 5, y - 9);
          cairo_line_to (cr, x + 5, y - 9);
          cairo_close_path (cr);
          cairo_fill (cr);
        }
      draw_peak_marks (cr, v, s, st, a, ybase, yscale);
    }
  /* the legend and the labels, placed clear of each other */
  curves_legend (cr, st, a, true);
  size_t n_cap = 3 + s->groups.n, n = 0;
  MlCurveLabel *labels = malloc (n_cap * sizeof *labels);
  if (labels)
    n = ml_timeline_curve_labels (cr, v, s, st, a, labels, n_cap);
  for (size_t i = 0; i < n; i++)
    {
      const MlCurveLabel *l = &labels[i];
      if (l->kind == ML_CURVE_LEGEND)
        continue;
      MlRgb ink = l->kind == ML_CURVE_CAPACITY ? ml_style_race (st)
                  : l->kind == ML_CURVE_RESERVED ? _ml_shade (res_color, 0.8) : fg;
      _ml_set_rgb (cr, ml_style_bg (st), 0.75);
      cairo_rectangle (cr, l->box.x, l->box.y, l->box.w, l->box.h);
      cairo_fill (cr);
      _ml_text_at (cr, st, l->text, l->box.x + 2, l->box.y, AL_LEFT, VA_TOP, 0.85, l->bold, ink,
               l->kind == ML_CURVE_LIVE ? 0.9 : 1.0, 0);
    }
  free (labels);
  cairo_restore (cr);
  _ml_set_rgb (cr, fg, 0.35);
  cairo_set_line_width (cr, 1.0);
  cairo_rectangle (cr, floor (a->x) + 0.5, floor (a->y) + 0.5, round (a->w) - 1, round (a->h) - 1);
  cairo_stroke (cr);
  /* the axis labels outside the clip */
  _ml_bytes_axis (cr, st, a->x, a->y, a->h, 0, ymax, (int) (a->h / 45) < 2 ? 2 : (int) (a->h / 45), 0, 0);
}

void
ml_timeline_draw_frag (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, const MlRect *a)
{
  MlRgb fg = ml_style_fg (st);
  cairo_save (cr);
  cairo_rectangle (cr, a->x, a->y, a->w, a->h);
  cairo_clip (cr);
  _ml_set_rgb (cr, ml_style_bg (st), 1.0);
  cairo_paint (cr);
  _ml_time_grid (cr, v, s, st, a->y, a->y + a->h);
  _ml_set_rgb (cr, ml_style_grid (st), 1.0);
  cairo_move_to (cr, a->x, floor (a->y + a->h / 2) + 0.5);
  cairo_line_to (cr, a->x + a->w, floor (a->y + a->h / 2) + 0.5);
  cairo_stroke (cr);
  double top = a->y + 2, h = a->h - 2;
  Cols c;
  if (columns (v, s, a->x, a->w, &c))
    {
      step_path (cr, c.frag, c.W, a->x, top + h, h, top, true);
      _ml_set_rgb (cr, frag_color, 0.35);
      cairo_fill (cr);
      step_path (cr, c.frag, c.W, a->x, top + h, h, top, false);
      _ml_set_rgb (cr, frag_color, 1.0);
      cairo_set_line_width (cr, 1.0);
      cairo_stroke (cr);
      cols_free (&c);
    }
  if (st->show_oom && s->plan->oom.hit)
    oom_line (cr, v, s, st, a);
  /* what the number means, said where it is drawn: for a recorded
   * caching allocator (segments at real addresses) the free bytes are its
   * cached blocks, so a high value is a split cache, not lost memory */
  bool cached = s->plan->n_segments && s->plan->segments[0].addr;
  char text[256];
  if (s->metrics.frag_unknown)
    snprintf (text, sizeof text, "fragmentation: n/a (the trace records how many bytes were reserved, not which: no free "
              "blocks to measure)");
  else
    snprintf (text, sizeof text, "fragmentation = 1 − largest free block / free reserved bytes (max %.0f%%, mean %.0f%%)%s",
              s->metrics.frag_max * 100.0, s->metrics.frag_mean * 100.0,
              cached ? "; the allocator's cached free blocks count as free" : "");
  const char *labels[] = { text };
  const MlRgb colors[] = { frag_color };
  const int styles[] = { 0 };
  swatch_legend (cr, st, a->x + 6, a->y + _ml_font_px (st) * 0.75, labels, colors, styles, 1);
  cairo_restore (cr);
  _ml_set_rgb (cr, fg, 0.35);
  cairo_set_line_width (cr, 1.0);
  cairo_rectangle (cr, floor (a->x) + 0.5, floor (a->y) + 0.5, round (a->w) - 1, round (a->h) - 1);
  cairo_stroke (cr);
  const char *ticks[] = { "0%", "50%", "100%" };
  /* three labels only where they do not overprint each other */
  bool three = a->h >= 3.2 * _ml_font_px (st);
  for (int i = 0; i < 3; i++)
    {
      if (i == 1 && !three)
        continue;
      if (!three && a->h < 2.2 * _ml_font_px (st) && i == 0)
        continue;
      double y = top + h - h * i / 2.0;
      y = _ml_clamp (y, a->y + _ml_font_px (st) * 0.5, a->y + a->h - _ml_font_px (st) * 0.5);
      _ml_text_at (cr, st, ticks[i], a->x - 6, y, AL_RIGHT, VA_MIDDLE, 0.9, false, fg, 0.8, 0);
    }
}
