/* replay-cuda.cu — the CUDA replay backend (see replay.h).
 *
 * One cudaMalloc arena of the plan's size. Each allocation launches a
 * tag-fill kernel on its buffer's stream, each free a tag-check kernel
 * that counts the granules that lost the tag and keeps the first foreign
 * tag it saw. Trace streams map to CUDA streams (at most 32, by index).
 * Reuse across streams is ordered like a correct caching allocator does
 * it: after a free on stream A an event is recorded on A, and before the
 * next allocation on stream B, B waits for the latest such event of every
 * other stream that freed since B last waited.
 *
 * The same sequence then runs twice more for the baselines, with the same
 * kernels: cudaMalloc / cudaFree per buffer, and cudaMallocAsync /
 * cudaFreeAsync from the device's default pool with an unlimited release
 * threshold (the pool keeps its memory, as PyTorch's backend:cudaMallocAsync
 * does). Each run is timed with CUDA events from a start event every stream
 * waits for to a stop event after every stream.
 */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cstdlib>

#include <cuda_runtime.h>

extern "C" {
#include "trace/replay.h"
}

#define MAX_STREAMS 32

namespace {

__global__ void
tag_fill (char *base, uint64_t granule, uint64_t n, uint64_t tag)
{
  for (uint64_t j = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; j < n; j += (uint64_t) gridDim.x * blockDim.x)
    *(uint64_t *) (base + j * granule) = tag;
}

__global__ void
tag_check (const char *base, uint64_t granule, uint64_t n, uint64_t tag, uint32_t victim,
           unsigned int *bad, unsigned long long *first_word, unsigned long long *first_index)
{
  for (uint64_t j = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; j < n; j += (uint64_t) gridDim.x * blockDim.x)
    {
      uint64_t w = *(const uint64_t *) (base + j * granule);
      if (w != tag)
        {
          atomicAdd (&bad[victim], 1u);
          atomicMin (&first_index[victim], (unsigned long long) j);
          atomicCAS (&first_word[victim], 0ull, (unsigned long long) (w ? w : 1));
        }
    }
}

struct Ctx
{
  const MlReplayProgram *prog;
  MlError *err;
  cudaStream_t streams[MAX_STREAMS];
  cudaEvent_t freed[MAX_STREAMS];
  cudaEvent_t start, stop, done[MAX_STREAMS];
  int n_streams;
  unsigned int *bad;
  unsigned long long *first_word, *first_index;
  char *arena;
  char **ptr;   /* per buffer: where the sequence put it */
};

int
fail (Ctx &c, const char *what, cudaError_t e)
{
  return ml_error_set (c.err, e == cudaErrorMemoryAllocation ? ML_ENOMEM : ML_EUNSUPPORTED,
                       "cuda replay: %s: %s", what, cudaGetErrorString (e));
}

#define CK(what, call)                        \
  do {                                        \
    cudaError_t e_ = (call);                  \
    if (e_ != cudaSuccess)                    \
      return fail (c, what, e_);              \
  } while (0)

void
grid (uint64_t n, unsigned *blocks)
{
  uint64_t b = (n + 255) / 256;
  *blocks = (unsigned) (b > 4096 ? 4096 : b);
}

enum Mode { PLAN, MALLOC, ASYNC };

/* Runs the sequence @iterations times in @mode; *ms = elapsed. */
int
run (Ctx &c, Mode mode, unsigned iterations, float *ms)
{
  const MlReplayProgram *p = c.prog;
  const uint64_t g = p->granule;
  bool dirty[MAX_STREAMS][MAX_STREAMS];
  memset (dirty, 0, sizeof dirty);
  CK ("record start", cudaEventRecord (c.start, c.streams[0]));
  for (int s = 1; s < c.n_streams; s++)
    CK ("wait start", cudaStreamWaitEvent (c.streams[s], c.start, 0));
  for (unsigned it = 0; it < iterations; it++)
    for (size_t k = 0; k < p->n_steps; k++)
      {
        const MlReplayStep *st = &p->steps[k];
        int si = st->stream % c.n_streams;
        cudaStream_t s = c.streams[si];
        uint64_t n = st->bytes / g;
        uint64_t tag = ml_replay_tag (st->buffer);
        unsigned blocks;
        grid (n, &blocks);
        if (st->op == ML_REPLAY_ALLOC)
          {
            char *base = nullptr;
            if (mode == PLAN)
              {
                /* a correct allocator orders reuse after frees on other streams */
                for (int o = 0; o < c.n_streams; o++)
                  if (o != si && dirty[o][si])
                    {
                      CK ("stream wait", cudaStreamWaitEvent (s, c.freed[o], 0));
                      dirty[o][si] = false;
                    }
                base = c.arena + st->offset;
              }
            else if (st->bytes && mode == MALLOC)
              CK ("cudaMalloc", cudaMalloc (&base, st->bytes));
            else if (st->bytes)
              CK ("cudaMallocAsync", cudaMallocAsync (&base, st->bytes, s));
            c.ptr[st->buffer] = base;
            if (n)
              tag_fill<<<blocks, 256, 0, s>>> (base, g, n, tag);
          }
        else
          {
            char *base = c.ptr[st->buffer];
            if (n)
              tag_check<<<blocks, 256, 0, s>>> (base, g, n, tag, st->buffer, c.bad, c.first_word, c.first_index);
            if (mode == PLAN)
              {
                CK ("record free", cudaEventRecord (c.freed[si], s));
                for (int o = 0; o < c.n_streams; o++)
                  dirty[si][o] = true;
              }
            else if (mode == MALLOC && base)
              CK ("cudaFree", cudaFree (base));
            else if (base)
              CK ("cudaFreeAsync", cudaFreeAsync (base, s));
          }
      }
  for (int s = 1; s < c.n_streams; s++)
    {
      CK ("record end", cudaEventRecord (c.done[s], c.streams[s]));
      CK ("wait end", cudaStreamWaitEvent (c.streams[0], c.done[s], 0));
    }
  CK ("record stop", cudaEventRecord (c.stop, c.streams[0]));
  CK ("replay", cudaEventSynchronize (c.stop));
  CK ("kernels", cudaGetLastError ());
  CK ("elapsed", cudaEventElapsedTime (ms, c.start, c.stop));
  return 0;
}

int
reset_reports (Ctx &c)
{
  size_t n = c.prog->n_buffers ? c.prog->n_buffers : 1;
  CK ("clear", cudaMemset (c.bad, 0, n * sizeof *c.bad));
  CK ("clear", cudaMemset (c.first_word, 0, n * sizeof *c.first_word));
  CK ("clear", cudaMemset (c.first_index, 0xff, n * sizeof *c.first_index));
  return 0;
}

/* Reads the reports back; with @res adds the corruptions, returns the count. */
int
collect (Ctx &c, MlReplayResult *res, uint64_t *count)
{
  const MlReplayProgram *p = c.prog;
  size_t n = p->n_buffers;
  unsigned int *bad = (unsigned int *) calloc (n ? n : 1, sizeof *bad);
  unsigned long long *word = (unsigned long long *) calloc (n ? n : 1, sizeof *word);
  unsigned long long *index = (unsigned long long *) calloc (n ? n : 1, sizeof *index);
  cudaError_t e = cudaSuccess;
  if (!bad || !word || !index)
    e = cudaErrorMemoryAllocation;
  if (n && e == cudaSuccess)
    e = cudaMemcpy (bad, c.bad, n * sizeof *bad, cudaMemcpyDeviceToHost);
  if (n && e == cudaSuccess)
    e = cudaMemcpy (word, c.first_word, n * sizeof *word, cudaMemcpyDeviceToHost);
  if (n && e == cudaSuccess)
    e = cudaMemcpy (index, c.first_index, n * sizeof *index, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess)
    {
      free (bad);
      free (word);
      free (index);
      return fail (c, "read back the reports", e);
    }
  *count = 0;
  for (size_t k = 0; k < p->n_steps; k++)
    {
      const MlReplayStep *st = &p->steps[k];
      if (st->op != ML_REPLAY_FREE || !bad[st->buffer])
        continue;
      (*count)++;
      if (!res)
        continue;
      MlCorruption cr;
      cr.victim = st->buffer;
      cr.culprit = UINT32_MAX;
      uint32_t b;
      if (ml_replay_tag_buffer (word[st->buffer], &b) && b < n)
        cr.culprit = b;
      cr.tick = st->tick;
      cr.offset = st->offset + index[st->buffer] * p->granule;
      cr.granules = bad[st->buffer];
      res->corrupted++;
      if (res->n_items < ML_REPLAY_MAX_KEPT)
        res->items[res->n_items++] = cr;
    }
  free (bad);
  free (word);
  free (index);
  return 0;
}

int
replay (Ctx &c, unsigned iterations, int device, MlReplayResult *res)
{
  const MlReplayProgram *p = c.prog;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount (&count);
  if (e != cudaSuccess || count == 0)
    return ml_error_set (c.err, ML_EUNSUPPORTED, "cuda replay: no usable GPU (%s)",
                         e != cudaSuccess ? cudaGetErrorString (e) : "no CUDA devices");
  if (device < 0 || device >= count)
    return ml_error_set (c.err, ML_EUSAGE, "cuda replay: device %d does not exist (%d devices)", device, count);
  CK ("set device", cudaSetDevice (device));
  cudaDeviceProp prop;
  CK ("device properties", cudaGetDeviceProperties (&prop, device));
  snprintf (res->device, sizeof res->device, "%s", prop.name);
  c.n_streams = (int) (p->n_streams < MAX_STREAMS ? p->n_streams : MAX_STREAMS);
  for (int s = 0; s < c.n_streams; s++)
    {
      CK ("create stream", cudaStreamCreateWithFlags (&c.streams[s], cudaStreamNonBlocking));
      CK ("create event", cudaEventCreateWithFlags (&c.freed[s], cudaEventDisableTiming));
      CK ("create event", cudaEventCreateWithFlags (&c.done[s], cudaEventDisableTiming));
    }
  CK ("create event", cudaEventCreate (&c.start));
  CK ("create event", cudaEventCreate (&c.stop));
  size_t n = p->n_buffers ? p->n_buffers : 1;
  CK ("report memory", cudaMalloc (&c.bad, n * sizeof *c.bad));
  CK ("report memory", cudaMalloc (&c.first_word, n * sizeof *c.first_word));
  CK ("report memory", cudaMalloc (&c.first_index, n * sizeof *c.first_index));
  c.ptr = (char **) calloc (n, sizeof *c.ptr);
  if (!c.ptr)
    return ml_error_set (c.err, ML_ENOMEM, "out of memory");
  char msg[64];
  int rc0;
  snprintf (msg, sizeof msg, "the arena (%llu bytes)", (unsigned long long) p->arena_bytes);
  CK (msg, cudaMalloc (&c.arena, p->arena_bytes ? p->arena_bytes : 256));

  /* warm up: load the module (PTX may be JIT-compiled for this GPU) outside the timings */
  if ((rc0 = reset_reports (c)) < 0)
    return rc0;
  tag_fill<<<1, 32, 0, c.streams[0]>>> (c.arena, 8, 1, 0);
  tag_check<<<1, 32, 0, c.streams[0]>>> (c.arena, 8, 1, 0, 0, c.bad, c.first_word, c.first_index);
  CK ("warm-up", cudaStreamSynchronize (c.streams[0]));
  CK ("warm-up", cudaGetLastError ());

  int rc;
  float ms = 0;
  /* the plan */
  if ((rc = reset_reports (c)) < 0 || (rc = run (c, PLAN, iterations, &ms)) < 0)
    return rc;
  res->plan_s = ms / 1e3;
  uint64_t found;
  if ((rc = collect (c, res, &found)) < 0)
    return rc;
  CK ("free the arena", cudaFree (c.arena));
  c.arena = nullptr;

  /* cudaMalloc / cudaFree */
  if ((rc = reset_reports (c)) < 0 || (rc = run (c, MALLOC, iterations, &ms)) < 0)
    return rc;
  res->malloc_s = ms / 1e3;
  if ((rc = collect (c, nullptr, &found)) < 0)
    return rc;
  res->baseline_corrupted += found;

  /* cudaMallocAsync / cudaFreeAsync from the default pool, which keeps its memory */
  cudaMemPool_t pool;
  CK ("default memory pool", cudaDeviceGetDefaultMemPool (&pool, device));
  uint64_t keep = UINT64_MAX;
  CK ("pool release threshold", cudaMemPoolSetAttribute (pool, cudaMemPoolAttrReleaseThreshold, &keep));
  if ((rc = reset_reports (c)) < 0 || (rc = run (c, ASYNC, iterations, &ms)) < 0)
    return rc;
  res->async_s = ms / 1e3;
  if ((rc = collect (c, nullptr, &found)) < 0)
    return rc;
  res->baseline_corrupted += found;
  return 0;
}

} // namespace

extern "C" bool
ml_replay_cuda_available (void)
{
  return true;
}

extern "C" int
ml_replay_cuda (const MlReplayProgram *prog, unsigned iterations, int device,
                MlReplayResult *res, MlError *err)
{
  if (iterations == 0)
    iterations = 1;
  ml_replay_result_init (res);
  res->iterations = iterations;
  for (size_t k = 0; k < prog->n_steps; k++)
    if (prog->steps[k].op == ML_REPLAY_ALLOC)
      {
        res->allocations++;
        res->granule_writes += prog->steps[k].bytes / prog->granule;
      }
  Ctx c;
  memset ((void *) &c.streams, 0, sizeof c.streams);
  memset ((void *) &c.freed, 0, sizeof c.freed);
  memset ((void *) &c.done, 0, sizeof c.done);
  c.prog = prog;
  c.err = err;
  c.start = c.stop = nullptr;
  c.n_streams = 0;
  c.bad = nullptr;
  c.first_word = c.first_index = nullptr;
  c.arena = nullptr;
  c.ptr = nullptr;
  int rc = replay (c, iterations, device, res);
  /* release everything, even after an error */
  cudaDeviceSynchronize ();
  free (c.ptr);
  cudaFree (c.arena);
  cudaFree (c.bad);
  cudaFree (c.first_word);
  cudaFree (c.first_index);
  for (int s = 0; s < c.n_streams; s++)
    {
      cudaStreamDestroy (c.streams[s]);
      cudaEventDestroy (c.freed[s]);
      cudaEventDestroy (c.done[s]);
    }
  if (c.start)
    cudaEventDestroy (c.start);
  if (c.stop)
    cudaEventDestroy (c.stop);
  return rc;
}
