#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/analysis/knob-sweep.h"
#include "sim/base/jsonutil.h"
#include "strategies/caching-conformance.h"
#include "strategies/caching-replay.h"

static const CliOption compare_options[] = {
  { "sweep", 0, 'S', "KNOB=V1,V2,...", "one run of every strategy per value of the knob, e.g. chunk=1M,2M,4M" },
  { NULL },
};

static int
compare_option (MlCliOpts *o, void *user, int key, const char *arg)
{
  *(const char **) user = arg;   /* --sweep */
  return 0;
}

/* --sweep: the rows as a table, or into the JSON document */
static void
print_sweep (const MlKnobSweep *sw)
{
  printf ("\n%-12s %-16s %14s %11s %9s %8s %9s  %-22s %8s\n", sw->knob, "strategy", "peak (bytes)", "peak", "overhead",
          "frag max", "frag@peak", "OOM", "retries");
  for (size_t r = 0; r < sw->n_values * sw->n_strategies; r++)
    {
      const MlKnobSweepRow *row = &sw->rows[r];
      if (row->status < 0)
        {
          printf ("%-12s %-16s error: %s\n", row->value, row->strategy->name, row->error);
          continue;
        }
      char oom[64] = "-";
      if (row->oom.hit)
        snprintf (oom, sizeof oom, "%s @%" PRIu64, ml_oom_verdict_name (row->oom.verdict), row->oom.tick);
      const MlMetrics *m = &row->metrics;
      char fmax[16], fpeak[16];
      cli_frag (m, m->frag_max, fmax, sizeof fmax);
      cli_frag (m, m->frag_at_peak, fpeak, sizeof fpeak);
      printf ("%-12s %-16s %14" PRIu64 " %11s %+8.2f%% %8s %9s  %-22s %8" PRIu64 "\n", row->value, row->strategy->name,
              m->peak, cli_size (m->peak), m->overhead * 100.0, fmax, fpeak, oom, row->retries);
    }
}

/* The caching conformance as text ("  " indented lines) or as one JSON
 * object (no newline). */
static void
print_conformance (FILE *fp, const MlCachingConformance *r, const MlTrace *t, bool json)
{
  double addr_share = r->allocs ? (double) r->matched / (double) r->allocs : 1.0;
  size_t seg_den = r->rec_segment_events > r->emu_segment_events ? r->rec_segment_events : r->emu_segment_events;
  if (json)
    {
      fprintf (fp, "{\"options\":");
      ml_json_put_str (fp, r->options);
      fprintf (fp, ",\"initial_segments\":%zu,\"initial_blocks\":%zu,\"allocs\":%zu,\"address_matched\":%zu,"
                   "\"address_conformance\":",
               r->initial_segments, r->initial_blocks, r->allocs, r->matched);
      if (r->allocs)
        fprintf (fp, "%.6f", addr_share);
      else
        fputs ("null", fp);   /* nothing to replay */
      fputs (",\"mismatches\":{", fp);
      for (int k = 0; k < ML_RULE__COUNT; k++)
        fprintf (fp, "%s\"%s\":%zu", k ? "," : "", ml_caching_rule_name ((MlCachingRule) k), r->by_rule[k]);
      fprintf (fp, "},\"segment_events_recorded\":%zu,\"segment_events_emulated\":%zu,\"segment_events_matched\":%zu,"
                   "\"end_segments_recorded\":%zu,\"end_segments_emulated\":%zu,\"end_bytes_recorded\":%" PRIu64
                   ",\"end_bytes_emulated\":%" PRIu64 ",\"end_segments_match\":%s,\"rule_sized_segments\":%zu}",
               r->rec_segment_events, r->emu_segment_events, r->segment_events_matched, r->end_rec_segments,
               r->end_emu_segments, r->end_rec_bytes, r->end_emu_bytes, r->end_match ? "true" : "false",
               r->rule_sized_segments);
      return;
    }
  fprintf (fp, "  options         %s\n", r->options[0] ? r->options : "(defaults)");
  fprintf (fp, "  rebuilt state   %zu segments, %zu live blocks at the trace's first event (%zu of the segments sized by the rules)\n",
           r->initial_segments, r->initial_blocks, r->rule_sized_segments);
  if (r->allocs)
    fprintf (fp, "  addresses       %zu / %zu allocations at the real address (%.2f%%)\n", r->matched, r->allocs,
             addr_share * 100.0);
  else
    fprintf (fp, "  addresses       no allocation in the trace: nothing to replay\n");
  for (int k = 0; k < ML_RULE__COUNT; k++)
    if (r->by_rule[k])
      fprintf (fp, "    %-20s %zu\n", ml_caching_rule_name ((MlCachingRule) k), r->by_rule[k]);
  char where[ML_TRACE_WHERE_MAX];
  if (r->first_mismatch != SIZE_MAX)
    fprintf (fp, "    first mismatch at %s: real 0x%" PRIx64 ", emulated 0x%" PRIx64 "\n",
             ml_trace_event_where (t, r->first_mismatch, where, sizeof where), r->first_want, r->first_got);
  if (seg_den)
    fprintf (fp, "  segment events  %zu recorded, %zu emulated, %zu the same size in order (%.2f%%)\n",
             r->rec_segment_events, r->emu_segment_events, r->segment_events_matched,
             100.0 * (double) r->segment_events_matched / (double) seg_den);
  else
    fprintf (fp, "  segment events  none recorded, none emulated\n");
  fprintf (fp, "  segments at end %zu recorded (%" PRIu64 " B), %zu emulated (%" PRIu64 " B): %s\n", r->end_rec_segments,
           r->end_rec_bytes, r->end_emu_segments, r->end_emu_bytes, r->end_match ? "match" : "differ");
}


/* One loaded trace: a trace that recorded an OOM is replayed by the
 * strategies with the request it refused (ml_recorded_oom_replay), so that
 * a row fits only if it could have served it; the recorded plan stays
 * the trace's, failing where the real allocator did. */
typedef struct {
  const char      *path;
  const MlTrace   *t;
  const MlBuffers *bufs;   /* the trace's */
  const MlBuffers *run;    /* what the strategies replay: bufs, or bufs with the refused request */
  MlRecordedOom    rec;
} Input;

/* The trace's lines above a table. */
static void
print_head (const Input *in, uint64_t capacity)
{
  const MlBuffers *bufs = in->bufs;
  printf ("trace        %s: %zu buffers, %zu events, alignment %" PRIu64 "\n", in->path, bufs->n, in->t->n_events,
          bufs->align);
  cli_print_recorded_oom (in->t, &in->rec);
  printf ("lower bound  %" PRIu64 " (%s) at tick %" PRIu64 "\n", bufs->lower_bound, cli_size (bufs->lower_bound),
          bufs->lower_bound_tick);
  if (in->run != bufs)
    printf ("replayed     with the refused %s request at tick %" PRIu64 ": a strategy's row fits only if it could have "
            "served it (lower bound %" PRIu64 ", %s)\n", cli_size (in->rec.request), in->rec.tick, in->run->lower_bound,
            cli_size (in->run->lower_bound));
  if (capacity)
    printf ("capacity     %" PRIu64 " (%s)\n", capacity, cli_size (capacity));
}

/* ,"recorded_oom":{...},"replayed_request":{...}: what the strategies'
 * rows replayed beside the trace. */
static void
json_replayed (const Input *in)
{
  cli_json_recorded_oom (in->t, &in->rec);
  if (in->run != in->bufs)
    printf (",\"replayed_request\":{\"tick\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"lower_bound\":%" PRIu64 "}",
            in->rec.tick, in->rec.request, in->run->lower_bound);
}

/* --sweep: every strategy asked for but the recorded plan (which no knob
 * changes), once per value. */
static int
run_sweep (const Input *in, const MlStrategy **asked, const char *spec, MlCliOpts *o)
{
  const MlBuffers *bufs = in->run;
  size_t m = 0;
  for (size_t i = 0; asked[i]; i++)
    if (!(asked[i]->flags & ML_STRATEGY_RECORDED))
      asked[m++] = asked[i];
  asked[m] = NULL;
  if (!o->quiet)
    cli_note_sweep ("compare", spec, asked);
  MlKnobSweep *sw = NULL;
  MlError serr = { 0 };
  int rc = ml_knob_sweep_run (spec, bufs, asked, &o->knobs, &sw, &serr);
  cli_progress_done ();
  if (rc < 0)
    return cli_error ("compare", &serr);
  if ((rc = cli_check_sweep ("compare", sw)) != EXIT_OK)
    {
      ml_knob_sweep_free (sw);
      return rc;
    }
  for (size_t r = 0; r < sw->n_values * sw->n_strategies; r++)
    if (sw->rows[r].status == 0 && sw->rows[r].oom.hit)
      rc = EXIT_PROBLEMS;
  if (o->json)
    {
      printf ("{\"trace\":");
      ml_json_put_str (stdout, in->path);
      json_replayed (in);
      printf (",\"buffers\":%zu,\"events\":%zu,\"alignment\":%" PRIu64 ",\"lower_bound\":%" PRIu64
              ",\"capacity\":%" PRIu64 ",\"sweep\":",
              in->bufs->n, in->t->n_events, in->bufs->align, in->bufs->lower_bound, o->knobs.capacity);
      if (ml_knob_sweep_write_json (stdout, bufs, sw, &serr) < 0)
        rc = cli_error ("compare", &serr);
      else
        printf ("}\n");
    }
  else
    {
      print_head (in, o->knobs.capacity);
      printf ("sweep        %s over %zu values, %zu strateg%s\n", sw->knob, sw->n_values, sw->n_strategies,
              sw->n_strategies == 1 ? "y" : "ies");
      print_sweep (sw);
    }
  ml_knob_sweep_free (sw);
  return rc;
}

/* One row of the table, named @label. */
static void
print_row (const MlResult *r, const char *label)
{
  if (r->status < 0)
    {
      /* a strategy stopped at --time-limit is no error of the input */
      printf ("%-16s %s%s\n", label, r->status == ML_ETIMEOUT ? "" : "error: ", r->error);
      return;
    }
  const MlMetrics *m = &r->metrics;
  char oom[64] = "-";
  if (r->plan->oom.hit && r->plan->oom.request)
    snprintf (oom, sizeof oom, "%s @%" PRIu64, ml_oom_verdict_name (r->plan->oom.verdict), r->plan->oom.tick);
  else if (r->plan->oom.hit)
    snprintf (oom, sizeof oom, "over capacity");
  char time[32];
  if (r->strategy->flags & ML_STRATEGY_RECORDED)
    snprintf (time, sizeof time, "-");
  else if (r->plan->seconds < 1)
    snprintf (time, sizeof time, "%.2f ms", r->plan->seconds * 1e3);
  else
    snprintf (time, sizeof time, "%.2f s", r->plan->seconds);
  char nodes[32] = "-";
  if (r->plan->ops)
    snprintf (nodes, sizeof nodes, "%.1f", (double) r->plan->nodes_visited / (double) r->plan->ops);
  char fmax[16], fpeak[16];
  cli_frag (m, m->frag_max, fmax, sizeof fmax);
  cli_frag (m, m->frag_at_peak, fpeak, sizeof fpeak);
  printf ("%-16s %14" PRIu64 " %11s %+8.2f%% %8s %9s  %-22s %10s %8s%s\n", label, m->peak, cli_size (m->peak),
          m->overhead * 100.0, fmax, fpeak, oom, time, nodes, r->plan->optimal ? "  optimal" : "");
}

/* The caching emulation replayed warm: from the state rebuilt at the
 * trace's first event (what the conformance replay starts from), under
 * the capacity, with the recorded OOM's request (ml_cache_replay). */
static void
print_warm_row (const MlCacheReplay *w, uint64_t lower_bound)
{
  char oom[64] = "-";
  if (w->oom)
    snprintf (oom, sizeof oom, "OOM @%" PRIu64, w->oom_tick);
  double over = lower_bound ? ((double) w->reserved_peak - (double) lower_bound) / (double) lower_bound : 0;
  /* its fragmentation is measured otherwise (the largest free block at
   * the peak; --json "caching_warm"): not in the table's columns */
  printf ("%-16s %14" PRIu64 " %11s %+8.2f%% %8s %9s  %-22s %10s %8s\n", "caching (warm)", w->reserved_peak,
          cli_size (w->reserved_peak), over * 100.0, "-", "-", oom, "-", "-");
}

/* The results of one trace, with the caching conformance and the warm
 * replay when there are. */
typedef struct {
  const Input  *in;
  MlResult     *res;
  size_t        n;
  const MlCachingConformance *conf;   /* NULL: none */
  const MlCacheReplay *warm;          /* NULL: none */
} Compared;

static void
json_warm (const MlCacheReplay *w)
{
  printf (",\"caching_warm\":{\"start\":\"the state rebuilt at the trace's first event\",\"reserved_peak\":%" PRIu64
          ",\"peak_tick\":%" PRIu64 ",\"largest_free_frag_at_peak\":%.6f,\"reserved_end\":%" PRIu64 ",\"oom\":",
          w->reserved_peak, w->peak_tick, w->frag_at_peak, w->reserved_end);
  if (w->oom)
    printf ("{\"tick\":%" PRIu64 ",\"request\":%" PRIu64 ",\"recorded\":%s}", w->oom_tick, w->oom_request,
            w->oom_recorded ? "true" : "false");
  else
    printf ("null");
  printf ("}");
}

static int
print_json (const Compared *c, uint64_t capacity)
{
  const MlBuffers *bufs = c->in->bufs;
  MlError err = { 0 };
  printf ("{\"trace\":");
  ml_json_put_str (stdout, c->in->path);
  json_replayed (c->in);
  printf (",\"buffers\":%zu,\"events\":%zu,\"alignment\":%" PRIu64 ",\"lower_bound\":%" PRIu64
          ",\"lower_bound_tick\":%" PRIu64 ",\"capacity\":%" PRIu64 ",\"results\":[",
          bufs->n, c->in->t->n_events, bufs->align, bufs->lower_bound, bufs->lower_bound_tick, capacity);
  for (size_t i = 0; i < c->n; i++)
    {
      const MlResult *r = &c->res[i];
      bool recorded = r->strategy->flags & ML_STRATEGY_RECORDED;
      printf ("%s{", i ? "," : "");
      if (ml_result_write_json_members (r, r->strategy->name, recorded ? bufs : c->in->run, stdout, &err) < 0)
        return cli_error ("compare", &err);
      if (c->warm && strcmp (r->strategy->name, "caching") == 0)
        printf (",\"start\":\"cold\"");
      printf ("}");
    }
  printf ("]");
  if (c->warm)
    json_warm (c->warm);
  if (c->conf)
    {
      printf (",\"caching_conformance\":");
      print_conformance (stdout, c->conf, c->in->t, true);
    }
  printf ("}\n");
  return EXIT_OK;
}

static void
print_text (const Compared *c, uint64_t capacity)
{
  print_head (c->in, capacity);
  printf ("\n%-16s %14s %11s %9s %8s %9s  %-22s %10s %8s\n", "strategy", "peak (bytes)", "peak", "overhead",
          "frag max", "frag@peak", "OOM", "time", "nodes/op");
  for (size_t i = 0; i < c->n; i++)
    {
      bool caching = strcmp (c->res[i].strategy->name, "caching") == 0;
      print_row (&c->res[i], c->warm && caching ? "caching (cold)" : c->res[i].strategy->name);
      if (c->warm && caching)
        print_warm_row (c->warm, c->in->run->lower_bound);
    }
  if (c->warm)
    printf ("\ncaching (cold) starts from an empty device; caching (warm) from the state rebuilt at the trace's first\n"
            "event, as the conformance replay below: the row to hold against recorded.\n");
  if (c->conf)
    {
      printf ("\ncaching conformance (replayed from the state rebuilt at the trace's first event)\n");
      print_conformance (stdout, c->conf, c->in->t, false);
    }
}

/* Runs @list (the recorded plan first when the trace has one) into @res:
 * the recorded plan over the trace, failing at its recorded OOM, the
 * strategies over in->run. -1 with *rc set when a run failed, else 0
 * with *rc EXIT_OK, or EXIT_PROBLEMS when a row ran out of memory, or
 * EXIT_BAD when a strategy refused its options. */
static int
run_all (const Input *in, const MlStrategy *const *list, const MlKnobs *knobs, MlResult *res, size_t *nres, int *rc)
{
  MlError err = { 0 };
  for (size_t i = 0; list[i]; i++)
    {
      bool recorded = list[i]->flags & ML_STRATEGY_RECORDED;
      if (ml_sim_evaluate (recorded ? in->bufs : in->run, list[i], knobs, &res[*nres], &err) < 0)
        {
          cli_progress_done ();
          *rc = cli_error ("compare", &err);
          return -1;
        }
      if (recorded && res[*nres].status == 0)
        ml_recorded_oom_mark (&in->rec, in->bufs, res[*nres].plan);
      (*nres)++;
    }
  cli_progress_done ();
  /* a strategy that refused its settings (a bad value, an allocator
   * setting it does not emulate) is bad usage, and every strategy failing
   * an error: no table */
  const MlResult **rows = calloc (*nres + 1, sizeof *rows);
  if (!rows)
    return *rc = cli_fail ("compare", EXIT_BAD, "out of memory"), -1;
  for (size_t i = 0; i < *nres; i++)
    rows[i] = &res[i];
  *rc = cli_check_rows ("compare", rows, *nres);
  free (rows);
  if (*rc != EXIT_OK)
    return -1;
  for (size_t i = 0; i < *nres; i++)
    if (res[i].status == 0 && res[i].plan->oom.hit)
      *rc = EXIT_PROBLEMS;
  return 0;
}

/* PyTorch snapshots: how closely `caching` reproduces the real allocator
 * (the conformance) and the warm replay, when caching is in @list. */
static void
caching_extras (const Input *in, const MlStrategy *const *list, const MlCliOpts *o, MlCachingConformance *conf,
                bool *have_conf, MlCacheReplay *warm, bool *have_warm)
{
  *have_conf = *have_warm = false;
  if (strcmp (ml_trace_str (in->t, in->t->source), "pytorch-snapshot") != 0)
    return;
  MlError err = { 0 };
  if (ml_caching_conformance (in->t, o->knobs.options, conf, &err) == 0)
    *have_conf = true;
  else
    fprintf (stderr, "memlens compare: caching conformance: %s\n", err.msg);
  bool caching = false;
  for (size_t i = 0; list[i]; i++)
    caching |= strcmp (list[i]->name, "caching") == 0;
  MlCacheReplayOpts ro = { .capacity = o->knobs.capacity, .warm = true };
  if (caching && ml_cache_replay_can_warm (in->t) && ml_cache_replay (in->t, o->knobs.options, &ro, warm, NULL) == 0)
    *have_warm = true;
}

/* The table of @asked over one loaded trace. */
static int
compare_trace (const Input *in, const MlStrategy **asked, MlCliOpts *o)
{
  const MlStrategy **list = ml_sim_lineup (in->bufs, asked);
  size_t n = 0;
  while (list && list[n])
    n++;
  MlResult *res = calloc (n + 1, sizeof *res);
  size_t nres = 0;
  int rc;
  if (!list || !res)
    rc = cli_fail ("compare", EXIT_BAD, "out of memory");
  else if (run_all (in, list, &o->knobs, res, &nres, &rc) == 0)
    {
      MlCachingConformance conf;
      MlCacheReplay warm;
      bool have_conf, have_warm;
      caching_extras (in, list, o, &conf, &have_conf, &warm, &have_warm);
      if (have_warm && warm.oom && rc == EXIT_OK)
        rc = EXIT_PROBLEMS;
      Compared c = { in, res, nres, have_conf ? &conf : NULL, have_warm ? &warm : NULL };
      int w = EXIT_OK;
      if (!o->json)
        print_text (&c, o->knobs.capacity);
      else
        w = print_json (&c, o->knobs.capacity);
      if (w)
        rc = w;
      if (have_warm)
        ml_cache_replay_clear (&warm);
    }
  for (size_t i = 0; i < nres; i++)
    ml_result_clear (&res[i]);
  free (res);
  free (list);
  return rc;
}

/* The recorded OOM of the loaded trace, and the buffers the strategies
 * replay (*replay: owned, NULL when they are the trace's). */
static int
prepare (Input *in, MlBuffers **replay)
{
  *replay = NULL;
  int rc = cli_recorded_oom ("compare", in->bufs, &in->rec);
  MlError err = { 0 };
  if (rc == EXIT_OK && in->rec.found && ml_recorded_oom_replay (in->bufs, &in->rec, replay, &err) < 0)
    rc = cli_error ("compare", &err);
  in->run = *replay ? *replay : in->bufs;
  return rc;
}

static int
cmd_compare (int argc, char **argv)
{
  const char *sweep_spec = NULL;
  MlCliOpts o;
  int rc = cli_parse (&cli_cmd_compare, argc, argv, &o, &sweep_spec);
  if (rc != CLI_PARSED)
    return rc;
  if (!cli_in_multi && optind < argc && (optind + 1 < argc || cli_given (&o, CLI_OPT_JOBS)))
    return cli_multi ("compare", cmd_compare, true, argc, argv, optind, &o);
  if (optind + 1 != argc)
    return cli_usage (&cli_cmd_compare);
  const char *path = argv[optind];
  const MlStrategy **asked = cli_strategies ("compare", o.strategies);
  if (!asked)
    return EXIT_BAD;
  cli_note_knobs ("compare", &o, asked);
  if ((rc = cli_check_options ("compare", &o, asked)) != EXIT_OK)
    {
      free (asked);
      return rc;
    }
  MlTrace *t;
  MlBuffers *bufs, *replay = NULL;
  if ((rc = cli_load ("compare", path, &o, &t, &bufs)) == EXIT_OK)
    {
      Input in = { .path = path, .t = t, .bufs = bufs };
      if ((rc = prepare (&in, &replay)) == EXIT_OK)
        {
          o.knobs.progress = cli_progress (o.quiet);
          rc = sweep_spec ? run_sweep (&in, asked, sweep_spec, &o) : compare_trace (&in, asked, &o);
          if (rc == EXIT_OK && in.rec.found)
            rc = EXIT_PROBLEMS;   /* the file records an OOM */
        }
      ml_buffers_free (replay);
      ml_buffers_free (bufs);
      ml_trace_free (t);
    }
  free (asked);
  return rc;
}

const CliCommand cli_cmd_compare = {
  .name = "compare",
  .bit = CLI_COMPARE,
  .summary = "run strategies over a trace: peak, overhead, fragmentation, OOM, time",
  .usage = "memlens compare [OPTIONS] TRACE\n"
           "memlens compare [OPTIONS] TRACE... [--jobs N]   (one table per file, then a summary)\n",
  .about = "Runs each strategy over the trace and prints one row per strategy: peak,\n"
           "overhead over the lower bound, fragmentation (max and at the peak), the\n"
           "OOM verdict under --capacity, and time. A trace with real addresses also\n"
           "gets the row \"recorded\": what the real allocator did. A PyTorch snapshot\n"
           "also gets the caching emulation's conformance: the share of allocations it\n"
           "places at the real address, replayed from the state rebuilt at the trace's start.\n"
           "With --sweep KNOB=V1,V2,... it runs every strategy once per value instead\n"
           "and prints one row per value and strategy (KNOB: chunk, align, capacity,\n"
           "retries, seed, time-limit, or an --options key such as large or\n"
           "max_split_size_mb).\n"
           "A trace that recorded an OOM (a PyTorch snapshot) says so in its second line;\n"
           "the strategies then replay the request it refused, so that a row fits only if\n"
           "it could have served it, and the recorded row fails where the real allocator\n"
           "did. The caching row of a snapshot starts cold, from an empty device; the row\n"
           "caching (warm) replays from the state rebuilt at the trace's first event.\n"
           "Exit code 1 when the trace recorded an OOM or a strategy runs out of memory\n"
           "under --capacity; 2, with no table, when an --options key is read by no\n"
           "strategy of the run (the message lists the keys each reads), when a strategy\n"
           "refuses its settings (a bad value, a setting the caching emulation does not\n"
           "model, a --chunk it cannot take) or when every strategy failed.\n",
  .options = compare_options,
  .option = compare_option,
  .run = cmd_compare,
};
