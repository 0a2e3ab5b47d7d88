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
  /* already in order (a file's rows by their start, most often): no
   * copies, 32 bytes an index fewer at the reader's peak */
  size_t sorted = 1;
  while (sorted < n && KEY (keys, stride, idx[sorted - 1]) <= KEY (keys, stride, idx[sorted]))
    sorted++;
  if (sorted == n)
    return 0;
  Pair *a = malloc (n * sizeof *a), *b = malloc (n * sizeof *b);
  if (!a || !b)
    {
      free (a); free (b);
      return ML_ENOMEM;
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

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

void
ml_sort_u64 (uint64_t *v, size_t n)
{
  if (n > 1)
    qsort (v, n, sizeof *v, cmp_u64);
}

size_t
ml_sort_unique_u64 (uint64_t *v, size_t n)
{
  ml_sort_u64 (v, n);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (k == 0 || v[k - 1] != v[i])
      v[k++] = v[i];
  return k;
}

size_t
ml_lower_bound_u64 (const uint64_t *v, size_t n, uint64_t key)
{
  size_t lo = 0, hi = n;
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      if (v[mid] < key)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

size_t
ml_upper_bound_u64 (const uint64_t *v, size_t n, uint64_t key)
{
  return key == UINT64_MAX ? n : ml_lower_bound_u64 (v, n, key + 1);
}
