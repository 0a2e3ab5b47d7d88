/* caching-batch.c — allocation sizes fitted against the batch, the reserved
 * peak predicted at other batches, the largest batch that fits
 * (caching-batch.h). */
#include "strategies/caching-batch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/caching-private.h"
#include "strategies/caching-replay.h"

/* An allocation (or a refused request) of a run: its call site or name,
 * its ordinal among that key's, its size, its event. */
typedef struct {
  const char *key;
  uint32_t    ord;
  uint64_t    size;
  size_t      ev;
} Entry;

typedef struct {
  Entry  *e;        /* sorted by (key, ord) */
  size_t  n;
  size_t *of_event; /* event -> entry, SIZE_MAX: none */
} Run;

typedef struct {
  double a, c;      /* size = a + c x batch */
  bool   ok;        /* found in every run used */
} Line;

static const char *
key_of (const MlTrace *t, const MlEvent *ev)
{
  if (ev->stack && ev->stack < t->n_stacks && t->stacks[ev->stack].site)
    return ml_trace_str (t, t->stacks[ev->stack].site);
  const char *name = ev->name ? ml_trace_str (t, ev->name) : NULL;
  return name ? name : "";
}

static int
by_key_event (const void *x, const void *y)
{
  const Entry *a = x, *b = y;
  int c = strcmp (a->key, b->key);
  return c ? c : (a->ev > b->ev) - (a->ev < b->ev);
}

static void
run_clear (Run *r)
{
  free (r->e);
  free (r->of_event);
  memset (r, 0, sizeof *r);
}

static int
run_index (const MlTrace *t, Run *r)
{
  memset (r, 0, sizeof *r);
  size_t n = 0;
  for (size_t k = 0; k < t->n_events; k++)
    n += t->events[k].kind == ML_EV_ALLOC || t->events[k].kind == ML_EV_OOM;
  r->e = malloc ((n ? n : 1) * sizeof *r->e);
  r->of_event = malloc ((t->n_events ? t->n_events : 1) * sizeof *r->of_event);
  if (!r->e || !r->of_event)
    return ML_ENOMEM;
  for (size_t k = 0; k < t->n_events; k++)
    {
      const MlEvent *ev = &t->events[k];
      r->of_event[k] = SIZE_MAX;
      if (ev->kind == ML_EV_ALLOC || ev->kind == ML_EV_OOM)
        r->e[r->n++] = (Entry) { key_of (t, ev), 0, ev->size, k };
    }
  qsort (r->e, r->n, sizeof *r->e, by_key_event);
  for (size_t i = 0; i < r->n; i++)
    {
      r->e[i].ord = i && strcmp (r->e[i].key, r->e[i - 1].key) == 0 ? r->e[i - 1].ord + 1 : 0;
      r->of_event[r->e[i].ev] = i;
    }
  return 0;
}

static const Entry *
lookup (const Run *r, const char *key, uint32_t ord)
{
  size_t lo = 0, hi = r->n;
  while (lo < hi)
    {
      size_t mid = (lo + hi) / 2;
      int c = strcmp (r->e[mid].key, key);
      if (c < 0 || (c == 0 && r->e[mid].ord < ord))
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo < r->n && strcmp (r->e[lo].key, key) == 0 && r->e[lo].ord == ord ? &r->e[lo] : NULL;
}

/* The lines of the template's entries from the runs in @use (not @skip). */
static void
fit_lines (const Run *runs, const uint64_t *batches, size_t n, size_t tmpl, size_t skip, Line *lines, size_t *matched)
{
  const Run *t = &runs[tmpl];
  *matched = 0;
  for (size_t i = 0; i < t->n; i++)
    {
      double sb = 0, ss = 0, sbb = 0, sbs = 0;
      size_t m = 0, want = 0;
      for (size_t j = 0; j < n; j++)
        {
          if (j == skip)
            continue;
          want++;
          const Entry *e = lookup (&runs[j], t->e[i].key, t->e[i].ord);
          if (!e)
            continue;
          double b = (double) batches[j], s = (double) e->size;
          sb += b, ss += s, sbb += b * b, sbs += b * s, m++;
        }
      Line *l = &lines[i];
      double den = (double) m * sbb - sb * sb;
      l->ok = m == want && m >= 2 && den > 0;
      l->c = l->ok ? ((double) m * sbs - sb * ss) / den : 0;
      l->a = l->ok ? (ss - l->c * sb) / (double) m : (double) t->e[i].size;
      *matched += l->ok;
    }
}

/* The template run with every fitted size at @batch; NULL when out of memory. */
static MlTrace *
synth (const MlTrace *tmpl, const Run *t, const Line *lines, uint64_t batch)
{
  MlTrace *s = ml_trace_new ();
  if (!s)
    return NULL;
  for (size_t k = 0; k < tmpl->n_events; k++)
    {
      MlEvent ev = tmpl->events[k];
      if (ev.kind >= ML_EV_SEGMENT_ALLOC && ev.kind <= ML_EV_SEGMENT_UNMAP)
        continue;   /* the sizes change: the emulation reserves its own */
      size_t i = t->of_event[k];
      if (i != SIZE_MAX)
        {
          double v = lines[i].a + lines[i].c * (double) batch;
          ev.size = v < 1 ? 1 : (uint64_t) llround (v);
        }
      ev.name = ev.stack = 0;
      if (!ml_trace_append (s, &ev))
        {
          ml_trace_free (s);
          return NULL;
        }
    }
  return s;
}

/* The reserved peak of @t from an empty device under @options and
 * @capacity; *@fits: no OOM. */
static int
peak_of (const MlTrace *t, const char *options, uint64_t capacity, uint64_t *peak, bool *fits, MlError *err)
{
  MlCacheReplayOpts o = { .capacity = capacity };
  MlCacheReplay r;
  int rc = ml_cache_replay (t, options, &o, &r, err);
  if (rc < 0)
    return rc;
  *peak = r.reserved_peak;
  *fits = !r.oom;
  ml_cache_replay_clear (&r);
  return 0;
}

typedef struct {
  const MlTrace *const *runs;
  const uint64_t *batches;
  size_t          n;
  Run            *idx;
  MlError        *err;
} Fit;

/* The reserved peak at @batch predicted from the runs but @skip, with the
 * largest of them as the template. */
static int
predict (const Fit *f, size_t skip, uint64_t batch, const char *options, uint64_t capacity, uint64_t *peak, bool *fits,
         size_t *matched)
{
  size_t tmpl = SIZE_MAX;
  for (size_t j = 0; j < f->n; j++)
    if (j != skip && (tmpl == SIZE_MAX || f->batches[j] > f->batches[tmpl]))
      tmpl = j;
  const Run *t = &f->idx[tmpl];
  Line *lines = malloc ((t->n ? t->n : 1) * sizeof *lines);
  if (!lines)
    return ml_error_set (f->err, ML_ENOMEM, "out of memory");
  size_t m;
  fit_lines (f->idx, f->batches, f->n, tmpl, skip, lines, &m);
  if (matched)
    *matched = m;
  MlTrace *s = synth (f->runs[tmpl], t, lines, batch);
  free (lines);
  if (!s)
    return ml_error_set (f->err, ML_ENOMEM, "out of memory");
  int rc = peak_of (s, options, capacity, peak, fits, f->err);
  ml_trace_free (s);
  return rc;
}

/* The largest batch whose prediction fits under @capacity (0: not even 1). */
static int
largest_fit (const Fit *f, const char *options, uint64_t capacity, uint64_t *out, bool *capped)
{
  uint64_t lo = 0, hi = 1, peak, limit = (uint64_t) 1 << 20;
  bool fits;
  int rc;
  /* exponential: the first batch that does not fit */
  for (;;)
    {
      if ((rc = predict (f, SIZE_MAX, hi, options, capacity, &peak, &fits, NULL)) < 0)
        return rc;
      if (!fits)
        break;
      lo = hi;
      if (hi >= limit)
        {
          *capped = true;
          *out = lo;
          return 0;
        }
      hi *= 2;
    }
  while (hi - lo > 1)
    {
      uint64_t mid = lo + (hi - lo) / 2;
      if ((rc = predict (f, SIZE_MAX, mid, options, capacity, &peak, &fits, NULL)) < 0)
        return rc;
      *(fits ? &lo : &hi) = mid;
    }
  *out = lo;
  return 0;
}

static int
add_point (MlBatchFit *out, uint64_t batch)
{
  for (size_t k = 0; k < out->n_points; k++)
    if (out->points[k].batch == batch)
      return 0;
  MlBatchPoint *p = realloc (out->points, (out->n_points + 1) * sizeof *p);
  if (!p)
    return ML_ENOMEM;
  out->points = p;
  memset (&p[out->n_points], 0, sizeof *p);
  p[out->n_points++].batch = batch;
  return 0;
}

/* Each point predicted (and, at a run's batch, the run's own peak). */
static int
fill_points (const Fit *f, MlBatchFit *out, const char *options, const char *alt)
{
  int rc = 0;
  for (size_t k = 0; rc == 0 && k < out->n_points; k++)
    {
      MlBatchPoint *p = &out->points[k];
      for (size_t j = 0; rc == 0 && j < f->n; j++)
        if (f->batches[j] == p->batch)
          {
            bool fits;
            p->given = true;
            rc = peak_of (f->runs[j], options, out->capacity, &p->actual, &fits, f->err);
          }
      if (rc == 0)
        rc = predict (f, SIZE_MAX, p->batch, options, out->capacity, &p->predicted, &p->fits, NULL);
      if (rc == 0 && alt)
        rc = predict (f, SIZE_MAX, p->batch, alt, out->capacity, &p->predicted_alt, &p->fits_alt, NULL);
    }
  return rc;
}

/* With three runs or more: each run's peak predicted from the others. */
static int
leave_one_out (const Fit *f, const char *options, double *error)
{
  *error = -1;
  if (f->n < 3)
    return 0;
  *error = 0;
  for (size_t j = 0; j < f->n; j++)
    {
      uint64_t actual, pred;
      bool fits;
      int rc = peak_of (f->runs[j], options, 0, &actual, &fits, f->err);
      if (rc == 0)
        rc = predict (f, j, f->batches[j], options, 0, &pred, &fits, NULL);
      if (rc < 0)
        return rc;
      double e = actual ? fabs ((double) pred - (double) actual) / (double) actual : 0;
      if (e > *error)
        *error = e;
    }
  return 0;
}

int
ml_batch_fit (const MlTrace *const *runs, const uint64_t *batches, size_t n, const char *options, const char *alt,
              uint64_t capacity, MlBatchFit *out, MlError *err)
{
  if (n < 2)
    return ml_error_set (err, ML_EUSAGE, "which batch fits: give at least two runs at different batch sizes");
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (batches[i] == batches[j])
        return ml_error_set (err, ML_EUSAGE, "which batch fits: two runs at batch %llu",
                             (unsigned long long) batches[i]);
  char rec[512];
  size_t tmpl = 0;
  for (size_t j = 1; j < n; j++)
    tmpl = batches[j] > batches[tmpl] ? j : tmpl;
  /* the settings the template recorded, unless told */
  options = options ? options : _ml_cache_options (runs[tmpl], NULL, rec, sizeof rec);
  memset (out, 0, sizeof *out);
  out->n_runs = n;
  out->capacity = capacity;
  Fit f = { runs, batches, n, calloc (n, sizeof (Run)), err };
  int rc = f.idx ? 0 : ML_ENOMEM;
  for (size_t j = 0; rc == 0 && j < n; j++)
    rc = run_index (runs[j], &f.idx[j]);
  if (rc == ML_ENOMEM)
    rc = ml_error_set (err, ML_ENOMEM, "out of memory");
  out->template_allocs = rc == 0 ? f.idx[tmpl].n : 0;
  for (size_t j = 0; rc == 0 && j < n; j++)
    rc = add_point (out, batches[j]) < 0 ? ml_error_set (err, ML_ENOMEM, "out of memory") : 0;
  uint64_t peak;
  bool fits;
  if (rc == 0)
    rc = predict (&f, SIZE_MAX, batches[tmpl], options, 0, &peak, &fits, &out->matched);
  if (rc == 0)
    rc = leave_one_out (&f, options, &out->loo_error);
  if (rc == 0 && capacity)
    rc = largest_fit (&f, options, capacity, &out->largest, &out->capped);
  if (rc == 0 && capacity && alt)
    rc = largest_fit (&f, alt, capacity, &out->largest_alt, &out->capped);
  if (rc == 0 && capacity && out->largest)
    rc = add_point (out, out->largest) < 0 ? ml_error_set (err, ML_ENOMEM, "out of memory") : 0;
  if (rc == 0 && capacity && alt && out->largest_alt)
    rc = add_point (out, out->largest_alt) < 0 ? ml_error_set (err, ML_ENOMEM, "out of memory") : 0;
  if (rc == 0)
    rc = fill_points (&f, out, options, alt);
  for (size_t j = 0; f.idx && j < n; j++)
    run_clear (&f.idx[j]);
  free (f.idx);
  if (rc < 0)
    ml_batch_fit_clear (out);
  return rc;
}

void
ml_batch_fit_clear (MlBatchFit *fit)
{
  free (fit->points);
  memset (fit, 0, sizeof *fit);
}
