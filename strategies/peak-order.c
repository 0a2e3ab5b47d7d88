/* peak-order.c — the peak-first orders (see peak-order.h).
 *
 * Every buffer live at the lower bound's tick t overlaps every other one
 * there, so placing them first (each at the lowest fit) stacks them from
 * offset 0 up to exactly the lower bound at t. Every other buffer lies
 * wholly before t or wholly after it, and is placed afterwards around that
 * stack. On the compiler plans the peak is one tick or a few close ones,
 * and a greedy order that places the small buffers live at t after
 * long-lived ones elsewhere leaves holes there that cost the 3 % greedy
 * plans lose: S_1's peak-first order (clique by lifetime, the rest by
 * size) reaches the lower bound itself.
 */
#include "strategies/peak-order.h"

#include <stdlib.h>

typedef struct {
  uint64_t k1, k2;   /* descending */
  uint32_t idx;      /* ascending */
  uint32_t group;    /* 0: live at the lower bound's tick; 1: the others */
} PeakKey;

static int
cmp_peak (const void *a, const void *b)
{
  const PeakKey *x = a, *y = b;
  if (x->group != y->group)
    return x->group < y->group ? -1 : 1;
  if (x->k1 != y->k1)
    return x->k1 > y->k1 ? -1 : 1;
  if (x->k2 != y->k2)
    return x->k2 > y->k2 ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int
_ml_peak_order (const MlBuffers *bufs, MlPeakKey clique, MlPeakKey rest, uint32_t *order, MlError *err)
{
  size_t n = bufs->n;
  PeakKey *keys = malloc ((n ? n : 1) * sizeof *keys);
  if (!keys)
    return ml_error_set (err, ML_ENOMEM, "out of memory ordering %zu buffers", n);
  uint64_t t = bufs->lower_bound_tick;
  for (size_t i = 0; i < n; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      uint32_t group = b->start <= t && t < b->end ? 0 : 1;
      uint64_t life = b->end - b->start;
      bool by_size = (group == 0 ? clique : rest) == ML_PEAK_BY_SIZE;
      /* equal sizes: the earlier start first (k2 descending) */
      keys[i] = (PeakKey) { by_size ? b->rsize : life, by_size ? UINT64_MAX - b->start : b->rsize, (uint32_t) i, group };
    }
  qsort (keys, n, sizeof *keys, cmp_peak);
  for (size_t i = 0; i < n; i++)
    order[i] = keys[i].idx;
  free (keys);
  return 0;
}
