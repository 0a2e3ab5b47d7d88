/* report-html.c — the report's document as HTML (see report-html.h). */
#include "render/report-html.h"

#include <string.h>

#include "render/html.h"
#include "sim/base/io.h"

int
ml_report_write_html (const MlReport *r, FILE *fp, const MlStyle *style, MlError *err)
{
  MlDoc *doc = NULL;
  int rc = ml_report_document (r, &doc, err);
  if (rc == 0)
    rc = ml_doc_write_html (doc, fp, style, err);
  ml_doc_free (doc);
  return rc;
}

int
ml_report_write_file (const MlReport *r, const char *path, const MlHtmlOptions *opts, MlError *err)
{
  char ext[16];
  ml_path_ext (path, ext, sizeof ext, NULL);
  if (strcmp (ext, "html") != 0 && strcmp (ext, "htm") != 0)
    return ml_report_write (r, path, err);
  MlDoc *doc = NULL;
  int rc = ml_report_document (r, &doc, err);
  if (rc == 0)
    rc = ml_doc_save (doc, path, ml_doc_save_html_with, opts, err);
  ml_doc_free (doc);
  return rc;
}
