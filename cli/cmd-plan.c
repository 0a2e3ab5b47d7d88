#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/base/jsonutil.h"

#include "sim/formats/csv.h"

static const char usage_text[] =
  "Usage: memlens plan [OPTIONS] TRACE --strategy S -o PLAN.json|PLAN.csv\n"
  "Runs one strategy and writes its plan: JSON (every strategy), or a\n"
  "MiniMalloc CSV with an offset column (one-arena plans).\n";

int
cmd_plan (int argc, char **argv)
{
  static const struct option longopts[] = {
    CLI_COMMON_LONGOPTS, CLI_RANGE_LONGOPT,
    { "strategy", required_argument, 0, 's' },
    { "output", required_argument, 0, 'o' },
    { "write-model", required_argument, 0, 2001 },
    { 0, 0, 0, 0 },
  };
  MlCliOpts o;
  cli_opts_init (&o);
  const char *write_model = NULL;
  char *options = NULL;
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "hs:o:", longopts, NULL)) != -1)
    {
      if (c == 'h')
        {
          printf ("%s\nOptions:\n  -s, --strategy S   the strategy (see 'memlens strategies')\n"
                  "  -o, --output FILE  where to write the plan (.json or .csv)\n"
                  "  --write-model FILE with --strategy ilp: also write the MIP model as\n"
                  "                     FILE.lp (CPLEX LP) or FILE.mps (free MPS)\n%s", usage_text, CLI_RANGE_HELP CLI_JSON_HELP CLI_COMMON_HELP);
          return EXIT_OK;
        }
      if (c == 's')
        o.strategy = optarg;
      else if (c == 'o')
        o.output = optarg;
      else if (c == 2001)
        write_model = optarg;
      else if (c == '?' || !cli_common_option ("plan", &o, c, optarg))
        return cli_usage ("plan", usage_text);
    }
  if (optind + 1 != argc || !o.strategy || !o.output)
    return cli_usage ("plan", usage_text);
  const MlStrategy *strategy = ml_strategy_find (o.strategy);
  if (!strategy)
    return cli_fail ("plan", EXIT_BAD, "unknown strategy \"%s\" (see 'memlens strategies')", o.strategy);
  cli_note_knobs ("plan", &o, (const MlStrategy *const[]) { strategy, NULL });
  if (write_model)
    {
      char mext[16];
      ml_path_ext (write_model, mext, sizeof mext, NULL);
      if (!ml_strategy_reads_option (strategy, "write-model"))
        return cli_fail ("plan", EXIT_BAD, "--write-model needs a strategy that writes a model:%s", cli_strategies_reading ("write-model"));
      if (strcmp (mext, "lp") != 0 && strcmp (mext, "mps") != 0)
        return cli_fail ("plan", EXIT_BAD, "%s: write the model as .lp or .mps", write_model);
      if (strchr (write_model, ','))
        return cli_fail ("plan", EXIT_BAD, "%s: the model path may not contain a comma", write_model);
      size_t len = strlen (write_model) + (o.knobs.options ? strlen (o.knobs.options) : 0) + 16;
      options = malloc (len);
      if (!options)
        return cli_fail ("plan", EXIT_BAD, "out of memory");
      snprintf (options, len, "%s%swrite-model=%s", o.knobs.options ? o.knobs.options : "",
                o.knobs.options && *o.knobs.options ? "," : "", write_model);
      o.knobs.options = options;
    }
  char ext[16];
  ml_path_ext (o.output, ext, sizeof ext, NULL);
  if (strcmp (ext, "json") != 0 && strcmp (ext, "csv") != 0)
    return free (options), cli_fail ("plan", EXIT_BAD, "%s: write the plan as .json or .csv", o.output);
  const char *path = argv[optind];
  MlTrace *t;
  MlBuffers *bufs;
  int rc = cli_load ("plan", path, &o, &t, &bufs);
  if (rc)
    {
      free (options);
      return rc;
    }
  MlPlan *plan = NULL;
  rc = cli_get_plan ("plan", bufs, &o, &plan);
  if (rc == EXIT_OK)
    {
      MlError err = { 0 };
      MlMetrics m;
      int w;
      if (ml_metrics_compute (bufs, plan, &m, NULL, &err) < 0)
        rc = cli_error ("plan", &err);
      else if ((w = strcmp (ext, "csv") == 0 ? ml_buffers_write_csv (bufs, plan, o.output, &err)
                                             : ml_plan_write_json (plan, bufs, o.output, &err)) < 0)
        rc = cli_error ("plan", &err);
      else
        {
          if (o.json)
            {
              /* the summary line's numbers, for a script; the plan itself is the file */
              fputs ("{\"strategy\":", stdout);
              ml_json_put_str (stdout, plan->strategy);
              printf (",\"peak\":%" PRIu64 ",\"lower_bound\":%" PRIu64, m.peak, m.lower_bound);
              if (plan->proven_lb)
                printf (",\"proven_lower_bound\":%" PRIu64, plan->proven_lb);
              printf (",\"overhead\":%.6f,\"optimal\":%s,\"oom\":%s,\"segments\":%zu,\"seconds\":%.6f,\"output\":",
                      m.overhead, plan->optimal ? "true" : "false", plan->oom.hit ? "true" : "false",
                      plan->n_segments, plan->seconds);
              ml_json_put_str (stdout, o.output);
              if (plan->note && *plan->note)
                {
                  fputs (",\"note\":", stdout);
                  ml_json_put_str (stdout, plan->note);
                }
              fputs ("}\n", stdout);
            }
          else if (!o.quiet)
            {
              /* a bound the planner proved above the live-bytes one goes beside it */
              char proven[64] = "";
              if (plan->proven_lb && !plan->optimal)
                snprintf (proven, sizeof proven, ", proven lower bound %" PRIu64, plan->proven_lb);
              fprintf (stderr, "%s: peak %" PRIu64 " (%s), lower bound %" PRIu64 "%s, overhead %+.2f%%%s%s; wrote %s\n",
                       plan->strategy, m.peak, cli_size (m.peak), m.lower_bound, proven, m.overhead * 100,
                       plan->optimal ? ", optimal" : "", plan->oom.hit ? ", OOM under the capacity" : "", o.output);
              /* why the planner stopped where it did ("time limit reached", ...) */
              if (plan->note && *plan->note)
                fprintf (stderr, "%s: %s\n", plan->strategy, plan->note);
            }
          if (plan->oom.hit)
            rc = EXIT_PROBLEMS;
        }
    }
  ml_plan_free (plan);
  ml_buffers_free (bufs);
  ml_trace_free (t);
  free (options);
  return rc;
}
