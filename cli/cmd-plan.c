#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char usage_text[] =
  "Usage: memlens plan [OPTIONS] TRACE --strategy S -o PLAN.json|PLAN.csv\n"
  "Runs one strategy and writes its plan: JSON (every strategy), or a\n"
  "MiniMalloc CSV with an offset column (one-arena plans).\n";

int
cmd_plan (int argc, char **argv)
{
  static const struct option longopts[] = {
    CLI_COMMON_LONGOPTS,
    { "strategy", required_argument, 0, 's' },
    { "output", required_argument, 0, 'o' },
    { 0, 0, 0, 0 },
  };
  MlCliOpts o;
  cli_opts_init (&o);
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "hs:o:", longopts, NULL)) != -1)
    {
      if (c == 'h')
        {
          printf ("%s\nOptions:\n  -s, --strategy S   the strategy (see 'memlens strategies')\n"
                  "  -o, --output FILE  where to write the plan (.json or .csv)\n%s", usage_text, CLI_COMMON_HELP);
          return EXIT_OK;
        }
      if (c == 's')
        o.strategy = optarg;
      else if (c == 'o')
        o.output = optarg;
      else if (c == '?' || !cli_common_option ("plan", &o, c, optarg))
        return cli_usage ("plan", usage_text);
    }
  if (optind + 1 != argc || !o.strategy || !o.output)
    return cli_usage ("plan", usage_text);
  if (strcmp (o.strategy, "recorded") != 0 && !ml_strategy_find (o.strategy))
    return cli_fail ("plan", EXIT_BAD, "unknown strategy \"%s\" (see 'memlens strategies')", o.strategy);
  char ext[16];
  ml_path_ext (o.output, ext, sizeof ext, NULL);
  if (strcmp (ext, "json") != 0 && strcmp (ext, "csv") != 0)
    return cli_fail ("plan", EXIT_BAD, "%s: write the plan as .json or .csv", o.output);
  const char *path = argv[optind];
  MlTrace *t;
  MlBuffers *bufs;
  int rc = cli_load ("plan", path, &o, &t, &bufs);
  if (rc)
    return rc;
  if (!o.knobs.capacity && t->capacity)
    o.knobs.capacity = t->capacity;
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
          if (!o.quiet)
            fprintf (stderr, "%s: peak %" PRIu64 " (%s), lower bound %" PRIu64 ", overhead %+.2f%%%s%s; wrote %s\n",
                     plan->strategy, m.peak, cli_size (m.peak), m.lower_bound, m.overhead * 100,
                     plan->optimal ? ", optimal" : "", plan->oom.hit ? ", OOM under the capacity" : "", o.output);
          if (plan->oom.hit)
            rc = EXIT_PROBLEMS;
        }
    }
  ml_plan_free (plan);
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return rc;
}
