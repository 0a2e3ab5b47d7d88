/* caching.h — PyTorch's CUDA caching allocator, emulated
 * (c10/cuda/CUDACachingAllocator.cpp, DeviceCachingAllocator).
 *
 * Algorithm, rule by rule:
 *   round     requests < 512 B become 512 B, others round up to 512 B, or
 *             with roundup_power2_divisions=D (and size > 512·D) to the
 *             next of D equal steps between two powers of two;
 *   pool      rounded sizes <= 1 MiB use the small pool, larger the large;
 *   segment   small: 2 MiB; large: 20 MiB below 10 MiB, else rounded up
 *             to 2 MiB;
 *   reuse     best fit among the free blocks of the same pool AND the
 *             same stream, ordered by (size, address); a block of at
 *             least max_split_size is not used for a smaller request, and
 *             for requests at or above it a block 20 MiB (or more) larger
 *             is refused;
 *   split     the block is cut at its low end: small pool when >= 512 B
 *             remain, large pool when > 1 MiB remains and the request is
 *             below max_split_size;
 *   free      merges with free neighbours of the same segment;
 *   release   segments go back only when a reservation fails (capacity):
 *             with max_split_size set, oversize cached segments first,
 *             then every wholly free cached segment, then one retry, then
 *             ML_EOOM;
 *   expandable one growable segment per (pool, stream) that maps 2 MiB /
 *             20 MiB pages at its end when no free block fits.
 * Alignment: PyTorch's blocks are 512-byte aligned; an alignment knob
 * above 512 B rounds each request up to a multiple of it (so blocks stay
 * aligned while it divides the 2 MiB segment granularity).
 * Options (knobs->options): max_split_size_mb=N, expandable_segments=0|1,
 * roundup_power2_divisions=D; without options, a PyTorch snapshot's
 * recorded settings (its tick-0 "allocator settings: ..." mark).
 * Complexity: O(log f) per operation (f = free blocks; treaps), O(s) for a
 * release (s = segments).
 * Optimality: none; it reproduces what PyTorch would do, which is the
 * point (its peak is the `reserved` a PyTorch user sees).
 *
 * Conformance (ml_caching_conformance): replays a PyTorch snapshot's
 * trace from the state rebuilt at its first event (sim/formats/snapshot.h) and
 * measures how often the emulation returns the real address.
 */
#ifndef ML_STRATEGIES_CACHING_H
#define ML_STRATEGIES_CACHING_H

#include <stdio.h>

#include "sim/strategy.h"

extern const MlStrategy ml_strategy_caching;

/* Rules a mismatch is attributed to (see ml_caching_rule_name). */
typedef enum {
  ML_RULE_BEST_FIT = 0,   /* the real block was another free block of the pool */
  ML_RULE_STREAM,         /* the real block belonged to another stream         */
  ML_RULE_POOL,           /* ... to the other pool                             */
  ML_RULE_SPLIT,          /* the real address is inside a free block, not at its start */
  ML_RULE_NEW_SEGMENT,    /* the emulation reused a block, the real one reserved, or the reverse */
  ML_RULE_STATE,          /* the real address is not free in the emulation (state diverged) */
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

/* Prints the measurement as text ("  " indented lines) or as one JSON
 * object (no newline). */
void ml_caching_conformance_print (FILE *fp, const MlCachingConformance *c, bool json);

#endif
