/* doc-csv.c — a document's CSV table (see doc.h): one header of the data
 * columns' keys and, for every row, one field per data column. */
#include "render/report/doc.h"

#include <string.h>

/* A field, quoted (RFC 4180) when it holds a comma, quote or newline. */
static void
csv_field (FILE *fp, const char *s)
{
  if (!strpbrk (s, ",\"\n\r"))
    {
      fputs (s, fp);
      return;
    }
  fputc ('"', fp);
  for (; *s; s++)
    {
      if (*s == '"')
        fputc ('"', fp);
      fputc (*s, fp);
    }
  fputc ('"', fp);
}

int
ml_doc_write_csv (const MlDoc *doc, FILE *fp, MlError *err)
{
  const MlDocTable *t = doc->csv;
  if (!t)
    return ml_error_set (err, ML_EUSAGE, "this document has no table for a CSV");
  bool first = true;
  for (size_t c = 0; c < t->n_cols; c++)
    if (t->cols[c].flags & ML_DOC_COL_DATA)
      {
        fputs (first ? "" : ",", fp);
        csv_field (fp, t->cols[c].key ? t->cols[c].key : t->cols[c].label);
        first = false;
      }
  fputc ('\n', fp);
  for (const MlDocRow *r = t->rows; r; r = r->next)
    {
      first = true;
      for (size_t c = 0; c < t->n_cols; c++)
        if (t->cols[c].flags & ML_DOC_COL_DATA)
          {
            fputs (first ? "" : ",", fp);
            csv_field (fp, r->cells[c].raw ? r->cells[c].raw : "");
            first = false;
          }
      fputc ('\n', fp);
    }
  return ml_doc_finish (fp, err);
}
