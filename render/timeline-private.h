/* timeline-private.h — what the files of the timeline figure share
 * (timeline.h is the public side). Where each part is:
 *
 *   paint.c              colours, text (pango), dashed lines, the frame
 *   timeline-axis.c      time ticks and their grid, byte axes
 *   timeline.c           the layout panel: buffers over segment bands
 *   timeline-marks.c     issues and the OOM drawn over the layout
 *   timeline-segments.c  the segments plot's outlines
 *   timeline-hit.c       hit tests, hover / selection, the marker
 *   timeline-curves.c    the curves and fragmentation panels
 *   active.c             the stacked plot (ML_PLOT_ACTIVE)
 *   figure.c             the panels' places, title, legend, the figure
 *   output.c             pictures to PNG / SVG / PDF files
 */
#ifndef ML_TIMELINE_PRIVATE_H
#define ML_TIMELINE_PRIVATE_H

#include "render/timeline.h"

/* ---- paint.c ------------------------------------------------------------ */

enum { AL_LEFT = 0, AL_CENTER = 1, AL_RIGHT = 2 };
enum { VA_TOP = 0, VA_MIDDLE = 1, VA_BOTTOM = 2 };

void     _ml_set_rgb      (cairo_t *cr, MlRgb c, double alpha);
/* @c darker (@f < 1) or lighter (@f > 1). */
MlRgb    _ml_shade        (MlRgb c, double f);
double   _ml_luminance    (MlRgb c);
/* @c opaque, as a cairo ARGB32 pixel. */
uint32_t _ml_argb         (MlRgb c);
/* The style's font size in pixels. */
double   _ml_font_px      (const MlStyle *st);
/* The size of @text in the style's font scaled by @scale. */
void     _ml_text_size    (cairo_t *cr, const MlStyle *st, const char *text, double scale, bool bold, double *w,
                           double *h);
/* Draws @text anchored at (@x, @y) (AL_*, VA_*), ellipsized in the middle
 * to @max_w when > 0; returns its width. */
double   _ml_text_at      (cairo_t *cr, const MlStyle *st, const char *text, double x, double y, int align, int valign,
                           double scale, bool bold, MlRgb color, double alpha, double max_w);
double   _ml_clamp        (double v, double lo, double hi);
bool     _ml_rects_meet   (const MlRect *a, const MlRect *b);
void     _ml_dashed_vline (cairo_t *cr, double x, double y0, double y1, MlRgb c, double alpha, double width);
void     _ml_dashed_hline (cairo_t *cr, double x0, double x1, double y, MlRgb c, double alpha, double width);
/* A byte axis left of the plot [@left, @left + @w) x [@top, @top + @h):
 * about @n_ticks round values from 0 to @y_max, their grid lines and
 * labels, and the plot's frame (series.c). */
void     _ml_bytes_grid   (cairo_t *cr, const MlStyle *st, double y_max, int n_ticks, double left, double top, double w,
                           double h);
/* The frame around a plot's rectangle. */
void     _ml_draw_frame   (cairo_t *cr, const MlView *v, const MlStyle *st);

/* ---- legend.c ------------------------------------------------------------ */

/* The legend's head, "colour by call site:". */
#define ML_LEGEND_HEAD 96
void   _ml_legend_head    (const MlScene *s, MlColorBy by, char *buf, size_t len);
/* ml_legend_layout in a legend @width wide, measured in the style's
 * legend font on @cr (NULL: a scratch surface's); the entries start at
 * *@x0, right of the head. */
size_t _ml_legend_entries (cairo_t *cr, const MlScene *s, const MlStyle *st, double width, MlLegendEntry *out,
                           size_t cap, unsigned *rows, double *x0);

/* A text of the picture for readers of its SVG (ml_render_write adds to an
 * SVG, before its end, a transparent rectangle over @r per note, of class
 * @kind, the shown text its <desc>, @full its <title>: hover text in a
 * browser). Nothing on other surfaces. */
extern const cairo_user_data_key_t _ml_notes_key;   /* a FILE * of SVG elements */
void _ml_note (cairo_t *cr, const char *kind, const MlRect *r, const char *shown, const char *full);

/* ---- timeline-axis.c ---------------------------------------------------- */

/* Vertical grid lines at the time axis's ticks, from @y0 to @y1. */
void _ml_time_grid  (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st, double y0, double y1);
/* A byte axis over [@lo, @hi] left of @x, or (@grid_x1 > @grid_x0) its
 * horizontal grid lines instead. */
void _ml_bytes_axis (cairo_t *cr, const MlStyle *st, double x, double y_top, double h, double lo, double hi, int target,
                     double grid_x0, double grid_x1);

/* ---- timeline-marks.c, timeline-segments.c -------------------------------- */

/* Over the layout, clipped to it by the caller: the issues in red, the
 * OOM (its line, label and refused request), the segments' outlines. */
void _ml_draw_issues           (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st);
void _ml_draw_oom              (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st);
void _ml_draw_stages           (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st);
void _ml_draw_segment_outlines (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st);
/* The bands of (pool, stream) (scene.h), their borders and labels. */
void _ml_draw_bands            (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st);

#endif
