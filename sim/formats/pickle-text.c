/* pickle-text.c — the opcodes of pickle protocols 0 and 1, which Python
 * still reads: arguments as text lines (INT, LONG, FLOAT, STRING,
 * UNICODE, PUT, GET), Python 2's byte strings (BINSTRING), and DICT from
 * a mark. Each reads as Python 3's pickle.load reads it, with its default
 * encoding (ASCII for Python 2 strings); errors name the byte offset, the
 * opcode and the argument. */
#include "sim/formats/pickle-private.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

/* The argument of a text opcode: the bytes up to the next newline (*@n
 * of them, without it); vm->p moves past the newline. */
static int
text_arg (MlPkVm *vm, const unsigned char **s, size_t *n)
{
  const unsigned char *nl = memchr (vm->p, '\n', (size_t) (vm->end - vm->p));
  if (!nl)
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: opcode 0x%02x: its argument has no end of line (truncated file?)",
                         vm->op_at, vm->op);
  *s = vm->p;
  *n = (size_t) (nl - vm->p);
  vm->p = nl + 1;
  return 0;
}

/* The argument, quoted for a message: at most 40 bytes, control
 * characters as '?'. */
static const char *
quoted (const unsigned char *s, size_t n, char *buf, size_t len)
{
  size_t k = 0;
  for (; k < n && k < 40 && k + 4 < len; k++)
    buf[k] = s[k] < 0x20 || s[k] >= 0x7f ? '?' : (char) s[k];
  snprintf (buf + k, len - k, "%s", n > k ? "..." : "");
  return buf;
}

/* Python's int() of a decimal with an optional sign, as pickle writes it
 * (INT, LONG): an int when it fits 64 bits, else a BIGINT. Python reads
 * at most 4300 digits. */
static int
push_decimal (MlPkVm *vm, const unsigned char *s, size_t n)
{
  char q[64];
  size_t i = 0;
  bool neg = false;
  if (i < n && (s[i] == '-' || s[i] == '+'))
    neg = s[i++] == '-';
  size_t first = i;
  while (i < n && s[i] == '0')
    i++;
  size_t digits = n - i;
  for (size_t k = first; k < n; k++)
    if (s[k] < '0' || s[k] > '9')
      return ml_error_set (vm->err, ML_EINPUT, "byte %zu: opcode 0x%02x: \"%s\" is not a decimal integer", vm->op_at,
                           vm->op, quoted (s, n, q, sizeof q));
  if (first == n)
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: opcode 0x%02x: an empty integer", vm->op_at, vm->op);
  if (digits > 4300)
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: opcode 0x%02x: an integer of %zu digits (Python reads at most 4300)",
                         vm->op_at, vm->op, digits);
  /* the magnitude as little-endian bytes, then two's complement: the
   * same value LONG1 / LONG4 would give */
  unsigned char mag[1800] = { 0 };
  size_t used = 1;
  for (size_t k = i; k < n; k++)
    {
      unsigned carry = (unsigned) (s[k] - '0');
      for (size_t b = 0; b < used; b++)
        {
          unsigned x = mag[b] * 10u + carry;
          mag[b] = (unsigned char) x;
          carry = x >> 8;
        }
      if (carry)
        mag[used++] = (unsigned char) carry;
    }
  if (mag[used - 1] & 0x80)
    used++;   /* room for the sign bit */
  if (neg)
    {
      unsigned carry = 1;
      for (size_t b = 0; b < used; b++)
        {
          unsigned x = (unsigned char) ~mag[b] + carry;
          mag[b] = (unsigned char) x;
          carry = x >> 8;
        }
    }
  return _ml_pk_push_long_bytes (vm, mag, used);
}

/* INT: a decimal line; "01" and "00" are True and False (protocol 0 and
 * 1 write bools so). */
int
_ml_pk_op_int (MlPkVm *vm)
{
  const unsigned char *s = NULL;
  size_t n = 0;
  int rc = text_arg (vm, &s, &n);
  if (rc < 0)
    return rc;
  if (n == 2 && s[0] == '0' && (s[1] == '0' || s[1] == '1'))
    return _ml_pk_push_bool (vm, s[1] == '1');
  return push_decimal (vm, s, n);
}

/* LONG: a decimal line, with Python 2's trailing 'L' */
int
_ml_pk_op_long (MlPkVm *vm)
{
  const unsigned char *s = NULL;
  size_t n = 0;
  int rc = text_arg (vm, &s, &n);
  if (rc < 0)
    return rc;
  if (n && s[n - 1] == 'L')
    n--;
  return push_decimal (vm, s, n);
}

/* FLOAT: Python's repr of a float */
int
_ml_pk_op_float (MlPkVm *vm)
{
  const unsigned char *s = NULL;
  size_t n = 0;
  int rc = text_arg (vm, &s, &n);
  if (rc < 0)
    return rc;
  char buf[64], q[64];
  char *end = NULL;
  double d = 0;
  if (n && n < sizeof buf)
    {
      memcpy (buf, s, n);
      buf[n] = 0;
      d = strtod (buf, &end);
    }
  if (!end || *end || end == buf || isspace ((unsigned char) buf[0]))
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: FLOAT \"%s\" is not a number", vm->op_at, quoted (s, n, q, sizeof q));
  MlPkValue *v = _ml_pk_new_value (vm, ML_PK_FLOAT);
  if (v)
    v->f = d;
  return _ml_pk_push (vm, v);
}

/* Python 2's str (STRING, BINSTRING, SHORT_BINSTRING), which Python 3
 * reads as ASCII text: a byte above 0x7f is an error there too. */
static int
push_ascii (MlPkVm *vm, const unsigned char *s, size_t n)
{
  for (size_t k = 0; k < n; k++)
    if (s[k] > 0x7f)
      return ml_error_set (vm->err, ML_EINPUT, "byte %zu: opcode 0x%02x: byte 0x%02x in a Python 2 string (Python 3 "
                           "reads it as ASCII)", vm->op_at, vm->op, s[k]);
  return _ml_pk_push_string (vm, ML_PK_STR, s, n);
}

static int
hex_digit (unsigned char c)
{
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* STRING: a quoted Python 2 string with its escapes (\n, \x41, \101, ...),
 * as codecs.escape_decode reads them. */
int
_ml_pk_op_string (MlPkVm *vm)
{
  const unsigned char *s = NULL;
  size_t n = 0;
  int rc = text_arg (vm, &s, &n);
  if (rc < 0)
    return rc;
  if (n < 2 || s[0] != s[n - 1] || (s[0] != '\'' && s[0] != '"'))
    return _ml_pk_fail (vm, "the STRING argument is not quoted");
  unsigned char *out = malloc (n);
  if (!out)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  size_t m = 0;
  for (size_t k = 1; k + 1 < n; k++)
    {
      if (s[k] != '\\' || k + 2 >= n)
        {
          out[m++] = s[k];
          continue;
        }
      unsigned char c = s[++k];
      static const char from[] = "\\'\"abfnrtv", to[] = "\\'\"\a\b\f\n\r\t\v";
      const char *e = memchr (from, c, sizeof from - 1);
      if (e)
        out[m++] = (unsigned char) to[e - from];
      else if (c == '\n')
        ;   /* a line continuation */
      else if (c >= '0' && c <= '7')
        {
          unsigned x = c - '0';
          for (int d = 0; d < 2 && k + 2 < n && s[k + 1] >= '0' && s[k + 1] <= '7'; d++)
            x = x * 8 + (unsigned) (s[++k] - '0');
          out[m++] = (unsigned char) x;
        }
      else if (c == 'x')
        {
          int h = k + 3 < n ? hex_digit (s[k + 1]) : -1, l = h >= 0 ? hex_digit (s[k + 2]) : -1;
          if (l < 0)
            {
              free (out);
              return _ml_pk_fail (vm, "a STRING's \\x escape needs two hex digits");
            }
          out[m++] = (unsigned char) (h * 16 + l);
          k += 2;
        }
      else
        {
          out[m++] = '\\';
          out[m++] = c;
        }
    }
  rc = push_ascii (vm, out, m);
  free (out);
  return rc;
}

/* BINSTRING: a 4-byte signed length; SHORT_BINSTRING: a 1-byte length */
int
_ml_pk_op_binstring (MlPkVm *vm)
{
  size_t w = vm->op == 'T' ? 4 : 1;
  int rc = _ml_pk_need (vm, w);
  if (rc < 0)
    return rc;
  int64_t len = w == 4 ? (int32_t) (uint32_t) _ml_pk_rd_le (vm->p, 4) : *vm->p;
  vm->p += w;
  if (len < 0)
    return _ml_pk_fail (vm, "negative BINSTRING length");
  if ((rc = _ml_pk_need (vm, (size_t) len)) < 0)
    return rc;
  const unsigned char *s = vm->p;
  vm->p += len;
  return push_ascii (vm, s, (size_t) len);
}

/* Code point @cp as UTF-8 into @out (room for 4); the bytes written. A
 * lone surrogate is written as its 3 bytes, as Python holds it. */
static size_t
utf8_put (uint32_t cp, unsigned char *out)
{
  if (cp < 0x80)
    return out[0] = (unsigned char) cp, 1;
  if (cp < 0x800)
    return out[0] = (unsigned char) (0xc0 | cp >> 6), out[1] = (unsigned char) (0x80 | (cp & 0x3f)), 2;
  if (cp < 0x10000)
    return out[0] = (unsigned char) (0xe0 | cp >> 12), out[1] = (unsigned char) (0x80 | ((cp >> 6) & 0x3f)),
           out[2] = (unsigned char) (0x80 | (cp & 0x3f)), 3;
  out[0] = (unsigned char) (0xf0 | cp >> 18);
  out[1] = (unsigned char) (0x80 | ((cp >> 12) & 0x3f));
  out[2] = (unsigned char) (0x80 | ((cp >> 6) & 0x3f));
  out[3] = (unsigned char) (0x80 | (cp & 0x3f));
  return 4;
}

/* UNICODE: a line in raw-unicode-escape: bytes are Latin-1 characters,
 * \uXXXX and \UXXXXXXXX escapes the others (Python writes a backslash and
 * a newline so too). */
int
_ml_pk_op_unicode (MlPkVm *vm)
{
  const unsigned char *s = NULL;
  size_t n = 0;
  int rc = text_arg (vm, &s, &n);
  if (rc < 0)
    return rc;
  unsigned char *out = malloc (2 * n + 1);
  if (!out)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  size_t m = 0;
  for (size_t k = 0; k < n; k++)
    {
      size_t w = s[k] == '\\' && k + 1 < n ? (s[k + 1] == 'u' ? 4 : s[k + 1] == 'U' ? 8 : 0) : 0;
      if (!w)
        {
          m += utf8_put (s[k], out + m);
          continue;
        }
      uint32_t cp = 0;
      for (size_t d = 0; d < w; d++)
        {
          int h = k + 2 + d < n ? hex_digit (s[k + 2 + d]) : -1;
          if (h < 0)
            {
              free (out);
              return _ml_pk_fail (vm, "a truncated \\uXXXX escape in UNICODE");
            }
          cp = cp * 16 + (uint32_t) h;
        }
      if (cp > 0x10ffff)
        {
          free (out);
          return _ml_pk_fail (vm, "a \\U escape past U+10FFFF in UNICODE");
        }
      m += utf8_put (cp, out + m);
      k += 1 + w;
    }
  rc = _ml_pk_push_string (vm, ML_PK_STR, out, m);
  free (out);
  return rc;
}

/* PUT, GET: a decimal memo index on a line */
static int
memo_index (MlPkVm *vm, uint64_t *idx)
{
  const unsigned char *s = NULL;
  size_t n = 0;
  int rc = text_arg (vm, &s, &n);
  if (rc < 0)
    return rc;
  char q[64];
  if (!n || n > 19 || strspn ((const char *) s, "0123456789") < n)
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: opcode 0x%02x: memo index \"%s\" is not a non-negative integer",
                         vm->op_at, vm->op, quoted (s, n, q, sizeof q));
  *idx = 0;
  for (size_t k = 0; k < n; k++)
    *idx = *idx * 10 + (uint64_t) (s[k] - '0');
  return 0;
}

int
_ml_pk_op_put (MlPkVm *vm)
{
  uint64_t idx;
  int rc = memo_index (vm, &idx);
  return rc < 0 ? rc : _ml_pk_memo_put (vm, idx, _ml_pk_top (vm));
}

int
_ml_pk_op_get (MlPkVm *vm)
{
  uint64_t idx;
  int rc = memo_index (vm, &idx);
  return rc < 0 ? rc : _ml_pk_memo_get (vm, idx);
}

/* DICT: the key, value pairs above the topmost mark */
int
_ml_pk_op_dict (MlPkVm *vm)
{
  size_t from;
  int rc = _ml_pk_pop_mark (vm, &from);
  return rc < 0 ? rc : _ml_pk_build_seq (vm, ML_PK_DICT, from);
}
