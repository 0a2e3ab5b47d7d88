/* report-html.h — the report (render/report/report.h) as one self-contained HTML
 * file: inline CSS, the timeline figures as inline SVG drawn by the
 * renderer, no scripts, no fonts or images from the network. Readable on
 * its own, printable, and attachable to a pull request.
 */
#ifndef ML_REPORT_HTML_H
#define ML_REPORT_HTML_H

#include <stdio.h>

#include "render/style.h"
#include "render/report/report.h"

/* Writes the HTML report to @fp. @style may be NULL (the default look). */
int ml_report_write_html (const MlReport *report, FILE *fp, const MlStyle *style, MlError *err);

/* Writes @report to @path by extension: .html / .htm here, .json / .md /
 * .csv through ml_report_write(); atomically. */
int ml_report_write_file (const MlReport *report, const char *path, const MlStyle *style, MlError *err);

/* Writes @s with <, >, & and " escaped. */
void ml_html_escape (FILE *fp, const char *s);

/* The reports' style sheet (the diff report uses it too). */
extern const char ml_html_css[];

/* Copies the SVG document @svg into @fp as inline SVG (no XML prolog),
 * its ids and the references to them prefixed with @prefix so that
 * several figures can share a page. */
void ml_html_inline_svg (FILE *fp, const char *svg, const char *prefix);

#endif
