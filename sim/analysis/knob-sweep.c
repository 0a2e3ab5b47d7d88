#include "sim/analysis/knob-sweep.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jsonutil.h"
#include "sim/base/options.h"
#include "sim/base/units.h"

typedef enum { K_CHUNK, K_ALIGN, K_CAPACITY, K_RETRIES, K_SEED, K_TIME, K_OPTION } Knob;

static const char *const knob_names[] = { "chunk", "align", "capacity", "retries", "seed", "time-limit" };

/* Sets @value of @knob in @k (@opts: room for the rewritten options). */
static int
apply (Knob knob, const char *key, const char *value, MlKnobs *k, char *opts, size_t n_opts, MlError *err)
{
  uint64_t v;
  switch (knob)
    {
    case K_CHUNK:
    case K_CAPACITY:
    case K_ALIGN:
      if (ml_parse_size (value, &v, err) < 0)
        return ml_error_prefix (err, "--sweep %s", key);
      if (v == 0)
        return ml_error_set (err, ML_EUSAGE, "--sweep %s=%s: must be more than 0", key, value);
      if (knob == K_ALIGN && (v & (v - 1)))
        return ml_error_set (err, ML_EUSAGE, "--sweep align=%s: the alignment must be a power of two", value);
      *(knob == K_CHUNK ? &k->chunk : knob == K_CAPACITY ? &k->capacity : &k->align) = v;
      return 0;
    case K_RETRIES:
    case K_SEED:
      if (ml_parse_u64 (value, strlen (value), &v) < 0 || (knob == K_RETRIES && v > 1000))
        return ml_error_set (err, ML_EUSAGE, "--sweep %s=%s: not a number%s", key, value, knob == K_RETRIES ? " from 0 to 1000" : "");
      if (knob == K_RETRIES)
        k->retries = (uint32_t) v;
      else
        k->seed = v;
      return 0;
    case K_TIME:
      if (ml_parse_duration (value, &k->time_limit, err) < 0)
        return ml_error_prefix (err, "--sweep time-limit");
      return 0;
    case K_OPTION:
      {
        /* the other options as they were, then key=value */
        size_t len = 0, klen = strlen (key);
        opts[0] = 0;
        for (const char *p = k->options ? k->options : ""; *p;)
          {
            size_t n = ml_options_item_len (p);
            bool same = (n == klen || (n > klen && p[klen] == '=')) && strncmp (p, key, klen) == 0;
            if (!same && n)
              len += (size_t) snprintf (opts + len, len < n_opts ? n_opts - len : 0, "%.*s,", (int) n, p);
            p += n + (p[n] == ',');
          }
        len += (size_t) snprintf (opts + len, len < n_opts ? n_opts - len : 0, "%s=%s", key, value);
        if (len >= n_opts)
          return ml_error_set (err, ML_EUSAGE, "--sweep %s=%s: the options are too long", key, value);
        k->options = opts;
        return 0;
      }
    }
  return 0;
}

void
ml_knob_sweep_free (MlKnobSweep *s)
{
  if (!s)
    return;
  for (size_t i = 0; i < s->n_values; i++)
    free (s->values[i]);
  free (s->values);
  free (s->rows);
  free (s->knob);
  free (s);
}

int
ml_knob_sweep_run (const char *spec, const MlBuffers *bufs, const MlStrategy *const *strategies,
                   const MlKnobs *knobs, MlKnobSweep **out, MlError *err)
{
  MlError local = { 0 };
  if (!err)
    err = &local;
  const char *eq = strchr (spec, '=');
  if (!eq || eq == spec || !eq[1])
    return ml_error_set (err, ML_EUSAGE, "--sweep %s: write KNOB=V1,V2,... (chunk, align, capacity, retries, seed, "
                         "time-limit, or an --options key)", spec);
  MlKnobSweep *s = calloc (1, sizeof *s);
  if (!s)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  int rc = 0;
  s->knob = strndup (spec, (size_t) (eq - spec));
  Knob knob = K_OPTION;
  for (int i = 0; i < K_OPTION; i++)
    if (s->knob && strcmp (s->knob, knob_names[i]) == 0)
      knob = (Knob) i;
  s->is_option = knob == K_OPTION;
  for (const char *p = eq + 1; *p;)
    {
      size_t n = ml_options_item_len (p);
      if (n == 0)
        {
          rc = ml_error_set (err, ML_EUSAGE, "--sweep %s: an empty value", spec);
          goto fail;
        }
      char **v = realloc (s->values, (s->n_values + 1) * sizeof *v);
      if (!v || !(v[s->n_values] = strndup (p, n)))
        {
          if (v)
            s->values = v;
          rc = ml_error_set (err, ML_ENOMEM, "out of memory");
          goto fail;
        }
      s->values = v;
      s->n_values++;
      p += n + (p[n] == ',');
    }
  while (strategies[s->n_strategies])
    s->n_strategies++;
  if (!s->knob || !(s->rows = calloc (s->n_values * s->n_strategies + 1, sizeof *s->rows)))
    {
      rc = ml_error_set (err, ML_ENOMEM, "out of memory");
      goto fail;
    }
  /* every value parses before anything runs */
  char opts[1024];
  for (size_t v = 0; v < s->n_values; v++)
    {
      MlKnobs k = *knobs;
      if ((rc = apply (knob, s->knob, s->values[v], &k, opts, sizeof opts, err)) < 0)
        goto fail;
    }
  for (size_t v = 0; v < s->n_values; v++)
    {
      MlKnobs k = *knobs;
      apply (knob, s->knob, s->values[v], &k, opts, sizeof opts, NULL);
      MlBuffers *own = NULL;
      const MlBuffers *b = bufs;
      if (knob == K_ALIGN && k.align != bufs->align)
        {
          if (!bufs->trace)
            {
              rc = ml_error_set (err, ML_EUSAGE, "--sweep align: the lifetimes have no trace to rebuild from");
              goto fail;
            }
          if ((rc = ml_buffers_build (bufs->trace, k.align, &own, err)) < 0)
            goto fail;
          b = own;
        }
      for (size_t i = 0; i < s->n_strategies; i++)
        {
          MlKnobSweepRow *row = &s->rows[v * s->n_strategies + i];
          MlResult res;
          row->value = s->values[v];
          row->strategy = strategies[i];
          row->lower_bound = b->lower_bound;
          if ((rc = ml_sim_evaluate (b, strategies[i], &k, &res, err)) < 0)
            {
              ml_buffers_free (own);
              goto fail;
            }
          row->status = res.status;
          memcpy (row->error, res.error, sizeof row->error);
          row->metrics = res.metrics;
          if (res.plan)
            {
              row->oom = res.plan->oom;
              row->retries = res.plan->retries;
              row->retry_released = res.plan->retry_released;
              row->block_waste = res.plan->block_waste;
              row->segments = res.plan->n_segments;
              row->seconds = res.plan->seconds;
            }
          ml_result_clear (&res);
        }
      ml_buffers_free (own);
    }
  *out = s;
  return 0;
fail:
  ml_knob_sweep_free (s);
  return rc;
}

double
ml_knob_sweep_number (const MlKnobSweep *s, size_t i)
{
  const char *value = s->values[i];
  uint64_t v;
  double d;
  if (strcmp (s->knob, "time-limit") == 0 && ml_parse_duration (value, &d, NULL) == 0)
    return d;
  if (ml_parse_size (value, &v, NULL) == 0)
    return (double) v;
  return (double) i;
}

int
ml_knob_sweep_write_json (FILE *fp, const MlBuffers *bufs, const MlKnobSweep *s, MlError *err)
{
  fputs ("{\"knob\":", fp);
  ml_json_put_str (fp, s->knob);
  fprintf (fp, ",\"option\":%s,\"rows\":[", s->is_option ? "true" : "false");
  for (size_t r = 0; r < s->n_values * s->n_strategies; r++)
    {
      const MlKnobSweepRow *row = &s->rows[r];
      fputs (r ? ",{\"value\":" : "{\"value\":", fp);
      ml_json_put_str (fp, row->value);
      fprintf (fp, ",\"number\":%.17g,\"strategy\":", ml_knob_sweep_number (s, r / s->n_strategies));
      ml_json_put_str (fp, row->strategy->name);
      if (row->status < 0)
        {
          fputs (",\"error\":", fp);
          ml_json_put_str (fp, row->error);
          fputc ('}', fp);
          continue;
        }
      const MlMetrics *m = &row->metrics;
      fprintf (fp, ",\"lower_bound\":%" PRIu64 ",\"peak\":%" PRIu64 ",\"overhead\":%.6f", row->lower_bound, m->peak, m->overhead);
      if (m->frag_unknown)
        fputs (",\"frag_max\":null,\"frag_at_peak\":null", fp);   /* the plan's free space is not known */
      else
        fprintf (fp, ",\"frag_max\":%.6f,\"frag_at_peak\":%.6f", m->frag_max, m->frag_at_peak);
      fprintf (fp, ",\"block_waste\":%" PRIu64 ",\"segments\":%zu,\"retries\":%" PRIu64 ",\"retry_released\":%" PRIu64
                   ",\"seconds\":%.6f,\"oom\":",
               row->block_waste, row->segments, row->retries, row->retry_released, row->seconds);
      int rc = ml_oom_write_json (&row->oom, bufs, fp, err);
      if (rc < 0)
        return rc;
      fputc ('}', fp);
    }
  fputs ("]}", fp);
  return ferror (fp) ? ml_error_set (err, ML_EIO, "write error: %s", strerror (errno ? errno : EIO)) : 0;
}
