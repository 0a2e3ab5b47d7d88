/* snapshot-fields.c — the snapshot pickle's values as the reader takes
 * them: keys looked up once per string object, unsigned integers with
 * errors that name the field and the value, actions, devices, and where
 * an event came from in the file (MlTrace.origin_text). */
#include "sim/formats/snapshot-private.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
_ml_snap_grow (void **p, size_t *cap, size_t need, size_t elem)
{
  if (need <= *cap)
    return 0;
  size_t c = *cap ? *cap * 2 : 64;
  while (c < need)
    c *= 2;
  void *q = realloc (*p, c * elem);
  if (!q)
    return ML_ENOMEM;
  *p = q;
  *cap = c;
  return 0;
}

int
_ml_snap_oom (MlSnapCtx *c)
{
  return ml_error_set (c->err, ML_ENOMEM, "%s: out of memory", c->path);
}

int
_ml_snap_intern (MlSnapCtx *c, const char *s, uint32_t *out)
{
  uint32_t i = ml_strtab_intern0 (c->t->strings, s ? s : "");
  if (i == UINT32_MAX)
    return _ml_snap_oom (c);
  *out = i;
  return 0;
}

/* True when @v's text could be a key some reader looks up by its bytes
 * (short, letters and '_'): such a string keeps its text in the memo. */
static bool
key_like (const MlPkValue *v)
{
  if (v->len < 16)
    return true;
  for (size_t k = 0; k < v->len; k++)
    if (!((v->s[k] >= 'a' && v->s[k] <= 'z') || v->s[k] == '_'))
      return false;
  return true;
}

/* The string of a value, interned (by its bytes: a pickle may hold the
 * same text as several objects). A frame's string is interned once per
 * memo object: its tag (TAG_TEXT) keeps the index, and the memo keeps the
 * tag alone (ml_pk_retire) unless the text looks like a key. */
int
_ml_snap_intern_val (MlSnapCtx *c, const MlPkValue *v, uint32_t *out)
{
  if (v && v->kind == ML_PK_STR && (v->tag & TAG_ROLE) == TAG_TEXT)
    {
      *out = v->tag & ~TAG_ROLE;
      return 0;
    }
  uint32_t i = v && v->kind == ML_PK_STR ? ml_strtab_intern (c->t->strings, v->s, v->len) : 0;
  if (i == UINT32_MAX)
    return _ml_snap_oom (c);
  if (v && v->kind == ML_PK_STR && !v->tag && i <= TAG_MAX && !key_like (v))
    {
      MlPkValue *w = (MlPkValue *) v;
      w->tag = TAG_TEXT | i;
      ml_pk_retire (w);
    }
  *out = i;
  return 0;
}
/* A string's tag: TAG_KEY | (field id + 1) << 8 | (action kind + 2),
 * each part 0 until computed (action 1: not an action). */
static unsigned
key_of (MlPkValue *k)
{
  static const char *const names[K__COUNT] = { "", "filename", "name", "line", "action", "addr", "size", "stream",
                                               "time_us", "frames", "device_free", "user_metadata", "state",
                                               "address", "requested_size", "history", "real_size", "pool_id",
                                               "compile_context", "forward_frames", "fx_node_op", "fx_node_name",
                                               "fx_node_target", "fx_original_trace" };
  if (k->kind != ML_PK_STR)
    return K_OTHER;   /* only strings are tagged (numbers may be shared) */
  bool cached = (k->tag & TAG_ROLE) == TAG_KEY;
  if (cached && (k->tag & 0xff00))
    return ((k->tag >> 8) & 0xff) - 1;
  unsigned id = K_OTHER;
  if (k->kind == ML_PK_STR)
    for (unsigned i = 1; i < K__COUNT; i++)
      if (k->len == strlen (names[i]) && memcmp (k->s, names[i], k->len) == 0)   /* "size\0x" is not "size" */
        {
          id = i;
          break;
        }
  if (cached || !k->tag)
    k->tag = TAG_KEY | (k->tag & 0xff) | (id + 1) << 8;
  return id;
}

/* The values of @d under the keys above, in one pass over its items
 * (NULL when absent); the last one wins, as in Python. */
void
_ml_snap_fields (const MlPkValue *d, const MlPkValue *out[K__COUNT])
{
  memset (out, 0, K__COUNT * sizeof *out);
  if (d->kind != ML_PK_DICT)
    return;
  for (size_t k = 0; k + 1 < d->n; k += 2)
    out[key_of (d->items[k])] = d->items[k + 1];
}

bool
_ml_snap_int_of (const MlPkValue *v, int64_t *out)
{
  if (!v || (v->kind != ML_PK_INT && v->kind != ML_PK_BOOL))
    return false;
  *out = v->i;
  return true;
}
/* The error for field @key of @where holding the value @said (as
 * ml_pk_describe says it) where an integer from 0 to @max belongs. */
int
_ml_snap_bad_uint (MlSnapCtx *c, const char *where, const char *key, const char *said, uint64_t max)
{
  return ml_error_set (c->err, ML_EINPUT, "%s: %s: \"%s\" is %s; expected an integer from 0 to %" PRIu64, c->path,
                       where, key, said, max);
}

/* Reserved bytes that no int64 holds: the sizes of a device's segments
 * and segment events (each up to 2^63 - 1) added up past 2^63. */
int
_ml_snap_reserved_overflow (MlSnapCtx *c, size_t dev, size_t entry, uint64_t size)
{
  char list[40];
  return ml_error_set (c->err, ML_EINPUT, "%s: %s[%zu]: segment size %" PRIu64 " takes the reserved bytes past 2^63",
                       c->path, _ml_snap_ctx_list (c, dev, list, sizeof list), entry, size);
}
/* Field @key of dict @d, an unsigned integer up to @max, of @w:
 * absent leaves *out (an error when @required); anything else that is
 * not such an integer is an error naming the value. */
int
_ml_snap_uint_value (MlSnapCtx *c, const MlPkValue *v, const char *key, uint64_t max, bool required,
                     uint64_t *out, MlSnapWhere w)
{
  if (v ? ml_pk_uint (v, max, out) : !required)
    return 0;
  char where[96];
  if (w.b == SIZE_MAX)
    snprintf (where, sizeof where, "%s %zu", w.what, w.k);
  else
    snprintf (where, sizeof where, "%s %zu block %zu", w.what, w.k, w.b);
  if (!v)
    return ml_error_set (c->err, ML_EINPUT, "%s: %s has no \"%s\" (an integer)", c->path, where, key);
  char said[96];
  return _ml_snap_bad_uint (c, where, key, ml_pk_describe (v, said, sizeof said), max);
}

int
_ml_snap_uint_field (MlSnapCtx *c, const MlPkValue *d, const char *key, uint64_t max, bool required,
                     uint64_t *out, MlSnapWhere w)
{
  return _ml_snap_uint_value (c, ml_pk_get (d, key), key, max, required, out, w);
}

/* The unsigned integer fields of a trace entry, as the MlSnapEnt keeps the
 * one that is wrong (ENT_BAD_FIELD). */
const MlSnapEntryField _ml_snap_entry_fields[ML_SNAP_ENTRY_FIELDS] = {
  { K_ADDR, "addr", UINT_MAX_FIELD }, { K_SIZE, "size", UINT_MAX_FIELD }, { K_STREAM, "stream", UINT_MAX_FIELD },
  { K_TIME_US, "time_us", TIME_US_MAX }, { K_DEVICE_FREE, "device_free", UINT_MAX_FIELD },
};
const MlPkValue *
_ml_snap_as_list (const MlPkValue *v)
{
  return v && (v->kind == ML_PK_LIST || v->kind == ML_PK_TUPLE) ? v : NULL;
}
/* A "device" that is present and not an integer (a string, a float,
 * None, a bool) is an error naming @what, @k and the value (it read as
 * device 0); 0 otherwise. */
int
_ml_snap_check_device (MlSnapCtx *c, const MlPkValue *d, const char *what, size_t k)
{
  const MlPkValue *v = ml_pk_get (d, "device");
  if (!v || v->kind == ML_PK_INT)
    return 0;
  char said[96];
  return ml_error_set (c->err, ML_EINPUT, "%s: %s %zu: \"device\" is %s; expected a device number (0 .. %d)", c->path,
                       what, k, ml_pk_describe (v, said, sizeof said), ML_DEVICE_MAX);
}

int64_t
_ml_snap_dev_of (const MlPkValue *seg)
{
  int64_t d = 0;
  ml_pk_get_int (seg, "device", &d);
  return d;
}

int
_ml_snap_stream (MlSnapCtx *c, uint64_t value, uint32_t *out)
{
  uint32_t idx;
  if (ml_u64map_get (&c->streams, value, &idx))
    {
      *out = idx;
      return 0;
    }
  idx = ml_trace_add_stream (c->t, value);
  if (idx == UINT32_MAX || ml_u64map_put (&c->streams, value, idx) < 0)
    return _ml_snap_oom (c);
  *out = idx;
  return 0;
}

int
_ml_snap_pool_of (MlSnapCtx *c, const MlPkValue *v, uint32_t *out)
{
  const MlPkValue *l = _ml_snap_as_list (v);
  if (!l || l->n != 2 || l->items[0]->kind != ML_PK_INT || l->items[1]->kind != ML_PK_INT)
    return ML_EINPUT;
  uint32_t idx = ml_trace_add_pool (c->t, l->items[0]->i, l->items[1]->i);
  if (idx == UINT32_MAX)
    return _ml_snap_oom (c);
  *out = idx;
  return 0;
}

uint32_t
_ml_snap_pool_at (const MlSnapCtx *c, uint64_t addr)
{
  size_t lo = 0, hi = c->n_spans;
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      if (c->spans[mid].addr <= addr)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (lo && addr - c->spans[lo - 1].addr < c->spans[lo - 1].size)
    return c->spans[lo - 1].pool;
  return 0;
}
static int
action_kind (const char *a, MlEventKind *k)
{
  static const struct { const char *name; MlEventKind kind; } map[] = {
    { "alloc", ML_EV_ALLOC }, { "free_requested", ML_EV_FREE_REQUESTED }, { "free_completed", ML_EV_FREE },
    { "segment_alloc", ML_EV_SEGMENT_ALLOC }, { "segment_free", ML_EV_SEGMENT_FREE },
    { "segment_map", ML_EV_SEGMENT_MAP }, { "segment_unmap", ML_EV_SEGMENT_UNMAP },
    { "oom", ML_EV_OOM }, { "snapshot", ML_EV_SNAPSHOT }, { "annotate", ML_EV_MARK },
    { "user_defined", ML_EV_MARK },
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (a && strcmp (a, map[i].name) == 0)
      {
        *k = map[i].kind;
        return 0;
      }
  return -1;
}

/* The kind of an action string, cached in its tag (the action strings
 * are memo-shared: one object per distinct action). */
int
_ml_snap_action_of (const MlPkValue *cv, MlEventKind *k)
{
  if (!cv || cv->kind != ML_PK_STR || strlen (cv->s) != cv->len)
    return -1;   /* "alloc\0x" is no action */
  MlPkValue *v = (MlPkValue *) cv;
  bool cached = (v->tag & TAG_ROLE) == TAG_KEY;
  if (cached && (v->tag & 0xff))
    {
      if ((v->tag & 0xff) == 1)
        return -1;
      *k = (MlEventKind) ((v->tag & 0xff) - 2);
      return 0;
    }
  int rc = action_kind (v->s, k);
  if (cached || !v->tag)
    v->tag = TAG_KEY | (v->tag & 0xff00) | (rc < 0 ? 1u : (uint32_t) *k + 2);
  return rc;
}

uint64_t
_ml_snap_org_entry (uint64_t index, MlEventKind action)
{
  return index <= ORG_INDEX ? ORG_ENTRY | (uint64_t) action << 56 | index : 0;
}

uint64_t
_ml_snap_org_block (size_t k, size_t b)
{
  if (k >= (UINT64_C (1) << 30) || (b != SIZE_MAX && b > UINT32_MAX))
    return 0;
  return b == SIZE_MAX ? ORG_SEGMENT | k : ORG_BLOCK | (uint64_t) k << 32 | b;
}

const char *
ml_snapshot_action_name (MlEventKind kind)
{
  return _ml_snap_action_name (kind);
}

const char *
_ml_snap_action_name (MlEventKind k)
{
  switch (k)
    {
    case ML_EV_ALLOC: return "alloc";
    case ML_EV_FREE: return "free_completed";
    case ML_EV_FREE_REQUESTED: return "free_requested";
    case ML_EV_SEGMENT_ALLOC: return "segment_alloc";
    case ML_EV_SEGMENT_FREE: return "segment_free";
    case ML_EV_SEGMENT_MAP: return "segment_map";
    case ML_EV_SEGMENT_UNMAP: return "segment_unmap";
    case ML_EV_OOM: return "oom";
    case ML_EV_SNAPSHOT: return "snapshot";
    case ML_EV_MARK: return "annotate";
    default: return "?";
    }
}

const char *
_ml_snap_list_name (uint32_t device, char *buf, size_t len)
{
  if (device == ML_TRACE_HOST)
    snprintf (buf, len, "host_traces");
  else
    snprintf (buf, len, "device_traces[%" PRIu32 "]", device);
  return buf;
}

const char *
_ml_snap_ctx_list (const MlSnapCtx *c, size_t list, char *buf, size_t len)
{
  return _ml_snap_list_name (c->host ? ML_TRACE_HOST : (uint32_t) list, buf, len);
}

/* MlTrace.origin_text of a snapshot: "device_traces[0][17] (alloc at
 * 0x7f0000000000)", "segments[2][\"blocks\"][5] (at 0x...)"; a block
 * live before the trace is named by the entry that frees it. */
const char *
_ml_snap_origin_text (const MlTrace *t, size_t i, uint64_t o, char *buf, size_t len)
{
  const MlEvent *ev = &t->events[i];
  char list[40];
  MlEventKind action = (MlEventKind) ((o >> 56) & 63);
  switch (o >> 62)
    {
    case 1:
      if (ev->kind == ML_EV_ALLOC && action != ML_EV_ALLOC)
        snprintf (buf, len, "the block at 0x%" PRIx64 " from before the trace, freed by %s[%" PRIu64 "] (%s)",
                  ev->addr, _ml_snap_list_name (t->device, list, sizeof list), o & ORG_INDEX, _ml_snap_action_name (action));
      else
        snprintf (buf, len, "%s[%" PRIu64 "] (%s at 0x%" PRIx64 ")", _ml_snap_list_name (t->device, list, sizeof list),
                  o & ORG_INDEX, _ml_snap_action_name (action), ev->addr);
      break;
    case 2:
      snprintf (buf, len, "segments[%" PRIu64 "] (at 0x%" PRIx64 ")", o & ((UINT64_C (1) << 32) - 1), ev->addr);
      break;
    default:
      snprintf (buf, len, "segments[%" PRIu64 "][\"blocks\"][%" PRIu64 "] (at 0x%" PRIx64 ")", (o >> 32) & ((UINT64_C (1) << 30) - 1),
                o & ((UINT64_C (1) << 32) - 1), ev->addr);
      break;
    }
  return buf;
}
