/* diff-doc.c — the diff of two runs as a document (see diff-doc.h). */
#include "render/report/diff-doc.h"

#include <inttypes.h>
#include <string.h>

#include "sim/base/units.h"

#ifndef MEMLENS_VERSION
#define MEMLENS_VERSION "0.1"
#endif

static const char *
base_name (const char *path)
{
  const char *s = strrchr (path, '/');
  return s ? s + 1 : path;
}

/* "+1.00 MiB", "−1.00 MiB", "0 B" */
static const char *
signed_size (MlDoc *d, int64_t v)
{
  char s[32];
  ml_format_size (v < 0 ? -(uint64_t) v : (uint64_t) v, s, sizeof s);
  return ml_doc_printf (d, "%s%s", v > 0 ? "+" : v < 0 ? "−" : "", s);
}

static MlDocTone
change_tone (int64_t change)
{
  return change > 0 ? ML_DOC_TONE_BAD : change < 0 ? ML_DOC_TONE_GOOD : ML_DOC_TONE_PLAIN;
}

static void
peak_card (MlDoc *d, const char *label, uint64_t peak, uint64_t tick)
{
  char s[32];
  MlDocCard *c = ml_doc_card (d, label, ml_format_size (peak, s, sizeof s), ml_doc_printf (d, "at tick %" PRIu64, tick));
  ml_doc_attrf (d, &c->attrs, "data-bytes", "%" PRIu64, peak);
}

/* One run's active memory on the scale both share. */
static void
figure (MlDoc *d, const MlDiffSide *side, const char *label, const MlDiff *diff, const char *prefix)
{
  MlDocFigure *f = ml_doc_figure (d);
  f->bufs = side->bufs;
  f->plan = side->plan;
  f->name = ml_doc_strdup (d, base_name (side->path));
  f->title = ml_doc_printf (d, "%s: %s", label, base_name (side->path));
  f->view = ML_DOC_FIGURE_ACTIVE;
  f->no_frag = true;
  f->width = 1600;
  f->height = 620;
  double t = (double) (diff->a_end > diff->b_end ? diff->a_end : diff->b_end);
  double a = (double) (diff->a_peak > diff->b_peak ? diff->a_peak : diff->b_peak);
  f->t_max = t > 0 ? t : 1;
  f->a_max = a > 0 ? a : 1;
  f->linked = true;
  f->prefix = prefix;
}

static void
site_table (MlDoc *d, const MlDiff *diff)
{
  enum { SITE, A, B, CHANGE, ALLOCS, RESIZED, STATUS };
  MlDocTable *t = ml_doc_table (d, NULL, NULL);
  ml_doc_column (d, t, "call site", NULL, ML_DOC_COL_SHOW);
  ml_doc_column (d, t, "at A's peak", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "at B's peak", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "change", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "allocations A → B", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "resized", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "", NULL, ML_DOC_COL_SHOW);
  for (size_t i = 0; i < diff->n_rows; i++)
    {
      const MlDiffRow *r = &diff->rows[i];
      char x[32], y[32];
      MlDocRow *row = ml_doc_row (d, t);
      ml_doc_attrf (d, &row->attrs, "data-site", "%s", r->site);
      ml_doc_attrf (d, &row->attrs, "data-a", "%" PRIu64, r->a_bytes);
      ml_doc_attrf (d, &row->attrs, "data-b", "%" PRIu64, r->b_bytes);
      ml_doc_attrf (d, &row->attrs, "data-change", "%" PRId64, r->change);
      ml_doc_code (d, &ml_doc_cell (d, row, SITE)->text, r->site);
      ml_doc_cellf (d, row, A, "%s", ml_format_size (r->a_bytes, x, sizeof x));
      ml_doc_cellf (d, row, B, "%s", ml_format_size (r->b_bytes, y, sizeof y));
      ml_doc_cellf (d, row, CHANGE, "%s", signed_size (d, r->change))->tone = change_tone (r->change);
      ml_doc_cellf (d, row, ALLOCS, "%zu → %zu", r->a_allocs, r->b_allocs);
      ml_doc_cellf (d, row, RESIZED, "%zu", r->resized);
      ml_doc_cellf (d, row, STATUS, "%s", r->status == ML_DIFF_NEW ? "new in B" : r->status == ML_DIFF_GONE ? "gone in B" : "");
    }
}

int
ml_diff_document (const MlDiff *diff, const MlDiffSide *a, const MlDiffSide *b, MlDoc **out, MlError *err)
{
  MlDoc *d = ml_doc_new (NULL, "memlens " MEMLENS_VERSION);
  if (!d)
    return ml_error_set (err, ML_ENOMEM, "out of memory for the diff");
  d->title = ml_doc_printf (d, "memlens diff: %s vs %s", base_name (a->path), base_name (b->path));
  ml_doc_text (d, ml_doc_heading (d, 1), "Two runs compared");
  MlDocText *p = ml_doc_para (d, ML_DOC_PARA_LEAD, ML_DOC_TONE_PLAIN);
  ml_doc_text (d, p, "A: ");
  ml_doc_code (d, p, a->path);
  ml_doc_break (d, p);
  ml_doc_text (d, p, "B: ");
  ml_doc_code (d, p, b->path);

  peak_card (d, "A's peak", diff->a_peak, diff->a_peak_tick);
  peak_card (d, "B's peak", diff->b_peak, diff->b_peak_tick);
  int64_t change = (int64_t) diff->b_peak - (int64_t) diff->a_peak;
  MlDocCard *c = ml_doc_card (d, "change", signed_size (d, change),
                           diff->anchors ? "allocations paired between the marks both runs share"
                                         : "allocations paired by order per call site");
  c->tone = change_tone (change);
  ml_doc_attrf (d, &c->attrs, "data-change", "%" PRId64, change);

  ml_doc_text (d, ml_doc_heading (d, 2), "Active memory, one scale");
  ml_doc_text (d, ml_doc_para (d, ML_DOC_PARA_NOTE, ML_DOC_TONE_PLAIN),
               "The live buffers stacked over time, the longest-lived at the bottom, on the same ticks and bytes for "
               "both runs.");
  figure (d, a, "A", diff, "a");
  figure (d, b, "B", diff, "b");
  ml_doc_text (d, ml_doc_heading (d, 2), "Per call site, at each run's peak");
  site_table (d, diff);
  ml_doc_text (d, &d->footer, "memlens " MEMLENS_VERSION);
  int rc = ml_doc_status (d, err);
  if (rc < 0)
    {
      ml_doc_free (d);
      return rc;
    }
  *out = d;
  return 0;
}
