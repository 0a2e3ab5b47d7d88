/* state.h — the allocator's state at one tick: every segment split into
 * its blocks, as memory_viz's "Allocator State History" shows it.
 *
 * At tick t (after the tick's events, as sim/metrics.h counts), for each
 * segment of @plan reserved then ([start, end) holds t), the blocks in
 * address order:
 *   allocated  a buffer live at t (start <= t < end), its rounded bytes;
 *   free       reserved bytes no live buffer holds (the caching
 *              allocator's "inactive" cached blocks, an arena's holes);
 *   unmapped   address space of the segment that holds no pages at t: a
 *              growable segment above its high-water mark so far, an
 *              expandable one where the trace's segment_map /
 *              segment_unmap events say nothing is mapped.
 * Buffers that overlap (a plan error or a race) are listed as they are;
 * the bytes they share are not counted free. O(buffers + events).
 */
#ifndef ML_ANALYSIS_STATE_H
#define ML_ANALYSIS_STATE_H

#include "sim/plan.h"

typedef enum {
  ML_BLOCK_ALLOCATED = 0,
  ML_BLOCK_FREE,
  ML_BLOCK_UNMAPPED,
} MlBlockKind;

typedef struct {
  uint32_t    segment;
  uint64_t    offset;    /* within the segment */
  uint64_t    size;
  MlBlockKind kind;
  uint32_t    buffer;    /* allocated: the buffer index; else UINT32_MAX */
} MlBlock;

typedef struct {
  uint32_t segment;
  uint64_t size;         /* the segment's address space */
  uint64_t allocated, free, unmapped;
  size_t   first, n;     /* its blocks: blocks[first .. first + n) */
} MlSegmentState;

typedef struct {
  uint64_t        tick;
  MlBlock        *blocks;
  size_t          n_blocks;
  MlSegmentState *segs;   /* the segments reserved at the tick, by index */
  size_t          n_segs;
  uint64_t        allocated, free, unmapped;   /* totals */
} MlState;

/* Fills @out for @tick (owned by the caller: ml_state_clear). */
int  ml_state_at    (const MlBuffers *bufs, const MlPlan *plan, uint64_t tick, MlState *out, MlError *err)
  __attribute__ ((warn_unused_result));
void ml_state_clear (MlState *state);

const char *ml_block_kind_name (MlBlockKind kind);

#endif
