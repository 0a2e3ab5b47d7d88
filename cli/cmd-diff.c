/* memlens diff — two runs compared: peaks and bytes per call site. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/analysis/diff.h"
#include "sim/base/jsonutil.h"

#ifdef HAVE_RENDER
#include "render/diff-html.h"
#endif

static const CliOption diff_options[] = {
  { "output", 'o', 'o', "FILE", "also write the report: .html (both runs' active memory on one scale, and the "
    "table), written atomically" },
  { "interactive", 0, 'I', NULL, "the .html page draws both runs in the browser, linked: zoom, pan, hover, search "
    "(docs/diff.md)" },
  { NULL },
};

static int
diff_option (MlCliOpts *o, void *user, int key, const char *arg)
{
  if (key == 'I')
    *(bool *) user = true;
  else
    o->output = arg;
  return 0;
}

static void
print_signed (FILE *fp, int64_t v)
{
  fprintf (fp, "%s%s", v > 0 ? "+" : v < 0 ? "-" : "", cli_size ((uint64_t) (v < 0 ? -v : v)));
}

static bool
worth_a_line (const MlDiffRow *r)
{
  return r->a_bytes || r->b_bytes || r->a_max != r->b_max || r->status != ML_DIFF_BOTH || r->resized
         || r->a_allocs != r->b_allocs;
}

static void
print_text (const MlDiff *d, const char *pa, const char *pb)
{
  printf ("A  %s: peak %s at tick %" PRIu64 "\n", pa, cli_size (d->a_peak), d->a_peak_tick);
  printf ("B  %s: peak %s at tick %" PRIu64 "\n", pb, cli_size (d->b_peak), d->b_peak_tick);
  int64_t change = (int64_t) d->b_peak - (int64_t) d->a_peak;
  printf ("change ");
  print_signed (stdout, change);
  if (d->a_peak)
    printf (" (%+.1f%%)", 100.0 * (double) change / (double) d->a_peak);
  printf ("\n");
  if (d->anchors)
    printf ("%zu allocations paired between the %zu marks both runs share\n", d->pairs, d->anchors);
  else
    printf ("%zu allocations paired by order per call site (no marks in common)\n", d->pairs);
  printf ("\n%-44s %12s %12s %13s %12s %12s %13s %8s\n", "call site", "at A's peak", "at B's peak", "change", "A's own max",
          "B's own max", "allocs A->B", "resized");
  size_t shown = 0, left = 0;
  for (size_t i = 0; i < d->n_rows; i++)
    {
      const MlDiffRow *r = &d->rows[i];
      if (!worth_a_line (r))
        continue;
      if (shown == 40)
        {
          left++;
          continue;
        }
      char site[45];
      size_t n = strlen (r->site);
      if (n > 44)
        snprintf (site, sizeof site, "...%s", r->site + n - 41);
      else
        snprintf (site, sizeof site, "%s", r->site);
      char allocs[32], ch[40];
      snprintf (allocs, sizeof allocs, "%zu -> %zu", r->a_allocs, r->b_allocs);
      snprintf (ch, sizeof ch, "%s%s", r->change > 0 ? "+" : r->change < 0 ? "-" : "",
                cli_size ((uint64_t) (r->change < 0 ? -r->change : r->change)));
      printf ("%-44s %12s %12s %13s %12s %12s %13s %8zu%s\n", site, cli_size (r->a_bytes), cli_size (r->b_bytes), ch,
              cli_size (r->a_max), cli_size (r->b_max), allocs, r->resized,
              r->status == ML_DIFF_NEW ? "  new in B" : r->status == ML_DIFF_GONE ? "  gone in B" : "");
      shown++;
    }
  if (left)
    printf ("... %zu more call sites (--json lists them all)\n", left);
  printf ("at A's / B's peak: the site's bytes live at that run's peak (the two peaks may fall in different\n"
          "phases); own max: the most of the site's bytes live at once anywhere in that run.\n");
}

static void
print_json (const MlDiff *d, const char *pa, const char *pb)
{
  printf ("{\"a\":{\"path\":");
  ml_json_put_str (stdout, pa);
  printf (",\"peak\":%" PRIu64 ",\"peak_tick\":%" PRIu64 ",\"ticks\":%" PRIu64 "},\"b\":{\"path\":", d->a_peak,
          d->a_peak_tick, d->a_end);
  ml_json_put_str (stdout, pb);
  printf (",\"peak\":%" PRIu64 ",\"peak_tick\":%" PRIu64 ",\"ticks\":%" PRIu64 "},", d->b_peak, d->b_peak_tick, d->b_end);
  printf ("\"change\":%" PRId64 ",\"aligned_by\":\"%s\",\"anchors\":%zu,\"pairs\":%zu,\"sites\":[",
          (int64_t) d->b_peak - (int64_t) d->a_peak, d->anchors ? "marks" : "order", d->anchors, d->pairs);
  for (size_t i = 0; i < d->n_rows; i++)
    {
      const MlDiffRow *r = &d->rows[i];
      printf ("%s{\"site\":", i ? "," : "");
      ml_json_put_str (stdout, r->site);
      printf (",\"a_bytes\":%" PRIu64 ",\"b_bytes\":%" PRIu64 ",\"change\":%" PRId64 ",\"a_allocs\":%zu,"
              "\"b_allocs\":%zu,\"resized\":%zu,\"status\":\"%s\",\"a_max\":%" PRIu64 ",\"a_max_tick\":%" PRIu64
              ",\"b_max\":%" PRIu64 ",\"b_max_tick\":%" PRIu64 "}",
              r->a_bytes, r->b_bytes, r->change, r->a_allocs, r->b_allocs, r->resized, ml_diff_status_name (r->status),
              r->a_max, r->a_max_tick, r->b_max, r->b_max_tick);
    }
  printf ("]}\n");
}

#ifdef HAVE_RENDER
/* The HTML report: both runs' plans drawn on one scale beside the table. */
static int
write_html (const MlDiff *d, const char *pa, const MlBuffers *ba, MlCliOpts *oa, const char *pb, const MlBuffers *bb,
            MlCliOpts *ob, bool interactive)
{
  MlPlan *plan_a = NULL, *plan_b = NULL;
  int rc = cli_get_plan ("diff", ba, oa, &plan_a);
  if (rc == EXIT_OK)
    rc = cli_get_plan ("diff", bb, ob, &plan_b);
  if (rc == EXIT_OK)
    {
      MlError err = { 0 };
      MlDiffSide sa = { pa, ba, plan_a }, sb = { pb, bb, plan_b };
      if (ml_diff_write_html_file (oa->output, d, &sa, &sb, interactive, &err) < 0)
        rc = cli_error ("diff", &err);
      else if (!oa->quiet)
        fprintf (stderr, "memlens diff: wrote %s\n", oa->output);
    }
  ml_plan_free (plan_a);
  ml_plan_free (plan_b);
  return rc;
}
#endif

static int
cmd_diff (int argc, char **argv)
{
  MlCliOpts o;
  bool interactive = false;
  int rc = cli_parse (&cli_cmd_diff, argc, argv, &o, &interactive);
  if (rc != CLI_PARSED)
    return rc;
  if (optind + 2 != argc)
    return cli_usage (&cli_cmd_diff);
  if (interactive && !o.output)
    return cli_fail ("diff", EXIT_BAD, "--interactive: only the HTML page (-o DIFF.html) has pictures");
  const char *pa = argv[optind], *pb = argv[optind + 1];
  if (o.output)
    {
      const char *dot = strrchr (o.output, '.');
      if (!dot || (strcmp (dot, ".html") != 0 && strcmp (dot, ".htm") != 0))
        return cli_fail ("diff", EXIT_BAD, "%s: the report is written as .html", o.output);
#ifndef HAVE_RENDER
      return cli_fail ("diff", EXIT_BAD, "this memlens was built without cairo: no HTML report (install libcairo2-dev and libpango1.0-dev and rebuild)");
#endif
    }
  MlCliOpts ob = o;
  MlTrace *ta = NULL, *tb = NULL;
  MlBuffers *ba = NULL, *bb = NULL;
  rc = cli_load ("diff", pa, &o, &ta, &ba);
  if (rc == EXIT_OK)
    rc = cli_load ("diff", pb, &ob, &tb, &bb);
  MlDiff d = { 0 };
  MlError err = { 0 };
  if (rc == EXIT_OK && ml_diff_compute (ba, bb, &d, &err) < 0)
    rc = cli_error ("diff", &err);
  if (rc == EXIT_OK)
    {
      if (o.json)
        print_json (&d, pa, pb);
      else
        print_text (&d, pa, pb);
    }
#ifdef HAVE_RENDER
  if (rc == EXIT_OK && o.output)
    rc = write_html (&d, pa, ba, &o, pb, bb, &ob, interactive);
#endif
  ml_diff_clear (&d);
  ml_buffers_free (ba);
  ml_buffers_free (bb);
  ml_trace_free (ta);
  ml_trace_free (tb);
  return rc;
}

const CliCommand cli_cmd_diff = {
  .name = "diff",
  .bit = CLI_DIFF,
  .summary = "compare two runs: each peak, the change, bytes per call site at each peak",
  .usage = "memlens diff [OPTIONS] A B\n",
  .about = "Compares two traces of the same program (snapshots, profiler traces,\n"
           "JSONL, any two formats): the peak of each and the difference, and per\n"
           "call site the bytes live at A's peak and at B's peak, largest change\n"
           "first; call sites only in B are \"new\", only in A \"gone\". Allocations\n"
           "are paired per call site in order, restarting at each mark (annotation)\n"
           "both traces share.\n",
  .options = diff_options,
  .option = diff_option,
  .run = cmd_diff,
};
