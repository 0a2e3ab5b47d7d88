/* graph-private.h — what the files of the graph reader share (not public).
 *
 *   graph-read.c   the document: settings and dimensions, the tensors,
 *                  the ops in the order they run (each branch's
 *                  alternatives right after it), their reads, writes and
 *                  in-place pairs, the fixed tensors, contiguous groups
 *   graph-order.c  lifetimes under an order, and the two reorderings
 *                  (memory-aware, GE's memory priority)
 *   graph.c        the trace: the order taken, tick 0 (inputs, weights,
 *                  pinned and fixed tensors), then each op's frees,
 *                  allocations and in-place writes
 */
#ifndef ML_GRAPH_PRIVATE_H
#define ML_GRAPH_PRIVATE_H

#include "sim/buffers.h"
#include "sim/formats/graph.h"
#include "sim/base/u64map.h"

/* A tensor's kind, as it decides its lifetime (MlGraphTensor.kind). */
enum { K_ACT = 0, K_INPUT, K_OUTPUT, K_WEIGHT };

typedef struct {
  const char *name;
  uint64_t    bytes;
  int         kind;
  long        producer;   /* op index, -1 = graph input / weight */
  uint32_t    root;       /* the buffer it lives in (in-place aliases) */
  bool        zero_copy, no_reuse, fixed;   /* constraints (sim/constraints.h) */
  uint32_t    alt;        /* written inside this branch alternative (1-based), 0 = outside */
  uint64_t    fixed_at;   /* the offset of a fixed tensor */
} MlGraphTensor;

typedef struct {
  const char *name;
  uint32_t   *in, *out;
  size_t      n_in, n_out;
  uint32_t   *ip_in, *ip_out;   /* in-place pairs */
  size_t      n_ip;
} MlGraphOp;

/* An op of the file in the order the ops run. */
typedef struct {
  const cJSON *op;
  uint32_t     alt;      /* 1-based alternative of a branch, 0 = the main sequence */
  size_t       parent;   /* the branch op's position */
} MlGraphFlat;

enum { ML_GRAPH_REORDER_NONE, ML_GRAPH_REORDER_MEMORY, ML_GRAPH_REORDER_PRIORITY };

typedef struct {
  const char *path;
  MlError    *err;
  MlGraphTensor *t;
  size_t      nt;
  MlGraphOp  *ops;        /* in MlGraphFlat's order */
  size_t      nops;
  MlGraphFlat *flat;
  size_t      n_flat;
  uint64_t    align;
  uint64_t    zero_copy_align;
  uint64_t    max_block;
  int         reorder;    /* ML_GRAPH_REORDER_* */
  bool        exclude[4];
  bool        pin[4];     /* resident for the whole graph at a fixed offset */
  MlU64Map    names;      /* FNV-1a hash of a name -> the first tensor with it */
  /* symbolic dimensions: the file's "dims", then MlLoadOptions.dims */
  struct { char name[64]; uint64_t value; bool from_opts, used; } dim[32];
  size_t      n_dims;
} MlGraph;

/* ---- graph-read.c ---- */

/* The tensor named @name, -1 when none is. */
long _ml_graph_find_tensor (const MlGraph *g, const char *name);
/* "alignment", "max_block", MlLoadOptions.graph_options and the
 * dimensions (the file's "dims", then MlLoadOptions.dims). */
int  _ml_graph_read_settings (MlGraph *g, const cJSON *root, const MlLoadOptions *opts);
/* g->flat and g->n_flat from "ops" (g->ops allocated, empty). */
int  _ml_graph_flatten_ops (MlGraph *g, const cJSON *ops);
/* g->t from "tensors". */
int  _ml_graph_read_tensors (MlGraph *g, const cJSON *tensors);
/* g->ops from g->flat: reads, writes, in-place pairs, checked. */
int  _ml_graph_read_ops (MlGraph *g);
/* The fixed tensors apart and aligned (*@top: where the highest ends),
 * every --dim used. */
int  _ml_graph_check_fixed (MlGraph *g, uint64_t *top);
/* "contiguous": each group's buffers back to back (MlTrace groups). */
int  _ml_graph_add_groups (MlGraph *g, const cJSON *root, MlTrace *tr);

/* ---- graph-order.c ---- */

/* Lifetimes of the roots under @order: start / end ticks (@scratch:
 * 2 (nops + 2)); returns the peak of live aligned bytes. */
uint64_t _ml_graph_lifetimes (const MlGraph *g, const uint32_t *order, uint64_t *start, uint64_t *end,
                              uint64_t *scratch);
/* The reorderings (graph.h) into @order (nops); ML_EINPUT on a cycle. */
int _ml_graph_memory_order   (const MlGraph *g, uint32_t *order);
int _ml_graph_priority_order (const MlGraph *g, uint32_t *order);

#endif
