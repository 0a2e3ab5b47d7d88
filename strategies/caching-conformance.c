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
    "state diverged",
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
 * segment_unmap cuts one. @n entries of @addr / @size (room for one
 * more per event). */
static void
rec_seg_event (uint64_t *addr, uint64_t *size, bool *exp, size_t *n, const MlEvent *ev)
{
  uint64_t a = ev->addr, e = ev->addr + ev->size;
  switch (ev->kind)
    {
    case ML_EV_SEGMENT_ALLOC:
      addr[*n] = a, size[*n] = ev->size, exp[(*n)++] = false;
      break;
    case ML_EV_SEGMENT_FREE:
      for (size_t k = 0; k < *n; k++)
        if (!exp[k] && addr[k] == a)
          {
            --*n;
            addr[k] = addr[*n], size[k] = size[*n], exp[k] = exp[*n];
            break;
          }
      break;
    case ML_EV_SEGMENT_MAP:
      for (size_t k = 0; k < *n;)
        if (exp[k] && (addr[k] + size[k] == a || addr[k] == e))
          {
            if (addr[k] < a)
              a = addr[k];
            if (addr[k] + size[k] > e)
              e = addr[k] + size[k];
            --*n;
            addr[k] = addr[*n], size[k] = size[*n], exp[k] = exp[*n];
          }
        else
          k++;
      addr[*n] = a, size[*n] = e - a, exp[(*n)++] = true;
      break;
    case ML_EV_SEGMENT_UNMAP:
      for (size_t k = 0; k < *n; k++)
        if (exp[k] && addr[k] <= a && e <= addr[k] + size[k])
          {
            uint64_t end = addr[k] + size[k];
            size[k] = a - addr[k];
            if (end > e)
              addr[*n] = e, size[*n] = end - e, exp[(*n)++] = true;
            if (size[k] == 0)
              {
                --*n;
                addr[k] = addr[*n], size[k] = size[*n], exp[k] = exp[*n];
              }
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
classify (MlCache *c, uint64_t want, uint64_t req, uint32_t raw_stream, bool emu_new_segment)
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
  if (b->stream != _ml_cache_stream_index (c, raw_stream))
    return ML_RULE_STREAM;
  if (b->addr != want)
    return ML_RULE_SPLIT;
  return emu_new_segment ? ML_RULE_NEW_SEGMENT : ML_RULE_BEST_FIT;
}



int
ml_caching_conformance (const MlTrace *t, const char *options, MlCachingConformance *out, MlError *err)
{
  MlCacheConfig cfg;
  char settings[256], where[ML_TRACE_WHERE_MAX];
  options = _ml_cache_options (t, options, settings, sizeof settings);
  int rc = _ml_cache_parse_config (options, &cfg, err);
  if (rc < 0)
    return rc;
  if (!t->has_addrs)
    return ml_error_set (err, ML_EUNSUPPORTED, "the trace has no recorded addresses");
  MlCachingConformance r;
  memset (&r, 0, sizeof r);
  r.first_mismatch = SIZE_MAX;
  snprintf (r.options, sizeof r.options, "%s", options ? options : "");

  /* recorded segment bases after tick 0, recorded end segments, the highest address */
  uint64_t *rec_addrs = NULL, *rec_sizes = NULL, *end_rec = NULL, *end_addr = NULL;
  bool *end_exp = NULL;
  size_t n_rec = 0, n_end_rec = 0;
  uint64_t top = 0;
  MlU64Map ids;
  ml_u64map_init (&ids);
  MlCache c;
  _ml_cache_init (&c, &cfg);
  Conf f = { 0 };
  c.new_seg = conf_new_seg;
  c.map_seg = conf_map_seg;
  c.user = &f;
  uint32_t *id_blocks = NULL;
  size_t n_id_blocks = 0;

  rec_addrs = malloc ((t->n_events + 1) * sizeof *rec_addrs);
  rec_sizes = malloc ((t->n_events + 1) * sizeof *rec_sizes);
  end_rec = malloc ((t->n_events + 1) * sizeof *end_rec);
  end_addr = malloc ((t->n_events + 1) * sizeof *end_addr);
  end_exp = malloc ((t->n_events + 1) * sizeof *end_exp);
  id_blocks = malloc ((t->n_events + 1) * sizeof *id_blocks);
  if (!rec_addrs || !rec_sizes || !end_rec || !end_addr || !end_exp || !id_blocks)
    {
      rc = ml_error_set (err, ML_ENOMEM, "out of memory");
      goto out;
    }
  for (size_t k = 0; k < t->n_events; k++)
    {
      const MlEvent *ev = &t->events[k];
      if (ev->addr + ev->size > top && ev->kind != ML_EV_OOM)
        top = ev->addr + ev->size;
      if ((ev->kind == ML_EV_SEGMENT_ALLOC || ev->kind == ML_EV_SEGMENT_MAP) && ev->tick > 0)
        {
          rec_addrs[n_rec] = ev->addr;
          rec_sizes[n_rec++] = ev->size;
        }
    }
  f.addrs = rec_addrs;
  f.n = n_rec;
  f.synth = (top + ML_CACHE_ROUND_LARGE - 1) / ML_CACHE_ROUND_LARGE * ML_CACHE_ROUND_LARGE + ((uint64_t) 1 << 30);
  r.rec_segment_events = n_rec;

  /* tick 0: segments, then blocks from the highest address down (so each
   * free block ends at the next live block, as it did) */
  size_t first_alloc = t->n_events, end0 = 0;
  while (end0 < t->n_events && t->events[end0].tick == 0)
    end0++;
  for (size_t k = 0; k < end0; k++)
    {
      const MlEvent *ev = &t->events[k];
      if (ev->kind == ML_EV_SEGMENT_ALLOC || ev->kind == ML_EV_SEGMENT_MAP)
        {
          const char *pool = ml_trace_str (t, ev->name);
          bool small = pool && *pool ? strcmp (pool, "small") == 0 : ev->size == ML_CACHE_SMALL_BUFFER;
          uint32_t stream = _ml_cache_stream_index (&c, ev->stream);
          if (c.failed)
            {
              rc = ml_error_set (err, ML_ENOMEM, "out of memory");
              goto out;
            }
          if (ev->kind == ML_EV_SEGMENT_MAP)
            {
              /* a mapped range: the ranges of one (pool, stream) are one segment */
              if ((rc = _ml_cache_exp_add_range (&c, ev->addr, ev->size, stream, small)) < 0)
                {
                  ml_error_set (err, rc, rc == ML_ENOMEM ? "out of memory"
                                : "%s: expandable range at 0x%" PRIx64 " overlaps another segment of the rebuilt state",
                                  ml_trace_event_where (t, k, where, sizeof where), ev->addr);
                  goto out;
                }
            }
          else if (_ml_cache_seg_add (&c, ev->addr, ev->size, stream, small, false) < 0)
            {
              rc = ml_error_set (err, ML_ENOMEM, "out of memory");
              goto out;
            }
          r.initial_segments++;
          r.rule_sized_segments += _ml_cache_rule_sized (ev->size, small) || ev->kind == ML_EV_SEGMENT_MAP;
          rec_seg_event (end_addr, end_rec, end_exp, &n_end_rec, ev);
        }
      else if (ev->kind == ML_EV_ALLOC && first_alloc == t->n_events)
        first_alloc = k;
    }
  for (size_t k = end0; k-- > first_alloc && first_alloc < end0;)
    {
      const MlEvent *ev = &t->events[k];
      if (ev->kind != ML_EV_ALLOC)
        continue;
      uint32_t i = _ml_cache_carve (&c, ev->addr, ev->size);
      r.initial_blocks++;
      if (i == ML_CACHE_NONE)
        {
          rc = ml_error_set (err, ML_EINPUT, "%s: block at 0x%" PRIx64 " of the rebuilt state is not inside a free part of a segment",
                             ml_trace_event_where (t, k, where, sizeof where), ev->addr);
          goto out;
        }
      id_blocks[n_id_blocks] = i;
      if (ml_u64map_put (&ids, ev->id, (uint32_t) n_id_blocks++) < 0)
        {
          rc = ml_error_set (err, ML_ENOMEM, "out of memory");
          goto out;
        }
    }

  /* the trace, forward */
  for (size_t k = end0; k < t->n_events; k++)
    {
      const MlEvent *ev = &t->events[k];
      uint32_t slot, i;
      switch (ev->kind)
        {
        case ML_EV_ALLOC:
          {
            r.allocs++;
            size_t emu_before = f.n_emu, next_before = f.next;
            uint64_t synth_before = f.synth;
            rc = _ml_cache_malloc (&c, ev->size, ev->stream, &i);
            if (rc < 0)
              {
                ml_error_set (err, rc, "%s: emulated allocation failed", ml_trace_event_where (t, k, where, sizeof where));
                goto out;
              }
            if (c.b[i].addr == ev->addr)
              r.matched++;
            else
              {
                /* undo, attribute, and resync at the real address when it is free */
                bool was_new = c.last_new_segment;
                uint64_t got = c.b[i].addr;
                uint32_t seg = c.b[i].seg;
                _ml_cache_free (&c, i);
                if (was_new && !c.s[seg].expandable)
                  {
                    c.rel_seg = NULL;
                    _ml_cache_seg_release (&c, seg);
                    f.n_emu = emu_before;
                    f.next = next_before;
                    f.synth = synth_before;
                  }
                MlCachingRule rule = classify (&c, ev->addr, ev->size, ev->stream, was_new);
                r.by_rule[rule]++;
                if (r.first_mismatch == SIZE_MAX)
                  {
                    r.first_mismatch = k;
                    r.first_want = ev->addr;
                    r.first_got = got;
                  }
                i = _ml_cache_carve (&c, ev->addr, ev->size);
                if (i == ML_CACHE_NONE && (rc = _ml_cache_malloc (&c, ev->size, ev->stream, &i)) < 0)
                  {
                    ml_error_set (err, rc, "%s: emulated allocation failed", ml_trace_event_where (t, k, where, sizeof where));
                    goto out;
                  }
              }
            id_blocks[n_id_blocks] = i;
            if (ml_u64map_put (&ids, ev->id, (uint32_t) n_id_blocks++) < 0)
              {
                rc = ml_error_set (err, ML_ENOMEM, "out of memory");
                goto out;
              }
          }
          break;
        case ML_EV_FREE:
          if (!ml_u64map_get (&ids, ev->id, &slot))
            {
              r.frees_unknown++;
              break;
            }
          ml_u64map_del (&ids, ev->id);
          if ((rc = _ml_cache_free (&c, id_blocks[slot])) < 0)
            {
              ml_error_set (err, rc, "out of memory");
              goto out;
            }
          break;
        case ML_EV_SEGMENT_ALLOC:
        case ML_EV_SEGMENT_MAP:
          rec_seg_event (end_addr, end_rec, end_exp, &n_end_rec, ev);
          break;
        case ML_EV_SEGMENT_FREE:
          rec_seg_event (end_addr, end_rec, end_exp, &n_end_rec, ev);
          {
            uint32_t s = ml_treap_find (&c.segs, ev->addr, 0, NULL);
            if (s != ML_TREAP_NIL)
              _ml_cache_seg_release (&c, (uint32_t) c.segs.nodes[s].value);
          }
          break;
        case ML_EV_SEGMENT_UNMAP:
          /* release_cached_blocks (an OOM's retry, empty_cache): the
           * emulation unmaps the same free pages */
          rec_seg_event (end_addr, end_rec, end_exp, &n_end_rec, ev);
          _ml_cache_unmap_range (&c, ev->addr, ev->size);
          if (c.failed)
            {
              rc = ml_error_set (err, ML_ENOMEM, "out of memory");
              goto out;
            }
          break;
        default:
          break;
        }
    }

  /* segments: pairwise in creation order, and at the end */
  r.emu_segment_events = f.n_emu;
  for (size_t k = 0; k < f.n_emu && k < n_rec; k++)
    r.segment_events_matched += f.emu_sizes[k] == rec_sizes[k];
  {
    size_t n_emu_end = 0;
    uint64_t *grown = realloc (rec_sizes, (t->n_events + c.nb + c.ns + 1) * sizeof *rec_sizes);
    if (!grown)
      {
        rc = ml_error_set (err, ML_ENOMEM, "out of memory");
        goto out;
      }
    rec_sizes = grown;
    for (size_t s = 0; s < c.ns; s++)
      if (c.s[s].alive && !c.s[s].expandable)
        rec_sizes[n_emu_end++] = c.s[s].size, r.end_emu_bytes += c.s[s].size;
      else if (c.s[s].alive)
        {
          /* its contiguous mapped ranges */
          uint64_t run = 0;
          for (uint32_t i = c.s[s].first;; i = c.b[i].next)
            {
              bool end = i == ML_CACHE_NONE || c.b[i].unmapped;
              if (end && run)
                rec_sizes[n_emu_end++] = run, r.end_emu_bytes += run, run = 0;
              if (i == ML_CACHE_NONE)
                break;
              if (!end)
                run += c.b[i].size;
            }
        }
    for (size_t s = 0; s < n_end_rec; s++)
      r.end_rec_bytes += end_rec[s];
    r.end_rec_segments = n_end_rec;
    r.end_emu_segments = n_emu_end;
    ml_sort_u64 (rec_sizes, n_emu_end);
    ml_sort_u64 (end_rec, n_end_rec);
    r.end_match = n_emu_end == n_end_rec && memcmp (rec_sizes, end_rec, n_end_rec * sizeof *end_rec) == 0;
  }
  *out = r;
  rc = 0;
out:
  free (rec_addrs);
  free (rec_sizes);
  free (end_rec);
  free (end_addr);
  free (end_exp);
  free (id_blocks);
  free (f.emu_sizes);
  ml_u64map_clear (&ids);
  _ml_cache_clear (&c);
  return rc;
}
