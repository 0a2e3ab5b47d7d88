/* caching-replay.h — a trace replayed through the caching emulation
 * (caching.h) under one allocator setting, for the question "what should I
 * change?" (memlens tune).
 *
 * The replay starts from the state the snapshot recorded at the trace's
 * first event (warm: its segments and live blocks, as the conformance
 * replay does), or from an empty device (cold: the tick-0 blocks are
 * allocated in the trace's order). Every allocation goes through PyTorch's
 * malloc as the emulation has it (reuse, garbage collection, new segment,
 * release_available_cached_blocks and release_cached_blocks under the
 * capacity). The trace's recorded `oom` is replayed as the request it
 * refused, freed right after, so "fits" means "could have served it".
 * Recorded segment frees that no allocation follows (torch.cuda.empty_cache
 * in the program) are replayed as release_cached_blocks; the allocator's
 * own releases are left to the emulation. After the first allocation the
 * capacity refuses, the replay goes on without it, so the peak is what the
 * setting would need.
 *
 * Why the cache held free bytes (the "strands"): at the moment the
 * reserved bytes reached their peak (the state the request that raised
 * them found) and at the OOM (after PyTorch's releases), every free byte
 * inside reserved memory is put under the first rule that kept the request
 * from it, in this order: the other pool (small-pool segments for a large
 * request, or large for a small one), another stream's block, an
 * oversize block (max_split_size_mb, max_non_split_rounding_mb), a wholly
 * free cached segment (what release_cached_blocks or garbage collection
 * would give back), a piece too small; the bytes inside allocated blocks
 * beyond their requests are the rounding. They add up to reserved -
 * requested. Beside them, PyTorch's own viewer's two measures
 * (torch/cuda/_memory_viz.py segsum and MemoryViz.js): the share of the
 * free bytes that is internal (rounding), and calculate_fragmentation,
 * the sum of the squared free gaps over the squared reserved bytes.
 *
 * Complexity: the emulation's O(log f) per event, plus O(free blocks) each
 * time the reserved bytes pass their running peak. Memory: the emulation
 * and an id map (O(live blocks)), and the curve when asked (O(ticks)).
 */
#ifndef ML_STRATEGIES_CACHING_REPLAY_H
#define ML_STRATEGIES_CACHING_REPLAY_H

#include "sim/trace.h"
#include "sim/base/error.h"

typedef enum {
  ML_STRAND_SMALL_POOL = 0,  /* free in small-pool segments, the request large */
  ML_STRAND_LARGE_POOL,      /* free in large-pool segments, the request small */
  ML_STRAND_STREAM,          /* another stream's free blocks */
  ML_STRAND_OVERSIZE,        /* refused as oversize (max_split_size_mb) */
  ML_STRAND_CACHED,          /* wholly free cached segments, never given back */
  ML_STRAND_TOO_SMALL,       /* free pieces too small for the request */
  ML_STRAND_USABLE,          /* free blocks that could have served it */
  ML_STRAND_ROUNDING,        /* inside allocated blocks, beyond their requests */
  ML_STRAND__COUNT
} MlStrand;

/* "small pool", "large pool", "other stream", "oversize", "cached segments",
 * "too small", "usable", "rounding" (the JSON keys use '_'). */
const char *ml_strand_name (MlStrand strand);

typedef struct {
  bool     valid;
  uint64_t event, tick;          /* the moment: the request's event */
  uint64_t request;              /* its rounded size */
  uint64_t reserved, allocated, requested;   /* allocated: block bytes */
  uint64_t bytes[ML_STRAND__COUNT];          /* add up to reserved - requested */
  uint64_t largest_free;         /* the largest free block */
  double   viz_internal;         /* memory_viz: internal / (reserved - requested) */
  double   viz_fragmentation;    /* MemoryViz calculate_fragmentation: sum gap^2 / reserved^2 */
} MlStrandBreakdown;

typedef struct {
  uint64_t    capacity;    /* the device's memory, 0 = none */
  bool        warm;        /* from the state at the trace's first event */
  bool        curve;       /* keep the reserved bytes over time */
} MlCacheReplayOpts;

typedef struct {
  bool     warm;              /* started from the recorded state */
  bool     model;             /* backend=cudaMallocAsync: a model, not an emulation */
  uint64_t reserved_peak, allocated_peak, requested_peak;
  uint64_t peak_tick;         /* where reserved first reached its peak */
  double   frag_at_peak;      /* 1 - largest free block / free bytes, in the state at the peak */
  uint64_t reserved_end;
  /* the first request the capacity refused */
  bool     oom;
  bool     oom_recorded;      /* it is the request the trace recorded as refused */
  uint64_t oom_tick, oom_request, oom_live, oom_reserved;   /* live: requested bytes */
  uint64_t n_malloc, n_free;  /* cudaMalloc / cudaFree calls (expandable: map / unmap) */
  uint64_t gc_released, empty_cache_calls;
  MlStrandBreakdown at_peak, at_oom;
  uint64_t *curve_tick, *curve_reserved;   /* owned, n_curve: reserved from each tick on */
  size_t    n_curve;
} MlCacheReplay;

/* Replays @trace under @options (PYTORCH_CUDA_ALLOC_CONF in memlens's or
 * PyTorch's form; NULL or "": the settings it recorded). ML_EUSAGE for a
 * setting the emulation refuses or warm without a recorded state
 * (ml_cache_replay_can_warm), ML_EINPUT for a state that does not rebuild.
 * Clear the result with ml_cache_replay_clear(). */
int  ml_cache_replay (const MlTrace *trace, const char *options, const MlCacheReplayOpts *opts, MlCacheReplay *out,
                      MlError *err) ML_MUST_CHECK;
void ml_cache_replay_clear (MlCacheReplay *r);

/* True when @trace recorded a state to start from: a PyTorch snapshot
 * with the segments that hold its tick-0 blocks (one whose trace starts
 * from nothing starts empty). */
bool ml_cache_replay_can_warm (const MlTrace *trace);

#endif
