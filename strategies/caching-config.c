/* caching-config.c — the settings the caching emulation runs with: PyTorch's
 * allocator settings (sim/alloc-conf.h, parsed as PyTorch parses them)
 * turned into the model's MlCacheConfig, and the size rounding they drive
 * (round_size, roundup_power2_next_division in CUDACachingAllocator.cpp). */
#include "strategies/caching-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t
_ml_cache_round_size (const MlCacheConfig *cfg, uint64_t size)
{
  if (size < ML_CACHE_MIN_BLOCK)
    return ML_CACHE_MIN_BLOCK;
  unsigned d = cfg->divisions[ml_alloc_conf_interval (size)];
  if (d > 1 && size > (uint64_t) ML_CACHE_MIN_BLOCK * d)
    {
      if ((size & (size - 1)) == 0)
        return size;
      uint64_t floor2 = (uint64_t) 1 << (63 - __builtin_clzll (size));
      uint64_t step = floor2 >> (31 - __builtin_clz (d));
      if (step == 0)
        return floor2 << 1;
      uint64_t lo = size & ~(step - 1);
      return lo == size ? size : lo + step;
    }
  return (size + ML_CACHE_MIN_BLOCK - 1) / ML_CACHE_MIN_BLOCK * ML_CACHE_MIN_BLOCK;
}

void
_ml_cache_config_from (const MlAllocConf *ac, MlCacheConfig *cfg)
{
  memset (cfg, 0, sizeof *cfg);
  cfg->max_split = ac->max_split_size;
  cfg->max_non_split = ac->max_non_split_rounding;
  memcpy (cfg->divisions, ac->divisions, sizeof cfg->divisions);
  cfg->expandable = ac->expandable_segments;
  cfg->gc_threshold = ac->gc_threshold;
  cfg->fraction = (ac->set & ML_AC_MEMORY_FRACTION) ? ac->memory_fraction : 0;
  cfg->backend = ac->malloc_async ? ML_CACHE_ASYNC : ML_CACHE_NATIVE;
}

int
_ml_cache_parse_config (const char *options, MlCacheConfig *cfg, MlError *err)
{
  MlAllocConf ac;
  ml_alloc_conf_init (&ac);
  int rc = ml_alloc_conf_parse (options, &ac, err);
  /* the graph loader's options share --options */
  size_t keep = 0;
  for (size_t k = 0; rc == 0 && k < ac.n_unknown; k++)
    {
      const char *key = ac.unknown[k].key;
      if (strcmp (key, "reorder") && strcmp (key, "exclude") && strcmp (key, "pin"))
        ac.unknown[keep++] = ac.unknown[k];
      else
        {
          free (ac.unknown[k].key);
          free (ac.unknown[k].value);
        }
    }
  ac.n_unknown = rc == 0 ? keep : ac.n_unknown;
  if (rc == 0)
    rc = ml_alloc_conf_check_emulated (&ac, err);
  if (rc < 0)
    {
      ml_alloc_conf_clear (&ac);
      return ml_error_prefix (err, "caching");
    }
  _ml_cache_config_from (&ac, cfg);
  ml_alloc_conf_clear (&ac);
  return 0;
}

int
_ml_cache_config_for (const MlTrace *t, const char *options, MlCacheConfig *cfg, const char **used, char *buf,
                      size_t n, MlError *err)
{
  options = _ml_cache_options (t, options, buf, n);
  if (used)
    *used = options;
  return _ml_cache_parse_config (options, cfg, err);
}

const char *
_ml_cache_options (const MlTrace *t, const char *options, char *buf, size_t n)
{
  const char *rec;
  if ((options && *options) || !t)
    return options;
  /* the snapshot's own allocator settings, every key (sim/alloc-conf.h) */
  if (t->alloc_conf)
    {
      if (strlen (t->alloc_conf) >= n)
        return t->alloc_conf;   /* longer than the caller's buffer: the trace's own */
      snprintf (buf, n, "%s", t->alloc_conf);
      return buf;
    }
  if (!(rec = ml_trace_allocator_settings (t)))
    return options;
  /* an older reading: the tick-0 mark ("... (per size range ...)" cut off) */
  snprintf (buf, n, "%s", rec);
  buf[strcspn (buf, " ")] = 0;
  return buf;
}
