/* ilp-model.c — the ilp planner's three MIP models (ilp.h says what each
 * one is; docs/strategies.md when to pick which). */
#include "strategies/ilp.h"

#ifdef ML_HAVE_GLPK

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "strategies/ilp-private.h"

const char *
_ml_ilp_model_name (MlIlpModel model)
{
  return model == ML_ILP_ORDER ? "order" : model == ML_ILP_TIME ? "time" : "bigm";
}

/* The matrix as GLPK loads it: entries (ia[k], ja[k], ar[k]), 1-based. */
typedef struct {
  int    *ia, *ja;
  double *ar;
  size_t  n, cap;
  bool    failed;
} Trip;

static void
put (Trip *t, int r, int c, double v)
{
  if (t->failed)
    return;
  if (t->n + 1 >= t->cap)
    {
      size_t cap = t->cap ? 2 * t->cap : 4096;
      int *ia = realloc (t->ia, cap * sizeof *ia);
      if (ia)
        t->ia = ia;
      int *ja = ia ? realloc (t->ja, cap * sizeof *ja) : NULL;
      if (ja)
        t->ja = ja;
      double *ar = ja ? realloc (t->ar, cap * sizeof *ar) : NULL;
      if (!ar)
        {
          t->failed = true;
          return;
        }
      t->ar = ar;
      t->cap = cap;
    }
  t->n++;
  t->ia[t->n] = r;
  t->ja[t->n] = c;
  t->ar[t->n] = v;
}

/* Adds a row with bounds (type, lo, hi) and returns its number. */
static int
add_row (glp_prob *lp, int type, double lo, double hi)
{
  int r = glp_add_rows (lp, 1);
  glp_set_row_bnds (lp, r, type, lo, hi);
  return r;
}

static double
size_of (const Ilp *x, size_t a)
{
  return (double) (x->bufs->buf[x->idx[a]].rsize / x->g);
}

static const MlBuffer *
buf_of (const Ilp *x, size_t a)
{
  return &x->bufs->buf[x->idx[a]];
}

/* The pair (a, b), a < b, overlapping: its number. */
static size_t
pair_of (const Ilp *x, size_t a, size_t b)
{
  return x->first[a] + (b - a - 1);
}

/* The columns every model has: an offset x_a in [0, M - size_a] per
 * buffer, the peak z in [lower bound, M] (the objective); each row
 * z - x_a >= size_a. */
static void
common_part (Ilp *x, Trip *t)
{
  glp_prob *lp = x->lp;
  uint64_t g = x->g, lb = x->bufs->lower_bound;
  double M = x->M;
  char name[64];
  x->zc = (int) x->m + 1;
  glp_add_cols (lp, (int) (x->m + 1));
  for (size_t a = 0; a < x->m; a++)
    {
      snprintf (name, sizeof name, "x%" PRIu64, buf_of (x, a)->id);
      glp_set_col_name (lp, (int) a + 1, name);
      glp_set_col_bnds (lp, (int) a + 1, GLP_DB, 0.0, M - size_of (x, a));
      if (M - size_of (x, a) <= 0)
        glp_set_col_bnds (lp, (int) a + 1, GLP_FX, 0.0, 0.0);
    }
  glp_set_col_name (lp, x->zc, "z");
  glp_set_col_bnds (lp, x->zc, GLP_DB, (double) ((lb + g - 1) / g), M);
  if ((double) ((lb + g - 1) / g) >= M)
    glp_set_col_bnds (lp, x->zc, GLP_FX, M, M);
  glp_set_obj_coef (lp, x->zc, 1.0);
  for (size_t a = 0; a < x->m; a++)
    {
      int r = add_row (lp, GLP_LO, size_of (x, a), 0.0);
      snprintf (name, sizeof name, "peak_%" PRIu64, buf_of (x, a)->id);
      glp_set_row_name (lp, r, name);
      put (t, r, x->zc, 1.0);
      put (t, r, (int) a + 1, -1.0);
    }
  x->cols = x->m + 1;
}

/* A binary y_e per overlapping pair (y_e = 1: pa[e] below pb[e]) and the
 * big-M rows x_i + s_i <= x_j + M (1 - y), x_j + s_j <= x_i + M y. */
static void
pair_part (Ilp *x, Trip *t)
{
  glp_prob *lp = x->lp;
  double M = x->M;
  char name[64];
  x->ycol = (int) x->cols + 1;
  if (x->pairs)
    glp_add_cols (lp, (int) x->pairs);
  for (size_t e = 0; e < x->pairs; e++)
    {
      int c = x->ycol + (int) e;
      snprintf (name, sizeof name, "y%" PRIu64 "_%" PRIu64, buf_of (x, x->pa[e])->id, buf_of (x, x->pb[e])->id);
      glp_set_col_name (lp, c, name);
      glp_set_col_kind (lp, c, GLP_BV);
    }
  for (size_t e = 0; e < x->pairs; e++)
    {
      int xi = (int) x->pa[e] + 1, xj = (int) x->pb[e] + 1, y = x->ycol + (int) e;
      double si = size_of (x, x->pa[e]), sj = size_of (x, x->pb[e]);
      /* x_i - x_j + M y <= M - s_i */
      int r = add_row (lp, GLP_UP, 0.0, M - si);
      snprintf (name, sizeof name, "below_%zu", e);
      glp_set_row_name (lp, r, name);
      put (t, r, xi, 1.0); put (t, r, xj, -1.0); put (t, r, y, M);
      /* x_j - x_i - M y <= -s_j */
      r = add_row (lp, GLP_UP, 0.0, -sj);
      snprintf (name, sizeof name, "above_%zu", e);
      glp_set_row_name (lp, r, name);
      put (t, r, xj, 1.0); put (t, r, xi, -1.0); put (t, r, y, -M);
    }
  x->cols += x->pairs;
  x->binaries = x->pairs;
}

/* The maximal sets of buffers live at one time (the maximal cliques of an
 * interval graph: the buffers live at a start after which one of them
 * ends before the next start). Members of clique k: mem[at[k] ..
 * at[k + 1] - 1], ascending. */
typedef struct {
  uint32_t *mem;
  size_t   *at;
  size_t    n, members;
} Cliques;

static void
cliques_free (Cliques *c)
{
  free (c->mem); free (c->at);
}

static int
cliques_find (const Ilp *x, Cliques *c)
{
  size_t cap = 1024;
  c->mem = malloc (cap * sizeof *c->mem);
  c->at = malloc ((x->m + 1) * sizeof *c->at);
  if (!c->mem || !c->at)
    return ML_ENOMEM;
  c->at[0] = 0;
  for (size_t q = 0; q < x->m;)
    {
      uint64_t t = buf_of (x, q)->start;
      while (q < x->m && buf_of (x, q)->start == t)
        q++;
      uint64_t next = q < x->m ? buf_of (x, q)->start : UINT64_MAX;
      bool maximal = q == x->m;
      for (size_t a = 0; a < q && !maximal; a++)
        maximal = buf_of (x, a)->end > t && buf_of (x, a)->end <= next;
      if (!maximal)
        continue;
      for (size_t a = 0; a < q; a++)
        if (buf_of (x, a)->end > t)
          {
            if (c->members == cap)
              {
                uint32_t *p = realloc (c->mem, 2 * cap * sizeof *p);
                if (!p)
                  return ML_ENOMEM;
                c->mem = p;
                cap *= 2;
              }
            c->mem[c->members++] = (uint32_t) a;
          }
      c->at[++c->n] = c->members;
    }
  return 0;
}

static bool
twins (const Ilp *x, size_t a, size_t b)
{
  const MlBuffer *p = buf_of (x, a), *q = buf_of (x, b);
  return p->rsize == q->rsize && p->start == q->start && p->end == q->end;
}

/* Symmetry: buffers with the same size and lifetime are interchangeable,
 * so twins keep the order of their columns (y = 1); and a plan turned
 * upside down is as good, so the first pair of two buffers that have no
 * twin keeps one order too. */
static void
fix_symmetry (Ilp *x)
{
  bool mirror_done = false;
  x->mirror = x->pairs;
  for (size_t e = 0; e < x->pairs; e++)
    {
      size_t a = x->pa[e], b = x->pb[e];
      bool fix = twins (x, a, b);
      if (!fix && !mirror_done)
        {
          bool alone = true;
          for (size_t k = 0; k < x->m && alone; k++)
            alone = (k == a || !twins (x, k, a)) && (k == b || !twins (x, k, b));
          fix = mirror_done = alone;
          if (alone)
            x->mirror = e;
        }
      if (fix)
        {
          glp_set_col_bnds (x->lp, x->ycol + (int) e, GLP_FX, 1.0, 1.0);
          x->fixed++;
        }
    }
}

/* 1 when j lies below i for pair (min, max) of them: the term is
 * coef * y + konst. */
static void
below_term (const Ilp *x, size_t i, size_t j, int *col, double *coef, double *konst)
{
  if (j < i)
    {
      *col = x->ycol + (int) pair_of (x, j, i);
      *coef = 1.0;
      *konst = 0.0;
    }
  else
    {
      *col = x->ycol + (int) pair_of (x, i, j);
      *coef = -1.0;
      *konst = 1.0;
    }
}

/* Per clique K and member i: the members below i lie under x_i, those
 * above it between x_i + s_i and z:
 *     x_i >= sum_{j in K below i} s_j,  z - x_i >= s_i + sum_{j above i} s_j. */
static void
clique_rows (Ilp *x, const Cliques *c, Trip *t)
{
  glp_prob *lp = x->lp;
  for (size_t k = 0; k < c->n; k++)
    for (size_t p = c->at[k]; p < c->at[k + 1]; p++)
      {
        size_t i = c->mem[p];
        double lo_below = 0.0, lo_above = size_of (x, i);
        int rb = add_row (lp, GLP_LO, 0.0, 0.0), ra = add_row (lp, GLP_LO, 0.0, 0.0);
        put (t, rb, (int) i + 1, 1.0);
        put (t, ra, x->zc, 1.0);
        put (t, ra, (int) i + 1, -1.0);
        for (size_t q = c->at[k]; q < c->at[k + 1]; q++)
          {
            size_t j = c->mem[q];
            if (j == i)
              continue;
            int col;
            double coef, konst, s = size_of (x, j);
            below_term (x, i, j, &col, &coef, &konst);
            /* below: x_i - s (coef y + konst) >= 0 */
            put (t, rb, col, -s * coef);
            lo_below += s * konst;
            /* above: z - x_i - s (1 - coef y - konst) >= s_i */
            put (t, ra, col, s * coef);
            lo_above += s * (1.0 - konst);
          }
        glp_set_row_bnds (lp, rb, GLP_LO, lo_below, 0.0);
        glp_set_row_bnds (lp, ra, GLP_LO, lo_above, 0.0);
      }
}

/* Per three buffers live at one time, a < b < c: their order is
 * transitive, 0 <= y_ab + y_bc - y_ac <= 1. Stops at @limit rows. */
static void
transitive_rows (Ilp *x, Trip *t, size_t limit)
{
  size_t rows = 0;
  for (size_t e = 0; e < x->pairs && rows < limit; e++)
    {
      size_t a = x->pa[e], b = x->pb[e];
      uint64_t end = buf_of (x, a)->end < buf_of (x, b)->end ? buf_of (x, a)->end : buf_of (x, b)->end;
      for (size_t c = b + 1; c < x->m && buf_of (x, c)->start < end && rows < limit; c++, rows++)
        {
          int r = add_row (x->lp, GLP_DB, 0.0, 1.0);
          put (t, r, x->ycol + (int) e, 1.0);
          put (t, r, x->ycol + (int) pair_of (x, b, c), 1.0);
          put (t, r, x->ycol + (int) pair_of (x, a, c), -1.0);
        }
    }
}

/* The time model's columns after z: X[a][o] = 1 when x_a <= o, for o in
 * 0 .. M - s_a - 1 (at M - s_a it is 1: every buffer fits below M); then
 * h_u in [0, 1] for u in 0 .. M - 1: 1 when address unit u is in use. */
static void
time_columns (Ilp *x)
{
  size_t add = 0, units = (size_t) x->M;
  for (size_t a = 0; a < x->m; a++)
    add += (size_t) (x->M - size_of (x, a));
  glp_add_cols (x->lp, (int) (add + units));
  int c = (int) x->cols + 1;
  for (size_t a = 0; a < x->m; a++)
    {
      x->tcol[a] = c;
      for (size_t o = 0; o < (size_t) (x->M - size_of (x, a)); o++, c++)
        glp_set_col_kind (x->lp, c, GLP_BV);
    }
  x->hcol = c;
  for (size_t u = 0; u < units; u++)
    glp_set_col_bnds (x->lp, c + (int) u, GLP_DB, 0.0, 1.0);
  x->cols += add + units;
  x->binaries = add;
}

/* X[a][v] as a column, or the constant 0 (v < 0) / 1 (v >= M - s_a):
 * returns the column, 0 for a constant (*one tells which). */
static int
time_col (const Ilp *x, size_t a, int64_t v, bool *one)
{
  int64_t top = (int64_t) (x->M - size_of (x, a));
  *one = v >= top;
  return v < 0 || v >= top ? 0 : x->tcol[a] + (int) v;
}

/* The time model's rows: x_a + sum_o X[a][o] = M - s_a; X[a][o] <=
 * X[a][o + 1]; the units in use from the bottom, h_u >= h_{u + 1}, and
 * z >= sum_u h_u; per clique K and address unit u, at most one member
 * covers u, and only a unit in use: sum_{a in K} X[a][u] - X[a][u - s_a]
 * <= h_u. The last rows make the relaxation's bound at least the live
 * bytes of every clique. */
static void
time_rows (Ilp *x, const Cliques *c, Trip *t)
{
  glp_prob *lp = x->lp;
  for (size_t a = 0; a < x->m; a++)
    {
      int64_t top = (int64_t) (x->M - size_of (x, a));
      int r = add_row (lp, GLP_FX, (double) top, (double) top);
      put (t, r, (int) a + 1, 1.0);
      for (int64_t o = 0; o < top; o++)
        put (t, r, x->tcol[a] + (int) o, 1.0);
      for (int64_t o = 0; o + 1 < top; o++)
        {
          r = add_row (lp, GLP_UP, 0.0, 0.0);
          put (t, r, x->tcol[a] + (int) o, 1.0);
          put (t, r, x->tcol[a] + (int) o + 1, -1.0);
        }
    }
  int rz = add_row (lp, GLP_LO, 0.0, 0.0);
  put (t, rz, x->zc, 1.0);
  for (int64_t u = 0; u < (int64_t) x->M; u++)
    {
      put (t, rz, x->hcol + (int) u, -1.0);
      if (u + 1 < (int64_t) x->M)
        {
          int r = add_row (lp, GLP_LO, 0.0, 0.0);
          put (t, r, x->hcol + (int) u, 1.0);
          put (t, r, x->hcol + (int) u + 1, -1.0);
        }
    }
  for (size_t k = 0; k < c->n; k++)
    for (int64_t u = 0; u < (int64_t) x->M; u++)
      {
        int r = add_row (lp, GLP_UP, 0.0, 0.0);
        double konst = 0.0;
        put (t, r, x->hcol + (int) u, -1.0);
        for (size_t p = c->at[k]; p < c->at[k + 1]; p++)
          {
            size_t a = c->mem[p];
            bool one;
            int col = time_col (x, a, u, &one);
            if (col)
              put (t, r, col, 1.0);
            konst += one;
            col = time_col (x, a, u - (int64_t) size_of (x, a), &one);
            if (col)
              put (t, r, col, -1.0);
            konst -= one;
          }
        glp_set_row_bnds (lp, r, GLP_UP, 0.0, -konst);
      }
}

/* The matrix entries of the time model (columns, links, monotone rows,
 * cover rows: about 2 per cover term). */
static size_t
time_nonzeros (const Ilp *x, const Cliques *c)
{
  size_t nz = 2 * x->m;
  for (size_t a = 0; a < x->m; a++)
    nz += 3 * (size_t) (x->M - size_of (x, a));
  return nz + 3 * (size_t) x->M + (2 * c->members + c->n) * (size_t) x->M;
}

/* The clique rows' matrix entries: 2 |K|^2 a clique. */
static size_t
clique_nonzeros (const Cliques *c)
{
  size_t nz = 0;
  for (size_t k = 0; k < c->n; k++)
    nz += 2 * (c->at[k + 1] - c->at[k]) * (c->at[k + 1] - c->at[k]);
  return nz;
}

int
_ml_ilp_build (Ilp *x, uint64_t greedy_peak, size_t max_nonzeros, bool *too_big)
{
  Trip t = { 0 };
  Cliques c = { 0 };
  int rc = 0;
  *too_big = false;
  x->M = (double) (greedy_peak / x->g);
  if (x->model != ML_ILP_BIGM && cliques_find (x, &c) < 0)
    rc = ML_ENOMEM;
  if (rc == 0 && ((x->model == ML_ILP_TIME && time_nonzeros (x, &c) > max_nonzeros)
                  || (x->model == ML_ILP_ORDER && clique_nonzeros (&c) > max_nonzeros)))
    *too_big = true, rc = ML_EUNSUPPORTED;
  if (rc == 0 && x->model == ML_ILP_TIME && !(x->tcol = malloc ((x->m ? x->m : 1) * sizeof *x->tcol)))
    rc = ML_ENOMEM;
  if (rc == 0)
    {
      glp_term_out (GLP_OFF);
      x->lp = glp_create_prob ();
      glp_set_prob_name (x->lp, "memlens_dsa");
      glp_set_obj_name (x->lp, "peak");
      glp_set_obj_dir (x->lp, GLP_MIN);
      common_part (x, &t);
      if (x->model == ML_ILP_TIME)
        {
          time_columns (x);
          time_rows (x, &c, &t);
        }
      else
        pair_part (x, &t);
      if (x->model == ML_ILP_ORDER)
        {
          fix_symmetry (x);
          clique_rows (x, &c, &t);
          transitive_rows (x, &t, max_nonzeros / 3);
        }
      if (t.failed)
        rc = ML_ENOMEM;
      else
        glp_load_matrix (x->lp, (int) t.n, t.ia, t.ja, t.ar);
    }
  free (t.ia); free (t.ja); free (t.ar);
  cliques_free (&c);
  return rc;
}

/* The plan in model units made to keep the order model's fixed pairs:
 * turned upside down when the mirror pair is the other way round, twins'
 * offsets handed out in the order of their columns. */
static void
start_offsets (const Ilp *x, const uint64_t *offset, double *off)
{
  for (size_t a = 0; a < x->m; a++)
    off[a] = (double) (offset[x->idx[a]] / x->g);
  if (x->model != ML_ILP_ORDER)
    return;
  if (x->mirror < x->pairs && off[x->pa[x->mirror]] > off[x->pb[x->mirror]])
    for (size_t a = 0; a < x->m; a++)
      off[a] = x->M - size_of (x, a) - off[a];
  /* twins: a simple exchange sort within each class (classes are small) */
  for (size_t a = 0; a < x->m; a++)
    for (size_t b = a + 1; b < x->m && buf_of (x, b)->start == buf_of (x, a)->start; b++)
      if (twins (x, a, b) && off[b] < off[a])
        {
          double t = off[a];
          off[a] = off[b];
          off[b] = t;
        }
}

void
_ml_ilp_start (const Ilp *x, const uint64_t *offset, double *start)
{
  start_offsets (x, offset, start + 1);
  start[x->zc] = x->M;
  if (x->model != ML_ILP_TIME)
    for (size_t e = 0; e < x->pairs; e++)
      start[x->ycol + e] = start[x->pa[e] + 1] < start[x->pb[e] + 1] ? 1.0 : 0.0;
  else
    for (size_t a = 0; a < x->m; a++)
      for (int64_t o = 0; o < (int64_t) (x->M - size_of (x, a)); o++)
        start[x->tcol[a] + o] = (double) o >= start[a + 1] ? 1.0 : 0.0;
  if (x->model == ML_ILP_TIME)
    for (size_t u = 0; u < (size_t) x->M; u++)
      start[x->hcol + u] = 1.0;
}

#endif /* ML_HAVE_GLPK */
