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
#include <dirent.h>
#include <stdint.h>
#include <inttypes.h>

struct MlOut {
  FILE *fp;
  char *path;
  char  tmp[PATH_MAX];
  bool  is_stdout;
  int   slot;
};

/* Temporary paths of open outputs, for the signal handler. */
#define ML_LINE_CHUNK ((size_t) 64 << 10)

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

/* The file a write to @path replaces: @path itself, or where its chain
 * of symbolic links ends (which may not exist yet: the write creates
 * it, as a shell's > does). Caller frees; NULL with errno on failure. */
static char *
resolve_links (const char *path)
{
  char *cur = strdup (path);
  for (int hops = 0; cur; hops++)
    {
      struct stat sb;
      if (lstat (cur, &sb) != 0 || !S_ISLNK (sb.st_mode))
        return cur;
      if (hops == 40)
        {
          free (cur);
          errno = ELOOP;
          return NULL;
        }
      char link[PATH_MAX];
      ssize_t n = readlink (cur, link, sizeof link - 1);
      if (n < 0)
        {
          free (cur);
          return NULL;
        }
      link[n] = 0;
      const char *slash = strrchr (cur, '/');
      char *next;
      if (link[0] == '/' || !slash)
        next = strdup (link);
      else
        {
          size_t dir = (size_t) (slash - cur) + 1;
          next = malloc (dir + (size_t) n + 1);
          if (next)
            {
              memcpy (next, cur, dir);
              memcpy (next + dir, link, (size_t) n + 1);
            }
        }
      free (cur);
      cur = next;
    }
  errno = ENOMEM;
  return NULL;
}

static const char *
file_kind (mode_t m)
{
  return S_ISDIR (m) ? "a directory" : S_ISFIFO (m) ? "a FIFO" : S_ISCHR (m) ? "a character device"
         : S_ISBLK (m) ? "a block device" : S_ISSOCK (m) ? "a socket" : "not a regular file";
}

/* The temporary of an output: ".BASE.memlens-tmp-PID-XXXXXX" beside it
 * (BASE cut to 200 bytes so the name fits NAME_MAX). */
#define TMP_TAG ".memlens-tmp-"

static int
tmp_prefix (const char *dest, char *dir, size_t dir_len, char *prefix, size_t prefix_len)
{
  const char *slash = strrchr (dest, '/');
  const char *base = slash ? slash + 1 : dest;
  if (slash)
    {
      size_t n = (size_t) (slash - dest);
      if (n + 2 > dir_len)
        return -1;
      memcpy (dir, dest, n ? n : 1);   /* "/x": the root */
      dir[n ? n : 1] = 0;
    }
  else
    snprintf (dir, dir_len, ".");
  int k = snprintf (prefix, prefix_len, ".%.200s" TMP_TAG, base);
  return k > 0 && (size_t) k < prefix_len ? 0 : -1;
}

/* Removes temporaries of this output left by writers that died (SIGKILL,
 * a crash, a power cut): ".BASE.memlens-tmp-PID-XXXXXX" whose PID no
 * longer runs. Names of any other form, and those of a live process,
 * are left alone. */
static void
clean_stale (const char *dir, const char *prefix)
{
  DIR *d = opendir (dir);
  if (!d)
    return;
  size_t plen = strlen (prefix);
  struct dirent *e;
  while ((e = readdir (d)))
    {
      if (strncmp (e->d_name, prefix, plen) != 0)
        continue;
      const char *p = e->d_name + plen;
      char *end;
      errno = 0;
      long pid = strtol (p, &end, 10);
      if (end == p || *end != '-' || strlen (end + 1) != 6 || errno || pid <= 0 || pid == (long) getpid ())
        continue;
      if (kill ((pid_t) pid, 0) == 0 || errno != ESRCH)
        continue;
      struct stat sb;
      if (fstatat (dirfd (d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (sb.st_mode))
        unlinkat (dirfd (d), e->d_name, 0);
    }
  closedir (d);
}

const char *
ml_out_tmp_path (const MlOut *out)
{
  return out->is_stdout ? NULL : out->tmp;
}

MlOut *
ml_out_open (const char *path, MlError *err)
{
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
  /* a symbolic link is written through: its target is replaced, the
   * link stays */
  out->path = resolve_links (path);
  if (!out->path)
    {
      ml_error_errno (err, errno, path, "cannot follow the symbolic link");
      free (out);
      return NULL;
    }
  const char *dest = out->path;
  struct stat sb;
  bool exists = stat (dest, &sb) == 0;
  const char *refuse = NULL;
  char why[PATH_MAX + 160];
  if (exists)
    {
      for (int i = 0; i < n_inputs && !refuse; i++)
        if (inputs[i].dev == sb.st_dev && inputs[i].ino == sb.st_ino)
          refuse = "this is an input of the command; refusing to replace it (write the output elsewhere)";
      if (!refuse && !S_ISREG (sb.st_mode))
        {
          if (strcmp (dest, path) != 0)
            snprintf (why, sizeof why, "the symbolic link's target %s is %s; memlens writes regular files only "
                      "(or - for standard output)", dest, file_kind (sb.st_mode));
          else
            snprintf (why, sizeof why, "is %s; memlens writes regular files only (or - for standard output)",
                      file_kind (sb.st_mode));
          refuse = why;
        }
      if (!refuse && sb.st_nlink > 1)
        {
          /* renaming a new file into place would leave the other names
           * with the old contents; writing in place would lose the
           * all-or-nothing write: neither is what the user meant */
          snprintf (why, sizeof why, "it has %ju hard links; replacing it would cut it from the other names "
                    "(remove it first, or write elsewhere)", (uintmax_t) sb.st_nlink);
          refuse = why;
        }
    }
  else if (errno != ENOENT)
    {
      snprintf (why, sizeof why, "cannot write here: %s", strerror (errno));
      refuse = why;
    }
  char dir[PATH_MAX], prefix[256];
  if (!refuse && (tmp_prefix (dest, dir, sizeof dir, prefix, sizeof prefix) < 0
                  || snprintf (out->tmp, sizeof out->tmp, "%s/%s%ld-XXXXXX", dir, prefix, (long) getpid ()) >= (int) sizeof out->tmp))
    refuse = "path too long";
  if (refuse)
    {
      ml_error_set (err, refuse == why && !exists ? ML_EIO : ML_EINPUT, "%s: %s", path, refuse);
      free (out->path);
      free (out);
      return NULL;
    }
  clean_stale (dir, prefix);
  sigset_t old;
  block_signals (&old);
  int fd = mkstemp (out->tmp);
  if (fd < 0)
    {
      sigprocmask (SIG_SETMASK, &old, NULL);
      ml_error_errno (err, errno, path, "cannot create");
      free (out->path);
      free (out);
      return NULL;
    }
  /* the replaced file's mode (and owner, where we may), else what a new
   * file gets under the umask */
  if (exists)
    {
      /* another's file we may write but not give away becomes ours */
      (void) !fchown (fd, sb.st_uid, sb.st_gid);
      fchmod (fd, sb.st_mode & 0777);
    }
  else
    {
      mode_t mask = umask (0);
      umask (mask);
      fchmod (fd, 0666 & ~mask);
    }
  out->fp = fdopen (fd, "w");
  if (!out->fp)
    {
      int e = errno;
      close (fd);
      unlink (out->tmp);
      sigprocmask (SIG_SETMASK, &old, NULL);
      ml_error_errno (err, e, path, "cannot create");
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
    r->fp = stdin;
  else if (!(r->fp = fopen (path, "r")))
    return ml_error_errno (err, errno, path, "cannot open");
  else
    r->own = true;
  struct stat st;
  if (fstat (fileno (r->fp), &st) == 0)
    {
      const char *why = S_ISDIR (st.st_mode) ? "is a directory" : NULL;
      char text[96];
      if (S_ISREG (st.st_mode) && (uint64_t) st.st_size > ML_INPUT_MAX)
        {
          snprintf (text, sizeof text, "%lld bytes, larger than the limit of %" PRIu64 " bytes (64 GiB)",
                    (long long) st.st_size, ML_INPUT_MAX);
          why = text;
        }
      if (why)
        {
          ml_lines_close (r);
          return ml_error_set (err, ML_EINPUT, "%s: %s", path, why);
        }
      r->size = S_ISREG (st.st_mode) ? (long long) st.st_size : -1;
    }
  return 0;
}

double
ml_lines_fraction (const MlLineReader *r)
{
  if (!r->fp || r->size <= 0)
    return 0;
  double f = (double) r->consumed / (double) r->size;
  return f < 1 ? f : 1;
}

/* More bytes into the read buffer; 0 at the end of the input. */
static int
refill (MlLineReader *r, MlError *err)
{
  if (!r->buf && !(r->buf = malloc (ML_LINE_CHUNK)))
    return ml_error_set (err, ML_ENOMEM, "line %ld: out of memory", r->lineno + 1);
  r->bpos = 0;
  r->blen = fread (r->buf, 1, ML_LINE_CHUNK, r->fp);
  if (r->blen == 0 && ferror (r->fp))
    return ml_error_set (err, ML_EIO, "line %ld: read error: %s", r->lineno + 1, strerror (errno));
  if (r->consumed + r->blen > ML_INPUT_MAX)
    return ml_error_set (err, ML_EINPUT, "line %ld: the input goes on past the limit of %" PRIu64 " bytes (64 GiB)",
                         r->lineno + 1, ML_INPUT_MAX);
  r->consumed += r->blen;
  return r->blen > 0;
}

/* Appends @n bytes of @s to the line being read. */
static int
append (MlLineReader *r, const unsigned char *s, size_t n, MlError *err)
{
  if (r->len + n > ML_LINE_MAX)
    {
      r->lineno++;
      return ml_error_set (err, ML_EINPUT, "a line longer than %zu bytes (64 MiB): no line of a trace is so long; a file "
                           "without newlines, or not a text trace", ML_LINE_MAX);
    }
  if (r->len + n + 1 > r->cap)
    {
      size_t cap = r->cap ? r->cap : 256;
      while (cap < r->len + n + 1)
        cap *= 2;
      char *line = realloc (r->line, cap);
      if (!line)
        return ml_error_set (err, ML_ENOMEM, "line %ld: out of memory", r->lineno + 1);
      r->line = line;
      r->cap = cap;
    }
  memcpy (r->line + r->len, s, n);
  r->len += n;
  return 0;
}

int
ml_lines_next (MlLineReader *r, MlError *err)
{
  r->len = 0;
  r->offset = r->next_offset;
  bool any = false, newline = false;
  int rc;
  for (;;)
    {
      if (r->bpos == r->blen && (rc = refill (r, err)) <= 0)
        {
          if (rc < 0)
            return rc;
          break;
        }
      const unsigned char *s = r->buf + r->bpos, *nl = memchr (s, '\n', r->blen - r->bpos);
      size_t n = nl ? (size_t) (nl - s) : r->blen - r->bpos;
      any = true;
      if ((rc = append (r, s, n, err)) < 0)
        return rc;
      r->bpos += n + (nl != NULL);
      r->next_offset += n + (nl != NULL);
      if (nl)
        {
          newline = true;
          break;
        }
    }
  if (!any)
    return 0;
  r->lineno++;
  r->missing_newline = !newline;
  if (r->len > 0 && r->line[r->len - 1] == '\r')
    r->len--;
  if (!r->line && (rc = append (r, (const unsigned char *) "", 0, err)) < 0)
    return rc;
  r->line[r->len] = 0;
  /* text has no NUL byte: "4\0 9999" is no size 4 */
  const char *nul = memchr (r->line, 0, r->len);
  if (nul)
    return ml_error_set (err, ML_EINPUT, "column %zu: a NUL byte (binary data, not a text trace)",
                         (size_t) (nul - r->line) + 1);
  return 1;
}

void
ml_lines_close (MlLineReader *r)
{
  if (r->own && r->fp)
    fclose (r->fp);
  free (r->line);
  free (r->buf);
  memset (r, 0, sizeof *r);
}

int
ml_read_file_checked (const char *path, size_t max_bytes, MlReadCheck check, void *user, char **data, size_t *len,
                      MlError *err)
{
  FILE *fp = strcmp (path, "-") == 0 ? stdin : fopen (path, "rb");
  if (!fp)
    return ml_error_errno (err, errno, path, "cannot open");
  struct stat st;
  size_t cap = 1 << 16, n = 0;
  char *buf = NULL;
  int rc = 0;
  if (fstat (fileno (fp), &st) == 0 && S_ISREG (st.st_mode) && (uint64_t) st.st_size > max_bytes)
    rc = ml_error_set (err, ML_EINPUT, "%s: %lld bytes, larger than the limit of %zu bytes", path, (long long) st.st_size,
                       max_bytes);
  else if (!(buf = malloc (cap + 1)))
    rc = ml_error_set (err, ML_ENOMEM, "out of memory");
  while (rc == 0)
    {
      if (n == cap)
        {
          if (cap >= max_bytes)
            {
              rc = ml_error_set (err, ML_EINPUT, "%s: larger than the limit of %zu bytes", path, max_bytes);
              break;
            }
          cap = cap * 2 > max_bytes ? max_bytes : cap * 2;
          char *b2 = realloc (buf, cap + 1);
          if (!b2)
            {
              rc = ml_error_set (err, ML_ENOMEM, "out of memory");
              break;
            }
          buf = b2;
        }
      size_t got = fread (buf + n, 1, cap - n, fp);
      if (got && check && (rc = check ((const unsigned char *) buf + n, got, n, user, err)) != 0)
        break;
      n += got;
      if (got == 0)
        {
          if (ferror (fp))
            rc = ml_error_set (err, ML_EIO, "%s: read error", path);
          break;
        }
    }
  if (fp != stdin)
    fclose (fp);
  if (rc != 0)
    {
      free (buf);
      return rc < 0 ? rc : ML_EINPUT;
    }
  buf[n] = 0;
  *data = buf;
  *len = n;
  return 0;
}

int
ml_read_file (const char *path, size_t max_bytes, char **data, size_t *len, MlError *err)
{
  return ml_read_file_checked (path, max_bytes, NULL, NULL, data, len, err);
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
