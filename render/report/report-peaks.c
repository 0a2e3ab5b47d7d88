/* report-peaks.c — the report's peaks: one entry per level
 * (sim/analysis/peak-groups.h), how often and how far apart it recurs,
 * the blame at its first tick, and the iterations of a trace that
 * repeats. */
#include "render/report/report-private.h"

#include <inttypes.h>
#include <stdio.h>

#include "sim/analysis/find.h"

enum { NOTES_MAX = 8 };   /* annotate texts shown per buffer */

static void
peak_data (MlDoc *d, const MlReport *r, const MlPeakGroup *g, const MlPeak *p, MlDocValue *peaks)
{
  const MlBuffers *bufs = r->bufs;
  MlDocValue *obj = ml_doc_value_object (d, peaks, NULL);
  ml_doc_value_u64 (d, obj, "tick", p->tick);
  ml_doc_value_u64 (d, obj, "live", p->live);
  ml_doc_value_u64 (d, obj, "live_buffers", p->n_live);
  ml_doc_value_u64 (d, obj, "times", g->n);
  ml_doc_value_u64 (d, obj, "live_min", g->live_min);
  MlDocValue *ticks = ml_doc_value_array (d, obj, "ticks");
  for (size_t k = 0; k < g->n; k++)
    ml_doc_value_u64 (d, ticks, NULL, g->ticks[k]);
  if (g->n > 1)
    ml_doc_value_num (d, obj, "every_ticks", g->every_ticks, 1);
  else
    ml_doc_value_null (d, obj, "every_ticks");
  if (g->n > 1 && g->every_ns >= 0)
    ml_doc_value_num (d, obj, "every_ns", g->every_ns, 0);
  else
    ml_doc_value_null (d, obj, "every_ns");
  ml_doc_value_bool (d, obj, "regular", g->regular);
  MlDocValue *blame = ml_doc_value_array (d, obj, "blame");
  for (size_t j = 0; j < p->n_blame; j++)
    {
      const MlBuffer *b = &bufs->buf[p->blame[j]];
      const MlTrace *t = bufs->trace;
      char label[256];
      MlDocValue *o = ml_doc_value_object (d, blame, NULL);
      ml_doc_value_u64 (d, o, "buffer", b->id);
      ml_doc_value_str (d, o, "name", ml_report_buffer_label (bufs, p->blame[j], label, sizeof label));
      bool site = t && b->stack && b->stack < t->n_stacks && t->stacks[b->stack].site;
      ml_doc_value_str (d, o, "site", site ? ml_trace_str (t, t->stacks[b->stack].site) : NULL);
      ml_doc_value_u64 (d, o, "bytes", b->rsize);
      ml_doc_value_u64 (d, o, "requested", b->size);
      ml_doc_value_u64 (d, o, "stream", b->stream);
      ml_doc_value_u64 (d, o, "start", b->start);
      ml_doc_value_u64 (d, o, "end", b->end);
      uint32_t notes[NOTES_MAX];
      size_t n_notes = ml_buffer_annotations (bufs, p->blame[j], notes, NOTES_MAX);
      MlDocValue *texts = ml_doc_value_array (d, o, "annotations");
      for (size_t k = 0; k < n_notes && k < NOTES_MAX; k++)
        ml_doc_value_str (d, texts, NULL, ml_trace_str (t, notes[k]));
    }
}

/* ' "text"; "text"': a buffer's annotate texts after its name, or "". */
static const char *
annotated (MlDoc *d, const MlBuffers *bufs, uint32_t i)
{
  uint32_t notes[NOTES_MAX];
  size_t n = ml_buffer_annotations (bufs, i, notes, NOTES_MAX);
  char buf[512];
  int o = 0;
  for (size_t k = 0; k < n && k < NOTES_MAX && o < (int) sizeof buf - 1; k++)
    o += snprintf (buf + o, sizeof buf - (size_t) o, "%s\"%s\"", k ? "; " : " ", ml_trace_str (bufs->trace, notes[k]));
  if (o >= (int) sizeof buf)
    snprintf (buf + sizeof buf - 5, 5, "...\"");
  return o ? ml_doc_strdup (d, buf) : "";
}

static void
peak_table (MlDoc *d, const MlReport *r, const MlPeakGroup *g, const MlPeak *p)
{
  enum { BUFFER, BYTES, SHARE, STREAM, LIFETIME };
  const MlBuffers *bufs = r->bufs;
  char what[160];
  ml_doc_textf (d, ml_doc_heading (d, 3), "%s%s", ml_peak_group_describe (g, what, sizeof what),
                p->live == bufs->lower_bound ? " — the lower bound" : "");
  MlDocText *at = ml_doc_para (d, ML_DOC_PARA_TEXT, ML_DOC_TONE_PLAIN);
  if (g->n > 1)
    {
      ml_doc_text (d, at, "At ticks ");
      for (size_t k = 0; k < g->n && k < 12; k++)
        ml_doc_textf (d, at, "%s%" PRIu64, k ? ", " : "", g->ticks[k]);
      if (g->n > 12)
        ml_doc_textf (d, at, " and %zu more", g->n - 12);
      ml_doc_text (d, at, ". ");
    }
  ml_doc_textf (d, at, "Tick %" PRIu64 ": %s live in %zu buffer%s.", p->tick, _ml_report_size (d, p->live), p->n_live,
                p->n_live == 1 ? "" : "s");
  MlDocTable *t = ml_doc_table (d, NULL, "blame");
  ml_doc_column (d, t, "buffer", NULL, ML_DOC_COL_SHOW);
  ml_doc_column (d, t, "bytes", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "share", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "stream", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "lifetime (ticks)", NULL, ML_DOC_COL_SHOW);
  for (size_t j = 0; j < p->n_blame; j++)
    {
      const MlBuffer *b = &bufs->buf[p->blame[j]];
      char label[256];
      MlDocRow *row = ml_doc_row (d, t);
      ml_doc_cellf (d, row, BUFFER, "%s%s", ml_report_buffer_label (bufs, p->blame[j], label, sizeof label),
                    annotated (d, bufs, p->blame[j]));
      ml_doc_cellf (d, row, BYTES, "%s", _ml_report_size (d, b->rsize));
      ml_doc_cellf (d, row, SHARE, "%.1f%%", p->live ? 100.0 * (double) b->rsize / (double) p->live : 0.0);
      ml_doc_cellf (d, row, STREAM, "%u", b->stream);
      ml_doc_cellf (d, row, LIFETIME, "[%" PRIu64 ", %" PRIu64 ")", b->start, b->end);
    }
  if (p->n_live > p->n_blame)
    _ml_report_row_more (d, t, ml_doc_printf (d, "… and %zu smaller buffers", p->n_live - p->n_blame));
}

/* "41, 75, 109, …": the first boundaries. */
static const char *
boundary_list (MlDoc *d, const MlPeakGroups *g)
{
  char buf[160];
  int o = 0;
  for (size_t k = 0; k < g->n_boundaries && k < 8 && o < (int) sizeof buf - 24; k++)
    o += snprintf (buf + o, sizeof buf - (size_t) o, "%s%" PRIu64, k ? ", " : "", g->boundaries[k]);
  if (g->n_boundaries > 8)
    snprintf (buf + o, sizeof buf - (size_t) o, " and %zu more", g->n_boundaries - 8);
  return ml_doc_strdup (d, buf);
}

void
_ml_report_section_peaks (MlDoc *d, const MlReport *r)
{
  ml_doc_text (d, ml_doc_heading (d, 2), "Peaks");
  const MlPeakGroups *g = &r->groups;
  if (g->iter_group >= 0)
    ml_doc_textf (d, ml_doc_para (d, ML_DOC_PARA_TEXT, ML_DOC_TONE_PLAIN),
                  "The trace repeats: %zu iterations (the %s peak recurs every ~%.0f ticks), their boundaries at "
                  "ticks %s.", g->n_boundaries + 1, _ml_report_size (d, g->groups[g->iter_group].live),
                  g->groups[g->iter_group].every_ticks, boundary_list (d, g));
  MlDocValue *peaks = ml_doc_value_array (d, d->data, "peaks");
  for (size_t i = 0; i < r->peaks.n; i++)
    {
      peak_table (d, r, &g->groups[i], &r->peaks.peaks[i]);
      peak_data (d, r, &g->groups[i], &r->peaks.peaks[i], peaks);
    }
  if (g->iter_group < 0)
    ml_doc_value_null (d, d->data, "iterations");
  else
    {
      MlDocValue *it = ml_doc_value_object (d, d->data, "iterations");
      ml_doc_value_u64 (d, it, "peak", (uint64_t) g->iter_group + 1);
      MlDocValue *b = ml_doc_value_array (d, it, "boundaries");
      for (size_t k = 0; k < g->n_boundaries; k++)
        ml_doc_value_u64 (d, b, NULL, g->boundaries[k]);
    }
}

