/* report-html.h — the report (sim/analysis/report.h) as one self-contained HTML
 * file: inline CSS, the timeline figures as inline SVG drawn by the
 * renderer, no scripts, no fonts or images from the network. Readable on
 * its own, printable, and attachable to a pull request.
 */
#ifndef ML_REPORT_HTML_H
#define ML_REPORT_HTML_H

#include <stdio.h>

#include "gui/render/style.h"
#include "sim/analysis/report.h"

/* Writes the HTML report to @fp. @style may be NULL (the default look). */
int ml_report_write_html (const MlReport *report, FILE *fp, const MlStyle *style, MlError *err);

/* Writes @report to @path by extension: .html / .htm here, .json / .md /
 * .csv through ml_report_write(); atomically. */
int ml_report_write_file (const MlReport *report, const char *path, const MlStyle *style, MlError *err);

#endif
