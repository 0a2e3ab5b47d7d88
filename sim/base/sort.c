#include "sim/base/sort.h"

#include <stdlib.h>
#include <string.h>

typedef struct { uint64_t key; uint32_t idx; } Pair;

#define KEY(keys, stride, i) (*(const uint64_t *) ((const char *) (keys) + (size_t) (i) * (stride)))

int
ml_sort_indexes_by_key (uint32_t *idx, size_t n, const uint64_t *keys, size_t stride)
{
  if (n < 2)
    return 0;
  Pair *a = malloc (n * sizeof *a), *b = malloc (n * sizeof *b);
  if (!a || !b)
    {
      free (a); free (b);
      return -1;
    }
  uint64_t all_or = 0, all_and = ~0ull;
  for (size_t i = 0; i < n; i++)
    {
      a[i].idx = idx[i];
      a[i].key = KEY (keys, stride, idx[i]);
      all_or |= a[i].key;
      all_and &= a[i].key;
    }
  uint64_t varying = all_or ^ all_and;
  for (int shift = 0; shift < 64; shift += 8)
    {
      if (!((varying >> shift) & 0xff))
        continue;
      size_t count[257] = { 0 };
      for (size_t i = 0; i < n; i++)
        count[((a[i].key >> shift) & 0xff) + 1]++;
      for (int k = 0; k < 256; k++)
        count[k + 1] += count[k];
      for (size_t i = 0; i < n; i++)
        b[count[(a[i].key >> shift) & 0xff]++] = a[i];
      Pair *t = a; a = b; b = t;
    }
  for (size_t i = 0; i < n; i++)
    idx[i] = a[i].idx;
  free (a); free (b);
  return 0;
}
