/* PyTorch interop: snapshot mapping on hand-made pickles (tests/data,
 * written by tests/data/make-fixtures.py), and the caching emulation's
 * rules worked by hand. argv[1] = the source root. */
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "sim/analysis/check.h"
#include "sim/analysis/races.h"
#include "sim/formats/graph.h"
#include "sim/formats/kineto.h"
#include "sim/formats/load.h"
#include "sim/metrics.h"
#include "sim/recorded.h"
#include "sim/sim.h"
#include "sim/formats/snapshot.h"
#include "strategies/caching.h"
#include "strategies/caching-conformance.h"
#include "tap.h"

#define MiB ((uint64_t) 1 << 20)
static const uint64_t A = 0x100000000ull;
static const char *root = ".";

static MlTrace *
load (const char *name, int device, MlError *err)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/tests/data/%s", root, name);
  MlLoadOptions o;
  ml_load_options_init (&o);
  o.device = device;
  MlTrace *t = NULL;
  memset (err, 0, sizeof *err);
  if (ml_trace_load (path, &o, &t, err) < 0)
    return NULL;
  return t;
}

static void
test_tiny (const char *name)
{
  MlError err;
  MlTrace *t = load (name, -1, &err);
  ok (t != NULL, "%s loads (%s)", name, err.msg);
  if (!t)
    return;
  static const MlEventKind want[] = { ML_EV_SEGMENT_ALLOC, ML_EV_ALLOC, ML_EV_ALLOC, ML_EV_MARK,
                                      ML_EV_FREE_REQUESTED, ML_EV_FREE, ML_EV_OOM, ML_EV_SNAPSHOT };
  is_u64 (t->n_events, 9, "%s: tick 0 holds only the settings mark (the segment_alloc is in the trace); 7 entries + 1 annotation", name);
  ok (t->n_events && t->events[0].kind == ML_EV_MARK && t->events[0].tick == 0, "%s: the allocator settings come first", name);
  if (t->n_events)
    is_str (ml_trace_str (t, t->events[0].name),
            "allocator settings: max_split_size_mb=unlimited,expandable_segments=0,roundup_power2_divisions=0",
            "the settings mark (the emulation's defaults)");
  bool kinds = t->n_events == 9;
  for (size_t i = 0; kinds && i < 8; i++)
    kinds = t->events[i + 1].kind == want[i] && t->events[i + 1].tick == i + 1;
  ok (kinds, "%s: kinds and ticks in order (mark merged by time before free_requested)", name);
  if (t->n_events == 9)
    {
      const MlEvent *e = t->events + 1;
      is_u64 (e[0].addr, A, "segment address");
      is_u64 (e[0].size, 2 * MiB, "segment size");
      is_str (ml_trace_str (t, e[0].name), "small", "a 2 MiB segment event is named for the small pool");
      is_u64 (e[1].size, 100, "alloc keeps the requested size");
      is_u64 (e[1].time_ns, 101000, "time_us becomes time_ns");
      is_u64 (e[2].addr, A + 512, "second alloc address");
      ok (e[1].stack && e[1].stack == e[2].stack, "memo-shared frames give one stack");
      is_u64 (t->n_stacks, 2, "one stack besides the empty one");
      is_str (ml_trace_str (t, t->stacks[e[1].stack].site), "/home/u/train.py:42:forward",
              "the call site is the first frame outside torch");
      is_u64 (t->stacks[e[1].stack].n, 2, "the whole stack is kept");
      is_str (ml_trace_str (t, e[3].name), "step start", "annotation as a mark");
      is_u64 (e[4].id, e[2].id, "free_requested names the buffer");
      is_u64 (e[5].id, e[2].id, "free_completed ends the buffer");
      is_u64 (e[6].size, (uint64_t) 4 << 30, "oom keeps the request");
      is_u64 (e[6].addr, 1234, "oom: addr = device_free");
      MlBuffers *b = NULL;
      ok (ml_buffers_build (t, 0, &b, &err) == 0, "lifetimes build");
      if (b)
        {
          is_u64 (b->align, 512, "snapshots align to 512");
          is_u64 (b->buf[1].start, 3, "the freed buffer starts at its alloc");
          is_u64 (b->buf[1].end, 6, "and ends at free_completed, not free_requested");
          ok (b->buf[0].flags & ML_BUF_NEVER_FREED, "the first lives on");
        }
      ml_buffers_free (b);
      MlCachingConformance c;
      ok (ml_caching_conformance (t, NULL, &c, &err) == 0, "conformance runs (%s)", err.msg);
      is_u64 (c.allocs, 2, "two allocations replayed");
      is_u64 (c.matched, 2, "both at the real address");
      is_u64 (c.segment_events_matched, 1, "the emulated 2 MiB segment matches the recorded one");
      ok (c.end_match, "segments at the end match");
    }
  ml_trace_free (t);
}

static void
test_snapshot_forms (void)
{
  MlError err;
  MlTrace *t = load ("tiny-legacy.pkl", -1, &err);
  ok (t && t->n_events == 2, "the legacy list of segments: a segment and its live block (%s)", err.msg);
  if (t && t->n_events == 2)
    {
      ok (t->events[0].kind == ML_EV_SEGMENT_ALLOC && t->events[1].kind == ML_EV_ALLOC, "segment, then block");
      is_u64 (t->events[1].tick, 0, "at tick 0: the state at dump time");
      is_u64 (t->events[1].size, 100, "the block's requested size");
    }
  ml_trace_free (t);
  t = load ("tiny-snapshot.pickle", 1, &err);
  ok (t && t->n_events == 1 && t->events[0].kind == ML_EV_MARK, "--device 1: its (empty) trace, only the settings mark");
  ml_trace_free (t);
  t = load ("tiny-expandable.pickle", -1, &err);
  ok (t != NULL, "an expandable-segment snapshot loads (%s)", err.msg);
  if (t)
    {
      MlCachingConformance c;
      ok (ml_caching_conformance (t, NULL, &c, &err) == 0, "conformance with the recorded settings (%s)", err.msg);
      is_str (c.options, "expandable_segments:True", "the snapshot's settings are used, in PYTORCH_CUDA_ALLOC_CONF's syntax");
      is_u64 (c.matched, 3, "expandable: all three allocations at the real address");
      is_u64 (c.segment_events_matched, 2, "both 2 MiB page mappings reproduced in order");
      ok (c.end_match, "one 4 MiB expandable segment at the end, as recorded");
      ok (ml_caching_conformance (t, "expandable_segments=0", &c, &err) == 0, "and with expandable_segments=0");
      is_u64 (c.matched, 2, "the third allocation then needs a new segment");
      is_u64 (c.by_rule[ML_RULE_NEW_SEGMENT], 1, "attributed to new segment vs reuse");
      MlBuffers *bufs = NULL;
      MlPlan *rec = NULL;
      if (ml_buffers_build (t, 0, &bufs, &err) == 0 && ml_plan_from_recorded (bufs, &rec, &err) == 0)
        {
          is_u64 (rec->n_segments, 1, "the recorded plan: the second page mapping grows the segment");
          is_u64 (rec->segments[0].size, 4 * MiB, "to 4 MiB");
        }
      ml_plan_free (rec);
      ml_buffers_free (bufs);
    }
  ml_trace_free (t);
  t = load ("tiny-snapshot.pickle", 5, &err);
  ok (!t && strstr (err.msg, "device 5"), "--device 5 is refused: %s", err.msg);
}

/* ---- caching rules by hand ---- */

typedef struct {
  MlTrace *t;
  uint64_t tick;
} B;

static void
ev (B *b, MlEventKind kind, uint64_t id, uint64_t size, uint32_t stream)
{
  MlEvent e = { .tick = b->tick++, .id = id, .size = size, .stream = stream, .kind = (uint8_t) kind,
                .flags = ML_EVF_HAS_ID, .time_ns = -1 };
  ml_trace_append (b->t, &e);
}

static MlPlan *
run (B *b, uint64_t capacity, const char *options, MlBuffers **bufs)
{
  MlError err = { 0 };
  MlKnobs k;
  ml_knobs_init (&k);
  k.capacity = capacity;
  k.options = options;
  MlPlan *p = NULL;
  if (ml_buffers_build (b->t, 512, bufs, &err) < 0 || ml_sim_run (*bufs, &ml_strategy_caching, &k, &p, &err) < 0)
    printf ("# %s\n", err.msg);
  return p;
}

/* An event in memory pool @pool (the trace's pools index). */
static void
evp (B *b, MlEventKind kind, uint64_t id, uint64_t size, uint32_t pool)
{
  MlEvent e = { .tick = b->tick++, .id = id, .size = size, .kind = (uint8_t) kind, .pool = pool,
                .flags = ML_EVF_HAS_ID, .time_ns = -1 };
  ml_trace_append (b->t, &e);
}

/* Private pools (PyTorch's PrivatePool: a graph's or a MemPool's own
 * BlockPools): worked by hand. */
static void
test_caching_pools (void)
{
  MlBuffers *bufs;
  /* a MemPool's free block never serves the default pool */
  B b = { ml_trace_new (), 0 };
  uint32_t mem = ml_trace_add_pool (b.t, 0, 1), graph = ml_trace_add_pool (b.t, 1, 0);
  must (mem == 1 && graph == 2);
  evp (&b, ML_EV_ALLOC, 1, 4 * MiB, mem);       /* a 20 MiB segment of the MemPool */
  evp (&b, ML_EV_FREE, 1, 0, mem);
  evp (&b, ML_EV_ALLOC, 2, 4 * MiB, 0);         /* the default pool: its own segment */
  evp (&b, ML_EV_ALLOC, 3, 2 * MiB, mem);       /* the MemPool: its free block */
  MlPlan *p = run (&b, 0, NULL, &bufs);
  if (p)
    {
      is_u64 (p->n_segments, 2, "two segments: the MemPool's and the default pool's");
      is_u64 (p->segment[1], 1, "the default-pool request does not take the MemPool's free 20 MiB");
      is_u64 (p->segment[2], 0, "a later MemPool request does");
    }
  ml_plan_free (p);
  ml_buffers_free (bufs);
  ml_trace_free (b.t);

  /* release_cached_blocks keeps a pool in use; a pool whose segments the
   * trace frees (its MemPool deleted, its cache emptied) is freeable */
  for (int freed = 0; freed < 2; freed++)
    {
      b = (B) { ml_trace_new (), 0 };
      mem = ml_trace_add_pool (b.t, 0, 1);
      evp (&b, ML_EV_ALLOC, 1, 15 * MiB, mem);   /* 16 MiB cached in the MemPool */
      evp (&b, ML_EV_FREE, 1, 0, mem);
      if (freed)
        evp (&b, ML_EV_SEGMENT_FREE, 0, 16 * MiB, mem);
      evp (&b, ML_EV_ALLOC, 2, 30 * MiB, 0);     /* 16 + 30 > 40 */
      p = run (&b, 40 * MiB, NULL, &bufs);
      if (p && !freed)
        ok (p->oom.hit, "under 40 MiB the 30 MiB request fails: the MemPool in use keeps its cached 16 MiB");
      if (p && freed)
        ok (!p->oom.hit && p->segments[0].end <= p->oom.tick + 4, "once the trace frees its segments the pool is "
            "freeable: its cached 16 MiB goes back and the request fits");
      ml_plan_free (p);
      ml_buffers_free (bufs);
      ml_trace_free (b.t);
    }

  /* no release_cached_blocks while a CUDA graph is being captured (from
   * the first allocation of its pool (1, 0) to the last) */
  for (int during = 0; during < 2; during++)
    {
      b = (B) { ml_trace_new (), 0 };
      graph = ml_trace_add_pool (b.t, 1, 0);
      evp (&b, ML_EV_ALLOC, 1, 15 * MiB, 0);     /* 16 MiB cached in the default pool */
      evp (&b, ML_EV_FREE, 1, 0, 0);
      evp (&b, ML_EV_ALLOC, 2, 2 * MiB, graph);  /* the capture begins: a 20 MiB graph segment */
      if (!during)
        evp (&b, ML_EV_ALLOC, 3, 2 * MiB, graph); /* ... and ends */
      evp (&b, ML_EV_ALLOC, 4, 30 * MiB, 0);     /* 16 + 20 + 30 > 60 */
      if (during)
        evp (&b, ML_EV_ALLOC, 3, 2 * MiB, graph);
      p = run (&b, 60 * MiB, NULL, &bufs);
      if (p && during)
        ok (p->oom.hit, "during the capture the cached 16 MiB is not given back: the 30 MiB request fails");
      if (p && !during)
        ok (!p->oom.hit, "after the capture it is, and the request fits");
      ml_plan_free (p);
      ml_buffers_free (bufs);
      ml_trace_free (b.t);
    }
}

static void
test_caching (void)
{
  B b = { ml_trace_new (), 0 };
  MlBuffers *bufs;
  /* 512 rounding in the small pool */
  ev (&b, ML_EV_ALLOC, 1, 1, 0);
  ev (&b, ML_EV_ALLOC, 2, 1000, 0);
  ev (&b, ML_EV_ALLOC, 3, 512, 0);
  ev (&b, ML_EV_ALLOC, 4, 1 * MiB, 0);       /* still small: <= 1 MiB */
  ev (&b, ML_EV_ALLOC, 5, 10 * MiB + 1, 0);  /* >= 10 MiB: its own segment, rounded up to 2 MiB: 12 MiB */
  ev (&b, ML_EV_ALLOC, 6, 1 * MiB + 1, 0);   /* large: fits the 12 MiB segment's 2 MiB - 512 rest */
  ev (&b, ML_EV_ALLOC, 7, 3 * MiB, 0);       /* nothing fits: a 20 MiB segment (under 10 MiB) */
  MlPlan *p = run (&b, 0, NULL, &bufs);
  ok (p != NULL, "caching runs");
  if (p)
    {
      is_u64 (p->offset[0], 0, "1 B at 0");
      is_u64 (p->offset[1], 512, "1000 B after a 512 B block");
      is_u64 (p->offset[2], 1536, "512 B after 1024 B");
      is_u64 (p->offset[3], 2048, "1 MiB in the small pool, same segment");
      is_u64 (p->n_segments, 3, "three segments");
      is_u64 (p->segments[0].size, 2 * MiB, "small segment: 2 MiB");
      is_u64 (p->segments[1].size, 12 * MiB, "10 MiB + 1: a segment rounded up to 2 MiB");
      is_u64 (p->segment[5], 1, "1 MiB + 1 reuses the split rest of the 12 MiB segment");
      is_u64 (p->offset[5], 10 * MiB + 512, "right after the 10 MiB + 512 block");
      is_u64 (p->segments[2].size, 20 * MiB, "a large request under 10 MiB: a 20 MiB segment");
    }
  ml_plan_free (p);
  ml_buffers_free (bufs);
  ml_trace_free (b.t);

  /* split rules and best fit in the large pool */
  b = (B) { ml_trace_new (), 0 };
  ev (&b, ML_EV_ALLOC, 1, 2 * MiB, 0);   /* 0..2 of a 20 MiB segment */
  ev (&b, ML_EV_ALLOC, 2, 4 * MiB, 0);   /* 2..6 */
  ev (&b, ML_EV_ALLOC, 3, 2 * MiB, 0);   /* 6..8 */
  ev (&b, ML_EV_ALLOC, 4, 3 * MiB, 0);   /* 8..11, 9 MiB free at the end */
  ev (&b, ML_EV_FREE, 1, 0, 0);
  ev (&b, ML_EV_FREE, 3, 0, 0);
  ev (&b, ML_EV_ALLOC, 5, 2 * MiB, 0);       /* best fit: 2 MiB at 0 (lowest of two) */
  ev (&b, ML_EV_ALLOC, 6, 1 * MiB + 512 * 1024, 0); /* 1.5 MiB: best fit 6..8, 0.5 MiB left: not split */
  ev (&b, ML_EV_ALLOC, 7, 8 * MiB, 0);       /* 11..19: 1 MiB left is not split */
  ev (&b, ML_EV_ALLOC, 8, 1 * MiB + 512, 0); /* nothing free: a new segment */
  ev (&b, ML_EV_FREE, 2, 0, 0);
  ev (&b, ML_EV_FREE, 5, 0, 0);              /* merges with 2..6: 0..6 free */
  ev (&b, ML_EV_ALLOC, 9, 5 * MiB, 0);       /* in the 1st segment's 6 MiB at 0 (best fit vs the 2nd's 18.5 MiB) */
  p = run (&b, 0, NULL, &bufs);
  if (p)
    {
      is_u64 (p->offset[4], 0, "best fit takes the lowest of two equal 2 MiB blocks");
      is_u64 (p->offset[5], 6 * MiB, "1.5 MiB takes the 2 MiB block at 6 MiB (smallest that fits)");
      is_u64 (p->offset[6], 11 * MiB, "8 MiB at 11 MiB");
      is_u64 (p->segment[7], 1, "the 1 MiB + 512 request needs a new segment: nothing left in the first");
      is_u64 (p->offset[8], 0, "frees merged 0..6: 5 MiB placed at 0");
      is_u64 (p->segment[8], 0, "in the first segment");
      is_u64 (p->n_segments, 2, "two 20 MiB segments");
    }
  ml_plan_free (p);
  ml_buffers_free (bufs);
  ml_trace_free (b.t);

  /* oversize blocks with max_split_size_mb */
  b = (B) { ml_trace_new (), 0 };
  ev (&b, ML_EV_ALLOC, 1, 64 * MiB, 0);
  ev (&b, ML_EV_FREE, 1, 0, 0);
  ev (&b, ML_EV_ALLOC, 2, 4 * MiB, 0);     /* 64 MiB >= max_split 32: not for a smaller request */
  ev (&b, ML_EV_ALLOC, 3, 50 * MiB, 0);    /* >= max_split, and 64 < 50 + 20: reused, not split */
  ev (&b, ML_EV_FREE, 3, 0, 0);
  ev (&b, ML_EV_ALLOC, 4, 40 * MiB, 0);    /* 64 >= 40 + 20: refused, a new segment */
  p = run (&b, 0, "max_split_size_mb=32", &bufs);
  if (p)
    {
      is_u64 (p->segment[1], 1, "a 4 MiB request does not take the 64 MiB oversize block");
      is_u64 (p->segment[2], 0, "a 50 MiB request takes it (less than 20 MiB larger)");
      is_u64 (p->segment[3], 2, "a 40 MiB request does not (20 MiB or more larger)");
      is_u64 (p->n_segments, 3, "three segments");
    }
  ml_plan_free (p);
  ml_buffers_free (bufs);
  /* max_non_split_rounding_mb (only PYTORCH_CUDA_ALLOC_CONF records it):
   * the slack an oversize block may have over a request at or above
   * max_split_size; 64 MiB < 40 + 32, so the 40 MiB request reuses it */
  p = run (&b, 0, "max_split_size_mb:32,max_non_split_rounding_mb:32", &bufs);
  if (p)
    {
      is_u64 (p->segment[3], 0, "max_non_split_rounding_mb:32: a 40 MiB request takes the 64 MiB block");
      is_u64 (p->n_segments, 2, "two segments");
    }
  ml_plan_free (p);
  ml_buffers_free (bufs);
  /* a setting the model does not emulate is refused by name */
  static const char *const refused[] = { "backend:cudaMallocAsync,roundup_power2_divisions:4", "some_new_key:True" };
  for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++)
    {
      MlKnobs kn;
      ml_knobs_init (&kn);
      kn.options = refused[k];
      MlError e = { 0 };
      must (ml_buffers_build (b.t, 512, &bufs, &e) == 0);
      ok (ml_sim_run (bufs, &ml_strategy_caching, &kn, &p, &e) == ML_EUSAGE
          && ((strstr (e.msg, refused[k]) && strstr (e.msg, "not")) || strstr (e.msg, "ignores")), "%s is refused: %s",
          refused[k], e.msg);
      ml_buffers_free (bufs);
    }
  ml_trace_free (b.t);

  /* per-stream reuse */
  b = (B) { ml_trace_new (), 0 };
  ev (&b, ML_EV_ALLOC, 1, 2 * MiB, 0);
  ev (&b, ML_EV_FREE, 1, 0, 0);
  ev (&b, ML_EV_ALLOC, 2, 2 * MiB, 7);
  ev (&b, ML_EV_ALLOC, 3, 2 * MiB, 0);
  p = run (&b, 0, NULL, &bufs);
  if (p)
    {
      is_u64 (p->segment[1], 1, "stream 7 does not reuse stream 0's free block");
      is_u64 (p->segments[1].stream, 7, "its segment belongs to stream 7");
      is_u64 (p->segment[2], 0, "stream 0 reuses its own");
    }
  ml_plan_free (p);
  ml_buffers_free (bufs);
  ml_trace_free (b.t);

  /* release cached segments and retry under a capacity */
  b = (B) { ml_trace_new (), 0 };
  ev (&b, ML_EV_ALLOC, 1, 15 * MiB, 0);   /* 16 MiB segment */
  ev (&b, ML_EV_FREE, 1, 0, 0);
  ev (&b, ML_EV_ALLOC, 2, 30 * MiB, 0);   /* 30 MiB: 46 > 40, release the cached 16, retry */
  p = run (&b, 40 * MiB, NULL, &bufs);
  if (p)
    {
      ok (!p->oom.hit, "no OOM: the cached segment went back first");
      is_u64 (p->segments[0].end, 2, "the cached segment was released at the 30 MiB request");
      is_u64 (p->segments[1].size, 30 * MiB, "then the 30 MiB segment");
    }
  ml_plan_free (p);
  ml_buffers_free (bufs);
  p = run (&b, 20 * MiB, NULL, &bufs);
  if (p)
    {
      ok (p->oom.hit, "under 20 MiB the 30 MiB request is an OOM");
      is_u64 (p->oom.tick, 2, "at its tick");
      ok (p->oom.verdict == ML_OOM_CAPACITY, "verdict: capacity");
    }
  ml_plan_free (p);
  ml_buffers_free (bufs);
  ml_trace_free (b.t);

  /* with max_split_size set, oversize cached segments go back first, and only as many as needed */
  b = (B) { ml_trace_new (), 0 };
  ev (&b, ML_EV_ALLOC, 1, 64 * MiB, 0);   /* an oversize 64 MiB segment */
  ev (&b, ML_EV_ALLOC, 2, 2 * MiB, 0);    /* a 20 MiB segment */
  ev (&b, ML_EV_FREE, 1, 0, 0);
  ev (&b, ML_EV_FREE, 2, 0, 0);
  ev (&b, ML_EV_ALLOC, 3, 40 * MiB, 0);   /* 64 >= 40 + 20: refused; 84 + 40 > 120: release the 64 MiB one only */
  p = run (&b, 120 * MiB, "max_split_size_mb=32", &bufs);
  if (p)
    {
      ok (!p->oom.hit, "no OOM");
      is_u64 (p->segments[0].end, 4, "the oversize cached segment went back at the 40 MiB request");
      is_u64 (p->segments[1].end, bufs->end_tick, "the 20 MiB one stayed cached");
      is_u64 (p->n_segments, 3, "three segments");
      is_u64 (p->segments[p->n_segments - 1].size, 40 * MiB, "then the 40 MiB segment");
    }
  ml_plan_free (p);
  ml_buffers_free (bufs);
  p = run (&b, 120 * MiB, NULL, &bufs);
  if (p)
    {
      is_u64 (p->n_segments, 2, "without max_split_size the 40 MiB request splits the cached 64 MiB block");
      is_u64 (p->segment[2], 0, "in the first segment");
    }
  ml_plan_free (p);
  ml_buffers_free (bufs);
  ml_trace_free (b.t);

  /* roundup_power2_divisions and expandable segments */
  b = (B) { ml_trace_new (), 0 };
  ev (&b, ML_EV_ALLOC, 1, 1200 * 1024, 0);   /* 1.17 MiB -> 4 divisions of [1, 2) MiB: 1.25 MiB */
  ev (&b, ML_EV_ALLOC, 2, 1200 * 1024, 0);
  p = run (&b, 0, "roundup_power2_divisions=4", &bufs);
  if (p)
    is_u64 (p->offset[1], 1280 * 1024, "roundup_power2_divisions=4 rounds 1200 KiB up to 1280 KiB");
  ml_plan_free (p);
  ml_buffers_free (bufs);
  /* per size interval: [1, 2) MiB has 2 divisions (1.5 MiB steps), the rest 8 */
  p = run (&b, 0, "roundup_power2_divisions:[1:2,2:8]", &bufs);
  if (p)
    is_u64 (p->offset[1], 1536 * 1024, "[1:2,...]: 1200 KiB in the [1, 2) MiB interval rounds to 1.5 MiB");
  ml_plan_free (p);
  ml_buffers_free (bufs);
  p = run (&b, 0, "roundup_power2_divisions:[1:0,>:8]", &bufs);
  if (p)
    is_u64 (p->offset[1], 1280 * 1024,
            "[1:0,>:8]: '>' fills from the last interval named, that one included (PyTorch's fill from last_index): 8 divisions, 1.25 MiB");
  ml_plan_free (p);
  ml_buffers_free (bufs);
  p = run (&b, 0, "expandable_segments=1", &bufs);
  if (p)
    {
      is_u64 (p->n_segments, 1, "expandable: one segment");
      ok (p->segments[0].flags & ML_SEG_EXPANDABLE, "flagged expandable");
      is_u64 (p->segments[0].size, 20 * MiB, "one 20 MiB page holds both");
    }
  ml_plan_free (p);
  ml_buffers_free (bufs);
  MlKnobs k;
  ml_knobs_init (&k);
  k.options = "max_split_size_mb=x";
  MlError err = { 0 };
  ml_buffers_build (b.t, 512, &bufs, &err);
  ok (ml_sim_run (bufs, &ml_strategy_caching, &k, &p, &err) == ML_EUSAGE, "a bad option is refused: %s", err.msg);
  ml_buffers_free (bufs);
  ml_trace_free (b.t);
}

/* ---- conformance: each mismatch is attributed to a rule ---- */

static void
sev (MlTrace *t, MlEventKind kind, uint64_t tick, uint64_t id, uint64_t addr, uint64_t size, uint32_t stream,
     const char *name)
{
  MlEvent e = { .tick = tick, .id = id, .addr = addr, .size = size, .stream = stream, .kind = (uint8_t) kind,
                .flags = ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, .time_ns = -1,
                .name = name ? ml_strtab_intern0 (t->strings, name) : 0 };
  ml_trace_append (t, &e);
}

static void
test_conformance_rules (void)
{
  const uint64_t SA = 0x10000000, SB = 0x20000000;
  MlTrace *t = ml_trace_new ();
  t->has_addrs = true;
  sev (t, ML_EV_SEGMENT_ALLOC, 0, 0, SA, 2 * MiB, 0, "small");
  sev (t, ML_EV_SEGMENT_ALLOC, 0, 1, SB, 2 * MiB, 5, "small");
  /* pending free: X stays allocated between free_requested and free_completed */
  sev (t, ML_EV_ALLOC, 1, 1, SA, 512, 0, NULL);
  sev (t, ML_EV_FREE_REQUESTED, 2, 1, SA, 512, 0, NULL);
  sev (t, ML_EV_ALLOC, 3, 2, SA + 512, 512, 0, NULL);
  sev (t, ML_EV_FREE, 4, 1, SA, 512, 0, NULL);
  /* the real allocator used stream 5's block for a stream 0 request */
  sev (t, ML_EV_ALLOC, 5, 3, SB, 512, 0, NULL);
  /* ... cut a free block in its middle */
  sev (t, ML_EV_ALLOC, 6, 4, SA + 4096, 512, 0, NULL);
  /* ... put a large request in a small segment */
  sev (t, ML_EV_ALLOC, 7, 5, SA + 8192, 3 * MiB / 2, 0, NULL);
  /* ... and an allocation over a live block (the state diverged) */
  sev (t, ML_EV_ALLOC, 8, 6, SA + 512, 512, 0, NULL);
  MlCachingConformance c;
  MlError err = { 0 };
  ok (ml_caching_conformance (t, NULL, &c, &err) == 0, "conformance on a hand-made trace (%s)", err.msg);
  is_u64 (c.allocs, 6, "six allocations");
  is_u64 (c.matched, 2, "the two around a pending free match (the block is reused only after free_completed)");
  is_u64 (c.by_rule[ML_RULE_STREAM], 1, "another stream's block: per-stream reuse");
  is_u64 (c.by_rule[ML_RULE_SPLIT], 1, "the middle of a free block: split position");
  is_u64 (c.by_rule[ML_RULE_POOL], 1, "a large request in a small segment: pool");
  is_u64 (c.by_rule[ML_RULE_STATE], 1, "over a live block: state diverged");
  is_u64 (c.first_mismatch, 6, "the first mismatch is event 6");
  ml_trace_free (t);
}

/* ---- Kineto / Chrome traces ---- */

static const char kineto_json[] =
  "{\"traceEvents\":[\n"
  "{\"ph\":\"X\",\"name\":\"aten::mm\",\"ts\":1,\"dur\":3},\n"
  "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":10,\"tid\":1,\"args\":{\"Addr\":4096,\"Bytes\":1000,\"Total Allocated\":3000,\"Total Reserved\":2097152,\"Device Type\":1,\"Device Id\":0}},\n"
  "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":5.5,\"tid\":1,\"args\":{\"Addr\":8192,\"Bytes\":2000,\"Device Type\":1,\"Device Id\":0}},\n"
  "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":20,\"tid\":1,\"args\":{\"Addr\":4096,\"Bytes\":-1000,\"Device Type\":1,\"Device Id\":0}},\n"
  "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":1,\"tid\":1,\"args\":{\"Addr\":65536,\"Bytes\":-300,\"Device Type\":1,\"Device Id\":0}},\n"
  "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":2,\"tid\":1,\"args\":{\"Addr\":77,\"Bytes\":64,\"Device Type\":0,\"Device Id\":-1}}\n"
  "]}\n";

static void
check_kineto (MlTrace *t, const char *what)
{
  ok (t && t->n_events == 5, "%s: 5 events from 4 CUDA [memory] events", what);
  if (!t || t->n_events != 5)
    return;
  static const MlEventKind want[] = { ML_EV_ALLOC, ML_EV_FREE, ML_EV_ALLOC, ML_EV_ALLOC, ML_EV_FREE };
  bool kinds = true;
  for (size_t i = 0; i < 5; i++)
    kinds &= t->events[i].kind == want[i];
  ok (kinds, "%s: ordered by ts; the free of an earlier allocation gets a buffer from tick 0", what);
  is_u64 (t->events[0].tick, 0, "the pre-existing buffer starts at tick 0");
  is_u64 (t->events[0].size, 300, "its size is the freed bytes");
  is_u64 (t->events[2].addr, 8192, "ts 5.5 comes before ts 10");
  is_u64 (t->events[2].time_ns, 4500, "ts in µs becomes ns, from the first event's (ts 1)");
  is_u64 (t->events[4].id, t->events[3].id, "free paired with its alloc by address");
  is_str (ml_trace_str (t, t->source), "kineto", "source");
}

static void
test_kineto (void)
{
  MlError err = { 0 };
  char *path = tap_write_temp (kineto_json, ".json");
  MlTrace *t = NULL;
  ml_trace_load (path, NULL, &t, &err);
  check_kineto (t, "plain");
  ml_trace_free (t);
  char gzpath[4200];
  snprintf (gzpath, sizeof gzpath, "%s.gz", path);
  gzFile gz = gzopen (gzpath, "wb");
  gzwrite (gz, kineto_json, (unsigned) strlen (kineto_json));
  gzclose (gz);
  t = NULL;
  ml_trace_load (gzpath, NULL, &t, &err);
  check_kineto (t, ".json.gz");
  ml_trace_free (t);
  /* a truncated gzip stream */
  FILE *fp = fopen (gzpath, "r+b");
  fseek (fp, 0, SEEK_END);
  long len = ftell (fp);
  fclose (fp);
  if (truncate (gzpath, len / 2) == 0)
    {
      t = NULL;
      ok (ml_trace_load (gzpath, NULL, &t, &err) == ML_EINPUT, "a truncated .gz is bad input: %s", err.msg);
      ml_trace_free (t);
    }
  unlink (gzpath);
  unlink (path);
  free (path);
  path = tap_write_temp ("{\"traceEvents\":[{\"name\":\"[memory]\",\"args\":{\"Addr\":1}}]}", ".json");
  t = NULL;
  ok (ml_trace_load (path, NULL, &t, &err) == ML_EINPUT && strstr (err.msg, "Bytes"), "a [memory] event without Bytes: %s", err.msg);
  unlink (path);
  free (path);
}

/* ---- graphs ---- */

static MlTrace *
graph (const char *json, const char *options, MlError *err)
{
  char *path = tap_write_temp (json, ".json");
  MlLoadOptions o;
  ml_load_options_init (&o);
  o.graph_options = options;
  MlTrace *t = NULL;
  memset (err, 0, sizeof *err);
  ml_trace_load (path, &o, &t, err);
  unlink (path);
  free (path);
  return t;
}

static void
test_graph (void)
{
  MlError err;
  MlBuffers *b = NULL;
  is_u64 (ml_dtype_size ("bf16"), 2, "bf16 is 2 bytes");
  is_u64 (ml_dtype_size ("fp8"), 1, "fp8 is 1 byte");
  is_u64 (ml_dtype_size ("f64"), 8, "f64 is 8 bytes");
  is_u64 (ml_dtype_size ("complex"), 0, "unknown dtype");
  MlTrace *t = graph ("{\"tensors\":["
                      "{\"name\":\"x\",\"shape\":[3,5],\"dtype\":\"f32\",\"kind\":\"input\"},"
                      "{\"name\":\"w\",\"shape\":[1000],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
                      "{\"name\":\"a\",\"shape\":[1000],\"dtype\":\"f32\"},"
                      "{\"name\":\"b\",\"shape\":[1000],\"dtype\":\"f32\"},"
                      "{\"name\":\"c\",\"shape\":[1],\"dtype\":\"bool\"},"
                      "{\"name\":\"y\",\"shape\":[],\"dtype\":\"i64\",\"kind\":\"output\"}],"
                      "\"ops\":["
                      "{\"name\":\"mm\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"a\"]},"
                      "{\"name\":\"relu_\",\"inputs\":[\"a\"],\"outputs\":[\"b\"],\"inplace\":[[\"a\",\"b\"]]},"
                      "{\"name\":\"cmp\",\"inputs\":[\"b\",\"a\"],\"outputs\":[\"c\"]},"
                      "{\"name\":\"head\",\"inputs\":[\"c\"],\"outputs\":[\"y\"]}]}", NULL, &err);
  ok (t != NULL, "a graph loads (%s)", err.msg);
  if (t && ml_buffers_build (t, 0, &b, &err) == 0)
    {
      is_u64 (b->n, 5, "5 buffers: the in-place output b is a's buffer");
      is_u64 (b->align, 256, "graphs align to 256 by default");
      is_u64 (b->buf[0].size, 60, "x: 3 x 5 f32 = 60 bytes");
      is_u64 (b->buf[0].rsize, 256, "rounded to 256");
      is_u64 (b->buf[1].rsize, 2048, "w: 1000 bf16 = 2000 -> 2048");
      is_u64 (b->buf[0].end, 2, "x: input, freed after its last use (op 1 at tick 1)");
      ok (b->buf[1].flags & ML_BUF_NEVER_FREED, "the weight lives to the end");
      is_u64 (b->buf[2].start, 1, "a starts at its op");
      is_u64 (b->buf[2].end, 4, "a (and its in-place alias b) lives through cmp at tick 3");
      is_u64 (b->buf[3].size, 1, "c: one bool");
      is_u64 (b->buf[4].size, 8, "y: a scalar i64");
      ok (b->buf[4].flags & ML_BUF_OUTPUT, "y is flagged output");
      is_u64 (t->n_inplace, 1, "the in-place write is recorded for the race checker");
      if (t->n_inplace == 1)
        {
          is_u64 (t->inplace[0].op_tick, 2, "at relu_'s tick");
          is_u64 (t->inplace[0].input_id, b->buf[2].id, "over a");
          is_u64 (t->inplace[0].output_id, b->buf[2].id, "into the same buffer");
          is_u64 (t->inplace[0].last_read, 3, "a is read last by cmp at tick 3");
        }
      bool marked = false;
      for (size_t i = 0; i < t->n_events; i++)
        if (t->events[i].kind == ML_EV_MARK && strstr (ml_trace_str (t, t->events[i].name), "\"cmp\" reads later"))
          marked = true;
      ok (marked, "a mark names the hazard and its reader");
      MlIssues is;
      ml_issues_init (&is);
      MlPlan *plan = NULL;
      MlKnobs k;
      ml_knobs_init (&k);
      ok (ml_sim_run (b, &ml_strategy_caching, &k, &plan, &err) == 0 && ml_check_races (b, plan, &is, &err) == 0,
          "the race checker runs on the graph (%s)", err.msg);
      is_u64 (is.total[ML_ISSUE_INPLACE], 1, "one in-place hazard: cmp reads a after relu_ overwrote it");
      ml_plan_free (plan);
      ml_issues_clear (&is);
    }
  ml_buffers_free (b);
  ml_trace_free (t);
  t = graph ("{\"tensors\":[{\"name\":\"x\",\"shape\":[4],\"dtype\":\"f32\",\"kind\":\"input\"},"
             "{\"name\":\"w\",\"shape\":[4],\"dtype\":\"f32\",\"kind\":\"weight\"},"
             "{\"name\":\"y\",\"shape\":[4],\"dtype\":\"f32\",\"kind\":\"output\"}],"
             "\"ops\":[{\"name\":\"add\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"y\"]}]}",
             "exclude=weights,exclude=inputs", &err);
  ok (t && t->n_events == 1, "exclude=weights,exclude=inputs keeps only the output (%s)", err.msg);
  ml_trace_free (t);
  t = graph ("{\"tensors\":[{\"name\":\"x\",\"shape\":[4],\"dtype\":\"f32\",\"kind\":\"input\"},"
             "{\"name\":\"w1\",\"shape\":[100],\"dtype\":\"f32\",\"kind\":\"weight\"},"
             "{\"name\":\"w2\",\"shape\":[4],\"dtype\":\"f32\",\"kind\":\"weight\"},"
             "{\"name\":\"h\",\"shape\":[4],\"dtype\":\"f32\"},"
             "{\"name\":\"y\",\"shape\":[4],\"dtype\":\"f32\",\"kind\":\"output\"}],"
             "\"ops\":[{\"name\":\"a\",\"inputs\":[\"x\",\"w1\"],\"outputs\":[\"h\"]},"
             "{\"name\":\"b\",\"inputs\":[\"h\",\"w2\"],\"outputs\":[\"y\"]}]}",
             "pin=weights,pin=inputs", &err);
  b = NULL;
  if (t && ml_buffers_build (t, 0, &b, &err) == 0)
    {
      ok ((b->buf[1].flags & ML_BUF_PINNED) && (b->buf[2].flags & ML_BUF_PINNED), "pin=weights flags the weights");
      is_u64 (b->buf[0].addr, 0, "pinned tensors are packed from 0: x");
      is_u64 (b->buf[1].addr, 256, "w1 after x (16 B rounded to 256)");
      is_u64 (b->buf[2].addr, 256 + 512, "w2 after w1 (400 B rounded to 512)");
      ok (b->buf[0].flags & ML_BUF_NEVER_FREED, "a pinned input stays resident");
      ok (!(b->buf[3].flags & ML_BUF_PINNED), "activations are not pinned");
    }
  else
    ok (0, "pinned graph loads (%s)", err.msg);
  ml_buffers_free (b);
  ml_trace_free (t);

  /* two branches: A and B make 100 KiB each, C and D shrink them */
  const char *branches = "{\"alignment\":1,\"tensors\":[{\"name\":\"in\",\"bytes\":1,\"kind\":\"input\"},"
    "{\"name\":\"X\",\"bytes\":100000},{\"name\":\"Y\",\"bytes\":100000},"
    "{\"name\":\"x\",\"bytes\":10,\"kind\":\"output\"},{\"name\":\"y\",\"bytes\":10,\"kind\":\"output\"}],"
    "\"ops\":[{\"name\":\"A\",\"inputs\":[\"in\"],\"outputs\":[\"X\"]},"
    "{\"name\":\"B\",\"inputs\":[\"in\"],\"outputs\":[\"Y\"]},"
    "{\"name\":\"C\",\"inputs\":[\"X\"],\"outputs\":[\"x\"]},"
    "{\"name\":\"D\",\"inputs\":[\"Y\"],\"outputs\":[\"y\"]}]}";
  t = graph (branches, NULL, &err);
  b = NULL;
  if (t && ml_buffers_build (t, 0, &b, &err) == 0)
    is_u64 (b->lower_bound, 200010, "given order A B C D: X and Y live together while C makes x");
  ml_buffers_free (b);
  ml_trace_free (t);
  t = graph (branches, "reorder=memory", &err);
  b = NULL;
  if (t && ml_buffers_build (t, 0, &b, &err) == 0)
    {
      is_u64 (b->lower_bound, 100020, "reorder=memory runs A C B D: one 100 KB tensor at a time (Y + x + y at D)");
      ok (t->events[0].kind == ML_EV_MARK, "a mark reports the gain");
      has_str (ml_trace_str (t, t->events[0].name), "200010 -> 100020", "with both peaks");
    }
  ml_buffers_free (b);
  ml_trace_free (t);

  /* bad graphs */
  t = graph ("{\"tensors\":[{\"name\":\"x\",\"shape\":[4],\"dtype\":\"f128\"}],\"ops\":[]}", NULL, &err);
  ok (!t && strstr (err.msg, "f128"), "unknown dtype: %s", err.msg);
  t = graph ("{\"tensors\":[{\"name\":\"x\",\"shape\":[4],\"dtype\":\"f32\"}],"
             "\"ops\":[{\"name\":\"o\",\"inputs\":[\"x\"],\"outputs\":[]}]}", NULL, &err);
  ok (!t && strstr (err.msg, "before any op writes it"), "an activation read before it is written: %s", err.msg);
  t = graph ("{\"tensors\":[{\"name\":\"x\",\"shape\":[4],\"dtype\":\"f32\"}],"
             "\"ops\":[{\"name\":\"o\",\"inputs\":[\"z\"],\"outputs\":[]}]}", NULL, &err);
  ok (!t && strstr (err.msg, "\"z\" is not a declared tensor"), "an undeclared tensor: %s", err.msg);
  t = graph ("{\"tensors\":[{\"name\":\"x\",\"shape\":[4],\"dtype\":\"f32\"},{\"name\":\"x\",\"shape\":[4],\"dtype\":\"f32\"}],\"ops\":[]}",
             NULL, &err);
  ok (!t && strstr (err.msg, "twice"), "a tensor declared twice: %s", err.msg);
  t = graph ("{\"tensors\":[{\"name\":\"x\",\"shape\":[4294967296,4294967296],\"dtype\":\"f32\"}],\"ops\":[]}", NULL, &err);
  ok (!t && strstr (err.msg, "2^56"), "a shape past 2^56 elements: %s", err.msg);
}

/* Mutated graphs and profiler traces fail cleanly (or load). */
static void
test_json_mutations (void)
{
  static const char graph_json[] =
    "{\"alignment\":256,\"tensors\":[{\"name\":\"x\",\"shape\":[4,8],\"dtype\":\"f32\",\"kind\":\"input\"},"
    "{\"name\":\"a\",\"shape\":[32],\"dtype\":\"bf16\"},{\"name\":\"b\",\"shape\":[32],\"dtype\":\"bf16\"},"
    "{\"name\":\"y\",\"bytes\":64,\"kind\":\"output\"}],\"ops\":[{\"name\":\"f\",\"inputs\":[\"x\"],\"outputs\":[\"a\"]},"
    "{\"name\":\"g_\",\"inputs\":[\"a\"],\"outputs\":[\"b\"],\"inplace\":[[\"a\",\"b\"]]},"
    "{\"name\":\"h\",\"inputs\":[\"b\",\"a\"],\"outputs\":[\"y\"]}]}";
  const char *seeds[] = { graph_json, kineto_json };
  uint64_t rng = 12345;
  size_t loaded = 0, failed = 0, silent = 0;
  for (int s = 0; s < 2; s++)
    for (int m = 0; m < 1500; m++)
      {
        char buf[4096];
        size_t n = strlen (seeds[s]);
        memcpy (buf, seeds[s], n + 1);
        for (int e = 0; e < 1 + m % 3; e++)
          {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t) ((rng >> 33) % n);
            static const char alphabet[] = "0123456789-.,:[]{}\"eaxyzE ";
            buf[at] = alphabet[(rng >> 20) % (sizeof alphabet - 1)];
          }
        cJSON *doc = cJSON_Parse (buf);
        if (!doc)
          continue;   /* not JSON (the Kineto reader would say so: above) */
        MlLoadOptions o;
        ml_load_options_init (&o);
        o.graph_options = m % 2 ? "reorder=memory" : NULL;
        MlTrace *t = NULL;
        MlError err = { 0 };
        int rc = s == 0 ? ml_trace_from_graph (doc, "mutant", &o, &t, &err)
                        : ml_trace_load_kineto_mem (buf, strlen (buf), "mutant", &o, &t, &err);
        if (rc == 0)
          {
            MlBuffers *b = NULL;
            if (ml_buffers_build (t, 0, &b, &err) == 0)
              loaded++;
            ml_buffers_free (b);
          }
        else if (err.msg[0])
          failed++;
        else
          silent++;
        ml_trace_free (t);
        cJSON_Delete (doc);
      }
  ok (silent == 0, "mutated graphs and profiler traces: %zu loaded, %zu refused with a message, %zu without", loaded, failed, silent);
  ok (loaded > 50 && failed > 50, "both outcomes happen");
}

/* reserved bytes at @tick on @c (the last point at or before it) */
static uint64_t
reserved_at (const MlCurve *c, uint64_t tick)
{
  uint64_t r = 0;
  for (size_t k = 0; k < c->n && c->pts[k].tick <= tick; k++)
    r = c->pts[k].reserved;
  return r;
}

/* Expandable segments that unmap (tests/data/expandable-unmap.pickle): the
 * caching strategy under the 170 MiB the device allowed reproduces the
 * recorded reserved curve tick by tick (the unmap of 40 MiB in its retry,
 * the page mapped into the hole), and its plan file keeps the pages. */
static void
test_expandable_unmap (void)
{
  MlError err = { 0 };
  MlTrace *t = load ("expandable-unmap.pickle", -1, &err);
  ok (t != NULL, "expandable-unmap.pickle loads (%s)", err.msg);
  if (!t)
    return;
  MlBuffers *bufs = NULL;
  MlPlan *emu = NULL, *rec = NULL, *back = NULL;
  MlKnobs k;
  ml_knobs_init (&k);
  k.capacity = 170 * MiB;
  MlCurve ce = { 0 }, cr = { 0 }, cb = { 0 };
  MlMetrics me, mr, mb;
  char path[] = "/tmp/memlens-test-plan-XXXXXX";
  int fd = mkstemp (path);
  if (fd >= 0)
    close (fd);
  if (ml_buffers_build (t, 0, &bufs, &err) == 0 && ml_sim_run (bufs, &ml_strategy_caching, &k, &emu, &err) == 0
      && ml_plan_from_recorded (bufs, &rec, &err) == 0 && ml_metrics_compute (bufs, emu, &me, &ce, &err) == 0
      && ml_metrics_compute (bufs, rec, &mr, &cr, &err) == 0)
    {
      ok (!emu->oom.hit, "under 170 MiB nothing fails");
      is_u64 (emu->retries, 1, "one retry");
      is_u64 (emu->retry_released, 40 * MiB, "it unmaps the 40 MiB of whole free pages");
      is_u64 (me.peak, 162 * MiB, "peak 162 MiB");
      is_u64 (mr.peak, 162 * MiB, "the recorded peak is 162 MiB too");
      /* at every allocation and free (the recorded segment events take
       * ticks of their own just before; the emulation maps and unmaps
       * within the allocation's tick) */
      bool same = true;
      for (size_t i = 0; i < 2 * bufs->n; i++)
        {
          uint64_t tk = i < bufs->n ? bufs->buf[i].start : bufs->buf[i - bufs->n].end;
          if (tk > bufs->end_tick || reserved_at (&ce, tk) == reserved_at (&cr, tk))
            continue;
          printf ("# tick %" PRIu64 ": emulated %" PRIu64 ", recorded %" PRIu64 "\n", tk, reserved_at (&ce, tk), reserved_at (&cr, tk));
          same = false;
        }
      ok (same, "the emulated reserved curve is the recorded one at every allocation and free");
      ok (emu->n_maps >= 7, "the pages are mappings of the plan (%zu)", emu->n_maps);
      if (ml_plan_write_json (emu, bufs, path, &err) == 0 && ml_plan_read_json (path, bufs, &back, &err) == 0
          && ml_metrics_compute (bufs, back, &mb, &cb, &err) == 0)
        {
          is_u64 (back->n_maps, emu->n_maps, "the plan file keeps the mappings");
          bool again = mb.peak == me.peak;
          for (uint64_t at = 0; at <= bufs->end_tick; at++)
            again = again && reserved_at (&cb, at) == reserved_at (&ce, at);
          ok (again, "read back, the plan has the same reserved curve");
        }
      else
        ok (0, "plan file round trip: %s", err.msg);
    }
  else
    ok (0, "caching under 170 MiB: %s", err.msg);
  unlink (path);
  ml_curve_free (&ce);
  ml_curve_free (&cr);
  ml_curve_free (&cb);
  ml_plan_free (emu);
  ml_plan_free (rec);
  ml_plan_free (back);
  ml_buffers_free (bufs);
  ml_trace_free (t);
}

int
main (int argc, char **argv)
{
  if (argc > 1)
    root = argv[1];
  test_tiny ("tiny-snapshot.pickle");
  test_tiny ("tiny-snapshot-p2.pickle");
  test_snapshot_forms ();
  test_caching ();
  test_caching_pools ();
  test_expandable_unmap ();
  test_conformance_rules ();
  test_kineto ();
  test_graph ();
  test_json_mutations ();
  return tap_done ();
}
