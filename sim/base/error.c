#include "sim/base/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int
ml_error_set (MlError *err, int code, const char *fmt, ...)
{
  if (err)
    {
      va_list ap;
      va_start (ap, fmt);
      vsnprintf (err->msg, sizeof err->msg, fmt, ap);
      va_end (ap);
      err->code = code;
    }
  return code;
}

int
ml_error_prefix (MlError *err, const char *fmt, ...)
{
  if (!err)
    return ML_EINPUT;
  char prefix[sizeof err->msg], old[sizeof err->msg];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (prefix, sizeof prefix, fmt, ap);
  va_end (ap);
  memcpy (old, err->msg, sizeof old);
  snprintf (err->msg, sizeof err->msg, "%s: %s", prefix, old);
  return err->code;
}

int
ml_error_errno (MlError *err, int errnum, const char *path, const char *what)
{
  if (errnum == ENOMEM || errnum == 0)
    return ml_error_set (err, ML_ENOMEM, "%s: out of memory", path);
  return ml_error_set (err, errnum == ENOENT ? ML_EINPUT : ML_EIO, "%s: %s: %s", path, what, strerror (errnum));
}

const char *
ml_error_code_name (int code)
{
  switch (code)
    {
    case ML_OK: return "ok";
    case ML_EINPUT: return "bad input";
    case ML_ENOMEM: return "out of memory";
    case ML_EIO: return "i/o error";
    case ML_EUSAGE: return "bad usage";
    case ML_EOOM: return "out of device memory";
    case ML_ETIMEOUT: return "time limit";
    case ML_ECANCELLED: return "cancelled";
    case ML_EINFEASIBLE: return "infeasible";
    case ML_EUNSUPPORTED: return "unsupported";
    default: return "error";
    }
}
