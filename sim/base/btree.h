/* btree.h — a B+ tree of (a, b) keys with a u64 value per entry and, when
 * asked for, the largest value under each child, for free-hole indexes.
 *
 * The same sets as treap.h (a free-hole map keyed by offset whose "lowest
 * hole of at least n bytes" is one descent; a size index keyed by (size,
 * offset)), in wide nodes: 32 entries a leaf, 32 children an inner node,
 * so 10,000 holes are three levels and a search touches three nodes
 * instead of fourteen. Leaves are chained in key order. A leaf is removed
 * when it empties; nodes are not merged otherwise (a tree never gets
 * taller than its largest size needs).
 *
 * Positions (leaf, index) stay valid until the next insert or remove.
 * Every search adds the nodes it touched to *visited when it is not NULL.
 * Expected cost: O(log_16 n) nodes per operation, each a scan of at most
 * 32 keys; insert and remove shift at most 32 entries.
 */
#ifndef ML_BTREE_H
#define ML_BTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/base/error.h"

#define ML_BTREE_NIL UINT32_MAX
#define ML_BTREE_FAN 32

typedef struct {
  uint64_t a[ML_BTREE_FAN], b[ML_BTREE_FAN], v[ML_BTREE_FAN];
  uint32_t n, prev, next, parent;
} MlBtLeaf;

typedef struct {
  uint64_t max[ML_BTREE_FAN];            /* largest value under each child */
  uint64_t sa[ML_BTREE_FAN], sb[ML_BTREE_FAN]; /* each child's lowest key */
  uint32_t child[ML_BTREE_FAN];
  uint32_t n, parent;
} MlBtInner;

typedef struct {
  MlBtLeaf  *leaves;
  MlBtInner *inners;
  uint32_t   n_leaves, cap_leaves, free_leaves;
  uint32_t   n_inners, cap_inners, free_inners;
  uint32_t   root;       /* a leaf when height == 0 */
  uint32_t   height;     /* inner levels above the leaves */
  size_t     count;
  bool       with_max;
} MlBTree;

typedef struct {
  uint32_t leaf, i;
} MlBtPos;

/* An empty tree; @with_max keeps the largest value under each child
 * (needed by ml_btree_first_fit / ml_btree_next_fit). */
void ml_btree_init  (MlBTree *t, bool with_max);
void ml_btree_clear (MlBTree *t);   /* frees the nodes */

/* Inserts (a, b) -> v; keys must be unique. Returns 0 or ML_ENOMEM (the
 * tree unchanged). Invalidates positions. */
ML_MUST_CHECK int ml_btree_insert (MlBTree *t, uint64_t a, uint64_t b, uint64_t v);
/* Removes the entry at @pos. Invalidates positions. */
void ml_btree_remove (MlBTree *t, MlBtPos pos);
/* Changes the entry at @pos in place; the caller guarantees the new key
 * keeps its place in the order. @pos stays valid. */
void ml_btree_set (MlBTree *t, MlBtPos pos, uint64_t a, uint64_t b, uint64_t v);

/* Where (a, b) is or would go: the first entry with key >= (a, b), with
 * pos->i == the leaf's count when every key of the leaf is smaller (then
 * the entry, if any, is the next leaf's first). */
MlBtPos ml_btree_lower_bound (const MlBTree *t, uint64_t a, uint64_t b, uint64_t *visited);
/* Normalises a lower_bound position to a real entry; false when none. */
bool ml_btree_at_or_next (const MlBTree *t, MlBtPos *pos);
/* The entry before a lower_bound position; false when none. */
bool ml_btree_before (const MlBTree *t, MlBtPos at, MlBtPos *out);
/* The entry with the smallest key whose value >= @v (first fit). */
bool ml_btree_first_fit (const MlBTree *t, uint64_t v, MlBtPos *pos, uint64_t *visited);
/* The first entry at or after the lower_bound position @from whose value
 * >= @v (next fit). */
bool ml_btree_next_fit (const MlBTree *t, MlBtPos from, uint64_t v, MlBtPos *pos, uint64_t *visited);
/* The largest value in the tree (0 when empty; with_max trees only). */
uint64_t ml_btree_max (const MlBTree *t);

static inline uint64_t ml_btree_a (const MlBTree *t, MlBtPos p) { return t->leaves[p.leaf].a[p.i]; }
static inline uint64_t ml_btree_b (const MlBTree *t, MlBtPos p) { return t->leaves[p.leaf].b[p.i]; }
static inline uint64_t ml_btree_v (const MlBTree *t, MlBtPos p) { return t->leaves[p.leaf].v[p.i]; }

#endif
