/* scene-bands.c — the scene's bands of (memory pool, stream)
 * (scene-private.h): PyTorch keeps a BlockPool per private pool and its
 * blocks per stream; the packed address axis shows each such group of
 * segments as a band of its own, labelled. */
#include "render/scene-private.h"

#include <stdio.h>
#include <stdlib.h>

#include "sim/analysis/lanes.h"

typedef struct {
  uint32_t pool, stream;
  uint32_t pos;       /* the place in the order before: by address */
  uint32_t seg;
} BandKey;

static int
key_cmp (const void *a, const void *b)
{
  const BandKey *x = a, *y = b;
  if (x->pool != y->pool)
    return x->pool < y->pool ? -1 : 1;
  if (x->stream != y->stream)
    return x->stream < y->stream ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* "default pool · stream 0", "CUDA graph pool (1, 0) · stream 0x5a20…",
 * "MemPool (0, 2) · stream 7". */
static void
band_label (const MlTrace *t, uint32_t pool, uint32_t stream, char *buf, size_t len)
{
  char st[ML_STREAM_LABEL_MAX], name[ML_POOL_NAME_MAX];
  if (t)
    ml_trace_stream_label (t, stream, st);
  else
    snprintf (st, sizeof st, "%u", stream);
  snprintf (buf, len, "%s · stream %s", ml_pool_name (t, pool, name, sizeof name), st);
}

int
_ml_scene_band_order (MlScene *s, uint32_t *order)
{
  const MlPlan *p = s->plan;
  size_t ns = p->n_segments;
  if (s->addr_raw || ns < 2)
    return 0;
  BandKey *k = malloc (ns * sizeof *k);
  if (!k)
    return -1;
  for (size_t i = 0; i < ns; i++)
    k[i] = (BandKey) { p->segments[order[i]].pool, p->segments[order[i]].stream, (uint32_t) i, order[i] };
  qsort (k, ns, sizeof *k, key_cmp);
  size_t nb = 1;
  for (size_t i = 1; i < ns; i++)
    nb += k[i].pool != k[i - 1].pool || k[i].stream != k[i - 1].stream;
  if (nb < 2)
    {
      free (k);
      return 0;
    }
  s->bands = calloc (nb, sizeof *s->bands);
  s->seg_band = malloc (ns * sizeof *s->seg_band);
  if (!s->bands || !s->seg_band)
    {
      free (k);
      return -1;
    }
  const MlTrace *t = s->bufs->trace;
  for (size_t i = 0; i < ns; i++)
    {
      if (i == 0 || k[i].pool != k[i - 1].pool || k[i].stream != k[i - 1].stream)
        {
          MlSceneBand *b = &s->bands[s->n_bands++];
          b->pool = k[i].pool;
          b->stream = k[i].stream;
          b->first = i;
          band_label (t, b->pool, b->stream, b->label, sizeof b->label);
        }
      s->bands[s->n_bands - 1].n++;
      order[i] = k[i].seg;
      s->seg_band[k[i].seg] = (uint32_t) (s->n_bands - 1);
    }
  free (k);
  return 0;
}

void
_ml_scene_band_extents (MlScene *s)
{
  for (size_t b = 0; b < s->n_bands; b++)
    {
      MlSceneBand *band = &s->bands[b];
      band->lo = UINT64_MAX;
      band->hi = 0;
      for (size_t k = band->first; k < band->first + band->n; k++)
        {
          uint32_t g = s->seg_order[k];
          if (s->seg_base[g] < band->lo)
            band->lo = s->seg_base[g];
          if (s->seg_base[g] + s->seg_extent[g] > band->hi)
            band->hi = s->seg_base[g] + s->seg_extent[g];
        }
    }
}

long
ml_scene_band_at (const MlScene *s, const MlView *v, double y)
{
  if (!s->n_bands || y < v->py || y > v->py + v->ph)
    return -1;
  double a = ml_view_y_to_addr (v, y);
  for (size_t b = 0; b < s->n_bands; b++)
    if (a >= (double) s->bands[b].lo && a < (double) s->bands[b].hi)
      return (long) b;
  return -1;
}
