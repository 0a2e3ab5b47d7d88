/* series.h — step curves of bytes over ticks on one axis (a SERIES figure
 * of render/report/doc.h: the reserved bytes under two allocator settings),
 * drawn with cairo for the HTML report (as SVG) and the viewer. Each curve
 * keeps the highest value of each pixel column, so no peak vanishes. */
#ifndef ML_SERIES_H
#define ML_SERIES_H

#include <cairo.h>

#include "render/report/doc.h"
#include "render/style.h"

/* Draws @n curves of @series, the horizontal line @y_line (0: none) with
 * @y_line_label, axes and a legend, into [0, @width) x [0, @height) of
 * @cr with @style (NULL: the default look). */
void ml_render_series (cairo_t *cr, const MlDocSeries *series, size_t n, uint64_t y_line, const char *y_line_label,
                       double width, double height, const MlStyle *style);

#endif
