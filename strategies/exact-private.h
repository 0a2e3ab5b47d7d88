/* exact-private.h — what the files of the exact planner share (not public).
 *
 * exact.c        the planner: options, the modes (fit, minimise), the note
 * exact-part.c   the instance: parts no buffer crosses, their sections,
 *                overlaps and static orders (MiniMalloc's preorderings)
 * exact-search.c the branch and bound over canonical placements
 * exact-infeasible.c  why no plan fits: an irreducible infeasible subset
 */
#ifndef ML_STRATEGIES_EXACT_PRIVATE_H
#define ML_STRATEGIES_EXACT_PRIVATE_H

#include "sim/strategy.h"

/* What a search returns. */
enum { R_NONE = 0, R_FOUND = 1, R_STOP = 2, R_BUDGET = 3, R_TOO_BIG = 4 };

/* Static orders tried in turn (MiniMalloc's round robin): by lifetime,
 * area, section total; by total, area, lifetime; by total, lifetime,
 * area (all largest first). */
#define N_HEUR 3

#ifndef EXACT_BUDGET0
#define EXACT_BUDGET0 4096
#endif

/* Parts with more overlapping pairs keep their greedy plan. */
#define EXACT_MAX_PAIRS 4000000u
#define EXACT_MAX_M     4000u
#define SEARCHABLE(P)   ((P)->pairs <= EXACT_MAX_PAIRS && (P)->m <= EXACT_MAX_M)

/* One part of the instance (no buffer crosses its borders). */
typedef struct {
  uint32_t  m;          /* buffers */
  uint32_t *glob;       /* m: index in MlBuffers */
  uint64_t *size;       /* m */
  uint32_t *rank;       /* m: static order, 0 first (one of ranks[]) */
  uint32_t *ranks[N_HEUR];
  uint64_t *len;        /* m: lifetime in ticks */
  uint64_t *id;         /* m: buffer id (the last tie break) */
  int       heur;       /* which of ranks[] is in use */
  uint32_t *sa, *sb;    /* m: section range [sa, sb) */
  uint32_t  S;          /* sections */
  uint32_t *adj_start;  /* m + 1 */
  uint32_t *adj;        /* overlapping buffers */
  uint32_t *twin;       /* m: the previous twin (same lifetime and size, the
                         * next lower (id, index)), UINT32_MAX when none */
  uint64_t  lb;         /* max live bytes over its sections */
  uint64_t  best;       /* best peak found for this part */
  uint64_t  pairs;      /* overlapping pairs */
  bool      proven;     /* best is optimal for the part */
} MlExactPart;

typedef struct {
  const MlKnobs *knobs;
  double    deadline, t0, limit;
  uint64_t  nodes;       /* placements tried */
  uint64_t  backtracks;  /* nodes whose every candidate failed */
  uint64_t  polls;       /* search calls, for the clock checks */
  uint64_t  run_nodes, budget;  /* nodes of this run; 0 = no budget */
  uint64_t  max_nodes;   /* stop once nodes reaches it (0 = no limit) */
  bool      stopped, cancelled, oom, out_of_nodes;
  uint64_t  cap;
  /* search state for the part being solved */
  MlExactPart *P;
  uint64_t *off;        /* lowest offset of each buffer */
  uint64_t *at;         /* chosen offsets */
  uint8_t  *placed;
  uint32_t *unplaced;   /* list of unplaced buffers (the top scope) */
  uint32_t *scratch;    /* scope lists of decompositions, m per depth */
  uint32_t *cuts;       /* per section boundary: unplaced buffers crossing it */
  uint32_t *cutbuf;     /* new cut points, S + 1 per depth */
  uint32_t *pos;        /* position of each buffer in unplaced */
  uint64_t *usum;       /* per section: unplaced bytes */
  uint64_t *low;        /* per section scratch */
  uint64_t *save;       /* saved offsets, a stack */
  size_t    n_save, cap_save;
  uint32_t *cand;       /* candidate stack (m per depth) */
  uint32_t *rsave;      /* saved ranks of re-ranked pieces, a stack */
  size_t    n_rsave, cap_rsave;
  void     *rkeys;      /* m sort keys */
  uint64_t  found_peak;
  uint64_t *found;      /* offsets of the solution (m) */
  const char *phase;
} MlExactSearch;

/* The buffers a search node works on: a contiguous range of sections and
 * the unplaced buffers in it (their pos[] index this list). */
typedef struct {
  uint32_t *list;
  uint32_t  n;
  uint32_t  klo, khi;
} MlExactScope;

/* exact-part.c */

/* Splits @bufs at ticks no buffer crosses: fills @parts (room for
 * bufs->n) and *n_parts, their static orders perturbed by @seed (0: none;
 * see exact-part.c). On ML_ENOMEM the parts built so far stay in @parts
 * (*n_parts of them) for the caller to free. */
int  _ml_exact_split (const MlBuffers *bufs, MlExactPart *parts, uint32_t *n_parts, uint64_t seed);
/* Builds part @P from the buffers glob[0..m) (sorted by start), its
 * static orders perturbed by @seed (0: none); ML_ENOMEM leaves nothing
 * to free. */
int  _ml_exact_part_build (const MlBuffers *bufs, MlExactPart *P, const uint32_t *glob, uint32_t m,
                           uint64_t seed);
void _ml_exact_part_free (MlExactPart *P);
/* Ranks the buffers of the piece @sc afresh (see exact-part.c). */
bool _ml_exact_rerank (MlExactSearch *s, const MlExactScope *sc);
/* The size of one sort key of _ml_exact_rerank (s->rkeys holds m). */
size_t _ml_exact_rank_key_size (void);

/* exact-search.c */

/* Sizes the scratch of @s for parts of at most @max_m buffers, @max_S
 * sections and @max_adj overlaps; ML_ENOMEM leaves what it allocated for
 * _ml_exact_search_clear. */
int  _ml_exact_search_init (MlExactSearch *s, uint32_t max_m, uint32_t max_S, size_t max_adj);
void _ml_exact_search_clear (MlExactSearch *s);
/* Round robin over the static orders: R_FOUND (offsets in s->found, peak
 * in s->found_peak), R_NONE (proven infeasible), R_STOP or R_BUDGET. */
int  _ml_exact_solve (MlExactSearch *s, MlExactPart *P, uint64_t cap, double deadline, uint64_t max_budget);

/* exact-infeasible.c */

/* The error for a capacity below the lower bound: ML_EINFEASIBLE naming
 * the largest buffers live at the bound's tick that pass the capacity. */
int      _ml_exact_refuse_below_bound (const MlBuffers *bufs, const MlKnobs *knobs, MlError *err);
/* The error for part @P proven not to fit in @cap: ML_EINFEASIBLE naming
 * an irreducible infeasible subset (ML_ENOMEM when out of memory). */
int      _ml_exact_refuse_part (const MlBuffers *bufs, MlExactSearch *s, const MlExactPart *P,
                                uint64_t cap, double deadline, const MlKnobs *knobs, MlError *err);

#endif
