/* replay.h — validating a plan by replaying it on memory.
 *
 * A plan says where each buffer of a trace lives; the replay puts that to
 * the test on real memory. One arena holds every segment of the plan;
 * segments are placed first fit among the segments live at the same time
 * (so segments that never coexist share bytes and the arena stays near the
 * plan's footprint), and address ranges no buffer ever touches are cut
 * out (a recorded layout spread over the virtual address space replays
 * in the bytes its buffers cover; overlaps all stay). Walking the trace's buffer events in order (at one tick,
 * frees before allocations), each allocation writes a 64-bit tag naming
 * the buffer into every granule of its bytes, and each free (or the end of
 * the trace, for buffers never freed) checks that every granule still
 * holds that tag. Two buffers the plan overlaps in time and space show up
 * as a corrupted buffer: the victim, the buffer whose tag was found in its
 * bytes, the first corrupted offset and the tick of the check.
 *
 * The granule is the largest power of two (at most 256) dividing every
 * placement's offset and rounded size, so every overlap of two placements
 * covers at least one whole granule: writing one tag per granule finds
 * exactly the overlaps that writing every byte would, with 8 bytes of
 * traffic per granule instead of the whole buffer. The host backend keeps
 * one 64-bit word per granule (its shadow arena is arena / granule * 8
 * bytes, mapped lazily); the CUDA backend keeps the real arena in one
 * cudaMalloc and writes the same words with kernels.
 *
 * Backends:
 *   host  pure C, always built, deterministic.
 *   cuda  replay-cuda.cu, built when nvcc is found: tag-fill and
 *         tag-check kernels on one CUDA stream per trace stream, reuse
 *         across streams ordered with CUDA events as a correct allocator
 *         must; times the plan against cudaMalloc / cudaFree and against
 *         cudaMallocAsync / cudaFreeAsync from a pool on the same sequence.
 */
#ifndef ML_REPLAY_H
#define ML_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/plan.h"

typedef enum { ML_REPLAY_ALLOC = 1, ML_REPLAY_FREE = 2 } MlReplayOp;

/* One step of the replay: 32 bytes. */
typedef struct {
  uint64_t offset;     /* in the arena, bytes (segment base + offset, compacted) */
  uint64_t bytes;      /* rounded size */
  uint64_t tick;
  uint32_t buffer;     /* index in MlBuffers */
  uint16_t stream;     /* dense stream index, 0 .. n_streams-1 */
  uint8_t  op;         /* MlReplayOp */
  uint8_t  pad;
} MlReplayStep;

typedef struct {
  MlReplayStep *steps;
  size_t        n_steps;
  size_t        n_buffers;
  uint64_t      arena_bytes;   /* bytes replayed: the span with untouched ranges removed */
  uint64_t      span_bytes;    /* the segments' layout: max(base + extent) */
  uint64_t      granule;       /* bytes per tag word, power of two <= 256 */
  uint32_t      n_streams;     /* distinct trace streams (>= 1) */
  uint32_t     *stream_ids;    /* n_streams: the trace's stream numbers */
  uint64_t     *segment_base;  /* n_segments: where each segment starts */
  size_t        n_segments;
} MlReplayProgram;

/* Builds the step sequence of @plan over @bufs. The result does not
 * borrow either. */
int  ml_replay_program_build (const MlBuffers *bufs, const MlPlan *plan, MlReplayProgram **out, MlError *err);
void ml_replay_program_free  (MlReplayProgram *prog);

/* The tag written for buffer @b, and its inverse (false: not a tag). */
static inline uint64_t
ml_replay_tag (uint32_t b)
{
  return 0x4d4c000000000000ull | ((uint64_t) (b + 1u) << 8) | 0xa5u;
}

static inline bool
ml_replay_tag_buffer (uint64_t word, uint32_t *b)
{
  if ((word >> 48) != 0x4d4c || (word & 0xff) != 0xa5)
    return false;
  uint64_t v = (word >> 8) & 0xffffffffffull;
  if (v == 0 || v > UINT32_MAX)
    return false;
  *b = (uint32_t) (v - 1);
  return true;
}

/* One corrupted buffer. */
typedef struct {
  uint32_t victim;     /* buffer index whose bytes changed */
  uint32_t culprit;    /* buffer whose tag was found, UINT32_MAX = not a tag */
  uint64_t tick;       /* tick of the check (the victim's free / trace end) */
  uint64_t offset;     /* first corrupted byte, within the arena */
  uint64_t granules;   /* corrupted granules in the victim */
} MlCorruption;

#define ML_REPLAY_MAX_KEPT 64

typedef struct {
  uint64_t     corrupted;        /* buffers found corrupted (all iterations: the first) */
  MlCorruption items[ML_REPLAY_MAX_KEPT];
  size_t       n_items;
  uint64_t     allocations;      /* per iteration */
  uint64_t     granule_writes;   /* per iteration */
  unsigned     iterations;
  /* timings, seconds for all iterations; < 0 = not measured */
  double       plan_s;
  double       malloc_s;         /* cuda: cudaMalloc / cudaFree baseline */
  double       async_s;          /* cuda: cudaMallocAsync / cudaFreeAsync baseline */
  uint64_t     baseline_corrupted; /* corruptions the baselines saw (must be 0) */
  char         device[128];      /* cuda: the GPU's name */
} MlReplayResult;

void ml_replay_result_init (MlReplayResult *res);

/* Replays @prog on host memory @iterations times (>= 1). Refuses shadows
 * over @max_shadow_bytes (0 = 4 GiB) with ML_EUNSUPPORTED. */
int ml_replay_host (const MlReplayProgram *prog, unsigned iterations, uint64_t max_shadow_bytes,
                    MlReplayResult *res, MlError *err);

/* True when this build has the CUDA backend. */
bool ml_replay_cuda_available (void);
/* Replays @prog on GPU @device; ML_EUNSUPPORTED without the backend or
 * without a usable GPU (the message says which). */
int ml_replay_cuda (const MlReplayProgram *prog, unsigned iterations, int device,
                    MlReplayResult *res, MlError *err);

#endif
