#include "sim/base/jsonutil.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "sim/base/units.h"
#include "sim/base/utf8.h"

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
          else if (*p < 0x80)
            fputc (*p, fp);
          else
            {
              /* valid UTF-8 out, whatever the trace held: a byte that
               * starts no sequence is U+FFFD (as Python's "replace") */
              size_t k = ml_utf8_seq (p, strnlen ((const char *) p, 4));
              if (k)
                fwrite (p, 1, k, fp), p += k - 1;
              else
                fputs ("\\ufffd", fp);
            }
        }
    }
  fputc ('"', fp);
}

size_t
ml_json_find_nul (const char *text, size_t len)
{
  if (!memmem (text, len, "\\u0000", 6))
    return SIZE_MAX;   /* nearly always: no scan */
  bool in_str = false;
  for (size_t i = 0; i < len; i++)
    {
      char c = text[i];
      if (in_str)
        {
          if (c == '\\')
            {
              if (i + 5 < len && memcmp (text + i + 1, "u0000", 5) == 0)
                return i;
              i++;
            }
          else if (c == '"')
            in_str = false;
        }
      else if (c == '"')
        in_str = true;
    }
  return SIZE_MAX;
}

/* The scan of ml_json_check_depth; *@values (may be NULL) counts the
 * values the document holds (objects, arrays, scalars: the nodes cJSON
 * will make) when the text is valid JSON: containers twice (themselves,
 * and the member after their last comma) plus commas, less the empty
 * containers. */
static int
scan (const char *text, size_t len, int max_depth, size_t *values, MlError *err)
{
  size_t nul = ml_json_find_nul (text, len);
  if (nul != SIZE_MAX)
    {
      long at = 1;
      for (size_t i = 0; i < nul; i++)
        at += text[i] == '\n';
      return ml_error_set (err, ML_EINPUT, "line %ld: " ML_JSON_NUL_MSG, at);
    }
  int depth = 0;
  long line = 1;
  bool in_str = false, opened = false;
  size_t containers = 0, commas = 0, empty = 0;
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
          continue;
        }
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
        continue;
      if (c == '"')
        in_str = true;
      else if (c == '{' || c == '[')
        {
          if (++depth > max_depth)
            return ml_error_set (err, ML_EINPUT, "line %ld: nested more than %d levels deep", line, max_depth);
          containers++;
        }
      else if (c == '}' || c == ']')
        {
          depth -= depth > 0;
          empty += opened;
        }
      else if (c == ',')
        commas++;
      opened = c == '{' || c == '[';
    }
  if (values)
    *values = containers ? 2 * containers + commas - empty : 1;
  return 0;
}

int
ml_json_check_depth (const char *text, size_t len, int max_depth, MlError *err)
{
  return scan (text, len, max_depth, NULL, err);
}

int
ml_json_text_check (const unsigned char *piece, size_t len, size_t offset, void *user, MlError *err)
{
  const char *path = user;
  const unsigned char *nul = memchr (piece, 0, len);
  if (!nul)
    return 0;
  return ml_error_set (err, ML_EINPUT, "%s: byte %zu: a NUL byte (binary data, not JSON text)", path ? path : "input",
                       offset + (size_t) (nul - piece));
}

int
ml_json_read_file (const char *path, size_t max_bytes, cJSON **out, MlError *err)
{
  errno = 0;   /* zlib leaves it 0 when its own allocation fails */
  gzFile gz = gzopen (path, "rb");   /* reads plain files too */
  if (!gz)
    return ml_error_errno (err, errno, path, "cannot open");
  /* a gzip bomb (1000:1) must not be inflated into memory: compressed
   * input may grow 256 times (JSON traces compress 10-30 times), at least
   * to 64 MiB */
  size_t packed = 0;
  struct stat st;
  if (gzdirect (gz) && stat (path, &st) == 0 && S_ISREG (st.st_mode) && (uint64_t) st.st_size > max_bytes)
    {
      gzclose (gz);
      return ml_error_set (err, ML_EINPUT, "%s: %lld bytes, larger than the limit of %zu bytes", path, (long long) st.st_size,
                           max_bytes);
    }
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
            {
              rc = ml_error_set (err, ML_ENOMEM, "%s: out of memory after reading %zu bytes", path, n);
              break;
            }
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
      if ((rc = ml_json_text_check ((const unsigned char *) buf + n, (size_t) got, n, (void *) path, err)) < 0)
        break;
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
  rc = ml_json_parse_doc (path, buf, n, out, err);
  free (buf);
  return rc;
}

/* cJSON's allocations, counted: a NULL from cJSON_Parse is a syntax error
 * unless an allocation failed during the parse (out of memory). */
static _Thread_local unsigned long json_alloc_failures;

static void *
json_malloc (size_t n)
{
  void *p = malloc (n);
  if (!p)
    json_alloc_failures++;
  return p;
}

static void
json_install_hooks (void)
{
  static cJSON_Hooks hooks = { json_malloc, free };
  cJSON_InitHooks (&hooks);
}

cJSON *
ml_json_parse (const char *text, size_t len, const char **end, bool *oom)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once (&once, json_install_hooks);
  unsigned long before = json_alloc_failures;
  cJSON *o = cJSON_ParseWithLengthOpts (text, len, end, false);
  *oom = json_alloc_failures != before;
  if (*oom && o)
    {
      cJSON_Delete (o);
      o = NULL;
    }
  return o;
}

static long
line_of (const char *text, const char *at)
{
  long line = 1;
  for (const char *c = text; c < at; c++)
    line += *c == '\n';
  return line;
}

int
ml_json_parse_doc (const char *path, const char *text, size_t len, cJSON **out, MlError *err)
{
  size_t values;
  int rc = scan (text, len, ML_JSON_MAX_DEPTH, &values, err);
  if (rc < 0)
    return ml_error_prefix (err, "%s", path);
  /* the tree is bounded by the input: cJSON takes some 80 bytes a value,
   * and "0,0,0" is a value per 2 bytes, so a gzip file of them (or any
   * text) would build a tree many times the file */
  struct stat st;
  uint64_t stored = stat (path, &st) == 0 && S_ISREG (st.st_mode) ? (uint64_t) st.st_size : len;
  uint64_t most = len / ML_JSON_TEXT_PER_VALUE;
  if (most > stored * ML_JSON_VALUES_PER_STORED)
    most = stored * ML_JSON_VALUES_PER_STORED;
  if (most < ML_JSON_VALUES_MIN)
    most = ML_JSON_VALUES_MIN;
  if (values > most)
    return ml_error_set (err, ML_EINPUT, "%s: %zu values in %zu bytes of JSON (%" PRIu64 " as stored): more than such a file "
                         "can justify (at most one per %d bytes of text and %d per stored byte)", path, values, len, stored,
                         ML_JSON_TEXT_PER_VALUE, ML_JSON_VALUES_PER_STORED);
  const char *end = NULL;
  bool oom;
  cJSON *root = ml_json_parse (text, len, &end, &oom);
  if (oom)
    return ml_error_set (err, ML_ENOMEM, "%s: out of memory while parsing %zu bytes of JSON", path, len);
  if (!root)
    {
      const char *at = cJSON_GetErrorPtr ();
      long line = at && at >= text && at <= text + len ? line_of (text, at) : 1;
      return ml_error_set (err, ML_EINPUT, "%s:%ld: not valid JSON%s", path, line, len == 0 ? " (empty file)" : "");
    }
  const char *p = end && end >= text && end <= text + len ? end : text + len;
  while (p < text + len && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  if (p < text + len)
    {
      cJSON_Delete (root);
      return ml_error_set (err, ML_EINPUT, "%s:%ld: text after the JSON document: \"%.20s\"", path, line_of (text, p), p);
    }
  size_t at;
  if (ml_json_check_unique_keys (root, text, len, &at, err) < 0)
    {
      cJSON_Delete (root);
      if (err && err->code == ML_ENOMEM)
        return ml_error_prefix (err, "%s", path);
      return at == SIZE_MAX ? ml_error_prefix (err, "%s", path)
                            : ml_error_prefix (err, "%s:%ld: byte %zu", path, line_of (text, text + at), at);
    }
  *out = root;
  return 0;
}

static int
cmp_name (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* The first key of object @v that appears twice, or NULL; sorted names
 * for a large object, so a hostile object of a million keys is not a
 * quadratic scan. *oom on an allocation failure. */
static const char *
repeated_key (const cJSON *v, bool *oom)
{
  size_t n = 0;
  for (const cJSON *c = v->child; c; c = c->next)
    n += c->string != NULL;
  if (n <= 16)
    {
      for (const cJSON *c = v->child; c; c = c->next)
        for (const cJSON *d = v->child; d != c; d = d->next)
          if (c->string && d->string && strcmp (d->string, c->string) == 0)
            return c->string;
      return NULL;
    }
  const char **names = malloc (n * sizeof *names);
  if (!names)
    {
      *oom = true;
      return NULL;
    }
  n = 0;
  for (const cJSON *c = v->child; c; c = c->next)
    if (c->string)
      names[n++] = c->string;
  qsort (names, n, sizeof *names, cmp_name);
  const char *twice = NULL;
  for (size_t i = 1; i < n && !twice; i++)
    if (strcmp (names[i - 1], names[i]) == 0)
      twice = names[i];
  free (names);
  return twice;
}

/* The first object (depth first) holding a key twice: the object, the
 * key, its path ("ops[3]"), and the object's index among the containers
 * in the order they open (cJSON builds them in text order). */
typedef struct {
  const cJSON *obj;
  const char  *key;
  size_t       index, counted;
  char         where[256];
  bool         oom;
} Repeat;

static bool
find_repeat (const cJSON *v, Repeat *r, size_t at)
{
  size_t me = r->counted++;
  if (cJSON_IsObject (v) && (r->key = repeated_key (v, &r->oom)) != NULL)
    {
      r->obj = v;
      r->index = me;
      return true;
    }
  if (r->oom)
    return true;
  size_t i = 0;
  for (const cJSON *c = v->child; c; c = c->next, i++)
    {
      if (!cJSON_IsObject (c) && !cJSON_IsArray (c))
        continue;
      size_t cap = sizeof r->where;
      int k = cJSON_IsObject (v) ? snprintf (r->where + at, cap - at, "%s%.60s", at ? "." : "", c->string ? c->string : "")
                                 : snprintf (r->where + at, cap - at, "[%zu]", i);
      size_t next = k > 0 && at + (size_t) k < cap ? at + (size_t) k : at;
      if (find_repeat (c, r, next))
        return true;
      r->where[at] = 0;
    }
  return false;
}

/* Appends the code point @u as UTF-8 (as cJSON decodes \uXXXX). */
static size_t
put_utf8 (unsigned long u, char *out)
{
  if (u < 0x80)
    return out[0] = (char) u, 1;
  if (u < 0x800)
    return out[0] = (char) (0xc0 | u >> 6), out[1] = (char) (0x80 | (u & 0x3f)), 2;
  if (u < 0x10000)
    return out[0] = (char) (0xe0 | u >> 12), out[1] = (char) (0x80 | ((u >> 6) & 0x3f)), out[2] = (char) (0x80 | (u & 0x3f)), 3;
  out[0] = (char) (0xf0 | u >> 18), out[1] = (char) (0x80 | ((u >> 12) & 0x3f));
  out[2] = (char) (0x80 | ((u >> 6) & 0x3f)), out[3] = (char) (0x80 | (u & 0x3f));
  return 4;
}

static unsigned long
hex4 (const char *s)
{
  return strtoul ((char[5]) { s[0], s[1], s[2], s[3], 0 }, NULL, 16);
}

/* True when the JSON string literal s[0 .. n) (without its quotes, the
 * text cJSON accepted) decodes to @key. */
static bool
literal_is (const char *s, size_t n, const char *key)
{
  size_t k = 0, klen = strlen (key);
  for (size_t i = 0; i < n;)
    {
      char buf[8];
      size_t m = 1;
      if (s[i] != '\\')
        buf[0] = s[i++];
      else if (i + 1 < n && s[i + 1] == 'u' && i + 6 <= n)
        {
          unsigned long u = hex4 (s + i + 2);
          i += 6;
          if (u >= 0xd800 && u < 0xdc00 && i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u')
            {
              u = 0x10000 + ((u - 0xd800) << 10) + (hex4 (s + i + 2) - 0xdc00);
              i += 6;
            }
          m = put_utf8 (u, buf);
        }
      else if (i + 1 < n)
        {
          const char *esc = strchr ("b\bf\fn\nr\rt\t", s[i + 1]);
          buf[0] = esc && s[i + 1] != 0 ? esc[1] : s[i + 1];
          i += 2;
        }
      else
        return false;
      if (k + m > klen || memcmp (key + k, buf, m) != 0)
        return false;
      k += m;
    }
  return k == klen;
}

/* The offset in @text of the second occurrence of key @key among the
 * members of the @index-th container to open, else SIZE_MAX. */
static size_t
second_key_at (const char *text, size_t len, size_t index, const char *key)
{
  size_t opened = 0, seen = 0;
  long depth = 0, target = -1;
  for (size_t i = 0; i < len; i++)
    {
      char ch = text[i];
      if (ch == '{' || ch == '[')
        {
          depth++;
          if (opened++ == index)
            target = depth;
        }
      else if (ch == '}' || ch == ']')
        {
          if (depth-- == target)
            return SIZE_MAX;
        }
      else if (ch == '"')
        {
          size_t j = i + 1;
          while (j < len && text[j] != '"')
            j += text[j] == '\\' ? 2 : 1;
          if (j >= len)
            return SIZE_MAX;
          size_t after = j + 1;
          while (after < len && (text[after] == ' ' || text[after] == '\t' || text[after] == '\n' || text[after] == '\r'))
            after++;
          if (depth == target && after < len && text[after] == ':' && literal_is (text + i + 1, j - i - 1, key)
              && seen++ == 1)
            return i;
          i = j;
        }
    }
  return SIZE_MAX;
}

int
ml_json_check_unique_keys (const cJSON *root, const char *text, size_t len, size_t *at, MlError *err)
{
  Repeat r = { 0 };
  *at = SIZE_MAX;
  if (!find_repeat (root, &r, 0))
    return 0;
  if (r.oom)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  *at = text ? second_key_at (text, len, r.index, r.key) : SIZE_MAX;
  return ml_error_set (err, ML_EINPUT, "%s%s%.60s: the key appears twice in one object (Python's json would keep the last, "
                       "a first-come reader the first): refused", r.where, r.where[0] ? "." : "", r.key);
}
