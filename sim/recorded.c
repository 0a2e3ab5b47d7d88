/* recorded.c — the recorded plan: what the real allocator did, from the
 * addresses and segment events of the trace (recorded.h). */
#include "sim/recorded.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/treap.h"

/* The live paged segment whose range holds @addr or ends right at it. */
static long
paged_at (MlPlan *p, MlTreap *live, uint64_t addr)
{
  uint32_t node = ml_treap_predecessor (live, addr, 1, NULL);
  if (node == ML_TREAP_NIL)
    return -1;
  const MlSegment *g = &p->segments[live->nodes[node].value];
  if (!(g->flags & ML_SEG_PAGED) || addr > g->addr + g->size)
    return -1;
  return (long) live->nodes[node].value;
}

static int
recorded_map (MlPlan *p, MlTreap *live, const MlEvent *ev, uint64_t end_tick)
{
  long s = paged_at (p, live, ev->addr);
  if (s < 0)
    {
      MlSegment g = { .size = ev->size, .start = ev->tick, .end = end_tick, .addr = ev->addr, .stream = ev->stream,
                      .flags = ML_SEG_EXPANDABLE | ML_SEG_PAGED, .pool = ev->pool };
      s = ml_plan_add_segment (p, &g);
      if (s < 0 || ml_treap_insert (live, ev->addr, 0, (uint64_t) s) == ML_TREAP_NIL)
        return ML_ENOMEM;
    }
  MlSegment *g = &p->segments[s];
  if (ev->addr + ev->size - g->addr > g->size)
    g->size = ev->addr + ev->size - g->addr;
  MlMapping m = { .segment = (uint32_t) s, .offset = ev->addr - g->addr, .size = ev->size, .start = ev->tick,
                  .end = end_tick };
  return ml_plan_add_mapping (p, &m) < 0 ? ML_ENOMEM : 0;
}


/* Ends the parts of the segment's live mappings that [addr, addr + size)
 * covers; what is left of a mapping goes on as a new one. */
static int
recorded_unmap (MlPlan *p, MlTreap *live, const MlEvent *ev)
{
  long s = paged_at (p, live, ev->addr);
  if (s < 0)
    return 0;   /* pages the trace never showed mapped */
  uint64_t lo = ev->addr - p->segments[s].addr;
  return ml_plan_unmap (p, (uint32_t) s, lo, lo + ev->size, ev->tick);
}

bool
ml_plan_has_recorded (const MlBuffers *bufs)
{
  if (!bufs->trace)
    return false;
  for (size_t i = 0; i < bufs->n; i++)
    if (bufs->buf[i].flags & ML_BUF_HAS_ADDR)
      return true;
  return false;
}

int
ml_plan_from_recorded (const MlBuffers *bufs, MlPlan **out, MlError *err)
{
  const MlTrace *t = bufs->trace;
  if (!ml_plan_has_recorded (bufs))
    return ml_error_set (err, ML_EUNSUPPORTED, "the trace has no recorded addresses");
  MlPlan *p = ml_plan_new (bufs->n, ml_strategy_recorded.name);
  if (!p)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  p->align = bufs->align;

  /* live recorded segments by base address: key = addr, value = segment index */
  MlTreap live;
  ml_treap_init (&live);
  uint8_t *placed = calloc (bufs->n ? bufs->n : 1, 1);
  int rc = 0;
  if (!placed)
    rc = ML_ENOMEM;
  size_t b = 0;
  for (size_t i = 0; i < t->n_events && rc == 0; i++)
    {
      const MlEvent *ev = &t->events[i];
      if (ev->kind == ML_EV_SEGMENT_ALLOC && ev->size)
        {
          uint32_t prev = ml_treap_find (&live, ev->addr, 0, NULL);
          if (prev != ML_TREAP_NIL)   /* the same base again: the trace lost its free */
            {
              MlSegment *g = &p->segments[live.nodes[prev].value];
              if (ev->size > g->size)
                g->size = ev->size;
              continue;
            }
          MlSegment g = { .size = ev->size, .start = ev->tick, .end = bufs->end_tick, .addr = ev->addr,
                          .stream = ev->stream, .pool = ev->pool };
          long s = ml_plan_add_segment (p, &g);
          if (s < 0 || ml_treap_insert (&live, ev->addr, 0, (uint64_t) s) == ML_TREAP_NIL)
            rc = ML_ENOMEM;
        }
      else if (ev->kind == ML_EV_SEGMENT_MAP && ev->size)
        rc = recorded_map (p, &live, ev, bufs->end_tick);
      else if (ev->kind == ML_EV_SEGMENT_UNMAP && ev->size)
        rc = recorded_unmap (p, &live, ev);
      else if (ev->kind == ML_EV_SEGMENT_FREE)
        {
          uint32_t node = ml_treap_find (&live, ev->addr, 0, NULL);
          if (node != ML_TREAP_NIL && !(p->segments[live.nodes[node].value].flags & ML_SEG_PAGED))
            {
              p->segments[live.nodes[node].value].end = ev->tick;
              ml_treap_remove (&live, ev->addr, 0);
            }
        }
      else if (ev->kind == ML_EV_ALLOC && b < bufs->n)
        {
          const MlBuffer *buf = &bufs->buf[b];
          if (buf->flags & ML_BUF_HAS_ADDR)
            {
              uint32_t node = ml_treap_predecessor (&live, buf->addr, 1, NULL);
              if (node != ML_TREAP_NIL)
                {
                  const MlSegment *g = &p->segments[live.nodes[node].value];
                  if (buf->addr >= g->addr && buf->addr + buf->rsize <= g->addr + g->size)
                    {
                      p->segment[b] = (uint32_t) live.nodes[node].value;
                      p->offset[b] = buf->addr - g->addr;
                      placed[b] = 1;
                    }
                }
            }
          b++;
        }
    }
  ml_treap_clear (&live);
  /* buffers outside every recorded segment: one arena over their range */
  if (rc == 0)
    {
      uint64_t lo = UINT64_MAX, hi = 0;
      for (size_t i = 0; i < bufs->n; i++)
        if (!placed[i])
          {
            uint64_t a = (bufs->buf[i].flags & ML_BUF_HAS_ADDR) ? bufs->buf[i].addr : 0;
            if (a < lo)
              lo = a;
            if (a + bufs->buf[i].rsize > hi)
              hi = a + bufs->buf[i].rsize;
          }
      if (lo != UINT64_MAX)
        {
          /* the trace's own reserved counter (Kineto's Total Reserved),
           * when it has no segments: the arena is reserved by it, as pages
           * stacked by level (bytes [v, w) of the counter are mapped while
           * it is at or above w) */
          bool counter = p->n_segments == 0 && t->n_reserved_steps;
          p->free_unknown = counter;
          MlSegment g = { .size = hi - lo, .start = 0, .end = bufs->end_tick, .addr = lo,
                          .flags = counter ? ML_SEG_PAGED : 0 };
          for (size_t k = 0; counter && k < t->n_reserved_steps; k++)
            if (t->reserved_steps[k].bytes > g.size)
              g.size = t->reserved_steps[k].bytes;
          long s = ml_plan_add_segment (p, &g);
          if (s < 0)
            rc = ML_ENOMEM;
          else
            for (size_t i = 0; i < bufs->n; i++)
              if (!placed[i])
                {
                  p->segment[i] = (uint32_t) s;
                  p->offset[i] = ((bufs->buf[i].flags & ML_BUF_HAS_ADDR) ? bufs->buf[i].addr : 0) - lo;
                }
          uint64_t level = 0;
          for (size_t k = 0; counter && s >= 0 && k < t->n_reserved_steps && rc == 0; k++)
            {
              uint64_t v = t->reserved_steps[k].bytes, tick = t->reserved_steps[k].tick;
              MlMapping m = { .segment = (uint32_t) s, .offset = level, .size = v - level, .start = tick,
                              .end = bufs->end_tick };
              if (v > level && ml_plan_add_mapping (p, &m) < 0)
                rc = ML_ENOMEM;
              else if (v < level && ml_plan_unmap (p, (uint32_t) s, v, level, tick) < 0)
                rc = ML_ENOMEM;
              level = v;
            }
        }
    }
  free (placed);
  if (rc < 0)
    {
      ml_plan_free (p);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  *out = p;
  return 0;
}

/* The recorded plan as a strategy: @plan (the driver's, empty) takes the
 * recorded segments and placements. */
static int
recorded_plan (const MlBuffers *bufs, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  (void) knobs;
  MlPlan *rec;
  int rc = ml_plan_from_recorded (bufs, &rec, err);
  if (rc < 0)
    return rc;
  plan->n_segments = 0;
  for (size_t s = 0; s < rec->n_segments && rc == 0; s++)
    if (ml_plan_add_segment (plan, &rec->segments[s]) < 0)
      rc = ml_error_set (err, ML_ENOMEM, "out of memory");
  plan->n_maps = 0;
  for (size_t k = 0; k < rec->n_maps && rc == 0; k++)
    if (ml_plan_add_mapping (plan, &rec->maps[k]) < 0)
      rc = ml_error_set (err, ML_ENOMEM, "out of memory");
  if (rc == 0)
    {
      memcpy (plan->segment, rec->segment, rec->n * sizeof *rec->segment);
      memcpy (plan->offset, rec->offset, rec->n * sizeof *rec->offset);
      plan->align = rec->align;
      plan->free_unknown = rec->free_unknown;
    }
  ml_plan_free (rec);
  return rc;
}

const MlStrategy ml_strategy_recorded = {
  .name = "recorded",
  .summary = "what the real allocator did (traces with addresses)",
  .kind = ML_STRATEGY_OFFLINE,
  .flags = ML_STRATEGY_RECORDED,
  .plan = recorded_plan,
};
