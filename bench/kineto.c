/* bench-kineto: how fast and in how much memory Kineto / Chrome traces
 * open, against Python's json.load of the same file.
 *
 *   bench-kineto [--repeat R] [--python-max BYTES] FILE...
 *   bench-kineto --generate SIZE --out FILE [--keep]
 *
 * --generate writes a profile of about SIZE bytes of JSON (100M, 1G) the
 * way torch.profiler's export_chrome_trace lays it out (Kineto's
 * ChromeTraceLogger: an event over five to fifteen lines, two-space
 * indents, ts in µs since the epoch with three decimals): a training loop
 * of ops on three CPU threads (the main thread, autograd's backward
 * thread, a data loader), each op an aten cpu_op, a cudaLaunchKernel
 * runtime call, its flow start and end (ac2g) and a kernel on one of
 * three streams with the args Kineto writes (grid, block, occupancy, ...);
 * memory events, a tenth of all events: the op's output allocated on CUDA
 * device 0 ([memory] instant events with Total Allocated / Total
 * Reserved, Addr, Bytes), freed some ops later, and CPU allocations
 * (Device Type 0) among them. FILE ending in .gz is written with gzip
 * (zlib level 6). The file is deleted after the run unless --keep.
 *
 * For each file, in one run, each phase in its own child process (so its
 * peak RSS is its own; CPU seconds, best of R):
 *   json.load   Python's json.load of the file (gzip.open for .gz), timed
 *               inside Python, when the file's JSON is at most
 *               --python-max bytes (default 1.5 GB; Python needs about 4x)
 *   import      what `memlens stats` does before it prints: ml_trace_load
 *               (the streaming reader) and the lifetimes
 * and prints a row of the table of docs/performance.md: the JSON's size
 * (and the gzip file's), its events and [memory] events, both times,
 * import / json.load, peak RSS against the JSON's size.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "sim/formats/load.h"

/* ---- the writer ---- */

typedef struct {
  FILE    *fp;
  gzFile   gz;
  char     buf[1 << 16];
  size_t   n;
  uint64_t written;       /* JSON bytes */
  uint64_t events, mem_events;
  uint64_t rng;
} W;

static void
wflush (W *w)
{
  if (w->gz)
    gzwrite (w->gz, w->buf, (unsigned) w->n);
  else
    fwrite (w->buf, 1, w->n, w->fp);
  w->written += w->n;
  w->n = 0;
}

static void __attribute__ ((format (printf, 2, 3)))
wf (W *w, const char *fmt, ...)
{
  if (w->n > sizeof w->buf - 2048)
    wflush (w);
  va_list ap;
  va_start (ap, fmt);
  w->n += (size_t) vsnprintf (w->buf + w->n, sizeof w->buf - w->n, fmt, ap);
  va_end (ap);
}

static uint64_t
rnd (W *w)
{
  w->rng ^= w->rng << 13;
  w->rng ^= w->rng >> 7;
  w->rng ^= w->rng << 17;
  return w->rng;
}

/* ts as Kineto writes it: µs since the epoch, three decimals */
static void
ts_field (W *w, const char *key, uint64_t ns)
{
  wf (w, "\"%s\": %" PRIu64 ".%03" PRIu64, key, ns / 1000, ns % 1000);
}

static const char *const ops[] = {
  "aten::linear", "aten::addmm", "aten::layer_norm", "aten::native_layer_norm", "aten::gelu", "aten::softmax",
  "aten::_softmax", "aten::bmm", "aten::matmul", "aten::dropout", "aten::add", "aten::mul", "aten::copy_", "aten::empty",
  "aten::view", "aten::transpose", "aten::cat", "aten::embedding", "aten::mm", "aten::sum",
};
static const char *const kernels[] = {
  "ampere_sgemm_128x64_tn", "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
  "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)",
  "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4::Params)",
  "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
};

#define PID 2164

static void
event_begin (W *w, bool first)
{
  wf (w, "%s  {\n", first ? "" : ",\n");
  w->events++;
}

static void
mem_event (W *w, uint64_t ns, uint32_t tid, uint64_t addr, int64_t bytes, uint64_t total, uint64_t reserved, bool cpu)
{
  event_begin (w, false);
  wf (w, "    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n    \"pid\": %d, \"tid\": %u,\n    ",
      PID, tid);
  ts_field (w, "ts", ns);
  wf (w, ",\n    \"args\": {\n      \"Total Reserved\": %" PRIu64 ", \"Total Allocated\": %" PRIu64 ", \"Bytes\": %" PRId64
      ", \"Addr\": %" PRIu64 ", \"Device Id\": %d, \"Device Type\": %d, \"Ev Idx\": %" PRIu64 "\n    }\n  }",
      reserved, total, bytes, addr, cpu ? -1 : 0, cpu ? 0 : 1, w->events);
  w->mem_events++;
}

/* One op: the cpu_op, its outputs allocated, the launch, the flow, the
 * kernel. */
static void
op_events (W *w, uint64_t *ns, uint64_t corr, uint32_t tid)
{
  const char *op = ops[rnd (w) % (sizeof ops / sizeof ops[0])];
  uint64_t dur = 5000 + rnd (w) % 60000;
  event_begin (w, false);
  wf (w, "    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": %d, \"tid\": %u,\n    ", op, PID, tid);
  ts_field (w, "ts", *ns);
  wf (w, ", ");
  ts_field (w, "dur", dur);
  wf (w, ",\n    \"args\": {\n      \"External id\": %" PRIu64 ",\"Record function id\": 0, \"Sequence number\": %" PRIu64
      ", \"Fwd thread id\": 0, \"Ev Idx\": %" PRIu64 "\n    }\n  }", corr, corr / 3, w->events);
  uint64_t launch = *ns + dur / 2;
  event_begin (w, false);
  wf (w, "    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": %d, \"tid\": %u,\n    ", PID, tid);
  ts_field (w, "ts", launch);
  wf (w, ", ");
  ts_field (w, "dur", 3000 + rnd (w) % 4000);
  wf (w, ",\n    \"args\": {\n      \"External id\": %" PRIu64 ",\n      \"cbid\": 211, \"correlation\": %" PRIu64 "\n    }\n  }", corr,
      corr);
  uint32_t stream = (uint32_t[]) { 7, 7, 7, 13, 20 }[rnd (w) % 5];
  uint64_t kstart = launch + 8000 + rnd (w) % 20000;
  event_begin (w, false);
  wf (w, "    \"ph\": \"s\", \"id\": %" PRIu64 ", \"pid\": %d, \"tid\": %u, ", corr, PID, tid);
  ts_field (w, "ts", launch);
  wf (w, ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }");
  event_begin (w, false);
  wf (w, "    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %u,\n    ",
      kernels[rnd (w) % (sizeof kernels / sizeof kernels[0])], stream);
  ts_field (w, "ts", kstart);
  wf (w, ", ");
  ts_field (w, "dur", 2000 + rnd (w) % 200000);
  unsigned gx = 1 + (unsigned) (rnd (w) % 512);
  wf (w, ",\n    \"args\": {\n      \"External id\": %" PRIu64 ",\n      \"queued\": 0, \"device\": 0, \"context\": 1,\n"
      "      \"stream\": %u, \"correlation\": %" PRIu64 ",\n      \"registers per thread\": %u,\n      \"shared memory\": %u,\n"
      "      \"blocks per SM\": %.6f,\n      \"warps per SM\": %.6f,\n      \"grid\": [%u, 1, 1],\n      \"block\": [256, 1, 1],\n"
      "      \"est. achieved occupancy %%\": %u\n    }\n  }", corr, stream, corr, 32 + (unsigned) (rnd (w) % 96),
      (unsigned) (rnd (w) % 4) * 16384, gx / 108.0, gx * 8 / 108.0, gx, (unsigned) (rnd (w) % 100));
  event_begin (w, false);
  wf (w, "    \"ph\": \"f\", \"id\": %" PRIu64 ", \"pid\": 0, \"tid\": %u, ", corr, stream);
  ts_field (w, "ts", kstart);
  wf (w, ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }");
  *ns += dur + 1000 + rnd (w) % 5000;
}

#define LIVE 4096

/* Writes the profile; the JSON bytes written. */
static uint64_t
generate (const char *path, uint64_t size, W *w)
{
  size_t n = strlen (path);
  bool gz = n > 3 && strcmp (path + n - 3, ".gz") == 0;
  *w = (W) { .rng = 88172645463325252ull };
  if (gz ? !(w->gz = gzopen (path, "wb6")) : !(w->fp = fopen (path, "wb")))
    {
      fprintf (stderr, "bench-kineto: %s: %s\n", path, strerror (errno));
      exit (1);
    }
  wf (w, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, \"name\": \"NVIDIA A100-SXM4-80GB\", "
      "\"totalGlobalMem\": 85031714816,\n      \"computeMajor\": 8, \"computeMinor\": 0,\n      \"maxThreadsPerBlock\": 1024, "
      "\"maxThreadsPerMultiprocessor\": 2048,\n      \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n"
      "      \"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": 167936,\n      \"numSms\": 108, "
      "\"sharedMemPerBlockOptin\": 166912\n    }\n  ],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, "
      "\"world_size\": 8},\n  \"record_shapes\": 1,\n  \"profile_memory\": 1,\n  \"traceEvents\": [\n");
  event_begin (w, true);
  wf (w, "    \"name\": \"process_name\", \"ph\": \"M\", \"ts\": 1700000000000000.000, \"pid\": %d, \"tid\": 0,\n"
      "    \"args\": {\n      \"name\": \"python3\"\n    }\n  }", PID);
  uint64_t ns = UINT64_C (1700000000000000000), corr = 1, total = 0, reserved = 2 << 20;
  struct { uint64_t addr, size; } live[LIVE];
  size_t n_live = 0;
  uint64_t next_addr = UINT64_C (0x7f5a00000000);
  static const uint32_t tids[] = { PID, PID, PID + 41, PID + 97 };
  while (w->written + w->n < size)
    {
      uint32_t tid = tids[rnd (w) % 4];
      op_events (w, &ns, corr++, tid);
      /* memory: a tenth of the events; an op is five events */
      if (rnd (w) % 2)
        continue;
      bool cpu = rnd (w) % 5 == 0;
      if (cpu)
        {
          uint64_t a = UINT64_C (0x55d000000000) + (rnd (w) % 65536) * 64;
          mem_event (w, ns, tid, a, 64 << (rnd (w) % 6), 0, 0, true);
          continue;
        }
      if (n_live == LIVE || (n_live > 256 && rnd (w) % 2))
        {
          size_t k = (size_t) (rnd (w) % n_live);
          total -= live[k].size;
          mem_event (w, ns, tid, live[k].addr, -(int64_t) live[k].size, total, reserved, false);
          live[k] = live[--n_live];
        }
      else
        {
          uint64_t sz = (uint64_t) 512 << (rnd (w) % 16);
          live[n_live].addr = next_addr;
          live[n_live++].size = sz;
          next_addr += (sz + 511) / 512 * 512;
          total += sz;
          while (total > reserved)
            reserved += 20 << 20;
          mem_event (w, ns, tid, next_addr - (sz + 511) / 512 * 512, (int64_t) sz, total, reserved, false);
        }
    }
  wf (w, "\n  ],\n  \"traceName\": \"%s\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1700000000000000000\n}\n",
      path);
  wflush (w);
  if (w->gz)
    gzclose (w->gz);
  else
    fclose (w->fp);
  return w->written;
}

/* ---- the measurements ---- */

typedef struct {
  double   seconds;
  uint64_t events;
  long     maxrss_kb;
  int      ok;
  char     msg[300];
} Result;

static double
cpu_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* The import in a child: its CPU time (best of @repeat) and peak RSS. */
static Result
import_in_child (const char *path, int repeat)
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
      double best = 1e30;
      for (int r = 0; r < repeat; r++)
        {
          MlTrace *t;
          MlBuffers *bufs;
          MlError err = { 0 };
          double t0 = cpu_now ();
          if (ml_trace_load (path, NULL, &t, &err) < 0 || ml_buffers_build (t, 0, &bufs, &err) < 0)
            {
              snprintf (res.msg, sizeof res.msg, "%s", err.msg);
              break;
            }
          double dt = cpu_now () - t0;
          best = dt < best ? dt : best;
          res.events = t->n_events;
          ml_buffers_free (bufs);
          ml_trace_free (t);
          res.ok = 1;
        }
      res.seconds = best;
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

/* Python's json.load of the file, timed inside Python (CPU seconds);
 * also the events and [memory] events it holds. <0 when not run. */
static double
python_load (const char *path, int repeat, long *maxrss_kb, uint64_t *events, uint64_t *mem)
{
  char cmd[4096];
  snprintf (cmd, sizeof cmd,
            "python3 -c 'import gzip,json,sys,time,resource\n"
            "p=sys.argv[1]\n"
            "best=1e30\n"
            "for i in range(%d):\n"
            "  f=gzip.open(p) if p.endswith(\".gz\") else open(p,\"rb\")\n"
            "  t=time.process_time(); d=json.load(f); best=min(best,time.process_time()-t); f.close()\n"
            "  ev=d[\"traceEvents\"]; n=len(ev); m=sum(1 for e in ev if e.get(\"name\")==\"[memory]\"); del d, ev\n"
            "print(best, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, n, m)' '%s' 2>/dev/null",
            repeat, path);
  FILE *p = popen (cmd, "r");
  if (!p)
    return -1;
  double s = -1;
  long rss = 0;
  if (fscanf (p, "%lf %ld %" SCNu64 " %" SCNu64, &s, &rss, events, mem) != 4)
    s = -1;
  pclose (p);
  *maxrss_kb = rss;
  return s;
}

static const char *
mb (char *buf, size_t n, double bytes)
{
  if (bytes >= 1e9)
    snprintf (buf, n, "%.2f GB", bytes / 1e9);
  else
    snprintf (buf, n, "%.1f MB", bytes / 1e6);
  return buf;
}

/* The JSON's size: the file's, or what its gzip stream inflates to. */
static uint64_t
json_size (const char *path)
{
  gzFile gz = gzopen (path, "rb");
  if (!gz)
    return 0;
  static char buf[1 << 20];
  uint64_t n = 0;
  int got;
  while ((got = gzread (gz, buf, sizeof buf)) > 0)
    n += (uint64_t) got;
  gzclose (gz);
  return n;
}

static void
measure (const char *path, int repeat, uint64_t python_max)
{
  struct stat sb;
  if (stat (path, &sb) < 0)
    {
      fprintf (stderr, "bench-kineto: %s: %s\n", path, strerror (errno));
      return;
    }
  uint64_t text = json_size (path);
  const char *name = strrchr (path, '/') ? strrchr (path, '/') + 1 : path;
  long py_rss = 0;
  uint64_t events = 0, mem = 0;
  double py = text <= python_max ? python_load (path, repeat, &py_rss, &events, &mem) : -2;
  Result imp = import_in_child (path, repeat);
  if (!imp.ok)
    {
      printf ("| %s | failed: %s |\n", name, imp.msg);
      return;
    }
  char a[32], b[32], c[32], d[32], pys[64], ratio[32], ev[64];
  if (py >= 0)
    {
      snprintf (pys, sizeof pys, "%.2f s (%s)", py, mb (c, sizeof c, (double) py_rss * 1024));
      snprintf (ratio, sizeof ratio, "%.2fx", imp.seconds / py);
      snprintf (ev, sizeof ev, "%" PRIu64 " (%" PRIu64 " [memory])", events, mem);
    }
  else
    {
      snprintf (pys, sizeof pys, py == -2 ? "not run (> --python-max)" : "no python3");
      snprintf (ratio, sizeof ratio, "-");
      snprintf (ev, sizeof ev, "-");
    }
  double rss = (double) imp.maxrss_kb * 1024;
  printf ("| %s | %s%s%s%s | %s | %s | %.2f s | **%s** | %s | **%.2fx** | %" PRIu64 " |\n", name, mb (a, sizeof a, (double) text),
          (uint64_t) sb.st_size != text ? " (gzip " : "", (uint64_t) sb.st_size != text ? mb (b, sizeof b, (double) sb.st_size) : "",
          (uint64_t) sb.st_size != text ? ")" : "", ev, pys, imp.seconds, ratio, mb (d, sizeof d, rss), rss / (double) text,
          imp.events);
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
  int repeat = 3;
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
      else if (argv[i][0] == '-')
        {
          fprintf (stderr, "usage: bench-kineto [--repeat R] [--python-max BYTES] FILE...\n"
                           "       bench-kineto --generate SIZE --out FILE[.gz] [--keep]\n");
          return 2;
        }
      else if (n_files < 256)
        files[n_files++] = argv[i];
    }
  if (gen && !out)
    {
      fprintf (stderr, "bench-kineto: --generate needs --out FILE\n");
      return 2;
    }
  if (gen)
    {
      W w;
      uint64_t bytes = generate (out, gen, &w);
      fprintf (stderr, "generated %s: %" PRIu64 " bytes of JSON, %" PRIu64 " events, %" PRIu64 " [memory]\n", out, bytes, w.events,
               w.mem_events);
      files[n_files++] = out;
    }
  double load[3] = { 0 };
  if (getloadavg (load, 3) > 0)
    fprintf (stderr, "load average at the start: %.1f %.1f %.1f (times are CPU seconds, best of %d)\n", load[0], load[1],
             load[2], repeat);
  printf ("| file | JSON size | events (of them [memory]) | json.load (its peak RSS) | import (load + lifetimes) | import / json.load "
          "| import peak RSS | RSS / JSON size | trace events |\n");
  printf ("|---|---|---|---|---:|---:|---|---:|---:|\n");
  for (int i = 0; i < n_files; i++)
    measure (files[i], repeat, python_max);
  if (gen && !keep)
    unlink (out);
  return 0;
}
