/* html.h — a document (render/report/doc.h) as one self-contained HTML
 * page: inline CSS, the figures drawn by the renderer as inline SVG, no
 * fonts, images or styles from the network. Polyglot XHTML (well-formed
 * XML). Figures marked linked zoom and pan together through a small
 * inline script, the page's only one.
 */
#ifndef ML_HTML_H
#define ML_HTML_H

#include <stdbool.h>
#include <stdio.h>

#include "render/report/doc.h"
#include "render/style.h"

/* How the page is written: @style (NULL: the default look) draws the
 * static figures; @interactive draws the address × time figures in the
 * browser instead (render/page.h: canvas, zoom, pan, hover, search,
 * with the data inline), the others staying SVG. */
typedef struct {
  const MlStyle *style;
  bool           interactive;
} MlHtmlOptions;

/* Writes @doc to @fp. @style (may be NULL: the default look) draws the
 * figures; a figure's own view, title and panels override it. */
int ml_doc_write_html (const MlDoc *doc, FILE *fp, const MlStyle *style, MlError *err) ML_MUST_CHECK;

/* ml_doc_write_html as an MlDocWriter (@opts: the MlStyle or NULL), for
 * ml_doc_save(). */
int ml_doc_save_html (const MlDoc *doc, FILE *fp, const void *style, MlError *err);

/* Both with the options (NULL: as ml_doc_write_html with no style); the
 * second as an MlDocWriter (@opts: the MlHtmlOptions or NULL). */
int ml_doc_write_html_with (const MlDoc *doc, FILE *fp, const MlHtmlOptions *opts, MlError *err) ML_MUST_CHECK;
int ml_doc_save_html_with (const MlDoc *doc, FILE *fp, const void *opts, MlError *err);

/* @s with <, >, & and " escaped for XML text and attribute values. */
void ml_xml_escape (FILE *fp, const char *s);

#endif
