#include "sim/jsonutil.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/units.h"

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
