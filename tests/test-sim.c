/* Lifetimes, peak points, the online strategies (hand-worked offsets and
 * a reference written here), metrics and the plan checker. */
#include "tests/tap.h"

#include "strategies/registry.h"
#include "tests/trace-text.h"

static MlPlan *
run (const MlBuffers *b, const char *name, uint64_t capacity)
{
  MlKnobs k;
  ml_knobs_init (&k);
  k.capacity = capacity;
  MlPlan *p = NULL;
  MlError err = { 0 };
  if (ml_sim_run (b, ml_strategy_find (name), &k, &p, &err) < 0)
    printf ("# %s: %s\n", name, err.msg);
  return p;
}

#define H1 TRACE_HEADER (1)

/* a@0 100, b@100 50, c@150 100, e@250 40, f@290 10; free b, free e:
 * holes [100,150) and [250,290); then d(35) and g(12). */
static const char fit_trace[] = H1
  A (1, 100)
  A (2, 50)
  A (3, 100)
  A (4, 40)
  A (5, 10)
  F (2)
  F (4)
  A (6, 35)
  A (7, 12);

static void
test_fit_offsets (void)
{
  MlTrace *t = load_text (fit_trace, ".jsonl");
  MlBuffers *b;
  ml_buffers_build (t, 0, &b, NULL);
  static const struct { const char *name; uint64_t d, g; } want[] = {
    { "first-fit", 100, 135 },
    { "best-fit", 250, 100 },
    { "next-fit", 100, 135 },
  };
  for (size_t i = 0; i < 3; i++)
    {
      MlPlan *p = run (b, want[i].name, 0);
      ok (p != NULL, "%s runs", want[i].name);
      if (!p)
        continue;
      is_u64 (p->offset[4], 290, "%s: f at 290", want[i].name);
      is_u64 (p->offset[5], want[i].d, "%s: d(35) offset", want[i].name);
      is_u64 (p->offset[6], want[i].g, "%s: g(12) offset", want[i].name);
      is_u64 (issues_of (b, p), 0, "%s: plan validates", want[i].name);
      ok (p->nodes_visited > 0, "%s counts visited nodes", want[i].name);
      ml_plan_free (p);
    }
  MlPlan *p = run (b, "linear", 0);
  is_u64 (p->offset[6], 100 + 50 + 100 + 40 + 10 + 35, "linear: g after everything");
  MlMetrics m;
  ml_metrics_compute (b, p, &m, NULL, NULL);
  is_u64 (m.peak, 347, "linear peak = sum of sizes");
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);
}

static void
test_edge_cases (void)
{
  /* empty trace */
  MlTrace *t = load_text (H1, ".jsonl");
  MlBuffers *b;
  ok (ml_buffers_build (t, 0, &b, NULL) == 0 && b->n == 0, "empty trace: no buffers");
  for (const MlStrategy *const *s = ml_strategies_all (); *s; s++)
    {
      if ((*s)->flags & ML_STRATEGY_RECORDED)
        continue;   /* these traces have no addresses */
      MlPlan *p = run (b, (*s)->name, 0);
      MlMetrics m = { 0 };
      ok (p && ml_metrics_compute (b, p, &m, NULL, NULL) == 0 && m.peak == 0, "empty trace: %s peak 0", (*s)->name);
      ml_plan_free (p);
    }
  ml_buffers_free (b);
  ml_trace_free (t);

  /* zero-size buffer, identical lifetimes, never freed */
  t = load_text (H1
                 A (1, 0)
                 A (2, 64)
                 A (3, 64)
                 F (2), ".jsonl");
  ml_buffers_build (t, 0, &b, NULL);
  is_u64 (b->lower_bound, 128, "zero-size buffer adds nothing to the lower bound");
  ok (b->buf[2].flags & ML_BUF_NEVER_FREED, "buffer 3 is never freed");
  for (const MlStrategy *const *s = ml_strategies_all (); *s; s++)
    {
      if ((*s)->flags & ML_STRATEGY_RECORDED)
        continue;   /* these traces have no addresses */
      MlPlan *p = run (b, (*s)->name, 0);
      is_u64 (p ? issues_of (b, p) : 1, 0, "edge cases: %s plan validates", (*s)->name);
      ml_plan_free (p);
    }
  ml_buffers_free (b);
  ml_trace_free (t);
}

/* A buffer freed at the tick it was allocated, [t, t), holds nothing:
 * every strategy's plan validates whatever offset it picks (the fuzzer
 * found greedy-size placing one over live buffers, which is fine). */
static void
test_empty_lifetime (void)
{
  MlTrace *t = load_text (H1
                          A (1, 100)
                          "{\"kind\":\"alloc\",\"id\":2,\"size\":50,\"tick\":3}\n"
                          "{\"kind\":\"free\",\"id\":2,\"tick\":3}\n"
                          "{\"kind\":\"free\",\"id\":1,\"tick\":4}\n", ".jsonl");
  MlBuffers *b;
  ml_buffers_build (t, 0, &b, NULL);
  is_u64 (b->buf[1].start, 3, "empty lifetime starts at 3");
  is_u64 (b->buf[1].end, 3, "and ends at 3");
  is_u64 (b->lower_bound, 100, "it adds nothing to the lower bound");
  for (const MlStrategy *const *s = ml_strategies_all (); *s; s++)
    {
      if ((*s)->flags & ML_STRATEGY_RECORDED)
        continue;   /* these traces have no addresses */
      MlPlan *p = run (b, (*s)->name, 0);
      is_u64 (p ? issues_of (b, p) : 1, 0, "empty lifetime: %s plan validates", (*s)->name);
      ml_plan_free (p);
    }
  MlPlan *p = ml_plan_new (2, "by hand");
  MlSegment g = { .size = 100, .end = b->end_tick };
  must (ml_plan_add_segment (p, &g) >= 0);
  is_u64 (issues_of (b, p), 0, "both at offset 0: no conflict");
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);
}

static void
test_metrics (void)
{
  /* A@0 [0,2), B@4 [0,3), C@8 [0,2), D@12 [0,3), size 4 each: at tick 2
   * the free bytes are two 4-byte holes, fragmentation 0.5 */
  MlTrace *t = load_text ("id,lower,upper,size,offset\n0,0,2,4,0\n1,0,3,4,4\n2,0,2,4,8\n3,0,3,4,12\n", ".csv");
  MlBuffers *b;
  ml_buffers_build (t, 0, &b, NULL);
  MlPlan *p = NULL;
  ok (ml_plan_from_recorded (b, &p, NULL) == 0, "a CSV with offsets has a recorded plan");
  MlMetrics m;
  MlCurve c;
  ok (ml_metrics_compute (b, p, &m, &c, NULL) == 0, "metrics");
  is_u64 (m.peak, 16, "peak 16");
  is_u64 (m.lower_bound, 16, "lower bound 16");
  ok (m.frag_max == 0.5, "fragmentation max 0.5 (got %g)", m.frag_max);
  is_u64 (m.frag_max_tick, 2, "at tick 2");
  ok (m.frag_mean > 0.1249 && m.frag_mean < 0.1251, "time-weighted mean 0.125 (got %g)", m.frag_mean);
  is_u64 (c.n, 4, "four curve points (the last: the arena released at the end)");
  is_u64 (c.pts[3].reserved, 0, "nothing reserved after the end");
  is_u64 (c.pts[1].largest_free, 4, "largest free block at tick 2");
  is_u64 (c.pts[1].live, 8, "live at tick 2");
  ml_curve_free (&c);
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);

  /* an online arena: reserved follows the high water */
  t = load_text (fit_trace, ".jsonl");
  ml_buffers_build (t, 0, &b, NULL);
  p = run (b, "first-fit", 0);
  ml_metrics_compute (b, p, &m, &c, NULL);
  is_u64 (m.peak, 300, "first-fit peak = high water 300");
  is_u64 (c.pts[0].reserved, 100, "reserved grows: 100 after the first alloc");
  is_u64 (c.pts[7].largest_free, 40, "after d at 100 the holes are [135,150) and [250,290)");
  is_u64 (c.pts[7].reserved, 300, "reserved stays at the high water");
  ml_curve_free (&c);
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);
}

static void
test_capacity (void)
{
  MlTrace *t = load_text (fit_trace, ".jsonl");
  MlBuffers *b;
  ml_buffers_build (t, 0, &b, NULL);
  /* capacity 305: best-fit puts d at 250 and g at 100, fits in 300;
   * capacity 299: f at 290 ends at 300, past it, while live is 290 */
  MlPlan *p = run (b, "first-fit", 299);
  ok (p && p->oom.hit, "first-fit OOMs under 299");
  if (p)
    {
      is_u64 (p->oom.buffer, 4, "at buffer f");
      is_u64 (p->oom.live, 290, "live bytes then");
      ok (p->oom.verdict == ML_OOM_CAPACITY, "verdict: capacity (9 bytes free, 10 asked)");
    }
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);

  /* fragmentation: 4 x 10 bytes, free #1 and #3, ask for 20 under 40 */
  t = load_text (H1
                 "{\"kind\":\"alloc\",\"id\":1,\"size\":10}\n{\"kind\":\"alloc\",\"id\":2,\"size\":10}\n"
                 "{\"kind\":\"alloc\",\"id\":3,\"size\":10}\n{\"kind\":\"alloc\",\"id\":4,\"size\":10}\n"
                 "{\"kind\":\"free\",\"id\":1}\n{\"kind\":\"free\",\"id\":3}\n{\"kind\":\"alloc\",\"id\":5,\"size\":20}\n", ".jsonl");
  ml_buffers_build (t, 0, &b, NULL);
  p = run (b, "best-fit", 40);
  ok (p && p->oom.hit && p->oom.verdict == ML_OOM_FRAGMENTATION, "verdict: fragmentation (20 free, no 20-byte block)");
  if (p)
    {
      is_u64 (p->oom.free_bytes, 20, "20 bytes free");
      is_u64 (p->oom.largest_free, 10, "largest free block 10");
      is_u64 (issues_of (b, p), 0, "the run goes on past the OOM and the plan validates");
    }
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);
}

static void
test_check (void)
{
  MlTrace *t = load_text ("id,lower,upper,size,offset\n0,0,4,8,0\n1,2,6,8,4\n2,4,8,8,0\n3,0,8,4,32\n", ".csv");
  MlBuffers *b;
  ml_buffers_build (t, 0, &b, NULL);
  MlPlan *p;
  must (ml_plan_from_recorded (b, &p, NULL) >= 0);
  MlIssues is;
  ml_issues_init (&is);
  ml_check_plan (b, p, &is, NULL);
  is_u64 (is.total[ML_ISSUE_CONFLICT], 2, "two conflicts: 0/1 and 1/2 (0 and 2 touch at tick 4)");
  if (is.n)
    {
      is_u64 (is.items[0].bytes, 4, "the first overlaps by 4 bytes");
      is_u64 (is.items[0].tick, 2, "at tick 2");
    }
  ml_issues_clear (&is);
  p->align = 8;
  ml_check_plan (b, p, &is, NULL);
  is_u64 (is.total[ML_ISSUE_MISALIGNED], 1, "offset 4 is misaligned under 8");
  ml_issues_clear (&is);
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);
}

static void
test_peaks (void)
{
  MlTrace *t = load_text ("id,lower,upper,size\n0,0,10,100\n1,2,4,50\n2,6,8,70\n3,6,7,5\n", ".csv");
  MlBuffers *b;
  ml_buffers_build (t, 0, &b, NULL);
  is_u64 (b->lower_bound, 175, "lower bound 175");
  is_u64 (b->lower_bound_tick, 6, "at tick 6");
  MlPeaks pk;
  ok (ml_peaks_find (b, 5, 2, &pk, NULL) == 0, "peaks");
  is_u64 (pk.n, 2, "two local maxima");
  is_u64 (pk.peaks[0].tick, 6, "the highest first");
  is_u64 (pk.peaks[0].n_live, 3, "three live buffers");
  is_u64 (pk.peaks[0].n_blame, 2, "blame capped at 2");
  is_u64 (pk.peaks[0].blame[0], 0, "largest first");
  is_u64 (pk.peaks[0].blame[1], 2, "then the 70");
  is_u64 (pk.peaks[1].tick, 2, "then tick 2");
  is_u64 (pk.peaks[1].live, 150, "150 live");
  ml_peaks_free (&pk);
  ml_buffers_free (b);
  ml_trace_free (t);
}

/* ---- random traces against a plain reference ---- */

static uint64_t rng = 7;
static uint64_t
rnd (void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

typedef struct { uint64_t off, size; uint32_t buf; } Blk;

/* first (best == 0), best (1) or next fit (2, from @cursor) over a sorted
 * array of live blocks */
static uint64_t
ref_place (Blk *live, size_t n, uint64_t size, int best, uint64_t cursor)
{
  uint64_t prev_end = 0, pick = UINT64_MAX, pick_gap = UINT64_MAX, next_pick = UINT64_MAX;
  for (size_t i = 0; i <= n; i++)
    {
      if (i == n)
        break;
      uint64_t gap = live[i].off - prev_end;
      if (gap >= size && (best == 1 ? gap < pick_gap : pick == UINT64_MAX))
        {
          pick = prev_end;
          pick_gap = gap;
        }
      if (best == 2 && gap >= size && prev_end >= cursor && next_pick == UINT64_MAX)
        next_pick = prev_end;
      prev_end = live[i].off + live[i].size;
    }
  if (next_pick != UINT64_MAX)
    return next_pick;
  return pick != UINT64_MAX ? pick : prev_end;
}

static int
reference_agrees (const MlBuffers *b, const MlPlan *p, int best)
{
  Blk *live = malloc ((b->n + 1) * sizeof *live);
  size_t n = 0;
  MlSweep sw;
  MlSweepStep st;
  int good = 1;
  uint64_t cursor = 0;
  ml_sweep_init (&sw, b);
  while (good && ml_sweep_next (&sw, &st))
    {
      uint64_t size = b->buf[st.buffer].rsize;
      if (!size)
        continue;
      if (st.is_alloc)
        {
          uint64_t off = ref_place (live, n, size, best, cursor);
          cursor = off + size;
          if (off != p->offset[st.buffer])
            {
              printf ("#   buffer %u: reference %" PRIu64 ", strategy %" PRIu64 "\n", st.buffer, off, p->offset[st.buffer]);
              good = 0;
            }
          size_t lo = 0, hi = n;
          while (lo < hi)
            {
              size_t mid = (lo + hi) / 2;
              if (live[mid].off < off)
                lo = mid + 1;
              else
                hi = mid;
            }
          memmove (live + lo + 1, live + lo, (n - lo) * sizeof *live);
          live[lo] = (Blk) { off, size, st.buffer };
          n++;
        }
      else
        {
          uint64_t off = p->offset[st.buffer];
          size_t lo = 0, hi = n;
          while (lo < hi)
            {
              size_t mid = (lo + hi) / 2;
              if (live[mid].off < off)
                lo = mid + 1;
              else
                hi = mid;
            }
          if (lo < n && live[lo].buf == st.buffer)
            {
              memmove (live + lo, live + lo + 1, (n - lo - 1) * sizeof *live);
              n--;
            }
          else
            good = 0;
        }
    }
  free (live);
  return good;
}

/* Large traces (thousands of holes: a B+ tree of three levels and more)
 * for the fit family against the reference. */
static void
test_random_large (void)
{
  int bad[3] = { 0 }, invalid = 0;
  size_t cap = 8 << 20;
  char *text = malloc (cap);
  static const char *const names[3] = { "first-fit", "best-fit", "next-fit" };
  for (int iter = tap_quick () ? 1 : 0; iter < (tap_quick () ? 2 : 6); iter++)
    {
      TraceText tt;
      tt_begin (&tt, text, cap, iter % 2 ? 1 : 256);
      int target = 500 + 1300 * iter, next_id = 1, nlive = 0;
      int *live = malloc (40000 * sizeof *live);
      for (int a = 0; a < 20000 && tt_room (&tt) > 200; a++)
        {
          while (nlive && (nlive > target ? rnd () % 3 != 0 : rnd () % 3 == 0))
            {
              int k = (int) (rnd () % (uint64_t) nlive);
              tt_free (&tt, live[k]);
              live[k] = live[--nlive];
            }
          uint64_t size = rnd () % 16 == 0 ? 1 + rnd () % 1000000 : 1 + rnd () % (iter % 3 ? 5000 : 64);
          tt_alloc (&tt, next_id, size);
          live[nlive++] = next_id++;
        }
      free (live);
      MlTrace *t = load_text (text, ".jsonl");
      MlBuffers *b;
      if (!t || ml_buffers_build (t, 0, &b, NULL) < 0)
        {
          invalid++;
          ml_trace_free (t);
          continue;
        }
      for (int s = 0; s < 3; s++)
        {
          MlPlan *p = run (b, names[s], 0);
          if (!p || issues_of (b, p))
            invalid++;
          else if (!reference_agrees (b, p, s))
            bad[s]++;
          ml_plan_free (p);
        }
      ml_buffers_free (b);
      ml_trace_free (t);
    }
  free (text);
  is_u64 (invalid, 0, "large traces: every fit plan validates");
  for (int s = 0; s < 3; s++)
    is_u64 (bad[s], 0, "large traces (up to ~7000 live buffers): %s agrees with the reference", names[s]);
}

static void
test_random (void)
{
  int invalid = 0, below = 0, ff_bad = 0, bf_bad = 0, nf_bad = 0, runs = 0;
  char *text = malloc (1 << 20);
  for (int iter = 0; iter < 3000; iter++)
    {
      TraceText tt;
      tt_begin (&tt, text, 1 << 20, iter % 3 ? 1 : 256);
      int nalloc = 1 + (int) (rnd () % 60), next_id = 1, live[64], nlive = 0;
      for (int a = 0; a < nalloc; a++)
        {
          while (nlive && rnd () % 3 == 0)
            {
              int k = (int) (rnd () % (uint64_t) nlive);
              tt_free (&tt, live[k]);
              live[k] = live[--nlive];
            }
          uint64_t size = (rnd () % 4 == 0) ? 0 : 1 + rnd () % (iter % 2 ? 64 : 5000);
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
      for (const MlStrategy *const *s = ml_strategies_all (); *s; s++)
        {
          if ((*s)->flags & ML_STRATEGY_RECORDED)
            continue;   /* no addresses */
          if ((*s)->kind == ML_STRATEGY_OFFLINE && strcmp ((*s)->name, "linear") != 0 && b->n > 40)
            continue;   /* slow exact planners: small instances only */
          if (strcmp ((*s)->name, "ilp") == 0 && b->n > 8)
            continue;   /* GLPK is slow past a few buffers; test-planners checks it */
          if (tap_quick () && ((*s)->knobs & ML_KNOB_CHUNK))
            continue;   /* pool, buddy: test-pools runs their properties (memcheck time) */
          MlPlan *p = run (b, (*s)->name, 0);
          MlMetrics m;
          runs++;
          if (!p || issues_of (b, p) || ml_metrics_compute (b, p, &m, NULL, NULL) < 0)
            invalid++;
          else if (m.peak < m.lower_bound)
            below++;
          if (p && strcmp ((*s)->name, "first-fit") == 0 && !reference_agrees (b, p, 0))
            ff_bad++;
          if (p && strcmp ((*s)->name, "best-fit") == 0 && !reference_agrees (b, p, 1))
            bf_bad++;
          if (p && strcmp ((*s)->name, "next-fit") == 0 && !reference_agrees (b, p, 2))
            nf_bad++;
          ml_plan_free (p);
        }
      ml_buffers_free (b);
      ml_trace_free (t);
    }
  free (text);
  ok (runs > 3000, "%d strategy runs over 3000 random traces", runs);
  is_u64 (invalid, 0, "every plan validates");
  is_u64 (below, 0, "no peak below the lower bound");
  is_u64 (ff_bad, 0, "first-fit agrees with the reference");
  is_u64 (bf_bad, 0, "best-fit agrees with the reference");
  is_u64 (nf_bad, 0, "next-fit agrees with the reference");
}

int
main (void)
{
  test_fit_offsets ();
  test_edge_cases ();
  test_empty_lifetime ();
  test_metrics ();
  test_capacity ();
  test_check ();
  test_peaks ();
  test_random ();
  test_random_large ();
  return tap_done ();
}
