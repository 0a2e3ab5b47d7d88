#include "sim/formats/pickle.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim/base/u64map.h"

/* Every value, string and item array lives in an arena of 1 MiB chunks
 * (bump allocation: the parse is dominated by small allocations
 * otherwise); growing an item array copies it and leaves the old copy,
 * at most doubling what the arrays take, so memory stays O(input). */
typedef struct Chunk {
  struct Chunk *next;
  size_t used, cap;
  max_align_t data[];
} Chunk;

#define CHUNK_BYTES ((size_t) 1 << 20)

typedef struct {
  Chunk *chunks;       /* the head is the one being filled */
  Chunk *spare;        /* emptied chunks, for the next round */
  size_t chunk;        /* the usual chunk size: CHUNK_BYTES, less for a
                        * small input (no 1 MiB mapping for a 1 KB file) */
} Arena;

struct MlPkDoc {
  Arena      arena;
  MlPkValue *root;
};

/* MlPkValue.flags */
enum {
  F_SCRATCH   = 1,     /* lives in the scratch arena (built inside a streamed list) */
  F_FWD       = 2,     /* scratch, copied to the document: see fwd_get */
  F_DTLIST    = 4,     /* root[key] of a stream: the lists in it are streamed */
  F_STREAMED  = 8,     /* a streamed list: .i its index, .len the items handed so far */
  F_HANDED    = 16,    /* handed to the item callback */
  F_COLLAPSED = 32,    /* kept without its items: the consumer had tagged it */
};

static MlPkValue none_value = { .kind = ML_PK_NONE };
/* The values that need no allocation of their own: None, the bools and
 * the ints 0 .. 255 (BININT1, most of a snapshot's small numbers), shared
 * by every document. Nothing writes to them: the reader sets flags only
 * on scratch values, the consumer tags only strings and containers. */
#define I1(n)   { .kind = ML_PK_INT, .i = (n) }
#define I4(n)   I1 (n), I1 ((n) + 1), I1 ((n) + 2), I1 ((n) + 3)
#define I16(n)  I4 (n), I4 ((n) + 4), I4 ((n) + 8), I4 ((n) + 12)
#define I64(n)  I16 (n), I16 ((n) + 16), I16 ((n) + 32), I16 ((n) + 48)
static MlPkValue small_ints[256] = { I64 (0), I64 (64), I64 (128), I64 (192) };
#undef I1
#undef I4
#undef I16
#undef I64
static MlPkValue shared_none = { .kind = ML_PK_NONE };
static MlPkValue shared_bool[2] = { { .kind = ML_PK_BOOL, .i = 0 }, { .kind = ML_PK_BOOL, .i = 1 } };

/* what the memo holds for a streamed item once it is gone */
static MlPkValue streamed_value = { .kind = ML_PK_NONE };

const char *
ml_pk_kind_name (MlPkKind k)
{
  static const char *const names[] = { "None", "bool", "int", "int", "float", "str", "bytes",
                                       "list", "tuple", "dict", "mark" };
  return (unsigned) k <= ML_PK__MARK ? names[k] : "?";
}

static void
chunks_free (Chunk *c)
{
  for (Chunk *next; c; c = next)
    {
      next = c->next;
      free (c);
    }
}

static void
arena_free (Arena *a)
{
  chunks_free (a->chunks);
  chunks_free (a->spare);
  a->chunks = a->spare = NULL;
}

/* Empties @a; its chunks of the usual size stay for the next round (a
 * streamed batch needs the same again: no malloc, no page faults). */
static void
arena_reset (Arena *a)
{
  for (Chunk *c = a->chunks, *next; c; c = next)
    {
      next = c->next;
      if (c->cap == a->chunk)
        {
          c->used = 0;
          c->next = a->spare;
          a->spare = c;
        }
      else
        free (c);
    }
  a->chunks = NULL;
}

void
ml_pk_free (MlPkDoc *doc)
{
  if (!doc)
    return;
  arena_free (&doc->arena);
  free (doc);
}

MlPkValue *
ml_pk_root (const MlPkDoc *doc)
{
  return doc->root ? doc->root : &none_value;
}

static void *
arena (Arena *a, size_t n)
{
  n = (n + 15) & ~(size_t) 15;
  Chunk *c = a->chunks;
  if (c && c->cap - c->used >= n)
    {
      void *p = (unsigned char *) c->data + c->used;
      c->used += n;
      return p;
    }
  size_t usual = a->chunk ? a->chunk : CHUNK_BYTES;
  size_t cap = n > usual / 4 ? n : usual;
  Chunk *fresh;
  if (cap == usual && a->spare)
    {
      fresh = a->spare;
      a->spare = fresh->next;
    }
  else if (!(fresh = malloc (sizeof *fresh + cap)))
    return NULL;
  fresh->used = n;
  fresh->cap = cap;
  if (cap == n && c)
    {
      /* a big piece: its own chunk, behind the one being filled */
      fresh->next = c->next;
      c->next = fresh;
    }
  else
    {
      fresh->next = c;
      a->chunks = fresh;
    }
  return fresh->data;
}

/* ---- the VM ---- */

#define INT_CACHE_BITS 10
#define INT_CACHE (1u << INT_CACHE_BITS)

typedef struct {
  const unsigned char *p, *end, *base;
  MlPkDoc    *doc;
  MlPkValue **stack;
  size_t      sp, cap;
  size_t     *marks;       /* stack heights at MARK */
  size_t      n_marks, cap_marks;
  MlPkValue **memo;
  size_t      n_memo, cap_memo;   /* dense part: indexes 0 .. n_memo-1 */
  MlU64Map    sparse;              /* BINPUT with an index past the dense end */
  MlPkValue **sparse_vals;         /* ... maps to an index here */
  size_t      n_sparse, cap_sparse;
  MlError    *err;
  size_t      op_at;               /* offset of the current opcode */
  unsigned    op;
  /* streaming */
  const MlPkStream *stream;
  size_t      key_len;
  Arena       scratch;             /* values built above the streamed list */
  MlPkValue  *slist;               /* the streamed list being filled ... */
  size_t      spos;                /* ... at this stack position */
  uint64_t   *mlog;                /* memo indexes given scratch values */
  size_t      n_mlog, cap_mlog;
  const unsigned char *dropped;    /* input before this was given back */
  const unsigned char *next_report;
  /* ints built in the document, by value (direct-mapped, the last one
   * of a slot): a snapshot's segments repeat a few thousand sizes and
   * addresses many times, and each is one shared value instead of a
   * 64-byte one per occurrence (nothing writes to an int once built) */
  MlPkValue  *ints[INT_CACHE];
} Vm;

/* Values built while a streamed list is on the stack with something
 * above it are scratch: they go once its items have been handed over,
 * except what the memo still holds (copied to the document then). */
static inline bool
in_stream (const Vm *vm)
{
  return vm->slist && vm->sp > vm->spos && vm->stack[vm->spos] == vm->slist;
}

static MlPkValue *
new_value (Vm *vm, MlPkKind kind)
{
  bool scratch = in_stream (vm);
  MlPkValue *v = arena (scratch ? &vm->scratch : &vm->doc->arena, sizeof *v);
  if (!v)
    return NULL;
  memset (v, 0, sizeof *v);
  v->kind = kind;
  v->flags = scratch ? F_SCRATCH : 0;
  return v;
}

/* The copy of a promoted scratch value: strings keep it in .items,
 * everything else in .s (fields those kinds do not use). */
static MlPkValue *
fwd_get (const MlPkValue *v)
{
  return v->kind == ML_PK_STR || v->kind == ML_PK_BYTES ? (MlPkValue *) v->items : (MlPkValue *) v->s;
}

static void
fwd_set (MlPkValue *v, MlPkValue *copy)
{
  if (v->kind == ML_PK_STR || v->kind == ML_PK_BYTES)
    v->items = (MlPkValue **) copy;
  else
    v->s = (char *) copy;
  v->flags |= F_FWD;
}

/* @v in the document: itself when it is there, else a copy of it (made
 * once: the copy is remembered) with its items promoted in turn. A
 * container the consumer has tagged is kept without its items: it has
 * read them, and knows it by its tag. */
static MlPkValue *
promote_at (Vm *vm, MlPkValue *v, unsigned depth)
{
  if (!(v->flags & F_SCRATCH))
    return v;
  if (v->flags & F_FWD)
    return fwd_get (v);
  if (depth > ML_PK_MAX_DEPTH)
    {
      ml_error_set (vm->err, ML_EINPUT, "byte %zu: containers nested deeper than 256", vm->op_at);
      return NULL;
    }
  MlPkDoc *doc = vm->doc;
  MlPkValue *c = arena (&doc->arena, sizeof *c);
  if (!c)
    goto oom;
  *c = *v;
  c->flags &= (uint16_t) ~(F_SCRATCH | F_HANDED);
  if (v->kind == ML_PK_STR || v->kind == ML_PK_BYTES)
    {
      if (!(c->s = arena (&doc->arena, v->len + 1)))
        goto oom;
      memcpy (c->s, v->s, v->len + 1);
      c->items = NULL;
    }
  else
    {
      c->s = NULL;
      bool container = v->kind == ML_PK_LIST || v->kind == ML_PK_TUPLE || v->kind == ML_PK_DICT;
      c->items = NULL;
      c->cap = 0;
      if (container && v->tag)
        {
          c->n = 0;
          c->flags |= F_COLLAPSED;
        }
      else if (container && v->n)
        {
          /* the copy is made before its items so that a cycle ends */
          fwd_set (v, c);
          MlPkValue **it = arena (&doc->arena, v->n * sizeof *it);
          if (!it)
            goto oom;
          for (size_t k = 0; k < v->n; k++)
            if (!(it[k] = promote_at (vm, v->items[k], depth + 1)))
              return NULL;
          c->items = it;
          c->cap = v->n;
          return c;
        }
    }
  fwd_set (v, c);
  return c;
oom:
  ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  return NULL;
}

static MlPkValue *
promote (Vm *vm, MlPkValue *v)
{
  return promote_at (vm, v, 0);
}

/* Room in @c for @more items (one allocation for a whole APPENDS batch). */
static int
reserve (Vm *vm, MlPkValue *c, size_t more)
{
  if (c->cap - c->n >= more)
    return 0;
  if (c->n + more >= (uint32_t) 1 << 31)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory for a container of 2^31 items");
  uint32_t cap = c->cap ? c->cap * 2 : 4;
  if (cap < c->n + more)
    cap = (uint32_t) (c->n + more);
  MlPkValue **it = arena (c->flags & F_SCRATCH ? &vm->scratch : &vm->doc->arena, cap * sizeof *it);
  if (!it)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  if (c->n)
    memcpy (it, c->items, c->n * sizeof *it);
  c->items = it;
  c->cap = cap;
  return 0;
}

static int
push_item (Vm *vm, MlPkValue *c, MlPkValue *item)
{
  bool scratch = c->flags & F_SCRATCH;
  if (!scratch && (item->flags & F_SCRATCH) && !(item = promote (vm, item)))
    return vm->err ? vm->err->code : ML_ENOMEM;   /* the error is set */
  if (c->n == c->cap)
    {
      if (c->cap >= (uint32_t) 1 << 31)
        return ml_error_set (vm->err, ML_ENOMEM, "out of memory for a container of 2^31 items");
      uint32_t cap = c->cap ? c->cap * 2 : 4;
      MlPkValue **it = arena (scratch ? &vm->scratch : &vm->doc->arena, cap * sizeof *it);
      if (!it)
        return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
      if (c->n)
        memcpy (it, c->items, c->n * sizeof *it);
      c->items = it;
      c->cap = cap;
    }
  c->items[c->n++] = item;
  return 0;
}

#define MAX_STACK ((size_t) 1 << 24)

static int
fail (Vm *vm, const char *what)
{
  return ml_error_set (vm->err, ML_EINPUT, "byte %zu: opcode 0x%02x: %s", vm->op_at, vm->op, what);
}

static int
need (Vm *vm, size_t n)
{
  if ((size_t) (vm->end - vm->p) < n)
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: opcode 0x%02x needs %zu bytes, %zu left (truncated file?)",
                         vm->op_at, vm->op, n, (size_t) (vm->end - vm->p));
  return 0;
}

static inline uint64_t
rd_le (const unsigned char *p, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (n == 4)
    {
      uint32_t v4;
      memcpy (&v4, p, 4);
      return v4;
    }
  if (n == 8)
    {
      uint64_t v8;
      memcpy (&v8, p, 8);
      return v8;
    }
#endif
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++)
    v |= (uint64_t) p[i] << (8 * i);
  return v;
}

static int push_grow (Vm *vm, MlPkValue *v);

static inline int
push (Vm *vm, MlPkValue *v)
{
  if (v && vm->sp < vm->cap)
    {
      vm->stack[vm->sp++] = v;
      return 0;
    }
  return push_grow (vm, v);
}

static int
push_grow (Vm *vm, MlPkValue *v)
{
  if (!v)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  if (vm->sp == vm->cap)
    {
      if (vm->cap >= MAX_STACK)
        return fail (vm, "stack deeper than 16M entries");
      size_t cap = vm->cap ? vm->cap * 2 : 64;
      MlPkValue **s = realloc (vm->stack, cap * sizeof *s);
      if (!s)
        return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
      vm->stack = s;
      vm->cap = cap;
    }
  vm->stack[vm->sp++] = v;
  return 0;
}

static MlPkValue *
top (Vm *vm)
{
  return vm->sp ? vm->stack[vm->sp - 1] : NULL;
}

/* The height of the topmost mark, or an error. */
static int
pop_mark (Vm *vm, size_t *height)
{
  if (!vm->n_marks)
    return fail (vm, "no MARK on the stack");
  *height = vm->marks[--vm->n_marks];
  if (*height > vm->sp)
    return fail (vm, "MARK above the stack top");
  return 0;
}

static int
memo_put (Vm *vm, uint64_t idx, MlPkValue *v)
{
  if (!v)
    return fail (vm, "memoising an empty stack");
  if (v->flags & F_SCRATCH)
    {
      /* to be promoted (or dropped, for a streamed item) with the scratch */
      if (vm->n_mlog == vm->cap_mlog)
        {
          size_t cap = vm->cap_mlog ? vm->cap_mlog * 2 : 1024;
          uint64_t *m = realloc (vm->mlog, cap * sizeof *m);
          if (!m)
            return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
          vm->mlog = m;
          vm->cap_mlog = cap;
        }
      vm->mlog[vm->n_mlog++] = idx;
    }
  if (idx < vm->n_memo)
    {
      vm->memo[idx] = v;
      return 0;
    }
  if (idx == vm->n_memo)
    {
      if (vm->n_memo == vm->cap_memo)
        {
          size_t cap = vm->cap_memo ? vm->cap_memo * 2 : 256;
          MlPkValue **m = realloc (vm->memo, cap * sizeof *m);
          if (!m)
            return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
          vm->memo = m;
          vm->cap_memo = cap;
        }
      vm->memo[vm->n_memo++] = v;
      return 0;
    }
  /* sparse index: the map gives a slot in sparse_vals */
  uint32_t slot;
  if (ml_u64map_get (&vm->sparse, idx, &slot))
    {
      vm->sparse_vals[slot] = v;
      return 0;
    }
  if (vm->n_sparse == vm->cap_sparse)
    {
      size_t cap = vm->cap_sparse ? vm->cap_sparse * 2 : 16;
      MlPkValue **m = cap < UINT32_MAX ? realloc (vm->sparse_vals, cap * sizeof *m) : NULL;
      if (!m)
        return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
      vm->sparse_vals = m;
      vm->cap_sparse = cap;
    }
  vm->sparse_vals[vm->n_sparse] = v;
  if (ml_u64map_put (&vm->sparse, idx, (uint32_t) vm->n_sparse++) < 0)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  return 0;
}

static MlPkValue **
memo_slot (Vm *vm, uint64_t idx)
{
  if (idx < vm->n_memo)
    return &vm->memo[idx];
  uint32_t slot;
  if (ml_u64map_get (&vm->sparse, idx, &slot))
    return &vm->sparse_vals[slot];
  return NULL;
}

static inline int
memo_get (Vm *vm, uint64_t idx)
{
  if (idx < vm->n_memo && vm->memo[idx] != &streamed_value)
    return push (vm, vm->memo[idx]);
  MlPkValue **v = memo_slot (vm, idx);
  if (!v)
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: memo reference %" PRIu64 " was never stored", vm->op_at, idx);
  if (*v == &streamed_value)
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: memo reference %" PRIu64 " is an item of a streamed list, "
                         "which is not kept", vm->op_at, idx);
  return push (vm, *v);
}

/* After the items above the streamed list went to the callback: what the
 * memo holds of the scratch moves to the document, the items handed over
 * are forgotten, and the scratch is emptied. */
static int
scratch_reset (Vm *vm)
{
  for (size_t k = 0; k < vm->n_mlog; k++)
    {
      MlPkValue **slot = memo_slot (vm, vm->mlog[k]);
      if (!slot || !((*slot)->flags & F_SCRATCH))
        continue;
      if ((*slot)->flags & F_HANDED)
        *slot = &streamed_value;
      else if (!(*slot = promote (vm, *slot)))
        return vm->err ? vm->err->code : ML_ENOMEM;
    }
  vm->n_mlog = 0;
  arena_reset (&vm->scratch);
  return 0;
}

/* Where a value pushed now at stack position @pos will go: the container
 * and, for a dict, the key. The pickler writes a container, MARK, its
 * items, APPENDS / SETITEMS (or one item and APPEND / SETITEM). */
static MlPkValue *
parent_of (const Vm *vm, size_t pos, const MlPkValue **key)
{
  *key = NULL;
  if (vm->n_marks)
    {
      size_t m = vm->marks[vm->n_marks - 1];
      MlPkValue *c = m ? vm->stack[m - 1] : NULL;
      if (c && c->kind == ML_PK_LIST)
        return c;
      if (c && c->kind == ML_PK_DICT && (pos - m) % 2 == 1 && vm->stack[pos - 1]->kind == ML_PK_STR)
        {
          *key = vm->stack[pos - 1];
          return c;
        }
    }
  if (pos >= 1 && vm->stack[pos - 1]->kind == ML_PK_LIST)
    return vm->stack[pos - 1];
  if (pos >= 2 && vm->stack[pos - 2]->kind == ML_PK_DICT && vm->stack[pos - 1]->kind == ML_PK_STR)
    {
      *key = vm->stack[pos - 1];
      return vm->stack[pos - 2];
    }
  return NULL;
}

/* A new empty list: is it root[key], or a list inside it (streamed)? */
static void
mark_stream_list (Vm *vm, MlPkValue *l)
{
  if (!vm->stream || in_stream (vm))
    return;
  const MlPkValue *key;
  MlPkValue *parent = parent_of (vm, vm->sp, &key);
  if (!parent)
    return;
  if (key && vm->sp >= 2 && parent == vm->stack[0] && key->len == vm->key_len
      && memcmp (key->s, vm->stream->key, vm->key_len) == 0)
    l->flags |= F_DTLIST;
  else if (!key && (parent->flags & F_DTLIST))
    {
      l->flags |= F_STREAMED;
      size_t m = vm->n_marks ? vm->marks[vm->n_marks - 1] : 0;
      l->i = (int64_t) (parent->n + (m >= 1 && vm->stack[m - 1] == parent ? vm->sp - m : 0));
      vm->slist = l;
      vm->spos = vm->sp;
    }
}

static int
push_str (Vm *vm, MlPkKind kind, size_t n)
{
  int rc = need (vm, n);
  if (rc < 0)
    return rc;
  MlPkValue *v = new_value (vm, kind);
  if (!v)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  v->s = arena (v->flags & F_SCRATCH ? &vm->scratch : &vm->doc->arena, n + 1);
  if (!v->s)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory for a %zu byte string", n);
  memcpy (v->s, vm->p, n);
  v->s[n] = 0;
  v->len = n;
  vm->p += n;
  return push (vm, v);
}

static int
push_int (Vm *vm, int64_t i)
{
  if (i >= 0 && i < 256)
    return push (vm, &small_ints[i]);
  /* inside a streamed list values are scratch, gone after the item: the
   * cache holds document values only */
  if (in_stream (vm))
    {
      MlPkValue *v = new_value (vm, ML_PK_INT);
      if (v)
        v->i = i;
      return push (vm, v);
    }
  MlPkValue **slot = &vm->ints[((uint64_t) i * 0x9E3779B97F4A7C15ull) >> (64 - INT_CACHE_BITS)];
  if (*slot && (*slot)->i == i)
    return push (vm, *slot);
  MlPkValue *v = new_value (vm, ML_PK_INT);
  if (v)
    {
      v->i = i;
      *slot = v;
    }
  return push (vm, v);
}

static int
push_long (Vm *vm, size_t n)
{
  int rc = need (vm, n);
  if (rc < 0)
    return rc;
  const unsigned char *b = vm->p;
  vm->p += n;
  MlPkValue *v;
  if (n == 0)
    return push_int (vm, 0);
  bool neg = b[n - 1] & 0x80;
  if (n <= 8)
    {
      uint64_t u = rd_le (b, n);
      if (neg && n < 8)
        u |= ~(uint64_t) 0 << (8 * n);
      return push_int (vm, (int64_t) u);
    }
  /* longer: int64 when the high bytes are only sign extension */
  bool fits = true;
  for (size_t k = 8; k < n && fits; k++)
    fits = b[k] == (neg ? 0xff : 0x00);
  if (fits && ((b[7] & 0x80) != 0) == neg)
    return push_int (vm, (int64_t) rd_le (b, 8));
  v = new_value (vm, ML_PK_BIGINT);
  if (!v)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  double f = 0;
  for (size_t k = n; k-- > 0;)
    f = f * 256.0 + (double) (neg ? (unsigned char) ~b[k] : b[k]);
  v->f = neg ? -(f + 1) : f;
  v->i = neg ? -1 : 1;
  /* the magnitude, for messages: its bits, and its decimal digits when
   * short (an error names the value the file holds) */
  unsigned char m[ML_PK_BIGINT_DIGITS_BYTES];
  size_t top = n;
  while (top > 0 && b[top - 1] == (neg ? 0xff : 0x00))
    top--;
  unsigned hi = top ? (unsigned) (neg ? (unsigned char) ~b[top - 1] : b[top - 1]) : 0;
  size_t bits = top ? (top - 1) * 8 : 0;
  for (; hi; hi >>= 1)
    bits++;
  v->len = bits;
  if (n <= sizeof m)
    {
      /* big-endian magnitude; a negative number is ~b + 1 */
      unsigned carry = neg;
      for (size_t k = 0; k < n; k++)
        {
          unsigned x = (neg ? (unsigned char) ~b[k] : b[k]) + carry;
          m[n - 1 - k] = (unsigned char) x;
          carry = x >> 8;
        }
      char digits[3 * ML_PK_BIGINT_DIGITS_BYTES + 2];
      size_t nd = 0;
      bool zero = false;
      while (!zero)
        {
          unsigned r = 0;
          zero = true;
          for (size_t k = 0; k < n; k++)
            {
              unsigned x = r * 256 + m[k];
              m[k] = (unsigned char) (x / 10);
              r = x % 10;
              zero = zero && m[k] == 0;
            }
          digits[nd++] = (char) ('0' + r);
        }
      char *text = arena (&vm->doc->arena, nd + 2);
      if (!text)
        return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
      size_t j = 0;
      if (neg)
        text[j++] = '-';
      while (nd)
        text[j++] = digits[--nd];
      text[j] = 0;
      v->s = text;
    }
  return push (vm, v);
}

static int
build_seq (Vm *vm, MlPkKind kind, size_t from)
{
  MlPkValue *t = new_value (vm, kind);
  if (!t)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  uint32_t depth = 0;
  int rc0 = reserve (vm, t, vm->sp - from);
  if (rc0 < 0)
    return rc0;
  for (size_t k = from; k < vm->sp; k++)
    {
      if (vm->stack[k]->kind == ML_PK__MARK)
        return fail (vm, "a MARK inside the items");
      if (vm->stack[k]->depth + 1u > depth)
        depth = vm->stack[k]->depth + 1u;
      int rc = push_item (vm, t, vm->stack[k]);
      if (rc < 0)
        return rc;
    }
  if (depth > ML_PK_MAX_DEPTH)
    return fail (vm, "containers nested deeper than " "256");
  t->depth = (uint16_t) depth;
  vm->sp = from;
  return push (vm, t);
}

/* A tuple added to root[key] is a device trace as a list is (Python
 * reads both alike), built whole on the stack before TUPLE: its items go
 * to the callback as a streamed list's do, as list @list, and it stays in
 * the document empty, so the consumer sees every device trace the same
 * way. (Its items may be scratch, built above a streamed list; kept in
 * the tuple they went with the scratch before the consumer read them:
 * found by fuzz-snapshot-gen.) */
static int
stream_tuple (Vm *vm, MlPkValue *t, size_t list)
{
  for (size_t k = 0; k < t->n; k++)
    {
      MlPkValue *it = t->items[k];
      if (it->flags & F_SCRATCH)
        it->flags |= F_HANDED;
      int rc = vm->stream->item (vm->stream->user, list, k, it);
      if (rc < 0)
        return rc;
    }
  t->n = 0;
  return 0;
}

/* Adds stack[from .. sp) to the container below them. */
static int
add_items (Vm *vm, size_t from, bool dict)
{
  if (from == 0)
    return fail (vm, "no container under the items");
  MlPkValue *c = vm->stack[from - 1];
  if (dict ? c->kind != ML_PK_DICT : c->kind != ML_PK_LIST)
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: opcode 0x%02x: adding items to a %s", vm->op_at, vm->op,
                         ml_pk_kind_name (c->kind));
  if (dict && (vm->sp - from) % 2)
    return fail (vm, "odd number of dict items");
  if (c->flags & F_STREAMED)
    {
      for (size_t k = from; k < vm->sp; k++)
        {
          MlPkValue *it = vm->stack[k];
          if (it->kind == ML_PK__MARK)
            return fail (vm, "a MARK inside the items");
          if (it->flags & F_SCRATCH)
            it->flags |= F_HANDED;
          int rc = vm->stream->item (vm->stream->user, (size_t) c->i, c->len++, it);
          if (rc < 0)
            return rc;
        }
      vm->sp = from;
      return c == vm->slist && from == vm->spos + 1 && vm->sp == from ? scratch_reset (vm) : 0;
    }
  int rc = reserve (vm, c, vm->sp - from);
  if (rc < 0)
    return rc;
  if (c->flags & F_DTLIST)
    for (size_t k = from; k < vm->sp; k++)
      if (vm->stack[k]->kind == ML_PK_TUPLE && vm->stack[k]->n
          && (rc = stream_tuple (vm, vm->stack[k], c->n + (k - from))) < 0)
        return rc;
  /* locals: the stores into items cannot then alias the loop's state */
  unsigned depth = c->depth, deepest = 0;
  bool into_doc = !(c->flags & F_SCRATCH), marks = false, self = false;
  MlPkValue **stack = vm->stack, **items = c->items;
  size_t sp = vm->sp, n = c->n;
  for (size_t k = from; k < sp; k++)
    {
      MlPkValue *it = stack[k];
      marks |= it->kind == ML_PK__MARK;
      self |= it == c;
      deepest = it->depth > deepest ? it->depth : deepest;
      if (into_doc && (it->flags & F_SCRATCH))
        {
          if (marks || self)
            break;
          if (!(it = promote (vm, it)))
            return vm->err ? vm->err->code : ML_ENOMEM;
        }
      items[n++] = it;   /* room reserved above */
    }
  if (marks)
    return fail (vm, "a MARK inside the items");
  if (self)
    return fail (vm, "a container inside itself");
  if (deepest + 1u > ML_PK_MAX_DEPTH)
    return fail (vm, "containers nested deeper than 256");
  c->n = (uint32_t) n;
  if (sp > from && deepest + 1u > depth)
    c->depth = (uint16_t) (deepest + 1u);
  vm->sp = from;
  return 0;
}

#define REPORT_BYTES ((size_t) 4 << 20)

/* Every 4 MiB: progress, cancellation, and the input behind the reader
 * given back when it is a file mapping. */
static int
checkpoint (Vm *vm)
{
  const MlPkStream *st = vm->stream;
  vm->next_report = (size_t) (vm->end - vm->p) > REPORT_BYTES ? vm->p + REPORT_BYTES : vm->end;
  if (!st)
    return 0;
  if (st->drop_input)
    {
      size_t page = 1 << 12;
      uintptr_t from = ((uintptr_t) vm->dropped + page - 1) & ~(uintptr_t) (page - 1);
      uintptr_t to = (uintptr_t) vm->p & ~(uintptr_t) (page - 1);
      if (to > from)
        {
          madvise ((void *) from, to - from, MADV_DONTNEED);
          vm->dropped = (const unsigned char *) to;
        }
    }
  const MlProgress *pr = st->progress;
  if (pr && pr->cancelled && *pr->cancelled)
    return ml_error_set (vm->err, ML_ECANCELLED, "cancelled");
  if (pr && pr->report)
    pr->report (pr->user, (double) (vm->p - vm->base) / (double) (vm->end - vm->base), "reading");
  return 0;
}

static int
run (Vm *vm)
{
  vm->dropped = vm->base;
  vm->next_report = vm->base;
  while (vm->p < vm->end)
    {
      if (vm->p >= vm->next_report)
        {
          int rc = checkpoint (vm);
          if (rc < 0)
            return rc;
        }
      vm->op_at = (size_t) (vm->p - vm->base);
      vm->op = *vm->p++;
      int rc = 0;
      size_t n, from;
      MlPkValue *v;
      switch (vm->op)
        {
        case 0x80: /* PROTO */
          if ((rc = need (vm, 1)) < 0)
            return rc;
          if (*vm->p > 5)
            return ml_error_set (vm->err, ML_EINPUT, "byte %zu: pickle protocol %u is not supported (at most 5)",
                                 vm->op_at, *vm->p);
          vm->p++;
          break;
        case 0x95: /* FRAME: 8-byte length, the frame's bytes follow */
          if ((rc = need (vm, 8)) < 0)
            return rc;
          n = (size_t) rd_le (vm->p, 8);
          vm->p += 8;
          if (n > (size_t) (vm->end - vm->p))
            return ml_error_set (vm->err, ML_EINPUT, "byte %zu: FRAME of %zu bytes, only %zu left (truncated file?)",
                                 vm->op_at, n, (size_t) (vm->end - vm->p));
          break;
        case '.': /* STOP */
          if (vm->sp != 1 || vm->stack[0]->kind == ML_PK__MARK)
            return ml_error_set (vm->err, ML_EINPUT, "byte %zu: STOP with %zu values on the stack (expected 1)",
                                 vm->op_at, vm->sp);
          /* a root built above a streamed list (odd, but a valid
           * pickle) moves to the document with what it holds */
          if (!(vm->doc->root = promote (vm, vm->stack[0])))
            return vm->err ? vm->err->code : ML_ENOMEM;
          return 0;
        case '(': /* MARK */
          if (vm->n_marks == vm->cap_marks)
            {
              if (vm->cap_marks >= MAX_STACK)
                return fail (vm, "too many marks");
              size_t cap = vm->cap_marks ? vm->cap_marks * 2 : 32;
              size_t *m = realloc (vm->marks, cap * sizeof *m);
              if (!m)
                return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
              vm->marks = m;
              vm->cap_marks = cap;
            }
          vm->marks[vm->n_marks++] = vm->sp;
          break;
        case '}': rc = push (vm, new_value (vm, ML_PK_DICT)); break;
        case ']':
          if ((v = new_value (vm, ML_PK_LIST)))
            mark_stream_list (vm, v);
          rc = push (vm, v);
          break;
        case ')': rc = push (vm, new_value (vm, ML_PK_TUPLE)); break;
        case 'N': rc = push (vm, &shared_none); break;
        case 0x88: /* NEWTRUE */
        case 0x89: /* NEWFALSE */
          rc = push (vm, &shared_bool[vm->op == 0x88]);
          break;
        case 'K': /* BININT1 */
          if ((rc = need (vm, 1)) < 0)
            return rc;
          rc = push_int (vm, *vm->p++);
          break;
        case 'M': /* BININT2 */
          if ((rc = need (vm, 2)) < 0)
            return rc;
          rc = push_int (vm, (int64_t) rd_le (vm->p, 2));
          vm->p += 2;
          break;
        case 'J': /* BININT: signed 32 */
          if ((rc = need (vm, 4)) < 0)
            return rc;
          rc = push_int (vm, (int32_t) (uint32_t) rd_le (vm->p, 4));
          vm->p += 4;
          break;
        case 0x8a: /* LONG1 */
          if ((rc = need (vm, 1)) < 0)
            return rc;
          n = *vm->p++;
          rc = push_long (vm, n);
          break;
        case 0x8b: /* LONG4 */
          if ((rc = need (vm, 4)) < 0)
            return rc;
          {
            int32_t len4 = (int32_t) (uint32_t) rd_le (vm->p, 4);
            vm->p += 4;
            if (len4 < 0)
              return fail (vm, "negative LONG4 length");
            rc = push_long (vm, (size_t) len4);
          }
          break;
        case 'G': /* BINFLOAT: big-endian double */
          if ((rc = need (vm, 8)) < 0)
            return rc;
          {
            uint64_t u = 0;
            for (int k = 0; k < 8; k++)
              u = (u << 8) | vm->p[k];
            vm->p += 8;
            double d;
            memcpy (&d, &u, sizeof d);
            v = new_value (vm, ML_PK_FLOAT);
            if (v)
              v->f = d;
            rc = push (vm, v);
          }
          break;
        case 0x8c: /* SHORT_BINUNICODE */
        case 'C':  /* SHORT_BINBYTES */
          if ((rc = need (vm, 1)) < 0)
            return rc;
          n = *vm->p++;
          rc = push_str (vm, vm->op == 'C' ? ML_PK_BYTES : ML_PK_STR, n);
          break;
        case 'X': /* BINUNICODE */
        case 'B': /* BINBYTES */
          if ((rc = need (vm, 4)) < 0)
            return rc;
          n = (size_t) rd_le (vm->p, 4);
          vm->p += 4;
          rc = push_str (vm, vm->op == 'B' ? ML_PK_BYTES : ML_PK_STR, n);
          break;
        case 0x8d: /* BINUNICODE8 */
        case 0x8e: /* BINBYTES8 */
          if ((rc = need (vm, 8)) < 0)
            return rc;
          {
            uint64_t n8 = rd_le (vm->p, 8);
            vm->p += 8;
            if (n8 > (uint64_t) (vm->end - vm->p))
              return ml_error_set (vm->err, ML_EINPUT, "byte %zu: string of %" PRIu64 " bytes, only %zu left",
                                   vm->op_at, n8, (size_t) (vm->end - vm->p));
            rc = push_str (vm, vm->op == 0x8e ? ML_PK_BYTES : ML_PK_STR, (size_t) n8);
          }
          break;
        case 0x94: /* MEMOIZE */
          rc = memo_put (vm, vm->n_memo, top (vm));
          break;
        case 'q': /* BINPUT */
          if ((rc = need (vm, 1)) < 0)
            return rc;
          rc = memo_put (vm, *vm->p++, top (vm));
          break;
        case 'r': /* LONG_BINPUT */
          if ((rc = need (vm, 4)) < 0)
            return rc;
          rc = memo_put (vm, rd_le (vm->p, 4), top (vm));
          vm->p += 4;
          break;
        case 'h': /* BINGET */
        case 'j': /* LONG_BINGET */
          /* a run of them (the items of a frames list) in one go, the
           * VM's state in locals; the slow cases (a sparse or streamed
           * index, a full stack, a truncated file) through memo_get */
          {
            const unsigned char *p = vm->p, *end = vm->end, *opp = vm->p - 1;
            MlPkValue **memo = vm->memo, **stack = vm->stack;
            size_t n_memo = vm->n_memo, sp = vm->sp, cap = vm->cap;
            unsigned op = vm->op;
            for (;;)
              {
                size_t w = op == 'h' ? 1 : 4;
                if ((size_t) (end - p) < w)
                  {
                    vm->p = p, vm->sp = sp, vm->op = op, vm->op_at = (size_t) (opp - vm->base);
                    return need (vm, w);
                  }
                uint64_t idx = w == 1 ? *p : rd_le (p, 4);
                MlPkValue *mv;
                if (idx < n_memo && (mv = memo[idx]) != &streamed_value && sp < cap)
                  stack[sp++] = mv;
                else
                  {
                    vm->p = p, vm->sp = sp, vm->op = op, vm->op_at = (size_t) (opp - vm->base);
                    if ((rc = memo_get (vm, idx)) < 0)
                      return rc;
                    stack = vm->stack, sp = vm->sp, cap = vm->cap;
                  }
                p += w;
                if (p >= end || (*p != 'h' && *p != 'j'))
                  break;
                opp = p;
                op = *p++;
              }
            vm->p = p, vm->sp = sp, vm->op = op, vm->op_at = (size_t) (opp - vm->base);
          }
          break;
        case 0x85: /* TUPLE1 */
        case 0x86: /* TUPLE2 */
        case 0x87: /* TUPLE3 */
          n = vm->op - 0x84u;
          if (vm->sp < n || (vm->n_marks && vm->marks[vm->n_marks - 1] > vm->sp - n))
            return fail (vm, "not enough values for the tuple");
          rc = build_seq (vm, ML_PK_TUPLE, vm->sp - n);
          break;
        case 't': /* TUPLE */
          if ((rc = pop_mark (vm, &from)) < 0)
            return rc;
          rc = build_seq (vm, ML_PK_TUPLE, from);
          break;
        case 'l': /* LIST */
          if ((rc = pop_mark (vm, &from)) < 0)
            return rc;
          rc = build_seq (vm, ML_PK_LIST, from);
          break;
        case 'a': /* APPEND */
          if (vm->sp < 2 || (vm->n_marks && vm->marks[vm->n_marks - 1] > vm->sp - 1))
            return fail (vm, "APPEND needs a list and a value");
          rc = add_items (vm, vm->sp - 1, false);
          break;
        case 'e': /* APPENDS */
          if ((rc = pop_mark (vm, &from)) < 0)
            return rc;
          rc = add_items (vm, from, false);
          break;
        case 's': /* SETITEM */
          if (vm->sp < 3 || (vm->n_marks && vm->marks[vm->n_marks - 1] > vm->sp - 2))
            return fail (vm, "SETITEM needs a dict, a key and a value");
          rc = add_items (vm, vm->sp - 2, true);
          break;
        case 'u': /* SETITEMS */
          if ((rc = pop_mark (vm, &from)) < 0)
            return rc;
          rc = add_items (vm, from, true);
          break;
        case '0': /* POP */
          if (!vm->sp || (vm->n_marks && vm->marks[vm->n_marks - 1] == vm->sp))
            {
              if (vm->n_marks && vm->marks[vm->n_marks - 1] == vm->sp)
                vm->n_marks--;   /* POP of a mark */
              else
                return fail (vm, "POP of an empty stack");
            }
          else
            vm->sp--;
          break;
        case '1': /* POP_MARK */
          if ((rc = pop_mark (vm, &from)) < 0)
            return rc;
          vm->sp = from;
          break;
        case '2': /* DUP */
          if (!vm->sp)
            return fail (vm, "DUP of an empty stack");
          rc = push (vm, top (vm));
          break;
        default:
          return ml_error_set (vm->err, ML_EINPUT,
                               "byte %zu: opcode 0x%02x is not supported (memlens reads data-only pickles: "
                               "dicts, lists, tuples, strings, numbers)", vm->op_at, vm->op);
        }
      if (rc < 0)
        return rc;
    }
  return ml_error_set (vm->err, ML_EINPUT, "byte %zu: the pickle ends without STOP (truncated file?)",
                       (size_t) (vm->end - vm->base));
}

int
ml_pk_parse_stream (const unsigned char *data, size_t len, const MlPkStream *stream, MlPkDoc **out, MlError *err)
{
  MlPkDoc *doc = calloc (1, sizeof *doc);
  if (!doc)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  Vm vm = { .p = data, .end = data + len, .base = data, .doc = doc, .err = err, .stream = stream,
            .key_len = stream && stream->key ? strlen (stream->key) : 0 };
  if (stream && (!stream->key || !stream->item))
    vm.stream = NULL;
  ml_u64map_init (&vm.sparse);
  /* a value takes up to ~30 times its opcode's bytes */
  size_t chunk = 16 << 10;
  while (chunk < CHUNK_BYTES && chunk < len * 8)
    chunk *= 2;
  doc->arena.chunk = vm.scratch.chunk = chunk;
  int rc = len ? run (&vm) : ml_error_set (err, ML_EINPUT, "empty pickle");
  free (vm.stack);
  free (vm.marks);
  free (vm.memo);
  free (vm.sparse_vals);
  free (vm.mlog);
  arena_free (&vm.scratch);
  ml_u64map_clear (&vm.sparse);
  if (rc < 0)
    {
      ml_pk_free (doc);
      return rc;
    }
  *out = doc;
  return 0;
}

bool
ml_pk_in_document (const MlPkValue *v)
{
  return !(v->flags & F_SCRATCH);
}

int
ml_pk_parse (const unsigned char *data, size_t len, MlPkDoc **out, MlError *err)
{
  return ml_pk_parse_stream (data, len, NULL, out, err);
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
