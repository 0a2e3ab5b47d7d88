/* error.h — error codes and the caller-owned error record.
 *
 * Every fallible function in sim/ and strategies/ returns 0 or a negative
 * ML_E* code and, when the caller passed an MlError, fills in a message
 * that names the value and the limit ("t.csv:812: size -4 is negative").
 * The libraries never print and never exit.
 */
#ifndef ML_ERROR_H
#define ML_ERROR_H

#include <stdarg.h>

enum {
  ML_OK         =  0,
  ML_EINPUT     = -1,  /* malformed or inconsistent input */
  ML_ENOMEM     = -2,  /* out of host memory */
  ML_EIO        = -3,  /* file system error */
  ML_EUSAGE     = -4,  /* a bad argument or knob */
  ML_EOOM       = -5,  /* the simulated allocator ran out of capacity */
  ML_ETIMEOUT   = -6,  /* a time limit ended the search */
  ML_ECANCELLED = -7,  /* the caller cancelled */
  ML_EINFEASIBLE= -8,  /* proven: no plan fits the capacity */
  ML_EUNSUPPORTED = -9 /* a feature this build or input does not support */
};

/* Marks a function whose result must be checked (a failure it reports
 * would otherwise pass silently): the compiler warns where it is dropped. */
#if defined(__GNUC__) || defined(__clang__)
#define ML_MUST_CHECK __attribute__((warn_unused_result))
#else
#define ML_MUST_CHECK
#endif

/* The longest message an MlError (and what is copied from one, MlResult's
 * error) holds: room for a path of PATH_MAX bytes (4096 on Linux) and
 * the text around it, so a long file name never cuts a message's tail. */
#define ML_ERROR_MAX 5120

typedef struct {
  int  code;
  char msg[ML_ERROR_MAX];
} MlError;

/* Formats a message into @err (may be NULL) and returns @code. */
int ml_error_set (MlError *err, int code, const char *fmt, ...)
  __attribute__((format (printf, 3, 4)));

/* Prepends "prefix: " to the message already in @err; returns err->code. */
int ml_error_prefix (MlError *err, const char *fmt, ...)
  __attribute__((format (printf, 2, 3)));

/* Formats the failure of a system call on @path into @err and returns its
 * code: "PATH: out of memory" (ML_ENOMEM) when @errnum is ENOMEM (a
 * failed fopen or gzopen under a small `ulimit -v` is memory, not the
 * file), else "PATH: WHAT: strerror(errnum)" with ML_EINPUT for ENOENT and
 * ML_EIO for the rest. @errnum 0 (zlib's gzopen failing in its own
 * allocation) counts as ENOMEM. */
int ml_error_errno (MlError *err, int errnum, const char *path, const char *what);

const char *ml_error_code_name (int code);

#endif
