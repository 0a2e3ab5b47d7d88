/* sim.h — the simulation driver: runs any strategy over a trace.
 *
 * Online strategies are replayed request by request (at one tick, frees
 * before allocations), with the capacity checked after each allocation;
 * the first refusal is recorded in plan->oom with its verdict, then the run
 * goes on without the capacity so that every metric covers the whole trace.
 * Offline strategies get the whole lifetime table at once. Either way the
 * result is a plan, timed, which ml_metrics_compute() measures.
 */
#ifndef ML_SIM_H
#define ML_SIM_H

#include "sim/metrics.h"
#include "sim/strategy.h"

/* Runs @strategy over @bufs with @knobs; returns the plan (caller frees).
 * Capacity: an online run that exceeds it records the first OOM and goes
 * on; an offline plan whose peak exceeds it records an OOM at the tick of
 * the first buffer that does not fit. Offline planners honour the graph
 * constraints of sim/constraints.h; an online strategy over buffers that
 * carry any gets ML_EUNSUPPORTED. */
int ml_sim_run (const MlBuffers *bufs, const MlStrategy *strategy, const MlKnobs *knobs,
                MlPlan **out, MlError *err) ML_MUST_CHECK;

/* A strategy's result with its metrics, for tables and reports. */
typedef struct {
  const MlStrategy *strategy;
  MlPlan           *plan;     /* owned */
  MlMetrics         metrics;
  int               status;   /* 0, or the error the strategy returned */
  char              error[ML_ERROR_MAX];   /* status < 0: the message, whole */
  MlInfeasible      infeasible; /* status ML_EINFEASIBLE: the subset named, if any */
} MlResult;

/* Runs and measures; on a strategy error fills @res->status and the
 * message instead of failing, so a comparison table can go on. Returns
 * negative only for host failures (out of memory). */
int  ml_sim_evaluate (const MlBuffers *bufs, const MlStrategy *strategy, const MlKnobs *knobs,
                      MlResult *res, MlError *err) ML_MUST_CHECK;
void ml_result_clear (MlResult *res);

/* Writes @res as the members of a JSON object, without its braces:
 * "strategy" (@name), then "error", or the metrics, what the plan knows
 * of itself and "oom" (docs/report-schema.md). 0, or ML_EIO when @fp has
 * an error. compare and the report both write their rows with it. */
int  ml_result_write_json_members (const MlResult *res, const char *name, const MlBuffers *bufs, FILE *fp,
                                   MlError *err) ML_MUST_CHECK;

/* The strategies a comparison runs, in order: the recorded plan first
 * when @bufs has one (whether @list names it or not), then @list without
 * it. NULL-terminated; the caller frees the array (not the strategies).
 * NULL when out of memory. */
const MlStrategy **ml_sim_lineup (const MlBuffers *bufs, const MlStrategy *const *list);

double ml_now (void);   /* monotonic seconds */

#endif
