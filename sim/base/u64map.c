#include "sim/base/u64map.h"

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
  m->keys = NULL; m->vals = NULL; m->n = m->cap = 0;
}

void
ml_u64map_clear (MlU64Map *m)
{
  free (m->keys);
  free (m->vals);
  ml_u64map_init (m);
}

static int
resize (MlU64Map *m, size_t cap)
{
  uint64_t *keys = malloc (cap * sizeof *keys);
  uint32_t *vals = malloc (cap * sizeof *vals);
  if (!keys || !vals)
    {
      free (keys); free (vals);
      return ML_ENOMEM;
    }
  for (size_t i = 0; i < cap; i++)
    vals[i] = EMPTY;
  for (size_t i = 0; i < m->cap; i++)
    if (m->vals[i] != EMPTY)
      {
        size_t j = slot_of (m->keys[i], cap);
        while (vals[j] != EMPTY)
          j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
      }
  free (m->keys); free (m->vals);
  m->keys = keys; m->vals = vals; m->cap = cap;
  return 0;
}

int
ml_u64map_put (MlU64Map *m, uint64_t key, uint32_t val)
{
  if ((m->n + 1) * 4 > m->cap * 3 && resize (m, m->cap ? m->cap * 2 : 64) < 0)
    return ML_ENOMEM;
  size_t j = slot_of (key, m->cap);
  while (m->vals[j] != EMPTY)
    {
      if (m->keys[j] == key)
        {
          m->vals[j] = val;
          return 0;
        }
      j = (j + 1) & (m->cap - 1);
    }
  m->keys[j] = key;
  m->vals[j] = val;
  m->n++;
  return 0;
}

bool
ml_u64map_get (const MlU64Map *m, uint64_t key, uint32_t *val)
{
  if (!m->cap)
    return false;
  for (size_t j = slot_of (key, m->cap); m->vals[j] != EMPTY; j = (j + 1) & (m->cap - 1))
    if (m->keys[j] == key)
      {
        if (val)
          *val = m->vals[j];
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
  while (m->vals[j] != EMPTY && m->keys[j] != key)
    j = (j + 1) & mask;
  if (m->vals[j] == EMPTY)
    return false;
  /* backward-shift deletion keeps probe chains intact without tombstones */
  size_t i = j;
  for (;;)
    {
      m->vals[i] = EMPTY;
      size_t k = i;
      for (;;)
        {
          k = (k + 1) & mask;
          if (m->vals[k] == EMPTY)
            {
              m->n--;
              return true;
            }
          size_t home = slot_of (m->keys[k], m->cap);
          /* can the entry at k move to i? yes if home is not in (i, k] */
          if (i <= k ? (home <= i || home > k) : (home <= i && home > k))
            break;
        }
      m->keys[i] = m->keys[k];
      m->vals[i] = m->vals[k];
      i = k;
    }
}
