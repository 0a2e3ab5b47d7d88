/* kineto-stream.c — a Kineto / Chrome trace read as a stream of JSON
 * tokens (yajl): memory grows with the [memory] events kept, not with
 * the file. Every other event (ops, kernels, runtime calls, flows,
 * metadata) is gone by the time its closing brace is read.
 *
 * What is read: the top-level "traceEvents" (or a bare array of events,
 * Chrome's array form) and "deviceProperties"; in each event "name",
 * "ts" and "args"; in the args of a [memory] event the seven keys below.
 * A key of these read twice in one object is refused (Python's json takes
 * the last, a first-come reader the first: they would disagree). Keys
 * are compared whole, with their length: "Bytes\u0000x" is not "Bytes".
 * Errors name the file, the line, the byte offset in the JSON text
 * (uncompressed) and the field.
 */
#include "sim/formats/kineto-private.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "sim/base/instream.h"
#include "sim/base/jsonutil.h"
#include "sim/base/units.h"
#include "sim/base/u64map.h"

/* Roles of the containers the reader looks into; the rest are skipped. */
enum { R_SKIP, R_ROOT, R_EVENTS, R_EVENT, R_ARGS, R_PROPS, R_PROP, R_DIST };

/* Keys the reader reads, by the container they belong to. */
enum {
  K_OTHER = 0,
  K_TRACE_EVENTS, K_DEVICE_PROPS, K_TENSORS, K_OPS, K_FORMAT, K_DIST_INFO, /* top level */
  K_NAME, K_TS, K_ARGS,                                         /* an event */
  K_BYTES, K_ADDR, K_TOTAL_ALLOC, K_TOTAL_RESERVED, K_DEV_TYPE, K_DEV_ID, K_STREAM, /* its args */
  K_PROP_ID, K_PROP_TOTAL,                                      /* deviceProperties[i] */
  K_RANK,                                                       /* distributedInfo */
  K__COUNT
};
#define N_ARGS (K_STREAM - K_BYTES + 1)

static const struct { const char *name; unsigned char role; } key_names[K__COUNT] = {
  [K_TRACE_EVENTS] = { "traceEvents", R_ROOT }, [K_DEVICE_PROPS] = { "deviceProperties", R_ROOT },
  [K_TENSORS] = { "tensors", R_ROOT }, [K_OPS] = { "ops", R_ROOT }, [K_FORMAT] = { "format", R_ROOT },
  [K_NAME] = { "name", R_EVENT }, [K_TS] = { "ts", R_EVENT }, [K_ARGS] = { "args", R_EVENT },
  [K_BYTES] = { "Bytes", R_ARGS }, [K_ADDR] = { "Addr", R_ARGS }, [K_TOTAL_ALLOC] = { "Total Allocated", R_ARGS },
  [K_TOTAL_RESERVED] = { "Total Reserved", R_ARGS }, [K_DEV_TYPE] = { "Device Type", R_ARGS },
  [K_DEV_ID] = { "Device Id", R_ARGS }, [K_STREAM] = { "Stream", R_ARGS },
  [K_PROP_ID] = { "id", R_PROP }, [K_PROP_TOTAL] = { "totalGlobalMem", R_PROP },
  [K_DIST_INFO] = { "distributedInfo", R_ROOT }, [K_RANK] = { "rank", R_DIST },
};

/* The string values the reader looks for (V_MEMORY: an event's name). */
enum { V_MEMORY, V_GRAPH };
static const char *const value_names[] = { [V_MEMORY] = "[memory]", [V_GRAPH] = "memlens-graph" };

static bool
is_value (const char *s, size_t len, int v)
{
  return len == strlen (value_names[v]) && memcmp (s, value_names[v], len) == 0;
}

/* A scalar as written: its text (numbers and strings up to 63 bytes),
 * its kind, and where it ends. */
enum { V_ABSENT, V_NUMBER, V_STRING, V_OTHER };
typedef struct {
  unsigned char kind;
  bool          cut;        /* longer than text holds */
  unsigned char len;
  char          text[64];
  uint64_t      at;         /* byte offset of its start */
  unsigned long line;
} Raw;

typedef struct {
  bool     memory;          /* "name" is "[memory]" */
  bool     has_args;        /* "args" is an object */
  uint64_t at;              /* byte offset of its '{' */
  unsigned long line;
  Raw      ts;
  Raw      arg[N_ARGS];
} Event;

#define MAX_DEPTH (ML_JSON_MAX_DEPTH + 1)

typedef struct {
  const char *path;
  const MlLoadOptions *opts;
  MlError    *err;
  MlKinDoc   *doc;
  yajl_handle h;
  int         rc;           /* set by a callback that stops the parse */
  /* where the parser is: the chunk's offset in the text, lines before */
  uint64_t    base;
  const unsigned char *chunk;
  size_t      chunk_len;
  uint64_t    counted;      /* newlines are counted up to this offset */
  unsigned long line;       /* 1 + newlines before `counted` */
  /* the containers open, their roles, the key read last in each, the
   * keys read in each (a bit per K_*) */
  int           depth;
  unsigned char role[MAX_DEPTH + 1];
  unsigned char key[MAX_DEPTH + 1];
  uint32_t      seen[MAX_DEPTH + 1];
  bool          root_seen;
  /* what the document is: 0 undecided, 1 a trace, 2 a graph */
  int           kind;
  char          format[64]; /* a top-level "format" string */
  Event         ev;
  struct { Raw id, total; } prop;   /* of deviceProperties[i] */
  uint64_t      n_prop_items;       /* deviceProperties' items so far */
  MlU64Map      dev_by_key;
  size_t        last_dev;
} Ctx;

/* ---- where: offsets, lines, fields ---- */

/* The line of byte @at (at or after the last one asked, inside the
 * current chunk or before it). */
static unsigned long
line_at (Ctx *c, uint64_t at)
{
  if (at > c->counted)
    {
      uint64_t end = at - c->base <= c->chunk_len ? at : c->base + c->chunk_len;
      const unsigned char *p = c->chunk + (c->counted - c->base), *e = c->chunk + (end - c->base);
      unsigned long n = 0;
      for (; p < e; p++)
        n += *p == '\n';
      c->line += n;
      c->counted = end;
    }
  return c->line;
}

/* The byte just past the token the parser read last. */
static uint64_t
here (const Ctx *c)
{
  return c->base + yajl_get_bytes_consumed (c->h);
}

/* The field the parser is in, as a path: traceEvents[12].args.Bytes;
 * up to the first container whose key the reader does not read. */
static void
field_text (const Ctx *c, char *buf, size_t len)
{
  size_t n = 0;
  buf[0] = 0;
  for (int d = 1; d <= c->depth && n < len; d++)
    {
      unsigned char r = c->role[d];
      if (r == R_EVENTS)
        n += (size_t) snprintf (buf + n, len - n, "%s[%" PRIu64 "]", d == 1 ? "traceEvents" : "", c->doc->n_events);
      else if (r == R_PROPS)
        n += (size_t) snprintf (buf + n, len - n, "[%" PRIu64 "]", c->n_prop_items);
      else if (r == R_SKIP || c->key[d] == K_OTHER)
        break;
      else
        n += (size_t) snprintf (buf + n, len - n, "%s%s", r == R_ROOT ? "" : ".", key_names[c->key[d]].name);
    }
}

/* An error at byte @at of the text (line @line), in @field. */
static int __attribute__ ((format (printf, 6, 7)))
fail_at (Ctx *c, int code, uint64_t at, unsigned long line, const char *field, const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  c->rc = ml_error_set (c->err, code, "%s:%lu: byte %" PRIu64 ": %s%s%s", c->path, line, at, field, *field ? ": " : "", msg);
  return 0;   /* stops yajl */
}

/* An error at the token just read, @token_len bytes long. */
static int __attribute__ ((format (printf, 3, 4)))
fail_here (Ctx *c, size_t token_len, const char *fmt, ...)
{
  char msg[1024], field[256];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  field_text (c, field, sizeof field);
  uint64_t at = here (c);
  at = at >= token_len ? at - token_len : 0;
  return fail_at (c, ML_EINPUT, at, line_at (c, at > c->counted ? at : c->counted), field, "%s", msg);
}

static int
oom (Ctx *c)
{
  c->rc = ml_error_set (c->err, ML_ENOMEM, "%s: out of memory", c->path);
  return 0;
}

/* ---- values ---- */

static void
raw_set (Ctx *c, Raw *r, unsigned char kind, const char *s, size_t len, size_t token_len)
{
  r->kind = kind;
  r->cut = len >= sizeof r->text;
  r->len = (unsigned char) (r->cut ? sizeof r->text - 1 : len);
  if (r->len)  /* yajl passes NULL for an empty string */
    memcpy (r->text, s, r->len);
  r->text[r->len] = 0;
  uint64_t end = here (c);
  r->at = end >= token_len ? end - token_len : 0;
  r->line = line_at (c, r->at > c->counted ? r->at : c->counted);
}

/* The scalar just read, @kind with text @s (numbers and strings), at the
 * container on top. */
static int
scalar (Ctx *c, unsigned char kind, const char *s, size_t len)
{
  int d = c->depth;
  unsigned char r = d ? c->role[d] : R_SKIP, k = d ? c->key[d] : K_OTHER;
  size_t tok = kind == V_STRING ? len + 2 : kind == V_NUMBER ? len : 1;
  if (d == 0)
    return fail_here (c, tok, "the document is a %s, not a Kineto / Chrome trace ({\"traceEvents\": [...]})",
                      kind == V_NUMBER ? "number" : kind == V_STRING ? "string" : "literal");
  switch (r)
    {
    case R_EVENTS:
      return fail_here (c, tok, "an event is a %s, not an object", kind == V_NUMBER ? "number" : kind == V_STRING ? "string" : "literal");
    case R_ROOT:
      if (k == K_TRACE_EVENTS)
        return fail_here (c, tok, "a Kineto / Chrome trace needs a \"traceEvents\" array");
      if (k == K_FORMAT && kind == V_STRING)
        {
          snprintf (c->format, sizeof c->format, "%.*s", (int) (len < 63 ? len : 63), s);
          if (c->kind == 0 && is_value (s, len, V_GRAPH))
            {
              c->kind = 2;
              return 0;
            }
        }
      return 1;
    case R_EVENT:
      if (k == K_NAME)
        c->ev.memory = kind == V_STRING && is_value (s, len, V_MEMORY);
      else if (k == K_TS)
        raw_set (c, &c->ev.ts, kind, s, len, kind == V_STRING ? len + 2 : len);
      return 1;
    case R_ARGS:
      if (k >= K_BYTES && k <= K_STREAM)
        raw_set (c, &c->ev.arg[k - K_BYTES], kind, s, len, kind == V_STRING ? len + 2 : len);
      return 1;
    case R_DIST:
      if (k == K_RANK)
        {
          /* torch.profiler's distributedInfo: {"backend": ..., "rank": N, "world_size": M} */
          int64_t v = -1;
          char num[32];
          if (kind == V_NUMBER && len < sizeof num)
            {
              memcpy (num, s, len);
              num[len] = 0;
              char *end;
              errno = 0;
              long long got = strtoll (num, &end, 10);
              if (!*end && !errno && got >= 0 && got < INT32_MAX)
                v = got;
            }
          c->doc->rank = v;
        }
      return 1;
    case R_PROP:
      if (k == K_PROP_ID || k == K_PROP_TOTAL)
        raw_set (c, k == K_PROP_ID ? &c->prop.id : &c->prop.total, kind, s, len, len);
      return 1;
    default:
      return 1;
    }
}

static int cb_null (void *u) { return scalar (u, V_OTHER, NULL, 0); }
static int cb_bool (void *u, int b) { (void) b; return scalar (u, V_OTHER, NULL, 0); }
static int cb_number (void *u, const char *s, size_t len) { return scalar (u, V_NUMBER, s, len); }
static int cb_string (void *u, const unsigned char *s, size_t len) { return scalar (u, V_STRING, (const char *) s, len); }

/* ---- containers ---- */

/* The role of a container opened at the top of @c, and what that says
 * of the document. */
static int
open_container (Ctx *c, bool object)
{
  int d = c->depth;
  if (d >= MAX_DEPTH - 1)
    return fail_here (c, 1, "nested more than %d levels deep", ML_JSON_MAX_DEPTH);
  unsigned char parent = d ? c->role[d] : R_SKIP, k = d ? c->key[d] : K_OTHER, role = R_SKIP;
  if (d == 0)
    {
      c->root_seen = true;
      role = object ? R_ROOT : R_EVENTS;
      if (!object)
        c->kind = 1;
    }
  else if (parent == R_ROOT && k == K_TRACE_EVENTS)
    {
      if (object)
        return fail_here (c, 1, "a Kineto / Chrome trace needs a \"traceEvents\" array");
      role = R_EVENTS;
    }
  else if (parent == R_ROOT && k == K_DEVICE_PROPS)
    role = object ? R_SKIP : R_PROPS;
  else if (parent == R_ROOT && k == K_DIST_INFO)
    role = object ? R_DIST : R_SKIP;
  else if (parent == R_EVENTS)
    {
      if (!object)
        return fail_here (c, 1, "an event is an array, not an object");
      role = R_EVENT;
      c->ev.memory = c->ev.has_args = false;
      c->ev.ts.kind = V_ABSENT;
      for (int i = 0; i < N_ARGS; i++)
        c->ev.arg[i].kind = V_ABSENT;
      c->ev.at = here (c) - 1;
      c->ev.line = line_at (c, c->ev.at);
    }
  else if (parent == R_EVENT && k == K_ARGS && object)
    {
      role = R_ARGS;
      c->ev.has_args = true;
    }
  else if (parent == R_PROPS && object)
    {
      role = R_PROP;
      c->prop.id.kind = c->prop.total.kind = V_ABSENT;
    }
  d = ++c->depth;
  c->role[d] = role;
  c->key[d] = K_OTHER;
  c->seen[d] = 0;
  return 1;
}

static int cb_start_map (void *u) { return open_container (u, true); }
static int cb_start_array (void *u) { return open_container (u, false); }

/* A device's slot in the table, added at its first event; UINT32_MAX
 * when out of memory or past 65,535 devices. */
static size_t
dev_slot (Ctx *c, bool cpu, int64_t type, int64_t id)
{
  MlKinDoc *doc = c->doc;
  uint64_t k = cpu ? UINT64_MAX : (uint64_t) id;
  if (c->last_dev < doc->n_devs && doc->devs[c->last_dev].cpu == cpu && (cpu || doc->devs[c->last_dev].id == id))
    return c->last_dev;
  uint32_t slot;
  if (ml_u64map_get (&c->dev_by_key, k, &slot))
    return c->last_dev = slot;
  if (doc->n_devs >= 65535)
    return SIZE_MAX;
  if (doc->n_devs == doc->cap_devs)
    {
      size_t cap = doc->cap_devs ? doc->cap_devs * 2 : 8;
      MlKinDev *p = realloc (doc->devs, cap * sizeof *p);
      if (!p)
        return SIZE_MAX;
      doc->devs = p;
      doc->cap_devs = cap;
    }
  if (ml_u64map_put (&c->dev_by_key, k, (uint32_t) doc->n_devs) < 0)
    return SIZE_MAX;
  doc->devs[doc->n_devs] = (MlKinDev) { .cpu = cpu, .type = type, .id = cpu ? 0 : id };
  return c->last_dev = doc->n_devs++;
}

/* A number or a numeric string as an exact integer: decimal digits with
 * an optional '-', or 0x and hex digits (strings); a JSON number with a
 * fraction or an exponent when its value is whole. Returns 1 with *neg
 * and *mag, 0 when it is a number that is not whole or out of range (with
 * *d its value), -1 when it is no number at all. */
static int
raw_int (const Raw *r, bool *neg, uint64_t *mag, double *d)
{
  *neg = false;
  *mag = 0;
  *d = 0;
  if ((r->kind != V_NUMBER && r->kind != V_STRING) || r->len == 0)
    return -1;
  const char *s = r->text;
  bool minus = s[0] == '-';
  const char *p = s + minus;
  if (r->kind == V_STRING && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && !minus && p[2])
    {
      uint64_t v = 0;
      for (p += 2; *p; p++)
        {
          int h = *p >= '0' && *p <= '9' ? *p - '0' : (*p | 0x20) >= 'a' && (*p | 0x20) <= 'f' ? (*p | 0x20) - 'a' + 10 : -1;
          if (h < 0)
            return -1;
          if (v >> 60)
            return *d = 1.8446744073709552e19, 0;
          v = v * 16 + (uint64_t) h;
        }
      *mag = v;
      *d = (double) v;
      return r->cut ? 0 : 1;
    }
  size_t digits = strspn (p, "0123456789");
  if (digits && !p[digits] && !r->cut)
    {
      uint64_t v = 0;
      for (size_t i = 0; i < digits; i++)
        {
          if (v > (UINT64_MAX - 9) / 10)
            return *d = strtod (s, NULL), 0;
          v = v * 10 + (uint64_t) (p[i] - '0');
        }
      *neg = minus && v;
      *mag = v;
      *d = minus ? -(double) v : (double) v;
      return 1;
    }
  /* a fraction or an exponent: whole values only, through a double */
  char *end;
  errno = 0;
  double v = strtod (s, &end);
  if (end == s || *end || !digits || (r->kind == V_STRING && !isfinite (v)))
    return r->cut && digits ? (*d = strtod (s, NULL), 0) : -1;
  *d = v;
  if (r->cut || !isfinite (v) || v != floor (v) || fabs (v) >= 1.8446744073709552e19)
    return 0;
  *neg = v < 0;
  *mag = (uint64_t) fabs (v);
  return 1;
}

/* @r as a signed 64-bit integer; false when it is none. */
static bool
raw_i64 (const Raw *r, int64_t *out)
{
  bool neg;
  uint64_t mag;
  double d;
  if (raw_int (r, &neg, &mag, &d) != 1 || mag > (uint64_t) INT64_MAX)
    return false;
  *out = neg ? -(int64_t) mag : (int64_t) mag;
  return true;
}

/* `ts` (microseconds, a number or a numeric string, any precision) in
 * nanoseconds, exactly (a double holds 15-16 digits: 1700000000123456.789
 * would lose its last); false when it is none or past an int64. */
static bool
raw_ts_ns (const Raw *r, int64_t *out)
{
  return (r->kind == V_NUMBER || r->kind == V_STRING) && !r->cut && ml_parse_decimal_scaled (r->text, r->len, 3, out) == 0;
}

/* Keeps the message of the first [memory] event of device @slot that
 * cannot be read; it is the error when that device is read. */
static int __attribute__ ((format (printf, 4, 5)))
dev_bad (Ctx *c, size_t slot, const Raw *at, const char *fmt, ...)
{
  MlKinDev *dv = &c->doc->devs[slot];
  if (dv->bad)
    return 1;
  char msg[512];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  uint64_t off = at ? at->at : c->ev.at;
  unsigned long line = at ? at->line : c->ev.line;
  size_t n = strlen (c->path) + strlen (msg) + 96;
  if (!(dv->bad = malloc (n)))
    return oom (c);
  snprintf (dv->bad, n, "%s:%lu: byte %" PRIu64 ": traceEvents[%" PRIu64 "]: %s", c->path, line, off, c->doc->n_events, msg);
  return 1;
}

/* The end of an event: a [memory] event of a device the mapping may
 * read is kept. */
static int
event_end (Ctx *c)
{
  Event *e = &c->ev;
  if (!e->memory)
    return 1;
  if (!e->has_args)
    {
      char field[64];
      snprintf (field, sizeof field, "traceEvents[%" PRIu64 "]", c->doc->n_events);
      return fail_at (c, ML_EINPUT, e->at, e->line, field, "a [memory] event needs an \"args\" object");
    }
  const Raw *a = e->arg;
  int64_t type = 0, id = 0;
  if (a[K_DEV_TYPE - K_BYTES].kind != V_ABSENT && !raw_i64 (&a[K_DEV_TYPE - K_BYTES], &type))
    type = INT64_MIN;
  if (a[K_DEV_ID - K_BYTES].kind != V_ABSENT && !raw_i64 (&a[K_DEV_ID - K_BYTES], &id))
    id = INT64_MIN;
  bool cpu = type == 0;
  size_t slot = dev_slot (c, cpu, type, id);
  if (slot == SIZE_MAX)
    return c->doc->n_devs >= 65535 ? fail_at (c, ML_EINPUT, e->at, e->line, "traceEvents", "[memory] events of more than 65535 devices")
                                   : oom (c);
  MlKinDev *dv = &c->doc->devs[slot];
  dv->events++;
  int want = c->opts->device;
  if (want >= 0 ? cpu || id != want : !cpu && !(id >= 0 && id <= ML_DEVICE_MAX))
    return 1;
  if (dv->bad)
    return 1;
  const Raw *rb = &a[K_BYTES - K_BYTES], *ra = &a[K_ADDR - K_BYTES];
  bool bneg, aneg;
  uint64_t bmag, amag;
  double bd, ad;
  int b = raw_int (rb, &bneg, &bmag, &bd), ad_rc = raw_int (ra, &aneg, &amag, &ad);
  if (b < 0 || ad_rc < 0)
    return dev_bad (c, slot, b < 0 && rb->kind != V_ABSENT ? rb : ad_rc < 0 && ra->kind != V_ABSENT ? ra : NULL,
                    "a [memory] event needs numeric args \"Bytes\" and \"Addr\"");
  /* whole numbers only: a Bytes of 0.5 is no allocation to round down to 0 */
  if (b == 0 || bmag > UINT64_C (9000000000000000000))
    return dev_bad (c, slot, rb, "Bytes %s%s is not an integer from -9e18 to 9e18", rb->text, rb->cut ? "..." : "");
  if (ad_rc == 0 || (aneg && amag) || amag > UINT64_C (18000000000000000000))
    return dev_bad (c, slot, ra, "Addr %s%s is not an integer from 0 to 1.8e19", ra->text, ra->cut ? "..." : "");
  MlKinMem m = { .index = c->doc->n_events, .bytes = bneg ? -(int64_t) bmag : (int64_t) bmag, .addr = amag,
                 .total_alloc = UINT64_MAX, .total_reserved = UINT64_MAX, .dev = (uint16_t) slot };
  m.has_ts = raw_ts_ns (&e->ts, &m.ts_ns);
  bool neg;
  uint64_t v;
  double d;
  /* tid is the CPU thread that asked; a stream only when the event names one */
  if (raw_int (&a[K_STREAM - K_BYTES], &neg, &v, &d) == 1 && !neg && v <= UINT32_MAX)
    m.stream = (uint32_t) v;
  if (raw_int (&a[K_TOTAL_ALLOC - K_BYTES], &neg, &v, &d) == 1 && (!neg || !v) && v <= UINT64_C (18000000000000000000))
    m.total_alloc = v;
  if (raw_int (&a[K_TOTAL_RESERVED - K_BYTES], &neg, &v, &d) == 1 && (!neg || !v) && v <= UINT64_C (18000000000000000000))
    m.total_reserved = v;
  MlKinDoc *doc = c->doc;
  if (doc->n_mem == doc->cap_mem)
    {
      size_t cap = doc->cap_mem ? doc->cap_mem + doc->cap_mem / 2 : 1024;
      MlKinMem *p = realloc (doc->mem, cap * sizeof *p);
      if (!p)
        return oom (c);
      doc->mem = p;
      doc->cap_mem = cap;
    }
  doc->mem[doc->n_mem++] = m;
  dv->kept++;
  return 1;
}

/* The end of deviceProperties[i]: its id and memory when both are
 * integers. */
static int
prop_end (Ctx *c)
{
  MlKinDoc *doc = c->doc;
  int64_t id;
  bool neg;
  uint64_t total;
  double d;
  c->n_prop_items++;
  if (!raw_i64 (&c->prop.id, &id) || raw_int (&c->prop.total, &neg, &total, &d) != 1 || neg || !total
      || total > UINT64_C (18000000000000000000))
    return 1;
  if (doc->n_props == doc->cap_props)
    {
      size_t cap = doc->cap_props ? doc->cap_props * 2 : 8;
      void *p = realloc (doc->props, cap * sizeof *doc->props);
      if (!p)
        return oom (c);
      doc->props = p;
      doc->cap_props = cap;
    }
  doc->props[doc->n_props].id = id;
  doc->props[doc->n_props++].total = total;
  return 1;
}

/* The key just read, as one of K_* for a container of role @r. */
static unsigned char
key_of (unsigned char r, const unsigned char *s, size_t len)
{
  for (unsigned k = 1; k < K__COUNT; k++)
    if (key_names[k].role == r && strlen (key_names[k].name) == len && memcmp (key_names[k].name, s, len) == 0)
      return (unsigned char) k;
  return K_OTHER;
}

static int
cb_map_key (void *u, const unsigned char *s, size_t len)
{
  Ctx *c = u;
  int d = c->depth;
  unsigned char r = c->role[d];
  if (r == R_SKIP)
    return 1;
  unsigned char k = K_OTHER;
  /* the events' keys first, by length: most objects are events */
  if (r == R_EVENT)
    k = len == 4 ? (memcmp (s, "name", 4) == 0 ? K_NAME : memcmp (s, "args", 4) == 0 ? K_ARGS : K_OTHER)
        : len == 2 && s[0] == 't' && s[1] == 's' ? K_TS : K_OTHER;
  else if (r != R_ARGS || (len >= 4 && len <= 15 && (s[0] == 'B' || s[0] == 'A' || s[0] == 'T' || s[0] == 'D' || s[0] == 'S')))
    k = key_of (r, s, len);
  c->key[d] = k;
  if (k == K_OTHER)
    return 1;
  if (c->seen[d] & (UINT32_C (1) << k))
    return fail_here (c, len + 2, "the key appears twice in one object (Python's json would keep the last, a first-come reader the "
                         "first): refused");
  c->seen[d] |= UINT32_C (1) << k;
  if (r == R_ROOT && c->kind == 0)
    {
      if (k == K_TRACE_EVENTS)
        c->kind = 1;
      else if (k == K_TENSORS || k == K_OPS)
        {
          c->kind = 2;
          return 0;
        }
    }
  return 1;
}

static int
cb_end_map (void *u)
{
  Ctx *c = u;
  unsigned char r = c->role[c->depth];
  c->depth--;
  int rc = 1;
  if (r == R_EVENT)
    {
      rc = event_end (c);
      c->doc->n_events++;
    }
  else if (r == R_PROP)
    rc = prop_end (c);
  return rc;
}

static int
cb_end_array (void *u)
{
  Ctx *c = u;
  c->depth--;
  return 1;
}

static const yajl_callbacks callbacks = {
  cb_null, cb_bool, NULL, NULL, cb_number, cb_string, cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array,
};

/* ---- the text, chunk by chunk ---- */

/* yajl's status after a chunk (or the end, @final): 0, 1 (a graph:
 * stopped), or the error. */
static int
status (Ctx *c, yajl_status st, bool final)
{
  if (st == yajl_status_ok)
    return 0;
  if (c->rc < 0)
    return c->rc;
  if (st == yajl_status_client_canceled)
    return c->kind == 2 ? 1 : ml_error_set (c->err, ML_EINPUT, "%s: cannot read", c->path);
  unsigned char *e = yajl_get_error (c->h, 0, NULL, 0);
  const char *m = e ? (const char *) e : "not JSON";
  /* yajl's "parse error: " / "lexical error: " prefix: the message says "not valid JSON" */
  const char *colon = strstr (m, "error: ");
  if (colon && colon - m < 12)
    m = colon + 7;
  char text[256];
  snprintf (text, sizeof text, "%s", m);
  size_t n = strlen (text);
  while (n && (text[n - 1] == '\n' || text[n - 1] == '.'))
    text[--n] = 0;
  if (e)
    yajl_free_error (c->h, e);
  if (final && strstr (text, "premature EOF"))
    snprintf (text, sizeof text, "the JSON text ends before the document does (a truncated file?)");
  char field[256];
  field_text (c, field, sizeof field);
  /* yajl counts the byte it stopped at as read */
  uint64_t at = final ? c->base : here (c) > c->base ? here (c) - 1 : c->base;
  fail_at (c, ML_EINPUT, at, line_at (c, at), field, "not valid JSON: %s", text);
  return c->rc;
}

static int
feed (Ctx *c, const unsigned char *buf, size_t n)
{
  c->chunk = buf;
  c->chunk_len = n;
  int rc = status (c, yajl_parse (c->h, buf, n), false);
  if (rc == 0)
    line_at (c, c->base + n);
  c->base += n;
  return rc;
}

/* The end of the text: what the document turned out to be. */
static int
finish (Ctx *c)
{
  c->chunk_len = 0;
  int rc = status (c, yajl_complete_parse (c->h), true);
  if (rc != 0)
    return rc;
  if (!c->root_seen)
    return ml_error_set (c->err, ML_EINPUT, "%s: empty file (no JSON value)", c->path);
  if (c->kind == 1)
    return 0;
  if (c->format[0])
    return ml_error_set (c->err, ML_EINPUT, "%s: a \"%s\" file is not a trace (memlens reads Kineto traces and graphs as .json)",
                         c->path, c->format);
  return ml_error_set (c->err, ML_EINPUT, "%s: JSON with neither \"traceEvents\" (Kineto / Chrome trace) nor \"ops\" (graph)",
                       c->path);
}

static int
ctx_init (Ctx *c, const char *path, const MlLoadOptions *opts, MlKinDoc *doc, MlError *err)
{
  *c = (Ctx) { .path = path, .opts = opts, .err = err, .doc = doc, .line = 1, .last_dev = SIZE_MAX };
  *doc = (MlKinDoc) { .rank = -1 };
  ml_u64map_init (&c->dev_by_key);
  c->h = yajl_alloc (&callbacks, NULL, c);
  if (!c->h)
    return ml_error_set (err, ML_ENOMEM, "%s: out of memory", path);
  return 0;
}

static void
ctx_clear (Ctx *c, int rc)
{
  if (c->h)
    yajl_free (c->h);
  ml_u64map_clear (&c->dev_by_key);
  if (rc != 0)
    ml_kin_doc_clear (c->doc);
}

void
ml_kin_doc_clear (MlKinDoc *doc)
{
  for (size_t i = 0; i < doc->n_devs; i++)
    free (doc->devs[i].bad);
  free (doc->devs);
  free (doc->mem);
  free (doc->props);
  *doc = (MlKinDoc) { 0 };
}

int
ml_kin_stream_mem (const char *text, size_t len, const char *name, const MlLoadOptions *opts, MlKinDoc *doc, MlError *err)
{
  Ctx c;
  int rc = ctx_init (&c, name, opts, doc, err);
  if (rc == 0)
    rc = len ? feed (&c, (const unsigned char *) text, len) : 0;
  if (rc == 0)
    rc = finish (&c);
  if (rc == 1)
    rc = ml_error_set (err, ML_EINPUT, "%s: a graph, not a Kineto / Chrome trace", name);
  ctx_clear (&c, rc);
  return rc;
}

/* Appends @n bytes to the text kept for the graph reader. */
static int
keep (char **text, size_t *len, size_t *cap, const unsigned char *buf, size_t n, const char *path, MlError *err)
{
  if (*len + n + 1 > *cap)
    {
      size_t c2 = *cap ? *cap : 1 << 16;
      while (*len + n + 1 > c2)
        c2 *= 2;
      char *p = realloc (*text, c2);
      if (!p)
        return ml_error_set (err, ML_ENOMEM, "%s: out of memory after reading %zu bytes", path, *len);
      *text = p;
      *cap = c2;
    }
  memcpy (*text + *len, buf, n);
  *len += n;
  (*text)[*len] = 0;
  return 0;
}

#define CHUNK (1 << 18)

int
ml_kin_stream (const char *path, const MlLoadOptions *opts, MlKinDoc *doc, char **graph_text, size_t *graph_len,
               MlError *err)
{
  MlInStream *in = ml_in_open (path, ML_KIN_MAX_TEXT, err);
  if (!in)
    return err ? err->code : ML_EINPUT;
  unsigned char *buf = malloc (CHUNK);
  char *pre = NULL;   /* the text so far, while the document may be a graph */
  size_t n_pre = 0, cap_pre = 0;
  Ctx c;
  int rc = buf ? ctx_init (&c, path, opts, doc, err) : ml_error_set (err, ML_ENOMEM, "%s: out of memory", path);
  const MlProgress *prog = opts->progress;
  long got = 0;
  while (rc == 0 && (got = ml_in_read (in, buf, CHUNK, err)) > 0)
    {
      if (c.kind == 0)
        rc = keep (&pre, &n_pre, &cap_pre, buf, (size_t) got, path, err);
      if (rc == 0)
        rc = feed (&c, buf, (size_t) got);
      if (c.kind == 1 && pre)
        {
          free (pre);   /* a trace: no need for its text */
          pre = NULL;
          n_pre = cap_pre = 0;
        }
      if (rc == 0 && prog && prog->cancelled && *prog->cancelled)
        rc = ml_error_set (err, ML_ECANCELLED, "cancelled");
      if (rc == 0 && prog && prog->report)
        prog->report (prog->user, ml_in_fraction (in), "reading");
    }
  if (rc == 0 && got < 0)
    rc = (int) got;
  if (rc == 0 && ml_in_count (in) == 0)
    rc = ml_error_set (err, ML_EINPUT, "%s: empty file", path);
  if (rc == 0)
    rc = finish (&c);
  /* a graph: the rest of the text, for the graph reader */
  while (rc == 1 && (got = ml_in_read (in, buf, CHUNK, err)) > 0)
    if (keep (&pre, &n_pre, &cap_pre, buf, (size_t) got, path, err) < 0)
      rc = err ? err->code : ML_ENOMEM;
  if (rc == 1 && got < 0)
    rc = (int) got;
  if (buf)
    ctx_clear (&c, rc);
  ml_in_close (in);
  free (buf);
  if (rc == 1)
    {
      *graph_text = pre;
      *graph_len = n_pre;
      return 1;
    }
  free (pre);
  return rc;
}
