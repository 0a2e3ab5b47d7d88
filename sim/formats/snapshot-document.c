/* snapshot-document.c — the rest of the document: the device table and
 * the device to read (step 1), the segments and live blocks at dump time
 * (step 2), the external annotations (step 5). */
#include "sim/formats/snapshot-private.h"
#include "sim/base/units.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- step 1: every device the file holds, and which one to read ---- */


/* The device table (MlDeviceInfo, MlDeviceOom): counts from the raw
 * entries of every device's trace, reserved bytes from the segments. */
int
_ml_snap_summarize_devices (MlSnapCtx *c, const MlPkValue *segments, const MlPkValue *traces)
{
  size_t n_dev = traces ? traces->n : 0;
  if (c->n_dt > n_dev)
    n_dev = c->n_dt;
  for (size_t k = 0; k < segments->n; k++)
    {
      int64_t d = _ml_snap_dev_of (segments->items[k]);
      int rc = _ml_snap_check_device (c, segments->items[k], "segment", k);
      if (rc < 0)
        return rc;
      if (d < 0 || d > ML_DEVICE_MAX)
        return ml_error_set (c->err, ML_EINPUT, "%s: segment %zu: device %" PRId64 " is not a device number (0 .. %d)",
                             c->path, k, d, ML_DEVICE_MAX);
      if ((size_t) d + 1 > n_dev)
        n_dev = (size_t) d + 1;
    }
  if (!n_dev)
    return 0;
  MlTrace *t = c->t;
  t->devices = calloc (n_dev, sizeof *t->devices);
  if (!t->devices)
    return _ml_snap_oom (c);
  t->n_devices = n_dev;
  for (size_t d = 0; d < n_dev; d++)
    t->devices[d].device = (uint32_t) d;
  for (size_t k = 0; k < segments->n; k++)
    {
      MlDeviceInfo *di = &t->devices[_ml_snap_dev_of (segments->items[k])];
      uint64_t size = 0;
      ml_pk_get_u64 (segments->items[k], "total_size", &size);
      di->segments++;
      if (__builtin_add_overflow (di->segment_bytes, size, &di->segment_bytes) || di->segment_bytes > (uint64_t) INT64_MAX)
        return ml_error_set (c->err, ML_EINPUT, "%s: segment %zu: device %u's segments add up past 2^63 bytes (total_size %" PRIu64 ")",
                             c->path, k, di->device, size);
    }
  size_t n_ooms = 0;
  for (size_t d = 0; d < c->n_dt; d++)
    n_ooms += c->dt[d].n_ooms;
  if (n_ooms && !(t->device_ooms = calloc (n_ooms, sizeof *t->device_ooms)))
    return _ml_snap_oom (c);
  for (size_t d = 0; d < n_dev; d++)
    {
      MlDeviceInfo *di = &t->devices[d];
      di->reserved_end = di->segment_bytes;
      const MlSnapDevTrace *dt = d < c->n_dt ? &c->dt[d] : NULL;
      if (!dt)
        {
          di->reserved_start = di->reserved_max = di->reserved_end;
          continue;
        }
      di->entries = dt->n_all;
      memcpy (di->actions, dt->actions, sizeof di->actions);
      di->allocated_bytes = dt->alloc_bytes;
      /* net segment bytes over the trace, then forward from the start */
      int64_t cur, max;
      if (__builtin_sub_overflow ((int64_t) di->reserved_end, dt->net, &cur))
        return _ml_snap_reserved_overflow (c, d, dt->n_all - 1, di->reserved_end);
      if (cur < 0)
        cur = 0;   /* the trace lost entries: it freed more than it shows */
      di->reserved_start = (uint64_t) cur;
      if (__builtin_add_overflow (cur, dt->max_net, &max))
        return _ml_snap_reserved_overflow (c, d, dt->n_all - 1, (uint64_t) dt->max_net);
      for (size_t k = 0; k < dt->n_ooms; k++)
        {
          const MlSnapOom *o = &dt->ooms[k];
          int64_t r;
          if (__builtin_add_overflow (cur, o->prefix, &r))
            return _ml_snap_reserved_overflow (c, d, o->index, (uint64_t) o->prefix);
          t->device_ooms[t->n_device_ooms++] = (MlDeviceOom) {
            .device = (uint32_t) d, .index = o->index, .request = o->request,
            .device_free = o->device_free, .reserved = r > 0 ? (uint64_t) r : 0 };
        }
      di->reserved_max = (uint64_t) max;
      di->ooms = di->actions[ML_EV_OOM];
    }
  /* the devices the file holds: a device_traces list each, and those its
   * segments name (segments on device 4095 alone are not 4096 devices) */
  size_t listed = traces ? traces->n : 0, kept = 0;
  if (c->n_dt > listed)
    listed = c->n_dt;
  for (size_t d = 0; d < n_dev; d++)
    if (d < listed || t->devices[d].segments)
      t->devices[kept++] = t->devices[d];
  t->n_devices = kept;
  return 0;
}

/* How much memory a device saw: the bytes reserved at the dump plus the
 * bytes its trace allocated (segments count when the trace is short). */
static uint64_t
activity (const MlDeviceInfo *di)
{
  uint64_t a;
  return __builtin_add_overflow (di->reserved_end, di->allocated_bytes, &a) ? UINT64_MAX : a;
}

/* --device N: a device the file holds, else an error that lists them
 * (one without memory is the caller's to refuse: cli_check_device). */
static int
check_device_asked (MlSnapCtx *c, const MlPkValue *segments, const MlPkValue *traces, int64_t dev)
{
  const MlTrace *t = c->t;
  size_t n_dev_traces = traces ? traces->n : 0;
  bool known = (size_t) dev < n_dev_traces || (size_t) dev < c->n_dt;
  for (size_t k = 0; k < segments->n && !known; k++)
    known = _ml_snap_dev_of (segments->items[k]) == dev;
  char list[1024];
  if (!known)
    return ml_error_set (c->err, ML_EINPUT, "%s: device %" PRId64 " has no segments and no trace (the file holds %zu "
                         "device%s: %s)", c->path, dev, t->n_devices, t->n_devices == 1 ? "" : "s",
                         ml_trace_list_devices (t, UINT32_MAX, list, sizeof list));
  return 0;
}

/* The default device: the one with a recorded OOM, else the one with
 * the most memory activity (reserved at the end + allocated over the
 * trace); the reason and the others are kept for the caller to show when
 * the file holds more than one device. */
int
_ml_snap_pick_device (MlSnapCtx *c, const MlPkValue *segments, const MlPkValue *traces,
                      const MlLoadOptions *opts, int64_t *out)
{
  const MlTrace *t = c->t;
  if (opts->device >= 0)
    {
      int rc = check_device_asked (c, segments, traces, opts->device);
      if (rc == 0)
        *out = opts->device;
      return rc;
    }
  const MlDeviceInfo *best = NULL;
  for (size_t d = 0; d < t->n_devices && !best; d++)
    if (t->devices[d].ooms)
      best = &t->devices[d];
  bool oom = best != NULL;
  for (size_t d = 0; d < t->n_devices && !oom; d++)
    if (!best || activity (&t->devices[d]) > activity (best))
      best = &t->devices[d];
  *out = best ? best->device : 0;
  if (!best || t->n_devices < 2)
    return 0;
  char text[1400], why[160], res[32], alloc[32], list[1024];
  if (oom)
    snprintf (why, sizeof why, "it recorded an OOM");
  else
    snprintf (why, sizeof why, "the most memory: %s reserved at the end + %s allocated over the trace",
              ml_format_size (best->reserved_end, res, sizeof res), ml_format_size (best->allocated_bytes, alloc, sizeof alloc));
  /* the viewer's subtitle is the text up to "; --device" */
  snprintf (text, sizeof text, "reading device %u of %zu: %s (%" PRIu64 " trace entries); --device N reads another: %s",
            best->device, t->n_devices, why, best->entries, ml_trace_list_devices (t, best->device, list, sizeof list));
  return _ml_snap_intern (c, text, &c->t->device_reason);
}

/* ---- step 2: the segments and live blocks at dump time ---- */

/* What a segment's blocks add up to, to check its own totals
 * (SegmentInfo: allocated_size of the allocated blocks, active_size and
 * requested_size of the active ones: allocated or pending). */
typedef struct {
  uint64_t total, allocated, active, requested;
  bool     req_unknown;   /* an active block without requested_size (1.13, 2.0) */
  uint64_t seg_addr, seg_size;   /* the segment's own range, which holds every block */
} SegSums;

/* Block @b of segment @k (at @where) that starts at *@at unless it says
 * where: a live one ("active_allocated", "active_pending_free") becomes
 * an MlSnapBlk; *@at moves to the block's end. Its requested size and
 * stack are the last of its "history" when it has no fields of its own
 * (PyTorch 1.13 / 2.0). */
static int
read_block (MlSnapCtx *c, const MlPkValue *bl, MlSnapWhere where, uint32_t stream, uint32_t pool, uint64_t *at,
            SegSums *sum)
{
  const MlPkValue *f[K__COUNT];
  _ml_snap_fields (bl, f);   /* one pass, keys by their tag */
  const char *state = f[K_STATE] && f[K_STATE]->kind == ML_PK_STR ? f[K_STATE]->s : NULL;
  uint64_t baddr = UINT64_MAX, bsize = 0, req = UINT64_MAX;
  int rc;
  if (bl->kind != ML_PK_DICT)
    return ml_error_set (c->err, ML_EINPUT, "%s: segment %zu block %zu is a %s, not a dict", c->path, where.k, where.b,
                         ml_pk_kind_name (bl->kind));
  if ((rc = _ml_snap_uint_value (c, f[K_SIZE], "size", UINT_MAX_FIELD, true, &bsize, where)) < 0
      || (rc = _ml_snap_uint_value (c, f[K_ADDRESS], "address", UINT_MAX_FIELD, false, &baddr, where)) < 0)
    return rc;
  if (baddr == UINT64_MAX)
    baddr = *at;
  if (baddr < sum->seg_addr || bsize > sum->seg_size || baddr - sum->seg_addr > sum->seg_size - bsize)
    return ml_error_set (c->err, ML_EINPUT, "%s: segments[%zu][\"blocks\"][%zu] (at 0x%" PRIx64 "): [0x%" PRIx64 ", +%" PRIu64
                         ") is not inside its segment [0x%" PRIx64 ", +%" PRIu64 ")", c->path, where.k, where.b, baddr, baddr,
                         bsize, sum->seg_addr, sum->seg_size);
  *at = baddr + bsize;
  sum->total += bsize;
  if (!state || strncmp (state, "active", 6) != 0)
    return 0;
  bool pending = strcmp (state, "active_pending_free") == 0;
  const MlPkValue *hist = _ml_snap_as_list (f[K_HISTORY]);
  const MlPkValue *last = hist && hist->n && hist->items[hist->n - 1]->kind == ML_PK_DICT
                          ? hist->items[hist->n - 1] : NULL;
  const MlPkValue *frames = f[K_FRAMES];
  if ((rc = _ml_snap_uint_value (c, f[K_REQUESTED_SIZE], "requested_size", UINT_MAX_FIELD, false, &req, where)) < 0)
    return rc;
  sum->active += bsize;
  sum->allocated += pending ? 0 : bsize;
  sum->requested += req == UINT64_MAX ? 0 : req;
  sum->req_unknown |= req == UINT64_MAX;
  if (last && (!frames || req == UINT64_MAX))
    {
      const MlPkValue *lf[K__COUNT];
      _ml_snap_fields (last, lf);
      if (!frames)
        frames = lf[K_FRAMES];
      int64_t rs;
      if (req == UINT64_MAX && _ml_snap_int_of (lf[K_REAL_SIZE], &rs) && rs >= 0)
        req = (uint64_t) rs;
    }
  if (req != UINT64_MAX && req > bsize)
    return ml_error_set (c->err, ML_EINPUT, "%s: segments[%zu][\"blocks\"][%zu] (at 0x%" PRIx64 "): %s %" PRIu64
                         " is larger than the block's size %" PRIu64, c->path, where.k, where.b, baddr,
                         f[K_REQUESTED_SIZE] ? "requested_size" : "the real_size of its last history entry", req, bsize);
  if (req == UINT64_MAX)
    req = bsize;
  if ((rc = _ml_snap_add_blk (c, baddr, req, stream, pool, 0, (MlPkValue *) frames,
                              _ml_snap_org_block (where.k, where.b))) < 0)
    return rc;
  c->blks[c->n_blks - 1].pending = pending;
  return 0;
}

/* A segment's own totals against its blocks': a disagreement is a note
 * naming the segment, the field and both numbers. */
static int
check_sums (MlSnapCtx *c, const MlPkValue *s, size_t k, const SegSums *sum, size_t n_blocks)
{
  static const char *const keys[] = { "allocated_size", "active_size", "requested_size" };
  const uint64_t got[] = { sum->allocated, sum->active, sum->requested };
  if (!n_blocks)
    return 0;
  for (size_t i = 0; i < 3; i++)
    {
      uint64_t said;
      if (!ml_pk_get_u64 (s, keys[i], &said) || said == got[i] || (i == 2 && sum->req_unknown))
        continue;
      char note[256];
      snprintf (note, sizeof note, "segments[%zu]: %s is %" PRIu64 ", its blocks add up to %" PRIu64
                " (the figures use the blocks)", k, keys[i], said, got[i]);
      if (ml_trace_add_note (c->t, note) < 0)
        return _ml_snap_oom (c);
    }
  return 0;
}

/* Segment @k of the device read, then its blocks: they tile the segment
 * in address order, a block without "address" starting where the one
 * before ended. */
static int
read_segment (MlSnapCtx *c, const MlPkValue *s, size_t k)
{
  uint64_t addr = 0, size = 0, raw_stream = 0;
  uint32_t stream, pool = 0;
  MlSnapWhere where = { "segment", k, SIZE_MAX };
  int rc;
  if ((rc = _ml_snap_uint_field (c, s, "address", UINT_MAX_FIELD, true, &addr, where)) < 0
      || (rc = _ml_snap_uint_field (c, s, "total_size", UINT_MAX_FIELD, true, &size, where)) < 0
      || (rc = _ml_snap_uint_field (c, s, "stream", UINT_MAX_FIELD, false, &raw_stream, where)) < 0
      || (rc = _ml_snap_stream (c, raw_stream, &stream)) < 0)
    return rc;
  const MlPkValue *pid = ml_pk_get (s, "segment_pool_id");
  if (pid && (rc = _ml_snap_pool_of (c, pid, &pool)) < 0)
    {
      char said[96];
      return rc != ML_EINPUT ? rc
             : ml_error_set (c->err, ML_EINPUT, "%s: segment %zu: \"segment_pool_id\" is %s; expected a pair of "
                             "integers (a MempoolId_t)", c->path, k, ml_pk_describe (pid, said, sizeof said));
    }
  const char *type = ml_pk_get_str (s, "segment_type");
  int64_t expandable = 0;
  ml_pk_get_int (s, "is_expandable", &expandable);
  bool small = type ? strcmp (type, "small") == 0 : size == SMALL_BUFFER;
  rc = _ml_snap_add_seg (c, addr, size, stream, pool, small, expandable != 0, _ml_snap_org_block (k, SIZE_MAX));
  if (rc < 0)
    return rc;
  c->segs[c->n_segs - 1].frames = (MlPkValue *) _ml_snap_as_list (ml_pk_get (s, "frames"));
  if (_ml_snap_grow ((void **) &c->spans, &c->cap_spans, c->n_spans + 1, sizeof *c->spans) < 0)
    return _ml_snap_oom (c);
  c->spans[c->n_spans++] = (struct MlSnapSpan) { addr, size, pool };
  const MlPkValue *blocks = _ml_snap_as_list (ml_pk_get (s, "blocks"));
  uint64_t at = addr;
  SegSums sum = { .seg_addr = addr, .seg_size = size };
  for (size_t b = 0; blocks && b < blocks->n; b++)
    {
      where.b = b;
      if ((rc = read_block (c, blocks->items[b], where, stream, pool, &at, &sum)) < 0)
        return rc;
    }
  return check_sums (c, s, k, &sum, blocks ? blocks->n : 0);
}

static int
cmp_span_addr (const void *a, const void *b)
{
  const struct MlSnapSpan *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int
_ml_snap_read_segments (MlSnapCtx *c, const MlPkValue *segments)
{
  /* the live map takes every block of the device: one allocation */
  size_t n_blocks = 0;
  for (size_t k = 0; k < segments->n; k++)
    if (segments->items[k]->kind == ML_PK_DICT && _ml_snap_dev_of (segments->items[k]) == c->dev)
      n_blocks += ml_pk_len (ml_pk_get (segments->items[k], "blocks"));
  if (ml_u64map_reserve (&c->live, n_blocks) < 0)
    return _ml_snap_oom (c);
  for (size_t k = 0; k < segments->n; k++)
    {
      const MlPkValue *s = segments->items[k];
      int rc;
      if (s->kind != ML_PK_DICT)
        return ml_error_set (c->err, ML_EINPUT, "%s: segment %zu is a %s, not a dict", c->path, k, ml_pk_kind_name (s->kind));
      const MlPkValue *blocks = ml_pk_get (s, "blocks");
      char said[96];
      if (blocks && !_ml_snap_as_list (blocks))
        return ml_error_set (c->err, ML_EINPUT, "%s: segments[%zu][\"blocks\"] is %s, not a list of blocks", c->path, k,
                             ml_pk_describe (blocks, said, sizeof said));
      if (_ml_snap_dev_of (s) == c->dev && (rc = read_segment (c, s, k)) < 0)
        return rc;
    }
  if (c->n_spans > 1)  /* none read: spans is NULL, which qsort may not take */
    qsort (c->spans, c->n_spans, sizeof *c->spans, cmp_span_addr);
  return 0;
}

/* Segments of one device, and blocks of one segment, must not overlap:
 * memory the allocator holds twice is a broken snapshot (or one glued
 * from two processes). The read goes on, with a warning that names the
 * first overlapping pair and how many there are. */
typedef struct {
  uint64_t addr, size;
  size_t   k;
} Span;

static int
cmp_span (const void *a, const void *b)
{
  const Span *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int
_ml_snap_check_overlaps (MlSnapCtx *c, const MlPkValue *segments)
{
  Span *sp = malloc ((segments->n ? segments->n : 1) * sizeof *sp);
  if (!sp)
    return _ml_snap_oom (c);
  size_t n = 0, seg_pairs = 0, blk_pairs = 0;
  char first_blk[200] = "";
  for (size_t k = 0; k < segments->n; k++)
    {
      const MlPkValue *s = segments->items[k];
      uint64_t addr, size;
      if (_ml_snap_dev_of (s) != c->dev || !ml_pk_get_u64 (s, "address", &addr) || !ml_pk_get_u64 (s, "total_size", &size))
        continue;
      sp[n++] = (Span) { addr, size, k };
      /* blocks in the order the segment lists them (address order) */
      const MlPkValue *blocks = _ml_snap_as_list (ml_pk_get (s, "blocks"));
      uint64_t at = addr, prev_end = addr, baddr, bsize;
      for (size_t b = 0; blocks && b < blocks->n; b++)
        {
          const MlPkValue *bl = blocks->items[b];
          if (!ml_pk_get_u64 (bl, "size", &bsize))
            continue;
          if (!ml_pk_get_u64 (bl, "address", &baddr))
            baddr = at;
          at = baddr + bsize;
          if (b > 0 && baddr < prev_end)
            {
              if (!blk_pairs++)
                snprintf (first_blk, sizeof first_blk, "segment %zu: block %zu at 0x%" PRIx64 " starts before block %zu ends at 0x%" PRIx64,
                          k, b, baddr, b - 1, prev_end);
            }
          if (at > prev_end)
            prev_end = at;
        }
    }
  qsort (sp, n, sizeof *sp, cmp_span);
  char first_seg[200] = "";
  uint64_t end = 0;
  size_t end_k = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (i > 0 && sp[i].addr < end)
        {
          if (!seg_pairs++)
            snprintf (first_seg, sizeof first_seg, "segment %zu [0x%" PRIx64 ", +%" PRIu64 ") overlaps segment %zu, which ends at 0x%" PRIx64,
                      sp[i].k, sp[i].addr, sp[i].size, end_k, end);
        }
      uint64_t e = sp[i].addr + sp[i].size < sp[i].addr ? UINT64_MAX : sp[i].addr + sp[i].size;
      if (i == 0 || e > end)
        {
          end = e;
          end_k = sp[i].k;
        }
    }
  free (sp);
  char note[320];
  if (seg_pairs)
    {
      snprintf (note, sizeof note, "%s (%zu overlapping segment%s in all; the segments hold some bytes twice)", first_seg, seg_pairs,
                seg_pairs == 1 ? "" : "s");
      if (ml_trace_add_note (c->t, note) < 0)
        return _ml_snap_oom (c);
    }
  if (blk_pairs)
    {
      snprintf (note, sizeof note, "%s (%zu overlapping block%s in all)", first_blk, blk_pairs, blk_pairs == 1 ? "" : "s");
      if (ml_trace_add_note (c->t, note) < 0)
        return _ml_snap_oom (c);
    }
  return 0;
}

/* ---- step 5: the external annotations of this device, by time ---- */

static int
cmp_ann (const void *a, const void *b)
{
  const MlSnapAnn *x = a, *y = b;
  return x->time < y->time ? -1 : x->time > y->time;
}

int
_ml_snap_read_annotations (MlSnapCtx *c, const MlPkValue *annotations)
{
  if (!annotations || !annotations->n)
    return 0;
  c->anns = calloc (annotations->n, sizeof *c->anns);
  if (!c->anns)
    return _ml_snap_oom (c);
  for (size_t k = 0; k < annotations->n; k++)
    {
      const MlPkValue *a = annotations->items[k];
      uint64_t time = UINT64_MAX;
      int64_t d = c->dev;
      int rc = _ml_snap_check_device (c, a, "external annotation", k);
      if (rc < 0)
        return rc;
      ml_pk_get_int (a, "device", &d);
      const char *name = ml_pk_get_str (a, "name"), *stage = ml_pk_get_str (a, "stage");
      if (!name || d != c->dev)
        continue;
      rc = _ml_snap_uint_field (c, a, "time_us", TIME_US_MAX, false, &time, (MlSnapWhere) { "external annotation", k, SIZE_MAX });
      if (rc < 0)
        return rc;
      if (time == UINT64_MAX)
        continue;   /* no time: nowhere to put it */
      /* "name stage", the stage lowercased ("START" -> "start") */
      size_t nl = strlen (name), sl = stage ? strlen (stage) : 0;
      char *text = malloc (nl + sl + 2);
      if (!text)
        return _ml_snap_oom (c);
      memcpy (text, name, nl);
      text[nl] = 0;
      if (stage)
        {
          text[nl] = ' ';
          for (size_t j = 0; j <= sl; j++)
            text[nl + 1 + j] = (char) (stage[j] >= 'A' && stage[j] <= 'Z' ? stage[j] - 'A' + 'a' : stage[j]);
        }
      rc = _ml_snap_intern (c, text, &c->anns[c->n_anns].name);
      free (text);
      if (rc < 0)
        return rc;
      c->anns[c->n_anns++].time = time;
    }
  qsort (c->anns, c->n_anns, sizeof *c->anns, cmp_ann);
  return 0;
}

/* ---- the trace's own account of what it holds ---- */

/* Actions the recording skipped (_record_memory_history's skip_actions):
 * a "skip_actions" list where the file has one, else what the device's
 * counts show: frees completed but none requested (free_requested
 * skipped), frees but no alloc (alloc skipped), more frees requested
 * than blocks still pending at dump time and none completed
 * (free_completed skipped). */
static uint32_t
skipped_actions (const MlSnapCtx *c, const MlSnapDevTrace *dt, const MlPkValue *settings, const MlPkValue *root)
{
  uint32_t bits = 0;
  const MlPkValue *where[] = { settings, root };
  for (size_t w = 0; w < 2; w++)
    {
      const MlPkValue *l = where[w] && where[w]->kind == ML_PK_DICT ? _ml_snap_as_list (ml_pk_get (where[w], "skip_actions"))
                                                                    : NULL;
      for (size_t k = 0; l && k < l->n; k++)
        {
          MlEventKind kind;
          if (_ml_snap_action_of (l->items[k], &kind) == 0)
            bits |= 1u << kind;
        }
    }
  if (bits || !dt || !dt->n_all)
    return bits;
  const uint64_t *a = dt->actions;
  size_t pending = 0;
  for (size_t k = 0; k < c->n_blks; k++)
    pending += c->blks[k].pending;
  if (a[ML_EV_FREE] && !a[ML_EV_FREE_REQUESTED])
    bits |= 1u << ML_EV_FREE_REQUESTED;
  if (!a[ML_EV_ALLOC] && (a[ML_EV_FREE] || a[ML_EV_FREE_REQUESTED]))
    bits |= 1u << ML_EV_ALLOC;
  if (!a[ML_EV_FREE] && a[ML_EV_FREE_REQUESTED] > pending)
    bits |= 1u << ML_EV_FREE;
  return bits;
}

int
_ml_snap_read_history (MlSnapCtx *c, const MlSnapDevTrace *dt, const MlPkValue *settings, const MlPkValue *root)
{
  MlTrace *t = c->t;
  t->skipped_actions = skipped_actions (c, dt, settings, root);
  char note[400];
  if (t->skipped_actions)
    {
      size_t len = (size_t) snprintf (note, sizeof note, "not recorded:");
      for (int k = 0; k < ML_EV__COUNT && len < sizeof note; k++)
        if (t->skipped_actions & (1u << k))
          len += (size_t) snprintf (note + len, sizeof note - len, " %s", _ml_snap_action_name ((MlEventKind) k));
      if (len < sizeof note)
        snprintf (note + len, sizeof note - len, " (skip_actions)%s%s",
                  (t->skipped_actions & (1u << ML_EV_FREE)) ? "; a free_requested ends its block" : "",
                  (t->skipped_actions & (1u << ML_EV_ALLOC)) ? "; blocks the trace frees are taken as allocated before it" : "");
      if (ml_trace_add_note (t, note) < 0)
        return _ml_snap_oom (c);
    }
  return 0;
}

int
_ml_snap_note_history (MlSnapCtx *c)
{
  MlTrace *t = c->t;
  if (t->ring_wrapped <= 0)
    return 0;
  char note[300];
  snprintf (note, sizeof note, "the trace is the last %" PRIu64 " entries of the run: PyTorch's ring buffer "
            "(trace_alloc_max_entries) wrapped, so blocks it frees without an alloc were allocated before it",
            t->ring_entries);
  return ml_trace_add_note (t, note) < 0 ? _ml_snap_oom (c) : 0;
}
