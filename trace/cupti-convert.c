/* cupti-convert.c — CUPTI activity records to memlens events (see the header). */
#include "trace/cupti-convert.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/array.h"
#include "sim/base/sort.h"
#include "sim/base/strtab.h"
#include "sim/base/u64map.h"

static void
item_init (MlCuptiItem *it, MlEventKind kind)
{
  memset (it, 0, sizeof *it);
  it->ev.kind = (uint8_t) kind;
  it->ev.time_ns = -1;
  it->context = UINT32_MAX;
}

static uint32_t
stream_of (uint32_t cupti_stream)
{
  return cupti_stream == CUPTI_INVALID_STREAM_ID ? 0 : cupti_stream;
}

static int64_t
time_of (uint64_t ns)
{
  return ns == 0 || ns > (uint64_t) INT64_MAX ? -1 : (int64_t) ns;
}

static int
convert_memory (const CUpti_ActivityMemory4 *m, MlCuptiItem *out)
{
  switch (m->memoryKind)
    {
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      break;
    default:       /* host memory, static module memory: not the device timeline */
      return 0;
    }
  MlEventKind kind;
  if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
    kind = ML_EV_ALLOC;
  else if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
    kind = ML_EV_FREE;
  else
    return 0;
  item_init (out, kind);
  out->ev.addr = m->address;
  out->ev.size = m->bytes;
  out->ev.time_ns = time_of (m->timestamp);
  out->ev.device = m->deviceId;
  out->ev.flags = ML_EVF_HAS_ADDR;
  if (m->isAsync)
    {
      out->ev.flags |= ML_EVF_ASYNC;
      out->ev.stream = stream_of (m->streamId);
    }
  out->correlation = m->correlationId;
  out->context = m->contextId;
  out->device_known = true;
  if (kind == ML_EV_ALLOC && m->source && *m->source)
    {
      const char *slash = strrchr (m->source, '/');
      out->site = slash && slash[1] ? slash + 1 : m->source;   /* the library's file name */
    }
  return 1;
}

static int
convert_pool (const CUpti_ActivityMemoryPool3 *p, MlCuptiItem *out)
{
  switch (p->memoryPoolOperationType)
    {
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED:
      item_init (out, ML_EV_SEGMENT_ALLOC);
      break;
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED:
      item_init (out, ML_EV_SEGMENT_FREE);
      break;
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED:
      item_init (out, ML_EV_MARK);
      snprintf (out->text, sizeof out->text, "memory pool 0x%" PRIx64 " trimmed to %" PRIu64 " bytes",
                p->address, (uint64_t) p->minBytesToKeep);
      out->name = out->text;
      break;
    default:
      return 0;
    }
  if (out->ev.kind != ML_EV_MARK)
    {
      out->ev.addr = p->address;
      out->ev.size = p->size;
      out->ev.flags = ML_EVF_HAS_ADDR;
    }
  out->ev.time_ns = time_of (p->timestamp);
  out->ev.device = p->deviceId;
  out->correlation = p->correlationId;
  out->device_known = true;
  return 1;
}

static int
convert_kernel (const CUpti_ActivityKernel10 *k, MlCuptiItem *out)
{
  item_init (out, ML_EV_KERNEL);
  out->ev.stream = stream_of (k->streamId);
  out->ev.time_ns = time_of (k->start);
  out->ev.size = k->end;          /* kernel: size holds the end, ns */
  out->ev.device = k->deviceId;
  out->name = k->name;
  out->correlation = k->correlationId;
  out->context = k->contextId;
  out->device_known = true;
  return 1;
}

static int
convert_sync (const CUpti_ActivitySynchronization2 *s, MlCuptiItem *out)
{
  MlSyncKind sk;
  if (s->returnValue != 0)   /* a query that found the work unfinished orders nothing */
    return 0;
  switch (s->type)
    {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:   sk = ML_SYNC_EVENT; break;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:   sk = ML_SYNC_STREAM_WAIT; break;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:  sk = ML_SYNC_STREAM; break;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: sk = ML_SYNC_CONTEXT; break;
    default: return 0;
    }
  item_init (out, ML_EV_SYNC);
  out->ev.sync_kind = (uint8_t) sk;
  out->ev.stream = stream_of (s->streamId);
  out->ev.time_ns = time_of (s->start);
  if (sk == ML_SYNC_EVENT || sk == ML_SYNC_STREAM_WAIT)
    {
      out->ev.id = s->cudaEventId;
      out->ev.flags = ML_EVF_HAS_ID;
      out->event_sync_id = s->cudaEventSyncId;
    }
  out->correlation = s->correlationId;
  out->context = s->contextId;
  return 1;
}

static int
convert_event (const CUpti_ActivityCudaEvent2 *e, MlCuptiItem *out)
{
  item_init (out, ML_EV_SYNC);
  out->ev.sync_kind = ML_SYNC_EVENT_RECORD;
  out->ev.stream = stream_of (e->streamId);
  out->ev.id = e->eventId;
  out->ev.flags = ML_EVF_HAS_ID;
  out->ev.time_ns = time_of (e->deviceTimestamp);
  out->ev.device = e->deviceId;
  out->event_sync_id = e->cudaEventSyncId;
  out->correlation = e->correlationId;
  out->context = e->contextId;
  out->device_known = true;
  return 1;
}

int
ml_cupti_convert (const CUpti_Activity *r, MlCuptiItem *out)
{
  switch (r->kind)
    {
    case CUPTI_ACTIVITY_KIND_MEMORY2:           return convert_memory ((const CUpti_ActivityMemory4 *) r, out);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL:       return convert_pool ((const CUpti_ActivityMemoryPool3 *) r, out);
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:            return convert_kernel ((const CUpti_ActivityKernel10 *) r, out);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:   return convert_sync ((const CUpti_ActivitySynchronization2 *) r, out);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:        return convert_event ((const CUpti_ActivityCudaEvent2 *) r, out);
    default:                                    return 0;
    }
}

/* ---- the collector ---- */

typedef struct {
  MlEvent  ev;
  uint64_t key;            /* sort key: correlation id (0 inherits the previous) */
  uint64_t event_sync_id;
  uint32_t context;
  uint32_t name;           /* in the collector's string table */
  uint32_t site;           /* likewise: the allocating library */
  bool     device_known;
} Item;

struct MlCuptiCollector {
  Item        *items;
  size_t       n, cap;
  MlStrtab    *names;
  uint64_t     last_key;
  MlCuptiStats stats;
};

MlCuptiCollector *
ml_cupti_collector_new (void)
{
  MlCuptiCollector *c = calloc (1, sizeof *c);
  if (!c)
    return NULL;
  c->names = ml_strtab_new ();
  if (!c->names)
    {
      free (c);
      return NULL;
    }
  return c;
}

void
ml_cupti_collector_free (MlCuptiCollector *c)
{
  if (!c)
    return;
  free (c->items);
  ml_strtab_free (c->names);
  free (c);
}

int
ml_cupti_collector_add_item (MlCuptiCollector *c, const MlCuptiItem *it)
{
  if (ML_ARRAY_RESERVE (c->items, c->n, c->cap, 1024) < 0)
    return ML_ENOMEM;
  Item *dst = &c->items[c->n];
  memset (dst, 0, sizeof *dst);
  dst->ev = it->ev;
  dst->ev.name = 0;
  dst->ev.stack = 0;
  dst->event_sync_id = it->event_sync_id;
  dst->context = it->context;
  dst->device_known = it->device_known;
  if (it->name && *it->name)
    {
      dst->name = ml_strtab_intern0 (c->names, it->name);
      if (dst->name == UINT32_MAX)
        return ML_ENOMEM;
    }
  if (it->site && *it->site)
    {
      dst->site = ml_strtab_intern0 (c->names, it->site);
      if (dst->site == UINT32_MAX)
        return ML_ENOMEM;
    }
  if (it->correlation)
    c->last_key = it->correlation;
  dst->key = c->last_key;
  c->n++;
  c->stats.kept++;
  return 0;
}

int
ml_cupti_collector_add (MlCuptiCollector *c, const CUpti_Activity *record)
{
  MlCuptiItem it;
  c->stats.records++;
  if (!ml_cupti_convert (record, &it))
    {
      c->stats.skipped++;
      return 0;
    }
  return ml_cupti_collector_add_item (c, &it);
}

void
ml_cupti_collector_dropped (MlCuptiCollector *c, uint64_t n)
{
  c->stats.dropped += n;
}

void
ml_cupti_collector_stats (const MlCuptiCollector *c, MlCuptiStats *stats)
{
  *stats = c->stats;
}

/* Per device: its trace and the live allocations by address. */
typedef struct {
  uint32_t  device;
  MlTrace  *trace;
  MlU64Map  live;     /* addr -> id */
  MlU64Map  sites;    /* collector string index -> stack index */
  uint32_t  next_id;
} Dev;

static Dev *
dev_get (Dev **devs, size_t *n, uint32_t device, uint64_t dropped)
{
  for (size_t i = 0; i < *n; i++)
    if ((*devs)[i].device == device)
      return &(*devs)[i];
  Dev *p = realloc (*devs, (*n + 1) * sizeof *p);
  if (!p)
    return NULL;
  *devs = p;
  Dev *d = &p[*n];
  memset (d, 0, sizeof *d);
  d->device = device;
  d->trace = ml_trace_new ();
  if (!d->trace)
    return NULL;
  d->trace->source = ml_strtab_intern0 (d->trace->strings, "cupti");
  d->trace->device = device;
  d->trace->dropped_records = dropped;
  ml_u64map_init (&d->live);
  ml_u64map_init (&d->sites);
  (*n)++;
  return d;
}

/* The stack (a call site without frames) for the collector's string
 * @site: one per distinct site and trace. */
static int
site_stack (Dev *d, const MlStrtab *names, uint32_t site, uint32_t *stack)
{
  uint32_t idx;
  if (ml_u64map_get (&d->sites, site, &idx))
    {
      *stack = idx;
      return 0;
    }
  uint32_t s = ml_strtab_intern0 (d->trace->strings, ml_strtab_get (names, site));
  if (s == UINT32_MAX)
    return ML_ENOMEM;
  idx = ml_trace_add_stack (d->trace, s, NULL, 0);
  if (idx == UINT32_MAX || ml_u64map_put (&d->sites, site, idx) < 0)
    return ML_ENOMEM;
  *stack = idx;
  return 0;
}

static int
emit (Dev *d, const MlEvent *ev, const char *name)
{
  MlEvent e = *ev;
  e.tick = d->trace->n_events;
  e.device = d->device;
  if (name && *name)
    {
      e.name = ml_strtab_intern0 (d->trace->strings, name);
      if (e.name == UINT32_MAX)
        return ML_ENOMEM;
    }
  if (!ml_trace_append (d->trace, &e))
    return ML_ENOMEM;
  if ((e.kind == ML_EV_ALLOC || e.kind == ML_EV_SEGMENT_ALLOC) && (e.flags & ML_EVF_HAS_ADDR))
    d->trace->has_addrs = true;
  return 0;
}

int
ml_cupti_collector_finish (MlCuptiCollector *c, MlTrace ***traces, size_t *n_traces, MlError *err)
{
  uint32_t *order = malloc ((c->n ? c->n : 1) * sizeof *order);
  MlU64Map ctxdev, syncstream, evstream;   /* context -> device, sync id -> item, event id -> stream */
  ml_u64map_init (&ctxdev);
  ml_u64map_init (&syncstream);
  ml_u64map_init (&evstream);
  Dev *devs = NULL;
  size_t n_devs = 0;
  MlTrace **out = NULL;
  if (!order)
    goto oom;
  for (size_t i = 0; i < c->n; i++)
    order[i] = (uint32_t) i;
  if (c->n && ml_sort_indexes_by_key (order, c->n, &c->items[0].key, sizeof (Item)) < 0)
    goto oom;

  /* what one record cannot know: a context's device, an event's stream */
  bool have_first = false;
  uint32_t first_device = 0;
  for (size_t k = 0; k < c->n; k++)
    {
      const Item *it = &c->items[order[k]];
      if (!it->device_known)
        continue;
      if (!have_first)
        {
          first_device = it->ev.device;
          have_first = true;
        }
      if (it->context != UINT32_MAX && ml_u64map_put (&ctxdev, it->context, it->ev.device) < 0)
        goto oom;
      if (it->ev.kind == ML_EV_SYNC && it->ev.sync_kind == ML_SYNC_EVENT_RECORD && it->event_sync_id
          && ml_u64map_put (&syncstream, it->event_sync_id, order[k]) < 0)
        goto oom;
    }

  c->stats.unmatched_frees = c->stats.implied_frees = 0;
  memset (c->stats.by_kind, 0, sizeof c->stats.by_kind);
  for (size_t k = 0; k < c->n; k++)
    {
      const Item *it = &c->items[order[k]];
      MlEvent ev = it->ev;
      if (!it->device_known)
        {
          uint32_t dv;
          ev.device = it->context != UINT32_MAX && ml_u64map_get (&ctxdev, it->context, &dv) ? dv : first_device;
        }
      Dev *d = dev_get (&devs, &n_devs, ev.device, c->stats.dropped);
      if (!d)
        goto oom;
      const char *name = it->name ? ml_strtab_get (c->names, it->name) : NULL;
      if (ev.kind == ML_EV_SYNC && ev.sync_kind == ML_SYNC_EVENT_RECORD)
        {
          if (ml_u64map_put (&evstream, ev.id, ev.stream) < 0)
            goto oom;
        }
      else if (ev.kind == ML_EV_SYNC && (ev.sync_kind == ML_SYNC_STREAM_WAIT || ev.sync_kind == ML_SYNC_EVENT))
        {
          /* the event record this waits for: by cudaEventSyncId, which CUPTI
           * gives both records for exactly this; else the latest record of
           * the same event id. Its id becomes ours, so the two always match. */
          uint32_t r, s;
          if (it->event_sync_id && ml_u64map_get (&syncstream, it->event_sync_id, &r))
            {
              ev.id = c->items[r].ev.id;
              if (ev.sync_kind == ML_SYNC_STREAM_WAIT)
                ev.stream2 = c->items[r].ev.stream;
            }
          else if (ev.sync_kind == ML_SYNC_STREAM_WAIT && ml_u64map_get (&evstream, ev.id, &s))
            ev.stream2 = s;
        }
      else if (ev.kind == ML_EV_ALLOC)
        {
          uint32_t old;
          if (ml_u64map_get (&d->live, ev.addr, &old))
            {
              /* the free was lost (dropped record): end the old buffer here */
              MlEvent fr = { .kind = ML_EV_FREE, .id = old, .addr = ev.addr, .time_ns = ev.time_ns,
                             .flags = ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, .stream = ev.stream };
              if (emit (d, &fr, NULL) < 0)
                goto oom;
              c->stats.implied_frees++;
              c->stats.by_kind[ML_EV_FREE]++;
            }
          ev.id = d->next_id++;
          ev.flags |= ML_EVF_HAS_ID;
          if (it->site && site_stack (d, c->names, it->site, &ev.stack) < 0)
            goto oom;
          if (ml_u64map_put (&d->live, ev.addr, (uint32_t) ev.id) < 0)
            goto oom;
        }
      else if (ev.kind == ML_EV_FREE)
        {
          uint32_t id;
          if (!ml_u64map_get (&d->live, ev.addr, &id))
            {
              c->stats.unmatched_frees++;   /* allocated before tracing began, or its record was lost */
              continue;
            }
          ml_u64map_del (&d->live, ev.addr);
          ev.id = id;
          ev.flags |= ML_EVF_HAS_ID;
          ev.size = 0;
        }
      if (emit (d, &ev, name) < 0)
        goto oom;
      c->stats.by_kind[ev.kind]++;
    }

  out = calloc (n_devs ? n_devs : 1, sizeof *out);
  if (!out)
    goto oom;
  free (order);
  ml_u64map_clear (&ctxdev);
  ml_u64map_clear (&syncstream);
  ml_u64map_clear (&evstream);
  for (size_t i = 0; i < n_devs; i++)
    {
      out[i] = devs[i].trace;
      ml_u64map_clear (&devs[i].live);
      ml_u64map_clear (&devs[i].sites);
    }
  free (devs);
  *traces = out;
  *n_traces = n_devs;
  return 0;

oom:
  free (order);
  ml_u64map_clear (&ctxdev);
  ml_u64map_clear (&syncstream);
  ml_u64map_clear (&evstream);
  for (size_t i = 0; i < n_devs; i++)
    {
      ml_trace_free (devs[i].trace);
      ml_u64map_clear (&devs[i].live);
      ml_u64map_clear (&devs[i].sites);
    }
  free (devs);
  return ml_error_set (err, ML_ENOMEM, "out of memory while building the trace (%zu records)", c->n);
}
