#include "sim/buffers.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/sort.h"
#include "sim/base/u64map.h"

static_assert (sizeof (MlBuffer) <= 64, "the buffer budget is 64 bytes");

const char *
ml_buffer_id_text (const MlBuffers *bufs, size_t i, char *buf, size_t len)
{
  const MlBuffer *b = &bufs->buf[i];
  if (b->name && bufs->trace && strcmp (ml_trace_str (bufs->trace, bufs->trace->source), "csv") == 0)
    return ml_trace_str (bufs->trace, b->name);
  snprintf (buf, len, "%" PRIu64, b->id);
  return buf;
}

void
ml_buffers_free (MlBuffers *bufs)
{
  if (!bufs)
    return;
  free (bufs->buf);
  free (bufs->by_end);
  free (bufs->alloc_event);
  free (bufs->free_requested);
  free (bufs->group_member);
  free (bufs->group_end);
  free (bufs);
}

void
ml_sweep_init (MlSweep *sw, const MlBuffers *bufs)
{
  sw->bufs = bufs;
  sw->next_start = sw->next_end = 0;
}

bool
ml_sweep_next (MlSweep *sw, MlSweepStep *step)
{
  const MlBuffers *b = sw->bufs;
  if (sw->next_end < b->n)
    {
      uint32_t e = b->by_end[sw->next_end];
      /* at one tick frees come first, but never before the buffer's own alloc */
      if (e < sw->next_start
          && (sw->next_start == b->n || b->buf[e].end <= b->buf[sw->next_start].start))
        {
          step->tick = b->buf[e].end;
          step->buffer = e;
          step->is_alloc = false;
          sw->next_end++;
          return true;
        }
    }
  if (sw->next_start < b->n)
    {
      uint32_t s = (uint32_t) sw->next_start++;
      step->tick = b->buf[s].start;
      step->buffer = s;
      step->is_alloc = true;
      return true;
    }
  return false;
}

static void
compute_lower_bound (MlBuffers *b)
{
  MlSweep sw;
  MlSweepStep st;
  uint64_t live = 0, best = 0, best_tick = 0;
  bool have = false;
  uint64_t cur_tick = 0;
  ml_sweep_init (&sw, b);
  while (ml_sweep_next (&sw, &st))
    {
      if (have && st.tick != cur_tick && live > best)
        {
          best = live;
          best_tick = cur_tick;
        }
      have = true;
      cur_tick = st.tick;
      if (st.is_alloc)
        live += b->buf[st.buffer].rsize;
      else
        live -= b->buf[st.buffer].rsize;
    }
  if (have && live > best)
    {
      best = live;
      best_tick = cur_tick;
    }
  b->lower_bound = best;
  b->lower_bound_tick = best_tick;
}

int
ml_buffers_index (MlBuffers *b, MlError *err)
{
  for (size_t i = 0; i < b->n; i++)
    b->by_end[i] = (uint32_t) i;
  if (ml_sort_indexes_by_key (b->by_end, b->n, &b->buf[0].end, sizeof (MlBuffer)) < 0)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  compute_lower_bound (b);
  return 0;
}

/* The trace's contiguous groups as buffer indexes; a member is a buffer of
 * the arena: not zero-copy, not fixed, in one group once. */
static int
map_groups (MlBuffers *b, const MlTrace *t, MlError *err)
{
  MlU64Map ids;
  ml_u64map_init (&ids);
  int rc = 0;
  b->group_member = malloc ((t->n_group_ids ? t->n_group_ids : 1) * sizeof *b->group_member);
  b->group_end = malloc (t->n_groups * sizeof *b->group_end);
  if (!b->group_member || !b->group_end)
    rc = ml_error_set (err, ML_ENOMEM, "out of memory");
  for (size_t i = 0; i < b->n && rc == 0; i++)
    if (ml_u64map_put (&ids, b->buf[i].id, (uint32_t) i) < 0)
      rc = ml_error_set (err, ML_ENOMEM, "out of memory");
  for (size_t g = 0, k = 0; g < t->n_groups && rc == 0; g++)
    {
      for (; k < t->group_end[g] && rc == 0; k++)
        {
          uint32_t idx;
          if (!ml_u64map_get (&ids, t->group_ids[k], &idx))
            rc = ml_error_set (err, ML_EINPUT, "contiguous group %zu: no buffer has id %" PRIu64, g, t->group_ids[k]);
          else if (b->buf[idx].flags & (ML_BUF_GROUPED | ML_BUF_ZERO_COPY | ML_BUF_PINNED))
            rc = ml_error_set (err, ML_EINPUT, "contiguous group %zu: buffer %" PRIu64 " is %s", g, t->group_ids[k],
                               (b->buf[idx].flags & ML_BUF_GROUPED) ? "in a contiguous group already"
                               : (b->buf[idx].flags & ML_BUF_ZERO_COPY) ? "zero-copy (outside the arena)"
                                                                        : "fixed (at its own offset)");
          else
            {
              b->buf[idx].flags |= ML_BUF_GROUPED;
              b->group_member[k] = idx;
            }
        }
      b->group_end[g] = k;
    }
  if (rc == 0)
    b->n_groups = t->n_groups;
  ml_u64map_clear (&ids);
  return rc;
}

/* For the message of a free of an id that is not live at event @i: the
 * event that freed it last, when it was freed by id and not allocated
 * again since (a double free). Found by a scan back from @i on this error
 * path only: a map of every freed id, kept for it, cost a random probe
 * into a table the size of the trace per buffer. */
static bool
freed_before (const MlTrace *t, size_t i, uint64_t id, size_t *at)
{
  for (size_t k = i; k-- > 0;)
    {
      const MlEvent *e = &t->events[k];
      if (!(e->flags & ML_EVF_HAS_ID) || e->id != id)
        continue;
      if (e->kind == ML_EV_FREE)
        {
          *at = k;
          return true;
        }
      if (e->kind == ML_EV_ALLOC)
        return false;
    }
  return false;
}

/* The buffers being built from a trace: the live ones by id and by
 * address, the total of their aligned sizes. */
typedef struct {
  const MlTrace *trace;
  MlBuffers *b;
  MlU64Map   by_id, by_addr;
  uint64_t   total;
  MlError   *err;
  char       where[2][ML_TRACE_WHERE_MAX];
} Build;

#define WHERE(k)  ml_trace_event_where (s->trace, (k), s->where[0], sizeof s->where[0])
#define WHERE2(k) ml_trace_event_where (s->trace, (k), s->where[1], sizeof s->where[1])

/* The empty buffer table for @trace's allocations (*@n_out of them). */
static int
buffers_new (const MlTrace *trace, uint64_t align, MlBuffers **out, size_t *n_out, MlError *err)
{
  MlBuffers *b = calloc (1, sizeof *b);
  if (!b)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  b->align = align;
  b->trace = trace;
  b->zero_copy_align = trace->zero_copy_align ? trace->zero_copy_align : align;
  b->max_block = trace->max_block;
  if (b->zero_copy_align & (b->zero_copy_align - 1))
    {
      ml_buffers_free (b);
      return ml_error_set (err, ML_EINPUT, "zero-copy alignment %" PRIu64 " is not a power of two", b->zero_copy_align);
    }
  b->end_tick = ml_trace_end_tick (trace);
  size_t n_alloc = 0;
  for (size_t i = 0; i < trace->n_events; i++)
    n_alloc += trace->events[i].kind == ML_EV_ALLOC;
  if (n_alloc >= UINT32_MAX)
    {
      ml_buffers_free (b);
      return ml_error_set (err, ML_EINPUT, "%zu allocations: at most %u are supported", n_alloc, UINT32_MAX - 1);
    }
  b->buf = malloc ((n_alloc ? n_alloc : 1) * sizeof *b->buf);
  b->by_end = malloc ((n_alloc ? n_alloc : 1) * sizeof *b->by_end);
  b->alloc_event = malloc ((n_alloc ? n_alloc : 1) * sizeof *b->alloc_event);
  if (!b->buf || !b->by_end || !b->alloc_event)
    {
      ml_buffers_free (b);
      return ml_error_set (err, ML_ENOMEM, "out of memory for %zu buffers", n_alloc);
    }
  *out = b;
  *n_out = n_alloc;
  return 0;
}

/* The buffer of alloc event @i: its sizes (aligned, within the total a
 * plan can address), where it was recorded, its flags. */
static int
buffer_of (Build *s, size_t i, const MlEvent *ev, MlBuffer *buf)
{
  MlBuffers *b = s->b;
  uint64_t align = b->align;
  memset (buf, 0, sizeof *buf);
  buf->id = (ev->flags & ML_EVF_HAS_ID) ? ev->id : b->n;
  buf->size = ev->size;
  buf->rsize = ml_align_up (ev->size, (ev->flags & ML_EVF_ZERO_COPY) ? b->zero_copy_align : align);
  if (buf->rsize < buf->size)
    return ml_error_set (s->err, ML_EINPUT, "%s: size %" PRIu64 " overflows when aligned to %" PRIu64,
                         WHERE (i), ev->size, align);
  /* Every offset a strategy computes is at most the sum of all sizes;
   * bounding it keeps plan arithmetic inside 64 bits. */
  if (buf->rsize > ML_BUFFERS_MAX_TOTAL - s->total)
    return ml_error_set (s->err, ML_EINPUT, "%s: size %" PRIu64 " brings the buffers' total past 2^60 bytes (1 EiB), "
                         "more than any plan can address", WHERE (i), ev->size);
  s->total += buf->rsize;
  if ((ev->flags & ML_EVF_HAS_ADDR) && ev->addr > UINT64_MAX - buf->rsize)
    /* a recorded block must end inside the address space: one that
     * wraps past 2^64 would sit below its own start */
    return ml_error_set (s->err, ML_EINPUT, "%s: address 0x%" PRIx64 " + size %" PRIu64 " wraps past 2^64",
                         WHERE (i), ev->addr, buf->rsize);
  buf->addr = ev->addr;
  buf->start = ev->tick;
  buf->end = b->end_tick;
  buf->name = ev->name;
  buf->stack = ev->stack;
  buf->stream = ev->stream;
  buf->flags = (ev->flags & (ML_EVF_KIND_MASK | ML_EVF_PINNED)) | ML_BUF_NEVER_FREED;
  if (ev->flags & ML_EVF_ZERO_COPY)
    buf->flags |= ML_BUF_ZERO_COPY;
  if (ev->flags & ML_EVF_NO_REUSE)
    buf->flags |= ML_BUF_NO_REUSE;
  if (ev->flags & ML_EVF_HAS_ADDR)
    buf->flags |= ML_BUF_HAS_ADDR;
  if (ev->flags & ML_EVF_CLIPPED)
    buf->flags |= ML_BUF_CLIPPED;
  return 0;
}

/* Alloc event @i: a new live buffer, known by its id (or address). */
static int
on_alloc (Build *s, size_t i, const MlEvent *ev)
{
  MlBuffers *b = s->b;
  if (!(ev->flags & (ML_EVF_HAS_ID | ML_EVF_HAS_ADDR)))
    return ml_error_set (s->err, ML_EINPUT, "%s: alloc has neither id nor addr", WHERE (i));
  uint32_t idx = (uint32_t) b->n, other;
  int rc = buffer_of (s, i, ev, &b->buf[idx]);
  if (rc < 0)
    return rc;
  if (ev->flags & ML_EVF_HAS_ID)
    {
      if (ml_u64map_get (&s->by_id, ev->id, &other))
        return ml_error_set (s->err, ML_EINPUT, "%s: duplicate id %" PRIu64 " (still live since %s)",
                             WHERE (i), ev->id, WHERE2 (b->alloc_event[other]));
      if (ml_u64map_put (&s->by_id, ev->id, idx) < 0)
        return ml_error_set (s->err, ML_ENOMEM, "out of memory");
    }
  else if (ev->size > 0 && ml_u64map_get (&s->by_addr, ev->addr, &other))
    return ml_error_set (s->err, ML_EINPUT, "%s: address 0x%" PRIx64 " allocated again while live (since %s)",
                         WHERE (i), ev->addr, WHERE2 (b->alloc_event[other]));
  if ((ev->flags & ML_EVF_HAS_ADDR) && ml_u64map_put (&s->by_addr, ev->addr, idx) < 0)
    return ml_error_set (s->err, ML_ENOMEM, "out of memory");
  b->alloc_event[idx] = (uint32_t) (i < UINT32_MAX ? i : UINT32_MAX);
  b->n++;
  return 0;
}

/* Free event @i: the live buffer it names (by id, else by address) ends. */
static int
on_free (Build *s, size_t i, const MlEvent *ev)
{
  uint32_t idx;
  if (ev->flags & ML_EVF_HAS_ID)
    {
      if (!ml_u64map_get (&s->by_id, ev->id, &idx))
        {
          size_t was;
          if (freed_before (s->trace, i, ev->id, &was))
            return ml_error_set (s->err, ML_EINPUT, "%s: double free of id %" PRIu64 " (already freed at %s)",
                                 WHERE (i), ev->id, WHERE2 (was));
          return ml_error_set (s->err, ML_EINPUT, "%s: free of unknown id %" PRIu64, WHERE (i), ev->id);
        }
    }
  else if (ev->flags & ML_EVF_HAS_ADDR)
    {
      if (!ml_u64map_get (&s->by_addr, ev->addr, &idx))
        return ml_error_set (s->err, ML_EINPUT, "%s: free of unknown address 0x%" PRIx64, WHERE (i), ev->addr);
    }
  else
    return ml_error_set (s->err, ML_EINPUT, "%s: free has neither id nor addr", WHERE (i));
  MlBuffer *buf = &s->b->buf[idx];
  buf->end = ev->tick;
  buf->flags &= ~(uint32_t) (ML_BUF_NEVER_FREED | ML_BUF_PENDING);
  if (ev->flags & ML_EVF_CLIPPED)
    buf->flags |= ML_BUF_CLIPPED;
  ml_u64map_del (&s->by_id, buf->id);
  if (buf->flags & ML_BUF_HAS_ADDR)
    {
      uint32_t cur;
      if (ml_u64map_get (&s->by_addr, buf->addr, &cur) && cur == idx)
        ml_u64map_del (&s->by_addr, buf->addr);
    }
  return 0;
}

/* Free-requested event @i: the free was asked for; the block waits on
 * other streams' work until its free completes (an unknown one is left
 * to the free to name). */
static int
on_free_requested (Build *s, const MlEvent *ev, size_t n_alloc)
{
  MlBuffers *b = s->b;
  uint32_t idx;
  if (!((ev->flags & ML_EVF_HAS_ID) ? ml_u64map_get (&s->by_id, ev->id, &idx)
        : (ev->flags & ML_EVF_HAS_ADDR) && ml_u64map_get (&s->by_addr, ev->addr, &idx)))
    return 0;
  if (!b->free_requested)
    {
      if (!(b->free_requested = malloc ((n_alloc ? n_alloc : 1) * sizeof *b->free_requested)))
        return ml_error_set (s->err, ML_ENOMEM, "out of memory");
      for (size_t k = 0; k < n_alloc; k++)
        b->free_requested[k] = UINT64_MAX;
    }
  if (b->free_requested[idx] == UINT64_MAX)
    b->free_requested[idx] = ev->tick;
  b->buf[idx].flags |= ML_BUF_PENDING;
  return 0;
}

/* Every event in order: ticks that never go back, allocs and frees. */
static int
walk_events (Build *s, size_t n_alloc)
{
  const MlTrace *trace = s->trace;
  uint64_t prev_tick = 0;
  int rc = 0;
  for (size_t i = 0; i < trace->n_events && rc == 0; i++)
    {
      const MlEvent *ev = &trace->events[i];
      if (ev->tick == UINT64_MAX)
        /* end_tick = last tick + 1 must not wrap to 0 */
        return ml_error_set (s->err, ML_EINPUT, "%s: tick %" PRIu64 " leaves no room for the end of the trace (at most 2^64-2)",
                             WHERE (i), ev->tick);
      if (ev->tick < prev_tick)
        return ml_error_set (s->err, ML_EINPUT, "%s: tick %" PRIu64 " goes back before tick %" PRIu64,
                             WHERE (i), ev->tick, prev_tick);
      prev_tick = ev->tick;
      if (ev->kind == ML_EV_ALLOC)
        rc = on_alloc (s, i, ev);
      else if (ev->kind == ML_EV_FREE)
        rc = on_free (s, i, ev);
      else if (ev->kind == ML_EV_FREE_REQUESTED)
        rc = on_free_requested (s, ev, n_alloc);
    }
  return rc;
}

#undef WHERE
#undef WHERE2

int
ml_buffers_build (const MlTrace *trace, uint64_t align, MlBuffers **out, MlError *err)
{
  if (align == 0)
    align = trace->default_align ? trace->default_align : 1;
  if (align & (align - 1))
    return ml_error_set (err, ML_EUSAGE, "alignment %" PRIu64 " is not a power of two", align);
  Build s = { .trace = trace, .err = err };
  size_t n_alloc = 0;
  int rc = buffers_new (trace, align, &s.b, &n_alloc, err);
  if (rc < 0)
    return rc;
  MlBuffers *b = s.b;
  ml_u64map_init (&s.by_id);
  ml_u64map_init (&s.by_addr);
  /* the live maps hold the live set: up to every buffer (a snapshot's
   * dump-time blocks are all live at its start). Reserved for up to 4096
   * (128 KiB of slots, within a core's cache for a small live set), so
   * a small trace's maps do not grow by doubling */
  size_t live_guess = n_alloc < 4096 ? n_alloc : 4096;
  if (ml_u64map_reserve (&s.by_id, live_guess) < 0 || ml_u64map_reserve (&s.by_addr, live_guess) < 0)
    rc = ml_error_set (err, ML_ENOMEM, "out of memory for %zu buffers", n_alloc);
  if (rc == 0)
    rc = walk_events (&s, n_alloc);
  ml_u64map_clear (&s.by_id);
  ml_u64map_clear (&s.by_addr);
  if (rc == 0 && trace->n_groups)
    rc = map_groups (b, trace, err);
  if (rc == 0)
    rc = ml_buffers_index (b, err);
  if (rc < 0)
    {
      ml_buffers_free (b);
      return rc;
    }
  *out = b;
  return 0;
}

int
ml_buffers_with (const MlBuffers *bufs, const MlBuffer *extra, uint32_t alloc_event, MlBuffers **out, MlError *err)
{
  MlBuffers *b = calloc (1, sizeof *b);
  size_t n = bufs->n + 1;
  if (!b || !(b->buf = malloc (n * sizeof *b->buf)) || !(b->by_end = malloc (n * sizeof *b->by_end))
      || !(b->alloc_event = malloc (n * sizeof *b->alloc_event)))
    {
      ml_buffers_free (b);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  size_t at = 0;
  while (at < bufs->n && bufs->buf[at].start <= extra->start)
    at++;
  memcpy (b->buf, bufs->buf, at * sizeof *b->buf);
  memcpy (b->alloc_event, bufs->alloc_event, at * sizeof *b->alloc_event);
  b->buf[at] = *extra;
  b->buf[at].rsize = ml_align_up (extra->size, bufs->align);
  b->alloc_event[at] = alloc_event;
  memcpy (b->buf + at + 1, bufs->buf + at, (bufs->n - at) * sizeof *b->buf);
  memcpy (b->alloc_event + at + 1, bufs->alloc_event + at, (bufs->n - at) * sizeof *b->alloc_event);
  if (bufs->free_requested)
    {
      if (!(b->free_requested = malloc (n * sizeof *b->free_requested)))
        {
          ml_buffers_free (b);
          return ml_error_set (err, ML_ENOMEM, "out of memory");
        }
      memcpy (b->free_requested, bufs->free_requested, at * sizeof *b->free_requested);
      b->free_requested[at] = UINT64_MAX;
      memcpy (b->free_requested + at + 1, bufs->free_requested + at, (bufs->n - at) * sizeof *b->free_requested);
    }
  b->n = n;
  b->align = bufs->align;
  b->trace = bufs->trace;
  b->end_tick = extra->end > bufs->end_tick ? extra->end : bufs->end_tick;
  for (size_t i = 0; i < n; i++)
    b->by_end[i] = (uint32_t) i;
  if (ml_sort_indexes_by_key (b->by_end, n, &b->buf[0].end, sizeof (MlBuffer)) < 0)
    {
      ml_buffers_free (b);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  compute_lower_bound (b);
  *out = b;
  return 0;
}

uint64_t
ml_buffers_live_at (const MlBuffers *bufs, uint64_t tick)
{
  uint64_t live = 0;
  for (size_t i = 0; i < bufs->n && bufs->buf[i].start <= tick; i++)
    if (bufs->buf[i].end > tick)
      live += bufs->buf[i].rsize;
  return live;
}

size_t
ml_buffers_count_streams (const MlBuffers *bufs)
{
  MlU64Map seen;
  size_t n = 0;
  ml_u64map_init (&seen);
  for (size_t i = 0; i < bufs->n; i++)
    if (!ml_u64map_get (&seen, bufs->buf[i].stream, NULL))
      {
        if (ml_u64map_put (&seen, bufs->buf[i].stream, 1) < 0)
          {
            n = 0;
            break;
          }
        n++;
      }
  ml_u64map_clear (&seen);
  return n;
}

/* ---- peak points ---- */

int
ml_buffers_live_steps (const MlBuffers *bufs, MlLiveStep **out, size_t *n_out, MlError *err)
{
  size_t cap = 1024, n = 0;
  MlLiveStep *pts = malloc (cap * sizeof *pts);
  if (!pts)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  MlSweep sw;
  MlSweepStep st;
  uint64_t live = 0, cur = 0;
  bool have = false;
  ml_sweep_init (&sw, bufs);
  for (;;)
    {
      bool more = ml_sweep_next (&sw, &st);
      if (have && (!more || st.tick != cur))
        {
          if (n == cap)
            {
              MlLiveStep *p2 = realloc (pts, (cap *= 2) * sizeof *pts);
              if (!p2)
                {
                  free (pts);
                  return ml_error_set (err, ML_ENOMEM, "out of memory");
                }
              pts = p2;
            }
          pts[n++] = (MlLiveStep) { cur, live };
        }
      if (!more)
        break;
      have = true;
      cur = st.tick;
      live += st.is_alloc ? bufs->buf[st.buffer].rsize : (uint64_t) -bufs->buf[st.buffer].rsize;
    }
  *out = pts;
  *n_out = n;
  return 0;
}

typedef MlLiveStep Point;

static int
cmp_point_desc (const void *a, const void *b)
{
  const Point *p = a, *q = b;
  if (p->live != q->live)
    return p->live < q->live ? 1 : -1;
  return p->tick < q->tick ? -1 : p->tick > q->tick;
}

static int
cmp_blame (const void *a, const void *b, void *user)
{
  const MlBuffers *blame_bufs = user;
  const MlBuffer *x = &blame_bufs->buf[*(const uint32_t *) a];
  const MlBuffer *y = &blame_bufs->buf[*(const uint32_t *) b];
  if (x->rsize != y->rsize)
    return x->rsize < y->rsize ? 1 : -1;
  return *(const uint32_t *) a < *(const uint32_t *) b ? -1 : 1;
}

void
ml_peaks_free (MlPeaks *peaks)
{
  if (!peaks)
    return;
  for (size_t i = 0; i < peaks->n; i++)
    free (peaks->peaks[i].blame);
  free (peaks->peaks);
  peaks->peaks = NULL;
  peaks->n = 0;
}

int
ml_peak_blame (const MlBuffers *bufs, uint64_t tick, size_t max_blame, MlPeak *pk, MlError *err)
{
  memset (pk, 0, sizeof *pk);
  pk->tick = tick;
  size_t cnt = 0;
  for (size_t i = 0; i < bufs->n && bufs->buf[i].start <= tick; i++)
    cnt += bufs->buf[i].end > tick;
  pk->blame = malloc ((cnt ? cnt : 1) * sizeof *pk->blame);
  if (!pk->blame)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  for (size_t i = 0; i < bufs->n && bufs->buf[i].start <= tick; i++)
    if (bufs->buf[i].end > tick)
      {
        pk->blame[pk->n_blame++] = (uint32_t) i;
        pk->live += bufs->buf[i].rsize;
      }
  pk->n_live = pk->n_blame;
  qsort_r (pk->blame, pk->n_blame, sizeof *pk->blame, cmp_blame, (void *) bufs);
  if (max_blame && pk->n_blame > max_blame)
    pk->n_blame = max_blame;
  return 0;
}

int
ml_peaks_find (const MlBuffers *bufs, size_t max_points, size_t max_blame, MlPeaks *out, MlError *err)
{
  out->peaks = NULL;
  out->n = 0;
  if (bufs->n == 0 || max_points == 0)
    return 0;
  /* change points: live after each tick group */
  size_t n = 0;
  Point *pts;
  int rc = ml_buffers_live_steps (bufs, &pts, &n, err);
  if (rc < 0)
    return rc;
  /* local maxima (a plateau counts once, at its first point) */
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    {
      bool up = i == 0 || pts[i].live > pts[i - 1].live;
      size_t j = i;
      while (j + 1 < n && pts[j + 1].live == pts[i].live)
        j++;
      bool down = j + 1 == n || pts[j + 1].live < pts[i].live;
      if (up && down && pts[i].live > 0)
        pts[m++] = pts[i];
      i = j;
    }
  qsort (pts, m, sizeof *pts, cmp_point_desc);
  if (m > max_points)
    m = max_points;
  out->peaks = calloc (m ? m : 1, sizeof *out->peaks);
  if (!out->peaks)
    {
      free (pts);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  for (size_t k = 0; k < m; k++)
    if (ml_peak_blame (bufs, pts[k].tick, max_blame, &out->peaks[k], err) < 0)
      {
        out->n = k;
        ml_peaks_free (out);
        free (pts);
        return ML_ENOMEM;
      }
    else
      out->peaks[k].live = pts[k].live;
  out->n = m;
  free (pts);
  return 0;
}
