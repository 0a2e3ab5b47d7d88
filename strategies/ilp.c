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
#include "strategies/ilp-private.h"
#include "strategies/planner-private.h"

typedef struct {
  const char *write_model;
  uint64_t    max_pairs;
  MlIlpModel  model;
  char        buf[4096];
} IlpOptions;

static const char *const ilp_keys[] = { "model", "write-model", "max-pairs", NULL };

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
  if (strcmp (key, "model") == 0)
    {
      for (MlIlpModel m = ML_ILP_BIGM; m <= ML_ILP_TIME; m++)
        if (strcmp (value, _ml_ilp_model_name (m)) == 0)
          {
            o->model = m;
            return 0;
          }
      return ml_error_set (err, ML_EUSAGE, "ilp: model \"%s\" is not bigm, order or time", value);
    }
  return ml_error_set (err, ML_EUSAGE, "ilp: unknown option \"%s\" (known: model=bigm|order|time, write-model=FILE.lp|FILE.mps, "
                       "max-pairs=N)", key);
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

/* The error for running out of memory anywhere in the model's life. */
static int
ilp_oom (const Ilp *x, MlError *err)
{
  return ml_error_set (err, ML_ENOMEM, "ilp: out of memory building the model for %zu buffers", x->bufs->n);
}

static void
ilp_clear (Ilp *x)
{
  if (x->lp)
    glp_delete_prob (x->lp);
  free (x->idx); free (x->pa); free (x->pb); free (x->first); free (x->tcol);
}

/* The buffers that hold bytes for a time, by start, and their sizes' gcd. */
static int
ilp_buffers (Ilp *x)
{
  const MlBuffers *bufs = x->bufs;
  size_t n = bufs->n;
  x->idx = malloc ((n ? n : 1) * sizeof *x->idx);
  if (!x->idx)
    return ML_ENOMEM;
  for (size_t i = 0; i < n; i++)
    if (bufs->buf[i].rsize && bufs->buf[i].end > bufs->buf[i].start)
      {
        x->idx[x->m++] = (uint32_t) i;
        x->g = gcd64 (x->g, bufs->buf[i].rsize);
      }
  if (x->g == 0)
    x->g = 1;
  return ml_sort_indexes_by_key (x->idx, x->m, &bufs->buf[0].start, sizeof (MlBuffer));
}

/* The pairs of buffers whose lifetimes overlap, up to @limit: sets
 * *too_big when there are more. */
static int
ilp_pairs (Ilp *x, uint64_t limit, bool *too_big)
{
  const MlBuffers *bufs = x->bufs;
  const uint32_t *idx = x->idx;
  size_t cap = 1024;
  *too_big = false;
  x->pa = malloc (cap * sizeof *x->pa);
  x->pb = malloc (cap * sizeof *x->pb);
  x->first = malloc ((x->m + 1) * sizeof *x->first);
  if (!x->pa || !x->pb || !x->first)
    return ML_ENOMEM;
  x->first[0] = 0;
  for (size_t a = 0; a < x->m; x->first[++a] = x->pairs)
    for (size_t b = a + 1; b < x->m && bufs->buf[idx[b]].start < bufs->buf[idx[a]].end; b++)
      {
        if (x->pairs == limit)
          {
            *too_big = true;
            return 0;
          }
        if (x->pairs == cap)
          {
            cap *= 2;
            uint32_t *p = realloc (x->pa, cap * sizeof *x->pa), *q = p ? realloc (x->pb, cap * sizeof *x->pb) : NULL;
            if (p) x->pa = p;
            if (!p || !q)
              return ML_ENOMEM;
            x->pb = q;
          }
        x->pa[x->pairs] = (uint32_t) a;
        x->pb[x->pairs++] = (uint32_t) b;
      }
  return 0;
}

/* GLPK's branch and cut from the greedy plan @offset as first incumbent,
 * for what is left of @limit: GLPK's return code; *bound the best bound
 * it saw (scaled by g). */
static int
ilp_solve (Ilp *x, const uint64_t *offset, const MlKnobs *knobs, double t0, double limit, double *bound)
{
  double *start = calloc (x->cols + 1, sizeof *start);
  if (!start)
    return ML_ENOMEM;
  _ml_ilp_start (x, offset, start);
  double left = limit - (ml_now () - t0);
  Cb cb = { .knobs = knobs, .start = start, .bound = -1, .t0 = t0, .limit = limit };
  glp_iocp parm;
  glp_init_iocp (&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  parm.tm_lim = left > 0.01 ? (int) (left * 1000) : 10;
  parm.cb_func = callback;
  parm.cb_info = &cb;
  int ret = glp_intopt (x->lp, &parm);
  free (start);
  *bound = cb.bound;
  return ret;
}

/* The solver's offsets compacted: buffers in the order of their offsets,
 * each at the lowest fit (which never raises one). Writes @offset when
 * that beats the greedy plan's @greedy_peak; *peak: the better of the two. */
static int
compact_solution (Ilp *x, uint64_t *offset, uint64_t greedy_peak, uint64_t *peak, MlError *err)
{
  const MlBuffers *bufs = x->bufs;
  size_t n = bufs->n;
  uint64_t *order_key = malloc ((n ? n : 1) * sizeof *order_key), *off = malloc ((n ? n : 1) * sizeof *off);
  uint32_t *order = malloc ((n ? n : 1) * sizeof *order);
  MlPlacer *placer = NULL;
  int rc = 0;
  if (!order_key || !order || !off)
    rc = ilp_oom (x, err);
  for (size_t i = 0; rc == 0 && i < n; i++)
    {
      order_key[i] = 0;
      order[i] = (uint32_t) i;
    }
  for (size_t a = 0; rc == 0 && a < x->m; a++)
    {
      double v = glp_mip_col_val (x->lp, (int) a + 1);
      order_key[x->idx[a]] = v > 0 ? (uint64_t) llround (v) : 0;
    }
  if (rc == 0 && ml_sort_indexes_by_key (order, n, order_key, sizeof *order_key) < 0)
    rc = ilp_oom (x, err);
  if (rc == 0 && (rc = _ml_placer_new (bufs, &placer, err)) == 0
      && (rc = _ml_place_in_order (bufs, placer, order, off, peak, NULL, 0, NULL)) == 0)
    {
      if (*peak < greedy_peak)
        memcpy (offset, off, n * sizeof *off);
      else
        *peak = greedy_peak;
    }
  _ml_placer_free (placer);
  free (order_key); free (order); free (off);
  return rc;
}

/* What GLPK's answer means for the plan: its solution compacted, the
 * optimum when proven, else the bound it proved; the note when not proven. */
static int
read_solution (Ilp *x, MlPlan *plan, uint64_t greedy_peak, int ret, double bound, double t0, MlError *err)
{
  int status = glp_mip_status (x->lp);
  bool proven = ret == 0 && status == GLP_OPT;
  int rc;
  if (status == GLP_OPT || status == GLP_FEAS)
    {
      uint64_t peak;
      if ((rc = compact_solution (x, plan->offset, greedy_peak, &peak, err)) < 0)
        return rc;
      if (proven)
        {
          plan->optimal = true;
          plan->proven_lb = peak;
        }
      else
        {
          uint64_t b = bound > 0 ? (uint64_t) ceil (bound - 1e-6) * x->g : 0;
          if (b > plan->proven_lb && b <= peak)
            plan->proven_lb = b;
        }
    }
  char note[300];
  int len = snprintf (note, sizeof note, "model %s: %zu binaries (%zu fixed by symmetry), %d rows; ",
                      _ml_ilp_model_name (x->model), x->binaries, x->fixed, glp_get_num_rows (x->lp));
  if (proven)
    snprintf (note + len, sizeof note - (size_t) len, "GLPK proved it optimal in %.3g s", ml_now () - t0);
  else
    snprintf (note + len, sizeof note - (size_t) len, "GLPK stopped (%s) after %.3g s: best plan, not proven optimal",
              ret == GLP_ETMLIM ? "time limit" : "no proof", ml_now () - t0);
  if (ml_plan_set_note (plan, note) < 0)
    return ilp_oom (x, err);
  return 0;
}

/* The model too large to solve (or write). */
static int
refuse_too_big (const Ilp *x, const IlpOptions *opt, uint64_t limit, const char *what, MlPlan *plan, MlError *err)
{
  char note[200];
  if (opt->write_model)
    return ml_error_set (err, ML_EUNSUPPORTED, "ilp: the %s model has over %" PRIu64 " %s; too large to write",
                         _ml_ilp_model_name (opt->model), limit, what);
  snprintf (note, sizeof note, "the %s model has over %" PRIu64 " %s (options max-pairs=N): "
            "not solved; the plan is the best greedy one", _ml_ilp_model_name (opt->model), limit, what);
  if (ml_plan_set_note (plan, note) < 0)
    return ilp_oom (x, err);
  return 0;
}

/* Builds the model, writes it when asked, solves it from the greedy plan. */
static int
ilp_model_and_solve (Ilp *x, const IlpOptions *opt, const MlKnobs *knobs, uint64_t greedy_peak, double t0,
                     double limit, MlPlan *plan, MlError *err)
{
  uint64_t limit_pairs = opt->write_model ? 10000000 : opt->max_pairs;
  bool too_big;
  int rc;
  if (ilp_pairs (x, limit_pairs, &too_big) < 0)
    return ilp_oom (x, err);
  if (too_big)
    return refuse_too_big (x, opt, limit_pairs, "overlapping pairs", plan, err);
  size_t max_nonzeros = opt->max_pairs > SIZE_MAX / 100 ? SIZE_MAX : (size_t) opt->max_pairs * 100;
  if ((rc = _ml_ilp_build (x, greedy_peak, max_nonzeros, &too_big)) == ML_EUNSUPPORTED && too_big)
    return refuse_too_big (x, opt, max_nonzeros, "matrix entries", plan, err);
  if (rc < 0)
    return ilp_oom (x, err);
  if (opt->write_model && (rc = write_model (x->lp, opt->write_model, err)) < 0)
    return rc;
  if (greedy_peak <= x->bufs->lower_bound)
    return 0;   /* the model is written; the greedy plan meets the bound */
  double bound;
  int ret = ilp_solve (x, plan->offset, knobs, t0, limit, &bound);
  if (ret == ML_ENOMEM)
    return ilp_oom (x, err);
  if (_ml_cancelled (knobs))
    return ml_error_set (err, ML_ECANCELLED, "ilp: cancelled");
  return read_solution (x, plan, greedy_peak, ret, bound, t0, err);
}

static int
ilp_plan (const MlBuffers *bufs, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  IlpOptions opt = { .max_pairs = 100000 };
  int rc = ml_options_foreach (knobs->options, ilp_option, &opt, err);
  if (rc < 0)
    return rc;
  double limit = _ml_time_limit (knobs, 10.0), t0 = ml_now ();
  uint64_t greedy_peak;
  if ((rc = _ml_greedy_best (bufs, plan->offset, NULL, &greedy_peak, knobs, _ml_user_deadline (knobs), NULL, err)) < 0)
    return rc;
  plan->proven_lb = bufs->lower_bound;
  if (greedy_peak <= bufs->lower_bound && !opt.write_model)
    return 0;   /* the greedy plan meets the bound (the driver marks it optimal) */
  Ilp x = { .bufs = bufs, .model = opt.model };
  if (ilp_buffers (&x) < 0)
    rc = ilp_oom (&x, err);
  else if (x.m == 0)
    {
      /* nothing holds bytes (empty buffers or empty lifetimes): offset 0
       * for all is optimal, and GLPK refuses a model without rows */
      ilp_clear (&x);
      if (opt.write_model)
        return ml_error_set (err, ML_EUNSUPPORTED, "ilp: no buffer holds bytes; there is no model to write");
      memset (plan->offset, 0, bufs->n * sizeof *plan->offset);
      return 0;   /* peak 0 = the bound (the driver marks it optimal) */
    }
  else
    rc = ilp_model_and_solve (&x, &opt, knobs, greedy_peak, t0, limit, plan, err);
  ilp_clear (&x);
  return rc;
}

const MlStrategy ml_strategy_ilp = {
  .name = "ilp",
  .summary = "offline: a MIP (big-M, ordering or offset-indexed model) solved by GLPK (or written as .lp/.mps); optimal when proven",
  .kind = ML_STRATEGY_OFFLINE,
  .flags = ML_STRATEGY_PROVES_OPTIMAL,
  .knobs = ML_KNOB_TIME_LIMIT | ML_KNOB_OPTIONS,
  .options = ilp_keys,
  .plan = ilp_plan,
};

#endif /* ML_HAVE_GLPK */
