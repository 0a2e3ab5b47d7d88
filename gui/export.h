/* export.h — writing what the timelines show to a picture file.
 *
 * The pictures go through the renderer's writer (ml_render_write: PNG,
 * SVG in px, PDF) into the shared atomic output (sim/base/io.h), so a
 * failed export leaves no file behind. The report formats (html, md,
 * json, csv) are written by a worker instead (ml_document_report_async).
 */
#ifndef ML_GUI_EXPORT_H
#define ML_GUI_EXPORT_H

#include "gui/timeline-view.h"

G_BEGIN_DECLS

/* TRUE for the formats a report is written in: "html", "md", "json", "csv". */
gboolean ml_export_is_report_format (const char *format);

/* Writes @n views stacked top to bottom, each at its size on screen (at
 * least 400 × 200), with their selection, highlights and marker, as
 * @format ("png", "svg", "pdf") to @path, atomically. */
gboolean ml_export_views (MlTimelineView *const *views, int n, const char *format, const char *path,
                          GError **error);

G_END_DECLS

#endif
