/* caching.h — PyTorch's CUDA caching allocator, emulated
 * (c10/cuda/CUDACachingAllocator.cpp, DeviceCachingAllocator).
 *
 * Algorithm, rule by rule:
 *   round     requests < 512 B become 512 B, others round up to 512 B, or
 *             with roundup_power2_divisions=D (and size > 512·D) to the
 *             next of D equal steps between two powers of two; D is per
 *             power-of-two interval from 1 MiB ([256:1,>:4]);
 *   pool      rounded sizes <= 1 MiB use the small pool, larger the large;
 *   segment   small: 2 MiB; large: 20 MiB below 10 MiB, else rounded up
 *             to 2 MiB;
 *   reuse     best fit among the free blocks of the same pool AND the
 *             same stream, ordered by (size, address); a block of at
 *             least max_split_size is not used for a smaller request, and
 *             for requests at or above it a block max_non_split_rounding_mb
 *             (20 MiB) or more larger is refused;
 *   split     the block is cut at its low end: small pool when >= 512 B
 *             remain, large pool when > 1 MiB remains and the request is
 *             below max_split_size;
 *   free      merges with free neighbours of the same segment;
 *   release   segments go back only when a reservation fails (capacity):
 *             the driver's retries (--retries, default 3): the first gives
 *             back the oversize cached segments (max_split_size set), or
 *             every wholly free cached segment when that released nothing,
 *             the next the rest, each followed by the allocation again;
 *             then ML_EOOM (the conformance replay, without a capacity,
 *             never gets there);
 *   gc        with garbage_collection_threshold=T and an allowed maximum
 *             (per_process_memory_fraction=F < 1: F x --capacity), a
 *             request no free block serves first gives back the large
 *             pool's wholly free segments, oldest first, while reserved is
 *             above T x the maximum (garbage_collect_cached_blocks);
 *   expandable one virtual range per (pool, stream) with 2 MiB / 20 MiB
 *             pages mapped at the lowest room when no free block fits
 *             (every pool then splits at >= 512 B); the first retry
 *             unmaps the whole free pages (release_cached_blocks) —
 *             docs/pytorch.md, "Expandable segments in the caching
 *             emulation".
 *   async     backend=cudaMallocAsync, a model of CUDA's stream-ordered
 *             pool: one pool grown by the request rounded up to 2 MiB, best
 *             fit per stream, every split kept, nothing given back (the
 *             release threshold PyTorch sets is UINT64_MAX), the fraction
 *             limiting requested bytes live.
 * Alignment: PyTorch's blocks are 512-byte aligned; an alignment knob
 * above 512 B rounds each request up to a multiple of it (so blocks stay
 * aligned while it divides the 2 MiB segment granularity).
 * Options (knobs->options): PyTorch's allocator settings
 * (PYTORCH_CUDA_ALLOC_CONF, sim/alloc-conf.h: max_split_size_mb,
 * max_non_split_rounding_mb, roundup_power2_divisions per size interval,
 * expandable_segments, garbage_collection_threshold,
 * per_process_memory_fraction, backend; the settings it does not emulate
 * are refused by name); without options, a PyTorch snapshot's recorded settings (its
 * tick-0 "allocator settings: ..." mark).
 * Complexity: O(log f) per operation (f = free blocks; treaps), O(s) for a
 * release (s = segments).
 * Optimality: none; it reproduces what PyTorch would do, which is the
 * point (its peak is the `reserved` a PyTorch user sees).
 *
 * The model is caching-model.c (caching-private.h); the conformance
 * replay against a recorded snapshot is caching-conformance.h.
 */
#ifndef ML_STRATEGIES_CACHING_H
#define ML_STRATEGIES_CACHING_H

#include "sim/strategy.h"

extern const MlStrategy ml_strategy_caching;

#endif
