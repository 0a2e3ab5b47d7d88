/* replay.c — the replay program and the host backend (see replay.h). */
#include "trace/replay.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim/sim.h"
#include "sim/base/sort.h"
#include "sim/base/u64map.h"

void
ml_replay_result_init (MlReplayResult *res)
{
  memset (res, 0, sizeof *res);
  res->plan_s = res->malloc_s = res->async_s = -1;
}

void
ml_replay_program_free (MlReplayProgram *prog)
{
  if (!prog)
    return;
  free (prog->steps);
  free (prog->stream_ids);
  free (prog->segment_base);
  free (prog);
}

/* Segments are laid out like buffers: first fit over the segments live at
 * the same time, so segments that never coexist share bytes and the arena
 * stays near the plan's real footprint. A segment lives from its
 * reservation (or its first buffer) to its release (or its last buffer's
 * end), whichever is wider, so a plan's bookkeeping of segment lifetimes
 * cannot make two live buffers share bytes. */
typedef struct { uint64_t tick; uint32_t seg; uint8_t is_start; } SegEv;

static int
segev_cmp (const void *a, const void *b)
{
  const SegEv *x = a, *y = b;
  if (x->tick != y->tick)
    return x->tick < y->tick ? -1 : 1;
  if (x->is_start != y->is_start)
    return x->is_start < y->is_start ? -1 : 1;   /* releases first */
  return x->seg < y->seg ? -1 : x->seg > y->seg;
}

typedef struct { uint64_t base, end; uint32_t seg; } Active;

static int
place_segments (const MlBuffers *bufs, const MlPlan *plan, size_t n_seg, const uint64_t *extent,
                uint64_t *base, uint64_t *arena, MlError *err)
{
  uint64_t *lo = malloc (n_seg * sizeof *lo), *hi = malloc (n_seg * sizeof *hi);
  SegEv *ev = malloc (2 * n_seg * sizeof *ev);
  Active *act = malloc (n_seg * sizeof *act);
  int rc = 0;
  if (!lo || !hi || !ev || !act)
    {
      rc = ml_error_set (err, ML_ENOMEM, "out of memory for %zu segments", n_seg);
      goto done;
    }
  for (size_t s = 0; s < n_seg; s++)
    {
      lo[s] = UINT64_MAX;
      hi[s] = 0;
      if (s < plan->n_segments)
        {
          const MlSegment *g = &plan->segments[s];
          lo[s] = g->start;
          hi[s] = g->end > g->start ? g->end : bufs->end_tick;
        }
    }
  for (size_t i = 0; i < bufs->n; i++)
    {
      uint32_t s = plan->segment[i];
      if (bufs->buf[i].start < lo[s])
        lo[s] = bufs->buf[i].start;
      uint64_t e = bufs->buf[i].end > bufs->buf[i].start ? bufs->buf[i].end : bufs->buf[i].start + 1;
      if (e > hi[s])
        hi[s] = e;
    }
  size_t n_ev = 0;
  for (size_t s = 0; s < n_seg; s++)
    {
      base[s] = 0;
      if (extent[s] == 0 || lo[s] >= hi[s])
        continue;
      ev[n_ev++] = (SegEv) { lo[s], (uint32_t) s, 1 };
      ev[n_ev++] = (SegEv) { hi[s], (uint32_t) s, 0 };
    }
  qsort (ev, n_ev, sizeof *ev, segev_cmp);
  size_t n_act = 0;
  uint64_t top = 0;
  for (size_t k = 0; k < n_ev; k++)
    {
      uint32_t s = ev[k].seg;
      if (!ev[k].is_start)
        {
          for (size_t j = 0; j < n_act; j++)
            if (act[j].seg == s)
              {
                memmove (&act[j], &act[j + 1], (n_act - j - 1) * sizeof *act);
                n_act--;
                break;
              }
          continue;
        }
      /* the lowest 256-aligned gap between live segments that fits */
      uint64_t at = 0;
      size_t j = 0;
      for (; j < n_act; j++)
        {
          if (act[j].base >= at && act[j].base - at >= extent[s])
            break;
          if (act[j].end > at)
            at = ml_align_up (act[j].end, 256);
        }
      if (at + extent[s] < at)
        {
          rc = ml_error_set (err, ML_EINPUT, "the plan's segments add up to more than 2^64 bytes");
          goto done;
        }
      memmove (&act[j + 1], &act[j], (n_act - j) * sizeof *act);
      act[j] = (Active) { at, at + extent[s], s };
      n_act++;
      base[s] = at;
      if (at + extent[s] > top)
        top = at + extent[s];
    }
  *arena = top;
done:
  free (lo);
  free (hi);
  free (ev);
  free (act);
  return rc;
}

/* Removes the address ranges no buffer ever touches: placements that
 * overlap (or touch) form clusters, and the clusters are packed end to end
 * (each at a multiple of 256), keeping every offset within its cluster.
 * Overlaps only happen within a cluster, so this keeps every one of them,
 * and a sparse layout (recorded addresses spread over the device's virtual
 * address space) replays in the memory its buffers really cover. */
static int
compact (const MlBuffers *bufs, uint64_t *where, uint64_t *arena, MlError *err)
{
  size_t n = bufs->n;
  uint32_t *idx = malloc ((n ? n : 1) * sizeof *idx);
  if (!idx)
    return ml_error_set (err, ML_ENOMEM, "out of memory for %zu buffers", n);
  for (size_t i = 0; i < n; i++)
    idx[i] = (uint32_t) i;
  if (n && ml_sort_indexes_by_key (idx, n, where, sizeof *where) < 0)
    {
      free (idx);
      return ml_error_set (err, ML_ENOMEM, "out of memory for %zu buffers", n);
    }
  uint64_t top = 0, from = 0, to = 0, end = 0;
  bool open = false;
  for (size_t k = 0; k < n; k++)
    {
      uint32_t i = idx[k];
      uint64_t a = where[i], e = a + bufs->buf[i].rsize;
      if (!open || a > end)
        {
          /* a new cluster: it starts at the next multiple of 256 */
          from = a;
          to = ml_align_up (top, 256);
          end = e;
          open = true;
        }
      else if (e > end)
        end = e;
      where[i] = to + (a - from);
      if (to + (end - from) > top)
        top = to + (end - from);
    }
  free (idx);
  *arena = top;
  return 0;
}

int
ml_replay_program_build (const MlBuffers *bufs, const MlPlan *plan, MlReplayProgram **out, MlError *err)
{
  if (plan->n != bufs->n)
    return ml_error_set (err, ML_EINPUT, "the plan has %zu buffers, the trace %zu", plan->n, bufs->n);
  MlReplayProgram *p = calloc (1, sizeof *p);
  if (!p)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  size_t n_seg = plan->n_segments ? plan->n_segments : 1;
  for (size_t i = 0; i < bufs->n; i++)
    if ((size_t) plan->segment[i] + 1 > n_seg)
      n_seg = (size_t) plan->segment[i] + 1;
  uint64_t *extent = calloc (n_seg, sizeof *extent);
  p->segment_base = calloc (n_seg, sizeof *p->segment_base);
  p->steps = malloc ((bufs->n ? 2 * bufs->n : 1) * sizeof *p->steps);
  p->stream_ids = malloc (sizeof *p->stream_ids * 16);
  size_t cap_streams = 16;
  uint64_t *where = NULL;   /* per buffer: its byte in the arena */
  MlU64Map streams;
  ml_u64map_init (&streams);
  int rc = 0;
  if (!extent || !p->segment_base || !p->steps || !p->stream_ids)
    {
      rc = ml_error_set (err, ML_ENOMEM, "out of memory for %zu buffers", bufs->n);
      goto done;
    }
  p->n_segments = n_seg;
  for (size_t s = 0; s < plan->n_segments; s++)
    extent[s] = plan->segments[s].size;
  for (size_t i = 0; i < bufs->n; i++)
    {
      uint64_t end = plan->offset[i] + bufs->buf[i].rsize;
      if (end < plan->offset[i])
        {
          rc = ml_error_set (err, ML_EINPUT, "buffer %" PRIu64 ": offset %" PRIu64 " + size %" PRIu64 " overflows",
                             bufs->buf[i].id, plan->offset[i], bufs->buf[i].rsize);
          goto done;
        }
      if (end > extent[plan->segment[i]])
        extent[plan->segment[i]] = end;
    }
  if ((rc = place_segments (bufs, plan, n_seg, extent, p->segment_base, &p->span_bytes, err)) < 0)
    goto done;
  p->n_buffers = bufs->n;
  where = malloc ((bufs->n ? bufs->n : 1) * sizeof *where);
  if (!where)
    {
      rc = ml_error_set (err, ML_ENOMEM, "out of memory for %zu buffers", bufs->n);
      goto done;
    }
  for (size_t i = 0; i < bufs->n; i++)
    where[i] = p->segment_base[plan->segment[i]] + plan->offset[i];
  if ((rc = compact (bufs, where, &p->arena_bytes, err)) < 0)
    goto done;
  uint64_t g = 256;
  for (size_t i = 0; i < bufs->n; i++)
    {
      if (bufs->buf[i].rsize == 0)
        continue;
      while (g > 1 && ((where[i] | bufs->buf[i].rsize) & (g - 1)))
        g >>= 1;
    }
  p->granule = g;

  MlSweep sw;
  MlSweepStep st;
  ml_sweep_init (&sw, bufs);
  while (ml_sweep_next (&sw, &st))
    {
      const MlBuffer *b = &bufs->buf[st.buffer];
      uint32_t si;
      if (!ml_u64map_get (&streams, b->stream, &si))
        {
          if (p->n_streams == 65535)
            {
              rc = ml_error_set (err, ML_EUNSUPPORTED, "the trace uses more than 65535 streams");
              goto done;
            }
          if (p->n_streams == cap_streams)
            {
              uint32_t *q = realloc (p->stream_ids, 2 * cap_streams * sizeof *q);
              if (!q)
                {
                  rc = ml_error_set (err, ML_ENOMEM, "out of memory");
                  goto done;
                }
              p->stream_ids = q;
              cap_streams *= 2;
            }
          si = p->n_streams;
          p->stream_ids[p->n_streams++] = b->stream;
          if (ml_u64map_put (&streams, b->stream, si) < 0)
            {
              rc = ml_error_set (err, ML_ENOMEM, "out of memory");
              goto done;
            }
        }
      MlReplayStep *s = &p->steps[p->n_steps++];
      s->offset = where[st.buffer];
      s->bytes = b->rsize;
      s->tick = st.tick;
      s->buffer = st.buffer;
      s->stream = (uint16_t) si;
      s->op = st.is_alloc ? ML_REPLAY_ALLOC : ML_REPLAY_FREE;
      s->pad = 0;
    }
  if (p->n_streams == 0)
    {
      p->stream_ids[0] = 0;
      p->n_streams = 1;
    }
done:
  free (extent);
  free (where);
  ml_u64map_clear (&streams);
  if (rc < 0)
    {
      ml_replay_program_free (p);
      return rc;
    }
  *out = p;
  return 0;
}

static void
record (MlReplayResult *res, const MlCorruption *c)
{
  res->corrupted++;
  if (res->n_items < ML_REPLAY_MAX_KEPT)
    res->items[res->n_items++] = *c;
}

int
ml_replay_host (const MlReplayProgram *prog, unsigned iterations, uint64_t max_shadow,
                MlReplayResult *res, MlError *err)
{
  if (iterations == 0)
    iterations = 1;
  if (max_shadow == 0)
    max_shadow = 4ull << 30;
  uint64_t g = prog->granule;
  uint64_t words = (prog->arena_bytes + g - 1) / g;
  if (words > max_shadow / 8)
    return ml_error_set (err, ML_EUNSUPPORTED,
                         "the host replay needs %" PRIu64 " bytes of shadow memory for an arena of %" PRIu64
                         " bytes at granule %" PRIu64 " (limit %" PRIu64 "); use the cuda backend",
                         words * 8, prog->arena_bytes, g, max_shadow);
  ml_replay_result_init (res);
  res->iterations = iterations;
  uint64_t *shadow = NULL;
  size_t map_bytes = (size_t) (words ? words * 8 : 8);
  shadow = mmap (NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (shadow == MAP_FAILED)
    return ml_error_set (err, ML_ENOMEM, "cannot map %zu bytes of shadow memory", map_bytes);

  double t0 = ml_now ();
  for (unsigned it = 0; it < iterations; it++)
    {
      for (size_t k = 0; k < prog->n_steps; k++)
        {
          const MlReplayStep *s = &prog->steps[k];
          uint64_t w0 = s->offset / g, w1 = (s->offset + s->bytes) / g;
          uint64_t tag = ml_replay_tag (s->buffer);
          if (s->op == ML_REPLAY_ALLOC)
            {
              for (uint64_t w = w0; w < w1; w++)
                shadow[w] = tag;
              if (it == 0)
                {
                  res->allocations++;
                  res->granule_writes += w1 - w0;
                }
              continue;
            }
          uint64_t bad = 0, first = 0, found = 0;
          for (uint64_t w = w0; w < w1; w++)
            if (shadow[w] != tag)
              {
                if (bad++ == 0)
                  {
                    first = w;
                    found = shadow[w];
                  }
              }
          if (bad && it == 0)
            {
              MlCorruption c = { .victim = s->buffer, .culprit = UINT32_MAX, .tick = s->tick,
                                 .offset = first * g, .granules = bad };
              uint32_t cb;
              if (ml_replay_tag_buffer (found, &cb) && cb < prog->n_buffers)
                c.culprit = cb;
              record (res, &c);
            }
        }
    }
  res->plan_s = ml_now () - t0;
  munmap (shadow, map_bytes);
  return 0;
}
