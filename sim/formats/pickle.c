#include "sim/formats/pickle.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

struct MlPkDoc {
  Chunk     *chunks;   /* the head is the one being filled */
  MlPkValue *root;
};

static MlPkValue none_value = { .kind = ML_PK_NONE };

const char *
ml_pk_kind_name (MlPkKind k)
{
  static const char *const names[] = { "None", "bool", "int", "int", "float", "str", "bytes",
                                       "list", "tuple", "dict", "mark" };
  return (unsigned) k <= ML_PK__MARK ? names[k] : "?";
}

void
ml_pk_free (MlPkDoc *doc)
{
  if (!doc)
    return;
  for (Chunk *c = doc->chunks, *next; c; c = next)
    {
      next = c->next;
      free (c);
    }
  free (doc);
}

MlPkValue *
ml_pk_root (const MlPkDoc *doc)
{
  return doc->root ? doc->root : &none_value;
}

static void *
arena (MlPkDoc *doc, size_t n)
{
  n = (n + 15) & ~(size_t) 15;
  Chunk *c = doc->chunks;
  if (c && c->cap - c->used >= n)
    {
      void *p = (unsigned char *) c->data + c->used;
      c->used += n;
      return p;
    }
  size_t cap = n > CHUNK_BYTES / 4 ? n : CHUNK_BYTES;
  Chunk *fresh = malloc (sizeof *fresh + cap);
  if (!fresh)
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
      doc->chunks = fresh;
    }
  return fresh->data;
}

static MlPkValue *
new_value (MlPkDoc *doc, MlPkKind kind)
{
  MlPkValue *v = arena (doc, sizeof *v);
  if (!v)
    return NULL;
  memset (v, 0, sizeof *v);
  v->kind = kind;
  return v;
}

static int
push_item (MlPkDoc *doc, MlPkValue *c, MlPkValue *item)
{
  if (c->n == c->cap)
    {
      if (c->cap >= (uint32_t) 1 << 31)
        return ML_ENOMEM;   /* 2^31 items: more than memory holds */
      uint32_t cap = c->cap ? c->cap * 2 : 4;
      MlPkValue **it = arena (doc, cap * sizeof *it);
      if (!it)
        return ML_ENOMEM;
      if (c->n)
        memcpy (it, c->items, c->n * sizeof *it);
      c->items = it;
      c->cap = cap;
    }
  c->items[c->n++] = item;
  return 0;
}

/* ---- the VM ---- */

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
} Vm;

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

static uint64_t
rd_le (const unsigned char *p, size_t n)
{
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++)
    v |= (uint64_t) p[i] << (8 * i);
  return v;
}

static int
push (Vm *vm, MlPkValue *v)
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

static int
memo_get (Vm *vm, uint64_t idx)
{
  if (idx < vm->n_memo)
    return push (vm, vm->memo[idx]);
  uint32_t slot;
  if (ml_u64map_get (&vm->sparse, idx, &slot))
    return push (vm, vm->sparse_vals[slot]);
  return ml_error_set (vm->err, ML_EINPUT, "byte %zu: memo reference %" PRIu64 " was never stored", vm->op_at, idx);
}

static int
push_str (Vm *vm, MlPkKind kind, size_t n)
{
  int rc = need (vm, n);
  if (rc < 0)
    return rc;
  MlPkValue *v = new_value (vm->doc, kind);
  if (!v)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  v->s = arena (vm->doc, n + 1);
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
  MlPkValue *v = new_value (vm->doc, ML_PK_INT);
  if (v)
    v->i = i;
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
  v = new_value (vm->doc, ML_PK_BIGINT);
  if (!v)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  double f = 0;
  for (size_t k = n; k-- > 0;)
    f = f * 256.0 + (double) (neg ? (unsigned char) ~b[k] : b[k]);
  v->f = neg ? -(f + 1) : f;
  v->i = neg ? -1 : 1;
  return push (vm, v);
}

static int
build_seq (Vm *vm, MlPkKind kind, size_t from)
{
  MlPkValue *t = new_value (vm->doc, kind);
  if (!t)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  uint32_t depth = 0;
  for (size_t k = from; k < vm->sp; k++)
    {
      if (vm->stack[k]->kind == ML_PK__MARK)
        return fail (vm, "a MARK inside the items");
      if (vm->stack[k]->depth + 1u > depth)
        depth = vm->stack[k]->depth + 1u;
      if (push_item (vm->doc, t, vm->stack[k]) < 0)
        return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
    }
  if (depth > ML_PK_MAX_DEPTH)
    return fail (vm, "containers nested deeper than " "256");
  t->depth = (uint16_t) depth;
  vm->sp = from;
  return push (vm, t);
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
  for (size_t k = from; k < vm->sp; k++)
    {
      MlPkValue *it = vm->stack[k];
      if (it->kind == ML_PK__MARK)
        return fail (vm, "a MARK inside the items");
      if (it == c)
        return fail (vm, "a container inside itself");
      if (it->depth + 1 > ML_PK_MAX_DEPTH)
        return fail (vm, "containers nested deeper than 256");
      if (it->depth + 1 > c->depth)
        c->depth = (uint16_t) (it->depth + 1);
      if (push_item (vm->doc, c, it) < 0)
        return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
    }
  vm->sp = from;
  return 0;
}

static int
run (Vm *vm)
{
  while (vm->p < vm->end)
    {
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
          vm->doc->root = vm->stack[0];
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
        case '}': rc = push (vm, new_value (vm->doc, ML_PK_DICT)); break;
        case ']': rc = push (vm, new_value (vm->doc, ML_PK_LIST)); break;
        case ')': rc = push (vm, new_value (vm->doc, ML_PK_TUPLE)); break;
        case 'N': rc = push (vm, new_value (vm->doc, ML_PK_NONE)); break;
        case 0x88: /* NEWTRUE */
        case 0x89: /* NEWFALSE */
          v = new_value (vm->doc, ML_PK_BOOL);
          if (v)
            v->i = vm->op == 0x88;
          rc = push (vm, v);
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
            v = new_value (vm->doc, ML_PK_FLOAT);
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
          if ((rc = need (vm, 1)) < 0)
            return rc;
          rc = memo_get (vm, *vm->p++);
          break;
        case 'j': /* LONG_BINGET */
          if ((rc = need (vm, 4)) < 0)
            return rc;
          rc = memo_get (vm, rd_le (vm->p, 4));
          vm->p += 4;
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
ml_pk_parse (const unsigned char *data, size_t len, MlPkDoc **out, MlError *err)
{
  MlPkDoc *doc = calloc (1, sizeof *doc);
  if (!doc)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  Vm vm = { .p = data, .end = data + len, .base = data, .doc = doc, .err = err };
  ml_u64map_init (&vm.sparse);
  int rc = len ? run (&vm) : ml_error_set (err, ML_EINPUT, "empty pickle");
  free (vm.stack);
  free (vm.marks);
  free (vm.memo);
  free (vm.sparse_vals);
  ml_u64map_clear (&vm.sparse);
  if (rc < 0)
    {
      ml_pk_free (doc);
      return rc;
    }
  *out = doc;
  return 0;
}

MlPkValue *
ml_pk_get (const MlPkValue *d, const char *key)
{
  if (!d || d->kind != ML_PK_DICT)
    return NULL;
  size_t klen = strlen (key);
  for (size_t k = 0; k + 1 < d->n; k += 2)
    {
      const MlPkValue *kv = d->items[k];
      if (kv->len == klen && kv->kind == ML_PK_STR && kv->s[0] == key[0] && memcmp (kv->s, key, klen) == 0)
        return d->items[k + 1];
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

const char *
ml_pk_get_str (const MlPkValue *d, const char *key)
{
  const MlPkValue *v = ml_pk_get (d, key);
  return v && v->kind == ML_PK_STR ? v->s : NULL;
}
