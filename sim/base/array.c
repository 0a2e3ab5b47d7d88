#include "sim/base/array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int
ml_array_reserve (void *items, size_t n, size_t *cap, size_t size, size_t first)
{
  if (n < *cap)
    return 0;
  size_t want = *cap ? *cap * 2 : (first ? first : 1);
  if (want <= n)
    want = n + 1;
  if (want > SIZE_MAX / size)
    return ML_ENOMEM;
  void *p;
  memcpy (&p, items, sizeof p);   /* the caller's T *, whatever T */
  p = realloc (p, want * size);
  if (!p)
    return ML_ENOMEM;
  memcpy (items, &p, sizeof p);
  *cap = want;
  return 0;
}
