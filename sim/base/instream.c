#include "sim/base/instream.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct MlInStream {
  gzFile      gz;
  const char *path;
  uint64_t    packed;     /* a regular file's size, else 0 */
  uint64_t    limit;      /* text bytes at most */
  uint64_t    read;       /* text bytes so far */
};

MlInStream *
ml_in_open (const char *path, uint64_t max_text, MlError *err)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      ml_error_errno (err, errno, path, "cannot open");
      return NULL;
    }
  MlInStream *in = calloc (1, sizeof *in);
  if (!in)
    {
      close (fd);
      ml_error_set (err, ML_ENOMEM, "%s: out of memory", path);
      return NULL;
    }
  in->path = path;
  in->limit = max_text;
  struct stat st;
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode))
    {
      unsigned char magic[2] = { 0 };
      bool gzip = pread (fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
      in->packed = (uint64_t) st.st_size;
      if (!gzip && in->packed > max_text)
        {
          close (fd);
          free (in);
          ml_error_set (err, ML_EINPUT, "%s: %" PRIu64 " bytes, larger than the limit of %" PRIu64 " bytes", path, (uint64_t) st.st_size,
                        max_text);
          return NULL;
        }
      if (gzip)
        {
          uint64_t most = in->packed > max_text / 256 ? max_text : in->packed * 256;
          in->limit = most < ((uint64_t) 64 << 20) ? (uint64_t) 64 << 20 : most;
        }
    }
  errno = 0;   /* zlib leaves it 0 when its own allocation fails */
  if (!(in->gz = gzdopen (fd, "rb")))
    {
      int e = errno;
      close (fd);
      free (in);
      ml_error_errno (err, e, path, "cannot open");
      return NULL;
    }
  gzbuffer (in->gz, 1 << 17);
  return in;
}

long
ml_in_read (MlInStream *in, void *buf, size_t cap, MlError *err)
{
  if (cap > (1u << 30))
    cap = 1u << 30;
  int got = gzread (in->gz, buf, (unsigned) cap);
  if (got < 0)
    {
      int zerr;
      const char *msg = gzerror (in->gz, &zerr);
      return ml_error_set (err, zerr == Z_MEM_ERROR ? ML_ENOMEM : ML_EINPUT, "%s: cannot decompress: %s", in->path,
                           msg ? msg : "gzip error");
    }
  if (got == 0 && !gzeof (in->gz))
    return ml_error_set (err, ML_EINPUT, "%s: truncated gzip stream", in->path);
  in->read += (uint64_t) got;
  if (in->read > in->limit)
    {
      if (in->packed && !gzdirect (in->gz))
        return ml_error_set (err, ML_EINPUT, "%s: %" PRIu64 " compressed bytes inflate past %" PRIu64 " bytes, more than such a "
                             "file can justify", in->path, in->packed, in->limit);
      return ml_error_set (err, ML_EINPUT, "%s: more than the limit of %" PRIu64 " bytes", in->path, in->limit);
    }
  return got;
}

double
ml_in_fraction (const MlInStream *in)
{
  if (!in->packed)
    return 0;
  double f = (double) (gzdirect (in->gz) ? in->read : (uint64_t) gzoffset (in->gz)) / (double) in->packed;
  return f > 1 ? 1 : f;
}

uint64_t
ml_in_count (const MlInStream *in)
{
  return in->read;
}

void
ml_in_close (MlInStream *in)
{
  if (!in)
    return;
  gzclose (in->gz);
  free (in);
}
