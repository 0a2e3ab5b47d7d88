/* planner-private.h — what the offline planners share (not public).
 *
 * The placer answers the question every greedy planner asks: the lowest
 * offset at which buffer b fits beside the buffers already placed whose
 * lifetimes overlap b's. Placed buffers are indexed by time in buckets of
 * compressed ticks, each holding the rectangles that touch it sorted by
 * offset (placer.c); a placement sweeps the entries of b's buckets from
 * the bottom up to the answer, so it costs the entries of those buckets
 * below the answer (about 1,200 on a random trace with 1,000 buffers
 * live), never a scan of every placement.
 */
#ifndef ML_STRATEGIES_PLANNER_PRIVATE_H
#define ML_STRATEGIES_PLANNER_PRIVATE_H

#include "sim/strategy.h"

typedef struct MlPlacer MlPlacer;

/* Builds the time index for @bufs (borrowed; must outlive the placer). */
int      _ml_placer_new   (const MlBuffers *bufs, MlPlacer **out, MlError *err);
void     _ml_placer_free  (MlPlacer *p);
/* Forgets every placement (O(touched nodes)). */
void     _ml_placer_reset (MlPlacer *p);
/* Places buffer @b at the lowest offset that fits and is at least @min_off
 * (0 for plain greedy); returns that offset. Zero-size buffers go to 0. */
uint64_t _ml_placer_place (MlPlacer *p, uint32_t b, uint64_t min_off);
/* True when growing the index ran out of memory (placements since are
 * unreliable; the caller returns ML_ENOMEM). */
bool     _ml_placer_failed (const MlPlacer *p);
/* Places @b at @offset without looking (the caller knows it fits). */
void     _ml_placer_put   (MlPlacer *p, uint32_t b, uint64_t offset);

/* Takes placed buffer @b out again. */
void     _ml_placer_remove (MlPlacer *p, uint32_t b);
/* The highest top placed (the peak); refreshes the maxima that removals
 * left stale. */
uint64_t _ml_placer_peak (MlPlacer *p);
/* Caps the entries of a bucket's leaves and the children of its inner
 * nodes (at most 64 and 32, the defaults; for tests, whose small
 * instances then grow trees of several levels). Call before placing. */
void     _ml_placer_set_node_limits (MlPlacer *p, uint32_t leaf, uint32_t fan);
/* The bucket entries and summaries the placements looked at so far (a
 * measure of their work, for tests). */
uint64_t _ml_placer_work (const MlPlacer *p);
/* The width of the placer's time buckets in compressed ticks (for tests). */
uint32_t _ml_placer_bucket_leaves (const MlPlacer *p);
/* A random placed buffer whose lifetime overlaps @b's (or @b itself when
 * none); @rng is an xorshift state. */
uint32_t _ml_placer_random_neighbour (MlPlacer *p, uint32_t b, uint64_t *rng);

/* Places all buffers in @order (a permutation of 0..n-1), lowest fit each;
 * writes @offsets (n) and returns the peak through @peak. The placer
 * keeps @offsets as its own record of them until its next reset: take a
 * buffer out (_ml_placer_remove) only while @offsets lives. Stops with
 * ML_ETIMEOUT once ml_now () passes @deadline (0: none) and ML_ECANCELLED
 * when @knobs' progress asks to; reports progress through @knobs (may be
 * NULL). *placed (may be NULL): how many were placed. */
int _ml_place_in_order (const MlBuffers *bufs, MlPlacer *p, const uint32_t *order,
                        uint64_t *offsets, uint64_t *peak, const MlKnobs *knobs, double deadline,
                        size_t *placed);

/* Orders of the greedy family; each fills @order (n). */
typedef enum {
  ML_ORDER_SIZE,       /* size desc, then longer lifetime, then index       */
  ML_ORDER_BREADTH,    /* TFLite's greedy by breadth (see greedy.h)         */
  ML_ORDER_CONFLICT,   /* most conflicting (overlapping) buffers first       */
  ML_ORDER_AREA,       /* size x lifetime desc                              */
  ML_ORDER_LIFETIME,   /* longest lifetime first, then size                  */
  ML_ORDER__COUNT
} MlOrder;

int _ml_greedy_order (const MlBuffers *bufs, MlOrder kind, uint32_t *order, MlError *err);
const char *_ml_order_name (MlOrder kind);

/* Runs every greedy order and keeps the smallest peak: fills @offsets and
 * returns the winning order through @best (may be NULL) and its peak.
 * At @deadline (0: none) it keeps the best order finished so far
 * (*tried, may be NULL: how many); ML_ETIMEOUT when none finished. */
int _ml_greedy_best (const MlBuffers *bufs, uint64_t *offsets, MlOrder *best,
                     uint64_t *peak, const MlKnobs *knobs, double deadline, int *tried, MlError *err);

/* Peak of @offsets. */
uint64_t _ml_offsets_peak (const MlBuffers *bufs, const uint64_t *offsets);

/* Time limit in seconds from the knobs (0 = @dflt). */
static inline double
_ml_time_limit (const MlKnobs *knobs, double dflt)
{
  return knobs && knobs->time_limit > 0 ? knobs->time_limit : dflt;
}

/* The deadline --time-limit sets (ml_now () seconds), 0 when none was
 * given: the greedy planners, and the greedy seeds of the searching ones,
 * stop only at a limit the user asked for. */
double _ml_user_deadline (const MlKnobs *knobs);

/* True when the caller asked to stop. */
static inline bool
_ml_cancelled (const MlKnobs *knobs)
{
  return knobs && knobs->progress && knobs->progress->cancelled && *knobs->progress->cancelled;
}

static inline void
_ml_report (const MlKnobs *knobs, double fraction, const char *what)
{
  if (knobs && knobs->progress && knobs->progress->report)
    knobs->progress->report (knobs->progress->user, fraction, what);
}

#endif
