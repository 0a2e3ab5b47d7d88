/* legend.c — where the colour legend's entries go and what each says
 * (timeline.h: ml_legend_layout), shared by every drawing of the legend.
 *
 * An entry is its label and its amount ("optimizer.py:71:step (579.31 MiB
 * at peak)"). A label too long for its place loses the start of its text
 * ("…freed at optimizer.py:71:step"), never its last word (the
 * file:line:function of a call site) nor the amount: the entry takes as
 * many columns as that needs, and entries flow on to more rows. */
#include "render/timeline-private.h"

#include <string.h>

#include "sim/base/units.h"

#define ELLIPSIS "\xe2\x80\xa6"

/* Where the last word of @label starts: its file:line:function. */
static size_t
last_word (const char *label)
{
  const char *sp = strrchr (label, ' ');
  return sp ? (size_t) (sp + 1 - label) : 0;
}

/* @label + @suffix into @out (of @len), the label losing its first
 * characters (a UTF-8 character at a time, never past its last word) until
 * the text is at most @max_w wide. */
static void
elide_start (const char *label, const char *suffix, double max_w, MlTextWidth measure, void *data, char *out,
             size_t len)
{
  snprintf (out, len, "%s%s", label, suffix);
  if (measure (out, data) <= max_w)
    return;
  size_t keep = last_word (label);
  /* candidates: drop the first @k bytes, k at character starts in [1, keep];
   * the widest that fits, by bisection over the byte offsets */
  size_t lo = 1, hi = keep, best = keep;
  while (lo <= hi && keep > 0)
    {
      size_t mid = lo + (hi - lo) / 2;
      size_t k = mid;
      while (k < keep && ((unsigned char) label[k] & 0xc0) == 0x80)
        k++;
      snprintf (out, len, ELLIPSIS "%s%s", label + k, suffix);
      if (measure (out, data) <= max_w)
        {
          best = k;
          hi = mid - 1;
        }
      else
        lo = mid + 1;
    }
  if (keep == 0)
    snprintf (out, len, "%s%s", label, suffix);
  else
    snprintf (out, len, ELLIPSIS "%s%s", label + best, suffix);
}

size_t
ml_legend_layout (const MlScene *s, MlColorBy by, double width, MlTextWidth measure, void *data, MlLegendEntry *out,
                  size_t cap, unsigned *rows)
{
  unsigned b = (unsigned) by < ML_COLOR_BY__COUNT ? (unsigned) by : 0;
  size_t n = s->n_classes[b];
  bool other = s->classes[b][ML_PALETTE_N].count > 0;
  size_t total = n + other;
  *rows = 0;
  if (total == 0 || width <= 0)
    return 0;
  /* columns at least ML_LEGEND_COLUMN wide, at most 5 a row */
  size_t per_row = total < 5 ? total : 5;
  if (width / (double) per_row < ML_LEGEND_COLUMN)
    per_row = width / ML_LEGEND_COLUMN >= 1 ? (size_t) (width / ML_LEGEND_COLUMN) : 1;
  double col_w = width / (double) per_row;
  size_t col = 0, row = 0, m = 0;
  for (size_t k = 0; k < total && m < cap; k++)
    {
      unsigned cls = k < n ? (unsigned) k : ML_PALETTE_N;
      const MlSceneClass *c = &s->classes[b][cls];
      const char *label = c->label ? c->label : "?";
      char suffix[64] = "", sz[32];
      if (c->peak_bytes)
        snprintf (suffix, sizeof suffix, " (%s at peak)", ml_format_size (c->peak_bytes, sz, sizeof sz));
      MlLegendEntry *e = &out[m++];
      e->cls = cls;
      snprintf (e->full, sizeof e->full, "%s%s", label, suffix);
      /* the least the entry shows: its last word and the amount */
      char least[sizeof e->text];
      size_t lw = last_word (label);
      snprintf (least, sizeof least, "%s%s%s", lw ? ELLIPSIS : "", label + lw, suffix);
      double need = ML_LEGEND_SWATCH + measure (least, data) + ML_LEGEND_GAP;
      double full_need = ML_LEGEND_SWATCH + measure (e->full, data) + ML_LEGEND_GAP;
      size_t span = 1;
      while (span < per_row && (double) span * col_w < need)
        span++;
      /* a whole entry that fits in one more column is shown whole */
      if ((double) span * col_w < full_need && span < per_row && (double) (span + 1) * col_w >= full_need
          && col + span + 1 <= per_row)
        span++;
      if (col + span > per_row)
        {
          row++;
          col = 0;
        }
      e->row = (unsigned) row;
      e->x = (double) col * col_w;
      e->w = (double) span * col_w;
      elide_start (label, suffix, e->w - ML_LEGEND_SWATCH - ML_LEGEND_GAP, measure, data, e->text, sizeof e->text);
      col += span;
      if (col >= per_row)
        {
          row++;
          col = 0;
        }
    }
  *rows = (unsigned) (col ? row + 1 : row);
  return m;
}

typedef struct {
  cairo_t       *cr;
  const MlStyle *st;
} Measure;

static double
measure_text (const char *text, void *data)
{
  const Measure *m = data;
  double w, h;
  _ml_text_size (m->cr, m->st, text, ML_LEGEND_SCALE, false, &w, &h);
  return w;
}

static const char *const by_titles[ML_COLOR_BY__COUNT] = { "call site", "stream", "kind", "compile_context",
                                                            "user_metadata", "frames" };

void
_ml_legend_head (const MlScene *s, MlColorBy by, char *buf, size_t len)
{
  unsigned b = (unsigned) by < ML_COLOR_BY__COUNT ? (unsigned) by : 0;
  if (b == ML_COLOR_BY_FRAMES && s->frames_regex)
    {
      /* the expression, its end cut when long (the legend's entries name
       * what it matched) */
      const char *re = s->frames_regex;
      size_t n = strlen (re);
      snprintf (buf, len, "colour by frames /%.*s%s/:", n > 40 ? 39 : (int) n, re, n > 40 ? ELLIPSIS : "");
    }
  else
    snprintf (buf, len, "colour by %s:", by_titles[b]);
}

size_t
_ml_legend_entries (cairo_t *cr, const MlScene *s, const MlStyle *st, double width, MlLegendEntry *out, size_t cap,
                    unsigned *rows, double *x0)
{
  Measure m = { cr, st };
  cairo_surface_t *scratch = NULL;
  if (!cr)
    {
      scratch = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 1, 1);
      m.cr = cairo_create (scratch);
    }
  char head[ML_LEGEND_HEAD];
  double hw, hh;
  _ml_legend_head (s, st->color_by, head, sizeof head);
  _ml_text_size (m.cr, st, head, 0.9, true, &hw, &hh);
  *x0 = hw + 12;
  size_t n = ml_legend_layout (s, st->color_by, width - *x0, measure_text, &m, out, cap, rows);
  if (scratch)
    {
      cairo_destroy (m.cr);
      cairo_surface_destroy (scratch);
    }
  return n;
}

bool
ml_timeline_legend_hit (const MlScene *s, const MlStyle *st, const MlRect *a, double x, double y, MlLegendEntry *out)
{
  if (x < a->x || x >= a->x + a->w || y < a->y || y >= a->y + a->h)
    return false;
  if (st->color_by == ML_COLOR_BY_SITE && s->site_per_buffer)
    return false;
  MlLegendEntry e[ML_PALETTE_N + 1];
  unsigned rows;
  double x0, fh = _ml_font_px (st) * 1.5;
  size_t n = _ml_legend_entries (NULL, s, st, a->w, e, ML_PALETTE_N + 1, &rows, &x0);
  for (size_t k = 0; k < n; k++)
    {
      double ex = a->x + x0 + e[k].x, ey = a->y + (double) e[k].row * fh;
      if (x >= ex && x < ex + e[k].w && y >= ey && y < ey + fh)
        {
          *out = e[k];
          return true;
        }
    }
  return false;
}
