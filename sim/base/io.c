#include "sim/base/io.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <ctype.h>
#include <fcntl.h>
#include <sys/stat.h>

struct MlOut {
  FILE *fp;
  char *path;
  char  tmp[PATH_MAX];
  bool  is_stdout;
  int   slot;
};

/* Temporary paths of open outputs, for the signal handler. */
#define MAX_OPEN 32
static char open_tmp[MAX_OPEN][PATH_MAX];
static volatile sig_atomic_t open_used[MAX_OPEN];

/* Holds off SIGINT / SIGTERM / SIGHUP while the list of temporary paths
 * and the file system disagree: a handler running between mkstemp() and
 * the registration would leave the new temporary file behind. */
static void
block_signals (sigset_t *old)
{
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGHUP);
  sigprocmask (SIG_BLOCK, &set, old);
}

/* The inputs (ml_out_protect), by device and inode. */
#define MAX_INPUTS 16
static struct { dev_t dev; ino_t ino; } inputs[MAX_INPUTS];
static int n_inputs;

void
ml_out_protect (const char *path)
{
  struct stat sb;
  if (n_inputs < MAX_INPUTS && strcmp (path, "-") != 0 && stat (path, &sb) == 0)
    {
      for (int i = 0; i < n_inputs; i++)
        if (inputs[i].dev == sb.st_dev && inputs[i].ino == sb.st_ino)
          return;
      inputs[n_inputs].dev = sb.st_dev;
      inputs[n_inputs++].ino = sb.st_ino;
    }
}

MlOut *
ml_out_open (const char *path, MlError *err)
{
  struct stat sb;
  if (strcmp (path, "-") != 0 && stat (path, &sb) == 0)
    for (int i = 0; i < n_inputs; i++)
      if (inputs[i].dev == sb.st_dev && inputs[i].ino == sb.st_ino)
        {
          ml_error_set (err, ML_EINPUT, "%s: this is an input of the command; refusing to replace it (write the output elsewhere)",
                        path);
          return NULL;
        }
  MlOut *out = calloc (1, sizeof *out);
  if (!out)
    {
      ml_error_set (err, ML_ENOMEM, "out of memory");
      return NULL;
    }
  out->slot = -1;
  if (strcmp (path, "-") == 0)
    {
      out->fp = stdout;
      out->is_stdout = true;
      return out;
    }
  out->path = strdup (path);
  if (!out->path || snprintf (out->tmp, sizeof out->tmp, "%s.tmp-XXXXXX", path) >= (int) sizeof out->tmp)
    {
      free (out->path);
      free (out);
      ml_error_set (err, ML_EIO, "%s: path too long", path);
      return NULL;
    }
  sigset_t old;
  block_signals (&old);
  int fd = mkstemp (out->tmp);
  if (fd < 0)
    {
      sigprocmask (SIG_SETMASK, &old, NULL);
      ml_error_set (err, ML_EIO, "%s: cannot create: %s", path, strerror (errno));
      free (out->path);
      free (out);
      return NULL;
    }
  {
    mode_t mask = umask (0);
    umask (mask);
    fchmod (fd, 0666 & ~mask);
  }
  out->fp = fdopen (fd, "w");
  if (!out->fp)
    {
      close (fd);
      unlink (out->tmp);
      sigprocmask (SIG_SETMASK, &old, NULL);
      ml_error_set (err, ML_EIO, "%s: %s", path, strerror (errno));
      free (out->path);
      free (out);
      return NULL;
    }
  for (int i = 0; i < MAX_OPEN; i++)
    if (!open_used[i])
      {
        memcpy (open_tmp[i], out->tmp, sizeof out->tmp);
        open_used[i] = 1;
        out->slot = i;
        break;
      }
  sigprocmask (SIG_SETMASK, &old, NULL);
  return out;
}

FILE *
ml_out_file (MlOut *out)
{
  return out->fp;
}

static void
forget (MlOut *out)
{
  if (out->slot >= 0)
    open_used[out->slot] = 0;
  free (out->path);
  free (out);
}

int
ml_out_commit (MlOut *out, MlError *err)
{
  if (out->is_stdout)
    {
      int bad = fflush (stdout) != 0 || ferror (stdout);
      forget (out);
      return bad ? ml_error_set (err, ML_EIO, "stdout: write error") : 0;
    }
  int bad = ferror (out->fp);
  if (fflush (out->fp) != 0)
    bad = 1;
  if (!bad && fsync (fileno (out->fp)) != 0 && errno != EINVAL)
    bad = 1;
  int saved = errno;
  if (fclose (out->fp) != 0)
    bad = 1;
  if (bad)
    {
      unlink (out->tmp);
      ml_error_set (err, ML_EIO, "%s: write failed: %s", out->path, strerror (saved ? saved : EIO));
      forget (out);
      return ML_EIO;
    }
  if (rename (out->tmp, out->path) != 0)
    {
      ml_error_set (err, ML_EIO, "%s: cannot rename into place: %s", out->path, strerror (errno));
      unlink (out->tmp);
      forget (out);
      return ML_EIO;
    }
  forget (out);
  return 0;
}

void
ml_out_abort (MlOut *out)
{
  if (!out)
    return;
  if (!out->is_stdout)
    {
      fclose (out->fp);
      unlink (out->tmp);
    }
  forget (out);
}

void
ml_out_unlink_all (void)
{
  for (int i = 0; i < MAX_OPEN; i++)
    if (open_used[i])
      unlink (open_tmp[i]);
}

int
ml_lines_open (MlLineReader *r, const char *path, MlError *err)
{
  memset (r, 0, sizeof *r);
  r->size = -1;
  if (strcmp (path, "-") == 0)
    {
      r->fp = stdin;
      return 0;
    }
  r->fp = fopen (path, "r");
  if (!r->fp)
    return ml_error_set (err, errno == ENOENT ? ML_EINPUT : ML_EIO, "%s: cannot open: %s", path, strerror (errno));
  struct stat st;
  if (fstat (fileno (r->fp), &st) == 0 && S_ISDIR (st.st_mode))
    {
      fclose (r->fp);
      r->fp = NULL;
      return ml_error_set (err, ML_EINPUT, "%s: is a directory", path);
    }
  r->own = true;
  r->size = S_ISREG (st.st_mode) ? (long long) st.st_size : -1;
  return 0;
}

double
ml_lines_fraction (const MlLineReader *r)
{
  if (!r->fp || r->size <= 0)
    return 0;
  long pos = ftell (r->fp);
  return pos > 0 ? (double) pos / (double) r->size : 0;
}

int
ml_lines_next (MlLineReader *r, MlError *err)
{
  errno = 0;
  ssize_t n = getline (&r->line, &r->cap, r->fp);
  if (n < 0)
    {
      /* glibc's getline returns -1 without setting the error flag when it
       * cannot grow the line: that is no end of file */
      if (errno == ENOMEM)
        return ml_error_set (err, ML_ENOMEM, "line %ld: out of memory", r->lineno + 1);
      if (ferror (r->fp))
        return ml_error_set (err, ML_EIO, "line %ld: read error: %s", r->lineno + 1, strerror (errno));
      return 0;
    }
  r->lineno++;
  r->missing_newline = n == 0 || r->line[n - 1] != '\n';
  if (n > 0 && r->line[n - 1] == '\n')
    n--;
  if (n > 0 && r->line[n - 1] == '\r')
    n--;
  r->line[n] = 0;
  r->len = (size_t) n;
  return 1;
}

void
ml_lines_close (MlLineReader *r)
{
  if (r->own && r->fp)
    fclose (r->fp);
  free (r->line);
  memset (r, 0, sizeof *r);
}

int
ml_read_file (const char *path, size_t max_bytes, char **data, size_t *len, MlError *err)
{
  FILE *fp = strcmp (path, "-") == 0 ? stdin : fopen (path, "rb");
  if (!fp)
    return ml_error_set (err, errno == ENOENT ? ML_EINPUT : ML_EIO, "%s: cannot open: %s", path, strerror (errno));
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc (cap + 1);
  if (!buf)
    {
      if (fp != stdin)
        fclose (fp);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  for (;;)
    {
      if (n == cap)
        {
          if (cap >= max_bytes)
            {
              free (buf);
              if (fp != stdin)
                fclose (fp);
              return ml_error_set (err, ML_EINPUT, "%s: larger than the limit of %zu bytes", path, max_bytes);
            }
          cap = cap * 2 > max_bytes ? max_bytes : cap * 2;
          char *b2 = realloc (buf, cap + 1);
          if (!b2)
            {
              free (buf);
              if (fp != stdin)
                fclose (fp);
              return ml_error_set (err, ML_ENOMEM, "out of memory");
            }
          buf = b2;
        }
      size_t got = fread (buf + n, 1, cap - n, fp);
      n += got;
      if (got == 0)
        break;
    }
  int bad = ferror (fp);
  if (fp != stdin)
    fclose (fp);
  if (bad)
    {
      free (buf);
      return ml_error_set (err, ML_EIO, "%s: read error", path);
    }
  buf[n] = 0;
  *data = buf;
  *len = n;
  return 0;
}

void
ml_path_ext (const char *path, char *ext, size_t len, bool *gz)
{
  const char *base = strrchr (path, '/');
  base = base ? base + 1 : path;
  size_t n = strlen (base);
  bool is_gz = n > 3 && strcasecmp (base + n - 3, ".gz") == 0;
  if (is_gz)
    n -= 3;
  if (gz)
    *gz = is_gz;
  const char *dot = NULL;
  for (size_t i = 0; i < n; i++)
    if (base[i] == '.')
      dot = base + i;
  size_t k = 0;
  if (dot && dot != base)
    for (const char *p = dot + 1; p < base + n && k + 1 < len; p++)
      ext[k++] = (char) tolower ((unsigned char) *p);
  ext[k] = 0;
}
