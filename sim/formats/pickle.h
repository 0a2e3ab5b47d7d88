/* pickle.h — a small, bounded reader for Python pickles (protocols 0-5).
 *
 * It runs the pickle virtual machine for the data-only opcodes that
 * torch.cuda.memory._dump_snapshot() files use: PROTO, FRAME, MARK,
 * EMPTY_DICT / LIST / TUPLE, SETITEM(S), APPEND(S), MEMOIZE, (LONG_)BINPUT,
 * (LONG_)BINGET, (SHORT_)BINUNICODE(8), (SHORT_)BINBYTES, BININT / 1 / 2,
 * LONG1 / LONG4, BINFLOAT, NEWTRUE / NEWFALSE, NONE, TUPLE / 1 / 2 / 3,
 * POP, POP_MARK, DUP, STOP; and those of protocols 0 and 1, as Python 3
 * reads them: INT (with the bools "01" / "00"), LONG, FLOAT, STRING,
 * UNICODE, BINSTRING, SHORT_BINSTRING (Python 2 strings: ASCII), PUT, GET,
 * DICT. Anything else (GLOBAL, REDUCE, ...) is an error: no code is ever
 * run.
 *
 * Memo references share the value (a stack frame list memoised once and
 * referenced by every trace entry is one MlPkValue), so a consumer may
 * de-duplicate by pointer identity.
 *
 * Bounds: every length is checked against the bytes left in the input
 * before anything is allocated (a length of 2^60 is an error, not an
 * attempt), so memory is O(input size); the VM stack and the nesting depth
 * of containers are limited (ML_PK_MAX_DEPTH); errors name the byte offset,
 * the opcode and the value. Every value, string and item array lives in
 * the document's arena and goes with ml_pk_free().
 */
#ifndef ML_PICKLE_H
#define ML_PICKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/base/error.h"
#include "sim/base/progress.h"

#define ML_PK_MAX_DEPTH 256
#define ML_PK_BIGINT_DIGITS_BYTES 32   /* LONG1 / LONG4 up to this long keep their digits */

typedef enum {
  ML_PK_NONE = 0,
  ML_PK_BOOL,
  ML_PK_INT,      /* fits int64: .i                               */
  ML_PK_BIGINT,   /* longer LONG1 / LONG4: .f approximates, .i sign,
                   * .len the magnitude's bits, .s its decimal text
                   * when it has at most 256 bits (else NULL)        */
  ML_PK_FLOAT,
  ML_PK_STR,      /* UTF-8 as stored, NUL-terminated: .s, .len    */
  ML_PK_BYTES,
  ML_PK_LIST,
  ML_PK_TUPLE,
  ML_PK_DICT,     /* items: key, value, key, value ...            */
  ML_PK__MARK,    /* internal */
} MlPkKind;

typedef struct MlPkValue MlPkValue;
struct MlPkValue {
  MlPkKind kind;
  uint16_t depth;         /* nesting depth when built (<= ML_PK_MAX_DEPTH) */
  uint16_t flags;         /* the reader's */
  uint32_t tag;           /* the consumer's: 0 when built. A consumer may
                           * cache what it derived from a value here (an
                           * interned id, a stack index): a memo-shared
                           * value is one MlPkValue, so that is done once
                           * per memo object, not once per reference. */
  uint32_t n, cap;        /* LIST / TUPLE: n items; DICT: 2n           */
  int64_t  i;
  double   f;
  char    *s;             /* STR / BYTES, owned by the document */
  size_t   len;
  MlPkValue **items;
};

typedef struct MlPkDoc MlPkDoc;

/* Parses @len bytes of @data. On success *doc owns every value; the root
 * is ml_pk_root(). @data is not kept. */
int  ml_pk_parse (const unsigned char *data, size_t len, MlPkDoc **doc, MlError *err);
void ml_pk_free  (MlPkDoc *doc);

/* Streaming, for documents larger than memory should hold (a PyTorch
 * snapshot's device_traces): the items of the lists inside root[@key]
 * (root a dict, root[key] a list of lists) are not kept. Each is handed
 * to @item once built, with the index of its list in root[key] and its
 * own index in that list; the list itself stays in the document, empty.
 * Everything built for the items goes after the call, except what the
 * memo may still be asked for (frames and strings shared with later
 * items): that moves to the document, and a list or dict the consumer
 * has tagged moves without its items (n = 0): it was read already, the
 * tag says what it was. An item itself cannot be referenced later (an
 * error if the pickle does). @item returns < 0 (with its error set) to
 * stop. A tuple in root[key] is read the same way (built whole, its
 * items are handed when it is added to root[key], and it stays empty).
 * Lists of root[key] the pickle builds otherwise (protocol 0/1 LIST) are
 * kept whole: a consumer reads their items from the document.
 * Every 4 MiB of input @progress (may be NULL) is told the share read and
 * polled for cancellation; with @drop_input the input is a read-only
 * file mapping whose pages behind the reader are given back. */
typedef int (*MlPkItemFn) (void *user, size_t list, size_t index, MlPkValue *item);
typedef struct {
  const char *key;
  MlPkItemFn  item;
  void       *user;
  const MlProgress *progress;
  bool        drop_input;
} MlPkStream;

int  ml_pk_parse_stream (const unsigned char *data, size_t len, const MlPkStream *stream, MlPkDoc **doc,
                         MlError *err);
MlPkValue *ml_pk_root (const MlPkDoc *doc);
/* True when @op is an opcode the reader runs (a pickle's first byte is
 * one: anything else is no pickle). */
bool ml_pk_is_opcode (unsigned char op);
/* For a streaming consumer: it has read the string @v for good and set
 * its tag (an interned id). If the memo holds it, the memo keeps only its
 * kind and tag: a later reference to it gives a value with that tag and
 * no text (s = "", len = 0). A container the consumer tags is kept so
 * without this call (it has read its items). */
void ml_pk_retire (MlPkValue *v);

/* Dict lookup by string key (a linear scan comparing lengths, then
 * bytes); of equal keys the last one, as Python keeps it; NULL when absent
 * or @dict is not a dict. */
MlPkValue *ml_pk_get (const MlPkValue *dict, const char *key);
/* Convenience readers: return false when absent or of another type. */
bool ml_pk_get_int (const MlPkValue *dict, const char *key, int64_t *out);
bool ml_pk_get_u64 (const MlPkValue *dict, const char *key, uint64_t *out);
const char *ml_pk_get_str (const MlPkValue *dict, const char *key);
static inline size_t
ml_pk_len (const MlPkValue *v)
{
  return v && (v->kind == ML_PK_LIST || v->kind == ML_PK_TUPLE) ? v->n : 0;
}
const char *ml_pk_kind_name (MlPkKind kind);
/* True when @v lives in the document, not in the scratch of a streamed
 * item: its address then names this same value until ml_pk_free (a
 * consumer may key a cache by it). */
bool ml_pk_in_document (const MlPkValue *v);
/* An unsigned integer field's value @v (from ml_pk_get): true when @v is
 * NULL (absent: *out unchanged) or an int from 0 to @max (*out set);
 * false for anything else (a negative or larger int, a float, a string,
 * None, a bool): the caller reports it with ml_pk_describe(). */
bool ml_pk_uint (const MlPkValue *v, uint64_t max, uint64_t *out);
/* @v as a message shows it: "-5", "18446744073709551616", "an integer
 * of 4001 bits", "the float 1.5", "the string \"abc\"", "None", "a
 * list" ...; returns @buf. */
const char *ml_pk_describe (const MlPkValue *v, char *buf, size_t len);

#endif
