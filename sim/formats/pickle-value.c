/* pickle-value.c — reading a pickle document's values: dict lookups,
 * unsigned integer fields, values as a message names them. */
#include "sim/formats/pickle-private.h"

#include <inttypes.h>
#include <stdio.h>

const char *
ml_pk_kind_name (MlPkKind k)
{
  static const char *const names[] = { "None", "bool", "int", "int", "float", "str", "bytes",
                                       "list", "tuple", "dict", "mark" };
  return (unsigned) k <= ML_PK__MARK ? names[k] : "?";
}
bool
ml_pk_in_document (const MlPkValue *v)
{
  return !(v->flags & F_SCRATCH);
}
MlPkValue *
ml_pk_get (const MlPkValue *d, const char *key)
{
  if (!d || d->kind != ML_PK_DICT)
    return NULL;
  size_t klen = strlen (key);
  /* from the end: of equal keys the last one counts, as in Python */
  for (size_t k = d->n & ~(size_t) 1; k >= 2; k -= 2)
    {
      const MlPkValue *kv = d->items[k - 2];
      if (kv->len == klen && kv->kind == ML_PK_STR && kv->s[0] == key[0] && memcmp (kv->s, key, klen) == 0)
        return d->items[k - 1];
    }
  return NULL;
}

bool
ml_pk_get_int (const MlPkValue *d, const char *key, int64_t *out)
{
  const MlPkValue *v = ml_pk_get (d, key);
  if (!v || (v->kind != ML_PK_INT && v->kind != ML_PK_BOOL))
    return false;
  *out = v->i;
  return true;
}

bool
ml_pk_get_u64 (const MlPkValue *d, const char *key, uint64_t *out)
{
  int64_t i;
  if (!ml_pk_get_int (d, key, &i) || i < 0)
    return false;
  *out = (uint64_t) i;
  return true;
}

bool
ml_pk_uint (const MlPkValue *v, uint64_t max, uint64_t *out)
{
  if (!v)
    return true;
  if (v->kind != ML_PK_INT || v->i < 0 || (uint64_t) v->i > max)
    return false;
  *out = (uint64_t) v->i;
  return true;
}

const char *
ml_pk_describe (const MlPkValue *v, char *buf, size_t len)
{
  if (!v)
    snprintf (buf, len, "absent");
  else
    switch (v->kind)
      {
      case ML_PK_NONE: snprintf (buf, len, "None"); break;
      case ML_PK_BOOL: snprintf (buf, len, "%s", v->i ? "True" : "False"); break;
      case ML_PK_INT: snprintf (buf, len, "%" PRId64, v->i); break;
      case ML_PK_BIGINT:
        if (v->s)
          snprintf (buf, len, "%s", v->s);
        else
          snprintf (buf, len, "%san integer of %zu bits", v->i < 0 ? "a negative " : "", v->len);
        break;
      case ML_PK_FLOAT: snprintf (buf, len, "the float %.17g", v->f); break;
      case ML_PK_STR:
        {
          /* at most 40 bytes of it, control characters as '?' */
          char q[48];
          size_t n = 0;
          for (; n < v->len && n < 40; n++)
            q[n] = (unsigned char) v->s[n] < 0x20 || v->s[n] == 0x7f ? '?' : v->s[n];
          q[n] = 0;
          snprintf (buf, len, "the string \"%s%s\"", q, v->len > 40 ? "..." : "");
        }
        break;
      case ML_PK_BYTES: snprintf (buf, len, "%zu bytes", v->len); break;
      default: snprintf (buf, len, "a %s", ml_pk_kind_name (v->kind)); break;
      }
  return buf;
}

const char *
ml_pk_get_str (const MlPkValue *d, const char *key)
{
  const MlPkValue *v = ml_pk_get (d, key);
  return v && v->kind == ML_PK_STR ? v->s : NULL;
}
