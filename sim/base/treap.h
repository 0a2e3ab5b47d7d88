/* treap.h — an ordered set of (a, b) keys with a u64 value per node and
 * the maximum value of each subtree, in one array of nodes.
 *
 * It serves as a free-block map (key = offset, value = block size: the
 * lowest block of at least n bytes in O(log n)), a size index (key =
 * (size, offset)), and an interval tree (key = start, value = end: every
 * interval overlapping a range). Expected O(log n) per operation; nodes
 * are recycled through a free list, so steady state allocates nothing.
 * Node handles are uint32_t; ML_TREAP_NIL is none. Every search adds the
 * nodes it touched to *visited when visited is not NULL.
 */
#ifndef ML_TREAP_H
#define ML_TREAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/base/error.h"

#define ML_TREAP_NIL UINT32_MAX

typedef struct {
  uint64_t a, b;      /* key, lexicographic */
  uint64_t value;
  uint64_t max;       /* max value in the subtree */
  uint32_t left, right, parent, prio;
} MlTreapNode;

typedef struct {
  MlTreapNode *nodes;
  uint32_t     root, free_list, count, cap;
  uint64_t     rng;
  bool         plain;   /* no subtree maxima: skip their upkeep */
} MlTreap;

void     ml_treap_init    (MlTreap *t);
/* A treap whose values are payloads, not searched by (faster upkeep). */
void     ml_treap_init_plain (MlTreap *t);
void     ml_treap_clear   (MlTreap *t);   /* frees the nodes */
/* Returns the new node or ML_TREAP_NIL when out of memory. Keys must be unique. */
uint32_t ml_treap_insert  (MlTreap *t, uint64_t a, uint64_t b, uint64_t value) ML_MUST_CHECK;
/* Removes the node with key (a, b); returns false if absent. */
bool     ml_treap_remove  (MlTreap *t, uint64_t a, uint64_t b);
/* Removes node @id (a handle from a search). */
void     ml_treap_remove_node (MlTreap *t, uint32_t id);
/* Changes node @id's key and value in place; the caller guarantees the new
 * key keeps the node's place in the order. O(depth) for the maxima. */
void     ml_treap_set_node (MlTreap *t, uint32_t id, uint64_t a, uint64_t b, uint64_t value);
/* Changes the value of the node with key (a, b). */
bool     ml_treap_set_value (MlTreap *t, uint64_t a, uint64_t b, uint64_t value);
/* Exact lookup. */
uint32_t ml_treap_find    (const MlTreap *t, uint64_t a, uint64_t b, uint64_t *visited);
/* The first node with key >= (a, b) / the last with key < (a, b). */
uint32_t ml_treap_lower_bound (const MlTreap *t, uint64_t a, uint64_t b, uint64_t *visited);
uint32_t ml_treap_predecessor (const MlTreap *t, uint64_t a, uint64_t b, uint64_t *visited);
/* The node with the smallest key whose value >= @v (first fit). */
uint32_t ml_treap_first_with_value (const MlTreap *t, uint64_t v, uint64_t *visited);
/* The node with the smallest key >= (a, b) whose value >= @v (next fit). */
uint32_t ml_treap_first_with_value_from (const MlTreap *t, uint64_t a, uint64_t b, uint64_t v, uint64_t *visited);
/* Calls @fn for every node with a < @hi_a and value > @lo (interval
 * overlap with key = start, value = end), in key order; stops when fn
 * returns false. */
void     ml_treap_overlaps (const MlTreap *t, uint64_t lo, uint64_t hi_a,
                            bool (*fn) (void *user, const MlTreapNode *node), void *user);
/* Largest value in the tree (0 when empty). */
static inline uint64_t
ml_treap_max_value (const MlTreap *t)
{
  return t->root == ML_TREAP_NIL ? 0 : t->nodes[t->root].max;
}
static inline const MlTreapNode *
ml_treap_node (const MlTreap *t, uint32_t id)
{
  return id == ML_TREAP_NIL ? NULL : &t->nodes[id];
}

#endif
