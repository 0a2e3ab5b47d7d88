/* fuzz.h — what the libFuzzer targets under tests/fuzz/ share.
 *
 * Each target defines LLVMFuzzerTestOneInput(). Built with clang and
 * -Dfuzz=true it links libFuzzer's main; otherwise it links replay.c, whose
 * main() feeds it the seed corpus and every input that ever crashed it
 * (tests/fuzz/regress/TARGET/), which is the regression test CI runs in the
 * plain and the sanitizer build.
 *
 * The readers take a path, so the input goes into one memfd per process
 * and the reader opens /proc/self/fd/N: no disk traffic per execution.
 * After a successful read the target runs what every command runs behind
 * the reader (lifetimes, peaks, the recorded plan, each strategy, the
 * checker and the metrics) and abort()s when a strategy returns a plan the
 * checker rejects: a wrong answer counts as a finding, like a crash.
 */
#ifndef ML_FUZZ_H
#define ML_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "sim/analysis/check.h"
#include "sim/analysis/races.h"
#include "sim/formats/load.h"
#include "sim/formats/csv.h"
#include "sim/formats/jsonl.h"
#include "sim/sim.h"
#include "strategies/registry.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Writes @data to this process's memfd; returns a path that reads it. */
static inline const char *
fuzz_path (const uint8_t *data, size_t size)
{
  static int fd = -1;
  static char path[64];
  if (fd < 0)
    {
      fd = memfd_create ("memlens-fuzz", 0);
      if (fd < 0)
        {
          perror ("memfd_create");
          abort ();
        }
      snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
    }
  if (ftruncate (fd, 0) != 0)
    abort ();
  size_t done = 0;
  while (done < size)
    {
      ssize_t w = pwrite (fd, data + done, size - done, (off_t) done);
      if (w <= 0)
        abort ();
      done += (size_t) w;
    }
  return path;
}

/* Checks @plan and measures it; a strategy's plan must be valid. */
static inline void
fuzz_plan (const MlBuffers *bufs, const MlPlan *plan, int must_be_valid)
{
  MlError err = { 0 };
  MlIssues issues;
  ml_issues_init (&issues);
  int rc = ml_check_plan (bufs, plan, &issues, &err);
  if (rc == 0 && must_be_valid && ml_issues_count (&issues) > 0)
    {
      fprintf (stderr, "fuzz: strategy %s produced an invalid plan: %s\n", plan->strategy,
               issues.n ? issues.items[0].why : "?");
      abort ();
    }
  ml_issues_clear (&issues);
  ml_issues_init (&issues);
  ml_check_races (bufs, plan, &issues, &err);
  ml_issues_clear (&issues);
  MlMetrics m;
  MlCurve curve = { 0 };
  if (ml_metrics_compute (bufs, plan, &m, &curve, &err) == 0)
    ml_curve_free (&curve);
}

/* Everything a command does behind a reader. @align 0 = the trace's;
 * the strategies run on traces of up to @max_bufs buffers (the
 * structure-aware targets keep it low: they are after the reader, and
 * the planners on a thousand buffers take most of a second). */
static inline void
fuzz_analyse_n (const MlTrace *t, uint64_t align, size_t max_bufs)
{
  MlError err = { 0 };
  MlBuffers *bufs;
  if (ml_buffers_build (t, align, &bufs, &err) < 0)
    return;
  MlPeaks peaks;
  if (ml_peaks_find (bufs, 4, 8, &peaks, &err) == 0)
    ml_peaks_free (&peaks);
  MlPlan *plan;
  if (ml_plan_from_recorded (bufs, &plan, &err) == 0)
    {
      fuzz_plan (bufs, plan, 0);
      ml_plan_free (plan);
    }
  if (bufs->n <= max_bufs)
    for (const MlStrategy *const *s = ml_strategies_all (); *s; s++)
      {
        if ((*s)->flags & ML_STRATEGY_RECORDED)
          continue;   /* checked above, leniently: the trace's own layout */
        MlKnobs knobs;
        ml_knobs_init (&knobs);
        knobs.align = bufs->align;
        knobs.time_limit = 0.2;   /* the searching planners honour it; their defaults (5-10 s) only slow the fuzzer */
        if (ml_sim_run (bufs, *s, &knobs, &plan, &err) == 0)
          {
            fuzz_plan (bufs, plan, 1);
            ml_plan_free (plan);
          }
      }
  ml_buffers_free (bufs);
}

static inline void
fuzz_analyse (const MlTrace *t, uint64_t align)
{
  fuzz_analyse_n (t, align, 2048);
}

#endif
