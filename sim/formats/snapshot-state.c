/* snapshot-state.c — the allocator state at the trace's first entry,
 * rebuilt by undoing the trace backwards from the dump-time state
 * (step 3), and emitted as tick 0 (step 4). */
#include "sim/formats/snapshot-private.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
_ml_snap_add_seg (MlSnapCtx *c, uint64_t addr, uint64_t size, uint32_t stream, bool small, bool expandable,
                  uint64_t origin)
{
  if (_ml_snap_grow ((void **) &c->segs, &c->cap_segs, c->n_segs + 1, sizeof *c->segs) < 0)
    return _ml_snap_oom (c);
  c->segs[c->n_segs++] = (MlSnapSeg) { addr, size, origin, stream, small, expandable, false };
  return 0;
}

int
_ml_snap_add_blk (MlSnapCtx *c, uint64_t addr, uint64_t req, uint32_t stream, uint32_t stack,
                  MlPkValue *frames, uint64_t origin)
{
  if (_ml_snap_grow ((void **) &c->blks, &c->cap_blks, c->n_blks + 1, sizeof *c->blks) < 0)
    return _ml_snap_oom (c);
  c->blks[c->n_blks] = (MlSnapBlk) { addr, req, origin, stream, stack, frames, false, false };
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
    return _ml_snap_add_seg (c, right.addr, right.size, right.stream, right.small, true, right.origin);
  return 0;
}

static int
range_add (MlSnapCtx *c, uint64_t addr, uint64_t size, uint32_t stream, uint64_t origin)
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
  return _ml_snap_add_seg (c, addr, size, stream, !_ml_snap_is_large_pages (size), true, origin);
}

/* ---- step 3: the state at the trace's first entry, by undoing the
 * trace backwards from the dump-time state; one entry per call, last
 * entry first ---- */

int
_ml_snap_undo_entry (MlSnapCtx *c, const MlSnapEnt *e, uint64_t origin)
{
  if (e->bad)
    return 0;
  MlEventKind kind = e->kind;
  uint64_t addr = e->addr, size = e->size;
  uint32_t stream = e->stream;
  uint32_t idx;
  int rc = 0;
  switch (kind)
    {
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
          rc = _ml_snap_add_blk (c, addr, size, stream, e->stack, NULL, origin);
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
      rc = _ml_snap_add_seg (c, addr, size, (uint32_t) stream, size == SMALL_BUFFER, false, origin);
      break;
    case ML_EV_SEGMENT_UNMAP:
      rc = range_add (c, addr, size, (uint32_t) stream, origin);
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
          if ((rc = _ml_snap_add_blk (c, p->addr, p->size, p->stream, p->stack, NULL, p->origin)) < 0)
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

int
_ml_snap_emit_settings (MlSnapCtx *c, const MlPkValue *settings)
{
  if (!settings || settings->kind != ML_PK_DICT)
    return 0;
  char text[256];
  int64_t max_split = -1, expandable = 0, div = 0;
  ml_pk_get_int (settings, "max_split_size", &max_split);
  ml_pk_get_int (settings, "expandable_segments", &expandable);
  const MlPkValue *rp = ml_pk_get (settings, "roundup_power2_divisions");
  bool mixed = false;
  if (rp && (rp->kind == ML_PK_INT))
    div = rp->i;
  else if (rp && rp->kind == ML_PK_DICT)
    for (size_t k = 1; k < rp->n; k += 2)
      if (rp->items[k]->kind == ML_PK_INT)
        {
          if (k > 1 && rp->items[k]->i != div)
            mixed = true;
          div = rp->items[k]->i > div ? rp->items[k]->i : div;
        }
  /* max_split_size as the file has it: bytes; -1 (SIZE_MAX as a signed
   * integer) or absent is PyTorch's default, unlimited */
  char split[32];
  if (max_split > 0)
    snprintf (split, sizeof split, "%" PRId64, max_split >> 20);
  else
    snprintf (split, sizeof split, "unlimited");
  snprintf (text, sizeof text, "allocator settings: max_split_size_mb=%s,expandable_segments=%d,roundup_power2_divisions=%" PRId64 "%s",
            split, expandable != 0, div, mixed ? " (per size range in the file; the largest)" : "");
  uint32_t name = 0;
  int rc;
  if ((rc = _ml_snap_intern (c, text, &name)) < 0)
    return rc;
  return _ml_snap_emit (c, ML_EV_MARK, c->tick, 0, 0, 0, 0, -1, name, 0, 0, 0);
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
      if ((rc = _ml_snap_emit (c, g->expandable ? ML_EV_SEGMENT_MAP : ML_EV_SEGMENT_ALLOC, c->tick, c->seg_id++, g->addr, g->size,
                               g->stream, -1, g->small ? c->small_name : c->large_name, 0, ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, g->origin)) < 0)
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
          || (rc = _ml_snap_emit (c, ML_EV_ALLOC, c->tick, c->next_id, b->addr, b->req, b->stream, -1, 0, st,
                                  ML_EVF_HAS_ID | ML_EVF_HAS_ADDR | clipped, b->origin)) < 0)
        return rc;
      if (ml_u64map_put (&c->live, b->addr, (uint32_t) c->next_id) < 0)
        return _ml_snap_oom (c);
      if (c->next_id++ >= UINT32_MAX - 1)
        return ml_error_set (c->err, ML_EINPUT, "%s: more than 2^32 blocks", c->path);
    }
  return 0;
}
