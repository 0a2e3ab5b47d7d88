/* The caching emulation's allocator settings, each worked out by hand from
 * PyTorch's rules (c10/cuda/CUDACachingAllocator.cpp, c10/core/
 * AllocatorConfig.cpp; docs/pytorch.md, "Allocator settings"): the exact
 * offsets, segment sizes and reserved bytes each setting implies. Every
 * case also runs without its setting and checks that the answer differs,
 * so a setting parsed and ignored fails here. */
#include "sim/base/options.h"
#include "sim/metrics.h"
#include "sim/sim.h"
#include "strategies/caching.h"
#include "tap.h"
#include "hand-trace.h"

#define KiB ((uint64_t) 1 << 10)
#define MiB ((uint64_t) 1 << 20)

typedef struct {
  MlBuffers *bufs;
  MlPlan    *plan;
  uint64_t   peak;   /* reserved */
  int        rc;
  MlError    err;
} Run;

/* The caching strategy over @b under @capacity (0: none) with @options. */
static Run
run (B *b, uint64_t capacity, const char *options)
{
  Run r = { 0 };
  MlKnobs k;
  ml_knobs_init (&k);
  k.capacity = capacity;
  k.options = options;
  if ((r.rc = ml_buffers_build (b->t, 512, &r.bufs, &r.err)) < 0)
    return r;
  if ((r.rc = ml_sim_run (r.bufs, &ml_strategy_caching, &k, &r.plan, &r.err)) < 0)
    return r;
  MlMetrics m;
  if ((r.rc = ml_metrics_compute (r.bufs, r.plan, &m, NULL, &r.err)) == 0)
    r.peak = m.peak;
  return r;
}

static void
run_free (Run *r)
{
  ml_plan_free (r->plan);
  ml_buffers_free (r->bufs);
}

static bool
ran (const Run *r, const char *what)
{
  ok (r->rc == 0 && r->plan, "%s runs%s%s", what, r->rc ? ": " : "", r->rc ? r->err.msg : "");
  return r->rc == 0 && r->plan;
}

/* roundup_power2_divisions: round_size picks the divisions of the size's
 * power-of-two interval (AllocatorConfig::roundup_power2_divisions: the
 * interval index is log2(size) - 20, clamped to 0..15) and rounds up to
 * the next of D equal steps between two powers of two
 * (roundup_power2_next_division). */
static void
test_divisions (void)
{
  /* the example: [256:1,>:4] rounds 1,200 MiB to 1,280 MiB (1 GiB
   * + one 256 MiB step); 200 MiB sits below 256 MiB, where the first item
   * put 1 division (off): 200 MiB; 300 MiB sits in 256's own interval,
   * which ">" overwrites too (it fills from the last item's interval on,
   * PyTorch's parser): 256 + 64 = 320 MiB */
  B b = trace_new ();
  alloc (&b, 1, 1200 * MiB);
  alloc (&b, 2, 200 * MiB);
  alloc (&b, 3, 300 * MiB);
  Run r = run (&b, 0, "roundup_power2_divisions=[256:1,>:4]");
  if (ran (&r, "[256:1,>:4]"))
    {
      is_u64 (r.plan->n_segments, 3, "three segments (each request >= 10 MiB has its own)");
      is_u64 (r.plan->segments[0].size, 1280 * MiB, "1,200 MiB rounds to 1,280 MiB: its segment");
      is_u64 (r.plan->segments[1].size, 200 * MiB, "200 MiB: 1 division below 256 MiB, not rounded");
      is_u64 (r.plan->segments[2].size, 320 * MiB, "300 MiB rounds to 320 MiB (4 divisions from 256 MiB)");
      is_u64 (r.peak, 1800 * MiB, "reserved 1,280 + 200 + 320 MiB");
    }
  run_free (&r);
  r = run (&b, 0, NULL);
  if (ran (&r, "without the setting"))
    {
      is_u64 (r.plan->segments[0].size, 1200 * MiB, "without it 1,200 MiB stays 1,200 MiB");
      is_u64 (r.peak, 1700 * MiB, "reserved 1,700 MiB");
    }
  run_free (&r);
  r = run (&b, 0, "roundup_power2_divisions=4");
  if (ran (&r, "4 everywhere"))
    is_u64 (r.plan->segments[1].size, 224 * MiB, "4 everywhere: 200 MiB rounds to 224 MiB (128 + 3 x 32)");
  run_free (&r);
  ml_trace_free (b.t);

  /* [2:4,>:1]: the first item fills the intervals below it (sizes under 2
   * MiB get 4 divisions), ">" sets 1 (off) from 2 MiB on. In one 20 MiB
   * segment: 1,200 KiB -> 1,280 KiB at 0; 3,000 KiB stays 3,000 KiB at
   * 1,280 KiB; the next 1,200 KiB at 4,280 KiB. */
  b = trace_new ();
  alloc (&b, 1, 1200 * KiB);
  alloc (&b, 2, 3000 * KiB);
  alloc (&b, 3, 1200 * KiB);
  r = run (&b, 0, "roundup_power2_divisions=[2:4,>:1]");
  if (ran (&r, "[2:4,>:1]"))
    {
      is_u64 (r.plan->offset[1], 1280 * KiB, "1,200 KiB took 1,280 KiB");
      is_u64 (r.plan->offset[2], 4280 * KiB, "3,000 KiB was not rounded (1 division from 2 MiB)");
    }
  run_free (&r);
  r = run (&b, 0, "roundup_power2_divisions=4");
  if (ran (&r, "4 everywhere"))
    is_u64 (r.plan->offset[2], 4352 * KiB, "with 4 everywhere 3,000 KiB takes 3,072 KiB (2 MiB + 2 x 512 KiB)");
  run_free (&r);
  r = run (&b, 0, NULL);
  if (ran (&r, "without the setting"))
    {
      is_u64 (r.plan->offset[1], 1200 * KiB, "without it 1,200 KiB takes 1,200 KiB");
      is_u64 (r.plan->offset[2], 4200 * KiB, "and the third block starts at 4,200 KiB");
    }
  run_free (&r);
  ml_trace_free (b.t);
}

/* max_non_split_rounding_mb: get_free_block refuses an oversize block (at
 * least max_split_size) for a request it exceeds by this much or more
 * (20 MiB by default). A cached 64 MiB block and a 40 MiB request under
 * max_split_size_mb=32: 64 >= 40 + 20 refuses it (a new 40 MiB segment,
 * 104 MiB reserved); with 64 MiB allowed, 64 < 40 + 64: the request takes
 * the whole block (not split: at or above max_split_size), 64 MiB. */
static void
test_non_split (void)
{
  B b = trace_new ();
  alloc (&b, 1, 64 * MiB);
  release (&b, 1);
  alloc (&b, 2, 40 * MiB);
  Run r = run (&b, 0, "max_split_size_mb=32,max_non_split_rounding_mb=64");
  if (ran (&r, "max_non_split_rounding_mb=64"))
    {
      is_u64 (r.plan->n_segments, 1, "one segment: the 40 MiB request reuses the 64 MiB block");
      is_u64 (r.plan->segment[1], 0, "in segment 0");
      is_u64 (r.plan->offset[1], 0, "at its start");
      is_u64 (r.peak, 64 * MiB, "reserved 64 MiB");
    }
  run_free (&r);
  r = run (&b, 0, "max_split_size_mb=32");
  if (ran (&r, "the default 20 MiB"))
    {
      is_u64 (r.plan->n_segments, 2, "with the default 20 MiB the block is refused: two segments");
      is_u64 (r.peak, 104 * MiB, "reserved 104 MiB");
    }
  run_free (&r);
  r = run (&b, 0, "max_split_size_mb=32,max_non_split_rounding_mb=24");
  if (ran (&r, "max_non_split_rounding_mb=24"))
    is_u64 (r.plan->n_segments, 2, "24 MiB: 64 >= 40 + 24, refused");
  run_free (&r);
  r = run (&b, 0, "max_split_size_mb=32,max_non_split_rounding_mb=25");
  if (ran (&r, "max_non_split_rounding_mb=25"))
    is_u64 (r.plan->n_segments, 1, "25 MiB: 64 < 40 + 25, reused");
  run_free (&r);
  ml_trace_free (b.t);
}

/* garbage_collection_threshold with per_process_memory_fraction (PyTorch
 * collects only when the fraction set an allowed maximum):
 * garbage_collect_cached_blocks runs when a request finds no free block
 * and reserved is above threshold x allowed; it releases the large pool's
 * wholly free segments whose age (get_free_block calls on the pool since
 * they became free) is at least the average, until the excess is back.
 *
 * Device 200 MiB, fraction 0.5: allowed 100 MiB; threshold 0.5: 50 MiB.
 *   tick 0  X 12 MiB   call 1, new segment, reserved 12
 *   tick 1  Y 14 MiB   call 2, new segment, reserved 26
 *   tick 2  free X     (X free since call 2)
 *   tick 3  P 16 MiB   call 3, X too small; 26 <= 50: no collection; reserved 42
 *   tick 4  free Y     (Y free since call 3)
 *   tick 5  Q 18 MiB   call 4, nothing fits; 42 <= 50; reserved 60
 *   tick 6  R 20 MiB   call 5, nothing fits; 60 > 50: collect 10 MiB.
 *           ages X 3, Y 2, average 2.5: X (the oldest) goes, 12 >= 10, Y
 *           stays; R's segment: reserved 60 - 12 + 20 = 68 MiB. */
static void
test_gc (void)
{
  B b = trace_new ();
  alloc (&b, 1, 12 * MiB);
  alloc (&b, 2, 14 * MiB);
  release (&b, 1);
  alloc (&b, 3, 16 * MiB);
  release (&b, 2);
  alloc (&b, 4, 18 * MiB);
  alloc (&b, 5, 20 * MiB);
  Run r = run (&b, 200 * MiB, "garbage_collection_threshold=0.5,per_process_memory_fraction=0.5");
  if (ran (&r, "garbage_collection_threshold=0.5"))
    {
      is_u64 (r.plan->segments[0].end, 6, "X's segment (the oldest cached) goes back at R's request, tick 6");
      is_u64 (r.plan->segments[1].end, r.bufs->end_tick, "Y's (younger than the average) stays cached");
      is_u64 (r.peak, 68 * MiB, "reserved peaks at 68 MiB");
      ok (!r.plan->oom.hit, "no OOM under the allowed 100 MiB");
    }
  run_free (&r);
  r = run (&b, 200 * MiB, "per_process_memory_fraction=0.5");
  if (ran (&r, "without the threshold"))
    {
      is_u64 (r.plan->segments[0].end, r.bufs->end_tick, "without it X stays cached");
      is_u64 (r.peak, 80 * MiB, "reserved 80 MiB");
    }
  run_free (&r);
  r = run (&b, 200 * MiB, "garbage_collection_threshold=0.5");
  if (ran (&r, "without the fraction"))
    is_u64 (r.peak, 80 * MiB, "the threshold alone does nothing (no allowed maximum): 80 MiB");
  run_free (&r);
  /* a threshold of 0.3 (30 MiB): at Q (42 > 30, collect 12) ages X 2, Y 1,
   * average 1.5: X goes (12 >= 12); at R (18 + 16 + 14 + 18 = 48 - 12...
   * reserved 14 + 16 + 18 = 48 > 30, collect 18): only Y (age 2) is
   * cached: it goes, 14 < 18 but nothing is left; then R: 34 + 20 = 54. */
  r = run (&b, 200 * MiB, "garbage_collection_threshold=0.3,per_process_memory_fraction=0.5");
  if (ran (&r, "garbage_collection_threshold=0.3"))
    {
      is_u64 (r.plan->segments[0].end, 5, "X goes back at Q's request (tick 5)");
      is_u64 (r.plan->segments[1].end, 6, "Y at R's (tick 6)");
      is_u64 (r.peak, 54 * MiB, "reserved peaks at 54 MiB");
    }
  run_free (&r);
  ml_trace_free (b.t);
}

/* per_process_memory_fraction: the allowed maximum, F x the device's
 * memory, refuses a segment past it (alloc_block). Device 100 MiB: two 30
 * MiB requests fit; with 0.5 the second is refused (60 > 50). */
static void
test_fraction (void)
{
  B b = trace_new ();
  alloc (&b, 1, 30 * MiB);
  alloc (&b, 2, 30 * MiB);
  Run r = run (&b, 100 * MiB, "per_process_memory_fraction=0.5");
  if (ran (&r, "per_process_memory_fraction=0.5"))
    {
      ok (r.plan->oom.hit, "the second 30 MiB request is refused");
      is_u64 (r.plan->oom.tick, 1, "at tick 1");
    }
  run_free (&r);
  r = run (&b, 100 * MiB, NULL);
  if (ran (&r, "without it"))
    ok (!r.plan->oom.hit, "without it both fit in 100 MiB");
  run_free (&r);
  r = run (&b, 0, "per_process_memory_fraction=0.5");
  ok (r.rc == ML_EUSAGE && strstr (r.err.msg, "--capacity"), "a fraction without the device's memory is refused: %s",
      r.err.msg);
  run_free (&r);
  ml_trace_free (b.t);
}

/* backend=cudaMallocAsync, the model (caching.h): one pool, grown by the
 * request rounded up to 2 MiB, best fit per stream, split at >= 512 B;
 * PyTorch's limit counts requested bytes live; the pool keeps its memory.
 *   600 KiB: a 2 MiB chunk (native: a 2 MiB small-pool segment)
 *   3 MiB:   a 4 MiB chunk (native: a 20 MiB large segment)
 *   1 MiB:   best fit: the 1 MiB left at the end of the 4 MiB chunk, at
 *            3 MiB (native: the small segment, at 600 KiB) */
static void
test_async (void)
{
  B b = trace_new ();
  alloc (&b, 1, 600 * KiB);
  alloc (&b, 2, 3 * MiB);
  alloc (&b, 3, 1 * MiB);
  Run r = run (&b, 0, "backend=cudaMallocAsync");
  if (ran (&r, "backend=cudaMallocAsync"))
    {
      is_u64 (r.plan->n_segments, 2, "two chunks");
      is_u64 (r.plan->segments[1].size, 4 * MiB, "3 MiB: a 4 MiB chunk");
      is_u64 (r.plan->segment[2], 1, "1 MiB: best fit in the second chunk");
      is_u64 (r.plan->offset[2], 3 * MiB, "after the 3 MiB block");
      is_u64 (r.peak, 6 * MiB, "reserved 6 MiB");
    }
  run_free (&r);
  r = run (&b, 0, NULL);
  if (ran (&r, "native"))
    {
      is_u64 (r.peak, 22 * MiB, "native: 2 MiB small + 20 MiB large");
      is_u64 (r.plan->offset[2], 600 * KiB, "the 1 MiB request in the small segment");
    }
  run_free (&r);
  ml_trace_free (b.t);

  /* the pool keeps its memory: a cached 2 MiB chunk is not given back for
   * a 4 MiB one under 5 MiB (native releases its cached segment) */
  b = trace_new ();
  alloc (&b, 1, 2 * MiB);
  release (&b, 1);
  alloc (&b, 2, 3 * MiB);
  r = run (&b, 5 * MiB, "backend=cudaMallocAsync");
  if (ran (&r, "async under 5 MiB"))
    {
      ok (r.plan->oom.hit, "the model fails the 3 MiB request: 2 + 4 > 5 and the pool keeps its 2 MiB");
      is_u64 (r.plan->oom.tick, 2, "at tick 2");
    }
  run_free (&r);
  ml_trace_free (b.t);

  /* PyTorch's limit under the async backend counts requested bytes live:
   * device 10 MiB, fraction 0.5: 3 MiB + 3 MiB live > 5 MiB */
  b = trace_new ();
  alloc (&b, 1, 3 * MiB);
  alloc (&b, 2, 3 * MiB);
  r = run (&b, 10 * MiB, "backend=cudaMallocAsync,per_process_memory_fraction=0.5");
  if (ran (&r, "async with a fraction"))
    {
      ok (r.plan->oom.hit, "6 MiB live is past 0.5 x 10 MiB");
      is_u64 (r.plan->oom.tick, 1, "at the second request");
    }
  run_free (&r);
  r = run (&b, 10 * MiB, "backend=cudaMallocAsync");
  if (ran (&r, "async without"))
    ok (!r.plan->oom.hit, "without the fraction 8 MiB of chunks fit in 10 MiB");
  run_free (&r);
  ml_trace_free (b.t);
}

/* What the emulation refuses (PyTorch's own refusals are
 * tests/test-alloc-conf.c's): the cudaMallocAsync backend with the native
 * allocator's settings, which PyTorch ignores with a warning, and a key
 * memlens does not know. Settings that move nothing on the device are
 * accepted. */
static void
test_refused (void)
{
  static const struct { const char *options, *says; } bad[] = {
    { "backend=cudaMallocAsync,max_split_size_mb=64", "ignores" },
    { "backend=cudaMallocAsync,expandable_segments=True", "ignores" },
    { "backend=cudaMallocAsync,roundup_power2_divisions=4", "ignores" },
    { "backend=cudaMallocAsync,garbage_collection_threshold=0.5", "ignores" },
    { "large_segment_size_mb=40", "not one memlens knows" },
  };
  B b = trace_new ();
  alloc (&b, 1, MiB);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      Run r = run (&b, 100 * MiB, bad[i].options);
      ok (r.rc == ML_EUSAGE && strstr (r.err.msg, bad[i].says), "%s is refused: %s", bad[i].options, r.err.msg);
      run_free (&r);
    }
  static const char *const fine[] = {
    "expandable_segments=True,release_lock_on_cudamalloc=True", "pinned_num_register_threads=8",
    "backend=cudaMallocAsync,expandable_segments=False", "backend=cudaMallocAsync,per_process_memory_fraction=0.9",
    "roundup_power2_divisions=[1:0,2:0,4:0,8:0,16:0,32:0,64:0,128:0,256:0,512:0,1024:0,2048:0,4096:0,8192:0,"
    "16384:0,32768:0]",
  };
  for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++)
    {
      Run r = run (&b, 100 * MiB, fine[i]);
      ok (r.rc == 0, "%s is accepted%s%s", fine[i], r.rc ? ": " : "", r.rc ? r.err.msg : "");
      run_free (&r);
    }
  ml_trace_free (b.t);
}

static int
collect (void *user, const char *key, const char *value, MlError *err)
{
  (void) err;
  char *out = user;
  size_t n = strlen (out);
  snprintf (out + n, 256 - n, "<%s|%s>", key, value);
  return 0;
}

/* A list value keeps its commas: the options are split outside brackets. */
static void
test_options_split (void)
{
  char got[256] = "";
  MlError err = { 0 };
  ok (ml_options_foreach ("a=1,b=[2:3,>:4],,c", collect, got, &err) == 0, "options with a list parse");
  ok (strcmp (got, "<a|1><b|[2:3,>:4]><c|1>") == 0, "a list's commas stay in its value: %s", got);
  got[0] = 0;
  ok (ml_options_foreach ("x=[1,2", collect, got, &err) == ML_EUSAGE && strstr (err.msg, "closing"),
      "an unclosed list is refused: %s", err.msg);
  is_u64 (ml_options_item_len ("k=[1,2],z"), 7, "the item ends at the comma after the list");
}

int
main (void)
{
  test_options_split ();
  test_divisions ();
  test_non_split ();
  test_gc ();
  test_fraction ();
  test_async ();
  test_refused ();
  return tap_done ();
}
