/* races.c — cross-stream reuse and in-place hazards (see check.h and
 * docs/races.md for the semantics). */
#include "sim/analysis/races.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/array.h"
#include "sim/base/treap.h"
#include "sim/base/u64map.h"
#include "sim/base/units.h"

/* A reuse waiting for stream B's first kernel. */
typedef struct {
  uint32_t a, b;
  uint64_t lo, bytes;   /* global range */
} Pending;

typedef struct {
  Pending *items;
  size_t   n, cap;
} PendingList;

typedef struct {
  const MlBuffers *bufs;
  const MlPlan    *plan;
  MlIssues        *issues;
  MlError         *err;
  bool             kernels;   /* the trace has kernel events */

  MlU64Map         stream_ix; /* stream id -> dense index */
  uint32_t        *streams;   /* dense index -> id */
  size_t           S;
  uint64_t        *vc;        /* S x S: vc[s*S + x] = x's position known to s */
  uint64_t        *host;      /* S */
  MlU64Map         event_ix;  /* cuda event id -> slot in ec */
  uint64_t        *ec;        /* slots x S */
  size_t           n_ec, cap_ec;

  uint64_t        *base;      /* global base of each segment */
  uint64_t        *free_pos;  /* n: position of A's last work on each freed buffer (0 = none) */
  MlTreap          freed;     /* (lo, buffer) -> hi: bytes whose last occupant is gone */
  PendingList     *pending;   /* S lists */
} Races;

static long
stream_index (Races *r, uint32_t id, bool add)
{
  uint32_t v;
  if (ml_u64map_get (&r->stream_ix, id, &v))
    return v;
  if (!add)
    return -1;
  uint32_t *p = realloc (r->streams, (r->S + 1) * sizeof *p);
  if (!p)
    return -2;
  r->streams = p;
  r->streams[r->S] = id;
  if (ml_u64map_put (&r->stream_ix, id, (uint32_t) r->S) < 0)
    return -2;
  return (long) r->S++;
}

static void
join (uint64_t *dst, const uint64_t *src, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (src[i] > dst[i])
      dst[i] = src[i];
}

static uint64_t *
vc_of (Races *r, size_t s)
{
  return r->vc + s * r->S;
}

/* Stream @s enqueues work at @tick: ordered after what the host knows. */
static void
op (Races *r, size_t s, uint64_t tick)
{
  uint64_t *c = vc_of (r, s);
  join (c, r->host, r->S);
  if (tick + 1 > c[s])
    c[s] = tick + 1;
}

static const char *
sz (uint64_t b, char *buf)
{
  return ml_format_size (b, buf, 32);
}

static int
report_reuse (Races *r, uint32_t a, uint32_t b, uint64_t lo, uint64_t bytes)
{
  const MlBuffer *x = &r->bufs->buf[a], *y = &r->bufs->buf[b];
  uint32_t g = r->plan->segment[b];
  MlIssue is = {
    .kind = ML_ISSUE_CROSS_STREAM, .a = a, .b = b, .tick = y->start, .tick_b = x->end,
    .offset = lo - r->base[g], .bytes = bytes, .segment = g, .stream_a = x->stream, .stream_b = y->stream,
  };
  char s1[32], la[ML_STREAM_LABEL_MAX], lb[ML_STREAM_LABEL_MAX];
  const MlTrace *t = r->bufs->trace;
  ml_trace_stream_label (t, x->stream, la);
  ml_trace_stream_label (t, y->stream, lb);
  snprintf (is.why, sizeof is.why,
            "buffer %" PRIu64 " (stream %s) freed at tick %" PRIu64 ", %s of its bytes reused by buffer %" PRIu64
            " (stream %s) at tick %" PRIu64 " with no sync ordering stream %s before %s",
            x->id, la, x->end, sz (bytes, s1), y->id, lb, y->start, la, lb);
  return ml_issues_add (r->issues, &is);
}

/* Checks B's pending reuses now that B's work on them starts. */
static int
resolve (Races *r, size_t sb)
{
  PendingList *pl = &r->pending[sb];
  const uint64_t *c = vc_of (r, sb);
  for (size_t k = 0; k < pl->n; k++)
    {
      const Pending *p = &pl->items[k];
      long sa = stream_index (r, r->bufs->buf[p->a].stream, false);
      if (sa >= 0 && c[sa] < r->free_pos[p->a] && report_reuse (r, p->a, p->b, p->lo, p->bytes) < 0)
        return ML_ENOMEM;
    }
  pl->n = 0;
  return 0;
}

typedef struct {
  uint64_t lo, hi;
  uint32_t owner;
} Piece;

typedef struct {
  Piece *items;
  size_t n, cap;
  int    rc;
} Pieces;

static bool
collect (void *user, const MlTreapNode *node)
{
  Pieces *ps = user;
  if (ps->n == ps->cap)
    {
      size_t cap = ps->cap ? ps->cap * 2 : 16;
      Piece *p = realloc (ps->items, cap * sizeof *p);
      if (!p)
        {
          ps->rc = ML_ENOMEM;
          return false;
        }
      ps->items = p;
      ps->cap = cap;
    }
  ps->items[ps->n++] = (Piece) { node->a, node->value, (uint32_t) node->b };
  return true;
}

static int
by_owner (const void *x, const void *y)
{
  const Piece *a = x, *b = y;
  if (a->owner != b->owner)
    return a->owner < b->owner ? -1 : 1;
  return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static int
on_alloc (Races *r, uint32_t bi, uint64_t tick, Pieces *ps)
{
  const MlBuffer *b = &r->bufs->buf[bi];
  long sb = stream_index (r, b->stream, false);
  if (!r->kernels)
    op (r, (size_t) sb, tick);
  if (!b->rsize)
    return 0;
  uint64_t lo = r->base[r->plan->segment[bi]] + r->plan->offset[bi], hi = lo + b->rsize;
  ps->n = 0;
  ps->rc = 0;
  ml_treap_overlaps (&r->freed, lo, hi, collect, ps);
  if (ps->rc < 0)
    return ps->rc;
  /* the bytes now belong to b: cut them out of the freed map */
  for (size_t k = 0; k < ps->n; k++)
    {
      Piece *p = &ps->items[k];
      ml_treap_remove (&r->freed, p->lo, p->owner);
      if (p->lo < lo && ml_treap_insert (&r->freed, p->lo, p->owner, lo) == ML_TREAP_NIL)
        return ML_ENOMEM;
      if (p->hi > hi && ml_treap_insert (&r->freed, hi, p->owner, p->hi) == ML_TREAP_NIL)
        return ML_ENOMEM;
      p->lo = p->lo > lo ? p->lo : lo;
      p->hi = p->hi < hi ? p->hi : hi;
    }
  if (ps->n > 1)
    qsort (ps->items, ps->n, sizeof *ps->items, by_owner);
  for (size_t k = 0; k < ps->n;)
    {
      uint32_t a = ps->items[k].owner;
      uint64_t first = ps->items[k].lo, bytes = 0;
      for (; k < ps->n && ps->items[k].owner == a; k++)
        bytes += ps->items[k].hi - ps->items[k].lo;
      if (r->bufs->buf[a].stream == b->stream || r->free_pos[a] == 0)
        continue;
      if (!r->kernels)
        {
          long sa = stream_index (r, r->bufs->buf[a].stream, false);
          if (vc_of (r, (size_t) sb)[sa] < r->free_pos[a] && report_reuse (r, a, bi, first, bytes) < 0)
            return ML_ENOMEM;
          continue;
        }
      PendingList *pl = &r->pending[sb];
      if (ML_ARRAY_RESERVE (pl->items, pl->n, pl->cap, 8) < 0)
        return ML_ENOMEM;
      pl->items[pl->n++] = (Pending) { a, bi, first, bytes };
    }
  return 0;
}

static int
on_free (Races *r, uint32_t ai, uint64_t tick)
{
  const MlBuffer *a = &r->bufs->buf[ai];
  size_t s = (size_t) stream_index (r, a->stream, false);
  if (!r->kernels)
    op (r, s, tick);
  else
    {
      /* reuses of a's successor that never saw a kernel: nothing of B ran */
      PendingList *pl = &r->pending[s];
      size_t w = 0;
      for (size_t k = 0; k < pl->n; k++)
        if (pl->items[k].b != ai)
          pl->items[w++] = pl->items[k];
      pl->n = w;
    }
  uint64_t pos = vc_of (r, s)[s];
  r->free_pos[ai] = pos > a->start ? pos : 0;   /* positions are tick + 1 */
  if (!a->rsize)
    return 0;
  uint64_t lo = r->base[r->plan->segment[ai]] + r->plan->offset[ai];
  if (ml_treap_insert (&r->freed, lo, ai, lo + a->rsize) == ML_TREAP_NIL)
    return ML_ENOMEM;
  return 0;
}

static uint64_t *
event_clock (Races *r, uint64_t id, bool add)
{
  uint32_t v;
  if (ml_u64map_get (&r->event_ix, id, &v))
    return r->ec + (size_t) v * r->S;
  if (!add)
    return NULL;
  if (r->n_ec == r->cap_ec)
    {
      size_t cap = r->cap_ec ? r->cap_ec * 2 : 16;
      uint64_t *p = realloc (r->ec, cap * r->S * sizeof *p);
      if (!p)
        return NULL;
      r->ec = p;
      r->cap_ec = cap;
    }
  if (ml_u64map_put (&r->event_ix, id, (uint32_t) r->n_ec) < 0)
    return NULL;
  uint64_t *c = r->ec + r->n_ec * r->S;
  memset (c, 0, r->S * sizeof *c);
  r->n_ec++;
  return c;
}

static int
on_event (Races *r, const MlEvent *e)
{
  long s = stream_index (r, e->stream, false);
  if (e->kind == ML_EV_KERNEL)
    {
      if (s < 0)
        return 0;
      join (vc_of (r, (size_t) s), r->host, r->S);
      int rc = resolve (r, (size_t) s);   /* B's work starts here */
      op (r, (size_t) s, e->tick);
      return rc;
    }
  if (e->kind != ML_EV_SYNC)
    return 0;
  switch ((MlSyncKind) e->sync_kind)
    {
    case ML_SYNC_DEVICE:
    case ML_SYNC_CONTEXT:
      for (size_t x = 0; x < r->S; x++)
        if (vc_of (r, x)[x] > r->host[x])
          r->host[x] = vc_of (r, x)[x];
      break;
    case ML_SYNC_STREAM:
      if (s >= 0)
        join (r->host, vc_of (r, (size_t) s), r->S);
      break;
    case ML_SYNC_EVENT:
      {
        const uint64_t *c = event_clock (r, e->id, false);
        if (c)
          join (r->host, c, r->S);
        break;
      }
    case ML_SYNC_EVENT_RECORD:
      if (s >= 0)
        {
          uint64_t *c = event_clock (r, e->id, true);
          if (!c)
            return ML_ENOMEM;
          join (vc_of (r, (size_t) s), r->host, r->S);
          memcpy (c, vc_of (r, (size_t) s), r->S * sizeof *c);   /* re-recording replaces */
        }
      break;
    case ML_SYNC_STREAM_WAIT:
      if (s >= 0)
        {
          const uint64_t *c = event_clock (r, e->id, false);
          join (vc_of (r, (size_t) s), r->host, r->S);
          if (c)
            join (vc_of (r, (size_t) s), c, r->S);
        }
      break;
    default:
      break;
    }
  return 0;
}

static void
races_free (Races *r)
{
  ml_u64map_clear (&r->stream_ix);
  ml_u64map_clear (&r->event_ix);
  free (r->streams);
  free (r->vc);
  free (r->host);
  free (r->ec);
  free (r->base);
  free (r->free_pos);
  ml_treap_clear (&r->freed);
  if (r->pending)
    for (size_t s = 0; s < r->S; s++)
      free (r->pending[s].items);
  free (r->pending);
}

#define MAX_STREAMS 4096

static int
check_cross_stream (const MlBuffers *bufs, const MlPlan *plan, MlIssues *issues, MlError *err)
{
  const MlTrace *t = bufs->trace;
  Races r = { .bufs = bufs, .plan = plan, .issues = issues, .err = err };
  ml_u64map_init (&r.stream_ix);
  ml_u64map_init (&r.event_ix);
  ml_treap_init (&r.freed);
  int rc = 0;
  for (size_t i = 0; i < bufs->n && rc == 0; i++)
    if (stream_index (&r, bufs->buf[i].stream, true) < 0)
      rc = ML_ENOMEM;
  if (t)
    for (size_t i = 0; i < t->n_events && rc == 0; i++)
      {
        const MlEvent *e = &t->events[i];
        if (e->kind == ML_EV_KERNEL)
          r.kernels = true;
        if ((e->kind == ML_EV_KERNEL || e->kind == ML_EV_SYNC) && stream_index (&r, e->stream, true) < 0)
          rc = ML_ENOMEM;
      }
  if (rc == 0 && r.S < 2)
    {
      races_free (&r);
      return 0;   /* one stream: nothing to order */
    }
  if (rc == 0 && r.S > MAX_STREAMS)
    {
      races_free (&r);
      return ml_error_set (err, ML_EUNSUPPORTED, "%zu streams: the race checker handles at most %d", r.S, MAX_STREAMS);
    }
  if (rc == 0)
    {
      r.vc = calloc (r.S * r.S, sizeof *r.vc);
      r.host = calloc (r.S, sizeof *r.host);
      r.pending = calloc (r.S, sizeof *r.pending);
      r.base = calloc (plan->n_segments + 1, sizeof *r.base);
      r.free_pos = calloc (bufs->n + 1, sizeof *r.free_pos);
      if (!r.vc || !r.host || !r.pending || !r.base || !r.free_pos)
        rc = ML_ENOMEM;
    }
  if (rc == 0)
    {
      /* segments side by side, as wide as their furthest byte */
      uint64_t *ext = calloc (plan->n_segments + 1, sizeof *ext);
      if (!ext)
        rc = ML_ENOMEM;
      else
        {
          for (size_t g = 0; g < plan->n_segments; g++)
            ext[g] = plan->segments[g].size;
          for (size_t i = 0; i < plan->n; i++)
            if (plan->segment[i] < plan->n_segments && plan->offset[i] + bufs->buf[i].rsize > ext[plan->segment[i]])
              ext[plan->segment[i]] = plan->offset[i] + bufs->buf[i].rsize;
          uint64_t x = 0;
          for (size_t g = 0; g < plan->n_segments; g++)
            {
              r.base[g] = x;
              x += ext[g] + 1;
            }
          free (ext);
        }
    }
  for (size_t i = 0; i < plan->n && rc == 0; i++)
    if (plan->segment[i] >= plan->n_segments)
      rc = ml_error_set (err, ML_EINPUT, "buffer %" PRIu64 " is in segment %u of %zu", bufs->buf[i].id,
                         plan->segment[i], plan->n_segments);
  Pieces ps = { 0 };
  MlSweep sw;
  MlSweepStep st;
  ml_sweep_init (&sw, bufs);
  bool more = rc == 0 && ml_sweep_next (&sw, &st);
  size_t ei = 0;
  size_t ne = t ? t->n_events : 0;
  while (rc == 0 && (more || ei < ne))
    {
      /* at one tick: frees, then kernels and syncs, then allocations */
      bool take_event = false;
      if (ei < ne)
        {
          const MlEvent *e = &t->events[ei];
          if (e->kind != ML_EV_KERNEL && e->kind != ML_EV_SYNC)
            {
              ei++;
              continue;
            }
          take_event = !more || e->tick < st.tick || (e->tick == st.tick && st.is_alloc);
        }
      if (take_event)
        rc = on_event (&r, &t->events[ei++]);
      else
        {
          rc = st.is_alloc ? on_alloc (&r, st.buffer, st.tick, &ps) : on_free (&r, st.buffer, st.tick);
          more = ml_sweep_next (&sw, &st);
        }
    }
  free (ps.items);
  races_free (&r);
  if (rc == ML_ENOMEM)
    return ml_error_set (err, rc, "out of memory in the race checker");
  return rc;
}

/* ---- in-place ------------------------------------------------------------ */

/* The buffer with trace id @id live at @tick (or the latest one before). */
static long
find_buffer (const MlBuffers *bufs, const MlU64Map *last, const uint32_t *prev, uint64_t id, uint64_t tick)
{
  uint32_t i;
  if (!ml_u64map_get (last, id, &i))
    return -1;
  long fallback = i;
  for (; i != UINT32_MAX; i = prev[i])
    {
      const MlBuffer *b = &bufs->buf[i];
      if (b->start <= tick)
        return i;
      fallback = i;
    }
  return fallback;
}

int
ml_check_inplace (const MlBuffers *bufs, const MlPlan *plan, const MlInplaceWrite *w, size_t n,
                  MlIssues *issues, MlError *err)
{
  if (n == 0)
    return 0;
  MlU64Map last;
  ml_u64map_init (&last);
  uint32_t *prev = malloc ((bufs->n + 1) * sizeof *prev);
  int rc = prev ? 0 : ML_ENOMEM;
  for (size_t i = 0; i < bufs->n && rc == 0; i++)
    {
      uint32_t p;
      prev[i] = ml_u64map_get (&last, bufs->buf[i].id, &p) ? p : UINT32_MAX;
      if (ml_u64map_put (&last, bufs->buf[i].id, (uint32_t) i) < 0)
        rc = ML_ENOMEM;
    }
  const MlTrace *t = bufs->trace;
  for (size_t k = 0; k < n && rc == 0; k++)
    {
      const MlInplaceWrite *x = &w[k];
      long in = find_buffer (bufs, &last, prev, x->input_id, x->op_tick);
      long out = find_buffer (bufs, &last, prev, x->output_id, x->op_tick);
      if (in < 0 || out < 0)
        {
          rc = ml_error_set (err, ML_EINPUT, "in-place write %zu (tick %" PRIu64 "): unknown buffer id %" PRIu64, k,
                             x->op_tick, in < 0 ? x->input_id : x->output_id);
          break;
        }
      if (x->last_read <= x->op_tick)
        continue;
      const MlBuffer *a = &bufs->buf[in], *b = &bufs->buf[out];
      MlIssue is = {
        .kind = ML_ISSUE_INPLACE, .a = (uint32_t) in, .b = (uint32_t) out, .tick = x->op_tick, .tick_b = x->last_read,
        .bytes = a->rsize, .stream_a = a->stream, .stream_b = b->stream,
      };
      if (plan && (size_t) in < plan->n)
        {
          is.segment = plan->segment[in];
          is.offset = plan->offset[in];
        }
      const char *op = t && x->op_name ? ml_trace_str (t, x->op_name) : NULL;
      snprintf (is.why, sizeof is.why,
                "op %s%s%sat tick %" PRIu64 " writes buffer %" PRIu64 " over its input %" PRIu64
                ", which is still read at tick %" PRIu64,
                op ? "\"" : "", op ? op : "", op ? "\" " : "", x->op_tick, b->id, a->id, x->last_read);
      if (ml_issues_add (issues, &is) < 0)
        rc = ML_ENOMEM;
    }
  free (prev);
  ml_u64map_clear (&last);
  if (rc == ML_ENOMEM)
    return ml_error_set (err, rc, "out of memory");
  return rc;
}

int
ml_check_races (const MlBuffers *bufs, const MlPlan *plan, MlIssues *issues, MlError *err)
{
  if (plan->n != bufs->n)
    return ml_error_set (err, ML_EINPUT, "the plan places %zu buffers, the trace has %zu", plan->n, bufs->n);
  int rc = check_cross_stream (bufs, plan, issues, err);
  if (rc < 0)
    return rc;
  const MlTrace *t = bufs->trace;
  if (t && t->n_inplace)
    rc = ml_check_inplace (bufs, plan, t->inplace, t->n_inplace, issues, err);
  return rc;
}
