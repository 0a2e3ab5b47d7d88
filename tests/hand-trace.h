/* hand-trace.h — traces written by hand in the tests: one event a tick,
 * from tick 0, ids as given. Include after tap.h (must). */
#ifndef ML_TESTS_HAND_TRACE_H
#define ML_TESTS_HAND_TRACE_H

#include "sim/trace.h"

typedef struct {
  MlTrace *t;
  uint64_t tick;
} B;

static inline B
trace_new (void)
{
  return (B) { ml_trace_new (), 0 };
}

/* One event at the next tick. */
static inline void
ev (B *b, MlEventKind kind, uint64_t id, uint64_t size, uint32_t stream)
{
  MlEvent e = { .tick = b->tick++, .id = id, .size = size, .stream = stream, .kind = (uint8_t) kind,
                .flags = ML_EVF_HAS_ID, .time_ns = -1 };
  must (ml_trace_append (b->t, &e) != NULL);
}

static inline void
alloc (B *b, uint64_t id, uint64_t size)
{
  ev (b, ML_EV_ALLOC, id, size, 0);
}

static inline void
release (B *b, uint64_t id)
{
  ev (b, ML_EV_FREE, id, 0, 0);
}

#endif
