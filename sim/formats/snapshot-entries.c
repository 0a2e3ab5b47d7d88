/* snapshot-entries.c — step 0: the device traces' entries, one at a time
 * as the pickle streams them: counted for the device table, placed against
 * the --range window, and kept as MlSnapEnt (the entry dict is gone once
 * the callback returns). */
#include "sim/formats/snapshot-private.h"

#include <stdlib.h>
#include <string.h>

/* ---- step 0: each device trace entry, as the pickle streams it ---- */

static int
read_entry (MlSnapCtx *c, const MlPkValue *e, MlSnapEnt *out, MlPkValue **frames, const MlPkValue **forward)
{
  *frames = NULL;
  *forward = NULL;
  *out = (MlSnapEnt) { .time_us = -1 };
  if (e->kind != ML_PK_DICT)
    {
      out->bad = ENT_NOT_DICT;
      out->name = e->kind;
      return 0;
    }
  const MlPkValue *f[K__COUNT];
  _ml_snap_fields (e, f);
  MlEventKind kind;
  const char *action = f[K_ACTION] && f[K_ACTION]->kind == ML_PK_STR ? f[K_ACTION]->s : NULL;
  if (_ml_snap_action_of (f[K_ACTION], &kind) < 0)
    {
      out->bad = ENT_BAD_ACTION;
      return action ? _ml_snap_intern (c, action, &out->name) : 0;
    }
  out->kind = (uint8_t) kind;
  uint64_t stream = 0, time_us = UINT64_MAX, device_free = 0;
  uint64_t *outs[] = { &out->addr, &out->size, &stream, &time_us, &device_free };
  for (size_t k = 0; k < ML_SNAP_ENTRY_FIELDS; k++)
    if (!ml_pk_uint (f[_ml_snap_entry_fields[k].key], _ml_snap_entry_fields[k].max, outs[k]))
      {
        /* told when (and if) the device's trace is walked */
        char said[96];
        out->bad = ENT_BAD_FIELD;
        out->kind = (uint8_t) k;
        return _ml_snap_intern (c, ml_pk_describe (f[_ml_snap_entry_fields[k].key], said, sizeof said), &out->name);
      }
  int rc;
  if ((rc = _ml_snap_stream (c, stream, &out->stream)) < 0)
    return rc;
  if (f[K_POOL_ID])
    {
      if ((rc = _ml_snap_pool_of (c, f[K_POOL_ID], &out->pool)) == ML_EINPUT)
        {
          char said[96];
          out->bad = ENT_BAD_POOL;
          return _ml_snap_intern (c, ml_pk_describe (f[K_POOL_ID], said, sizeof said), &out->name);
        }
      if (rc < 0)
        return rc;
      out->has_pool = true;
    }
  /* torch.compile's region and the user's metadata (empty: none) */
  const MlPkValue *cc = f[K_COMPILE_CONTEXT], *um = f[K_USER_METADATA];
  if ((cc && cc->kind == ML_PK_STR && cc->len && (rc = _ml_snap_intern_val (c, cc, &out->meta.compile_context)) < 0)
      || (um && um->kind == ML_PK_STR && um->len && (rc = _ml_snap_intern_val (c, um, &out->meta.user_metadata)) < 0))
    return rc;
  if (time_us != UINT64_MAX)
    out->time_us = (int64_t) time_us;
  *frames = (MlPkValue *) f[K_FRAMES];
  *forward = f[K_FORWARD_FRAMES];
  if (kind == ML_EV_OOM)
    out->addr = device_free;
  else if (kind == ML_EV_MARK)
    {
      const char *text = f[K_NAME] && f[K_NAME]->kind == ML_PK_STR ? f[K_NAME]->s : NULL;
      if (!text && f[K_USER_METADATA] && f[K_USER_METADATA]->kind == ML_PK_STR)
        text = f[K_USER_METADATA]->s;
      return _ml_snap_intern (c, text ? text : action, &out->name);
    }
  return 0;
}

/* The trace of device @list, made when its first entry comes. */
static int
dev_trace (MlSnapCtx *c, size_t list, MlSnapDevTrace **out)
{
  if (list > ML_DEVICE_MAX)
    return ml_error_set (c->err, ML_EINPUT, "%s: device_traces[%zu]: entries of device %zu; memlens reads devices 0 .. %d",
                         c->path, list, list, ML_DEVICE_MAX);
  if (list >= c->n_dt)
    {
      MlSnapDevTrace *dt = realloc (c->dt, (list + 1) * sizeof *dt);
      if (!dt)
        return _ml_snap_oom (c);
      memset (dt + c->n_dt, 0, (list + 1 - c->n_dt) * sizeof *dt);
      c->dt = dt;
      c->n_dt = list + 1;
    }
  MlSnapDevTrace *d = &c->dt[list];
  if (d->n_all == 0)
    {
      d->origin_us = d->last_us = d->start_us = -1;
      ml_u64map_init (&d->pb_by_addr);
      d->where = c->range.set ? W_BEFORE : W_IN;
    }
  *out = d;
  return 0;
}

/* The device table's counts, from every entry: actions, the segment
 * bytes added so far and at most, the OOMs with the bytes before them. */
static int
count_entry (MlSnapCtx *c, MlSnapDevTrace *d, size_t list, uint64_t index, const MlSnapEnt *ent)
{
  d->actions[ent->kind]++;
  if (ent->kind == ML_EV_ALLOC && __builtin_add_overflow (d->alloc_bytes, ent->size, &d->alloc_bytes))
    d->alloc_bytes = UINT64_MAX;
  bool over = false;
  if (ent->kind == ML_EV_SEGMENT_ALLOC || ent->kind == ML_EV_SEGMENT_MAP)
    over = __builtin_add_overflow (d->net, (int64_t) ent->size, &d->net);
  else if (ent->kind == ML_EV_SEGMENT_FREE || ent->kind == ML_EV_SEGMENT_UNMAP)
    over = __builtin_sub_overflow (d->net, (int64_t) ent->size, &d->net);
  if (over)
    return _ml_snap_reserved_overflow (c, list, index, ent->size);
  if (ent->kind == ML_EV_OOM)
    {
      if (_ml_snap_grow ((void **) &d->ooms, &d->cap_ooms, d->n_ooms + 1, sizeof *d->ooms) < 0)
        return _ml_snap_oom (c);
      d->ooms[d->n_ooms++] = (MlSnapOom) { index, ent->size, ent->addr, d->net };
    }
  if (d->net > d->max_net)
    d->max_net = d->net;
  return 0;
}

/* Where entry @index falls against the window (d->where): ticks are
 * entry index + 1; times count from the trace's first, an entry without
 * one at the last seen. */
static void
place_in_window (MlSnapCtx *c, MlSnapDevTrace *d, uint64_t index, const MlSnapEnt *ent)
{
  if (d->where == W_IN && !c->range.set)
    return;
  if (ent->time_us >= 0)
    {
      if (d->origin_us < 0)
        d->origin_us = ent->time_us;
      if (ent->time_us > d->last_us)
        d->last_us = ent->time_us;
    }
  uint64_t at = index + 1;
  if (c->range.times)
    at = d->last_us < 0 ? 0 : c->range.epoch ? (uint64_t) d->last_us * 1000 : (uint64_t) (d->last_us - d->origin_us) * 1000;
  if (d->where == W_BEFORE && at >= c->range.from)
    d->where = W_IN, d->first = index;
  if (d->where == W_IN && at > c->range.to)
    d->where = W_AFTER;
  if (d->where == W_BEFORE)
    d->start_us = d->last_us;
}

/* An entry after the window, as undoing back to it needs it: segment
 * entries all, allocs and frees as each address's first (MlSnapPost). */
static int
keep_after_window (MlSnapCtx *c, MlSnapDevTrace *d, uint64_t index, const MlSnapEnt *ent)
{
  MlEventKind k = ent->kind;
  if (k == ML_EV_SEGMENT_ALLOC || k == ML_EV_SEGMENT_FREE || k == ML_EV_SEGMENT_MAP || k == ML_EV_SEGMENT_UNMAP)
    {
      if (_ml_snap_grow ((void **) &d->post, &d->cap_post, d->n_post + 1, sizeof *d->post) < 0)
        return _ml_snap_oom (c);
      d->post[d->n_post++] = *ent;
      return 0;
    }
  if (k != ML_EV_ALLOC && k != ML_EV_FREE)
    return 0;
  uint32_t idx;
  MlSnapPost *p = ml_u64map_get (&d->pb_by_addr, ent->addr, &idx) ? &d->pb[idx] : NULL;
  if (p && p->state != P_FREES)
    return 0;
  if (p && k == ML_EV_ALLOC)
    {
      p->state = P_FROZEN;
      return 0;
    }
  if (!p)
    {
      if (_ml_snap_grow ((void **) &d->pb, &d->cap_pb, d->n_pb + 1, sizeof *d->pb) < 0
          || ml_u64map_put (&d->pb_by_addr, ent->addr, (uint32_t) d->n_pb) < 0)
        return _ml_snap_oom (c);
      p = &d->pb[d->n_pb++];
      *p = (MlSnapPost) { .addr = ent->addr, .state = k == ML_EV_ALLOC ? P_ALLOC : P_FREES };
      if (k == ML_EV_ALLOC)
        return 0;
    }
  p->size = ent->size;
  p->stream = ent->stream;
  p->stack = ent->stack;
  p->pool = ent->has_pool ? ent->pool : 0;
  p->origin = _ml_snap_org_entry (index, ent->kind);
  return 0;
}

/* Counts an entry whose time_us is before the latest one so far (time
 * running backwards: entries out of order, clocks reset, files glued). */
static void
note_time (MlSnapDevTrace *d, uint64_t index, const MlSnapEnt *ent)
{
  int64_t us = ent->time_us;
  if (us < 0)
    return;
  if (d->n_timed++ && us < d->max_us)
    {
      if (!d->n_back++)
        d->back_index = index, d->back_us = us, d->back_prev_index = d->max_index, d->back_prev_us = d->max_us,
        d->back_kind = (uint8_t) ent->kind;
      return;
    }
  d->max_us = us;
  d->max_index = index;
}

static int
add_entry (MlSnapCtx *c, size_t list, MlPkValue *e)
{
  MlSnapDevTrace *d = NULL;
  MlSnapEnt ent;
  MlPkValue *frames;
  const MlPkValue *forward;
  int rc;
  if ((rc = dev_trace (c, list, &d)) < 0 || (rc = read_entry (c, e, &ent, &frames, &forward)) < 0)
    return rc;
  uint64_t index = d->n_all++;
  if (!ent.bad && (rc = count_entry (c, d, list, index, &ent)) < 0)
    return rc;
  if (!ent.bad)
    note_time (d, index, &ent);
  place_in_window (c, d, index, &ent);
  if (d->where != W_IN && ent.bad)
    {
      if (!d->has_bad)
        d->has_bad = true, d->bad = ent, d->bad_index = index;
      return 0;
    }
  /* every frames list is read, in the window or not: one the reader has
   * tagged stays in the document as a stub, not with its items (torch's
   * free_requested and free_completed share one) */
  if (!ent.bad && ((rc = _ml_snap_stack_of (c, frames, &ent.stack)) < 0
                   || (forward && (rc = _ml_snap_stack_with_forward (c, ent.stack, forward, &ent.stack)) < 0)))
    return rc;
  if (d->where == W_BEFORE)
    return 0;
  if (d->where == W_AFTER)
    return keep_after_window (c, d, index, &ent);
  if (_ml_snap_grow ((void **) &d->e, &d->cap, d->n + 1, sizeof *d->e) < 0)
    return _ml_snap_oom (c);
  d->e[d->n++] = ent;
  return 0;
}

/* The pickle's item callback: entry @index of device @list (items come
 * in order: @index is the count so far). */
int
_ml_snap_on_entry (void *user, size_t list, size_t index, MlPkValue *e)
{
  MlSnapCtx *c = user;
  (void) index;
  int rc = add_entry (c, list, e);
  if (rc < 0)
    c->entry_failed = true;
  return rc;
}
