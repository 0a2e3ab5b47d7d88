#include "strategies/ilp.h"

#ifdef ML_HAVE_GLPK

#include <errno.h>
#include <glpk.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/sim.h"
#include "sim/base/sort.h"
#include "strategies/planner-private.h"

typedef struct {
  const char *write_model;
  uint64_t    max_pairs;
  char        buf[4096];
} IlpOptions;

static const char *const ilp_keys[] = { "write-model", "max-pairs", NULL };

static int
ilp_option (void *user, const char *key, const char *value, MlError *err)
{
  IlpOptions *o = user;
  if (strcmp (key, "write-model") == 0 || strcmp (key, "write_model") == 0)
    {
      snprintf (o->buf, sizeof o->buf, "%s", value);
      o->write_model = o->buf;
      return 0;
    }
  if (strcmp (key, "max-pairs") == 0 || strcmp (key, "max_pairs") == 0)
    {
      char *end;
      unsigned long long v = strtoull (value, &end, 10);
      if (!*value || *end)
        return ml_error_set (err, ML_EUSAGE, "ilp: max-pairs \"%s\" is not a count", value);
      o->max_pairs = v;
      return 0;
    }
  return ml_error_set (err, ML_EUSAGE, "ilp: unknown option \"%s\" (known: write-model=FILE.lp|FILE.mps, max-pairs=N)", key);
}

static uint64_t
gcd64 (uint64_t a, uint64_t b)
{
  while (b)
    {
      uint64_t t = a % b;
      a = b;
      b = t;
    }
  return a;
}

typedef struct {
  const MlKnobs *knobs;
  const double  *start;     /* heuristic solution, 1-based */
  bool           given;
  double         bound;     /* best bound seen */
  double         t0, limit;
} Cb;

static void
callback (glp_tree *tree, void *info)
{
  Cb *cb = info;
  if (_ml_cancelled (cb->knobs))
    {
      glp_ios_terminate (tree);
      return;
    }
  if (glp_ios_reason (tree) == GLP_IHEUR && !cb->given && cb->start)
    {
      cb->given = true;
      glp_ios_heur_sol (tree, cb->start);
    }
  int best = glp_ios_best_node (tree);
  if (best)
    {
      double b = glp_ios_node_bound (tree, best);
      if (b > cb->bound)
        cb->bound = b;
    }
  if (glp_ios_reason (tree) == GLP_ISELECT)
    _ml_report (cb->knobs, cb->limit > 0 ? (ml_now () - cb->t0) / cb->limit : 0, "ilp");
}

static int
write_model (glp_prob *lp, const char *path, MlError *err)
{
  const char *dot = strrchr (path, '.');
  bool mps = dot && strcasecmp (dot, ".mps") == 0;
  if (!dot || (!mps && strcasecmp (dot, ".lp") != 0))
    return ml_error_set (err, ML_EUSAGE, "ilp: write the model as FILE.lp (CPLEX LP) or FILE.mps (free MPS), not \"%s\"", path);
  size_t len = strlen (path) + 32;
  char *tmp = malloc (len);
  if (!tmp)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  snprintf (tmp, len, "%s.tmp%ld", path, (long) getpid ());
  /* GLPK says why a write failed on its terminal only (switched off):
   * open the file here first for the reason, then let GLPK write it */
  FILE *probe = fopen (tmp, "w");
  if (!probe)
    {
      int e = errno;
      free (tmp);
      return ml_error_set (err, ML_EIO, "ilp: cannot write the model to %s: %s", path, strerror (e));
    }
  fclose (probe);
  int r = mps ? glp_write_mps (lp, GLP_MPS_FILE, NULL, tmp) : glp_write_lp (lp, NULL, tmp);
  int e = r != 0 ? EIO : rename (tmp, path) != 0 ? errno : 0;
  if (e)
    {
      unlink (tmp);
      free (tmp);
      return ml_error_set (err, ML_EIO, "ilp: cannot write the model to %s: %s", path, strerror (e));
    }
  free (tmp);
  return 0;
}

static int
ilp_plan (const MlBuffers *bufs, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  IlpOptions opt = { .max_pairs = 100000 };
  int rc = ml_options_foreach (knobs->options, ilp_option, &opt, err);
  if (rc < 0)
    return rc;
  size_t n = bufs->n;
  double limit = _ml_time_limit (knobs, 10.0), t0 = ml_now ();
  uint64_t greedy_peak;
  if ((rc = _ml_greedy_best (bufs, plan->offset, NULL, &greedy_peak, knobs, _ml_user_deadline (knobs), NULL, err)) < 0)
    return rc;
  uint64_t lb = bufs->lower_bound;
  plan->proven_lb = lb;
  if (greedy_peak <= lb && !opt.write_model)
    return 0;   /* the greedy plan meets the bound (the driver marks it optimal) */
  /* buffers that take room, by start; their overlapping pairs */
  uint32_t *idx = malloc ((n ? n : 1) * sizeof *idx), *col = malloc ((n ? n : 1) * sizeof *col);
  uint32_t *pa = NULL, *pb = NULL;
  double *start = NULL;
  int *ia = NULL, *ja = NULL;
  double *ar = NULL;
  glp_prob *lp = NULL;
  uint64_t *order_key = NULL;
  MlPlacer *placer = NULL;
  uint32_t *order = NULL;
  if (!idx || !col)
    goto oom;
  size_t m = 0;
  uint64_t g = 0;
  for (size_t i = 0; i < n; i++)
    if (bufs->buf[i].rsize && bufs->buf[i].end > bufs->buf[i].start)
      {
        idx[m++] = (uint32_t) i;
        g = gcd64 (g, bufs->buf[i].rsize);
      }
  if (m == 0)
    {
      /* nothing holds bytes (empty buffers or empty lifetimes): offset 0
       * for all is optimal, and GLPK refuses a model without rows */
      free (idx);
      free (col);
      if (opt.write_model)
        return ml_error_set (err, ML_EUNSUPPORTED, "ilp: no buffer holds bytes; there is no model to write");
      memset (plan->offset, 0, n * sizeof *plan->offset);
      return 0;   /* peak 0 = the bound (the driver marks it optimal) */
    }
  if (g == 0)
    g = 1;
  if (ml_sort_indexes_by_key (idx, m, &bufs->buf[0].start, sizeof (MlBuffer)) < 0)
    goto oom;
  size_t pairs = 0, cap = 1024;
  pa = malloc (cap * sizeof *pa);
  pb = malloc (cap * sizeof *pb);
  if (!pa || !pb)
    goto oom;
  uint64_t limit_pairs = opt.write_model ? 10000000 : opt.max_pairs;
  bool too_big = false;
  for (size_t a = 0; a < m && !too_big; a++)
    for (size_t b = a + 1; b < m && bufs->buf[idx[b]].start < bufs->buf[idx[a]].end; b++)
      {
        if (pairs == limit_pairs)
          {
            too_big = true;
            break;
          }
        if (pairs == cap)
          {
            cap *= 2;
            uint32_t *x = realloc (pa, cap * sizeof *pa), *y = x ? realloc (pb, cap * sizeof *pb) : NULL;
            if (x) pa = x;
            if (!x || !y)
              goto oom;
            pb = y;
          }
        pa[pairs] = (uint32_t) a;
        pb[pairs++] = (uint32_t) b;
      }
  if (too_big)
    {
      char note[200];
      snprintf (note, sizeof note, "the model has over %" PRIu64 " overlapping pairs (options max-pairs=N): "
                "not solved; the plan is the best greedy one", limit_pairs);
      if (opt.write_model)
        {
          rc = ml_error_set (err, ML_EUNSUPPORTED, "ilp: the model has over %" PRIu64 " overlapping pairs; too large to write", limit_pairs);
          goto out;
        }
      if (ml_plan_set_note (plan, note) < 0)
        goto oom;
      goto out;
    }
  /* the model: columns x_1..x_m, z, y_1..y_pairs (1-based) */
  double M = (double) (greedy_peak / g);
  glp_term_out (GLP_OFF);
  lp = glp_create_prob ();
  glp_set_prob_name (lp, "memlens_dsa");
  glp_set_obj_name (lp, "peak");
  glp_set_obj_dir (lp, GLP_MIN);
  int zc = (int) m + 1;
  glp_add_cols (lp, (int) (m + 1 + pairs));
  char name[64];
  for (size_t a = 0; a < m; a++)
    {
      const MlBuffer *b = &bufs->buf[idx[a]];
      snprintf (name, sizeof name, "x%" PRIu64, b->id);
      glp_set_col_name (lp, (int) a + 1, name);
      glp_set_col_bnds (lp, (int) a + 1, GLP_DB, 0.0, M - (double) (b->rsize / g));
      if (M - (double) (b->rsize / g) <= 0)
        glp_set_col_bnds (lp, (int) a + 1, GLP_FX, 0.0, 0.0);
    }
  glp_set_col_name (lp, zc, "z");
  glp_set_col_bnds (lp, zc, GLP_DB, (double) ((lb + g - 1) / g), M);
  if ((double) ((lb + g - 1) / g) >= M)
    glp_set_col_bnds (lp, zc, GLP_FX, M, M);
  glp_set_obj_coef (lp, zc, 1.0);
  for (size_t e = 0; e < pairs; e++)
    {
      int c = zc + 1 + (int) e;
      snprintf (name, sizeof name, "y%" PRIu64 "_%" PRIu64, bufs->buf[idx[pa[e]]].id, bufs->buf[idx[pb[e]]].id);
      glp_set_col_name (lp, c, name);
      glp_set_col_kind (lp, c, GLP_BV);
    }
  size_t rows = m + 2 * pairs, nz = 2 * m + 6 * pairs;
  glp_add_rows (lp, (int) rows);
  ia = malloc ((nz + 1) * sizeof *ia);
  ja = malloc ((nz + 1) * sizeof *ja);
  ar = malloc ((nz + 1) * sizeof *ar);
  if (!ia || !ja || !ar)
    goto oom;
  size_t k = 0;
  int r = 0;
  for (size_t a = 0; a < m; a++)
    {
      /* z - x_a >= size_a */
      r++;
      snprintf (name, sizeof name, "peak_%" PRIu64, bufs->buf[idx[a]].id);
      glp_set_row_name (lp, r, name);
      glp_set_row_bnds (lp, r, GLP_LO, (double) (bufs->buf[idx[a]].rsize / g), 0.0);
      k++; ia[k] = r; ja[k] = zc; ar[k] = 1.0;
      k++; ia[k] = r; ja[k] = (int) a + 1; ar[k] = -1.0;
    }
  for (size_t e = 0; e < pairs; e++)
    {
      int xi = (int) pa[e] + 1, xj = (int) pb[e] + 1, y = zc + 1 + (int) e;
      double si = (double) (bufs->buf[idx[pa[e]]].rsize / g), sj = (double) (bufs->buf[idx[pb[e]]].rsize / g);
      /* x_i - x_j + M y <= M - s_i */
      r++;
      snprintf (name, sizeof name, "below_%zu", e);
      glp_set_row_name (lp, r, name);
      glp_set_row_bnds (lp, r, GLP_UP, 0.0, M - si);
      k++; ia[k] = r; ja[k] = xi; ar[k] = 1.0;
      k++; ia[k] = r; ja[k] = xj; ar[k] = -1.0;
      k++; ia[k] = r; ja[k] = y; ar[k] = M;
      /* x_j - x_i - M y <= -s_j */
      r++;
      snprintf (name, sizeof name, "above_%zu", e);
      glp_set_row_name (lp, r, name);
      glp_set_row_bnds (lp, r, GLP_UP, 0.0, -sj);
      k++; ia[k] = r; ja[k] = xj; ar[k] = 1.0;
      k++; ia[k] = r; ja[k] = xi; ar[k] = -1.0;
      k++; ia[k] = r; ja[k] = y; ar[k] = -M;
    }
  glp_load_matrix (lp, (int) k, ia, ja, ar);
  if (opt.write_model && (rc = write_model (lp, opt.write_model, err)) < 0)
    goto out;
  if (greedy_peak <= lb)
    goto out;   /* the model is written; the greedy plan meets the bound */
  /* the greedy plan as GLPK's first incumbent */
  start = calloc (m + pairs + 2, sizeof *start);
  if (!start)
    goto oom;
  for (size_t a = 0; a < m; a++)
    start[a + 1] = (double) (plan->offset[idx[a]] / g);
  start[zc] = M;
  for (size_t e = 0; e < pairs; e++)
    start[zc + 1 + e] = plan->offset[idx[pa[e]]] < plan->offset[idx[pb[e]]] ? 1.0 : 0.0;
  double left = limit - (ml_now () - t0);
  Cb cb = { .knobs = knobs, .start = start, .bound = -1, .t0 = t0, .limit = limit };
  glp_iocp parm;
  glp_init_iocp (&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  parm.tm_lim = left > 0.01 ? (int) (left * 1000) : 10;
  parm.cb_func = callback;
  parm.cb_info = &cb;
  int ret = glp_intopt (lp, &parm);
  if (_ml_cancelled (knobs))
    {
      rc = ml_error_set (err, ML_ECANCELLED, "ilp: cancelled");
      goto out;
    }
  int status = glp_mip_status (lp);
  bool proven = ret == 0 && status == GLP_OPT;
  char note[200] = "";
  if (status == GLP_OPT || status == GLP_FEAS)
    {
      /* compact: by the solver's offsets, each at the lowest fit */
      order_key = malloc ((n ? n : 1) * sizeof *order_key);
      order = malloc ((n ? n : 1) * sizeof *order);
      uint64_t *off = malloc ((n ? n : 1) * sizeof *off);
      if (!order_key || !order || !off)
        {
          free (off);
          goto oom;
        }
      for (size_t i = 0; i < n; i++)
        {
          order_key[i] = 0;
          order[i] = (uint32_t) i;
        }
      for (size_t a = 0; a < m; a++)
        {
          double v = glp_mip_col_val (lp, (int) a + 1);
          order_key[idx[a]] = v > 0 ? (uint64_t) llround (v) : 0;
        }
      uint64_t peak;
      if (ml_sort_indexes_by_key (order, n, order_key, sizeof *order_key) < 0
          || (rc = _ml_placer_new (bufs, &placer, err)) < 0
          || (rc = _ml_place_in_order (bufs, placer, order, off, &peak, NULL, 0, NULL)) < 0)
        {
          free (off);
          if (rc == 0)
            goto oom;
          goto out;
        }
      if (peak < greedy_peak)
        memcpy (plan->offset, off, n * sizeof *off);
      else
        peak = greedy_peak;
      free (off);
      if (proven)
        {
          plan->optimal = true;
          plan->proven_lb = peak;
        }
      else
        {
          uint64_t b = cb.bound > 0 ? (uint64_t) ceil (cb.bound - 1e-6) * g : 0;
          if (b > plan->proven_lb && b <= peak)
            plan->proven_lb = b;
        }
    }
  if (!proven)
    snprintf (note, sizeof note, "GLPK stopped (%s) after %.3g s: best plan, not proven optimal",
              ret == GLP_ETMLIM ? "time limit" : "no proof", ml_now () - t0);
  if (note[0] && ml_plan_set_note (plan, note) < 0)
    goto oom;
  goto out;
oom:
  rc = ml_error_set (err, ML_ENOMEM, "ilp: out of memory building the model for %zu buffers", n);
out:
  if (lp)
    glp_delete_prob (lp);
  _ml_placer_free (placer);
  free (idx); free (col); free (pa); free (pb); free (start);
  free (ia); free (ja); free (ar); free (order_key); free (order);
  return rc;
}

const MlStrategy ml_strategy_ilp = {
  .name = "ilp",
  .summary = "offline: the textbook big-M MIP solved by GLPK (or written as .lp/.mps); optimal when proven",
  .kind = ML_STRATEGY_OFFLINE,
  .flags = ML_STRATEGY_PROVES_OPTIMAL,
  .knobs = ML_KNOB_TIME_LIMIT | ML_KNOB_OPTIONS,
  .options = ilp_keys,
  .plan = ilp_plan,
};

#endif /* ML_HAVE_GLPK */
