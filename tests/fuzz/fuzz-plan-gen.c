/* fuzz-plan-gen.c — structure-aware: the input bytes are the choices of
 * a generator (tests/fuzz/gen.h) that writes a plan as `memlens plan -o`
 * does (format, version, strategy, alignment, optimal, the statistics,
 * "segments" with size / start / end / addr / stream / growable /
 * expandable, "buffers" with index / id / segment / offset) for the
 * fixed trace of fuzz-plan.c, then bends it: values of every JSON type,
 * numbers past 2^53 and 2^64, hex and decimal strings, 2^60 + 1, streams
 * past 2^32, indexes that point at the wrong buffer, buffers placed twice
 * or not at all, segments that do not exist, duplicate keys, long
 * strings, nesting past the depth limit.
 *
 * The document goes to ml_plan_read_json (what `check --plan`,
 * `report --plan` read), then the checker and the metrics. Oracles: a
 * failed read names the file; a field the reader must refuse makes the
 * read fail; a read that succeeds holds exactly the segments and the
 * placements written.
 */
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/gen.h"

#include <inttypes.h>

static const char trace_text[] =
  "{\"format\":\"memlens-trace\",\"version\":1,\"alignment\":256}\n"
  "{\"kind\":\"alloc\",\"id\":1,\"size\":1024}\n"
  "{\"kind\":\"alloc\",\"id\":2,\"size\":512,\"stream\":1}\n"
  "{\"kind\":\"alloc\",\"id\":3,\"size\":100}\n"
  "{\"kind\":\"free\",\"id\":1}\n"
  "{\"kind\":\"alloc\",\"id\":4,\"size\":2048}\n"
  "{\"kind\":\"free\",\"id\":3}\n"
  "{\"kind\":\"alloc\",\"id\":3,\"size\":300}\n"
  "{\"kind\":\"free\",\"id\":2}\n"
  "{\"kind\":\"alloc\",\"id\":5,\"size\":0}\n"
  "{\"kind\":\"free\",\"id\":4}\n"
  "{\"kind\":\"alloc\",\"id\":6,\"size\":4096}\n";

#define LIMIT ((uint64_t) 1 << 60)   /* ML_BUFFERS_MAX_TOTAL */
#define MAX_SEGS 8

typedef struct {
  Fdp      f;
  Buf      o;
  bool     must_fail, exact;
  bool     align_said;   /* the top-level "alignment" was written as itself */
  size_t   n_segs;
  MlSegment segs[MAX_SEGS];
  size_t   placed_n;
  uint32_t seg_of[64];
  uint64_t off_of[64];
  bool     placed[64];
  char     text[4096];
} P;

static const MlBuffers *bufs;

static void
comma (P *g, bool *first)
{
  if (!*first)
    buf_byte (&g->o, ',');
  *first = false;
}

/* A key, usually itself; rarely one that is not (a space after it, the
 * first letter's case). Returns true when it is @k. */
static bool
key (P *g, const char *k)
{
  size_t n = strlen (k);
  char t[64];
  memcpy (t, k, n);
  if (!fdp_rare (&g->f, 53))
    {
      json_str (&g->o, t, n);
      buf_byte (&g->o, ':');
      return true;
    }
  if (fdp_u8 (&g->f) & 1)
    t[n++] = ' ';
  else
    t[0] = (char) (t[0] ^ 0x20);
  json_str (&g->o, t, n);
  buf_byte (&g->o, ':');
  return false;
}

/* An unsigned integer of the plan: @v as a number (below 2^53), a decimal
 * or a hex string, usually; rarely a chosen value up to 2^64 - 1 (as a
 * string: a JSON number past 2^53 is inexact), or something that is no
 * unsigned 64-bit integer. Returns false for those; *out is the value
 * otherwise. */
static bool
gen_u64 (P *g, uint64_t v, uint64_t *out)
{
  if (fdp_rare (&g->f, 17))
    {
      switch (fdp_pick (&g->f, 4))
        {
        case 0: v = 0; break;
        case 1: v = UINT64_MAX - fdp_pick (&g->f, 3); break;
        case 2: v = LIMIT + fdp_pick (&g->f, 3) - 1; break;
        default: v = ((uint64_t) 1 << 32) + fdp_pick (&g->f, 3) - 1; break;
        }
      buf_printf (&g->o, fdp_u8 (&g->f) & 1 ? "\"0x%" PRIx64 "\"" : "\"%" PRIu64 "\"", v);
      *out = v;
      return true;
    }
  if (fdp_rare (&g->f, 23))
    {
      static const char *const bad[] = { "-1", "1.5", "1e400", "9007199254740992", "1e19", "true", "[]", "{}",
                                         "\"\"", "\"-1\"", "\"1.5\"", "\"0x\"", "\"0x10000000000000000\"",
                                         "\"18446744073709551616\"", "\"12 \"", "\"abc\"" };
      buf_str (&g->o, bad[fdp_pick (&g->f, sizeof bad / sizeof bad[0])]);
      return false;
    }
  switch (fdp_pick (&g->f, 4))
    {
    case 1: buf_printf (&g->o, "\"%" PRIu64 "\"", v); break;
    case 2: buf_printf (&g->o, "\"0x%" PRIx64 "\"", v); break;
    default: buf_printf (&g->o, "%" PRIu64, v); break;
    }
  *out = v;
  return true;
}

static void
gen_segment (P *g, size_t k)
{
  MlSegment s = { .size = 8192, .start = 0, .end = bufs->end_tick };
  bool first = true, ok = true, have_size = false;
  uint64_t v;
  buf_byte (&g->o, '{');
  comma (g, &first);
  buf_printf (&g->o, "\"id\":%zu", k);
  /* size (required), start, end, addr, stream, growable, expandable */
  static const char *const names[] = { "size", "start", "end", "addr", "stream" };
  for (int i = 0; i < 5; i++)
    {
      if (i > 0 && (i >= 3 ? !(fdp_u8 (&g->f) & 1) : fdp_rare (&g->f, 7)))
        continue;
      comma (g, &first);
      bool said = key (g, names[i]);
      uint64_t ordinary = i == 0 ? 4096 * (1 + fdp_pick (&g->f, 4)) : i == 1 ? fdp_pick (&g->f, 3)
                          : i == 2 ? bufs->end_tick - fdp_pick (&g->f, 2) : i == 3 ? 0x7f0000000000ull + k * 0x100000
                          : fdp_pick (&g->f, 3);
      if (fdp_rare (&g->f, 37))
        {
          buf_str (&g->o, "null");   /* null: as if absent */
          if (said && i == 0)
            ok = false;
          continue;
        }
      bool good = gen_u64 (g, ordinary, &v);
      if (!said)
        continue;
      if (!good)
        ok = false;
      else if (i == 0)
        s.size = v, have_size = true, ok = ok && v <= LIMIT;
      else if (i == 1)
        s.start = v;
      else if (i == 2)
        s.end = v;
      else if (i == 3)
        s.addr = v;
      else if (v > UINT32_MAX)
        ok = false;   /* a stream past 2^32 - 1 is no stream of memlens (MlSegment.stream is 32 bits) */
      else
        s.stream = (uint32_t) v;
    }
  if (!have_size)
    ok = false;
  if (fdp_rare (&g->f, 5))
    {
      comma (g, &first);
      buf_str (&g->o, fdp_u8 (&g->f) & 1 ? "\"growable\":true" : "\"expandable\":true");
    }
  buf_byte (&g->o, '}');
  if (!ok)
    g->must_fail = true;
  if (k < MAX_SEGS)
    g->segs[k] = s;
}

/* The buffer a placement of @id (and @index, when @has_index) is for, as
 * the reader resolves it: by index when that buffer has the id, else the
 * last buffer with the id; -1: none. */
static long
resolve (uint64_t id, bool has_index, uint64_t index)
{
  if (has_index && index < bufs->n && bufs->buf[index].id == id)
    return (long) index;
  long b = -1;
  for (size_t i = 0; i < bufs->n; i++)
    if (bufs->buf[i].id == id)
      b = (long) i;
  return b;
}

static void
gen_buffer (P *g, size_t i)
{
  bool first = true, ok = true, has_index = false, have_id = false, have_off = false;
  uint64_t id = bufs->buf[i].id, index = i, seg = 0, off = 4096 * (uint64_t) fdp_pick (&g->f, 3), v;
  if (fdp_rare (&g->f, 13))
    id = 1 + fdp_pick (&g->f, 8);   /* another buffer's id, or none's */
  if (fdp_rare (&g->f, 13))
    index = fdp_pick (&g->f, 8);
  buf_byte (&g->o, '{');
  /* index, id, segment, offset: the order memlens writes */
  if (!fdp_rare (&g->f, 7))
    {
      comma (g, &first);
      bool said = key (g, "index");
      bool good = gen_u64 (g, index, &v);
      if (said && !good)
        ok = false;
      if (said && good)
        has_index = true, index = v;
    }
  comma (g, &first);
  bool said = key (g, "id");
  bool good = gen_u64 (g, id, &v);
  if (said && !good)
    ok = false;
  if (said && good)
    have_id = true, id = v;
  if (!fdp_rare (&g->f, 11))
    {
      comma (g, &first);
      said = key (g, "segment");
      good = gen_u64 (g, g->n_segs > 1 ? fdp_pick (&g->f, (unsigned) g->n_segs) : 0, &v);
      if (said && !good)
        ok = false;
      if (said && good)
        seg = v;
    }
  comma (g, &first);
  said = key (g, "offset");
  good = gen_u64 (g, off, &v);
  if (said && !good)
    ok = false;
  if (said && good)
    have_off = true, off = v;
  if (said && fdp_rare (&g->f, 43))
    {
      buf_str (&g->o, ",\"offset\":0");   /* the key twice: refused */
      g->must_fail = true;
    }
  buf_byte (&g->o, '}');
  long b = have_id ? resolve (id, has_index, index) : -1;
  if (!ok || !have_id || !have_off || b < 0 || seg >= g->n_segs || off > LIMIT || g->placed[b])
    {
      g->must_fail = true;
      return;
    }
  g->placed[b] = true;
  g->seg_of[b] = (uint32_t) seg;
  g->off_of[b] = off;
  g->placed_n++;
}

static void
gen_plan (P *g)
{
  bool first = true;
  buf_byte (&g->o, '{');
  comma (g, &first);
  if (key (g, "format"))
    {
      if (fdp_rare (&g->f, 41))
        {
          buf_str (&g->o, fdp_u8 (&g->f) & 1 ? "\"memlens-trace\"" : "1");
          g->must_fail = true;
        }
      else
        buf_str (&g->o, "\"memlens-plan\"");
    }
  else
    {
      buf_str (&g->o, "\"memlens-plan\"");
      g->must_fail = true;
    }
  comma (g, &first);
  bool said = key (g, "version");
  uint64_t v;
  if (fdp_rare (&g->f, 41))
    {
      if (!gen_u64 (g, 2, &v) || v != 1)
        g->must_fail = true;
    }
  else
    buf_str (&g->o, "1");
  if (!said)
    g->must_fail = true;
  comma (g, &first);
  key (g, "strategy");
  {
    size_t n = fdp_rare (&g->f, 7) ? gen_text (&g->f, g->text, sizeof g->text) : 0;
    if (n)
      json_str (&g->o, g->text, n);
    else
      json_cstr (&g->o, "best-fit");
  }
  comma (g, &first);
  said = key (g, "alignment");
  g->align_said = said;
  if (!gen_u64 (g, 256, &v) && said)
    g->must_fail = true;
  comma (g, &first);
  buf_printf (&g->o, "\"buffers_count\":%zu,\"lower_bound\":7168,\"optimal\":%s,\"seconds\":0.000012,"
              "\"nodes_visited\":0,\"backtracks\":0", bufs->n, fdp_u8 (&g->f) & 1 ? "true" : "false");
  if (fdp_rare (&g->f, 11))
    {
      buf_str (&g->o, ",\"note\":");
      if (fdp_u8 (&g->f) & 1)
        json_nest (&g->o, 90 + fdp_pick (&g->f, 20));   /* around ML_JSON_MAX_DEPTH */
      else
        {
          size_t n = gen_text (&g->f, g->text, sizeof g->text);
          json_str (&g->o, g->text, n);
        }
    }
  /* segments */
  comma (g, &first);
  said = key (g, "segments");
  g->n_segs = fdp_rare (&g->f, 13) ? fdp_pick (&g->f, MAX_SEGS + 1) : 1 + fdp_pick (&g->f, 2);
  if (fdp_rare (&g->f, 47))
    {
      buf_str (&g->o, "{}");
      g->must_fail = true;
    }
  else
    {
      buf_byte (&g->o, '[');
      for (size_t k = 0; k < g->n_segs; k++)
        {
          if (k)
            buf_byte (&g->o, ',');
          gen_segment (g, k);
        }
      buf_byte (&g->o, ']');
    }
  if (!said)
    g->must_fail = true;
  /* buffers, in index order; rarely shuffled, one missing or one twice */
  comma (g, &first);
  said = key (g, "buffers");
  if (!said)
    g->must_fail = true;
  buf_byte (&g->o, '[');
  size_t order[64], n = bufs->n;
  for (size_t i = 0; i < n; i++)
    order[i] = i;
  if (fdp_rare (&g->f, 5))
    for (size_t i = n; i-- > 1;)
      {
        size_t j = fdp_pick (&g->f, (unsigned) i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
      }
  if (fdp_rare (&g->f, 29))
    n--;   /* one without a placement */
  else if (fdp_rare (&g->f, 29))
    order[n++] = order[0];   /* one placed twice */
  for (size_t i = 0; i < n; i++)
    {
      if (i)
        buf_byte (&g->o, ',');
      gen_buffer (g, order[i]);
    }
  buf_byte (&g->o, ']');
  if (g->placed_n != bufs->n)
    g->must_fail = true;
  if (fdp_rare (&g->f, 31))
    {
      /* a key twice: Python's json keeps the last, a reader taking the
       * first would disagree; every JSON reader refuses it */
      buf_str (&g->o, ",\"alignment\":");
      json_hostile (&g->f, &g->o);
      g->exact = false;
      if (g->align_said)
        g->must_fail = true;
    }
  buf_byte (&g->o, '}');
  if (fdp_rare (&g->f, 61))
    g->o.n -= fdp_pick (&g->f, (unsigned) (g->o.n < 100 ? g->o.n : 100));
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static MlTrace   *trace;
  static MlBuffers *fixture;
  MlError err = { 0 };
  if (!fixture)
    {
      if (ml_trace_load_jsonl (fuzz_path ((const uint8_t *) trace_text, sizeof trace_text - 1), NULL, &trace, &err) < 0
          || ml_buffers_build (trace, 0, &fixture, &err) < 0 || fixture->n > 64)
        {
          fprintf (stderr, "fuzz-plan-gen: fixture: %s\n", err.msg);
          abort ();
        }
      bufs = fixture;
    }
  static P g;
  memset (&g, 0, offsetof (P, text));
  g.f = (Fdp) { data, size };
  g.exact = true;
  gen_plan (&g);
  gen_dump (&g.o);
  const char *path = fuzz_path (g.o.b, g.o.n);
  MlPlan *plan;
  int rc = ml_plan_read_json (path, bufs, &plan, &err);
  free (g.o.b);
  if (rc < 0)
    {
      if (!err.msg[0] || !strstr (err.msg, path))
        {
          fprintf (stderr, "fuzz: an error that does not name the file: \"%s\"\n", err.msg);
          abort ();
        }
      return 0;
    }
  if (g.must_fail)
    {
      fprintf (stderr, "fuzz: the plan holds a value the reader must refuse, and the read succeeded\n");
      abort ();
    }
  if (g.exact)
    {
      if (plan->n_segments != g.n_segs)
        {
          fprintf (stderr, "fuzz: %zu segments read, %zu written\n", plan->n_segments, g.n_segs);
          abort ();
        }
      for (size_t k = 0; k < g.n_segs && k < MAX_SEGS; k++)
        {
          const MlSegment *a = &plan->segments[k], *b = &g.segs[k];
          if (a->size != b->size || a->start != b->start || a->end != b->end || a->addr != b->addr
              || a->stream != b->stream)
            {
              fprintf (stderr,
                       "fuzz: segment %zu read as size %" PRIu64 " start %" PRIu64 " end %" PRIu64 " addr %" PRIu64
                       " stream %u; written %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %u\n",
                       k, a->size, a->start, a->end, a->addr, a->stream, b->size, b->start, b->end, b->addr, b->stream);
              abort ();
            }
        }
      for (size_t i = 0; i < bufs->n; i++)
        if (plan->segment[i] != g.seg_of[i] || plan->offset[i] != g.off_of[i])
          {
            fprintf (stderr, "fuzz: buffer %zu read at segment %u offset %" PRIu64 "; written %u %" PRIu64 "\n", i,
                     plan->segment[i], plan->offset[i], g.seg_of[i], g.off_of[i]);
            abort ();
          }
    }
  fuzz_plan (bufs, plan, 0);
  ml_plan_arena_size (plan, bufs);
  ml_plan_free (plan);
  return 0;
}
