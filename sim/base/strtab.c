#include "sim/base/strtab.h"
#include "sim/base/utf8.h"

#include <stdlib.h>
#include <string.h>

/* Strings are stored in large chunks that never move, so borrowed pointers
 * stay valid while the table grows. Lookup is an open-addressing hash of
 * indexes. */

#define CHUNK (64 * 1024)

typedef struct Chunk { struct Chunk *next; size_t used, cap; char data[]; } Chunk;

struct MlStrtab {
  Chunk     *chunks;
  char     **strs;    /* index -> string */
  uint32_t  *lens;
  size_t     n, cap;
  uint32_t  *slots;   /* hash slots: index + 1, 0 = empty */
  size_t     nslots;
};

/* 8 bytes at a time, each word mixed by a 64x64 -> 128 bit multiply
 * folded back (the wyhash / mum idea), then a final avalanche: a string of
 * n bytes costs about n / 8 multiplies instead of n. */
static inline uint64_t
mix (uint64_t a, uint64_t b)
{
  __uint128_t r = (__uint128_t) a * b;
  return (uint64_t) r ^ (uint64_t) (r >> 64);
}

static uint64_t
hash_bytes (const char *s, size_t len)
{
  const uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
  uint64_t h = k0 ^ len, w;
  const unsigned char *p = (const unsigned char *) s;
  for (; len >= 8; p += 8, len -= 8)
    {
      memcpy (&w, p, 8);
      h = mix (h ^ w, k1);
    }
  if (len)
    {
      w = 0;
      memcpy (&w, p, len);
      h = mix (h ^ w ^ ((uint64_t) len << 56), k1);
    }
  return mix (h, k0);
}

static char *
store (MlStrtab *tab, const char *s, size_t len)
{
  Chunk *c = tab->chunks;
  if (!c || c->cap - c->used < len + 1)
    {
      size_t cap = len + 1 > CHUNK ? len + 1 : CHUNK;
      c = malloc (sizeof *c + cap);
      if (!c)
        return NULL;
      c->next = tab->chunks; c->used = 0; c->cap = cap;
      tab->chunks = c;
    }
  char *p = c->data + c->used;
  memcpy (p, s, len);
  p[len] = 0;
  c->used += len + 1;
  return p;
}

static int
rehash (MlStrtab *tab, size_t nslots)
{
  uint32_t *slots = calloc (nslots, sizeof *slots);
  if (!slots)
    return -1;
  for (size_t i = 0; i < tab->n; i++)
    {
      size_t j = hash_bytes (tab->strs[i], tab->lens[i]) & (nslots - 1);
      while (slots[j])
        j = (j + 1) & (nslots - 1);
      slots[j] = (uint32_t) i + 1;
    }
  free (tab->slots);
  tab->slots = slots;
  tab->nslots = nslots;
  return 0;
}

MlStrtab *
ml_strtab_new (void)
{
  MlStrtab *tab = calloc (1, sizeof *tab);
  if (!tab)
    return NULL;
  if (ml_strtab_intern (tab, "", 0) != 0)
    {
      ml_strtab_free (tab);
      return NULL;
    }
  return tab;
}

void
ml_strtab_free (MlStrtab *tab)
{
  if (!tab)
    return;
  for (Chunk *c = tab->chunks, *next; c; c = next)
    {
      next = c->next;
      free (c);
    }
  free (tab->strs);
  free (tab->lens);
  free (tab->slots);
  free (tab);
}

uint32_t
ml_strtab_intern (MlStrtab *tab, const char *s, size_t len)
{
  if (len > UINT32_MAX - 1)
    return UINT32_MAX;
  if ((tab->n + 1) * 2 > tab->nslots && rehash (tab, tab->nslots ? tab->nslots * 2 : 64) < 0)
    return UINT32_MAX;
  size_t mask = tab->nslots - 1;
  size_t j = hash_bytes (s, len) & mask;
  for (; tab->slots[j]; j = (j + 1) & mask)
    {
      uint32_t idx = tab->slots[j] - 1;
      if (tab->lens[idx] == len && memcmp (tab->strs[idx], s, len) == 0)
        return idx;
    }
  if (tab->n == tab->cap)
    {
      size_t cap = tab->cap ? tab->cap * 2 : 64;
      char **strs = realloc (tab->strs, cap * sizeof *strs);
      if (!strs)
        return UINT32_MAX;
      tab->strs = strs;
      uint32_t *lens = realloc (tab->lens, cap * sizeof *lens);
      if (!lens)
        return UINT32_MAX;
      tab->lens = lens;
      tab->cap = cap;
    }
  if (tab->n >= UINT32_MAX - 1)
    return UINT32_MAX;
  if (!ml_utf8_valid (s, len))
    {
      /* every name a trace holds is valid UTF-8, so every writer's output
       * is (JSON, HTML, CSV, Markdown, pictures, the viewer): a byte that
       * starts no sequence becomes U+FFFD; the bytes as given find the
       * fixed string again by this path */
      size_t n;
      char *fixed = ml_utf8_fix (s, len, &n);
      if (!fixed)
        return UINT32_MAX;
      uint32_t idx = ml_strtab_intern (tab, fixed, n);
      free (fixed);
      return idx;
    }
  char *p = store (tab, s, len);
  if (!p)
    return UINT32_MAX;
  uint32_t idx = (uint32_t) tab->n++;
  tab->strs[idx] = p;
  tab->lens[idx] = (uint32_t) len;
  tab->slots[j] = idx + 1;
  return idx;
}

uint32_t
ml_strtab_intern0 (MlStrtab *tab, const char *s)
{
  return ml_strtab_intern (tab, s ? s : "", s ? strlen (s) : 0);
}

const char *
ml_strtab_get (const MlStrtab *tab, uint32_t idx)
{
  return idx < tab->n ? tab->strs[idx] : "";
}

size_t
ml_strtab_count (const MlStrtab *tab)
{
  return tab->n;
}
