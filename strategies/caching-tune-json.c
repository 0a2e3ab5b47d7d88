/* caching-tune-json.c — a tune result as JSON (docs/report-schema.md,
 * TUNE). */
#include "strategies/caching-tune.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "sim/base/jsonutil.h"

static void
put_strands (FILE *fp, const MlStrandBreakdown *s)
{
  if (!s->valid)
    {
      fputs ("null", fp);
      return;
    }
  fprintf (fp, "{\"tick\":%" PRIu64 ",\"request\":%" PRIu64 ",\"reserved\":%" PRIu64 ",\"allocated\":%" PRIu64
               ",\"requested\":%" PRIu64 ",\"largest_free\":%" PRIu64, s->tick, s->request, s->reserved, s->allocated,
           s->requested, s->largest_free);
  for (int k = 0; k < ML_STRAND__COUNT; k++)
    {
      char key[32];
      snprintf (key, sizeof key, "%s", ml_strand_name ((MlStrand) k));
      for (char *c = key; *c; c++)
        *c = *c == ' ' ? '_' : *c;
      fprintf (fp, ",\"%s\":%" PRIu64, key, s->bytes[k]);
    }
  fprintf (fp, ",\"memory_viz_internal\":%.6f,\"memory_viz_fragmentation\":%.6f}", s->viz_internal,
           s->viz_fragmentation);
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
  fprintf (fp, ",\"model\":%s,\"reserved_peak\":%" PRIu64 ",\"allocated_peak\":%" PRIu64 ",\"requested_peak\":%" PRIu64
               ",\"peak_tick\":%" PRIu64 ",\"frag_at_peak\":%.6f,\"cuda_malloc\":%" PRIu64 ",\"cuda_free\":%" PRIu64
               ",\"gc_released\":%" PRIu64 ",\"empty_cache_calls\":%" PRIu64 ",\"seconds\":%.6f,\"oom\":",
           r->model ? "true" : "false", r->reserved_peak, r->allocated_peak, r->requested_peak, r->peak_tick,
           r->frag_at_peak, r->n_malloc, r->n_free, r->gc_released, r->empty_cache_calls, row->seconds);
  if (r->oom)
    fprintf (fp, "{\"tick\":%" PRIu64 ",\"request\":%" PRIu64 ",\"live\":%" PRIu64 ",\"reserved\":%" PRIu64
                 ",\"recorded\":%s}", r->oom_tick, r->oom_request, r->oom_live, r->oom_reserved,
             r->oom_recorded ? "true" : "false");
  else
    fputs ("null", fp);
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
  fprintf (fp, "{\"capacity\":%" PRIu64 ",\"capacity_from\":\"%s\",\"warm\":%s,\"recorded_settings\":", t->capacity,
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
  fprintf (fp, ",\"need\":%" PRIu64 ",\"shortfall\":%" PRIu64 "}}", t->need, t->shortfall);
  return ferror (fp) ? ml_error_set (err, ML_EIO, "write error: %s", strerror (errno ? errno : EIO)) : 0;
}
