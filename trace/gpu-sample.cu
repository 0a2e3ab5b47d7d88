// gpu-sample.cu — the small CUDA program the GPU check traces.
//
// Two streams, kernels on both, a stream-wait-event that orders stream 2
// after stream 1, and buffers whose lifetimes overlap and end: enough to
// exercise every record kind the tracer keeps. With --async every buffer
// is a stream-ordered allocation (cudaMallocAsync / cudaFreeAsync), which is
// what PyTorch does under PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
// (memlens trace --torch-tensors). Exit code 0 on success, 1 on a CUDA error.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CK(call)                                                              \
  do {                                                                        \
    cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess) {                                                  \
      fprintf (stderr, "gpu-sample: %s: %s\n", #call, cudaGetErrorString (e_)); \
      return 1;                                                               \
    }                                                                         \
  } while (0)

__global__ void fill (float *p, size_t n, float v)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    p[i] = v;
}

__global__ void axpy (const float *x, float *y, size_t n, float a)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    y[i] += a * x[i];
}

static int
alloc (bool async, float **p, size_t bytes, cudaStream_t s)
{
  CK (async ? cudaMallocAsync ((void **) p, bytes, s) : cudaMalloc ((void **) p, bytes));
  return 0;
}

static int
release (bool async, float *p, cudaStream_t s)
{
  CK (async ? cudaFreeAsync (p, s) : cudaFree (p));
  return 0;
}

int
main (int argc, char **argv)
{
  bool async = argc > 1 && strcmp (argv[1], "--async") == 0;
  cudaStream_t s1, s2;
  cudaEvent_t ready;
  CK (cudaStreamCreateWithFlags (&s1, cudaStreamNonBlocking));
  CK (cudaStreamCreateWithFlags (&s2, cudaStreamNonBlocking));
  CK (cudaEventCreateWithFlags (&ready, cudaEventDisableTiming));
  const size_t n = 1 << 18;   // 1 MiB of floats
  float *weights;
  if (alloc (async, &weights, 4 * n * sizeof (float), s1))
    return 1;
  fill<<<64, 256, 0, s1>>> (weights, 4 * n, 1.0f);
  for (int step = 0; step < 8; step++)
    {
      float *act, *grad, *tmp;
      if (alloc (async, &act, (1 + step % 3) * n * sizeof (float), s1)
          || alloc (async, &grad, n * sizeof (float), s2))
        return 1;
      fill<<<64, 256, 0, s1>>> (act, n, (float) step);
      axpy<<<64, 256, 0, s1>>> (weights, act, n, 0.5f);
      CK (cudaEventRecord (ready, s1));
      CK (cudaStreamWaitEvent (s2, ready, 0));     // s2 reads act after s1 wrote it
      fill<<<64, 256, 0, s2>>> (grad, n, 0.0f);
      axpy<<<64, 256, 0, s2>>> (act, grad, n, 2.0f);
      if (alloc (async, &tmp, 512 * 1024, s2))
        return 1;
      fill<<<16, 256, 0, s2>>> (tmp, 128 * 1024, 3.0f);
      if (release (async, tmp, s2) || release (async, act, s2) || release (async, grad, s2))
        return 1;
      if (step % 4 == 3)
        CK (cudaStreamSynchronize (s2));
    }
  if (release (async, weights, s1))
    return 1;
  CK (cudaDeviceSynchronize ());
  CK (cudaEventDestroy (ready));
  CK (cudaStreamDestroy (s1));
  CK (cudaStreamDestroy (s2));
  printf ("gpu-sample: ok (%s allocations)\n", async ? "stream-ordered" : "cudaMalloc");
  return 0;
}
