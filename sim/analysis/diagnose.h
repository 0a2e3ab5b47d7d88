/* diagnose.h — why an allocation failed under a capacity, and what would
 * have helped.
 *
 * For a plan run under a capacity (plan->oom, see sim.h) the diagnosis
 * gives: the first failing request and the verdict (fragmentation: the
 * free bytes under the capacity would hold the request but no block is
 * large enough; capacity: not enough bytes); live, reserved and free bytes
 * and the largest free block at that moment; the live buffers to blame,
 * grouped by call site (or name), largest first; which other strategies
 * fit under the same capacity and with how much headroom; and what other
 * alignments (rounding) would change: the bytes live at the failing tick
 * and the trace's lower bound under each.
 *
 * A trace with a recorded `oom` event (a PyTorch snapshot) also gets that
 * OOM explained from the recorded plan: the request, the device's free
 * bytes, the bytes cached in reserved segments and their largest block,
 * and the same verdict.
 */
#ifndef ML_DIAGNOSE_H
#define ML_DIAGNOSE_H

#include <stdio.h>

#include "sim/sim.h"

typedef struct {
  uint32_t site;       /* interned call site, else the buffer's name; 0 = none */
  uint64_t bytes;      /* rounded bytes live at the OOM */
  size_t   count;
  uint32_t largest;    /* index of its largest buffer */
} MlSiteBlame;

typedef struct {
  uint64_t align;
  uint64_t live_at_oom;  /* live bytes at the failing tick plus the request, rounded to align */
  uint64_t lower_bound;  /* the trace's max live bytes rounded to align */
} MlAlignWhatIf;

typedef struct {
  const char *name;      /* the strategy's (static) name */
  int         status;    /* 0, or the error the strategy returned */
  uint64_t    peak;
  MlOom       oom;       /* oom.hit false: it fits */
  double      seconds;
} MlDiagAlt;

typedef struct {
  uint64_t      capacity;
  char          strategy[64];
  MlOom         oom;             /* of the diagnosed plan; hit = false: it fits;
                                    hit with request 0: over the capacity, no
                                    request to blame (blame and live_at_oom empty) */
  uint64_t      peak;            /* of the diagnosed plan */
  uint64_t      lower_bound;     /* of the trace: no plan needs less */
  uint64_t      requested_live;  /* requested (unrounded) bytes live at the OOM */
  MlSiteBlame  *sites;           /* by bytes, largest first */
  size_t        n_sites;
  uint32_t     *live;            /* live buffers at the OOM, largest first (at most 100) */
  size_t        n_live, n_live_total;
  MlAlignWhatIf what_if[8];
  size_t        n_what_if;
  MlDiagAlt    *alts;
  size_t        n_alts;

  /* the trace's own recorded OOM (first `oom` event) */
  bool          recorded;
  uint64_t      rec_tick, rec_request, rec_device_free;
  uint32_t      rec_stream;
  bool          rec_have_plan;     /* the trace has addresses: the numbers below are known */
  uint64_t      rec_live, rec_reserved, rec_cached_free, rec_largest_cached;
  MlOomVerdict  rec_verdict;       /* fragmentation: cached free + device free >= request */
} MlDiagnosis;

/* Diagnoses @plan (run with capacity @capacity; 0 = no capacity: only the
 * recorded OOM, if any, is explained). @alternatives (NULL-terminated, may
 * be NULL) are run with @knobs and the same capacity. Fills @out; the
 * caller clears it with ml_diagnosis_clear(). */
int  ml_diagnose (const MlBuffers *bufs, const MlPlan *plan, uint64_t capacity,
                  const MlStrategy *const *alternatives, const MlKnobs *knobs,
                  MlDiagnosis *out, MlError *err);
void ml_diagnosis_clear (MlDiagnosis *diag);

/* The label a blame row shows ("model.py:40:forward", "(unnamed)"). */
const char *ml_diagnosis_site_label (const MlBuffers *bufs, uint32_t site);

/* The diagnosis as one JSON object (docs/report-schema.md, "diagnosis"). */
/* The diagnosis in words, written once for every front end (the CLI,
 * the Markdown and HTML reports); no markup. Each writes into @buf (@len
 * bytes) and returns it.
 *
 * The headline: "The best-fit plan fits under 2.00 GiB (peak 1.50 GiB,
 * headroom 512.00 MiB).", "... peaks at X, over the capacity Y." or
 * "... runs out of memory under X at tick T on a R request." */
const char *ml_diagnosis_headline (const MlDiagnosis *diag, char *buf, size_t len);
/* Why @oom got its verdict: "X free under the capacity, but the largest
 * free block is Y", "only X free under the capacity for a R request". */
const char *ml_oom_reason (const MlOom *oom, char *buf, size_t len);
/* Why the recorded OOM got its verdict (rec_have_plan): "cached free +
 * device free = X would hold the request, but no block is large enough"
 * or "... is less than the request". */
const char *ml_diagnosis_recorded_reason (const MlDiagnosis *diag, char *buf, size_t len);

int  ml_diagnosis_write_json (const MlDiagnosis *diag, const MlBuffers *bufs, FILE *fp, MlError *err) ML_MUST_CHECK;

#endif
