/* The CUPTI record conversion (hand-filled CUDA 13 record structs), the
 * collector (ordering, stream-wait resolution, free pairing, devices,
 * dropped records) and a hand-built activity buffer walked by libcupti's
 * own cuptiActivityGetNextRecord: no driver, no GPU. */
#include "tests/tap.h"

#include <stdalign.h>

#include "sim/buffers.h"
#include "sim/formats/jsonl.h"
#include "sim/formats/load.h"
#include "trace/cupti-convert.h"

static CUpti_ActivityMemory4
mem (int op, uint64_t addr, uint64_t bytes, uint32_t corr, uint64_t ts)
{
  CUpti_ActivityMemory4 m;
  memset (&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType = op;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.address = addr;
  m.bytes = bytes;
  m.timestamp = ts;
  m.correlationId = corr;
  m.deviceId = 0;
  m.contextId = 1;
  m.streamId = CUPTI_INVALID_STREAM_ID;
  return m;
}

static CUpti_ActivityKernel10
kern (const char *name, uint32_t stream, uint64_t start, uint64_t end, uint32_t corr)
{
  CUpti_ActivityKernel10 k;
  memset (&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = name;
  k.streamId = stream;
  k.start = start;
  k.end = end;
  k.correlationId = corr;
  k.contextId = 1;
  return k;
}

static CUpti_ActivitySynchronization2
syncr (int type, uint32_t stream, uint32_t event, uint64_t sync_id, uint32_t corr)
{
  CUpti_ActivitySynchronization2 s;
  memset (&s, 0, sizeof s);
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = type;
  s.streamId = stream;
  s.cudaEventId = event;
  s.cudaEventSyncId = sync_id;
  s.correlationId = corr;
  s.contextId = 1;
  s.start = 1000 + corr;
  return s;
}

static CUpti_ActivityCudaEvent2
evrec (uint32_t stream, uint32_t event, uint64_t sync_id, uint32_t corr)
{
  CUpti_ActivityCudaEvent2 e;
  memset (&e, 0, sizeof e);
  e.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  e.streamId = stream;
  e.eventId = event;
  e.cudaEventSyncId = sync_id;
  e.correlationId = corr;
  e.contextId = 1;
  return e;
}

static void
test_convert (void)
{
  MlCuptiItem it;

  CUpti_ActivityMemory4 m = mem (CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0x7f0000001000, 4096, 11, 123456);
  m.source = "/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so";
  m.isAsync = 1;
  m.streamId = 13;
  m.deviceId = 2;
  is_u64 (ml_cupti_convert ((CUpti_Activity *) &m, &it), 1, "memory: device allocation kept");
  is_u64 (it.ev.kind, ML_EV_ALLOC, "memory: alloc");
  is_u64 (it.ev.addr, 0x7f0000001000ull, "memory: address");
  is_u64 (it.ev.size, 4096, "memory: bytes");
  is_u64 ((uint64_t) it.ev.time_ns, 123456, "memory: timestamp");
  is_u64 (it.ev.stream, 13, "memory: async stream");
  is_u64 (it.ev.device, 2, "memory: device");
  ok (it.ev.flags & ML_EVF_ASYNC, "memory: async flag");
  ok (it.ev.flags & ML_EVF_HAS_ADDR, "memory: has addr");
  is_u64 (it.correlation, 11, "memory: correlation id");
  is_str (it.site, "libtorch_cuda.so", "memory: the allocating library's file name is the call site");

  m = mem (CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 0x7f0000001000, 4096, 12, 2);
  ml_cupti_convert ((CUpti_Activity *) &m, &it);
  is_u64 (it.ev.kind, ML_EV_FREE, "memory: release is a free");
  is_u64 (it.ev.stream, 0, "memory: synchronous free has no stream (CUPTI_INVALID_STREAM_ID)");
  ok (!(it.ev.flags & ML_EVF_ASYNC), "memory: not async");

  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  is_u64 (ml_cupti_convert ((CUpti_Activity *) &m, &it), 0, "memory: pinned host memory is skipped");
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  is_u64 (ml_cupti_convert ((CUpti_Activity *) &m, &it), 1, "memory: managed memory is kept");
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID;
  is_u64 (ml_cupti_convert ((CUpti_Activity *) &m, &it), 0, "memory: invalid operation skipped");

  CUpti_ActivityMemoryPool3 p;
  memset (&p, 0, sizeof p);
  p.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  p.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
  p.address = 0x7e0000000000;
  p.size = 1 << 21;
  p.deviceId = 1;
  p.correlationId = 5;
  p.timestamp = 77;
  is_u64 (ml_cupti_convert ((CUpti_Activity *) &p, &it), 1, "pool: created kept");
  is_u64 (it.ev.kind, ML_EV_SEGMENT_ALLOC, "pool: created is a segment_alloc");
  is_u64 (it.ev.addr, 0x7e0000000000ull, "pool: base address");
  is_u64 (it.ev.size, 1 << 21, "pool: size");
  is_u64 (it.ev.device, 1, "pool: device");
  p.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED;
  ml_cupti_convert ((CUpti_Activity *) &p, &it);
  is_u64 (it.ev.kind, ML_EV_SEGMENT_FREE, "pool: destroyed is a segment_free");
  p.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
  p.minBytesToKeep = 4096;
  ml_cupti_convert ((CUpti_Activity *) &p, &it);
  is_u64 (it.ev.kind, ML_EV_MARK, "pool: trim is a mark");
  has_str (it.name, "trimmed to 4096 bytes", "pool: the mark says how far");

  CUpti_ActivityKernel10 k = kern ("gemm_kernel", 7, 500, 900, 20);
  k.deviceId = 3;
  is_u64 (ml_cupti_convert ((CUpti_Activity *) &k, &it), 1, "kernel: kept");
  is_u64 (it.ev.kind, ML_EV_KERNEL, "kernel: kind");
  is_str (it.name, "gemm_kernel", "kernel: name");
  is_u64 (it.ev.stream, 7, "kernel: stream");
  is_u64 ((uint64_t) it.ev.time_ns, 500, "kernel: start");
  is_u64 (it.ev.size, 900, "kernel: end in size");
  is_u64 (it.ev.device, 3, "kernel: device");

  static const struct { int type; MlSyncKind want; const char *what; } sk[] = {
    { CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, ML_SYNC_EVENT, "event synchronize" },
    { CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, ML_SYNC_STREAM_WAIT, "stream wait event" },
    { CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, ML_SYNC_STREAM, "stream synchronize" },
    { CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, ML_SYNC_CONTEXT, "context synchronize" },
  };
  for (size_t i = 0; i < sizeof sk / sizeof sk[0]; i++)
    {
      CUpti_ActivitySynchronization2 s = syncr (sk[i].type, 9, 4, 99, 30);
      ok (ml_cupti_convert ((CUpti_Activity *) &s, &it) == 1 && it.ev.kind == ML_EV_SYNC && it.ev.sync_kind == sk[i].want,
          "sync: %s -> %s", sk[i].what, ml_sync_kind_name (sk[i].want));
    }
  CUpti_ActivitySynchronization2 s = syncr (CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 9, 4, 99, 30);
  ml_cupti_convert ((CUpti_Activity *) &s, &it);
  is_u64 (it.ev.stream, 9, "sync: the waiting stream");
  is_u64 (it.ev.id, 4, "sync: id = the CUDA event id");
  is_u64 (it.event_sync_id, 99, "sync: cudaEventSyncId kept to find the recording stream");
  ok (!it.device_known, "sync: device comes from the context later");
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN;
  is_u64 (ml_cupti_convert ((CUpti_Activity *) &s, &it), 0, "sync: unknown type skipped");
  s = syncr (CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, 9, 4, 99, 31);
  s.returnValue = 600;   /* CUDA_ERROR_NOT_READY: a query of unfinished work */
  is_u64 (ml_cupti_convert ((CUpti_Activity *) &s, &it), 0, "sync: a call that did not succeed orders nothing, skipped");

  CUpti_ActivityCudaEvent2 e = evrec (8, 4, 99, 29);
  is_u64 (ml_cupti_convert ((CUpti_Activity *) &e, &it), 1, "cuda event: kept");
  is_u64 (it.ev.sync_kind, ML_SYNC_EVENT_RECORD, "cuda event: event_record");
  is_u64 (it.ev.stream, 8, "cuda event: recording stream");
  is_u64 (it.ev.id, 4, "cuda event: id");
  ok (it.ev.time_ns < 0, "cuda event: no time without device timestamps");

  CUpti_Activity other = { .kind = CUPTI_ACTIVITY_KIND_MEMCPY };
  is_u64 (ml_cupti_convert (&other, &it), 0, "other kinds are skipped");
}

/* A buffer as CUPTI fills it: records back to back, 8-byte aligned. */
static size_t
put (uint8_t *buf, size_t off, const void *rec, size_t size)
{
  memcpy (buf + off, rec, size);
  return off + size;
}

static void
test_walk_and_collect (void)
{
  static alignas (8) uint8_t buf[8192];
  size_t off = 0;
  /* arrival order is not issue order: CUPTI fills buffers per kind and thread */
  CUpti_ActivityKernel10 k1 = kern ("fill", 8, 300, 400, 3);
  CUpti_ActivityMemory4 a1 = mem (1, 0x1000, 1024, 1, 100);
  a1.source = "libtorch_cuda.so";
  CUpti_ActivityMemory4 a2 = mem (1, 0x2000, 512, 2, 110);
  a2.isAsync = 1;
  a2.streamId = 9;
  CUpti_ActivityCudaEvent2 er = evrec (8, 4, 99, 4);
  /* the wait names the event by another id than its record: cudaEventSyncId ties them */
  CUpti_ActivitySynchronization2 sw = syncr (CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 9, 40, 99, 5);
  CUpti_ActivityMemory4 f1 = mem (2, 0x1000, 1024, 6, 600);
  CUpti_ActivityMemory4 fx = mem (2, 0x9000, 64, 7, 610);     /* allocated before tracing */
  CUpti_ActivityMemory4 a3 = mem (1, 0x2000, 256, 8, 700);    /* its free (corr 7.5) was lost */
  a3.source = "libtorch_cuda.so";
  a2.source = "libcublasLt.so.13";
  CUpti_ActivityMemory4 host = mem (1, 0x5000, 64, 9, 710);
  host.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  CUpti_ActivityMemory4 d1 = mem (1, 0x1000, 128, 10, 720);   /* another device */
  d1.deviceId = 1;
  d1.contextId = 2;

  off = put (buf, off, &a2, sizeof a2);
  off = put (buf, off, &k1, sizeof k1);
  off = put (buf, off, &sw, sizeof sw);
  off = put (buf, off, &a1, sizeof a1);
  off = put (buf, off, &er, sizeof er);
  off = put (buf, off, &f1, sizeof f1);
  off = put (buf, off, &fx, sizeof fx);
  off = put (buf, off, &a3, sizeof a3);
  off = put (buf, off, &host, sizeof host);
  off = put (buf, off, &d1, sizeof d1);

  MlCuptiCollector *c = ml_cupti_collector_new ();
  MlError err = { 0 };
  size_t n = 0;
  ok (ml_cupti_walk_buffer (c, buf, off, &n, &err) == 0, "libcupti walks the hand-built buffer (%s)", err.msg);
  is_u64 (n, 10, "ten records walked");
  ml_cupti_collector_dropped (c, 3);
  is_u64 (ml_cupti_walk_buffer (c, buf, 0, &n, &err), 0, "an empty buffer walks");
  is_u64 (n, 0, "and yields nothing");

  MlTrace **traces = NULL;
  size_t nt = 0;
  ok (ml_cupti_collector_finish (c, &traces, &nt, &err) == 0, "finish (%s)", err.msg);
  MlCuptiStats st;
  ml_cupti_collector_stats (c, &st);
  is_u64 (st.records, 10, "stats: records");
  is_u64 (st.skipped, 1, "stats: the pageable allocation was skipped");
  is_u64 (st.dropped, 3, "stats: dropped");
  is_u64 (st.unmatched_frees, 1, "stats: one free of memory allocated before tracing");
  is_u64 (st.implied_frees, 1, "stats: one lost free implied by a reused address");
  is_u64 (nt, 2, "two devices, two traces");
  if (nt != 2)
    return;
  MlTrace *t = traces[0];
  is_u64 (t->device, 0, "first trace: device 0");
  is_u64 (traces[1]->device, 1, "second trace: device 1");
  is_u64 (traces[1]->n_events, 1, "device 1 has its one allocation");
  is_u64 (t->dropped_records, 3, "dropped records in the header");
  is_str (ml_trace_str (t, t->source), "cupti", "source is cupti");
  /* issue order: a1(1) a2(2) k1(3) er(4) sw(5) f1(6) [fx dropped] implied-free a3(8) */
  static const MlEventKind want[] = { ML_EV_ALLOC, ML_EV_ALLOC, ML_EV_KERNEL, ML_EV_SYNC, ML_EV_SYNC,
                                      ML_EV_FREE, ML_EV_FREE, ML_EV_ALLOC };
  is_u64 (t->n_events, 8, "device 0: 8 events");
  bool order_ok = t->n_events == 8;
  for (size_t i = 0; order_ok && i < 8; i++)
    order_ok = t->events[i].kind == want[i] && t->events[i].tick == i;
  ok (order_ok, "events in correlation (issue) order with ticks 0..7");
  if (t->n_events == 8)
    {
      is_u64 (t->events[0].addr, 0x1000, "first: a1");
      is_u64 (t->events[1].stream, 9, "a2 on stream 9");
      is_str (ml_trace_str (t, t->events[2].name), "fill", "kernel name interned");
      is_u64 (t->events[4].sync_kind, ML_SYNC_STREAM_WAIT, "stream wait");
      is_u64 (t->events[4].stream2, 8, "stream wait: stream2 = the stream that recorded the event");
      is_u64 (t->events[4].id, t->events[3].id, "stream wait: its id is the event record's (matched by cudaEventSyncId)");
      is_u64 (t->events[5].id, t->events[0].id, "f1 frees a1 by id");
      is_u64 (t->events[6].id, t->events[1].id, "the implied free ends a2");
      ok (t->events[7].id != t->events[1].id, "a3 gets a new id");
      ok (t->events[0].stack != 0 && t->events[0].stack == t->events[7].stack, "one call site per library");
      is_str (ml_trace_str (t, t->stacks[t->events[0].stack].site), "libtorch_cuda.so", "the site names the library");
      is_str (ml_trace_str (t, t->stacks[t->events[1].stack].site), "libcublasLt.so.13", "another library, another site");
    }
  MlBuffers *bufs = NULL;
  ok (ml_buffers_build (t, 0, &bufs, &err) == 0, "the trace builds lifetimes (%s)", err.msg);
  if (bufs)
    {
      is_u64 (bufs->n, 3, "three buffers");
      is_u64 (bufs->buf[0].end, 5, "a1 lives [0, 5)");
      ok (bufs->buf[2].flags & ML_BUF_NEVER_FREED, "a3 is never freed");
      ml_buffers_free (bufs);
    }

  /* round trip through the native format */
  char path[] = "/tmp/memlens-cupti-XXXXXX.jsonl";
  int fd = mkstemps (path, 6);
  close (fd);
  ok (ml_trace_write_jsonl (t, path, &err) == 0, "written as JSONL");
  MlTrace *back = NULL;
  ok (ml_trace_load (path, NULL, &back, &err) == 0, "and read back (%s)", err.msg);
  if (back)
    {
      is_u64 (back->dropped_records, 3, "dropped_records survives the round trip");
      is_u64 (back->n_events, 8, "all events survive");
      is_u64 (ml_trace_stream_id (back, back->events[4].stream2), 8, "stream2 survives (its value)");
      ok (back->events[1].flags & ML_EVF_ASYNC, "the async flag survives");
      is_str (ml_trace_str (back, back->stacks[back->events[7].stack].site), "libtorch_cuda.so", "call sites survive");
      ml_trace_free (back);
    }
  unlink (path);

  /* finishing twice gives the same result */
  MlTrace **again = NULL;
  size_t n2 = 0;
  ok (ml_cupti_collector_finish (c, &again, &n2, &err) == 0 && n2 == 2 && again[0]->n_events == 8,
      "finish is repeatable");
  for (size_t i = 0; i < n2; i++)
    ml_trace_free (again[i]);
  free (again);
  for (size_t i = 0; i < nt; i++)
    ml_trace_free (traces[i]);
  free (traces);
  ml_cupti_collector_free (c);

  /* a malformed record: libcupti refuses, the walk says where */
  static alignas (8) uint8_t bad[256];
  memset (bad, 0, sizeof bad);
  CUpti_ActivityMemory4 ok1 = mem (1, 0x1000, 1, 1, 1);
  memcpy (bad, &ok1, sizeof ok1);
  ((CUpti_Activity *) (bad + sizeof ok1))->kind = (CUpti_ActivityKind) 0x7ffffff0;
  c = ml_cupti_collector_new ();
  memset (&err, 0, sizeof err);
  int rc = ml_cupti_walk_buffer (c, bad, sizeof ok1 + 64, &n, &err);
  ok (rc < 0 || n == 1, "a record of an unknown kind stops the walk (rc %d, %zu walked: %s)", rc, n, err.msg);
  ml_cupti_collector_free (c);

  /* nothing kept: no traces */
  c = ml_cupti_collector_new ();
  ok (ml_cupti_collector_finish (c, &traces, &nt, &err) == 0 && nt == 0, "an empty run gives no trace");
  free (traces);
  ml_cupti_collector_free (c);
}

/* Whatever CUPTI loses or reorders, the trace builds lifetimes: random
 * allocations and frees over a few addresses, a tenth of the records
 * dropped, arrival order shuffled. */
static void
test_robust (void)
{
  uint64_t seed = 777;
  int good = 0, rounds = 200;
  uint64_t implied = 0, unmatched = 0;
  for (int r = 0; r < rounds; r++)
    {
      enum { N = 64 };
      CUpti_ActivityMemory4 recs[N];
      bool live[6] = { false };
      for (int i = 0; i < N; i++)
        {
          seed = seed * 6364136223846793005ull + 1442695040888963407ull;
          int a = (int) ((seed >> 33) % 6);
          recs[i] = mem (live[a] ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                         0x10000 * (uint64_t) (a + 1), 4096, (uint32_t) i + 1, (uint64_t) i * 10);
          recs[i].deviceId = (uint32_t) ((seed >> 50) % 2);
          live[a] = !live[a];
        }
      /* shuffle by swapping neighbours (arrival order), drop a tenth */
      for (int i = 0; i + 1 < N; i += 2)
        {
          seed = seed * 6364136223846793005ull + 1442695040888963407ull;
          if ((seed >> 40) & 1)
            {
              CUpti_ActivityMemory4 t = recs[i];
              recs[i] = recs[i + 1];
              recs[i + 1] = t;
            }
        }
      MlCuptiCollector *c = ml_cupti_collector_new ();
      for (int i = 0; i < N; i++)
        {
          seed = seed * 6364136223846793005ull + 1442695040888963407ull;
          if ((seed >> 33) % 10 == 0)
            ml_cupti_collector_dropped (c, 1);
          else
            ml_cupti_collector_add (c, (CUpti_Activity *) &recs[i]);
        }
      MlTrace **ts = NULL;
      size_t nt = 0;
      MlError err = { 0 };
      bool all = ml_cupti_collector_finish (c, &ts, &nt, &err) == 0;
      for (size_t k = 0; all && k < nt; k++)
        {
          MlBuffers *b = NULL;
          all = ml_buffers_build (ts[k], 0, &b, &err) == 0;
          if (!all)
            printf ("# round %d device %zu: %s\n", r, k, err.msg);
          ml_buffers_free (b);
        }
      MlCuptiStats st;
      ml_cupti_collector_stats (c, &st);
      implied += st.implied_frees;
      unmatched += st.unmatched_frees;
      good += all;
      for (size_t k = 0; k < nt; k++)
        ml_trace_free (ts[k]);
      free (ts);
      ml_cupti_collector_free (c);
    }
  is_u64 (good, rounds, "every trace from %d damaged record streams builds its lifetimes", rounds);
  ok (implied > 0 && unmatched > 0, "the damage exercised implied (%" PRIu64 ") and unmatched (%" PRIu64 ") frees",
      implied, unmatched);
}

int
main (void)
{
  test_convert ();
  test_walk_and_collect ();
  test_robust ();
  return tap_done ();
}
