/* memlens fit: the largest value of a graph's symbolic dimension (the
 * batch) whose plan fits a capacity, per strategy.
 *
 * For each strategy, peak(b) is the peak of the strategy's plan of the
 * graph with the dimension bound to b; every plan is checked
 * (ml_check_plan) and an invalid one is an error. The search doubles b
 * from 1 while the plan fits, then bisects between the last b that fits
 * and the first that does not: it ends at a b that fits with b + 1 not
 * fitting. A heuristic's peak need not grow with b, so a larger b may fit
 * again past that boundary; the lower bound's row is monotone and bounds
 * every strategy. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/analysis/check.h"
#include "sim/base/jsonutil.h"

typedef struct {
  uint64_t b, peak;
} Point;

typedef struct {
  const MlStrategy *s;      /* NULL: the lower bound */
  const char *name;
  uint64_t    largest;      /* 0 = not even 1 fits */
  uint64_t    peak, peak_next;
  bool        capped;       /* largest reached --max */
  size_t      evals;
  Point      *pts;
  size_t      n_pts, cap_pts;
  char        error[ML_ERROR_MAX + 64];   /* "DIM=N: " and a message */
} Row;

typedef struct {
  const char *path;
  const char *dim;
  const char *fixed_dims;   /* the other --dim bindings */
  MlCliOpts  *o;
  uint64_t    capacity;
  uint64_t    max;
  uint64_t    plot_top;     /* the plot's right end */
} Fit;

/* Peak of @r's strategy at @b (or the lower bound); 0 with the error in
 * r->error when loading, planning or the check fails. */
static int
peak_at (const Fit *f, Row *r, uint64_t b, uint64_t *peak)
{
  for (size_t i = 0; i < r->n_pts; i++)
    if (r->pts[i].b == b)
      {
        *peak = r->pts[i].peak;
        return 0;
      }
  char dims[1200];
  snprintf (dims, sizeof dims, "%s%s%s=%" PRIu64, f->fixed_dims ? f->fixed_dims : "", f->fixed_dims ? "," : "", f->dim, b);
  MlLoadOptions lo = f->o->load;
  lo.dims = dims;
  lo.progress = NULL;
  MlError err = { 0 };
  MlTrace *t = NULL;
  MlBuffers *bufs = NULL;
  MlPlan *plan = NULL;
  int rc = ml_trace_load (f->path, &lo, &t, &err);
  if (rc == 0)
    rc = ml_buffers_build (t, f->o->knobs.align, &bufs, &err);
  if (rc == 0 && !r->s)
    *peak = bufs->lower_bound;
  else if (rc == 0)
    {
      MlKnobs k = f->o->knobs;
      k.capacity = 0;   /* the whole peak, not the first failure */
      k.progress = NULL;
      MlMetrics m;
      MlIssues is;
      ml_issues_init (&is);
      if ((rc = ml_sim_run (bufs, r->s, &k, &plan, &err)) == 0
          && (rc = ml_metrics_compute (bufs, plan, &m, NULL, &err)) == 0
          && (rc = ml_check_plan (bufs, plan, &is, &err)) == 0)
        {
          if (ml_issues_count (&is))
            rc = ml_error_set (&err, ML_EINPUT, "the plan at %s=%" PRIu64 " is invalid: %s", f->dim, b,
                               is.n ? is.items[0].why : "");
          *peak = m.peak;
        }
      ml_issues_clear (&is);
    }
  if (rc < 0)
    snprintf (r->error, sizeof r->error, "%s=%" PRIu64 ": %s", f->dim, b, err.msg[0] ? err.msg : ml_error_code_name (rc));
  else
    {
      r->evals++;
      if (r->n_pts == r->cap_pts)
        {
          size_t cap = r->cap_pts ? r->cap_pts * 2 : 32;
          Point *p = realloc (r->pts, cap * sizeof *p);
          if (!p)
            rc = ML_ENOMEM, snprintf (r->error, sizeof r->error, "out of memory");
          else
            r->pts = p, r->cap_pts = cap;
        }
      if (rc == 0)
        r->pts[r->n_pts++] = (Point) { b, *peak };
    }
  ml_plan_free (plan);
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return rc;
}

static int
search (const Fit *f, Row *r)
{
  uint64_t p, lo = 0, hi = 1;
  /* double while it fits */
  for (;;)
    {
      if (peak_at (f, r, hi, &p) < 0)
        return -1;
      if (p > f->capacity)
        break;
      lo = hi;
      if (hi >= f->max)
        {
          r->capped = true;
          break;
        }
      hi = hi > f->max / 2 ? f->max : hi * 2;
    }
  if (!r->capped)
    while (hi - lo > 1)
      {
        uint64_t mid = lo + (hi - lo) / 2;
        if (peak_at (f, r, mid, &p) < 0)
          return -1;
        if (p <= f->capacity)
          lo = mid;
        else
          hi = mid;
      }
  r->largest = lo;
  if (lo && peak_at (f, r, lo, &r->peak) < 0)
    return -1;
  if (!r->capped && peak_at (f, r, lo + 1, &r->peak_next) < 0)
    return -1;
  return 0;
}

static int
cmp_point (const void *a, const void *b)
{
  const Point *x = a, *y = b;
  return x->b < y->b ? -1 : x->b > y->b;
}

/* A nice step (1, 2, 5 x 10^k) for about @n ticks over [0, hi]. */
static double
nice_step (double hi, int n)
{
  double raw = hi / n, p = 1;
  while (p * 10 <= raw)
    p *= 10;
  while (p > raw && p > 1e-9)
    p /= 10;
  double m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static const char *const colors[] = { "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
                                      "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac" };

/* The plot: peak against the dimension, one line per strategy, the
 * capacity as a dashed line. */
static void
write_svg (FILE *fp, const Fit *f, Row *rows, size_t n)
{
  const double W = 900, H = 520, L = 90, R = 200, T = 40, B = 60;
  /* x up to the grid's end; y up to the highest peak there, at most 2.5 x
   * the capacity (steeper lines leave the plot, clipped) */
  uint64_t xmax = f->plot_top ? f->plot_top : 1, ymax = f->capacity;
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < rows[i].n_pts; k++)
      if (rows[i].pts[k].b <= xmax && rows[i].pts[k].peak > ymax)
        ymax = rows[i].pts[k].peak;
  if (ymax / 5 * 2 > f->capacity)
    ymax = f->capacity / 2 * 5;
  double gib = 1024.0 * 1024 * 1024, unit = ymax >= 4 * gib ? gib : ymax >= 4 << 20 ? 1024.0 * 1024 : 1024.0;
  const char *uname = unit == gib ? "GiB" : unit > 1024 ? "MiB" : "KiB";
  double ys = nice_step ((double) ymax / unit, 6), ytop = ys * (double) (uint64_t) ((double) ymax / unit / ys + 1);
  double xs = nice_step ((double) xmax, 8), xtop = xs * (double) (uint64_t) ((double) xmax / xs + 1);
  double pw = W - L - R, ph = H - T - B;
#define X(v) (L + (double) (v) / xtop * pw)
#define Y(v) (T + ph - (double) (v) / unit / ytop * ph)
  fprintf (fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"DejaVu Sans, sans-serif\" font-size=\"12\">\n", W, H, W, H);
  fprintf (fp, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n");
  const char *base = strrchr (f->path, '/');
  fprintf (fp, "<text x=\"%.0f\" y=\"24\" font-size=\"15\" font-weight=\"bold\">", L);
  for (const char *s = base ? base + 1 : f->path; *s; s++)
    fputs (*s == '<' ? "&lt;" : *s == '&' ? "&amp;" : (char[]) { *s, 0 }, fp);
  fprintf (fp, ": peak against %s</text>\n", f->dim);
  for (double v = 0; v <= ytop + 1e-9; v += ys)
    {
      double y = T + ph - v / ytop * ph;
      fprintf (fp, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>", L, L + pw, y, y);
      fprintf (fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g %s</text>\n", L - 6, y + 4, v, uname);
    }
  for (double v = 0; v <= xtop + 1e-9; v += xs)
    {
      double x = L + v / xtop * pw;
      fprintf (fp, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>", x, x, T, T + ph);
      fprintf (fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", x, T + ph + 18, v);
    }
  fprintf (fp, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n", L, T, pw, ph);
  fprintf (fp, "<clipPath id=\"fitplot\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/></clipPath>\n", L, T, pw, ph);
  fprintf (fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", L + pw / 2, H - 18, f->dim);
  fprintf (fp, "<text transform=\"translate(20 %.1f) rotate(-90)\" text-anchor=\"middle\">peak</text>\n", T + ph / 2);
  double cy = Y (f->capacity);
  fprintf (fp, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#c0161a\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>"
               "<text x=\"%.1f\" y=\"%.1f\" fill=\"#c0161a\">capacity %s</text>\n",
           L, L + pw, cy, cy, L + 6, cy - 5, cli_size (f->capacity));
  for (size_t i = 0; i < n; i++)
    {
      Row *r = &rows[i];
      const char *col = r->s ? colors[i % (sizeof colors / sizeof colors[0])] : "#222";
      qsort (r->pts, r->n_pts, sizeof *r->pts, cmp_point);
      fprintf (fp, "<polyline clip-path=\"url(#fitplot)\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"", col, r->s ? "1.6" : "2.2",
               r->s ? "" : " stroke-dasharray=\"2 3\"");
      for (size_t k = 0; k < r->n_pts; k++)
        fprintf (fp, "%.1f,%.1f ", X (r->pts[k].b), Y (r->pts[k].peak));
      fprintf (fp, "\"/>\n");
      if (r->largest && !r->error[0])
        fprintf (fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", X (r->largest), Y (r->peak), col);
      double ly = T + 10 + 18.0 * (double) i;
      fprintf (fp, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>", L + pw + 14,
               L + pw + 36, ly, ly, col);
      fprintf (fp, "<text x=\"%.1f\" y=\"%.1f\">%s: %s=%" PRIu64 "%s</text>\n", L + pw + 42, ly + 4, r->name, f->dim,
               r->largest, r->capped ? "+" : "");
    }
  fprintf (fp, "</svg>\n");
#undef X
#undef Y
}

static void
write_json (FILE *fp, const Fit *f, const Row *rows, size_t n)
{
  fprintf (fp, "{\"graph\":");
  ml_json_put_str (fp, f->path);
  fprintf (fp, ",\"dim\":");
  ml_json_put_str (fp, f->dim);
  fprintf (fp, ",\"capacity\":%" PRIu64 ",\"max\":%" PRIu64 ",\"rows\":[", f->capacity, f->max);
  for (size_t i = 0; i < n; i++)
    {
      const Row *r = &rows[i];
      fprintf (fp, "%s{\"strategy\":", i ? "," : "");
      ml_json_put_str (fp, r->name);
      if (r->error[0])
        {
          fprintf (fp, ",\"error\":");
          ml_json_put_str (fp, r->error);
        }
      else
        {
          fprintf (fp, ",\"largest\":%" PRIu64 ",\"peak\":%" PRIu64 ",\"capped\":%s", r->largest, r->peak,
                   r->capped ? "true" : "false");
          if (!r->capped)
            fprintf (fp, ",\"peak_next\":%" PRIu64, r->peak_next);
          fprintf (fp, ",\"evaluations\":%zu", r->evals);
        }
      fprintf (fp, ",\"curve\":[");
      for (size_t k = 0; k < r->n_pts; k++)
        fprintf (fp, "%s[%" PRIu64 ",%" PRIu64 "]", k ? "," : "", r->pts[k].b, r->pts[k].peak);
      fprintf (fp, "]}");
    }
  fprintf (fp, "]}\n");
}

static void
write_html (FILE *fp, const Fit *f, Row *rows, size_t n)
{
  fprintf (fp, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>memlens fit</title><style>"
               "body{font:14px/1.45 system-ui,'DejaVu Sans',sans-serif;color:#222;max-width:1000px;margin:24px auto}"
               "table{border-collapse:collapse}th,td{padding:4px 10px;border-bottom:1px solid #ececef;text-align:left}"
               "td.r{text-align:right;font-variant-numeric:tabular-nums}</style></head><body>\n<h1>Which %s fits</h1>\n<p>",
           f->dim);
  for (const char *s = f->path; *s; s++)
    fputs (*s == '<' ? "&lt;" : *s == '&' ? "&amp;" : (char[]) { *s, 0 }, fp);
  fprintf (fp, " under a capacity of %s: for each strategy, the largest %s whose plan fits (each plan checked), the "
               "peak there and at the next value.</p>\n<table><tr><th>strategy</th><th>largest %s</th><th>peak at it</th>"
               "<th>peak at +1</th><th>plans</th></tr>\n", cli_size (f->capacity), f->dim, f->dim);
  for (size_t i = 0; i < n; i++)
    {
      const Row *r = &rows[i];
      if (r->error[0])
        {
          fprintf (fp, "<tr><td>%s</td><td colspan=\"4\">error: ", r->name);
          for (const char *s = r->error; *s; s++)
            fputs (*s == '<' ? "&lt;" : *s == '&' ? "&amp;" : (char[]) { *s, 0 }, fp);
          fprintf (fp, "</td></tr>\n");
          continue;
        }
      fprintf (fp, "<tr><td>%s</td><td class=\"r\">%" PRIu64 "%s</td><td class=\"r\">%s</td><td class=\"r\">%s</td>"
                   "<td class=\"r\">%zu</td></tr>\n", r->name, r->largest, r->capped ? " (the --max)" : "",
               r->largest ? cli_size (r->peak) : "-", r->capped ? "-" : cli_size (r->peak_next), r->evals);
    }
  fprintf (fp, "</table>\n<figure>\n");
  write_svg (fp, f, rows, n);
  fprintf (fp, "<figcaption>Peak of each strategy's plan against %s (the points the search and a grid evaluated); "
               "the dot is the largest %s that fits; the dashed red line is the capacity.</figcaption></figure>\n"
               "</body></html>\n", f->dim, f->dim);
}

static const CliOption fit_options[] = {
  { "dim", 0, CLI_OPT_DIM, "NAME", "the dimension to search (once); NAME=N binds another (repeatable)" },
  { "capacity", 0, CLI_OPT_CAPACITY, "SIZE", "the capacity to fit under, e.g. 40G (needed)" },
  { "max", 0, CLI_OPT_OWN, "N", "the largest value to try", "1048576" },
  { "output", 'o', 'o', "FILE", "the report: .html (table and plot), .svg (the plot), .json" },
  { NULL },
};

static int
fit_option (MlCliOpts *o, void *user, int key, const char *arg)
{
  Fit *f = user;
  switch (key)
    {
    case CLI_OPT_OWN:
      if (ml_parse_u64 (arg, strlen (arg), &f->max) < 0 || f->max == 0)
        return cli_fail ("fit", EXIT_BAD, "--max %s: not a positive integer", arg);
      return 0;
    case 'o':
      o->output = arg;
      return 0;
    case CLI_OPT_DIM:
      if (strchr (arg, '='))
        break;
      if (f->dim)
        return cli_fail ("fit", EXIT_BAD, "--dim %s: fit searches one dimension (already %s); bind others with NAME=N",
                         arg, f->dim);
      f->dim = arg;
      return 0;
    }
  cli_common_option ("fit", o, key, arg);
  return 0;
}

/* The graph must load at dimension 1, with a clear message otherwise. */
static int
probe (Fit *f)
{
  MlTrace *t;
  MlBuffers *bufs;
  char dims[1200];
  snprintf (dims, sizeof dims, "%s%s%s=1", f->fixed_dims ? f->fixed_dims : "", f->fixed_dims ? "," : "", f->dim);
  f->o->load.dims = dims;
  int rc = cli_load ("fit", f->path, f->o, &t, &bufs);
  f->o->load.dims = f->fixed_dims;
  if (rc)
    return rc;
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return EXIT_OK;
}

/* Each row's search, then the curve: a grid over [1, 1.25 x the largest]
 * beside the search's points. */
static void
evaluate (Fit *f, Row *rows, size_t n)
{
  const MlProgress *prog = cli_progress (f->o->quiet);
  uint64_t xmax = 1;
  for (size_t i = 0; i < n; i++)
    {
      if (prog)
        prog->report (prog->user, (double) i / (double) n, rows[i].name);
      search (f, &rows[i]);
      if (!rows[i].error[0] && rows[i].largest + 1 > xmax)
        xmax = rows[i].largest + 1;
    }
  uint64_t top = xmax + xmax / 4 > f->max ? f->max : xmax + xmax / 4;
  f->plot_top = top;
  for (int k = 1; k <= 16; k++)
    {
      uint64_t b = (top * (uint64_t) k + 15) / 16;
      for (size_t i = 0; i < n; i++)
        {
          uint64_t p;
          if (!rows[i].error[0] && b >= 1)
            peak_at (f, &rows[i], b, &p);
        }
    }
  cli_progress_done ();
  for (size_t i = 0; i < n; i++)
    qsort (rows[i].pts, rows[i].n_pts, sizeof *rows[i].pts, cmp_point);
}

static void
print_text (const Fit *f, const Row *rows, size_t n)
{
  printf ("%s: the largest %s that fits under %s, per strategy (each plan checked)\n", f->path, f->dim,
          cli_size (f->capacity));
  printf ("%-18s %10s %26s %26s %6s\n", "strategy", f->dim, "peak at it", "peak at +1", "plans");
  for (size_t i = 0; i < n; i++)
    {
      const Row *r = &rows[i];
      if (r->error[0])
        {
          printf ("%-18s error: %s\n", r->name, r->error);
          continue;
        }
      char bb[32], p0[64] = "-", p1[64] = "-";
      snprintf (bb, sizeof bb, "%" PRIu64 "%s", r->largest, r->capped ? "+" : "");
      if (r->largest)
        snprintf (p0, sizeof p0, "%" PRIu64 " (%s)", r->peak, cli_size (r->peak));
      if (!r->capped)
        snprintf (p1, sizeof p1, "%" PRIu64 " (%s)", r->peak_next, cli_size (r->peak_next));
      printf ("%-18s %10s %26s %26s %6zu\n", r->name, bb, p0, p1, r->evals);
    }
  for (size_t i = 0; i < n; i++)
    if (rows[i].capped)
      {
        printf ("(+: still fits at --max %" PRIu64 ")\n", f->max);
        break;
      }
}

/* -o FILE: the report as @ext, written atomically. */
static int
write_output (const Fit *f, Row *rows, size_t n, const char *ext)
{
  MlError err = { 0 };
  MlOut *out = ml_out_open (f->o->output, &err);
  if (!out)
    return cli_error ("fit", &err);
  FILE *fp = ml_out_file (out);
  if (strcmp (ext, "json") == 0)
    write_json (fp, f, rows, n);
  else if (strcmp (ext, "svg") == 0)
    write_svg (fp, f, rows, n);
  else
    write_html (fp, f, rows, n);
  if (ml_out_commit (out, &err) < 0)
    return cli_error ("fit", &err);
  if (!f->o->quiet)
    fprintf (stderr, "%s: wrote %s\n", f->path, f->o->output);
  return EXIT_OK;
}

/* The rows (the lower bound, then each strategy of @list), evaluated,
 * printed and written. */
static int
fit_rows (Fit *f, const MlStrategy *const *list, const char *ext)
{
  size_t n = 1;
  while (list[n - 1])
    n++;
  Row *rows = calloc (n, sizeof *rows);
  if (!rows)
    return cli_fail ("fit", EXIT_BAD, "out of memory");
  rows[0].name = "lower-bound";
  for (size_t i = 1; i < n; i++)
    rows[i].s = list[i - 1], rows[i].name = list[i - 1]->name;
  evaluate (f, rows, n);
  int rc = EXIT_OK;
  bool all_failed = true;   /* the exit code: 2 when no strategy has an answer */
  for (size_t i = 1; i < n; i++)
    all_failed &= rows[i].error[0] != 0;
  if (f->o->json)
    write_json (stdout, f, rows, n);
  else
    print_text (f, rows, n);
  if (f->o->output)
    rc = write_output (f, rows, n, ext);
  if (rc == EXIT_OK && (all_failed || rows[0].error[0]))
    rc = EXIT_BAD;
  for (size_t i = 0; i < n; i++)
    free (rows[i].pts);
  free (rows);
  return rc;
}

static int
cmd_fit (int argc, char **argv)
{
  MlCliOpts o;
  Fit f = { .o = &o };
  int rc = cli_parse (&cli_cmd_fit, argc, argv, &o, &f);
  if (rc != CLI_PARSED)
    return rc;
  if (optind + 1 != argc)
    return cli_usage (&cli_cmd_fit);
  if (!f.dim)
    return cli_fail ("fit", EXIT_BAD, "which dimension? --dim NAME (e.g. --dim B)");
  if (!o.knobs.capacity)
    return cli_fail ("fit", EXIT_BAD, "--capacity SIZE is needed (e.g. --capacity 40G)");
  f.path = argv[optind];
  f.capacity = o.knobs.capacity;
  f.fixed_dims = o.load.dims;
  char ext[16] = "";
  if (o.output)
    {
      ml_path_ext (o.output, ext, sizeof ext, NULL);
      if (strcmp (ext, "html") != 0 && strcmp (ext, "svg") != 0 && strcmp (ext, "json") != 0)
        return cli_fail ("fit", EXIT_BAD, "%s: write the report as .html, .svg or .json", o.output);
    }
  if ((rc = probe (&f)))
    return rc;
  const MlStrategy **list = cli_strategies ("fit", o.strategies);
  if (!list)
    return EXIT_BAD;
  rc = fit_rows (&f, list, ext);
  free (list);
  return rc;
}

const CliCommand cli_cmd_fit = {
  .name = "fit",
  .bit = CLI_FIT,
  .summary = "the largest batch (a graph's symbolic dimension) whose plan fits a capacity, per strategy",
  .usage = "memlens fit [OPTIONS] GRAPH --capacity SIZE --dim NAME\n",
  .about = "For each strategy, the largest value of the graph's symbolic dimension\n"
           "NAME (e.g. the batch B in \"shape\":[\"B\",3,224,224]) whose plan fits\n"
           "under the capacity, with the peaks at that value and the next; every\n"
           "plan is checked. The row \"lower-bound\" is the most any strategy can\n"
           "reach. Other dimensions are bound with --dim NAME=N.\n",
  .options = fit_options,
  .option = fit_option,
  .run = cmd_fit,
};
