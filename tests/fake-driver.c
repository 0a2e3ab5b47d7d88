/* fake-driver — does what the CUDA driver does with CUDA_INJECTION64_PATH
 * at cuInit (dlopen it, call InitializeInjection), then exits with the code
 * given as argv[1]. Lets the tests run `memlens trace` end to end on a
 * machine with no driver: the tracer starts, CUPTI refuses, the program
 * goes on. With MEMLENS_FAKE_RECORDS=1 it then hands the tracer a buffer
 * of hand-made activity records through its test entry point, as CUPTI
 * would, so a real trace file comes out; with MEMLENS_FAKE_RECORDS=crash
 * the tracer writes a checkpoint and the program then aborts. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_CUPTI_HEADERS
#include <cupti_activity.h>

static size_t
mem (uint8_t *buf, size_t off, int op, uint64_t addr, uint64_t bytes, uint32_t stream, uint32_t corr)
{
  CUpti_ActivityMemory4 m;
  memset (&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType = op;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.address = addr;
  m.bytes = bytes;
  m.timestamp = 1000 * corr;
  m.correlationId = corr;
  m.contextId = 1;
  m.isAsync = 1;
  m.streamId = stream;
  memcpy (buf + off, &m, sizeof m);
  return off + sizeof m;
}

static int
feed (void *h, int keep_running)
{
  int (*selftest) (uint8_t *, size_t, uint64_t, int) = (int (*) (uint8_t *, size_t, uint64_t, int)) dlsym (h, "memlens_inject_selftest");
  if (!selftest)
    return -1;
  uint8_t *buf = aligned_alloc (8, 8192);
  size_t off = 0;
  off = mem (buf, off, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0x10000000, 1 << 20, 13, 1);
  off = mem (buf, off, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0x10100000, 2 << 20, 14, 2);
  CUpti_ActivityKernel10 k;
  memset (&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = "fill_kernel";
  k.streamId = 13;
  k.start = 3000;
  k.end = 3500;
  k.correlationId = 3;
  k.contextId = 1;
  memcpy (buf + off, &k, sizeof k);
  off += sizeof k;
  CUpti_ActivityCudaEvent2 e;
  memset (&e, 0, sizeof e);
  e.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  e.streamId = 13;
  e.eventId = 5;
  e.cudaEventSyncId = 77;
  e.correlationId = 4;
  e.contextId = 1;
  memcpy (buf + off, &e, sizeof e);
  off += sizeof e;
  CUpti_ActivitySynchronization2 s;
  memset (&s, 0, sizeof s);
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
  s.streamId = 14;
  s.cudaEventId = 5;
  s.cudaEventSyncId = 77;
  s.correlationId = 5;
  s.contextId = 1;
  memcpy (buf + off, &s, sizeof s);
  off += sizeof s;
  off = mem (buf, off, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 0x10000000, 1 << 20, 14, 6);
  off = mem (buf, off, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0x10000000, 1 << 20, 14, 7);
  off = mem (buf, off, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 0x10100000, 2 << 20, 14, 8);
  off = mem (buf, off, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 0x10000000, 1 << 20, 14, 9);
  return selftest (buf, off, 2, keep_running);
}
#endif

int
main (int argc, char **argv)
{
  const char *path = getenv ("CUDA_INJECTION64_PATH");
  if (path && *path)
    {
      void *h = dlopen (path, RTLD_NOW | RTLD_LOCAL);
      if (!h)
        {
          fprintf (stderr, "fake-driver: %s\n", dlerror ());
          return 99;
        }
      int (*init) (void) = (int (*) (void)) dlsym (h, "InitializeInjection");
      if (!init || init () != 1)
        {
          fprintf (stderr, "fake-driver: InitializeInjection missing or did not return 1\n");
          return 98;
        }
#ifdef HAVE_CUPTI_HEADERS
      const char *fake = getenv ("MEMLENS_FAKE_RECORDS");
      bool crash = fake && strcmp (fake, "crash") == 0;
      if (fake && (strcmp (fake, "1") == 0 || crash) && feed (h, crash) < 0)
        {
          fprintf (stderr, "fake-driver: the tracer has no test entry point\n");
          return 97;
        }
      if (crash)
        abort ();   /* the checkpoint must survive this */
#endif
    }
  printf ("fake program ran\n");
  return argc > 1 ? atoi (argv[1]) : 0;
}
