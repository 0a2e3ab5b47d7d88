/* Races: cross-stream reuse with happens-before from syncs and events,
 * and in-place hazards, on crafted traces with hand-placed plans. */
#include "tests/tap.h"

#include "sim/analysis/check.h"
#include "sim/analysis/races.h"
#include "sim/formats/load.h"

#define H "{\"format\":\"memlens-trace\",\"version\":1,\"alignment\":1}\n"
#define A(id, size, s) "{\"kind\":\"alloc\",\"id\":" #id ",\"size\":" #size ",\"stream\":" #s "}\n"
#define F(id) "{\"kind\":\"free\",\"id\":" #id "}\n"
#define K(s) "{\"kind\":\"kernel\",\"name\":\"k\",\"stream\":" #s "}\n"
#define SYNC(what) "{\"kind\":\"sync\",\"sync\":\"" what "\"}\n"
#define SSYNC(s) "{\"kind\":\"sync\",\"sync\":\"stream\",\"stream\":" #s "}\n"
#define REC(e, s) "{\"kind\":\"sync\",\"sync\":\"event_record\",\"id\":" #e ",\"stream\":" #s "}\n"
#define WAIT(s, e, s2) "{\"kind\":\"sync\",\"sync\":\"stream_wait\",\"stream\":" #s ",\"id\":" #e ",\"stream2\":" #s2 "}\n"
#define ESYNC(e) "{\"kind\":\"sync\",\"sync\":\"event\",\"id\":" #e "}\n"

/* Loads @text, places every buffer at offsets[i] (all 0 when NULL) in one
 * arena, runs the checks; returns the issues found (caller clears). */
static size_t
races (const char *text, const uint64_t *offsets, MlIssues *is, int *rc_out)
{
  char *path = tap_write_temp (text, ".jsonl");
  MlTrace *t = NULL;
  MlError err = { 0 };
  int rc = ml_trace_load (path, NULL, &t, &err);
  unlink (path);
  free (path);
  MlBuffers *b = NULL;
  if (rc == 0)
    rc = ml_buffers_build (t, 1, &b, &err);
  ml_issues_init (is);
  if (rc == 0)
    {
      MlPlan *p = ml_plan_new (b->n, "hand");
      for (size_t i = 0; i < b->n; i++)
        p->offset[i] = offsets ? offsets[i] : 0;
      must (ml_plan_make_arena (p, b) >= 0);
      rc = ml_check_races (b, p, is, &err);
      ml_plan_free (p);
    }
  if (rc < 0)
    printf ("# %s\n", err.msg);
  if (rc_out)
    *rc_out = rc;
  ml_buffers_free (b);
  ml_trace_free (t);
  return ml_issues_count (is);
}

#define EXPECT(text, offs, want, name)                                   \
  do {                                                                   \
    MlIssues is_;                                                        \
    size_t n_ = races (text, offs, &is_, NULL);                          \
    is_u64 (n_, want, name);                                             \
    ml_issues_clear (&is_);                                              \
  } while (0)

static void
test_cross_stream (void)
{
  MlIssues is;
  size_t n = races (H A(1, 100, 1) F(1) A(2, 64, 0), NULL, &is, NULL);
  is_u64 (n, 1, "freed on stream 1, reused on stream 0 with no sync: one race");
  if (n == 1)
    {
      const MlIssue *x = &is.items[0];
      ok (x->kind == ML_ISSUE_CROSS_STREAM, "kind cross-stream");
      ok (x->a == 0 && x->b == 1, "a = the freed buffer, b = the new one");
      is_u64 (x->bytes, 64, "64 bytes reused");
      is_u64 (x->tick, 2, "at tick 2 (the reuse)");
      is_u64 (x->tick_b, 1, "after the free at tick 1");
      ok (x->stream_a == 1 && x->stream_b == 0, "streams 1 and 0");
      has_str (x->why, "no sync", "why says what is missing");
    }
  ml_issues_clear (&is);

  EXPECT (H A(1, 100, 1) F(1) A(2, 100, 1), NULL, 0, "same stream: no race");
  static const uint64_t apart[] = { 0, 100 };
  EXPECT (H A(1, 100, 1) F(1) A(2, 100, 0), apart, 0, "other bytes: no race");
  EXPECT (H A(1, 100, 1) F(1) SYNC("device") A(2, 100, 0), NULL, 0, "device sync between: none");
  EXPECT (H A(1, 100, 1) F(1) SYNC("context") A(2, 100, 0), NULL, 0, "context sync between: none");
  EXPECT (H A(1, 100, 1) F(1) SSYNC(1) A(2, 100, 0), NULL, 0, "host waits for stream 1: none");
  EXPECT (H A(1, 100, 1) F(1) SSYNC(2) A(2, 100, 0), NULL, 1, "host waits for another stream: race");
  EXPECT (H A(1, 100, 1) F(1) REC(7, 1) WAIT(0, 7, 1) A(2, 100, 0), NULL, 0, "event record + stream wait: none");
  EXPECT (H A(1, 100, 1) F(1) REC(7, 1) REC(8, 2) WAIT(0, 8, 2) A(2, 100, 0), NULL, 1, "waiting for the wrong event: race");
  EXPECT (H A(1, 100, 1) F(1) REC(7, 1) ESYNC(7) A(2, 100, 0), NULL, 0, "host waits for the event: none");
  EXPECT (H A(1, 100, 1) REC(7, 1) F(1) WAIT(0, 7, 1) A(2, 100, 0), NULL, 1,
          "no kernels: an event recorded before the free does not cover it");
  EXPECT (H A(1, 100, 1) F(1) A(2, 100, 0) SYNC("device"), NULL, 1, "a sync after the reuse is too late");
  EXPECT (H A(1, 100, 1) F(1) SYNC("device") A(2, 100, 0) F(2) A(3, 100, 1), NULL, 1,
          "each reuse needs its own ordering: 0 -> 1 unsynced");
  static const uint64_t two[] = { 0, 50, 0 };
  n = races (H A(1, 50, 1) A(2, 50, 2) F(1) F(2) A(3, 100, 0), two, &is, NULL);
  is_u64 (n, 2, "one reuse of two freed buffers on two streams: two races");
  ml_issues_clear (&is);

  /* with kernels: work is what orders */
  EXPECT (H A(1, 100, 1) K(1) REC(7, 1) F(1) A(2, 100, 0) WAIT(0, 7, 1) K(0), NULL, 0,
          "kernels: recorded after the last kernel, waited before the first: none");
  EXPECT (H A(1, 100, 1) K(1) REC(7, 1) F(1) A(2, 100, 0) K(0) WAIT(0, 7, 1), NULL, 1,
          "kernels: waited after stream 0's kernel ran: race");
  EXPECT (H A(1, 100, 1) REC(7, 1) K(1) F(1) A(2, 100, 0) WAIT(0, 7, 1) K(0), NULL, 1,
          "kernels: recorded before the last kernel on a: race");
  EXPECT (H A(1, 100, 1) K(1) REC(1, 1) WAIT(2, 1, 1) K(2) REC(2, 2) WAIT(0, 2, 2) F(1) A(2, 100, 0) K(0), NULL, 0,
          "kernels: a chain 1 -> 2 -> 0 orders it");
  EXPECT (H A(1, 100, 1) K(1) REC(1, 1) WAIT(2, 1, 1) K(2) REC(2, 2) F(1) A(2, 100, 0) K(0), NULL, 1,
          "kernels: the chain broken before stream 0: race");
  EXPECT (H A(1, 100, 1) K(1) F(1) A(2, 100, 0) F(2) K(0), NULL, 0,
          "kernels: b freed before any kernel of its stream ran: nothing raced");
}

static void
test_inplace (void)
{
  MlIssues is;
  int rc;
  size_t n = races (H A(1, 100, 0) A(2, 100, 0) A(3, 10, 0) F(3)
                    "{\"kind\":\"inplace\",\"tick\":2,\"output\":2,\"input\":1,\"last_read\":4,\"op\":\"relu_\"}\n",
                    (const uint64_t[]) { 0, 100, 200 }, &is, &rc);
  is_u64 (n, 1, "input read at tick 4 after the in-place write at 2: one hazard");
  if (n == 1)
    {
      const MlIssue *x = &is.items[0];
      ok (x->kind == ML_ISSUE_INPLACE && x->a == 0 && x->b == 1, "in-place: a = the input, b = the output");
      ok (x->tick == 2 && x->tick_b == 4 && x->bytes == 100, "ticks 2 and 4, 100 bytes");
      has_str (x->why, "relu_", "why names the op");
    }
  ml_issues_clear (&is);
  EXPECT (H A(1, 100, 0) A(2, 100, 0)
          "{\"kind\":\"inplace\",\"tick\":1,\"output\":2,\"input\":1,\"last_read\":1}\n",
          ((const uint64_t[]) { 0, 100 }), 0, "last read at the write itself: no hazard");
  n = races (H A(1, 100, 0) "{\"kind\":\"inplace\",\"tick\":1,\"output\":9,\"input\":1,\"last_read\":3}\n", NULL, &is, &rc);
  ok (rc == ML_EINPUT, "an unknown buffer id is an error");
  ml_issues_clear (&is);
}

int
main (void)
{
  test_cross_stream ();
  test_inplace ();
  return tap_done ();
}
