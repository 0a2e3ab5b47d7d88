/* series-svg.h — a SERIES figure of a document (render/report/doc.h) as
 * SVG: the curves on one axis, bytes against ticks, a legend and the
 * figure's horizontal line. */
#ifndef ML_SERIES_SVG_H
#define ML_SERIES_SVG_H

#include <stdio.h>

#include "render/report/doc.h"

/* Writes @f's <svg> element to @fp: 0, or ML_ENOMEM. */
int ml_render_series_svg (FILE *fp, const MlDocFigure *f);

#endif
