/* caching-conformance.h — how closely the caching emulation (caching.h)
 * reproduces the real allocator: replays a PyTorch snapshot's trace from
 * the state rebuilt at its first event (sim/formats/snapshot.h) and
 * measures how often the emulation returns the real address, and whether
 * it reserves the segments the snapshot recorded. The CLI prints the
 * measurement (memlens compare). */
#ifndef ML_STRATEGIES_CACHING_CONFORMANCE_H
#define ML_STRATEGIES_CACHING_CONFORMANCE_H

#include "sim/trace.h"
#include "sim/base/error.h"

/* Rules a mismatch is attributed to (see ml_caching_rule_name). */
typedef enum {
  ML_RULE_BEST_FIT = 0,   /* the real block was another free block of the pool */
  ML_RULE_STREAM,         /* the real block belonged to another stream         */
  ML_RULE_POOL,           /* ... to the other pool                             */
  ML_RULE_SPLIT,          /* the real address is inside a free block, not at its start */
  ML_RULE_NEW_SEGMENT,    /* the emulation reused a block, the real one reserved, or the reverse */
  ML_RULE_STATE,          /* the real address is not free in the emulation (state diverged) */
  ML_RULE_PRIVATE_POOL,   /* the real block belonged to another memory pool (CUDA graph, MemPool) */
  ML_RULE__COUNT
} MlCachingRule;

const char *ml_caching_rule_name (MlCachingRule rule);

typedef struct {
  char     options[256];            /* the options the emulation ran with */
  /* the rebuilt state at the trace's first event */
  size_t   initial_segments, initial_blocks;
  /* address conformance over the trace's allocations */
  size_t   allocs;
  size_t   matched;
  size_t   by_rule[ML_RULE__COUNT];
  size_t   first_mismatch;          /* event index, SIZE_MAX = none */
  uint64_t first_want, first_got;
  /* segment events: recorded vs emulated, pairwise in creation order */
  size_t   rec_segment_events, emu_segment_events, segment_events_matched;
  /* the segments at the end: recorded (initial + recorded events) vs emulated */
  size_t   end_rec_segments, end_emu_segments;
  uint64_t end_rec_bytes, end_emu_bytes;
  bool     end_match;               /* same count and the same multiset of sizes */
  /* segments whose size the size rules can produce */
  size_t   rule_sized_segments;
  size_t   frees_unknown;           /* frees the emulation could not match */
} MlCachingConformance;

/* Replays @trace (a PyTorch snapshot: tick-0 segments and blocks, then the
 * trace) through the emulation with @options (NULL or "": the settings the
 * snapshot recorded, from its "allocator settings: ..." mark). New emulated segments take
 * the addresses of the recorded segment_alloc events in creation order;
 * recorded segment_free events release the emulated segment there. After
 * a mismatch the block is placed at the real address when that is free,
 * so each allocation is measured on its own. ML_EUNSUPPORTED when the
 * trace has no addresses. */
int ml_caching_conformance (const MlTrace *trace, const char *options, MlCachingConformance *out, MlError *err);

#endif
