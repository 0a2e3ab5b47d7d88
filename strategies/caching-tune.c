/* caching-tune.c — the grid of allocator settings, replayed, and the
 * answer (caching-tune.h). */
#include "strategies/caching-tune.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/alloc-conf.h"
#include "sim/base/options.h"
#include "sim/base/sort.h"
#include "sim/sim.h"
#include "strategies/caching-private.h"

#define MiB ((uint64_t) 1 << 20)

/* ---- settings: the recorded ones with a change ---- */

/* @text parsed on top of @base's text into a fresh @out. */
static int
conf_of (const char *base, const char *text, MlAllocConf *out, MlError *err)
{
  ml_alloc_conf_init (out);
  int rc = ml_alloc_conf_parse (base, out, err);
  if (rc == 0 && text)
    rc = ml_alloc_conf_parse (text, out, err);
  if (rc < 0)
    ml_alloc_conf_clear (out);
  return rc;
}

static char *
format_dup (const MlAllocConf *c)
{
  size_t n = ml_alloc_conf_format (c, NULL, 0) + 1;
  char *s = malloc (n);
  if (s)
    ml_alloc_conf_format (c, s, n);
  return s;
}

/* The text of @base with @text on top (NULL when out of memory or when
 * @text does not parse); *@n_changed: the items of @text that change it. */
static char *
settings_with (const char *base, const char *text, unsigned *n_changed, MlError *err)
{
  MlAllocConf b, c;
  if (conf_of (base, NULL, &b, err) < 0)
    return NULL;
  char *before = format_dup (&b);
  ml_alloc_conf_clear (&b);
  *n_changed = 0;
  for (const char *p = text; before && *p;)
    {
      size_t n = ml_options_item_len (p);
      char *item = strndup (p, n);
      if (item && conf_of (base, item, &c, err) == 0)
        {
          char *after = format_dup (&c);
          *n_changed += after && strcmp (after, before) != 0;
          free (after);
          ml_alloc_conf_clear (&c);
        }
      free (item);
      p += n + (p[n] == ',');
    }
  char *out = NULL;
  if (before && conf_of (base, text, &c, err) == 0)
    {
      out = format_dup (&c);
      ml_alloc_conf_clear (&c);
    }
  free (before);
  return out;
}

/* ---- the rows ---- */

typedef struct {
  MlTune  *tune;
  size_t   cap;
  const char *base;      /* the recorded settings */
  const char *defaults;  /* PyTorch's defaults with the recorded fraction (the async model's base) */
  MlError *err;
} Grid;

static int
grid_oom (Grid *g)
{
  return ml_error_set (g->err, ML_ENOMEM, "out of memory");
}

/* A row for @change (PyTorch's syntax); a change that leaves the settings
 * as recorded is dropped (never suggest what is already on). */
static int
add_row (Grid *g, const char *change, bool cold)
{
  MlTune *t = g->tune;
  unsigned n_changed = 0;
  bool async = strstr (change, "cudaMallocAsync") != NULL;
  MlError local = { 0 };
  char *settings = settings_with (async ? g->defaults : g->base, change, &n_changed, &local);
  if (!settings && local.code != ML_EUSAGE)
    return grid_oom (g);
  if (!settings)
    return ml_error_set (g->err, ML_EUSAGE, "%s", local.msg);
  MlAllocConf c;
  if (conf_of (settings, NULL, &c, &local) == 0)
    {
      int rc = ml_alloc_conf_check_emulated (&c, &local);
      ml_alloc_conf_clear (&c);
      if (rc < 0)
        {
          free (settings);
          return ml_error_set (g->err, ML_EUSAGE, "%s", local.msg);
        }
    }
  if (*change && (async ? !strstr (g->base, "cudaMallocAsync") && !n_changed : !n_changed))
    {
      free (settings);
      return 0;
    }
  for (size_t k = 0; k < t->n_rows; k++)
    if (!cold && !t->rows[k].cold && strcmp (t->rows[k].settings, settings) == 0)
      {
        free (settings);   /* the same settings twice (two sweeps, a quantile twice) */
        return 0;
      }
  if (t->n_rows == g->cap)
    {
      size_t cap = g->cap ? g->cap * 2 : 16;
      MlTuneRow *rows = realloc (t->rows, cap * sizeof *rows);
      if (!rows)
        {
          free (settings);
          return grid_oom (g);
        }
      t->rows = rows;
      g->cap = cap;
    }
  MlTuneRow *row = &t->rows[t->n_rows];
  memset (row, 0, sizeof *row);
  row->settings = settings;
  row->change = strdup (change);
  row->n_changed = n_changed;
  row->cold = cold;
  t->n_rows++;
  return row->change ? 0 : grid_oom (g);
}

/* max_split_size_mb candidates: powers of two (at least 32, the first at
 * or above PyTorch's smallest, 20) around the 50th, 90th and 99th
 * percentiles of the large requests' sizes. */
static int
grid_max_split (Grid *g, const MlTrace *t)
{
  size_t n = 0;
  for (size_t k = 0; k < t->n_events; k++)
    n += t->events[k].kind == ML_EV_ALLOC && t->events[k].size > MiB;
  if (!n)
    return 0;
  uint64_t *sizes = malloc (n * sizeof *sizes);
  if (!sizes)
    return grid_oom (g);
  n = 0;
  for (size_t k = 0; k < t->n_events; k++)
    if (t->events[k].kind == ML_EV_ALLOC && t->events[k].size > MiB)
      sizes[n++] = t->events[k].size;
  ml_sort_u64 (sizes, n);
  static const double q[] = { 0.5, 0.9, 0.99 };
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < 3; i++)
    {
      uint64_t mb = (sizes[(size_t) (q[i] * (double) (n - 1))] + MiB - 1) / MiB, v = 32;
      while (v < mb && v < ((uint64_t) 1 << 40))
        v <<= 1;
      char change[64];
      snprintf (change, sizeof change, "max_split_size_mb:%llu", (unsigned long long) v);
      rc = add_row (g, change, false);
    }
  free (sizes);
  return rc;
}

static int
default_grid (Grid *g, const MlTrace *t, uint64_t capacity)
{
  int rc = add_row (g, strstr (g->base, "expandable_segments:True") ? "expandable_segments:False"
                                                                      : "expandable_segments:True", false);
  if (rc == 0)
    rc = grid_max_split (g, t);
  static const char *const rest[] = {
    "roundup_power2_divisions:4", "roundup_power2_divisions:8", "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
    "garbage_collection_threshold:0.6,per_process_memory_fraction:0.99",
    "garbage_collection_threshold:0.8,per_process_memory_fraction:0.99", "backend:cudaMallocAsync",
  };
  for (size_t i = 0; rc == 0 && i < sizeof rest / sizeof rest[0]; i++)
    if (capacity || !strstr (rest[i], "fraction"))   /* a fraction needs the device's memory */
      rc = add_row (g, rest[i], false);
  return rc;
}

/* The cartesian product of @sweeps ("KEY=V1,V2,..."). */
static int
sweep_grid (Grid *g, const char *const *sweeps)
{
  size_t n_sweeps = 0, combos = 1;
  size_t count[16];
  for (; sweeps[n_sweeps]; n_sweeps++)
    {
      const char *s = sweeps[n_sweeps], *eq = strchr (s, '=');
      if (n_sweeps == 16)
        return ml_error_set (g->err, ML_EUSAGE, "--sweep: at most 16 settings at once");
      if (!eq || eq == s || !eq[1])
        return ml_error_set (g->err, ML_EUSAGE, "--sweep %s: write SETTING=V1,V2,... (a PYTORCH_CUDA_ALLOC_CONF key)", s);
      count[n_sweeps] = 0;
      for (const char *p = eq + 1; *p;)
        {
          size_t n = ml_options_item_len (p);
          if (!n)
            return ml_error_set (g->err, ML_EUSAGE, "--sweep %s: an empty value", s);
          count[n_sweeps]++;
          p += n + (p[n] == ',');
        }
      combos *= count[n_sweeps];
      if (combos > 4096)
        return ml_error_set (g->err, ML_EUSAGE, "--sweep: more than 4096 combinations");
    }
  int rc = 0;
  char change[4096];
  for (size_t c = 0; rc == 0 && c < combos; c++)
    {
      size_t len = 0, rest = c;
      for (size_t i = 0; i < n_sweeps; i++)
        {
          const char *s = sweeps[i], *eq = strchr (s, '='), *p = eq + 1;
          size_t pick = rest % count[i], n = 0;
          rest /= count[i];
          for (size_t j = 0;; j++, p += n + 1)
            if ((n = ml_options_item_len (p)), j == pick)
              break;
          len += (size_t) snprintf (change + len, len < sizeof change ? sizeof change - len : 0, "%s%.*s:%.*s",
                                    i ? "," : "", (int) (eq - s), s, (int) n, p);
        }
      if (len >= sizeof change)
        return ml_error_set (g->err, ML_EUSAGE, "--sweep: the settings are too long");
      if ((rc = add_row (g, change, false)) < 0)
        ml_error_prefix (g->err, "--sweep %s", change);
    }
  return rc;
}

/* ---- replaying the rows, @jobs at a time ---- */

typedef struct {
  const MlTrace  *t;
  MlTune         *tune;
  pthread_mutex_t lock;
  size_t          next;
} Pool;

static void *
worker (void *arg)
{
  Pool *p = arg;
  for (;;)
    {
      pthread_mutex_lock (&p->lock);
      size_t k = p->next++;
      pthread_mutex_unlock (&p->lock);
      if (k >= p->tune->n_rows)
        return NULL;
      MlTuneRow *row = &p->tune->rows[k];
      MlCacheReplayOpts o = { .capacity = p->tune->capacity, .warm = p->tune->warm && !row->cold };
      MlError err = { 0 };
      double t0 = ml_now ();
      row->status = ml_cache_replay (p->t, row->settings, &o, &row->r, &err);
      row->seconds = ml_now () - t0;
      if (row->status < 0)
        snprintf (row->error, sizeof row->error, "%s", err.msg);
    }
}

static void
replay_rows (const MlTrace *t, MlTune *tune, unsigned jobs)
{
  Pool p = { .t = t, .tune = tune, .next = 0 };
  pthread_mutex_init (&p.lock, NULL);
  pthread_t th[64];
  unsigned started = 0;
  for (unsigned j = 1; j < jobs && j < 64; j++)
    started += pthread_create (&th[started], NULL, worker, &p) == 0;
  worker (&p);
  for (unsigned j = 0; j < started; j++)
    pthread_join (th[j], NULL);
  pthread_mutex_destroy (&p.lock);
}

/* ---- the answer ---- */

/* True when row @a is a better answer than row @b: an emulation before a
 * model, fewer settings changed, less reserved. */
static bool
better (const MlTuneRow *a, const MlTuneRow *b)
{
  if (a->r.model != b->r.model)
    return !a->r.model;
  if (a->n_changed != b->n_changed)
    return a->n_changed < b->n_changed;
  return a->r.reserved_peak < b->r.reserved_peak;
}

static void
answer (MlTune *t)
{
  const MlTuneRow *rec = &t->rows[0];
  t->best = -1;
  if (rec->status < 0)
    return;
  bool fix = t->capacity && rec->r.oom;
  /* the emulated rows first; a model's only when none will do */
  for (int models = 0; models < 2 && t->best < 0; models++)
    for (size_t k = 1; k < t->n_rows; k++)
      {
        const MlTuneRow *row = &t->rows[k];
        if (row->cold || row->status < 0 || row->r.oom || row->r.model != (models == 1)
            || (!fix && row->r.reserved_peak >= rec->r.reserved_peak))
          continue;
        if (t->best < 0 || better (row, &t->rows[t->best]))
          t->best = (long) k;
      }
  if (!fix)
    t->verdict = t->capacity ? ML_TUNE_FITS : ML_TUNE_NO_CAPACITY;
  else if (t->best >= 0)
    t->verdict = ML_TUNE_FIX;
  else
    {
      t->verdict = ML_TUNE_NONE_FITS;
      t->need = rec->r.oom_live + rec->r.oom_request;
      t->shortfall = t->need > t->capacity ? t->need - t->capacity : 0;
    }
}

/* The recorded OOM's device memory: reserved just before it + device free. */
static uint64_t
oom_capacity (const MlTrace *t)
{
  for (size_t k = 0; k < t->n_device_ooms; k++)
    if (t->device_ooms[k].device == t->device)
      return t->device_ooms[k].reserved + t->device_ooms[k].device_free;
  return 0;
}

/* Replays rows[0] and the answer again for their reserved curves. */
static int
curves (const MlTrace *trace, MlTune *t, MlError *err)
{
  long which[2] = { 0, t->best };
  for (int i = 0; i < 2; i++)
    {
      if (which[i] < 0 || t->rows[which[i]].status < 0)
        continue;
      MlTuneRow *row = &t->rows[which[i]];
      MlCacheReplayOpts o = { .capacity = t->capacity, .warm = t->warm && !row->cold, .curve = true };
      MlCacheReplay r;
      int rc = ml_cache_replay (trace, row->settings, &o, &r, err);
      if (rc < 0)
        return rc;
      ml_cache_replay_clear (&row->r);
      row->r = r;
    }
  return 0;
}

/* The grid (or the sweeps) as rows after the recorded ones. */
static int
build_rows (const MlTrace *trace, const MlTuneOpts *opts, MlTune *t, MlError *err)
{
  char buf[512];
  const char *mark = _ml_cache_options (trace, NULL, buf, sizeof buf);
  MlAllocConf rec;
  int rc = conf_of (mark, NULL, &rec, err);
  if (rc < 0)
    return ml_error_prefix (err, "the recorded allocator settings");
  t->recorded = format_dup (&rec);
  MlAllocConf d;
  ml_alloc_conf_init (&d);
  if (rec.set & ML_AC_MEMORY_FRACTION)
    {
      d.set |= ML_AC_MEMORY_FRACTION;
      d.memory_fraction = rec.memory_fraction;
    }
  char *defaults = format_dup (&d);
  ml_alloc_conf_clear (&rec);
  if (!t->recorded || !defaults)
    {
      free (defaults);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  Grid g = { .tune = t, .base = t->recorded, .defaults = defaults, .err = err };
  rc = add_row (&g, "", false);
  if (rc == 0 && t->warm)
    rc = add_row (&g, "", true);
  if (rc == 0)
    rc = opts->sweeps ? sweep_grid (&g, opts->sweeps) : default_grid (&g, trace, t->capacity);
  free (defaults);
  return rc;
}

int
ml_tune_run (const MlTrace *trace, const MlTuneOpts *opts, MlTune **out, MlError *err)
{
  MlTune *t = calloc (1, sizeof *t);
  if (!t)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  t->capacity = opts->capacity;
  if (!t->capacity && (t->capacity = oom_capacity (trace)))
    t->capacity_from_oom = true;
  t->warm = !opts->cold && ml_cache_replay_can_warm (trace);
  int rc = build_rows (trace, opts, t, err);
  if (rc == 0)
    {
      replay_rows (trace, t, opts->jobs ? opts->jobs : 1);
      if (t->rows[0].status < 0)
        rc = ml_error_set (err, t->rows[0].status, "the recorded settings: %s", t->rows[0].error);
    }
  if (rc == 0)
    {
      answer (t);
      if (opts->curves)
        rc = curves (trace, t, err);
    }
  if (rc < 0)
    {
      ml_tune_free (t);
      return rc;
    }
  *out = t;
  return 0;
}

void
ml_tune_free (MlTune *t)
{
  if (!t)
    return;
  for (size_t k = 0; k < t->n_rows; k++)
    {
      free (t->rows[k].change);
      free (t->rows[k].settings);
      ml_cache_replay_clear (&t->rows[k].r);
    }
  free (t->rows);
  free (t->recorded);
  free (t);
}
