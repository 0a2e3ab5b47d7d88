/* recorded.h — the "recorded" plan: what the real allocator did, from the
 * addresses in the trace, as a plan and as the strategy table's first
 * entry (ML_STRATEGY_RECORDED). */
#ifndef ML_RECORDED_H
#define ML_RECORDED_H

#include "sim/strategy.h"

/* The recorded plan (segments from segment events when present, else one
 * arena from the lowest to the highest address). segment_map /
 * segment_unmap are pages of expandable segments: a map inside or right
 * after a live expandable segment's range belongs to it (else it starts
 * one), an unmap ends the mappings it covers (what is left of them goes
 * on), so the reserved bytes follow the events exactly. ML_EUNSUPPORTED
 * when the trace has no addresses. On success *out is the caller's
 * (ml_plan_free). */
int ml_plan_from_recorded (const MlBuffers *bufs, MlPlan **out, MlError *err) ML_MUST_CHECK;
/* True when @bufs has a recorded plan (some buffer has its address). */
bool ml_plan_has_recorded (const MlBuffers *bufs);

/* The recorded plan as a table entry: its plan() is ml_plan_from_recorded. */
extern const MlStrategy ml_strategy_recorded;

#endif
