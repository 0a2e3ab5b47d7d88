/* sort.h — a stable LSD radix sort of indexes by 64-bit keys, O(n) per
 * significant byte; used where 10M-element sorts must stay fast. */
#ifndef ML_SORT_H
#define ML_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Sorts idx[0..n) so that keys[idx[i]] is non-decreasing, keeping the
 * order of equal keys. Returns 0 or -1 when out of memory. */
int ml_sort_indexes_by_key (uint32_t *idx, size_t n, const uint64_t *keys, size_t key_stride_bytes);

#endif
