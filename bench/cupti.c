/* cupti — what the tracer costs inside the traced program: walking CUPTI
 * activity buffers, converting and keeping the records, and at exit
 * ordering them and writing the trace.
 *
 * Usage: bench-cupti [--records N]   (default 4M)
 * Builds N records in 4 MiB buffers as CUPTI fills them (allocations and
 * frees of a live set of ~10,000 buffers on 4 streams, one kernel per 4
 * records), then times: libcupti's bare walk (the baseline: what any
 * CUPTI client pays), walk + conversion + keep, finish (order, pair,
 * resolve), and the JSONL write. Prints a Markdown table; ratios are to
 * the bare walk of the same run. No GPU needed.
 */
#include <cupti.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sim/formats/jsonl.h"
#include "sim/formats/load.h"
#include "sim/sim.h"
#include "sim/base/units.h"
#include "trace/cupti-convert.h"

#define BUF (4u << 20)

static double
rss_mib (void)
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return (double) ru.ru_maxrss / 1024.0;
}

int
main (int argc, char **argv)
{
  uint64_t n = 4000000;
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp (argv[i], "--records") == 0)
      {
        MlError err = { 0 };
        if (ml_parse_size (argv[i + 1], &n, &err) < 0)
          {
            fprintf (stderr, "bench-cupti: %s\n", err.msg);
            return 2;
          }
      }
  /* the buffers */
  size_t per = BUF / sizeof (CUpti_ActivityKernel10);
  size_t nbuf = (size_t) (n / per + 2);
  uint8_t **bufs = calloc (nbuf, sizeof *bufs);
  size_t *valid = calloc (nbuf, sizeof *valid);
  enum { LIVE = 10000 };
  uint64_t *live = calloc (LIVE, sizeof *live);
  uint64_t next_addr = 0x7f0000000000ull, seed = 1;
  size_t b = 0, off = 0;
  bufs[0] = aligned_alloc (8, BUF);
  for (uint64_t r = 0; r < n; r++)
    {
      if (off + sizeof (CUpti_ActivityKernel10) > BUF)
        {
          valid[b++] = off;
          bufs[b] = aligned_alloc (8, BUF);
          off = 0;
        }
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      uint32_t corr = (uint32_t) (r + 1);
      if (r % 4 == 3)
        {
          CUpti_ActivityKernel10 k;
          memset (&k, 0, sizeof k);
          k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
          k.name = "gemm";
          k.streamId = (uint32_t) (seed >> 60) % 4 + 1;
          k.start = r * 100;
          k.end = r * 100 + 50;
          k.correlationId = corr;
          memcpy (bufs[b] + off, &k, sizeof k);
          off += sizeof k;
          continue;
        }
      CUpti_ActivityMemory4 m;
      memset (&m, 0, sizeof m);
      m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
      m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
      m.correlationId = corr;
      m.timestamp = r * 100;
      m.isAsync = 1;
      m.streamId = (uint32_t) (seed >> 60) % 4 + 1;
      size_t slot = (size_t) ((seed >> 20) % LIVE);
      if (live[slot])
        {
          m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
          m.address = live[slot];
          live[slot] = 0;
        }
      else
        {
          m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
          m.address = live[slot] = next_addr;
          m.bytes = 256u << ((seed >> 40) % 14);
          next_addr += m.bytes + 4096;
        }
      memcpy (bufs[b] + off, &m, sizeof m);
      off += sizeof m;
    }
  valid[b++] = off;

  /* baseline: the bare walk */
  double t0 = ml_now ();
  uint64_t walked = 0;
  for (size_t i = 0; i < b; i++)
    {
      CUpti_Activity *rec = NULL;
      while (cuptiActivityGetNextRecord (bufs[i], valid[i], &rec) == CUPTI_SUCCESS)
        walked++;
    }
  double t_walk = ml_now () - t0;

  MlCuptiCollector *c = ml_cupti_collector_new ();
  MlError err = { 0 };
  t0 = ml_now ();
  for (size_t i = 0; i < b; i++)
    if (ml_cupti_walk_buffer (c, bufs[i], valid[i], NULL, &err) < 0)
      {
        fprintf (stderr, "bench-cupti: %s\n", err.msg);
        return 1;
      }
  double t_keep = ml_now () - t0;
  double rss_keep = rss_mib ();

  MlTrace **traces = NULL;
  size_t nt = 0;
  t0 = ml_now ();
  if (ml_cupti_collector_finish (c, &traces, &nt, &err) < 0)
    {
      fprintf (stderr, "bench-cupti: %s\n", err.msg);
      return 1;
    }
  double t_finish = ml_now () - t0;

  char path[] = "/tmp/bench-cupti-XXXXXX.jsonl";
  int fd = mkstemps (path, 6);
  close (fd);
  t0 = ml_now ();
  if (nt && ml_trace_write_jsonl (traces[0], path, &err) < 0)
    {
      fprintf (stderr, "bench-cupti: %s\n", err.msg);
      return 1;
    }
  double t_write = ml_now () - t0;
  unlink (path);

  printf ("| records | step | time | records/s | vs bare walk |\n|---|---|---|---|---|\n");
  printf ("| %" PRIu64 " | libcupti walk only (baseline) | %.3f s | %.1f M | 1.0 |\n", walked, t_walk, walked / t_walk / 1e6);
  printf ("| | walk + convert + keep | %.3f s | %.1f M | %.1f |\n", t_keep, walked / t_keep / 1e6, t_keep / t_walk);
  printf ("| | finish: order, pair, resolve | %.3f s | %.1f M | %.1f |\n", t_finish, walked / t_finish / 1e6, t_finish / t_walk);
  printf ("| | write JSONL | %.3f s | %.1f M | %.1f |\n", t_write, walked / t_write / 1e6, t_write / t_walk);
  printf ("\nevents %zu; peak RSS after keeping %.0f MiB (buffers %.0f MiB included)\n",
          nt ? traces[0]->n_events : 0, rss_keep, (double) b * BUF / (1 << 20));
  for (size_t i = 0; i < nt; i++)
    ml_trace_free (traces[i]);
  free (traces);
  ml_cupti_collector_free (c);
  for (size_t i = 0; i < b; i++)
    free (bufs[i]);
  free (bufs);
  free (valid);
  free (live);
  return 0;
}
