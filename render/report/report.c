#include "render/report/report.h"

#include "sim/analysis/races.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/io.h"
#include "sim/base/units.h"

const char *
ml_report_buffer_label (const MlBuffers *bufs, uint32_t i, char *buf, size_t len)
{
  const MlBuffer *b = &bufs->buf[i];
  const MlTrace *t = bufs->trace;
  const char *n = t && b->name ? ml_trace_str (t, b->name) : NULL;
  if ((!n || !*n) && t && b->stack && b->stack < t->n_stacks && t->stacks[b->stack].site)
    n = ml_trace_str (t, t->stacks[b->stack].site);
  if (n && *n)
    snprintf (buf, len, "%s", n);
  else
    snprintf (buf, len, "#%" PRIu64, b->id);
  return buf;
}

static int
count_issues (const MlBuffers *bufs, MlReportRow *row, MlIssues *keep, MlError *err)
{
  MlIssues is;
  ml_issues_init (&is);
  is.max_kept = keep ? 200 : 1;
  int rc = ml_check_plan (bufs, row->res.plan, &is, err);
  if (rc == 0)
    rc = ml_check_races (bufs, row->res.plan, &is, err);
  if (rc == 0)
    for (int k = 0; k < ML_ISSUE__COUNT; k++)
      row->issues[k] = is.total[k];
  if (rc == 0 && keep)
    {
      ml_issues_clear (keep);
      *keep = is;
    }
  else
    ml_issues_clear (&is);
  return rc;
}

static bool
row_ran (const MlReportRow *row)
{
  return row->res.status == 0 && row->res.plan;
}

/* Runs @lineup (NULL-terminated) into rows; a strategy that fails gets a
 * row with its error. */
static int
run_lineup (MlReport *r, const MlStrategy *const *lineup, size_t n, MlError *err)
{
  r->rows = calloc (n + 1, sizeof *r->rows);
  if (!r->rows)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++)
    {
      MlReportRow *row = &r->rows[r->n_rows];
      row->name = strdup (lineup[i]->name);
      if (!row->name)
        return ml_error_set (err, ML_ENOMEM, "out of memory");
      r->n_rows++;
      int rc = ml_sim_evaluate (r->bufs, lineup[i], &r->knobs, &row->res, err);
      if (rc < 0)
        return rc;
    }
  bool have_rec = n && (lineup[0]->flags & ML_STRATEGY_RECORDED);
  if (have_rec && row_ran (&r->rows[0]))
    {
      /* the recorded plan failed where the real allocator did */
      int rc = ml_recorded_oom_apply (r->bufs, r->rows[0].res.plan, err);
      if (rc < 0)
        return rc;
    }
  return 0;
}

/* The row with the smallest peak; ties go to a strategy rather than the
 * recorded run. -1 when no plan was made. */
static long
pick_best (const MlReport *r)
{
  long best = -1;
  for (size_t i = 0; i < r->n_rows; i++)
    {
      const MlReportRow *row = &r->rows[i];
      if (!row_ran (row))
        continue;
      uint64_t peak = row->res.metrics.peak;
      if (best < 0 || peak < r->rows[best].res.metrics.peak
          || (peak == r->rows[best].res.metrics.peak && ml_report_row_is_recorded (&r->rows[best])))
        best = (long) i;
    }
  return best;
}

/* The OOM diagnosis: of the first plan that fails a request, else of the
 * featured one; only under a capacity or for a recorded OOM. */
/* The five highest peak groups, each blamed at its level's first tick
 * (ten buffers). */
static int
group_peaks (MlReport *r, const MlBuffers *bufs, MlError *err)
{
  int rc = ml_peak_groups_find (bufs, 5, &r->groups, err);
  if (rc < 0)
    return rc;
  r->peaks.peaks = calloc (r->groups.n ? r->groups.n : 1, sizeof *r->peaks.peaks);
  if (!r->peaks.peaks)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  for (size_t i = 0; i < r->groups.n; i++, r->peaks.n++)
    if ((rc = ml_peak_blame (bufs, r->groups.groups[i].top_tick, 10, &r->peaks.peaks[i], err)) < 0)
      return rc;
  return 0;
}

static int
diagnose (MlReport *r, MlError *err)
{
  const MlBuffers *bufs = r->bufs;
  bool recorded_oom = false;
  if (bufs->trace)
    for (size_t i = 0; i < bufs->trace->n_events && !recorded_oom; i++)
      recorded_oom = bufs->trace->events[i].kind == ML_EV_OOM;
  long dg = r->featured;
  for (size_t i = 0; i < r->n_rows; i++)
    {
      const MlReportRow *row = &r->rows[i];
      if (row_ran (row) && row->res.plan->oom.hit && row->res.plan->oom.request && row->res.plan->oom.buffer < bufs->n)
        {
          dg = (long) i;
          break;
        }
    }
  if (dg < 0 || !(r->knobs.capacity || recorded_oom))
    return 0;
  int rc = ml_diagnose (bufs, r->rows[dg].res.plan, r->knobs.capacity, NULL, &r->knobs, NULL, &r->diag, err);
  if (rc == 0)
    r->have_diag = true;
  return rc;
}

/* A PyTorch snapshot's allocator settings against the default grid
 * (strategies/caching-tune.h); a failure is kept as the section's text. */
static void
tune (MlReport *r)
{
  const MlTrace *t = r->bufs->trace;
  const char *source = t ? ml_trace_str (t, t->source) : NULL;
  if (!source || strcmp (source, "pytorch-snapshot") != 0)
    return;
  MlTuneOpts o = { .capacity = r->knobs.capacity, .jobs = 1, .curves = true };
  MlError err = { 0 };
  if (ml_tune_run (t, &o, &r->tune, &err) < 0)
    snprintf (r->tune_error, sizeof r->tune_error, "%s", err.msg);
}

int
ml_report_build (const char *trace_path, const MlBuffers *bufs, const MlStrategy *const *strategies,
                 const MlKnobs *knobs, MlReport **out, MlError *err)
{
  double t0 = ml_now ();
  MlReport *r = calloc (1, sizeof *r);
  /* the real allocator's layout first, when the trace has one */
  const MlStrategy **lineup = ml_sim_lineup (bufs, strategies);
  if (r)
    r->trace_path = strdup (trace_path ? trace_path : "");
  if (!r || !lineup || !r->trace_path)
    {
      free (lineup);
      ml_report_free (r);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  r->bufs = bufs;
  r->knobs = *knobs;
  r->featured = r->best = -1;
  ml_issues_init (&r->issues);
  size_t n = 0;
  while (lineup[n])
    n++;
  int rc = run_lineup (r, lineup, n, err);
  bool have_rec = n && (lineup[0]->flags & ML_STRATEGY_RECORDED);
  free (lineup);
  if (rc < 0)
    goto fail;
  r->best = pick_best (r);
  r->featured = have_rec ? 0 : r->best;
  for (size_t i = 0; i < r->n_rows; i++)
    if (row_ran (&r->rows[i]) && (rc = count_issues (bufs, &r->rows[i], (long) i == r->featured ? &r->issues : NULL, err)) < 0)
      goto fail;
  if ((rc = group_peaks (r, bufs, err)) < 0 || (rc = diagnose (r, err)) < 0)
    goto fail;
  r->recorded_run = have_rec && r->n_rows && row_ran (&r->rows[0]);
  if (r->recorded_run
      && (rc = ml_site_blame_at (bufs, bufs->lower_bound_tick, &r->holders, &r->n_holders, &r->n_holders_live, err)) < 0)
    goto fail;
  tune (r);
  r->n_streams = ml_buffers_count_streams (bufs);
  r->seconds = ml_now () - t0;
  *out = r;
  return 0;
fail:
  ml_report_free (r);
  return rc;
}

void
ml_report_free (MlReport *r)
{
  if (!r)
    return;
  for (size_t i = 0; i < r->n_rows; i++)
    {
      free (r->rows[i].name);
      ml_result_clear (&r->rows[i].res);
    }
  free (r->rows);
  free (r->trace_path);
  ml_peaks_free (&r->peaks);
  ml_peak_groups_free (&r->groups);
  ml_issues_clear (&r->issues);
  if (r->have_diag)
    ml_diagnosis_clear (&r->diag);
  ml_knob_sweep_free (r->sweep);
  free (r->holders);
  ml_tune_free (r->tune);
  free (r);
}

int
ml_report_write (const MlReport *r, const char *path, MlError *err)
{
  MlDocWriter write = ml_doc_text_writer (path);
  if (!write)
    return ml_error_set (err, ML_EUSAGE, "%s: write the report as .json, .md or .csv (or .html with the renderer)", path);
  MlDoc *doc = NULL;
  int rc = ml_report_document (r, &doc, err);
  if (rc == 0)
    rc = ml_doc_save (doc, path, write, NULL, err);
  ml_doc_free (doc);
  return rc;
}
