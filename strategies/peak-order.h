/* peak-order.h — the peak-first orders (peak-order.c), a seed of the
 * searching planners (genetic). Not public. */
#ifndef ML_STRATEGIES_PEAK_ORDER_H
#define ML_STRATEGIES_PEAK_ORDER_H

#include "sim/sim.h"

/* How a group of buffers is sorted: largest size first (then the
 * earliest start, then index), or longest lifetime first (then largest
 * size, then index). */
typedef enum {
  ML_PEAK_BY_SIZE,
  ML_PEAK_BY_LIFETIME,
} MlPeakKey;

/* Fills @order (a permutation of 0..n-1): the buffers live at the lower
 * bound's tick (bufs->lower_bound_tick) first, sorted by @clique, then
 * the others, sorted by @rest. The first group overlaps one another in
 * time, so the lowest fit stacks them from 0 without a hole at that tick:
 * the plan's height there is the lower bound, whatever the rest does.
 * ML_ENOMEM when out of memory. */
int _ml_peak_order (const MlBuffers *bufs, MlPeakKey clique, MlPeakKey rest, uint32_t *order, MlError *err);

#endif
