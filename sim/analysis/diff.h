/* diff.h — two runs compared: peaks, and bytes per call site at each peak.
 *
 * A and B are any two traces (snapshots, Kineto, JSONL) of what should be
 * the same program. Their allocations are paired per call site in order:
 * the k-th allocation from a site in A with the k-th from that site in B;
 * when both traces carry marks (`mark` events, PyTorch annotations) with
 * names in common, the pairing restarts at each mark they share, so an
 * extra step in one run does not shift every pair after it. The report:
 * each run's peak (the most live bytes, rounded as the buffers are) and
 * its tick, the difference, and per call site the bytes live at A's peak
 * and at B's peak, the site's own maximum in each run (the most of its
 * bytes live at once, wherever each run's peak is), the change, the
 * allocations of each run and how many
 * paired allocations changed size; sites only in B are "new", only in A
 * "gone". Rows are ordered by the size of the change, largest first.
 * O(n log n) in the buffers of both.
 */
#ifndef ML_ANALYSIS_DIFF_H
#define ML_ANALYSIS_DIFF_H

#include <stdio.h>

#include "sim/buffers.h"

typedef enum {
  ML_DIFF_BOTH = 0,   /* the site allocates in both runs */
  ML_DIFF_NEW,        /* only in B                       */
  ML_DIFF_GONE,       /* only in A                       */
} MlDiffStatus;

typedef struct {
  char        *site;       /* owned: the call site, else the name, else "(no call site)" */
  uint64_t     a_bytes;    /* live at A's peak */
  uint64_t     b_bytes;    /* live at B's peak */
  /* the site's own maximum over each run: the most of its bytes live at
   * once, wherever that falls, and the first tick it does (like with
   * like when the two peaks fall in different phases) */
  uint64_t     a_max, b_max;
  uint64_t     a_max_tick, b_max_tick;
  int64_t      change;     /* b_bytes - a_bytes */
  size_t       a_allocs, b_allocs;
  size_t       resized;    /* paired allocations whose size differs */
  MlDiffStatus status;
} MlDiffRow;

typedef struct {
  uint64_t   a_peak, b_peak;            /* most live bytes at once */
  uint64_t   a_peak_tick, b_peak_tick;
  uint64_t   a_end, b_end;              /* ticks of each */
  size_t     anchors;                   /* marks both runs share (0: aligned by event order) */
  size_t     pairs;                     /* allocations paired */
  MlDiffRow *rows;
  size_t     n_rows;
} MlDiff;

/* Compares @a with @b. Fills @out (ml_diff_clear frees it). */
int  ml_diff_compute (const MlBuffers *a, const MlBuffers *b, MlDiff *out, MlError *err)
  __attribute__ ((warn_unused_result));
void ml_diff_clear   (MlDiff *diff);

const char *ml_diff_status_name (MlDiffStatus status);

/* The call site a buffer is counted under (borrowed; "(no call site)"). */
const char *ml_diff_site (const MlBuffers *bufs, size_t buffer);

#endif
