/* races.h — the races a trace may hide (docs/races.md). */
#ifndef ML_RACES_H
#define ML_RACES_H

#include "sim/analysis/check.h"

/* Races (docs/races.md).
 *
 * Cross-stream reuse: when buffer b (stream B) is placed over bytes whose
 * last occupant a lived on another stream A, the plan is safe only if A's
 * work on a happens before B's work on b. Happens-before is built from
 * the trace with vector clocks over streams and the host:
 *   - work on a stream (kernels, allocations; frees too when the trace
 *     has no kernels) is ordered after everything the host knew when it
 *     was enqueued;
 *   - device / context sync: the host learns every stream's position;
 *     stream sync: that stream's; event sync: what the event recorded;
 *   - event_record (id E on stream S) stores S's clock under E (MlEvent.id
 *     is the CUDA event id); stream_wait (stream S waits for E) joins it
 *     into S's clock, chains included (A -> C -> B).
 * A's work on a ends at A's last operation before a's free; B's work on b
 * starts at B's first kernel after b's allocation (at the allocation when
 * the trace has no kernels). Only the immediate previous occupants of each
 * byte are compared, in O(n log n) with an interval tree. Each issue:
 * kind cross-stream, a = the freed buffer, b = the new one, tick = b's
 * start, tick_b = a's end, offset / bytes = the reused range, streams.
 *
 * In-place hazards: for each MlInplaceWrite of the trace (graph inputs)
 * whose input is read after the op overwrote it (last_read > op_tick):
 * kind in-place, a = the input, b = the output, tick = op_tick, tick_b =
 * last_read, offset / bytes = the input's bytes in @plan.
 *
 * Appends to @issues. Segments are compared as the layout of
 * ml_check_plan() places them: bytes of different segments never alias. */
int ml_check_races (const MlBuffers *bufs, const MlPlan *plan, MlIssues *issues, MlError *err);

/* The in-place part alone, for @n writes given by the caller (a graph
 * importer that keeps its own list). Unknown ids are an error naming them. */
int ml_check_inplace (const MlBuffers *bufs, const MlPlan *plan, const MlInplaceWrite *writes, size_t n,
                      MlIssues *issues, MlError *err);

#endif
