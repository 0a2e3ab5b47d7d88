/* io.h — reading lines with their numbers, and writing files atomically.
 *
 * ml_out_open() writes to a temporary file beside the destination; only
 * ml_out_commit() renames it into place, so an error or an interruption
 * never leaves a half-written file that looks complete. The temporary
 * paths of open outputs are kept in a list that ml_out_unlink_all() (async
 * signal safe) removes, for the CLI's SIGINT / SIGTERM handler.
 */
#ifndef ML_IO_H
#define ML_IO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/base/error.h"

typedef struct MlOut MlOut;

/* Opens a temporary file for @path; "-" writes to stdout directly. */
MlOut *ml_out_open   (const char *path, MlError *err);
FILE  *ml_out_file   (MlOut *out);
/* The temporary file's path (NULL for standard output): for a writer
 * that opens the file by name (SQLite); ml_out_commit renames it. */
const char *ml_out_tmp_path (const MlOut *out);
/* Flushes, checks for write errors, renames into place; frees @out. */
int    ml_out_commit (MlOut *out, MlError *err) ML_MUST_CHECK;
/* Removes the temporary file; frees @out. NULL does nothing. */
void   ml_out_abort  (MlOut *out);
/* Marks @path as an input of this process: ml_out_open() then refuses
 * to write over the same file (same device and inode, by any name), so
 * "plan g.json -o g.json" cannot replace its input. For the CLI, whose
 * process is one command; a library caller that rewrites a file it read
 * does not call it. */
void   ml_out_protect (const char *path);
/* Removes every open temporary file (for signal handlers). */
void   ml_out_unlink_all (void);

/* The longest line a line reader takes (JSONL, CSV): 64 MiB. No line of
 * a trace comes near it; a longer one is a file without newlines
 * (/dev/zero, a binary file), refused when it gets there instead of
 * growing until the kernel kills the process. */
#define ML_LINE_MAX ((size_t) 64 << 20)
/* The largest input a reader takes: 64 GiB. A regular file larger is
 * refused from its size before reading; a stream (a pipe, a FIFO, a
 * device) is counted against it as it is read. */
#define ML_INPUT_MAX ((uint64_t) 1 << 36)

/* Streams lines; memory is the longest line (at most ML_LINE_MAX), not
 * the file. A line holds no NUL byte (an error naming its column). */
typedef struct {
  FILE   *fp;
  char   *line;
  size_t  cap;
  size_t  len;      /* of the current line, without the newline */
  long    lineno;   /* 1-based number of the current line */
  bool    own;
  bool    missing_newline;  /* the last line had no '\n' (truncated file?) */
  long long size;           /* file size in bytes, -1 when unknown */
  unsigned char *buf;       /* read ahead */
  size_t  bpos, blen;
  uint64_t consumed;        /* bytes read from the file */
  uint64_t offset;          /* of the current line in the text (inflated when gzip) */
  uint64_t next_offset;
} MlLineReader;

/* The share of the file read so far, in [0, 1] (0 when unknown). */
double ml_lines_fraction (const MlLineReader *r);

/* Opens @path ("-" = stdin); a regular file over ML_INPUT_MAX is refused.
 * Errors name the file. */
int  ml_lines_open  (MlLineReader *r, const char *path, MlError *err);
/* Returns 1 with a line, 0 at the end, negative on a read error. */
int  ml_lines_next  (MlLineReader *r, MlError *err);
void ml_lines_close (MlLineReader *r);

/* Reads a whole file into a NUL-terminated buffer (caller frees). A
 * regular file larger than @max_bytes is refused from its size before
 * reading; a stream (pipe, FIFO, device) is counted against it as it is
 * read. */
int  ml_read_file   (const char *path, size_t max_bytes, char **data, size_t *len, MlError *err);
/* The same, handing each piece read to @check (offset, bytes) first: a
 * nonzero return (an error, set) stops the read there, so an input that
 * cannot be what the caller reads (zeros where a pickle starts, a NUL
 * byte in JSON text) is refused at once, not read to the limit. */
typedef int (*MlReadCheck) (const unsigned char *piece, size_t len, size_t offset, void *user, MlError *err);
int  ml_read_file_checked (const char *path, size_t max_bytes, MlReadCheck check, void *user, char **data, size_t *len,
                           MlError *err);

/* The file name's extension, lower case, without the dot ("" if none);
 * ".gz" is skipped over ("t.json.gz" -> "json"), *gz says if it was there. */
void ml_path_ext    (const char *path, char *ext, size_t len, bool *gz);

#endif
