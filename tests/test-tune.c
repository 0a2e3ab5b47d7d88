/* The tune replay (strategies/caching-replay.h): why the cache holds free
 * bytes, worked by hand from PyTorch's rules; the replay from the recorded
 * state against the recording (tests/data fixtures); empty_cache calls.
 * argv[1] = the source root. */
#include "sim/formats/load.h"
#include "strategies/caching-batch.h"
#include "strategies/caching-replay.h"
#include "strategies/caching-tune.h"
#include "tap.h"
#include "hand-trace.h"

#define KiB ((uint64_t) 1 << 10)
#define MiB ((uint64_t) 1 << 20)

static const char *root = ".";

static int
replay (const MlTrace *t, const char *options, uint64_t capacity, bool warm, MlCacheReplay *r)
{
  MlError err = { 0 };
  MlCacheReplayOpts o = { .capacity = capacity, .warm = warm };
  int rc = ml_cache_replay (t, options, &o, r, &err);
  if (rc < 0)
    printf ("# %s\n", err.msg);
  return rc;
}

/* Cold, stream 0 unless said:
 *   t0 a 600,000 B      small pool: a 2 MiB segment, 600,064 B taken
 *   t1 b 12 MiB         a 12 MiB segment
 *   t2 c 4 MiB + 100 B  stream 7: a 20 MiB segment, 4 MiB + 512 taken
 *   t3 free b           the 12 MiB segment wholly free
 *   t4 d 14 MiB         nothing serves it: a new 14 MiB segment, the peak.
 * The state d found (34 MiB reserved, 4,794,404 B requested):
 *   small pool   2 MiB - 600,064      = 1,497,088
 *   other stream 20 MiB - (4 MiB + 512) = 16,776,704
 *   cached       12 MiB               = 12,582,912
 *   rounding     64 + 412             = 476
 * which add up to 34 MiB - 4,794,404 = 30,857,180. */
static void
test_strands (void)
{
  B b = trace_new ();
  ev (&b, ML_EV_ALLOC, 1, 600000, 0);
  ev (&b, ML_EV_ALLOC, 2, 12 * MiB, 0);
  ev (&b, ML_EV_ALLOC, 3, 4 * MiB + 100, 7);
  ev (&b, ML_EV_FREE, 2, 0, 0);
  ev (&b, ML_EV_ALLOC, 4, 14 * MiB, 0);
  MlCacheReplay r;
  if (replay (b.t, NULL, 0, false, &r) == 0)
    {
      const MlStrandBreakdown *s = &r.at_peak;
      is_u64 (r.reserved_peak, 48 * MiB, "reserved peak 2 + 12 + 20 + 14 MiB");
      is_u64 (r.peak_tick, 4, "reached at d's tick");
      ok (s->valid, "the state at the peak is kept");
      is_u64 (s->tick, 4, "the moment d found");
      is_u64 (s->reserved, 34 * MiB, "34 MiB reserved then");
      is_u64 (s->requested, 4794404, "4,794,404 B requested live");
      is_u64 (s->allocated, 600064 + 4 * MiB + 512, "allocated: the blocks' bytes");
      is_u64 (s->bytes[ML_STRAND_SMALL_POOL], 1497088, "small pool: the 2 MiB segment's rest");
      is_u64 (s->bytes[ML_STRAND_STREAM], 16776704, "other stream: stream 7's rest");
      is_u64 (s->bytes[ML_STRAND_CACHED], 12 * MiB, "cached: the wholly free 12 MiB segment");
      is_u64 (s->bytes[ML_STRAND_ROUNDING], 476, "rounding: 64 + 412");
      is_u64 (s->bytes[ML_STRAND_TOO_SMALL] + s->bytes[ML_STRAND_OVERSIZE] + s->bytes[ML_STRAND_USABLE]
              + s->bytes[ML_STRAND_LARGE_POOL], 0, "nothing else");
      uint64_t sum = 0;
      for (int k = 0; k < ML_STRAND__COUNT; k++)
        sum += s->bytes[k];
      is_u64 (sum, 30857180, "they add up to reserved - requested");
      double sq = 1497088.0 * 1497088.0 + 16776704.0 * 16776704.0 + 12582912.0 * 12582912.0;
      double total = 34.0 * MiB;
      ok (s->viz_fragmentation > sq / (total * total) - 1e-12 && s->viz_fragmentation < sq / (total * total) + 1e-12,
          "MemoryViz's calculate_fragmentation: sum of squared gaps / reserved^2 (%.6f)", s->viz_fragmentation);
      ok (s->viz_internal > 476.0 / 30857180 - 1e-12 && s->viz_internal < 476.0 / 30857180 + 1e-12,
          "memory_viz's internal share of the free bytes");
      double frag = 1.0 - 16776704.0 / (34.0 * MiB - 600064 - 4 * MiB - 512);
      ok (r.frag_at_peak > frag - 1e-12 && r.frag_at_peak < frag + 1e-12, "fragmentation at the peak %.6f", r.frag_at_peak);
      is_u64 (r.n_malloc, 4, "four cudaMalloc calls");
      is_u64 (r.n_free, 0, "no cudaFree");
      ok (!r.oom, "no capacity: no OOM");
    }
  ml_cache_replay_clear (&r);

  /* under 35 MiB: d's 14 MiB do not fit (34 + 14); release_cached_blocks
   * gives back the 12 MiB segment; 22 + 14 is still over: the OOM, after
   * the release, holds the small pool's and stream 7's free bytes */
  if (replay (b.t, NULL, 35 * MiB, false, &r) == 0)
    {
      ok (r.oom && !r.oom_recorded, "an OOM under 35 MiB, not a recorded one");
      is_u64 (r.oom_tick, 4, "at d");
      is_u64 (r.oom_reserved, 22 * MiB, "22 MiB reserved after the release");
      is_u64 (r.at_oom.bytes[ML_STRAND_CACHED], 0, "no cached segment left");
      is_u64 (r.at_oom.bytes[ML_STRAND_STREAM], 16776704, "stream 7's rest");
      is_u64 (r.n_free, 1, "one cudaFree (the release)");
      is_u64 (r.reserved_peak, 36 * MiB, "the run goes on without the capacity: 36 MiB");
    }
  ml_cache_replay_clear (&r);
  /* under 36 MiB the release is enough */
  if (replay (b.t, NULL, 36 * MiB, false, &r) == 0)
    {
      ok (!r.oom, "under 36 MiB it fits after the release");
      is_u64 (r.reserved_peak, 36 * MiB, "peak 36 MiB");
    }
  ml_cache_replay_clear (&r);

  /* oversize and too small: max_split_size_mb=20 keeps a cached 24 MiB
   * segment (at least 20 MiB) from a 4 MiB request; a 2 MiB piece is too
   * small for it */
  ml_trace_free (b.t);
  b = trace_new ();
  ev (&b, ML_EV_ALLOC, 1, 24 * MiB, 0);
  ev (&b, ML_EV_ALLOC, 2, 2 * MiB, 0);    /* 20 MiB segment, 18 MiB left */
  ev (&b, ML_EV_ALLOC, 3, 16 * MiB, 0);   /* from the 18 MiB: 2 MiB left (split: more than 1 MiB) */
  ev (&b, ML_EV_FREE, 1, 0, 0);
  ev (&b, ML_EV_ALLOC, 4, 4 * MiB, 0);
  if (replay (b.t, "max_split_size_mb:20", 0, false, &r) == 0)
    {
      const MlStrandBreakdown *s = &r.at_peak;
      is_u64 (s->tick, 4, "the 4 MiB request raised the peak");
      is_u64 (s->bytes[ML_STRAND_OVERSIZE], 24 * MiB, "the 24 MiB cached segment is oversize for it");
      is_u64 (s->bytes[ML_STRAND_TOO_SMALL], 2 * MiB, "the 2 MiB piece is too small");
    }
  ml_cache_replay_clear (&r);
  if (replay (b.t, NULL, 0, false, &r) == 0)
    is_u64 (r.reserved_peak, 44 * MiB, "without max_split_size the 4 MiB request splits the 24 MiB block: 44 MiB");
  ml_cache_replay_clear (&r);
  ml_trace_free (b.t);
}

/* A recorded segment free no allocation follows is torch.cuda.empty_cache(). */
static void
test_empty_cache (void)
{
  B b = trace_new ();
  ev (&b, ML_EV_ALLOC, 1, 12 * MiB, 0);
  ev (&b, ML_EV_FREE, 1, 0, 0);
  MlEvent e = { .tick = b.tick++, .addr = 1 << 30, .size = 12 * MiB, .kind = ML_EV_SEGMENT_FREE, .time_ns = -1 };
  must (ml_trace_append (b.t, &e) != NULL);
  ev (&b, ML_EV_ALLOC, 2, 14 * MiB, 0);
  MlCacheReplay r;
  if (replay (b.t, NULL, 0, false, &r) == 0)
    {
      is_u64 (r.empty_cache_calls, 1, "one empty_cache");
      is_u64 (r.reserved_peak, 14 * MiB, "the 12 MiB segment went back before the 14 MiB one");
      is_u64 (r.n_free, 1, "one cudaFree");
    }
  ml_cache_replay_clear (&r);
  /* followed by a segment_alloc: the allocator's own release, left to the emulation */
  ml_trace_free (b.t);
  b = trace_new ();
  ev (&b, ML_EV_ALLOC, 1, 12 * MiB, 0);
  ev (&b, ML_EV_FREE, 1, 0, 0);
  e.tick = b.tick++;
  must (ml_trace_append (b.t, &e) != NULL);
  MlEvent s = { .tick = b.tick++, .addr = 1 << 30, .size = 14 * MiB, .kind = ML_EV_SEGMENT_ALLOC, .time_ns = -1 };
  must (ml_trace_append (b.t, &s) != NULL);
  ev (&b, ML_EV_ALLOC, 2, 14 * MiB, 0);
  if (replay (b.t, NULL, 0, false, &r) == 0)
    {
      is_u64 (r.empty_cache_calls, 0, "a release inside malloc is not an empty_cache");
      is_u64 (r.reserved_peak, 26 * MiB, "no capacity: both segments");
    }
  ml_cache_replay_clear (&r);
  ml_trace_free (b.t);
}

/* @name, under @dir of the source root, with the graph reader's @dims (may be NULL). */
static MlTrace *
load_from (const char *dir, const char *name, const char *dims)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/%s/%s", root, dir, name);
  MlLoadOptions o;
  ml_load_options_init (&o);
  o.dims = dims;
  MlTrace *t = NULL;
  MlError err = { 0 };
  if (ml_trace_load (path, &o, &t, &err) < 0)
    printf ("# %s\n", err.msg);
  return t;
}

static MlTrace *
load (const char *name)
{
  return load_from ("tests/data", name, NULL);
}

/* expandable-unmap.pickle (docs/pytorch.md): reserved peaks at 162 MiB
 * (169,869,312 B, the oracle's reserved_max) and the OOM entry refuses 30
 * MiB with 8 MiB free: 170 MiB of device. Replayed from the recorded state
 * under the recorded settings and 170 MiB, the emulation reaches the same
 * peak and fails the same request. */
static void
test_fixture (void)
{
  MlTrace *t = load ("expandable-unmap.pickle");
  ok (t != NULL, "expandable-unmap.pickle loads");
  if (!t)
    return;
  ok (ml_cache_replay_can_warm (t), "it recorded a state to start from");
  MlCacheReplay r;
  if (replay (t, NULL, 170 * MiB, true, &r) == 0)
    {
      ok (r.oom && r.oom_recorded, "warm, recorded settings: the recorded OOM");
      is_u64 (r.oom_reserved, 169869312, "with the recorded reserved bytes (after the releases)");
      ok (r.reserved_peak > 170 * MiB, "serving it would need more than the device (%" PRIu64 ")", r.reserved_peak);
      is_u64 (r.oom_request, 30 * MiB, "of 30 MiB");
      ok (!r.model, "an emulation, not a model");
    }
  ml_cache_replay_clear (&r);
  if (replay (t, NULL, 0, true, &r) == 0)
    ok (!r.oom, "without a capacity no OOM");
  ml_cache_replay_clear (&r);
  if (replay (t, "expandable_segments:False", 170 * MiB, true, &r) == 0)
    ok (r.reserved_peak != 169869312, "another setting, another peak (%" PRIu64 ")", r.reserved_peak);
  ml_cache_replay_clear (&r);
  MlError err = { 0 };
  MlCacheReplayOpts o = { .warm = true };
  B b = trace_new ();
  ev (&b, ML_EV_ALLOC, 1, MiB, 0);
  ok (ml_cache_replay (b.t, NULL, &o, &r, &err) == ML_EUSAGE, "warm without a recorded state is refused: %s", err.msg);
  ml_trace_free (b.t);
  ml_trace_free (t);
}


/* The default grid and its answer on the snapshots of
 * tests/data/make-tune-fixtures.py (the numbers are worked there). */
static void
test_answer (void)
{
  MlTrace *t = load ("tune-fragmentation.pickle");
  ok (t != NULL, "tune-fragmentation.pickle loads");
  MlTuneOpts o = { .jobs = 2 };
  MlTune *tu = NULL;
  MlError err = { 0 };
  if (t && ml_tune_run (t, &o, &tu, &err) == 0)
    {
      is_u64 (tu->capacity, 150 * MiB, "the capacity: the recorded OOM's reserved + device free");
      ok (tu->capacity_from_oom && tu->warm, "from the OOM, rows from the recorded state");
      ok (tu->rows[0].r.oom && tu->rows[0].r.oom_recorded, "the recorded settings reproduce the recorded OOM");
      ok (tu->verdict == ML_TUNE_FIX && tu->best > 0, "a setting fits");
      if (tu->best > 0)
        {
          const MlTuneRow *b = &tu->rows[tu->best];
          ok (strcmp (b->change, "expandable_segments:True") == 0, "expandable_segments:True (%s)", b->change);
          is_u64 (b->r.reserved_peak, 120 * MiB, "peak 120 MiB");
        }
      bool split = false;
      for (size_t k = 0; k < tu->n_rows; k++)
        if (strcmp (tu->rows[k].change, "max_split_size_mb:32") == 0)
          {
            split = !tu->rows[k].r.oom && tu->rows[k].r.reserved_peak == 140 * MiB && tu->rows[k].r.n_malloc == 8
                    && tu->rows[k].r.n_free == 4;
          }
      ok (split, "max_split_size_mb:32 fits too: 140 MiB, 8 cudaMalloc, 4 cudaFree");
      for (size_t k = 2; k < tu->n_rows; k++)
        ok (strcmp (tu->rows[k].settings, tu->rows[0].settings) != 0, "row %zu is not the recorded settings", k);
    }
  else
    ok (0, "tune runs: %s", err.msg);
  ml_tune_free (tu);
  ml_trace_free (t);

  t = load ("tune-capacity.pickle");
  tu = NULL;
  if (t && ml_tune_run (t, &o, &tu, &err) == 0)
    {
      ok (tu->verdict == ML_TUNE_NONE_FITS && tu->best < 0, "no setting fits");
      is_u64 (tu->need, 180 * MiB, "100 MiB live + the 80 MiB request");
      is_u64 (tu->shortfall, 30 * MiB, "30 MiB short of 150 MiB");
    }
  else
    ok (0, "tune runs: %s", err.msg);
  ml_tune_free (tu);

  /* no capacity, one 3 MiB request: every emulated setting reserves a
   * 20 MiB segment (or page), the cudaMallocAsync model a 4 MiB chunk:
   * the model's row is the answer, said to be a model, only because no
   * emulated row reserves less */
  B b = trace_new ();
  alloc (&b, 1, 3 * MiB);
  MlTune *tm = NULL;
  MlTuneOpts om = { .jobs = 1 };
  if (ml_tune_run (b.t, &om, &tm, &err) == 0)
    {
      const MlTuneRow *best = tm->best >= 0 ? &tm->rows[tm->best] : NULL;
      ok (tm->verdict == ML_TUNE_NO_CAPACITY && best && best->r.model && best->r.reserved_peak == 4 * MiB,
          "with nothing emulated below the recorded 20 MiB, the model's 4 MiB is the answer (%s)",
          best ? best->change : "none");
      bool none_lower = true;
      for (size_t k = 1; k < tm->n_rows; k++)
        none_lower = none_lower && (tm->rows[k].r.model || tm->rows[k].r.reserved_peak >= 20 * MiB);
      ok (none_lower, "every emulated row reserves 20 MiB or more");
    }
  else
    ok (0, "tune runs: %s", err.msg);
  ml_tune_free (tm);
  ml_trace_free (b.t);

  /* sweeps: the product, a bad one refused */
  static const char *const sweeps[] = { "expandable_segments=True,False", "max_split_size_mb=64,[1:2]", NULL };
  o.sweeps = sweeps;
  ok (t && ml_tune_run (t, &o, &tu, &err) == ML_EUSAGE && strstr (err.msg, "max_split_size_mb"),
      "a bad sweep value is refused: %s", err.msg);
  static const char *const two[] = { "expandable_segments=True,False", "max_split_size_mb=64,128", NULL };
  o.sweeps = two;
  tu = NULL;
  if (t && ml_tune_run (t, &o, &tu, &err) == 0)
    is_u64 (tu->n_rows, 2 + 4, "the recorded rows, warm and cold, and 2 x 2 combinations");
  ml_tune_free (tu);
  ml_trace_free (t);
}

/* Which batch fits: a graph whose batch is symbolic, loaded at three
 * batch sizes (its tensors are affine in B): each run's peak predicted
 * from the other two is its own replay's, and a prediction from 4 and 8
 * of 16 is the replay of 16. */
static void
test_batch (void)
{
  static const char *const dims[] = { "B=4", "B=8", "B=16" };
  const uint64_t batches[] = { 4, 8, 16 };
  MlTrace *runs[3];
  for (int i = 0; i < 3; i++)
    runs[i] = load_from ("samples", "transformer-train-step.json", dims[i]);
  if (!runs[0] || !runs[1] || !runs[2])
    {
      ok (0, "the graph loads at three batch sizes");
      return;
    }
  MlBatchFit fit;
  MlError err = { 0 };
  if (ml_batch_fit ((const MlTrace *const *) runs, batches, 3, NULL, "expandable_segments=1", 0, &fit, &err) == 0)
    {
      is_u64 (fit.matched, fit.template_allocs, "every allocation matched across the runs");
      ok (fit.loo_error == 0, "leaving one run out predicts its peak exactly (error %g)", fit.loo_error);
      bool same = fit.n_points == 3;
      for (size_t k = 0; k < fit.n_points; k++)
        same = same && fit.points[k].given && fit.points[k].predicted == fit.points[k].actual;
      ok (same, "each run's predicted peak is its replay's");
      ml_batch_fit_clear (&fit);
    }
  else
    ok (0, "fit: %s", err.msg);
  /* two runs: 16 predicted from 4 and 8 */
  MlTrace *two[2] = { runs[0], runs[1] };
  uint64_t peak16 = 0;
  MlCacheReplay r;
  if (replay (runs[2], NULL, 0, false, &r) == 0)
    peak16 = r.reserved_peak;
  ml_cache_replay_clear (&r);
  uint64_t cap = peak16 + 1;
  if (ml_batch_fit ((const MlTrace *const *) two, batches, 2, NULL, NULL, cap, &fit, &err) == 0)
    {
      ok (fit.loo_error < 0, "two runs: no error estimate");
      ok (fit.largest >= 16, "under the 16 run's peak + 1 B, batch 16 fits (largest %" PRIu64 ")", fit.largest);
      /* under a quarter less, batch 16 fits exactly when its own replay does */
      uint64_t less = peak16 - peak16 / 4;
      bool own = false, agree = false;
      if (replay (runs[2], NULL, less, false, &r) == 0)
        own = !r.oom;
      ml_cache_replay_clear (&r);
      MlBatchFit fit2;
      if (ml_batch_fit ((const MlTrace *const *) two, batches, 2, NULL, NULL, less, &fit2, &err) == 0)
        {
          agree = (fit2.largest >= 16) == own && fit2.largest >= 4;
          ml_batch_fit_clear (&fit2);
        }
      ok (agree, "under %" PRIu64 " B the prediction says batch 16 %s, as its own replay", less, own ? "fits" : "does not fit");
      ml_batch_fit_clear (&fit);
    }
  else
    ok (0, "fit: %s", err.msg);
  uint64_t same[2] = { 4, 4 };
  ok (ml_batch_fit ((const MlTrace *const *) two, same, 2, NULL, NULL, 0, &fit, &err) == ML_EUSAGE,
      "two runs at one batch are refused: %s", err.msg);
  for (int i = 0; i < 3; i++)
    ml_trace_free (runs[i]);
}

int
main (int argc, char **argv)
{
  if (argc > 1)
    root = argv[1];
  test_strands ();
  test_empty_cache ();
  test_fixture ();
  test_answer ();
  test_batch ();
  return tap_done ();
}
