/* pickle-private.h — what the files of the pickle reader share (not public).
 *
 *   pickle.c         the document: its arena, parse, free
 *   pickle-vm.c      the machine's state: values, the stack and its marks,
 *                    the memo, containers and their items, the scratch
 *                    of a streamed list and what moves to the document
 *   pickle-ops.c     the opcodes: one handler each in a table indexed by
 *                    the opcode byte, and the loop that runs them
 *   pickle-text.c    the opcodes of protocols 0 and 1 (text arguments)
 *   pickle-value.c   reading the values (ml_pk_get, ml_pk_describe, ...)
 */
#ifndef ML_PICKLE_PRIVATE_H
#define ML_PICKLE_PRIVATE_H

#include <string.h>

#include "sim/formats/pickle.h"
#include "sim/base/u64map.h"

/* Every value, string and item array lives in an arena of 1 MiB chunks
 * (bump allocation: the parse is dominated by small allocations
 * otherwise); growing an item array copies it and leaves the old copy,
 * at most doubling what the arrays take, so memory stays O(input). */
typedef struct MlPkChunk {
  struct MlPkChunk *next;
  size_t used, cap;
  max_align_t data[];
} MlPkChunk;

typedef struct {
  MlPkChunk *chunks;   /* the head is the one being filled */
  MlPkChunk *spare;    /* emptied chunks, for the next round */
  size_t chunk;        /* the usual chunk size: CHUNK_BYTES, less for a
                        * small input (no 1 MiB mapping for a 1 KB file) */
} MlPkArena;

struct MlPkDoc {
  MlPkArena  arena;
  MlPkValue *root;
};

/* MlPkValue.flags (the reader's) */
enum {
  F_SCRATCH   = 1,     /* lives in the scratch arena (built inside a streamed list) */
  F_FWD       = 2,     /* scratch, copied to the document: see fwd_get */
  F_DTLIST    = 4,     /* root[key] of a stream: the lists in it are streamed */
  F_STREAMED  = 8,     /* a streamed list: .i its index, .len the items handed so far */
  F_HANDED    = 16,    /* handed to the item callback */
  F_COLLAPSED = 32,    /* kept without its items: the consumer had tagged it */
  F_RETIRE    = 64,    /* a string the consumer read for good (ml_pk_retire) */
};

/* A memo slot may hold, instead of a pointer, what a value the consumer
 * has read for good was: its tag and kind, in a word with the low bit
 * set (values are 16-aligned). A reference to it makes a value of that
 * kind and tag, without items or text, where the machine builds values:
 * a value per distinct object the memo kept would be 64 bytes each, and
 * a snapshot's frames are millions of memo objects. */
static inline bool
_ml_pk_enc_p (const MlPkValue *v)
{
  return ((uintptr_t) v & 1) != 0;
}

/* ---- the machine ---- */

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
  MlPkArena   scratch;             /* values built above the streamed list */
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
  /* containers kept without their items (F_COLLAPSED), one per kind and
   * tag: the consumer tells them by the tag alone, so every memo object
   * it tagged alike (the frames lists of one stack, the empty lists of
   * entries recorded without stacks) is one 64-byte value, not one each */
  MlU64Map    collapsed;           /* kind << 32 | tag -> index in collapsed_vals */
  MlPkValue **collapsed_vals;
  size_t      n_collapsed, cap_collapsed;
} MlPkVm;

/* Values built while a streamed list is on the stack with something
 * above it are scratch: they go once its items have been handed over,
 * except what the memo still holds (copied to the document then). */
static inline bool
_ml_pk_in_stream (const MlPkVm *vm)
{
  return vm->slist && vm->sp > vm->spos && vm->stack[vm->spos] == vm->slist;
}

#define MAX_STACK ((size_t) 1 << 24)

/* ---- pickle.c ---- */

/* @n bytes (16-aligned) from @a; NULL when out of memory. */
void *_ml_pk_arena       (MlPkArena *a, size_t n);
/* Empties @a, keeping its chunks of the usual size for the next round. */
void  _ml_pk_arena_reset (MlPkArena *a);

/* ---- pickle-vm.c ---- */

/* What the memo holds for a streamed item once it is gone. */
extern MlPkValue _ml_pk_streamed;

/* A new value of @kind, in the scratch inside a streamed list, else in
 * the document; NULL when out of memory. */
MlPkValue *_ml_pk_new_value (MlPkVm *vm, MlPkKind kind);
/* @v in the document (a copy of a scratch value, made once); NULL with
 * the error set. */
MlPkValue *_ml_pk_promote (MlPkVm *vm, MlPkValue *v);
/* The error "byte N: opcode 0xXX: @what". */
int  _ml_pk_fail (MlPkVm *vm, const char *what);
/* The error for an opcode that needs @n bytes where fewer are left. */
int  _ml_pk_truncated (MlPkVm *vm, size_t n);
/* Pushes @v (NULL: out of memory) when the stack is full. */
int  _ml_pk_push_grow (MlPkVm *vm, MlPkValue *v);
/* The height of the topmost mark, taken off, or an error. */
int  _ml_pk_pop_mark (MlPkVm *vm, size_t *height);
/* Memo slot @idx := @v; pushes memo slot @idx. */
int  _ml_pk_memo_put (MlPkVm *vm, uint64_t idx, MlPkValue *v);
int  _ml_pk_memo_get (MlPkVm *vm, uint64_t idx);
/* A new empty list: is it root[key] of the stream, or a list inside it? */
void _ml_pk_mark_stream_list (MlPkVm *vm, MlPkValue *l);
/* Replaces stack[from .. sp) by a @kind (list, tuple, or dict of key,
 * value pairs) of them. */
int  _ml_pk_build_seq (MlPkVm *vm, MlPkKind kind, size_t from);
/* Adds stack[from .. sp) to the container below them (@dict: as
 * key, value pairs); a streamed list hands them to the consumer. */
int  _ml_pk_add_items (MlPkVm *vm, size_t from, bool dict);

/* @n bytes left after the opcode, or the error naming it. */
static inline int
_ml_pk_need (MlPkVm *vm, size_t n)
{
  return (size_t) (vm->end - vm->p) < n ? _ml_pk_truncated (vm, n) : 0;
}

static inline uint64_t
_ml_pk_rd_le (const unsigned char *p, size_t n)
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

static inline int
_ml_pk_push (MlPkVm *vm, MlPkValue *v)
{
  if (v && vm->sp < vm->cap)
    {
      vm->stack[vm->sp++] = v;
      return 0;
    }
  return _ml_pk_push_grow (vm, v);
}


static inline MlPkValue *
_ml_pk_top (MlPkVm *vm)
{
  return vm->sp ? vm->stack[vm->sp - 1] : NULL;
}

/* ---- pickle-ops.c ---- */

/* Runs the opcodes from vm->p to STOP (the root in vm->doc). */
int _ml_pk_run (MlPkVm *vm);
/* Pushes a string (ML_PK_STR or ML_PK_BYTES) of the @n bytes @s, copied. */
int _ml_pk_push_string (MlPkVm *vm, MlPkKind kind, const unsigned char *s, size_t n);
/* Pushes True or False (shared values). */
int _ml_pk_push_bool (MlPkVm *vm, bool b);
/* Pushes the integer of @n bytes of two's complement, little-endian
 * (LONG1's form): an int when it fits 64 bits, else a BIGINT. */
int _ml_pk_push_long_bytes (MlPkVm *vm, const unsigned char *b, size_t n);

/* ---- pickle-text.c: the opcodes of protocols 0 and 1 ---- */

int _ml_pk_op_int       (MlPkVm *vm);
int _ml_pk_op_long      (MlPkVm *vm);
int _ml_pk_op_float     (MlPkVm *vm);
int _ml_pk_op_string    (MlPkVm *vm);
int _ml_pk_op_binstring (MlPkVm *vm);
int _ml_pk_op_unicode   (MlPkVm *vm);
int _ml_pk_op_put       (MlPkVm *vm);
int _ml_pk_op_get       (MlPkVm *vm);
int _ml_pk_op_dict      (MlPkVm *vm);

#endif
