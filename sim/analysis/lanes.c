/* lanes.c — memory by pool and by stream (lanes.h). */
#include "sim/analysis/lanes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t
ml_buffer_pool (const MlBuffers *bufs, size_t i)
{
  const MlTrace *t = bufs->trace;
  if (!t || !t->n_pools || !bufs->alloc_event || bufs->alloc_event[i] >= t->n_events)
    return 0;
  uint32_t p = t->events[bufs->alloc_event[i]].pool;
  return p < t->n_pools ? p : 0;
}

const char *
ml_pool_kind (const MlTrace *t, uint32_t pool)
{
  MlPoolId id = ml_trace_pool_id (t, pool);
  if (id.first == 0 && id.second == 0)
    return "default";
  return id.second == 0 ? "CUDA graph" : "MemPool";
}

const char *
ml_pool_name (const MlTrace *t, uint32_t pool, char *buf, size_t len)
{
  char id[ML_POOL_LABEL_MAX];
  if (!t || pool == 0 || pool >= t->n_pools)
    snprintf (buf, len, "default pool");
  else if (t->pools[pool].second == 0)
    snprintf (buf, len, "CUDA graph pool %s", ml_trace_pool_label (t, pool, id));
  else
    snprintf (buf, len, "MemPool %s", ml_trace_pool_label (t, pool, id));
  return buf;
}

static int
cmp_stream (const void *a, const void *b)
{
  const MlStreamInfo *x = a, *y = b;
  return x->stream < y->stream ? -1 : x->stream > y->stream;
}

/* Reserved bytes per pool at the end: its segment events, added up. */
static void
reserved_by_pool (const MlTrace *t, MlLanes *l)
{
  int64_t *r = calloc (l->n_pools, sizeof *r);
  if (!r)
    return;
  for (size_t k = 0; k < t->n_events; k++)
    {
      const MlEvent *ev = &t->events[k];
      uint32_t p = ev->pool < l->n_pools ? ev->pool : 0;
      if (ev->kind == ML_EV_SEGMENT_ALLOC || ev->kind == ML_EV_SEGMENT_MAP)
        r[p] += (int64_t) ev->size;
      else if (ev->kind == ML_EV_SEGMENT_FREE || ev->kind == ML_EV_SEGMENT_UNMAP)
        r[p] -= (int64_t) ev->size;
    }
  for (size_t p = 0; p < l->n_pools; p++)
    l->pools[p].reserved_end = r[p] > 0 ? (uint64_t) r[p] : 0;
  free (r);
}

int
ml_lanes_compute (const MlBuffers *bufs, MlLanes *out, MlError *err)
{
  const MlTrace *t = bufs->trace;
  MlLanes l = { 0 };
  l.n_pools = t && t->n_pools ? t->n_pools : 1;
  l.pools = calloc (l.n_pools, sizeof *l.pools);
  uint64_t *live_pool = calloc (l.n_pools, sizeof *live_pool);
  uint32_t *slot = malloc ((bufs->n ? bufs->n : 1) * sizeof *slot);
  l.streams = malloc ((bufs->n ? bufs->n : 1) * sizeof *l.streams);
  if (!l.pools || !live_pool || !slot || !l.streams)
    {
      free (live_pool);
      free (slot);
      ml_lanes_clear (&l);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  for (size_t p = 0; p < l.n_pools; p++)
    l.pools[p].pool = (uint32_t) p;
  /* the streams that allocate, each once */
  for (size_t i = 0; i < bufs->n; i++)
    l.streams[i] = (MlStreamInfo) { bufs->buf[i].stream, 0, 0 };
  qsort (l.streams, bufs->n, sizeof *l.streams, cmp_stream);
  for (size_t i = 0; i < bufs->n; i++)
    if (!l.n_streams || l.streams[l.n_streams - 1].stream != l.streams[i].stream)
      l.streams[l.n_streams++] = l.streams[i];
  uint64_t *live_stream = calloc (l.n_streams ? l.n_streams : 1, sizeof *live_stream);
  if (!live_stream)
    {
      free (live_pool);
      free (slot);
      ml_lanes_clear (&l);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  for (size_t i = 0; i < bufs->n; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      size_t lo = 0, hi = l.n_streams;
      while (lo + 1 < hi)
        {
          size_t mid = lo + (hi - lo) / 2;
          if (l.streams[mid].stream <= b->stream)
            lo = mid;
          else
            hi = mid;
        }
      slot[i] = (uint32_t) lo;
      l.pools[ml_buffer_pool (bufs, i)].buffers++;
      l.streams[lo].buffers++;
      if (b->flags & ML_BUF_PENDING)
        l.pending_buffers++, l.pending_bytes += b->size;
    }
  /* the most live at once, per pool and per stream: the buffers' sweep */
  MlSweep sw;
  MlSweepStep st;
  ml_sweep_init (&sw, bufs);
  while (ml_sweep_next (&sw, &st))
    {
      const MlBuffer *b = &bufs->buf[st.buffer];
      uint32_t p = ml_buffer_pool (bufs, st.buffer);
      uint64_t *lp = &live_pool[p], *ls = &live_stream[slot[st.buffer]];
      if (st.is_alloc)
        {
          *lp += b->rsize, *ls += b->rsize;
          if (*lp > l.pools[p].live_max)
            l.pools[p].live_max = *lp;
          if (*ls > l.streams[slot[st.buffer]].live_max)
            l.streams[slot[st.buffer]].live_max = *ls;
        }
      else
        *lp -= b->rsize, *ls -= b->rsize;
    }
  for (size_t i = 0; i < bufs->n; i++)
    if (bufs->buf[i].flags & ML_BUF_NEVER_FREED)
      l.pools[ml_buffer_pool (bufs, i)].live_end += bufs->buf[i].rsize;
  if (t)
    reserved_by_pool (t, &l);
  free (live_pool);
  free (live_stream);
  free (slot);
  *out = l;
  return 0;
}

void
ml_lanes_clear (MlLanes *l)
{
  free (l->pools);
  free (l->streams);
  memset (l, 0, sizeof *l);
}
