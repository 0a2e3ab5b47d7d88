/* utf8.c — well-formed UTF-8 (utf8.h). */
#include "sim/base/utf8.h"

#include <stdlib.h>
#include <string.h>

size_t
ml_utf8_seq (const unsigned char *s, size_t n)
{
  unsigned char c = s[0];
  if (c < 0x80)
    return 1;
  size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (!len || len > n)
    return 0;
  /* the second byte's range excludes overlong forms, surrogates and
   * code points past U+10FFFF (Unicode's table 3-7) */
  unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80, hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
  if (s[1] < lo || s[1] > hi)
    return 0;
  for (size_t i = 2; i < len; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 0;
  return len;
}

bool
ml_utf8_valid (const char *s, size_t n)
{
  const unsigned char *p = (const unsigned char *) s;
  for (size_t i = 0; i < n;)
    {
      if (p[i] < 0x80)
        {
          i++;
          continue;
        }
      size_t k = ml_utf8_seq (p + i, n - i);
      if (!k)
        return false;
      i += k;
    }
  return true;
}

char *
ml_utf8_fix (const char *s, size_t n, size_t *out_len)
{
  const unsigned char *p = (const unsigned char *) s;
  if (n > ((size_t) -1 - 1) / 3)
    return NULL;
  char *out = malloc (3 * n + 1);
  if (!out)
    return NULL;
  size_t o = 0;
  for (size_t i = 0; i < n;)
    {
      size_t k = ml_utf8_seq (p + i, n - i);
      if (k)
        {
          memcpy (out + o, s + i, k);
          o += k, i += k;
        }
      else
        {
          memcpy (out + o, ML_UTF8_REPLACEMENT, 3);
          o += 3, i++;
        }
    }
  out[o] = 0;
  *out_len = o;
  return out;
}
