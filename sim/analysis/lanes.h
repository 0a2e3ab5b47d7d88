/* lanes.h — a trace's memory by pool and by stream: the lanes PyTorch's
 * caching allocator keeps apart (a block of one pool and stream never
 * serves another), and the frees still waiting at the end.
 *
 * Pools are the trace's MlTrace.pools (a snapshot's segment_pool_id /
 * pool_id: (0, 0) the default pools, (N, 0) a CUDA graph's own pool,
 * (0, N) a torch.cuda.MemPool or graph_pool_handle()); streams its stream
 * indices (ml_trace_stream_label shows the value). A buffer's pool is its
 * alloc event's. O(buffers log buffers + events).
 */
#ifndef ML_ANALYSIS_LANES_H
#define ML_ANALYSIS_LANES_H

#include "sim/buffers.h"

typedef struct {
  uint32_t pool;           /* MlTrace.pools index (0: the default pools) */
  uint64_t buffers;        /* allocations in it */
  uint64_t live_max;       /* most rounded bytes live in it at once */
  uint64_t live_end;       /* rounded bytes live in it at the end */
  uint64_t reserved_end;   /* bytes of its segments at the end (segment events of the pool) */
} MlPoolInfo;

typedef struct {
  uint32_t stream;         /* the trace's stream index */
  uint64_t buffers;
  uint64_t live_max;
} MlStreamInfo;

typedef struct {
  MlPoolInfo   *pools;     /* by pool index; n_pools == max(1, trace->n_pools) */
  size_t        n_pools;
  MlStreamInfo *streams;   /* the streams that allocate, by index */
  size_t        n_streams;
  uint64_t      pending_buffers, pending_bytes;   /* freed, waiting on other streams at the end */
} MlLanes;

/* Fills @out (owned by the caller: ml_lanes_clear). */
int  ml_lanes_compute (const MlBuffers *bufs, MlLanes *out, MlError *err) __attribute__ ((warn_unused_result));
void ml_lanes_clear   (MlLanes *lanes);

/* The pool of buffer @i (its alloc event's), 0 when none. */
uint32_t ml_buffer_pool (const MlBuffers *bufs, size_t i);

/* What kind of pool @pool is: "default", "CUDA graph" (N, 0), "MemPool" (0, N). */
const char *ml_pool_kind (const MlTrace *trace, uint32_t pool);

/* Pool @pool as the pictures and the viewer name it: "default pool",
 * "CUDA graph pool (1, 0)", "MemPool (0, 2)"; into @buf, returned. */
#define ML_POOL_NAME_MAX 80
const char *ml_pool_name (const MlTrace *trace, uint32_t pool, char *buf, size_t len);

#endif
