#include "sim/analysis/diagnose.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jsonutil.h"
#include "sim/base/u64map.h"
#include "sim/base/units.h"

static uint32_t
site_of (const MlBuffers *bufs, const MlBuffer *b)
{
  const MlTrace *t = bufs->trace;
  if (t && b->stack && b->stack < t->n_stacks && t->stacks[b->stack].site)
    return t->stacks[b->stack].site;
  return b->name;
}

const char *
ml_diagnosis_site_label (const MlBuffers *bufs, uint32_t site)
{
  const char *s = site && bufs->trace ? ml_trace_str (bufs->trace, site) : NULL;
  return s && *s ? s : "(unnamed)";
}

static const MlBuffers *sort_bufs;
static int
by_size_desc (const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
  uint64_t sx = sort_bufs->buf[x].rsize, sy = sort_bufs->buf[y].rsize;
  if (sx != sy)
    return sx > sy ? -1 : 1;
  return x < y ? -1 : x > y;
}

static int
by_bytes_desc (const void *a, const void *b)
{
  const MlSiteBlame *x = a, *y = b;
  if (x->bytes != y->bytes)
    return x->bytes > y->bytes ? -1 : 1;
  return x->site < y->site ? -1 : x->site > y->site;
}

/* The trace's max live bytes with every size rounded to @align. */
static uint64_t
lower_bound_with (const MlBuffers *bufs, uint64_t align)
{
  MlSweep sw;
  MlSweepStep st;
  ml_sweep_init (&sw, bufs);
  uint64_t cur = 0, max = 0;
  while (ml_sweep_next (&sw, &st))
    {
      uint64_t sz = ml_align_up (bufs->buf[st.buffer].size, align);
      if (st.is_alloc)
        {
          cur += sz;
          if (cur > max)
            max = cur;
        }
      else
        cur -= sz;
    }
  return max;
}

static bool
live_at (const MlBuffers *bufs, size_t i, uint64_t tick, uint32_t request)
{
  const MlBuffer *b = &bufs->buf[i];
  if (i == request || b->end <= tick)
    return false;
  return b->start < tick || (b->start == tick && i < request);
}

static int
blame (const MlBuffers *bufs, const MlOom *oom, MlDiagnosis *d)
{
  size_t n = 0;
  for (size_t i = 0; i < bufs->n && bufs->buf[i].start <= oom->tick; i++)
    n += live_at (bufs, i, oom->tick, oom->buffer);
  uint32_t *all = malloc ((n ? n : 1) * sizeof *all);
  MlSiteBlame *sites = malloc ((n ? n : 1) * sizeof *sites);
  MlU64Map map;
  ml_u64map_init (&map);
  if (!all || !sites)
    goto oom;
  size_t k = 0;
  for (size_t i = 0; i < bufs->n && bufs->buf[i].start <= oom->tick; i++)
    if (live_at (bufs, i, oom->tick, oom->buffer))
      {
        const MlBuffer *b = &bufs->buf[i];
        all[k++] = (uint32_t) i;
        d->requested_live += b->size;
        uint32_t site = site_of (bufs, b), slot;
        if (!ml_u64map_get (&map, site, &slot))
          {
            slot = (uint32_t) d->n_sites++;
            sites[slot] = (MlSiteBlame) { .site = site, .largest = (uint32_t) i };
            if (ml_u64map_put (&map, site, slot) < 0)
              goto oom;
          }
        MlSiteBlame *sb = &sites[slot];
        sb->bytes += b->rsize;
        sb->count++;
        if (b->rsize > bufs->buf[sb->largest].rsize)
          sb->largest = (uint32_t) i;
      }
  qsort (sites, d->n_sites, sizeof *sites, by_bytes_desc);
  sort_bufs = bufs;
  qsort (all, n, sizeof *all, by_size_desc);
  sort_bufs = NULL;
  d->n_live_total = n;
  d->n_live = n < 100 ? n : 100;
  d->live = all;
  d->sites = sites;
  ml_u64map_clear (&map);
  return 0;
oom:
  free (all);
  free (sites);
  d->n_sites = 0;
  ml_u64map_clear (&map);
  return ML_ENOMEM;
}

static void
what_if (const MlBuffers *bufs, const MlOom *oom, MlDiagnosis *d)
{
  uint64_t aligns[8] = { 1, 64, 256, 512, 4096, 2097152 };
  size_t na = 6;
  bool have = false;
  for (size_t i = 0; i < na; i++)
    have = have || aligns[i] == bufs->align;
  if (!have)
    {
      size_t at = 0;
      while (at < na && aligns[at] < bufs->align)
        at++;
      memmove (aligns + at + 1, aligns + at, (na - at) * sizeof *aligns);
      aligns[at] = bufs->align;
      na++;
    }
  for (size_t k = 0; k < na; k++)
    {
      MlAlignWhatIf *w = &d->what_if[d->n_what_if++];
      w->align = aligns[k];
      w->lower_bound = lower_bound_with (bufs, aligns[k]);
      if (oom && oom->hit)
        {
          uint64_t live = ml_align_up (bufs->buf[oom->buffer].size, aligns[k]);
          for (size_t i = 0; i < bufs->n && bufs->buf[i].start <= oom->tick; i++)
            if (live_at (bufs, i, oom->tick, oom->buffer))
              live += ml_align_up (bufs->buf[i].size, aligns[k]);
          w->live_at_oom = live;
        }
    }
}

static int
recorded_oom (const MlBuffers *bufs, MlDiagnosis *d, MlError *err)
{
  const MlTrace *t = bufs->trace;
  if (!t)
    return 0;
  const MlEvent *e = NULL;
  for (size_t i = 0; i < t->n_events && !e; i++)
    if (t->events[i].kind == ML_EV_OOM)
      e = &t->events[i];
  if (!e)
    return 0;
  d->recorded = true;
  d->rec_tick = e->tick;
  d->rec_request = e->size;
  d->rec_device_free = e->addr;
  d->rec_stream = e->stream;
  d->rec_live = ml_buffers_live_at (bufs, e->tick);
  MlPlan *rec = NULL;
  if (ml_plan_from_recorded (bufs, &rec, NULL) < 0)
    {
      d->rec_verdict = ML_OOM_CAPACITY;
      return 0;
    }
  uint64_t largest = 0, free_bytes = 0;
  int rc = ml_metrics_free_at (bufs, rec, e->tick, &largest, &free_bytes, err);
  ml_plan_free (rec);
  if (rc < 0)
    return rc;
  d->rec_have_plan = true;
  d->rec_cached_free = free_bytes;
  d->rec_largest_cached = largest;
  d->rec_reserved = d->rec_live + free_bytes;
  d->rec_verdict = free_bytes + d->rec_device_free >= d->rec_request ? ML_OOM_FRAGMENTATION : ML_OOM_CAPACITY;
  return 0;
}

int
ml_diagnose (const MlBuffers *bufs, const MlPlan *plan, uint64_t capacity,
             const MlStrategy *const *alternatives, const MlKnobs *knobs,
             MlDiagnosis *out, MlError *err)
{
  MlDiagnosis d;
  memset (&d, 0, sizeof d);
  d.capacity = capacity;
  d.lower_bound = bufs->lower_bound;
  snprintf (d.strategy, sizeof d.strategy, "%s", plan->strategy ? plan->strategy : "plan");
  MlMetrics m;
  int rc = ml_metrics_compute (bufs, plan, &m, NULL, err);
  if (rc < 0)
    return rc;
  d.peak = m.peak;
  d.oom = plan->oom;
  /* a request to blame: an OOM with request 0 only says "over the
   * capacity" (a recorded plan, or a static plan measured afterwards) */
  bool request = d.oom.hit && d.oom.request && d.oom.buffer < bufs->n;
  if (request && (rc = blame (bufs, &d.oom, &d)) < 0)
    return ml_error_set (err, rc, "out of memory");
  what_if (bufs, request ? &d.oom : NULL, &d);
  if ((rc = recorded_oom (bufs, &d, err)) < 0)
    {
      ml_diagnosis_clear (&d);
      return rc;
    }
  size_t n_alt = 0;
  while (alternatives && alternatives[n_alt])
    n_alt++;
  if (capacity && n_alt)
    {
      d.alts = calloc (n_alt, sizeof *d.alts);
      if (!d.alts)
        {
          ml_diagnosis_clear (&d);
          return ml_error_set (err, ML_ENOMEM, "out of memory");
        }
      MlKnobs k = *knobs;
      k.capacity = capacity;
      for (size_t i = 0; i < n_alt; i++)
        {
          /* the diagnosed plan's own strategy, and the recorded plan, are no alternative */
          if ((alternatives[i]->flags & ML_STRATEGY_RECORDED) || strcmp (alternatives[i]->name, d.strategy) == 0)
            continue;
          MlResult r;
          memset (&r, 0, sizeof r);
          if ((rc = ml_sim_evaluate (bufs, alternatives[i], &k, &r, err)) < 0)
            {
              ml_result_clear (&r);
              ml_diagnosis_clear (&d);
              return rc;
            }
          MlDiagAlt *a = &d.alts[d.n_alts++];
          a->name = alternatives[i]->name;
          a->status = r.status;
          if (r.status == 0)
            {
              a->peak = r.metrics.peak;
              a->oom = r.plan->oom;
              a->seconds = r.plan->seconds;
              if (!a->oom.hit && a->peak > capacity)
                ml_oom_over_capacity (&a->oom);   /* a static plan larger than the capacity */
            }
          ml_result_clear (&r);
        }
    }
  *out = d;
  return 0;
}

void
ml_diagnosis_clear (MlDiagnosis *d)
{
  free (d->sites);
  free (d->live);
  free (d->alts);
  memset (d, 0, sizeof *d);
}

int
ml_diagnosis_write_json (const MlDiagnosis *d, const MlBuffers *bufs, FILE *fp, MlError *err)
{
  int rc = 0;
  fprintf (fp, "{\"strategy\":");
  ml_json_put_str (fp, d->strategy);
  fprintf (fp, ",\"capacity\":%" PRIu64 ",\"peak\":%" PRIu64 ",\"lower_bound\":%" PRIu64 ",\"fits\":%s,\"oom\":",
           d->capacity, d->peak, d->lower_bound, d->oom.hit ? "false" : "true");
  if (ml_oom_write_json (&d->oom, bufs, fp, err) < 0)
    rc = ML_EIO;
  if (d->oom.hit && d->oom.request)
    {
      fprintf (fp, ",\"live_buffers\":%zu,\"requested_live\":%" PRIu64 ",\"blame\":[", d->n_live_total, d->requested_live);
      for (size_t i = 0; i < d->n_sites; i++)
        {
          const MlSiteBlame *s = &d->sites[i];
          fprintf (fp, "%s{\"site\":", i ? "," : "");
          ml_json_put_str (fp, ml_diagnosis_site_label (bufs, s->site));
          fprintf (fp, ",\"bytes\":%" PRIu64 ",\"buffers\":%zu,\"largest\":", s->bytes, s->count);
          ml_json_put_u64 (fp, bufs->buf[s->largest].id);
          fputc ('}', fp);
        }
      fputc (']', fp);
    }
  fputs (",\"alignment\":[", fp);
  for (size_t i = 0; i < d->n_what_if; i++)
    {
      const MlAlignWhatIf *w = &d->what_if[i];
      fprintf (fp, "%s{\"align\":%" PRIu64 ",\"lower_bound\":%" PRIu64, i ? "," : "", w->align, w->lower_bound);
      if (d->oom.hit && d->oom.request)
        fprintf (fp, ",\"live_at_oom\":%" PRIu64, w->live_at_oom);
      fprintf (fp, ",\"current\":%s}", w->align == bufs->align ? "true" : "false");
    }
  fputs ("],\"alternatives\":[", fp);
  for (size_t i = 0; i < d->n_alts; i++)
    {
      const MlDiagAlt *a = &d->alts[i];
      fprintf (fp, "%s{\"strategy\":", i ? "," : "");
      ml_json_put_str (fp, a->name);
      if (a->status < 0)
        fprintf (fp, ",\"error\":\"%s\"}", ml_error_code_name (a->status));
      else
        {
          fprintf (fp, ",\"fits\":%s,\"peak\":%" PRIu64 ",\"headroom\":", a->oom.hit ? "false" : "true", a->peak);
          if (a->oom.hit)
            fputs ("null", fp);
          else
            fprintf (fp, "%" PRIu64, d->capacity - a->peak);
          fputs (",\"oom\":", fp);
          if (ml_oom_write_json (&a->oom, bufs, fp, err) < 0)
            rc = ML_EIO;
          fputc ('}', fp);
        }
    }
  fputc (']', fp);
  fputs (",\"recorded_oom\":", fp);
  if (!d->recorded)
    fputs ("null", fp);
  else
    {
      fprintf (fp, "{\"tick\":%" PRIu64 ",\"request\":%" PRIu64 ",\"device_free\":%" PRIu64 ",\"stream\":%u,\"live\":%" PRIu64,
               d->rec_tick, d->rec_request, d->rec_device_free, d->rec_stream, d->rec_live);
      if (d->rec_have_plan)
        fprintf (fp, ",\"reserved\":%" PRIu64 ",\"cached_free\":%" PRIu64 ",\"largest_cached_block\":%" PRIu64
                 ",\"verdict\":\"%s\"",
                 d->rec_reserved, d->rec_cached_free, d->rec_largest_cached,
                 ml_oom_verdict_name (d->rec_verdict));
      fputc ('}', fp);
    }
  fputc ('}', fp);
  return rc < 0 || ferror (fp) ? ml_error_set (err, ML_EIO, "write error") : 0;
}

const char *
ml_oom_reason (const MlOom *o, char *buf, size_t len)
{
  char a[32], b[32];
  switch (o->verdict)
    {
    case ML_OOM_FRAGMENTATION:
      snprintf (buf, len, "%s free under the capacity, but the largest free block is %s",
                ml_format_size (o->free_bytes, a, sizeof a), ml_format_size (o->largest_free, b, sizeof b));
      break;
    case ML_OOM_CAPACITY:
      snprintf (buf, len, "only %s free under the capacity for a %s request", ml_format_size (o->free_bytes, a, sizeof a),
                ml_format_size (o->request, b, sizeof b));
      break;
    case ML_OOM_OVER_CAPACITY:
    default:
      snprintf (buf, len, "the layout is over the capacity; no single request to blame");
      break;
    }
  return buf;
}

const char *
ml_diagnosis_headline (const MlDiagnosis *d, char *buf, size_t len)
{
  char a[32], b[32], c[32];
  ml_format_size (d->capacity, a, sizeof a);
  if (!d->oom.hit)
    snprintf (buf, len, "The %s plan fits under %s (peak %s, headroom %s).", d->strategy, a, ml_format_size (d->peak, b, sizeof b),
              ml_format_size (d->capacity > d->peak ? d->capacity - d->peak : 0, c, sizeof c));
  else if (!d->oom.request)
    snprintf (buf, len, "The %s plan peaks at %s, over the capacity %s.", d->strategy, ml_format_size (d->peak, b, sizeof b), a);
  else
    snprintf (buf, len, "The %s plan runs out of memory under %s at tick %" PRIu64 " on a %s request.", d->strategy, a,
              d->oom.tick, ml_format_size (d->oom.request, b, sizeof b));
  return buf;
}

const char *
ml_diagnosis_recorded_reason (const MlDiagnosis *d, char *buf, size_t len)
{
  char a[32];
  ml_format_size (d->rec_cached_free + d->rec_device_free, a, sizeof a);
  if (d->rec_verdict == ML_OOM_FRAGMENTATION)
    snprintf (buf, len, "cached free + device free = %s would hold the request, but no block is large enough", a);
  else
    snprintf (buf, len, "cached free + device free = %s is less than the request", a);
  return buf;
}
