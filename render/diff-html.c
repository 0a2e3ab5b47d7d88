/* diff-html.c — the diff page (see diff-html.h). */
#include "render/diff-html.h"

#include "render/html.h"

int
ml_diff_write_html (FILE *fp, const MlDiff *d, const MlDiffSide *a, const MlDiffSide *b, MlError *err)
{
  MlDoc *doc = NULL;
  int rc = ml_diff_document (d, a, b, &doc, err);
  if (rc == 0)
    rc = ml_doc_write_html (doc, fp, NULL, err);
  ml_doc_free (doc);
  return rc;
}

int
ml_diff_write_html_file (const char *path, const MlDiff *d, const MlDiffSide *a, const MlDiffSide *b, bool interactive,
                         MlError *err)
{
  MlHtmlOptions opts = { .interactive = interactive };
  MlDoc *doc = NULL;
  int rc = ml_diff_document (d, a, b, &doc, err);
  if (rc == 0)
    rc = ml_doc_save (doc, path, ml_doc_save_html_with, &opts, err);
  ml_doc_free (doc);
  return rc;
}
