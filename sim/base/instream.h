/* instream.h — reading an input as a stream of bytes, bounded by the input.
 *
 * A plain or gzip file (zlib tells them apart by their bytes), a pipe, a
 * FIFO or a device, read in chunks the caller gives. What it lets through
 * is bounded: a plain regular file by @max_text, checked from fstat before
 * reading; a gzip file by 256 times its size, at least 64 MiB (JSON traces
 * compress 10-30 times: a gzip bomb is stopped when it gets there) and at
 * most @max_text; anything else (a stream whose size is unknown) by
 * @max_text, counted as it is read.
 */
#ifndef ML_INSTREAM_H
#define ML_INSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/base/error.h"

typedef struct MlInStream MlInStream;

/* Opens @path; NULL with the error ("PATH: cannot open: ...", "PATH: N
 * bytes, larger than the limit of M bytes"). Free with ml_in_close. */
MlInStream *ml_in_open (const char *path, uint64_t max_text, MlError *err);
/* Up to @cap bytes into @buf: the count, 0 at the end, or a negative
 * error ("cannot decompress", "truncated gzip stream", the limit). */
long        ml_in_read (MlInStream *in, void *buf, size_t cap, MlError *err);
/* The share of the file read (of its compressed bytes for gzip), in
 * [0, 1]; 0 when its size is unknown. */
double      ml_in_fraction (const MlInStream *in);
/* Bytes of text (inflated) read so far. */
uint64_t    ml_in_count (const MlInStream *in);
void        ml_in_close (MlInStream *in);

#endif
