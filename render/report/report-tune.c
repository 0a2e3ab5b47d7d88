/* report-tune.c — the report's section on a PyTorch snapshot's allocator
 * settings (strategies/caching-tune.h, docs/pytorch.md "memlens tune"):
 * the rows, the answer, why the cache held free bytes, the reserved bytes
 * over time under the recorded settings and the suggested one. */
#include "render/report/report-private.h"

#include <inttypes.h>
#include <string.h>

#include "sim/base/units.h"

static const char *
size_text (MlDoc *d, uint64_t bytes)
{
  char buf[32];
  return ml_doc_strdup (d, ml_format_size (bytes, buf, sizeof buf));
}

static const char *
row_label (MlDoc *d, const MlTuneRow *row)
{
  if (!*row->change)
    return row->cold ? "(recorded settings, cold start)" : "(recorded settings)";
  return ml_doc_printf (d, "%s%s", row->change, row->r.model ? " (model)" : "");
}

/* The answer in one paragraph. */
static void
tune_answer (MlDoc *d, const MlTune *t, const char *path)
{
  const MlTuneRow *rec = &t->rows[0], *best = t->best >= 0 ? &t->rows[t->best] : NULL;
  MlDocText *p = ml_doc_para (d, ML_DOC_PARA_TEXT, ML_DOC_TONE_PLAIN);
  switch (t->verdict)
    {
    case ML_TUNE_FIX:
      ml_doc_text (d, p, "Set ");
      ml_doc_code (d, p, best->change);
      ml_doc_textf (d, p, "%s: it fits under %s (reserved peak %s, %s to spare; %" PRIu64 " cudaMalloc, %" PRIu64
                    " cudaFree), where the recorded settings ran out of memory.",
                    best->r.model ? " (a model: no conformance data can exist)" : "", size_text (d, t->capacity),
                    size_text (d, best->r.reserved_peak), size_text (d, t->capacity - best->r.reserved_peak),
                    best->r.n_malloc, best->r.n_free);
      break;
    case ML_TUNE_NONE_FITS:
      ml_doc_run (d, p, ML_DOC_RUN_STRONG, ML_DOC_TONE_BAD, "No allocator setting tried fits");
      if (t->shortfall)
        ml_doc_textf (d, p, ": the bytes live at the OOM and its request need %s, %s more than the %s there is. "
                      "Free or shrink buffers (memlens diagnose %s lists them).", size_text (d, t->need),
                      size_text (d, t->shortfall), size_text (d, t->capacity), path);
      else
        ml_doc_textf (d, p, ", though the bytes live at the OOM and its request (%s) are within %s: the rest is "
                      "fragmentation.", size_text (d, t->need), size_text (d, t->capacity));
      break;
    case ML_TUNE_FITS:
    case ML_TUNE_NO_CAPACITY:
      if (t->verdict == ML_TUNE_FITS)
        ml_doc_textf (d, p, "The recorded settings fit under %s. ", size_text (d, t->capacity));
      if (best)
        {
          ml_doc_code (d, p, best->change);
          ml_doc_textf (d, p, " reserves least: %s, %s less than the recorded settings.",
                        size_text (d, best->r.reserved_peak),
                        size_text (d, rec->r.reserved_peak - best->r.reserved_peak));
        }
      else
        ml_doc_textf (d, p, "No setting tried reserves less than the recorded %s.", size_text (d, rec->r.reserved_peak));
      break;
    }
}

static void
tune_rows (MlDoc *d, const MlTune *t)
{
  enum { NAME, CHANGED, RESERVED, ALLOCATED, FRAG, OOM, MALLOC, FREE, DELTA };
  MlDocTable *tb = ml_doc_table (d, "tune", NULL);
  ml_doc_column (d, tb, "setting", NULL, ML_DOC_COL_SHOW);
  ml_doc_column (d, tb, "changed", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, tb, "reserved peak", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, tb, "allocated peak", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, tb, "frag at peak", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, tb, "OOM", NULL, ML_DOC_COL_SHOW);
  ml_doc_column (d, tb, "cudaMalloc", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, tb, "cudaFree", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, tb, "vs recorded", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  for (size_t k = 0; k < t->n_rows; k++)
    {
      const MlTuneRow *row = &t->rows[k];
      MlDocRow *dr = ml_doc_row (d, tb);
      dr->highlight = (long) k == t->best;
      ml_doc_cellf (d, dr, NAME, "%s", row_label (d, row));
      ml_doc_cellf (d, dr, CHANGED, "%u", row->n_changed);
      if (row->status < 0)
        {
          MlDocCell *c = ml_doc_cellf (d, dr, RESERVED, "error: %s", row->error);
          c->tone = ML_DOC_TONE_BAD;
          c->span = ML_DOC_SPAN_REST;
          continue;
        }
      const MlCacheReplay *r = &row->r;
      ml_doc_cellf (d, dr, RESERVED, "%s", size_text (d, r->reserved_peak));
      ml_doc_cellf (d, dr, ALLOCATED, "%s", size_text (d, r->allocated_peak));
      if (r->at_peak.valid)
        ml_doc_cellf (d, dr, FRAG, "%.3f", r->frag_at_peak);
      else
        ml_doc_cellf (d, dr, FRAG, "–");
      if (r->oom)
        ml_doc_cellf (d, dr, OOM, "tick %" PRIu64 "%s", r->oom_tick, r->oom_recorded ? " (recorded)" : "")->tone =
          ML_DOC_TONE_BAD;
      else
        ml_doc_cellf (d, dr, OOM, "%s", t->capacity ? "fits" : "–")->tone = t->capacity ? ML_DOC_TONE_GOOD : ML_DOC_TONE_PLAIN;
      ml_doc_cellf (d, dr, MALLOC, "%" PRIu64, r->n_malloc);
      ml_doc_cellf (d, dr, FREE, "%" PRIu64, r->n_free);
      uint64_t a = r->reserved_peak, b = t->rows[0].r.reserved_peak;
      if (k > 0 && t->rows[0].status == 0)
        ml_doc_cellf (d, dr, DELTA, "%s%s", a >= b ? "+" : "−", size_text (d, a >= b ? a - b : b - a));
    }
  ml_doc_textf (d, &tb->note, "Each row replays the trace %s under the recorded settings with one change (the "
                "cold-start row: the recorded settings from an empty device). With an OOM the reserved peak is what "
                "serving every request would need. Frag at peak: – when nothing grew the reserved bytes (the peak "
                "is the state the replay started from). cudaMalloc and cudaFree count the calls (expandable segments: "
                "page maps and unmaps).", t->warm ? "from the state the snapshot recorded at its first event" : "from an empty device");
}

static void
tune_strands (MlDoc *d, const MlTune *t)
{
  MlDocTable *tb = ml_doc_table (d, "tune-strands", NULL);
  ml_doc_column (d, tb, "setting", NULL, ML_DOC_COL_SHOW);
  ml_doc_column (d, tb, "when", NULL, ML_DOC_COL_SHOW);
  for (int k = 0; k < ML_STRAND__COUNT; k++)
    ml_doc_column (d, tb, ml_strand_name ((MlStrand) k), NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, tb, "memory_viz internal", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, tb, "MemoryViz fragmentation", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  for (size_t k = 0; k < t->n_rows; k++)
    for (int when = 0; when < 2; when++)
      {
        const MlTuneRow *row = &t->rows[k];
        const MlStrandBreakdown *s = when ? &row->r.at_oom : &row->r.at_peak;
        if (row->status < 0 || !s->valid)
          continue;
        MlDocRow *dr = ml_doc_row (d, tb);
        ml_doc_cellf (d, dr, 0, "%s", row_label (d, row));
        ml_doc_cellf (d, dr, 1, "%s", when ? "OOM" : "peak");
        for (int j = 0; j < ML_STRAND__COUNT; j++)
          ml_doc_cellf (d, dr, 2 + j, "%s", size_text (d, s->bytes[j]));
        ml_doc_cellf (d, dr, 2 + ML_STRAND__COUNT, "%.1f%%", s->viz_internal * 100.0);
        ml_doc_cellf (d, dr, 3 + ML_STRAND__COUNT, "%.4f", s->viz_fragmentation);
      }
  ml_doc_text (d, &tb->note, "The free bytes inside reserved memory (and the rounding inside allocated blocks) by the "
               "first rule that kept the request from them, at the peak (the state the request that raised the "
               "reserved bytes to their peak found) and at the OOM (after PyTorch's releases); they add up to "
               "reserved − requested. memory_viz internal: the share of the free bytes that is rounding, as "
               "torch/cuda/_memory_viz.py and MemoryViz's segment view report it; MemoryViz fragmentation: its "
               "calculate_fragmentation, the squared free gaps over the squared reserved bytes.");
}

/* The reserved bytes over time, recorded settings and the answer, on one axis. */
static void
tune_figure (MlDoc *d, const MlReport *r, const MlTune *t)
{
  const MlTuneRow *rec = &t->rows[0], *best = t->best >= 0 ? &t->rows[t->best] : NULL;
  if (rec->status < 0 || !rec->r.n_curve)
    return;
  MlDocFigure *f = ml_doc_figure (d);
  uint64_t end = r->bufs->end_tick;
  bool two = best && best->r.n_curve;
  MlDocSeries *series = ml_doc_figure_series (d, f, two ? 2 : 1);
  if (series)
    series[0] = (MlDocSeries) { "reserved, recorded settings", rec->r.curve_tick, rec->r.curve_reserved,
                                rec->r.n_curve, end, false };
  if (series && two)
    series[1] = (MlDocSeries) { ml_doc_printf (d, "reserved, %s", best->change), best->r.curve_tick,
                                best->r.curve_reserved, best->r.n_curve, end, true };
  f->view = ML_DOC_FIGURE_SERIES;
  f->y_line = t->capacity;
  f->y_line_label = t->capacity ? ml_doc_printf (d, "device memory %s", size_text (d, t->capacity)) : NULL;
  f->width = 1200;
  f->height = 420;
  f->prefix = "tune";
  f->name = "";
  ml_doc_text (d, &f->caption, best ? "Reserved bytes over the trace's ticks under the recorded settings and under the "
                                      "suggested one, on one axis; the horizontal line is the device's memory."
                                    : "Reserved bytes over the trace's ticks under the recorded settings.");
}

static int
write_tune (FILE *fp, const void *tune, const void *aux, MlError *err)
{
  (void) aux;
  return ml_tune_write_json (fp, tune, err);
}

void
_ml_report_section_tune (MlDoc *d, const MlReport *r)
{
  if (!r->tune && !*r->tune_error)
    return;
  ml_doc_text (d, ml_doc_heading (d, 2), "Allocator settings");
  if (!r->tune)
    {
      ml_doc_textf (d, ml_doc_para (d, ML_DOC_PARA_TEXT, ML_DOC_TONE_BAD), "The settings could not be replayed: %s.",
                    r->tune_error);
      return;
    }
  const MlTune *t = r->tune;
  ml_doc_textf (d, ml_doc_para (d, ML_DOC_PARA_TEXT, ML_DOC_TONE_PLAIN), "Recorded settings: %s. %s.",
                *t->recorded ? t->recorded : "PyTorch's defaults",
                t->capacity ? ml_doc_printf (d, "Device memory %s (%s)", size_text (d, t->capacity),
                                             t->capacity_from_oom ? "the recorded OOM's reserved + device free" : "the capacity given")
                            : "No capacity: the rows are compared by what they reserve");
  tune_answer (d, t, r->trace_path);
  tune_rows (d, t);
  tune_figure (d, r, t);
  ml_doc_text (d, ml_doc_heading (d, 3), "Why the cache held free bytes");
  tune_strands (d, t);
  ml_doc_value_writer (d, d->data, "tune", write_tune, t, NULL);
}
