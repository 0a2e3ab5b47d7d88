/* caching-tune-json.c — a tune result as JSON (docs/report-schema.md,
 * TUNE). */
#include "strategies/caching-tune.h"

#include <errno.h>
#include <string.h>

#include "sim/base/jsonutil.h"

/* ,"key":value (a u64 as every memlens JSON writes one) */
static void
put_u64 (FILE *fp, const char *key, uint64_t v)
{
  fprintf (fp, ",\"%s\":", key);
  ml_json_put_u64 (fp, v);
}

static void
put_strands (FILE *fp, const MlStrandBreakdown *s)
{
  if (!s->valid)
    {
      fputs ("null", fp);
      return;
    }
  fputs ("{\"tick\":", fp);
  ml_json_put_u64 (fp, s->tick);
  put_u64 (fp, "request", s->request);
  put_u64 (fp, "reserved", s->reserved);
  put_u64 (fp, "allocated", s->allocated);
  put_u64 (fp, "requested", s->requested);
  put_u64 (fp, "largest_free", s->largest_free);
  for (int k = 0; k < ML_STRAND__COUNT; k++)
    {
      char key[32];
      snprintf (key, sizeof key, "%s", ml_strand_name ((MlStrand) k));
      for (char *c = key; *c; c++)
        *c = *c == ' ' ? '_' : *c;
      put_u64 (fp, key, s->bytes[k]);
    }
  fprintf (fp, ",\"memory_viz_internal\":%.6f,\"memory_viz_fragmentation\":%.6f}", s->viz_internal,
           s->viz_fragmentation);
}

static void
put_oom (FILE *fp, const MlCacheReplay *r)
{
  if (!r->oom)
    {
      fputs ("null", fp);
      return;
    }
  fputs ("{\"tick\":", fp);
  ml_json_put_u64 (fp, r->oom_tick);
  put_u64 (fp, "request", r->oom_request);
  put_u64 (fp, "live", r->oom_live);
  put_u64 (fp, "reserved", r->oom_reserved);
  fprintf (fp, ",\"recorded\":%s}", r->oom_recorded ? "true" : "false");
}

static void
put_row (FILE *fp, const MlTuneRow *row)
{
  fputs ("{\"change\":", fp);
  ml_json_put_str (fp, row->change);
  fputs (",\"settings\":", fp);
  ml_json_put_str (fp, row->settings);
  fprintf (fp, ",\"changed\":%u,\"cold\":%s", row->n_changed, row->cold ? "true" : "false");
  if (row->status < 0)
    {
      fputs (",\"error\":", fp);
      ml_json_put_str (fp, row->error);
      fputc ('}', fp);
      return;
    }
  const MlCacheReplay *r = &row->r;
  fprintf (fp, ",\"model\":%s", r->model ? "true" : "false");
  put_u64 (fp, "reserved_peak", r->reserved_peak);
  put_u64 (fp, "allocated_peak", r->allocated_peak);
  put_u64 (fp, "requested_peak", r->requested_peak);
  put_u64 (fp, "peak_tick", r->peak_tick);
  if (r->at_peak.valid)
    fprintf (fp, ",\"frag_at_peak\":%.6f", r->frag_at_peak);
  else
    fputs (",\"frag_at_peak\":null", fp);
  put_u64 (fp, "cuda_malloc", r->n_malloc);
  put_u64 (fp, "cuda_free", r->n_free);
  put_u64 (fp, "gc_released", r->gc_released);
  put_u64 (fp, "empty_cache_calls", r->empty_cache_calls);
  fprintf (fp, ",\"seconds\":%.6f,\"oom\":", row->seconds);
  put_oom (fp, r);
  fputs (",\"strands\":{\"peak\":", fp);
  put_strands (fp, &r->at_peak);
  fputs (",\"oom\":", fp);
  put_strands (fp, &r->at_oom);
  fputs ("}}", fp);
}

int
ml_tune_write_json (FILE *fp, const MlTune *t, MlError *err)
{
  static const char *const verdicts[] = { "no capacity", "fits", "fix", "none fits" };
  fputs ("{\"capacity\":", fp);
  ml_json_put_u64 (fp, t->capacity);
  fprintf (fp, ",\"capacity_from\":\"%s\",\"warm\":%s,\"recorded_settings\":",
           !t->capacity ? "none" : t->capacity_from_oom ? "recorded oom" : "--capacity", t->warm ? "true" : "false");
  ml_json_put_str (fp, t->recorded);
  fputs (",\"rows\":[", fp);
  for (size_t k = 0; k < t->n_rows; k++)
    {
      if (k)
        fputc (',', fp);
      put_row (fp, &t->rows[k]);
    }
  fprintf (fp, "],\"answer\":{\"verdict\":\"%s\",\"row\":", verdicts[t->verdict]);
  if (t->best >= 0)
    {
      fprintf (fp, "%ld,\"change\":", t->best);
      ml_json_put_str (fp, t->rows[t->best].change);
    }
  else
    fputs ("null,\"change\":null", fp);
  put_u64 (fp, "need", t->need);
  put_u64 (fp, "shortfall", t->shortfall);
  fputs ("}}", fp);
  return ferror (fp) ? ml_error_set (err, ML_EIO, "write error: %s", strerror (errno ? errno : EIO)) : 0;
}
