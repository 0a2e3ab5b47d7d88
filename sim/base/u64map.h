/* u64map.h — an open-addressing hash map from uint64_t to uint32_t with
 * deletion (backward shift), for matching frees to live allocations and
 * for best-fit's hole neighbours. Key and value share a slot, so a probe
 * touches one cache line. */
#ifndef ML_U64MAP_H
#define ML_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/base/error.h"

typedef struct {
  uint64_t key;
  uint32_t val;     /* UINT32_MAX = empty slot */
} MlU64Slot;

typedef struct {
  MlU64Slot *slot;
  size_t     n, cap;
} MlU64Map;

void ml_u64map_init  (MlU64Map *m);
void ml_u64map_clear (MlU64Map *m);
/* Returns 0, or ML_ENOMEM. Overwrites an existing key. */
int  ml_u64map_put   (MlU64Map *m, uint64_t key, uint32_t val) ML_MUST_CHECK;
bool ml_u64map_get   (const MlU64Map *m, uint64_t key, uint32_t *val);
bool ml_u64map_del   (MlU64Map *m, uint64_t key);
/* Room for @n keys without growing (one allocation where the count is
 * known in advance); 0 or ML_ENOMEM. */
int  ml_u64map_reserve (MlU64Map *m, size_t n) ML_MUST_CHECK;

#endif
