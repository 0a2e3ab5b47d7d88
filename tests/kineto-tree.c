/* kineto-tree.c — the Kineto reader as it was before it streamed: the
 * whole document parsed into a cJSON tree, then walked. Kept only as the
 * reference of tests/test-kineto-stream.c, which checks that the
 * streaming reader (sim/formats/kineto.c) gives the same trace, event for
 * event, on every Kineto fixture. Not built into memlens. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "sim/base/u64map.h"
#include "sim/formats/load.h"

int ref_trace_from_kineto (const cJSON *root, const char *name, const MlLoadOptions *opts, MlTrace **out, MlError *err);

typedef struct {
  double   ts;
  size_t   order;
  size_t   index;           /* in traceEvents */
  int64_t  bytes;
  uint64_t addr;
  uint32_t stream;          /* the event's "Stream" arg; 0 when it has none (tid is a thread) */
  double   total_alloc, total_reserved;   /* -1: not recorded */
} Mem;

static int
cmp_mem (const void *a, const void *b)
{
  const Mem *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

static bool
num_arg (const cJSON *args, const char *key, double *out)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (args, key);
  if (cJSON_IsNumber (v))
    {
      *out = v->valuedouble;
      return true;
    }
  if (cJSON_IsString (v) && v->valuestring)
    {
      char *end;
      errno = 0;
      double d = (double) strtoull (v->valuestring, &end, 0);
      if (*end == 0 && end != v->valuestring && errno == 0)
        {
          *out = d;
          return true;
        }
    }
  return false;
}

/* Where an event came from (MlTrace.event_origin): its traceEvents
 * index + 1; ORG_BEFORE marks the bytes allocated before the trace, told
 * by the Total Allocated of the event at the index. */
#define ORG_BEFORE (UINT64_C (1) << 63)

static const char *
origin_text (const MlTrace *t, size_t i, uint64_t o, char *buf, size_t len)
{
  const MlEvent *ev = &t->events[i];
  uint64_t index = (o & ~ORG_BEFORE) - 1;
  if (o & ORG_BEFORE)
    snprintf (buf, len, "the bytes allocated before the trace (\"Total Allocated\" of traceEvents[%" PRIu64 "])", index);
  else if (ev->kind == ML_EV_ALLOC && ev->tick == 0)
    snprintf (buf, len, "the block at 0x%" PRIx64 " from before the trace, freed by traceEvents[%" PRIu64 "]", ev->addr, index);
  else
    snprintf (buf, len, "traceEvents[%" PRIu64 "] ([memory] at Addr 0x%" PRIx64 ")", index, ev->addr);
  return buf;
}

static int
append (MlTrace *tr, const MlEvent *ev, uint64_t origin)
{
  return ml_trace_append (tr, ev) && ml_trace_set_origin (tr, origin) == 0 ? 0 : ML_ENOMEM;
}

/* The trace's note that @n memory events met a block in the wrong state
 * (@what: which state, and what was done), naming the first, @m. */
static int
lost_events_note (MlTrace *tr, const Mem *m, const char *what, size_t n)
{
  char note[512];
  snprintf (note, sizeof note, "traceEvents[%zu] ([memory] Bytes %" PRId64 " at Addr 0x%" PRIx64 "): the block there is "
            "%s (%zu such event%s in all)", m->index, m->bytes, m->addr, what, n, n == 1 ? "" : "s");
  return ml_trace_add_note (tr, note) < 0 ? ML_ENOMEM : 0;
}

/* The memory event's device: 0 = CPU, else CUDA (1) with its id. */
static void
mem_device (const cJSON *args, int *type, int *id)
{
  double d;   /* out of int's range (or NaN) is no device: -1 */
  *type = num_arg (args, "Device Type", &d) ? (d >= 0 && d < 65536 ? (int) d : -1) : 0;
  *id = num_arg (args, "Device Id", &d) ? (d >= 0 && d < 65536 ? (int) d : -1) : 0;
}

int
ref_trace_from_kineto (const cJSON *root, const char *name, const MlLoadOptions *opts, MlTrace **out, MlError *err)
{
  const cJSON *evs = cJSON_IsObject (root) ? cJSON_GetObjectItemCaseSensitive (root, "traceEvents") : root;
  if (!cJSON_IsArray (evs))
    return ml_error_set (err, ML_EINPUT, "%s: a Kineto / Chrome trace needs a \"traceEvents\" array", name);
  int n_ev = cJSON_GetArraySize (evs);
  /* pick the device: the CUDA one with the most memory events */
  size_t counts[65] = { 0 };   /* [0] CPU, [1 + id] CUDA id < 64 */
  size_t n_mem = 0;
  const cJSON *e;
  cJSON_ArrayForEach (e, evs)
    {
      const char *nm = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (e, "name"));
      const cJSON *args = cJSON_GetObjectItemCaseSensitive (e, "args");
      if (!nm || strcmp (nm, "[memory]") != 0 || !cJSON_IsObject (args))
        continue;
      int type, id;
      mem_device (args, &type, &id);
      if (type == 0)
        counts[0]++;
      else if (id >= 0 && id < 64)
        counts[1 + id]++;
      n_mem++;
    }
  int want_type = 1, want_id = opts->device;
  if (want_id < 0)
    {
      size_t best = 0;
      for (int d = 0; d < 64; d++)
        if (counts[1 + d] > best)
          best = counts[1 + d], want_id = d;
      if (want_id < 0)
        want_type = 0, want_id = 0;
    }
  Mem *mem = calloc (n_mem ? n_mem : 1, sizeof *mem);
  if (!mem)
    return ml_error_set (err, ML_ENOMEM, "%s: out of memory", name);
  size_t k = 0, idx = 0;
  int rc = 0;
  cJSON_ArrayForEach (e, evs)
    {
      idx++;
      const char *nm = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (e, "name"));
      const cJSON *args = cJSON_GetObjectItemCaseSensitive (e, "args");
      if (!nm || strcmp (nm, "[memory]") != 0 || !cJSON_IsObject (args))
        continue;
      int type, id;
      mem_device (args, &type, &id);
      if ((type != 0) != (want_type != 0) || (type != 0 && id != want_id))
        continue;
      double bytes, addr, ts = 0, stream = 0;
      if (!num_arg (args, "Bytes", &bytes) || !num_arg (args, "Addr", &addr))
        {
          rc = ml_error_set (err, ML_EINPUT, "%s: traceEvents[%zu]: a [memory] event needs numeric args \"Bytes\" and \"Addr\"",
                             name, idx - 1);
          break;
        }
      /* whole numbers only: a Bytes of 0.5 is no allocation to round down to 0 */
      bool bad_bytes = !isfinite (bytes) || fabs (bytes) > 9.0e18 || bytes != floor (bytes);
      if (bad_bytes || !isfinite (addr) || addr < 0 || addr > 1.8e19 || addr != floor (addr))
        {
          rc = ml_error_set (err, ML_EINPUT, "%s: traceEvents[%zu]: %s %.17g is not an integer %s", name, idx - 1,
                             bad_bytes ? "Bytes" : "Addr", bad_bytes ? bytes : addr,
                             bad_bytes ? "from -9e18 to 9e18" : "from 0 to 1.8e19");
          break;
        }
      const cJSON *t = cJSON_GetObjectItemCaseSensitive (e, "ts");
      if (cJSON_IsNumber (t))
        ts = t->valuedouble;
      else if (cJSON_IsString (t) && t->valuestring)
        ts = strtod (t->valuestring, NULL);
      /* tid is the CPU thread that asked; a stream only when the event names one */
      if (!num_arg (args, "Stream", &stream) || !(stream >= 0 && stream < 4294967296.0))
        stream = 0;
      if (!isfinite (ts))
        ts = 0;   /* "nan" / "inf" strings: no time, order kept */
      double ta, tr;
      if (!num_arg (args, "Total Allocated", &ta) || !isfinite (ta) || ta < 0 || ta > 1.8e19)
        ta = -1;
      if (!num_arg (args, "Total Reserved", &tr) || !isfinite (tr) || tr < 0 || tr > 1.8e19)
        tr = -1;
      mem[k] = (Mem) { ts, k, idx - 1, (int64_t) bytes, (uint64_t) addr, (uint32_t) stream, ta, tr };
      k++;
    }
  if (rc < 0)
    {
      free (mem);
      return rc;
    }
  qsort (mem, k, sizeof *mem, cmp_mem);
  (void) n_ev;

  MlTrace *tr = ml_trace_new ();
  MlU64Map live;
  ml_u64map_init (&live);
  if (!tr)
    {
      free (mem);
      return ml_error_set (err, ML_ENOMEM, "%s: out of memory", name);
    }
  tr->source = ml_strtab_intern0 (tr->strings, "kineto");
  tr->origin_text = origin_text;
  tr->device = (uint32_t) want_id;
  tr->has_addrs = true;
  /* the device's memory: deviceProperties[].totalGlobalMem of its id */
  const cJSON *props = cJSON_IsObject (root) ? cJSON_GetObjectItemCaseSensitive (root, "deviceProperties") : NULL, *pr;
  const cJSON *plist = cJSON_IsArray (props) ? props : NULL;
  cJSON_ArrayForEach (pr, plist)
    {
      double id, total;
      if (want_type && num_arg (pr, "id", &id) && id == want_id && num_arg (pr, "totalGlobalMem", &total) && total > 0
          && total < 1.8e19)
        tr->device_total = (uint64_t) total;
    }
  /* Total Reserved / Total Allocated, as the profiler recorded them */
  MlDeviceInfo info = { .device = (uint32_t) want_id, .entries = k };
  bool have_reserved = false;
  for (size_t i = 0; i < k; i++)
    {
      if (mem[i].total_reserved >= 0)
        {
          uint64_t r = (uint64_t) mem[i].total_reserved;
          if (!have_reserved)
            info.reserved_start = r;
          have_reserved = true;
          info.reserved_end = r;
          if (r > info.reserved_max)
            info.reserved_max = r;
        }
      if (mem[i].total_alloc >= 0 && (uint64_t) mem[i].total_alloc > info.allocated_max)
        info.allocated_max = (uint64_t) mem[i].total_alloc;
      info.actions[mem[i].bytes > 0 ? ML_EV_ALLOC : ML_EV_FREE] += mem[i].bytes != 0;
    }
  if (have_reserved || info.allocated_max)
    {
      if (!(tr->devices = calloc (1, sizeof *tr->devices)))
        rc = ml_error_set (err, ML_ENOMEM, "%s: out of memory", name);
      else
        {
          tr->devices[0] = info;
          tr->n_devices = 1;
        }
    }
  /* frees of addresses allocated before the trace: buffers live from
   * tick 0; an address is 1 while allocated, 2 once freed (a second free
   * of it is no second buffer from before the trace) */
  uint64_t next_id = 1;
  for (size_t i = 0; i < k && rc == 0; i++)
    {
      uint32_t v;
      if (mem[i].bytes > 0)
        {
          if (ml_u64map_put (&live, mem[i].addr, 1) < 0)
            rc = ml_error_set (err, ML_ENOMEM, "%s: out of memory", name);
        }
      else if (mem[i].bytes < 0 && ml_u64map_get (&live, mem[i].addr, &v))
        {
          if (v == 1 && ml_u64map_put (&live, mem[i].addr, 2) < 0)
            rc = ml_error_set (err, ML_ENOMEM, "%s: out of memory", name);
        }
      else if (mem[i].bytes < 0)
        {
          MlEvent ev = { .tick = 0, .id = next_id++, .addr = mem[i].addr, .size = (uint64_t) -mem[i].bytes,
                         .time_ns = -1, .kind = ML_EV_ALLOC, .flags = ML_EVF_HAS_ID | ML_EVF_HAS_ADDR,
                         .device = tr->device };
          if (append (tr, &ev, mem[i].index + 1) < 0 || ml_u64map_put (&live, mem[i].addr, 2) < 0)
            rc = ml_error_set (err, ML_ENOMEM, "%s: out of memory", name);
        }
    }
  /* memory allocated before the first event that the trace never frees:
   * the first event's Total Allocated, less its own bytes, less the
   * tick-0 buffers above */
  if (rc == 0 && k && mem[0].total_alloc >= 0)
    {
      /* in double, as the profiler wrote it: Total Allocated may be up to
       * 1.8e19 and the sizes may add up past what an int64 holds */
      double before = mem[0].total_alloc - (double) mem[0].bytes;
      for (size_t i = 0; i < tr->n_events; i++)
        before -= (double) tr->events[i].size;
      if (before >= 1)
        {
          MlEvent ev = { .tick = 0, .id = next_id++, .size = (uint64_t) before, .time_ns = -1, .kind = ML_EV_ALLOC,
                         .flags = ML_EVF_HAS_ID, .device = tr->device,
                         .name = ml_strtab_intern0 (tr->strings, "allocated before the trace") };
          if (ev.name == UINT32_MAX || append (tr, &ev, ORG_BEFORE | (mem[0].index + 1)) < 0)
            rc = ml_error_set (err, ML_ENOMEM, "%s: out of memory", name);
        }
    }
  /* the ids of the tick-0 buffers, by address */
  ml_u64map_clear (&live);
  ml_u64map_init (&live);
  for (size_t i = 0; i < tr->n_events && rc == 0; i++)
    if ((tr->events[i].flags & ML_EVF_HAS_ADDR) && ml_u64map_put (&live, tr->events[i].addr, (uint32_t) tr->events[i].id) < 0)
      rc = ml_error_set (err, ML_ENOMEM, "%s: out of memory", name);
  /* Total Reserved as steps: the first value from tick 0 (before the
   * trace it is unknown), then each change at its event's tick */
  if (rc == 0 && have_reserved && !(tr->reserved_steps = calloc (k + 1, sizeof *tr->reserved_steps)))
    rc = ml_error_set (err, ML_ENOMEM, "%s: out of memory", name);
  if (rc == 0 && have_reserved)
    {
      tr->reserved_steps[0].tick = 0;
      tr->reserved_steps[0].bytes = info.reserved_start;
      tr->n_reserved_steps = 1;
    }
  uint64_t tick = 1;
  /* events the walk reads past, with a warning (entries missing inside
   * the trace): a free of an address already free, an allocation over a
   * live one; how many, and the first of each */
  size_t n_refree = 0, n_realloc = 0;
  const Mem *first_refree = NULL, *first_realloc = NULL;
  for (size_t i = 0; i < k && rc == 0; i++)
    {
      const Mem *m = &mem[i];
      uint32_t id;
      if (have_reserved && m->bytes != 0 && m->total_reserved >= 0
          && (uint64_t) m->total_reserved != tr->reserved_steps[tr->n_reserved_steps - 1].bytes)
        {
          /* the value after this event: from the tick its (last) trace
           * event takes; an allocation over a live address frees it first */
          bool refree = m->bytes > 0 && ml_u64map_get (&live, m->addr, &id);
          tr->reserved_steps[tr->n_reserved_steps].tick = tick + refree;
          tr->reserved_steps[tr->n_reserved_steps++].bytes = (uint64_t) m->total_reserved;
        }
      int64_t ns = m->ts > 0 && m->ts < 9.0e12 ? (int64_t) llround (m->ts * 1000.0) : -1;
      MlEvent ev = { .addr = m->addr, .time_ns = ns, .stream = m->stream, .flags = ML_EVF_HAS_ID | ML_EVF_HAS_ADDR,
                     .device = tr->device };
      if (m->bytes == 0)
        continue;
      if (m->bytes > 0)
        {
          if (ml_u64map_get (&live, m->addr, &id))
            {
              /* allocated again while live: the trace lost a free */
              if (!n_realloc++)
                first_realloc = m;
              ev.tick = tick++;
              ev.kind = ML_EV_FREE;
              ev.id = id;
              if (append (tr, &ev, m->index + 1) < 0)
                rc = ML_ENOMEM;
            }
          if (next_id >= UINT32_MAX)
            {
              rc = ml_error_set (err, ML_EINPUT, "%s: more than 2^32 allocations", name);
              break;
            }
          ev.tick = tick++;
          ev.kind = ML_EV_ALLOC;
          ev.id = next_id;
          ev.size = (uint64_t) m->bytes;
          if (ml_u64map_put (&live, m->addr, (uint32_t) next_id++) < 0 || append (tr, &ev, m->index + 1) < 0)
            rc = ML_ENOMEM;
        }
      else if (ml_u64map_get (&live, m->addr, &id))
        {
          ml_u64map_del (&live, m->addr);
          ev.tick = tick++;
          ev.kind = ML_EV_FREE;
          ev.id = id;
          ev.size = (uint64_t) -m->bytes;
          if (append (tr, &ev, m->index + 1) < 0)
            rc = ML_ENOMEM;
        }
      else if (!n_refree++)
        first_refree = m;   /* freed already, no allocation since */
    }
  if (rc == 0 && n_refree)
    rc = lost_events_note (tr, first_refree, "already free, with no allocation since its last free: the trace lost "
                           "events; the event is ignored", n_refree);
  if (rc == 0 && n_realloc)
    rc = lost_events_note (tr, first_realloc, "still allocated, with no free since: the trace lost events; the old "
                           "block ends here", n_realloc);
  ml_u64map_clear (&live);
  free (mem);
  if (rc == ML_ENOMEM)
    ml_error_set (err, rc, "%s: out of memory", name);
  if (rc < 0)
    {
      ml_trace_free (tr);
      return rc;
    }
  *out = tr;
  return 0;
}

