/* state.c — the allocator's state at one tick (see state.h). */
#include "sim/analysis/state.h"

#include <stdlib.h>
#include <string.h>

const char *
ml_block_kind_name (MlBlockKind kind)
{
  switch (kind)
    {
    case ML_BLOCK_ALLOCATED: return "allocated";
    case ML_BLOCK_FREE: return "free";
    case ML_BLOCK_UNMAPPED: return "unmapped";
    }
  return "?";
}

typedef struct {
  uint64_t lo, hi;
} Range;

typedef struct {
  Range  *r;
  size_t  n, cap;
} Ranges;

static int
ranges_push (Ranges *rs, uint64_t lo, uint64_t hi)
{
  if (rs->n == rs->cap)
    {
      size_t cap = rs->cap ? rs->cap * 2 : 16;
      Range *p = realloc (rs->r, cap * sizeof *p);
      if (!p)
        return -1;
      rs->r = p;
      rs->cap = cap;
    }
  rs->r[rs->n++] = (Range) { lo, hi };
  return 0;
}

/* Removes [lo, hi) from every range (splitting where needed). */
static int
ranges_cut (Ranges *rs, uint64_t lo, uint64_t hi)
{
  size_t n = rs->n;
  for (size_t i = 0; i < n; i++)
    {
      Range r = rs->r[i];
      if (r.hi <= lo || r.lo >= hi)
        continue;
      rs->r[i].hi = r.lo < lo ? lo : r.lo;   /* the part below (may be empty) */
      if (r.hi > hi && ranges_push (rs, hi, r.hi) < 0)
        return -1;
    }
  size_t k = 0;
  for (size_t i = 0; i < rs->n; i++)
    if (rs->r[i].hi > rs->r[i].lo)
      rs->r[k++] = rs->r[i];
  rs->n = k;
  return 0;
}

static int
by_lo (const void *a, const void *b)
{
  uint64_t x = ((const Range *) a)->lo, y = ((const Range *) b)->lo;
  return x < y ? -1 : x > y;
}

typedef struct {
  uint64_t offset, size;
  uint32_t buffer;
} Piece;

static int
by_offset (const void *a, const void *b)
{
  const Piece *x = a, *y = b;
  if (x->offset != y->offset)
    return x->offset < y->offset ? -1 : 1;
  return x->buffer < y->buffer ? -1 : x->buffer > y->buffer;
}

typedef struct {
  MlState *st;
  size_t   cap;
} Out;

static int
emit (Out *o, uint32_t seg, uint64_t off, uint64_t size, MlBlockKind kind, uint32_t buffer)
{
  if (!size)
    return 0;
  MlState *st = o->st;
  if (st->n_blocks == o->cap)
    {
      size_t cap = o->cap ? o->cap * 2 : 64;
      MlBlock *p = realloc (st->blocks, cap * sizeof *p);
      if (!p)
        return -1;
      st->blocks = p;
      o->cap = cap;
    }
  st->blocks[st->n_blocks++] = (MlBlock) { seg, off, size, kind, buffer };
  MlSegmentState *ss = &st->segs[st->n_segs - 1];
  ss->n++;
  uint64_t *sum = kind == ML_BLOCK_ALLOCATED ? &ss->allocated : kind == ML_BLOCK_FREE ? &ss->free : &ss->unmapped;
  *sum += size;
  return 0;
}

/* The holes of [lo, hi) not in the (sorted) mapped ranges: unmapped; the
 * rest: free. */
static int
emit_gap (Out *o, uint32_t seg, uint64_t lo, uint64_t hi, const Range *mapped, size_t n_mapped)
{
  uint64_t x = lo;
  for (size_t i = 0; i < n_mapped && x < hi; i++)
    {
      uint64_t a = mapped[i].lo > x ? mapped[i].lo : x, b = mapped[i].hi < hi ? mapped[i].hi : hi;
      if (b <= a)
        continue;
      if (emit (o, seg, x, a - x, ML_BLOCK_UNMAPPED, UINT32_MAX) < 0 || emit (o, seg, a, b - a, ML_BLOCK_FREE, UINT32_MAX) < 0)
        return -1;
      x = b;
    }
  return x < hi ? emit (o, seg, x, hi - x, ML_BLOCK_UNMAPPED, UINT32_MAX) : 0;
}

int
ml_state_at (const MlBuffers *bufs, const MlPlan *plan, uint64_t tick, MlState *out, MlError *err)
{
  memset (out, 0, sizeof *out);
  out->tick = tick;
  size_t ns = plan->n_segments;
  Piece *pieces = NULL;
  size_t *count = calloc (ns + 1, sizeof *count), *first = calloc (ns + 2, sizeof *first);
  uint64_t *hw = calloc (ns + 1, sizeof *hw);
  out->segs = calloc (ns + 1, sizeof *out->segs);
  Ranges mapped = { 0 };
  Out o = { out, 0 };
  if (!count || !first || !hw || !out->segs)
    goto oom;
  /* live buffers per segment, and the growable high-water marks so far */
  size_t n_live = 0;
  for (size_t i = 0; i < bufs->n; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      uint32_t g = plan->segment[i];
      if (!b->rsize || g >= ns || b->start > tick)
        continue;
      if (plan->offset[i] + b->rsize > hw[g])
        hw[g] = plan->offset[i] + b->rsize;
      if (tick < b->end)
        {
          count[g]++;
          n_live++;
        }
    }
  pieces = malloc ((n_live ? n_live : 1) * sizeof *pieces);
  if (!pieces)
    goto oom;
  for (size_t g = 0; g < ns; g++)
    first[g + 1] = first[g] + count[g];
  memset (count, 0, (ns + 1) * sizeof *count);
  for (size_t i = 0; i < bufs->n; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      uint32_t g = plan->segment[i];
      if (!b->rsize || g >= ns || b->start > tick || tick >= b->end)
        continue;
      pieces[first[g] + count[g]++] = (Piece) { plan->offset[i], b->rsize, (uint32_t) i };
    }
  const MlTrace *t = bufs->trace;
  for (size_t g = 0; g < ns; g++)
    {
      const MlSegment *seg = &plan->segments[g];
      if (!(seg->start <= tick && tick < seg->end))
        continue;
      Piece *p = pieces + first[g];
      size_t np = count[g];
      qsort (p, np, sizeof *p, by_offset);
      uint64_t size = seg->size;
      if (np && p[np - 1].offset + p[np - 1].size > size)
        size = p[np - 1].offset + p[np - 1].size;
      /* what holds pages: all of it, a growable segment up to its
       * high-water mark, an expandable one what the trace mapped */
      mapped.n = 0;
      if (seg->flags & ML_SEG_GROWABLE)
        {
          if (hw[g] && ranges_push (&mapped, 0, hw[g]) < 0)
            goto oom;
        }
      else if ((seg->flags & ML_SEG_EXPANDABLE) && seg->addr && t)
        {
          for (size_t e = 0; e < t->n_events && t->events[e].tick <= tick; e++)
            {
              const MlEvent *ev = &t->events[e];
              if ((ev->kind != ML_EV_SEGMENT_MAP && ev->kind != ML_EV_SEGMENT_UNMAP && ev->kind != ML_EV_SEGMENT_ALLOC)
                  || ev->addr < seg->addr || ev->addr >= seg->addr + size)
                continue;
              uint64_t lo = ev->addr - seg->addr, hi = lo + ev->size > size ? size : lo + ev->size;
              if (ev->kind == ML_EV_SEGMENT_UNMAP ? ranges_cut (&mapped, lo, hi) < 0
                                                  : ranges_cut (&mapped, lo, hi) < 0 || ranges_push (&mapped, lo, hi) < 0)
                goto oom;
            }
          /* a segment the trace never maps (a snapshot's start state) is
           * mapped as it stands */
          if (!mapped.n)
            {
              bool any = false;
              for (size_t e = 0; e < t->n_events && !any; e++)
                any = (t->events[e].kind == ML_EV_SEGMENT_MAP || t->events[e].kind == ML_EV_SEGMENT_UNMAP)
                      && t->events[e].addr >= seg->addr && t->events[e].addr < seg->addr + size;
              if (!any && ranges_push (&mapped, 0, size) < 0)
                goto oom;
            }
          qsort (mapped.r, mapped.n, sizeof *mapped.r, by_lo);
        }
      else if (ranges_push (&mapped, 0, size) < 0)
        goto oom;
      MlSegmentState *ss = &out->segs[out->n_segs++];
      *ss = (MlSegmentState) { .segment = (uint32_t) g, .size = size, .first = out->n_blocks };
      uint64_t x = 0;
      for (size_t k = 0; k < np; k++)
        {
          if (p[k].offset > x && emit_gap (&o, (uint32_t) g, x, p[k].offset, mapped.r, mapped.n) < 0)
            goto oom;
          if (emit (&o, (uint32_t) g, p[k].offset, p[k].size, ML_BLOCK_ALLOCATED, p[k].buffer) < 0)
            goto oom;
          if (p[k].offset + p[k].size > x)
            x = p[k].offset + p[k].size;
        }
      if (x < size && emit_gap (&o, (uint32_t) g, x, size, mapped.r, mapped.n) < 0)
        goto oom;
      out->allocated += ss->allocated;
      out->free += ss->free;
      out->unmapped += ss->unmapped;
    }
  free (pieces);
  free (count);
  free (first);
  free (hw);
  free (mapped.r);
  return 0;
oom:
  free (pieces);
  free (count);
  free (first);
  free (hw);
  free (mapped.r);
  ml_state_clear (out);
  return ml_error_set (err, ML_ENOMEM, "out of memory for the state at tick %llu", (unsigned long long) tick);
}

void
ml_state_clear (MlState *st)
{
  free (st->blocks);
  free (st->segs);
  memset (st, 0, sizeof *st);
}
