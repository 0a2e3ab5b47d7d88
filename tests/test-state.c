/* The allocator state at a tick (sim/analysis/state.h), worked by hand. */
#include "tests/tap.h"

#include <stdlib.h>
#include <unistd.h>

#include "sim/analysis/state.h"
#include "sim/formats/load.h"

/* ticks are event indexes: a [0,4) 100 B, b [1,2) 50 B, c [3,5) 30 B */
static const char trace_text[] =
  "{\"format\":\"memlens-trace\",\"version\":1,\"alignment\":1}\n"
  "{\"kind\":\"alloc\",\"id\":1,\"size\":100,\"name\":\"a\"}\n"
  "{\"kind\":\"alloc\",\"id\":2,\"size\":50,\"name\":\"b\"}\n"
  "{\"kind\":\"free\",\"id\":2}\n"
  "{\"kind\":\"alloc\",\"id\":3,\"size\":30,\"name\":\"c\"}\n"
  "{\"kind\":\"free\",\"id\":1}\n"
  "{\"kind\":\"free\",\"id\":3}\n";

static void
is_block (const MlState *s, size_t i, uint32_t seg, uint64_t off, uint64_t size, MlBlockKind kind, uint32_t buf,
          const char *what)
{
  const MlBlock *b = i < s->n_blocks ? &s->blocks[i] : NULL;
  ok (b && b->segment == seg && b->offset == off && b->size == size && b->kind == kind && b->buffer == buf,
      "%s: segment %u, %s %llu B at %llu", what, seg, ml_block_kind_name (kind), (unsigned long long) size,
      (unsigned long long) off);
}

int
main (void)
{
  char *path = tap_write_temp (trace_text, ".jsonl");
  MlTrace *t = NULL;
  MlBuffers *bufs = NULL;
  MlError err = { 0 };
  ok (ml_trace_load (path, NULL, &t, &err) == 0 && ml_buffers_build (t, 1, &bufs, &err) == 0, "the trace loads (%s)", err.msg);
  unlink (path);
  free (path);
  is_u64 (bufs->n, 3, "three buffers");
  /* segment 0: static, 200 B, [0, 6): a at 0, b at 120; segment 1:
   * growable, 70 B: c at 40; segment 2: 10 B reserved [4, 6), empty */
  MlPlan *p = ml_plan_new (bufs->n, "hand");
  ok (ml_plan_add_segment (p, &(MlSegment) { .size = 200, .start = 0, .end = 6 }) == 0
      && ml_plan_add_segment (p, &(MlSegment) { .size = 70, .start = 0, .end = 6, .flags = ML_SEG_GROWABLE }) == 1
      && ml_plan_add_segment (p, &(MlSegment) { .size = 10, .start = 4, .end = 6 }) == 2, "three segments");
  p->segment[0] = 0, p->offset[0] = 0;
  p->segment[1] = 0, p->offset[1] = 120;
  p->segment[2] = 1, p->offset[2] = 40;

  MlState s;
  ok (ml_state_at (bufs, p, 1, &s, &err) == 0, "the state at tick 1");
  is_u64 (s.n_segs, 2, "two segments reserved at tick 1");
  is_u64 (s.n_blocks, 5, "five blocks");
  is_block (&s, 0, 0, 0, 100, ML_BLOCK_ALLOCATED, 0, "tick 1");
  is_block (&s, 1, 0, 100, 20, ML_BLOCK_FREE, UINT32_MAX, "tick 1");
  is_block (&s, 2, 0, 120, 50, ML_BLOCK_ALLOCATED, 1, "tick 1");
  is_block (&s, 3, 0, 170, 30, ML_BLOCK_FREE, UINT32_MAX, "tick 1");
  is_block (&s, 4, 1, 0, 70, ML_BLOCK_UNMAPPED, UINT32_MAX, "tick 1: nothing placed in the growable one yet");
  ok (s.allocated == 150 && s.free == 50 && s.unmapped == 70, "totals: 150 allocated, 50 free, 70 unmapped");
  ml_state_clear (&s);

  ok (ml_state_at (bufs, p, 3, &s, &err) == 0, "the state at tick 3");
  is_u64 (s.n_blocks, 4, "four blocks");
  is_block (&s, 0, 0, 0, 100, ML_BLOCK_ALLOCATED, 0, "tick 3");
  is_block (&s, 1, 0, 100, 100, ML_BLOCK_FREE, UINT32_MAX, "tick 3: b freed, its bytes cached");
  is_block (&s, 2, 1, 0, 40, ML_BLOCK_FREE, UINT32_MAX, "tick 3");
  is_block (&s, 3, 1, 40, 30, ML_BLOCK_ALLOCATED, 2, "tick 3");
  ok (s.segs[1].allocated == 30 && s.segs[1].free == 40 && s.segs[1].unmapped == 0, "segment 1: 30 allocated, 40 free");
  ml_state_clear (&s);

  ok (ml_state_at (bufs, p, 5, &s, &err) == 0, "the state at tick 5");
  is_u64 (s.n_segs, 3, "three segments reserved at tick 5");
  ok (s.allocated == 0 && s.free == 280 && s.unmapped == 0, "everything free: 200 + 70 + 10 bytes");
  is_block (&s, 2, 2, 0, 10, ML_BLOCK_FREE, UINT32_MAX, "tick 5: segment 2");
  ml_state_clear (&s);

  ml_plan_free (p);
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return tap_done ();
}
