#include "render/report/report.h"

#include "sim/analysis/races.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/io.h"
#include "sim/base/jsonutil.h"
#include "sim/base/u64map.h"
#include "sim/base/units.h"

#ifndef MEMLENS_VERSION
#define MEMLENS_VERSION "0.1"
#endif

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

static const char *
site_label (const MlBuffers *bufs, uint32_t i)
{
  const MlBuffer *b = &bufs->buf[i];
  const MlTrace *t = bufs->trace;
  if (t && b->stack && b->stack < t->n_stacks && t->stacks[b->stack].site)
    return ml_trace_str (t, t->stacks[b->stack].site);
  return NULL;
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

int
ml_report_build (const char *trace_path, const MlBuffers *bufs, const MlStrategy *const *strategies,
                 const MlKnobs *knobs, MlReport **out, MlError *err)
{
  double t0 = ml_now ();
  /* the real allocator's layout first, when the trace has one */
  const MlStrategy **lineup = ml_sim_lineup (bufs, strategies);
  size_t n = 0;
  while (lineup && lineup[n])
    n++;
  MlReport *r = lineup ? calloc (1, sizeof *r) : NULL;
  if (!r)
    {
      free (lineup);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  r->bufs = bufs;
  r->knobs = *knobs;
  r->featured = r->best = -1;
  ml_issues_init (&r->issues);
  r->trace_path = strdup (trace_path ? trace_path : "");
  r->rows = calloc (n + 1, sizeof *r->rows);
  int rc = 0;
  if (!r->trace_path || !r->rows)
    {
      rc = ml_error_set (err, ML_ENOMEM, "out of memory");
      goto fail;
    }
  for (size_t i = 0; i < n; i++)
    {
      MlReportRow *row = &r->rows[r->n_rows];
      row->name = strdup (lineup[i]->name);
      if (!row->name)
        {
          rc = ml_error_set (err, ML_ENOMEM, "out of memory");
          goto fail;
        }
      r->n_rows++;
      if ((rc = ml_sim_evaluate (bufs, lineup[i], knobs, &row->res, err)) < 0)
        goto fail;
    }
  bool have_rec = n && (lineup[0]->flags & ML_STRATEGY_RECORDED);
  free (lineup);
  lineup = NULL;
  if (have_rec && r->rows[0].res.status == 0 && r->rows[0].res.plan)
    {
      /* the recorded plan failed where the real allocator did */
      if ((rc = ml_recorded_oom_apply (bufs, r->rows[0].res.plan, err)) < 0)
        goto fail;
    }
  for (size_t i = 0; i < r->n_rows; i++)
    {
      const MlReportRow *row = &r->rows[i];
      if (row->res.status < 0 || !row->res.plan)
        continue;
      /* ties go to a strategy rather than the recorded run */
      if (r->best < 0 || row->res.metrics.peak < r->rows[r->best].res.metrics.peak
          || (row->res.metrics.peak == r->rows[r->best].res.metrics.peak && ml_report_row_is_recorded (&r->rows[r->best])))
        r->best = (long) i;
    }
  r->featured = have_rec ? 0 : r->best;
  for (size_t i = 0; i < r->n_rows; i++)
    {
      MlReportRow *row = &r->rows[i];
      if (row->res.status < 0 || !row->res.plan)
        continue;
      if ((rc = count_issues (bufs, row, (long) i == r->featured ? &r->issues : NULL, err)) < 0)
        goto fail;
    }
  if ((rc = ml_peaks_find (bufs, 5, 10, &r->peaks, err)) < 0)
    goto fail;
  r->n_streams = ml_buffers_count_streams (bufs);
  bool recorded_oom = false;
  if (bufs->trace)
    for (size_t i = 0; i < bufs->trace->n_events && !recorded_oom; i++)
      recorded_oom = bufs->trace->events[i].kind == ML_EV_OOM;
  /* the diagnosis: the first plan that fails a request, else the
   * featured one (under the capacity, or for a recorded OOM) */
  long dg = r->featured;
  for (size_t i = 0; i < r->n_rows; i++)
    {
      const MlResult *res = &r->rows[i].res;
      if (res->status == 0 && res->plan && res->plan->oom.hit && res->plan->oom.request
          && res->plan->oom.buffer < bufs->n)
        {
          dg = (long) i;
          break;
        }
    }
  if (dg >= 0 && (knobs->capacity || recorded_oom))
    {
      if ((rc = ml_diagnose (bufs, r->rows[dg].res.plan, knobs->capacity, NULL, knobs, NULL, &r->diag, err)) < 0)
        goto fail;
      r->have_diag = true;
    }
  r->seconds = ml_now () - t0;
  *out = r;
  return 0;
fail:
  free (lineup);
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
  ml_issues_clear (&r->issues);
  if (r->have_diag)
    ml_diagnosis_clear (&r->diag);
  ml_knob_sweep_free (r->sweep);
  free (r);
}

/* ---- JSON ------------------------------------------------------------------ */

static void
json_issue (FILE *fp, const MlBuffers *bufs, const MlIssue *is)
{
  fprintf (fp, "{\"kind\":\"%s\",\"a\":", ml_issue_kind_name (is->kind));
  ml_json_put_u64 (fp, bufs->buf[is->a].id);
  fputs (",\"b\":", fp);
  ml_json_put_u64 (fp, bufs->buf[is->b].id);
  fprintf (fp, ",\"tick\":%" PRIu64 ",\"tick_b\":%" PRIu64 ",\"segment\":%u,\"offset\":%" PRIu64 ",\"bytes\":%" PRIu64
           ",\"stream_a\":%u,\"stream_b\":%u,\"why\":",
           is->tick, is->tick_b, is->segment, is->offset, is->bytes, is->stream_a, is->stream_b);
  ml_json_put_str (fp, is->why);
  fputc ('}', fp);
}

static int
json_row (FILE *fp, const MlBuffers *bufs, const MlReportRow *row, MlError *err)
{
  fputc ('{', fp);
  if (ml_result_write_json_members (&row->res, row->name, bufs, fp, err) < 0)
    return ML_EIO;
  if (row->res.status == 0 && row->res.plan)
    {
      fputs (",\"issues\":{", fp);
      for (int k = 0; k < ML_ISSUE__COUNT; k++)
        fprintf (fp, "%s\"%s\":%zu", k ? "," : "", ml_issue_kind_name ((MlIssueKind) k), row->issues[k]);
      fputc ('}', fp);
    }
  fputc ('}', fp);
  return 0;
}

static int
finish (FILE *fp, MlError *err)
{
  if (fflush (fp) != 0 || ferror (fp))
    return ml_error_set (err, ML_EIO, "write error: %s", strerror (errno ? errno : EIO));
  return 0;
}

int
ml_report_write_json (const MlReport *r, FILE *fp, MlError *err)
{
  const MlBuffers *bufs = r->bufs;
  const MlTrace *t = bufs->trace;
  fprintf (fp, "{\"format\":\"memlens-report\",\"version\":%d,\"generator\":\"memlens %s\"", ML_REPORT_VERSION, MEMLENS_VERSION);
  fputs (",\"trace\":{\"path\":", fp);
  ml_json_put_str (fp, r->trace_path);
  fputs (",\"source\":", fp);
  ml_json_put_str (fp, t && t->source ? ml_trace_str (t, t->source) : "");
  fprintf (fp, ",\"events\":%zu,\"buffers\":%zu,\"streams\":%zu,\"end_tick\":%" PRIu64 ",\"has_times\":%s,\"has_addrs\":%s}",
           t ? t->n_events : 0, bufs->n, r->n_streams, bufs->end_tick,
           t && t->has_times ? "true" : "false", t && t->has_addrs ? "true" : "false");
  const MlKnobs *k = &r->knobs;
  fprintf (fp, ",\"knobs\":{\"alignment\":%" PRIu64 ",\"capacity\":%" PRIu64 ",\"chunk\":%" PRIu64
           ",\"time_limit\":%.3f,\"retries\":%u,\"seed\":%" PRIu64 ",\"options\":",
           bufs->align, k->capacity, k->chunk, k->time_limit, k->retries, k->seed);
  if (k->options)
    ml_json_put_str (fp, k->options);
  else
    fputs ("null", fp);
  fprintf (fp, "},\"lower_bound\":%" PRIu64 ",\"lower_bound_tick\":%" PRIu64 ",\"capacity\":%" PRIu64,
           bufs->lower_bound, bufs->lower_bound_tick, k->capacity);
  fputs (",\"best\":", fp);
  if (r->best >= 0)
    ml_json_put_str (fp, r->rows[r->best].name);
  else
    fputs ("null", fp);
  fputs (",\"featured\":", fp);
  if (r->featured >= 0)
    ml_json_put_str (fp, r->rows[r->featured].name);
  else
    fputs ("null", fp);
  fputs (",\"results\":[", fp);
  for (size_t i = 0; i < r->n_rows; i++)
    {
      if (i)
        fputc (',', fp);
      if (json_row (fp, bufs, &r->rows[i], err) < 0)
        return ML_EIO;
    }
  fputs ("],\"peaks\":[", fp);
  for (size_t i = 0; i < r->peaks.n; i++)
    {
      const MlPeak *p = &r->peaks.peaks[i];
      fprintf (fp, "%s{\"tick\":%" PRIu64 ",\"live\":%" PRIu64 ",\"live_buffers\":%zu,\"blame\":[", i ? "," : "",
               p->tick, p->live, p->n_live);
      for (size_t j = 0; j < p->n_blame; j++)
        {
          uint32_t bi = p->blame[j];
          const MlBuffer *b = &bufs->buf[bi];
          char label[256];
          fprintf (fp, "%s{\"buffer\":", j ? "," : "");
          ml_json_put_u64 (fp, b->id);
          fputs (",\"name\":", fp);
          ml_json_put_str (fp, ml_report_buffer_label (bufs, bi, label, sizeof label));
          fputs (",\"site\":", fp);
          const char *site = site_label (bufs, bi);
          if (site)
            ml_json_put_str (fp, site);
          else
            fputs ("null", fp);
          fprintf (fp, ",\"bytes\":%" PRIu64 ",\"requested\":%" PRIu64 ",\"stream\":%u,\"start\":%" PRIu64 ",\"end\":%" PRIu64 "}",
                   b->rsize, b->size, b->stream, b->start, b->end);
        }
      fputs ("]}", fp);
    }
  fputs ("],\"issues\":{\"plan\":", fp);
  if (r->featured >= 0)
    ml_json_put_str (fp, r->rows[r->featured].name);
  else
    fputs ("null", fp);
  fputs (",\"counts\":{", fp);
  for (int kk = 0; kk < ML_ISSUE__COUNT; kk++)
    fprintf (fp, "%s\"%s\":%zu", kk ? "," : "", ml_issue_kind_name ((MlIssueKind) kk), r->issues.total[kk]);
  fputs ("},\"items\":[", fp);
  for (size_t i = 0; i < r->issues.n; i++)
    {
      if (i)
        fputc (',', fp);
      json_issue (fp, bufs, &r->issues.items[i]);
    }
  fputs ("]},\"diagnosis\":", fp);
  if (r->have_diag)
    {
      if (ml_diagnosis_write_json (&r->diag, bufs, fp, err) < 0)
        return ML_EIO;
    }
  else
    fputs ("null", fp);
  if (r->sweep)
    {
      fputs (",\"sweep\":", fp);
      if (ml_knob_sweep_write_json (fp, bufs, r->sweep, err) < 0)
        return ML_EIO;
    }
  fputs ("}\n", fp);
  return finish (fp, err);
}

/* ---- CSV -------------------------------------------------------------------- */

static void
csv_str (FILE *fp, const char *s)
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
ml_report_write_csv (const MlReport *r, FILE *fp, MlError *err)
{
  fputs ("strategy,peak,peak_tick,lower_bound,overhead,frag_max,frag_mean,frag_at_peak,internal_waste,segments,"
         "seconds,optimal,oom_tick,oom_request,oom_verdict,conflict,misaligned,outside,cross_stream,in_place,error\n", fp);
  for (size_t i = 0; i < r->n_rows; i++)
    {
      const MlReportRow *row = &r->rows[i];
      csv_str (fp, row->name);
      const MlResult *res = &row->res;
      if (res->status < 0 || !res->plan)
        {
          fputs (",,,,,,,,,,,,,,,,,,,,", fp);
          csv_str (fp, res->error);
          fputc ('\n', fp);
          continue;
        }
      const MlMetrics *m = &res->metrics;
      const MlOom *o = &res->plan->oom;
      fprintf (fp, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f,%.6f,%.6f,%.6f,%" PRIu64 ",%zu,%.6f,%s,",
               m->peak, m->peak_tick, r->bufs->lower_bound, m->overhead, m->frag_max, m->frag_mean, m->frag_at_peak,
               m->internal_waste, res->plan->n_segments, res->plan->seconds, res->plan->optimal ? "true" : "false");
      if (o->hit)
        fprintf (fp, "%" PRIu64 ",%" PRIu64 ",%s", o->tick, o->request,
                 ml_oom_verdict_name (o->verdict));
      else
        fputs (",,", fp);
      for (int k = 0; k < ML_ISSUE__COUNT; k++)
        fprintf (fp, ",%zu", row->issues[k]);
      fputs (",\n", fp);
    }
  return finish (fp, err);
}

/* ---- Markdown ------------------------------------------------------------- */

static const char *
sz (uint64_t b, char *buf)
{
  return ml_format_size (b, buf, 32);
}

/* Markdown table cells: no pipes or newlines. */
static void
md_cell (FILE *fp, const char *s)
{
  for (; *s; s++)
    {
      if (*s == '|')
        fputs ("\\|", fp);
      else if (*s == '\n' || *s == '\r')
        fputc (' ', fp);
      else
        fputc (*s, fp);
    }
}

static const char *
oom_text (const MlOom *o, char *buf, size_t len)
{
  char s1[32];
  if (!o->hit)
    snprintf (buf, len, "fits");
  else if (!o->request)
    snprintf (buf, len, "over the capacity");
  else
    snprintf (buf, len, "%s at tick %" PRIu64 " (%s request)", ml_oom_verdict_name (o->verdict),
              o->tick, sz (o->request, s1));
  return buf;
}

int
ml_report_write_markdown (const MlReport *r, FILE *fp, MlError *err)
{
  const MlBuffers *bufs = r->bufs;
  const MlTrace *t = bufs->trace;
  char s1[32], s2[32], s3[32], s4[32], s5[32], s6[32], text[256];
  fputs ("# memlens report: ", fp);
  md_cell (fp, r->trace_path);
  fputs ("\n\n", fp);
  fprintf (fp, "- trace: %zu events, %zu buffers, %zu stream%s, ticks 0 to %" PRIu64 ", source %s\n",
           t ? t->n_events : 0, bufs->n, r->n_streams, r->n_streams == 1 ? "" : "s", bufs->end_tick,
           t && t->source ? ml_trace_str (t, t->source) : "?");
  fprintf (fp, "- lower bound: **%s** (%" PRIu64 " bytes) at tick %" PRIu64 " — no plan can use less\n",
           sz (bufs->lower_bound, s1), bufs->lower_bound, bufs->lower_bound_tick);
  if (r->best >= 0)
    fprintf (fp, "- best: **%s**, peak %s (%+.2f%% over the lower bound)\n", r->rows[r->best].name,
             sz (r->rows[r->best].res.metrics.peak, s1), r->rows[r->best].res.metrics.overhead * 100.0);
  fprintf (fp, "- knobs: alignment %" PRIu64 ", capacity %s, pool chunk %s, retries %u, seed %" PRIu64 "%s%s\n\n",
           bufs->align, r->knobs.capacity ? sz (r->knobs.capacity, s2) : "none", sz (r->knobs.chunk, s3),
           r->knobs.retries, r->knobs.seed, r->knobs.options ? ", options " : "", r->knobs.options ? r->knobs.options : "");

  fputs ("## Strategies\n\n| strategy | peak | overhead | frag max | frag mean | frag at peak | segments | time | under the capacity | issues |\n"
         "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|\n", fp);
  for (size_t i = 0; i < r->n_rows; i++)
    {
      const MlReportRow *row = &r->rows[i];
      fputs ("| ", fp);
      md_cell (fp, row->name);
      if ((long) i == r->best)
        fputs (" (best)", fp);
      const MlResult *res = &row->res;
      if (res->status < 0 || !res->plan)
        {
          fputs (" | error: ", fp);
          md_cell (fp, res->error);
          fputs (" | | | | | | | | |\n", fp);
          continue;
        }
      const MlMetrics *m = &res->metrics;
      size_t ni = 0;
      for (int k = 0; k < ML_ISSUE__COUNT; k++)
        ni += row->issues[k];
      char time[32];
      if (ml_report_row_is_recorded (row))
        snprintf (time, sizeof time, "-");
      else
        snprintf (time, sizeof time, "%.2f ms", res->plan->seconds * 1e3);
      fprintf (fp, " | %s | %+.2f%% | %.1f%% | %.1f%% | %.1f%% | %zu | %s | %s | %zu |\n", sz (m->peak, s1),
               m->overhead * 100.0, m->frag_max * 100.0, m->frag_mean * 100.0, m->frag_at_peak * 100.0,
               res->plan->n_segments, time, r->knobs.capacity ? oom_text (&res->plan->oom, text, sizeof text) : "-", ni);
    }
  /* a capacity proven infeasible: the buffers that alone cannot fit */
  for (size_t i = 0; i < r->n_rows; i++)
    {
      const MlInfeasible *inf = &r->rows[i].res.infeasible;
      if (!inf->n)
        continue;
      char why[512], label[256];
      fprintf (fp, "\n### Why %s finds no plan under %s\n\n", r->rows[i].name, sz (inf->capacity, s1));
      md_cell (fp, ml_infeasible_describe (inf, bufs, false, why, sizeof why));
      fputs (".\n\n| buffer | name | lifetime | size |\n|---:|---|---|---:|\n", fp);
      for (size_t k = 0; k < inf->n && k < 20; k++)
        {
          const MlBuffer *b = &bufs->buf[inf->buffers[k]];
          fprintf (fp, "| %" PRIu64 " | ", b->id);
          md_cell (fp, ml_report_buffer_label (bufs, inf->buffers[k], label, sizeof label));
          fprintf (fp, " | [%" PRIu64 ", %" PRIu64 ") | %s |\n", b->start, b->end, sz (b->rsize, s2));
        }
      if (inf->n > 20)
        fprintf (fp, "\n... %zu more buffers (all in the JSON report).\n", inf->n - 20);
    }

  if (r->sweep)
    {
      const MlKnobSweep *sw = r->sweep;
      fprintf (fp, "\n## Sweep of %s%s\n\n| %s | strategy | peak | overhead | frag max | frag at peak | under the capacity | retries |\n"
                   "|---|---|---:|---:|---:|---:|---|---:|\n",
               sw->is_option ? "the option " : "", sw->knob, sw->knob);
      for (size_t k = 0; k < sw->n_values * sw->n_strategies; k++)
        {
          const MlKnobSweepRow *row = &sw->rows[k];
          if (row->status < 0)
            {
              fprintf (fp, "| %s | %s | error: %s | | | | | |\n", row->value, row->strategy->name, row->error);
              continue;
            }
          char peak[32], verdict[128];
          fprintf (fp, "| %s | %s | %s | %+.2f%% | %.1f%% | %.1f%% | %s | %" PRIu64 " |\n", row->value, row->strategy->name,
                   sz (row->metrics.peak, peak), row->metrics.overhead * 100.0, row->metrics.frag_max * 100.0,
                   row->metrics.frag_at_peak * 100.0, r->knobs.capacity ? oom_text (&row->oom, verdict, sizeof verdict) : "-",
                   row->retries);
        }
    }

  fputs ("\n## Peak points\n\n", fp);
  for (size_t i = 0; i < r->peaks.n; i++)
    {
      const MlPeak *p = &r->peaks.peaks[i];
      fprintf (fp, "### Tick %" PRIu64 ": %s live in %zu buffer%s%s\n\n| buffer | bytes | stream | lifetime |\n|---|---:|---:|---|\n",
               p->tick, sz (p->live, s1), p->n_live, p->n_live == 1 ? "" : "s", p->live == bufs->lower_bound ? " (the lower bound)" : "");
      for (size_t j = 0; j < p->n_blame; j++)
        {
          const MlBuffer *b = &bufs->buf[p->blame[j]];
          fputs ("| ", fp);
          md_cell (fp, ml_report_buffer_label (bufs, p->blame[j], text, sizeof text));
          fprintf (fp, " | %s | %u | [%" PRIu64 ", %" PRIu64 ") |\n", sz (b->rsize, s1), b->stream, b->start, b->end);
        }
      if (p->n_live > p->n_blame)
        fprintf (fp, "| … %zu more | | | |\n", p->n_live - p->n_blame);
      fputc ('\n', fp);
    }

  if (r->have_diag)
    {
      const MlDiagnosis *d = &r->diag;
      fprintf (fp, "## Out of memory\n\n");
      char rwhy[256];
      if (d->recorded)
        {
          fprintf (fp, "The trace records an OOM at tick %" PRIu64 " (entry %" PRIu64 ") on stream %u: a %s request with %s free on the device",
                   d->rec_tick, d->rec_index, d->rec_stream, sz (d->rec_request, s1), sz (d->rec_device_free, s2));
          if (d->rec_have_plan)
            fprintf (fp, "; reserved %s, allocated %s, cached free %s (largest block %s). Verdict: **%s** — %s.\n\n",
                     sz (d->rec_reserved, s3), sz (d->rec_live, s4), sz (d->rec_cached_free, s5), sz (d->rec_largest_cached, s6),
                     ml_oom_verdict_name (d->rec_verdict), ml_diagnosis_recorded_reason (d, rwhy, sizeof rwhy));
          else
            fputs (".\n\n", fp);
          if (ml_trace_allocator_settings (bufs->trace))
            {
              fputs ("Allocator settings: ", fp);
              md_cell (fp, ml_trace_allocator_settings (bufs->trace));
              fputs (".\n\n", fp);
            }
          if (bufs->trace && d->rec_stack && d->rec_stack < bufs->trace->n_stacks)
            {
              char frames[1024];
              fputs ("Called from ", fp);
              md_cell (fp, ml_diagnosis_user_frames (bufs->trace, d->rec_stack, 3, frames, sizeof frames));
              fputs (".\n\n", fp);
            }
          if (d->rec_n_sites)
            {
              fputs ("| live at the OOM, by call site | bytes | buffers |\n|---|---:|---:|\n", fp);
              for (size_t i = 0; i < d->rec_n_sites && i < 10; i++)
                {
                  fputs ("| ", fp);
                  md_cell (fp, ml_diagnosis_site_label (bufs, d->rec_sites[i].site));
                  fprintf (fp, " | %s | %zu |\n", sz (d->rec_sites[i].bytes, s1), d->rec_sites[i].count);
                }
              fputc ('\n', fp);
            }
        }
      char line[512], why[256];
      if (d->capacity)
        {
          md_cell (fp, ml_diagnosis_headline (d, line, sizeof line));
          if (!d->oom.hit || !d->oom.request)
            fputs ("\n\n", fp);
          else
            {
              fprintf (fp, " Verdict: **%s** — %s (live %s, reserved %s).\n\n", ml_oom_verdict_name (d->oom.verdict),
                       ml_oom_reason (&d->oom, why, sizeof why), sz (d->oom.live, s1), sz (d->oom.reserved, s2));
              fputs ("| call site | live bytes | buffers |\n|---|---:|---:|\n", fp);
              for (size_t i = 0; i < d->n_sites && i < 10; i++)
                {
                  fputs ("| ", fp);
                  md_cell (fp, ml_diagnosis_site_label (bufs, d->sites[i].site));
                  fprintf (fp, " | %s | %zu |\n", sz (d->sites[i].bytes, s1), d->sites[i].count);
                }
              fputc ('\n', fp);
            }
        }
    }

  fputs ("## Issues\n\n", fp);
  size_t total = ml_issues_count (&r->issues);
  if (r->featured < 0)
    fputs ("No plan to check.\n", fp);
  else if (!total)
    fprintf (fp, "The %s plan has no conflicts and no races.\n", r->rows[r->featured].name);
  else
    {
      fprintf (fp, "The %s plan: %zu issue%s.\n\n| kind | tick | bytes | streams | why |\n|---|---:|---:|---|---|\n",
               r->rows[r->featured].name, total, total == 1 ? "" : "s");
      for (size_t i = 0; i < r->issues.n && i < 50; i++)
        {
          const MlIssue *is = &r->issues.items[i];
          fprintf (fp, "| %s | %" PRIu64 " | %s | %u → %u | ", ml_issue_kind_name (is->kind), is->tick,
                   sz (is->bytes, s1), is->stream_a, is->stream_b);
          md_cell (fp, is->why);
          fputs (" |\n", fp);
        }
      if (total > 50)
        fprintf (fp, "| … %zu more | | | | |\n", total - 50);
    }
  fprintf (fp, "\n---\nmemlens %s, report format %d.\n", MEMLENS_VERSION, ML_REPORT_VERSION);
  return finish (fp, err);
}

int
ml_report_write (const MlReport *r, const char *path, MlError *err)
{
  char ext[16];
  ml_path_ext (path, ext, sizeof ext, NULL);
  int (*fn) (const MlReport *, FILE *, MlError *) = NULL;
  if (strcmp (ext, "json") == 0)
    fn = ml_report_write_json;
  else if (strcmp (ext, "md") == 0 || strcmp (ext, "markdown") == 0)
    fn = ml_report_write_markdown;
  else if (strcmp (ext, "csv") == 0)
    fn = ml_report_write_csv;
  else
    return ml_error_set (err, ML_EUSAGE, "%s: write the report as .json, .md or .csv (or .html with the renderer)", path);
  MlOut *out = ml_out_open (path, err);
  if (!out)
    return err ? err->code : ML_EIO;
  int rc = fn (r, ml_out_file (out), err);
  if (rc < 0)
    {
      ml_out_abort (out);
      return ml_error_prefix (err, "%s", strcmp (path, "-") ? path : "stdout");
    }
  return ml_out_commit (out, err);
}
