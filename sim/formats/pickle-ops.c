/* pickle-ops.c — the pickle machine's opcodes: one handler per opcode in
 * a table indexed by the opcode byte (an opcode without one is refused:
 * no code is ever run), and the loop that runs them. A handler reads its
 * argument bytes after vm->p, returns 0 to go on, OP_STOP at STOP, or a
 * negative error code with the error set. */
#include "sim/formats/pickle-private.h"

#include <inttypes.h>
#include <stdlib.h>
#include <sys/mman.h>

enum { OP_STOP = 1 };

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

/* ---- values from the bytes after an opcode ---- */

int
_ml_pk_push_string (MlPkVm *vm, MlPkKind kind, const unsigned char *s, size_t n)
{
  MlPkValue *v = _ml_pk_new_value (vm, kind);
  if (!v)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  v->s = _ml_pk_arena (v->flags & F_SCRATCH ? &vm->scratch : &vm->doc->arena, n + 1);
  if (!v->s)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory for a %zu byte string", n);
  memcpy (v->s, s, n);
  v->s[n] = 0;
  v->len = n;
  return _ml_pk_push (vm, v);
}

/* A string of the @n bytes after the opcode's argument. */
static int
push_str (MlPkVm *vm, MlPkKind kind, size_t n)
{
  int rc = _ml_pk_need (vm, n);
  if (rc < 0)
    return rc;
  const unsigned char *s = vm->p;
  vm->p += n;
  return _ml_pk_push_string (vm, kind, s, n);
}

int
_ml_pk_push_bool (MlPkVm *vm, bool b)
{
  return _ml_pk_push (vm, &shared_bool[b]);
}

static int
push_int (MlPkVm *vm, int64_t i)
{
  if (i >= 0 && i < 256)
    return _ml_pk_push (vm, &small_ints[i]);
  /* inside a streamed list values are scratch, gone after the item: the
   * cache holds document values only */
  if (_ml_pk_in_stream (vm))
    {
      MlPkValue *v = _ml_pk_new_value (vm, ML_PK_INT);
      if (v)
        v->i = i;
      return _ml_pk_push (vm, v);
    }
  MlPkValue **slot = &vm->ints[((uint64_t) i * 0x9E3779B97F4A7C15ull) >> (64 - INT_CACHE_BITS)];
  if (*slot && (*slot)->i == i)
    return _ml_pk_push (vm, *slot);
  MlPkValue *v = _ml_pk_new_value (vm, ML_PK_INT);
  if (v)
    {
      v->i = i;
      *slot = v;
    }
  return _ml_pk_push (vm, v);
}

int
_ml_pk_push_long_bytes (MlPkVm *vm, const unsigned char *b, size_t n)
{
  MlPkValue *v;
  if (n == 0)
    return push_int (vm, 0);
  bool neg = b[n - 1] & 0x80;
  if (n <= 8)
    {
      uint64_t u = _ml_pk_rd_le (b, n);
      if (neg && n < 8)
        u |= ~(uint64_t) 0 << (8 * n);
      return push_int (vm, (int64_t) u);
    }
  /* longer: int64 when the high bytes are only sign extension */
  bool fits = true;
  for (size_t k = 8; k < n && fits; k++)
    fits = b[k] == (neg ? 0xff : 0x00);
  if (fits && ((b[7] & 0x80) != 0) == neg)
    return push_int (vm, (int64_t) _ml_pk_rd_le (b, 8));
  v = _ml_pk_new_value (vm, ML_PK_BIGINT);
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
      char *text = _ml_pk_arena (&vm->doc->arena, nd + 2);
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
  return _ml_pk_push (vm, v);
}

/* LONG1, LONG4: @n bytes of two's complement, little-endian */
static int
push_long (MlPkVm *vm, size_t n)
{
  int rc = _ml_pk_need (vm, n);
  if (rc < 0)
    return rc;
  const unsigned char *b = vm->p;
  vm->p += n;
  return _ml_pk_push_long_bytes (vm, b, n);
}

/* ---- the opcodes ---- */

static int
op_proto (MlPkVm *vm)
{
  int rc = _ml_pk_need (vm, 1);
  if (rc < 0)
    return rc;
  if (*vm->p > 5)
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: pickle protocol %u is not supported (at most 5)",
                         vm->op_at, *vm->p);
  vm->p++;
  return 0;
}

/* FRAME: an 8-byte length, the frame's bytes follow */
static int
op_frame (MlPkVm *vm)
{
  int rc = _ml_pk_need (vm, 8);
  if (rc < 0)
    return rc;
  size_t n = (size_t) _ml_pk_rd_le (vm->p, 8);
  vm->p += 8;
  if (n > (size_t) (vm->end - vm->p))
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: FRAME of %zu bytes, only %zu left (truncated file?)",
                         vm->op_at, n, (size_t) (vm->end - vm->p));
  return 0;
}

static int
op_stop (MlPkVm *vm)
{
  if (vm->sp != 1 || vm->stack[0]->kind == ML_PK__MARK)
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: STOP with %zu values on the stack (expected 1)",
                         vm->op_at, vm->sp);
  /* a root built above a streamed list (odd, but a valid pickle) moves
   * to the document with what it holds */
  if (!(vm->doc->root = _ml_pk_promote (vm, vm->stack[0])))
    return vm->err ? vm->err->code : ML_ENOMEM;
  return OP_STOP;
}

static int
op_mark (MlPkVm *vm)
{
  if (vm->n_marks == vm->cap_marks)
    {
      if (vm->cap_marks >= MAX_STACK)
        return _ml_pk_fail (vm, "too many marks");
      size_t cap = vm->cap_marks ? vm->cap_marks * 2 : 32;
      size_t *m = realloc (vm->marks, cap * sizeof *m);
      if (!m)
        return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
      vm->marks = m;
      vm->cap_marks = cap;
    }
  vm->marks[vm->n_marks++] = vm->sp;
  return 0;
}

static int
op_empty_dict (MlPkVm *vm)
{
  return _ml_pk_push (vm, _ml_pk_new_value (vm, ML_PK_DICT));
}

static int
op_empty_list (MlPkVm *vm)
{
  MlPkValue *v = _ml_pk_new_value (vm, ML_PK_LIST);
  if (v)
    _ml_pk_mark_stream_list (vm, v);
  return _ml_pk_push (vm, v);
}

static int
op_empty_tuple (MlPkVm *vm)
{
  return _ml_pk_push (vm, _ml_pk_new_value (vm, ML_PK_TUPLE));
}

static int
op_none (MlPkVm *vm)
{
  return _ml_pk_push (vm, &shared_none);
}

/* NEWTRUE, NEWFALSE */
static int
op_bool (MlPkVm *vm)
{
  return _ml_pk_push (vm, &shared_bool[vm->op == 0x88]);
}

static int
op_binint1 (MlPkVm *vm)
{
  int rc = _ml_pk_need (vm, 1);
  return rc < 0 ? rc : push_int (vm, *vm->p++);
}

static int
op_binint2 (MlPkVm *vm)
{
  int rc = _ml_pk_need (vm, 2);
  if (rc < 0)
    return rc;
  rc = push_int (vm, (int64_t) _ml_pk_rd_le (vm->p, 2));
  vm->p += 2;
  return rc;
}

/* BININT: signed 32 bits */
static int
op_binint (MlPkVm *vm)
{
  int rc = _ml_pk_need (vm, 4);
  if (rc < 0)
    return rc;
  rc = push_int (vm, (int32_t) (uint32_t) _ml_pk_rd_le (vm->p, 4));
  vm->p += 4;
  return rc;
}

static int
op_long1 (MlPkVm *vm)
{
  int rc = _ml_pk_need (vm, 1);
  return rc < 0 ? rc : push_long (vm, *vm->p++);
}

static int
op_long4 (MlPkVm *vm)
{
  int rc = _ml_pk_need (vm, 4);
  if (rc < 0)
    return rc;
  int32_t len4 = (int32_t) (uint32_t) _ml_pk_rd_le (vm->p, 4);
  vm->p += 4;
  if (len4 < 0)
    return _ml_pk_fail (vm, "negative LONG4 length");
  return push_long (vm, (size_t) len4);
}

/* BINFLOAT: a big-endian double */
static int
op_binfloat (MlPkVm *vm)
{
  int rc = _ml_pk_need (vm, 8);
  if (rc < 0)
    return rc;
  uint64_t u = 0;
  for (int k = 0; k < 8; k++)
    u = (u << 8) | vm->p[k];
  vm->p += 8;
  double d;
  memcpy (&d, &u, sizeof d);
  MlPkValue *v = _ml_pk_new_value (vm, ML_PK_FLOAT);
  if (v)
    v->f = d;
  return _ml_pk_push (vm, v);
}

/* SHORT_BINUNICODE, SHORT_BINBYTES: a 1-byte length */
static int
op_short_str (MlPkVm *vm)
{
  int rc = _ml_pk_need (vm, 1);
  if (rc < 0)
    return rc;
  size_t n = *vm->p++;
  return push_str (vm, vm->op == 'C' ? ML_PK_BYTES : ML_PK_STR, n);
}

/* BINUNICODE, BINBYTES: a 4-byte length */
static int
op_str4 (MlPkVm *vm)
{
  int rc = _ml_pk_need (vm, 4);
  if (rc < 0)
    return rc;
  size_t n = (size_t) _ml_pk_rd_le (vm->p, 4);
  vm->p += 4;
  return push_str (vm, vm->op == 'B' ? ML_PK_BYTES : ML_PK_STR, n);
}

/* BINUNICODE8, BINBYTES8: an 8-byte length */
static int
op_str8 (MlPkVm *vm)
{
  int rc = _ml_pk_need (vm, 8);
  if (rc < 0)
    return rc;
  uint64_t n8 = _ml_pk_rd_le (vm->p, 8);
  vm->p += 8;
  if (n8 > (uint64_t) (vm->end - vm->p))
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: string of %" PRIu64 " bytes, only %zu left",
                         vm->op_at, n8, (size_t) (vm->end - vm->p));
  return push_str (vm, vm->op == 0x8e ? ML_PK_BYTES : ML_PK_STR, (size_t) n8);
}

static int
op_memoize (MlPkVm *vm)
{
  return _ml_pk_memo_put (vm, vm->n_memo, _ml_pk_top (vm));
}

static int
op_binput (MlPkVm *vm)
{
  int rc = _ml_pk_need (vm, 1);
  return rc < 0 ? rc : _ml_pk_memo_put (vm, *vm->p++, _ml_pk_top (vm));
}

static int
op_long_binput (MlPkVm *vm)
{
  int rc = _ml_pk_need (vm, 4);
  if (rc < 0)
    return rc;
  rc = _ml_pk_memo_put (vm, _ml_pk_rd_le (vm->p, 4), _ml_pk_top (vm));
  vm->p += 4;
  return rc;
}

/* BINGET, LONG_BINGET: a run of them (the items of a frames list) in one
 * go, the machine's state in locals; the slow cases (a sparse or streamed
 * index, a full stack, a truncated file) through _ml_pk_memo_get */
static int
op_binget (MlPkVm *vm)
{
  const unsigned char *p = vm->p, *end = vm->end, *opp = vm->p - 1;
  MlPkValue **memo = vm->memo, **stack = vm->stack;
  size_t n_memo = vm->n_memo, sp = vm->sp, cap = vm->cap;
  unsigned op = vm->op;
  int rc;
  for (;;)
    {
      size_t w = op == 'h' ? 1 : 4;
      if ((size_t) (end - p) < w)
        {
          vm->p = p, vm->sp = sp, vm->op = op, vm->op_at = (size_t) (opp - vm->base);
          return _ml_pk_need (vm, w);
        }
      uint64_t idx = w == 1 ? *p : _ml_pk_rd_le (p, 4);
      MlPkValue *mv;
      if (idx < n_memo && (mv = memo[idx]) != &_ml_pk_streamed && !_ml_pk_enc_p (mv) && sp < cap)
        stack[sp++] = mv;
      else
        {
          vm->p = p, vm->sp = sp, vm->op = op, vm->op_at = (size_t) (opp - vm->base);
          if ((rc = _ml_pk_memo_get (vm, idx)) < 0)
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
  return 0;
}

/* TUPLE1, TUPLE2, TUPLE3 */
static int
op_tuple_n (MlPkVm *vm)
{
  size_t n = vm->op - 0x84u;
  if (vm->sp < n || (vm->n_marks && vm->marks[vm->n_marks - 1] > vm->sp - n))
    return _ml_pk_fail (vm, "not enough values for the tuple");
  return _ml_pk_build_seq (vm, ML_PK_TUPLE, vm->sp - n);
}

/* TUPLE, LIST: the values above the topmost mark. A LIST of none is an
 * empty list as EMPTY_LIST makes it (protocol 0 writes MARK LIST, then
 * APPEND each item): a device trace streams the same way. */
static int
op_seq (MlPkVm *vm)
{
  size_t from;
  int rc = _ml_pk_pop_mark (vm, &from);
  if (rc < 0)
    return rc;
  if (vm->op == 'l' && from == vm->sp)
    return op_empty_list (vm);
  return _ml_pk_build_seq (vm, vm->op == 't' ? ML_PK_TUPLE : ML_PK_LIST, from);
}

static int
op_append (MlPkVm *vm)
{
  if (vm->sp < 2 || (vm->n_marks && vm->marks[vm->n_marks - 1] > vm->sp - 1))
    return _ml_pk_fail (vm, "APPEND needs a list and a value");
  return _ml_pk_add_items (vm, vm->sp - 1, false);
}

static int
op_setitem (MlPkVm *vm)
{
  if (vm->sp < 3 || (vm->n_marks && vm->marks[vm->n_marks - 1] > vm->sp - 2))
    return _ml_pk_fail (vm, "SETITEM needs a dict, a key and a value");
  return _ml_pk_add_items (vm, vm->sp - 2, true);
}

/* APPENDS, SETITEMS: the values above the topmost mark */
static int
op_add_marked (MlPkVm *vm)
{
  size_t from;
  int rc = _ml_pk_pop_mark (vm, &from);
  return rc < 0 ? rc : _ml_pk_add_items (vm, from, vm->op == 'u');
}

static int
op_pop (MlPkVm *vm)
{
  if (vm->n_marks && vm->marks[vm->n_marks - 1] == vm->sp)
    vm->n_marks--;   /* POP of a mark */
  else if (!vm->sp)
    return _ml_pk_fail (vm, "POP of an empty stack");
  else
    vm->sp--;
  return 0;
}

static int
op_pop_mark (MlPkVm *vm)
{
  size_t from;
  int rc = _ml_pk_pop_mark (vm, &from);
  if (rc < 0)
    return rc;
  vm->sp = from;
  return 0;
}

static int
op_dup (MlPkVm *vm)
{
  if (!vm->sp)
    return _ml_pk_fail (vm, "DUP of an empty stack");
  return _ml_pk_push (vm, _ml_pk_top (vm));
}

/* The opcodes memlens reads (pickle.h lists them); every other byte is
 * refused: GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, PERSID ... would run
 * code or make objects. */
static int (*const ops[256]) (MlPkVm *vm) = {
  [0x80] = op_proto,        /* PROTO */
  [0x95] = op_frame,        /* FRAME */
  ['.']  = op_stop,         /* STOP */
  ['(']  = op_mark,         /* MARK */
  ['}']  = op_empty_dict,   /* EMPTY_DICT */
  [']']  = op_empty_list,   /* EMPTY_LIST */
  [')']  = op_empty_tuple,  /* EMPTY_TUPLE */
  ['N']  = op_none,         /* NONE */
  [0x88] = op_bool,         /* NEWTRUE */
  [0x89] = op_bool,         /* NEWFALSE */
  ['K']  = op_binint1,      /* BININT1 */
  ['M']  = op_binint2,      /* BININT2 */
  ['J']  = op_binint,       /* BININT */
  [0x8a] = op_long1,        /* LONG1 */
  [0x8b] = op_long4,        /* LONG4 */
  ['G']  = op_binfloat,     /* BINFLOAT */
  [0x8c] = op_short_str,    /* SHORT_BINUNICODE */
  ['C']  = op_short_str,    /* SHORT_BINBYTES */
  ['X']  = op_str4,         /* BINUNICODE */
  ['B']  = op_str4,         /* BINBYTES */
  [0x8d] = op_str8,         /* BINUNICODE8 */
  [0x8e] = op_str8,         /* BINBYTES8 */
  [0x94] = op_memoize,      /* MEMOIZE */
  ['q']  = op_binput,       /* BINPUT */
  ['r']  = op_long_binput,  /* LONG_BINPUT */
  ['h']  = op_binget,       /* BINGET */
  ['j']  = op_binget,       /* LONG_BINGET */
  [0x85] = op_tuple_n,      /* TUPLE1 */
  [0x86] = op_tuple_n,      /* TUPLE2 */
  [0x87] = op_tuple_n,      /* TUPLE3 */
  ['t']  = op_seq,          /* TUPLE */
  ['l']  = op_seq,          /* LIST */
  ['a']  = op_append,       /* APPEND */
  ['e']  = op_add_marked,   /* APPENDS */
  ['s']  = op_setitem,      /* SETITEM */
  ['u']  = op_add_marked,   /* SETITEMS */
  ['0']  = op_pop,          /* POP */
  ['1']  = op_pop_mark,     /* POP_MARK */
  ['2']  = op_dup,          /* DUP */
  /* protocols 0 and 1 (pickle-text.c) */
  ['I']  = _ml_pk_op_int,    /* INT (and the bools "01", "00") */
  ['L']  = _ml_pk_op_long,   /* LONG */
  ['F']  = _ml_pk_op_float,  /* FLOAT */
  ['S']  = _ml_pk_op_string, /* STRING */
  ['T']  = _ml_pk_op_binstring,   /* BINSTRING */
  ['U']  = _ml_pk_op_binstring,   /* SHORT_BINSTRING */
  ['V']  = _ml_pk_op_unicode,     /* UNICODE */
  ['p']  = _ml_pk_op_put,    /* PUT */
  ['g']  = _ml_pk_op_get,    /* GET */
  ['d']  = _ml_pk_op_dict,   /* DICT */
};

/* ---- the loop ---- */

bool
ml_pk_is_opcode (unsigned char op)
{
  return ops[op] != NULL;
}

#define REPORT_BYTES ((size_t) 4 << 20)

/* Every 4 MiB: progress, cancellation, and the input behind the reader
 * given back when it is a file mapping. */
static int
checkpoint (MlPkVm *vm)
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

int
_ml_pk_run (MlPkVm *vm)
{
  vm->dropped = vm->base;
  vm->next_report = vm->base;
  while (vm->p < vm->end)
    {
      int rc;
      if (vm->p >= vm->next_report && (rc = checkpoint (vm)) < 0)
        return rc;
      vm->op_at = (size_t) (vm->p - vm->base);
      vm->op = *vm->p++;
      if (!ops[vm->op])
        return ml_error_set (vm->err, ML_EINPUT,
                             "byte %zu: opcode 0x%02x is not supported (memlens reads data-only pickles: "
                             "dicts, lists, tuples, strings, numbers)", vm->op_at, vm->op);
      if ((rc = ops[vm->op] (vm)) != 0)
        return rc == OP_STOP ? 0 : rc;
    }
  return ml_error_set (vm->err, ML_EINPUT, "byte %zu: the pickle ends without STOP (truncated file?)",
                       (size_t) (vm->end - vm->base));
}
