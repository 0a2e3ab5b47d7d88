/* gen.h — what the structure-aware fuzz targets (fuzz-*-gen.c) share: the
 * input bytes are not a file but the choices of a generator that writes
 * one (a pickle of snapshot shape, a Kineto trace, a plan), in the manner
 * of LLVM's FuzzedDataProvider.
 *
 * Why a generator and not LLVMFuzzerCustomMutator: the mutator needs a
 * parser and a writer for every format (pickle, JSON) inside the target
 * and only works under libFuzzer; a generator needs only the writer, runs
 * the same in the replay build (a regression input is a handful of
 * choice bytes), and every mutation libFuzzer makes to the choice bytes
 * is a mutation of the structure: a flipped byte swaps a key, a value's
 * kind, a memo reference, a length of 600 for one of 6.
 *
 * Reading past the end of the input gives 0, and 0 always picks the
 * ordinary choice (the key torch writes, a small valid value, a memo
 * reference where torch makes one), so a short input is a small valid
 * document and the fuzzer grows hostility from there.
 *
 * FUZZ_GEN_DUMP=PATH in the environment writes each generated document
 * to PATH, so that a finding can be run through the CLI
 * (memlens stats PATH).
 */
#ifndef ML_FUZZ_GEN_H
#define ML_FUZZ_GEN_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the choices ---- */

typedef struct {
  const uint8_t *p;
  size_t         n;
} Fdp;

static inline uint8_t
fdp_u8 (Fdp *f)
{
  if (!f->n)
    return 0;
  f->n--;
  return *f->p++;
}

static inline uint64_t
fdp_u64 (Fdp *f, int bytes)
{
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= (uint64_t) fdp_u8 (f) << (8 * i);
  return v;
}

/* 0 .. n-1 (n <= 256: one byte) */
static inline unsigned
fdp_pick (Fdp *f, unsigned n)
{
  return n ? fdp_u8 (f) % n : 0;
}

/* true with probability about 1/@one_in; false when the input is spent */
static inline bool
fdp_rare (Fdp *f, unsigned one_in)
{
  uint8_t b = fdp_u8 (f);
  return b && b % one_in == 0;
}

/* ---- the bytes written ---- */

typedef struct {
  uint8_t *b;
  size_t   n, cap;
} Buf;

static inline void
buf_put (Buf *o, const void *p, size_t n)
{
  if (o->n + n > o->cap)
    {
      size_t c = o->cap ? o->cap : 4096;
      while (c < o->n + n)
        c *= 2;
      o->b = realloc (o->b, c);
      if (!o->b)
        abort ();
      o->cap = c;
    }
  memcpy (o->b + o->n, p, n);
  o->n += n;
}

static inline void
buf_byte (Buf *o, uint8_t c)
{
  buf_put (o, &c, 1);
}

static inline void
buf_str (Buf *o, const char *s)
{
  buf_put (o, s, strlen (s));
}

static inline void
buf_printf (Buf *o, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

#include <stdarg.h>
static inline void
buf_printf (Buf *o, const char *fmt, ...)
{
  char tmp[512];
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (tmp, sizeof tmp, fmt, ap);
  va_end (ap);
  buf_put (o, tmp, n < 0 ? 0 : (size_t) n < sizeof tmp ? (size_t) n : sizeof tmp - 1);
}

static inline void
buf_le (Buf *o, uint64_t v, int bytes)
{
  for (int i = 0; i < bytes; i++)
    buf_byte (o, (uint8_t) (v >> (8 * i)));
}

/* Writes the document where FUZZ_GEN_DUMP says, if it says. */
static inline void
gen_dump (const Buf *o)
{
  const char *path = getenv ("FUZZ_GEN_DUMP");
  if (!path || !*path)
    return;
  FILE *fp = fopen (path, "wb");
  if (!fp || fwrite (o->b, 1, o->n, fp) != o->n || fclose (fp) != 0)
    {
      perror (path);
      abort ();
    }
}

/* A string of the choices: its length (0..15 mostly, ≥ 512 or empty
 * sometimes) and its bytes (text, then anything: NUL, invalid UTF-8,
 * quotes and backslashes). Written to @s (cap ≥ 2049), NUL-terminated;
 * returns the length, which may count NULs inside. */
static inline size_t
gen_text (Fdp *f, char *s, size_t cap)
{
  static const char *const words[] = { "fwd", "bwd", "optimizer.step", "## forward ##", "START", "end",
                                       "aten::empty", "torch/nn/modules/module.py", "", "\xc3\xa9t\xc3\xa9" };
  size_t n;
  unsigned how = fdp_pick (f, 8);
  if (how < 4)
    {
      const char *w = words[fdp_pick (f, sizeof words / sizeof words[0])];
      n = strlen (w);
      memcpy (s, w, n);
    }
  else if (how < 6)
    {
      /* printable, or (rarely) any byte: NUL, invalid UTF-8 */
      bool any = fdp_rare (f, 7);
      n = fdp_pick (f, 16);
      for (size_t i = 0; i < n; i++)
        s[i] = any ? (char) fdp_u8 (f) : (char) (' ' + fdp_u8 (f) % 95);
    }
  else
    {
      /* long: 511, 512, 513, 1024, 2048 or a chosen length, of one
       * repeated byte (the input stays small) */
      static const size_t lens[] = { 511, 512, 513, 1023, 1024, 1025, 2048, 600 };
      n = lens[fdp_pick (f, 8)];
      if (n >= cap)
        n = cap - 1;
      char c = (char) ('A' + fdp_u8 (f) % 26);
      memset (s, c, n);
      if (how == 7 && n)
        s[fdp_pick (f, 255) % n] = (char) fdp_u8 (f);
    }
  s[n] = 0;
  return n;
}

/* ---- JSON pieces ---- */

/* A JSON string of @n bytes of @s: escaped as JSON wants (control bytes
 * as \u00XX, so a NUL inside is "\u0000"); other bytes as they are. */
static inline void
json_str (Buf *o, const char *s, size_t n)
{
  buf_byte (o, '"');
  for (size_t i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char) s[i];
      if (c == '"' || c == '\\')
        {
          buf_byte (o, '\\');
          buf_byte (o, c);
        }
      else if (c < 0x20)
        buf_printf (o, "\\u%04x", c);
      else
        buf_byte (o, c);
    }
  buf_byte (o, '"');
}

static inline void
json_cstr (Buf *o, const char *s)
{
  json_str (o, s, strlen (s));
}

/* A number or a token that is not the integer a field wants: what a
 * hostile or broken writer puts there. Returns the text written. */
static inline const char *
json_hostile (Fdp *f, Buf *o)
{
  static const char *const toks[] = {
    "-1", "1e400", "-1e400", "1.5", "0.5", "-0.0", "9223372036854775808", "18446744073709551616",
    "1.8446744073709552e19", "1e19", "-9e18", "9.3e18", "1e300", "null", "true", "false", "[]", "{}",
    "\"\"", "\"abc\"", "\"5 \"", "\"nan\"", "\"inf\"", "\"-5\"", "\"1e3\"", "\"0x\"",
    "\"18446744073709551616\"", "[1]", "{\"a\":1}", "2.5e-310", "\"0x10000000000000000\"",
  };
  const char *t = toks[fdp_pick (f, sizeof toks / sizeof toks[0])];
  buf_str (o, t);
  return t;
}

/* @levels nested arrays around 1 (past ML_JSON_MAX_DEPTH when > 100) */
static inline void
json_nest (Buf *o, unsigned levels)
{
  for (unsigned i = 0; i < levels; i++)
    buf_byte (o, '[');
  buf_byte (o, '1');
  for (unsigned i = 0; i < levels; i++)
    buf_byte (o, ']');
}

#endif
