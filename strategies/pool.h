/* pool.h — a size-classed memory pool (slab allocator) over fixed chunks.
 *
 * What it models: the seed's memory pool (POOL_CHUNK_SIZE 4 MB chunks
 * taken from the device and carved for small requests, big ones straight
 * from the device), built the way slab allocators are: jemalloc's small
 * "bins" and the Linux slab allocator — one size class per chunk, slots
 * of exactly the class size. It does NOT follow TensorFlow's BFC
 * allocator (which splits and coalesces variable blocks inside its
 * regions; `caching` is that family).
 *
 * Algorithm:
 *   classes   the alignment a, then each class is the previous plus
 *             max(a, 2^(floor(log2 v) - 2)): four classes per doubling
 *             above 4a (a = 256: 256, 512, 768, 1 K, 1.25 K, 1.5 K, 1.75 K,
 *             2 K, 2.5 K, ...), at most 25 % rounding waste; the last
 *             class is the large threshold itself. A request takes the
 *             smallest class that holds it.
 *   chunks    a chunk is one segment of --chunk bytes reserved from the
 *             device; it serves one class at a time, carved into
 *             floor(chunk / class) slots at offsets k * class. A request
 *             takes a slot of the class's most recently non-full chunk
 *             (the last freed slot there first, else the next never-used
 *             one); when every chunk of its class is full it takes a
 *             cached empty chunk, else reserves a new one.
 *   large     requests above `large` (--options large=SIZE, default the
 *             chunk size, at most the chunk size) get their own segment of
 *             their size, given back when they are freed.
 *   release   a chunk whose last slot is freed becomes a cached empty
 *             chunk, reusable by any class; with --options release=1 it
 *             goes back to the device at once instead.
 *   retries   when the capacity refuses a reservation, each retry (up to
 *             --retries) gives every cached empty chunk back and tries
 *             again; a retry with nothing to give back ends them.
 * Internal waste: class size - rounded size of the live requests, reported
 * at the lower-bound tick (plan->block_waste).
 * Complexity: O(log c) per allocation (c = number of classes, a binary
 * search), O(1) per free; O(chunks) for a retry.
 * Optimality: none; a pool trades fragmentation (partly used chunks,
 * slack at the end of a chunk, class rounding) for O(1) operations.
 */
#ifndef ML_STRATEGIES_POOL_H
#define ML_STRATEGIES_POOL_H

#include "sim/strategy.h"

extern const MlStrategy ml_strategy_pool;

#endif
