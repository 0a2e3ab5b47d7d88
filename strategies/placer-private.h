/* placer-private.h — the placer's time buckets (placer-bucket.c), shared
 * with placer.c only.
 *
 * A bucket keeps the rectangles [ls, le) x [off, top) that touch its
 * leaves, sorted by (off, id), in a B+ tree: leaves of up to 64 entries,
 * inner nodes of up to 32 children. Every inner node keeps, per child, a
 * summary of the entries under it (MlPlacerSum): the first key, the
 * highest top, the extremes of their leaf ranges, and an upper bound on
 * the widest gap between them. A lowest-fit sweep in offset order skips a
 * child whole when the summary shows that none of its entries can stop
 * or lift the candidate, or that all of them overlap the query and leave
 * no gap it fits in (then it only lifts the candidate to their highest
 * top). Buffers that all overlap one another (a training step's
 * parameters) then cost O(log n) per placement instead of a scan of the
 * whole stack; the placements are the same, entry for entry.
 */
#ifndef ML_STRATEGIES_PLACER_PRIVATE_H
#define ML_STRATEGIES_PLACER_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#define ML_PLACER_NIL   UINT32_MAX
#define ML_PLACER_LEAF  64     /* entries a leaf */
#define ML_PLACER_FAN   32     /* children an inner node */
#define ML_PLACER_DEPTH 16     /* levels a cursor can hold */

typedef struct {
  uint64_t off, top;
  uint32_t ls, le;   /* leaf range */
  uint32_t id, pad;
} MlPlacerEnt;

/* What a run of entries (in key order) holds. */
typedef struct {
  uint64_t first_off;   /* the first entry's key (off, id) */
  uint64_t max_top;
  uint64_t gap;         /* >= every (entry's off - the highest top before it in the run) */
  uint32_t first_id, n;
  uint32_t min_ls, max_ls, min_le, max_le;
} MlPlacerSum;

typedef struct {
  uint32_t    n, next_free;
  MlPlacerEnt e[ML_PLACER_LEAF];
} MlPlacerLeaf;

typedef struct {
  uint32_t    n, next_free;
  uint32_t    child[ML_PLACER_FAN];
  MlPlacerSum sum[ML_PLACER_FAN];
} MlPlacerNode;

/* The leaves and inner nodes of every bucket, with their free lists.
 * leaf_cap and fan are at most ML_PLACER_LEAF and ML_PLACER_FAN (tests
 * make them small to grow tall trees). */
typedef struct {
  MlPlacerLeaf *leaves;
  MlPlacerNode *nodes;
  uint32_t      n_leaves, cap_leaves, free_leaf;
  uint32_t      n_nodes, cap_nodes, free_node;
  uint32_t      leaf_cap, fan;
} MlPlacerPool;

typedef struct {
  uint32_t    root;     /* ML_PLACER_NIL when empty */
  uint32_t    height;   /* inner levels above the leaves */
  MlPlacerSum sum;      /* of every entry (when not empty) */
} MlPlacerBucket;

/* A query on one bucket: the buffer's leaf range, its size, the bucket's
 * first leaf and whether it is the query's first bucket (an entry counts
 * only in the first of the query's buckets that holds it). */
typedef struct {
  uint32_t qs, qe, bstart;
  bool     first;
  uint64_t size;
} MlPlacerQuery;

/* Where a sweep stands: the path from the root (depth 0: not started). */
typedef struct {
  uint32_t depth;
  uint32_t node[ML_PLACER_DEPTH], idx[ML_PLACER_DEPTH];
} MlPlacerCursor;

int  _ml_placer_pool_init  (MlPlacerPool *pool);
void _ml_placer_pool_clear (MlPlacerPool *pool);
/* Forgets every node (the buckets must be emptied by the caller). */
void _ml_placer_pool_reset (MlPlacerPool *pool);

/* Inserts @x (its key (off, id) not yet in @B); false when out of memory
 * (the bucket is then unreliable). */
bool     _ml_bucket_insert  (MlPlacerPool *pool, MlPlacerBucket *B, const MlPlacerEnt *x);
/* Removes the entry with key (@off, @id) when there is one. */
void     _ml_bucket_remove  (MlPlacerPool *pool, MlPlacerBucket *B, uint64_t off, uint32_t id);
static inline uint64_t
_ml_bucket_max_top (const MlPlacerBucket *B)
{
  return B->root == ML_PLACER_NIL ? 0 : B->sum.max_top;
}

/* Sweeps @B from @cur with the candidate *@at for @q: raises *at past
 * every counted entry that blocks it; true when an entry starting at or
 * above *at + size stopped the sweep (*fits_below: its offset; @cur
 * rests on it, so a later call resumes there), false when the bucket
 * holds nothing more that can (it fits anything at or above *at). Adds
 * the entries and summaries it looked at to *@work. */
bool     _ml_bucket_sweep (const MlPlacerPool *pool, const MlPlacerBucket *B, MlPlacerCursor *cur,
                           const MlPlacerQuery *q, uint64_t *at, uint64_t *fits_below, uint64_t *work);
/* How many entries of @B count for @q; the id of the @r-th of them in
 * key order (@r below the count). */
uint64_t _ml_bucket_count (const MlPlacerPool *pool, const MlPlacerBucket *B, const MlPlacerQuery *q);
uint32_t _ml_bucket_nth   (const MlPlacerPool *pool, const MlPlacerBucket *B, const MlPlacerQuery *q, uint64_t r);

#endif
