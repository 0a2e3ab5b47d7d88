/* inject.c — libmemlens-inject.so, the CUPTI tracer the CUDA driver loads.
 *
 * The driver dlopens the library named by CUDA_INJECTION64_PATH when the
 * program initialises CUDA (cuInit) and calls InitializeInjection(). It
 * registers activity buffer callbacks, then enables MEMORY2 and
 * MEMORY_POOL records, and with MEMLENS_TRACE_KINDS also
 * CONCURRENT_KERNEL ("kernels"), SYNCHRONIZATION + CUDA_EVENT ("sync")
 * and the allocating library of each allocation ("sites"). Completed
 * buffers are walked and converted under a lock (CUPTI calls back from
 * its own thread; the flush period is MEMLENS_TRACE_FLUSH_MS, default
 * 500 ms). At exit it forces a flush and
 * writes one native trace per device, atomically, to MEMLENS_TRACE_OUTPUT
 * ("%p" = the process id; default memlens-%p.jsonl), and appends one line
 * per file to MEMLENS_TRACE_MANIFEST for `memlens trace` to report.
 * So that a crash or a kill loses little, it also writes a checkpoint of
 * everything flushed so far every MEMLENS_TRACE_CHECKPOINT_S seconds
 * (default 10, 0 = never; the whole trace is rewritten, atomically, ending
 * in a mark that says it is a checkpoint); the exit write replaces it.
 *
 * It never harms the program: every failure (no driver, another CUPTI
 * client, an unsupported kind, a full disk) is printed once on stderr and
 * the program runs on; InitializeInjection() always returns 1.
 */
#include <cupti.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/formats/jsonl.h"
#include "sim/formats/load.h"
#include "trace/cupti-convert.h"

#define EXPORT __attribute__ ((visibility ("default")))
#define BUFFER_BYTES (4u << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static MlCuptiCollector *collector;
static pid_t owner;            /* a forked child does not write the parent's trace */
static _Atomic int started;   /* read on CUPTI's thread, written at exit */
static uint64_t walk_errors;
static double checkpoint_every = 10;   /* seconds, 0 = never */
static double last_checkpoint, next_checkpoint_gap;
static uint64_t kept_at_checkpoint, checkpoint_errors;

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void write_traces (MlCuptiCollector *c, bool checkpoint);

static void
say (const char *fmt, ...)
{
  va_list ap;
  fprintf (stderr, "memlens-inject[%d]: ", (int) getpid ());
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
}

static void
manifest (const char *fmt, ...)
{
  const char *path = getenv ("MEMLENS_TRACE_MANIFEST");
  if (!path || !*path)
    return;
  FILE *fp = fopen (path, "a");
  if (!fp)
    return;
  va_list ap;
  va_start (ap, fmt);
  vfprintf (fp, fmt, ap);
  va_end (ap);
  fputc ('\n', fp);
  fclose (fp);
}

static const char *
cupti_why (CUptiResult st)
{
  const char *s = NULL;
  if (cuptiGetResultString (st, &s) != CUPTI_SUCCESS || !s)
    s = "unknown CUPTI error";
  return s;
}

static const char *
hint (CUptiResult st)
{
  switch (st)
    {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return " (another CUPTI client is active: Nsight Systems, Nsight Compute or the PyTorch profiler)";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return " (profiling is restricted to admin users on this machine)";
    case CUPTI_ERROR_UNKNOWN:
    case CUPTI_ERROR_NOT_INITIALIZED:
      return " (no usable CUDA driver or GPU?)";
    default:
      return "";
    }
}

static void CUPTIAPI
buffer_requested (uint8_t **buffer, size_t *size, size_t *max_records)
{
  *buffer = aligned_alloc (8, BUFFER_BYTES);
  *size = *buffer ? BUFFER_BYTES : 0;
  *max_records = 0;
}

static void CUPTIAPI
buffer_completed (CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
  size_t dropped = 0;
  pthread_mutex_lock (&lock);
  if (collector && buffer && valid)
    {
      MlError err = { 0 };
      if (ml_cupti_walk_buffer (collector, buffer, valid, NULL, &err) < 0 && walk_errors++ == 0)
        say ("%s (the rest of that buffer is lost)", err.msg);
    }
  if (collector && cuptiActivityGetNumDroppedRecords (ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
    ml_cupti_collector_dropped (collector, dropped);
  if (collector && started && checkpoint_every > 0 && getpid () == owner)
    {
      MlCuptiStats st;
      ml_cupti_collector_stats (collector, &st);
      double t = now_s ();
      if (st.kept > kept_at_checkpoint && t - last_checkpoint >= next_checkpoint_gap)
        {
          write_traces (collector, true);
          kept_at_checkpoint = st.kept;
          last_checkpoint = now_s ();
          /* rewriting a large trace takes time: keep it under a tenth of the run */
          double took = last_checkpoint - t;
          next_checkpoint_gap = took * 10 > checkpoint_every ? took * 10 : checkpoint_every;
        }
    }
  pthread_mutex_unlock (&lock);
  free (buffer);
}

/* Expands "%p" (pid) and "%%"; appends ".devN" before the extension for
 * devices after the first. */
static void
output_path (char *dst, size_t len, const char *pattern, pid_t pid, int dev_index, uint32_t device)
{
  char tmp[4096];
  size_t o = 0;
  for (const char *p = pattern; *p && o + 24 < sizeof tmp; p++)
    {
      if (p[0] == '%' && p[1] == 'p')
        o += (size_t) snprintf (tmp + o, sizeof tmp - o, "%d", (int) pid), p++;
      else if (p[0] == '%' && p[1] == '%')
        tmp[o++] = '%', p++;
      else
        tmp[o++] = *p;
    }
  tmp[o] = 0;
  if (dev_index == 0)
    {
      snprintf (dst, len, "%s", tmp);
      return;
    }
  char *dot = strrchr (tmp, '.'), *slash = strrchr (tmp, '/');
  if (dot && (!slash || dot > slash))
    {
      *dot = 0;
      snprintf (dst, len, "%s.dev%u.%s", tmp, device, dot + 1);
    }
  else
    snprintf (dst, len, "%s.dev%u", tmp, device);
}

static void
write_traces (MlCuptiCollector *c, bool checkpoint)
{
  const char *pattern = getenv ("MEMLENS_TRACE_OUTPUT");
  if (!pattern || !*pattern)
    pattern = "memlens-%p.jsonl";
  MlTrace **traces = NULL;
  size_t n = 0;
  MlError err = { 0 };
  MlCuptiStats stats;
  if (ml_cupti_collector_finish (c, &traces, &n, &err) < 0)
    {
      if (!checkpoint)
        {
          say ("%s; no trace written", err.msg);
          manifest ("fail\t%s", err.msg);
        }
      return;
    }
  ml_cupti_collector_stats (c, &stats);
  if (checkpoint && n == 0)
    {
      free (traces);
      return;
    }
  MlTrace *empty = NULL;
  if (n == 0 && (empty = ml_trace_new ()))
    {
      empty->source = ml_strtab_intern0 (empty->strings, "cupti");
      empty->dropped_records = stats.dropped;
      traces[0] = empty;
      n = 1;
    }
  for (size_t i = 0; i < n; i++)
    {
      char path[4096];
      output_path (path, sizeof path, pattern, owner, (int) i, traces[i]->device);
      MlTrace *t = traces[i];
      if (checkpoint)
        {
          MlEvent mark = { .kind = ML_EV_MARK, .tick = t->n_events, .time_ns = -1, .device = t->device };
          mark.name = ml_strtab_intern0 (t->strings, "memlens: checkpoint, the process had not exited yet");
          if (mark.name == UINT32_MAX || !ml_trace_append (t, &mark)
              || ml_trace_write_jsonl (t, path, &err) < 0)
            {
              if (checkpoint_errors++ == 0)
                say ("checkpoint: %s", err.msg[0] ? err.msg : "out of memory");
            }
          else
            manifest ("checkpoint\t%s", path);
          ml_trace_free (t);
          continue;
        }
      size_t allocs = 0, kernels = 0, syncs = 0;
      for (size_t e = 0; e < t->n_events; e++)
        {
          allocs += t->events[e].kind == ML_EV_ALLOC;
          kernels += t->events[e].kind == ML_EV_KERNEL;
          syncs += t->events[e].kind == ML_EV_SYNC;
        }
      if (ml_trace_write_jsonl (t, path, &err) < 0)
        {
          say ("%s", err.msg);
          manifest ("fail\t%s", err.msg);
        }
      else
        manifest ("ok\t%s\t%zu\t%zu\t%zu\t%zu\t%llu\t%llu\t%llu\t%llu", path, t->n_events, allocs, kernels, syncs,
                  (unsigned long long) stats.records, (unsigned long long) stats.dropped,
                  (unsigned long long) stats.unmatched_frees, (unsigned long long) stats.implied_frees);
      ml_trace_free (t);
    }
  free (traces);
}

static _Atomic bool selftest;

static void
finish (void)
{
  if (!started || getpid () != owner)
    return;
  started = 0;
  CUptiResult st = selftest ? CUPTI_SUCCESS : cuptiActivityFlushAll (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (st != CUPTI_SUCCESS)
    say ("the final flush failed: %s; the last records may be missing", cupti_why (st));
  pthread_mutex_lock (&lock);
  MlCuptiCollector *c = collector;
  collector = NULL;
  pthread_mutex_unlock (&lock);
  if (!c)
    return;
  write_traces (c, false);
  ml_cupti_collector_free (c);
}

static bool
kind_wanted (const char *list, const char *what)
{
  if (!list)
    return false;
  size_t n = strlen (what);
  for (const char *p = list; (p = strstr (p, what)); p += n)
    if ((p == list || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
      return true;
  return false;
}

static bool
enable (CUpti_ActivityKind kind, const char *what, bool required)
{
  CUptiResult st = cuptiActivityEnable (kind);
  if (st == CUPTI_SUCCESS)
    return true;
  say ("cannot record %s: %s%s%s", what, cupti_why (st), hint (st),
       required ? "; not tracing, the program runs on" : "; tracing without them");
  manifest ("fail\tcannot record %s: %s%s", what, cupti_why (st), hint (st));
  return false;
}

EXPORT int InitializeInjection (void);

EXPORT int
InitializeInjection (void)
{
  static int called;
  if (called++)
    return 1;
  owner = getpid ();
  collector = ml_cupti_collector_new ();
  if (!collector)
    {
      say ("out of memory; not tracing");
      return 1;
    }
  CUptiResult st = cuptiActivityRegisterCallbacks (buffer_requested, buffer_completed);
  if (st != CUPTI_SUCCESS)
    {
      say ("cannot register activity buffers: %s%s; not tracing, the program runs on", cupti_why (st), hint (st));
      manifest ("fail\tcannot register activity buffers: %s%s", cupti_why (st), hint (st));
      goto off;
    }
  if (!enable (CUPTI_ACTIVITY_KIND_MEMORY2, "memory allocations (MEMORY2)", true))
    goto off;
  const char *kinds = getenv ("MEMLENS_TRACE_KINDS");
  enable (CUPTI_ACTIVITY_KIND_MEMORY_POOL, "memory pools (MEMORY_POOL)", false);
  if (kind_wanted (kinds, "kernels"))
    enable (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels (CONCURRENT_KERNEL)", false);
  if (kind_wanted (kinds, "sync"))
    {
      /* only queries that found the work done: the others order nothing */
      cuptiActivityEnableAllSyncRecords (0);
      enable (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronisations (SYNCHRONIZATION)", false);
      enable (CUPTI_ACTIVITY_KIND_CUDA_EVENT, "CUDA events (CUDA_EVENT)", false);
    }
  if (kind_wanted (kinds, "sites"))
    {
      st = cuptiActivityEnableAllocationSource (1);
      if (st != CUPTI_SUCCESS)
        {
          say ("cannot record which library allocated: %s%s; tracing without it", cupti_why (st), hint (st));
          manifest ("fail\tcannot record allocation sources: %s", cupti_why (st));
        }
    }
  const char *cp = getenv ("MEMLENS_TRACE_CHECKPOINT_S");
  if (cp && *cp)
    checkpoint_every = strtod (cp, NULL);
  last_checkpoint = now_s ();
  next_checkpoint_gap = checkpoint_every;
  const char *ms = getenv ("MEMLENS_TRACE_FLUSH_MS");
  long period = ms ? strtol (ms, NULL, 10) : 500;
  if (period > 0)
    cuptiActivityFlushPeriod ((uint32_t) period);
  started = 1;
  if (atexit (finish) != 0)
    say ("cannot register the exit handler; the trace will not be written");
  return 1;

off:
  cuptiActivityDisable (CUPTI_ACTIVITY_KIND_MEMORY2);
  pthread_mutex_lock (&lock);
  ml_cupti_collector_free (collector);
  collector = NULL;
  pthread_mutex_unlock (&lock);
  return 1;
}

/* For the tests, which have no driver: hands @buffer (a malloc'd buffer of
 * @valid bytes of activity records, which this takes over) to the
 * completion callback as CUPTI would, adds @dropped lost records, and
 * writes the traces as at exit; with @keep_running it writes a checkpoint
 * instead and the process goes on (as if it would crash later). Returns 0. */
EXPORT int memlens_inject_selftest (uint8_t *buffer, size_t valid, uint64_t dropped, int keep_running);

EXPORT int
memlens_inject_selftest (uint8_t *buffer, size_t valid, uint64_t dropped, int keep_running)
{
  pthread_mutex_lock (&lock);
  if (!collector)
    collector = ml_cupti_collector_new ();
  if (collector)
    ml_cupti_collector_dropped (collector, dropped);
  pthread_mutex_unlock (&lock);
  owner = getpid ();
  selftest = true;
  if (keep_running)
    {
      started = 1;
      next_checkpoint_gap = 0;
      buffer_completed (NULL, 0, buffer, valid, valid);
      return 0;
    }
  buffer_completed (NULL, 0, buffer, valid, valid);
  started = 1;
  finish ();
  return 0;
}
