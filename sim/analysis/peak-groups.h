/* peak-groups.h — the peaks a reader should see, and whether they recur.
 *
 * A training loop reaches the same peak every iteration: a list of the
 * highest local maxima shows one level many times over ("19.37 GiB" in
 * eleven rows), and a plateau's wiggles (a buffer freed and another
 * allocated at the top) show it again a few ticks apart. Here the peaks
 * are grouped:
 *
 *  1. Live bytes after each tick (rounded sizes, as the lower bound
 *     counts them) and their local maxima (a plateau counts once, at its
 *     first tick).
 *  2. Each local maximum's prominence: how far live bytes fall from it
 *     before they reach a higher peak (or an earlier one as high: ties go
 *     to the first), the lowest point between them — the topographic
 *     prominence. A peak with no higher one before or after has its whole
 *     height. Peaks whose prominence is under ML_PEAK_PROMINENCE of the
 *     highest peak are wiggles on the side of another one and are left
 *     out.
 *  3. The rest, highest first, in groups: a group takes every peak within
 *     ML_PEAK_SAME of its highest (its "level"), in time order: the
 *     occurrences. Their mean spacing is "every ~N ticks" (and in real
 *     time when the trace has times).
 *  4. The trace repeats when a group has at least three occurrences spaced
 *     regularly (every gap within ML_PEAK_REGULAR of the mean gap); the
 *     first such group, highest first, sets the iterations: a boundary
 *     at the lowest point between each two occurrences (its first tick),
 *     where one iteration has let go of what it held and the next has
 *     not started.
 *
 * O(n log n) in the buffers; memory O(change points). Nothing here
 * allocates per group beyond its tick list.
 */
#ifndef ML_ANALYSIS_PEAK_GROUPS_H
#define ML_ANALYSIS_PEAK_GROUPS_H

#include "sim/buffers.h"

/* A peak must stand this far above what lies between it and a higher one
 * (a fraction of the highest peak) to be listed. */
#define ML_PEAK_PROMINENCE 0.05
/* Peaks within this fraction of a group's level are one group. */
#define ML_PEAK_SAME 0.001
/* Gaps within this fraction of their mean are regular. */
#define ML_PEAK_REGULAR 0.25

typedef struct {
  uint64_t  live;        /* the level: the group's highest peak (rounded bytes) */
  uint64_t  live_min;    /* its lowest (== live when all are identical)        */
  uint64_t *ticks;       /* each occurrence's tick, in time order (owned)      */
  uint64_t *lives;       /* and its live bytes                                 */
  size_t    n;           /* occurrences (>= 1)                                 */
  uint64_t  top_tick;    /* the first occurrence at the level                  */
  double    every_ticks; /* mean gap between occurrences; 0 when n == 1        */
  double    every_ns;    /* the same in real time; < 0 when the trace has no
                            times at those ticks                               */
  bool      regular;     /* n >= 3 and every gap within ML_PEAK_REGULAR of the
                            mean                                               */
} MlPeakGroup;

typedef struct {
  MlPeakGroup *groups;      /* highest first (owned)                         */
  size_t       n;           /* listed groups (at most the caller's cap)      */
  size_t       n_all;       /* groups found before the cap                   */
  size_t       n_maxima;    /* local maxima seen (for "N wiggles left out")  */
  /* iterations, when the trace repeats (a regular group): boundaries in
   * time order, one between each two occurrences of that group */
  int          iter_group;  /* its index in groups, -1 when none repeats     */
  uint64_t    *boundaries;  /* owned                                         */
  size_t       n_boundaries;
} MlPeakGroups;

/* Groups the peaks of @bufs (see above), keeping at most @max_groups
 * (0 = all). The iterations are found among all groups, listed or not.
 * Fills @out (the caller frees it with ml_peak_groups_free) only on
 * success. */
int  ml_peak_groups_find (const MlBuffers *bufs, size_t max_groups, MlPeakGroups *out, MlError *err)
  __attribute__ ((warn_unused_result));
void ml_peak_groups_free (MlPeakGroups *groups);

/* "19.37 GiB, 17 times, every ~324 ticks (~1.21 s)", "3.58 GiB, 2 times,
 * 4620 ticks apart (~12.3 ms)" or "19.37 GiB" for a single peak, "up to
 * 19.37 GiB, ..." when a group's peaks print differently: the one
 * line every list of peaks prints (CLI, report, viewer). Returns @buf. */
char *ml_peak_group_describe (const MlPeakGroup *group, char *buf, size_t len);

#endif
