#include "sim/analysis/diagnose.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jsonutil.h"
#include "sim/base/u64map.h"
#include "sim/base/units.h"
#include "sim/recorded.h"

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

/* The buffers live at @tick just before request @request (bufs->n =
 * none: every buffer live at the tick), by call site. Fills the arrays
 * the caller frees. */
static int
blame_at (const MlBuffers *bufs, uint64_t tick, uint32_t request, MlSiteBlame **sites_out, size_t *n_sites_out,
          uint32_t **live_out, size_t *n_live_out, uint64_t *requested_live)
{
  size_t n = 0, n_sites = 0;
  for (size_t i = 0; i < bufs->n && bufs->buf[i].start <= tick; i++)
    n += live_at (bufs, i, tick, request);
  uint32_t *all = malloc ((n ? n : 1) * sizeof *all);
  MlSiteBlame *sites = malloc ((n ? n : 1) * sizeof *sites);
  MlU64Map map;
  ml_u64map_init (&map);
  if (!all || !sites)
    goto oom;
  size_t k = 0;
  for (size_t i = 0; i < bufs->n && bufs->buf[i].start <= tick; i++)
    if (live_at (bufs, i, tick, request))
      {
        const MlBuffer *b = &bufs->buf[i];
        all[k++] = (uint32_t) i;
        *requested_live += b->size;
        uint32_t site = site_of (bufs, b), slot;
        if (!ml_u64map_get (&map, site, &slot))
          {
            slot = (uint32_t) n_sites++;
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
  qsort (sites, n_sites, sizeof *sites, by_bytes_desc);
  sort_bufs = bufs;
  qsort (all, n, sizeof *all, by_size_desc);
  sort_bufs = NULL;
  *n_live_out = n;
  *sites_out = sites;
  *n_sites_out = n_sites;
  if (live_out)
    *live_out = all;
  else
    free (all);
  ml_u64map_clear (&map);
  return 0;
oom:
  free (all);
  free (sites);
  ml_u64map_clear (&map);
  return ML_ENOMEM;
}

static int
blame (const MlBuffers *bufs, const MlOom *oom, MlDiagnosis *d)
{
  int rc = blame_at (bufs, oom->tick, oom->buffer, &d->sites, &d->n_sites, &d->live, &d->n_live_total,
                     &d->requested_live);
  d->n_live = d->n_live_total < 100 ? d->n_live_total : 100;
  return rc;
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
          /* the request: a buffer of the replay, or the recorded OOM's
           * (ml_recorded_oom_mark: no buffer, its size as the file has it) */
          uint64_t live = ml_align_up (oom->buffer < bufs->n ? bufs->buf[oom->buffer].size : oom->request, aligns[k]);
          for (size_t i = 0; i < bufs->n && bufs->buf[i].start <= oom->tick; i++)
            if (live_at (bufs, i, oom->tick, oom->buffer))
              live += ml_align_up (bufs->buf[i].size, aligns[k]);
          w->live_at_oom = live;
        }
    }
}

int
ml_recorded_oom (const MlBuffers *bufs, MlRecordedOom *out, MlError *err)
{
  memset (out, 0, sizeof *out);
  const MlTrace *t = bufs->trace;
  if (!t)
    return 0;
  const MlEvent *e = NULL;
  size_t at = 0;
  for (size_t i = 0; i < t->n_events && !e; i++)
    if (t->events[i].kind == ML_EV_OOM)
      e = &t->events[i], at = i;
  if (!e)
    return 0;
  out->found = true;
  out->tick = e->tick;
  out->index = at;
  for (size_t k = 0; k < t->n_device_ooms; k++)
    if (t->device_ooms[k].device == t->device)
      {
        out->index = t->device_ooms[k].index;   /* the file's own numbering */
        break;
      }
  out->request = e->size;
  out->device_free = e->addr;
  out->stream = e->stream;
  out->stack = e->stack;
  out->live = ml_buffers_live_at (bufs, e->tick);
  MlPlan *rec = NULL;
  if (ml_plan_from_recorded (bufs, &rec, NULL) < 0)
    return 0;
  uint64_t largest = 0, free_bytes = 0;
  int rc = ml_metrics_free_at (bufs, rec, e->tick, &largest, &free_bytes, err);
  ml_plan_free (rec);
  if (rc < 0)
    return rc;
  out->have_plan = true;
  out->cached_free = free_bytes;
  out->largest_cached = largest;
  out->reserved = out->live + free_bytes;
  out->verdict = ml_oom_verdict_of (out->request, free_bytes + out->device_free);
  return 0;
}

uint64_t
ml_recorded_oom_capacity (const MlRecordedOom *rec)
{
  return rec->found && rec->have_plan ? rec->reserved + rec->device_free : 0;
}

int
ml_recorded_oom_replay (const MlBuffers *bufs, const MlRecordedOom *rec, MlBuffers **out, MlError *err)
{
  uint64_t id = 0;
  for (size_t i = 0; i < bufs->n; i++)
    if (bufs->buf[i].id >= id)
      id = bufs->buf[i].id + 1;
  MlBuffer b = { .id = id, .size = rec->request, .start = rec->tick, .end = rec->tick + 1, .stack = rec->stack,
                 .stream = rec->stream };
  return ml_buffers_with (bufs, &b, (uint32_t) rec->index, out, err);
}

void
ml_recorded_oom_mark (const MlRecordedOom *rec, const MlBuffers *bufs, MlPlan *plan)
{
  if (!rec->found)
    return;
  plan->oom = (MlOom) { .hit = true, .tick = rec->tick, .buffer = (uint32_t) bufs->n, .request = rec->request,
                        .live = rec->live, .reserved = rec->reserved,
                        .free_bytes = rec->cached_free + rec->device_free, .largest_free = rec->largest_cached,
                        .verdict = rec->verdict };
}

int
ml_recorded_oom_apply (const MlBuffers *bufs, MlPlan *plan, MlError *err)
{
  MlRecordedOom rec;
  int rc = ml_recorded_oom (bufs, &rec, err);
  if (rc < 0)
    return rc;
  ml_recorded_oom_mark (&rec, bufs, plan);
  return 0;
}

const char *
ml_diagnosis_user_frames (const MlTrace *t, uint32_t stack, size_t max, char *buf, size_t len)
{
  buf[0] = 0;
  if (!t || !stack || stack >= t->n_stacks)
    return buf;
  const MlStack *st = &t->stacks[stack];
  size_t n = 0, used = 0;
  for (uint32_t k = 0; k < st->n && n < max; k++)
    {
      const MlFrame *f = ml_trace_stack_frame (t, st, k);
      const char *file = ml_trace_str (t, f->file), *func = ml_trace_str (t, f->func);
      if (ml_frame_is_framework (file, func))
        continue;
      int w = snprintf (buf + used, len - used, "%s%s:%u %s", n ? " <- " : "", file, f->line, func);
      if (w < 0 || (size_t) w >= len - used)
        break;
      used += (size_t) w;
      n++;
    }
  return buf;
}

static int
recorded_oom (const MlBuffers *bufs, const MlRecordedOom *given, MlDiagnosis *d, MlError *err)
{
  MlRecordedOom found;
  if (!given)
    {
      int rc = ml_recorded_oom (bufs, &found, err);
      if (rc < 0)
        return rc;
      given = &found;
    }
  if (!given->found)
    return 0;
  d->recorded = true;
  d->rec_tick = given->tick;
  d->rec_index = given->index;
  d->rec_request = given->request;
  d->rec_device_free = given->device_free;
  d->rec_stream = given->stream;
  d->rec_stack = given->stack;
  d->rec_live = given->live;
  d->rec_have_plan = given->have_plan;
  d->rec_reserved = given->reserved;
  d->rec_cached_free = given->cached_free;
  d->rec_largest_cached = given->largest_cached;
  d->rec_verdict = given->verdict;
  /* what was live: the buffers of @bufs at the tick, less the refused
   * request itself when @bufs is the replay that includes it */
  uint32_t skip = (uint32_t) bufs->n;
  for (size_t i = 0; i < bufs->n && bufs->buf[i].start <= given->tick; i++)
    if (bufs->buf[i].start == given->tick && !(bufs->buf[i].flags & ML_BUF_HAS_ADDR) && bufs->buf[i].size == given->request)
      skip = (uint32_t) i;
  return blame_at (bufs, given->tick, skip, &d->rec_sites, &d->rec_n_sites, NULL, &d->rec_n_live_total,
                   &d->rec_requested_live) < 0 ? ml_error_set (err, ML_ENOMEM, "out of memory") : 0;
}

int
ml_site_blame_at (const MlBuffers *bufs, uint64_t tick, MlSiteBlame **sites, size_t *n_sites, size_t *n_live,
                  MlError *err)
{
  uint64_t requested = 0;
  /* request bufs->n: no request to leave out, every buffer live at the tick */
  if (blame_at (bufs, tick, (uint32_t) bufs->n, sites, n_sites, NULL, n_live, &requested) < 0)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  return 0;
}

int
ml_diagnose (const MlBuffers *bufs, const MlPlan *plan, uint64_t capacity,
             const MlStrategy *const *alternatives, const MlKnobs *knobs,
             const MlRecordedOom *recorded, MlDiagnosis *out, MlError *err)
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
  /* the recorded plan marked with the recorded OOM (a report) */
  bool recorded_request = d.oom.hit && d.oom.request && d.oom.buffer == bufs->n;
  what_if (bufs, request || recorded_request ? &d.oom : NULL, &d);
  if ((rc = recorded_oom (bufs, recorded, &d, err)) < 0)
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
          ml_infeasible_move (&a->infeasible, &r.infeasible);
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
  free (d->rec_sites);
  for (size_t i = 0; i < d->n_alts; i++)
    ml_infeasible_clear (&d->alts[i].infeasible);
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
        {
          fprintf (fp, ",\"error\":\"%s\"", ml_error_code_name (a->status));
          if (a->infeasible.n)
            {
              fputs (",\"infeasible_subset\":", fp);
              if (ml_infeasible_write_json (&a->infeasible, bufs, fp, err) < 0)
                rc = ML_EIO;
            }
          fputc ('}', fp);
        }
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
      fprintf (fp, "{\"tick\":%" PRIu64 ",\"index\":%" PRIu64 ",\"request\":%" PRIu64 ",\"device_free\":%" PRIu64
               ",\"stream\":%u,\"live\":%" PRIu64,
               d->rec_tick, d->rec_index, d->rec_request, d->rec_device_free, d->rec_stream, d->rec_live);
      if (d->rec_have_plan)
        fprintf (fp, ",\"reserved\":%" PRIu64 ",\"cached_free\":%" PRIu64 ",\"largest_cached_block\":%" PRIu64
                 ",\"implied_capacity\":%" PRIu64 ",\"verdict\":\"%s\"",
                 d->rec_reserved, d->rec_cached_free, d->rec_largest_cached, d->rec_reserved + d->rec_device_free,
                 ml_oom_verdict_name (d->rec_verdict));
      const MlTrace *t = bufs->trace;
      if (t && d->rec_stack && d->rec_stack < t->n_stacks)
        {
          fputs (",\"site\":", fp);
          ml_json_put_str (fp, ml_diagnosis_site_label (bufs, t->stacks[d->rec_stack].site));
          char frames[1024];
          fputs (",\"user_frames\":", fp);
          ml_json_put_str (fp, ml_diagnosis_user_frames (t, d->rec_stack, 3, frames, sizeof frames));
        }
      fprintf (fp, ",\"live_buffers\":%zu,\"requested_live\":%" PRIu64 ",\"blame\":[", d->rec_n_live_total,
               d->rec_requested_live);
      for (size_t i = 0; i < d->rec_n_sites; i++)
        {
          const MlSiteBlame *sb = &d->rec_sites[i];
          fprintf (fp, "%s{\"site\":", i ? "," : "");
          ml_json_put_str (fp, ml_diagnosis_site_label (bufs, sb->site));
          fprintf (fp, ",\"bytes\":%" PRIu64 ",\"buffers\":%zu,\"largest\":", sb->bytes, sb->count);
          ml_json_put_u64 (fp, bufs->buf[sb->largest].id);
          fputc ('}', fp);
        }
      fputs ("]}", fp);
    }
  fputc ('}', fp);
  return rc < 0 || ferror (fp) ? ml_error_set (err, ML_EIO, "write error: %s", strerror (errno ? errno : EIO)) : 0;
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
    case ML_OOM_EMPTY_REQUEST:
      snprintf (buf, len, "the request is empty (0 B): no layout refuses 0 bytes, so neither the %s free nor their "
                "fragmentation is why", ml_format_size (o->free_bytes, a, sizeof a));
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
  char a[32], r[32];
  ml_format_size (d->rec_cached_free + d->rec_device_free, a, sizeof a);
  ml_format_size (d->rec_request, r, sizeof r);
  if (d->rec_verdict == ML_OOM_EMPTY_REQUEST)
    snprintf (buf, len, "the request is empty (0 B): no allocator fails for 0 bytes (PyTorch records no such OOM), "
              "so neither the %s of cached free + device free nor their fragmentation is why; the entry contradicts itself", a);
  else if (d->rec_verdict == ML_OOM_FRAGMENTATION)
    snprintf (buf, len, "cached free + device free = %s would hold the %s request, but no block is large enough", a, r);
  else
    snprintf (buf, len, "cached free + device free = %s is less than the %s request", a, r);
  return buf;
}
