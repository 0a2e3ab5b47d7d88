#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/base/jsonutil.h"
#include "strategies/caching.h"

static const char usage_text[] =
  "Usage: memlens compare [OPTIONS] TRACE\n"
  "Runs each strategy over the trace and prints one row per strategy: peak,\n"
  "overhead over the lower bound, fragmentation (max and at the peak), the\n"
  "OOM verdict under --capacity, and time. A trace with real addresses also\n"
  "gets the row \"recorded\": what the real allocator did. A PyTorch snapshot\n"
  "also gets the caching emulation's conformance: the share of allocations it\n"
  "places at the real address, replayed from the state rebuilt at the trace's start.\n"
  "Exit code 1 when a strategy runs out of memory under --capacity.\n";

static void
json_result (const MlBuffers *bufs, const MlResult *r, const char *name)
{
  printf ("{\"strategy\":");
  ml_json_put_str (stdout, name);
  if (r->status < 0)
    {
      printf (",\"error\":");
      ml_json_put_str (stdout, r->error);
      printf ("}");
      return;
    }
  const MlMetrics *m = &r->metrics;
  const MlPlan *p = r->plan;
  printf (",\"peak\":%" PRIu64 ",\"peak_tick\":%" PRIu64 ",\"overhead\":%.6f,\"frag_max\":%.6f,\"frag_max_tick\":%" PRIu64
          ",\"frag_mean\":%.6f,\"frag_at_peak\":%.6f,\"internal_waste\":%" PRIu64 ",\"segments\":%zu"
          ",\"seconds\":%.6f,\"ops\":%" PRIu64 ",\"nodes_visited\":%" PRIu64 ",\"nodes_per_op\":%.3f,\"backtracks\":%" PRIu64 ",\"optimal\":%s",
          m->peak, m->peak_tick, m->overhead, m->frag_max, m->frag_max_tick, m->frag_mean, m->frag_at_peak,
          m->internal_waste, p->n_segments, p->seconds, p->ops, p->nodes_visited,
          p->ops ? (double) p->nodes_visited / (double) p->ops : 0.0, p->backtracks, p->optimal ? "true" : "false");
  if (p->proven_lb)
    printf (",\"proven_lower_bound\":%" PRIu64, p->proven_lb);
  if (p->note)
    printf (",\"note\":"), ml_json_put_str (stdout, p->note);
  printf (",\"oom\":");
  ml_oom_write_json (stdout, bufs, &p->oom);
  printf ("}");
}

int
cmd_compare (int argc, char **argv)
{
  static const struct option longopts[] = {
    CLI_COMMON_LONGOPTS,
    { "strategies", required_argument, 0, 's' },
    { 0, 0, 0, 0 },
  };
  MlCliOpts o;
  cli_opts_init (&o);
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "hs:", longopts, NULL)) != -1)
    {
      if (c == 'h')
        {
          printf ("%s\nOptions:\n  -s, --strategies A,B,...  strategies to run (default: %s; \"all\")\n%s",
                  usage_text, ml_strategies_default (), CLI_COMMON_HELP);
          return EXIT_OK;
        }
      if (c == 's')
        {
          o.strategies = optarg;
          continue;
        }
      if (c == '?' || !cli_common_option ("compare", &o, c, optarg))
        return cli_usage ("compare", usage_text);
    }
  if (optind + 1 != argc)
    return cli_usage ("compare", usage_text);
  const char *path = argv[optind];
  const MlStrategy **list = cli_strategies ("compare", o.strategies);
  if (!list)
    return EXIT_BAD;
  MlTrace *t;
  MlBuffers *bufs;
  int rc = cli_load ("compare", path, &o, &t, &bufs);
  if (rc)
    {
      free (list);
      return rc;
    }
  o.knobs.progress = cli_progress (o.quiet);

  size_t n = 0;
  while (list[n])
    n++;
  MlResult *res = calloc (n + 1, sizeof *res);
  const char **names = calloc (n + 1, sizeof *names);
  size_t nres = 0;
  MlError err = { 0 };
  int exit_code = EXIT_OK;
  /* the real allocator's layout first, when the trace has one */
  MlPlan *rec = NULL;
  if (ml_plan_from_recorded (bufs, &rec, NULL) == 0)
    {
      res[nres].plan = rec;
      names[nres] = "recorded";
      if (ml_metrics_compute (bufs, rec, &res[nres].metrics, NULL, &err) < 0)
        {
          res[nres].status = err.code;
          snprintf (res[nres].error, sizeof res[nres].error, "%s", err.msg);
        }
      if (o.knobs.capacity && res[nres].metrics.peak > o.knobs.capacity)
        {
          rec->oom.hit = true;
          rec->oom.request = 0;
        }
      nres++;
    }
  for (size_t i = 0; i < n; i++)
    {
      if (ml_sim_evaluate (bufs, list[i], &o.knobs, &res[nres], &err) < 0)
        {
          cli_progress_done ();
          exit_code = cli_error ("compare", &err);
          goto out;
        }
      names[nres++] = list[i]->name;
    }
  cli_progress_done ();
  for (size_t i = 0; i < nres; i++)
    if (res[i].status == 0 && res[i].plan->oom.hit)
      exit_code = EXIT_PROBLEMS;

  /* PyTorch snapshots: how closely `caching` reproduces the real allocator */
  MlCachingConformance conf;
  bool have_conf = false;
  if (strcmp (ml_trace_str (t, t->source), "pytorch-snapshot") == 0)
    {
      MlError cerr = { 0 };
      if (ml_caching_conformance (t, o.knobs.options, &conf, &cerr) == 0)
        have_conf = true;
      else
        fprintf (stderr, "memlens compare: caching conformance: %s\n", cerr.msg);
    }
  if (o.json)
    {
      printf ("{\"trace\":");
      ml_json_put_str (stdout, path);
      printf (",\"buffers\":%zu,\"events\":%zu,\"alignment\":%" PRIu64 ",\"lower_bound\":%" PRIu64
              ",\"lower_bound_tick\":%" PRIu64 ",\"capacity\":%" PRIu64 ",\"results\":[",
              bufs->n, t->n_events, bufs->align, bufs->lower_bound, bufs->lower_bound_tick, o.knobs.capacity);
      for (size_t i = 0; i < nres; i++)
        {
          if (i)
            printf (",");
          json_result (bufs, &res[i], names[i]);
        }
      printf ("]");
      if (have_conf)
        {
          printf (",\"caching_conformance\":");
          ml_caching_conformance_print (stdout, &conf, true);
        }
      printf ("}\n");
    }
  else
    {
      printf ("trace        %s: %zu buffers, %zu events, alignment %" PRIu64 "\n", path, bufs->n, t->n_events, bufs->align);
      printf ("lower bound  %" PRIu64 " (%s) at tick %" PRIu64 "\n", bufs->lower_bound, cli_size (bufs->lower_bound), bufs->lower_bound_tick);
      if (o.knobs.capacity)
        printf ("capacity     %" PRIu64 " (%s)\n", o.knobs.capacity, cli_size (o.knobs.capacity));
      printf ("\n%-16s %14s %11s %9s %8s %9s  %-22s %10s %8s\n", "strategy", "peak (bytes)", "peak", "overhead",
              "frag max", "frag@peak", "OOM", "time", "nodes/op");
      for (size_t i = 0; i < nres; i++)
        {
          const MlResult *r = &res[i];
          if (r->status < 0)
            {
              printf ("%-16s error: %s\n", names[i], r->error);
              continue;
            }
          const MlMetrics *m = &r->metrics;
          char oom[64] = "-";
          if (r->plan->oom.hit && r->plan->oom.request)
            snprintf (oom, sizeof oom, "%s @%" PRIu64, r->plan->oom.fragmentation ? "fragmentation" : "capacity", r->plan->oom.tick);
          else if (r->plan->oom.hit)
            snprintf (oom, sizeof oom, "over capacity");
          char time[32];
          if (strcmp (names[i], "recorded") == 0)
            snprintf (time, sizeof time, "-");
          else if (r->plan->seconds < 1)
            snprintf (time, sizeof time, "%.2f ms", r->plan->seconds * 1e3);
          else
            snprintf (time, sizeof time, "%.2f s", r->plan->seconds);
          char nodes[32] = "-";
          if (r->plan->ops)
            snprintf (nodes, sizeof nodes, "%.1f", (double) r->plan->nodes_visited / (double) r->plan->ops);
          printf ("%-16s %14" PRIu64 " %11s %+8.2f%% %8.3f %9.3f  %-22s %10s %8s%s\n", names[i], m->peak, cli_size (m->peak),
                  m->overhead * 100.0, m->frag_max, m->frag_at_peak, oom, time, nodes, r->plan->optimal ? "  optimal" : "");
        }
    }
  if (have_conf && !o.json)
    {
      printf ("\ncaching conformance (replayed from the state rebuilt at the trace's first event)\n");
      ml_caching_conformance_print (stdout, &conf, false);
    }
out:
  for (size_t i = 0; i < nres; i++)
    ml_result_clear (&res[i]);
  free (res);
  free (names);
  free (list);
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return exit_code;
}
