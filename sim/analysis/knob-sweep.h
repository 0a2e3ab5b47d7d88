/* knob-sweep.h — one knob over a list of values: every strategy run once
 * per value, everything else the same, so a user tuning an allocator gets
 * one row per value (peak, overhead, fragmentation, OOM).
 *
 * The spec is "KNOB=v1,v2,...": KNOB is chunk, align, capacity, retries,
 * seed or time-limit (written as on the command line), or any key of
 * --options (the value replaces that key in the options, the rest stay).
 * Each row is exactly the run `compare` would make with that knob given
 * on its own (tests check it); align rebuilds the lifetimes (the rounded
 * sizes and the lower bound change with it).
 */
#ifndef ML_KNOB_SWEEP_H
#define ML_KNOB_SWEEP_H

#include <stdio.h>

#include "sim/sim.h"

typedef struct {
  const char       *value;       /* as written ("4M"), in the sweep's storage */
  const MlStrategy *strategy;
  uint64_t          lower_bound; /* of the lifetimes the run used */
  int               status;      /* 0, or the error the strategy returned */
  char              error[ML_ERROR_MAX];
  MlMetrics         metrics;
  MlOom             oom;
  uint64_t          retries, retry_released, block_waste;
  size_t            segments;
  double            seconds;
} MlKnobSweepRow;

typedef struct {
  char           *knob;        /* owned: the knob's name or the options key */
  bool            is_option;   /* an --options key */
  char          **values;      /* owned, n_values */
  size_t          n_values, n_strategies;
  MlKnobSweepRow *rows;        /* n_values * n_strategies, by value then strategy */
} MlKnobSweep;

/* Runs @strategies (NULL-terminated) over @bufs (and, for align, its
 * trace) once per value of @spec, starting from @knobs. ML_EUSAGE names a
 * bad spec or value; a strategy that fails gets a row with its error.
 * Free with ml_knob_sweep_free(). */
int  ml_knob_sweep_run (const char *spec, const MlBuffers *bufs, const MlStrategy *const *strategies,
                        const MlKnobs *knobs, MlKnobSweep **out, MlError *err);
void ml_knob_sweep_free (MlKnobSweep *sweep);

/* The numeric value of row @value_index for plots: bytes for chunk, align
 * and capacity, the count for retries and seed, seconds for time-limit;
 * an option's value when it is a size or number, else its index. */
double ml_knob_sweep_number (const MlKnobSweep *sweep, size_t value_index);

/* Writes the sweep as one JSON object {"knob":..., "rows":[...]};
 * ML_EIO on a write error. */
ML_MUST_CHECK int ml_knob_sweep_write_json (FILE *fp, const MlBuffers *bufs, const MlKnobSweep *sweep, MlError *err);

#endif
