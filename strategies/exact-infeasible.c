/* exact-infeasible.c — why no plan fits (exact.h, mode=fit): the buffers
 * that alone cannot fit and fit once any one of them is left out, named
 * in the error and in knobs->infeasible (sim/infeasible.h). */
#include <inttypes.h>
#include <stdlib.h>

#include "sim/infeasible.h"
#include "sim/sim.h"
#include "strategies/exact-private.h"

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
infeasible_subset (const MlBuffers *bufs, MlExactSearch *s, const MlExactPart *P, uint64_t cap, double deadline,
                   uint32_t *out, bool *minimal)
{
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
      if (ml_now () >= deadline || s->cancelled)
        {
          *minimal = false;
          break;
        }
      in[keys[t].g] = 0;
      uint32_t c = 0;
      for (uint32_t i = 0; i < m; i++)   /* P->glob is sorted by start */
        if (in[i])
          cand[c++] = P->glob[i];
      MlExactPart Q;
      int r = R_FOUND;
      if (c > 0)
        {
          if (_ml_exact_part_build (bufs, &Q, cand, c, 0) < 0)
            {
              n = 0;
              break;
            }
          /* Q is a subset of P: the search scratch sized for P fits it */
          r = _ml_exact_solve (s, &Q, cap, deadline, 0);
          _ml_exact_part_free (&Q);
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

int
_ml_exact_refuse_part (const MlBuffers *bufs, MlExactSearch *s, const MlExactPart *P,
                       uint64_t cap, double deadline, const MlKnobs *knobs, MlError *err)
{
  uint32_t *set = malloc (P->m * sizeof *set);
  bool minimal = false;
  uint32_t n_set = set ? infeasible_subset (bufs, s, P, cap, deadline, set, &minimal) : 0;
  char why[400] = "";
  if (n_set && name_subset (bufs, knobs, set, n_set, cap, minimal, why, sizeof why) < 0)
    {
      free (set);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  free (set);
  return ml_error_set (err, ML_EINFEASIBLE,
                       "exact: no plan fits in capacity %" PRIu64 " (lower bound %" PRIu64
                       "): %s", cap, bufs->lower_bound, why[0] ? why : "the exhaustive search found none");
}

int
_ml_exact_refuse_below_bound (const MlBuffers *bufs, const MlKnobs *knobs, MlError *err)
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
