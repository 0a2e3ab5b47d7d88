/* bench-snapshot: how fast and in how much memory PyTorch snapshots open.
 *
 *   bench-snapshot [--repeat R] [--python-max BYTES] FILE...
 *   bench-snapshot --generate SIZE --out FILE [--shape S] [--keep] [--python-max BYTES]
 *
 * For each file, in one run, each phase R times, each time in a child
 * process of its own (a fresh process, as a user runs memlens: its peak
 * RSS is its own, not raised by the runs before it in one heap; the best
 * time and the largest peak RSS of the R runs):
 *   pickle.loads  Python's own pickle.loads of the file's bytes, timed in
 *                 the Python process (when python3 is on PATH and the file
 *                 is at most --python-max, default 1.5 GB: Python takes
 *                 several times the file size)
 *   parse         the pickle VM streaming the trace entries to a counter
 *   import        what `memlens stats` does before it prints: the load
 *                 (parse, mapping, start-state rebuild) and the lifetimes
 *   conform       + the caching emulation's conformance replay
 * and prints the table of docs/performance.md: CPU times (a shared machine's
 * wall time is mostly waiting for a core), import / pickle.loads,
 * trace entries per second, peak RSS against the file size and against
 * 64 B per entry plus the stack table.
 *
 * --generate writes a snapshot of about SIZE bytes (1G, 5G, 300M) the way
 * torch.cuda.memory._dump_snapshot and Python's pickler lay it out:
 * protocol 4 in 64 KiB FRAMEs, every dict / list / str memoised and
 * referenced again by BINGET / LONG_BINGET; a training loop of iterations
 * allocating activations and freeing them (free_requested then
 * free_completed, sharing one frames list, as one traceback), a few
 * long-lived blocks live at dump time (their frames list written in
 * `segments` first and referenced by their alloc entry); every traceback
 * is its own list of 20-60 frame dicts drawn from 400 call paths over a
 * pool of 2000 shared frames. The file is deleted afterwards unless
 * --keep. --shape chooses what dominates the file:
 *   standard  the above (about 190 bytes per entry)
 *   frames    frames: every traceback 60-100 frames deep, a tenth of them
 *             frames not seen before (their dicts and strings written
 *             out, memoised, referenced by later tracebacks), so the
 *             distinct frames grow with the file
 *   small     many small entries: recorded without stacks (each entry's
 *             frames a new empty list, no compile_context or
 *             user_metadata), about 50 bytes per entry
 *   devices   eight devices: the iterations dealt out to eight device
 *             traces (device 0 read, the others counted)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim/formats/pickle.h"
#include "sim/sim.h"
#include "sim/formats/load.h"
#include "strategies/caching-conformance.h"

/* ---- the writer ---- */

typedef struct {
  FILE          *fp;
  unsigned char *frame;   /* the current FRAME's bytes */
  size_t         n, cap;
  uint32_t       memo;
  uint64_t       written;
} W;

static void
wput (W *w, const void *p, size_t n)
{
  if (w->n + n > w->cap)
    {
      while (w->n + n > w->cap)
        w->cap = w->cap ? w->cap * 2 : 1 << 17;
      if (!(w->frame = realloc (w->frame, w->cap)))
        exit (1);
    }
  memcpy (w->frame + w->n, p, n);
  w->n += n;
}

static void w1 (W *w, unsigned c) { unsigned char b = (unsigned char) c; wput (w, &b, 1); }

/* at an opcode boundary: a frame of >= 64 KiB goes out, as Python's framer does */
static void
wflush (W *w, bool force)
{
  if (!w->n || (!force && w->n < (1u << 16)))
    return;
  unsigned char h[9] = { 0x95 };
  uint64_t len = w->n;
  memcpy (h + 1, &len, 8);
  fwrite (h, 1, 9, w->fp);
  fwrite (w->frame, 1, w->n, w->fp);
  w->written += 9 + w->n;
  w->n = 0;
}

static uint32_t
memoize (W *w)
{
  w1 (w, 0x94);
  return w->memo++;
}

static void
get (W *w, uint32_t idx)
{
  if (idx < 256)
    {
      w1 (w, 'h');
      w1 (w, idx);
    }
  else
    {
      w1 (w, 'j');
      wput (w, &idx, 4);
    }
}

static uint32_t
str_new (W *w, const char *s)
{
  size_t n = strlen (s);
  w1 (w, 0x8c);
  w1 (w, (unsigned) n);
  wput (w, s, n);
  return memoize (w);
}

static void
int_put (W *w, int64_t v)
{
  if (v >= 0 && v < 256)
    {
      w1 (w, 'K');
      w1 (w, (unsigned) v);
    }
  else if (v >= 0 && v < 65536)
    {
      w1 (w, 'M');
      uint16_t v2 = (uint16_t) v;
      wput (w, &v2, 2);
    }
  else if (v >= INT32_MIN && v <= INT32_MAX)
    {
      w1 (w, 'J');
      int32_t v4 = (int32_t) v;
      wput (w, &v4, 4);
    }
  else
    {
      /* LONG1: the shortest two's complement, little-endian */
      unsigned char b[9];
      size_t n = 0;
      uint64_t u = (uint64_t) v;
      do
        {
          b[n++] = (unsigned char) u;
          u >>= 8;
        }
      while (n < 8 && (u || (b[n - 1] & 0x80)));
      w1 (w, 0x8a);
      w1 (w, (unsigned) n);
      wput (w, b, n);
    }
}

/* the keys and constant strings: memoised at first use, then referenced */
enum { S_ACTION, S_ADDR, S_SIZE, S_STREAM, S_TIME, S_CC, S_UM, S_FRAMES, S_FILENAME, S_LINE, S_NAME,
       S_ALLOC, S_FREE_REQ, S_FREE_DONE, S_NA, S_EMPTY, S__COUNT };
static const char *const str_text[S__COUNT] = {
  "action", "addr", "size", "stream", "time_us", "compile_context", "user_metadata", "frames",
  "filename", "line", "name", "alloc", "free_requested", "free_completed", "N/A", "",
};
static uint32_t str_memo[S__COUNT];
static bool str_have[S__COUNT];

static void
str_put (W *w, int s)
{
  if (str_have[s])
    get (w, str_memo[s]);
  else
    {
      str_memo[s] = str_new (w, str_text[s]);
      str_have[s] = true;
    }
}

/* ---- the workload ---- */

#define POOL   2000
#define PATHS  400
#define PERITER 64     /* activations per iteration */
#define LONG   32      /* long-lived blocks, live at dump */

typedef struct {
  uint64_t s;
} Rng;

static uint64_t
rnd (Rng *r)
{
  r->s ^= r->s << 13;
  r->s ^= r->s >> 7;
  r->s ^= r->s << 17;
  return r->s;
}

enum { SH_STANDARD, SH_FRAMES, SH_SMALL, SH_DEVICES, SH__COUNT };
static const char *const shape_names[SH__COUNT] = { "standard", "frames", "small", "devices" };
static int shape;

static uint32_t frame_memo[POOL];
static bool frame_have[POOL];
static uint16_t path_len[PATHS];
static uint16_t path_frame[PATHS][100];
/* SH_FRAMES: frames seen once and kept for later tracebacks */
static uint32_t *fresh_memo;
static size_t n_fresh, cap_fresh;
static Rng fresh_rng = { 0x2545f4914f6cdd1dull };

/* a frame dict: its memo index */
static uint32_t
frame_dict (W *w, const char *file, const char *func, int line)
{
  w1 (w, '}');
  uint32_t m = memoize (w);
  w1 (w, '(');
  str_put (w, S_NAME);
  str_new (w, func);
  str_put (w, S_FILENAME);
  str_new (w, file);
  str_put (w, S_LINE);
  int_put (w, line);
  w1 (w, 'u');
  return m;
}

/* SH_FRAMES: a tenth of the frames new (written out), the rest drawn
 * from the frames seen so far */
static void
fresh_frame_put (W *w)
{
  if (n_fresh && rnd (&fresh_rng) % 10)
    {
      get (w, fresh_memo[rnd (&fresh_rng) % n_fresh]);
      return;
    }
  char file[128], func[96];
  snprintf (file, sizeof file, "/home/user/project/src/package_%zu/module_%zu.py", n_fresh % 997, n_fresh);
  snprintf (func, sizeof func, "function_%zu_forward", n_fresh);
  if (n_fresh == cap_fresh)
    {
      cap_fresh = cap_fresh ? cap_fresh * 2 : 4096;
      if (!(fresh_memo = realloc (fresh_memo, cap_fresh * sizeof *fresh_memo)))
        exit (1);
    }
  fresh_memo[n_fresh] = frame_dict (w, file, func, (int) (n_fresh % 2000));
  n_fresh++;
}

static void
frame_put (W *w, int f)
{
  if (frame_have[f])
    {
      get (w, frame_memo[f]);
      return;
    }
  char file[96], func[64];
  if (f % 7 == 0)
    snprintf (file, sizeof file, "/home/user/project/model/layer%d.py", f % 50);
  else
    snprintf (file, sizeof file, "/usr/lib/python3/dist-packages/torch/nn/modules/m%d.py", f % 90);
  snprintf (func, sizeof func, "forward_%d", f);
  frame_memo[f] = frame_dict (w, file, func, 10 + f % 900);
  frame_have[f] = true;
}

/* a new frames list (a traceback): its memo index */
static uint32_t
frames_new (W *w, int path)
{
  w1 (w, ']');
  uint32_t m = memoize (w);
  if (shape == SH_SMALL)
    return m;   /* no stacks recorded: an empty list */
  w1 (w, '(');
  for (int k = 0; k < path_len[path]; k++)
    if (shape == SH_FRAMES)
      fresh_frame_put (w);
    else
      frame_put (w, path_frame[path][k]);
  w1 (w, 'e');
  return m;
}

static const uint64_t BASE = 0x7f4000000000ull;

static uint64_t
act_size (int k)
{
  static const uint64_t sizes[8] = { 512, 4096, 1 << 20, 8 << 20, 2 << 20, 64 << 10, 16 << 20, 3 << 20 };
  return sizes[k % 8] * (1 + (uint64_t) (k % 3));
}

static void
entry_put (W *w, int action, uint64_t addr, uint64_t size, uint64_t time_us, bool new_frames, int path,
           uint32_t frames_memo, uint32_t *out_memo)
{
  w1 (w, '}');
  memoize (w);
  w1 (w, '(');
  str_put (w, S_ACTION);
  str_put (w, action);
  str_put (w, S_ADDR);
  int_put (w, (int64_t) addr);
  str_put (w, S_SIZE);
  int_put (w, (int64_t) size);
  str_put (w, S_STREAM);
  int_put (w, 0);
  str_put (w, S_TIME);
  int_put (w, (int64_t) time_us);
  if (shape != SH_SMALL)
    {
      str_put (w, S_CC);
      str_put (w, S_NA);
      str_put (w, S_UM);
      str_put (w, S_EMPTY);
    }
  str_put (w, S_FRAMES);
  if (new_frames || shape == SH_SMALL)
    *out_memo = frames_new (w, path);
  else
    get (w, frames_memo);
  w1 (w, 'u');
}

/* Writes the snapshot; returns the number of trace entries. */
static uint64_t
generate (const char *path, uint64_t target)
{
  W w = { .fp = fopen (path, "wb") };
  if (!w.fp)
    {
      fprintf (stderr, "bench-snapshot: %s: %s\n", path, strerror (errno));
      exit (1);
    }
  Rng r = { 0x9e3779b97f4a7c15ull };
  for (int p = 0; p < PATHS; p++)
    {
      path_len[p] = (uint16_t) (shape == SH_FRAMES ? 60 + rnd (&r) % 41 : 20 + rnd (&r) % 41);
      for (int k = 0; k < path_len[p]; k++)
        path_frame[p][k] = (uint16_t) (rnd (&r) % POOL);
    }
  /* bytes per entry by shape: the number of iterations for the target */
  static const uint64_t per_entry[SH__COUNT] = { 190, 940, 50, 190 };
  uint64_t iters = target / (per_entry[shape] * 3 * PERITER) + 1;
  uint64_t long_addr = BASE, act_base = BASE + (1ull << 34);
  w1 (&w, 0x80);
  w1 (&w, 4);
  w1 (&w, '}');
  memoize (&w);
  w1 (&w, '(');
  /* segments: one large segment for the long-lived blocks (live at dump),
   * one for the activations (all free at dump) */
  str_new (&w, "segments");
  w1 (&w, ']');
  memoize (&w);
  w1 (&w, '(');
  uint32_t long_frames[LONG];
  for (int sg = 0; sg < 2; sg++)
    {
      w1 (&w, '}');
      memoize (&w);
      w1 (&w, '(');
      str_new (&w, "device"); int_put (&w, 0);
      str_new (&w, "address"); int_put (&w, (int64_t) (sg ? act_base : long_addr));
      str_new (&w, "total_size"); int_put (&w, sg ? (int64_t) 8 << 30 : (int64_t) LONG << 24);
      str_new (&w, "stream"); int_put (&w, 0);
      str_new (&w, "segment_type"); str_new (&w, "large");
      str_new (&w, "is_expandable"); w1 (&w, 0x89);
      str_new (&w, "blocks");
      w1 (&w, ']');
      memoize (&w);
      w1 (&w, '(');
      if (sg == 0)
        for (int b = 0; b < LONG; b++)
          {
            w1 (&w, '}');
            memoize (&w);
            w1 (&w, '(');
            str_new (&w, "address"); int_put (&w, (int64_t) (long_addr + ((uint64_t) b << 24)));
            str_new (&w, "size"); int_put (&w, 1 << 24);
            str_new (&w, "requested_size"); int_put (&w, 1 << 24);
            str_new (&w, "state"); str_new (&w, "active_allocated");
            str_put (&w, S_FRAMES);
            long_frames[b] = frames_new (&w, b % PATHS);
            w1 (&w, 'u');
          }
      else
        {
          w1 (&w, '}');
          memoize (&w);
          w1 (&w, '(');
          str_new (&w, "address"); int_put (&w, (int64_t) act_base);
          str_new (&w, "size"); int_put (&w, (int64_t) 8 << 30);
          str_new (&w, "requested_size"); int_put (&w, 0);
          str_new (&w, "state"); str_new (&w, "inactive");
          w1 (&w, 'u');
        }
      w1 (&w, 'e');
      w1 (&w, 'u');
      wflush (&w, false);
    }
  w1 (&w, 'e');
  str_new (&w, "device_traces");
  w1 (&w, ']');
  memoize (&w);
  int n_dev = shape == SH_DEVICES ? 8 : 1;
  w1 (&w, ']');
  memoize (&w);
  w1 (&w, '(');
  uint64_t entries = 0, batch = 0, t = 1700000000000000ull;
#define BATCH()                                                                                                \
  do                                                                                                           \
    {                                                                                                          \
      entries++;                                                                                               \
      wflush (&w, false);                                                                                      \
      if (++batch == 1000)                                                                                     \
        {                                                                                                      \
          w1 (&w, 'e');                                                                                        \
          w1 (&w, '(');                                                                                        \
          batch = 0;                                                                                           \
        }                                                                                                      \
    }                                                                                                          \
  while (0)
  uint32_t dummy, free_memo[PERITER];
  for (int b = 0; b < LONG; b++)
    {
      entry_put (&w, S_ALLOC, long_addr + ((uint64_t) b << 24), 1 << 24, t++, false, 0, long_frames[b], &dummy);
      BATCH ();
    }
  for (uint64_t it = 0; it < iters; it++)
    {
      if (n_dev > 1 && it && it % (iters / n_dev + 1) == 0)
        {
          /* the next device's trace */
          w1 (&w, 'e');
          w1 (&w, 'a');
          w1 (&w, ']');
          memoize (&w);
          w1 (&w, '(');
          batch = 0;
        }
      uint64_t off = 0, addr[PERITER];
      for (int k = 0; k < PERITER; k++)
        {
          addr[k] = act_base + off;
          off += (act_size (k) + 511) & ~(uint64_t) 511;
          entry_put (&w, S_ALLOC, addr[k], act_size (k), t++, true, (LONG + k) % PATHS, 0, &dummy);
          BATCH ();
        }
      for (int k = PERITER; k-- > 0;)
        {
          int fp = (LONG + PERITER + k) % PATHS;
          entry_put (&w, S_FREE_REQ, addr[k], act_size (k), t++, true, fp, 0, &free_memo[k]);
          BATCH ();
          entry_put (&w, S_FREE_DONE, addr[k], act_size (k), t++, false, fp, free_memo[k], &dummy);
          BATCH ();
        }
    }
  w1 (&w, 'e');
  w1 (&w, 'a');   /* the device's list into device_traces */
  w1 (&w, 'u');
  w1 (&w, '.');
  wflush (&w, true);
  fclose (w.fp);
  free (w.frame);
  return entries;
}

/* ---- the measurements ---- */

typedef struct {
  double   seconds;
  uint64_t entries, events, stacks;
  double   conformance;
  long     maxrss_kb;
  int      ok;
  char     msg[200];
} Result;

static int
count_item (void *user, size_t list, size_t index, MlPkValue *item)
{
  (void) list, (void) index, (void) item;
  ++*(uint64_t *) user;
  return 0;
}

enum { PH_PARSE, PH_IMPORT, PH_CONFORM };

/* CPU seconds of this process: on a shared machine wall time mostly
 * measures waiting for a core; Python is timed the same way. */
static double
cpu_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void
phase (int ph, const char *path, Result *res)
{
  MlError err = { 0 };
  double t0 = cpu_now ();
  if (ph == PH_PARSE)
    {
      int fd = open (path, O_RDONLY);
      struct stat sb;
      if (fd < 0 || fstat (fd, &sb) < 0)
        {
          snprintf (res->msg, sizeof res->msg, "%s: %s", path, strerror (errno));
          return;
        }
      void *map = mmap (NULL, (size_t) sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
      close (fd);
      if (map == MAP_FAILED)
        return;
      uint64_t n = 0;
      MlPkStream st = { .key = "device_traces", .item = count_item, .user = &n, .drop_input = true };
      MlPkDoc *doc = NULL;
      int rc = ml_pk_parse_stream (map, (size_t) sb.st_size, &st, &doc, &err);
      munmap (map, (size_t) sb.st_size);
      ml_pk_free (doc);
      if (rc < 0)
        {
          snprintf (res->msg, sizeof res->msg, "%s", err.msg);
          return;
        }
      res->entries = n;
    }
  else
    {
      MlTrace *t;
      MlBuffers *bufs;
      if (ml_trace_load (path, NULL, &t, &err) < 0 || ml_buffers_build (t, 0, &bufs, &err) < 0)
        {
          snprintf (res->msg, sizeof res->msg, "%s", err.msg);
          return;
        }
      res->events = t->n_events;
      res->stacks = t->n_stacks;
      if (ph == PH_CONFORM)
        {
          MlCachingConformance c;
          if (ml_caching_conformance (t, NULL, &c, &err) < 0)
            {
              snprintf (res->msg, sizeof res->msg, "%s", err.msg);
              return;
            }
          res->conformance = c.allocs ? (double) c.matched / (double) c.allocs : -1;
        }
      ml_buffers_free (bufs);
      ml_trace_free (t);
    }
  res->seconds = cpu_now () - t0;
  res->ok = 1;
}

/* Runs @ph once in a child; its time, counts and peak RSS. */
static Result
one_child (int ph, const char *path)
{
  Result res = { 0 };
  int fds[2];
  if (pipe (fds) < 0)
    return res;
  fflush (stdout);
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (fds[0]);
      phase (ph, path, &res);
      if (write (fds[1], &res, sizeof res) != (ssize_t) sizeof res)
        _exit (1);
      _exit (0);
    }
  close (fds[1]);
  ssize_t got = read (fds[0], &res, sizeof res);
  close (fds[0]);
  int status;
  struct rusage ru;
  wait4 (pid, &status, 0, &ru);
  if (got != (ssize_t) sizeof res)
    {
      res = (Result) { 0 };
      snprintf (res.msg, sizeof res.msg, "the child died (status %d)", status);
    }
  res.maxrss_kb = ru.ru_maxrss;
  return res;
}

/* Runs @ph @repeat times, each in a child of its own: the best time, the
 * largest peak RSS; the first failure, if any. */
static Result
in_child (int ph, const char *path, int repeat)
{
  Result best = one_child (ph, path);
  for (int rep = 1; rep < repeat && best.ok; rep++)
    {
      Result r = one_child (ph, path);
      if (!r.ok)
        return r;
      if (r.maxrss_kb > best.maxrss_kb)
        best.maxrss_kb = r.maxrss_kb;
      if (r.seconds < best.seconds)
        best.seconds = r.seconds;
    }
  return best;
}

/* Python's pickle.loads of the file, timed inside Python; <0 when not run. */
static double
python_loads (const char *path, int repeat, long *maxrss_kb)
{
  char cmd[4096];
  snprintf (cmd, sizeof cmd,
            "python3 -c 'import pickle,sys,time,resource\n"
            "b=open(sys.argv[1],\"rb\").read()\n"
            "best=1e30\n"
            "for i in range(%d):\n"
            "  t=time.process_time(); d=pickle.loads(b); best=min(best,time.process_time()-t); del d\n"
            "print(best, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)' '%s' 2>/dev/null",
            repeat, path);
  FILE *p = popen (cmd, "r");
  if (!p)
    return -1;
  double s = -1;
  long rss = 0;
  if (fscanf (p, "%lf %ld", &s, &rss) != 2)
    s = -1;
  pclose (p);
  *maxrss_kb = rss;
  return s;
}

static void
mib (char *buf, size_t n, double bytes)
{
  if (bytes >= 1e9)
    snprintf (buf, n, "%.2f GB", bytes / 1e9);
  else
    snprintf (buf, n, "%.1f MB", bytes / 1e6);
}

/* A CPU time as the table shows it: microseconds, milliseconds or
 * seconds, three significant digits or so. */
static const char *
secs (char *buf, size_t len, double s)
{
  if (s < 1e-3)
    snprintf (buf, len, "%.0f us", s * 1e6);
  else if (s < 1)
    snprintf (buf, len, "%.2f ms", s * 1e3);
  else
    snprintf (buf, len, "%.2f s", s);
  return buf;
}

static void
measure (const char *path, int repeat, uint64_t python_max)
{
  struct stat sb;
  if (stat (path, &sb) < 0)
    {
      fprintf (stderr, "bench-snapshot: %s: %s\n", path, strerror (errno));
      return;
    }
  double size = (double) sb.st_size;
  const char *name = strrchr (path, '/') ? strrchr (path, '/') + 1 : path;
  long py_rss = 0;
  double py = (uint64_t) sb.st_size <= python_max ? python_loads (path, repeat, &py_rss) : -2;
  Result parse = in_child (PH_PARSE, path, repeat);
  Result imp = in_child (PH_IMPORT, path, repeat);
  Result conf = in_child (PH_CONFORM, path, repeat);
  if (!parse.ok || !imp.ok || !conf.ok)
    {
      printf ("| %s | failed: %s%s%s |\n", name, parse.msg, imp.msg, conf.msg);
      return;
    }
  char sz[32], rss[32], pyrss[32], pys[64], ratio[32];
  mib (sz, sizeof sz, size);
  mib (rss, sizeof rss, (double) imp.maxrss_kb * 1024);
  mib (pyrss, sizeof pyrss, (double) py_rss * 1024);
  if (py >= 0)
    {
      char t[32];
      snprintf (pys, sizeof pys, "%s (%s)", secs (t, sizeof t, py), pyrss);
      snprintf (ratio, sizeof ratio, "%.2fx", imp.seconds / py);
    }
  else
    {
      snprintf (pys, sizeof pys, py == -2 ? "not run (> --python-max)" : "no python3");
      snprintf (ratio, sizeof ratio, "-");
    }
  /* the memory target: max (2 x file, 64 B x entries + the stack table) */
  double budget = 64.0 * (double) parse.entries;
  if (2 * size > budget)
    budget = 2 * size;
  char tp[32], ti[32], tc[32], rate[32];
  if (parse.entries)
    snprintf (rate, sizeof rate, "%.2fM", (double) parse.entries / imp.seconds / 1e6);
  else
    snprintf (rate, sizeof rate, "-");
  printf ("| %s | %s | %" PRIu64 " | %s | %s | %s | **%s** | %s | %s | %s (%.2fx file, %.0f B/entry) | %s |\n",
          name, sz, parse.entries, pys, secs (tp, sizeof tp, parse.seconds), secs (ti, sizeof ti, imp.seconds), ratio,
          rate, secs (tc, sizeof tc, conf.seconds), rss, (double) imp.maxrss_kb * 1024 / size,
          parse.entries ? (double) imp.maxrss_kb * 1024 / (double) parse.entries : 0.0,
          (double) imp.maxrss_kb * 1024 <= budget ? "yes" : "**no**");
  fflush (stdout);
}

static uint64_t
parse_size (const char *s)
{
  char *end;
  double v = strtod (s, &end);
  if (*end == 'G' || *end == 'g')
    v *= 1e9;
  else if (*end == 'M' || *end == 'm')
    v *= 1e6;
  else if (*end == 'K' || *end == 'k')
    v *= 1e3;
  return (uint64_t) v;
}

int
main (int argc, char **argv)
{
  int repeat = 5;
  uint64_t gen = 0, python_max = 1500000000ull;
  const char *out = NULL;
  bool keep = false;
  const char *files[256];
  int n_files = 0;
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--repeat") == 0 && i + 1 < argc)
        repeat = atoi (argv[++i]);
      else if (strcmp (argv[i], "--generate") == 0 && i + 1 < argc)
        gen = parse_size (argv[++i]);
      else if (strcmp (argv[i], "--out") == 0 && i + 1 < argc)
        out = argv[++i];
      else if (strcmp (argv[i], "--python-max") == 0 && i + 1 < argc)
        python_max = parse_size (argv[++i]);
      else if (strcmp (argv[i], "--keep") == 0)
        keep = true;
      else if (strcmp (argv[i], "--shape") == 0 && i + 1 < argc)
        {
          for (shape = 0; shape < SH__COUNT && strcmp (argv[i + 1], shape_names[shape]) != 0; shape++)
            ;
          if (shape == SH__COUNT)
            {
              fprintf (stderr, "bench-snapshot: --shape %s: standard, frames, small or devices\n", argv[i + 1]);
              return 2;
            }
          i++;
        }
      else if (argv[i][0] == '-')
        {
          fprintf (stderr, "usage: bench-snapshot [--repeat R] [--python-max BYTES] FILE...\n"
                           "       bench-snapshot --generate SIZE --out FILE [--shape standard|frames|small|devices] [--keep]\n");
          return 2;
        }
      else if (n_files < 256)
        files[n_files++] = argv[i];
    }
  if (gen && !out)
    {
      fprintf (stderr, "bench-snapshot: --generate needs --out FILE\n");
      return 2;
    }
  if (gen)
    {
      double t0 = ml_now ();
      uint64_t entries = generate (out, gen);
      fprintf (stderr, "generated %s: %" PRIu64 " trace entries in %.1f s\n", out, entries, ml_now () - t0);
      files[n_files++] = out;
      if (repeat > 1)
        repeat = 1;
    }
  double load[3] = { 0 };
  if (getloadavg (load, 3) > 0)
    fprintf (stderr, "load average at the start: %.1f %.1f %.1f (times are CPU seconds, best of %d)\n", load[0], load[1],
             load[2], repeat);
  printf ("| file | size | trace entries | pickle.loads (its peak RSS) | parse | import (load + lifetimes) | import / pickle.loads | entries/s (import) | + conformance | import peak RSS | within max(2x file, 64 B/entry) |\n");
  printf ("|---|---|---:|---|---:|---:|---:|---:|---:|---|---|\n");
  for (int i = 0; i < n_files; i++)
    measure (files[i], repeat, python_max);
  if (gen && !keep)
    unlink (out);
  return 0;
}
