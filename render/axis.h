/* axis.h — nice tick positions and their labels (pure functions).
 *
 * Decimal steps 1, 2, 5 × 10^k for ticks and nanoseconds; byte axes step
 * by powers of two and label in the binary unit that fits (B, KiB, MiB,
 * GiB, TiB), so labels read "0, 256 MiB, 512 MiB, 768 MiB, 1 GiB".
 */
#ifndef ML_AXIS_H
#define ML_AXIS_H

#include <stddef.h>

typedef enum {
  ML_AXIS_COUNT,     /* plain numbers: 0, 500, 1k, 1.5M        */
  ML_AXIS_BYTES,     /* 0 B, 512 KiB, 1.5 GiB                  */
  ML_AXIS_NS,        /* nanoseconds shown as ns, µs, ms, s     */
  ML_AXIS_PERCENT,   /* 0..1 shown as 0%..100%                 */
} MlAxisKind;

/* Writes up to @cap tick values within [@lo, @hi] spaced by a nice step
 * so that there are about @target of them; returns how many. The step is
 * stored in *@step when not NULL. */
size_t ml_axis_ticks (MlAxisKind kind, double lo, double hi, int target,
                      double *out, size_t cap, double *step);

/* Formats @v for an axis whose ticks are @step apart, into @buf. */
char  *ml_axis_label (MlAxisKind kind, double v, double step, char *buf, size_t len);

#endif
