/* metrics.h — the numbers DESIGN.md defines, computed from any plan.
 *
 *   lower_bound   max over ticks of live rounded bytes (from MlBuffers)
 *   peak          static plan: max(offset + size); online: the largest
 *                 reserved total over time
 *   overhead      peak / lower_bound - 1
 *   fragmentation(t) = 1 - largest free block / total free bytes, within
 *                 the reserved space at tick t (0 when nothing is free);
 *                 its maximum, its time-weighted mean over the trace, and
 *                 its value at the peak (the lower-bound tick)
 *   internal_waste rounded - requested bytes of the buffers live at the
 *                 lower-bound tick
 *
 * One sweep in O(n log n) over the buffers' starts and ends with a segment
 * tree over the plan's distinct addresses, so it never allocates per tick.
 */
#ifndef ML_METRICS_H
#define ML_METRICS_H

#include "sim/plan.h"

typedef struct {
  uint64_t lower_bound;
  uint64_t lower_bound_tick;
  uint64_t peak;
  uint64_t peak_tick;          /* where the reserved total first reached the peak */
  double   overhead;
  double   frag_max;
  uint64_t frag_max_tick;
  double   frag_mean;
  double   frag_at_peak;
  uint64_t internal_waste;
  uint64_t requested_at_peak;  /* requested bytes live at the lower-bound tick */
  /* the plan's free space is not known (MlPlan.free_unknown): the frag_*
   * fields are 0 and mean nothing; writers show "n/a" (JSON: null) */
  bool     frag_unknown;
} MlMetrics;

/* One point per tick where something changed (after all of the tick's
 * frees and allocations). */
typedef struct {
  uint64_t tick;
  uint64_t live;
  uint64_t reserved;
  uint64_t largest_free;
  float    frag;
} MlCurvePoint;

typedef struct {
  MlCurvePoint *pts;
  size_t        n;
} MlCurve;

/* Computes @out for @plan over @bufs. When @curve is not NULL it receives
 * the curve (caller frees with ml_curve_free). */
int  ml_metrics_compute (const MlBuffers *bufs, const MlPlan *plan, MlMetrics *out, MlCurve *curve, MlError *err);
void ml_curve_free (MlCurve *curve);

/* The largest free block and the free bytes within the reserved space of
 * @plan right after the allocations at @tick (used by OOM reports). */
int  ml_metrics_free_at (const MlBuffers *bufs, const MlPlan *plan, uint64_t tick,
                         uint64_t *largest_free, uint64_t *free_bytes, MlError *err);

#endif
