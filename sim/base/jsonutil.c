#include "sim/base/jsonutil.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "sim/base/units.h"

#define EXACT_LIMIT 9007199254740992.0  /* 2^53 */

int
ml_json_value_u64 (const cJSON *v, const char *what, uint64_t *out, MlError *err)
{
  if (cJSON_IsNumber (v))
    {
      double d = v->valuedouble;
      if (d < 0)
        return ml_error_set (err, ML_EINPUT, "%s %.17g is negative", what, d);
      if (d != floor (d))
        return ml_error_set (err, ML_EINPUT, "%s %.17g is not an integer", what, d);
      if (d >= EXACT_LIMIT)
        return ml_error_set (err, ML_EINPUT, "%s %.17g is too large for a JSON number (write it as a string)", what, d);
      *out = (uint64_t) d;
      return 0;
    }
  if (cJSON_IsString (v))
    {
      const char *s = v->valuestring;
      if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        {
          const char *h = s + 2;
          if (!*h || strlen (h) > 16 || strspn (h, "0123456789abcdefABCDEF") != strlen (h))
            return ml_error_set (err, ML_EINPUT, "%s \"%.40s\" is not a 64-bit hex number", what, s);
          *out = strtoull (h, NULL, 16);
          return 0;
        }
      if (ml_parse_u64 (s, strlen (s), out) < 0)
        return ml_error_set (err, ML_EINPUT, "%s \"%.40s\" is not an unsigned 64-bit integer", what, s);
      return 0;
    }
  return ml_error_set (err, ML_EINPUT, "%s is not a number", what);
}

int
ml_json_u64 (const cJSON *obj, const char *key, bool required, uint64_t *out, MlError *err)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, key);
  if (!v || cJSON_IsNull (v))
    {
      if (required)
        return ml_error_set (err, ML_EINPUT, "missing field \"%s\"", key);
      return 1;
    }
  return ml_json_value_u64 (v, key, out, err);
}

int
ml_json_i64 (const cJSON *obj, const char *key, bool required, int64_t *out, MlError *err)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, key);
  if (!v || cJSON_IsNull (v))
    {
      if (required)
        return ml_error_set (err, ML_EINPUT, "missing field \"%s\"", key);
      return 1;
    }
  if (cJSON_IsString (v))
    {
      /* non-negative values above 2^53 travel as strings (ml_json_put_u64) */
      uint64_t u;
      int rc = ml_json_value_u64 (v, key, &u, err);
      if (rc < 0)
        return rc;
      if (u > (uint64_t) INT64_MAX)
        return ml_error_set (err, ML_EINPUT, "%s %s is out of range", key, v->valuestring);
      *out = (int64_t) u;
      return 0;
    }
  if (!cJSON_IsNumber (v))
    return ml_error_set (err, ML_EINPUT, "%s is not a number", key);
  double d = v->valuedouble;
  if (d != floor (d) || fabs (d) >= EXACT_LIMIT)
    return ml_error_set (err, ML_EINPUT, "%s %.17g is not an integer in range", key, d);
  *out = (int64_t) d;
  return 0;
}

const char *
ml_json_str (const cJSON *obj, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, key);
  return cJSON_IsString (v) ? v->valuestring : NULL;
}

void
ml_json_put_u64 (FILE *fp, uint64_t v)
{
  if ((double) v < EXACT_LIMIT)
    fprintf (fp, "%" PRIu64, v);
  else
    fprintf (fp, "\"%" PRIu64 "\"", v);
}

void
ml_json_put_str (FILE *fp, const char *s)
{
  fputc ('"', fp);
  for (const unsigned char *p = (const unsigned char *) s; *p; p++)
    {
      switch (*p)
        {
        case '"': fputs ("\\\"", fp); break;
        case '\\': fputs ("\\\\", fp); break;
        case '\n': fputs ("\\n", fp); break;
        case '\r': fputs ("\\r", fp); break;
        case '\t': fputs ("\\t", fp); break;
        default:
          if (*p < 0x20)
            fprintf (fp, "\\u%04x", *p);
          else
            fputc (*p, fp);
        }
    }
  fputc ('"', fp);
}

int
ml_json_check_depth (const char *text, size_t len, int max_depth, MlError *err)
{
  int depth = 0;
  long line = 1;
  bool in_str = false;
  for (size_t i = 0; i < len; i++)
    {
      char c = text[i];
      if (c == '\n')
        line++;
      if (in_str)
        {
          if (c == '\\')
            i++;
          else if (c == '"')
            in_str = false;
        }
      else if (c == '"')
        in_str = true;
      else if (c == '{' || c == '[')
        {
          if (++depth > max_depth)
            return ml_error_set (err, ML_EINPUT, "line %ld: nested more than %d levels deep", line, max_depth);
        }
      else if ((c == '}' || c == ']') && depth > 0)
        depth--;
    }
  return 0;
}

int
ml_json_read_file (const char *path, size_t max_bytes, cJSON **out, MlError *err)
{
  gzFile gz = gzopen (path, "rb");   /* reads plain files too */
  if (!gz)
    return ml_error_set (err, errno == ENOENT ? ML_EINPUT : ML_EIO, "%s: cannot open: %s", path,
                         errno ? strerror (errno) : "out of memory");
  /* a gzip bomb (1000:1) must not be inflated into memory: compressed
   * input may grow 256 times (JSON traces compress 10-30 times), at least
   * to 64 MiB */
  size_t packed = 0;
  struct stat st;
  if (!gzdirect (gz) && stat (path, &st) == 0 && S_ISREG (st.st_mode))
    {
      packed = (size_t) st.st_size;
      size_t most = packed > max_bytes / 256 ? max_bytes : packed * 256;
      if (most < ((size_t) 64 << 20))
        most = (size_t) 64 << 20;
      if (most < max_bytes)
        max_bytes = most;
    }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc (cap + 1);
  int rc = 0;
  while (buf)
    {
      if (n == cap)
        {
          if (cap >= max_bytes)
            {
              if (packed)
                rc = ml_error_set (err, ML_EINPUT, "%s: %zu compressed bytes inflate past %zu bytes, more than such a file can justify",
                                   path, packed, max_bytes);
              else
                rc = ml_error_set (err, ML_EINPUT, "%s: larger than the limit of %zu bytes (uncompressed)", path, max_bytes);
              break;
            }
          cap = cap * 2 > max_bytes ? max_bytes : cap * 2;
          char *b2 = realloc (buf, cap + 1);
          if (!b2)
            break;
          buf = b2;
        }
      size_t want = cap - n > (1u << 30) ? (1u << 30) : cap - n;
      int got = gzread (gz, buf + n, (unsigned) want);
      if (got < 0)
        {
          int zerr;
          const char *msg = gzerror (gz, &zerr);
          rc = ml_error_set (err, ML_EINPUT, "%s: cannot decompress: %s", path, msg ? msg : "gzip error");
          break;
        }
      if (got == 0)
        {
          if (!gzeof (gz))
            rc = ml_error_set (err, ML_EINPUT, "%s: truncated gzip stream", path);
          break;
        }
      n += (size_t) got;
    }
  gzclose (gz);
  if (!buf)
    return ml_error_set (err, ML_ENOMEM, "%s: out of memory", path);
  if (rc < 0)
    {
      free (buf);
      return rc;
    }
  buf[n] = 0;
  if ((rc = ml_json_check_depth (buf, n, ML_JSON_MAX_DEPTH, err)) < 0)
    {
      free (buf);
      return ml_error_prefix (err, "%s", path);
    }
  cJSON *root = cJSON_ParseWithLength (buf, n);
  if (!root)
    {
      const char *at = cJSON_GetErrorPtr ();
      long line = 1;
      if (at && at >= buf && at <= buf + n)
        for (const char *c = buf; c < at; c++)
          line += *c == '\n';
      free (buf);
      return ml_error_set (err, ML_EINPUT, "%s:%ld: not valid JSON%s", path, line, n == 0 ? " (empty file)" : "");
    }
  free (buf);
  *out = root;
  return 0;
}
