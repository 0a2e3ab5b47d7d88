#include "sim/formats/load.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/base/io.h"
#include "sim/base/jsonutil.h"
#include "sim/base/units.h"
#include "sim/formats/csv.h"
#include "sim/formats/graph.h"
#include "sim/formats/jsonl.h"
#include "sim/formats/kineto.h"
#include "sim/formats/snapshot.h"

void
ml_load_options_init (MlLoadOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->device = -1;
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

int
ml_range_parse (const char *text, MlRange *out, MlError *err)
{
  const char *colon = strchr (text, ':');
  if (!colon || strchr (colon + 1, ':'))
    return ml_error_set (err, ML_EUSAGE, "--range %s: write T0:T1 (ticks, or times like 1.5s:3s; either end may be left out)",
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

static bool
sniff_jsonl (const unsigned char *h, size_t len)
{
  return len > 10 && memmem (h, len, "\"memlens-trace\"", 15) != NULL;
}

static bool
sniff_csv (const unsigned char *h, size_t len)
{
  return (len >= 3 && memcmp (h, "id,", 3) == 0) || (len >= 6 && memcmp (h, "buffer", 6) == 0);
}

/* A trace as a planning instance: its buffers (requested sizes). */
static int
save_csv (const MlTrace *trace, const char *path, MlError *err)
{
  MlBuffers *bufs;
  int rc = ml_buffers_build (trace, 1, &bufs, err);
  if (rc < 0)
    return rc;
  rc = ml_buffers_write_csv (bufs, NULL, path, err);
  ml_buffers_free (bufs);
  return rc;
}

static const MlTraceFormat fmt_jsonl = {
  "jsonl", "jsonl ndjson", "memlens native trace (JSON Lines)", sniff_jsonl, ml_trace_load_jsonl,
  ml_trace_write_jsonl,
};
static const MlTraceFormat fmt_csv = {
  "csv", "csv", "MiniMalloc CSV planning instance", sniff_csv, ml_trace_load_csv, save_csv,
};

static const MlTraceFormat fmt_snapshot = {
  "pytorch-snapshot", "pickle pkl", "PyTorch CUDA memory snapshot (torch.cuda.memory._dump_snapshot)",
  ml_snapshot_sniff, ml_trace_load_snapshot, NULL,
};

/* .json: a Kineto / Chrome trace or a graph, told apart by their keys */
static const MlTraceFormat fmt_kineto = {
  "kineto", "json", "Kineto / Chrome trace JSON with [memory] events (plain or .gz); a graph by its keys",
  ml_kineto_sniff, ml_trace_load_kineto, NULL,
};
static const MlTraceFormat fmt_graph = {
  "graph", "", "computation graph JSON (tensors and ops, docs/formats.md)", ml_graph_sniff, ml_trace_load_graph, NULL,
};

/* Other readers add themselves here. */
static const MlTraceFormat *const formats[] = {
  &fmt_jsonl,
  &fmt_csv,
  &fmt_snapshot,
  &fmt_kineto,
  &fmt_graph,
  NULL,
};

const MlTraceFormat *const *
ml_trace_formats (void)
{
  return formats;
}

static bool
has_ext (const MlTraceFormat *f, const char *ext)
{
  size_t n = strlen (ext);
  if (!n)
    return false;
  for (const char *p = f->extensions; (p = strstr (p, ext)); p += n)
    if ((p == f->extensions || p[-1] == ' ') && (p[n] == 0 || p[n] == ' '))
      return true;
  return false;
}

/* The reader @f; --range only where the reader windows while it reads. */
static int
load_with (const MlTraceFormat *f, const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err)
{
  if (opts->range.set && f != &fmt_snapshot && f != &fmt_kineto)
    return ml_error_set (err, ML_EUSAGE, "%s: --range reads a window of PyTorch snapshots and Kineto traces only, not of a %s "
                         "input", path, f->name);
  return f->load (path, opts, out, err);
}

int
ml_trace_load (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err)
{
  MlLoadOptions defaults;
  if (!opts)
    {
      ml_load_options_init (&defaults);
      opts = &defaults;
    }
  /* a folder opens (and reads as nothing) on Linux: say what it is, not
   * "empty file" */
  struct stat st;
  if (strcmp (path, "-") != 0 && stat (path, &st) == 0 && S_ISDIR (st.st_mode))
    return ml_error_set (err, ML_EINPUT, "%s: is a directory, not a trace", path);
  if (opts->format)
    {
      for (const MlTraceFormat *const *f = formats; *f; f++)
        if (strcmp ((*f)->name, opts->format) == 0)
          return load_with (*f, path, opts, out, err);
      return ml_error_set (err, ML_EUSAGE, "unknown format \"%s\"", opts->format);
    }
  char ext[16];
  bool gz;
  ml_path_ext (path, ext, sizeof ext, &gz);
  for (const MlTraceFormat *const *f = formats; *f; f++)
    if (has_ext (*f, ext))
      return load_with (*f, path, opts, out, err);
  /* sniff */
  FILE *fp = fopen (path, "rb");
  if (!fp)
    return ml_error_errno (err, errno, path, "cannot open");
  unsigned char head[512];
  size_t len = fread (head, 1, sizeof head, fp);
  fclose (fp);
  if (len == 0)
    return ml_error_set (err, ML_EINPUT, "%s: empty file", path);
  for (const MlTraceFormat *const *f = formats; *f; f++)
    if ((*f)->sniff && (*f)->sniff (head, len))
      return load_with (*f, path, opts, out, err);
  return ml_error_set (err, ML_EINPUT, "%s: unknown format (extension \"%s\"); memlens reads .jsonl and .csv%s",
                       path, ext, formats[2] ? " and others, see --help" : "");
}

int
ml_trace_save (const MlTrace *trace, const char *path, MlError *err)
{
  if (strcmp (path, "-") == 0)
    return ml_trace_write_jsonl (trace, path, err);
  char ext[16];
  ml_path_ext (path, ext, sizeof ext, NULL);
  for (const MlTraceFormat *const *f = formats; *f; f++)
    if ((*f)->save && has_ext (*f, ext))
      return (*f)->save (trace, path, err);
  return ml_error_set (err, ML_EUSAGE, "%s: cannot write format \"%s\" (use .jsonl or .csv)", path, ext);
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
