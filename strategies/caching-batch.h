/* caching-batch.h — "which batch fits": runs of one program at two or more
 * batch sizes, each allocation's size fitted as a function of the batch,
 * the reserved peak predicted at other batches under the caching
 * emulation (caching-replay.h), and the largest batch that fits.
 *
 * Allocations are matched across the runs by their call site (else their
 * name) and their ordinal among that site's allocations; each matched
 * allocation gets a least-squares line size = fixed + per_sample x batch
 * (two runs: the line through both). A run at batch B is then the run of
 * the largest batch (the template: its order of events) with every
 * matched size from its line at B (at least 1 byte; an allocation not
 * found in every run keeps its size), replayed from an empty device. The
 * largest batch that fits: exponential then binary search over B for the
 * last one whose replay does not run out of memory under the capacity
 * (it assumes a larger batch never needs less). Uncertainty: with three
 * runs or more, each run's reserved peak is predicted from the others
 * (leave one out) and the largest relative error is reported; with two,
 * none can be estimated and the prediction holds only if every size is
 * affine in the batch.
 *
 * Complexity: O(n log n) to match, then one replay (O(events log f)) per
 * batch tried.
 */
#ifndef ML_STRATEGIES_CACHING_BATCH_H
#define ML_STRATEGIES_CACHING_BATCH_H

#include "sim/trace.h"
#include "sim/base/error.h"

typedef struct {
  uint64_t batch;
  bool     given;            /* one of the runs is at this batch */
  uint64_t actual;           /* given: its own replay's reserved peak (recorded settings) */
  uint64_t predicted;        /* reserved peak predicted, recorded settings */
  uint64_t predicted_alt;    /* under the other settings (0: none given) */
  bool     fits, fits_alt;   /* under the capacity */
} MlBatchPoint;

typedef struct {
  size_t        n_runs;
  size_t        template_allocs;  /* allocations of the template run */
  size_t        matched;          /* of them, found in every run */
  double        loo_error;        /* largest relative error leaving one run out; < 0: fewer than three runs */
  uint64_t      capacity;
  uint64_t      largest, largest_alt;  /* the largest batch that fits (0: not even 1) */
  bool          capped;           /* the search stopped at its limit (2^20): it fits further */
  MlBatchPoint *points;           /* owned: the runs' batches, then the largest ones that fit */
  size_t        n_points;
} MlBatchFit;

/* Fits @runs (@n >= 2, at the distinct @batches) and predicts under the
 * settings @options (NULL: the template's recorded ones) and @alt (NULL:
 * none; e.g. tune's answer), with the device's memory @capacity (0: no
 * search for the largest batch). ML_EUSAGE: fewer than two runs, two at
 * the same batch. Clear with ml_batch_fit_clear(). */
int  ml_batch_fit (const MlTrace *const *runs, const uint64_t *batches, size_t n, const char *options,
                   const char *alt, uint64_t capacity, MlBatchFit *out, MlError *err) ML_MUST_CHECK;
void ml_batch_fit_clear (MlBatchFit *fit);

#endif
