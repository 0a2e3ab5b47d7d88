/* The replay validator's host backend: a valid plan passes, a planted
 * conflict is found with both buffers, the tick and the offset; the
 * granule follows the plan; never-freed buffers are checked at the end. */
#include "tests/tap.h"

#include "sim/analysis/check.h"
#include "sim/sim.h"
#include "strategies/registry.h"
#include "trace/replay.h"

static void
ev (MlTrace *t, MlEventKind kind, uint64_t id, uint64_t size, uint32_t stream)
{
  MlEvent e = { .tick = t->n_events, .kind = (uint8_t) kind, .id = id, .size = size,
                .stream = stream, .flags = ML_EVF_HAS_ID, .time_ns = -1 };
  ml_trace_append (t, &e);
}

/* A [0,2) 256 B, B [1,4) 256 B on stream 2, C [3,5) 512 B, E [6,8) 256 B never freed.
 * (ticks: 0 +A, 1 +B, 2 -A, 3 +C, 4 -B, 5 -C, 6 +E, 7 mark) */
static MlTrace *
small_trace (void)
{
  MlTrace *t = ml_trace_new ();
  ev (t, ML_EV_ALLOC, 1, 256, 0);
  ev (t, ML_EV_ALLOC, 2, 256, 2);
  ev (t, ML_EV_FREE, 1, 0, 0);
  ev (t, ML_EV_ALLOC, 3, 500, 0);   /* rounded to 512 */
  ev (t, ML_EV_FREE, 2, 0, 2);
  ev (t, ML_EV_FREE, 3, 0, 0);
  ev (t, ML_EV_ALLOC, 5, 256, 0);
  ev (t, ML_EV_MARK, 0, 0, 0);
  return t;
}

static MlPlan *
plan_of (const MlBuffers *bufs, const uint64_t *offsets)
{
  MlPlan *p = ml_plan_new (bufs->n, "hand");
  for (size_t i = 0; i < bufs->n; i++)
    p->offset[i] = offsets[i];
  must (ml_plan_make_arena (p, bufs) >= 0);
  return p;
}

static void
run_host (const MlBuffers *bufs, const MlPlan *plan, unsigned iterations, MlReplayProgram **prog, MlReplayResult *res)
{
  MlError err = { 0 };
  *prog = NULL;
  ok (ml_replay_program_build (bufs, plan, prog, &err) == 0, "program builds (%s)", err.msg);
  ok (*prog && ml_replay_host (*prog, iterations, 0, res, &err) == 0, "host replay runs (%s)", err.msg);
}

int
main (void)
{
  MlTrace *t = small_trace ();
  MlBuffers *bufs = NULL;
  MlError err = { 0 };
  ok (ml_buffers_build (t, 256, &bufs, &err) == 0, "lifetimes (%s)", err.msg);
  is_u64 (bufs->n, 4, "four buffers");

  /* tags: one per buffer, and back */
  uint32_t b;
  ok (ml_replay_tag_buffer (ml_replay_tag (41), &b) && b == 41, "a tag names its buffer");
  ok (!ml_replay_tag_buffer (0, &b), "zero is not a tag");

  /* a valid plan: A@0, B@256, C@512, E@0 */
  static const uint64_t good[] = { 0, 256, 512, 0 };
  MlPlan *plan = plan_of (bufs, good);
  MlReplayProgram *prog;
  MlReplayResult res;
  run_host (bufs, plan, 1, &prog, &res);
  if (prog)
    {
      is_u64 (prog->n_steps, 8, "8 steps: 4 allocations, 4 frees (E's at the end)");
      is_u64 (prog->arena_bytes, 1024, "arena 1024 bytes");
      is_u64 (prog->granule, 256, "granule 256");
      is_u64 (prog->n_streams, 2, "two streams");
      is_u64 (prog->steps[2].op, ML_REPLAY_FREE, "third step frees A (tick 2)");
      is_u64 (prog->steps[7].tick, 8, "E is checked at the end of the trace (tick 8)");
      is_u64 (res.corrupted, 0, "the valid plan replays clean");
      is_u64 (res.allocations, 4, "4 allocations");
      is_u64 (res.granule_writes, 1 + 1 + 2 + 1, "one tag per granule: 5 writes");
      ok (res.plan_s >= 0, "the replay is timed");
    }
  ml_replay_program_free (prog);
  ml_plan_free (plan);

  /* planted conflict: B@0 on top of A while both live [1, 2) */
  static const uint64_t clash[] = { 0, 0, 512, 256 };
  plan = plan_of (bufs, clash);
  MlIssues issues;
  ml_issues_init (&issues);
  ml_check_plan (bufs, plan, &issues, &err);
  is_u64 (issues.total[ML_ISSUE_CONFLICT], 1, "the static checker sees the one conflict too");
  ml_issues_clear (&issues);
  run_host (bufs, plan, 3, &prog, &res);
  is_u64 (res.corrupted, 1, "the planted conflict corrupts one buffer (counted once over 3 iterations)");
  is_u64 (res.n_items, 1, "one report");
  if (res.n_items)
    {
      is_u64 (res.items[0].victim, 0, "victim: A");
      is_u64 (res.items[0].culprit, 1, "culprit: B, whose tag was in A's bytes");
      is_u64 (res.items[0].tick, 2, "found at A's free, tick 2");
      is_u64 (res.items[0].offset, 0, "at offset 0");
      is_u64 (res.items[0].granules, 1, "one granule");
    }
  is_u64 (res.iterations, 3, "three iterations");
  ml_replay_program_free (prog);
  ml_plan_free (plan);

  /* a partial overlap: B@128 -> granule 128; A loses its second half */
  static const uint64_t part[] = { 0, 128, 512, 0 };
  plan = plan_of (bufs, part);
  run_host (bufs, plan, 1, &prog, &res);
  if (prog)
    is_u64 (prog->granule, 128, "granule follows the offsets: 128");
  is_u64 (res.corrupted, 1, "a 128-byte overlap is found");
  if (res.n_items)
    {
      is_u64 (res.items[0].offset, 128, "first corrupted byte: 128");
      is_u64 (res.items[0].granules, 1, "one granule of 128");
    }
  ml_replay_program_free (prog);
  ml_plan_free (plan);

  /* two segments, laid end to end: the same offsets in different segments never clash */
  plan = ml_plan_new (bufs->n, "two-segments");
  MlSegment s0 = { .size = 512, .end = 9 }, s1 = { .size = 256, .end = 9 };
  must (ml_plan_add_segment (plan, &s0) >= 0);
  must (ml_plan_add_segment (plan, &s1) >= 0);
  static const uint32_t seg2[] = { 0, 1, 0, 0 };
  static const uint64_t off2[] = { 0, 0, 0, 0 };   /* C [3,5) and B [1,4) overlap in time */
  for (size_t i = 0; i < bufs->n; i++)
    plan->segment[i] = seg2[i], plan->offset[i] = off2[i];
  run_host (bufs, plan, 1, &prog, &res);
  if (prog)
    {
      is_u64 (prog->n_segments, 2, "two segments");
      is_u64 (prog->segment_base[1], 512, "segment 1 starts after segment 0's 512 bytes");
      is_u64 (prog->arena_bytes, 768, "arena: 512 + 256");
      is_u64 (prog->steps[1].offset, 512, "B (segment 1, offset 0) is at arena byte 512");
    }
  is_u64 (res.corrupted, 0, "same offsets in different segments replay clean");
  ml_replay_program_free (prog);
  ml_plan_free (plan);

  /* segments that never coexist share bytes: A in s0 [0,2), B in s1 [1,4),
   * C in s2 [3,5) (512 B), E in s3 [6,9): s0 -> 0, s1 -> 256, s2 -> 512
   * (s1 is still live at 3), s3 -> 0 again; arena 1024, not 1280 */
  plan = ml_plan_new (bufs->n, "four-segments");
  MlSegment g4[] = { { .size = 256, .start = 0, .end = 2 }, { .size = 256, .start = 1, .end = 4 },
                     { .size = 512, .start = 3, .end = 5 }, { .size = 256, .start = 6, .end = 9 } };
  for (size_t i = 0; i < 4; i++)
    {
      must (ml_plan_add_segment (plan, &g4[i]) >= 0);
      plan->segment[i] = (uint32_t) i;
      plan->offset[i] = 0;
    }
  run_host (bufs, plan, 1, &prog, &res);
  if (prog)
    {
      is_u64 (prog->segment_base[1], 256, "s1 beside s0 (both live at tick 1)");
      is_u64 (prog->segment_base[2], 512, "s2 after s1 (both live at tick 3)");
      is_u64 (prog->segment_base[3], 0, "s3 reuses s0's bytes (s0 was released at tick 2)");
      is_u64 (prog->arena_bytes, 1024, "arena 1024 bytes, not the 1280 of all segments");
    }
  is_u64 (res.corrupted, 0, "segments sharing bytes over time replay clean");
  ml_replay_program_free (prog);
  ml_plan_free (plan);

  /* a segment whose recorded end is too early still covers its buffer */
  plan = ml_plan_new (bufs->n, "short-segment");
  g4[0].end = 1;   /* A lives to 2 */
  g4[3].start = 1; /* E's segment claims to start early: harmless */
  for (size_t i = 0; i < 4; i++)
    {
      must (ml_plan_add_segment (plan, &g4[i]) >= 0);
      plan->segment[i] = (uint32_t) i;
    }
  run_host (bufs, plan, 1, &prog, &res);
  is_u64 (res.corrupted, 0, "segment lifetimes widen to their buffers'");
  ml_replay_program_free (prog);
  ml_plan_free (plan);

  /* a sparse layout (recorded addresses far apart) replays in the bytes it covers */
  static const uint64_t sparse[] = { 0, 1ull << 40, (1ull << 40) + 256, 1ull << 30 };
  plan = plan_of (bufs, sparse);
  run_host (bufs, plan, 1, &prog, &res);
  if (prog)
    {
      is_u64 (prog->span_bytes, (1ull << 40) + 768, "the plan spans 1 TiB");
      is_u64 (prog->arena_bytes, 256 + 256 + 768, "three clusters packed end to end: 1280 bytes");
      is_u64 (prog->steps[0].offset, 0, "A stays at 0");
      is_u64 (prog->steps[1].offset, 512, "B's cluster (B, C) follows E's");
      is_u64 (prog->steps[3].offset, 768, "C keeps its place beside B");
    }
  is_u64 (res.corrupted, 0, "the sparse valid plan replays clean");
  ml_replay_program_free (prog);
  ml_plan_free (plan);
  static const uint64_t sparse_bad[] = { 1ull << 40, (1ull << 40) + 128, 0, 1ull << 30 };
  plan = plan_of (bufs, sparse_bad);
  run_host (bufs, plan, 1, &prog, &res);
  is_u64 (res.corrupted, 1, "a conflict far up the address space is still found");
  if (res.n_items)
    is_u64 (res.items[0].culprit, 1, "with its culprit");
  ml_replay_program_free (prog);
  ml_plan_free (plan);

  /* a never-freed victim, checked at the end: E@512 while C [3,5)... no: F */
  MlTrace *t2 = small_trace ();
  ev (t2, ML_EV_ALLOC, 6, 256, 0);   /* F at tick 8, never freed */
  MlBuffers *b2 = NULL;
  ml_buffers_build (t2, 256, &b2, &err);
  static const uint64_t endclash[] = { 0, 256, 512, 0, 0 };
  plan = plan_of (b2, endclash);
  run_host (b2, plan, 1, &prog, &res);
  is_u64 (res.corrupted, 1, "a never-freed buffer overwritten by another is found at the end");
  if (res.n_items)
    {
      is_u64 (res.items[0].victim, 3, "victim: E");
      is_u64 (res.items[0].culprit, 4, "culprit: F");
      is_u64 (res.items[0].tick, 9, "tick: the end of the trace");
    }
  ml_replay_program_free (prog);
  ml_plan_free (plan);
  ml_buffers_free (b2);
  ml_trace_free (t2);

  /* random plans: the replay finds a corruption exactly when the static
   * checker finds a conflict (the earlier of two clashing buffers always
   * loses its tag before its own check) */
  {
    uint64_t seed = 12345;
    int agree = 0, with_conflict = 0, rounds = 300;
    for (int r = 0; r < rounds; r++)
      {
        MlTrace *rt = ml_trace_new ();
        int live[8] = { 0 };
        for (int e = 0; e < 16; e++)
          {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            int k = (int) ((seed >> 33) % 5);
            if (live[k] > 0)
              ev (rt, ML_EV_FREE, (uint64_t) k + 1 + 100 * (uint64_t) live[k], 0, 0), live[k] = -live[k];
            else
              {
                int gen = live[k] < 0 ? -live[k] + 1 : 1;
                live[k] = gen;
                ev (rt, ML_EV_ALLOC, (uint64_t) k + 1 + 100 * (uint64_t) gen, 256 * (1 + (seed >> 40) % 2),
                    (uint32_t) ((seed >> 50) % 2));
              }
          }
        MlBuffers *rb = NULL;
        if (ml_buffers_build (rt, 256, &rb, &err) < 0)
          {
            printf ("# round %d: %s\n", r, err.msg);
            ml_trace_free (rt);
            continue;
          }
        MlPlan *rp = ml_plan_new (rb->n, "random");
        for (size_t i = 0; i < rb->n; i++)
          {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            rp->offset[i] = 128 * ((seed >> 35) % 48);   /* granule 128 sometimes */
          }
        must (ml_plan_make_arena (rp, rb) >= 0);
        MlIssues is;
        ml_issues_init (&is);
        ml_check_plan (rb, rp, &is, &err);
        MlReplayProgram *pg = NULL;
        MlReplayResult rr;
        if (ml_replay_program_build (rb, rp, &pg, &err) == 0 && ml_replay_host (pg, 1, 0, &rr, &err) == 0
            && (rr.corrupted > 0) == (is.total[ML_ISSUE_CONFLICT] > 0))
          agree++;
        with_conflict += is.total[ML_ISSUE_CONFLICT] > 0;
        ml_issues_clear (&is);
        ml_replay_program_free (pg);
        ml_plan_free (rp);
        ml_buffers_free (rb);
        ml_trace_free (rt);
      }
    is_u64 (agree, rounds, "on %d random plans the replay and the checker agree", rounds);
    ok (with_conflict > rounds / 10 && with_conflict < rounds - rounds / 10,
        "and the random plans mix valid and conflicting ones (%d of %d conflict)", with_conflict, rounds);
  }

  /* every registered strategy's plan replays clean */
  const MlStrategy *const *all = ml_strategies_all ();
  for (size_t i = 0; all[i]; i++)
    {
      if (all[i]->flags & ML_STRATEGY_RECORDED)
        continue;   /* not an allocator: the trace's own layout */
      MlKnobs knobs;
      ml_knobs_init (&knobs);
      knobs.align = 256;
      MlPlan *sp = NULL;
      if (ml_sim_run (bufs, all[i], &knobs, &sp, &err) < 0)
        {
          ok (0, "%s runs (%s)", all[i]->name, err.msg);
          continue;
        }
      MlReplayProgram *pg = NULL;
      MlReplayResult r;
      ok (ml_replay_program_build (bufs, sp, &pg, &err) == 0 && ml_replay_host (pg, 1, 0, &r, &err) == 0
          && r.corrupted == 0, "%s: its plan replays clean", all[i]->name);
      ml_replay_program_free (pg);
      ml_plan_free (sp);
    }

  /* the shadow limit is a clear error, not a crash */
  plan = plan_of (bufs, good);
  ml_replay_program_build (bufs, plan, &prog, &err);
  memset (&err, 0, sizeof err);
  is_u64 ((uint64_t) (int64_t) ml_replay_host (prog, 1, 8, &res, &err), (uint64_t) (int64_t) ML_EUNSUPPORTED,
          "a shadow over the limit is refused");
  has_str (err.msg, "cuda backend", "and the message points at the cuda backend");
  ml_replay_program_free (prog);
  ml_plan_free (plan);

  /* the CUDA backend says clearly when it cannot run */
  if (!ml_replay_cuda_available ())
    {
      plan = plan_of (bufs, good);
      ml_replay_program_build (bufs, plan, &prog, &err);
      ok (ml_replay_cuda (prog, 1, 0, &res, &err) == ML_EUNSUPPORTED, "no CUDA backend: ML_EUNSUPPORTED");
      ml_replay_program_free (prog);
      ml_plan_free (plan);
    }

  ml_buffers_free (bufs);
  ml_trace_free (t);
  return tap_done ();
}
