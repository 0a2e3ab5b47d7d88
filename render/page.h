/* page.h — the interactive figures of the HTML page (html.h with
 * MlHtmlOptions.interactive): an address × time figure drawn in the
 * browser on a canvas, with zoom, pan, fit, hover and search, from data
 * written here.
 *
 * The layout is the scene's (render/scene.h, computed in C as for the
 * viewer and the static pictures); the page only draws it. Each figure
 * carries one JSON object in a <script type="application/json"> element:
 * a small header (name, axes, the call-site and stream string tables) and
 * the items as little-endian typed arrays in base64, one per column
 * (start and end ticks, global address, bytes, plan address, call site,
 * stream, buffer index). The script that draws every figure
 * (render/page.js, embedded at build time) comes once per page. Nothing
 * is loaded from anywhere: the page says so in its Content-Security-Policy.
 */
#ifndef ML_PAGE_H
#define ML_PAGE_H

#include <stdio.h>

#include "render/report/doc.h"

/* Whether ml_page_figure() draws @f (an address × time figure). */
bool ml_page_draws (const MlDocFigure *f);

/* Writes @f as an interactive figure: the <figure> with its controls,
 * canvas and data, left open for the caller's <figcaption> and
 * </figure>; @index numbers the figures of a page (ids). */
int  ml_page_figure (FILE *fp, const MlDocFigure *f, int index, MlError *err) ML_MUST_CHECK;

/* How to use the figures (for the caption). */
extern const char ml_page_howto[];

/* The script that draws the page's interactive figures (once, at the end
 * of the body), and the CSS they use. */
void ml_page_script (FILE *fp);
extern const char ml_page_css[];

#endif
