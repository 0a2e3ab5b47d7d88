/* The native JSONL format and the MiniMalloc CSV: reading, writing,
 * round trips, and every bad-input message. */
#include "tests/tap.h"

#include "sim/formats/jsonl.h"
#include "sim/formats/csv.h"
#include "sim/formats/load.h"
#include "sim/buffers.h"

static MlTrace *
load_text (const char *text, const char *suffix, MlError *err)
{
  char *path = tap_write_temp (text, suffix);
  MlTrace *t = NULL;
  memset (err, 0, sizeof *err);
  if (ml_trace_load (path, NULL, &t, err) < 0)
    t = NULL;
  unlink (path);
  free (path);
  return t;
}

static const char good_jsonl[] =
  "{\"format\":\"memlens-trace\",\"version\":1,\"source\":\"test\",\"alignment\":512}\n"
  "{\"kind\":\"mark\",\"name\":\"forward\",\"time_ns\":100}\n"
  "{\"kind\":\"stack\",\"sid\":7,\"site\":\"model.py:12:forward\",\"frames\":[[\"model.py\",12,\"forward\"],[\"torch/nn.py\",99,\"__call__\"]]}\n"
  "{\"kind\":\"alloc\",\"id\":1,\"addr\":\"0x7f0000000000\",\"size\":1000,\"stream\":2,\"name\":\"x\",\"stack\":7,\"flags\":[\"activation\"]}\n"
  "{\"kind\":\"alloc\",\"id\":\"18446744073709551615\",\"size\":10}\n"
  "{\"kind\":\"kernel\",\"name\":\"gemm\",\"stream\":2,\"time_ns\":200,\"end_ns\":300}\n"
  "{\"kind\":\"sync\",\"sync\":\"stream_wait\",\"stream\":3,\"stream2\":2,\"id\":5}\n"
  "{\"kind\":\"free\",\"id\":1,\"tick\":10}\n"
  "{\"kind\":\"oom\",\"size\":4096,\"device_free\":1024}\n";

static void
test_jsonl (void)
{
  MlError err;
  MlTrace *t = load_text (good_jsonl, ".jsonl", &err);
  ok (t != NULL, "good trace loads (%s)", err.msg);
  if (!t)
    return;
  is_u64 (t->n_events, 7, "7 events (the stack line is not an event)");
  is_u64 (t->default_align, 512, "alignment from the header");
  const MlEvent *a = &t->events[1];
  is_u64 (a->kind, ML_EV_ALLOC, "alloc");
  is_u64 (a->addr, 0x7f0000000000ull, "hex address");
  is_u64 (ml_trace_stream_id (t, a->stream), 2, "stream (the value; events carry its index)");
  ok (t->events[3].stream == a->stream, "one stream, one index");
  ok (a->flags & ML_EVF_ACTIVATION, "flag kept");
  is_str (ml_trace_str (t, t->stacks[a->stack].site), "model.py:12:forward", "call site");
  is_u64 (t->stacks[a->stack].n, 2, "two frames");
  is_u64 (t->events[2].id, UINT64_MAX, "ids above 2^53 travel as strings");
  is_u64 (t->events[3].size, 300, "kernel end");
  is_u64 (t->events[4].sync_kind, ML_SYNC_STREAM_WAIT, "sync kind");
  is_u64 (ml_trace_stream_id (t, t->events[4].stream2), 2, "stream2");
  ok (t->events[4].stream2 == a->stream && t->events[4].stream != a->stream, "stream2 shares the stream table");
  is_u64 (t->events[5].tick, 10, "explicit tick");
  is_u64 (t->events[6].tick, 11, "implicit tick follows");
  is_u64 (t->events[6].addr, 1024, "oom device_free");

  /* round trip */
  char path[] = "/tmp/memlens-rt-XXXXXX.jsonl";
  int fd = mkstemps (path, 6);
  close (fd);
  ok (ml_trace_write_jsonl (t, path, &err) == 0, "write");
  MlTrace *u = NULL;
  ok (ml_trace_load (path, NULL, &u, &err) == 0, "read back");
  if (u)
    {
      int same = u->n_events == t->n_events;
      for (size_t i = 0; same && i < t->n_events; i++)
        {
          const MlEvent *x = &t->events[i], *y = &u->events[i];
          same = x->tick == y->tick && x->id == y->id && x->addr == y->addr && x->size == y->size
                 && x->kind == y->kind && x->stream == y->stream && x->stream2 == y->stream2
                 && x->flags == y->flags && x->time_ns == y->time_ns && x->sync_kind == y->sync_kind
                 && strcmp (ml_trace_str (t, x->name), ml_trace_str (u, y->name)) == 0
                 && strcmp (ml_trace_str (t, t->stacks[x->stack].site), ml_trace_str (u, u->stacks[y->stack].site)) == 0
                 && t->stacks[x->stack].n == u->stacks[y->stack].n;
        }
      ok (same, "round trip keeps every event field, names and stacks");
      is_u64 (u->default_align, 512, "round trip keeps the header");
    }
  ml_trace_free (u);
  unlink (path);
  ml_trace_free (t);
}

static void
expect_error (const char *text, const char *suffix, const char *needle, const char *what)
{
  MlError err;
  MlTrace *t = load_text (text, suffix, &err);
  ok (t == NULL, "%s: refused", what);
  has_str (err.msg, needle, "%s: message", what);
  ml_trace_free (t);
}

#define H "{\"format\":\"memlens-trace\",\"version\":1}\n"

static void
test_jsonl_errors (void)
{
  expect_error ("", ".jsonl", "empty file", "empty file");
  expect_error ("{\"format\":\"other\",\"version\":1}\n", ".jsonl", "not a memlens trace", "wrong header");
  expect_error ("{\"format\":\"memlens-trace\",\"version\":9}\n", ".jsonl", "version 9", "newer version");
  expect_error (H "{\"kind\":\"alloc\",\"id\":1,\"size\":-4}\n", ".jsonl", ":2: size -4 is negative", "negative size, with the line");
  expect_error (H "{\"kind\":\"alloc\",\"id\":1,\"size\":1e30}\n", ".jsonl", "too large", "overflowing size");
  expect_error (H "{\"kind\":\"alloc\",\"id\":1,\"size\":1.5}\n", ".jsonl", "not an integer", "fractional size");
  expect_error (H "{\"kind\":\"alloc\",\"id\":1,\"size\":4}\n{\"kind\":\"all", ".jsonl", "truncated", "truncated file");
  expect_error (H "{\"kind\":\"teleport\"}\n", ".jsonl", "unknown event kind \"teleport\"", "unknown kind");
  expect_error (H "{\"kind\":\"alloc\",\"size\":4}\n", ".jsonl", "needs \"id\" or \"addr\"", "alloc without id");
  expect_error (H "{\"kind\":\"alloc\",\"id\":1,\"size\":4,\"tick\":5}\n{\"kind\":\"free\",\"id\":1,\"tick\":3}\n",
                ".jsonl", "goes back", "ticks going back");
  expect_error (H "{\"kind\":\"alloc\",\"id\":1,\"size\":4,\"stack\":3}\n", ".jsonl", "stack 3 is not defined", "undefined stack");
  expect_error (H "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n", ".jsonl",
                "nested more than", "deep nesting");
  MlError err;
  MlTrace *t = NULL;
  ok (ml_trace_load ("/nonexistent/trace.jsonl", NULL, &t, &err) < 0, "missing file refused");
  has_str (err.msg, "/nonexistent/trace.jsonl: cannot open", "missing file: message names it");
}

static void
test_csv (void)
{
  MlError err;
  MlTrace *t = load_text ("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n", ".csv", &err);
  ok (t != NULL, "the MiniMalloc example loads (%s)", err.msg);
  if (!t)
    return;
  is_u64 (t->n_events, 10, "10 events");
  is_u64 (t->default_align, 1, "CSV alignment is 1");
  /* at tick 3: b1's free before b2's alloc */
  int order_ok = 0;
  for (size_t i = 0; i + 1 < t->n_events; i++)
    if (t->events[i].tick == 3 && t->events[i].kind == ML_EV_FREE && t->events[i + 1].kind == ML_EV_ALLOC)
      order_ok = 1;
  ok (order_ok, "frees come before allocations at one tick");
  MlBuffers *b;
  ok (ml_buffers_build (t, 0, &b, &err) == 0, "lifetimes");
  is_u64 (b->lower_bound, 12, "lower bound 12");
  is_str (ml_trace_str (t, b->buf[0].name), "b1", "string ids are kept as names");
  char path[] = "/tmp/memlens-csv-XXXXXX.csv";
  int fd = mkstemps (path, 4);
  close (fd);
  ok (ml_buffers_write_csv (b, NULL, path, &err) == 0, "write CSV");
  MlTrace *u = NULL;
  ok (ml_trace_load (path, NULL, &u, &err) == 0, "read it back");
  if (u)
    {
      MlBuffers *c;
      ml_buffers_build (u, 0, &c, &err);
      int same = c->n == b->n;
      for (size_t i = 0; same && i < b->n; i++)
        same = c->buf[i].start == b->buf[i].start && c->buf[i].end == b->buf[i].end && c->buf[i].size == b->buf[i].size
               && strcmp (ml_trace_str (u, c->buf[i].name), ml_trace_str (t, b->buf[i].name)) == 0;
      ok (same, "CSV round trip keeps ids, lifetimes and sizes");
      ml_buffers_free (c);
      ml_trace_free (u);
    }
  unlink (path);
  ml_buffers_free (b);
  ml_trace_free (t);

  t = load_text ("lower,end,size,id\n0,2,8,0\n", ".csv", &err);
  ok (t && t->events[1].tick == 3, "an \"end\" column is inclusive");
  ml_trace_free (t);
  is_u64 (ml_capacity_from_name ("/x/A.1048576.csv"), 1048576, "capacity from the file name");
  is_u64 (ml_capacity_from_name ("/x/pangu.csv"), 0, "no capacity in the name");
}

static void
test_csv_errors (void)
{
  expect_error ("", ".csv", "empty file", "empty CSV");
  expect_error ("id,lower,size\n", ".csv", "no \"upper\" column", "missing column");
  expect_error ("id,lower,upper,size,colour\n", ".csv", "unknown column \"colour\"", "unknown column");
  expect_error ("id,lower,upper,size\n1,0,5,-4\n", ".csv", ":2: size -4 is negative", "negative size names the line");
  expect_error ("id,lower,upper,size\n1,0,5,1000000000000000000000000000000\n", ".csv", "size 1000000000000000000000000000000 is too large", "overflowing size");
  expect_error ("id,lower,upper,size\n1,5,5,4\n", ".csv", "upper 5 <= lower 5", "upper <= lower");
  expect_error ("id,lower,upper,size\n1,0,5,4\n1,2,6,4\n", ".csv", ":3: duplicate id 1 (first on line 2)", "duplicate id");
  expect_error ("id,lower,upper,size\n1,0,5,4\n2,0,5", ".csv", "looks truncated", "truncated row");
  expect_error ("id,lower,upper,size\n1,0,x,4\n", ".csv", "upper \"x\" is not", "malformed number");
}

static void
test_lifetime_errors (void)
{
  static const struct { const char *text, *needle, *what; } cases[] = {
    { H "{\"kind\":\"free\",\"id\":3}\n", "free of unknown id 3", "free of an unknown id" },
    { H "{\"kind\":\"alloc\",\"id\":3,\"size\":4}\n{\"kind\":\"free\",\"id\":3}\n{\"kind\":\"free\",\"id\":3}\n",
      "double free of id 3", "double free" },
    { H "{\"kind\":\"alloc\",\"id\":3,\"size\":4}\n{\"kind\":\"alloc\",\"id\":3,\"size\":4}\n", "duplicate id 3", "duplicate live id" },
    { H "{\"kind\":\"free\",\"addr\":\"0x10\"}\n", "unknown address 0x10", "free of an unknown address" },
    { H "{\"kind\":\"alloc\",\"id\":3,\"size\":\"18446744073709551615\"}\n", "overflows when aligned", "size overflowing the alignment" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      MlError err;
      MlTrace *t = load_text (cases[i].text, ".jsonl", &err);
      ok (t != NULL, "%s: the file parses", cases[i].what);
      MlBuffers *b = NULL;
      ok (t && ml_buffers_build (t, 0, &b, &err) < 0, "%s: lifetimes refuse it", cases[i].what);
      has_str (err.msg, cases[i].needle, "%s: message", cases[i].what);
      ml_buffers_free (b);
      ml_trace_free (t);
    }
  /* frees matched by address when the trace has no ids */
  MlError err;
  MlTrace *t = load_text (H "{\"kind\":\"alloc\",\"addr\":\"0x100\",\"size\":4}\n{\"kind\":\"alloc\",\"addr\":\"0x200\",\"size\":8}\n"
                          "{\"kind\":\"free\",\"addr\":\"0x100\"}\n{\"kind\":\"alloc\",\"addr\":\"0x100\",\"size\":2}\n", ".jsonl", &err);
  MlBuffers *b = NULL;
  ok (t && ml_buffers_build (t, 0, &b, &err) == 0, "address-only trace builds");
  if (b)
    {
      is_u64 (b->n, 3, "three buffers");
      is_u64 (b->buf[0].end, 2, "the free at 0x100 ends the first buffer");
      ok (b->buf[1].flags & ML_BUF_NEVER_FREED, "never-freed buffer is flagged");
      is_u64 (b->buf[1].end, 4, "and lives to the end of the trace");
      is_u64 (b->buf[0].rsize, 256, "sizes rounded to 256");
      is_u64 (b->lower_bound, 512, "lower bound in rounded bytes");
    }
  ml_buffers_free (b);
  ml_trace_free (t);
}

/* The format table (sim/formats/load.c), iterated: what a new format
 * gets checked for by adding its one line. */
static void
test_format_table (void)
{
  size_t n = 0, bad = 0, saved = 0;
  const MlTraceFormat *const *all = ml_trace_formats ();
  for (const MlTraceFormat *const *f = all; *f; f++, n++)
    {
      if (!(*f)->name || !*(*f)->name || !(*f)->description || !(*f)->sniff || !(*f)->load)
        {
          printf ("# format %zu: a name, description, sniff or load is missing\n", n);
          bad++;
        }
      /* an extension picks one reader */
      char exts[128];
      snprintf (exts, sizeof exts, "%s", (*f)->extensions ? (*f)->extensions : "");
      char *save = NULL;
      for (char *e = strtok_r (exts, " ", &save); e; e = strtok_r (NULL, " ", &save))
        for (const MlTraceFormat *const *g = all; *g != *f; g++)
          {
            char other[128], *save2 = NULL;
            snprintf (other, sizeof other, "%s", (*g)->extensions ? (*g)->extensions : "");
            for (char *o = strtok_r (other, " ", &save2); o; o = strtok_r (NULL, " ", &save2))
              if (strcmp (o, e) == 0)
                {
                  printf ("# .%s is claimed by %s and %s\n", e, (*g)->name, (*f)->name);
                  bad++;
                }
          }
      for (const MlTraceFormat *const *g = all; *g != *f; g++)
        if (strcmp ((*g)->name, (*f)->name) == 0)
          {
            printf ("# two formats are called %s\n", (*f)->name);
            bad++;
          }
    }
  ok (n >= 2 && bad == 0, "format table: %zu entries, each named, described, with sniff and load; names and extensions unique", n);
  /* every format that writes: a planning instance written as it and read
   * back by extension gives the same lifetimes and sizes */
  static const char inst[] = "id,lower,upper,size\nb1,0,3,4\nb2,3,9,8\nb3,0,9,16\n";
  MlError err;
  MlTrace *t = load_text (inst, ".csv", &err);
  MlBuffers *b0 = NULL;
  if (!ok (t && ml_buffers_build (t, 1, &b0, &err) == 0, "the instance loads (%s)", err.msg))
    return;
  for (const MlTraceFormat *const *f = all; *f; f++)
    {
      if (!(*f)->save)
        continue;
      char ext[32];
      snprintf (ext, sizeof ext, ".%s", (*f)->extensions);
      ext[strcspn (ext, " ")] = 0;
      char *path = tap_write_temp ("", ext);
      MlTrace *back = NULL;
      MlBuffers *b1 = NULL;
      memset (&err, 0, sizeof err);
      bool same = ml_trace_save (t, path, &err) == 0 && ml_trace_load (path, NULL, &back, &err) == 0
                  && ml_buffers_build (back, 1, &b1, &err) == 0 && b1->n == b0->n;
      for (size_t i = 0; same && i < b0->n; i++)
        same = b1->buf[i].start == b0->buf[i].start && b1->buf[i].end == b0->buf[i].end && b1->buf[i].size == b0->buf[i].size;
      ok (same, "%s: written and read back, the same %zu lifetimes and sizes (%s)", (*f)->name, b0->n, err.msg);
      saved++;
      ml_buffers_free (b1);
      ml_trace_free (back);
      unlink (path);
      free (path);
    }
  ok (saved >= 2, "the formats that write: %zu", saved);
  ml_buffers_free (b0);
  ml_trace_free (t);
}

int
main (void)
{
  test_jsonl ();
  test_jsonl_errors ();
  test_csv ();
  test_csv_errors ();
  test_lifetime_errors ();
  test_format_table ();
  return tap_done ();
}
