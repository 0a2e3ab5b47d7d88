/* ranks.h — a RANKS figure of render/report/doc.h: one pair of bars per
 * rank of a job in two panels on scales of their own (peak reserved
 * above, peak allocated below: reserved bytes often dwarf the allocated),
 * the ranks that recorded an OOM capped and labelled in red, drawn with
 * cairo for the HTML report (as SVG). Bars narrower than a few pixels (many ranks) are still
 * drawn, at least one pixel wide; the labels under them only where they
 * fit. */
#ifndef ML_RANKS_H
#define ML_RANKS_H

#include <cairo.h>

#include "render/report/doc.h"
#include "render/style.h"

/* Draws the @n bar pairs of @ranks, axes and the OOM legend, into [0, @width) x
 * [0, @height) of @cr with @style (NULL: the default look). */
void ml_render_ranks (cairo_t *cr, const MlDocRankBar *ranks, size_t n, double width, double height,
                      const MlStyle *style);

#endif
