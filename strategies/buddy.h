/* buddy.h — a binary buddy allocator (Knowlton 1965; Knuth, TAOCP 2.5).
 *
 * Algorithm: memory comes in power-of-two blocks aligned to their size.
 * A request takes a block of the smallest power of two that holds it (at
 * least the alignment). The free blocks of each size are kept in a list
 * (last freed first, as Linux's page allocator does); when the list of the
 * wanted size is empty, the smallest larger free block is split in halves
 * until one has the wanted size, the upper halves going to their lists.
 * A freed block merges with its buddy (the other half of the block they
 * were split from: offset XOR size) while the buddy is wholly free, so
 * free memory never stays cut into more pieces than the live blocks force.
 *
 * Where the blocks live:
 *   segments  (default) segments of --chunk bytes rounded up to a power
 *             of two, each one buddy tree, reserved when no free block
 *             fits; a request larger than a segment gets a segment of its
 *             own size, given back when it is freed. A segment that is
 *             wholly free again stays cached, or goes back to the device
 *             at once with --options release=1.
 *   arena     --options arena=1 with --capacity C: one segment of C bytes
 *             reserved at the start (the whole device, as a buddy system
 *             over device memory would take it), cut into the aligned
 *             powers of two that add up to C (C's binary digits), each a
 *             buddy tree. A request no free block holds is an OOM; after
 *             it the run goes on in segments.
 * Retries: when the capacity refuses a segment, each retry (up to
 * --retries) gives back every cached wholly free segment and tries again.
 * Internal waste: block size - rounded size of the live requests, reported
 * at the lower-bound tick (plan->block_waste); it is what buddy systems
 * pay for their speed (up to half of each block).
 * Complexity: O(log(S / a)) per operation (splits and merges, one hash
 * lookup each); O(segments) for a retry.
 * Optimality: none.
 */
#ifndef ML_STRATEGIES_BUDDY_H
#define ML_STRATEGIES_BUDDY_H

#include "sim/strategy.h"

extern const MlStrategy ml_strategy_buddy;

#endif
