#include "sim/formats/load.h"

#include "sim/sites.h"

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
/* "jsonl, csv, pytorch-snapshot, ...": the formats' names (a static string). */
static const char *
format_names (void)
{
  static char names[256];
  if (!names[0])
    for (const MlTraceFormat *const *f = formats; *f; f++)
      snprintf (names + strlen (names), sizeof names - strlen (names), "%s%s", f == formats ? "" : ", ", (*f)->name);
  return names;
}

static int
load_with (const MlTraceFormat *f, const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err)
{
  if (opts->range.stage && f != &fmt_snapshot)
    return ml_error_set (err, ML_EUSAGE, "%s: --range %s: not T0:T1; a stage's name selects a stage of a PyTorch "
                         "snapshot's external_annotations, not of a %s input", path, opts->range.stage, f->name);
  if (opts->range.set && f != &fmt_snapshot && f != &fmt_kineto)
    return ml_error_set (err, ML_EUSAGE, "%s: --range reads a window of PyTorch snapshots and Kineto traces only, not of a %s "
                         "input", path, f->name);
  int rc = f->load (path, opts, out, err);
  /* the call sites by the rule asked for (--frames; user by default) */
  if (rc == 0 && (*out)->n_stack_frames && (rc = ml_trace_set_sites (*out, &opts->frames, err)) < 0)
    {
      ml_trace_free (*out);
      *out = NULL;
    }
  return rc;
}

/* The reader for @path: --format, else the extension, else the first
 * bytes. */
static int
find_format (const char *path, const MlLoadOptions *opts, const MlTraceFormat **out, MlError *err)
{
  /* a folder opens (and reads as nothing) on Linux: say what it is, not
   * "empty file" */
  struct stat st;
  if (strcmp (path, "-") != 0 && stat (path, &st) == 0 && S_ISDIR (st.st_mode))
    return ml_error_set (err, ML_EINPUT, "%s: is a directory, not a trace", path);
  if (opts->format)
    {
      for (const MlTraceFormat *const *f = formats; *f; f++)
        if (strcmp ((*f)->name, opts->format) == 0)
          {
            *out = *f;
            return 0;
          }
      return ml_error_set (err, ML_EUSAGE, "unknown format \"%s\"", opts->format);
    }
  char ext[16];
  bool gz;
  ml_path_ext (path, ext, sizeof ext, &gz);
  for (const MlTraceFormat *const *f = formats; *f; f++)
    if (has_ext (*f, ext))
      {
        *out = *f;
        return 0;
      }
  /* sniff: from a file, which can be read again; the first bytes of a
   * pipe, a FIFO or a device are gone once read (and a FIFO opened twice
   * waits for a second writer) */
  bool is_stdin = strcmp (path, "-") == 0;
  if (is_stdin || (stat (path, &st) == 0 && !S_ISREG (st.st_mode)))
    return ml_error_set (err, ML_EUSAGE, "%s: %s has no extension to tell its format, and its first bytes cannot be read "
                         "twice; give --format (%s)", path,
                         is_stdin ? "standard input" : S_ISFIFO (st.st_mode) ? "a pipe or FIFO"
                         : S_ISCHR (st.st_mode) || S_ISBLK (st.st_mode) ? "a device" : "an input that is no regular file",
                         format_names ());
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
      {
        *out = *f;
        return 0;
      }
  return ml_error_set (err, ML_EINPUT, "%s: unknown format (extension \"%s\"); memlens reads .jsonl and .csv%s",
                       path, ext, formats[2] ? " and others, see --help" : "");
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
  const MlTraceFormat *f;
  int rc = find_format (path, opts, &f, err);
  return rc < 0 ? rc : load_with (f, path, opts, out, err);
}

int
ml_trace_load_buffers (const char *path, const MlLoadOptions *opts, uint64_t align, MlTrace **trace, MlBuffers **bufs,
                       MlError *err)
{
  *bufs = NULL;
  const MlTraceFormat *f;
  int rc = find_format (path, opts, &f, err);
  if (rc < 0)
    return rc;
  if (f != &fmt_csv || opts->range.set || opts->range.stage)
    return load_with (f, path, opts, trace, err);   /* load_with refuses --range for CSV */
  return ml_buffers_load_csv (path, opts, align, trace, bufs, err);
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
