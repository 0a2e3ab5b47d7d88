#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/base/jsonutil.h"

#include "sim/formats/csv.h"

typedef struct {
  const char *write_model;
} PlanArgs;

static const CliOption plan_options[] = {
  { "strategy", 's', 's', "S", "the strategy (see 'memlens strategies')" },
  { "output", 'o', 'o', "FILE", "where to write the plan (.json or .csv)" },
  { "write-model", 0, CLI_OPT_OWN, "FILE", "with --strategy ilp: also write the MIP model as FILE.lp (CPLEX LP) or "
    "FILE.mps (free MPS)" },
  { NULL },
};

static int
plan_option (MlCliOpts *o, void *user, int key, const char *arg)
{
  if (key == 's')
    o->strategy = arg;
  else if (key == 'o')
    o->output = arg;
  else
    ((PlanArgs *) user)->write_model = arg;
  return 0;
}

/* --write-model FILE: checked, then passed on as the ilp option
 * write-model=FILE; *options (owned) holds the new option list. */
static int
add_write_model (const MlStrategy *strategy, const char *write_model, MlCliOpts *o, char **options)
{
  char mext[16];
  ml_path_ext (write_model, mext, sizeof mext, NULL);
  if (!ml_strategy_reads_option (strategy, "write-model"))
    return cli_fail ("plan", EXIT_BAD, "--write-model needs a strategy that writes a model:%s", cli_strategies_reading ("write-model"));
  if (strcmp (mext, "lp") != 0 && strcmp (mext, "mps") != 0)
    return cli_fail ("plan", EXIT_BAD, "%s: write the model as .lp or .mps", write_model);
  if (strchr (write_model, ','))
    return cli_fail ("plan", EXIT_BAD, "%s: the model path may not contain a comma", write_model);
  size_t len = strlen (write_model) + (o->knobs.options ? strlen (o->knobs.options) : 0) + 16;
  *options = malloc (len);
  if (!*options)
    return cli_fail ("plan", EXIT_BAD, "out of memory");
  snprintf (*options, len, "%s%swrite-model=%s", o->knobs.options ? o->knobs.options : "",
            o->knobs.options && *o->knobs.options ? "," : "", write_model);
  o->knobs.options = *options;
  return EXIT_OK;
}

/* The summary: on stdout as JSON (--json), else a line on stderr. */
static void
print_summary (const MlPlan *plan, const MlMetrics *m, const MlCliOpts *o)
{
  if (o->json)
    {
      /* the summary line's numbers, for a script; the plan itself is the file */
      fputs ("{\"strategy\":", stdout);
      ml_json_put_str (stdout, plan->strategy);
      printf (",\"peak\":%" PRIu64 ",\"lower_bound\":%" PRIu64, m->peak, m->lower_bound);
      if (plan->proven_lb)
        printf (",\"proven_lower_bound\":%" PRIu64, plan->proven_lb);
      printf (",\"overhead\":%.6f,\"optimal\":%s,\"oom\":%s,\"segments\":%zu,\"seconds\":%.6f,\"output\":",
              m->overhead, plan->optimal ? "true" : "false", plan->oom.hit ? "true" : "false",
              plan->n_segments, plan->seconds);
      ml_json_put_str (stdout, o->output);
      if (plan->note && *plan->note)
        {
          fputs (",\"note\":", stdout);
          ml_json_put_str (stdout, plan->note);
        }
      fputs ("}\n", stdout);
    }
  else if (!o->quiet)
    {
      /* a bound the planner proved above the live-bytes one goes beside it */
      char proven[64] = "";
      if (plan->proven_lb && !plan->optimal)
        snprintf (proven, sizeof proven, ", proven lower bound %" PRIu64, plan->proven_lb);
      fprintf (stderr, "%s: peak %" PRIu64 " (%s), lower bound %" PRIu64 "%s, overhead %+.2f%%%s%s; wrote %s\n",
               plan->strategy, m->peak, cli_size (m->peak), m->lower_bound, proven, m->overhead * 100,
               plan->optimal ? ", optimal" : "", plan->oom.hit ? ", OOM under the capacity" : "", o->output);
      /* why the planner stopped where it did ("time limit reached", ...) */
      if (plan->note && *plan->note)
        fprintf (stderr, "%s: %s\n", plan->strategy, plan->note);
    }
}

/* Runs the strategy over @path and writes its plan as @ext. */
static int
plan_trace (const char *path, const char *ext, MlCliOpts *o)
{
  MlTrace *t;
  MlBuffers *bufs;
  int rc = cli_load ("plan", path, o, &t, &bufs);
  if (rc)
    return rc;
  MlPlan *plan = NULL;
  rc = cli_get_plan ("plan", bufs, o, &plan);
  if (rc == EXIT_OK)
    {
      MlError err = { 0 };
      MlMetrics m;
      if (ml_metrics_compute (bufs, plan, &m, NULL, &err) < 0
          || (strcmp (ext, "csv") == 0 ? ml_buffers_write_csv (bufs, plan, o->output, &err)
                                       : ml_plan_write_json (plan, bufs, o->output, &err)) < 0)
        rc = cli_error ("plan", &err);
      else
        {
          print_summary (plan, &m, o);
          if (plan->oom.hit)
            rc = EXIT_PROBLEMS;
        }
    }
  ml_plan_free (plan);
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return rc;
}

static int
cmd_plan (int argc, char **argv)
{
  MlCliOpts opts, *o = &opts;
  PlanArgs a = { 0 };
  int rc = cli_parse (&cli_cmd_plan, argc, argv, o, &a);
  if (rc != CLI_PARSED)
    return rc;
  if (optind + 1 != argc || !o->strategy || !o->output)
    return cli_usage (&cli_cmd_plan);
  const MlStrategy *strategy = ml_strategy_find (o->strategy);
  if (!strategy)
    return cli_fail ("plan", EXIT_BAD, "unknown strategy \"%s\" (see 'memlens strategies')", o->strategy);
  cli_note_knobs ("plan", o, (const MlStrategy *const[]) { strategy, NULL });
  if ((rc = cli_check_options ("plan", o, (const MlStrategy *const[]) { strategy, NULL })) != EXIT_OK)
    return rc;
  char *options = NULL;
  if (a.write_model && (rc = add_write_model (strategy, a.write_model, o, &options)))
    return rc;
  /* an offline planner reads the buffers only (strategies/: no event
   * past ml_buffers_build); the online ones replay the trace */
  o->buffers_only = strategy->kind == ML_STRATEGY_OFFLINE;
  char ext[16];
  ml_path_ext (o->output, ext, sizeof ext, NULL);
  if (strcmp (ext, "json") != 0 && strcmp (ext, "csv") != 0)
    rc = cli_fail ("plan", EXIT_BAD, "%s: write the plan as .json or .csv", o->output);
  else
    rc = plan_trace (argv[optind], ext, o);
  free (options);
  return rc;
}

const CliCommand cli_cmd_plan = {
  .name = "plan",
  .bit = CLI_PLAN,
  .summary = "run one strategy and write its plan (JSON, or CSV with offsets)",
  .usage = "memlens plan [OPTIONS] TRACE --strategy S -o PLAN.json|PLAN.csv\n",
  .about = "Runs one strategy and writes its plan: JSON (every strategy), or a\n"
           "MiniMalloc CSV with an offset column (one-arena plans).\n",
  .options = plan_options,
  .option = plan_option,
  .run = cmd_plan,
};
