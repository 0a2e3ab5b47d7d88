/* bench-tune: how long `memlens tune`'s default grid takes on a snapshot.
 *
 *   bench-tune [--jobs N] [--repeat R] FILE
 *
 * In one run: the import (ml_trace_load), one replay under the recorded
 * settings from the recorded state (the unit: what one row costs), and the
 * default grid (ml_tune_run: every row, the recorded ones and the cold
 * start included) with 1 and with N jobs; wall and CPU seconds, best of R,
 * and the grid's time in units of one replay. A 1M-event snapshot:
 * bench-snapshot --generate 200M --out FILE --keep. Target (docs/
 * performance.md): the default grid on 1M events within 5 s on 2 cores.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/gen.h"
#include "sim/formats/load.h"
#include "sim/sim.h"
#include "strategies/caching-tune.h"

typedef struct {
  double wall, cpu;
} Time;

static void
keep_best (Time *best, double w0, double c0)
{
  double w = ml_now () - w0, c = gen_cpu_now () - c0;
  if (best->wall == 0 || w < best->wall)
    best->wall = w;
  if (best->cpu == 0 || c < best->cpu)
    best->cpu = c;
}

/* The default grid with @jobs; its rows into *@rows. */
static int
grid (const MlTrace *t, unsigned jobs, Time *best, size_t *rows)
{
  MlTuneOpts o = { .jobs = jobs };
  MlTune *tune;
  MlError err = { 0 };
  double w0 = ml_now (), c0 = gen_cpu_now ();
  if (ml_tune_run (t, &o, &tune, &err) < 0)
    {
      fprintf (stderr, "bench-tune: %s\n", err.msg);
      return 1;
    }
  keep_best (best, w0, c0);
  *rows = tune->n_rows;
  ml_tune_free (tune);
  return 0;
}

int
main (int argc, char **argv)
{
  unsigned jobs = 2, repeat = 3;
  const char *path = NULL;
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--jobs") == 0 && i + 1 < argc)
      jobs = (unsigned) atoi (argv[++i]);
    else if (strcmp (argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = (unsigned) atoi (argv[++i]);
    else
      path = argv[i];
  if (!path || !jobs || !repeat)
    {
      fprintf (stderr, "usage: bench-tune [--jobs N] [--repeat R] FILE\n");
      return 2;
    }
  MlLoadOptions lo;
  ml_load_options_init (&lo);
  MlTrace *t;
  MlError err = { 0 };
  double w0 = ml_now (), c0 = gen_cpu_now ();
  if (ml_trace_load (path, &lo, &t, &err) < 0)
    {
      fprintf (stderr, "bench-tune: %s\n", err.msg);
      return 1;
    }
  Time load = { 0 }, one = { 0 }, g1 = { 0 }, gn = { 0 };
  keep_best (&load, w0, c0);
  MlCacheReplayOpts ro = { .warm = ml_cache_replay_can_warm (t) };
  size_t rows = 0;
  for (unsigned r = 0; r < repeat; r++)
    {
      MlCacheReplay rep;
      w0 = ml_now (), c0 = gen_cpu_now ();
      if (ml_cache_replay (t, NULL, &ro, &rep, &err) < 0)
        {
          fprintf (stderr, "bench-tune: %s\n", err.msg);
          return 1;
        }
      keep_best (&one, w0, c0);
      ml_cache_replay_clear (&rep);
      if (grid (t, 1, &g1, &rows) || grid (t, jobs, &gn, &rows))
        return 1;
    }
  printf ("| file | events | import | one replay | default grid (%zu rows), 1 job | %u jobs | grid / one replay (%u jobs) |\n",
          rows, jobs, jobs);
  printf ("|---|---:|---:|---:|---:|---:|---:|\n");
  printf ("| %s | %zu | %.2f s | %.3f s wall, %.3f s CPU | %.2f s wall, %.2f s CPU | %.2f s wall, %.2f s CPU | %.1fx |\n",
          path, t->n_events, load.wall, one.wall, one.cpu, g1.wall, g1.cpu, gn.wall, gn.cpu, gn.wall / one.wall);
  printf ("import + grid with %u jobs: %.2f s wall (target: 5 s on 2 cores)\n", jobs, load.wall + gn.wall);
  ml_trace_free (t);
  return 0;
}
