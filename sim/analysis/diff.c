/* diff.c — two runs compared (see diff.h). */
#include "sim/analysis/diff.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/strtab.h"
#include "sim/base/u64map.h"

const char *
ml_diff_status_name (MlDiffStatus s)
{
  return s == ML_DIFF_NEW ? "new" : s == ML_DIFF_GONE ? "gone" : "both";
}

const char *
ml_diff_site (const MlBuffers *bufs, size_t i)
{
  const MlTrace *t = bufs->trace;
  const MlBuffer *b = &bufs->buf[i];
  const char *s = NULL;
  if (t && b->stack && b->stack < t->n_stacks && t->stacks[b->stack].site)
    s = ml_trace_str (t, t->stacks[b->stack].site);
  if ((!s || !*s) && t && b->name)
    s = ml_trace_str (t, b->name);
  return s && *s ? s : "(no call site)";
}

typedef struct {
  uint32_t seg, site, ord, buf;
} Key;

static int
by_key (const void *a, const void *b)
{
  const Key *x = a, *y = b;
  if (x->seg != y->seg)
    return x->seg < y->seg ? -1 : 1;
  if (x->site != y->site)
    return x->site < y->site ? -1 : 1;
  return x->ord < y->ord ? -1 : x->ord > y->ord;
}

typedef struct {
  uint64_t a_tick, b_tick;
} Anchor;

/* Marks both runs have: the k-th mark named N in A with the k-th named N
 * in B, kept when they are in the same order in both. */
static int
find_anchors (const MlTrace *ta, const MlTrace *tb, MlStrtab *names, Anchor **out, size_t *n_out)
{
  *out = NULL;
  *n_out = 0;
  if (!ta || !tb)
    return 0;
  /* B's marks: (name, occurrence) -> tick */
  MlU64Map occ_b, at_b, occ_a;
  ml_u64map_init (&occ_b);
  ml_u64map_init (&at_b);
  ml_u64map_init (&occ_a);
  size_t nb = 0;
  uint64_t *b_ticks = NULL;
  int rc = 0;
  for (size_t e = 0; e < tb->n_events; e++)
    if (tb->events[e].kind == ML_EV_MARK && tb->events[e].name)
      nb++;
  b_ticks = malloc ((nb ? nb : 1) * sizeof *b_ticks);
  Anchor *an = NULL;
  size_t n_an = 0, cap_an = 0;
  if (!b_ticks)
    rc = -1;
  size_t k = 0;
  for (size_t e = 0; rc == 0 && e < tb->n_events; e++)
    {
      const MlEvent *ev = &tb->events[e];
      if (ev->kind != ML_EV_MARK || !ev->name)
        continue;
      uint32_t name = ml_strtab_intern0 (names, ml_trace_str (tb, ev->name)), o = 0;
      ml_u64map_get (&occ_b, name, &o);
      if (ml_u64map_put (&occ_b, name, o + 1) < 0 || ml_u64map_put (&at_b, (uint64_t) name << 32 | o, (uint32_t) k) < 0)
        rc = -1;
      b_ticks[k++] = ev->tick;
    }
  uint64_t last_b = 0;
  bool any = false;
  for (size_t e = 0; rc == 0 && e < ta->n_events; e++)
    {
      const MlEvent *ev = &ta->events[e];
      if (ev->kind != ML_EV_MARK || !ev->name)
        continue;
      uint32_t name = ml_strtab_intern0 (names, ml_trace_str (ta, ev->name)), o = 0, j;
      ml_u64map_get (&occ_a, name, &o);
      if (ml_u64map_put (&occ_a, name, o + 1) < 0)
        {
          rc = -1;
          break;
        }
      if (!ml_u64map_get (&at_b, (uint64_t) name << 32 | o, &j) || (any && b_ticks[j] <= last_b))
        continue;
      if (n_an == cap_an)
        {
          size_t cap = cap_an ? cap_an * 2 : 16;
          Anchor *p = realloc (an, cap * sizeof *p);
          if (!p)
            {
              rc = -1;
              break;
            }
          an = p;
          cap_an = cap;
        }
      an[n_an++] = (Anchor) { ev->tick, b_ticks[j] };
      last_b = b_ticks[j];
      any = true;
    }
  ml_u64map_clear (&occ_a);
  ml_u64map_clear (&occ_b);
  ml_u64map_clear (&at_b);
  free (b_ticks);
  if (rc < 0)
    {
      free (an);
      return -1;
    }
  *out = an;
  *n_out = n_an;
  return 0;
}

/* Pairing keys of one run: (marks passed, site, occurrence). */
static int
make_keys (const MlBuffers *bufs, const uint32_t *site, const Anchor *an, size_t n_an, bool b_side, Key **out)
{
  Key *keys = malloc ((bufs->n ? bufs->n : 1) * sizeof *keys);
  MlU64Map count;
  ml_u64map_init (&count);
  if (!keys)
    return -1;
  size_t seg = 0;
  for (size_t i = 0; i < bufs->n; i++)
    {
      uint64_t start = bufs->buf[i].start;
      while (seg < n_an && (b_side ? an[seg].b_tick : an[seg].a_tick) <= start)
        seg++;
      uint64_t key = (uint64_t) seg << 32 | site[i];
      uint32_t o = 0;
      ml_u64map_get (&count, key, &o);
      if (ml_u64map_put (&count, key, o + 1) < 0)
        {
          ml_u64map_clear (&count);
          free (keys);
          return -1;
        }
      keys[i] = (Key) { (uint32_t) seg, site[i], o, (uint32_t) i };
    }
  ml_u64map_clear (&count);
  qsort (keys, bufs->n, sizeof *keys, by_key);
  *out = keys;
  return 0;
}

static int
by_change (const void *a, const void *b)
{
  const MlDiffRow *x = a, *y = b;
  uint64_t cx = (uint64_t) (x->change < 0 ? -x->change : x->change), cy = (uint64_t) (y->change < 0 ? -y->change : y->change);
  if (cx != cy)
    return cx > cy ? -1 : 1;
  uint64_t mx = x->a_bytes > x->b_bytes ? x->a_bytes : x->b_bytes, my = y->a_bytes > y->b_bytes ? y->a_bytes : y->b_bytes;
  if (mx != my)
    return mx > my ? -1 : 1;
  return strcmp (x->site, y->site);
}

/* One end of a buffer's lifetime: +bytes at its start, -bytes at its end. */
typedef struct {
  uint32_t site;
  uint64_t tick;
  int64_t  delta;
} SiteStep;

static int
by_site_tick (const void *x, const void *y)
{
  const SiteStep *a = x, *b = y;
  if (a->site != b->site)
    return a->site < b->site ? -1 : 1;
  if (a->tick != b->tick)
    return a->tick < b->tick ? -1 : 1;
  return (a->delta > b->delta) - (a->delta < b->delta);   /* ends before starts: [start, end) */
}

/* Each site's own maximum of live bytes over @bufs, and its first tick,
 * into acc[site].a_max / b_max. */
static int
site_max (const MlBuffers *bufs, const uint32_t *site, MlDiffRow *acc, bool b_side)
{
  SiteStep *st = malloc ((2 * bufs->n + 1) * sizeof *st);
  if (!st)
    return ML_ENOMEM;
  for (size_t i = 0; i < bufs->n; i++)
    {
      st[2 * i] = (SiteStep) { site[i], bufs->buf[i].start, (int64_t) bufs->buf[i].rsize };
      st[2 * i + 1] = (SiteStep) { site[i], bufs->buf[i].end, -(int64_t) bufs->buf[i].rsize };
    }
  qsort (st, 2 * bufs->n, sizeof *st, by_site_tick);
  int64_t cur = 0;
  for (size_t k = 0; k < 2 * bufs->n; k++)
    {
      if (k && st[k].site != st[k - 1].site)
        cur = 0;
      cur += st[k].delta;
      MlDiffRow *r = &acc[st[k].site];
      uint64_t *mx = b_side ? &r->b_max : &r->a_max, *at = b_side ? &r->b_max_tick : &r->a_max_tick;
      if (cur > 0 && (uint64_t) cur > *mx)
        *mx = (uint64_t) cur, *at = st[k].tick;
    }
  free (st);
  return 0;
}

static bool
live_at (const MlBuffer *b, uint64_t tick)
{
  return b->rsize && b->start <= tick && tick < b->end;
}

int
ml_diff_compute (const MlBuffers *a, const MlBuffers *b, MlDiff *out, MlError *err)
{
  memset (out, 0, sizeof *out);
  out->a_peak = a->lower_bound, out->a_peak_tick = a->lower_bound_tick, out->a_end = a->end_tick;
  out->b_peak = b->lower_bound, out->b_peak_tick = b->lower_bound_tick, out->b_end = b->end_tick;
  MlStrtab *sites = ml_strtab_new (), *names = ml_strtab_new ();
  uint32_t *site_a = malloc ((a->n ? a->n : 1) * sizeof *site_a), *site_b = malloc ((b->n ? b->n : 1) * sizeof *site_b);
  Anchor *an = NULL;
  size_t n_an = 0;
  Key *ka = NULL, *kb = NULL;
  MlDiffRow *acc = NULL;
  int rc = ML_ENOMEM;
  if (!sites || !names || !site_a || !site_b)
    goto done;
  for (size_t i = 0; i < a->n; i++)
    if ((site_a[i] = ml_strtab_intern0 (sites, ml_diff_site (a, i))) == UINT32_MAX)
      goto done;
  for (size_t i = 0; i < b->n; i++)
    if ((site_b[i] = ml_strtab_intern0 (sites, ml_diff_site (b, i))) == UINT32_MAX)
      goto done;
  if (find_anchors (a->trace, b->trace, names, &an, &n_an) < 0)
    goto done;
  out->anchors = n_an;
  if (make_keys (a, site_a, an, n_an, false, &ka) < 0 || make_keys (b, site_b, an, n_an, true, &kb) < 0)
    goto done;
  size_t ns = ml_strtab_count (sites) + 1;
  acc = calloc (ns, sizeof *acc);
  if (!acc)
    goto done;
  for (size_t i = 0; i < a->n; i++)
    {
      acc[site_a[i]].a_allocs++;
      if (live_at (&a->buf[i], a->lower_bound_tick))
        acc[site_a[i]].a_bytes += a->buf[i].rsize;
    }
  for (size_t i = 0; i < b->n; i++)
    {
      acc[site_b[i]].b_allocs++;
      if (live_at (&b->buf[i], b->lower_bound_tick))
        acc[site_b[i]].b_bytes += b->buf[i].rsize;
    }
  if (site_max (a, site_a, acc, false) < 0 || site_max (b, site_b, acc, true) < 0)
    goto done;
  /* the pairs: a merge of the two sorted key lists */
  for (size_t i = 0, j = 0; i < a->n && j < b->n;)
    {
      int c = by_key (&ka[i], &kb[j]);
      if (c < 0)
        i++;
      else if (c > 0)
        j++;
      else
        {
          out->pairs++;
          if (a->buf[ka[i].buf].size != b->buf[kb[j].buf].size)
            acc[ka[i].site].resized++;
          i++, j++;
        }
    }
  size_t n = 0;
  for (size_t k = 0; k < ns; k++)
    if (acc[k].a_allocs || acc[k].b_allocs)
      n++;
  out->rows = calloc (n ? n : 1, sizeof *out->rows);
  if (!out->rows)
    goto done;
  for (size_t k = 0; k < ns; k++)
    {
      MlDiffRow *r = &acc[k];
      if (!r->a_allocs && !r->b_allocs)
        continue;
      const char *name = ml_strtab_get (sites, (uint32_t) k);
      r->site = strdup (name ? name : "");
      if (!r->site)
        goto done;
      r->change = (int64_t) r->b_bytes - (int64_t) r->a_bytes;
      r->status = !r->a_allocs ? ML_DIFF_NEW : !r->b_allocs ? ML_DIFF_GONE : ML_DIFF_BOTH;
      out->rows[out->n_rows++] = *r;
      r->site = NULL;
    }
  qsort (out->rows, out->n_rows, sizeof *out->rows, by_change);
  rc = 0;
done:
  free (acc);
  free (ka);
  free (kb);
  free (an);
  free (site_a);
  free (site_b);
  ml_strtab_free (sites);
  ml_strtab_free (names);
  if (rc < 0)
    {
      ml_diff_clear (out);
      return ml_error_set (err, rc, "out of memory comparing %zu and %zu buffers", a->n, b->n);
    }
  return 0;
}

void
ml_diff_clear (MlDiff *d)
{
  for (size_t i = 0; i < d->n_rows; i++)
    free (d->rows[i].site);
  free (d->rows);
  memset (d, 0, sizeof *d);
}
