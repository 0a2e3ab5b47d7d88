/* pool and buddy: hand-worked traces with exact offsets and segments,
 * retries on allocation failure, and properties over random traces
 * (valid plans, peak >= lower bound, buddy blocks powers of two aligned to
 * their size, pool chunks carved into one class at a time, the internal
 * waste recomputed here from the plan). */
#include "tests/tap.h"

#include "strategies/registry.h"
#include "tests/trace-text.h"

static MlPlan *
run (const MlBuffers *b, const char *name, uint64_t chunk, uint64_t capacity, uint32_t retries, const char *options)
{
  MlKnobs k;
  ml_knobs_init (&k);
  k.chunk = chunk;
  k.capacity = capacity;
  k.retries = retries;
  k.options = options;
  MlPlan *p = NULL;
  MlError err = { 0 };
  if (ml_sim_run (b, ml_strategy_find (name), &k, &p, &err) < 0)
    printf ("# %s: %s\n", name, err.msg);
  return p;
}

#define H256 TRACE_HEADER (256)

/* chunk 4096, alignment 256: classes 256, 512, 768, 1K, 1.25K, 1.5K, 1.75K,
 * 2K, 2.5K, 3K, 3.5K, 4K. */
static const char pool_trace[] = H256
  A (1, 300)    /* 512: class 512, new chunk 0, slot 0          */
  A (2, 512)    /* class 512, chunk 0 at 512                      */
  A (3, 1000)   /* 1024: class 1K, new chunk 1 at 0               */
  A (4, 5000)   /* 5120 > large (4096): its own segment 2         */
  F (1)         /* chunk 0: slot 0 free                           */
  A (5, 400)    /* 512: the freed slot, chunk 0 at 0              */
  F (3)         /* chunk 1 empty: cached                          */
  A (6, 2700)   /* 2816: class 3K, takes the cached chunk 1 at 0  */
  A (7, 2600)   /* 2816: class 3K, chunk 1 is full: new chunk 3   */
  F (4);        /* segment 2 back to the device                   */

static void
test_pool_offsets (void)
{
  MlTrace *t;
  MlBuffers *b = build_text (pool_trace, &t);
  static const uint32_t seg[] = { 0, 0, 1, 2, 0, 1, 3 };
  static const uint64_t off[] = { 0, 512, 0, 0, 0, 0, 0 };
  MlPlan *p = run (b, "pool", 4096, 0, 3, NULL);
  ok (p != NULL, "pool runs");
  if (!p)
    return;
  for (size_t i = 0; i < 7; i++)
    {
      is_u64 (p->segment[i], seg[i], "pool: buffer %zu in segment %u", i + 1, seg[i]);
      is_u64 (p->offset[i], off[i], "pool: buffer %zu at %" PRIu64, i + 1, off[i]);
    }
  is_u64 (p->n_segments, 4, "pool: four segments");
  is_u64 (p->segments[2].size, 5120, "pool: the large request's segment is its size");
  is_u64 (p->segments[2].end, b->buf[3].end, "pool: ... given back when it is freed");
  is_u64 (p->segments[1].end, b->end_tick, "pool: an empty chunk stays cached");
  is_u64 (issues_of (b, p), 0, "pool: plan validates");
  MlMetrics m;
  ml_metrics_compute (b, p, &m, NULL, NULL);
  is_u64 (m.peak, 3 * 4096 + 5120, "pool: peak = three chunks + the large segment");
  /* at the lower-bound tick (after buffer 7): 2 (512/512), 5 (512/512), 6 and 7 (3072/2816) */
  is_u64 (p->block_waste, 2 * 256, "pool: internal waste at the peak = class - rounded size");
  ml_plan_free (p);

  /* release=1: the empty chunk goes back, buffer 6 reserves chunk 3 */
  p = run (b, "pool", 4096, 0, 3, "release=1");
  is_u64 (p->segment[5], 3, "pool release=1: buffer 6 in a new chunk 3");
  is_u64 (p->segment[6], 4, "pool release=1: buffer 7 in chunk 4");
  is_u64 (p->segments[1].end, b->buf[2].end, "pool release=1: chunk 1 ends when its last slot is freed");
  is_u64 (issues_of (b, p), 0, "pool release=1: plan validates");
  ml_plan_free (p);

  /* large=1K: buffer 3 (1024) is still a class, 2816 are large */
  p = run (b, "pool", 4096, 0, 3, "large=1K");
  is_u64 (p->segments[p->segment[5]].size, 2816, "pool large=1K: a 2816-byte request has its own segment");
  is_u64 (p->segments[p->segment[2]].size, 4096, "pool large=1K: a 1024-byte request is in a chunk");
  ml_plan_free (p);

  MlKnobs k;
  ml_knobs_init (&k);
  k.chunk = 4096;
  k.options = "large=8K";
  MlError err = { 0 };
  ok (ml_sim_run (b, ml_strategy_find ("pool"), &k, &p, &err) == ML_EUSAGE, "pool: large above the chunk is refused");
  has_str (err.msg, "above the chunk size", "pool: ... saying why");
  k.options = "colour=3";
  ok (ml_sim_run (b, ml_strategy_find ("pool"), &k, &p, &err) == ML_EUSAGE, "pool: an unknown option is refused");
  has_str (err.msg, "known: large, release", "pool: ... naming the known ones");
  ml_buffers_free (b);
  ml_trace_free (t);
}

/* chunk 4096, alignment 256: blocks 256 .. 4096 */
static const char buddy_trace[] = H256
  A (1, 300)    /* 512: segment 0 split 4K > 2K > 1K > 512: at 0; free 512@512, 1K@1K, 2K@2K */
  A (2, 256)    /* 256: 512@512 split: at 512, free 256@768 */
  A (3, 1500)   /* 2048: at 2048 */
  A (4, 1024)   /* 1024: at 1024 */
  F (2)         /* 512 merges with 768 into 512@512; its buddy 0 is in use */
  A (5, 5000)   /* 8192 > the segment: its own segment 1 of 5120 bytes */
  A (6, 200)    /* 256: 512@512 split again: at 512 */
  F (1)         /* 512@0 stays (its buddy 512 is split) */
  F (6)         /* 256@512 + 768 -> 512@512 + 0 -> 1K@0 */
  F (4)         /* 1K@1K + 0 -> 2K@0 */
  F (3)         /* 2K@2K + 0 -> the whole segment, cached */
  F (5)         /* segment 1 back */
  A (7, 4096);  /* the cached segment 0 at 0 */

static void
test_buddy_offsets (void)
{
  MlTrace *t;
  MlBuffers *b = build_text (buddy_trace, &t);
  static const uint32_t seg[] = { 0, 0, 0, 0, 1, 0, 0 };
  static const uint64_t off[] = { 0, 512, 2048, 1024, 0, 512, 0 };
  MlPlan *p = run (b, "buddy", 4096, 0, 3, NULL);
  ok (p != NULL, "buddy runs");
  if (!p)
    return;
  for (size_t i = 0; i < 7; i++)
    {
      is_u64 (p->segment[i], seg[i], "buddy: buffer %zu in segment %u", i + 1, seg[i]);
      is_u64 (p->offset[i], off[i], "buddy: buffer %zu at %" PRIu64, i + 1, off[i]);
    }
  is_u64 (p->n_segments, 2, "buddy: two segments");
  is_u64 (p->segments[1].size, 5120, "buddy: the large request's segment is its size");
  is_u64 (p->segments[0].end, b->end_tick, "buddy: the free segment stays cached");
  is_u64 (issues_of (b, p), 0, "buddy: plan validates");
  /* lower-bound tick: after buffer 6: 1 (512/512), 3 (2048/1536), 4, 5 (own), 6 (256/256) */
  is_u64 (b->lower_bound, 512 + 1536 + 1024 + 5120 + 256, "buddy trace: the lower bound");
  is_u64 (p->block_waste, 512, "buddy: internal waste at the peak = block - rounded size");
  ml_plan_free (p);

  p = run (b, "buddy", 4096, 0, 3, "release=1");
  is_u64 (p->segments[0].end, b->buf[2].end, "buddy release=1: segment 0 goes back when wholly free");
  is_u64 (p->segment[6], 2, "buddy release=1: buffer 7 reserves segment 2");
  is_u64 (issues_of (b, p), 0, "buddy release=1: plan validates");
  ml_plan_free (p);

  /* a chunk that is not a power of two: segments of the next one */
  p = run (b, "buddy", 3000, 0, 3, NULL);
  is_u64 (p->segments[0].size, 4096, "buddy: --chunk 3000 gives segments of 4096");
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);
}

/* arena=1 under a capacity of 3 KiB: roots 2K@0 and 1K@2K */
static const char arena_trace[] = H256
  A (1, 1024)   /* order 10: the 1K root at 2048 */
  A (2, 2048)   /* the 2K root at 0 */
  A (3, 256);   /* nothing free: OOM, then a 4K segment */

static void
test_buddy_arena (void)
{
  MlTrace *t;
  MlBuffers *b = build_text (arena_trace, &t);
  MlPlan *p = run (b, "buddy", 4096, 3072, 3, "arena=1");
  ok (p != NULL, "buddy arena runs");
  if (!p)
    return;
  is_u64 (p->segments[0].size, 3072, "arena: one segment of the capacity");
  is_u64 (p->offset[0], 2048, "arena: 1K in the 1K root");
  is_u64 (p->offset[1], 0, "arena: 2K in the 2K root");
  ok (p->oom.hit, "arena: the third request is an OOM");
  is_u64 (p->oom.buffer, 2, "arena: ... buffer 3");
  ok (p->oom.verdict == ML_OOM_CAPACITY, "arena: verdict capacity (nothing free)");
  is_u64 (p->segment[2], 1, "arena: after the OOM the run goes on in a segment");
  is_u64 (issues_of (b, p), 0, "arena: plan validates");
  ml_plan_free (p);
  MlKnobs k;
  ml_knobs_init (&k);
  k.options = "arena=1";
  MlError err = { 0 };
  ok (ml_sim_run (b, ml_strategy_find ("buddy"), &k, &p, &err) == ML_EUSAGE, "arena=1 without a capacity is refused");
  has_str (err.msg, "needs a capacity", "... saying why");
  ml_buffers_free (b);
  ml_trace_free (t);
}

/* A cached chunk must go back for a large request to fit: capacity 8 KiB,
 * a 4 KiB chunk cached after buffer 1 is freed, then 6 KiB of its own. */
static const char retry_trace[] = H256
  A (1, 256)
  F (1)
  A (2, 6000);

static void
test_retries (void)
{
  MlTrace *t;
  MlBuffers *b = build_text (retry_trace, &t);
  const char *names[] = { "pool", "buddy" };
  for (int s = 0; s < 2; s++)
    {
      MlPlan *p = run (b, names[s], 4096, 8192, 0, NULL);
      ok (p && p->oom.hit, "%s --retries 0: the large request fails", names[s]);
      is_u64 (p->oom.retries, 0, "%s --retries 0: no retry ran", names[s]);
      is_u64 (p->oom.released, 0, "%s --retries 0: nothing released", names[s]);
      ok (p->oom.verdict == ML_OOM_FRAGMENTATION, "%s --retries 0: verdict fragmentation (the bytes are free, cached)", names[s]);
      ml_plan_free (p);
      p = run (b, names[s], 4096, 8192, 1, NULL);
      ok (p && !p->oom.hit, "%s --retries 1: it fits", names[s]);
      is_u64 (p->retries, 1, "%s --retries 1: one retry ran", names[s]);
      is_u64 (p->retry_released, 4096, "%s --retries 1: it gave the 4 KiB chunk back", names[s]);
      is_u64 (p->segments[0].end, b->buf[1].start, "%s --retries 1: the chunk ends at the retry", names[s]);
      is_u64 (issues_of (b, p), 0, "%s --retries 1: plan validates", names[s]);
      MlMetrics m;
      ml_metrics_compute (b, p, &m, NULL, NULL);
      is_u64 (m.peak, 6144, "%s --retries 1: peak is the large segment alone", names[s]);
      ml_plan_free (p);
      /* too large even with the cache given back: the record says what the retries did */
      p = run (b, names[s], 4096, 6000, 3, NULL);
      ok (p && p->oom.hit, "%s capacity 6000: fails after retrying", names[s]);
      is_u64 (p->oom.retries, 1, "%s capacity 6000: one retry ran (a second has nothing to release)", names[s]);
      is_u64 (p->oom.released, 4096, "%s capacity 6000: ... releasing 4 KiB", names[s]);
      ml_plan_free (p);
      p = run (b, names[s], 4096, 8192, 3, "release=1");
      ok (p && !p->oom.hit && p->retries == 0, "%s release=1: nothing cached, nothing to retry", names[s]);
      ml_plan_free (p);
    }
  /* first-fit caches nothing: --retries changes nothing */
  MlTrace *tc;
  MlBuffers *bc = build_text (H256 A (1, 524288) F (1) A (2, 5242880), &tc);
  MlPlan *p0 = run (bc, "caching", 0, 21 << 20, 0, NULL), *p1 = run (bc, "caching", 0, 21 << 20, 1, NULL);
  ok (p0 && p0->oom.hit && p0->oom.retries == 0, "caching --retries 0: the 20 MiB segment does not fit beside the cached 2 MiB one");
  ok (p1 && !p1->oom.hit, "caching --retries 1: it fits after the cached segment goes back");
  is_u64 (p1 ? p1->retry_released : 0, 2 << 20, "caching --retries 1: 2 MiB released");
  ml_plan_free (p0);
  ml_plan_free (p1);
  ml_buffers_free (bc);
  ml_trace_free (tc);

  MlPlan *a = run (b, "first-fit", 4096, 4096, 0, NULL), *c = run (b, "first-fit", 4096, 4096, 5, NULL);
  ok (a->oom.hit == c->oom.hit && a->oom.tick == c->oom.tick && a->retries == 0 && c->retries == 0,
      "first-fit: the same OOM with --retries 0 and 5");
  ml_plan_free (a);
  ml_plan_free (c);
  ml_buffers_free (b);
  ml_trace_free (t);
}

/* ---- random traces ---- */

static uint64_t rng = 11;
static uint64_t
rnd (void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* the pool's classes, written from the header's rule */
static uint64_t
pool_class (uint64_t n, uint64_t a, uint64_t large)
{
  uint64_t v = a;
  while (v < n && v < large)
    {
      uint64_t step = 1;
      while (step * 2 <= v)
        step *= 2;
      step /= 4;
      v += step > a ? step : a;
    }
  return v < large ? v : large;
}

static uint64_t
pow2_at_least (uint64_t n)
{
  uint64_t v = 1;
  while (v < n)
    v *= 2;
  return v;
}

typedef struct { int bad_block, bad_class, mixed, bad_waste; } Props;

static void
check_props (const MlBuffers *b, const MlPlan *p, bool buddy, uint64_t chunk, Props *pr)
{
  uint64_t a = b->align ? b->align : 1, waste = 0;
  /* per segment: the class of its live slots and how many */
  uint64_t *cls = calloc (p->n_segments + 1, sizeof *cls);
  size_t *live = calloc (p->n_segments + 1, sizeof *live);
  MlSweep sw;
  MlSweepStep st;
  ml_sweep_init (&sw, b);
  uint64_t seg_size = pow2_at_least (chunk > a ? chunk : a);
  while (ml_sweep_next (&sw, &st))
    {
      const MlBuffer *x = &b->buf[st.buffer];
      uint32_t g = p->segment[st.buffer];
      uint64_t o = p->offset[st.buffer], n = x->rsize ? x->rsize : 1, blk;
      bool own;
      if (buddy)
        {
          blk = pow2_at_least (n > a ? n : a);
          own = blk > seg_size;
          if (!own && (o % blk || o + blk > p->segments[g].size))
            pr->bad_block++;
        }
      else
        {
          own = n > chunk;
          blk = own ? n : pool_class (n, a, chunk);
          if (!own && (p->segments[g].size != chunk || o % blk || o + blk > chunk))
            pr->bad_class++;
          if (!own && st.is_alloc)
            {
              if (live[g] && cls[g] != blk)
                pr->mixed++;
              cls[g] = blk;
            }
        }
      if (own)
        {
          if (o != 0 || p->segments[g].size != x->rsize)
            pr->bad_block++;
          blk = x->rsize;
        }
      if (st.is_alloc)
        {
          live[g]++;
          waste += blk - x->rsize;
          if (st.tick == b->lower_bound_tick)
            {
              if (waste != p->block_waste && (sw.next_start == b->n || b->buf[sw.next_start].start != st.tick))
                pr->bad_waste++;
            }
        }
      else
        {
          live[g]--;
          waste -= blk - x->rsize;
        }
    }
  free (cls);
  free (live);
}

static void
test_random (void)
{
  int invalid = 0, below = 0, runs = 0;
  Props pr = { 0 };
  char *text = malloc (1 << 20);
  int traces = tap_quick () ? 200 : 2000;
  for (int iter = 0; iter < traces; iter++)
    {
      TraceText tt;
      tt_begin (&tt, text, 1 << 20, iter % 3 ? 1 : 256);
      int nalloc = 1 + (int) (rnd () % 80), next_id = 1, live[96], nlive = 0;
      for (int a = 0; a < nalloc; a++)
        {
          while (nlive && rnd () % 3 == 0)
            {
              int k = (int) (rnd () % (uint64_t) nlive);
              tt_free (&tt, live[k]);
              live[k] = live[--nlive];
            }
          uint64_t size = (rnd () % 8 == 0) ? 0 : 1 + rnd () % (iter % 2 ? 300 : 12000);
          tt_alloc (&tt, next_id, size);
          live[nlive++] = next_id++;
        }
      MlTrace *t = load_text (text, ".jsonl");
      MlBuffers *b;
      if (!t || ml_buffers_build (t, 0, &b, NULL) < 0)
        {
          invalid++;
          ml_trace_free (t);
          continue;
        }
      uint64_t chunk = iter % 4 == 0 ? 4096 : iter % 4 == 1 ? 1000 * (iter % 7 + 1) : 65536;
      if (b->align > 1)
        chunk = (chunk + 255) / 256 * 256;
      static const char *const opts[] = { NULL, "release=1" };
      for (int s = 0; s < 2; s++)
        for (int o = 0; o < 2; o++)
          {
            bool buddy = s == 1;
            MlPlan *p = run (b, buddy ? "buddy" : "pool", chunk, 0, 3, opts[o]);
            MlMetrics m;
            runs++;
            if (!p || issues_of (b, p) || ml_metrics_compute (b, p, &m, NULL, NULL) < 0)
              invalid++;
            else
              {
                if (m.peak < m.lower_bound)
                  below++;
                check_props (b, p, buddy, chunk, &pr);
              }
            ml_plan_free (p);
          }
      /* the arena under a capacity: valid whether or not it runs out */
      MlPlan *p = run (b, "buddy", chunk, 3 * b->lower_bound / 2 + 256, 3, "arena=1");
      runs++;
      if (!p || issues_of (b, p))
        invalid++;
      ml_plan_free (p);
      ml_buffers_free (b);
      ml_trace_free (t);
    }
  free (text);
  ok (runs >= 5 * traces, "%d pool / buddy runs over %d random traces", runs, traces);
  is_u64 (invalid, 0, "every plan validates");
  is_u64 (below, 0, "no peak below the lower bound");
  is_u64 (pr.bad_block, 0, "buddy blocks are powers of two aligned to their size, inside their segment");
  is_u64 (pr.bad_class, 0, "pool slots are at multiples of their class inside one chunk");
  is_u64 (pr.mixed, 0, "a pool chunk holds one class at a time");
  is_u64 (pr.bad_waste, 0, "the internal waste at the lower-bound tick is the blocks' slack");
}

int
main (void)
{
  test_pool_offsets ();
  test_buddy_offsets ();
  test_buddy_arena ();
  test_retries ();
  test_random ();
  return tap_done ();
}
