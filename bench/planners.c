/* bench/planners — every offline planner on every CSV instance of a folder.
 *
 *   planners DIR [--time-limit S] [--strategies a,b,c] [--fit [--fit-limit S]]
 *   planners --synthetic BUFFERS [--live N] [--strategies a,b,c]
 *
 * For each instance (sorted by name) and strategy: buffers, lower bound,
 * peak, peak / lower bound, wall and CPU seconds (the machine is shared:
 * CPU seconds are the stabler figure; time limits are wall clock), the
 * search's nodes and backtracks (exact), whether the strategy proved its peak
 * optimal, and whether the plan validates (ml_check_plan). The capacity of
 * an instance is the number in its file name (A.1048576.csv); with --fit,
 * exact also runs in fixed-capacity mode at that capacity ("exact fit",
 * time limit --fit-limit, default 60 s).
 * --synthetic runs the strategies on a generated trace instead (bench/gen.h:
 * a live set hovering around --live buffers, default 1000, log-normal
 * sizes, alignment 256), for the speed of the greedy planners at scale.
 * Prints a Markdown table for docs/performance.md.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/analysis/check.h"
#include "sim/formats/csv.h"
#include "sim/formats/load.h"
#include "sim/sim.h"
#include "strategies/registry.h"
#include "bench/gen.h"

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static double
cpu_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void
row (const char *inst, const MlBuffers *b, const char *label, const MlStrategy *s, MlKnobs *k)
{
  MlPlan *p = NULL;
  MlError err = { 0 };
  double t0 = ml_now (), c0 = cpu_now ();
  int rc = ml_sim_run (b, s, k, &p, &err);
  double secs = ml_now () - t0, cpu = cpu_now () - c0;
  if (rc < 0)
    {
      printf ("| %s | %zu | %" PRIu64 " | %s | – | – | %.3f | %.3f | – | – | %s | – |\n", inst, b->n, b->lower_bound, label, secs,
              cpu, ml_error_code_name (rc));
      fprintf (stderr, "%s %s: %s\n", inst, label, err.msg);
      return;
    }
  MlIssues is;
  ml_issues_init (&is);
  ml_check_plan (b, p, &is, NULL);
  uint64_t peak = ml_plan_arena_size (p, b);
  char nodes[32] = "–", bt[32] = "–";
  if (p->nodes_visited && p->ops == 0)   /* a search (online strategies count list nodes per op) */
    {
      snprintf (nodes, sizeof nodes, "%" PRIu64, p->nodes_visited);
      snprintf (bt, sizeof bt, "%" PRIu64, p->backtracks);
    }
  printf ("| %s | %zu | %" PRIu64 " | %s | %" PRIu64 " | %.4f | %.3f | %.3f | %s | %s | %s | %s |\n", inst, b->n, b->lower_bound, label,
          peak, b->lower_bound ? (double) peak / (double) b->lower_bound : 1.0, secs, cpu, nodes, bt,
          p->optimal ? "yes" : (p->proven_lb > b->lower_bound ? "lb only" : "no"),
          ml_issues_count (&is) ? "NO" : "yes");
  if (p->note)
    fprintf (stderr, "%s %s: %s\n", inst, label, p->note);
  fflush (stdout);
  ml_issues_clear (&is);
  ml_plan_free (p);
}

int
main (int argc, char **argv)
{
  const char *dir = NULL, *list = "greedy-size,greedy-breadth,greedy-conflict,hybrid,anneal,genetic,ilp,exact";
  double limit = 10, fit_limit = 60;
  bool fit = false;
  uint64_t synthetic = 0, live = 1000;
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--time-limit") == 0 && i + 1 < argc)
        limit = atof (argv[++i]);
      else if (strcmp (argv[i], "--strategies") == 0 && i + 1 < argc)
        list = argv[++i];
      else if (strcmp (argv[i], "--fit-limit") == 0 && i + 1 < argc)
        fit_limit = atof (argv[++i]);
      else if (strcmp (argv[i], "--synthetic") == 0 && i + 1 < argc)
        synthetic = strtoull (argv[++i], NULL, 10);
      else if (strcmp (argv[i], "--live") == 0 && i + 1 < argc)
        live = strtoull (argv[++i], NULL, 10);
      else if (strcmp (argv[i], "--fit") == 0)
        fit = true;
      else if (argv[i][0] != '-' && !dir)
        dir = argv[i];
      else
        {
          fprintf (stderr, "usage: planners DIR [--time-limit S] [--strategies a,b] [--fit [--fit-limit S]]\n");
          return 2;
        }
    }
  if (synthetic)
    {
      MlTrace *t = NULL;
      MlBuffers *b = NULL;
      MlError err = { 0 };
      if (gen_buffers (synthetic, live, &t, &b, &err) < 0)
        {
          fprintf (stderr, "generating: %s\n", err.msg);
          return 1;
        }
      char inst[64];
      snprintf (inst, sizeof inst, "synthetic (live ~%" PRIu64 ")", live);
      printf ("| instance | buffers | lower bound | strategy | peak | peak / LB | wall s | cpu s | nodes | backtracks | optimal | valid |\n");
      printf ("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---|\n");
      char *copy = strdup (list), *save = NULL;
      for (char *s = strtok_r (copy, ",", &save); s; s = strtok_r (NULL, ",", &save))
        {
          const MlStrategy *st = ml_strategy_find (s);
          MlKnobs k;
          ml_knobs_init (&k);
          k.time_limit = limit;
          if (st)
            row (inst, b, s, st, &k);
        }
      free (copy);
      ml_buffers_free (b);
      ml_trace_free (t);
      return 0;
    }
  if (!dir)
    {
      fprintf (stderr, "usage: planners DIR [--time-limit S] [--strategies a,b] [--fit [--fit-limit S]]\n");
      return 2;
    }
  DIR *d = opendir (dir);
  if (!d)
    {
      perror (dir);
      return 2;
    }
  char *names[1024];
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir (d)) && n < 1024)
    {
      size_t len = strlen (e->d_name);
      if (len > 4 && strcmp (e->d_name + len - 4, ".csv") == 0)
        names[n++] = strdup (e->d_name);
    }
  closedir (d);
  qsort (names, n, sizeof *names, cmp_str);
  printf ("| instance | buffers | lower bound | strategy | peak | peak / LB | wall s | cpu s | nodes | backtracks | optimal | valid |\n");
  printf ("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---|\n");
  for (size_t f = 0; f < n; f++)
    {
      char path[4096];
      snprintf (path, sizeof path, "%s/%s", dir, names[f]);
      MlTrace *t = NULL;
      MlBuffers *b = NULL;
      MlError err = { 0 };
      if (ml_trace_load (path, NULL, &t, &err) < 0 || ml_buffers_build (t, 0, &b, &err) < 0)
        {
          fprintf (stderr, "%s: %s\n", path, err.msg);
          ml_trace_free (t);
          continue;
        }
      uint64_t cap = ml_capacity_from_name (path);
      char *copy = strdup (list), *save = NULL;
      for (char *s = strtok_r (copy, ",", &save); s; s = strtok_r (NULL, ",", &save))
        {
          const MlStrategy *st = ml_strategy_find (s);
          if (!st)
            {
              fprintf (stderr, "no strategy %s in this build\n", s);
              continue;
            }
          MlKnobs k;
          ml_knobs_init (&k);
          k.time_limit = limit;
          row (names[f], b, s, st, &k);
          if (fit && cap && strcmp (s, "exact") == 0)
            {
              char label[64];
              snprintf (label, sizeof label, "exact fit %" PRIu64, cap);
              k.capacity = cap;
              k.time_limit = fit_limit;
              row (names[f], b, label, st, &k);
            }
        }
      free (copy);
      ml_buffers_free (b);
      ml_trace_free (t);
    }
  for (size_t f = 0; f < n; f++)
    free (names[f]);
  return 0;
}
