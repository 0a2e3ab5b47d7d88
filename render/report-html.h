/* report-html.h — the report (render/report/report.h) as one
 * self-contained HTML page (render/html.h): the report's document with
 * its timeline figures drawn as inline SVG. Readable on its own,
 * printable, and attachable to a pull request.
 */
#ifndef ML_REPORT_HTML_H
#define ML_REPORT_HTML_H

#include <stdio.h>

#include "render/report/report.h"
#include "render/html.h"

/* Writes the HTML report to @fp. @style may be NULL (the default look). */
int ml_report_write_html (const MlReport *report, FILE *fp, const MlStyle *style, MlError *err) ML_MUST_CHECK;

/* Writes @report to @path by extension: .html / .htm here (@opts: NULL
 * for the default look, static), .json / .md / .csv through
 * ml_report_write(); atomically. */
int ml_report_write_file (const MlReport *report, const char *path, const MlHtmlOptions *opts, MlError *err) ML_MUST_CHECK;

#endif
