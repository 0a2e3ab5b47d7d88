#include "sim/base/u64map.h"

#include <stdint.h>
#include <stdlib.h>

#define EMPTY UINT32_MAX

static inline size_t
slot_of (uint64_t key, size_t cap)
{
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  return (size_t) key & (cap - 1);
}

void
ml_u64map_init (MlU64Map *m)
{
  m->slot = NULL; m->n = m->cap = 0;
}

void
ml_u64map_clear (MlU64Map *m)
{
  free (m->slot);
  ml_u64map_init (m);
}

static int
resize (MlU64Map *m, size_t cap)
{
  MlU64Slot *slot = malloc (cap * sizeof *slot);
  if (!slot)
    return ML_ENOMEM;
  for (size_t i = 0; i < cap; i++)
    slot[i].val = EMPTY;
  for (size_t i = 0; i < m->cap; i++)
    if (m->slot[i].val != EMPTY)
      {
        size_t j = slot_of (m->slot[i].key, cap);
        while (slot[j].val != EMPTY)
          j = (j + 1) & (cap - 1);
        slot[j] = m->slot[i];
      }
  free (m->slot);
  m->slot = slot; m->cap = cap;
  return 0;
}

int
ml_u64map_reserve (MlU64Map *m, size_t n)
{
  size_t cap = m->cap ? m->cap : 64;
  while ((n + 1) * 4 > cap * 3)
    {
      if (cap > SIZE_MAX / 4 / sizeof *m->slot)
        return ML_ENOMEM;
      cap *= 2;
    }
  return cap > m->cap ? resize (m, cap) : 0;
}

int
ml_u64map_put (MlU64Map *m, uint64_t key, uint32_t val)
{
  if ((m->n + 1) * 4 > m->cap * 3 && resize (m, m->cap ? m->cap * 2 : 64) < 0)
    return ML_ENOMEM;
  size_t j = slot_of (key, m->cap);
  while (m->slot[j].val != EMPTY)
    {
      if (m->slot[j].key == key)
        {
          m->slot[j].val = val;
          return 0;
        }
      j = (j + 1) & (m->cap - 1);
    }
  m->slot[j] = (MlU64Slot) { key, val };
  m->n++;
  return 0;
}

bool
ml_u64map_get (const MlU64Map *m, uint64_t key, uint32_t *val)
{
  if (!m->cap)
    return false;
  for (size_t j = slot_of (key, m->cap); m->slot[j].val != EMPTY; j = (j + 1) & (m->cap - 1))
    if (m->slot[j].key == key)
      {
        if (val)
          *val = m->slot[j].val;
        return true;
      }
  return false;
}

bool
ml_u64map_del (MlU64Map *m, uint64_t key)
{
  if (!m->cap)
    return false;
  size_t mask = m->cap - 1, j = slot_of (key, m->cap);
  while (m->slot[j].val != EMPTY && m->slot[j].key != key)
    j = (j + 1) & mask;
  if (m->slot[j].val == EMPTY)
    return false;
  /* backward-shift deletion keeps probe chains intact without tombstones */
  size_t i = j;
  for (;;)
    {
      m->slot[i].val = EMPTY;
      size_t k = i;
      for (;;)
        {
          k = (k + 1) & mask;
          if (m->slot[k].val == EMPTY)
            {
              m->n--;
              return true;
            }
          size_t home = slot_of (m->slot[k].key, m->cap);
          /* can the entry at k move to i? yes if home is not in (i, k] */
          if (i <= k ? (home <= i || home > k) : (home <= i && home > k))
            break;
        }
      m->slot[i] = m->slot[k];
      i = k;
    }
}
