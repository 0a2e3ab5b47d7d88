/* tune-batch.c — memlens tune over runs at several batch sizes: which
 * batch fits (strategies/caching-batch.h). */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/base/jsonutil.h"
#include "strategies/caching-batch.h"

/* The batch a file name states: "bs16", "batch-16", "b16" (the last such
 * word); 0 when none. */
static uint64_t
batch_from_name (const char *path)
{
  const char *base = strrchr (path, '/');
  base = base ? base + 1 : path;
  uint64_t found = 0;
  for (const char *p = base; *p; p++)
    {
      if (p > base && isalnum ((unsigned char) p[-1]))
        continue;   /* a word's start */
      const char *q = p;
      if (strncasecmp (q, "batch", 5) == 0)
        q += 5;
      else if (strncasecmp (q, "bs", 2) == 0)
        q += 2;
      else if (tolower ((unsigned char) *q) == 'b')
        q += 1;
      else
        continue;
      if (*q == '-' || *q == '_' || *q == '=')
        q++;
      if (!isdigit ((unsigned char) *q))
        continue;
      uint64_t v = strtoull (q, NULL, 10);
      found = v ? v : found;
    }
  return found;
}

/* --batch: "8,16,..." (one per file), or "NAME=4,8,16" (one graph file
 * loaded once per value of its symbolic dimension NAME). */
static int
parse_batches (const char *spec, uint64_t *out, size_t max, size_t *n, char *dim, size_t dim_len)
{
  const char *eq = strchr (spec, '=');
  *dim = 0;
  if (eq)
    {
      if ((size_t) (eq - spec) >= dim_len || eq == spec)
        return cli_fail ("tune", EXIT_BAD, "--batch %s: write NAME=V1,V2 or V1,V2", spec);
      memcpy (dim, spec, (size_t) (eq - spec));
      dim[eq - spec] = 0;
      spec = eq + 1;
    }
  *n = 0;
  for (const char *p = spec; *p;)
    {
      size_t len = strcspn (p, ",");
      uint64_t v;
      if (*n == max || ml_parse_u64 (p, len, &v) < 0 || v == 0)
        return cli_fail ("tune", EXIT_BAD, "--batch: \"%.*s\" is not a batch size (a positive integer; at most %zu)",
                         (int) len, p, max);
      out[(*n)++] = v;
      p += len + (p[len] == ',');
    }
  return *n >= 2 ? EXIT_OK : cli_fail ("tune", EXIT_BAD, "--batch: give two batch sizes or more");
}

static void
print_batch (const MlBatchFit *f, const MlTune *t, const char *alt)
{
  printf ("\nwhich batch fits (%zu runs; %zu of the template's %zu allocations matched in every run, by call site "
          "or name and order):\n", f->n_runs, f->matched, f->template_allocs);
  printf ("%8s %14s %18s %24s\n", "batch", "run's peak", "predicted", alt ? "predicted with answer" : "");
  for (size_t k = 0; k < f->n_points; k++)
    {
      const MlBatchPoint *p = &f->points[k];
      char pred[64], alt_s[64] = "";
      snprintf (pred, sizeof pred, "%s%s", cli_size (p->predicted), f->capacity && !p->fits ? " OOM" : "");
      if (alt)
        snprintf (alt_s, sizeof alt_s, "%s%s", cli_size (p->predicted_alt), f->capacity && !p->fits_alt ? " OOM" : "");
      printf ("%8" PRIu64 " %14s %18s %24s\n", p->batch, p->given ? cli_size (p->actual) : "-", pred, alt_s);
    }
  if (f->capacity)
    {
      printf ("largest batch that fits under %s: %" PRIu64 "%s with the recorded settings", cli_size (f->capacity),
              f->largest, f->capped && !alt ? " or more" : "");
      if (alt)
        printf (", %" PRIu64 " with %s", f->largest_alt, alt);
      printf ("\n");
    }
  if (f->loo_error >= 0)
    printf ("uncertainty: predicting each run's reserved peak from the others, the largest error was %.1f%%\n",
            f->loo_error * 100.0);
  else
    printf ("uncertainty: two runs give one line per allocation and no estimate of its error; the prediction holds "
            "if every allocation's size is fixed + per-sample x batch (a third run measures it)\n");
  (void) t;
}

static void
json_batch (const MlBatchFit *f, const char *alt)
{
  printf (",\"batch\":{\"runs\":%zu,\"template_allocations\":%zu,\"matched\":%zu,\"leave_one_out_error\":", f->n_runs,
          f->template_allocs, f->matched);
  if (f->loo_error >= 0)
    printf ("%.6f", f->loo_error);
  else
    printf ("null");
  printf (",\"capacity\":");
  ml_json_put_u64 (stdout, f->capacity);
  printf (",\"alt\":");
  ml_json_put_str (stdout, alt);
  printf (",\"largest\":%" PRIu64 ",\"largest_alt\":%" PRIu64 ",\"capped\":%s,\"points\":[", f->largest,
          f->largest_alt, f->capped ? "true" : "false");
  for (size_t k = 0; k < f->n_points; k++)
    {
      const MlBatchPoint *p = &f->points[k];
      printf ("%s{\"batch\":%" PRIu64 ",\"given\":%s,\"actual\":", k ? "," : "", p->batch, p->given ? "true" : "false");
      ml_json_put_u64 (stdout, p->actual);
      printf (",\"predicted\":");
      ml_json_put_u64 (stdout, p->predicted);
      printf (",\"predicted_alt\":");
      ml_json_put_u64 (stdout, p->predicted_alt);
      printf (",\"fits\":%s,\"fits_alt\":%s}", p->fits ? "true" : "false", p->fits_alt ? "true" : "false");
    }
  printf ("]}");
}

/* Loads the runs: the files, or one graph once per value of @dim. */
static int
load_runs (char **paths, size_t n_paths, const char *dim, const uint64_t *batches, size_t n, MlCliOpts *o,
           MlTrace **runs)
{
  for (size_t i = 0; i < n; i++)
    {
      char dims[128];
      if (*dim)
        {
          snprintf (dims, sizeof dims, "%s=%" PRIu64, dim, batches[i]);
          o->load.dims = dims;
        }
      if (cli_tune_load (*dim ? paths[0] : paths[i], o, &runs[i]) != EXIT_OK)
        return EXIT_BAD;
    }
  (void) n_paths;
  return EXIT_OK;
}

int
cli_tune_batches (char **paths, size_t n_paths, const char *spec, MlCliOpts *o, const MlTuneOpts *to)
{
  enum { MAX = 64 };
  uint64_t batches[MAX];
  size_t n = 0;
  char dim[64] = "";
  if (spec && parse_batches (spec, batches, MAX, &n, dim, sizeof dim) != EXIT_OK)
    return EXIT_BAD;
  if (!spec)
    for (size_t i = 0; i < n_paths && i < MAX; i++)
      if (!(batches[n++] = batch_from_name (paths[i])))
        return cli_fail ("tune", EXIT_BAD, "%s: no batch size in the file name (bs16, batch-16, b16): give --batch",
                         paths[i]);
  if (*dim && n_paths != 1)
    return cli_fail ("tune", EXIT_BAD, "--batch %s=...: give one graph file", dim);
  if (!*dim && n != n_paths)
    return cli_fail ("tune", EXIT_BAD, "--batch: %zu sizes for %zu files", n, n_paths);
  MlTrace *runs[MAX] = { 0 };
  int rc = load_runs (paths, n_paths, dim, batches, n, o, runs);
  size_t tmpl = 0;
  for (size_t i = 1; i < n; i++)
    tmpl = batches[i] > batches[tmpl] ? i : tmpl;
  MlTune *tune = NULL;
  MlError err = { 0 };
  if (rc == EXIT_OK && ml_tune_run (runs[tmpl], to, &tune, &err) < 0)
    rc = cli_error ("tune", &err);
  MlBatchFit fit;
  const char *alt = tune && tune->best >= 0 ? tune->rows[tune->best].settings : NULL;
  const char *alt_change = tune && tune->best >= 0 ? tune->rows[tune->best].change : NULL;
  if (rc == EXIT_OK && tune
      && ml_batch_fit ((const MlTrace *const *) runs, batches, n, NULL, alt, tune->capacity, &fit, &err) < 0)
    rc = cli_error ("tune", &err);
  if (rc == EXIT_OK && tune)
    {
      const char *path = *dim ? paths[0] : paths[tmpl];
      if (o->json)
        {
          printf ("{\"trace\":");
          ml_json_put_str (stdout, path);
          printf (",\"device\":%u,\"tune\":", runs[tmpl]->device);
          if (ml_tune_write_json (stdout, tune, &err) < 0)
            rc = cli_error ("tune", &err);
          json_batch (&fit, alt_change);
          printf ("}\n");
        }
      else
        {
          printf ("the run at batch %" PRIu64 ": ", batches[tmpl]);
          cli_tune_print (path, runs[tmpl], tune);
          print_batch (&fit, tune, alt_change);
        }
      ml_batch_fit_clear (&fit);
    }
  ml_tune_free (tune);
  for (size_t i = 0; i < n; i++)
    ml_trace_free (runs[i]);
  return rc;
}
