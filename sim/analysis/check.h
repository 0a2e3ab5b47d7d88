/* check.h — what makes a plan wrong (conflicts, alignment, bounds); the
 * issue list the checks and races (races.h) share.
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
 *   constraint    a graph-compiler constraint the plan breaks
 *                 (sim/constraints.h): a zero-copy buffer that shares its
 *                 segment, a fixed buffer away from its offset, bytes of a
 *                 no_reuse or fixed buffer used by another buffer at any
 *                 time, a contiguous group not back to back, a block over
 *                 max_block
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
  ML_ISSUE_CONSTRAINT,
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
 * O(n log n + k), and broken constraints (O(n) per no_reuse or fixed
 * buffer). Appends to @issues. */
int ml_check_plan (const MlBuffers *bufs, const MlPlan *plan, MlIssues *issues, MlError *err);

#endif
