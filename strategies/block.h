/* block.h — ge-block: a block assigner in the style of Ascend GE's
 * BlockMemAssigner (BinaryBlockMemAssigner, MaxBlockMemAssigner).
 *
 * Algorithm: walk the buffers in time (at a tick, frees before
 * allocations). A request is rounded up to its block class; a free block
 * of its class is reused (the last one freed), else a new block is
 * appended at the top of the arena. Blocks are never split or merged, so
 * what a block once held bounds what it can hold again.
 *   classes=binary (default)  class = the next power of two at or above
 *                             the size; a block has its class's size
 *   classes=max               one class: the smallest free block that is
 *                             large enough, else a new block of the size
 * Complexity: O(n log n) for the walk; binary O(1) per request, max O(f)
 * for f free blocks. Optimality: none; a baseline for what size classes
 * cost against the lower bound (docs/strategies.md).
 */
#ifndef ML_STRATEGIES_BLOCK_H
#define ML_STRATEGIES_BLOCK_H

#include "sim/strategy.h"

extern const MlStrategy ml_strategy_ge_block;

#endif
