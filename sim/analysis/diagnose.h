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

/* The trace's own recorded OOM (its first `oom` event), explained from
 * the recorded plan: what the real allocator held at that moment. */
typedef struct {
  bool     found;
  uint64_t tick;
  uint64_t index;          /* the entry in the device's trace (snapshots), else the event's index */
  uint64_t request, device_free;
  uint32_t stream, stack;  /* the OOM's stack (trace stack table), 0 = none */
  uint64_t live;           /* rounded bytes live (PyTorch: allocated) */
  bool     have_plan;      /* the trace has addresses: the numbers below are known */
  uint64_t reserved, cached_free, largest_cached;
  MlOomVerdict verdict;    /* fragmentation: cached free + device free >= request, else capacity */
} MlRecordedOom;

/* Finds and explains the recorded OOM of @bufs->trace; out->found is
 * false when it has none. */
int ml_recorded_oom (const MlBuffers *bufs, MlRecordedOom *out, MlError *err);

/* The device memory the OOM implies: reserved + device free (0 when the
 * reserved bytes are unknown). */
uint64_t ml_recorded_oom_capacity (const MlRecordedOom *rec);

/* @bufs with the refused request added as a buffer live for one tick at
 * the OOM ([tick, tick + 1): what the trace records after it is what the
 * program did without it), so that a strategy replaying it "fits" only if
 * it could have served the request. The caller frees *out. */
int ml_recorded_oom_replay (const MlBuffers *bufs, const MlRecordedOom *rec, MlBuffers **out, MlError *err);

/* Sets @plan->oom to the recorded OOM (the recorded plan failed there):
 * no buffer, the request, live, reserved, cached free + device free as the
 * free bytes, the largest cached block, the verdict. */
void ml_recorded_oom_mark (const MlRecordedOom *rec, const MlBuffers *bufs, MlPlan *plan);

/* Marks @plan, the recorded plan of @bufs, with the trace's recorded OOM
 * when it has one (ml_recorded_oom, then ml_recorded_oom_mark), so that
 * views and reports show the real allocator failing there; leaves it as
 * it is otherwise. 0, or a negative error code. */
int ml_recorded_oom_apply (const MlBuffers *bufs, MlPlan *plan, MlError *err);

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
  MlInfeasible infeasible; /* status ML_EINFEASIBLE: the buffers that alone cannot fit (exact) */
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
  uint64_t      rec_tick, rec_index, rec_request, rec_device_free;
  uint32_t      rec_stream, rec_stack;
  bool          rec_have_plan;     /* the trace has addresses: the numbers below are known */
  uint64_t      rec_live, rec_reserved, rec_cached_free, rec_largest_cached;
  MlOomVerdict  rec_verdict;       /* fragmentation: cached free + device free >= request */
  MlSiteBlame  *rec_sites;         /* live at the recorded OOM by call site, largest first */
  size_t        rec_n_sites, rec_n_live_total;
  uint64_t      rec_requested_live;
} MlDiagnosis;

/* Diagnoses @plan (run with capacity @capacity; 0 = no capacity: only the
 * recorded OOM, if any, is explained). @alternatives (NULL-terminated, may
 * be NULL) are run with @knobs and the same capacity. @recorded is the
 * trace's recorded OOM, found from the trace's own buffers (NULL: found
 * from @bufs; pass it when @bufs is the replay with the refused request,
 * ml_recorded_oom_replay()). Fills @out; the caller clears it with
 * ml_diagnosis_clear(). */
int  ml_diagnose (const MlBuffers *bufs, const MlPlan *plan, uint64_t capacity,
                  const MlStrategy *const *alternatives, const MlKnobs *knobs,
                  const MlRecordedOom *recorded, MlDiagnosis *out, MlError *err);
void ml_diagnosis_clear (MlDiagnosis *diag);

/* The first @max frames of @stack outside the framework, innermost
 * first, as "file:line function" joined by " <- " into @buf. Returns @buf
 * ("" when none). */
const char *ml_diagnosis_user_frames (const MlTrace *trace, uint32_t stack, size_t max, char *buf, size_t len);

/* The label a blame row shows ("model.py:40:forward", "(unnamed)"). */
const char *ml_diagnosis_site_label (const MlBuffers *bufs, uint32_t site);

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

/* Who holds the memory at @tick: the buffers live there ([start, end)
 * holds @tick) grouped by call site (else name), largest first, as the
 * diagnosis groups them. *@sites (caller frees) gets *@n_sites entries;
 * *@n_live the buffers counted. */
int  ml_site_blame_at (const MlBuffers *bufs, uint64_t tick, MlSiteBlame **sites, size_t *n_sites, size_t *n_live,
                       MlError *err) ML_MUST_CHECK;

#endif
