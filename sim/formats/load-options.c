/* load-options.c — the options of a load: defaults, --range, progress. */
#include "sim/formats/load-options.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/io.h"
#include "sim/base/units.h"

void
ml_load_options_init (MlLoadOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->device = -1;
}

int
ml_device_parse (const char *text, int *out, MlError *err)
{
  uint64_t v;
  if (strcmp (text, "host") == 0)
    {
      *out = ML_DEVICE_HOST;
      return 0;
    }
  if (ml_parse_u64 (text, strlen (text), &v) < 0 || v > ML_DEVICE_MAX)
    return ml_error_set (err, ML_EUSAGE, "--device %s: not a device number (0 .. %d, or host)", text, ML_DEVICE_MAX);
  *out = (int) v;
  return 0;
}

/* One end of a range: "" (open), a tick (digits) or a time (a number
 * and a unit: ns, us, ms, s, m, h) in nanoseconds. */
static int
range_end (const char *text, size_t len, const char *whole, bool *is_time, uint64_t *out, MlError *err)
{
  char buf[64];
  if (len >= sizeof buf)
    return ml_error_set (err, ML_EUSAGE, "--range %s: \"%.*s\" is too long", whole, (int) len, text);
  memcpy (buf, text, len);
  buf[len] = 0;
  size_t digits = strspn (buf, "0123456789");
  if (digits == len)
    {
      *is_time = false;
      if (ml_parse_u64 (buf, len, out) < 0)
        return ml_error_set (err, ML_EUSAGE, "--range %s: tick \"%s\" is too large", whole, buf);
      return 0;
    }
  static const struct { const char *unit; double ns; } units[] = {
    { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "min", 60e9 }, { "m", 60e9 }, { "h", 3600e9 },
  };
  char *end;
  errno = 0;
  double v = strtod (buf, &end);
  if (end == buf || errno || !(v >= 0) || isinf (v) || buf[0] == '-' || buf[0] == '+' || buf[0] == ' ')
    return ml_error_set (err, ML_EUSAGE, "--range %s: \"%s\" is neither a tick (an integer) nor a time (1.5s, 200ms, 30us, 5ns)",
                         whole, buf);
  for (size_t k = 0; k < sizeof units / sizeof units[0]; k++)
    if (strcmp (end, units[k].unit) == 0)
      {
        double ns = v * units[k].ns;
        if (ns >= 9.2e18)
          return ml_error_set (err, ML_EUSAGE, "--range %s: time \"%s\" is too large", whole, buf);
        *is_time = true;
        *out = (uint64_t) llround (ns);
        return 0;
      }
  return ml_error_set (err, ML_EUSAGE, "--range %s: \"%s\" has %s unit \"%s\" (a time takes ns, us, ms, s, m or h; a tick none)",
                       whole, buf, *end ? "an unknown" : "no", end);
}

/* "NAME" or "NAME#K": a stage of the external annotations. */
static int
stage_parse (const char *text, MlRange *out, MlError *err)
{
  MlRange r = { .set = true, .from = 0, .to = UINT64_MAX, .stage = text, .stage_len = strlen (text), .stage_nth = 1 };
  const char *hash = strrchr (text, '#');
  if (hash && hash[1] && strspn (hash + 1, "0123456789") == strlen (hash + 1))
    {
      if (ml_parse_u64 (hash + 1, strlen (hash + 1), &r.stage_nth) < 0 || r.stage_nth == 0)
        return ml_error_set (err, ML_EUSAGE, "--range %s: occurrence \"%s\" is not a number from 1", text, hash + 1);
      r.stage_len = (size_t) (hash - text);
    }
  if (r.stage_len == 0)
    return ml_error_set (err, ML_EUSAGE, "--range %s: no stage name before '#'", text);
  *out = r;
  return 0;
}

int
ml_range_parse (const char *text, MlRange *out, MlError *err)
{
  if (*text && !strchr ("0123456789.:", *text))
    return stage_parse (text, out, err);
  const char *colon = strchr (text, ':');
  if (!colon || strchr (colon + 1, ':'))
    return ml_error_set (err, ML_EUSAGE, "--range %s: write T0:T1 (ticks, or times like 1.5s:3s; either end may be left out), or a stage's name",
                         text);
  MlRange r = { .set = true, .from = 0, .to = UINT64_MAX };
  bool t0 = false, t1 = false;
  size_t l0 = (size_t) (colon - text), l1 = strlen (colon + 1);
  if (!l0 && !l1)
    return ml_error_set (err, ML_EUSAGE, "--range %s: give a start, an end or both (T0:T1, :T1, T0:)", text);
  int rc;
  if (l0 && (rc = range_end (text, l0, text, &t0, &r.from, err)) < 0)
    return rc;
  if (l1 && (rc = range_end (colon + 1, l1, text, &t1, &r.to, err)) < 0)
    return rc;
  if (l0 && l1 && t0 != t1)
    return ml_error_set (err, ML_EUSAGE, "--range %s: one end is a tick, the other a time; give both the same way", text);
  r.times = t0 || t1;
  if (r.from > r.to)
    return ml_error_set (err, ML_EUSAGE, "--range %s: the start is after the end", text);
  *out = r;
  return 0;
}

int
ml_load_progress (const MlLoadOptions *opts, const void *line_reader, MlError *err)
{
  const MlProgress *p = opts->progress;
  if (!p)
    return 0;
  if (p->cancelled && *p->cancelled)
    return ml_error_set (err, ML_ECANCELLED, "cancelled");
  if (p->report)
    p->report (p->user, ml_lines_fraction (line_reader), "loading");
  return 0;
}
