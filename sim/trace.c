#include "sim/trace.h"
#include "sim/base/units.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static_assert (sizeof (MlEvent) <= 64, "the event budget is 64 bytes");

MlTrace *
ml_trace_new (void)
{
  MlTrace *t = calloc (1, sizeof *t);
  if (!t)
    return NULL;
  t->strings = ml_strtab_new ();
  t->stacks = calloc (16, sizeof *t->stacks);
  if (!t->strings || !t->stacks)
    {
      ml_trace_free (t);
      return NULL;
    }
  t->n_stacks = 1;   /* stacks[0]: the empty stack */
  t->cap_stacks = 16;
  t->default_align = ML_TRACE_ALIGN;
  t->ring_wrapped = -1;
  return t;
}

void
ml_trace_free (MlTrace *t)
{
  if (!t)
    return;
  free (t->events);
  free (t->stacks);
  free (t->frame_table);
  free (t->frame_slots);
  free (t->stack_frames);
  free (t->inplace);
  free (t->devices);
  free (t->reserved_steps);
  free (t->device_ooms);
  free (t->group_ids);
  free (t->group_end);
  free (t->event_origin);
  free (t->notes);
  free (t->stream_ids);
  free (t->pools);
  free (t->event_meta);
  free (t->alloc_conf);
  ml_strtab_free (t->strings);
  free (t);
}

static int
grow (void **ptr, size_t *cap, size_t need, size_t elem)
{
  if (need <= *cap)
    return 0;
  size_t cap2 = *cap ? *cap : 256;
  while (cap2 < need)
    {
      if (cap2 > SIZE_MAX / 2 / elem)
        return -1;
      cap2 *= 2;
    }
  void *p = realloc (*ptr, cap2 * elem);
  if (!p)
    return -1;
  *ptr = p;
  *cap = cap2;
  return 0;
}

int
ml_trace_reserve (MlTrace *t, size_t n)
{
  if (n <= t->cap_events)
    return 0;
  if (n > SIZE_MAX / sizeof *t->events)
    return ML_ENOMEM;
  MlEvent *e = realloc (t->events, n * sizeof *e);
  if (!e)
    return ML_ENOMEM;
  t->events = e;
  t->cap_events = n;
  return 0;
}

MlEvent *
ml_trace_append (MlTrace *t, const MlEvent *ev)
{
  if (grow ((void **) &t->events, &t->cap_events, t->n_events + 1, sizeof *t->events) < 0)
    return NULL;
  MlEvent *dst = &t->events[t->n_events++];
  *dst = *ev;
  if (ev->time_ns >= 0 && ev->kind != ML_EV_MARK)
    t->has_times = true;
  return dst;
}

int
ml_trace_set_origin (MlTrace *t, uint64_t origin)
{
  if (t->n_events == 0)
    return 0;
  size_t i = t->n_events - 1;
  if (!t->event_origin)
    {
      /* the first: as many as the events have room for, zero pages that
       * a reader reserving its events up front never touches beyond use */
      size_t cap = t->cap_events > i ? t->cap_events : i + 1;
      if (!(t->event_origin = calloc (cap, sizeof *t->event_origin)))
        return ML_ENOMEM;
      t->cap_origins = cap;
    }
  if (i >= t->cap_origins)
    {
      size_t cap = t->cap_origins;
      if (grow ((void **) &t->event_origin, &cap, t->cap_events, sizeof *t->event_origin) < 0)
        return ML_ENOMEM;
      memset (t->event_origin + t->cap_origins, 0, (cap - t->cap_origins) * sizeof *t->event_origin);
      t->cap_origins = cap;
    }
  t->event_origin[i] = origin;
  return 0;
}

int
ml_trace_set_meta (MlTrace *t, MlEventMeta meta)
{
  if (t->n_events == 0 || (!meta.compile_context && !meta.user_metadata && !t->event_meta))
    return 0;
  size_t i = t->n_events - 1;
  if (i >= t->cap_meta)
    {
      size_t cap = t->cap_meta;
      if (grow ((void **) &t->event_meta, &cap, t->cap_events > i + 1 ? t->cap_events : i + 1, sizeof *t->event_meta) < 0)
        return ML_ENOMEM;
      memset (t->event_meta + t->cap_meta, 0, (cap - t->cap_meta) * sizeof *t->event_meta);
      t->cap_meta = cap;
    }
  t->event_meta[i] = meta;
  return 0;
}

MlEventMeta
ml_trace_event_meta (const MlTrace *t, size_t i)
{
  return t->event_meta && i < t->cap_meta ? t->event_meta[i] : (MlEventMeta) { 0, 0 };
}

uint32_t
ml_trace_add_stream (MlTrace *t, uint64_t value)
{
  if (t->n_stream_ids >= UINT32_MAX - 1
      || grow ((void **) &t->stream_ids, &t->cap_stream_ids, t->n_stream_ids + 1, sizeof *t->stream_ids) < 0)
    return UINT32_MAX;
  t->stream_ids[t->n_stream_ids] = value;
  return (uint32_t) t->n_stream_ids++;
}

uint64_t
ml_trace_stream_id (const MlTrace *t, uint32_t stream)
{
  return t->n_stream_ids && stream < t->n_stream_ids ? t->stream_ids[stream] : stream;
}

const char *
ml_trace_stream_label (const MlTrace *t, uint32_t stream, char *buf)
{
  uint64_t v = ml_trace_stream_id (t, stream);
  snprintf (buf, ML_STREAM_LABEL_MAX, v > 0xffff ? "0x%" PRIx64 : "%" PRIu64, v);
  return buf;
}

uint32_t
ml_trace_add_pool (MlTrace *t, int64_t first, int64_t second)
{
  for (size_t k = 0; k < t->n_pools; k++)
    if (t->pools[k].first == first && t->pools[k].second == second)
      return (uint32_t) k;
  if (first == 0 && second == 0 && t->n_pools == 0)
    return 0;   /* the default pool: no table needed */
  size_t need = t->n_pools ? t->n_pools + 1 : 2;
  if (need >= UINT32_MAX || grow ((void **) &t->pools, &t->cap_pools, need, sizeof *t->pools) < 0)
    return UINT32_MAX;
  if (t->n_pools == 0)
    t->pools[t->n_pools++] = (MlPoolId) { 0, 0 };
  t->pools[t->n_pools] = (MlPoolId) { first, second };
  return (uint32_t) t->n_pools++;
}

MlPoolId
ml_trace_pool_id (const MlTrace *t, uint32_t pool)
{
  return pool < t->n_pools ? t->pools[pool] : (MlPoolId) { 0, 0 };
}

const char *
ml_trace_pool_label (const MlTrace *t, uint32_t pool, char *buf)
{
  MlPoolId id = ml_trace_pool_id (t, pool);
  snprintf (buf, ML_POOL_LABEL_MAX, "(%" PRId64 ", %" PRId64 ")", id.first, id.second);
  return buf;
}

int
ml_trace_add_note (MlTrace *t, const char *text)
{
  uint32_t s = ml_strtab_intern0 (t->strings, text);
  if (s == UINT32_MAX || grow ((void **) &t->notes, &t->cap_notes, t->n_notes + 1, sizeof *t->notes) < 0)
    return ML_ENOMEM;
  t->notes[t->n_notes++] = s;
  return 0;
}

const char *
ml_trace_event_where (const MlTrace *t, size_t i, char *buf, size_t len)
{
  uint64_t o = t->event_origin && i < t->cap_origins ? t->event_origin[i] : 0;
  if (o && t->origin_text)
    return t->origin_text (t, i, o, buf, len);
  if (o)
    snprintf (buf, len, "line %" PRIu64, o);
  else
    snprintf (buf, len, "event %zu", i);
  return buf;
}

static size_t
frame_hash (MlFrame f)
{
  uint64_t h = ((uint64_t) f.file * 0x9e3779b97f4a7c15ull ^ f.func) * 0xff51afd7ed558ccdull ^ f.line;
  h *= 0xc4ceb9fe1a85ec53ull;
  return (size_t) (h ^ h >> 32);
}

/* Room for @n frames in the frame table's hash (at most 3/4 full). */
static int
frame_slots_fit (MlTrace *t, size_t n)
{
  if (n * 4 <= t->n_frame_slots * 3)
    return 0;
  size_t ns = t->n_frame_slots ? t->n_frame_slots * 2 : 1024;
  while (n * 4 > ns * 3)
    ns *= 2;
  uint32_t *slots = calloc (ns, sizeof *slots);
  if (!slots)
    return -1;
  for (size_t i = 0; i < t->n_frame_table; i++)
    {
      size_t j = frame_hash (t->frame_table[i]) & (ns - 1);
      while (slots[j])
        j = (j + 1) & (ns - 1);
      slots[j] = (uint32_t) i + 1;
    }
  free (t->frame_slots);
  t->frame_slots = slots;
  t->n_frame_slots = ns;
  return 0;
}

uint32_t
ml_trace_add_frame (MlTrace *t, MlFrame f)
{
  if (t->n_frame_table >= UINT32_MAX - 1 || frame_slots_fit (t, t->n_frame_table + 1) < 0)
    return UINT32_MAX;
  size_t mask = t->n_frame_slots - 1, j = frame_hash (f) & mask;
  for (; t->frame_slots[j]; j = (j + 1) & mask)
    {
      const MlFrame *g = &t->frame_table[t->frame_slots[j] - 1];
      if (g->file == f.file && g->func == f.func && g->line == f.line)
        return t->frame_slots[j] - 1;
    }
  if (grow ((void **) &t->frame_table, &t->cap_frame_table, t->n_frame_table + 1, sizeof *t->frame_table) < 0)
    return UINT32_MAX;
  t->frame_table[t->n_frame_table] = f;
  t->frame_slots[j] = (uint32_t) t->n_frame_table + 1;
  return (uint32_t) t->n_frame_table++;
}

uint32_t
ml_trace_add_stack_ix (MlTrace *t, uint32_t site, const uint32_t *frames, size_t n)
{
  if (n == 0 && site == 0)
    return 0;
  if (t->n_stacks >= UINT32_MAX - 1 || t->n_stack_frames + n >= UINT32_MAX)
    return UINT32_MAX;
  if (grow ((void **) &t->stacks, &t->cap_stacks, t->n_stacks + 1, sizeof *t->stacks) < 0
      || grow ((void **) &t->stack_frames, &t->cap_stack_frames, t->n_stack_frames + n, sizeof *t->stack_frames) < 0)
    return UINT32_MAX;
  if (n)
    memcpy (t->stack_frames + t->n_stack_frames, frames, n * sizeof *frames);
  t->stacks[t->n_stacks] = (MlStack) { site, (uint32_t) t->n_stack_frames, (uint32_t) n, ML_STACK_PLAIN };
  t->n_stack_frames += n;
  return (uint32_t) t->n_stacks++;
}

uint32_t
ml_trace_add_stack (MlTrace *t, uint32_t site, const MlFrame *frames, size_t n)
{
  if (n == 0)
    return ml_trace_add_stack_ix (t, site, NULL, 0);
  uint32_t *ix = malloc (n * sizeof *ix);
  if (!ix)
    return UINT32_MAX;
  uint32_t idx = 0;
  for (size_t k = 0; k < n && idx != UINT32_MAX; k++)
    idx = ix[k] = ml_trace_add_frame (t, frames[k]);
  if (idx != UINT32_MAX)
    idx = ml_trace_add_stack_ix (t, site, ix, n);
  free (ix);
  return idx;
}

uint64_t
ml_trace_end_tick (const MlTrace *t)
{
  return t->n_events ? t->events[t->n_events - 1].tick + 1 : 0;
}

int64_t
ml_trace_tick_time (const MlTrace *t, uint64_t tick)
{
  if (!t || !t->has_times || !t->n_events)
    return -1;
  int64_t first = -1;
  for (size_t i = 0; i < t->n_events && first < 0; i++)
    first = t->events[i].time_ns;
  if (first < 0)
    return -1;
  /* one past the last event with tick <= @tick (events are in tick order) */
  size_t lo = 0, hi = t->n_events;
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      if (t->events[mid].tick <= tick)
        lo = mid + 1;
      else
        hi = mid;
    }
  for (size_t i = lo; i-- > 0;)
    if (t->events[i].time_ns >= 0)
      return t->events[i].time_ns - first;
  for (size_t i = lo; i < t->n_events; i++)
    if (t->events[i].time_ns >= 0)
      return t->events[i].time_ns - first;
  return -1;
}

static const char *const kind_names[ML_EV__COUNT] = {
  "alloc", "free", "free_requested", "segment_alloc", "segment_free",
  "segment_map", "segment_unmap", "kernel", "sync", "oom", "mark", "snapshot",
};

static const char *const sync_names[ML_SYNC__COUNT] = {
  "none", "device", "stream", "event", "event_record", "stream_wait", "context",
};

const char *
ml_event_kind_name (MlEventKind kind)
{
  return (unsigned) kind < ML_EV__COUNT ? kind_names[kind] : "?";
}

int
ml_event_kind_parse (const char *name, MlEventKind *kind)
{
  for (int i = 0; i < ML_EV__COUNT; i++)
    if (strcmp (name, kind_names[i]) == 0)
      {
        *kind = (MlEventKind) i;
        return 0;
      }
  return ML_EINPUT;
}

const char *
ml_sync_kind_name (MlSyncKind kind)
{
  return (unsigned) kind < ML_SYNC__COUNT ? sync_names[kind] : "?";
}

int
ml_sync_kind_parse (const char *name, MlSyncKind *kind)
{
  for (int i = 0; i < ML_SYNC__COUNT; i++)
    if (strcmp (name, sync_names[i]) == 0)
      {
        *kind = (MlSyncKind) i;
        return 0;
      }
  return ML_EINPUT;
}

int
ml_trace_add_inplace (MlTrace *t, const MlInplaceWrite *w)
{
  if (grow ((void **) &t->inplace, &t->cap_inplace, t->n_inplace + 1, sizeof *t->inplace) < 0)
    return ML_ENOMEM;
  t->inplace[t->n_inplace++] = *w;
  return 0;
}

static bool
ends_with (const char *s, const char *suffix)
{
  size_t a = strlen (s), b = strlen (suffix);
  return a >= b && memcmp (s + a - b, suffix, b) == 0;
}

bool
ml_frame_is_framework (const char *file, const char *func)
{
  (void) func;
  if (!file || !*file || strcmp (file, "??") == 0 || file[0] == '<')
    return true;
  if (ends_with (file, ".cpp") || ends_with (file, ".cc") || ends_with (file, ".h") || ends_with (file, ".hpp")
      || ends_with (file, ".c") || ends_with (file, ".cu"))
    return true;
  return strstr (file, "/torch/") || strstr (file, "\\torch\\") || strstr (file, "torchinductor")
         || strstr (file, "/triton/") || strstr (file, "\\triton\\");
}

int
ml_trace_add_group (MlTrace *t, const uint64_t *ids, size_t n)
{
  if (grow ((void **) &t->group_ids, &t->cap_group_ids, t->n_group_ids + n, sizeof *t->group_ids) < 0
      || grow ((void **) &t->group_end, &t->cap_groups, t->n_groups + 1, sizeof *t->group_end) < 0)
    return ML_ENOMEM;
  memcpy (t->group_ids + t->n_group_ids, ids, n * sizeof *ids);
  t->n_group_ids += n;
  t->group_end[t->n_groups++] = t->n_group_ids;
  return 0;
}

const char *
ml_trace_allocator_settings (const MlTrace *t)
{
  static const char prefix[] = "allocator settings: ";
  for (size_t i = 0; t && i < t->n_events && t->events[i].tick == 0; i++)
    if (t->events[i].kind == ML_EV_MARK)
      {
        const char *text = ml_trace_str (t, t->events[i].name);
        if (text && strncmp (text, prefix, sizeof prefix - 1) == 0)
          return text + sizeof prefix - 1;
      }
  return NULL;
}

bool
ml_device_info_empty (const MlDeviceInfo *di)
{
  return !di->actions[ML_EV_ALLOC] && !di->segments && !di->ooms;
}

const char *
ml_trace_list_devices (const MlTrace *trace, uint32_t skip, char *buf, size_t len)
{
  size_t used = 0;
  buf[0] = 0;
  for (size_t d = 0; d < trace->n_devices && used < len; d++)
    {
      const MlDeviceInfo *di = &trace->devices[d];
      if (di->device == skip)
        continue;
      char res[32], alloc[32];
      used += (size_t) snprintf (buf + used, len - used, "%sdevice %u (%" PRIu64 " trace entr%s, %s reserved at the end, "
                                 "%s allocated over the trace%s)", used ? ", " : "", di->device, di->entries,
                                 di->entries == 1 ? "y" : "ies", ml_format_size (di->reserved_end, res, sizeof res),
                                 ml_format_size (di->allocated_bytes, alloc, sizeof alloc), di->ooms ? ", an OOM" : "");
    }
  return buf;
}
