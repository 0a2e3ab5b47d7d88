/* caching-tune.h — "what should I change?": a trace replayed
 * (caching-replay.h) under a grid of PyTorch allocator settings, each row
 * against the recorded settings, and the answer.
 *
 * Rows: the recorded settings from the recorded state (warm), the same
 * from a cold start (for comparison), then one row per setting tried,
 * each the recorded settings with a change (never one already on). The
 * default grid: expandable_segments toggled; max_split_size_mb at powers
 * of two around the 50th, 90th and 99th percentiles of the trace's large
 * requests (at least 20); roundup_power2_divisions 4, 8 and
 * [256:1,512:2,1024:4,>:8]; garbage_collection_threshold 0.6 and 0.8,
 * each with per_process_memory_fraction 0.99 (PyTorch collects only under
 * a fraction below 1; only with a capacity); backend:cudaMallocAsync (the
 * model, from PyTorch's defaults: it ignores the native settings). Sweeps
 * ("KEY=V1,V2", several) replace the grid by their cartesian product.
 *
 * The answer, under a capacity the recorded settings exceed: the row that
 * fits with the fewest settings changed, then the least reserved, among
 * the emulated rows (a model row only when no emulated one fits); when
 * none fits, the shortfall: the bytes live at the recorded row's OOM plus
 * its request, against the capacity. When the recorded settings fit (or
 * no capacity is known): the row that reserves least below them, with the
 * same order.
 */
#ifndef ML_STRATEGIES_CACHING_TUNE_H
#define ML_STRATEGIES_CACHING_TUNE_H

#include <stdio.h>

#include "strategies/caching-replay.h"

typedef struct {
  char          *change;     /* owned: the settings changed, PyTorch's syntax ("" for the recorded) */
  char          *settings;   /* owned: all the settings it ran with */
  unsigned       n_changed;  /* settings that differ from the recorded */
  bool           cold;       /* the recorded settings from an empty device */
  int            status;     /* 0, or the error of its replay */
  char           error[ML_ERROR_MAX];
  double         seconds;
  MlCacheReplay  r;
} MlTuneRow;

typedef enum {
  ML_TUNE_NO_CAPACITY = 0,   /* no capacity: the least reserved */
  ML_TUNE_FITS,              /* the recorded settings fit: the least reserved below them */
  ML_TUNE_FIX,               /* they do not: best names the cheapest that does */
  ML_TUNE_NONE_FITS,         /* no row fits */
} MlTuneVerdict;

typedef struct {
  uint64_t      capacity;        /* the device's memory, 0 = none */
  bool          capacity_from_oom;   /* the recorded OOM's reserved + device free */
  bool          warm;            /* rows start from the recorded state */
  char         *recorded;        /* owned: the recorded settings, PyTorch's syntax */
  MlTuneRow    *rows;            /* rows[0] the recorded settings; rows[1] cold when warm */
  size_t        n_rows;
  MlTuneVerdict verdict;
  long          best;            /* the row of the answer, -1 = none */
  uint64_t      shortfall;       /* NONE_FITS: live + request - capacity at the recorded OOM (0: they fit) */
  uint64_t      need;            /* NONE_FITS: the live bytes plus the request */
} MlTune;

typedef struct {
  uint64_t           capacity;   /* 0: the recorded OOM's device memory, if any */
  const char *const *sweeps;     /* NULL-terminated "KEY=V1,V2,..." or NULL: the default grid */
  unsigned           jobs;       /* rows replayed at once (threads), at least 1 */
  bool               cold;       /* every row from an empty device */
  bool               curves;     /* keep the reserved curves of rows[0] and the answer's */
} MlTuneOpts;

/* Runs the grid over @trace. ML_EUSAGE names a bad sweep or a recorded
 * setting the emulation refuses; a row whose setting is refused keeps its
 * error and the others go on. Free with ml_tune_free(). */
int  ml_tune_run (const MlTrace *trace, const MlTuneOpts *opts, MlTune **out, MlError *err) ML_MUST_CHECK;
void ml_tune_free (MlTune *tune);

/* Writes @tune as one JSON object (docs/report-schema.md, TUNE): the
 * capacity, the recorded settings, each row with its numbers and strands,
 * the answer. 0, or ML_EIO on a write error. */
int  ml_tune_write_json (FILE *fp, const MlTune *tune, MlError *err) ML_MUST_CHECK;

#endif
