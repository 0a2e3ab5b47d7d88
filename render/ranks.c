/* ranks.c — peak bytes per rank as bars (see ranks.h). */
#include "render/ranks.h"

#include "render/timeline-private.h"

enum { LEFT = 84, RIGHT = 16, TOP = 40, MIDDLE = 36, BOTTOM = 28 };

static const MlRgb reserved_rgb = { 0.675, 0.773, 0.878 }, allocated_rgb = { 0.306, 0.475, 0.655 },
                   oom_rgb = { 0.843, 0.188, 0.153 };

/* One panel: the bars of peak reserved (@reserved) or allocated bytes,
 * on a scale of their own, its name above it, the OOM ranks capped in
 * red. */
static void
panel (cairo_t *cr, const MlStyle *st, const MlDocRankBar *ranks, size_t n, bool reserved, double top, double w,
       double h)
{
  double y_max = 0;
  for (size_t k = 0; k < n; k++)
    {
      double v = (double) (reserved ? ranks[k].reserved : ranks[k].allocated);
      y_max = v > y_max ? v : y_max;
    }
  y_max = y_max > 0 ? y_max * 1.15 : 1;
  _ml_bytes_grid (cr, st, y_max, 4, LEFT, top, w, h);
  MlRgb rgb = reserved ? reserved_rgb : allocated_rgb;
  _ml_set_rgb (cr, rgb, 1);
  cairo_rectangle (cr, LEFT, top - 16, 12, 12);
  cairo_fill (cr);
  _ml_text_at (cr, st, reserved ? "peak reserved per rank" : "peak allocated per rank", LEFT + 18, top - 10, AL_LEFT,
               VA_MIDDLE, 0.9, true, ml_style_fg (st), 1, 0);
  double slot = w / (double) n, gap = slot > 6 ? slot * 0.15 : 0;
  for (size_t k = 0; k < n; k++)
    {
      double x0 = LEFT + slot * (double) k + gap, bw = slot - 2 * gap;
      bw = bw < 1 ? 1 : bw;
      double bh = (double) (reserved ? ranks[k].reserved : ranks[k].allocated) / y_max * h;
      _ml_set_rgb (cr, rgb, 1);
      cairo_rectangle (cr, x0, top + h - bh, bw, bh);
      cairo_fill (cr);
      if (ranks[k].ooms)
        {
          /* a red cap on the bar, and the word where it fits */
          _ml_set_rgb (cr, oom_rgb, 1);
          cairo_rectangle (cr, x0, top + h - bh - 4, bw, 4);
          cairo_fill (cr);
          if (slot >= 28)
            _ml_text_at (cr, st, "OOM", x0 + bw / 2, top + h - bh - 6, AL_CENTER, VA_BOTTOM, 0.8, true, oom_rgb, 1, 0);
        }
    }
}

void
ml_render_ranks (cairo_t *cr, const MlDocRankBar *ranks, size_t n, double width, double height, const MlStyle *style)
{
  MlStyle def;
  if (!style)
    {
      ml_style_init (&def);
      style = &def;
    }
  double w = width - LEFT - RIGHT, h = (height - TOP - BOTTOM - MIDDLE) / 2;
  _ml_set_rgb (cr, ml_style_bg (style), 1);
  cairo_paint (cr);
  if (w < 10 || h < 10 || n == 0)
    return;
  bool any_oom = false;
  for (size_t k = 0; k < n; k++)
    any_oom = any_oom || ranks[k].ooms;
  if (any_oom)
    {
      _ml_set_rgb (cr, oom_rgb, 1);
      cairo_rectangle (cr, LEFT + w - 150, 8, 12, 12);
      cairo_fill (cr);
      _ml_text_at (cr, style, "recorded an OOM", LEFT + w - 132, 14, AL_LEFT, VA_MIDDLE, 0.9, false, ml_style_fg (style),
                   1, 0);
    }
  panel (cr, style, ranks, n, true, TOP, w, h);
  panel (cr, style, ranks, n, false, TOP + h + MIDDLE, w, h);
  /* a label under every k-th pair: as many as fit, 48 pixels each */
  double slot = w / (double) n, y = TOP + 2 * h + MIDDLE + 4;
  size_t every = (size_t) (48 / slot) + 1;
  for (size_t k = 0; k < n; k += every)
    _ml_text_at (cr, style, ranks[k].label ? ranks[k].label : "", LEFT + slot * ((double) k + 0.5), y, AL_CENTER,
                 VA_TOP, 0.85, false, ranks[k].ooms ? oom_rgb : ml_style_fg (style), 0.9, slot * (double) every - 4);
}
