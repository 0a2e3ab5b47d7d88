/* snapshot-replay.c — step 6: the trace forward from the rebuilt state,
 * one tick per entry, with the external annotations merged in by time. */
#include "sim/formats/snapshot-private.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim/base/treap.h"

/* Appends an event; @origin: where the file has it (ORG_*), 0 = nowhere. */
int
_ml_snap_emit (MlSnapCtx *c, MlEventKind kind, uint64_t tick, uint64_t id, uint64_t addr, uint64_t size,
               uint32_t stream,
               int64_t time_ns, uint32_t name, uint32_t stack, uint16_t flags, uint64_t origin)
{
  MlEvent ev = { .tick = tick, .id = id, .addr = addr, .size = size, .time_ns = time_ns, .name = name,
                 .stack = stack, .stream = stream, .kind = (uint8_t) kind, .flags = flags,
                 .device = c->t->device };
  if (!ml_trace_append (c->t, &ev) || (origin && ml_trace_set_origin (c->t, origin) < 0))
    return _ml_snap_oom (c);
  return 0;
}

int
_ml_snap_tag_last (MlSnapCtx *c, uint32_t pool, MlEventMeta meta)
{
  MlTrace *t = c->t;
  if (!t->n_events)
    return 0;
  t->events[t->n_events - 1].pool = pool;
  return ml_trace_set_meta (t, meta) < 0 ? _ml_snap_oom (c) : 0;
}

/* Emits the annotations up to @time_us (all that are left when
 * @time_us is UINT64_MAX), one tick each. */
int
_ml_snap_emit_annotations_until (MlSnapCtx *c, uint64_t time_us)
{
  int rc = 0;
  while (rc == 0 && c->next_ann < c->n_anns && c->anns[c->next_ann].time <= time_us)
    {
      const MlSnapAnn *a = &c->anns[c->next_ann++];
      rc = _ml_snap_emit (c, ML_EV_MARK, ++c->tick, 0, 0, 0, 0, (int64_t) a->time * 1000, a->name, 0, 0, 0);
    }
  return rc;
}

/* ---- step 6: the trace, forward; entry @i per call, in order ---- */

static int emit_entry (MlSnapCtx *c, const MlSnapEnt *e, uint64_t tick, int64_t time_ns, uint64_t org);

int
_ml_snap_walk_entry (MlSnapCtx *c, size_t i, const MlSnapEnt *e)
{
  char list[40];
  _ml_snap_list_name (c->t->device, list, sizeof list);
  if (e->bad == ENT_NOT_DICT)
    return ml_error_set (c->err, ML_EINPUT, "%s: %s[%zu] is a %s, not a dict",
                         c->path, list, i, ml_pk_kind_name ((MlPkKind) e->name));
  if (e->bad == ENT_BAD_ACTION)
    return ml_error_set (c->err, ML_EINPUT, "%s: %s[%zu]: unknown action \"%s\"",
                         c->path, list, i, e->name ? ml_trace_str (c->t, e->name) : "(none)");
  if (e->bad == ENT_BAD_POOL)
    return ml_error_set (c->err, ML_EINPUT, "%s: %s[%zu]: \"pool_id\" is %s; expected a pair "
                         "of integers (a MempoolId_t)", c->path, list, i, ml_trace_str (c->t, e->name));
  if (e->bad == ENT_BAD_FIELD)
    {
      char where[64];
      snprintf (where, sizeof where, "%s[%zu]", list, i);
      const MlSnapEntryField *f = &_ml_snap_entry_fields[e->kind];
      return _ml_snap_bad_uint (c, where, f->name, ml_trace_str (c->t, e->name), f->max);
    }
  MlEventKind kind = e->kind;
  int64_t time_ns = -1;
  int rc = 0;
  if (e->time_us >= 0)
    {
      time_ns = e->time_us * 1000;
      if ((rc = _ml_snap_emit_annotations_until (c, (uint64_t) e->time_us)) < 0)
        return rc;
    }
  uint64_t tick = ++c->tick, org = _ml_snap_org_entry (i, kind);
  size_t before = c->t->n_events;
  if ((rc = emit_entry (c, e, tick, time_ns, org)) < 0)
    return rc;
  /* the pool and meta of what the entry made (an alloc over a live block makes two) */
  bool pooled = kind == ML_EV_ALLOC || kind == ML_EV_FREE || kind == ML_EV_FREE_REQUESTED || kind == ML_EV_SEGMENT_ALLOC
                || kind == ML_EV_SEGMENT_FREE || kind == ML_EV_SEGMENT_MAP || kind == ML_EV_SEGMENT_UNMAP;
  for (size_t k = before; k < c->t->n_events; k++)
    {
      if (pooled)
        c->t->events[k].pool = _ml_snap_ent_pool (c, e);
      if (k + 1 == c->t->n_events && (rc = ml_trace_set_meta (c->t, e->meta)) < 0)
        return _ml_snap_oom (c);
    }
  return 0;
}

/* The events of entry @e at @tick. */
static int
emit_entry (MlSnapCtx *c, const MlSnapEnt *e, uint64_t tick, int64_t time_ns, uint64_t org)
{
  MlEventKind kind = _ml_snap_kind (c, e);
  uint64_t addr = e->addr, size = e->size;
  uint32_t stream = e->stream;
  int rc;
  uint32_t st = e->stack, id;
  switch (kind)
    {
    case ML_EV_ALLOC:
      if (ml_u64map_get (&c->live, addr, &id))
        {
          /* allocated twice without a free in between: the trace lost an
           * entry; end the old buffer here so lifetimes stay valid (and
           * say so) */
          if (!c->n_realloc++)
            c->realloc_at = org, c->realloc_addr = addr;
          if ((rc = _ml_snap_emit (c, ML_EV_FREE, tick, id, addr, 0, (uint32_t) stream, time_ns, 0, 0,
                                   ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, org)) < 0)
            return rc;
        }
      if (ml_u64map_put (&c->live, addr, (uint32_t) c->next_id) < 0)
        return _ml_snap_oom (c);
      return _ml_snap_emit (c, kind, tick, c->next_id++, addr, size, (uint32_t) stream, time_ns, 0, st,
                            ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, org);
    case ML_EV_FREE:
    case ML_EV_FREE_REQUESTED:
      if (!ml_u64map_get (&c->live, addr, &id))
        {
          /* the rebuild made every block the trace frees live before it,
           * so the block was freed already, and no alloc came since: the
           * trace lost entries; nothing to end (and say so) */
          if (!c->n_refree++)
            c->refree_at = org, c->refree_addr = addr;
          return 0;
        }
      if (kind == ML_EV_FREE)
        ml_u64map_del (&c->live, addr);
      return _ml_snap_emit (c, kind, tick, id, addr, size, (uint32_t) stream, time_ns, 0, st, ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, org);
    case ML_EV_OOM:
      return _ml_snap_emit (c, kind, tick, 0, addr, size, (uint32_t) stream, time_ns, 0, st, 0, org);
    case ML_EV_MARK:
      /* an annotation of a live block (torch.cuda.memory._annotate_memory,
       * action "annotate" at the block's address): tied to its buffer */
      if (addr && ml_u64map_get (&c->live, addr, &id))
        return _ml_snap_emit (c, kind, tick, id, addr, 0, stream, time_ns, e->name, st, ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, org);
      return _ml_snap_emit (c, kind, tick, 0, 0, 0, (uint32_t) stream, time_ns, e->name, st, 0, org);
    case ML_EV_SEGMENT_ALLOC:
    case ML_EV_SEGMENT_FREE:
      return _ml_snap_emit (c, kind, tick, c->seg_id++, addr, size, (uint32_t) stream, time_ns,
                            size == SMALL_BUFFER ? c->small_name : c->large_name, st, ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, org);
    case ML_EV_SEGMENT_MAP:
    case ML_EV_SEGMENT_UNMAP:
      return _ml_snap_emit (c, kind, tick, c->seg_id++, addr, size, (uint32_t) stream, time_ns,
                            _ml_snap_is_large_pages (size) ? c->large_name : c->small_name, st, ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, org);
    default:
      return _ml_snap_emit (c, kind, tick, 0, addr, size, (uint32_t) stream, time_ns, 0, st, 0, org);
    }
}

/* The warnings for entries the walk read past (the CLI prints them). */
int
_ml_snap_note_lost_entries (MlSnapCtx *c)
{
  char note[512], list[40];
  /* the list read: host_traces, or the device's (its entries are list 0 for the host) */
  size_t li = c->host ? 0 : (size_t) c->dev;
  _ml_snap_ctx_list (c, li, list, sizeof list);
  if (c->n_refree && !(c->t->skipped_actions & (1u << ML_EV_ALLOC)))
    {
      snprintf (note, sizeof note, "%s[%" PRIu64 "] (%s at 0x%" PRIx64 "): the block there is "
                "already free, with no alloc since its last free: the trace lost entries (recording stopped and "
                "started again, or a file glued together); the entry is ignored (%zu such entr%s in all)",
                list, c->refree_at & ORG_INDEX, _ml_snap_action_name ((MlEventKind) ((c->refree_at >> 56) & 63)),
                c->refree_addr, c->n_refree, c->n_refree == 1 ? "y" : "ies");
      if (ml_trace_add_note (c->t, note) < 0)
        return _ml_snap_oom (c);
    }
  const MlSnapDevTrace *dt = (c->host || c->dev >= 0) && li < c->n_dt ? &c->dt[li] : NULL;
  if (dt && dt->n_back)
    {
      snprintf (note, sizeof note, "%s[%" PRIu64 "] (%s): \"time_us\" %" PRId64 " is before the "
                "%" PRId64 " of %s[%" PRIu64 "]: time runs backwards (%" PRIu64 " such entr%s); "
                "times are kept as the file has them, and --range takes ticks only", list, dt->back_index,
                _ml_snap_action_name ((MlEventKind) dt->back_kind), dt->back_us, dt->back_prev_us, list,
                dt->back_prev_index, dt->n_back, dt->n_back == 1 ? "y" : "ies");
      if (ml_trace_add_note (c->t, note) < 0)
        return _ml_snap_oom (c);
    }
  if (c->n_realloc)
    {
      snprintf (note, sizeof note, "%s[%" PRIu64 "] (alloc at 0x%" PRIx64 "): the block there "
                "is still allocated, with no free since: the trace lost entries; the old block ends here (%zu such "
                "entr%s in all)", list, c->realloc_at & ORG_INDEX, c->realloc_addr, c->n_realloc,
                c->n_realloc == 1 ? "y" : "ies");
      if (ml_trace_add_note (c->t, note) < 0)
        return _ml_snap_oom (c);
    }
  return 0;
}

/* Gives the pages of @base's first @done bytes back to the system: the
 * replay reads each kept entry once, and the trace's events grow as the
 * entries behind them are no longer needed. Only whole pages inside the
 * array are given back (they belong to it alone); they read as zeros
 * after, and nothing reads them. */
static void
release_behind (const void *base, size_t done)
{
  static size_t page;
  if (!page)
    page = (size_t) sysconf (_SC_PAGESIZE);
  uintptr_t from = ((uintptr_t) base + page - 1) & ~(uintptr_t) (page - 1);
  uintptr_t to = ((uintptr_t) base + done) & ~(uintptr_t) (page - 1);
  if (to > from)
    madvise ((void *) from, to - from, MADV_DONTNEED);
}

/* The kept entries forward, then the annotations after them; after a
 * window that ends before the trace does, the buffers live at its end
 * that the trace frees later end just after it. */
int
_ml_snap_replay (MlSnapCtx *c, const MlSnapDevTrace *dt)
{
  int rc;
  for (size_t i = 0; dt && i < dt->n; i++)
    {
      if ((rc = _ml_snap_walk_entry (c, (size_t) (dt->first + i), &dt->e[i])) < 0)
        return rc;
      if (i % 65536 == 65535)
        release_behind (dt->e, (i + 1) * sizeof *dt->e);
    }
  c->t->window_last = c->tick;
  if ((rc = _ml_snap_note_lost_entries (c)) < 0)
    return rc;
  bool cut_end = dt && c->range.set && dt->first + dt->n < dt->n_all;
  if (!cut_end)
    return _ml_snap_emit_annotations_until (c, UINT64_MAX);
  uint64_t tick = c->tick + 1;
  for (size_t k = 0; k < dt->n_pb; k++)
    {
      uint32_t id;
      if (ml_u64map_get (&c->live, dt->pb[k].addr, &id)
          && (rc = _ml_snap_emit (c, ML_EV_FREE, tick, id, dt->pb[k].addr, 0, dt->pb[k].stream, -1, 0, 0,
                                  ML_EVF_HAS_ID | ML_EVF_HAS_ADDR | ML_EVF_CLIPPED, 0)) < 0)
        return rc;
    }
  return 0;
}

/* An alloc that starts inside a live segment and ends past it contradicts
 * the segment (a 1 GiB alloc in a 4 KiB segment; the figures would count
 * bytes the allocator never reserved): refused naming both. Segments by
 * base address, as the trace allocates and frees them; expandable
 * segments (mapped pages) are not checked. */
int
_ml_snap_check_allocs (MlSnapCtx *c)
{
  const MlTrace *t = c->t;
  MlTreap live;
  ml_treap_init_plain (&live);
  int rc = 0;
  for (size_t i = 0; i < t->n_events && rc == 0; i++)
    {
      const MlEvent *ev = &t->events[i];
      if (ev->kind == ML_EV_SEGMENT_ALLOC && ev->size)
        {
          if (!ml_treap_set_value (&live, ev->addr, 0, i) && ml_treap_insert (&live, ev->addr, 0, i) == ML_TREAP_NIL)
            rc = _ml_snap_oom (c);
        }
      else if (ev->kind == ML_EV_SEGMENT_FREE)
        ml_treap_remove (&live, ev->addr, 0);
      else if (ev->kind == ML_EV_ALLOC && (ev->flags & ML_EVF_HAS_ADDR))
        {
          uint32_t n = ml_treap_predecessor (&live, ev->addr, 1, NULL);
          const MlEvent *g = n == ML_TREAP_NIL ? NULL : &t->events[live.nodes[n].value];
          if (!g || ev->addr - g->addr >= g->size || ev->size <= g->size - (ev->addr - g->addr))
            continue;
          char a[ML_TRACE_WHERE_MAX], b[ML_TRACE_WHERE_MAX]; 
          rc = ml_error_set (c->err, ML_EINPUT, "%s: %s: size %" PRIu64 " ends past its segment [0x%" PRIx64 ", +%" PRIu64
                             ") (%s)", c->path, ml_trace_event_where (t, i, a, sizeof a), ev->size, g->addr, g->size,
                             ml_trace_event_where (t, (size_t) (g - t->events), b, sizeof b));
        }
    }
  ml_treap_clear (&live);
  return rc;
}
