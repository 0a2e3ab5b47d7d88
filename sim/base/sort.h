/* sort.h — sorting and searching 64-bit values: a stable LSD radix sort
 * of indexes by 64-bit keys, O(n) per significant byte (where 10M-element
 * sorts must stay fast), and the small helpers every planner and metric
 * needs over a sorted array of ticks or addresses. */
#ifndef ML_SORT_H
#define ML_SORT_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/error.h"

/* Sorts idx[0..n) so that keys[idx[i]] is non-decreasing, keeping the
 * order of equal keys. Returns 0 or ML_ENOMEM. */
int ml_sort_indexes_by_key (uint32_t *idx, size_t n, const uint64_t *keys, size_t key_stride_bytes) ML_MUST_CHECK;

/* Sorts @v[0..n) ascending (in place). */
void   ml_sort_u64 (uint64_t *v, size_t n);
/* Sorts @v[0..n) and drops repeats: the distinct values, ascending, are
 * v[0..k); returns k. */
size_t ml_sort_unique_u64 (uint64_t *v, size_t n);
/* In sorted @v[0..n): the number of values below @key (the index of the
 * first >= @key). */
size_t ml_lower_bound_u64 (const uint64_t *v, size_t n, uint64_t key);
/* In sorted @v[0..n): the number of values at or below @key (the index of
 * the first > @key). */
size_t ml_upper_bound_u64 (const uint64_t *v, size_t n, uint64_t key);

#endif
