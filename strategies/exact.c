#include "strategies/exact.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/base/sort.h"
#include "sim/base/units.h"
#include "strategies/planner-private.h"

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
  uint64_t  lb;         /* max live bytes over its sections */
  uint64_t  best;       /* best peak found for this part */
  uint64_t  pairs;      /* overlapping pairs */
  bool      proven;     /* best is optimal for the part */
} Part;

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
  Part     *P;
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
} Search;

static uint64_t
gcd_u64 (uint64_t a, uint64_t b)
{
  while (b)
    {
      uint64_t t = a % b;
      a = b;
      b = t;
    }
  return a;
}

static int
cmp_cand (const void *a, const void *b, void *ctx)
{
  uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
  const Search *s = ctx;
  if (s->off[x] != s->off[y])
    return s->off[x] < s->off[y] ? -1 : 1;
  return s->P->rank[x] < s->P->rank[y] ? -1 : s->P->rank[x] > s->P->rank[y];
}

static bool
time_up (Search *s)
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

/* The buffers a search node works on: a contiguous range of sections and
 * the unplaced buffers in it (their pos[] index this list). */
typedef struct {
  uint32_t *list;
  uint32_t  n;
  uint32_t  klo, khi;
} Scope;

static int search (Search *s, Scope *sc, uint64_t last_off, uint32_t min_rank, uint32_t depth);
static bool rerank (Search *s, const Scope *sc);

/* The section inference over the whole of @sc, every later placement at
 * @last_off or above: false when some section's lowest free offset plus
 * the bytes still unplaced there is over the capacity. */
static bool
scope_fits (Search *s, const Scope *sc, uint64_t last_off)
{
  Part *P = s->P;
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
decompose (Search *s, Scope *sc, const uint32_t *cuts, uint32_t n_cuts, uint32_t depth)
{
  Part *P = s->P;
  uint32_t *buf = s->scratch + (size_t) depth * P->m;
  int r = R_FOUND;
  uint32_t lo = sc->klo;
  for (uint32_t c = 0; c <= n_cuts && r == R_FOUND; c++)
    {
      uint32_t hi = c < n_cuts ? cuts[c] : sc->khi;
      Scope sub = { buf, 0, lo, hi };
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
          if (!rerank (s, &sub))
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

static int
search (Search *s, Scope *sc, uint64_t last_off, uint32_t min_rank, uint32_t depth)
{
  Part *P = s->P;
  if (sc->n == 0)
    return R_FOUND;
  if (time_up (s))
    return R_STOP;
  uint64_t cap = s->cap;
  for (uint32_t k = sc->klo; k < sc->khi; k++)
    s->low[k] = UINT64_MAX;
  /* depth d holds at most m - d candidates */
  uint32_t *cand = s->cand + (size_t) depth * P->m - (size_t) depth * (depth - (depth > 0)) / 2;
  uint32_t nc = 0;
  uint64_t min_height = UINT64_MAX;
  for (uint32_t u = 0; u < sc->n; u++)
    {
      uint32_t i = sc->list[u];
      uint64_t v = s->off[i] > last_off ? s->off[i] : last_off;
      if (v + P->size[i] > cap)
        return R_NONE;
      for (uint32_t k = P->sa[i]; k < P->sb[i]; k++)
        if (v < s->low[k])
          s->low[k] = v;
      if (s->off[i] + P->size[i] < min_height)
        min_height = s->off[i] + P->size[i];
      if (s->off[i] > last_off || (s->off[i] == last_off && P->rank[i] >= min_rank))
        cand[nc++] = i;
    }
  /* a section where the lowest offset left, plus the bytes left, is over */
  for (uint32_t k = sc->klo; k < sc->khi; k++)
    if (s->usum[k] && s->low[k] + s->usum[k] > cap)
      return R_NONE;
  /* the node budget counts the nodes that pass the checks */
  if (s->budget && ++s->run_nodes > s->budget)
    return R_BUDGET;
  /* dominance: a buffer placed at or above the lowest top some unplaced
   * buffer can reach would leave a gap that buffer could fill */
  uint32_t kept = 0;
  for (uint32_t c = 0; c < nc; c++)
    if (s->off[cand[c]] < min_height)
      cand[kept++] = cand[c];
  nc = kept;
  qsort_r (cand, nc, sizeof *cand, cmp_cand, s);
  uint32_t *cuts = s->cutbuf + (size_t) depth * (P->S + 1);
  for (uint32_t c = 0; c < nc; c++)
    {
      uint32_t i = cand[c];
      uint64_t o = s->off[i], top = o + P->size[i];
      /* place i */
      s->nodes++;
      s->at[i] = o;
      s->placed[i] = 1;
      uint32_t p = s->pos[i], last = sc->list[--sc->n];
      sc->list[p] = last;
      s->pos[last] = p;
      for (uint32_t k = P->sa[i]; k < P->sb[i]; k++)
        s->usum[k] -= P->size[i];
      uint32_t n_cuts = 0;
      for (uint32_t k = P->sa[i]; k + 1 < P->sb[i]; k++)
        if (--s->cuts[k] == 0 && k + 1 > sc->klo && k + 1 < sc->khi)
          cuts[n_cuts++] = k + 1;
      size_t mark = s->n_save;
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
      /* the cheap parts of the child's section check, which catch most
       * dead ends without its pass over every unplaced buffer: the
       * monotonic floor (nothing later goes below o) and i's own sections
       * (every unplaced buffer there now starts at i's top or above) */
      bool over = false;
      for (uint32_t k = sc->klo; k < sc->khi && !over; k++)
        over = o + s->usum[k] > cap;
      for (uint32_t k = P->sa[i]; k < P->sb[i] && !over; k++)
        over = s->usum[k] && top + s->usum[k] > cap;
      int r;
      if (over)
        r = R_NONE;
      else if (!(n_cuts && sc->n))
        r = search (s, sc, o, P->rank[i] + 1, depth + 1);
      else if (!scope_fits (s, sc, o))
        r = R_NONE;   /* every piece is checked before any is searched */
      else
        r = decompose (s, sc, cuts, n_cuts, depth + 1);
      if (r == R_FOUND)
        s->found[i] = o;
      /* undo */
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
      p = s->pos[i];
      sc->list[sc->n - 1] = sc->list[p];
      s->pos[sc->list[p]] = sc->n - 1;
      sc->list[p] = i;
      s->pos[i] = p;
      s->placed[i] = 0;
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
solve_part (Search *s, Part *P, uint64_t cap, double deadline)
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
  Scope sc = { s->unplaced, P->m, 0, P->S };
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
static int
solve_part_rr (Search *s, Part *P, uint64_t cap, double deadline, uint64_t max_budget)
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

static void
part_free (Part *P)
{
  free (P->glob); free (P->size); free (P->len); free (P->id);
  for (int h = 0; h < N_HEUR; h++)
    free (P->ranks[h]);
  free (P->sa); free (P->sb);
  free (P->adj_start); free (P->adj);
}

typedef struct { uint64_t k1, k2, k3, id; uint32_t idx; } RKey;
static int
cmp_rkey (const void *a, const void *b)
{
  const RKey *x = a, *y = b;
  if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
  if (x->k2 != y->k2) return x->k2 < y->k2 ? -1 : 1;
  if (x->k3 != y->k3) return x->k3 < y->k3 ? -1 : 1;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The sort key of heuristic @h: WAT (lifetime, area, section total),
 * TAW or TWA, each largest first. */
static RKey
heur_key (int h, uint64_t size, uint64_t len, uint64_t total, uint64_t id, uint32_t idx)
{
  unsigned __int128 a128 = (unsigned __int128) size * len;
  uint64_t area = UINT64_MAX - (a128 > UINT64_MAX ? UINT64_MAX : (uint64_t) a128);
  uint64_t l = UINT64_MAX - len, tot = UINT64_MAX - total;
  if (h == 0)
    return (RKey) { l, area, tot, id, idx };
  if (h == 1)
    return (RKey) { tot, area, l, id, idx };
  return (RKey) { tot, l, area, id, idx };
}

/* A piece of a split is a problem of its own: its buffers are ranked
 * afresh by the current heuristic with the section totals of what is
 * left unplaced (the old ranks go on s->rsave). False when out of memory. */
static bool
rerank (Search *s, const Scope *sc)
{
  Part *P = s->P;
  if (s->n_rsave + 2 * (size_t) sc->n > s->cap_rsave)
    {
      size_t cap = s->cap_rsave * 2 + 2 * (size_t) sc->n;
      uint32_t *g = realloc (s->rsave, cap * sizeof *g);
      if (!g)
        {
          s->oom = s->stopped = true;
          return false;
        }
      s->rsave = g;
      s->cap_rsave = cap;
    }
  RKey *keys = s->rkeys;
  for (uint32_t u = 0; u < sc->n; u++)
    {
      uint32_t i = sc->list[u];
      uint64_t total = 0;
      for (uint32_t k = P->sa[i]; k < P->sb[i]; k++)
        if (s->usum[k] > total)
          total = s->usum[k];
      keys[u] = heur_key (P->heur, P->size[i], P->len[i], total, P->id[i], i);
    }
  qsort (keys, sc->n, sizeof *keys, cmp_rkey);
  for (uint32_t r = 0; r < sc->n; r++)
    {
      uint32_t i = keys[r].idx;
      s->rsave[s->n_rsave++] = i;
      s->rsave[s->n_rsave++] = P->rank[i];
      P->rank[i] = r;
    }
  return true;
}

/* Builds part @P from the buffers glob[0..m) (sorted by start). */
static int
part_build (const MlBuffers *bufs, Part *P, const uint32_t *glob, uint32_t m)
{
  memset (P, 0, sizeof *P);
  P->m = m;
  P->glob = malloc (m * sizeof *P->glob);
  P->size = malloc (m * sizeof *P->size);
  P->len = malloc (m * sizeof *P->len);
  P->id = malloc (m * sizeof *P->id);
  for (int h = 0; h < N_HEUR; h++)
    P->ranks[h] = malloc (m * sizeof *P->ranks[h]);
  P->sa = malloc (m * sizeof *P->sa);
  P->sb = malloc (m * sizeof *P->sb);
  P->adj_start = calloc (m + 1, sizeof *P->adj_start);
  uint64_t *ticks = malloc (m * sizeof *ticks);
  RKey *keys = malloc (m * sizeof *keys);
  uint32_t *fill = NULL;
  if (!P->glob || !P->size || !P->len || !P->id || !P->ranks[0] || !P->ranks[1] || !P->ranks[2] || !P->sa || !P->sb || !P->adj_start || !ticks || !keys)
    goto oom;
  memcpy (P->glob, glob, m * sizeof *glob);
  for (uint32_t i = 0; i < m; i++)
    {
      P->size[i] = bufs->buf[glob[i]].rsize;
      P->len[i] = bufs->buf[glob[i]].end - bufs->buf[glob[i]].start;
      P->id[i] = bufs->buf[glob[i]].id;
      ticks[i] = bufs->buf[glob[i]].start;
    }
  /* sections: the distinct start ticks (live bytes peak at a start) */
  uint32_t S = (uint32_t) ml_sort_unique_u64 (ticks, m);
  P->S = S;
  for (uint32_t i = 0; i < m; i++)
    {
      const MlBuffer *b = &bufs->buf[glob[i]];
      P->sa[i] = (uint32_t) ml_lower_bound_u64 (ticks, S, b->start);
      P->sb[i] = (uint32_t) ml_lower_bound_u64 (ticks, S, b->end);
      if (P->size[i] == 0)
        P->sb[i] = P->sa[i];   /* takes no room anywhere */
    }
  /* lower bound of the part */
  {
    uint64_t *live = calloc (S + 1, sizeof *live);
    if (!live)
      goto oom;
    for (uint32_t i = 0; i < m; i++)
      {
        live[P->sa[i]] += P->size[i];
        live[P->sb[i]] -= P->size[i];
      }
    uint64_t run = 0;
    for (uint32_t k = 0; k < S; k++)
      {
        run += live[k];
        live[k] = run;
        if (run > P->lb)
          P->lb = run;
      }
    for (int h = 0; h < N_HEUR; h++)
      {
        for (uint32_t i = 0; i < m; i++)
          {
            const MlBuffer *b = &bufs->buf[glob[i]];
            uint64_t total = 0;
            for (uint32_t k = P->sa[i]; k < P->sb[i]; k++)
              if (live[k] > total)
                total = live[k];
            keys[i] = heur_key (h, P->size[i], b->end - b->start, total, b->id, i);
          }
        qsort (keys, m, sizeof *keys, cmp_rkey);
        for (uint32_t r = 0; r < m; r++)
          P->ranks[h][keys[r].idx] = r;
      }
    P->rank = P->ranks[0];
    free (live);
  }
  /* overlaps (section ranges intersect); buffers are sorted by start, so
   * sa is non-decreasing and a forward scan finds each pair once */
  for (int pass = 0; pass < 2; pass++)
    {
      for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = i + 1; j < m && P->sa[j] < P->sb[i]; j++)
          if (P->sa[j] < P->sb[j])
            {
              if (pass == 0)
                {
                  P->adj_start[i + 1]++;
                  P->adj_start[j + 1]++;
                  P->pairs++;
                }
              else
                {
                  P->adj[fill[i]++] = j;
                  P->adj[fill[j]++] = i;
                }
            }
      if (pass == 0)
        {
          if (P->pairs > EXACT_MAX_PAIRS)
            break;
          for (uint32_t i = 0; i < m; i++)
            P->adj_start[i + 1] += P->adj_start[i];
          P->adj = malloc ((P->adj_start[m] ? P->adj_start[m] : 1) * sizeof *P->adj);
          fill = malloc ((m ? m : 1) * sizeof *fill);
          if (!P->adj || !fill)
            goto oom;
          memcpy (fill, P->adj_start, m * sizeof *fill);
        }
    }
  free (fill);
  free (ticks);
  free (keys);
  return 0;
oom:
  free (ticks);
  free (keys);
  free (fill);
  part_free (P);
  return ML_ENOMEM;
}

typedef struct {
  int      mode;    /* 0 = auto, 1 = fit, 2 = minimize */
  uint64_t nodes;   /* minimise: stop after about this many nodes (0 = none) */
} ExactOptions;

static const char *const exact_keys[] = { "mode", "nodes", NULL };

static int
exact_option (void *user, const char *key, const char *value, MlError *err)
{
  ExactOptions *o = user;
  if (strcmp (key, "mode") == 0)
    {
      if (strcmp (value, "fit") == 0)
        o->mode = 1;
      else if (strcmp (value, "minimize") == 0 || strcmp (value, "minimise") == 0)
        o->mode = 2;
      else
        return ml_error_set (err, ML_EUSAGE, "exact: mode \"%s\" is not fit or minimize", value);
      return 0;
    }
  if (strcmp (key, "nodes") == 0)
    {
      uint64_t v;
      if (ml_parse_u64 (value, strlen (value), &v) < 0 || v == 0)
        return ml_error_set (err, ML_EUSAGE, "exact: nodes=%s is not a positive number", value);
      o->nodes = v;
      return 0;
    }
  return ml_error_set (err, ML_EUSAGE, "exact: unknown option \"%s\" (known: mode=fit|minimize, nodes=N)", key);
}

typedef struct {
  const MlBuffers *bufs;
  Part    *parts;
  uint32_t n_parts;
  Search   s;
} Exact;

static void
exact_free (Exact *x)
{
  for (uint32_t p = 0; p < x->n_parts; p++)
    part_free (&x->parts[p]);
  free (x->parts);
  free (x->s.off); free (x->s.at); free (x->s.placed); free (x->s.unplaced);
  free (x->s.pos); free (x->s.usum); free (x->s.low); free (x->s.save);
  free (x->s.cand); free (x->s.found); free (x->s.scratch); free (x->s.cuts); free (x->s.cutbuf);
  free (x->s.rsave); free (x->s.rkeys);
}

/* Splits at ticks no buffer crosses and sizes the search scratch. */
static int
exact_init (Exact *x, const MlBuffers *bufs, MlError *err)
{
  size_t n = bufs->n;
  memset (x, 0, sizeof *x);
  x->bufs = bufs;
  uint32_t *idx = malloc ((n ? n : 1) * sizeof *idx);
  x->parts = calloc (n ? n : 1, sizeof *x->parts);
  if (!idx || !x->parts)
    goto oom;
  for (size_t i = 0; i < n; i++)
    idx[i] = (uint32_t) i;
  if (ml_sort_indexes_by_key (idx, n, &bufs->buf[0].start, sizeof (MlBuffer)) < 0)
    goto oom;
  uint32_t max_m = 1, max_S = 1;
  size_t max_adj = 1;
  for (size_t i = 0; i < n;)
    {
      uint64_t reach = bufs->buf[idx[i]].end;
      size_t j = i + 1;
      while (j < n && bufs->buf[idx[j]].start < reach)
        {
          if (bufs->buf[idx[j]].end > reach)
            reach = bufs->buf[idx[j]].end;
          j++;
        }
      Part *P = &x->parts[x->n_parts];
      if (part_build (bufs, P, idx + i, (uint32_t) (j - i)) < 0)
        goto oom;
      x->n_parts++;
      if (SEARCHABLE (P))
        {
          if (P->m > max_m) max_m = P->m;
          if (P->S > max_S) max_S = P->S;
          if (P->adj_start[P->m] > max_adj) max_adj = P->adj_start[P->m];
        }
      i = j;
    }
  Search *s = &x->s;
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
  s->rkeys = malloc (max_m * sizeof (RKey));
  if (!s->off || !s->at || !s->found || !s->placed || !s->unplaced || !s->pos || !s->usum
      || !s->low || !s->save || !s->cand || !s->scratch || !s->cuts || !s->cutbuf || !s->rkeys)
    goto oom;
  free (idx);
  return 0;
oom:
  free (idx);
  exact_free (x);
  return ml_error_set (err, ML_ENOMEM, "exact: out of memory preparing %zu buffers", n);
}

static void
commit_part (Exact *x, Part *P, uint64_t *offset, const uint64_t *found, uint64_t peak)
{
  for (uint32_t i = 0; i < P->m; i++)
    offset[P->glob[i]] = found[i];
  P->best = peak;
}

static uint64_t
overall_best (const Exact *x)
{
  uint64_t m = 0;
  for (uint32_t p = 0; p < x->n_parts; p++)
    if (x->parts[p].best > m)
      m = x->parts[p].best;
  return m;
}

/* Tries to make every part fit under @cap by @deadline. Returns R_FOUND
 * (all parts fit; their plans are committed), R_NONE (a part proven not to
 * fit; *bad names it), R_STOP, R_BUDGET (a part ran past @max_budget
 * nodes, 0 = no limit) or R_TOO_BIG. */
static int
fit_all (Exact *x, uint64_t cap, double deadline, uint64_t max_budget, uint64_t *offset, uint32_t *bad)
{
  for (uint32_t p = 0; p < x->n_parts; p++)
    {
      Part *P = &x->parts[p];
      if (P->best <= cap)
        continue;
      if (P->lb > cap)
        {
          *bad = p;
          return R_NONE;
        }
      if (!SEARCHABLE (P))
        return R_TOO_BIG;
      int r = solve_part_rr (&x->s, P, cap, deadline, max_budget);
      if (r == R_FOUND)
        commit_part (x, P, offset, x->s.found, x->s.found_peak);
      else
        {
          if (r == R_NONE)
            *bad = p;
          return r;
        }
    }
  return R_FOUND;
}

typedef struct { uint64_t size, len; uint32_t g; } IisKey;
static int
cmp_iis (const void *a, const void *b)
{
  const IisKey *x = a, *y = b;
  if (x->size != y->size)
    return x->size < y->size ? -1 : 1;
  if (x->len != y->len)
    return x->len < y->len ? -1 : 1;
  return x->g < y->g ? -1 : x->g > y->g;
}

/* An irreducible infeasible subset of part @P under @cap (MiniMalloc's
 * deletion filter): each buffer in turn, smallest first, is left out, and
 * stays out when the rest still provably does not fit. Writes the global
 * indexes of what is left, sorted by start, to @out (P->m) and returns
 * their number; *minimal is false when the clock stopped the filter (the
 * set is then infeasible, but perhaps not minimal). 0 when out of memory. */
static uint32_t
infeasible_subset (Exact *x, const Part *P, uint64_t cap, double deadline, uint32_t *out, bool *minimal)
{
  const MlBuffers *bufs = x->bufs;
  uint32_t m = P->m, n = m;
  IisKey *keys = malloc (m * sizeof *keys);
  uint8_t *in = malloc (m);
  uint32_t *cand = malloc (m * sizeof *cand);
  *minimal = true;
  if (!keys || !in || !cand)
    {
      free (keys), free (in), free (cand);
      return 0;
    }
  for (uint32_t i = 0; i < m; i++)
    {
      keys[i] = (IisKey) { P->size[i], P->len[i], i };
      in[i] = 1;
    }
  qsort (keys, m, sizeof *keys, cmp_iis);
  for (uint32_t t = 0; t < m; t++)
    {
      if (ml_now () >= deadline || x->s.cancelled)
        {
          *minimal = false;
          break;
        }
      in[keys[t].g] = 0;
      uint32_t c = 0;
      for (uint32_t i = 0; i < m; i++)   /* P->glob is sorted by start */
        if (in[i])
          cand[c++] = P->glob[i];
      Part Q;
      int r = R_FOUND;
      if (c > 0)
        {
          if (part_build (bufs, &Q, cand, c) < 0)
            {
              n = 0;
              break;
            }
          /* Q is a subset of P: the search scratch sized for P fits it */
          r = solve_part_rr (&x->s, &Q, cap, deadline, 0);
          part_free (&Q);
        }
      if (r == R_NONE)
        n--;                 /* still infeasible without it: it stays out */
      else
        {
          in[keys[t].g] = 1;
          if (r != R_FOUND)
            {
              *minimal = false;
              break;
            }
        }
    }
  uint32_t k = 0;
  for (uint32_t i = 0; i < m && n; i++)
    if (in[i])
      out[k++] = P->glob[i];
  free (keys), free (in), free (cand);
  return k;
}

/* Names the subset @set (@n buffers) proven infeasible under @cap: in
 * knobs->infeasible when the caller passed one, and in words into @why. */
static int
name_subset (const MlBuffers *bufs, const MlKnobs *knobs, const uint32_t *set, uint32_t n, uint64_t cap,
             bool minimal, char *why, size_t len)
{
  MlInfeasible tmp = { 0 }, *s = knobs->infeasible ? knobs->infeasible : &tmp;
  if (ml_infeasible_set (s, bufs, set, n, cap, minimal) < 0)
    return ML_ENOMEM;
  ml_infeasible_describe (s, bufs, true, why, len);
  ml_infeasible_clear (&tmp);
  return 0;
}

static int
exact_plan (const MlBuffers *bufs, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  ExactOptions opt = { 0 };
  int rc = ml_options_foreach (knobs->options, exact_option, &opt, err);
  if (rc < 0)
    return rc;
  bool fit_mode = opt.mode == 1 || (opt.mode == 0 && knobs->capacity > 0);
  if (fit_mode && knobs->capacity == 0)
    return ml_error_set (err, ML_EUSAGE, "exact: mode=fit needs a capacity (--capacity SIZE)");
  double limit = _ml_time_limit (knobs, 10.0);
  double t0 = ml_now (), deadline = t0 + limit;

  if (fit_mode && knobs->capacity < bufs->lower_bound)
    {
      /* the smallest such set: the largest buffers live at the lower
       * bound's tick until they pass the capacity (without any one of
       * them, the rest are at most the capacity) */
      char why[400] = "";
      uint64_t t = bufs->lower_bound_tick;
      IisKey *live = malloc ((bufs->n ? bufs->n : 1) * sizeof *live);
      uint32_t *set = malloc ((bufs->n ? bufs->n : 1) * sizeof *set);
      if (live && set)
        {
          uint32_t n_live = 0, n_set = 0;
          for (size_t i = 0; i < bufs->n; i++)
            if (bufs->buf[i].start <= t && t < bufs->buf[i].end && bufs->buf[i].rsize)
              live[n_live++] = (IisKey) { bufs->buf[i].rsize, bufs->buf[i].end - bufs->buf[i].start, (uint32_t) i };
          qsort (live, n_live, sizeof *live, cmp_iis);
          uint64_t sum = 0;
          for (uint32_t k = n_live; k-- > 0 && sum <= knobs->capacity;)
            {
              sum += live[k].size;
              set[n_set++] = live[k].g;
            }
          if (name_subset (bufs, knobs, set, n_set, knobs->capacity, true, why, sizeof why) < 0)
            {
              free (live);
              free (set);
              return ml_error_set (err, ML_ENOMEM, "out of memory");
            }
        }
      free (live);
      free (set);
      return ml_error_set (err, ML_EINFEASIBLE,
                           "exact: no plan fits in capacity %" PRIu64 ": %" PRIu64 " bytes are live at tick %" PRIu64
                           " (the lower bound); %s", knobs->capacity, bufs->lower_bound, bufs->lower_bound_tick, why);
    }

  /* the best greedy plan is the starting point */
  uint64_t greedy_peak;
  if ((rc = _ml_greedy_best (bufs, plan->offset, NULL, &greedy_peak, knobs, _ml_user_deadline (knobs), NULL, err)) < 0)
    return rc;
  Exact x;
  if ((rc = exact_init (&x, bufs, err)) < 0)
    return rc;
  x.s.knobs = knobs;
  x.s.t0 = t0;
  x.s.limit = limit;
  x.s.phase = "exact";
  x.s.max_nodes = opt.nodes;
  for (uint32_t p = 0; p < x.n_parts; p++)
    {
      Part *P = &x.parts[p];
      P->best = 0;
      for (uint32_t i = 0; i < P->m; i++)
        {
          uint64_t top = plan->offset[P->glob[i]] + P->size[i];
          if (P->size[i] && top > P->best)
            P->best = top;
        }
    }
  uint64_t lb = bufs->lower_bound;
  char note[256] = "";
  uint32_t bad = 0;
  if (fit_mode)
    {
      uint64_t cap = knobs->capacity;
      int r = fit_all (&x, cap, deadline, 0, plan->offset, &bad);
      if (r == R_NONE)
        {
          Part *P = &x.parts[bad];
          uint32_t *set = malloc (P->m * sizeof *set);
          bool minimal = false;
          uint32_t n_set = set ? infeasible_subset (&x, P, cap, deadline, set, &minimal) : 0;
          char why[400] = "";
          if (n_set && name_subset (bufs, knobs, set, n_set, cap, minimal, why, sizeof why) < 0)
            {
              free (set);
              rc = ml_error_set (err, ML_ENOMEM, "out of memory");
              goto out;
            }
          free (set);
          rc = ml_error_set (err, ML_EINFEASIBLE,
                             "exact: no plan fits in capacity %" PRIu64 " (lower bound %" PRIu64
                             "): %s", cap, lb, why[0] ? why : "the exhaustive search found none");
          goto out;
        }
      if (x.s.oom)
        {
          rc = ml_error_set (err, ML_ENOMEM, "exact: out of memory in the search");
          goto out;
        }
      if (x.s.cancelled)
        {
          rc = ml_error_set (err, ML_ECANCELLED, "exact: cancelled");
          goto out;
        }
      if (r == R_STOP && x.s.out_of_nodes)
        snprintf (note, sizeof note, "node limit (%" PRIu64 ") reached before a plan within capacity %" PRIu64
                  " was found; the plan is the best greedy one", opt.nodes, cap);
      else if (r == R_STOP)
        snprintf (note, sizeof note, "time limit (%.3g s) reached before a plan within capacity %" PRIu64
                  " was found; the plan is the best greedy one", limit, cap);
      plan->proven_lb = lb;
      plan->optimal = overall_best (&x) == lb;
    }
  else
    {
      /* minimise: a binary search over capacities with the fit search.
       * Every peak of a canonical plan is a sum of sizes, so a multiple of
       * their gcd g; the optimum lies in [proven, hi], proven the bound
       * (raised past each capacity a probe proves infeasible), hi the best
       * plan (lowered by each probe that finds one). A probe runs each
       * static order once with a node budget; one that runs out says
       * nothing about its capacity, so the round goes on above it (more
       * capacity is easier to fit). When a round's interval is empty the
       * budget doubles and the next round bisects [proven, hi) again. The
       * fit search's cost is heavy-tailed and erratic in the capacity (on
       * J only 1029120 and 1032192 of the 15 capacities below 1032193 fit
       * within 6 million nodes), so many capacities get a small budget
       * before any gets a large one. The schedule depends on node counts
       * only: with nodes=N the result does not depend on the machine's
       * load. The first probe is the bound itself, cheaply. */
      uint64_t g = 0;
      for (size_t i = 0; i < bufs->n; i++)
        g = gcd_u64 (g, bufs->buf[i].rsize);
      if (g == 0)
        g = 1;
      uint64_t hi = overall_best (&x), proven = (lb + g - 1) / g * g;
      bool timed_out = false, too_big = false;
      for (uint64_t budget = EXACT_BUDGET0; !x.s.cancelled && !too_big && !timed_out && proven < hi;
           budget *= 2)
        {
          uint64_t rlo = proven;   /* this round's lowest capacity still open */
          bool first = budget == EXACT_BUDGET0;
          while (rlo < hi)
            {
              /* the middle of [rlo, hi - g], a multiple of g; the bound
               * itself on the first probe */
              uint64_t c = first ? rlo : rlo + (hi - g - rlo) / g / 2 * g;
              first = false;
              int r = fit_all (&x, c, deadline, budget, plan->offset, &bad);
              if (r == R_FOUND)
                hi = overall_best (&x);
              else if (r == R_NONE)
                rlo = proven = c + g;
              else if (r == R_BUDGET)
                rlo = c + g;
              else
                {
                  if (r == R_TOO_BIG)
                    too_big = true;   /* a part too large to search holds the peak */
                  else
                    timed_out = true;
                  break;
                }
            }
        }
      if (!x.s.out_of_nodes && ml_now () >= deadline && proven < hi)
        timed_out = true;
      if (x.s.oom)
        {
          rc = ml_error_set (err, ML_ENOMEM, "exact: out of memory in the search");
          goto out;
        }
      if (x.s.cancelled)
        {
          rc = ml_error_set (err, ML_ECANCELLED, "exact: cancelled");
          goto out;
        }
      hi = overall_best (&x);
      if (proven >= hi)
        proven = hi;
      plan->proven_lb = proven;
      plan->optimal = proven == hi;
      if (!plan->optimal && x.s.out_of_nodes)
        snprintf (note, sizeof note, "node limit (%" PRIu64 ") reached: best peak %" PRIu64 ", proven lower bound %" PRIu64
                  " (greedy %" PRIu64 ")", opt.nodes, hi, proven, greedy_peak);
      else if (!plan->optimal && timed_out)
        snprintf (note, sizeof note, "time limit (%.3g s) reached: best peak %" PRIu64 ", proven lower bound %" PRIu64
                  " (greedy %" PRIu64 ")", limit, hi, proven, greedy_peak);

    }
  for (uint32_t p = 0; p < x.n_parts; p++)
    if (!SEARCHABLE (&x.parts[p]))
      {
        size_t len = strlen (note);
        snprintf (note + len, sizeof note - len, "%sa part of %" PRIu32 " buffers with %" PRIu64
                  " overlapping pairs is too large to search; it keeps its greedy plan",
                  len ? "; " : "", x.parts[p].m, x.parts[p].pairs);
        break;
      }
  if (note[0] && ml_plan_set_note (plan, note) < 0)
    rc = ml_error_set (err, ML_ENOMEM, "out of memory");
  plan->nodes_visited = x.s.nodes;
  plan->backtracks = x.s.backtracks;
out:
  exact_free (&x);
  return rc;
}

const MlStrategy ml_strategy_exact = {
  .name = "exact",
  .summary = "offline: branch and bound over canonical placements (MiniMalloc style); anytime, optimal when it finishes",
  .kind = ML_STRATEGY_OFFLINE,
  .flags = ML_STRATEGY_PROVES_OPTIMAL,
  .knobs = ML_KNOB_TIME_LIMIT | ML_KNOB_OPTIONS,
  .options = exact_keys,
  .plan = exact_plan,
};
