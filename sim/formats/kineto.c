/* kineto.c — a Kineto / Chrome trace's [memory] events as a trace: the
 * device, the order by ts, allocations paired with their frees. The JSON
 * is read as a stream by kineto-stream.c; this file sees only the
 * [memory] events it kept. */
#include "sim/formats/kineto.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jsonutil.h"
#include "sim/base/u64map.h"
#include "sim/formats/graph.h"
#include "sim/formats/kineto-private.h"

bool
ml_kineto_sniff (const unsigned char *h, size_t len)
{
  size_t i = 0;
  while (i < len && (h[i] == ' ' || h[i] == '\n' || h[i] == '\r' || h[i] == '\t'))
    i++;
  return i < len && h[i] == '{' && memmem (h, len, "\"traceEvents\"", 13) != NULL;
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
lost_events_note (MlTrace *tr, const MlKinMem *m, const char *what, size_t n)
{
  char note[512];
  snprintf (note, sizeof note, "traceEvents[%" PRIu64 "] ([memory] Bytes %" PRId64 " at Addr 0x%" PRIx64 "): the block there is "
            "%s (%zu such event%s in all)", m->index, m->bytes, m->addr, what, n, n == 1 ? "" : "s");
  return ml_trace_add_note (tr, note) < 0 ? ML_ENOMEM : 0;
}

/* ---- the device ---- */

/* "CUDA device 3", "the CPU", "device 3 (Device Type 12)". */
static const char *
dev_name (const MlKinDev *d, char *buf, size_t len)
{
  if (d->cpu)
    snprintf (buf, len, "the CPU");
  else if (d->id == INT64_MIN)
    snprintf (buf, len, "a device whose \"Device Id\" is not an integer");
  else if (d->type == 1)
    snprintf (buf, len, "CUDA device %" PRId64, d->id);
  else if (d->type == INT64_MIN)
    snprintf (buf, len, "device %" PRId64 " (\"Device Type\" not an integer)", d->id);
  else
    snprintf (buf, len, "device %" PRId64 " (Device Type %" PRId64 ")", d->id, d->type);
  return buf;
}

/* The devices of @doc, most events first: "CUDA device 0 (812 [memory]
 * events), the CPU (96)", the first @max. */
static void
dev_list (const MlKinDoc *doc, char *buf, size_t len)
{
  size_t n = 0, shown = 0;
  bool *done = calloc (doc->n_devs ? doc->n_devs : 1, sizeof *done);
  buf[0] = 0;
  for (size_t k = 0; done && k < doc->n_devs && shown < 8; k++, shown++)
    {
      size_t best = SIZE_MAX;
      for (size_t d = 0; d < doc->n_devs; d++)
        if (!done[d] && (best == SIZE_MAX || doc->devs[d].events > doc->devs[best].events))
          best = d;
      done[best] = true;
      char name[96];
      uint64_t ev = doc->devs[best].events;
      n += (size_t) snprintf (buf + n, n < len ? len - n : 0, "%s%s (%" PRIu64 "%s)", k ? ", " : "",
                              dev_name (&doc->devs[best], name, sizeof name), ev, k ? "" : ev == 1 ? " [memory] event" : " [memory] events");
    }
  if (doc->n_devs > shown)
    snprintf (buf + (n < len ? n : len - 1), n < len ? len - n : 1, " and %zu more", doc->n_devs - shown);
  free (done);
}

static bool
dev_exists (const MlKinDev *d)
{
  return d->cpu || (d->id >= 0 && d->id <= ML_DEVICE_MAX);
}

/* The device to read: --device N (an accelerator), else the accelerator
 * with the most [memory] events, else the CPU. Its slot in doc->devs, or
 * an error that lists the devices the file holds. */
static int
pick_device (const MlKinDoc *doc, const char *path, const MlLoadOptions *opts, MlTrace *tr, size_t *out, MlError *err)
{
  char list[1024], name[96];
  size_t best = SIZE_MAX, with_events = 0;
  dev_list (doc, list, sizeof list);
  for (size_t d = 0; d < doc->n_devs; d++)
    {
      const MlKinDev *dv = &doc->devs[d];
      with_events += dv->events > 0;
      if (opts->device >= 0 ? !dv->cpu && dv->id == opts->device
                            : dev_exists (dv) && !dv->cpu
                                && (best == SIZE_MAX || dv->events > doc->devs[best].events
                                    || (dv->events == doc->devs[best].events && dv->id < doc->devs[best].id)))
        best = d;
    }
  for (size_t d = 0; d < doc->n_devs && best == SIZE_MAX && opts->device < 0; d++)
    if (doc->devs[d].cpu)
      best = d;
  if (opts->device >= 0 && best == SIZE_MAX)
    return ml_error_set (err, ML_EUSAGE, "%s: --device %d: the trace has no [memory] events of that device; %s%s", path,
                         opts->device, doc->n_devs ? "it holds " : "it holds none", list);
  if (best == SIZE_MAX && !doc->n_devs)
    return ml_error_set (err, ML_EINPUT, "%s: no [memory] events in %" PRIu64 " trace events (the PyTorch profiler records "
                         "them with profile_memory=True)", path, doc->n_events);
  if (best == SIZE_MAX)
    return ml_error_set (err, ML_EINPUT, "%s: no [memory] events of a device that exists (ids 0 .. %d); the file holds %s",
                         path, ML_DEVICE_MAX, list);
  if (doc->devs[best].bad)
    return ml_error_set (err, ML_EINPUT, "%s", doc->devs[best].bad);
  *out = best;
  if (with_events > 1 && opts->device < 0)
    {
      char text[1400];
      snprintf (text, sizeof text, "reading %s: the most [memory] events (%" PRIu64 "); --device N reads another; the file holds %s",
                dev_name (&doc->devs[best], name, sizeof name), doc->devs[best].events, list);
      if ((tr->device_reason = ml_strtab_intern0 (tr->strings, text)) == UINT32_MAX)
        return ml_error_set (err, ML_ENOMEM, "%s: out of memory", path);
    }
  return 0;
}

/* ---- the events ---- */

static int
cmp_mem (const void *a, const void *b)
{
  const MlKinMem *x = a, *y = b;
  /* an event without a time comes first */
  int64_t tx = x->has_ts ? x->ts_ns : INT64_MIN, ty = y->has_ts ? y->ts_ns : INT64_MIN;
  if (tx != ty)
    return tx < ty ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Total Reserved / Total Allocated, as the profiler recorded them: the
 * device's row in the trace's table when it recorded either. */
static int
device_info (MlTrace *tr, const MlKinMem *mem, size_t k, uint64_t entries)
{
  MlDeviceInfo info = { .device = tr->device, .entries = entries };
  bool have_reserved = false;
  for (size_t i = 0; i < k; i++)
    {
      if (mem[i].total_reserved != UINT64_MAX)
        {
          uint64_t r = mem[i].total_reserved;
          if (!have_reserved)
            info.reserved_start = r;
          have_reserved = true;
          info.reserved_end = r;
          if (r > info.reserved_max)
            info.reserved_max = r;
        }
      if (mem[i].total_alloc != UINT64_MAX && mem[i].total_alloc > info.allocated_max)
        info.allocated_max = mem[i].total_alloc;
      info.actions[mem[i].bytes > 0 ? ML_EV_ALLOC : ML_EV_FREE] += mem[i].bytes != 0;
    }
  if (!have_reserved && !info.allocated_max)
    return 0;
  if (!(tr->devices = calloc (1, sizeof *tr->devices)))
    return ML_ENOMEM;
  tr->devices[0] = info;
  tr->n_devices = 1;
  if (have_reserved && !(tr->reserved_steps = calloc (k + 1, sizeof *tr->reserved_steps)))
    return ML_ENOMEM;
  if (have_reserved)
    {
      tr->reserved_steps[0].tick = 0;
      tr->reserved_steps[0].bytes = info.reserved_start;
      tr->n_reserved_steps = 1;
    }
  return 0;
}

/* Frees of addresses allocated before the trace: buffers live from tick
 * 0 (an address is 1 while allocated, 2 once freed: a second free of it
 * is no second buffer from before the trace); then the memory allocated
 * before the first event that the trace never frees: the first event's
 * Total Allocated, less its own bytes, less those buffers. */
static int
before_the_trace (MlTrace *tr, const MlKinMem *mem, size_t k, uint64_t *next_id)
{
  MlU64Map live;
  ml_u64map_init (&live);
  int rc = 0;
  for (size_t i = 0; i < k && rc == 0; i++)
    {
      uint32_t v;
      if (mem[i].bytes > 0)
        rc = ml_u64map_put (&live, mem[i].addr, 1);
      else if (mem[i].bytes < 0 && ml_u64map_get (&live, mem[i].addr, &v))
        rc = v == 1 ? ml_u64map_put (&live, mem[i].addr, 2) : 0;
      else if (mem[i].bytes < 0)
        {
          MlEvent ev = { .tick = 0, .id = (*next_id)++, .addr = mem[i].addr, .size = (uint64_t) -mem[i].bytes,
                         .time_ns = -1, .kind = ML_EV_ALLOC, .flags = ML_EVF_HAS_ID | ML_EVF_HAS_ADDR,
                         .device = tr->device };
          rc = append (tr, &ev, mem[i].index + 1) < 0 ? ML_ENOMEM : ml_u64map_put (&live, mem[i].addr, 2);
        }
    }
  ml_u64map_clear (&live);
  if (rc < 0 || !k || mem[0].total_alloc == UINT64_MAX)
    return rc;
  /* exact: Total Allocated may be up to 1.8e19 and the sizes may add up
   * past what an int64 holds */
  __int128 before = (__int128) mem[0].total_alloc - mem[0].bytes;
  for (size_t i = 0; i < tr->n_events; i++)
    before -= tr->events[i].size;
  if (before < 1)
    return 0;
  MlEvent ev = { .tick = 0, .id = (*next_id)++, .size = (uint64_t) before, .time_ns = -1, .kind = ML_EV_ALLOC,
                 .flags = ML_EVF_HAS_ID, .device = tr->device,
                 .name = ml_strtab_intern0 (tr->strings, "allocated before the trace") };
  if (ev.name == UINT32_MAX || append (tr, &ev, ORG_BEFORE | (mem[0].index + 1)) < 0)
    return ML_ENOMEM;
  return 0;
}

/* The walk in ts order. With a window (--range), every buffer is
 * followed by id, so that the state at the window's edges can be told:
 * the buffers live at its start are carried in at the tick before it,
 * those live at its end that the trace frees later end just after it
 * (both marked ML_EVF_CLIPPED, as the snapshot reader does). */
enum { W_BEFORE, W_IN, W_AFTER };

typedef struct {
  uint64_t addr, size, origin;
  uint32_t stream, name;
  uint16_t flags;
  bool     live, live_at_end, freed_after;
} KBuf;

typedef struct {
  MlTrace       *tr;
  const MlRange *win;       /* NULL: the whole trace */
  int            where;
  uint64_t       tick;      /* the next event's */
  int64_t        last_time; /* the latest time so far, for a window of times */
  KBuf          *buf;       /* windowed: by id */
  size_t         cap_buf;
} Walk;

/* Windowed: what @ev (which came from @origin) does to its buffer. */
static int
follow (Walk *w, const MlEvent *ev, uint64_t origin)
{
  if (ev->id >= w->cap_buf)
    {
      size_t cap = w->cap_buf ? w->cap_buf * 2 : 1024;
      while (cap <= ev->id)
        cap *= 2;
      KBuf *p = realloc (w->buf, cap * sizeof *p);
      if (!p)
        return ML_ENOMEM;
      memset (p + w->cap_buf, 0, (cap - w->cap_buf) * sizeof *p);
      w->buf = p;
      w->cap_buf = cap;
    }
  KBuf *b = &w->buf[ev->id];
  if (ev->kind == ML_EV_ALLOC)
    *b = (KBuf) { .addr = ev->addr, .size = ev->size, .origin = origin, .stream = ev->stream, .name = ev->name,
                  .flags = ev->flags, .live = true };
  else
    {
      b->live = false;
      b->freed_after = b->live_at_end;
    }
  return 0;
}

/* Keeps @ev: appended when it is inside the window, followed by id when
 * there is one. */
static int
put (Walk *w, const MlEvent *ev, uint64_t origin)
{
  if (w->win && follow (w, ev, origin) < 0)
    return ML_ENOMEM;
  return w->where == W_IN ? append (w->tr, ev, origin) : 0;
}

/* The window's first event is next: the events so far (the tick-0 ones)
 * give way to the state, every live buffer at the tick before it. */
static int
enter_window (Walk *w)
{
  MlTrace *tr = w->tr;
  uint64_t at = w->tick - 1;
  tr->n_events = 0;
  w->where = W_IN;
  tr->windowed = true;
  tr->window_first = at;
  for (size_t id = 1; id < w->cap_buf; id++)
    {
      const KBuf *b = &w->buf[id];
      if (!b->live)
        continue;
      MlEvent ev = { .tick = at, .id = id, .addr = b->addr, .size = b->size, .time_ns = -1, .stream = b->stream,
                     .name = b->name, .kind = ML_EV_ALLOC, .flags = (uint16_t) (b->flags | (at ? ML_EVF_CLIPPED : 0)),
                     .device = tr->device };
      if (append (tr, &ev, b->origin) < 0)
        return ML_ENOMEM;
    }
  return 0;
}

/* Where the next event (at @time, -1 when it has none) falls against the
 * window; entering it, leaving it. */
static int
place (Walk *w, int64_t time)
{
  if (!w->win || w->where == W_AFTER)
    return 0;
  if (time >= 0 && time > w->last_time)
    w->last_time = time;
  uint64_t at = w->win->times ? (uint64_t) w->last_time : w->tick;
  int rc = 0;
  if (w->where == W_BEFORE && at >= w->win->from)
    rc = enter_window (w);
  if (w->where == W_IN && at > w->win->to)
    {
      w->where = W_AFTER;
      w->tr->window_last = w->tick - 1;
      for (size_t id = 1; id < w->cap_buf; id++)
        w->buf[id].live_at_end = w->buf[id].live;
    }
  return rc;
}

/* After the walk: the window's end (buffers the trace frees later end
 * just after it) and its Total Reserved steps (the value at its start,
 * the changes inside it). */
static int
leave_window (Walk *w)
{
  MlTrace *tr = w->tr;
  if (w->where == W_IN)
    tr->window_last = w->tick - 1;
  for (size_t id = 1; w->where == W_AFTER && id < w->cap_buf; id++)
    {
      const KBuf *b = &w->buf[id];
      MlEvent ev = { .tick = tr->window_last + 1, .id = id, .addr = b->addr, .time_ns = -1, .stream = b->stream,
                     .kind = ML_EV_FREE, .flags = (uint16_t) ((b->flags & (ML_EVF_HAS_ID | ML_EVF_HAS_ADDR)) | ML_EVF_CLIPPED),
                     .device = tr->device };
      if (b->freed_after && append (tr, &ev, 0) < 0)
        return ML_ENOMEM;
    }
  size_t n = 0;
  for (size_t k = 0; k < tr->n_reserved_steps; k++)
    {
      uint64_t t = tr->reserved_steps[k].tick;
      if (t <= tr->window_first && n)
        tr->reserved_steps[0].bytes = tr->reserved_steps[k].bytes;
      else if (t <= tr->window_first || t <= tr->window_last)
        tr->reserved_steps[n++] = tr->reserved_steps[k];
    }
  if (n)
    tr->reserved_steps[0].tick = tr->window_first;
  tr->n_reserved_steps = n;
  return 0;
}

/* One [memory] event: its trace events (an allocation over a live block
 * frees it first), or none (a free of a block already free: counted). */
static int
walk_event (Walk *w, MlU64Map *live, const MlKinMem *m, int64_t ns, uint64_t *next_id, const char *path, MlError *err)
{
  MlTrace *tr = w->tr;
  uint32_t id;
  MlEvent ev = { .addr = m->addr, .time_ns = ns, .stream = m->stream, .flags = ML_EVF_HAS_ID | ML_EVF_HAS_ADDR,
                 .device = tr->device };
  int rc = 0;
  if (m->bytes > 0)
    {
      if (ml_u64map_get (live, m->addr, &id))
        {
          ev.tick = w->tick++;
          ev.kind = ML_EV_FREE;
          ev.id = id;
          rc = put (w, &ev, m->index + 1);
        }
      if (*next_id >= UINT32_MAX)
        return ml_error_set (err, ML_EINPUT, "%s: more than 2^32 allocations", path);
      ev.tick = w->tick++;
      ev.kind = ML_EV_ALLOC;
      ev.id = *next_id;
      ev.size = (uint64_t) m->bytes;
      if (rc == 0 && (ml_u64map_put (live, m->addr, (uint32_t) (*next_id)++) < 0 || put (w, &ev, m->index + 1) < 0))
        rc = ML_ENOMEM;
    }
  else if (m->bytes < 0 && ml_u64map_get (live, m->addr, &id))
    {
      ml_u64map_del (live, m->addr);
      ev.tick = w->tick++;
      ev.kind = ML_EV_FREE;
      ev.id = id;
      ev.size = (uint64_t) -m->bytes;
      rc = put (w, &ev, m->index + 1);
    }
  return rc;
}

/* The walk in ts order: allocations get running ids, frees are paired by
 * address; events that meet a block in the wrong state (entries the
 * profiler lost) are read past with a note. Times count from @origin
 * (the first event's ts, in ns). */
static int
walk (Walk *w, const MlKinMem *mem, size_t k, uint64_t next_id, int64_t origin, const char *path, MlError *err)
{
  MlTrace *tr = w->tr;
  MlU64Map live;   /* address -> id of the live buffer there */
  ml_u64map_init (&live);
  int rc = 0;
  /* the tick-0 buffers: events until a window starts after them */
  for (size_t i = 0; i < tr->n_events && rc == 0; i++)
    {
      const MlEvent *ev = &tr->events[i];
      if (ev->flags & ML_EVF_HAS_ADDR)
        rc = ml_u64map_put (&live, ev->addr, (uint32_t) ev->id);
      if (rc == 0 && w->win)
        rc = follow (w, ev, tr->event_origin ? tr->event_origin[i] : 0);
    }
  w->where = w->win ? W_BEFORE : W_IN;
  w->tick = 1;
  w->last_time = 0;
  size_t n_refree = 0, n_realloc = 0;
  const MlKinMem *first_refree = NULL, *first_realloc = NULL;
  for (size_t i = 0; i < k && rc == 0; i++)
    {
      const MlKinMem *m = &mem[i];
      uint32_t id;
      /* exact: ts in µs since the epoch is ~1.7e18 ns, past what a double
       * holds to the nanosecond */
      int64_t ns;
      if (!m->has_ts || __builtin_sub_overflow (m->ts_ns, origin, &ns))
        ns = -1;
      if (m->bytes == 0 || (rc = place (w, ns)) < 0)
        continue;
      bool over = m->bytes > 0 && ml_u64map_get (&live, m->addr, &id);
      if (tr->n_reserved_steps && m->total_reserved != UINT64_MAX
          && m->total_reserved != tr->reserved_steps[tr->n_reserved_steps - 1].bytes)
        {
          /* the value after this event: from the tick its (last) trace
           * event takes; an allocation over a live address frees it first */
          tr->reserved_steps[tr->n_reserved_steps].tick = w->tick + over;
          tr->reserved_steps[tr->n_reserved_steps++].bytes = m->total_reserved;
        }
      if (over && !n_realloc++)
        first_realloc = m;   /* allocated again while live: the trace lost a free */
      if (m->bytes < 0 && !ml_u64map_get (&live, m->addr, &id) && !n_refree++)
        first_refree = m;    /* freed already, no allocation since */
      rc = walk_event (w, &live, m, ns, &next_id, path, err);
    }
  ml_u64map_clear (&live);
  if (rc == 0 && w->win && w->where == W_BEFORE)
    return 1;   /* the window holds no event */
  if (rc == 0 && w->win)
    rc = leave_window (w);
  if (rc == 0 && n_refree)
    rc = lost_events_note (tr, first_refree, "already free, with no allocation since its last free: the trace lost "
                           "events; the event is ignored", n_refree);
  if (rc == 0 && n_realloc)
    rc = lost_events_note (tr, first_realloc, "still allocated, with no free since: the trace lost events; the old "
                           "block ends here", n_realloc);
  return rc;
}

/* One end of --range as the user wrote it, near enough: a tick, or a
 * time in seconds; "" for an open end. */
static void
range_text (const MlRange *r, uint64_t v, char *buf, size_t len)
{
  if (v == UINT64_MAX || (v == 0 && r->times))
    buf[0] = 0;
  else if (r->times)
    snprintf (buf, len, "%gs", (double) v / 1e9);
  else
    snprintf (buf, len, "%" PRIu64, v);
}

/* The trace of device @slot of @doc (whose mem it sorts in place), or
 * of the window @range of it. */
static int
map (MlKinDoc *doc, size_t slot, const MlRange *range, const char *path, MlTrace *tr, MlError *err)
{
  const MlKinDev *dv = &doc->devs[slot];
  size_t k = 0;
  for (size_t i = 0; i < doc->n_mem; i++)
    if (doc->mem[i].dev == slot)
      doc->mem[k++] = doc->mem[i];
  doc->n_mem = k;
  qsort (doc->mem, k, sizeof *doc->mem, cmp_mem);
  tr->source = ml_strtab_intern0 (tr->strings, "kineto");
  tr->origin_text = origin_text;
  tr->device = dv->cpu ? 0 : (uint32_t) dv->id;
  tr->has_addrs = true;
  /* the device's memory: deviceProperties[].totalGlobalMem of its id */
  for (size_t i = 0; i < doc->n_props && !dv->cpu; i++)
    if (doc->props[i].id == dv->id)
      tr->device_total = doc->props[i].total;
  /* times from the first event's: in the order, the first with a ts */
  int64_t origin = 0;
  for (size_t i = 0; i < k; i++)
    if (doc->mem[i].has_ts)
      {
        origin = doc->mem[i].ts_ns;
        break;
      }
  uint64_t next_id = 1;
  Walk w = { .tr = tr, .win = range->set ? range : NULL };
  int rc = device_info (tr, doc->mem, k, dv->events);
  if (rc == 0)
    rc = before_the_trace (tr, doc->mem, k, &next_id);
  if (rc == 0)
    rc = walk (&w, doc->mem, k, next_id, origin, path, err);
  free (w.buf);
  if (rc == 1)
    {
      char name[96], from[32], to[32], span[64] = "";
      range_text (range, range->from, from, sizeof from);
      range_text (range, range->to, to, sizeof to);
      if (range->times && k && doc->mem[k - 1].has_ts && doc->mem[k - 1].ts_ns >= origin)
        snprintf (span, sizeof span, ", times 0 .. %gs", (double) (doc->mem[k - 1].ts_ns - origin) / 1e9);
      else if (range->times)
        snprintf (span, sizeof span, ", no times recorded");
      rc = ml_error_set (err, ML_EUSAGE, "%s: --range %s:%s holds no [memory] event of %s (%zu events, ticks 1 .. %" PRIu64 "%s)",
                         path, from, to, dev_name (dv, name, sizeof name), k, w.tick - 1, span);
    }
  if (rc == ML_ENOMEM)
    ml_error_set (err, rc, "%s: out of memory", path);
  return rc;
}

static int
from_doc (MlKinDoc *doc, const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err)
{
  MlTrace *tr = ml_trace_new ();
  if (!tr)
    return ml_error_set (err, ML_ENOMEM, "%s: out of memory", path);
  size_t slot;
  int rc = pick_device (doc, path, opts, tr, &slot, err);
  if (rc == 0)
    rc = map (doc, slot, &opts->range, path, tr, err);
  if (doc->rank >= 0)
    tr->has_rank = true, tr->rank = (uint32_t) doc->rank;
  if (rc < 0)
    {
      ml_trace_free (tr);
      return rc;
    }
  *out = tr;
  return 0;
}

int
ml_trace_load_kineto (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err)
{
  MlLoadOptions defaults;
  if (!opts)
    {
      ml_load_options_init (&defaults);
      opts = &defaults;
    }
  MlKinDoc doc;
  char *text = NULL;
  size_t len = 0;
  int rc = ml_kin_stream (path, opts, &doc, &text, &len, err);
  if (rc == 1)
    {
      /* a graph: its reader takes the document whole */
      if (opts->range.set)
        {
          free (text);
          return ml_error_set (err, ML_EUSAGE, "%s: --range reads a window of PyTorch snapshots and Kineto traces only, not of a "
                               "graph", path);
        }
      cJSON *root = NULL;
      rc = ml_json_parse_doc (path, text, len, &root, err);
      free (text);
      if (rc == 0)
        rc = ml_trace_from_graph (root, path, opts, out, err);
      cJSON_Delete (root);
      return rc;
    }
  if (rc < 0)
    return rc;
  rc = from_doc (&doc, path, opts, out, err);
  ml_kin_doc_clear (&doc);
  return rc;
}

int
ml_trace_load_kineto_mem (const char *text, size_t len, const char *name, const MlLoadOptions *opts, MlTrace **out,
                          MlError *err)
{
  MlLoadOptions defaults;
  if (!opts)
    {
      ml_load_options_init (&defaults);
      opts = &defaults;
    }
  MlKinDoc doc;
  int rc = ml_kin_stream_mem (text, len, name, opts, &doc, err);
  if (rc < 0)
    return rc;
  rc = from_doc (&doc, name, opts, out, err);
  ml_kin_doc_clear (&doc);
  return rc;
}
