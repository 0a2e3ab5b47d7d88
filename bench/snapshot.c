/* bench-snapshot: how fast a PyTorch snapshot loads and replays.
 *
 *   bench-snapshot [--entries N] [--frames F]
 *
 * Writes a synthetic snapshot pickle in memory the way
 * torch.cuda.memory._dump_snapshot() does (protocol 4: FRAME, MEMOIZE,
 * BINGET for the shared frame lists): N trace entries (alloc,
 * free_requested, free_completed in turn) over 64 distinct stacks of F
 * frames, and the segments at dump time. Then times, each as a ratio to
 * a plain pass over the same bytes measured in the same run:
 *   parse      the pickle VM alone (sim/formats/pickle.c)
 *   load       pickle + mapping to events with the rebuild (sim/formats/snapshot.c)
 *   conform    the caching emulation's conformance replay
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/formats/pickle.h"
#include "sim/sim.h"
#include "sim/formats/snapshot.h"
#include "strategies/caching-conformance.h"

typedef struct {
  unsigned char *p;
  size_t n, cap;
  uint32_t memo;
} Buf;

static void
put (Buf *b, const void *data, size_t n)
{
  if (b->n + n > b->cap)
    {
      while (b->n + n > b->cap)
        b->cap = b->cap ? b->cap * 2 : 1 << 20;
      b->p = realloc (b->p, b->cap);
      if (!b->p)
        exit (1);
    }
  memcpy (b->p + b->n, data, n);
  b->n += n;
}

static void put1 (Buf *b, unsigned char c) { put (b, &c, 1); }

static void
put_str (Buf *b, const char *s)
{
  size_t n = strlen (s);
  if (n < 256)
    {
      put1 (b, 0x8c);
      put1 (b, (unsigned char) n);
    }
  else
    {
      put1 (b, 'X');
      uint32_t n4 = (uint32_t) n;
      put (b, &n4, 4);
    }
  put (b, s, n);
  put1 (b, 0x94);   /* MEMOIZE, as pickle does for strings */
  b->memo++;
}

static void
put_int (Buf *b, uint64_t v)
{
  if (v < 256)
    {
      put1 (b, 'K');
      put1 (b, (unsigned char) v);
    }
  else if (v < 0x7fffffff)
    {
      put1 (b, 'J');
      uint32_t v4 = (uint32_t) v;
      put (b, &v4, 4);
    }
  else
    {
      put1 (b, 0x8a);
      put1 (b, 8);
      put (b, &v, 8);
    }
}

static uint32_t
memoize (Buf *b)
{
  put1 (b, 0x94);
  return b->memo++;
}

static void
get (Buf *b, uint32_t idx)
{
  put1 (b, 'j');
  put (b, &idx, 4);
}

static void
key (Buf *b, const char *k)
{
  put_str (b, k);
}

int
main (int argc, char **argv)
{
  size_t entries = 300000, nframes = 20;
  for (int i = 1; i + 1 < argc; i += 2)
    {
      if (strcmp (argv[i], "--entries") == 0)
        entries = strtoull (argv[i + 1], NULL, 10);
      else if (strcmp (argv[i], "--frames") == 0)
        nframes = strtoull (argv[i + 1], NULL, 10);
    }
  const uint64_t base = 0x7f0000000000ull, seg = 2ull << 30;   /* one 2 GiB large segment */
  Buf b = { 0 };
  put1 (&b, 0x80);
  put1 (&b, 4);
  put1 (&b, '}');
  memoize (&b);
  put1 (&b, '(');
  key (&b, "segments");
  put1 (&b, ']');
  memoize (&b);
  put1 (&b, '}');
  memoize (&b);
  put1 (&b, '(');
  key (&b, "device"); put_int (&b, 0);
  key (&b, "address"); put_int (&b, base);
  key (&b, "total_size"); put_int (&b, seg);
  key (&b, "stream"); put_int (&b, 0);
  key (&b, "segment_type"); put_str (&b, "large");
  key (&b, "blocks");
  put1 (&b, ']');
  memoize (&b);
  put1 (&b, '}');
  memoize (&b);
  put1 (&b, '(');
  key (&b, "address"); put_int (&b, base);
  key (&b, "size"); put_int (&b, seg);
  key (&b, "requested_size"); put_int (&b, 0);
  key (&b, "state"); put_str (&b, "inactive");
  put1 (&b, 'u');
  put1 (&b, 'a');
  put1 (&b, 'u');
  put1 (&b, 'a');
  key (&b, "device_traces");
  put1 (&b, ']');
  memoize (&b);
  put1 (&b, ']');
  memoize (&b);
  /* 64 stacks, memoised at first use */
  uint32_t stack_memo[64];
  bool have[64] = { false };
  /* one live block at a time, sizes cycling */
  uint64_t sizes[8] = { 2u << 20, 4u << 20, 3u << 20, 8u << 20, 2u << 20, 6u << 20, 2u << 20, 4u << 20 };
  size_t batch = 0;
  put1 (&b, '(');
  uint64_t addr = base;
  for (size_t i = 0; i < entries; i++)
    {
      static const char *const actions[] = { "alloc", "free_requested", "free_completed" };
      size_t k = i % 3, s = (i / 3) % 8;
      if (k == 0)
        addr = base;   /* each block is freed before the next: the emulation reuses the lowest address */
      put1 (&b, '}');
      memoize (&b);
      put1 (&b, '(');
      key (&b, "action"); put_str (&b, actions[k]);
      key (&b, "addr"); put_int (&b, addr);
      key (&b, "size"); put_int (&b, sizes[s]);
      key (&b, "stream"); put_int (&b, 0);
      key (&b, "time_us"); put_int (&b, 1700000000000000ull + i);
      key (&b, "frames");
      size_t st = (i / 3) % 64;
      if (have[st])
        get (&b, stack_memo[st]);
      else
        {
          put1 (&b, ']');
          stack_memo[st] = memoize (&b);
          have[st] = true;
          put1 (&b, '(');
          for (size_t f = 0; f < nframes; f++)
            {
              char file[64], func[64];
              snprintf (file, sizeof file, f ? "/usr/lib/python3/site-packages/torch/f%zu.py" : "/home/u/train%zu.py", st);
              snprintf (func, sizeof func, "fn%zu_%zu", st, f);
              put1 (&b, '}');
              memoize (&b);
              put1 (&b, '(');
              key (&b, "filename"); put_str (&b, file);
              key (&b, "line"); put_int (&b, 10 + f);
              key (&b, "name"); put_str (&b, func);
              put1 (&b, 'u');
            }
          put1 (&b, 'e');
        }
      put1 (&b, 'u');
      if (++batch == 1000)
        {
          put1 (&b, 'e');
          put1 (&b, '(');
          batch = 0;
        }
    }
  put1 (&b, 'e');
  put1 (&b, 'a');   /* the device's trace into device_traces */
  put1 (&b, 'u');
  put1 (&b, '.');

  /* baseline: one pass over the bytes */
  double t0 = ml_now ();
  uint64_t sum = 0;
  for (int rep = 0; rep < 10; rep++)
    for (size_t i = 0; i < b.n; i++)
      sum += b.p[i] ^ (unsigned char) rep;
  double scan = (ml_now () - t0) / 10;

  MlError err = { 0 };
  MlPkDoc *doc = NULL;
  t0 = ml_now ();
  if (ml_pk_parse (b.p, b.n, &doc, &err) < 0)
    {
      fprintf (stderr, "parse: %s\n", err.msg);
      return 1;
    }
  double parse = ml_now () - t0;
  ml_pk_free (doc);
  MlTrace *t = NULL;
  t0 = ml_now ();
  if (ml_trace_load_snapshot_mem (b.p, b.n, "synthetic", NULL, &t, &err) < 0)
    {
      fprintf (stderr, "load: %s\n", err.msg);
      return 1;
    }
  double load = ml_now () - t0;
  MlCachingConformance c;
  t0 = ml_now ();
  if (ml_caching_conformance (t, NULL, &c, &err) < 0)
    {
      fprintf (stderr, "conformance: %s\n", err.msg);
      return 1;
    }
  double conform = ml_now () - t0;
  printf ("snapshot: %.1f MB, %zu trace entries, %zu events, %zu stacks (checksum %" PRIu64 ")\n", (double) b.n / 1e6,
          entries, t->n_events, t->n_stacks, sum & 0xff);
  printf ("%-10s %10s %14s %12s\n", "phase", "seconds", "entries/s", "vs scan");
  printf ("%-10s %10.4f %14s %12s\n", "scan", scan, "-", "1.0");
  printf ("%-10s %10.4f %14.0f %11.1fx\n", "parse", parse, (double) entries / parse, parse / scan);
  printf ("%-10s %10.4f %14.0f %11.1fx\n", "load", load, (double) entries / load, load / scan);
  printf ("%-10s %10.4f %14.0f %11.1fx\n", "conform", conform, (double) entries / conform, conform / scan);
  printf ("conformance on the synthetic trace: %zu / %zu at the real address\n", c.matched, c.allocs);
  ml_trace_free (t);
  free (b.p);
  return 0;
}
