/* online — the foundation's benchmark: load speed of the native format and
 * replay speed of each online strategy at 1M and 10M events, with memory.
 *
 * Usage: online [--events 1M,10M] [--live N] [--seed S] [--keep DIR]
 *               [--strategies A,B,...] [--repeat N]
 * Prints a Markdown table; docs/performance.md records it. Ratios are to a
 * null strategy measured in the same run (the driver's own cost). Replay
 * speed is given twice: by wall time and by the thread's CPU time, which
 * a shared machine's other work does not stretch (the ratio uses it);
 * --repeat N keeps the fastest of N replays of each strategy.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench/gen.h"
#include "sim/formats/jsonl.h"
#include "sim/formats/load.h"
#include "sim/sim.h"
#include "sim/base/units.h"
#include "strategies/registry.h"

static double
cpu_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* Is @name in the comma list @list (NULL: every strategy)? */
static bool
wanted (const char *list, const char *name)
{
  if (!list)
    return true;
  size_t n = strlen (name);
  for (const char *p = list; *p;)
    {
      size_t k = strcspn (p, ",");
      if (k == n && strncmp (p, name, n) == 0)
        return true;
      p += k + (p[k] == ',');
    }
  return false;
}

static double
rss_mib (void)
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return (double) ru.ru_maxrss / 1024.0;
}

/* the null strategy: places everything at 0; the driver's cost alone */
static int null_create (MlSimContext *ctx, const MlKnobs *k, void **st, MlError *e)
{
  (void) k; (void) e;
  *st = NULL;
  return ml_sim_reserve (ctx, 0, 0, ML_SEG_GROWABLE) < 0 ? ML_ENOMEM : 0;
}
static int null_alloc (void *st, const MlRequest *r, MlPlacement *out, uint64_t *v)
{
  (void) st; (void) r; (void) v;
  out->segment = 0;
  out->offset = 0;
  return 0;
}
static void null_release (void *st, const MlRequest *r, const MlPlacement *at, uint64_t *v) { (void) st; (void) r; (void) at; (void) v; }
static void null_destroy (void *st) { (void) st; }
static const MlStrategy null_strategy = {
  .name = "(driver only)", .kind = ML_STRATEGY_ONLINE,
  .create = null_create, .alloc = null_alloc, .release = null_release, .destroy = null_destroy,
};

int
main (int argc, char **argv)
{
  const char *sizes = "1M,10M", *keep = NULL, *only = NULL;
  int repeat = 1;
  GenParams p;
  gen_params_init (&p);
  p.live = 10000;
  int c;
  static const struct option opts[] = {
    { "events", required_argument, 0, 'e' }, { "live", required_argument, 0, 'l' },
    { "seed", required_argument, 0, 's' }, { "keep", required_argument, 0, 'k' },
    { "strategies", required_argument, 0, 'S' }, { "repeat", required_argument, 0, 'r' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
  };
  MlError err = { 0 };
  while ((c = getopt_long (argc, argv, "e:l:s:k:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'e': sizes = optarg; break;
      case 'l': if (ml_parse_size (optarg, &p.live, &err) < 0) { fprintf (stderr, "%s\n", err.msg); return 2; } break;
      case 's': p.seed = strtoull (optarg, NULL, 10); break;
      case 'k': keep = optarg; break;
      case 'S': only = optarg; break;
      case 'r': repeat = atoi (optarg) > 0 ? atoi (optarg) : 1; break;
      case 'h':
        printf ("Usage: online [--events 1M,10M] [--live N] [--seed S] [--keep DIR] [--strategies A,B,...] [--repeat N]\n");
        return 0;
      default: return 2;
      }
  char *list = strdup (sizes), *save = NULL;
  for (char *tok = strtok_r (list, ",", &save); tok; tok = strtok_r (NULL, ",", &save))
    {
      if (ml_parse_size (tok, &p.events, &err) < 0)
        {
          fprintf (stderr, "%s\n", err.msg);
          return 2;
        }
      MlTrace *gen = ml_trace_new ();
      gen_trace (&p, gen);
      char path[4096];
      snprintf (path, sizeof path, "%s/memlens-bench-%" PRIu64 ".jsonl", keep ? keep : "/tmp", p.events);
      if (ml_trace_write_jsonl (gen, path, &err) < 0)
        {
          fprintf (stderr, "%s\n", err.msg);
          return 1;
        }
      ml_trace_free (gen);
      double t0 = ml_now ();
      MlTrace *t;
      if (ml_trace_load (path, NULL, &t, &err) < 0)
        {
          fprintf (stderr, "%s\n", err.msg);
          return 1;
        }
      double load = ml_now () - t0;
      if (!keep)
        unlink (path);
      t0 = ml_now ();
      MlBuffers *b;
      ml_buffers_build (t, 0, &b, &err);
      double life = ml_now () - t0;
      const MlStrategy *list2[16] = { &null_strategy };
      size_t ns = 1;
      for (const MlStrategy *const *s = ml_strategies_all (); *s; s++)
        if ((*s)->kind == ML_STRATEGY_ONLINE && ns < 16 && wanted (only, (*s)->name))
          list2[ns++] = *s;
      printf ("### %" PRIu64 " events, live set ~%" PRIu64 " buffers\n\n"
              "load: %.2fM events/s (%.2f s), lifetimes: %.2fM events/s, max RSS so far %.0f MiB\n\n",
              p.events, p.live, (double) t->n_events / load / 1e6, load, (double) t->n_events / life / 1e6, rss_mib ());
      printf ("| strategy | replay (events/s, wall) | replay (events/s, CPU) | CPU time vs driver only | nodes/op | peak / lower bound | max RSS |\n");
      printf ("|---|---:|---:|---:|---:|---:|---:|\n");
      double base = 0;
      for (size_t i = 0; i < ns; i++)
        {
          MlKnobs k;
          ml_knobs_init (&k);
          MlPlan *plan = NULL;
          double cpu = 0, sec = 0;
          for (int r = 0; r < repeat; r++)
            {
              MlPlan *run;
              double c0 = cpu_now ();
              if (ml_sim_run (b, list2[i], &k, &run, &err) < 0)
                break;
              double used = cpu_now () - c0;
              if (!plan || used < cpu)
                cpu = used;
              if (!plan || run->seconds < sec)
                sec = run->seconds;
              ml_plan_free (plan);
              plan = run;
            }
          if (!plan)
            {
              fprintf (stderr, "%s: %s\n", list2[i]->name, err.msg);
              continue;
            }
          if (i == 0)
            base = cpu;
          char ratio[32] = "-";
          if (i > 0 && b->lower_bound && plan->n_segments == 1)
            snprintf (ratio, sizeof ratio, "%.3f", (double) plan->segments[0].size / (double) b->lower_bound);
          printf ("| %s | %.2fM | %.2fM | %.2fx | %.1f | %s | %.0f MiB |\n", list2[i]->name,
                  (double) t->n_events / sec / 1e6, (double) t->n_events / cpu / 1e6, cpu / base,
                  plan->ops ? (double) plan->nodes_visited / (double) plan->ops : 0.0, ratio, rss_mib ());
          ml_plan_free (plan);
        }
      printf ("\nmemory budget: %zu bytes per event, %zu per buffer in the core arrays; "
              "%zu events, %zu buffers\n\n", sizeof (MlEvent), sizeof (MlBuffer), t->n_events, b->n);
      ml_buffers_free (b);
      ml_trace_free (t);
    }
  free (list);
  return 0;
}
