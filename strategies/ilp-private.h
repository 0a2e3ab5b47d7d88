/* ilp-private.h — the ilp planner's models (ilp-model.c), shared with its
 * driver (ilp.c). Not public; built only with GLPK. */
#ifndef ML_STRATEGIES_ILP_PRIVATE_H
#define ML_STRATEGIES_ILP_PRIVATE_H

#include <glpk.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/sim.h"

typedef enum {
  ML_ILP_BIGM,    /* a binary per overlapping pair, big-M rows          */
  ML_ILP_ORDER,   /* the same binaries, symmetry fixed, clique and
                   * transitivity rows                                  */
  ML_ILP_TIME,    /* offset-indexed: a binary per buffer and offset     */
} MlIlpModel;

/* The instance as the model sees it: the buffers that take room (by
 * start; idx: model column -> buffer), the sizes' gcd g (every size is
 * divided by it), the overlapping pairs (pa[e], pb[e] index idx; the pairs
 * of a are e = first[a] .. first[a + 1] - 1, with pb = a + 1, a + 2, ...),
 * and the model: columns x_1..x_m (offsets), z (the peak), then the
 * model's own (1-based). */
typedef struct {
  const MlBuffers *bufs;
  MlIlpModel model;
  uint32_t *idx;
  size_t    m;
  uint64_t  g;
  uint32_t *pa, *pb;
  size_t   *first;      /* m + 1 */
  size_t    pairs;
  glp_prob *lp;
  double    M;          /* the best greedy peak / g */
  int       zc;         /* the column of z */
  int       ycol;       /* order models: the column of y_0 */
  int      *tcol;       /* time model: the column of X[a][0] (m) */
  int       hcol;       /* time model: the column of h_0 (M of them) */
  size_t    cols;       /* every column */
  size_t    binaries;   /* binary columns, fixed ones included */
  size_t    fixed;      /* binaries fixed by symmetry */
  size_t    mirror;     /* order model: the pair fixed against mirror
                         * images (pairs when none) */
} Ilp;

/* Builds @x's model (x->model) over its pairs; M = @greedy_peak / g.
 * Refuses (ML_EUNSUPPORTED, *too_big set) a time model of more than
 * @max_nonzeros matrix entries, and an order model whose clique rows have
 * more; ML_ENOMEM. */
int  _ml_ilp_build (Ilp *x, uint64_t greedy_peak, size_t max_nonzeros, bool *too_big);
/* @start (1-based, x->cols + 1 entries): the model's columns for the
 * plan @offset (the heuristic solution handed to GLPK). */
void _ml_ilp_start (const Ilp *x, const uint64_t *offset, double *start);
/* The model's name as the option spells it. */
const char *_ml_ilp_model_name (MlIlpModel model);

#endif
