/* check.h — what makes a plan wrong, and the races a trace may hide.
 *
 * Kinds (DESIGN.md "Races"):
 *   conflict      two buffers whose lifetimes and byte ranges overlap in
 *                 one segment
 *   misaligned    an offset that is not a multiple of the alignment
 *   outside       a buffer past its segment's end, or placed while its
 *                 segment is not reserved
 *   cross-stream  bytes freed on stream A handed to a buffer on stream B
 *                 with nothing ordering A's work before B's
 *   in-place      an op writes its output over an input a later op reads
 */
#ifndef ML_CHECK_H
#define ML_CHECK_H

#include "sim/plan.h"

typedef enum {
  ML_ISSUE_CONFLICT,
  ML_ISSUE_MISALIGNED,
  ML_ISSUE_OUTSIDE,
  ML_ISSUE_CROSS_STREAM,
  ML_ISSUE_INPLACE,
  ML_ISSUE__COUNT
} MlIssueKind;

typedef struct {
  MlIssueKind kind;
  uint32_t    a, b;          /* buffer indexes (b = a when one buffer) */
  uint64_t    tick;          /* where it shows */
  uint64_t    tick_b;        /* second tick (the earlier free, ...) */
  uint64_t    offset, bytes; /* overlapping range, within the segment */
  uint32_t    segment;
  uint32_t    stream_a, stream_b;
  char        why[160];
} MlIssue;

typedef struct {
  MlIssue *items;
  size_t   n, cap;
  size_t   total[ML_ISSUE__COUNT];  /* found, even past the kept ones */
  size_t   max_kept;                /* 0 = 1000 */
} MlIssues;

void ml_issues_init  (MlIssues *issues);
void ml_issues_clear (MlIssues *issues);
int  ml_issues_add   (MlIssues *issues, const MlIssue *issue);
size_t ml_issues_count (const MlIssues *issues);
const char *ml_issue_kind_name (MlIssueKind kind);

/* Finds conflicts, misaligned offsets and buffers outside their segment in
 * O(n log n + k). Appends to @issues. */
int ml_check_plan (const MlBuffers *bufs, const MlPlan *plan, MlIssues *issues, MlError *err);

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
