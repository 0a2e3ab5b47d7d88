/* exact-search.c — the exact planner's branch and bound (exact.h): from
 * a node, the candidates are the unplaced buffers whose lowest offset
 * keeps the sequence canonical, tried lowest first, then by the static
 * rank; a node is pruned by the section inference, dominance and the
 * hatless rule; a placement that leaves a section boundary no unplaced
 * buffer crosses splits the rest into pieces solved on their own. */
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "strategies/exact-private.h"
#include "strategies/planner-private.h"

static int
cmp_cand (const void *a, const void *b, void *ctx)
{
  uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
  const MlExactSearch *s = ctx;
  if (s->off[x] != s->off[y])
    return s->off[x] < s->off[y] ? -1 : 1;
  return s->P->rank[x] < s->P->rank[y] ? -1 : s->P->rank[x] > s->P->rank[y];
}

static bool
time_up (MlExactSearch *s)
{
  if (s->stopped)
    return true;
  if (s->max_nodes && s->nodes >= s->max_nodes)
    return s->out_of_nodes = s->stopped = true;
  if ((++s->polls & 1023) != 0)
    return false;
  double now = ml_now ();
  if (_ml_cancelled (s->knobs))
    s->cancelled = s->stopped = true;
  else if (now >= s->deadline)
    s->stopped = true;
  else if ((s->polls & 0x3ffff) == 0)
    _ml_report (s->knobs, s->limit > 0 ? (now - s->t0) / s->limit : 0, s->phase);
  return s->stopped;
}

static int search (MlExactSearch *s, MlExactScope *sc, uint64_t last_off, uint32_t min_rank, uint32_t depth);

/* The section inference over the whole of @sc, every later placement at
 * @last_off or above: false when some section's lowest free offset plus
 * the bytes still unplaced there is over the capacity. */
static bool
scope_fits (MlExactSearch *s, const MlExactScope *sc, uint64_t last_off)
{
  MlExactPart *P = s->P;
  for (uint32_t k = sc->klo; k < sc->khi; k++)
    s->low[k] = UINT64_MAX;
  for (uint32_t u = 0; u < sc->n; u++)
    {
      uint32_t i = sc->list[u];
      uint64_t v = s->off[i] > last_off ? s->off[i] : last_off;
      if (v + P->size[i] > s->cap)
        return false;
      for (uint32_t k = P->sa[i]; k < P->sb[i]; k++)
        if (v < s->low[k])
          s->low[k] = v;
    }
  for (uint32_t k = sc->klo; k < sc->khi; k++)
    if (s->usum[k] && s->low[k] + s->usum[k] > s->cap)
      return false;
  return true;
}

/* After placing a buffer, the sections of @sc split at @cuts (sorted,
 * inside (klo, khi)): solves each piece on its own. Pieces do not overlap
 * in time, so any combination of their plans is a plan. */
static int
decompose (MlExactSearch *s, MlExactScope *sc, const uint32_t *cuts, uint32_t n_cuts, uint32_t depth)
{
  MlExactPart *P = s->P;
  uint32_t *buf = s->scratch + (size_t) depth * P->m;
  int r = R_FOUND;
  uint32_t lo = sc->klo;
  for (uint32_t c = 0; c <= n_cuts && r == R_FOUND; c++)
    {
      uint32_t hi = c < n_cuts ? cuts[c] : sc->khi;
      MlExactScope sub = { buf, 0, lo, hi };
      for (uint32_t u = 0; u < sc->n; u++)
        {
          uint32_t i = sc->list[u];
          if (P->sa[i] < hi && P->sb[i] > lo)
            {
              s->pos[i] = sub.n;
              buf[sub.n++] = i;
            }
        }
      if (sub.n)
        {
          size_t mark = s->n_rsave;
          if (!_ml_exact_rerank (s, &sub))
            r = R_STOP;
          else
            r = search (s, &sub, 0, 0, depth);
          while (s->n_rsave > mark)
            {
              s->n_rsave -= 2;
              P->rank[s->rsave[s->n_rsave]] = s->rsave[s->n_rsave + 1];
            }
        }
      lo = hi;
    }
  for (uint32_t u = 0; u < sc->n; u++)
    s->pos[sc->list[u]] = u;
  return r;
}

/* The candidates of a node (at most m - depth of them, into @cand):
 * the unplaced buffers of @sc whose lowest offset keeps (offset, rank)
 * increasing past (@last_off, @min_rank), less those a dominance rule
 * rules out (a buffer placed at or above the lowest top some unplaced
 * buffer can reach would leave a gap that buffer could fill). False when
 * the section inference proves the node dead: some buffer no longer fits
 * under the capacity, or a section's lowest offset left plus the bytes
 * left there is over it. */
static bool
node_candidates (MlExactSearch *s, const MlExactScope *sc, uint64_t last_off, uint32_t min_rank,
                 uint32_t *cand, uint32_t *n_cand)
{
  MlExactPart *P = s->P;
  uint64_t cap = s->cap;
  for (uint32_t k = sc->klo; k < sc->khi; k++)
    s->low[k] = UINT64_MAX;
  uint32_t nc = 0;
  uint64_t min_height = UINT64_MAX;
  for (uint32_t u = 0; u < sc->n; u++)
    {
      uint32_t i = sc->list[u];
      uint64_t v = s->off[i] > last_off ? s->off[i] : last_off;
      if (v + P->size[i] > cap)
        return false;
      for (uint32_t k = P->sa[i]; k < P->sb[i]; k++)
        if (v < s->low[k])
          s->low[k] = v;
      if (s->off[i] + P->size[i] < min_height)
        min_height = s->off[i] + P->size[i];
      /* twins are interchangeable: the one ranked first goes lower */
      bool twin_first = P->twin[i] != UINT32_MAX && !s->placed[P->twin[i]];
      if (!twin_first && (s->off[i] > last_off || (s->off[i] == last_off && P->rank[i] >= min_rank)))
        cand[nc++] = i;
    }
  for (uint32_t k = sc->klo; k < sc->khi; k++)
    if (s->usum[k] && s->low[k] + s->usum[k] > cap)
      return false;
  uint32_t kept = 0;
  for (uint32_t c = 0; c < nc; c++)
    if (s->off[cand[c]] < min_height)
      cand[kept++] = cand[c];
  *n_cand = kept;
  return true;
}

/* Places candidate @i at its lowest offset: out of @sc's list, its bytes
 * out of its sections' unplaced totals, the section boundaries no
 * unplaced buffer crosses any more (inside @sc) into @cuts, and every
 * unplaced neighbour lifted to its top (the old offsets on s->save).
 * Returns whether no unplaced buffer overlaps @i (it is "hatless"). */
static bool
place (MlExactSearch *s, MlExactScope *sc, uint32_t i, uint32_t *cuts, uint32_t *n_cuts)
{
  MlExactPart *P = s->P;
  uint64_t top = s->off[i] + P->size[i];
  s->nodes++;
  s->at[i] = s->off[i];
  s->placed[i] = 1;
  uint32_t p = s->pos[i], last = sc->list[--sc->n];
  sc->list[p] = last;
  s->pos[last] = p;
  for (uint32_t k = P->sa[i]; k < P->sb[i]; k++)
    s->usum[k] -= P->size[i];
  *n_cuts = 0;
  for (uint32_t k = P->sa[i]; k + 1 < P->sb[i]; k++)
    if (--s->cuts[k] == 0 && k + 1 > sc->klo && k + 1 < sc->khi)
      cuts[(*n_cuts)++] = k + 1;
  bool hatless = true;
  for (uint32_t e = P->adj_start[i]; e < P->adj_start[i + 1]; e++)
    {
      uint32_t j = P->adj[e];
      if (!s->placed[j])
        hatless = false;
      if (!s->placed[j] && s->off[j] < top)
        {
          s->save[s->n_save++] = j;
          s->save[s->n_save++] = s->off[j];
          s->off[j] = top;
        }
    }
  return hatless;
}

/* Undoes place (s, sc, i, ...): the lifted offsets back to s->save's
 * @mark, the cut counts and unplaced totals restored, @i back in @sc's
 * list at the position it had. */
static void
unplace (MlExactSearch *s, MlExactScope *sc, uint32_t i, size_t mark)
{
  MlExactPart *P = s->P;
  while (s->n_save > mark)
    {
      uint64_t v = s->save[--s->n_save];
      uint32_t j = (uint32_t) s->save[--s->n_save];
      s->off[j] = v;
    }
  for (uint32_t k = P->sa[i]; k + 1 < P->sb[i]; k++)
    s->cuts[k]++;
  for (uint32_t k = P->sa[i]; k < P->sb[i]; k++)
    s->usum[k] += P->size[i];
  sc->list[sc->n++] = i;
  uint32_t p = s->pos[i];
  sc->list[sc->n - 1] = sc->list[p];
  s->pos[sc->list[p]] = sc->n - 1;
  sc->list[p] = i;
  s->pos[i] = p;
  s->placed[i] = 0;
}

/* The child of placing @i at @o (already placed): the cheap parts of the
 * child's section check first, which catch most dead ends without its
 * pass over every unplaced buffer: the monotonic floor (nothing later
 * goes below o) and i's own sections (every unplaced buffer there now
 * starts at i's top or above). Then the child itself, or, when the
 * placement cut the scope at @cuts, each piece on its own (every piece
 * is checked before any is searched). */
static int
child (MlExactSearch *s, MlExactScope *sc, uint32_t i, uint64_t o, const uint32_t *cuts, uint32_t n_cuts,
       uint32_t depth)
{
  MlExactPart *P = s->P;
  uint64_t top = o + P->size[i], cap = s->cap;
  for (uint32_t k = sc->klo; k < sc->khi; k++)
    if (o + s->usum[k] > cap)
      return R_NONE;
  for (uint32_t k = P->sa[i]; k < P->sb[i]; k++)
    if (s->usum[k] && top + s->usum[k] > cap)
      return R_NONE;
  if (!(n_cuts && sc->n))
    return search (s, sc, o, P->rank[i] + 1, depth + 1);
  if (!scope_fits (s, sc, o))
    return R_NONE;
  return decompose (s, sc, cuts, n_cuts, depth + 1);
}

/* One node: its candidates, each placed in turn, lowest offset first,
 * then by rank, until a child finds a plan or stops. */
static int
search (MlExactSearch *s, MlExactScope *sc, uint64_t last_off, uint32_t min_rank, uint32_t depth)
{
  MlExactPart *P = s->P;
  if (sc->n == 0)
    return R_FOUND;
  if (time_up (s))
    return R_STOP;
  /* depth d holds at most m - d candidates */
  uint32_t *cand = s->cand + (size_t) depth * P->m - (size_t) depth * (depth - (depth > 0)) / 2;
  uint32_t nc;
  if (!node_candidates (s, sc, last_off, min_rank, cand, &nc))
    return R_NONE;
  /* the node budget counts the nodes that pass the checks */
  if (s->budget && ++s->run_nodes > s->budget)
    return R_BUDGET;
  qsort_r (cand, nc, sizeof *cand, cmp_cand, s);
  uint32_t *cuts = s->cutbuf + (size_t) depth * (P->S + 1);
  for (uint32_t c = 0; c < nc; c++)
    {
      uint32_t i = cand[c], n_cuts;
      uint64_t o = s->off[i];
      size_t mark = s->n_save;
      bool hatless = place (s, sc, i, cuts, &n_cuts);
      int r = child (s, sc, i, o, cuts, n_cuts, depth);
      if (r == R_FOUND)
        s->found[i] = o;
      unplace (s, sc, i, mark);
      if (r != R_NONE)
        return r;
      /* nothing unplaced overlaps i: where i goes does not constrain the
       * rest, so the other candidates fail the same way */
      if (hatless)
        break;
    }
  s->backtracks++;
  return R_NONE;
}

/* Solves part @P under capacity @cap until @deadline: R_FOUND (offsets in
 * s->found, peak in s->found_peak), R_NONE (proven infeasible) or R_STOP. */
static int
solve_part (MlExactSearch *s, MlExactPart *P, uint64_t cap, double deadline)
{
  s->P = P;
  s->cap = cap;
  s->deadline = deadline;
  s->stopped = false;
  if (P->lb > cap)
    return R_NONE;
  for (uint32_t i = 0; i < P->m; i++)
    {
      s->off[i] = 0;
      s->placed[i] = 0;
      s->unplaced[i] = i;
      s->pos[i] = i;
    }
  memset (s->usum, 0, P->S * sizeof *s->usum);
  for (uint32_t i = 0; i < P->m; i++)
    for (uint32_t k = P->sa[i]; k < P->sb[i]; k++)
      s->usum[k] += P->size[i];
  memset (s->cuts, 0, P->S * sizeof *s->cuts);
  for (uint32_t i = 0; i < P->m; i++)
    for (uint32_t k = P->sa[i]; k + 1 < P->sb[i]; k++)
      s->cuts[k]++;
  s->n_save = 0;
  s->run_nodes = 0;
  MlExactScope sc = { s->unplaced, P->m, 0, P->S };
  int r = search (s, &sc, 0, 0, 0);
  if (r == R_FOUND)
    {
      uint64_t peak = 0;
      for (uint32_t i = 0; i < P->m; i++)
        if (P->size[i] && s->found[i] + P->size[i] > peak)
          peak = s->found[i] + P->size[i];
      s->found_peak = peak;
    }
  return r;
}

/* Round robin over the static orders with a node budget that doubles
 * (starting at 2m) until one finishes (@max_budget 0), or one run of each
 * order with @max_budget nodes (the caller doubles it between calls; less
 * than 2m: none): R_FOUND, R_NONE, R_STOP or R_BUDGET. */
int
_ml_exact_solve (MlExactSearch *s, MlExactPart *P, uint64_t cap, double deadline, uint64_t max_budget)
{
  if (P->lb > cap)
    return R_NONE;
  uint64_t b0 = max_budget > 2 * (uint64_t) P->m ? max_budget : 2 * (uint64_t) P->m;
  for (uint64_t budget = b0; !max_budget || budget <= max_budget; budget *= 2)
    for (int h = 0; h < N_HEUR; h++)
      {
        P->rank = P->ranks[h];
        P->heur = h;
        s->budget = budget;
        int r = solve_part (s, P, cap, deadline);
        if (r != R_BUDGET)
          return r;
      }
  return R_BUDGET;
}


int
_ml_exact_search_init (MlExactSearch *s, uint32_t max_m, uint32_t max_S, size_t max_adj)
{
  s->off = malloc (max_m * sizeof *s->off);
  s->at = malloc (max_m * sizeof *s->at);
  s->found = malloc (max_m * sizeof *s->found);
  s->placed = malloc (max_m);
  s->unplaced = malloc (max_m * sizeof *s->unplaced);
  s->pos = malloc (max_m * sizeof *s->pos);
  s->usum = malloc (max_S * sizeof *s->usum);
  s->low = malloc (max_S * sizeof *s->low);
  s->save = malloc ((2 * max_adj + 2) * sizeof *s->save);
  s->cand = malloc (((size_t) max_m * (max_m + 1) / 2 + max_m) * sizeof *s->cand);
  s->scratch = malloc (((size_t) max_m + 1) * max_m * sizeof *s->scratch);
  s->cuts = malloc (max_S * sizeof *s->cuts);
  s->cutbuf = malloc (((size_t) max_m + 1) * (max_S + 1) * sizeof *s->cutbuf);
  s->rkeys = malloc (max_m * _ml_exact_rank_key_size ());
  if (!s->off || !s->at || !s->found || !s->placed || !s->unplaced || !s->pos || !s->usum
      || !s->low || !s->save || !s->cand || !s->scratch || !s->cuts || !s->cutbuf || !s->rkeys)
    return ML_ENOMEM;
  return 0;
}

void
_ml_exact_search_clear (MlExactSearch *s)
{
  free (s->off); free (s->at); free (s->placed); free (s->unplaced);
  free (s->pos); free (s->usum); free (s->low); free (s->save);
  free (s->cand); free (s->found); free (s->scratch); free (s->cuts); free (s->cutbuf);
  free (s->rsave); free (s->rkeys);
}
