/* bench-placer — the shared placer against the textbook lowest fit, in one
 * run on the same machine state.
 *
 *   bench-placer [--synthetic BUFFERS [--live N]] [FILE.csv ...]
 *
 * For each instance (a generated trace as in bench/planners: a live set
 * hovering around --live buffers, default 1000, log-normal sizes; or each
 * file named) both place every buffer in greedy-size's order (largest
 * first) at its lowest fit. The reference is the placer of TensorFlow
 * Lite Micro's GreedyMemoryPlanner, written out here: gather the placed
 * buffers that overlap in time (a scan over all placed), sort them by
 * offset, and take the first gap that holds the buffer. Prints CPU seconds
 * of each, their ratio, the peak, and whether every offset agrees (the
 * reference is an independent check of the placer on large inputs; it is
 * quadratic, so instances over 200,000 buffers are not compared), the
 * bucket entries and tree summaries the placer read per placement, and
 * the heap greedy-size holds per buffer once all are placed (its order,
 * the offsets, the placer's index; glibc's mallinfo2).
 * Prints a Markdown table for docs/performance.md.
 */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/gen.h"
#include "sim/formats/load.h"
#include "sim/sim.h"
#include "strategies/planner-private.h"

typedef struct {
  uint64_t off, top;
} Range;

static int
cmp_range (const void *a, const void *b)
{
  const Range *x = a, *y = b;
  return x->off < y->off ? -1 : x->off > y->off;
}

/* The textbook lowest fit of every buffer in @order; writes @off. */
static int
reference (const MlBuffers *bufs, const uint32_t *order, uint64_t *off)
{
  size_t n = bufs->n, np = 0;
  uint32_t *placed = malloc ((n ? n : 1) * sizeof *placed);
  Range *near = malloc ((n ? n : 1) * sizeof *near);
  if (!placed || !near)
    {
      free (placed);
      free (near);
      return -1;
    }
  for (size_t i = 0; i < n; i++)
    {
      uint32_t b = order[i];
      const MlBuffer *x = &bufs->buf[b];
      off[b] = 0;
      if (!x->rsize || x->start >= x->end)
        continue;
      size_t k = 0;
      for (size_t j = 0; j < np; j++)
        {
          const MlBuffer *y = &bufs->buf[placed[j]];
          if (y->start < x->end && x->start < y->end)
            near[k++] = (Range) { off[placed[j]], off[placed[j]] + y->rsize };
        }
      qsort (near, k, sizeof *near, cmp_range);
      uint64_t at = 0;
      for (size_t j = 0; j < k && near[j].off < at + x->rsize; j++)
        if (near[j].top > at)
          at = near[j].top;
      off[b] = at;
      placed[np++] = b;
    }
  free (placed);
  free (near);
  return 0;
}

/* Bytes the heap has handed out (glibc: arena and mmapped chunks). */
static uint64_t
heap_bytes (void)
{
  struct mallinfo2 mi = mallinfo2 ();
  return (uint64_t) mi.uordblks + (uint64_t) mi.hblkhd;
}

static void
row (const char *inst, const MlBuffers *b)
{
  size_t n = b->n;
  uint64_t h0 = heap_bytes ();
  uint32_t *order = malloc ((n ? n : 1) * sizeof *order);
  uint64_t *a = malloc ((n ? n : 1) * sizeof *a), *r = malloc ((n ? n : 1) * sizeof *r);
  MlPlacer *p = NULL;
  MlError err = { 0 };
  if (!order || !a || !r || _ml_greedy_order (b, ML_ORDER_SIZE, order, &err) < 0 || _ml_placer_new (b, &p, &err) < 0)
    {
      fprintf (stderr, "%s: %s\n", inst, err.msg[0] ? err.msg : "out of memory");
      goto out;
    }
  uint64_t peak = 0;
  double c0 = gen_cpu_now ();
  if (_ml_place_in_order (b, p, order, a, &peak, NULL, 0, NULL) < 0)
    {
      fprintf (stderr, "%s: the placer ran out of memory\n", inst);
      goto out;
    }
  double c1 = gen_cpu_now ();
  double per = n ? (double) _ml_placer_work (p) / (double) n : 0;
  /* what greedy-size holds once every buffer is placed: the order, the
   * offsets (those of the plan), the placer's index */
  double bytes = n ? (double) (heap_bytes () - h0 - n * sizeof *r) / (double) n : 0;
  if (n > 200000)
    {
      /* the reference is quadratic: hours at a million buffers */
      printf ("| %s | %zu | %" PRIu32 " | %.3f | %.0f | %.0f | – | – | %" PRIu64 " | not compared |\n", inst, n,
              _ml_placer_bucket_leaves (p), c1 - c0, per, bytes, peak);
      fflush (stdout);
      goto out;
    }
  if (reference (b, order, r) < 0)
    {
      fprintf (stderr, "%s: the reference ran out of memory\n", inst);
      goto out;
    }
  double c2 = gen_cpu_now ();
  size_t differ = 0;
  for (size_t i = 0; i < n; i++)
    differ += a[i] != r[i];
  printf ("| %s | %zu | %" PRIu32 " | %.3f | %.0f | %.0f | %.3f | %.1f | %" PRIu64 " | %s |\n", inst, n, _ml_placer_bucket_leaves (p),
          c1 - c0, per, bytes, c2 - c1, c1 > c0 ? (c2 - c1) / (c1 - c0) : 0.0, peak, differ ? "NO" : "yes");
  if (differ)
    fprintf (stderr, "%s: %zu offsets differ from the reference\n", inst, differ);
  fflush (stdout);
out:
  _ml_placer_free (p);
  free (order);
  free (a);
  free (r);
}

int
main (int argc, char **argv)
{
  uint64_t synthetic = 0, live = 1000;
  printf ("| instance | buffers | bucket leaves | placer cpu s | read per placement | bytes per buffer | reference cpu s | reference / placer | peak | same offsets |\n");
  printf ("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--synthetic") == 0 && i + 1 < argc)
        synthetic = strtoull (argv[++i], NULL, 10);
      else if (strcmp (argv[i], "--live") == 0 && i + 1 < argc)
        live = strtoull (argv[++i], NULL, 10);
      else if (argv[i][0] == '-')
        {
          fprintf (stderr, "usage: bench-placer [--synthetic BUFFERS [--live N]] [FILE.csv ...]\n");
          return 2;
        }
      else
        {
          MlTrace *t = NULL;
          MlBuffers *b = NULL;
          MlError err = { 0 };
          if (ml_trace_load (argv[i], NULL, &t, &err) < 0 || ml_buffers_build (t, 0, &b, &err) < 0)
            {
              fprintf (stderr, "%s: %s\n", argv[i], err.msg);
              ml_trace_free (t);
              return 1;
            }
          const char *base = strrchr (argv[i], '/');
          row (base ? base + 1 : argv[i], b);
          ml_buffers_free (b);
          ml_trace_free (t);
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
      row (inst, b);
      ml_buffers_free (b);
      ml_trace_free (t);
    }
  return 0;
}
