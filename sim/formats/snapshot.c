/* snapshot.c — the PyTorch snapshot reader: sniffing, the file or bytes
 * in, and load (), which runs the steps of snapshot-private.h in order. */
#include "sim/formats/snapshot-private.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/base/io.h"

bool
ml_snapshot_sniff (const unsigned char *h, size_t len)
{
  /* PROTO 2..5, then (protocol 4+) FRAME or a container */
  if (len >= 2 && h[0] == 0x80 && h[1] >= 2 && h[1] <= 5)
    return true;
  /* protocol 0: MARK DICT / LIST, then PUT; protocol 1: EMPTY_DICT /
   * EMPTY_LIST, then BINPUT or MARK (a snapshot is a dict, a legacy one
   * a list of segments) */
  return len >= 3 && ((h[0] == '(' && (h[1] == 'd' || h[1] == 'l') && (h[2] == 'p' || h[2] == '('))
                      || ((h[0] == '}' || h[0] == ']') && (h[1] == 'q' || h[1] == '(')));
}

static void
dev_trace_free (MlSnapDevTrace *d)
{
  free (d->e);
  free (d->ooms);
  free (d->post);
  free (d->pb);
  ml_u64map_clear (&d->pb_by_addr);
}

/* One end of --range as the user wrote it, near enough: a tick, or a
 * time in seconds. */
static void
range_text (const MlRange *r, uint64_t v, char *buf, size_t len)
{
  if (v == UINT64_MAX || (v == 0 && r == NULL))
    buf[0] = 0;
  else if (r->times)
    snprintf (buf, len, "%gs", (double) v / 1e9);
  else
    snprintf (buf, len, "%" PRIu64, v);
}

/* A field of the wrong container type (a dict of device traces, None
 * among them) is refused with the path to it: it was read as nothing. */
static int
wrong_kind (MlSnapCtx *c, const MlPkValue *v, const char *path, const char *want)
{
  char said[96];
  return ml_error_set (c->err, ML_EINPUT, "%s: %s is %s, not %s", c->path, path, ml_pk_describe (v, said, sizeof said),
                       want);
}

/* @v, when present, must be a list (or a tuple, which Python reads alike). */
static int
want_list (MlSnapCtx *c, const MlPkValue *v, const char *path, const char *of)
{
  char want[96];
  if (!v || _ml_snap_as_list (v))
    return 0;
  snprintf (want, sizeof want, "a list of %s", of);
  return wrong_kind (c, v, path, want);
}

/* The parts of the document the steps read. */
typedef struct {
  const MlPkValue *segments, *traces, *annotations, *settings;
  /* --device host: traces is [host_traces], a list of one made here */
  MlPkValue  host_list;
  MlPkValue *host_item;
} Parts;

static int
document_parts (MlSnapCtx *c, const MlPkValue *root, Parts *p)
{
  *p = (Parts) { 0 };
  if (root->kind == ML_PK_LIST)
    {
      p->segments = root;   /* legacy: a plain list of segments */
      return 0;
    }
  if (root->kind != ML_PK_DICT)
    return ml_error_set (c->err, ML_EINPUT, "%s: the pickle holds a %s, not a PyTorch memory snapshot (a dict or a list of segments)",
                         c->path, ml_pk_kind_name (root->kind));
  p->segments = ml_pk_get (root, "segments");
  p->traces = ml_pk_get (root, "device_traces");
  p->annotations = ml_pk_get (root, "external_annotations");
  p->settings = ml_pk_get (root, "allocator_settings");
  if (c->host)
    {
      /* the pinned host memory: its segments, and its trace as the one
       * device trace (PyTorch 2.14, _record_memory_history(record_host=...)) */
      p->segments = _ml_snap_as_list (ml_pk_get (root, "host_segments"));
      p->host_item = ml_pk_get (root, "host_traces");
      if (!p->segments)
        return ml_error_set (c->err, ML_EUSAGE, "%s: --device host: the snapshot has no \"host_segments\" list (pinned "
                             "host memory is recorded by PyTorch 2.14 and later, with record_host)", c->path);
      p->host_list = (MlPkValue) { .kind = ML_PK_LIST, .n = p->host_item ? 1 : 0, .items = &p->host_item };
      p->traces = &p->host_list;
      return 0;
    }
  if (!p->segments)
    return ml_error_set (c->err, ML_EINPUT, "%s: a PyTorch snapshot needs a \"segments\" list", c->path);
  int rc;
  if ((rc = want_list (c, p->segments, "\"segments\"", "segments")) < 0
      || (rc = want_list (c, p->traces, "\"device_traces\"", "device traces (one list of trace entries a device)")) < 0
      || (rc = want_list (c, p->annotations, "\"external_annotations\"", "annotations")) < 0)
    return rc;
  if (p->settings && p->settings->kind != ML_PK_DICT)
    return wrong_kind (c, p->settings, "\"allocator_settings\"", "a dict");
  char path[48];
  for (size_t d = 0; p->traces && d < p->traces->n; d++)
    {
      snprintf (path, sizeof path, c->host ? "host_traces" : "device_traces[%zu]", d);
      if ((rc = want_list (c, p->traces->items[d], path, "trace entries")) < 0)
        return rc;
    }
  for (size_t k = 0; p->annotations && k < p->annotations->n; k++)
    if (p->annotations->items[k]->kind != ML_PK_DICT)
      {
        snprintf (path, sizeof path, "external_annotations[%zu]", k);
        return wrong_kind (c, p->annotations->items[k], path, "a dict");
      }
  return 0;
}

/* Steps 0 and 1: the entries the pickle did not stream, the device table,
 * the device to read (*@out: its trace, NULL when it has none); the other
 * devices' entries are let go. */
static int
choose_device (MlSnapCtx *c, const Parts *p, const MlLoadOptions *opts, MlSnapDevTrace **out)
{
  /* device lists the pickle did not stream (built whole: protocol 0/1) */
  int rc = 0;
  for (size_t d = 0; p->traces && d < p->traces->n; d++)
    {
      const MlPkValue *l = _ml_snap_as_list (p->traces->items[d]);
      for (size_t k = 0; l && k < l->n; k++)
        if ((rc = _ml_snap_on_entry (c, d, k, l->items[k])) < 0)
          return rc;
    }
  if (c->host)
    {
      /* one trace, list 0; the segments' own device value (-1 as
       * PyTorch writes the host's, or none) picks them */
      c->dev = p->segments->n ? _ml_snap_dev_of (p->segments->items[0]) : -1;
      c->t->device = ML_TRACE_HOST;
      if ((rc = _ml_snap_intern (c, "reading the pinned host memory (host_segments, host_traces)",
                                 &c->t->device_reason)) < 0)
        return rc;
      *out = c->n_dt ? &c->dt[0] : NULL;
      return 0;
    }
  if ((rc = _ml_snap_summarize_devices (c, p->segments, p->traces)) < 0
      || (rc = _ml_snap_pick_device (c, p->segments, p->traces, opts, &c->dev)) < 0)
    return rc;
  c->t->device = (uint32_t) c->dev;
  for (size_t d = 0; d < c->n_dt; d++)
    if ((int64_t) d != c->dev)
      {
        dev_trace_free (&c->dt[d]);
        c->dt[d] = (MlSnapDevTrace) { 0 };
      }
  *out = (size_t) c->dev < c->n_dt ? &c->dt[c->dev] : NULL;
  return 0;
}

/* A bad entry outside the window is refused as in a whole load; a window
 * that holds no entry of the device is bad usage. */
static int
check_window (MlSnapCtx *c, const MlSnapDevTrace *dt)
{
  int rc;
  if (dt && dt->has_bad && (rc = _ml_snap_walk_entry (c, dt->bad_index, &dt->bad)) < 0)
    return rc;
  /* what the messages name: "device 1" and its list "device_traces[1]",
   * or the host's "host_traces" */
  char list[40], who[48];
  _ml_snap_ctx_list (c, c->host ? 0 : (size_t) c->dev, list, sizeof list);
  if (c->host)
    snprintf (who, sizeof who, "the pinned host memory (host_traces)");
  else
    snprintf (who, sizeof who, "device %" PRId64, c->dev);
  if (c->range.stage && dt && !dt->n && dt->n_all)
    return ml_error_set (c->err, ML_EUSAGE, "%s: --range %s: the stage (time_us %" PRIu64 " .. %s) holds no trace entry of "
                         "%s", c->path, c->range.stage, c->range.from / 1000,
                         c->range.to == UINT64_MAX ? "the end" : "its END", who);
  if (c->range.set && (c->range.times || c->range.stage) && dt && dt->n_back)
    {
      char from[32], to[32], text[96];
      range_text (&c->range, c->range.from, from, sizeof from);
      range_text (&c->range, c->range.to, to, sizeof to);
      if (c->range.stage)
        snprintf (text, sizeof text, "%s", c->range.stage);
      else
        snprintf (text, sizeof text, "%s:%s", from, to);
      return ml_error_set (c->err, ML_EUSAGE, "%s: --range %s: a window by time needs times that do not run "
                           "backwards, and %s[%" PRIu64 "] (\"time_us\" %" PRId64 ") comes after "
                           "%s[%" PRIu64 "] (\"time_us\" %" PRId64 ") (%" PRIu64 " such entr%s); "
                           "give the window in ticks (trace entry N is tick N + 1)", c->path, text, list,
                           dt->back_index, dt->back_us, list, dt->back_prev_index, dt->back_prev_us, dt->n_back,
                           dt->n_back == 1 ? "y" : "ies");
    }
  if (c->range.set && dt && !dt->n && dt->n_all)
    {
      char from[32], to[32];
      range_text (&c->range, c->range.from, from, sizeof from);
      range_text (&c->range, c->range.to, to, sizeof to);
      return ml_error_set (c->err, ML_EUSAGE, "%s: --range %s:%s holds no trace entry of %s"
                           " (%" PRIu64 " entries, ticks 1 .. %" PRIu64 "%s)", c->path, from, to, who,
                           dt->n_all, dt->n_all,
                           !c->range.times ? "" : dt->origin_us >= 0 ? ", times 0 .. the last" : ", no times recorded");
    }
  return 0;
}

/* The tick the start state sits at: 0, or for a window that starts later
 * the tick of the entry before it; the annotations before it count their
 * ticks as in a whole load. */
static void
start_tick (MlSnapCtx *c, const MlSnapDevTrace *dt)
{
  if (dt && c->range.set && dt->first)
    {
      c->tick = dt->first;
      while (c->next_ann < c->n_anns && dt->start_us >= 0 && c->anns[c->next_ann].time <= (uint64_t) dt->start_us)
        c->next_ann++, c->tick++;
    }
  c->t->windowed = c->range.set;
  c->t->window_first = c->tick;
}

/* Every event the load makes, in one allocation: the settings, the
 * segments and blocks at the start, an entry each (an alloc over a live
 * block makes two), the annotations, the frees after a window. */
static int
reserve_events (MlSnapCtx *c, const MlSnapDevTrace *dt)
{
  size_t n_trace = dt ? dt->n : 0, n_allocs = dt ? dt->actions[ML_EV_ALLOC] : 0;
  if (ml_trace_reserve (c->t, 1 + c->n_segs + c->n_blks + n_trace + (n_allocs < n_trace ? n_allocs : n_trace)
                                  + c->n_anns + (dt ? dt->n_pb : 0)) < 0)
    return _ml_snap_oom (c);
  return 0;
}

/* The replay reads the kept entries and the live map only: what the
 * steps before it needed goes before the trace's events are made (the
 * pickle's document, the dump-time blocks, the caches of frames and
 * stacks), so the peak is not their sum. */
static void
drop_document (MlSnapCtx *c)
{
  ml_pk_free (c->doc);
  c->doc = NULL;
  free (c->blks);
  c->blks = NULL;
  c->n_blks = c->cap_blks = 0;
  ml_u64map_clear (&c->by_ptrs);
  free (c->pents);
  free (c->ptrs);
  c->pents = NULL;
  c->ptrs = NULL;
  c->n_pents = c->cap_pents = c->n_ptrs = c->cap_ptrs = 0;
  free (c->finfo);
  c->finfo = NULL;
  c->n_finfo = c->cap_finfo = 0;
  ml_u64map_clear (&c->by_content);
  ml_u64map_clear (&c->freed);
}

/* The steps, in order. */
static int
load (MlSnapCtx *c, const MlPkValue *root, const MlLoadOptions *opts)
{
  Parts p;
  MlSnapDevTrace *dt = NULL;
  int rc;
  if ((rc = document_parts (c, root, &p)) < 0 || (rc = choose_device (c, &p, opts, &dt)) < 0
      || (rc = check_window (c, dt)) < 0)
    return rc;
  /* the dump-time state, then back from it to the trace's (or the
   * window's) first entry */
  if ((rc = _ml_snap_read_segments (c, p.segments)) < 0 || (rc = _ml_snap_check_overlaps (c, p.segments)) < 0
      || (rc = _ml_snap_read_history (c, dt, p.settings, root)) < 0
      || (dt && (rc = _ml_snap_undo_trace (c, dt)) < 0))
    return rc;
  if ((rc = _ml_snap_read_annotations (c, p.annotations)) < 0)
    return rc;
  start_tick (c, dt);
  if ((rc = reserve_events (c, dt)) < 0 || (rc = _ml_snap_emit_settings (c, p.settings, root)) < 0
      || (rc = _ml_snap_note_history (c)) < 0
      || (rc = _ml_snap_emit_start_state (c)) < 0)
    return rc;
  drop_document (c);
  if ((rc = _ml_snap_replay (c, dt)) < 0)
    return rc;
  return _ml_snap_check_allocs (c);
}

/* Parse and map: the device traces stream into the steps' entries, the
 * rest (segments, settings, annotations) stays a document. */
static int
load_bytes (const unsigned char *data, size_t len, bool mapped, const char *name, const MlLoadOptions *opts,
            MlTrace **out, MlError *err)
{
  MlLoadOptions defaults;
  if (!opts)
    {
      ml_load_options_init (&defaults);
      opts = &defaults;
    }
  MlSnapCtx c = { .path = name, .err = err, .range = opts->range, .host = opts->device == ML_DEVICE_HOST };
  ml_u64map_init (&c.by_content);
  ml_u64map_init (&c.by_ptrs);
  ml_u64map_init (&c.freed);
  ml_u64map_init (&c.live);
  ml_u64map_init (&c.streams);
  int rc = 0;
  c.t = ml_trace_new ();
  if (!c.t)
    rc = _ml_snap_oom (&c);
  else
    {
      c.t->default_align = ML_SNAPSHOT_ALIGN;
      c.t->has_addrs = true;
      c.t->records_meta = true;
      c.t->source = ml_strtab_intern0 (c.t->strings, "pytorch-snapshot");
      c.t->origin_text = _ml_snap_origin_text;
      uint32_t s0;
      rc = _ml_snap_stream (&c, 0, &s0);   /* stream 0 keeps index 0 */
      /* --device host: nothing streams (the device traces are not read;
       * host_traces is taken whole from the document) */
      MlPkStream st = { .key = c.host ? "(memlens: none)" : "device_traces", .item = _ml_snap_on_entry, .user = &c, .progress = opts->progress,
                        .drop_input = mapped };
      if (rc == 0 && c.range.stage)
        rc = _ml_snap_resolve_stage (&c, data, len, mapped, opts);
      if (rc == 0)
        {
          rc = ml_pk_parse_stream (data, len, &st, &c.doc, err);
          if (rc < 0 && !c.entry_failed)
            ml_error_prefix (err, "%s", name);
        }
      if (rc == 0)
        rc = load (&c, ml_pk_root (c.doc), opts);
    }
  ml_u64map_clear (&c.by_content);
  ml_u64map_clear (&c.by_ptrs);
  free (c.pents);
  free (c.ptrs);
  ml_u64map_clear (&c.freed);
  ml_u64map_clear (&c.live);
  ml_u64map_clear (&c.streams);
  free (c.spans);
  free (c.segs);
  free (c.finfo);
  free (c.scratch);
  free (c.blks);
  free (c.anns);
  for (size_t d = 0; d < c.n_dt; d++)
    dev_trace_free (&c.dt[d]);
  free (c.dt);
  ml_pk_free (c.doc);
  if (rc < 0)
    {
      ml_trace_free (c.t);
      return rc;
    }
  *out = c.t;
  return 0;
}

int
ml_trace_load_snapshot_mem (const unsigned char *data, size_t len, const char *name, const MlLoadOptions *opts,
                            MlTrace **out, MlError *err)
{
  return load_bytes (data, len, false, name, opts, out, err);
}

/* A stream read whole (a pipe, a device): its first byte must start a
 * pickle, so that /dev/zero is refused at once, not read to the limit. */
static int
starts_a_pickle (const unsigned char *piece, size_t len, size_t offset, void *user, MlError *err)
{
  if (offset > 0 || !len || ml_pk_is_opcode (piece[0]))
    return 0;
  return ml_error_set (err, ML_EINPUT, "%s: byte 0: 0x%02x is no pickle opcode (not a pickle)", (const char *) user, piece[0]);
}

#define SMALL_FILE ((off_t) 1 << 20)

int
ml_trace_load_snapshot (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err)
{
  /* a mapping, given back behind the reader: the file is never all in
   * memory; a pipe or the like is read whole */
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat sb;
  if (fd >= 0 && fstat (fd, &sb) == 0 && S_ISREG (sb.st_mode) && (uint64_t) sb.st_size > ML_INPUT_MAX)
    {
      close (fd);
      return ml_error_set (err, ML_EINPUT, "%s: %lld bytes, larger than the limit of %" PRIu64 " bytes (64 GiB)", path,
                           (long long) sb.st_size, ML_INPUT_MAX);
    }
  if (fd >= 0 && fstat (fd, &sb) == 0 && S_ISREG (sb.st_mode) && sb.st_size > 0 && sb.st_size < SMALL_FILE)
    {
      /* a small file is read: a mapping costs more system calls and
       * page faults than its bytes */
      size_t len = (size_t) sb.st_size, got = 0;
      unsigned char *data = malloc (len);
      ssize_t r = 1;
      while (data && got < len && (r = read (fd, data + got, len - got)) > 0)
        got += (size_t) r;
      close (fd);
      int rc = !data ? ml_error_set (err, ML_ENOMEM, "%s: out of memory", path)
               : got < len ? ml_error_set (err, ML_EIO, "%s: cannot read: %s", path, r < 0 ? strerror (errno) : "shorter than its size")
               : load_bytes (data, len, false, path, opts, out, err);
      free (data);
      return rc;
    }
  if (fd >= 0 && fstat (fd, &sb) == 0 && S_ISREG (sb.st_mode) && sb.st_size > 0)
    {
      size_t len = (size_t) sb.st_size;
      void *map = mmap (NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
      close (fd);
      if (map != MAP_FAILED)
        {
          madvise (map, len, MADV_SEQUENTIAL);
          int rc = load_bytes (map, len, true, path, opts, out, err);
          munmap (map, len);
          return rc;
        }
    }
  else if (fd >= 0)
    close (fd);
  char *data;
  size_t len;
  int rc = ml_read_file_checked (path, (size_t) 1 << 33, starts_a_pickle, (void *) path, &data, &len, err);
  if (rc < 0)
    return rc;
  rc = load_bytes ((const unsigned char *) data, len, false, path, opts, out, err);
  free (data);
  return rc;
}
