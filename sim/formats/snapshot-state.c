/* snapshot-state.c — the allocator state at the trace's first entry,
 * rebuilt by undoing the trace backwards from the dump-time state
 * (step 3), and emitted as tick 0 (step 4). */
#include "sim/formats/snapshot-private.h"

#include "sim/alloc-conf.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
_ml_snap_add_seg (MlSnapCtx *c, uint64_t addr, uint64_t size, uint32_t stream, uint32_t pool, bool small,
                  bool expandable, uint64_t origin)
{
  if (_ml_snap_grow ((void **) &c->segs, &c->cap_segs, c->n_segs + 1, sizeof *c->segs) < 0)
    return _ml_snap_oom (c);
  c->segs[c->n_segs++] = (MlSnapSeg) { .addr = addr, .size = size, .origin = origin, .stream = stream, .pool = pool,
                                       .small = small, .expandable = expandable };
  return 0;
}

int
_ml_snap_add_blk (MlSnapCtx *c, uint64_t addr, uint64_t req, uint32_t stream, uint32_t pool, uint32_t stack,
                  MlPkValue *frames, uint64_t origin)
{
  if (_ml_snap_grow ((void **) &c->blks, &c->cap_blks, c->n_blks + 1, sizeof *c->blks) < 0)
    return _ml_snap_oom (c);
  c->blks[c->n_blks] = (MlSnapBlk) { .addr = addr, .req = req, .origin = origin, .stream = stream, .stack = stack,
                                     .frames = frames, .pool = pool };
  if (ml_u64map_put (&c->live, addr, (uint32_t) c->n_blks) < 0)
    return _ml_snap_oom (c);
  c->n_blks++;
  return 0;
}

/* Pages of an expandable segment come in its pool's page size: a range
 * that is a whole number of 20 MiB pages is taken for the large pool (a
 * small-pool map is one 2 MiB page; an unmap of ten small pages would be
 * misnamed, the bytes stay right). */
bool
_ml_snap_is_large_pages (uint64_t size)
{
  return size % LARGE_BUFFER == 0;
}

static MlSnapSeg *
find_seg (MlSnapCtx *c, uint64_t addr)
{
  for (size_t k = c->n_segs; k-- > 0;)
    if (!c->segs[k].gone && addr >= c->segs[k].addr && addr < c->segs[k].addr + c->segs[k].size)
      return &c->segs[k];
  return NULL;
}

static int
cmp_blk (const void *a, const void *b)
{
  const MlSnapBlk *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Expandable segments are kept as their mapped ranges, as the snapshot
 * lists them (one segment per contiguous mapped range). Undoing a
 * segment_map takes its pages out of the range that holds them (which may
 * split it in two); undoing a segment_unmap puts them back, joined to the
 * ranges they touch. */
static int
range_cut (MlSnapCtx *c, uint64_t addr, uint64_t size)
{
  MlSnapSeg *g = find_seg (c, addr);
  if (!g || !g->expandable)
    return 0;
  uint64_t end = addr + size, g_end = g->addr + g->size;
  if (end > g_end)
    end = g_end;
  MlSnapSeg right = *g;
  right.addr = end;
  right.size = g_end - end;
  if (addr > g->addr)
    g->size = addr - g->addr;
  else
    g->gone = true;
  if (right.size)
    return _ml_snap_add_seg (c, right.addr, right.size, right.stream, right.pool, right.small, true, right.origin);
  return 0;
}

static int
range_add (MlSnapCtx *c, uint64_t addr, uint64_t size, uint32_t stream, uint32_t pool, uint64_t origin)
{
  MlSnapSeg *below = addr ? find_seg (c, addr - 1) : NULL, *above = find_seg (c, addr + size);
  if (below && (!below->expandable || below->addr + below->size != addr))
    below = NULL;
  if (above && (!above->expandable || above->addr != addr + size))
    above = NULL;
  if (below)
    {
      below->size += size;
      if (above)
        {
          below->size += above->size;
          above->gone = true;
        }
      return 0;
    }
  if (above)
    {
      above->addr = addr;
      above->size += size;
      return 0;
    }
  return _ml_snap_add_seg (c, addr, size, stream, pool, !_ml_snap_is_large_pages (size), true, origin);
}

/* ---- step 3: the state at the trace's first entry, by undoing the
 * trace backwards from the dump-time state; one entry per call, last
 * entry first ---- */

int
_ml_snap_undo_entry (MlSnapCtx *c, const MlSnapEnt *e, uint64_t origin)
{
  if (e->bad)
    return 0;
  MlEventKind kind = _ml_snap_kind (c, e);
  uint64_t addr = e->addr, size = e->size;
  uint32_t stream = e->stream, pool = _ml_snap_ent_pool (c, e);
  uint32_t idx;
  int rc = 0;
  switch (kind)
    {
    case ML_EV_FREE_REQUESTED:
      /* the block's pending state began in the trace, not before it */
      if (ml_u64map_get (&c->live, addr, &idx))
        c->blks[idx].pending = false;
      break;
    case ML_EV_ALLOC:
      if (ml_u64map_get (&c->live, addr, &idx))
        {
          c->blks[idx].gone = true;
          ml_u64map_del (&c->live, addr);
        }
      break;
    case ML_EV_FREE:
      if (!ml_u64map_get (&c->live, addr, &idx))
        {
          rc = _ml_snap_add_blk (c, addr, size, stream, pool, e->stack, NULL, origin);
          if (rc == 0)
            c->blks[c->n_blks - 1].freed_frames = true;
        }
      break;
    case ML_EV_SEGMENT_ALLOC:
      {
        MlSnapSeg *g = find_seg (c, addr);
        if (g && g->addr == addr)
          g->gone = true;
      }
      break;
    case ML_EV_SEGMENT_MAP:
      rc = range_cut (c, addr, size);
      break;
    case ML_EV_SEGMENT_FREE:
      rc = _ml_snap_add_seg (c, addr, size, stream, pool, size == SMALL_BUFFER, false, origin);
      break;
    case ML_EV_SEGMENT_UNMAP:
      rc = range_add (c, addr, size, stream, pool, origin);
      break;
    default:
      break;
    }
  return rc;
}

/* Back from the dump-time state: past the window's end (its segment
 * entries, each address's first entries after it), then through the
 * kept entries, last first. */
int
_ml_snap_undo_trace (MlSnapCtx *c, const MlSnapDevTrace *dt)
{
  int rc;
  for (size_t i = dt->n_post; i-- > 0;)
    if ((rc = _ml_snap_undo_entry (c, &dt->post[i], 0)) < 0)
      return rc;
  for (size_t k = 0; k < dt->n_pb; k++)
    {
      const MlSnapPost *p = &dt->pb[k];
      uint32_t idx;
      bool live = ml_u64map_get (&c->live, p->addr, &idx);
      if (live && p->state != P_FREES)
        {
          c->blks[idx].gone = true;
          ml_u64map_del (&c->live, p->addr);
          live = false;
        }
      if (!live && p->state != P_ALLOC)
        {
          uint32_t pool = p->pool ? p->pool : _ml_snap_pool_at (c, p->addr);
          if ((rc = _ml_snap_add_blk (c, p->addr, p->size, p->stream, pool, p->stack, NULL, p->origin)) < 0)
            return rc;
          c->blks[c->n_blks - 1].freed_frames = true;
        }
    }
  for (size_t i = dt->n; i-- > 0;)
    if ((rc = _ml_snap_undo_entry (c, &dt->e[i], _ml_snap_org_entry (dt->first + i, dt->e[i].kind))) < 0)
      return rc;
  return 0;
}

/* ---- step 4: tick 0, the allocator settings as a mark (the caching
 * emulation's defaults), the segments, then the live blocks by address ---- */

/* The allocator settings the file records, as one PYTORCH_CUDA_ALLOC_CONF
 * string (MlTrace.alloc_conf): the values the allocator reported
 * (allocator_settings: max_split_size in bytes, -1 unlimited;
 * roundup_power2_divisions per interval, keyed by the interval's MiB;
 * the booleans), and from the raw string it last parsed
 * ("PYTORCH_CUDA_ALLOC_CONF") the keys the dict does not report
 * (max_non_split_rounding_mb, backend, per_process_memory_fraction, ...).
 * The reported values win: the raw string is only the last one set, and
 * a setting from an earlier call stays in force. */
static int
merge_settings (MlSnapCtx *c, const MlPkValue *settings, MlAllocConf *ac)
{
  MlAllocConf raw;
  ml_alloc_conf_init (&raw);
  const char *text = ml_pk_get_str (settings, "PYTORCH_CUDA_ALLOC_CONF");
  MlError perr = { 0 };
  char note[ML_ERROR_MAX + 64];
  if (text && *text && ml_alloc_conf_parse (text, &raw, &perr) < 0)
    {
      if (perr.code == ML_ENOMEM)
        return ml_alloc_conf_clear (&raw), _ml_snap_oom (c);
      snprintf (note, sizeof note, "allocator_settings: %s; the reported values are used", perr.msg);
      if (ml_trace_add_note (c->t, note) < 0)
        return ml_alloc_conf_clear (&raw), _ml_snap_oom (c);
    }
  *ac = raw;   /* the keys of the raw string, then the reported values over them */
  int64_t v;
  if (ml_pk_get_int (settings, "max_split_size", &v) && (v < 0 || (uint64_t) v != ac->max_split_size))
    {
      ac->max_split_size = v < 0 ? UINT64_MAX : (uint64_t) v;
      ac->set = ac->max_split_size == UINT64_MAX ? ac->set & ~(unsigned) ML_AC_MAX_SPLIT : ac->set | ML_AC_MAX_SPLIT;
    }
  const MlPkValue *gc = ml_pk_get (settings, "garbage_collection_threshold");
  if (gc && (gc->kind == ML_PK_FLOAT || gc->kind == ML_PK_INT))
    {
      ac->gc_threshold = gc->kind == ML_PK_FLOAT ? gc->f : (double) gc->i;
      ac->set = ac->gc_threshold > 0 ? ac->set | ML_AC_GC_THRESHOLD : ac->set & ~(unsigned) ML_AC_GC_THRESHOLD;
    }
  static const struct { const char *key; unsigned bit; size_t off; } flag_names[] = {
    { "expandable_segments", ML_AC_EXPANDABLE, offsetof (MlAllocConf, expandable_segments) },
    { "release_lock_on_cudamalloc", ML_AC_RELEASE_LOCK, offsetof (MlAllocConf, release_lock_on_cudamalloc) },
    { "pinned_use_cuda_host_register", ML_AC_PINNED_REGISTER, offsetof (MlAllocConf, pinned_use_host_register) },
    { "graph_capture_record_stream_reuse", ML_AC_GRAPH_STREAM_REUSE, offsetof (MlAllocConf, graph_capture_record_stream_reuse) },
  };
  for (size_t k = 0; k < sizeof flag_names / sizeof flag_names[0]; k++)
    if (ml_pk_get_int (settings, flag_names[k].key, &v))
      {
        *(bool *) ((char *) ac + flag_names[k].off) = v != 0;
        ac->set = v ? ac->set | flag_names[k].bit : ac->set & ~flag_names[k].bit;
      }
  if (ml_pk_get_int (settings, "pinned_num_register_threads", &v) && v > 0 && v <= 128)
    {
      ac->pinned_num_register_threads = (unsigned) v;
      ac->set = v > 1 ? ac->set | ML_AC_PINNED_THREADS : ac->set & ~(unsigned) ML_AC_PINNED_THREADS;
    }
  /* roundup_power2_divisions: {"1": d, "2": d, ...} per interval (an int in older files) */
  const MlPkValue *rp = ml_pk_get (settings, "roundup_power2_divisions");
  if (rp && rp->kind == ML_PK_INT && rp->i >= 0)
    for (size_t k = 0; k < ML_AC_INTERVALS; k++)
      ac->divisions[k] = (unsigned) rp->i;
  for (size_t k = 0; rp && rp->kind == ML_PK_DICT && k + 1 < rp->n; k += 2)
    {
      const MlPkValue *key = rp->items[k], *val = rp->items[k + 1];
      char *end;
      unsigned long long mb = key->kind == ML_PK_STR ? strtoull (key->s, &end, 10) : 0;
      if (!mb || (mb & (mb - 1)) || val->kind != ML_PK_INT || val->i < 0 || val->i > (1 << 20))
        continue;
      unsigned index = ml_alloc_conf_interval ((uint64_t) mb << 20);
      ac->divisions[index] = (unsigned) val->i;
    }
  bool any = false;
  for (size_t k = 0; k < ML_AC_INTERVALS; k++)
    any |= ac->divisions[k] != 0;
  ac->set = any ? ac->set | ML_AC_ROUNDUP : ac->set & ~(unsigned) ML_AC_ROUNDUP;
  return 0;
}

/* trace_alloc_max_entries / trace_alloc_overflowed (PyTorch PR 179276):
 * in allocator_settings, where memory_viz reads the flag, or at the top;
 * one value, or one per device. */
static void
read_ring (MlSnapCtx *c, const MlPkValue *settings, const MlPkValue *root)
{
  const MlPkValue *where[] = { settings, root };
  for (size_t w = 0; w < 2; w++)
    {
      if (!where[w] || where[w]->kind != ML_PK_DICT)
        continue;
      const MlPkValue *n = ml_pk_get (where[w], "trace_alloc_max_entries");
      const MlPkValue *o = ml_pk_get (where[w], "trace_alloc_overflowed");
      const MlPkValue *nl = _ml_snap_as_list (n), *ol = _ml_snap_as_list (o);
      if (nl && (size_t) c->dev < nl->n)
        n = nl->items[c->dev];
      if (ol && (size_t) c->dev < ol->n)
        o = ol->items[c->dev];
      if (n && n->kind == ML_PK_INT && n->i > 0 && !c->t->ring_entries)
        c->t->ring_entries = (uint64_t) n->i;
      if (o && (o->kind == ML_PK_BOOL || o->kind == ML_PK_INT) && c->t->ring_wrapped < 0)
        c->t->ring_wrapped = o->i != 0;
    }
}

int
_ml_snap_emit_settings (MlSnapCtx *c, const MlPkValue *settings, const MlPkValue *root)
{
  read_ring (c, settings, root);
  if (!settings || settings->kind != ML_PK_DICT)
    return 0;
  MlAllocConf ac;
  int rc = merge_settings (c, settings, &ac);
  if (rc < 0)
    return rc;
  size_t len = ml_alloc_conf_format (&ac, NULL, 0);
  if (!(c->t->alloc_conf = malloc (len + 1)))
    return ml_alloc_conf_clear (&ac), _ml_snap_oom (c);
  ml_alloc_conf_format (&ac, c->t->alloc_conf, len + 1);
  /* the mark: the three settings that place memory most */
  char text[256], split[32];
  if (ac.max_split_size != UINT64_MAX)
    snprintf (split, sizeof split, "%" PRIu64, ac.max_split_size >> 20);
  else
    snprintf (split, sizeof split, "unlimited");
  unsigned div = 0;
  bool mixed = false;
  for (size_t k = 0; k < ML_AC_INTERVALS; k++)
    {
      mixed |= k && ac.divisions[k] != ac.divisions[0];
      div = ac.divisions[k] > div ? ac.divisions[k] : div;
    }
  snprintf (text, sizeof text, "allocator settings: max_split_size_mb=%s,expandable_segments=%d,roundup_power2_divisions=%u%s",
            split, ac.expandable_segments, div, mixed ? " (per size range in the file; the largest)" : "");
  ml_alloc_conf_clear (&ac);
  uint32_t name = 0;
  if ((rc = _ml_snap_intern (c, text, &name)) < 0)
    return rc;
  return _ml_snap_emit (c, ML_EV_MARK, c->tick, 0, 0, 0, 0, -1, name, 0, 0, 0);
}

/* The stack of a block live at the trace's start with no frames and no
 * alloc in the trace: its call site says when it was allocated. */
static int
before_recording (MlSnapCtx *c, uint32_t *out)
{
  if (!c->before_stack)
    {
      uint32_t site;
      const char *text = c->tick ? "allocated before the window"
                         : c->t->ring_wrapped > 0 ? "allocated before the kept trace (the ring buffer wrapped)"
                         : "allocated before recording";
      int rc = _ml_snap_intern (c, text, &site);
      if (rc < 0)
        return rc;
      uint32_t idx = ml_trace_add_stack (c->t, site, NULL, 0);
      if (idx == UINT32_MAX)
        return _ml_snap_oom (c);
      c->t->stacks[idx].kind = ML_STACK_BEFORE_RECORDING;
      c->before_stack = idx;
    }
  *out = c->before_stack;
  return 0;
}

int
_ml_snap_emit_start_state (MlSnapCtx *c)
{
  int rc;
  if ((rc = _ml_snap_intern (c, "small", &c->small_name)) < 0 || (rc = _ml_snap_intern (c, "large", &c->large_name)) < 0)
    return rc;
  for (size_t k = 0; k < c->n_segs; k++)
    {
      const MlSnapSeg *g = &c->segs[k];
      if (g->gone || !g->size)
        continue;
      uint32_t st = 0;
      if ((g->frames && (rc = _ml_snap_stack_of (c, g->frames, &st)) < 0)
          || (rc = _ml_snap_emit (c, g->expandable ? ML_EV_SEGMENT_MAP : ML_EV_SEGMENT_ALLOC, c->tick, c->seg_id++, g->addr,
                                  g->size, g->stream, -1, g->small ? c->small_name : c->large_name, st,
                                  ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, g->origin)) < 0
          || (rc = _ml_snap_tag_last (c, g->pool, (MlEventMeta) { 0, 0 })) < 0)
        return rc;
    }
  size_t n_live = 0;
  for (size_t k = 0; k < c->n_blks; k++)
    if (!c->blks[k].gone)
      c->blks[n_live++] = c->blks[k];
  /* by address; torch lists segments and their blocks in address order,
   * so usually they are already */
  bool sorted = true;
  for (size_t k = 1; k < n_live && sorted; k++)
    sorted = c->blks[k - 1].addr <= c->blks[k].addr;
  if (!sorted)
    qsort (c->blks, n_live, sizeof *c->blks, cmp_blk);
  ml_u64map_clear (&c->live);
  ml_u64map_init (&c->live);
  if (ml_u64map_reserve (&c->live, n_live) < 0)
    return _ml_snap_oom (c);
  c->next_id = 1;
  /* a window that starts after the trace's first entry carries these in */
  uint16_t clipped = c->tick ? ML_EVF_CLIPPED : 0;
  for (size_t k = 0; k < n_live; k++)
    {
      const MlSnapBlk *b = &c->blks[k];
      uint32_t st = b->stack;
      if ((b->frames && (rc = _ml_snap_stack_of (c, b->frames, &st)) < 0)
          || (b->freed_frames && (rc = _ml_snap_stack_at_free (c, st, &st)) < 0)
          || (!st && (rc = before_recording (c, &st)) < 0)
          || (rc = _ml_snap_emit (c, ML_EV_ALLOC, c->tick, c->next_id, b->addr, b->req, b->stream, -1, 0, st,
                                  ML_EVF_HAS_ID | ML_EVF_HAS_ADDR | clipped, b->origin)) < 0
          || (rc = _ml_snap_tag_last (c, b->pool, (MlEventMeta) { 0, 0 })) < 0)
        return rc;
      /* freed by the program before the trace began, waiting on another
       * stream's work at dump time (active_pending_free) */
      if (b->pending
          && ((rc = _ml_snap_emit (c, ML_EV_FREE_REQUESTED, c->tick, c->next_id, b->addr, b->req, b->stream, -1, 0, 0,
                                   ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, b->origin)) < 0
              || (rc = _ml_snap_tag_last (c, b->pool, (MlEventMeta) { 0, 0 })) < 0))
        return rc;
      if (ml_u64map_put (&c->live, b->addr, (uint32_t) c->next_id) < 0)
        return _ml_snap_oom (c);
      if (c->next_id++ >= UINT32_MAX - 1)
        return ml_error_set (c->err, ML_EINPUT, "%s: more than 2^32 blocks", c->path);
    }
  return 0;
}
