/* fuzz-kineto-gen.c — structure-aware: the input bytes are the choices
 * of a generator (tests/fuzz/gen.h) that writes a Kineto / Chrome trace
 * as torch.profiler exports it — "traceEvents" with [memory] instant
 * events (args Bytes, Addr, Total Allocated, Total Reserved, Device Id,
 * Device Type, Stream), kernels and CPU ops around them, metadata events,
 * "deviceProperties" — then bends it: values of every JSON type where
 * numbers belong, numbers past 2^53, 2^63 and 2^64, 1e400, fractions,
 * numeric strings (hex, signs, spaces), timestamps as strings, NaN and
 * huge, duplicate keys, keys with a NUL inside, 512-byte strings,
 * nesting past the depth limit, the bare-array form of a Chrome trace.
 *
 * The document goes to the reader `memlens stats trace.json` uses
 * (ml_trace_load with the "kineto" format: the .json dispatch), then
 * everything behind it. Oracles: a failed load names the file; when the
 * device is chosen (--device) and one of its [memory] events has Bytes or
 * Addr that is not an integer in range, the load fails; when it
 * succeeds, its allocations after tick 0 are exactly the device's
 * [memory] events with Bytes > 0 (count and bytes).
 */
#include "tests/fuzz/gen-trace.h"

typedef struct {
  Fdp      f;
  Buf      o;
  int      dev;        /* --device, or -1 */
  bool     must_fail, exact;
  bool     events_read;   /* the events go to the reader (not under a missed key) */
  uint64_t n_alloc, sum_alloc;
  int      n_dev;
  char     text[4096];
} K;

/* A key, usually itself; rarely a near miss that a C string compare
 * takes for it ("Bytes\u0000x") or one that nobody takes for it. Returns
 * true when the key is @k as JSON compares keys. */
static bool
key (K *g, const char *k)
{
  if (!fdp_rare (&g->f, 47))
    {
      json_cstr (&g->o, k);
      buf_byte (&g->o, ':');
      return true;
    }
  char t[64];
  size_t n = strlen (k);
  memcpy (t, k, n);
  switch (fdp_pick (&g->f, 3))
    {
    case 0:
      /* not "Bytes\u0000x": cJSON keeps strings as C strings, so that one
       * is "Bytes" to every reader (docs/reliability.md) */
      t[n] = ' ';
      json_str (&g->o, t, n + 1);
      break;
    case 1:
      t[0] = (char) (t[0] ^ 0x20);
      json_str (&g->o, t, n);
      break;
    default:
      json_str (&g->o, t, n - 1);
      break;
    }
  buf_byte (&g->o, ':');
  return false;
}

static void
comma (K *g, bool *first)
{
  if (!*first)
    buf_byte (&g->o, ',');
  *first = false;
}

/* Any JSON value, a little nested. */
static void
gen_any (K *g, int depth)
{
  switch (depth > 3 ? 0 : fdp_pick (&g->f, 6))
    {
    case 0: buf_printf (&g->o, "%u", fdp_pick (&g->f, 256)); break;
    case 1:
      {
        size_t n = gen_text (&g->f, g->text, sizeof g->text);
        json_str (&g->o, g->text, n);
      }
      break;
    case 2:
      {
        buf_byte (&g->o, '[');
        for (unsigned i = fdp_pick (&g->f, 4); i-- > 0;)
          {
            gen_any (g, depth + 1);
            if (i)
              buf_byte (&g->o, ',');
          }
        buf_byte (&g->o, ']');
      }
      break;
    case 3:
      buf_str (&g->o, "{\"k\":");
      gen_any (g, depth + 1);
      buf_byte (&g->o, '}');
      break;
    case 4: json_nest (&g->o, 1 + fdp_pick (&g->f, 150)); break;
    default: json_hostile (&g->f, &g->o); break;
    }
}

/* An integer field as the profiler writes it (@v), or as a number string,
 * or hex; rarely something that is not an integer in range, which the
 * reader must refuse (for Bytes: a fraction, 1e400, 1e19, a non-number;
 * for Addr also a negative number). Returns false for those. */
static bool
gen_int (K *g, int64_t v, bool is_addr)
{
  if (!fdp_rare (&g->f, 19))
    {
      switch (fdp_pick (&g->f, 8))
        {
        case 1:
          if (v >= 0)
            {
              buf_printf (&g->o, "\"%" PRId64 "\"", v);   /* a number string */
              return true;
            }
          buf_printf (&g->o, "%" PRId64, v);
          return true;
        case 2: buf_printf (&g->o, "%" PRId64 ".0", v); return true;
        case 3:
          if (v >= 0)
            {
              buf_printf (&g->o, "\"0x%" PRIx64 "\"", (uint64_t) v);
              return true;
            }
          /* fall through */
        default: buf_printf (&g->o, "%" PRId64, v); return true;
        }
    }
  static const char *const bad_bytes[] = { "1.5", "0.5", "-2.25", "1e400", "-1e400", "1e19", "-1e19", "null", "true",
                                           "[]", "{}", "\"\"", "\"abc\"", "\"5 \"", "\"nan\"", "\"1.5\"",
                                           "\"18446744073709551616\"" };
  static const char *const bad_addr[] = { "-1", "-4096", "0.5", "1e400", "1e20", "18446744073709551616", "null",
                                          "false", "[1]", "{}", "\"\"", "\"0x\"", "\"-5\"", "\"12abc\"",
                                          "\"0x10000000000000000\"", "\"inf\"" };
  if (is_addr)
    buf_str (&g->o, bad_addr[fdp_pick (&g->f, sizeof bad_addr / sizeof bad_addr[0])]);
  else
    buf_str (&g->o, bad_bytes[fdp_pick (&g->f, sizeof bad_bytes / sizeof bad_bytes[0])]);
  return false;
}

/* "Device Type" / "Device Id" as the reader takes them: the value it
 * reads (-1: none of its devices); *known false when the oracle cannot
 * say. */
static int
gen_dev_field (K *g, int ordinary, bool *known)
{
  switch (fdp_rare (&g->f, 13) ? 1 + fdp_pick (&g->f, 5) : 0)
    {
    case 0: buf_printf (&g->o, "%d", ordinary); return ordinary;
    case 1: buf_printf (&g->o, "\"%d\"", ordinary); return ordinary;
    case 2: buf_str (&g->o, "-1"); return -1;
    case 3: buf_str (&g->o, "70000"); return -1;
    case 4: buf_printf (&g->o, "%d", ordinary + 1); return ordinary + 1;
    default:
      json_hostile (&g->f, &g->o);
      *known = false;
      return -1;
    }
}

static void
gen_memory_event (K *g, double *ts, int64_t *allocated, int64_t *reserved, uint64_t *live, unsigned n_slots)
{
  bool first = true, known = true;
  buf_byte (&g->o, '{');
  /* ph, cat, s, name, pid, tid, ts, args: as torch writes them */
  comma (g, &first);
  buf_str (&g->o, "\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\"");
  comma (g, &first);
  bool named = key (g, "name");
  if (fdp_rare (&g->f, 29))
    {
      gen_any (g, 0);
      named = false;
    }
  else
    json_cstr (&g->o, "[memory]");
  comma (g, &first);
  buf_printf (&g->o, "\"pid\":%u,\"tid\":%u", 1000 + fdp_pick (&g->f, 3), 1000 + fdp_pick (&g->f, 3));
  comma (g, &first);
  key (g, "ts");
  switch (fdp_rare (&g->f, 11) ? 1 + fdp_pick (&g->f, 4) : 0)
    {
    case 0: buf_printf (&g->o, "%.3f", *ts); break;
    case 1: buf_printf (&g->o, "\"%.3f\"", *ts); break;
    case 2: buf_str (&g->o, "\"nan\""); break;
    case 3: buf_str (&g->o, "1e308"); break;
    default: json_hostile (&g->f, &g->o); break;
    }
  *ts += fdp_pick (&g->f, 50) / 4.0;
  comma (g, &first);
  bool have_args = key (g, "args");
  if (fdp_rare (&g->f, 37))
    {
      gen_any (g, 0);
      buf_byte (&g->o, '}');
      if (named)
        g->exact = false;
      return;
    }
  /* the allocation: a slot's address, allocated or freed */
  unsigned slot = fdp_pick (&g->f, n_slots);
  uint64_t addr = 0x7f0000000000ull + (uint64_t) slot * 4096;
  int64_t bytes = ((int64_t) 1 + fdp_pick (&g->f, 64)) * 512;
  bool freeing = (live[slot / 64] >> (slot % 64)) & 1;
  if (fdp_rare (&g->f, 7))
    freeing = !freeing;
  if (freeing)
    bytes = -bytes;
  if (fdp_rare (&g->f, 31))
    bytes = 0;
  *allocated += bytes;
  if (bytes > 0 && fdp_rare (&g->f, 3))
    *reserved += 2 << 20;
  int dtype = 1, did = g->n_dev > 1 ? (int) fdp_pick (&g->f, (unsigned) g->n_dev) : 0;
  bool bytes_ok = true, addr_ok = true, bytes_said = false, addr_said = false;
  int64_t bytes_v = 0;
  bool af = true;
  buf_byte (&g->o, '{');
  const char *order[] = { "Total Reserved", "Total Allocated", "Bytes", "Addr", "Device Id", "Device Type",
                          "Stream" };
  bool dup = fdp_rare (&g->f, 41);
  for (int i = 0; i < 7; i++)
    {
      if (i >= 4 ? fdp_rare (&g->f, 11) : fdp_rare (&g->f, 59))
        {
          if (i == 4)
            did = 0;   /* absent: device 0 */
          if (i == 5)
            dtype = 0;   /* absent: CPU */
          continue;
        }
      comma (g, &af);
      bool k = key (g, order[i]);
      switch (i)
        {
        case 0:
        case 1:
          {
            int64_t v = i == 0 ? *reserved : *allocated;
            if (fdp_rare (&g->f, 13))
              json_hostile (&g->f, &g->o);
            else
              buf_printf (&g->o, "%" PRId64, v);
          }
          break;
        case 2:
          {
            bool ok = gen_int (g, bytes, false);
            if (k)
              bytes_said = true, bytes_ok = ok, bytes_v = bytes;
          }
          break;
        case 3:
          {
            bool ok = gen_int (g, (int64_t) addr, true);
            if (k)
              addr_said = true, addr_ok = ok;
          }
          break;
        case 4:
          {
            int v = gen_dev_field (g, did, &known);
            if (k)
              did = v;
            else
              did = 0;
          }
          break;
        case 5:
          {
            int v = gen_dev_field (g, dtype, &known);
            if (k)
              dtype = v;
            else
              dtype = 0;
          }
          break;
        default:
          if (fdp_rare (&g->f, 7))
            json_hostile (&g->f, &g->o);
          else
            buf_printf (&g->o, "%u", fdp_pick (&g->f, 4) * 7);
          break;
        }
    }
  if (dup)
    {
      /* a second "Bytes": Python keeps the last; the reader refuses it
       * in any event's args (issue 26 item 6) */
      comma (g, &af);
      buf_str (&g->o, "\"Bytes\":");
      json_hostile (&g->f, &g->o);
      if (bytes_said && have_args && g->events_read)
        g->must_fail = true;
    }
  buf_byte (&g->o, '}');
  buf_byte (&g->o, '}');
  if (!named || !have_args || dup)
    {
      g->exact = false;   /* not a [memory] event as JSON says, or two Bytes */
      return;
    }
  if (!known)
    {
      g->exact = false;
      return;
    }
  bool mine = g->dev >= 0 && dtype != 0 && did == g->dev;
  if (!mine)
    return;
  if (!bytes_said || !addr_said || !bytes_ok || !addr_ok)
    {
      g->must_fail = true;
      return;
    }
  if (bytes_v > 0)
    {
      live[slot / 64] |= (uint64_t) 1 << (slot % 64);
      g->n_alloc++;
      g->sum_alloc += (uint64_t) bytes_v;
    }
  else if (bytes_v < 0)
    live[slot / 64] &= ~((uint64_t) 1 << (slot % 64));
}

static void
gen_other_event (K *g, double ts)
{
  static const char *const names[] = { "aten::empty", "void at::native::vectorized_elementwise_kernel<4>",
                                       "ProfilerStep#1", "cudaMalloc", "Memcpy HtoD (Pageable -> Device)" };
  switch (fdp_pick (&g->f, 4))
    {
    case 0:
    case 1:
      buf_printf (&g->o, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", fdp_u8 (&g->f) & 1 ? "kernel" : "cpu_op");
      if (fdp_rare (&g->f, 5))
        {
          size_t n = gen_text (&g->f, g->text, sizeof g->text);
          json_str (&g->o, g->text, n);
        }
      else
        json_cstr (&g->o, names[fdp_pick (&g->f, 5)]);
      buf_printf (&g->o, ",\"pid\":0,\"tid\":7,\"ts\":%.3f,\"dur\":%u,\"args\":{\"stream\":7,\"correlation\":%u}}", ts,
                  fdp_pick (&g->f, 100), fdp_pick (&g->f, 200));
      break;
    case 2:
      buf_str (&g->o, "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":0,\"tid\":0,\"args\":{\"name\":\"python3\"}}");
      break;
    default:
      gen_any (g, 0);   /* not an event */
      break;
    }
}

static void
gen_events (K *g)
{
  buf_byte (&g->o, '[');
  double ts = 1700000000000.0 + fdp_pick (&g->f, 100);
  int64_t allocated = (int64_t) fdp_pick (&g->f, 8) << 20, reserved = allocated + (2 << 20);
  uint64_t live[4] = { 0 };
  unsigned n = fdp_pick (&g->f, 24), slots = 1 + fdp_pick (&g->f, 64);
  unsigned repeat = fdp_rare (&g->f, 41) ? 20 + fdp_pick (&g->f, 80) : 1;
  const uint8_t *mark = g->f.p;
  size_t left = g->f.n;
  bool first = true;
  for (unsigned r = 0; r < repeat; r++)
    {
      g->f.p = mark;
      g->f.n = left;
      for (unsigned i = 0; i < n; i++)
        {
          comma (g, &first);
          if (fdp_rare (&g->f, 3))
            gen_other_event (g, ts);
          else
            gen_memory_event (g, &ts, &allocated, &reserved, live, slots);
        }
    }
  buf_byte (&g->o, ']');
}

static void
gen_props (K *g)
{
  buf_byte (&g->o, '[');
  for (int d = 0; d < g->n_dev; d++)
    {
      if (d)
        buf_byte (&g->o, ',');
      buf_byte (&g->o, '{');
      key (g, "id");
      if (fdp_rare (&g->f, 13))
        json_hostile (&g->f, &g->o);
      else
        buf_printf (&g->o, "%d", d);
      buf_str (&g->o, ",\"name\":\"NVIDIA H100 80GB HBM3\",");
      key (g, "totalGlobalMem");
      if (fdp_rare (&g->f, 7))
        json_hostile (&g->f, &g->o);
      else
        buf_printf (&g->o, "%" PRIu64, (uint64_t) 85 << 30);
      buf_str (&g->o, ",\"computeMajor\":9,\"computeMinor\":0,\"numSms\":132}");
    }
  buf_byte (&g->o, ']');
}

static void
gen_trace (K *g)
{
  g->n_dev = 1 + (int) fdp_pick (&g->f, 3);
  g->dev = fdp_u8 (&g->f) & 1 ? (int) fdp_pick (&g->f, (unsigned) g->n_dev) : -1;
  g->exact = true;
  if (fdp_rare (&g->f, 23))
    {
      g->events_read = true;
      gen_events (g);   /* the bare-array form of a Chrome trace */
      return;
    }
  /* schemaVersion, deviceProperties, traceEvents, traceName, ... */
  buf_str (&g->o, "{\"schemaVersion\":1,");
  if (!fdp_rare (&g->f, 7))
    {
      key (g, "deviceProperties");
      if (fdp_rare (&g->f, 17))
        gen_any (g, 0);
      else
        gen_props (g);
      buf_byte (&g->o, ',');
    }
  if (fdp_rare (&g->f, 29))
    {
      /* a string of 512 bytes and more where the reader looks for nothing */
      size_t n = gen_text (&g->f, g->text, sizeof g->text);
      buf_str (&g->o, "\"distributedInfo\":");
      json_str (&g->o, g->text, n);
      buf_byte (&g->o, ',');
    }
  bool said = key (g, "traceEvents");
  if (!said)
    g->exact = false;
  if (fdp_rare (&g->f, 31))
    {
      gen_any (g, 0);
      g->exact = false;
    }
  else
    {
      g->events_read = said;
      gen_events (g);
    }
  buf_str (&g->o, ",\"traceName\":\"/tmp/trace.json\",\"displayTimeUnit\":\"ms\"");
  if (fdp_rare (&g->f, 19))
    {
      buf_str (&g->o, ",\"traceEvents\":[]");   /* a second traceEvents: refused when the first was one */
      g->exact = false;
      g->must_fail = said;
    }
  buf_byte (&g->o, '}');
  if (fdp_rare (&g->f, 61))
    g->o.n -= fdp_pick (&g->f, (unsigned) (g->o.n < 200 ? g->o.n : 200));   /* cut short */
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static K g;
  memset (&g, 0, offsetof (K, text));
  g.f = (Fdp) { data, size };
  gen_trace (&g);
  /* "kineto": what a .json path gets */
  MlTrace *t = gen_load_judged (&g.o, "kineto", &(GenOracle) {
    .dev = g.dev, .must_fail = g.must_fail, .exact = g.exact, .n_alloc = g.n_alloc, .sum_alloc = g.sum_alloc,
    .refused = "has a [memory] event the reader must refuse" });
  if (!t)
    return 0;
  for (size_t i = 0; i < t->n_events; i++)
    (void) strlen (ml_trace_str (t, t->events[i].name));
  fuzz_analyse_n (t, 0, 64);
  ml_trace_free (t);
  return 0;
}
