#include "sim/load.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim/graph.h"
#include "sim/io.h"
#include "sim/kineto.h"
#include "sim/snapshot.h"
#include "sim/strategy.h"

void
ml_load_options_init (MlLoadOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->device = -1;
}

static bool
sniff_jsonl (const unsigned char *h, size_t len)
{
  return len > 10 && memmem (h, len, "\"memlens-trace\"", 15) != NULL;
}

static bool
sniff_csv (const unsigned char *h, size_t len)
{
  return len >= 3 && (memcmp (h, "id,", 3) == 0 || memcmp (h, "buffer", 6) == 0);
}

static const MlTraceFormat fmt_jsonl = {
  "jsonl", "jsonl ndjson", "memlens native trace (JSON Lines)", sniff_jsonl, ml_trace_load_jsonl,
};
static const MlTraceFormat fmt_csv = {
  "csv", "csv", "MiniMalloc CSV planning instance", sniff_csv, ml_trace_load_csv,
};

static const MlTraceFormat fmt_snapshot = {
  "pytorch-snapshot", "pickle pkl", "PyTorch CUDA memory snapshot (torch.cuda.memory._dump_snapshot)",
  ml_snapshot_sniff, ml_trace_load_snapshot,
};

/* .json: a Kineto / Chrome trace or a graph, told apart by their keys */
static const MlTraceFormat fmt_kineto = {
  "kineto", "json", "Kineto / Chrome trace JSON with [memory] events (plain or .gz); a graph by its keys",
  ml_kineto_sniff, ml_trace_load_json,
};
static const MlTraceFormat fmt_graph = {
  "graph", "", "computation graph JSON (tensors and ops, docs/formats.md)", ml_graph_sniff, ml_trace_load_graph,
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

int
ml_trace_load (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err)
{
  MlLoadOptions defaults;
  if (!opts)
    {
      ml_load_options_init (&defaults);
      opts = &defaults;
    }
  if (opts->format)
    {
      for (const MlTraceFormat *const *f = formats; *f; f++)
        if (strcmp ((*f)->name, opts->format) == 0)
          return (*f)->load (path, opts, out, err);
      return ml_error_set (err, ML_EUSAGE, "unknown format \"%s\"", opts->format);
    }
  char ext[16];
  bool gz;
  ml_path_ext (path, ext, sizeof ext, &gz);
  for (const MlTraceFormat *const *f = formats; *f; f++)
    if (has_ext (*f, ext))
      return (*f)->load (path, opts, out, err);
  /* sniff */
  FILE *fp = fopen (path, "rb");
  if (!fp)
    return ml_error_set (err, errno == ENOENT ? ML_EINPUT : ML_EIO, "%s: cannot open: %s", path, strerror (errno));
  unsigned char head[512];
  size_t len = fread (head, 1, sizeof head, fp);
  fclose (fp);
  if (len == 0)
    return ml_error_set (err, ML_EINPUT, "%s: empty file", path);
  for (const MlTraceFormat *const *f = formats; *f; f++)
    if ((*f)->sniff && (*f)->sniff (head, len))
      return (*f)->load (path, opts, out, err);
  return ml_error_set (err, ML_EINPUT, "%s: unknown format (extension \"%s\"); memlens reads .jsonl and .csv%s",
                       path, ext, formats[2] ? " and others, see --help" : "");
}

int
ml_trace_save (const MlTrace *trace, const char *path, MlError *err)
{
  char ext[16];
  ml_path_ext (path, ext, sizeof ext, NULL);
  if (strcmp (ext, "csv") == 0)
    {
      MlBuffers *bufs;
      int rc = ml_buffers_build (trace, 1, &bufs, err);
      if (rc < 0)
        return rc;
      rc = ml_buffers_write_csv (bufs, NULL, path, err);
      ml_buffers_free (bufs);
      return rc;
    }
  if (strcmp (ext, "jsonl") == 0 || strcmp (ext, "ndjson") == 0 || strcmp (path, "-") == 0)
    return ml_trace_write_jsonl (trace, path, err);
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
