/* The pickle reader: opcodes one by one, bounds, and a few thousand
 * mutated pickles that must fail cleanly (or parse), never crash. */
#include <math.h>

#include "sim/formats/pickle.h"
#include "sim/formats/snapshot.h"
#include "tap.h"

static MlPkDoc *
parse (const char *bytes, size_t len, MlError *err)
{
  MlPkDoc *doc = NULL;
  memset (err, 0, sizeof *err);
  if (ml_pk_parse ((const unsigned char *) bytes, len, &doc, err) < 0)
    return NULL;
  return doc;
}

#define P(lit) lit, sizeof lit - 1

static void
test_scalars (void)
{
  MlError err;
  MlPkDoc *d;
  d = parse (P ("\x80\x02K\x05."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_INT && ml_pk_root (d)->i == 5, "BININT1 5");
  ml_pk_free (d);
  d = parse (P ("\x80\x02M\x34\x12."), &err);
  ok (d && ml_pk_root (d)->i == 0x1234, "BININT2 is little-endian");
  ml_pk_free (d);
  d = parse (P ("\x80\x02J\xfe\xff\xff\xff."), &err);
  ok (d && ml_pk_root (d)->i == -2, "BININT is signed");
  ml_pk_free (d);
  d = parse (P ("\x80\x02\x8a\x05\x00\x00\x00\x00\x01."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_INT && ml_pk_root (d)->i == ((int64_t) 1 << 32), "LONG1 of 5 bytes: 2^32");
  ml_pk_free (d);
  d = parse (P ("\x80\x02\x8a\x01\xff."), &err);
  ok (d && ml_pk_root (d)->i == -1, "LONG1 sign-extends");
  ml_pk_free (d);
  d = parse (P ("\x80\x02\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\xff."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_INT && ml_pk_root (d)->i == -1, "LONG1 of 9 bytes that fits: -1");
  ml_pk_free (d);
  d = parse (P ("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_BIGINT && fabs (ml_pk_root (d)->f - 18446744073709551616.0) < 1.0,
      "LONG1 of 9 bytes: 2^64 as a big int");
  ml_pk_free (d);
  d = parse (P ("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_BIGINT, "LONG1 2^63 does not fit int64");
  {
    char text[64];
    ok (d && strcmp (ml_pk_describe (ml_pk_root (d), text, sizeof text), "9223372036854775808") == 0,
        "a big int keeps its exact digits for messages: 9223372036854775808");
  }
  ml_pk_free (d);
  /* -2^64 - 1 in 9 bytes (two's complement): 0xfffffffffffffffffe... */
  d = parse (P ("\x80\x02\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\xfe."), &err);
  {
    char text[64];
    ok (d && ml_pk_root (d)->kind == ML_PK_BIGINT
        && strcmp (ml_pk_describe (ml_pk_root (d), text, sizeof text), "-18446744073709551617") == 0,
        "a negative big int: -18446744073709551617");
  }
  ml_pk_free (d);
  d = parse (P ("\x80\x02G?\xf8\x00\x00\x00\x00\x00\x00."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_FLOAT && ml_pk_root (d)->f == 1.5, "BINFLOAT 1.5 (big-endian)");
  ml_pk_free (d);
  d = parse (P ("\x80\x04\x8c\x03" "abc."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_STR && strcmp (ml_pk_root (d)->s, "abc") == 0, "SHORT_BINUNICODE");
  ml_pk_free (d);
  d = parse (P ("\x80\x02X\x02\x00\x00\x00hi."), &err);
  ok (d && ml_pk_root (d)->len == 2 && strcmp (ml_pk_root (d)->s, "hi") == 0, "BINUNICODE");
  ml_pk_free (d);
  d = parse (P ("\x80\x04\x8d\x01\x00\x00\x00\x00\x00\x00\x00z."), &err);
  ok (d && strcmp (ml_pk_root (d)->s, "z") == 0, "BINUNICODE8");
  ml_pk_free (d);
  d = parse (P ("\x80\x02\x88."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_BOOL && ml_pk_root (d)->i == 1, "NEWTRUE");
  ml_pk_free (d);
  d = parse (P ("\x80\x02\x8b\x02\x00\x00\x00\x00\x01."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_INT && ml_pk_root (d)->i == 256, "LONG4 of 2 bytes: 256");
  ml_pk_free (d);
  d = parse (P ("\x80\x02\x8b\xff\xff\xff\xff."), &err);
  ok (!d && strstr (err.msg, "negative"), "LONG4 with a negative length: %s", err.msg);
  d = parse (P ("\x80\x03" "C\x02\x00\x01."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_BYTES && ml_pk_root (d)->len == 2, "SHORT_BINBYTES keeps NUL bytes");
  ml_pk_free (d);
  d = parse (P ("\x80\x03" "B\x03\x00\x00\x00" "xyz."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_BYTES && ml_pk_root (d)->len == 3, "BINBYTES");
  ml_pk_free (d);
  d = parse (P ("\x80\x02)."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_TUPLE && ml_pk_root (d)->n == 0, "EMPTY_TUPLE");
  ml_pk_free (d);
  d = parse (P ("\x80\x02K\x07\x85."), &err);
  ok (d && ml_pk_root (d)->n == 1 && ml_pk_root (d)->items[0]->i == 7, "TUPLE1");
  ml_pk_free (d);
  d = parse (P ("\x80\x02K\x01K\x02K\x03\x87."), &err);
  ok (d && ml_pk_root (d)->n == 3, "TUPLE3");
  ml_pk_free (d);
  d = parse (P ("\x80\x05\x95\x02\x00\x00\x00\x00\x00\x00\x00N."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_NONE, "protocol 5 framing");
  ml_pk_free (d);
  d = parse (P ("\x80\x05\x97."), &err);
  ok (!d && strstr (err.msg, "0x97"), "protocol 5 out-of-band buffers are refused: %s", err.msg);
  d = parse (P ("\x80\x02N."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_NONE, "NONE");
  ml_pk_free (d);
}

static void
test_containers (void)
{
  MlError err;
  MlPkDoc *d;
  d = parse (P ("\x80\x02K\x01K\x02\x86."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_TUPLE && ml_pk_root (d)->n == 2 && ml_pk_root (d)->items[1]->i == 2, "TUPLE2");
  ml_pk_free (d);
  d = parse (P ("\x80\x02(K\x01K\x02K\x03K\x04t."), &err);
  ok (d && ml_pk_root (d)->n == 4, "MARK ... TUPLE");
  ml_pk_free (d);
  d = parse (P ("\x80\x02](K\x01K\x02" "eK\x03" "a."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_LIST && ml_pk_root (d)->n == 3 && ml_pk_root (d)->items[2]->i == 3,
      "APPENDS then APPEND");
  ml_pk_free (d);
  /* {"a": L, "b": L} with L memoised by BINPUT 1 and fetched by BINGET */
  d = parse (P ("\x80\x02}q\x00(X\x01\x00\x00\x00" "a]q\x01X\x01\x00\x00\x00" "bh\x01u."), &err);
  ok (d != NULL, "dict with SETITEMS parses (%s)", err.msg);
  if (d)
    {
      const MlPkValue *a = ml_pk_get (ml_pk_root (d), "a"), *b = ml_pk_get (ml_pk_root (d), "b");
      ok (a && a == b && a->kind == ML_PK_LIST, "BINGET shares the memoised list (same pointer)");
    }
  ml_pk_free (d);
  /* {"a": 1, "b": 3, "a": 2}: Python keeps the last "a" */
  d = parse (P ("\x80\x02}(\x8c\x01" "aK\x01\x8c\x01" "bK\x03\x8c\x01" "aK\x02u."), &err);
  int64_t dup = 0;
  ok (d && ml_pk_get_int (ml_pk_root (d), "a", &dup) && dup == 2, "of a key given twice the last value counts, as in Python");
  ml_pk_free (d);
  /* protocol 4: FRAME, MEMOIZE, LONG_BINGET */
  d = parse (P ("\x80\x04\x95\x0e\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x01k\x94]\x94sj\x02\x00\x00\x00\x86."), &err);
  ok (d && ml_pk_root (d)->kind == ML_PK_TUPLE && ml_pk_root (d)->items[1] == ml_pk_get (ml_pk_root (d)->items[0], "k"),
      "FRAME + MEMOIZE + LONG_BINGET share the list (%s)", err.msg);
  ml_pk_free (d);
  /* LONG_BINPUT at a sparse index */
  d = parse (P ("\x80\x02]r\x10\x00\x01\x00j\x10\x00\x01\x00\x86."), &err);
  ok (d && ml_pk_root (d)->items[0] == ml_pk_root (d)->items[1], "LONG_BINPUT at index 65552 and LONG_BINGET");
  ml_pk_free (d);
  d = parse (P ("\x80\x02K\x01K\x02" "0K\x03\x86."), &err);
  ok (d && ml_pk_root (d)->items[1]->i == 3, "POP drops the top");
  ml_pk_free (d);
  d = parse (P ("\x80\x02K\x01(K\x02K\x03" "1K\x05" "2\x87."), &err);
  ok (d && ml_pk_root (d)->n == 3 && ml_pk_root (d)->items[2]->i == 5, "POP_MARK and DUP (%s)", err.msg);
  ml_pk_free (d);
}

static void
test_errors (void)
{
  MlError err;
  MlPkDoc *d;
  d = parse (P ("\x80\x04\x8d\x00\x00\x00\x00\x00\x00\x00\x10z."), &err);
  ok (!d && err.code == ML_EINPUT, "a string length of 2^60 is an error, not an allocation");
  has_str (err.msg, "1152921504606846976", "the message names the length");
  d = parse (P ("\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x01."), &err);
  ok (!d, "a FRAME longer than the file is an error");
  d = parse (P ("\x80\x02X\xff\xff\xff\x7f" "ab"), &err);
  ok (!d && strstr (err.msg, "truncated"), "a BINUNICODE past the end says truncated: %s", err.msg);
  d = parse (P ("\x80\x02cos\nsystem\n."), &err);
  ok (!d && strstr (err.msg, "not supported"), "GLOBAL is refused: %s", err.msg);
  d = parse (P ("\x80\x02K\x01"), &err);
  ok (!d && strstr (err.msg, "without STOP"), "no STOP: %s", err.msg);
  d = parse (P ("\x80\x02h\x05."), &err);
  ok (!d && strstr (err.msg, "never stored"), "BINGET of an unknown index: %s", err.msg);
  d = parse (P ("\x80\x02K\x01K\x02."), &err);
  ok (!d, "two values at STOP");
  d = parse (P ("\x80\x02K\x01u."), &err);
  ok (!d && strstr (err.msg, "MARK"), "SETITEMS without MARK: %s", err.msg);
  d = parse (P ("\x80\x02K\x01K\x02" "a."), &err);
  ok (!d && strstr (err.msg, "adding items to a int"), "APPEND to an int: %s", err.msg);
  d = parse (P ("\x80\x09."), &err);
  ok (!d && strstr (err.msg, "protocol 9"), "protocol 9: %s", err.msg);
  d = parse (P ("\x80\x02]q\x00h\x00" "a."), &err);
  ok (!d && strstr (err.msg, "inside itself"), "a list appended to itself: %s", err.msg);
  /* 300 nested lists */
  char deep[1024];
  size_t n = 0;
  deep[n++] = (char) 0x80;
  deep[n++] = 2;
  for (int k = 0; k < 300; k++)
    deep[n++] = ']';
  for (int k = 0; k < 299; k++)
    deep[n++] = 'a';
  deep[n++] = '.';
  d = parse (deep, n, &err);
  ok (!d && strstr (err.msg, "deeper"), "nesting deeper than 256 is refused: %s", err.msg);
}

/* Small pickles made here, mutated a few thousand ways. */
static void
test_mutations (void)
{
  /* a snapshot in miniature: {"segments": [{"address": 4096, "total_size": 2097152,
   * "blocks": [{"address": 4096, "size": 512, "state": "active_allocated"}]}],
   * "device_traces": [[{"action": "free_completed", "addr": 4096, "size": 1}]]} */
  static const char s0[] =
    "\x80\x02}q\x00(X\x01\x00\x00\x00" "a]q\x01X\x01\x00\x00\x00" "bh\x01u.";
  static const char s1[] =
    "\x80\x04\x95\x0e\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x01k\x94]\x94sj\x02\x00\x00\x00\x86.";
  static const char s2[] =
    "\x80\x02(K\x01K\x02K\x03K\x04t.";
  static const char s3[] =
    "\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01.";
  static const char s4[] =
    "\200\002}(X\010\000\000\000segments](}(X\007\000\000\000addressM\000\020X\012\000\000"
    "\000total_sizeJ\000\000 \000X\006\000\000\000blocks]}(X\007\000\000\000addre"
    "ssM\000\020X\004\000\000\000sizeM\000\002X\005\000\000\000stateX\020\000\000\000active_a"
    "llocateduaueX\015\000\000\000device_traces]]}(X\006\000\000\000a"
    "ctionX\016\000\000\000free_completedX\004\000\000\000addrM\000\020X\004\000\000"
    "\000sizeK\001uaau.";
  static const char *const seeds[] = { s0, s1, s2, s3, s4 };
  static const size_t lens[] = { sizeof s0 - 1, sizeof s1 - 1, sizeof s2 - 1, sizeof s3 - 1, sizeof s4 - 1 };
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  size_t parsed = 0, failed = 0, bad = 0, loaded = 0, cases = 0;
  for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++)
    {
      size_t len = lens[s];
      if (s == 4)
        {
          /* the snapshot seed must load as it is */
          MlTrace *t = NULL;
          MlError err = { 0 };
          int rc = ml_trace_load_snapshot_mem ((const unsigned char *) seeds[s], len, "seed", NULL, &t, &err);
          ok (rc == 0 && t && t->n_events == 3, "the miniature snapshot loads: %zu events (%s)", t ? t->n_events : 0, err.msg);
          ml_trace_free (t);
        }
      unsigned char buf[1024];
      for (int m = 0; m < 1000; m++)
        {
          memcpy (buf, seeds[s], len);
          size_t n = len;
          int edits = 1 + (int) ((rng >> 33) % 3);
          for (int e = 0; e < edits; e++)
            {
              rng = rng * 6364136223846793005ull + 1442695040888963407ull;
              size_t at = (size_t) ((rng >> 33) % n);
              unsigned char byte = (unsigned char) (rng >> 17);
              switch ((rng >> 60) % 4)
                {
                case 0: buf[at] = byte; break;                   /* replace */
                case 1: n = at ? at : 1; break;                  /* truncate */
                case 2: buf[at] ^= (unsigned char) (1u << (byte % 8)); break; /* flip a bit */
                default:                                         /* insert */
                  if (n < sizeof buf)
                    {
                      memmove (buf + at + 1, buf + at, n - at);
                      buf[at] = byte;
                      n++;
                    }
                }
            }
          MlPkDoc *d = NULL;
          MlError err = { 0 };
          int rc = ml_pk_parse (buf, n, &d, &err);
          cases++;
          if (rc == 0)
            parsed++;
          else if (rc < 0 && err.msg[0])
            failed++;
          else
            bad++;
          ml_pk_free (d);
          MlTrace *t = NULL;
          memset (&err, 0, sizeof err);
          rc = ml_trace_load_snapshot_mem (buf, n, "mutant", NULL, &t, &err);
          if (rc == 0)
            loaded++;
          else if (!err.msg[0])
            bad++;
          ml_trace_free (t);
        }
    }
  ok (cases == 5000, "%zu mutated pickles", cases);
  ok (bad == 0, "every failure has a message (%zu parsed, %zu failed, %zu snapshots loaded)", parsed, failed, loaded);
  ok (failed > 1000 && parsed > 100, "mutations exercise both outcomes (%zu parsed, %zu failed)", parsed, failed);
}

/* ---- streaming ---- */

typedef struct {
  size_t n, lists[8], last_index;
  const MlPkValue *first_frames;
  bool shared_ok;
} Seen;

static int
on_item (void *user, size_t list, size_t index, MlPkValue *item)
{
  Seen *s = user;
  if (list < 8)
    s->lists[list]++;
  s->last_index = index;
  s->n++;
  /* item: a dict {"f": frames}; the frames list is memo-shared */
  MlPkValue *fr = item->kind == ML_PK_DICT ? ml_pk_get (item, "f") : NULL;
  if (fr && !fr->tag)
    {
      fr->tag = 42;   /* what a consumer derives from it */
      if (!s->first_frames)
        s->first_frames = fr;
    }
  else if (fr && fr->tag == 42)
    s->shared_ok = true;
  return 0;
}

static void
test_stream (void)
{
  /* {"t": [[{"f": F}, {"f": F}] * 600 in batches, []], "x": 1} written by
   * hand: F = [1, 2] memoised once; the inner list's items in two
   * APPENDS batches, so the second batch reaches F through the memo after
   * the first batch's scratch is gone */
  unsigned char buf[1 << 16];
  size_t n = 0;
#define B(c) (buf[n++] = (unsigned char) (c))
  B (0x80); B (4); B ('}'); B ('('); B (0x8c); B (1); B ('t'); B (']'); B ('('); B (']'); B (0x94); /* memo 0: inner */
  uint32_t memo = 1;
  bool have = false;
  uint32_t fmemo = 0;
  for (int batch = 0; batch < 2; batch++)
    {
      B ('(');
      for (int k = 0; k < 300; k++)
        {
          B ('}'); B (0x8c); B (1); B ('f');
          if (!have)
            {
              B (']'); B (0x94); fmemo = memo++; B ('K'); B (1); B ('K'); B (2); B (0x86); B ('0');
              /* (two ints pushed, TUPLE2, then popped: scratch garbage) */
              B ('K'); B (1); B ('a'); B ('K'); B (2); B ('a');
              have = true;
            }
          else
            {
              B ('j'); memcpy (buf + n, &fmemo, 4); n += 4;
            }
          B ('s');
        }
      B ('e');
    }
  B (']');        /* a second device list, empty */
  B ('e');        /* both into "t" */
  B (0x8c); B (1); B ('x'); B ('K'); B (1);
  B ('u'); B ('.');
#undef B
  Seen seen = { 0 };
  MlPkStream st = { .key = "t", .item = on_item, .user = &seen };
  MlPkDoc *d = NULL;
  MlError err = { 0 };
  int rc = ml_pk_parse_stream (buf, n, &st, &d, &err);
  ok (rc == 0, "stream: parses (%s)", err.msg);
  ok (seen.n == 600 && seen.lists[0] == 600 && seen.last_index == 599, "stream: 600 items of list 0, in order (%zu)",
      seen.n);
  ok (seen.shared_ok, "stream: the memo-shared frames keep their tag across batches");
  const MlPkValue *t = d ? ml_pk_get (ml_pk_root (d), "t") : NULL;
  ok (t && t->n == 2 && ml_pk_len (t->items[0]) == 0 && ml_pk_len (t->items[1]) == 0,
      "stream: the lists stay in the document, empty");
  int64_t x = 0;
  ok (d && ml_pk_get_int (ml_pk_root (d), "x", &x) && x == 1, "stream: keys after the streamed list are read");
  ml_pk_free (d);

  /* the same bytes without a stream: everything kept */
  rc = ml_pk_parse (buf, n, &d, &err);
  t = rc == 0 ? ml_pk_get (ml_pk_root (d), "t") : NULL;
  ok (t && ml_pk_len (t->items[0]) == 600 && t->items[0]->items[0]->items[1] == t->items[0]->items[599]->items[1],
      "no stream: 600 items kept, the frames one value");
  ml_pk_free (d);

  /* a list built with MARK ... LIST is not streamed: kept whole */
  memset (&seen, 0, sizeof seen);
  d = NULL;
  static const char listed[] = "\x80\x02}(\x8c\x01t]((K\x01K\x02le\x8c\x01xK\x01u.";
  rc = ml_pk_parse_stream ((const unsigned char *) listed, sizeof listed - 1, &st, &d, &err);
  t = rc == 0 ? ml_pk_get (ml_pk_root (d), "t") : NULL;
  ok (t && seen.n == 0 && ml_pk_len (t->items[0]) == 2, "stream: a list built by LIST stays whole (%s)", err.msg);
  ml_pk_free (d);

  /* device traces written as tuples (TUPLE2, MARK ... TUPLE, EMPTY_TUPLE)
   * beside a list, in one APPENDS batch: streamed as the list is, each to
   * its own index, and left empty; Python reads [(1, 2), (3, 4, 5, 6), (), [7]] */
  memset (&seen, 0, sizeof seen);
  d = NULL;
  static const char tuples[] = "\x80\x02}(\x8c\x01t](K\x01K\x02\x86(K\x03K\x04K\x05K\x06t)]K\x07" "ae\x8c\x01xK\x01u.";
  rc = ml_pk_parse_stream ((const unsigned char *) tuples, sizeof tuples - 1, &st, &d, &err);
  t = rc == 0 ? ml_pk_get (ml_pk_root (d), "t") : NULL;
  ok (t && seen.n == 7 && seen.lists[0] == 2 && seen.lists[1] == 4 && seen.lists[2] == 0 && seen.lists[3] == 1,
      "stream: tuples in the streamed key are streamed, each to its index (%zu items: %zu %zu %zu %zu; %s)", seen.n,
      seen.lists[0], seen.lists[1], seen.lists[2], seen.lists[3], err.msg);
  ok (t && t->n == 4 && t->items[0]->kind == ML_PK_TUPLE && ml_pk_len (t->items[0]) == 0 && ml_pk_len (t->items[1]) == 0
      && t->items[3]->kind == ML_PK_LIST, "stream: the tuples stay in the document, empty");
  ml_pk_free (d);
  /* without a stream they are kept whole */
  rc = ml_pk_parse ((const unsigned char *) tuples, sizeof tuples - 1, &d, &err);
  t = rc == 0 ? ml_pk_get (ml_pk_root (d), "t") : NULL;
  ok (t && ml_pk_len (t->items[1]) == 4 && t->items[1]->items[3]->i == 6, "no stream: the tuples keep their items");
  ml_pk_free (d);

  /* the root built above a streamed list: it moves to the document */
  d = NULL;
  static const char above[] = "\x80\x02(}\x8c\x01t](]K\x07tt.";
  rc = ml_pk_parse_stream ((const unsigned char *) above, sizeof above - 1, &st, &d, &err);
  const MlPkValue *r = rc == 0 ? ml_pk_root (d) : NULL;
  ok (r && r->kind == ML_PK_TUPLE && r->n == 4 && r->items[3]->kind == ML_PK_TUPLE && r->items[3]->n == 2
      && r->items[3]->items[1]->i == 7,
      "stream: a root tuple built above the streamed list survives (%s)", err.msg);
  ml_pk_free (d);
}

/* ---- what the memo keeps of a streamed item: the tags alone ---- */

typedef struct {
  size_t   n;
  uint32_t p_tag[3], f_tag[3];
  size_t   p_len[3];
} Retired;

static int
on_retire_item (void *user, size_t list, size_t index, MlPkValue *item)
{
  Retired *r = user;
  (void) list;
  MlPkValue *p = ml_pk_get (item, "p"), *f = ml_pk_get (item, "f");
  if (index < 3 && p && f)
    {
      if (!p->tag)
        {
          p->tag = 77;   /* the consumer has its text (interned) */
          ml_pk_retire (p);
        }
      if (!f->tag)
        f->tag = 42;
      r->p_tag[index] = p->tag, r->p_len[index] = p->len, r->f_tag[index] = f->tag;
    }
  r->n++;
  return 0;
}

static void
test_stream_retired (void)
{
  /* {"t": [[{"p": S, "f": [1]}, {"p": S, "f": F}]]}, each item in its
   * own APPENDS batch: the second refers to the first's string S and list
   * F through the memo, after the first's scratch is gone */
  static const char two[] = "\x80\x04}(\x8c\x01t](]\x94("
                            "}\x8c\x01p\x8c\x14/a/b/c/long_file.py!\x94s\x8c\x01" "f]\x94K\x01" "ase("
                            "}\x8c\x01ph\x01s\x8c\x01" "fh\x02s"
                            "eeu.";
  Retired r = { 0 };
  MlPkStream st = { .key = "t", .item = on_retire_item, .user = &r };
  MlPkDoc *d = NULL;
  MlError err = { 0 };
  int rc = ml_pk_parse_stream ((const unsigned char *) two, sizeof two - 1, &st, &d, &err);
  ok (rc == 0 && r.n == 2, "retired: parses, 2 items (%s)", err.msg);
  ok (r.p_tag[0] == 77 && r.p_len[0] == 20, "retired: the first item's string has its text");
  ok (r.p_tag[1] == 77 && r.p_len[1] == 0, "retired: a later reference gives its tag, without the text (len %zu)", r.p_len[1]);
  ok (r.f_tag[1] == 42, "retired: a tagged list referenced later keeps its tag");
  ml_pk_free (d);
  /* items added later to a list read already: refused, not added to a
   * value the consumer took as read (and others may share) */
  static const char late[] = "\x80\x04}(\x8c\x01t](]\x94("
                             "}\x8c\x01p\x8c\x14/a/b/c/long_file.py!\x94s\x8c\x01" "f]\x94K\x01" "ase("
                             "}\x8c\x01ph\x01s\x8c\x01" "fh\x02K\x05" "as"
                             "eeu.";
  memset (&r, 0, sizeof r);
  d = NULL;
  rc = ml_pk_parse_stream ((const unsigned char *) late, sizeof late - 1, &st, &d, &err);
  ok (rc == ML_EINPUT && strstr (err.msg, "items added to a container read already"), "retired: an APPEND to it is refused: %s",
      err.msg);
  ml_pk_free (d);
}

int
main (void)
{
  test_scalars ();
  test_containers ();
  test_errors ();
  test_mutations ();
  test_stream ();
  test_stream_retired ();
  return tap_done ();
}
