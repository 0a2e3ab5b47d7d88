/* test-doc.c — the report's document model (render/report/doc.h) and its
 * text writers on hand-built documents: exact Markdown, CSV and JSON. */
#include <stdlib.h>
#include <string.h>

#include "render/report/doc.h"
#include "tap.h"

typedef int (*Writer) (const MlDoc *, FILE *, MlError *);

/* What @write makes of @doc (malloc'd). */
static char *
written (const MlDoc *doc, Writer write)
{
  char *text = NULL;
  size_t len = 0;
  FILE *fp = open_memstream (&text, &len);
  must (fp);
  MlError err = { 0 };
  int rc = write (doc, fp, &err);
  fclose (fp);
  ok (rc == 0, "the writer succeeds (%s)", err.msg);
  return text;
}

/* A table with a data-only column, a bar, a right-aligned column, an
 * error row spanning the rest, a pipe and a quote to escape. */
static MlDoc *
table_doc (void)
{
  MlDoc *d = ml_doc_new ("t", "memlens test");
  must (d);
  ml_doc_text (d, ml_doc_heading (d, 2), "Runs");
  MlDocTable *t = ml_doc_table (d, "runs", NULL);
  int name = ml_doc_column (d, t, "name", "name", ML_DOC_COL_SHOW | ML_DOC_COL_DATA);
  int bytes = ml_doc_column (d, t, "bytes", "bytes", ML_DOC_COL_SHOW | ML_DOC_COL_DATA | ML_DOC_COL_RIGHT);
  int tick = ml_doc_column (d, t, NULL, "tick", ML_DOC_COL_DATA);
  int bar = ml_doc_column (d, t, "", NULL, ML_DOC_COL_BAR);
  t->cols[bar].note = "The bar says so.";
  ml_doc_text (d, &t->note, "Small print.");
  int note = ml_doc_column (d, t, "note", NULL, ML_DOC_COL_SHOW);
  int error = ml_doc_column (d, t, NULL, "error", ML_DOC_COL_DATA);
  ml_doc_set_csv (d, t);

  MlDocRow *r = ml_doc_row (d, t);
  ml_doc_rawf (d, ml_doc_cellf (d, r, name, "a|b"), "a|b");
  ml_doc_rawf (d, ml_doc_cellf (d, r, bytes, "1.00 KiB"), "1024");
  ml_doc_rawf (d, ml_doc_cell (d, r, tick), "7");
  ml_doc_run (d, &ml_doc_cell (d, r, name)->text, ML_DOC_RUN_BADGE, ML_DOC_TONE_GOOD, "best");
  ml_doc_cellf (d, r, note, "ok");

  r = ml_doc_row (d, t);
  ml_doc_rawf (d, ml_doc_cellf (d, r, name, "c"), "c");
  MlDocCell *c = ml_doc_cellf (d, r, bytes, "error: said \"no\", twice");
  c->span = ML_DOC_SPAN_REST;
  ml_doc_rawf (d, ml_doc_cell (d, r, error), "said \"no\", twice");
  return d;
}

static void
test_markdown_and_csv (void)
{
  MlDoc *d = table_doc ();
  char *md = written (d, ml_doc_write_markdown);
  is_str (md,
          "## Runs\n"
          "\n"
          "| name | bytes | note |\n"
          "|---|---:|---|\n"
          "| a\\|b (best) | 1.00 KiB | ok |\n"
          "| c | error: said \"no\", twice | |\n"
          "\n"
          "Small print.\n",
          "Markdown: shown columns only, pipes escaped, a badge in brackets, the span's columns empty; the "
          "table's note without the note of the bar it does not show");
  char *csv = written (d, ml_doc_write_csv);
  is_str (csv,
          "name,bytes,tick,error\n"
          "a|b,1024,7,\n"
          "c,,,\"said \"\"no\"\", twice\"\n",
          "CSV: the data columns' keys, one field per data column in every row, quoted as RFC 4180 says");
  free (md);
  free (csv);
  ml_doc_free (d);
}

static int
write_pair (FILE *fp, const void *obj, const void *aux, MlError *err)
{
  fprintf (fp, "\"x\":%d,\"y\":%d", *(const int *) obj, *(const int *) aux);
  return 0;
}

static void
test_json (void)
{
  MlDoc *d = ml_doc_new ("t", "g");
  must (d);
  MlDocValue *root = d->data;
  /* members declared first keep their place when set later */
  ml_doc_value_absent (d, root, "first");
  ml_doc_value_absent (d, root, "never");
  ml_doc_value_absent (d, root, "list");
  ml_doc_value_u64 (d, root, "big", UINT64_C (1) << 60);
  MlDocValue *list = ml_doc_value_array (d, root, "list");
  int x = 1, y = 2;
  ml_doc_value_splice (d, ml_doc_value_object (d, list, NULL), write_pair, &x, &y);
  MlDocValue *o = ml_doc_value_object (d, list, NULL);
  ml_doc_value_splice (d, o, write_pair, &y, &x);
  ml_doc_value_bool (d, o, "z", true);
  ml_doc_value_num (d, root, "first", 0.5, 3);
  ml_doc_value_str (d, root, "s", "a\"b");
  ml_doc_value_str (d, root, "none", NULL);
  char *json = written (d, ml_doc_write_json);
  is_str (json, "{\"first\":0.500,\"list\":[{\"x\":1,\"y\":2},{\"x\":2,\"y\":1,\"z\":true}],\"big\":\"1152921504606846976\","
                "\"s\":\"a\\\"b\",\"none\":null}\n",
          "JSON: placeholders keep the order, the unset one is left out, spliced members get commas, "
          "u64 above 2^53 as a string");
  free (json);
  ml_doc_free (d);
}

static void
test_sections (void)
{
  MlDoc *d = ml_doc_new ("t", "g");
  must (d);
  ml_doc_text (d, ml_doc_heading (d, 1), "Title");
  MlDocCard *c = ml_doc_card (d, "peak", "2.00 GiB", "at tick 3");
  ml_doc_attrf (d, &c->attrs, "data-bytes", "%d", 2);
  ml_doc_card (d, "fits", "yes", NULL);
  ml_doc_text (d, ml_doc_heading (d, 2), "Pictures");
  ml_doc_figure (d);
  ml_doc_text (d, ml_doc_heading (d, 2), "Code");
  MlDocText *p = ml_doc_para (d, ML_DOC_PARA_TEXT, ML_DOC_TONE_PLAIN);
  ml_doc_text (d, p, "called from ");
  ml_doc_code (d, p, "f`x`");
  ml_doc_text (d, p, " *not bold*");
  MlDocTable *t = ml_doc_table (d, NULL, NULL);
  t->no_header = true;
  ml_doc_column (d, t, "k", NULL, ML_DOC_COL_SHOW);
  ml_doc_column (d, t, "v", NULL, ML_DOC_COL_SHOW);
  MlDocRow *r = ml_doc_row (d, t);
  ml_doc_cellf (d, r, 0, "seed");
  ml_doc_cellf (d, r, 1, "%d", 1);
  ml_doc_textf (d, &d->footer, "memlens %d", 0);
  char *md = written (d, ml_doc_write_markdown);
  is_str (md,
          "# Title\n"
          "\n"
          "- peak: **2.00 GiB** — at tick 3\n"
          "- fits: **yes**\n"
          "\n"
          "## Code\n"
          "\n"
          "called from `` f`x` `` \\*not bold\\*\n"
          "\n"
          "- seed: 1\n"
          "\n---\nmemlens 0\n",
          "Markdown: cards as a list, a heading over nothing but figures left out, code fenced around its "
          "backticks, markup escaped, a headerless table as a list, the footer");
  ml_doc_free (d);
  free (md);
  MlDoc *e = ml_doc_new ("t", "g");
  must (e);
  char *csv = NULL;
  size_t len = 0;
  FILE *fp = open_memstream (&csv, &len);
  MlError err = { 0 };
  ok (ml_doc_write_csv (e, fp, &err) == ML_EUSAGE, "CSV of a document without a table: refused (%s)", err.msg);
  fclose (fp);
  free (csv);
  ml_doc_free (e);
}

int
main (void)
{
  test_markdown_and_csv ();
  test_json ();
  test_sections ();
  return tap_done ();
}
