/* report-doc.c — the report as a document (render/report/doc.h): one
 * function per section, each adding what people read (blocks) and what
 * machines read (the JSON members of docs/report-schema.md). Every writer
 * renders the same document, so a section added here shows in every
 * format. */
#include "render/report/report-private.h"

#include <inttypes.h>
#include <string.h>

#include "render/report/doc.h"
#include "sim/base/units.h"

#ifndef MEMLENS_VERSION
#define MEMLENS_VERSION "0.1"
#endif

/* How many of a long list the readable formats show (JSON keeps its own
 * limits: 200 issues, everything else whole). */
enum { SHOW_ISSUES = 100, SHOW_INFEASIBLE = 20, SHOW_SITES = 10 };



static const char *
sz (MlDoc *d, uint64_t bytes)
{
  return _ml_report_size (d, bytes);
}

static const char *
base_name (const char *path)
{
  const char *s = strrchr (path, '/');
  return s ? s + 1 : path;
}

static const char *
plural (size_t n)
{
  return n == 1 ? "" : "s";
}

static bool
row_ran (const MlReportRow *row)
{
  return row->res.status == 0 && row->res.plan;
}

static size_t
row_issues (const MlReportRow *row)
{
  size_t n = 0;
  for (int k = 0; k < ML_ISSUE__COUNT; k++)
    n += row->issues[k];
  return n;
}

/* A size cell: the size to read, the bytes as its tooltip and CSV value. */
static MlDocCell *
cell_size (MlDoc *d, MlDocRow *row, int col, uint64_t bytes)
{
  MlDocCell *c = ml_doc_cellf (d, row, col, "%s", sz (d, bytes));
  c->hint = ml_doc_printf (d, "%" PRIu64 " bytes", bytes);
  ml_doc_rawf (d, c, "%" PRIu64, bytes);
  return c;
}

/* A cell of @v as a percentage with @decimals (@sign: always signed),
 * the ratio as its CSV value. */
static void
cell_ratio (MlDoc *d, MlDocRow *row, int col, bool sign, int decimals, double v)
{
  MlDocCell *c = ml_doc_cellf (d, row, col, sign ? "%+.*f%%" : "%.*f%%", decimals, v * 100.0);
  ml_doc_rawf (d, c, "%.6f", v);
}

/* A fragmentation of @m: "n/a" (no raw value) where the plan's free
 * space is not known. */
static void
cell_frag (MlDoc *d, MlDocRow *row, int col, const MlMetrics *m, double v)
{
  if (m->frag_unknown)
    ml_doc_cellf (d, row, col, "n/a");
  else
    cell_ratio (d, row, col, false, 1, v);
}

static void
cell_bar (MlDoc *d, MlDocRow *row, int col, uint64_t v, uint64_t max, uint64_t mark)
{
  MlDocCell *c = ml_doc_cell (d, row, col);
  c->has_bar = true;
  c->bar = max ? 100.0 * (double) v / (double) max : 0;
  c->mark = max ? 100.0 * (double) mark / (double) max : 0;
}

/* The rest of @row after @col: "error: …" (in red). */
static void
cell_error (MlDoc *d, MlDocRow *row, int col, const char *error)
{
  MlDocCell *c = ml_doc_cellf (d, row, col, "error: %s", error);
  c->tone = ML_DOC_TONE_BAD;
  c->span = ML_DOC_SPAN_REST;
}

static void
row_more (MlDoc *d, MlDocTable *t, const char *text)
{
  _ml_report_row_more (d, t, text);
}

static void
value_name (MlDoc *d, MlDocValue *obj, const char *key, const MlReport *r, long row)
{
  ml_doc_value_str (d, obj, key, row >= 0 ? r->rows[row].name : NULL);
}

/* ---- the title, the headline cards ------------------------------------------ */

static void
cards (MlDoc *d, const MlReport *r)
{
  const MlBuffers *bufs = r->bufs;
  if (r->recorded_run)
    {
      /* what the real allocator did, and the floor under every allocator:
       * the planners' plans are not settings a user could pick */
      const MlMetrics *m = &r->rows[0].res.metrics;
      MlDocCard *c = ml_doc_card (d, "reserved (recorded)", sz (d, m->peak),
                                  ml_doc_printf (d, "the most the real allocator held (tick %" PRIu64 ")", m->peak_tick));
      ml_doc_attrf (d, &c->attrs, "id", "recorded-peak");
      ml_doc_attrf (d, &c->attrs, "data-bytes", "%" PRIu64, m->peak);
    }
  MlDocCard *c = ml_doc_card (d, r->recorded_run ? "floor (lower bound)" : "lower bound", sz (d, bufs->lower_bound),
                              r->recorded_run
                                ? ml_doc_printf (d, "most bytes live at once (tick %" PRIu64 "): no allocator can reserve less",
                                                 bufs->lower_bound_tick)
                                : ml_doc_printf (d, "most bytes live at once (tick %" PRIu64 "); no plan needs less",
                                                 bufs->lower_bound_tick));
  ml_doc_attrf (d, &c->attrs, "id", "lower-bound");
  ml_doc_attrf (d, &c->attrs, "data-bytes", "%" PRIu64, bufs->lower_bound);
  if (r->recorded_run)
    {
      const MlMetrics *m = &r->rows[0].res.metrics;
      if (!m->frag_unknown)
        ml_doc_card (d, "fragmentation (recorded)", ml_doc_printf (d, "%.0f%%", m->frag_max * 100.0),
                     ml_doc_printf (d, "max; mean %.0f%%, at the peak %.0f%%", m->frag_mean * 100.0, m->frag_at_peak * 100.0));
    }
  else if (r->best >= 0)
    {
      const MlReportRow *b = &r->rows[r->best];
      const MlMetrics *m = &b->res.metrics;
      ml_doc_card (d, "best plan", sz (d, m->peak),
                   ml_doc_printf (d, "%s, %+.1f%% over the lower bound", b->name, m->overhead * 100.0));
      if (m->frag_unknown)
        ml_doc_card (d, "fragmentation (best plan)", "n/a", "the trace records reserved bytes, not which");
      else
        ml_doc_card (d, "fragmentation (best plan)", ml_doc_printf (d, "%.0f%%", m->frag_max * 100.0),
                     ml_doc_printf (d, "max; mean %.0f%%, at the peak %.0f%%", m->frag_mean * 100.0, m->frag_at_peak * 100.0));
    }
  if (r->knobs.capacity)
    {
      size_t fits = 0, ran = 0;
      for (size_t i = 0; i < r->n_rows; i++)
        if (row_ran (&r->rows[i]))
          {
            ran++;
            fits += !r->rows[i].res.plan->oom.hit;
          }
      c = ml_doc_card (d, ml_doc_printf (d, "under %s", sz (d, r->knobs.capacity)), ml_doc_printf (d, "%zu of %zu fit", fits, ran),
                       bufs->lower_bound > r->knobs.capacity ? "the lower bound is over the capacity: nothing can fit"
                                                             : "strategies that fit the capacity");
      c->tone = fits == ran ? ML_DOC_TONE_GOOD : ML_DOC_TONE_BAD;
    }
  if (r->featured >= 0)
    {
      size_t total = ml_issues_count (&r->issues);
      c = ml_doc_card (d, ml_doc_printf (d, "issues (%s)", r->rows[r->featured].name), ml_doc_printf (d, "%zu", total),
                       total ? "conflicts and races, listed below" : "no conflicts, no races");
      c->tone = total ? ML_DOC_TONE_BAD : ML_DOC_TONE_GOOD;
    }
}

static void
section_title (MlDoc *d, const MlReport *r)
{
  const MlBuffers *bufs = r->bufs;
  const MlTrace *t = bufs->trace;
  const char *source = t && t->source ? ml_trace_str (t, t->source) : NULL;
  ml_doc_textf (d, ml_doc_heading (d, 1), "Memory report: %s", base_name (r->trace_path));
  MlDocText *p = ml_doc_para (d, ML_DOC_PARA_LEAD, ML_DOC_TONE_PLAIN);
  ml_doc_textf (d, p, "%zu buffers, %zu events, %zu stream%s, ticks 0 to %" PRIu64 "; source ", bufs->n,
                t ? t->n_events : 0, r->n_streams, plural (r->n_streams), bufs->end_tick);
  ml_doc_code (d, p, source ? source : "?");
  ml_doc_text (d, p, "; file ");
  ml_doc_code (d, p, r->trace_path);

  MlDocValue *root = d->data;
  ml_doc_value_str (d, root, "format", "memlens-report");
  ml_doc_value_u64 (d, root, "version", ML_REPORT_VERSION);
  ml_doc_value_str (d, root, "generator", "memlens " MEMLENS_VERSION);
  MlDocValue *tr = ml_doc_value_object (d, root, "trace");
  ml_doc_value_str (d, tr, "path", r->trace_path);
  ml_doc_value_str (d, tr, "source", source ? source : "");
  ml_doc_value_u64 (d, tr, "events", t ? t->n_events : 0);
  ml_doc_value_u64 (d, tr, "buffers", bufs->n);
  ml_doc_value_u64 (d, tr, "streams", r->n_streams);
  ml_doc_value_u64 (d, tr, "end_tick", bufs->end_tick);
  ml_doc_value_bool (d, tr, "has_times", t && t->has_times);
  ml_doc_value_bool (d, tr, "has_addrs", t && t->has_addrs);
  ml_doc_value_u64 (d, root, "lower_bound", bufs->lower_bound);
  ml_doc_value_u64 (d, root, "lower_bound_tick", bufs->lower_bound_tick);
  ml_doc_value_u64 (d, root, "capacity", r->knobs.capacity);
  value_name (d, root, "best", r, r->best);
  value_name (d, root, "featured", r, r->featured);
}

/* ---- the strategies ----------------------------------------------------------- */

/* The columns of the comparison: what people read (SHOW), the CSV's
 * (DATA, docs/report-schema.md "CSV"), the bar. */
typedef struct {
  int name, peak, peak_tick, lower_bound, bar, overhead, frag_max, frag_mean, frag_at_peak, internal_waste,
      segments, seconds, optimal, oom_tick, oom_request, oom_verdict, capacity, kinds[ML_ISSUE__COUNT], issues, error;
} StrategyCols;

static MlDocTable *
strategy_table (MlDoc *d, const MlReport *r, StrategyCols *c)
{
  enum { S = ML_DOC_COL_SHOW, D = ML_DOC_COL_DATA, R = ML_DOC_COL_RIGHT };
  MlDocTable *t = ml_doc_table (d, "strategies", NULL);
  c->name = ml_doc_column (d, t, "strategy", "strategy", S | D);
  c->peak = ml_doc_column (d, t, "peak", "peak", S | D | R);
  c->peak_tick = ml_doc_column (d, t, NULL, "peak_tick", D);
  c->lower_bound = ml_doc_column (d, t, NULL, "lower_bound", D);
  c->bar = ml_doc_column (d, t, "", NULL, ML_DOC_COL_BAR);
  t->cols[c->bar].note = "The bar's black line is the lower bound.";
  c->overhead = ml_doc_column (d, t, "overhead", "overhead", S | D | R);
  c->frag_max = ml_doc_column (d, t, "frag max", "frag_max", S | D | R);
  c->frag_mean = ml_doc_column (d, t, "frag mean", "frag_mean", S | D | R);
  c->frag_at_peak = ml_doc_column (d, t, "frag at peak", "frag_at_peak", S | D | R);
  c->internal_waste = ml_doc_column (d, t, NULL, "internal_waste", D);
  c->segments = ml_doc_column (d, t, "segments", "segments", S | D | R);
  c->seconds = ml_doc_column (d, t, "time", "seconds", S | D | R);
  c->optimal = ml_doc_column (d, t, NULL, "optimal", D);
  c->oom_tick = ml_doc_column (d, t, NULL, "oom_tick", D);
  c->oom_request = ml_doc_column (d, t, NULL, "oom_request", D);
  c->oom_verdict = ml_doc_column (d, t, NULL, "oom_verdict", D);
  c->capacity = r->knobs.capacity ? ml_doc_column (d, t, ml_doc_printf (d, "under %s", sz (d, r->knobs.capacity)), NULL, S) : -1;
  /* one column per issue kind, named as in JSON with _ for - */
  for (int k = 0; k < ML_ISSUE__COUNT; k++)
    {
      char key[32];
      snprintf (key, sizeof key, "%s", ml_issue_kind_name ((MlIssueKind) k));
      for (char *p = key; *p; p++)
        *p = *p == '-' ? '_' : *p;
      c->kinds[k] = ml_doc_column (d, t, NULL, key, D);
    }
  c->issues = ml_doc_column (d, t, "issues", NULL, S | R);
  c->error = ml_doc_column (d, t, NULL, "error", D);
  return t;
}

static void
strategy_under (MlDoc *d, MlDocRow *row, int col, const MlOom *o)
{
  MlDocCell *c;
  if (!o->hit)
    c = ml_doc_cellf (d, row, col, "fits");
  else if (!o->request)
    c = ml_doc_cellf (d, row, col, "over the capacity");
  else
    c = ml_doc_cellf (d, row, col, "OOM at tick %" PRIu64 ": %s", o->tick, ml_oom_verdict_name (o->verdict));
  c->tone = o->hit ? ML_DOC_TONE_BAD : ML_DOC_TONE_GOOD;
}

/* The comparison row of a plan that was made. */
static void
strategy_row (MlDoc *d, const MlReport *r, const MlReportRow *rw, bool best, uint64_t maxpeak, const StrategyCols *c,
              MlDocRow *row)
{
  const MlResult *res = &rw->res;
  const MlMetrics *m = &res->metrics;
  const MlOom *o = &res->plan->oom;
  MlDocCell *name = ml_doc_cell (d, row, c->name);
  if (best)
    ml_doc_run (d, &name->text, ML_DOC_RUN_BADGE, ML_DOC_TONE_GOOD, "best");
  if (res->plan->optimal)
    ml_doc_run (d, &name->text, ML_DOC_RUN_BADGE, ML_DOC_TONE_GOOD, "optimal");
  ml_doc_attrf (d, &row->attrs, "data-peak", "%" PRIu64, m->peak);
  row->highlight = best;
  cell_size (d, row, c->peak, m->peak);
  ml_doc_rawf (d, ml_doc_cell (d, row, c->peak_tick), "%" PRIu64, m->peak_tick);
  ml_doc_rawf (d, ml_doc_cell (d, row, c->lower_bound), "%" PRIu64, r->bufs->lower_bound);
  cell_bar (d, row, c->bar, m->peak, maxpeak, r->bufs->lower_bound);
  cell_ratio (d, row, c->overhead, true, 2, m->overhead);
  cell_frag (d, row, c->frag_max, m, m->frag_max);
  cell_frag (d, row, c->frag_mean, m, m->frag_mean);
  cell_frag (d, row, c->frag_at_peak, m, m->frag_at_peak);
  ml_doc_rawf (d, ml_doc_cell (d, row, c->internal_waste), "%" PRIu64, m->internal_waste);
  ml_doc_rawf (d, ml_doc_cellf (d, row, c->segments, "%zu", res->plan->n_segments), "%zu", res->plan->n_segments);
  MlDocCell *time = ml_report_row_is_recorded (rw) ? ml_doc_cellf (d, row, c->seconds, "–")
                                                : ml_doc_cellf (d, row, c->seconds, "%.2f ms", res->plan->seconds * 1e3);
  ml_doc_rawf (d, time, "%.6f", res->plan->seconds);
  ml_doc_rawf (d, ml_doc_cell (d, row, c->optimal), "%s", res->plan->optimal ? "true" : "false");
  if (o->hit)
    {
      ml_doc_rawf (d, ml_doc_cell (d, row, c->oom_tick), "%" PRIu64, o->tick);
      ml_doc_rawf (d, ml_doc_cell (d, row, c->oom_request), "%" PRIu64, o->request);
      ml_doc_rawf (d, ml_doc_cell (d, row, c->oom_verdict), "%s", ml_oom_verdict_name (o->verdict));
    }
  if (c->capacity >= 0)
    strategy_under (d, row, c->capacity, o);
  for (int k = 0; k < ML_ISSUE__COUNT; k++)
    ml_doc_rawf (d, ml_doc_cell (d, row, c->kinds[k]), "%zu", rw->issues[k]);
  size_t ni = row_issues (rw);
  ml_doc_cellf (d, row, c->issues, "%zu", ni)->tone = ni ? ML_DOC_TONE_BAD : ML_DOC_TONE_PLAIN;
}

static int
write_result (FILE *fp, const void *row, const void *bufs, MlError *err)
{
  const MlReportRow *rw = row;
  return ml_result_write_json_members (&rw->res, rw->name, bufs, fp, err) < 0 ? ML_EIO : 0;
}

static void
strategy_data (MlDoc *d, const MlReport *r, const MlReportRow *rw, MlDocValue *results)
{
  MlDocValue *obj = ml_doc_value_object (d, results, NULL);
  ml_doc_value_splice (d, obj, write_result, rw, r->bufs);
  if (!row_ran (rw))
    return;
  MlDocValue *counts = ml_doc_value_object (d, obj, "issues");
  for (int k = 0; k < ML_ISSUE__COUNT; k++)
    ml_doc_value_u64 (d, counts, ml_issue_kind_name ((MlIssueKind) k), rw->issues[k]);
}

static void
section_strategies (MlDoc *d, const MlReport *r)
{
  ml_doc_text (d, ml_doc_heading (d, 2), "Strategies");
  StrategyCols c;
  MlDocTable *t = strategy_table (d, r, &c);
  ml_doc_set_csv (d, t);
  uint64_t maxpeak = r->bufs->lower_bound;
  for (size_t i = 0; i < r->n_rows; i++)
    if (row_ran (&r->rows[i]) && r->rows[i].res.metrics.peak > maxpeak)
      maxpeak = r->rows[i].res.metrics.peak;
  MlDocValue *results = ml_doc_value_array (d, d->data, "results");
  for (size_t i = 0; i < r->n_rows; i++)
    {
      const MlReportRow *rw = &r->rows[i];
      MlDocRow *row = ml_doc_row (d, t);
      ml_doc_rawf (d, ml_doc_cellf (d, row, c.name, "%s", rw->name), "%s", rw->name);
      ml_doc_attrf (d, &row->attrs, "data-strategy", "%s", rw->name);
      if (row_ran (rw))
        strategy_row (d, r, rw, (long) i == r->best, maxpeak, &c, row);
      else
        {
          cell_error (d, row, c.peak, rw->res.error);
          ml_doc_rawf (d, ml_doc_cell (d, row, c.error), "%s", rw->res.error);
        }
      strategy_data (d, r, rw, results);
    }
  ml_doc_text (d, &t->note,
               "Peak: the most bytes the plan reserves at once. Overhead: peak over the lower bound. Fragmentation: "
               "1 − largest free block / free bytes within the reserved space.");
  if (r->recorded_run)
    ml_doc_text (d, &t->note,
                 " The recorded row is what the real allocator did; the offline planners know the whole run in "
                 "advance: their peak shows how near the floor a plan can come, not a setting the program could pick.");
}

/* A capacity proven infeasible: the buffers that alone cannot fit. */
static void
section_infeasible (MlDoc *d, const MlReport *r, const MlReportRow *rw)
{
  const MlInfeasible *inf = &rw->res.infeasible;
  const MlBuffers *bufs = r->bufs;
  char why[512], label[256];
  ml_doc_textf (d, ml_doc_heading (d, 3), "Why %s finds no plan under %s", rw->name, sz (d, inf->capacity));
  ml_doc_textf (d, ml_doc_para (d, ML_DOC_PARA_NOTE, ML_DOC_TONE_PLAIN), "%s.", ml_infeasible_describe (inf, bufs, false, why, sizeof why));
  MlDocTable *t = ml_doc_table (d, NULL, "infeasible");
  int id = ml_doc_column (d, t, "buffer", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  int name = ml_doc_column (d, t, "name", NULL, ML_DOC_COL_SHOW);
  int life = ml_doc_column (d, t, "lifetime", NULL, ML_DOC_COL_SHOW);
  int size = ml_doc_column (d, t, "size", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  for (size_t k = 0; k < inf->n && k < SHOW_INFEASIBLE; k++)
    {
      const MlBuffer *b = &bufs->buf[inf->buffers[k]];
      MlDocRow *row = ml_doc_row (d, t);
      ml_doc_cellf (d, row, id, "%" PRIu64, b->id);
      ml_doc_cellf (d, row, name, "%s", ml_report_buffer_label (bufs, inf->buffers[k], label, sizeof label));
      ml_doc_cellf (d, row, life, "[%" PRIu64 ", %" PRIu64 ")", b->start, b->end);
      ml_doc_cellf (d, row, size, "%s", sz (d, b->rsize));
    }
  if (inf->n > SHOW_INFEASIBLE)
    ml_doc_textf (d, ml_doc_para (d, ML_DOC_PARA_NOTE, ML_DOC_TONE_PLAIN), "... %zu more buffers (all in the JSON report).",
                  inf->n - SHOW_INFEASIBLE);
}

/* ---- a knob over values ------------------------------------------------------- */

static int
write_sweep (FILE *fp, const void *sweep, const void *bufs, MlError *err)
{
  return ml_knob_sweep_write_json (fp, bufs, sweep, err);
}

static void
sweep_row (MlDoc *d, MlDocTable *t, const MlKnobSweepRow *sr, uint64_t top)
{
  enum { VALUE, STRATEGY, PEAK, BAR, OVERHEAD, FRAG_MAX, FRAG_AT_PEAK, OOM, RETRIES };
  MlDocRow *row = ml_doc_row (d, t);
  ml_doc_cellf (d, row, VALUE, "%s", sr->value);
  ml_doc_cellf (d, row, STRATEGY, "%s", sr->strategy->name);
  if (sr->status < 0)
    {
      cell_error (d, row, PEAK, sr->error);
      return;
    }
  const MlMetrics *m = &sr->metrics;
  cell_size (d, row, PEAK, m->peak);
  cell_bar (d, row, BAR, m->peak, top, sr->lower_bound);
  cell_ratio (d, row, OVERHEAD, true, 2, m->overhead);
  cell_frag (d, row, FRAG_MAX, m, m->frag_max);
  cell_frag (d, row, FRAG_AT_PEAK, m, m->frag_at_peak);
  if (sr->oom.hit)
    ml_doc_cellf (d, row, OOM, "tick %" PRIu64 ": %s", sr->oom.tick, ml_oom_verdict_name (sr->oom.verdict))->tone = ML_DOC_TONE_BAD;
  else
    ml_doc_cellf (d, row, OOM, "–");
  ml_doc_cellf (d, row, RETRIES, "%" PRIu64, sr->retries);
}

static void
section_sweep (MlDoc *d, const MlReport *r)
{
  const MlKnobSweep *sw = r->sweep;
  if (!sw)
    return;
  size_t n = sw->n_values * sw->n_strategies;
  uint64_t top = r->bufs->lower_bound;
  for (size_t k = 0; k < n; k++)
    if (sw->rows[k].status == 0 && sw->rows[k].metrics.peak > top)
      top = sw->rows[k].metrics.peak;
  ml_doc_textf (d, ml_doc_heading (d, 2), "Sweep of %s%s", sw->is_option ? "the option " : "", sw->knob);
  MlDocTable *t = ml_doc_table (d, "sweep", NULL);
  ml_doc_column (d, t, sw->knob, NULL, ML_DOC_COL_SHOW);
  ml_doc_column (d, t, "strategy", NULL, ML_DOC_COL_SHOW);
  ml_doc_column (d, t, "peak", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "", NULL, ML_DOC_COL_BAR);
  ml_doc_column (d, t, "overhead", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "frag max", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "frag at peak", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "OOM", NULL, ML_DOC_COL_SHOW);
  ml_doc_column (d, t, "retries", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  for (size_t k = 0; k < n; k++)
    sweep_row (d, t, &sw->rows[k], top);
  ml_doc_text (d, &t->note, "Every strategy once per value of the knob, everything else the same.");
  ml_doc_value_writer (d, d->data, "sweep", write_sweep, sw, r->bufs);
}

/* ---- pictures ------------------------------------------------------------------ */

static void
figure (MlDoc *d, const MlReport *r, long row, const MlIssues *issues, const char *prefix)
{
  MlDocFigure *f = ml_doc_figure (d);
  f->bufs = r->bufs;
  f->plan = r->rows[row].res.plan;
  f->issues = issues;
  f->name = ml_doc_strdup (d, base_name (r->trace_path));
  f->view = ML_DOC_FIGURE_LAYOUT;
  f->width = 1600;
  f->height = 900;
  f->prefix = prefix;
  ml_doc_textf (d, &f->caption,
                "The %s plan: address × time (one rectangle per buffer), live and reserved bytes, fragmentation. "
                "Peak points are marked; issues and the OOM point are red.",
                r->rows[row].name);
}

static void
section_timeline (MlDoc *d, const MlReport *r)
{
  if (r->featured < 0)
    return;
  ml_doc_text (d, ml_doc_heading (d, 2), "Timeline");
  figure (d, r, r->featured, &r->issues, "f1");
  if (r->best >= 0 && r->best != r->featured)
    figure (d, r, r->best, NULL, "f2");
}

/* ---- out of memory -------------------------------------------------------------- */

static int
write_diagnosis (FILE *fp, const void *diag, const void *bufs, MlError *err)
{
  return ml_diagnosis_write_json (diag, bufs, fp, err);
}

/* A table of call sites and the bytes they hold. */
static MlDocTable *
site_table (MlDoc *d, const MlBuffers *bufs, const char *id, const char *what, const char *bytes, const MlSiteBlame *sites,
            size_t n)
{
  MlDocTable *t = ml_doc_table (d, id, NULL);
  ml_doc_column (d, t, what, NULL, ML_DOC_COL_SHOW);
  ml_doc_column (d, t, bytes, NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "buffers", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  for (size_t i = 0; i < n && i < SHOW_SITES; i++)
    {
      MlDocRow *row = ml_doc_row (d, t);
      ml_doc_cellf (d, row, 0, "%s", ml_diagnosis_site_label (bufs, sites[i].site));
      ml_doc_cellf (d, row, 1, "%s", sz (d, sites[i].bytes));
      ml_doc_cellf (d, row, 2, "%zu", sites[i].count);
    }
  return t;
}

/* The OOM the trace itself recorded. */
static void
oom_recorded (MlDoc *d, const MlBuffers *bufs, const MlDiagnosis *dg, bool sites)
{
  char why[256];
  MlDocText *p = ml_doc_para (d, ML_DOC_PARA_TEXT, ML_DOC_TONE_PLAIN);
  char sl[ML_STREAM_LABEL_MAX];
  ml_doc_textf (d, p, "The trace records an OOM at tick %" PRIu64 " (entry %" PRIu64 ") on stream %s: a %s request with %s free on the device",
                dg->rec_tick, dg->rec_index, ml_trace_stream_label (bufs->trace, dg->rec_stream, sl),
                sz (d, dg->rec_request), sz (d, dg->rec_device_free));
  if (dg->rec_have_plan)
    {
      ml_doc_textf (d, p, "; reserved %s, allocated %s, cached free %s (largest block %s). Verdict: ", sz (d, dg->rec_reserved),
                    sz (d, dg->rec_live), sz (d, dg->rec_cached_free), sz (d, dg->rec_largest_cached));
      ml_doc_run (d, p, ML_DOC_RUN_STRONG, ML_DOC_TONE_BAD, ml_oom_verdict_name (dg->rec_verdict));
      ml_doc_textf (d, p, " — %s", ml_diagnosis_recorded_reason (dg, why, sizeof why));
    }
  ml_doc_text (d, p, ".");
  const char *settings = ml_trace_allocator_settings (bufs->trace);
  if (settings)
    ml_doc_textf (d, ml_doc_para (d, ML_DOC_PARA_TEXT, ML_DOC_TONE_PLAIN), "Allocator settings: %s.", settings);
  if (bufs->trace && dg->rec_stack && dg->rec_stack < bufs->trace->n_stacks)
    {
      char frames[1024];
      p = ml_doc_para (d, ML_DOC_PARA_TEXT, ML_DOC_TONE_PLAIN);
      ml_doc_text (d, p, "Called from ");
      ml_doc_code (d, p, ml_diagnosis_user_frames (bufs->trace, dg->rec_stack, 3, frames, sizeof frames));
      ml_doc_text (d, p, ".");
    }
  if (sites && dg->rec_n_sites)
    site_table (d, bufs, NULL, "live at the OOM, by call site", "bytes", dg->rec_sites, dg->rec_n_sites);
}

/* The alignments the sizes could have been rounded to. */
static void
oom_alignment (MlDoc *d, const MlBuffers *bufs, const MlDiagnosis *dg)
{
  bool at_oom = dg->oom.hit && dg->oom.request;
  ml_doc_text (d, ml_doc_heading (d, 3), "Alignment");
  MlDocTable *t = ml_doc_table (d, NULL, NULL);
  ml_doc_column (d, t, "alignment", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "lower bound", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  if (at_oom)
    ml_doc_column (d, t, "live at the OOM", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  for (size_t i = 0; i < dg->n_what_if; i++)
    {
      const MlAlignWhatIf *w = &dg->what_if[i];
      MlDocRow *row = ml_doc_row (d, t);
      ml_doc_cellf (d, row, 0, "%" PRIu64 "%s", w->align, w->align == bufs->align ? " (used)" : "");
      ml_doc_cellf (d, row, 1, "%s", sz (d, w->lower_bound));
      if (at_oom)
        ml_doc_cellf (d, row, 2, "%s", sz (d, w->live_at_oom));
    }
}

static void
section_oom (MlDoc *d, const MlReport *r)
{
  if (!r->have_diag)
    {
      ml_doc_value_null (d, d->data, "diagnosis");
      return;
    }
  const MlDiagnosis *dg = &r->diag;
  const MlBuffers *bufs = r->bufs;
  /* a run of a real allocator told its recorded OOM on the first screen */
  ml_doc_text (d, ml_doc_heading (d, 2), r->recorded_run ? "Out of memory: details" : "Out of memory");
  if (dg->recorded && !r->recorded_run)
    oom_recorded (d, bufs, dg, true);
  if (dg->capacity)
    {
      char line[512], why[256];
      MlDocText *p = ml_doc_para (d, ML_DOC_PARA_TEXT, ML_DOC_TONE_PLAIN);
      ml_doc_text (d, p, ml_diagnosis_headline (dg, line, sizeof line));
      if (dg->oom.hit && dg->oom.request)
        {
          ml_doc_text (d, p, " Verdict: ");
          ml_doc_run (d, p, ML_DOC_RUN_STRONG, ML_DOC_TONE_BAD, ml_oom_verdict_name (dg->oom.verdict));
          ml_doc_textf (d, p, " — %s (live %s, reserved %s).", ml_oom_reason (&dg->oom, why, sizeof why), sz (d, dg->oom.live),
                        sz (d, dg->oom.reserved));
        }
    }
  if (dg->oom.hit && dg->oom.request && dg->oom.buffer < bufs->n && dg->n_sites)
    site_table (d, bufs, NULL, "call site", "live bytes", dg->sites, dg->n_sites);
  oom_alignment (d, bufs, dg);
  ml_doc_value_writer (d, d->data, "diagnosis", write_diagnosis, dg, bufs);
}

/* ---- the first screen of a run of a real allocator -------------------------- */

/* The recorded OOM in numbers: the request, the device's free bytes, the
 * allocator's cached free bytes and the shortfall: request - (device
 * free + cached free), the bytes that were missing however the cache
 * had been laid out (none: the bytes were there, in pieces). */
static void
oom_cards (MlDoc *d, const MlBuffers *bufs, const MlDiagnosis *dg)
{
  const MlTrace *t = bufs->trace;
  const char *where = t && t->n_devices ? ml_doc_printf (d, "device %u, ", t->device) : "";
  MlDocCard *c = ml_doc_card (d, "request refused", sz (d, dg->rec_request),
                              ml_doc_printf (d, "%sstream %s, tick %" PRIu64, where,
                                             ml_trace_stream_label (t, dg->rec_stream, (char[ML_STREAM_LABEL_MAX]) { 0 }),
                                             dg->rec_tick));
  c->tone = ML_DOC_TONE_BAD;
  ml_doc_attrf (d, &c->attrs, "id", "oom-request");
  ml_doc_attrf (d, &c->attrs, "data-bytes", "%" PRIu64, dg->rec_request);
  c = ml_doc_card (d, "device free", sz (d, dg->rec_device_free), "what the device still had outside the cache");
  ml_doc_attrf (d, &c->attrs, "id", "oom-device-free");
  ml_doc_attrf (d, &c->attrs, "data-bytes", "%" PRIu64, dg->rec_device_free);
  if (!dg->rec_have_plan)
    return;
  c = ml_doc_card (d, "cached free", sz (d, dg->rec_cached_free),
                   ml_doc_printf (d, "reserved %s, allocated %s; largest block %s", sz (d, dg->rec_reserved),
                                  sz (d, dg->rec_live), sz (d, dg->rec_largest_cached)));
  ml_doc_attrf (d, &c->attrs, "id", "oom-cached-free");
  ml_doc_attrf (d, &c->attrs, "data-bytes", "%" PRIu64, dg->rec_cached_free);
  uint64_t have = dg->rec_device_free + dg->rec_cached_free;
  uint64_t short_by = dg->rec_request > have ? dg->rec_request - have : 0;
  c = ml_doc_card (d, "shortfall", short_by ? sz (d, short_by) : "none",
                   short_by ? "request − (device free + cached free): bytes that were not there"
                            : "device free + cached free would hold the request: it failed on fragmentation");
  c->tone = ML_DOC_TONE_BAD;
  ml_doc_attrf (d, &c->attrs, "id", "oom-shortfall");
  ml_doc_attrf (d, &c->attrs, "data-bytes", "%" PRIu64, short_by);
}

/* Who holds the memory: the live bytes by call site, at the recorded OOM
 * when there is one, else at the peak. */
static void
section_holders (MlDoc *d, const MlReport *r)
{
  const MlDiagnosis *dg = &r->diag;
  bool at_oom = r->have_diag && dg->recorded && dg->rec_n_sites;
  const MlSiteBlame *sites = at_oom ? dg->rec_sites : r->holders;
  size_t n = at_oom ? dg->rec_n_sites : r->n_holders;
  size_t live = at_oom ? dg->rec_n_live_total : r->n_holders_live;
  uint64_t tick = at_oom ? dg->rec_tick : r->bufs->lower_bound_tick, bytes = 0;
  for (size_t i = 0; i < n; i++)
    bytes += sites[i].bytes;
  ml_doc_text (d, ml_doc_heading (d, 2), "Who holds the memory");
  ml_doc_textf (d, ml_doc_para (d, ML_DOC_PARA_TEXT, ML_DOC_TONE_PLAIN),
                "At the %s (tick %" PRIu64 "): %s live in %zu buffer%s from %zu call site%s, largest first.",
                at_oom ? "OOM" : "peak", tick, sz (d, bytes), live, plural (live), n, plural (n));
  MlDocTable *t = site_table (d, r->bufs, "holders", "call site", "bytes", sites, n);
  if (n > SHOW_SITES)
    row_more (d, t, ml_doc_printf (d, "… and %zu more call sites (all in the JSON report)", n - SHOW_SITES));

  MlDocValue *obj = ml_doc_value_object (d, d->data, "holders");
  ml_doc_value_str (d, obj, "at", at_oom ? "oom" : "peak");
  ml_doc_value_u64 (d, obj, "tick", tick);
  ml_doc_value_u64 (d, obj, "bytes", bytes);
  ml_doc_value_u64 (d, obj, "buffers", live);
  MlDocValue *arr = ml_doc_value_array (d, obj, "sites");
  for (size_t i = 0; i < n; i++)
    {
      MlDocValue *o = ml_doc_value_object (d, arr, NULL);
      ml_doc_value_str (d, o, "site", ml_diagnosis_site_label (r->bufs, sites[i].site));
      ml_doc_value_u64 (d, o, "bytes", sites[i].bytes);
      ml_doc_value_u64 (d, o, "buffers", sites[i].count);
    }
}

/* What its reader came for, first: the recorded OOM (request, device
 * free, shortfall, verdict), the recorded peak against the floor no
 * allocator goes below, and who holds the memory. The allocator
 * settings that would have fitted (the answer of `tune`, issue 27) go
 * between the OOM and the holders once the report carries them. */
static void
section_first_screen (MlDoc *d, const MlReport *r)
{
  const MlDiagnosis *dg = &r->diag;
  if (r->have_diag && dg->recorded)
    {
      ml_doc_text (d, ml_doc_heading (d, 2), "Out of memory");
      oom_cards (d, r->bufs, dg);
      oom_recorded (d, r->bufs, dg, false);
      ml_doc_text (d, ml_doc_heading (d, 2), "The run");
    }
  cards (d, r);
  section_holders (d, r);
}

/* ---- conflicts and races -------------------------------------------------------- */

static void
issue_data (MlDoc *d, const MlBuffers *bufs, MlDocValue *items, const MlIssue *is)
{
  MlDocValue *o = ml_doc_value_object (d, items, NULL);
  ml_doc_value_str (d, o, "kind", ml_issue_kind_name (is->kind));
  ml_doc_value_u64 (d, o, "a", bufs->buf[is->a].id);
  ml_doc_value_u64 (d, o, "b", bufs->buf[is->b].id);
  ml_doc_value_u64 (d, o, "tick", is->tick);
  ml_doc_value_u64 (d, o, "tick_b", is->tick_b);
  ml_doc_value_u64 (d, o, "segment", is->segment);
  ml_doc_value_u64 (d, o, "offset", is->offset);
  ml_doc_value_u64 (d, o, "bytes", is->bytes);
  ml_doc_value_u64 (d, o, "stream_a", ml_trace_stream_id (bufs->trace, is->stream_a));
  ml_doc_value_u64 (d, o, "stream_b", ml_trace_stream_id (bufs->trace, is->stream_b));
  ml_doc_value_str (d, o, "why", is->why);
}

static void
issue_table (MlDoc *d, const MlReport *r, size_t total)
{
  enum { KIND, TICK, BYTES, STREAMS, WHY };
  MlDocText *p = ml_doc_para (d, ML_DOC_PARA_TEXT, ML_DOC_TONE_PLAIN);
  ml_doc_textf (d, p, "The %s plan: ", r->rows[r->featured].name);
  ml_doc_run (d, p, ML_DOC_RUN_STRONG, ML_DOC_TONE_BAD, ml_doc_printf (d, "%zu issue%s", total, plural (total)));
  ml_doc_text (d, p, " (see docs/races.md).");
  MlDocTable *t = ml_doc_table (d, "issues", NULL);
  ml_doc_column (d, t, "kind", NULL, ML_DOC_COL_SHOW);
  ml_doc_column (d, t, "tick", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "bytes", NULL, ML_DOC_COL_SHOW | ML_DOC_COL_RIGHT);
  ml_doc_column (d, t, "streams", NULL, ML_DOC_COL_SHOW);
  ml_doc_column (d, t, "why", NULL, ML_DOC_COL_SHOW);
  for (size_t i = 0; i < r->issues.n && i < SHOW_ISSUES; i++)
    {
      const MlIssue *is = &r->issues.items[i];
      MlDocRow *row = ml_doc_row (d, t);
      ml_doc_cellf (d, row, KIND, "%s", ml_issue_kind_name (is->kind));
      ml_doc_cellf (d, row, TICK, "%" PRIu64, is->tick);
      ml_doc_cellf (d, row, BYTES, "%s", sz (d, is->bytes));
      char la[ML_STREAM_LABEL_MAX], lb[ML_STREAM_LABEL_MAX];
      const MlTrace *tr = r->bufs ? r->bufs->trace : NULL;
      ml_doc_cellf (d, row, STREAMS, "%s → %s", tr ? ml_trace_stream_label (tr, is->stream_a, la) : "?",
                    tr ? ml_trace_stream_label (tr, is->stream_b, lb) : "?");
      ml_doc_cellf (d, row, WHY, "%s", is->why)->tone = ML_DOC_TONE_MUTED;
    }
  if (total > SHOW_ISSUES)
    row_more (d, t, ml_doc_printf (d, "… %zu more", total - SHOW_ISSUES));
}

static void
section_issues (MlDoc *d, const MlReport *r)
{
  size_t total = ml_issues_count (&r->issues);
  ml_doc_text (d, ml_doc_heading (d, 2), "Issues");
  if (r->featured < 0)
    ml_doc_text (d, ml_doc_para (d, ML_DOC_PARA_TEXT, ML_DOC_TONE_PLAIN), "No plan to check.");
  else if (!total)
    ml_doc_textf (d, ml_doc_para (d, ML_DOC_PARA_TEXT, ML_DOC_TONE_GOOD), "The %s plan has no conflicts and no races.",
                  r->rows[r->featured].name);
  else
    issue_table (d, r, total);

  MlDocValue *obj = ml_doc_value_object (d, d->data, "issues");
  value_name (d, obj, "plan", r, r->featured);
  MlDocValue *counts = ml_doc_value_object (d, obj, "counts");
  for (int k = 0; k < ML_ISSUE__COUNT; k++)
    ml_doc_value_u64 (d, counts, ml_issue_kind_name ((MlIssueKind) k), r->issues.total[k]);
  MlDocValue *items = ml_doc_value_array (d, obj, "items");
  for (size_t i = 0; i < r->issues.n; i++)
    issue_data (d, r->bufs, items, &r->issues.items[i]);
}

/* ---- the knobs -------------------------------------------------------------- */

static void
knob (MlDoc *d, MlDocTable *t, const char *name, const char *value)
{
  MlDocRow *row = ml_doc_row (d, t);
  ml_doc_cellf (d, row, 0, "%s", name);
  ml_doc_cellf (d, row, 1, "%s", value);
}

static void
section_knobs (MlDoc *d, const MlReport *r)
{
  const MlKnobs *k = &r->knobs;
  ml_doc_text (d, ml_doc_heading (d, 2), "Knobs");
  MlDocTable *t = ml_doc_table (d, NULL, NULL);
  t->no_header = true;
  ml_doc_column (d, t, "knob", NULL, ML_DOC_COL_SHOW);
  ml_doc_column (d, t, "value", NULL, ML_DOC_COL_SHOW);
  knob (d, t, "alignment", ml_doc_printf (d, "%" PRIu64 " bytes", r->bufs->align));
  knob (d, t, "capacity", k->capacity ? sz (d, k->capacity) : "none");
  knob (d, t, "pool chunk", sz (d, k->chunk));
  knob (d, t, "retries", ml_doc_printf (d, "%u", k->retries));
  knob (d, t, "seed", ml_doc_printf (d, "%" PRIu64, k->seed));
  knob (d, t, "time limit", ml_doc_printf (d, "%.1f s (0: each strategy's default)", k->time_limit));
  knob (d, t, "options", k->options ? k->options : "none");

  MlDocValue *obj = ml_doc_value_object (d, d->data, "knobs");
  ml_doc_value_u64 (d, obj, "alignment", r->bufs->align);
  ml_doc_value_u64 (d, obj, "capacity", k->capacity);
  ml_doc_value_u64 (d, obj, "chunk", k->chunk);
  ml_doc_value_num (d, obj, "time_limit", k->time_limit, 3);
  ml_doc_value_u64 (d, obj, "retries", k->retries);
  ml_doc_value_u64 (d, obj, "seed", k->seed);
  ml_doc_value_str (d, obj, "options", k->options);
}

/* ---- the document --------------------------------------------------------------- */

int
ml_report_document (const MlReport *r, MlDoc **out, MlError *err)
{
  MlDoc *d = ml_doc_new (NULL, "memlens " MEMLENS_VERSION);
  if (!d)
    return ml_error_set (err, ML_ENOMEM, "out of memory for the report");
  d->title = ml_doc_printf (d, "memlens report: %s", base_name (r->trace_path));
  /* the JSON's members in the order of docs/report-schema.md */
  static const char *const schema[] = {
    "format", "version", "generator", "trace", "knobs", "lower_bound", "lower_bound_tick", "capacity",
    "best", "featured", "holders", "results", "peaks", "iterations", "issues", "diagnosis", "sweep", "tune",
  };
  for (size_t i = 0; i < sizeof schema / sizeof *schema; i++)
    ml_doc_value_absent (d, d->data, schema[i]);
  /* the sections in reading order */
  section_title (d, r);
  /* a run of a real allocator leads with what happened; a planning
   * instance with the strategies */
  if (r->recorded_run)
    section_first_screen (d, r);
  else
    cards (d, r);
  section_strategies (d, r);
  for (size_t i = 0; i < r->n_rows; i++)
    if (r->rows[i].res.infeasible.n)
      section_infeasible (d, r, &r->rows[i]);
  section_sweep (d, r);
  section_timeline (d, r);
  _ml_report_section_peaks (d, r);
  section_oom (d, r);
  _ml_report_section_tune (d, r);
  section_issues (d, r);
  section_knobs (d, r);
  ml_doc_textf (d, &d->footer, "memlens %s · report format %d · built in %.2f s", MEMLENS_VERSION, ML_REPORT_VERSION,
                r->seconds);
  int rc = ml_doc_status (d, err);
  if (rc < 0)
    {
      ml_doc_free (d);
      return rc;
    }
  *out = d;
  return 0;
}
