#include "render/axis.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double
nice_step (double raw)
{
  if (!(raw > 0))
    return 1.0;
  double e = pow (10.0, floor (log10 (raw)));
  double f = raw / e;
  double n = f < 1.5 ? 1.0 : f < 3.0 ? 2.0 : f < 7.0 ? 5.0 : 10.0;
  return n * e;
}

static double
byte_unit (double v)
{
  double u = 1.0;
  while (v >= 1024.0 * u && u < 1099511627776.0)
    u *= 1024.0;
  return u;
}

size_t
ml_axis_ticks (MlAxisKind kind, double lo, double hi, int target,
               double *out, size_t cap, double *step_out)
{
  if (target < 1)
    target = 1;
  if (!(hi > lo))
    {
      if (cap)
        out[0] = lo;
      if (step_out)
        *step_out = 1.0;
      return cap ? 1 : 0;
    }
  double raw = (hi - lo) / target, step;
  if (kind == ML_AXIS_BYTES)
    {
      /* powers of two: 256 MiB, 512 MiB, 1 GiB */
      step = raw <= 1.0 ? 1.0 : pow (2.0, ceil (log2 (raw)));
    }
  else
    {
      step = nice_step (raw);
      if (kind == ML_AXIS_COUNT && step < 1.0)
        step = 1.0;
    }
  if (step_out)
    *step_out = step;
  size_t n = 0;
  for (double k = ceil (lo / step - 1e-9); n < cap; k += 1.0)
    {
      double v = k * step;
      if (v > hi + step * 1e-9)
        break;
      out[n++] = v == 0.0 ? 0.0 : v;   /* no "-0" */
    }
  return n;
}

/* Prints @x with as few decimals as @step needs (at most 3). */
static void
fmt_num (double x, double step, const char *unit, char *buf, size_t len)
{
  int dec = 0;
  double s = fabs (step);
  while (dec < 3 && s > 0 && fabs (s - round (s)) > 1e-6 * (s > 1 ? s : 1))
    {
      s *= 10.0;
      dec++;
    }
  snprintf (buf, len, "%.*f%s%s", dec, x, *unit ? " " : "", unit);
}

char *
ml_axis_label (MlAxisKind kind, double v, double step, char *buf, size_t len)
{
  static const char *const bunits[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  switch (kind)
    {
    case ML_AXIS_BYTES:
      {
        if (v == 0.0)
          {
            snprintf (buf, len, "0");
            break;
          }
        double u = byte_unit (fabs (step) > 0 ? fabs (step) : fabs (v));
        double uv = byte_unit (fabs (v));
        if (uv > u)
          u = uv;   /* "1.5 GiB", not "1536 MiB" */
        int k = 0;
        for (double x = u; x >= 1024.0 && k < 4; x /= 1024.0)
          k++;
        fmt_num (v / u, step / u, bunits[k], buf, len);
        break;
      }
    case ML_AXIS_NS:
      {
        static const double div[] = { 1.0, 1e3, 1e6, 1e9 };
        static const char *const un[] = { "ns", "µs", "ms", "s" };
        double m = fabs (step) > fabs (v) ? fabs (step) : fabs (v);
        int k = 0;
        while (k < 3 && m >= div[k + 1])
          k++;
        fmt_num (v / div[k], step / div[k], un[k], buf, len);
        break;
      }
    case ML_AXIS_PERCENT:
      fmt_num (v * 100.0, step * 100.0, "", buf, len);
      strncat (buf, "%", len - strlen (buf) - 1);
      break;
    default:
      {
        double a = fabs (v);
        if (a >= 1e9)
          fmt_num (v / 1e9, step / 1e9, "", buf, len), strncat (buf, "G", len - strlen (buf) - 1);
        else if (a >= 1e6)
          fmt_num (v / 1e6, step / 1e6, "", buf, len), strncat (buf, "M", len - strlen (buf) - 1);
        else if (a >= 1e4)
          fmt_num (v / 1e3, step / 1e3, "", buf, len), strncat (buf, "k", len - strlen (buf) - 1);
        else
          fmt_num (v, step, "", buf, len);
      }
    }
  return buf;
}
