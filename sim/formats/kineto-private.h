/* kineto-private.h — between the Kineto reader's JSON stream
 * (kineto-stream.c: the document read once, with yajl, keeping only the
 * [memory] events) and its mapping (kineto.c: the device, the order, the
 * trace). Not a public interface.
 */
#ifndef ML_KINETO_PRIVATE_H
#define ML_KINETO_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "sim/formats/load-options.h"

/* JSON text the reader goes through at most (uncompressed): a plain file
 * larger than this is refused from its size before reading, a stream or a
 * gzip file when it gets there. */
#define ML_KIN_MAX_TEXT ((uint64_t) 1 << 36)

/* A [memory] event of a device the mapping may read: 56 bytes. */
typedef struct {
  int64_t  ts_ns;          /* `ts` (µs) in nanoseconds, exact; valid when has_ts */
  uint64_t index;          /* in traceEvents */
  int64_t  bytes;          /* Bytes: < 0 a free */
  uint64_t addr;
  uint64_t total_alloc;    /* UINT64_MAX: not recorded */
  uint64_t total_reserved; /* UINT64_MAX: not recorded */
  uint32_t stream;         /* the Stream arg, 0 when none (tid is a thread) */
  uint16_t dev;            /* slot in MlKinDoc.devs */
  uint8_t  has_ts;
} MlKinMem;

/* A device the [memory] events name: the CPU (Device Type 0, whatever
 * its id), or an accelerator (any other type) by its id. */
typedef struct {
  bool     cpu;
  int64_t  type, id;       /* as written; INT64_MIN: not an integer */
  uint64_t events;         /* its [memory] events */
  uint64_t kept;           /* of them in MlKinDoc.mem */
  char    *bad;            /* the message of its first [memory] event that cannot be read (owned), or NULL */
} MlKinDev;

typedef struct {
  MlKinMem *mem;
  size_t    n_mem, cap_mem;
  MlKinDev *devs;
  size_t    n_devs, cap_devs;
  uint64_t  n_events;      /* traceEvents' length */
  /* deviceProperties: (id, totalGlobalMem) where both are integers */
  struct { int64_t id; uint64_t total; } *props;
  size_t    n_props, cap_props;
  int64_t   rank;          /* distributedInfo.rank; -1: none (or not an integer from 0 to 2^31) */
} MlKinDoc;

/* Reads the document at @path (plain or gzip; "name" in messages) as a
 * stream, keeping the [memory] events of the devices @opts lets the
 * mapping read (opts->device >= 0: that accelerator only; else the CPU
 * and every accelerator 0 .. ML_DEVICE_MAX). Returns 0 with *doc
 * filled (the caller frees it with ml_kin_doc_clear), 1 when the document
 * is a graph (top-level "tensors" or "ops", or "format" "memlens-graph",
 * before any "traceEvents"): then *graph_text holds the whole text
 * (malloc'd, NUL-terminated, *graph_len bytes) for the graph reader; or an
 * error naming the byte offset and the field. */
int  ml_kin_stream (const char *path, const MlLoadOptions *opts, MlKinDoc *doc, char **graph_text, size_t *graph_len,
                    MlError *err);
/* The same over @len bytes of JSON text in memory (no graph dispatch:
 * a graph is refused). */
int  ml_kin_stream_mem (const char *text, size_t len, const char *name, const MlLoadOptions *opts, MlKinDoc *doc,
                        MlError *err);
void ml_kin_doc_clear (MlKinDoc *doc);

#endif
