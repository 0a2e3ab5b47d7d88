/* caching-conformance.c — replays a PyTorch snapshot through the cache
 * model (caching-model.c) and measures how often it picks the real address
 * (see caching-conformance.h). */
#include "strategies/caching-conformance.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/array.h"
#include "sim/base/sort.h"
#include "strategies/caching-private.h"

const char *
ml_caching_rule_name (MlCachingRule r)
{
  static const char *const names[ML_RULE__COUNT] = {
    "best-fit order", "per-stream reuse", "small/large pool", "split position", "new segment vs reuse",
    "state diverged", "private pool",
  };
  return (unsigned) r < ML_RULE__COUNT ? names[r] : "?";
}

typedef struct {
  const uint64_t *addrs;   /* recorded segment_alloc / map bases, in order */
  size_t          n, next;
  uint64_t        synth;   /* above every recorded address */
  uint64_t       *emu_sizes;
  size_t          n_emu, cap_emu;
} Conf;

/* Appends one emulated segment event's size. */
static int
push_emu_size (Conf *f, uint64_t size)
{
  if (ML_ARRAY_RESERVE (f->emu_sizes, f->n_emu, f->cap_emu, 16) < 0)
    return ML_ENOMEM;
  f->emu_sizes[f->n_emu++] = size;
  return 0;
}

static int
conf_new_seg (MlCache *c, uint64_t size, uint32_t stream, MlCacheSegment *seg)
{
  Conf *f = c->user;
  (void) stream;
  if (seg->expandable)
    {
      /* a virtual range: it starts where the next recorded mapping is
       * (taken by the mapping itself, conf_map_seg), when that is free */
      if (f->next < f->n && _ml_cache_can_start_segment (c, f->addrs[f->next]))
        seg->base = f->addrs[f->next];
      else
        {
          seg->base = f->synth;
          f->synth += ML_CACHE_EXP_RANGE;
        }
      return 0;
    }
  if (f->next < f->n)
    seg->base = f->addrs[f->next++];
  else
    {
      seg->base = f->synth;
      f->synth += (size + ML_CACHE_ROUND_LARGE - 1) / ML_CACHE_ROUND_LARGE * ML_CACHE_ROUND_LARGE;
    }
  return push_emu_size (f, size);
}

/* An expandable segment maps pages: an emulated segment_map event; the
 * recorded one at the same address (among the next few) is taken. */
static int
conf_map_seg (MlCache *c, MlCacheSegment *seg, uint64_t offset, uint64_t size)
{
  Conf *f = c->user;
  for (size_t k = f->next; k < f->n && k < f->next + 8; k++)
    if (f->addrs[k] == seg->base + offset)
      {
        f->next = k + 1;
        break;
      }
  return push_emu_size (f, size);
}

/* The segments at the end, as a snapshot lists them: a plain segment, or
 * one contiguous mapped range of an expandable segment. The recorded
 * ones follow the events: segment_alloc adds one, segment_free removes
 * it, segment_map adds a range (joined with the ranges it touches),
 * segment_unmap cuts one. Room for one more entry per event. */
typedef struct {
  uint64_t *addr, *size;
  bool     *exp;
  size_t    n;
} SegList;

/* Removes entry @k (the last one takes its place). */
static void
seg_list_remove (SegList *l, size_t k)
{
  --l->n;
  l->addr[k] = l->addr[l->n], l->size[k] = l->size[l->n], l->exp[k] = l->exp[l->n];
}

static void
seg_list_push (SegList *l, uint64_t addr, uint64_t size, bool exp)
{
  l->addr[l->n] = addr, l->size[l->n] = size, l->exp[l->n++] = exp;
}

static void
rec_seg_event (SegList *l, const MlEvent *ev)
{
  uint64_t a = ev->addr, e = ev->addr + ev->size;
  switch (ev->kind)
    {
    case ML_EV_SEGMENT_ALLOC:
      seg_list_push (l, a, ev->size, false);
      break;
    case ML_EV_SEGMENT_FREE:
      for (size_t k = 0; k < l->n; k++)
        if (!l->exp[k] && l->addr[k] == a)
          {
            seg_list_remove (l, k);
            break;
          }
      break;
    case ML_EV_SEGMENT_MAP:
      for (size_t k = 0; k < l->n;)
        if (l->exp[k] && (l->addr[k] + l->size[k] == a || l->addr[k] == e))
          {
            if (l->addr[k] < a)
              a = l->addr[k];
            if (l->addr[k] + l->size[k] > e)
              e = l->addr[k] + l->size[k];
            seg_list_remove (l, k);
          }
        else
          k++;
      seg_list_push (l, a, e - a, true);
      break;
    case ML_EV_SEGMENT_UNMAP:
      for (size_t k = 0; k < l->n; k++)
        if (l->exp[k] && l->addr[k] <= a && e <= l->addr[k] + l->size[k])
          {
            uint64_t end = l->addr[k] + l->size[k];
            l->size[k] = a - l->addr[k];
            if (end > e)
              seg_list_push (l, e, end - e, true);
            if (l->size[k] == 0)
              seg_list_remove (l, k);
            break;
          }
      break;
    default:
      break;
    }
}

/* Which rule the real choice @want disagrees on, given the emulation's
 * choice (block @got_blk, made before being undone). */
static MlCachingRule
classify (MlCache *c, uint64_t want, uint64_t req, uint32_t pool, uint32_t raw_stream, bool emu_new_segment)
{
  uint32_t i = _ml_cache_block_at (c, want);
  if (i == ML_CACHE_NONE || c->b[i].unmapped)
    return ML_RULE_NEW_SEGMENT;   /* the real allocator reserved or mapped memory there */
  const MlCacheBlock *b = &c->b[i];
  if (b->allocated)
    return ML_RULE_STATE;
  bool small = _ml_cache_round_size (&c->cfg, req) <= ML_CACHE_SMALL_SIZE;
  if (c->s[b->seg].small != small)
    return ML_RULE_POOL;
  if (c->lane_pool[b->stream] != pool)
    return ML_RULE_PRIVATE_POOL;
  if (b->stream != _ml_cache_lane (c, pool, raw_stream))
    return ML_RULE_STREAM;
  if (b->addr != want)
    return ML_RULE_SPLIT;
  return emu_new_segment ? ML_RULE_NEW_SEGMENT : ML_RULE_BEST_FIT;
}

/* One replay: the emulation, its segment-address source, the blocks of
 * the live ids, the recorded segments at the end, the measurement. */
typedef struct {
  const MlTrace        *t;
  MlCache               c;
  Conf                  f;
  MlU64Map              ids;        /* id -> slot of id_blocks */
  uint32_t             *id_blocks;
  size_t                n_id_blocks;
  uint64_t             *rec_addrs, *rec_sizes;   /* recorded segment events after tick 0 */
  SegList               end;        /* the recorded segments, as the events go */
  MlCachingConformance  r;
  MlError              *err;
} Replay;

static int
replay_oom (Replay *p)
{
  return ml_error_set (p->err, ML_ENOMEM, "out of memory");
}

/* Remembers that @id lives in block @i. */
static int
replay_bind (Replay *p, uint64_t id, uint32_t i)
{
  p->id_blocks[p->n_id_blocks] = i;
  if (ml_u64map_put (&p->ids, id, (uint32_t) p->n_id_blocks++) < 0)
    return replay_oom (p);
  return 0;
}

/* The recorded segment events after tick 0 (the addresses new emulated
 * segments take) and the address above every recorded one. */
static int
replay_init (Replay *p, const MlTrace *t, const MlCacheConfig *cfg, MlError *err)
{
  memset (p, 0, sizeof *p);
  p->t = t;
  p->err = err;
  p->r.first_mismatch = SIZE_MAX;
  ml_u64map_init (&p->ids);
  _ml_cache_init (&p->c, cfg);
  p->c.new_seg = conf_new_seg;
  p->c.map_seg = conf_map_seg;
  p->c.user = &p->f;
  size_t n = t->n_events + 1;
  p->rec_addrs = malloc (n * sizeof *p->rec_addrs);
  p->rec_sizes = malloc (n * sizeof *p->rec_sizes);
  p->end.size = malloc (n * sizeof *p->end.size);
  p->end.addr = malloc (n * sizeof *p->end.addr);
  p->end.exp = malloc (n * sizeof *p->end.exp);
  p->id_blocks = malloc (n * sizeof *p->id_blocks);
  if (!p->rec_addrs || !p->rec_sizes || !p->end.size || !p->end.addr || !p->end.exp || !p->id_blocks)
    return replay_oom (p);
  size_t n_rec = 0;
  uint64_t top = 0;
  for (size_t k = 0; k < t->n_events; k++)
    {
      const MlEvent *ev = &t->events[k];
      if (ev->addr + ev->size > top && ev->kind != ML_EV_OOM)
        top = ev->addr + ev->size;
      if ((ev->kind == ML_EV_SEGMENT_ALLOC || ev->kind == ML_EV_SEGMENT_MAP) && ev->tick > 0)
        {
          p->rec_addrs[n_rec] = ev->addr;
          p->rec_sizes[n_rec++] = ev->size;
        }
    }
  p->f.addrs = p->rec_addrs;
  p->f.n = n_rec;
  p->f.synth = (top + ML_CACHE_ROUND_LARGE - 1) / ML_CACHE_ROUND_LARGE * ML_CACHE_ROUND_LARGE + ((uint64_t) 1 << 30);
  p->r.rec_segment_events = n_rec;
  return 0;
}

static void
replay_clear (Replay *p)
{
  free (p->rec_addrs);
  free (p->rec_sizes);
  free (p->end.size);
  free (p->end.addr);
  free (p->end.exp);
  free (p->id_blocks);
  free (p->f.emu_sizes);
  ml_u64map_clear (&p->ids);
  _ml_cache_clear (&p->c);
}

/* The rebuilt state's segment event @k and live block (event @k, block
 * @i): counted, the segments listed, the blocks bound to their ids. */
static int
rebuilt_segment (void *user, size_t k, bool small)
{
  Replay *p = user;
  const MlEvent *ev = &p->t->events[k];
  p->r.initial_segments++;
  p->r.rule_sized_segments += _ml_cache_rule_sized (ev->size, small) || ev->kind == ML_EV_SEGMENT_MAP;
  rec_seg_event (&p->end, ev);
  return 0;
}

static int
rebuilt_block (void *user, size_t k, uint32_t i)
{
  Replay *p = user;
  p->r.initial_blocks++;
  return replay_bind (p, p->t->events[k].id, i);
}

/* A mismatch on allocation @k, the emulation having chosen block @i:
 * undo that choice (and the segment it reserved), attribute the
 * difference to a rule, and place the block at the real address when
 * that is free. The undo restores the segment-address source to @before. */
static int
replay_mismatch (Replay *p, size_t k, uint32_t *i, const Conf *before)
{
  const MlEvent *ev = &p->t->events[k];
  MlCache *c = &p->c;
  char where[ML_TRACE_WHERE_MAX];
  bool was_new = c->last_new_segment;
  uint64_t got = c->b[*i].addr;
  uint32_t seg = c->b[*i].seg;
  int rc;
  _ml_cache_free (c, *i);
  if (was_new && !c->s[seg].expandable)
    {
      c->rel_seg = NULL;
      _ml_cache_seg_release (c, seg);
      p->f.n_emu = before->n_emu;
      p->f.next = before->next;
      p->f.synth = before->synth;
    }
  MlCachingRule rule = classify (c, ev->addr, ev->size, ev->pool, ev->stream, was_new);
  p->r.by_rule[rule]++;
  if (p->r.first_mismatch == SIZE_MAX)
    {
      p->r.first_mismatch = k;
      p->r.first_want = ev->addr;
      p->r.first_got = got;
    }
  *i = _ml_cache_carve (c, ev->addr, ev->size);
  if (*i == ML_CACHE_NONE && (rc = _ml_cache_malloc (c, ev->size, ev->pool, ev->stream, i)) < 0)
    return ml_error_set (p->err, rc, "%s: emulated allocation failed", ml_trace_event_where (p->t, k, where, sizeof where));
  return 0;
}

/* Allocation event @k: the emulation's choice against the real address. */
static int
replay_alloc (Replay *p, size_t k)
{
  const MlEvent *ev = &p->t->events[k];
  char where[ML_TRACE_WHERE_MAX];
  Conf before = p->f;
  uint32_t i;
  int rc;
  p->r.allocs++;
  if ((rc = _ml_cache_malloc (&p->c, ev->size, ev->pool, ev->stream, &i)) < 0)
    return ml_error_set (p->err, rc, "%s: emulated allocation failed", ml_trace_event_where (p->t, k, where, sizeof where));
  if (p->c.b[i].addr == ev->addr)
    p->r.matched++;
  else if ((rc = replay_mismatch (p, k, &i, &before)) < 0)
    return rc;
  return replay_bind (p, ev->id, i);
}

/* Event @k of the trace after tick 0. */
static int
replay_event (Replay *p, size_t k)
{
  const MlEvent *ev = &p->t->events[k];
  uint32_t slot;
  int rc;
  switch (ev->kind)
    {
    case ML_EV_ALLOC:
      return replay_alloc (p, k);
    case ML_EV_FREE:
      if (!ml_u64map_get (&p->ids, ev->id, &slot))
        {
          p->r.frees_unknown++;
          break;
        }
      ml_u64map_del (&p->ids, ev->id);
      if ((rc = _ml_cache_free (&p->c, p->id_blocks[slot])) < 0)
        return ml_error_set (p->err, rc, "out of memory");
      break;
    case ML_EV_SEGMENT_ALLOC:
    case ML_EV_SEGMENT_MAP:
      rec_seg_event (&p->end, ev);
      break;
    case ML_EV_SEGMENT_FREE:
      rec_seg_event (&p->end, ev);
      {
        uint32_t s = ml_treap_find (&p->c.segs, ev->addr, 0, NULL);
        if (s != ML_TREAP_NIL)
          _ml_cache_seg_release (&p->c, (uint32_t) p->c.segs.nodes[s].value);
      }
      break;
    case ML_EV_SEGMENT_UNMAP:
      /* release_cached_blocks (an OOM's retry, empty_cache): the
       * emulation unmaps the same free pages */
      rec_seg_event (&p->end, ev);
      _ml_cache_unmap_range (&p->c, ev->addr, ev->size);
      if (p->c.failed)
        return replay_oom (p);
      break;
    default:
      break;
    }
  return 0;
}

/* The segments: recorded and emulated events pairwise in creation order,
 * and the segments at the end as multisets of sizes. */
static int
compare_segments (Replay *p)
{
  MlCache *c = &p->c;
  MlCachingConformance *r = &p->r;
  r->emu_segment_events = p->f.n_emu;
  for (size_t k = 0; k < p->f.n_emu && k < p->r.rec_segment_events; k++)
    r->segment_events_matched += p->f.emu_sizes[k] == p->rec_sizes[k];
  size_t n_emu_end = 0;
  uint64_t *emu = realloc (p->rec_sizes, (p->t->n_events + c->nb + c->ns + 1) * sizeof *emu);
  if (!emu)
    return replay_oom (p);
  p->rec_sizes = emu;
  for (size_t s = 0; s < c->ns; s++)
    if (c->s[s].alive && !c->s[s].expandable)
      emu[n_emu_end++] = c->s[s].size, r->end_emu_bytes += c->s[s].size;
    else if (c->s[s].alive)
      {
        /* its contiguous mapped ranges */
        uint64_t run = 0;
        for (uint32_t i = c->s[s].first;; i = c->b[i].next)
          {
            bool end = i == ML_CACHE_NONE || c->b[i].unmapped;
            if (end && run)
              emu[n_emu_end++] = run, r->end_emu_bytes += run, run = 0;
            if (i == ML_CACHE_NONE)
              break;
            if (!end)
              run += c->b[i].size;
          }
      }
  for (size_t s = 0; s < p->end.n; s++)
    r->end_rec_bytes += p->end.size[s];
  r->end_rec_segments = p->end.n;
  r->end_emu_segments = n_emu_end;
  ml_sort_u64 (emu, n_emu_end);
  ml_sort_u64 (p->end.size, p->end.n);
  r->end_match = n_emu_end == p->end.n && memcmp (emu, p->end.size, p->end.n * sizeof *emu) == 0;
  return 0;
}

int
ml_caching_conformance (const MlTrace *t, const char *options, MlCachingConformance *out, MlError *err)
{
  MlCacheConfig cfg;
  char settings[256];
  int rc = _ml_cache_config_for (t, options, &cfg, &options, settings, sizeof settings, err);
  if (rc < 0)
    return rc;
  if (!t->has_addrs)
    return ml_error_set (err, ML_EUNSUPPORTED, "the trace has no recorded addresses");
  Replay p;
  size_t end0 = 0;
  rc = replay_init (&p, t, &cfg, err);
  snprintf (p.r.options, sizeof p.r.options, "%s", options ? options : "");
  if (rc == 0)
    rc = _ml_cache_rebuild (&p.c, t, &(MlCacheRebuildCb) { rebuilt_segment, rebuilt_block, &p }, &end0, err);
  for (size_t k = end0; rc == 0 && k < t->n_events; k++)
    rc = replay_event (&p, k);
  if (rc == 0)
    rc = compare_segments (&p);
  if (rc == 0)
    *out = p.r;
  replay_clear (&p);
  return rc < 0 ? rc : 0;
}
