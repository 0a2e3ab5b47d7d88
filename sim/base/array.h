/* array.h — a caller's growable array: (items, n, cap) kept by the
 * caller, grown by doubling. */
#ifndef ML_ARRAY_H
#define ML_ARRAY_H

#include <stddef.h>

#include "sim/base/error.h"

/* Makes room for element @n of the array *@items (of @size-byte
 * elements, *@cap allocated): when @n == *@cap it grows to twice as many
 * (@first the first time). 0, or ML_ENOMEM with the array unchanged.
 * @items is the address of the caller's element pointer (T **). */
int ml_array_reserve (void *items, size_t n, size_t *cap, size_t size, size_t first) ML_MUST_CHECK;

/* ML_ARRAY_RESERVE (arr, n, cap, first) for a T *arr. */
#define ML_ARRAY_RESERVE(arr, n, cap, first) ml_array_reserve (&(arr), (n), &(cap), sizeof *(arr), (first))

#endif
