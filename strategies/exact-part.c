/* exact-part.c — the exact planner's view of the instance (exact.h):
 * parts no buffer crosses, each with its sections (the distinct start
 * ticks), its overlaps, its lower bound and MiniMalloc's three static
 * orders (WAT, TAW, TWA); and the re-ranking of a piece the search splits
 * off. */
#include <stdlib.h>
#include <string.h>

#include "sim/base/sort.h"
#include "strategies/exact-private.h"

void
_ml_exact_part_free (MlExactPart *P)
{
  free (P->glob); free (P->size); free (P->len); free (P->id);
  for (int h = 0; h < N_HEUR; h++)
    free (P->ranks[h]);
  free (P->sa); free (P->sb);
  free (P->adj_start); free (P->adj); free (P->twin);
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

size_t
_ml_exact_rank_key_size (void)
{
  return sizeof (RKey);
}

/* A piece of a split is a problem of its own: its buffers are ranked
 * afresh by the current heuristic with the section totals of what is
 * left unplaced (the old ranks go on s->rsave). False when out of memory. */
bool
_ml_exact_rerank (MlExactSearch *s, const MlExactScope *sc)
{
  MlExactPart *P = s->P;
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

/* Sections: the distinct start ticks of the part (live bytes peak at a
 * start); each buffer's section range [sa, sb), empty for a zero-size
 * buffer (it takes no room anywhere). @ticks: m of scratch. */
static void
part_sections (const MlBuffers *bufs, MlExactPart *P, uint64_t *ticks)
{
  uint32_t m = P->m;
  for (uint32_t i = 0; i < m; i++)
    ticks[i] = bufs->buf[P->glob[i]].start;
  uint32_t S = (uint32_t) ml_sort_unique_u64 (ticks, m);
  P->S = S;
  for (uint32_t i = 0; i < m; i++)
    {
      const MlBuffer *b = &bufs->buf[P->glob[i]];
      P->sa[i] = (uint32_t) ml_lower_bound_u64 (ticks, S, b->start);
      P->sb[i] = (uint32_t) ml_lower_bound_u64 (ticks, S, b->end);
      if (P->size[i] == 0)
        P->sb[i] = P->sa[i];
    }
}

/* With @seed (not 0), about 3 % of the neighbouring pairs of a sorted
 * order swap places, each draw of a xorshift from the seed: the search
 * stays complete under any static order, so this only changes which
 * plans it meets first (exact's seed=N, a restart). */
static void
perturb (RKey *keys, uint32_t m, uint64_t *state)
{
  for (uint32_t r = 0; r + 1 < m; r++)
    {
      *state ^= *state << 13;
      *state ^= *state >> 7;
      *state ^= *state << 17;
      if (*state % 100 < 3)
        {
          RKey t = keys[r];
          keys[r] = keys[r + 1];
          keys[r + 1] = t;
        }
    }
}

/* The part's lower bound (the most bytes live in one section) and its
 * three static orders, each buffer's section total being the most bytes
 * live in one of its sections, perturbed by @seed (see perturb). @keys:
 * m of scratch. */
static int
part_ranks (const MlBuffers *bufs, MlExactPart *P, RKey *keys, uint64_t seed)
{
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  uint32_t m = P->m, S = P->S;
  uint64_t *live = calloc (S + 1, sizeof *live);
  if (!live)
    return ML_ENOMEM;
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
          const MlBuffer *b = &bufs->buf[P->glob[i]];
          uint64_t total = 0;
          for (uint32_t k = P->sa[i]; k < P->sb[i]; k++)
            if (live[k] > total)
              total = live[k];
          keys[i] = heur_key (h, P->size[i], b->end - b->start, total, b->id, i);
        }
      qsort (keys, m, sizeof *keys, cmp_rkey);
      if (seed)
        perturb (keys, m, &state);
      for (uint32_t r = 0; r < m; r++)
        P->ranks[h][keys[r].idx] = r;
    }
  P->rank = P->ranks[0];
  free (live);
  return 0;
}

/* The overlaps (section ranges intersect) as adjacency lists; buffers are
 * sorted by start, so sa is non-decreasing and a forward scan finds each
 * pair once. A part with more than EXACT_MAX_PAIRS pairs gets only the
 * count (it will not be searched). */
static int
part_overlaps (MlExactPart *P)
{
  uint32_t m = P->m, *fill = NULL;
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
            {
              free (fill);
              return ML_ENOMEM;
            }
          memcpy (fill, P->adj_start, m * sizeof *fill);
        }
    }
  free (fill);
  return 0;
}

/* Twins: buffers with the same lifetime and size. Their static and
 * re-ranked keys tie up to the id, so every order ranks them by (id,
 * index); each buffer's previous twin in that order goes to P->twin.
 * @keys: m of scratch. */
static void
part_twins (const MlBuffers *bufs, MlExactPart *P, RKey *keys)
{
  uint32_t m = P->m;
  for (uint32_t i = 0; i < m; i++)
    {
      const MlBuffer *b = &bufs->buf[P->glob[i]];
      keys[i] = (RKey) { b->start, b->end, P->size[i], b->id, i };
      P->twin[i] = UINT32_MAX;
    }
  qsort (keys, m, sizeof *keys, cmp_rkey);
  for (uint32_t r = 1; r < m; r++)
    if (keys[r].k1 == keys[r - 1].k1 && keys[r].k2 == keys[r - 1].k2 && keys[r].k3 == keys[r - 1].k3 && keys[r].k3)
      P->twin[keys[r].idx] = keys[r - 1].idx;
}

int
_ml_exact_part_build (const MlBuffers *bufs, MlExactPart *P, const uint32_t *glob, uint32_t m, uint64_t seed)
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
  P->twin = malloc (m * sizeof *P->twin);
  uint64_t *ticks = malloc (m * sizeof *ticks);
  RKey *keys = malloc (m * sizeof *keys);
  int rc = ML_ENOMEM;
  if (P->glob && P->size && P->len && P->id && P->ranks[0] && P->ranks[1] && P->ranks[2] && P->sa && P->sb
      && P->adj_start && P->twin && ticks && keys)
    {
      memcpy (P->glob, glob, m * sizeof *glob);
      for (uint32_t i = 0; i < m; i++)
        {
          P->size[i] = bufs->buf[glob[i]].rsize;
          P->len[i] = bufs->buf[glob[i]].end - bufs->buf[glob[i]].start;
          P->id[i] = bufs->buf[glob[i]].id;
        }
      part_sections (bufs, P, ticks);
      part_twins (bufs, P, keys);
      if ((rc = part_ranks (bufs, P, keys, seed)) == 0)
        rc = part_overlaps (P);
    }
  free (ticks);
  free (keys);
  if (rc < 0)
    _ml_exact_part_free (P);
  return rc;
}

int
_ml_exact_split (const MlBuffers *bufs, MlExactPart *parts, uint32_t *n_parts, uint64_t seed)
{
  size_t n = bufs->n;
  int rc = 0;
  *n_parts = 0;
  uint32_t *idx = malloc ((n ? n : 1) * sizeof *idx);
  if (!idx)
    return ML_ENOMEM;
  for (size_t i = 0; i < n; i++)
    idx[i] = (uint32_t) i;
  if (ml_sort_indexes_by_key (idx, n, &bufs->buf[0].start, sizeof (MlBuffer)) < 0)
    rc = ML_ENOMEM;
  for (size_t i = 0; i < n && rc == 0;)
    {
      uint64_t reach = bufs->buf[idx[i]].end;
      size_t j = i + 1;
      while (j < n && bufs->buf[idx[j]].start < reach)
        {
          if (bufs->buf[idx[j]].end > reach)
            reach = bufs->buf[idx[j]].end;
          j++;
        }
      if ((rc = _ml_exact_part_build (bufs, &parts[*n_parts], idx + i, (uint32_t) (j - i), seed)) == 0)
        ++*n_parts;
      i = j;
    }
  free (idx);
  return rc;
}
