/* memlens report FILE... -o R.html|.json|.md|.csv: the view across the
 * ranks of one job as a report (issue 28 item 3): one figure of the peak
 * reserved and allocated per rank with the OOM ranks marked, the view's
 * lines, a table of the files; its JSON is stats --json's of the same
 * files ({files, cross_rank}). */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/ranks.h"
#include "render/report/doc.h"

#ifdef HAVE_RENDER
#include "render/html.h"
#endif

static int
files_json (FILE *fp, const void *obj, const void *aux, MlError *err)
{
  cli_ranks_files_json (fp, obj, *(const size_t *) aux);
  return 0;
}

static int
cross_json (FILE *fp, const void *obj, const void *aux, MlError *err)
{
  cli_ranks_print (fp, obj, *(const size_t *) aux, true);
  return 0;
}

/* The view's lines (as stats prints them) as paragraphs. */
static void
view_lines (MlDoc *d, const CliRank *r, size_t n)
{
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream (&text, &len);
  if (!mem)
    return;
  cli_ranks_print (mem, r, n, false);
  fclose (mem);
  for (char *line = text, *end; line && *line; line = end ? end + 1 : NULL)
    {
      end = strchr (line, '\n');
      if (end)
        *end = 0;
      if (strncmp (line, "== ", 3) != 0 && *line)
        ml_doc_code (d, ml_doc_para (d, ML_DOC_PARA_TEXT, ML_DOC_TONE_PLAIN), line);
    }
  free (text);
}

static const CliRank *by_r;

static int
cmp_rank (const void *a, const void *b)
{
  const CliRank *x = &by_r[*(const size_t *) a], *y = &by_r[*(const size_t *) b];
  long rx = cli_rank_of (x->path, x->s->meta_rank), ry = cli_rank_of (y->path, y->s->meta_rank);
  return rx < ry ? -1 : rx > ry;
}

/* The files in rank order when each names its rank (else as given): a
 * shell's rank*.pickle gives rank10 before rank2. */
static size_t *
rank_order (const CliRank *r, size_t n)
{
  size_t *o = malloc ((n ? n : 1) * sizeof *o);
  bool named = true;
  for (size_t k = 0; o && k < n; k++)
    {
      o[k] = k;
      named = named && cli_rank_of (r[k].path, r[k].s->meta_rank) >= 0;
    }
  if (o && named)
    {
      by_r = r;
      qsort (o, n, sizeof *o, cmp_rank);
    }
  return o;
}

static void
files_table (MlDoc *d, const CliRank *r, const size_t *order, size_t n)
{
  MlDocTable *t = ml_doc_table (d, "ranks", NULL);
  unsigned both = ML_DOC_COL_SHOW | ML_DOC_COL_DATA;
  int c_rank = ml_doc_column (d, t, "rank", "rank", both);
  int c_file = ml_doc_column (d, t, "file", "file", both);
  int c_dev = ml_doc_column (d, t, "device", "device", both | ML_DOC_COL_RIGHT);
  int c_res = ml_doc_column (d, t, "peak reserved", "peak_reserved", both | ML_DOC_COL_RIGHT);
  int c_all = ml_doc_column (d, t, "peak allocated", "peak_allocated", both | ML_DOC_COL_RIGHT);
  int c_oom = ml_doc_column (d, t, "OOMs", "ooms", both | ML_DOC_COL_RIGHT);
  int c_site = ml_doc_column (d, t, "top call site at the allocated peak", "top_site", both);
  ml_doc_set_csv (d, t);
  char buf[64];
  for (size_t i = 0; i < n; i++)
    {
      size_t k = order[i];
      const CliRankSummary *s = r[k].s;
      MlDocRow *row = ml_doc_row (d, t);
      long rank = cli_rank_of (r[k].path, s->done ? s->meta_rank : -1);
      MlDocCell *c = rank >= 0 ? ml_doc_cellf (d, row, c_rank, "%ld", rank) : ml_doc_cell (d, row, c_rank);
      if (rank >= 0)
        ml_doc_rawf (d, c, "%ld", rank);
      c = ml_doc_cellf (d, row, c_file, "%s", r[k].path);
      ml_doc_rawf (d, c, "%s", r[k].path);
      if (!s->done)
        {
          ml_doc_cellf (d, row, c_dev, "failed (exit %d)", r[k].status)->span = ML_DOC_SPAN_REST;
          continue;
        }
      ml_doc_rawf (d, ml_doc_cellf (d, row, c_dev, "%u", s->device), "%u", s->device);
      ml_doc_rawf (d, ml_doc_cellf (d, row, c_res, "%s", cli_size (s->reserved_peak)), "%llu",
                   (unsigned long long) s->reserved_peak);
      ml_doc_rawf (d, ml_doc_cellf (d, row, c_all, "%s", cli_size (s->allocated_peak)), "%llu",
                   (unsigned long long) s->allocated_peak);
      c = ml_doc_cellf (d, row, c_oom, "%u", s->ooms);
      ml_doc_rawf (d, c, "%u", s->ooms);
      c->tone = s->ooms ? ML_DOC_TONE_BAD : ML_DOC_TONE_PLAIN;
      snprintf (buf, sizeof buf, " (%s)", cli_size (s->site_bytes));
      c = ml_doc_cell (d, row, c_site);
      ml_doc_code (d, &c->text, s->site);
      ml_doc_text (d, &c->text, buf);
      ml_doc_rawf (d, c, "%s", s->site);
    }
}

typedef struct {
  const char *output;
  bool        html;
} Ranks;

static int
write_doc (const CliRank *r, size_t n, void *user)
{
  const Ranks *a = user;
  if (!cli_ranks_one_job (r, n))
    return cli_fail ("report", EXIT_BAD, "%s, %s%s: these %zu files do not look like the ranks of one job (each "
                     "names its own rank: rank3 in its name, or a Kineto trace's distributedInfo.rank; or their names "
                     "differ only in their numbers): no report across them; one trace's report: memlens report TRACE "
                     "-o %s", r[0].path, r[1].path, n > 2 ? ", ..." : "", n, a->output);
  size_t read = 0;
  for (size_t k = 0; k < n; k++)
    read += r[k].s->done != 0;
  if (read < n)
    return cli_fail ("report", EXIT_BAD, "%zu of %zu files could not be read (said above): no report", n - read, n);
  MlDoc *d = ml_doc_new (NULL, "memlens " MEMLENS_VERSION);
  if (!d)
    return cli_fail ("report", EXIT_BAD, "out of memory");
  d->title = ml_doc_printf (d, "memlens report: %zu ranks", n);
  ml_doc_textf (d, ml_doc_heading (d, 1), "Peak memory across %zu ranks", n);
  ml_doc_textf (d, ml_doc_para (d, ML_DOC_PARA_LEAD, ML_DOC_TONE_PLAIN),
                "%zu files, one per rank: their peaks side by side, the OOMs they recorded", n);
  MlDocFigure *f = ml_doc_figure (d);
  f->view = ML_DOC_FIGURE_RANKS;
  f->width = 960;
  f->height = 440;
  size_t *order = rank_order (r, n);
  if (!order)
    {
      ml_doc_free (d);
      return cli_fail ("report", EXIT_BAD, "out of memory");
    }
  MlDocRankBar *bar = ml_doc_figure_ranks (d, f, n);
  char buf[64];
  for (size_t i = 0; bar && i < n; i++)
    {
      const CliRank *k = &r[order[i]];
      bar[i] = (MlDocRankBar) { ml_doc_strdup (d, cli_rank_label (k, buf, sizeof buf)), k->s->reserved_peak,
                                k->s->allocated_peak, k->s->ooms };
    }
  ml_doc_text (d, &f->caption, "Each rank's peak reserved bytes (above) and peak allocated bytes (below), each on a "
                               "scale of its own; the ranks that recorded an OOM are capped and labelled in red.");
  view_lines (d, r, n);
  files_table (d, r, order, n);
  free (order);
  ml_doc_value_writer (d, d->data, "files", files_json, r, &n);
  ml_doc_value_writer (d, d->data, "cross_rank", cross_json, r, &n);
  MlError err = { 0 };
  int rc = ml_doc_status (d, &err);
#ifdef HAVE_RENDER
  if (rc == 0 && a->html)
    rc = ml_doc_save (d, a->output, ml_doc_save_html_with, NULL, &err);
  else
#endif
  if (rc == 0)
    rc = ml_doc_save (d, a->output, ml_doc_text_writer (a->output), NULL, &err);
  ml_doc_free (d);
  return rc < 0 ? cli_error ("report", &err) : EXIT_OK;
}

int
cli_report_ranks (int argc, char **argv, int first, MlCliOpts *o, bool html)
{
  Ranks a = { o->output, html };
  int rc = cli_multi_ranks ("report", argc, argv, first, o, write_doc, &a);
  if (rc != EXIT_BAD && !o->quiet)
    fprintf (stderr, "memlens report: wrote %s (%d ranks)\n", o->output, argc - first);
  return rc;
}
