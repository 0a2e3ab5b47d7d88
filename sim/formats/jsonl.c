/* trace-jsonl.c — the native trace format, JSON Lines (docs/formats.md).
 *
 * Line 1: {"format":"memlens-trace","version":1, ...header}
 * Then one object per line: an event, or a stack definition
 * {"kind":"stack","sid":N,"site":"...","frames":[["file",line,"func"],...]}
 * that events reference with "stack":N, or a graph's in-place write
 * {"kind":"inplace","tick":T,"output":ID,"input":ID,"last_read":T,"op":"relu_"}
 * (sim/trace.h MlInplaceWrite). The reader streams: memory grows
 * with the events kept, not with the text.
 */
#include "sim/formats/jsonl.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/io.h"
#include "sim/base/jsonutil.h"
#include "sim/base/u64map.h"

#define FORMAT_NAME "memlens-trace"
#define FORMAT_VERSION 1
#define MAX_NESTING 16

static const struct { const char *name; uint16_t flag; } flag_names[] = {
  { "weight", ML_EVF_WEIGHT }, { "activation", ML_EVF_ACTIVATION },
  { "input", ML_EVF_INPUT }, { "output", ML_EVF_OUTPUT },
  { "pinned", ML_EVF_PINNED }, { "async", ML_EVF_ASYNC },
};

/* Rejects deeply nested JSON before cJSON recurses into it. */
static bool
nesting_ok (const char *s, size_t len)
{
  int depth = 0;
  bool in_str = false;
  for (size_t i = 0; i < len; i++)
    {
      char c = s[i];
      if (in_str)
        {
          if (c == '\\')
            i++;
          else if (c == '"')
            in_str = false;
        }
      else if (c == '"')
        in_str = true;
      else if (c == '{' || c == '[')
        {
          if (++depth > MAX_NESTING)
            return false;
        }
      else if (c == '}' || c == ']')
        depth--;
    }
  return true;
}

static int
parse_header (MlTrace *t, const cJSON *h, MlError *err)
{
  const char *fmt = ml_json_str (h, "format");
  if (!fmt || strcmp (fmt, FORMAT_NAME) != 0)
    return ml_error_set (err, ML_EINPUT, "not a memlens trace: the header's \"format\" is %s%s%s, expected \"" FORMAT_NAME "\"",
                         fmt ? "\"" : "", fmt ? fmt : "missing", fmt ? "\"" : "");
  uint64_t v;
  int rc = ml_json_u64 (h, "version", true, &v, err);
  if (rc < 0)
    return rc;
  if (v > FORMAT_VERSION || v == 0)
    return ml_error_set (err, ML_EINPUT, "trace format version %" PRIu64 " is not supported (this memlens reads version %d)",
                         v, FORMAT_VERSION);
  const char *src = ml_json_str (h, "source");
  t->source = ml_strtab_intern0 (t->strings, src ? src : "jsonl");
  t->records_meta = true;   /* events may carry compile_context / user_metadata */
  uint64_t x;
  if ((rc = ml_json_u64 (h, "device", false, &x, err)) < 0) return rc;
  if (rc == 0) t->device = (uint32_t) x;
  if ((rc = ml_json_u64 (h, "alignment", false, &x, err)) < 0) return rc;
  if (rc == 0)
    {
      if (x == 0 || (x & (x - 1)))
        return ml_error_set (err, ML_EINPUT, "alignment %" PRIu64 " is not a power of two", x);
      t->default_align = x;
    }
  if ((rc = ml_json_u64 (h, "capacity", false, &x, err)) < 0) return rc;
  if (rc == 0) t->capacity = x;
  if ((rc = ml_json_u64 (h, "dropped_records", false, &x, err)) < 0) return rc;
  if (rc == 0) t->dropped_records = x;
  if ((rc = ml_json_u64 (h, "device_total", false, &x, err)) < 0) return rc;
  if (rc == 0) t->device_total = x;
  /* what a PyTorch snapshot said of itself */
  const char *conf = ml_json_str (h, "allocator_settings");
  if (conf && !(t->alloc_conf = strdup (conf)))
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  if ((rc = ml_json_u64 (h, "trace_alloc_max_entries", false, &x, err)) < 0) return rc;
  if (rc == 0) t->ring_entries = x;
  const cJSON *w = cJSON_GetObjectItemCaseSensitive (h, "trace_alloc_overflowed");
  if (w && !cJSON_IsBool (w))
    return ml_error_set (err, ML_EINPUT, "\"trace_alloc_overflowed\" is not true or false");
  if (w)
    t->ring_wrapped = cJSON_IsTrue (w) ? 1 : 0;
  if ((rc = ml_json_u64 (h, "skipped_actions", false, &x, err)) < 0) return rc;
  if (rc == 0) t->skipped_actions = (uint32_t) (x & ((1u << ML_EV__COUNT) - 1));
  return 0;
}

/* The index of stream value @v in the trace's stream table (the values
 * are few: a linear search, the last one found first). */
static int
stream_index (MlTrace *t, uint64_t v, uint32_t *out, MlError *err)
{
  static __thread size_t last;
  if (last < t->n_stream_ids && t->stream_ids[last] == v)
    return *out = (uint32_t) last, 0;
  for (size_t k = 0; k < t->n_stream_ids; k++)
    if (t->stream_ids[k] == v)
      return last = k, *out = (uint32_t) k, 0;
  if (!t->n_stream_ids && v != 0 && ml_trace_add_stream (t, 0) == UINT32_MAX)   /* 0 keeps index 0 */
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  uint32_t i = ml_trace_add_stream (t, v);
  if (i == UINT32_MAX)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  last = i;
  *out = i;
  return 0;
}

static int
parse_stack (MlTrace *t, const cJSON *o, MlU64Map *stacks, MlError *err)
{
  uint64_t sid;
  int rc = ml_json_u64 (o, "sid", true, &sid, err);
  if (rc < 0)
    return rc;
  if (sid == 0 || ml_u64map_get (stacks, sid, NULL))
    return ml_error_set (err, ML_EINPUT, "stack id %" PRIu64 " is %s", sid, sid ? "defined twice" : "reserved (0 = none)");
  const char *site = ml_json_str (o, "site");
  const cJSON *frames = cJSON_GetObjectItemCaseSensitive (o, "frames");
  size_t n = cJSON_IsArray (frames) ? (size_t) cJSON_GetArraySize (frames) : 0;
  MlFrame *fr = calloc (n ? n : 1, sizeof *fr);
  if (!fr)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  size_t i = 0;
  const cJSON *f;
  cJSON_ArrayForEach (f, frames)
    {
      if (!cJSON_IsArray (f) || cJSON_GetArraySize (f) != 3
          || !cJSON_IsString (cJSON_GetArrayItem (f, 0)) || !cJSON_IsNumber (cJSON_GetArrayItem (f, 1))
          || !cJSON_IsString (cJSON_GetArrayItem (f, 2)))
        {
          free (fr);
          return ml_error_set (err, ML_EINPUT, "stack %" PRIu64 ": frame %zu is not [\"file\", line, \"function\"]", sid, i);
        }
      double line = cJSON_GetArrayItem (f, 1)->valuedouble;
      fr[i].file = ml_strtab_intern0 (t->strings, cJSON_GetArrayItem (f, 0)->valuestring);
      fr[i].func = ml_strtab_intern0 (t->strings, cJSON_GetArrayItem (f, 2)->valuestring);
      fr[i].line = line >= 0 && line < 4e9 ? (uint32_t) line : 0;
      i++;
    }
  uint32_t idx = ml_trace_add_stack (t, ml_strtab_intern0 (t->strings, site ? site : ""), fr, n);
  free (fr);
  if (idx == UINT32_MAX || ml_u64map_put (stacks, sid, idx) < 0)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  return 0;
}

static int
parse_inplace (MlTrace *t, const cJSON *o, MlError *err)
{
  MlInplaceWrite w = { 0 };
  int rc;
  if ((rc = ml_json_u64 (o, "tick", true, &w.op_tick, err)) < 0) return rc;
  if ((rc = ml_json_u64 (o, "output", true, &w.output_id, err)) < 0) return rc;
  if ((rc = ml_json_u64 (o, "input", true, &w.input_id, err)) < 0) return rc;
  if ((rc = ml_json_u64 (o, "last_read", true, &w.last_read, err)) < 0) return rc;
  const char *op = ml_json_str (o, "op");
  if (op && *op)
    w.op_name = ml_strtab_intern0 (t->strings, op);
  if (w.op_name == UINT32_MAX || ml_trace_add_inplace (t, &w) < 0)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  return 0;
}

static int
parse_event (MlTrace *t, const cJSON *o, MlU64Map *stacks, uint64_t *prev_tick, MlError *err)
{
  const char *kind = ml_json_str (o, "kind");
  if (!kind)
    return ml_error_set (err, ML_EINPUT, "missing field \"kind\"");
  MlEventKind k;
  if (ml_event_kind_parse (kind, &k) < 0)
    return ml_error_set (err, ML_EINPUT, "unknown event kind \"%.60s\"", kind);
  MlEvent ev = { .kind = (uint8_t) k, .time_ns = -1, .device = t->device };
  int rc;
  uint64_t x;

  if ((rc = ml_json_u64 (o, "tick", false, &ev.tick, err)) < 0)
    return rc;
  if (rc == 1)
    ev.tick = t->n_events ? *prev_tick + 1 : 0;
  if (t->n_events && ev.tick < *prev_tick)
    return ml_error_set (err, ML_EINPUT, "tick %" PRIu64 " goes back before tick %" PRIu64, ev.tick, *prev_tick);

  if ((rc = ml_json_u64 (o, "id", false, &ev.id, err)) < 0) return rc;
  if (rc == 0) ev.flags |= ML_EVF_HAS_ID;
  if ((rc = ml_json_u64 (o, "addr", false, &ev.addr, err)) < 0) return rc;
  if (rc == 0) ev.flags |= ML_EVF_HAS_ADDR;
  if ((rc = ml_json_u64 (o, "size", false, &ev.size, err)) < 0) return rc;
  /* streams are values (a cudaStream_t may be a 48-bit pointer): each
   * gets a dense index, the table keeps the value */
  if ((rc = ml_json_u64 (o, "stream", false, &x, err)) < 0) return rc;
  if (rc == 0 && (x || t->n_stream_ids) && (rc = stream_index (t, x, &ev.stream, err)) < 0)
    return rc;
  if ((rc = ml_json_u64 (o, "stream2", false, &x, err)) < 0) return rc;
  if (rc == 0 && k == ML_EV_SYNC && (x || t->n_stream_ids) && (rc = stream_index (t, x, &ev.stream2, err)) < 0)
    return rc;
  const cJSON *pool = cJSON_GetObjectItemCaseSensitive (o, "pool");
  if (pool)
    {
      const cJSON *a = cJSON_GetArrayItem (pool, 0), *b = cJSON_GetArrayItem (pool, 1);
      if (!cJSON_IsArray (pool) || cJSON_GetArraySize (pool) != 2 || !cJSON_IsNumber (a) || !cJSON_IsNumber (b)
          || a->valuedouble != (double) (int64_t) a->valuedouble || b->valuedouble != (double) (int64_t) b->valuedouble)
        return ml_error_set (err, ML_EINPUT, "\"pool\" is not a pair of integers");
      if (k == ML_EV_SYNC || k == ML_EV_KERNEL)
        return ml_error_set (err, ML_EINPUT, "a %s event has no \"pool\"", kind);
      ev.pool = ml_trace_add_pool (t, (int64_t) a->valuedouble, (int64_t) b->valuedouble);
      if (ev.pool == UINT32_MAX)
        return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  int64_t tn;
  if ((rc = ml_json_i64 (o, "time_ns", false, &tn, err)) < 0) return rc;
  if (rc == 0 && tn < 0)   /* the writers leave out a time they do not know */
    return ml_error_set (err, ML_EINPUT, "\"time_ns\" is %" PRId64 ": times are nanoseconds, 0 or more (leave "
                         "\"time_ns\" out when it is not known)", tn);
  if (rc == 0) ev.time_ns = tn;
  if (k == ML_EV_KERNEL)
    {
      int64_t end;
      if ((rc = ml_json_i64 (o, "end_ns", false, &end, err)) < 0) return rc;
      if (rc == 0 && end < 0)
        return ml_error_set (err, ML_EINPUT, "\"end_ns\" is %" PRId64 ": times are nanoseconds, 0 or more", end);
      if (rc == 0)
        ev.size = (uint64_t) end;
    }
  if (k == ML_EV_OOM)
    {
      if ((rc = ml_json_u64 (o, "device_free", false, &ev.addr, err)) < 0) return rc;
    }
  const char *name = ml_json_str (o, "name");
  if (name)
    ev.name = ml_strtab_intern0 (t->strings, name);
  if ((rc = ml_json_u64 (o, "stack", false, &x, err)) < 0) return rc;
  if (rc == 0 && x != 0)
    {
      uint32_t idx;
      if (!ml_u64map_get (stacks, x, &idx))
        return ml_error_set (err, ML_EINPUT, "stack %" PRIu64 " is not defined before its use", x);
      ev.stack = idx;
    }
  else
    {
      const char *site = ml_json_str (o, "site");
      if (site && *site)
        {
          /* a site without frames: one stack per distinct site */
          uint32_t sidx = ml_strtab_intern0 (t->strings, site), idx;
          uint64_t key = (1ull << 63) | sidx;
          if (!ml_u64map_get (stacks, key, &idx))
            {
              idx = ml_trace_add_stack (t, sidx, NULL, 0);
              if (idx == UINT32_MAX || ml_u64map_put (stacks, key, idx) < 0)
                return ml_error_set (err, ML_ENOMEM, "out of memory");
            }
          ev.stack = idx;
        }
    }
  if (k == ML_EV_SYNC)
    {
      const char *sk = ml_json_str (o, "sync");
      MlSyncKind s;
      if (!sk || ml_sync_kind_parse (sk, &s) < 0)
        return ml_error_set (err, ML_EINPUT, "sync event needs \"sync\": one of device, stream, event, event_record, stream_wait, context (got %s%.40s%s)",
                             sk ? "\"" : "", sk ? sk : "nothing", sk ? "\"" : "");
      ev.sync_kind = (uint8_t) s;
    }
  const cJSON *flags = cJSON_GetObjectItemCaseSensitive (o, "flags");
  if (flags)
    {
      if (!cJSON_IsArray (flags))
        return ml_error_set (err, ML_EINPUT, "\"flags\" is not an array of strings");
      const cJSON *f;
      cJSON_ArrayForEach (f, flags)
        {
          size_t j;
          for (j = 0; j < sizeof flag_names / sizeof flag_names[0]; j++)
            if (cJSON_IsString (f) && strcmp (f->valuestring, flag_names[j].name) == 0)
              break;
          if (j == sizeof flag_names / sizeof flag_names[0])
            return ml_error_set (err, ML_EINPUT, "unknown flag %s", cJSON_IsString (f) ? f->valuestring : "(not a string)");
          ev.flags |= flag_names[j].flag;
        }
    }
  if ((k == ML_EV_ALLOC || k == ML_EV_FREE || k == ML_EV_FREE_REQUESTED)
      && !(ev.flags & (ML_EVF_HAS_ID | ML_EVF_HAS_ADDR)))
    return ml_error_set (err, ML_EINPUT, "%s event needs \"id\" or \"addr\"", kind);
  if (k == ML_EV_ALLOC && !cJSON_GetObjectItemCaseSensitive (o, "size"))
    return ml_error_set (err, ML_EINPUT, "alloc event needs \"size\"");
  if (ev.flags & ML_EVF_HAS_ADDR && (k == ML_EV_ALLOC || k == ML_EV_SEGMENT_ALLOC))
    t->has_addrs = true;
  if (!ml_trace_append (t, &ev))
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  const char *cc = ml_json_str (o, "compile_context"), *um = ml_json_str (o, "user_metadata");
  MlEventMeta meta = { cc && *cc ? ml_strtab_intern0 (t->strings, cc) : 0, um && *um ? ml_strtab_intern0 (t->strings, um) : 0 };
  if (meta.compile_context == UINT32_MAX || meta.user_metadata == UINT32_MAX || ml_trace_set_meta (t, meta) < 0)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  *prev_tick = ev.tick;
  return 0;
}

/* Time running backwards: memory events (allocations, frees, segments,
 * OOMs) whose time_ns is before the latest one so far. Kernels and marks
 * are left out: a tracer may write them as their records arrive. */
typedef struct {
  uint64_t n, first_line, prev_line, max_line;
  int64_t  first_ns, prev_ns, max_ns;
  uint8_t  first_kind;
} Backwards;

static void
note_time (Backwards *b, const MlEvent *ev, uint64_t line)
{
  if (ev->time_ns < 0 || ev->kind == ML_EV_KERNEL || ev->kind == ML_EV_MARK || ev->kind == ML_EV_SYNC)
    return;
  if (b->max_line && ev->time_ns < b->max_ns)
    {
      if (!b->n++)
        *b = (Backwards) { 1, line, b->max_line, b->max_line, ev->time_ns, b->max_ns, b->max_ns, ev->kind };
      return;
    }
  b->max_ns = ev->time_ns;
  b->max_line = line;
}

static int
note_backwards (MlTrace *t, const Backwards *b, MlError *err)
{
  if (!b->n)
    return 0;
  char note[400];
  snprintf (note, sizeof note, "line %" PRIu64 " (%s): \"time_ns\" %" PRId64 " is before the %" PRId64 " of line %" PRIu64
            ": time runs backwards (%" PRIu64 " such line%s); times are kept as the file has them", b->first_line,
            ml_event_kind_name ((MlEventKind) b->first_kind), b->first_ns, b->prev_ns, b->prev_line, b->n,
            b->n == 1 ? "" : "s");
  return ml_trace_add_note (t, note) < 0 ? ml_error_set (err, ML_ENOMEM, "out of memory") : 0;
}

int
ml_trace_load_jsonl (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err)
{
  MlLineReader r;
  int rc = ml_lines_open (&r, path, err);
  if (rc < 0)
    return rc;
  MlTrace *t = ml_trace_new ();
  MlU64Map stacks;
  ml_u64map_init (&stacks);
  if (!t)
    {
      ml_lines_close (&r);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  bool have_header = false;
  uint64_t prev_tick = 0;
  Backwards back = { 0 };
  while ((rc = ml_lines_next (&r, err)) > 0)
    {
      if ((r.lineno & 0xffff) == 0 && opts && (rc = ml_load_progress (opts, &r, err)) < 0)
        break;
      const char *s = r.line;
      size_t len = r.len;
      while (len && (*s == ' ' || *s == '\t'))
        s++, len--;
      if (len == 0)
        continue;
      if (!nesting_ok (s, len))
        {
          rc = ml_error_set (err, ML_EINPUT, "nested more than %d levels deep", MAX_NESTING);
          break;
        }
      if (ml_json_find_nul (s, len) != SIZE_MAX)
        {
          rc = ml_error_set (err, ML_EINPUT, ML_JSON_NUL_MSG);
          break;
        }
      const char *end = NULL;
      bool oom;
      cJSON *o = ml_json_parse (s, len, &end, &oom);
      if (oom)
        {
          rc = ml_error_set (err, ML_ENOMEM, "out of memory");
          break;
        }
      size_t used = o && end ? (size_t) (end - s) : len;
      while (used < len && (s[used] == ' ' || s[used] == '\t'))
        used++;
      if (o && used < len)
        {
          /* two events glued together (a writer that lost a newline) */
          cJSON_Delete (o);
          rc = ml_error_set (err, ML_EINPUT, "text after the JSON object: %.40s", s + used);
          break;
        }
      if (!o || !cJSON_IsObject (o))
        {
          cJSON_Delete (o);
          rc = ml_error_set (err, ML_EINPUT, "not a JSON object%s: %.60s",
                             r.missing_newline ? " (the file looks truncated)" : "", s);
          break;
        }
      size_t at;
      if ((rc = ml_json_check_unique_keys (o, s, len, &at, err)) < 0)
        {
          /* Python's json keeps the last of a key given twice */
          cJSON_Delete (o);
          if (at != SIZE_MAX)
            ml_error_prefix (err, "byte %" PRIu64, r.offset + (uint64_t) (s - r.line) + at);
          break;
        }
      if (!have_header)
        {
          rc = parse_header (t, o, err);
          have_header = true;
        }
      else
        {
          const char *kind = ml_json_str (o, "kind");
          if (kind && strcmp (kind, "stack") == 0)
            rc = parse_stack (t, o, &stacks, err);
          else if (kind && strcmp (kind, "inplace") == 0)
            rc = parse_inplace (t, o, err);
          else
            {
              size_t before = t->n_events;
              rc = parse_event (t, o, &stacks, &prev_tick, err);
              if (rc == 0 && t->n_events > before && ml_trace_set_origin (t, (uint64_t) r.lineno) < 0)
                rc = ml_error_set (err, ML_ENOMEM, "out of memory");
              if (rc == 0 && t->n_events > before)
                note_time (&back, &t->events[t->n_events - 1], (uint64_t) r.lineno);
            }
        }
      cJSON_Delete (o);
      if (rc < 0)
        break;
    }
  if (rc < 0)
    ml_error_prefix (err, "%s:%ld", path, r.lineno);
  else if (!have_header)
    rc = ml_error_set (err, ML_EINPUT, "%s: empty file (expected a memlens-trace header line)", path);
  else
    rc = note_backwards (t, &back, err);
  ml_lines_close (&r);
  ml_u64map_clear (&stacks);
  if (rc < 0)
    {
      ml_trace_free (t);
      return rc;
    }
  *out = t;
  return 0;
}

static void
put_stack (FILE *fp, const MlTrace *t, uint32_t sid)
{
  const MlStack *st = &t->stacks[sid];
  fprintf (fp, "{\"kind\":\"stack\",\"sid\":%u,\"site\":", sid);
  ml_json_put_str (fp, ml_trace_str (t, st->site));
  fputs (",\"frames\":[", fp);
  for (uint32_t i = 0; i < st->n; i++)
    {
      const MlFrame *f = ml_trace_stack_frame (t, st, i);
      fputs (i ? ",[" : "[", fp);
      ml_json_put_str (fp, ml_trace_str (t, f->file));
      fprintf (fp, ",%u,", f->line);
      ml_json_put_str (fp, ml_trace_str (t, f->func));
      fputc (']', fp);
    }
  fputs ("]}\n", fp);
}

int
ml_trace_write_jsonl (const MlTrace *t, const char *path, MlError *err)
{
  return ml_trace_write_jsonl_with (t, path, NULL, err);
}

int
ml_trace_write_jsonl_with (const MlTrace *t, const char *path, const MlProgress *pg, MlError *err)
{
  MlOut *out = ml_out_open (path, err);
  if (!out)
    return err ? err->code : ML_EIO;
  FILE *fp = ml_out_file (out);
  uint8_t *written = calloc (t->n_stacks ? t->n_stacks : 1, 1);
  if (!written)
    {
      ml_out_abort (out);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  fprintf (fp, "{\"format\":\"" FORMAT_NAME "\",\"version\":%d,\"source\":", FORMAT_VERSION);
  ml_json_put_str (fp, t->source ? ml_trace_str (t, t->source) : "jsonl");
  fprintf (fp, ",\"device\":%u,\"alignment\":%" PRIu64, t->device, t->default_align);
  if (t->capacity)
    fprintf (fp, ",\"capacity\":%" PRIu64, t->capacity);
  if (t->dropped_records)
    fprintf (fp, ",\"dropped_records\":%" PRIu64, t->dropped_records);
  if (t->device_total)
    fprintf (fp, ",\"device_total\":%" PRIu64, t->device_total);
  if (t->alloc_conf)
    fputs (",\"allocator_settings\":", fp), ml_json_put_str (fp, t->alloc_conf);
  if (t->ring_entries)
    fprintf (fp, ",\"trace_alloc_max_entries\":%" PRIu64, t->ring_entries);
  if (t->ring_wrapped >= 0)
    fprintf (fp, ",\"trace_alloc_overflowed\":%s", t->ring_wrapped ? "true" : "false");
  if (t->skipped_actions)
    fprintf (fp, ",\"skipped_actions\":%u", t->skipped_actions);
  fputs ("}\n", fp);
  uint64_t prev = 0;
  for (size_t i = 0; i < t->n_events; i++)
    {
      const MlEvent *ev = &t->events[i];
      if (pg && (i & 0xffff) == 0)
        {
          if (pg->cancelled && *pg->cancelled)
            {
              free (written);
              ml_out_abort (out);
              return ml_error_set (err, ML_ECANCELLED, "%s: cancelled", path);
            }
          if (pg->report)
            pg->report (pg->user, (double) i / (double) t->n_events, "writing events");
        }
      if (ev->stack && ev->stack < t->n_stacks && !written[ev->stack])
        {
          put_stack (fp, t, ev->stack);
          written[ev->stack] = 1;
        }
      fprintf (fp, "{\"kind\":\"%s\"", ml_event_kind_name ((MlEventKind) ev->kind));
      if (i == 0 ? ev->tick != 0 : ev->tick != prev + 1)
        fprintf (fp, ",\"tick\":%" PRIu64, ev->tick);
      prev = ev->tick;
      if (ev->flags & ML_EVF_HAS_ID)
        fputs (",\"id\":", fp), ml_json_put_u64 (fp, ev->id);
      if (ev->kind == ML_EV_OOM)
        fputs (",\"device_free\":", fp), ml_json_put_u64 (fp, ev->addr);
      else if (ev->flags & ML_EVF_HAS_ADDR)
        fprintf (fp, ",\"addr\":\"0x%" PRIx64 "\"", ev->addr);
      if (ev->kind == ML_EV_KERNEL)
        fprintf (fp, ",\"end_ns\":%" PRId64, (int64_t) ev->size);
      else if (ev->size || ev->kind == ML_EV_ALLOC)
        fputs (",\"size\":", fp), ml_json_put_u64 (fp, ev->size);
      if (ml_trace_stream_id (t, ev->stream))
        fputs (",\"stream\":", fp), ml_json_put_u64 (fp, ml_trace_stream_id (t, ev->stream));
      if (ev->kind == ML_EV_SYNC)
        {
          fprintf (fp, ",\"sync\":\"%s\"", ml_sync_kind_name ((MlSyncKind) ev->sync_kind));
          if (ml_trace_stream_id (t, ev->stream2))
            fputs (",\"stream2\":", fp), ml_json_put_u64 (fp, ml_trace_stream_id (t, ev->stream2));
        }
      else if (ev->kind != ML_EV_KERNEL && ev->pool && ev->pool < t->n_pools)
        fprintf (fp, ",\"pool\":[%" PRId64 ",%" PRId64 "]", t->pools[ev->pool].first, t->pools[ev->pool].second);
      MlEventMeta meta = ml_trace_event_meta (t, i);
      if (meta.compile_context)
        fputs (",\"compile_context\":", fp), ml_json_put_str (fp, ml_trace_str (t, meta.compile_context));
      if (meta.user_metadata)
        fputs (",\"user_metadata\":", fp), ml_json_put_str (fp, ml_trace_str (t, meta.user_metadata));
      if (ev->time_ns >= 0)
        fputs (",\"time_ns\":", fp), ml_json_put_u64 (fp, (uint64_t) ev->time_ns);   /* a string above 2^53 */
      if (ev->name)
        fputs (",\"name\":", fp), ml_json_put_str (fp, ml_trace_str (t, ev->name));
      if (ev->stack)
        fprintf (fp, ",\"stack\":%u", ev->stack);
      uint16_t fl = ev->flags;
      if (fl & ~(ML_EVF_HAS_ID | ML_EVF_HAS_ADDR))
        {
          fputs (",\"flags\":[", fp);
          bool first = true;
          for (size_t j = 0; j < sizeof flag_names / sizeof flag_names[0]; j++)
            if (fl & flag_names[j].flag)
              {
                fprintf (fp, "%s\"%s\"", first ? "" : ",", flag_names[j].name);
                first = false;
              }
          fputc (']', fp);
        }
      fputs ("}\n", fp);
    }
  for (size_t i = 0; i < t->n_inplace; i++)
    {
      const MlInplaceWrite *w = &t->inplace[i];
      fprintf (fp, "{\"kind\":\"inplace\",\"tick\":%" PRIu64 ",\"output\":", w->op_tick);
      ml_json_put_u64 (fp, w->output_id);
      fputs (",\"input\":", fp);
      ml_json_put_u64 (fp, w->input_id);
      fprintf (fp, ",\"last_read\":%" PRIu64, w->last_read);
      if (w->op_name)
        fputs (",\"op\":", fp), ml_json_put_str (fp, ml_trace_str (t, w->op_name));
      fputs ("}\n", fp);
    }
  free (written);
  return ml_out_commit (out, err);
}
