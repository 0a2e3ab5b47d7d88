#include "sim/base/units.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int
ml_parse_u64 (const char *s, size_t len, uint64_t *out)
{
  if (len == 0)
    return ML_EINPUT;
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++)
    {
      if (s[i] < '0' || s[i] > '9')
        return ML_EINPUT;
      unsigned d = (unsigned) (s[i] - '0');
      if (v > (UINT64_MAX - d) / 10)
        return ML_EINPUT;
      v = v * 10 + d;
    }
  *out = v;
  return 0;
}

int
ml_parse_size (const char *text, uint64_t *bytes, MlError *err)
{
  const char *s = text;
  while (isspace ((unsigned char) *s))
    s++;
  if (*s == '-')
    return ml_error_set (err, ML_EUSAGE, "size '%s' is negative", text);
  size_t digits = strspn (s, "0123456789");
  const char *suffix = s + digits;
  double frac = 0;
  bool has_frac = false;
  if (*suffix == '.')
    {
      char *end;
      errno = 0;
      frac = strtod (s, &end);
      if (errno || end == s)
        return ml_error_set (err, ML_EUSAGE, "size '%s' is not a number", text);
      suffix = end;
      has_frac = true;
    }
  if (digits == 0 && !has_frac)
    return ml_error_set (err, ML_EUSAGE, "size '%s' is not a number (write bytes or 4K, 256M, 40G)", text);
  uint64_t mult = 1;
  switch (toupper ((unsigned char) *suffix))
    {
    case 0: break;
    case 'B': mult = 1; break;
    case 'K': mult = 1ull << 10; suffix++; break;
    case 'M': mult = 1ull << 20; suffix++; break;
    case 'G': mult = 1ull << 30; suffix++; break;
    case 'T': mult = 1ull << 40; suffix++; break;
    case 'P': mult = 1ull << 50; suffix++; break;
    default:
      return ml_error_set (err, ML_EUSAGE, "size '%s' has an unknown unit '%s' (use K, M, G, T)", text, suffix);
    }
  if (mult > 1 && (*suffix == 'i' || *suffix == 'I'))
    suffix++;
  if (*suffix == 'B' || *suffix == 'b')
    suffix++;
  if (*suffix)
    return ml_error_set (err, ML_EUSAGE, "size '%s' has trailing text '%s'", text, suffix);
  if (has_frac)
    {
      double v = frac * (double) mult;
      if (!(v >= 0) || v >= 18446744073709551615.0)
        return ml_error_set (err, ML_EUSAGE, "size '%s' is too large", text);
      *bytes = (uint64_t) llround (v);
      return 0;
    }
  uint64_t v;
  if (ml_parse_u64 (s, digits, &v) < 0 || (mult > 1 && v > UINT64_MAX / mult))
    return ml_error_set (err, ML_EUSAGE, "size '%s' is too large (at most 2^64-1 bytes)", text);
  *bytes = v * mult;
  return 0;
}

int
ml_parse_duration (const char *text, double *seconds, MlError *err)
{
  char *end;
  errno = 0;
  double v = strtod (text, &end);
  if (errno || end == text || !(v >= 0) || isinf (v))
    return ml_error_set (err, ML_EUSAGE, "duration '%s' is not a non-negative number (write 10s, 500ms, 2m)", text);
  if (*end == 0 || strcmp (end, "s") == 0)
    ;
  else if (strcmp (end, "ms") == 0)
    v /= 1000;
  else if (strcmp (end, "us") == 0)
    v /= 1e6;
  else if (strcmp (end, "m") == 0 || strcmp (end, "min") == 0)
    v *= 60;
  else if (strcmp (end, "h") == 0)
    v *= 3600;
  else
    return ml_error_set (err, ML_EUSAGE, "duration '%s' has an unknown unit '%s' (use ms, s, m, h)", text, end);
  *seconds = v;
  return 0;
}

char *
ml_format_size (uint64_t bytes, char *buf, size_t len)
{
  static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
  if (bytes < 1024)
    {
      snprintf (buf, len, "%" PRIu64 " B", bytes);
      return buf;
    }
  double v = (double) bytes;
  int u = 0;
  while (v >= 1024 && u < 6)
    {
      v /= 1024;
      u++;
    }
  snprintf (buf, len, "%.2f %s", v, units[u]);
  return buf;
}

int
ml_parse_decimal_scaled (const char *text, size_t len, int scale10, int64_t *out)
{
  const char *p = text, *end = text + len;
  bool neg = p < end && *p == '-';
  p += neg;
  const unsigned __int128 big = (unsigned __int128) 1000000000000000000u * 1000000000000000000u;   /* 10^36 */
  unsigned __int128 sig = 0;
  long exp10 = scale10;
  bool any = false;
  for (; p < end && *p >= '0' && *p <= '9'; p++, any = true)
    if (sig < big)
      sig = sig * 10 + (unsigned) (*p - '0');
    else
      exp10++;   /* digits past 36 only scale */
  if (p < end && *p == '.')
    for (p++; p < end && *p >= '0' && *p <= '9'; p++, any = true)
      if (sig < big)
        sig = sig * 10 + (unsigned) (*p - '0'), exp10--;
  if (!any)
    return ML_EINPUT;
  if (p < end && (*p == 'e' || *p == 'E'))
    {
      p++;
      bool eneg = p < end && *p == '-';
      p += p < end && (*p == '-' || *p == '+');
      long e = 0;
      if (!(p < end && *p >= '0' && *p <= '9'))
        return ML_EINPUT;
      for (; p < end && *p >= '0' && *p <= '9'; p++)
        if (e < 100000)
          e = e * 10 + (*p - '0');
      exp10 += eneg ? -e : e;
    }
  if (p != end)
    return ML_EINPUT;
  for (; exp10 > 0 && sig; exp10--)
    if ((sig *= 10) > (unsigned __int128) INT64_MAX)
      return ML_EINPUT;
  if (exp10 < -38)
    sig = 0;
  else if (exp10 < 0)
    {
      unsigned __int128 pow = 1;
      for (long i = 0; i < -exp10; i++)
        pow *= 10;
      sig = (sig + pow / 2) / pow;   /* to the nearest */
    }
  if (sig > (unsigned __int128) INT64_MAX)
    return ML_EINPUT;
  *out = neg ? -(int64_t) sig : (int64_t) sig;
  return 0;
}
