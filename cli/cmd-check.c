#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/analysis/check.h"
#include "sim/analysis/races.h"
#include "sim/base/jsonutil.h"

static void
print_json (const char *path, const MlBuffers *bufs, const MlPlan *plan, const MlIssues *issues, size_t total)
{
  printf ("{\"trace\":");
  ml_json_put_str (stdout, path);
  printf (",\"plan\":");
  ml_json_put_str (stdout, plan->strategy);
  printf (",\"valid\":%s,\"counts\":{", total ? "false" : "true");
  for (int k = 0; k < ML_ISSUE__COUNT; k++)
    printf ("%s\"%s\":%zu", k ? "," : "", ml_issue_kind_name ((MlIssueKind) k), issues->total[k]);
  printf ("},\"issues\":[");
  for (size_t i = 0; i < issues->n; i++)
    {
      const MlIssue *is = &issues->items[i];
      printf ("%s{\"kind\":\"%s\",\"a\":", i ? "," : "", ml_issue_kind_name (is->kind));
      ml_json_put_u64 (stdout, bufs->buf[is->a].id);
      printf (",\"b\":");
      ml_json_put_u64 (stdout, bufs->buf[is->b].id);
      printf (",\"tick\":%" PRIu64 ",\"tick_b\":%" PRIu64 ",\"segment\":%u,\"offset\":%" PRIu64 ",\"bytes\":%" PRIu64
              ",\"stream_a\":%" PRIu64 ",\"stream_b\":%" PRIu64 ",\"why\":",
              is->tick, is->tick_b, is->segment, is->offset, is->bytes, ml_trace_stream_id (bufs->trace, is->stream_a),
              ml_trace_stream_id (bufs->trace, is->stream_b));
      ml_json_put_str (stdout, is->why);
      printf ("}");
    }
  printf ("]}\n");
}

static void
print_text (const char *path, const MlBuffers *bufs, const MlPlan *plan, const MlIssues *issues, size_t total)
{
  for (size_t i = 0; i < issues->n; i++)
    {
      const MlIssue *is = &issues->items[i];
      printf ("%-12s tick %-10" PRIu64 " segment %u offset %" PRIu64 ": %s\n",
              ml_issue_kind_name (is->kind), is->tick, is->segment, is->offset, is->why);
    }
  if (issues->n < total)
    printf ("... %zu more not shown\n", total - issues->n);
  if (total)
    {
      printf ("%s: %zu problem%s in the %s plan:", path, total, total == 1 ? "" : "s", plan->strategy);
      for (int k = 0; k < ML_ISSUE__COUNT; k++)
        if (issues->total[k])
          printf (" %zu %s", issues->total[k], ml_issue_kind_name ((MlIssueKind) k));
      printf ("\n");
    }
  else
    printf ("%s: the %s plan is valid (%zu buffer%s, %zu segment%s)\n", path, plan->strategy, bufs->n, bufs->n == 1 ? "" : "s",
            plan->n_segments, plan->n_segments == 1 ? "" : "s");
}

/* Checks @plan over @bufs and prints what it found. */
static int
check_plan (const char *path, const MlBuffers *bufs, const MlPlan *plan, bool json)
{
  MlIssues issues;
  ml_issues_init (&issues);
  MlError err = { 0 };
  int rc;
  if (ml_check_plan (bufs, plan, &issues, &err) < 0 || ml_check_races (bufs, plan, &issues, &err) < 0)
    rc = cli_error ("check", &err);
  else
    {
      size_t total = ml_issues_count (&issues);
      if (json)
        print_json (path, bufs, plan, &issues, total);
      else
        print_text (path, bufs, plan, &issues, total);
      rc = total ? EXIT_PROBLEMS : EXIT_OK;
    }
  ml_issues_clear (&issues);
  return rc;
}

static int
cmd_check (int argc, char **argv)
{
  MlCliOpts o;
  int rc = cli_parse (&cli_cmd_check, argc, argv, &o, NULL);
  if (rc != CLI_PARSED)
    return rc;
  if (optind + 1 != argc && optind + 2 != argc)
    return cli_usage (&cli_cmd_check);
  const char *path = argv[optind];
  if (optind + 2 == argc)
    o.plan_path = argv[optind + 1];
  /* a plan file, or an offline planner's plan, is checked against the
   * buffers (and the trace's kernels and syncs, which a CSV has none of) */
  const MlStrategy *s = o.strategy ? ml_strategy_find (o.strategy) : NULL;
  o.buffers_only = o.plan_path || (s && s->kind == ML_STRATEGY_OFFLINE);
  MlTrace *t;
  MlBuffers *bufs;
  if ((rc = cli_load ("check", path, &o, &t, &bufs)))
    return rc;
  MlPlan *plan = NULL;
  if ((rc = cli_get_plan ("check", bufs, &o, &plan)) == EXIT_OK)
    rc = check_plan (path, bufs, plan, o.json);
  ml_plan_free (plan);
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return rc;
}

const CliCommand cli_cmd_check = {
  .name = "check",
  .bit = CLI_CHECK,
  .summary = "validate a plan against a trace: conflicts, alignment, bounds",
  .usage = "memlens check [OPTIONS] TRACE [PLAN.json|PLAN.csv]\n"
           "memlens check [OPTIONS] PLAN.csv   (a CSV with offsets: its own plan)\n",
  .about = "Validates a plan against the trace: buffers whose lifetimes and bytes\n"
           "overlap (conflicts), misaligned offsets, buffers outside their segment,\n"
           "bytes reused across streams with no synchronisation between the free\n"
           "and the reuse (cross-stream), and in-place writes over inputs that are\n"
           "still read (in-place; graph inputs). See docs/races.md.\n"
           "PLAN is a plan 'memlens plan' wrote: JSON, or the CSV (id,lower,upper,size,\n"
           "offset) whose rows are matched to the trace's buffers by id, each row's\n"
           "lower, upper and size checked against its buffer.\n"
           "Without PLAN: the --strategy's plan, else the recorded addresses.\n"
           "Exit code 1 when anything is found.\n",
  .run = cmd_check,
};
