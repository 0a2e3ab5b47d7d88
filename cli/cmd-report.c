/* memlens report — a tuning report: HTML (with pictures), Markdown, JSON, CSV. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "render/report/report.h"

#ifdef HAVE_RENDER
#include "render/report-html.h"
#include "render/scene.h"
#endif

typedef struct {
  const char *sweep_spec;
  const char *axis;
  const char *color_by;     /* --color-by, checked once the trace is read */
  bool        interactive;
} ReportArgs;

static const CliOption report_options[] = {
  { "output", 'o', 'o', "FILE", ".html, .md, .json or .csv (written atomically)" },
  { "sweep", 0, 'S', "KNOB=V1,V2,...", "add a table of every strategy once per value (as compare --sweep; .html, "
    ".md, .json)" },
  { "axis", 0, 'A', "time|ticks|auto", "the x axis of the HTML report's pictures: time (real time) or ticks; auto: "
    "time when every event has one", "auto" },
  { "time-axis", 0, 'A', "time|ticks|auto", "the same as --axis" },
  { "color-by", 0, 'C', "KEY", "what a buffer's colour says in the HTML report's pictures: site, stream, kind, "
    "compile_context or user_metadata (as render --color-by)", "site" },
  { "interactive", 0, 'I', NULL, "the HTML report draws its address × time pictures in the browser: zoom, pan, "
    "hover, search (docs/report.md)" },
  { NULL },
};

static int
report_option (MlCliOpts *o, void *user, int key, const char *arg)
{
  ReportArgs *a = user;
  if (key == 'o')
    o->output = arg;
  else if (key == 'S')
    a->sweep_spec = arg;
  else if (key == 'I')
    a->interactive = true;
  else if (key == 'C')
    a->color_by = arg;
  else
    {
      if (strcmp (arg, "time") != 0 && strcmp (arg, "ticks") != 0 && strcmp (arg, "auto") != 0)
        return cli_fail ("report", EXIT_BAD, "--axis %s: expected time or ticks (auto: time when every event has one)", arg);
      a->axis = arg;
    }
  return 0;
}

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

/* The output's extension against what the report holds: 0, or the
 * exit code after saying why not. */
static int
check_output (const MlCliOpts *o, const ReportArgs *a, const char *ext, bool html)
{
  if (!html && strcmp (ext, "md") != 0 && strcmp (ext, "json") != 0 && strcmp (ext, "csv") != 0)
    return cli_fail ("report", EXIT_BAD, "%s: write the report as .html, .md, .json or .csv", o->output);
  if (cli_given (o, 'A') && !html)
    return cli_fail ("report", EXIT_BAD, "--axis: only the HTML report has pictures (write .html)");
  if (a->interactive && !html)
    return cli_fail ("report", EXIT_BAD, "--interactive: only the HTML report has pictures (write .html)");
  if (cli_given (o, 'C') && !html)
    return cli_fail ("report", EXIT_BAD, "--color-by: only the HTML report has pictures (write .html)");
  if (cli_given (o, 'C') && a->interactive)
    return cli_fail ("report", EXIT_BAD, "--color-by: the interactive page has its own colour choice (drop --color-by)");
  if (a->sweep_spec && strcmp (ext, "csv") == 0)
    return cli_fail ("report", EXIT_BAD, "--sweep: the CSV report is one row per strategy, with no room for a sweep (use .html, .md or .json)");
#ifndef HAVE_RENDER
  if (html)
    return cli_fail ("report", EXIT_BAD, "this memlens was built without cairo: no HTML report (use .md, .json or .csv)");
#endif
  return EXIT_OK;
}

/* Writes the built report; exit 1 when a strategy ran out of memory. */
static int
write_report (const char *path, const MlReport *r, const ReportArgs *a, const MlCliOpts *o)
{
  MlError err = { 0 };
#ifdef HAVE_RENDER
  MlStyle style;
  ml_style_init (&style);
  ml_time_axis_parse (a->axis, &style.time_axis);
  if (a->color_by)
    ml_color_by_parse (a->color_by, &style.color_by);   /* checked by report_trace */
  MlHtmlOptions opts = { .style = &style, .interactive = a->interactive };
  int w = ml_report_write_file (r, o->output, &opts, &err);
#else
  int w = ml_report_write (r, o->output, &err);
#endif
  if (w < 0)
    return cli_error ("report", &err);
  /* the file records an OOM: exit 1, as stats, compare and diagnose */
  MlRecordedOom rec;
  if (cli_recorded_oom ("report", r->bufs, &rec))
    return EXIT_BAD;
  bool oom = rec.found;
  for (size_t i = 0; i < r->n_rows; i++)
    oom = oom || (r->rows[i].res.status == 0 && r->rows[i].res.plan && r->rows[i].res.plan->oom.hit);
  if (!o->quiet)
    fprintf (stderr, "%s: wrote %s (%zu strategies, best %s)\n", path, o->output, r->n_rows,
             r->best >= 0 ? r->rows[r->best].name : "none");
  return oom ? EXIT_PROBLEMS : EXIT_OK;
}

/* A strategy that refused its settings, or every strategy failing: no report. */
static int
check_rows (const MlReport *r)
{
  const MlResult **rows = calloc (r->n_rows + 1, sizeof *rows);
  if (!rows)
    return cli_fail ("report", EXIT_BAD, "out of memory");
  for (size_t i = 0; i < r->n_rows; i++)
    rows[i] = &r->rows[i].res;
  int rc = cli_check_rows ("report", rows, r->n_rows);
  free (rows);
  return rc;
}

/* Builds the report of @list over the loaded trace (and the sweep) and writes it. */
static int
report_trace (const char *path, const MlBuffers *bufs, const MlStrategy **list, const ReportArgs *a, MlCliOpts *o)
{
  MlReport *r = NULL;
  MlError err = { 0 };
#ifdef HAVE_RENDER
  /* before any strategy runs: a colouring the pictures cannot have */
  MlColorBy by;
  if (a->color_by && (ml_color_by_parse (a->color_by, &by) < 0 || by == ML_COLOR_BY_FRAMES))
    return cli_fail ("report", EXIT_BAD, "--color-by %s: expected site, stream, kind, compile_context or user_metadata "
                     "(frames:REGEX is render's and the viewer's)", a->color_by);
  if (a->color_by && ml_color_by_check (bufs->trace, by, NULL, &err) < 0)
    return cli_fail ("report", EXIT_BAD, "%s: --color-by %s: %s", path, a->color_by, err.msg);
#endif
  o->knobs.progress = cli_progress (o->quiet);
  int built = ml_report_build (path, bufs, list, &o->knobs, &r, &err);
  if (built == 0 && a->sweep_spec)
    {
      const MlStrategy *const *swept = sweepable (list);
      if (!o->quiet)
        cli_note_sweep ("report", a->sweep_spec, swept);
      built = ml_knob_sweep_run (a->sweep_spec, bufs, swept, &o->knobs, &r->sweep, &err);
    }
  cli_progress_done ();
  int rc = built < 0 ? cli_error ("report", &err) : check_rows (r);
  if (rc == EXIT_OK && a->sweep_spec)
    rc = cli_check_sweep ("report", r->sweep);
  if (rc == EXIT_OK)
    rc = write_report (path, r, a, o);
  ml_report_free (r);
  return rc;
}

static int
cmd_report (int argc, char **argv)
{
  MlCliOpts o;
  ReportArgs a = { 0 };
  int rc = cli_parse (&cli_cmd_report, argc, argv, &o, &a);
  if (rc != CLI_PARSED)
    return rc;
  if (optind >= argc || !o.output)
    return cli_usage (&cli_cmd_report);
  char ext[16];
  ml_path_ext (o.output, ext, sizeof ext, NULL);
  bool html = strcmp (ext, "html") == 0 || strcmp (ext, "htm") == 0;
  if ((rc = check_output (&o, &a, ext, html)))
    return rc;
  if (argc - optind > 1)
    {
      /* the view across the ranks: no strategy runs */
      if (a.sweep_spec || a.interactive || cli_given (&o, 'A') || cli_given (&o, 'C') || cli_given (&o, CLI_OPT_STRATEGIES))
        return cli_fail ("report", EXIT_BAD, "%s: a report of several files shows them across the ranks and runs no "
                         "strategy (report one file for that)", a.sweep_spec ? "--sweep" : a.interactive
                         ? "--interactive" : cli_given (&o, 'A') ? "--axis" : cli_given (&o, 'C') ? "--color-by"
                         : "--strategies");
      return cli_report_ranks (argc, argv, optind, &o, html);
    }
  const MlStrategy **list = cli_strategies ("report", o.strategies);
  if (!list)
    return EXIT_BAD;
  cli_note_knobs ("report", &o, list);
  if ((rc = cli_check_options ("report", &o, (const MlStrategy *const *) list)) != EXIT_OK)
    {
      free (list);
      return rc;
    }
  const char *path = argv[optind];
  MlTrace *t;
  MlBuffers *bufs;
  if ((rc = cli_load ("report", path, &o, &t, &bufs)) == EXIT_OK)
    {
      rc = report_trace (path, bufs, list, &a, &o);
      ml_buffers_free (bufs);
      ml_trace_free (t);
    }
  free (list);
  return rc;
}

const CliCommand cli_cmd_report = {
  .name = "report",
  .bit = CLI_REPORT,
  .summary = "write a tuning report: strategies, peaks with blame, OOM, races (.html/.md/.json/.csv)",
  .usage = "memlens report [OPTIONS] TRACE -o REPORT.html|.md|.json|.csv\n"
           "memlens report [OPTIONS] RANK_TRACE... [--jobs N] -o REPORT.html|.md|.json|.csv\n",
  .about = "Runs the strategies over the trace and writes a report: the comparison\n"
           "table, the lower bound, peak points with blame, fragmentation, OOM\n"
           "verdicts under --capacity, conflicts and races, and the knobs used. The\n"
           "HTML report is one self-contained file with the timeline pictures; the\n"
           "JSON report follows docs/report-schema.md. A trace that recorded an OOM\n"
           "(a PyTorch snapshot) gets it first, in the summary. Exit code 1 when the\n"
           "trace recorded an OOM or a strategy runs out of memory under --capacity\n"
           "(as for stats, compare and diagnose); 2, with no report, as compare: an\n"
           "--options key no strategy reads, a strategy refusing its settings, every\n"
           "strategy failing.\n"
           "With several files (one per rank of a job: rank3 in their names, or\n"
           "names alike but for their numbers) it reports them across the ranks:\n"
           "one figure of each rank's peak reserved and allocated bytes, the ranks\n"
           "that recorded an OOM marked, the imbalance, the call site that differs\n"
           "most, and a table of the files; its JSON is stats --json's.\n",
  .options = report_options,
  .option = report_option,
  .run = cmd_report,
};
