/* alloc-conf.c — PYTORCH_CUDA_ALLOC_CONF, parsed as PyTorch parses it
 * (AllocatorConfig::lexArgs / parseArgs, CUDAAllocatorConfig::parseArgs). */
#include "sim/alloc-conf.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB ((uint64_t) 1 << 20)
#define LARGE_BUFFER (20 * MiB)        /* kLargeBuffer: the smallest max_split_size_mb */
#define MAX_REGISTER_THREADS 128       /* pinned_max_register_threads */
#define MAX_DIVISIONS ((uint64_t) 1 << 20)

void
ml_alloc_conf_init (MlAllocConf *c)
{
  memset (c, 0, sizeof *c);
  c->max_split_size = UINT64_MAX;
  c->max_non_split_rounding = LARGE_BUFFER;
  c->pinned_num_register_threads = 1;
}

void
ml_alloc_conf_clear (MlAllocConf *c)
{
  for (size_t k = 0; k < c->n_unknown; k++)
    {
      free (c->unknown[k].key);
      free (c->unknown[k].value);
    }
  free (c->unknown);
  ml_alloc_conf_init (c);
}

/* ---- the lexer: tokens separated by , : [ ] ('=' reads as ':'), spaces dropped ---- */

typedef struct {
  const char *text;
  char      **tok;
  size_t      n, at;
  MlError    *err;
} Lex;

static int
lex (Lex *l, const char *text)
{
  size_t len = strlen (text);
  l->text = text;
  l->tok = calloc (len * 2 + 1, sizeof *l->tok);
  char *buf = malloc (len + 1);
  if (!l->tok || !buf)
    {
      free (l->tok);
      free (buf);
      return ML_ENOMEM;
    }
  size_t b = 0;
  int rc = 0;
  for (size_t i = 0; i <= len && rc == 0; i++)
    {
      char ch = text[i] == '=' ? ':' : text[i];
      bool sep = ch == ',' || ch == ':' || ch == '[' || ch == ']' || ch == 0;
      if (sep && b)
        {
          buf[b] = 0;
          if (!(l->tok[l->n++] = strdup (buf)))
            rc = ML_ENOMEM;
          b = 0;
        }
      if (sep && ch && rc == 0 && !(l->tok[l->n++] = strndup (&ch, 1)))
        rc = ML_ENOMEM;
      if (!sep && ch != ' ')
        buf[b++] = ch;
    }
  free (buf);
  return rc;
}

static void
lex_free (Lex *l)
{
  for (size_t k = 0; k < l->n; k++)
    free (l->tok[k]);
  free (l->tok);
}

static const char *
peek (const Lex *l)
{
  return l->at < l->n ? l->tok[l->at] : "";
}

static int
expect (Lex *l, const char *key, const char *sep)
{
  if (strcmp (peek (l), sep) == 0)
    {
      l->at++;
      return 0;
    }
  return ml_error_set (l->err, ML_EUSAGE, "allocator settings \"%s\": expected '%s' after %s, found \"%s\"", l->text, sep,
                       key, l->at < l->n ? l->tok[l->at] : "the end");
}

/* The value token after "key:". */
static int
value (Lex *l, const char *key, const char **out)
{
  int rc = expect (l, key, ":");
  if (rc < 0)
    return rc;
  const char *v = peek (l);
  if (!*v || strchr (",:[]", *v))
    return ml_error_set (l->err, ML_EUSAGE, "allocator settings \"%s\": %s has no value", l->text, key);
  l->at++;
  *out = v;
  return 0;
}

static int
bad (Lex *l, const char *key, const char *v, const char *why)
{
  return ml_error_set (l->err, ML_EUSAGE, "allocator settings \"%s\": %s:%s: %s", l->text, key, v, why);
}

static bool
parse_u64 (const char *v, uint64_t *out)
{
  if (*v < '0' || *v > '9')
    return false;
  errno = 0;
  char *end;
  unsigned long long x = strtoull (v, &end, 10);
  if (*end || errno)
    return false;
  *out = x;
  return true;
}

static bool
parse_double (const char *v, double *out)
{
  if (!*v || (*v != '.' && (*v < '0' || *v > '9')))
    return false;
  char *end;
  double x = strtod (v, &end);
  if (*end || !isfinite (x))
    return false;
  *out = x;
  return true;
}

static int
parse_bool (Lex *l, const char *key, bool *out)
{
  const char *v;
  int rc = value (l, key, &v);
  if (rc < 0)
    return rc;
  if (!strcmp (v, "True") || !strcmp (v, "true") || !strcmp (v, "1"))
    *out = true;
  else if (!strcmp (v, "False") || !strcmp (v, "false") || !strcmp (v, "0"))
    *out = false;
  else
    return bad (l, key, v, "expected True or False");
  return 0;
}

static bool
pow2 (uint64_t x)
{
  return x && !(x & (x - 1));
}

/* A size in MiB of at least @min MiB ("unlimited": UINT64_MAX when @unlimited). */
static int
parse_mb (Lex *l, const char *key, uint64_t min, bool unlimited, uint64_t *out)
{
  const char *v;
  uint64_t x;
  int rc = value (l, key, &v);
  if (rc < 0)
    return rc;
  if (unlimited && !strcmp (v, "unlimited"))
    {
      *out = UINT64_MAX;
      return 0;
    }
  if (!parse_u64 (v, &x))
    return bad (l, key, v, unlimited ? "expected a number of MiB or unlimited" : "expected a number of MiB");
  if (x < min)
    {
      char why[96];
      snprintf (why, sizeof why, "below %" PRIu64 ", PyTorch's smallest", min);
      return bad (l, key, v, why);
    }
  *out = x > UINT64_MAX / MiB ? UINT64_MAX : x * MiB;   /* PyTorch clamps to SIZE_MAX / 1 MiB */
  return 0;
}

static int
check_divisions (Lex *l, const char *v, uint64_t d)
{
  if (d && !pow2 (d))
    return bad (l, "roundup_power2_divisions", v, "divisions must be a power of two (or 0: off)");
  if (d > MAX_DIVISIONS)
    return bad (l, "roundup_power2_divisions", v, "more than 2^20 divisions");
  return 0;
}

/* roundup_power2_divisions: N, or [MiB:N,...,>:N] (parseRoundUpPower2Divisions). */
static int
parse_roundup (Lex *l, MlAllocConf *c)
{
  static const char key[] = "roundup_power2_divisions";
  int rc = expect (l, key, ":");
  if (rc < 0)
    return rc;
  const char *v = peek (l);
  uint64_t d;
  if (strcmp (v, "[") != 0)
    {
      if (!*v || strchr (",:]", *v))
        return ml_error_set (l->err, ML_EUSAGE, "allocator settings \"%s\": %s has no value", l->text, key);
      l->at++;
      if (!parse_u64 (v, &d))
        return bad (l, key, v, "expected a number or a list [MiB:N,...]");
      if ((rc = check_divisions (l, v, d)) < 0)
        return rc;
      for (size_t k = 0; k < ML_AC_INTERVALS; k++)
        c->divisions[k] = (unsigned) d;
      return 0;
    }
  l->at++;
  bool first = true;
  size_t last = 0;
  while (strcmp (peek (l), "]") != 0)
    {
      const char *iv = peek (l);
      if (!*iv || strchr (",:[", *iv))
        return bad (l, key, iv, "expected an interval (MiB, a power of two) or '>'");
      l->at++;
      if ((rc = value (l, iv, &v)) < 0)
        return rc;
      if (!parse_u64 (v, &d))
        return bad (l, key, v, "expected a number of divisions");
      if ((rc = check_divisions (l, v, d)) < 0)
        return rc;
      if (!strcmp (iv, ">"))
        for (size_t k = last; k < ML_AC_INTERVALS; k++)
          c->divisions[k] = (unsigned) d;
      else
        {
          uint64_t mb;
          if (!parse_u64 (iv, &mb) || !pow2 (mb))
            return bad (l, key, iv, "an interval must be a power of two (MiB)");
          size_t index = (size_t) (63 - __builtin_clzll (mb));
          if (index > ML_AC_INTERVALS - 1)
            index = ML_AC_INTERVALS - 1;
          if (first)
            for (size_t k = 0; k < index; k++)
              c->divisions[k] = (unsigned) d;
          first = false;
          c->divisions[index] = (unsigned) d;
          last = index;
        }
      if (strcmp (peek (l), "]") != 0 && (rc = expect (l, key, ",")) < 0)
        return rc;
    }
  l->at++;
  return 0;
}

static int
parse_fraction (Lex *l, const char *key, double lo, bool lo_open, double *out)
{
  const char *v;
  double x;
  int rc = value (l, key, &v);
  if (rc < 0)
    return rc;
  if (!parse_double (v, &x) || x > 1.0 || x < lo || (lo_open && x == lo) || (lo_open && x == 1.0))
    return bad (l, key, v, lo_open ? "expected a number in (0, 1)" : "expected a number in [0, 1]");
  *out = x;
  return 0;
}

/* An unknown key: kept with its value as written (a list whole). */
static int
keep_unknown (Lex *l, MlAllocConf *c, const char *key)
{
  int rc = expect (l, key, ":");
  if (rc < 0)
    return rc;
  size_t from = l->at, depth = 0;
  while (l->at < l->n && (depth || (strcmp (peek (l), ",") != 0)))
    {
      if (!strcmp (peek (l), "["))
        depth++;
      else if (!strcmp (peek (l), "]") && depth)
        depth--;
      l->at++;
    }
  size_t len = 1;
  for (size_t k = from; k < l->at; k++)
    len += strlen (l->tok[k]);
  MlAllocConfUnknown *u = realloc (c->unknown, (c->n_unknown + 1) * sizeof *u);
  if (!u)
    return ML_ENOMEM;
  c->unknown = u;
  char *val = calloc (len, 1), *k = strdup (key);
  if (!val || !k)
    {
      free (val);
      free (k);
      return ML_ENOMEM;
    }
  for (size_t i = from; i < l->at; i++)
    strcat (val, l->tok[i]);
  if (!*val)
    {
      free (val);
      free (k);
      return ml_error_set (l->err, ML_EUSAGE, "allocator settings \"%s\": %s has no value", l->text, key);
    }
  c->unknown[c->n_unknown++] = (MlAllocConfUnknown) { k, val };
  return 0;
}

/* One "key:value" at the lexer's position. */
static int
parse_key (Lex *l, MlAllocConf *c, const char *key)
{
  const char *v;
  uint64_t x;
  int rc;
  if (!strcmp (key, "max_split_size_mb"))
    {
      c->set |= ML_AC_MAX_SPLIT;
      return parse_mb (l, key, LARGE_BUFFER / MiB, true, &c->max_split_size);
    }
  if (!strcmp (key, "max_split_size"))   /* bytes, as a snapshot's allocator_settings has it */
    {
      c->set |= ML_AC_MAX_SPLIT;
      if ((rc = value (l, key, &v)) < 0)
        return rc;
      if (!strcmp (v, "unlimited") || !strcmp (v, "-1"))
        return c->max_split_size = UINT64_MAX, 0;
      if (!parse_u64 (v, &x) || x < LARGE_BUFFER)
        return bad (l, key, v, "expected bytes, at least 20 MiB (20971520)");
      return c->max_split_size = x, 0;
    }
  if (!strcmp (key, "max_non_split_rounding_mb"))
    {
      c->set |= ML_AC_MAX_NON_SPLIT;
      return parse_mb (l, key, LARGE_BUFFER / MiB, false, &c->max_non_split_rounding);
    }
  if (!strcmp (key, "garbage_collection_threshold"))
    {
      c->set |= ML_AC_GC_THRESHOLD;
      return parse_fraction (l, key, 0.0, true, &c->gc_threshold);
    }
  if (!strcmp (key, "roundup_power2_divisions"))
    {
      c->set |= ML_AC_ROUNDUP;
      return parse_roundup (l, c);
    }
  if (!strcmp (key, "expandable_segments"))
    {
      c->set |= ML_AC_EXPANDABLE;
      return parse_bool (l, key, &c->expandable_segments);
    }
  if (!strcmp (key, "backend"))
    {
      c->set |= ML_AC_BACKEND;
      if ((rc = value (l, key, &v)) < 0)
        return rc;
      if (strcmp (v, "native") && strcmp (v, "cudaMallocAsync") && strcmp (v, "hipMallocAsync"))
        return bad (l, key, v, "expected native or cudaMallocAsync");
      return c->malloc_async = strcmp (v, "native") != 0, 0;
    }
  if (!strcmp (key, "release_lock_on_cudamalloc") || !strcmp (key, "release_lock_on_hipmalloc"))
    {
      c->set |= ML_AC_RELEASE_LOCK;
      return parse_bool (l, key, &c->release_lock_on_cudamalloc);
    }
  if (!strcmp (key, "pinned_use_cuda_host_register") || !strcmp (key, "pinned_use_hip_host_register"))
    {
      c->set |= ML_AC_PINNED_REGISTER;
      return parse_bool (l, key, &c->pinned_use_host_register);
    }
  if (!strcmp (key, "pinned_num_register_threads"))
    {
      c->set |= ML_AC_PINNED_THREADS;
      if ((rc = value (l, key, &v)) < 0)
        return rc;
      if (!parse_u64 (v, &x) || !pow2 (x) || x > MAX_REGISTER_THREADS)
        return bad (l, key, v, "expected a power of two up to 128");
      return c->pinned_num_register_threads = (unsigned) x, 0;
    }
  if (!strcmp (key, "pinned_use_background_threads"))
    {
      c->set |= ML_AC_PINNED_BACKGROUND;
      return parse_bool (l, key, &c->pinned_use_background_threads);
    }
  if (!strcmp (key, "pinned_reserve_segment_size_mb"))
    {
      c->set |= ML_AC_PINNED_RESERVE;
      return parse_mb (l, key, 1, false, &c->pinned_reserve_segment_size);
    }
  if (!strcmp (key, "graph_capture_record_stream_reuse"))
    {
      c->set |= ML_AC_GRAPH_STREAM_REUSE;
      return parse_bool (l, key, &c->graph_capture_record_stream_reuse);
    }
  if (!strcmp (key, "per_process_memory_fraction"))
    {
      c->set |= ML_AC_MEMORY_FRACTION;
      return parse_fraction (l, key, 0.0, false, &c->memory_fraction);
    }
  return keep_unknown (l, c, key);
}

int
ml_alloc_conf_parse (const char *text, MlAllocConf *c, MlError *err)
{
  Lex l = { .err = err };
  if (!text)
    return 0;
  int rc = lex (&l, text);
  if (rc < 0)
    {
      lex_free (&l);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  while (rc == 0 && l.at < l.n)
    {
      const char *key = l.tok[l.at];
      if (strchr (",:[]", *key))
        {
          if (*key == ',')   /* an empty item: "a:1,,b:2" as PyTorch reads it is an error; "a:1," is not */
            rc = l.at + 1 < l.n ? ml_error_set (err, ML_EUSAGE, "allocator settings \"%s\": an empty setting", text) : 0;
          else
            rc = ml_error_set (err, ML_EUSAGE, "allocator settings \"%s\": expected a key, found '%s'", text, key);
          l.at++;
          continue;
        }
      l.at++;
      rc = parse_key (&l, c, key);
      if (rc == 0 && l.at < l.n)
        rc = expect (&l, key, ",");
    }
  lex_free (&l);
  if (rc == ML_ENOMEM)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  return rc;
}

unsigned
ml_alloc_conf_interval (uint64_t size)
{
  int log_size = size ? 63 - __builtin_clzll (size) : 0;
  int index = log_size - 20;   /* the intervals start at 1 MiB */
  if (index < 0)
    index = 0;
  if (index > ML_AC_INTERVALS - 1)
    index = ML_AC_INTERVALS - 1;
  return (unsigned) index;
}

unsigned
ml_alloc_conf_divisions (const MlAllocConf *c, uint64_t size)
{
  return c->divisions[ml_alloc_conf_interval (size)];
}

/* ---- writing it back ---- */

typedef struct {
  char  *buf;
  size_t n, len;
} Out;

static void
put (Out *o, const char *fmt, ...) __attribute__((format (printf, 2, 3)));

static void
put (Out *o, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *at = o->len < o->n ? o->buf + o->len : NULL;
  int k = vsnprintf (at, at ? o->n - o->len : 0, fmt, ap);
  va_end (ap);
  if (k > 0)
    o->len += (size_t) k;
}

static void
put_key (Out *o, const char *key)
{
  put (o, "%s%s:", o->len ? "," : "", key);
}

static void
put_roundup (Out *o, const MlAllocConf *c)
{
  bool uniform = true;
  for (size_t k = 1; k < ML_AC_INTERVALS; k++)
    uniform &= c->divisions[k] == c->divisions[0];
  put_key (o, "roundup_power2_divisions");
  if (uniform)
    {
      put (o, "%u", c->divisions[0]);
      return;
    }
  /* the first run by its last interval (a first entry fills the ones
   * below), the last run by its first and '>', the intervals between one
   * by one ('>' fills from the last interval named, that one included) */
  size_t e1 = 0, sl = ML_AC_INTERVALS - 1;
  while (e1 + 1 < ML_AC_INTERVALS && c->divisions[e1 + 1] == c->divisions[0])
    e1++;
  while (sl > e1 + 1 && c->divisions[sl - 1] == c->divisions[ML_AC_INTERVALS - 1])
    sl--;
  put (o, "[%" PRIu64 ":%u", (uint64_t) 1 << e1, c->divisions[0]);
  for (size_t k = e1 + 1; k <= sl; k++)
    put (o, ",%" PRIu64 ":%u", (uint64_t) 1 << k, c->divisions[k]);
  put (o, ",>:%u]", c->divisions[sl]);
}

static const char *
tf (bool b)
{
  return b ? "True" : "False";
}

size_t
ml_alloc_conf_format (const MlAllocConf *c, char *buf, size_t n)
{
  Out o = { buf, n, 0 };
  if (n)
    buf[0] = 0;
  if (c->set & ML_AC_MAX_SPLIT)
    {
      if (c->max_split_size == UINT64_MAX)
        put (&o, "%smax_split_size_mb:unlimited", o.len ? "," : "");
      else if (c->max_split_size % MiB == 0)
        put (&o, "%smax_split_size_mb:%" PRIu64, o.len ? "," : "", c->max_split_size / MiB);
      else
        put (&o, "%smax_split_size:%" PRIu64, o.len ? "," : "", c->max_split_size);
    }
  if (c->set & ML_AC_MAX_NON_SPLIT)
    put (&o, "%smax_non_split_rounding_mb:%" PRIu64, o.len ? "," : "", c->max_non_split_rounding / MiB);
  if (c->set & ML_AC_GC_THRESHOLD)
    put (&o, "%sgarbage_collection_threshold:%.17g", o.len ? "," : "", c->gc_threshold);
  if (c->set & ML_AC_ROUNDUP)
    put_roundup (&o, c);
  if (c->set & ML_AC_EXPANDABLE)
    put (&o, "%sexpandable_segments:%s", o.len ? "," : "", tf (c->expandable_segments));
  if (c->set & ML_AC_BACKEND)
    put (&o, "%sbackend:%s", o.len ? "," : "", c->malloc_async ? "cudaMallocAsync" : "native");
  if (c->set & ML_AC_RELEASE_LOCK)
    put (&o, "%srelease_lock_on_cudamalloc:%s", o.len ? "," : "", tf (c->release_lock_on_cudamalloc));
  if (c->set & ML_AC_PINNED_REGISTER)
    put (&o, "%spinned_use_cuda_host_register:%s", o.len ? "," : "", tf (c->pinned_use_host_register));
  if (c->set & ML_AC_PINNED_THREADS)
    put (&o, "%spinned_num_register_threads:%u", o.len ? "," : "", c->pinned_num_register_threads);
  if (c->set & ML_AC_PINNED_BACKGROUND)
    put (&o, "%spinned_use_background_threads:%s", o.len ? "," : "", tf (c->pinned_use_background_threads));
  if (c->set & ML_AC_PINNED_RESERVE)
    put (&o, "%spinned_reserve_segment_size_mb:%" PRIu64, o.len ? "," : "", c->pinned_reserve_segment_size / MiB);
  if (c->set & ML_AC_GRAPH_STREAM_REUSE)
    put (&o, "%sgraph_capture_record_stream_reuse:%s", o.len ? "," : "", tf (c->graph_capture_record_stream_reuse));
  if (c->set & ML_AC_MEMORY_FRACTION)
    put (&o, "%sper_process_memory_fraction:%.17g", o.len ? "," : "", c->memory_fraction);
  for (size_t k = 0; k < c->n_unknown; k++)
    {
      put_key (&o, c->unknown[k].key);
      put (&o, "%s", c->unknown[k].value);
    }
  return o.len;
}

int
ml_alloc_conf_check_emulated (const MlAllocConf *c, MlError *err)
{
  static const char tail[] = "; --options replaces the recorded settings";
  /* garbage_collection_threshold, per_process_memory_fraction and the
   * cudaMallocAsync backend are emulated (the last as a model); PyTorch's
   * cudaMallocAsync ignores the native allocator's settings with a
   * warning: memlens refuses the combination instead */
  unsigned native_only = ML_AC_MAX_SPLIT | ML_AC_MAX_NON_SPLIT | ML_AC_ROUNDUP | ML_AC_GC_THRESHOLD | ML_AC_EXPANDABLE;
  MlAllocConf d;
  ml_alloc_conf_init (&d);
  bool defaults = c->max_split_size == d.max_split_size && c->max_non_split_rounding == d.max_non_split_rounding
                  && !memcmp (c->divisions, d.divisions, sizeof d.divisions) && c->gc_threshold == 0
                  && !c->expandable_segments;
  if (c->malloc_async && (c->set & native_only) && !defaults)
    return ml_error_set (err, ML_EUSAGE,
                         "allocator setting backend:cudaMallocAsync ignores max_split_size_mb, max_non_split_rounding_mb, "
                         "roundup_power2_divisions, garbage_collection_threshold and expandable_segments (PyTorch "
                         "warns so): leave them out%s", tail);
  if (c->n_unknown)
    return ml_error_set (err, ML_EUSAGE, "allocator setting %s:%s is not one memlens knows (PyTorch's keys are in "
                         "docs/pytorch.md, \"Allocator settings\"), so it is not emulated%s",
                         c->unknown[0].key, c->unknown[0].value, tail);
  return 0;
}
