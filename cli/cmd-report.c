/* memlens report — a tuning report: HTML (with pictures), Markdown, JSON, CSV. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "render/report/report.h"

#ifdef HAVE_RENDER
#include "render/report-html.h"
#endif

static const char usage_text[] =
  "Usage: memlens report [OPTIONS] TRACE -o REPORT.html|.md|.json|.csv\n"
  "Runs the strategies over the trace and writes a report: the comparison\n"
  "table, the lower bound, peak points with blame, fragmentation, OOM\n"
  "verdicts under --capacity, conflicts and races, and the knobs used. The\n"
  "HTML report is one self-contained file with the timeline pictures; the\n"
  "JSON report follows docs/report-schema.md. Exit code 1 when a strategy\n"
  "runs out of memory under --capacity (as for compare).\n";

/* @list without the recorded plan, which no knob changes (in place). */
static const MlStrategy *const *
sweepable (const MlStrategy **list)
{
  size_t m = 0;
  for (size_t i = 0; list[i]; i++)
    if (!(list[i]->flags & ML_STRATEGY_RECORDED))
      list[m++] = list[i];
  list[m] = NULL;
  return list;
}

int
cmd_report (int argc, char **argv)
{
  static const struct option longopts[] = {
    CLI_COMMON_LONGOPTS, CLI_RANGE_LONGOPT,
    { "strategies", required_argument, 0, 's' },
    { "output", required_argument, 0, 'o' },
    { "sweep", required_argument, 0, 'S' },
    { "axis", required_argument, 0, 'A' },
    { "time-axis", required_argument, 0, 'A' },
    { 0, 0, 0, 0 },
  };
  const char *sweep_spec = NULL;
  const char *axis = NULL;
  MlCliOpts o;
  cli_opts_init (&o);
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "hs:o:", longopts, NULL)) != -1)
    {
      if (c == 'h')
        {
          printf ("%s\nOptions:\n  -s, --strategies A,B,...  strategies to compare (default: %s; \"all\")\n"
                  "  -o, --output FILE         .html, .md, .json or .csv (written atomically)\n"
                  "  --sweep KNOB=V1,V2,...    add a table of every strategy once per value (as compare --sweep;\n"
                  "                            .html, .md, .json)\n"
                  "  --axis A                  the x axis of the HTML report's pictures: time (real time)\n"
                  "                            or ticks; default: time when every event has one\n%s",
                  usage_text, ml_strategies_default (), CLI_RANGE_HELP CLI_COMMON_HELP);
          return EXIT_OK;
        }
      if (c == 's')
        o.strategies = optarg;
      else if (c == 'o')
        o.output = optarg;
      else if (c == 'S')
        sweep_spec = optarg;
      else if (c == 'A')
        {
          if (strcmp (optarg, "time") != 0 && strcmp (optarg, "ticks") != 0 && strcmp (optarg, "auto") != 0)
            return cli_fail ("report", EXIT_BAD, "--axis %s: expected time or ticks (auto: time when every event has one)", optarg);
          axis = optarg;
        }
      else if (c == '?' || !cli_common_option ("report", &o, c, optarg))
        return cli_usage ("report", usage_text);
    }
  if (optind + 1 != argc || !o.output)
    return cli_usage ("report", usage_text);
  if (cli_no_json ("report", &o))
    return EXIT_BAD;
  char ext[16];
  ml_path_ext (o.output, ext, sizeof ext, NULL);
  bool html = strcmp (ext, "html") == 0 || strcmp (ext, "htm") == 0;
  if (!html && strcmp (ext, "md") != 0 && strcmp (ext, "json") != 0 && strcmp (ext, "csv") != 0)
    return cli_fail ("report", EXIT_BAD, "%s: write the report as .html, .md, .json or .csv", o.output);
  if (axis && !html)
    return cli_fail ("report", EXIT_BAD, "--axis: only the HTML report has pictures (write .html)");
  if (sweep_spec && strcmp (ext, "csv") == 0)
    return cli_fail ("report", EXIT_BAD, "--sweep: the CSV report is one row per strategy, with no room for a sweep (use .html, .md or .json)");
#ifndef HAVE_RENDER
  if (html)
    return cli_fail ("report", EXIT_BAD, "this memlens was built without cairo: no HTML report (use .md, .json or .csv)");
#endif
  const MlStrategy **list = cli_strategies ("report", o.strategies);
  if (list)
    cli_note_knobs ("report", &o, list);
  if (!list)
    return EXIT_BAD;
  const char *path = argv[optind];
  MlTrace *t;
  MlBuffers *bufs;
  int rc = cli_load ("report", path, &o, &t, &bufs);
  if (rc)
    {
      free (list);
      return rc;
    }
  o.knobs.progress = cli_progress (o.quiet);
  MlReport *r = NULL;
  MlError err = { 0 };
  int built = ml_report_build (path, bufs, list, &o.knobs, &r, &err);
  if (built == 0 && sweep_spec)
    {
      const MlStrategy *const *swept = sweepable (list);
      if (!o.quiet)
        cli_note_sweep ("report", sweep_spec, swept);
      built = ml_knob_sweep_run (sweep_spec, bufs, swept, &o.knobs, &r->sweep, &err);
    }
  if (built < 0)
    {
      cli_progress_done ();
      rc = cli_error ("report", &err);
    }
  else
    {
      cli_progress_done ();
#ifdef HAVE_RENDER
      MlStyle style;
      ml_style_init (&style);
      if (axis)
        ml_time_axis_parse (axis, &style.time_axis);
      int w = ml_report_write_file (r, o.output, &style, &err);
#else
      int w = ml_report_write (r, o.output, &err);
#endif
      if (w < 0)
        rc = cli_error ("report", &err);
      else
        {
          bool oom = false;
          for (size_t i = 0; i < r->n_rows; i++)
            oom = oom || (r->rows[i].res.status == 0 && r->rows[i].res.plan && r->rows[i].res.plan->oom.hit);
          if (!o.quiet)
            fprintf (stderr, "%s: wrote %s (%zu strategies, best %s)\n", path, o.output, r->n_rows,
                     r->best >= 0 ? r->rows[r->best].name : "none");
          rc = oom ? EXIT_PROBLEMS : EXIT_OK;
        }
    }
  ml_report_free (r);
  free (list);
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return rc;
}
