/* series.c — step curves on one axis (see series.h). */
#include "render/series.h"

#include <stdlib.h>

#include "render/axis.h"
#include "render/timeline-private.h"

enum { LEFT = 84, RIGHT = 16, TOP = 44, BOTTOM = 34 };

static const MlRgb colors[] = { { 0.306, 0.475, 0.655 }, { 0.882, 0.341, 0.349 }, { 0.349, 0.631, 0.310 } };

/* The highest value of @s in each of @w pixel columns (-1: none). */
static void
columns (const MlDocSeries *s, double x_max, int w, double *col)
{
  for (int c = 0; c < w; c++)
    col[c] = -1;
  for (size_t i = 0; i < s->n; i++)
    {
      uint64_t x0 = s->x[i], x1 = i + 1 < s->n ? s->x[i + 1] : s->x_end;
      int c0 = (int) ((double) x0 / x_max * (w - 1)), c1 = (int) ((double) x1 / x_max * (w - 1));
      for (int c = c0 < 0 ? 0 : c0; c <= c1 && c < w; c++)
        if ((double) s->y[i] > col[c])
          col[c] = (double) s->y[i];
    }
}

void
_ml_bytes_grid (cairo_t *cr, const MlStyle *st, double y_max, int n_ticks, double left, double top, double w, double h)
{
  double ticks[16], step;
  char buf[32];
  MlRgb fg = ml_style_fg (st), grid = ml_style_grid (st);
  size_t n = ml_axis_ticks (ML_AXIS_BYTES, 0, y_max, n_ticks, ticks, 16, &step);
  cairo_set_line_width (cr, 1);
  for (size_t k = 0; k < n; k++)
    {
      double y = top + h - ticks[k] / y_max * h;
      _ml_set_rgb (cr, grid, 1);
      cairo_move_to (cr, left, y);
      cairo_line_to (cr, left + w, y);
      cairo_stroke (cr);
      _ml_text_at (cr, st, ml_axis_label (ML_AXIS_BYTES, ticks[k], step, buf, sizeof buf), left - 6, y, AL_RIGHT,
                   VA_MIDDLE, 0.9, false, fg, 0.8, 0);
    }
  _ml_set_rgb (cr, fg, 0.6);
  cairo_rectangle (cr, left + 0.5, top + 0.5, w, h);
  cairo_stroke (cr);
}

static void
axes (cairo_t *cr, const MlStyle *st, double x_max, double y_max, double w, double h)
{
  double ticks[16], step;
  char buf[32];
  MlRgb fg = ml_style_fg (st);
  _ml_bytes_grid (cr, st, y_max, 5, LEFT, TOP, w, h);
  size_t n = ml_axis_ticks (ML_AXIS_COUNT, 0, x_max, 6, ticks, 16, &step);
  for (size_t k = 0; k < n; k++)
    _ml_text_at (cr, st, ml_axis_label (ML_AXIS_COUNT, ticks[k], step, buf, sizeof buf),
                 LEFT + ticks[k] / x_max * w, TOP + h + 4, AL_CENTER, VA_TOP, 0.9, false, fg, 0.8, 0);
  _ml_text_at (cr, st, "tick", LEFT + w / 2, TOP + h + 18, AL_CENTER, VA_TOP, 0.9, false, fg, 0.8, 0);
}

static void
curve (cairo_t *cr, const MlStyle *st, const MlDocSeries *s, size_t k, double x_max, double y_max, double w, double h,
       double *col)
{
  columns (s, x_max, (int) w, col);
  double dash[] = { 6, 3 };
  cairo_set_dash (cr, s->dashed ? dash : NULL, s->dashed ? 2 : 0, 0);
  cairo_set_line_width (cr, 1.6);
  _ml_set_rgb (cr, colors[k % 3], 1);
  bool started = false;
  for (int c = 0; c < (int) w; c++)
    if (col[c] >= 0)
      {
        double x = LEFT + c, y = TOP + h - col[c] / y_max * h;
        if (started)
          cairo_line_to (cr, x, y);
        else
          cairo_move_to (cr, x, y);
        started = true;
      }
  cairo_stroke (cr);
  /* its legend entry, above the plot */
  double ly = 10 + 14.0 * (double) k;
  cairo_move_to (cr, LEFT + 8, ly + 6);
  cairo_line_to (cr, LEFT + 36, ly + 6);
  cairo_stroke (cr);
  cairo_set_dash (cr, NULL, 0, 0);
  _ml_text_at (cr, st, s->label ? s->label : "", LEFT + 42, ly + 6, AL_LEFT, VA_MIDDLE, 0.9, false, ml_style_fg (st),
               1, 0);
}

void
ml_render_series (cairo_t *cr, const MlDocSeries *series, size_t n, uint64_t y_line, const char *y_line_label,
                  double width, double height, const MlStyle *style)
{
  MlStyle def;
  if (!style)
    {
      ml_style_init (&def);
      style = &def;
    }
  double w = width - LEFT - RIGHT, h = height - TOP - BOTTOM;
  _ml_set_rgb (cr, ml_style_bg (style), 1);
  cairo_paint (cr);
  if (w < 10 || h < 10)
    return;
  double x_max = 1, y_max = (double) y_line;
  for (size_t s = 0; s < n; s++)
    {
      if ((double) series[s].x_end > x_max)
        x_max = (double) series[s].x_end;
      for (size_t i = 0; i < series[s].n; i++)
        if ((double) series[s].y[i] > y_max)
          y_max = (double) series[s].y[i];
    }
  y_max = y_max > 0 ? y_max * 1.05 : 1;
  axes (cr, style, x_max, y_max, w, h);
  double *col = malloc ((size_t) w * sizeof *col);
  for (size_t s = 0; col && s < n; s++)
    curve (cr, style, &series[s], s, x_max, y_max, w, h, col);
  free (col);
  if (y_line && (double) y_line <= y_max)
    {
      double y = TOP + h - (double) y_line / y_max * h, dash[] = { 2, 3 };
      cairo_set_dash (cr, dash, 2, 0);
      cairo_set_line_width (cr, 1);
      _ml_set_rgb (cr, ml_style_fg (style), 0.55);
      cairo_move_to (cr, LEFT, y);
      cairo_line_to (cr, LEFT + w, y);
      cairo_stroke (cr);
      cairo_set_dash (cr, NULL, 0, 0);
      if (y_line_label)
        _ml_text_at (cr, style, y_line_label, LEFT + w - 4, y - 2, AL_RIGHT, VA_BOTTOM, 0.9, false, ml_style_fg (style),
                     0.8, 0);
    }
}
