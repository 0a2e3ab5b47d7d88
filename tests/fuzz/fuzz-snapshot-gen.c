/* fuzz-snapshot-gen.c — structure-aware: the input bytes are the choices
 * of a generator (tests/fuzz/gen.h) that writes a pickle of snapshot
 * shape the way torch's _dump_snapshot (Python's pickler) does — dicts
 * and lists memoised and built with MARK ... SETITEMS / APPENDS in
 * batches of 1000, every string memoised and met again as BINGET, frames
 * lists shared between trace entries, FRAME opcodes under protocol 4+ —
 * and then bends it: segments in the legacy list and the dict layout,
 * blocks with and without "address" and "history", device_traces with
 * every action, external_annotations, allocator_settings, and hostile
 * values where integers belong (negative, 2^63, 2^64, LONG4 of 4000
 * bits, floats, NaN, strings, None, bools, containers, memo references
 * to the wrong object, 300-deep nesting), strings of 512 bytes and more,
 * keys with a NUL inside, duplicate keys, entries met twice by memo.
 *
 * The document goes to the reader `memlens stats` uses: ml_trace_load()
 * on a path (the sniffer, then the file mapping and the streaming pickle
 * VM), then what the command prints (every string the trace names) and
 * everything behind (fuzz_analyse). Oracles, besides "no crash, no
 * sanitizer report": a failed load has a message that names the file; when
 * the generator put a value the reader must refuse (a field the reader
 * reads as an integer from 0 to its limit, of the device read) the load
 * fails; when it succeeds on a device chosen by --device, its allocations
 * after tick 0 are exactly the trace's "alloc" entries (count and bytes)
 * and its marks the trace's annotate entries plus the device's
 * external annotations.
 */
#include "tests/fuzz/gen-trace.h"

#include <stddef.h>

/* ---- a pickle writer, as Python's (protocols 2-5) ---- */

enum { MK_NONE, MK_STR, MK_LIST, MK_DICT, MK_ENTRY, MK_FRAMES, MK_FRAME, MK_OTHER };

typedef struct {
  uint8_t kind;
  bool    clean;      /* MK_ENTRY: as the oracle sees it */
  uint8_t action;     /* MK_ENTRY: index in actions[] */
  uint64_t size;      /* MK_ENTRY */
  uint8_t dev;        /* MK_ENTRY: the device list it was made in */
} MemoRec;

#define MEMO_KEEP 8192
#define MAX_OPS   (1 << 16)

typedef struct {
  Fdp      f;
  Buf      o;
  int      proto;
  uint32_t memo_n;
  MemoRec  memo[MEMO_KEEP];
  int32_t  key_memo[64];     /* memo index of each known key string, -1 */
  int32_t  act_memo[16];
  int32_t  frames_memo[8];   /* frames lists to share */
  unsigned n_frames_memo;
  int32_t  frame_memo[8];    /* frame dicts to share */
  unsigned n_frame_memo;
  int32_t  entry_memo[16];   /* entry dicts, to meet again (hostile) */
  unsigned n_entry_memo;
  int      depth;
  bool     no_ref;           /* no memo references among hostile values: the role wants a non-dict */
  /* the oracle */
  int      dev;              /* --device, or -1 */
  bool     must_fail, exact;
  uint64_t n_alloc, sum_alloc, n_mark;
  /* scratch, not cleared per input */
  size_t   n_ops;
  size_t   ops[MAX_OPS];     /* where each opcode starts (FRAME splits there) */
  char     text[4096];
} G;

static void
op (G *g, uint8_t code)
{
  if (g->n_ops < MAX_OPS)
    g->ops[g->n_ops++] = g->o.n;
  buf_byte (&g->o, code);
}

/* Memoises the value on top of the stack, as the pickler does; returns
 * the index (-1: not memoised). */
static int32_t
memoize (G *g, uint8_t kind)
{
  if (fdp_rare (&g->f, 97))
    return -1;   /* hostile: a value the pickler would have memoised, not */
  uint32_t i = g->memo_n++;
  if (g->proto >= 4)
    op (g, 0x94);   /* MEMOIZE */
  else if (i < 256)
    {
      op (g, 'q');
      buf_byte (&g->o, (uint8_t) i);
    }
  else
    {
      op (g, 'r');
      buf_le (&g->o, i, 4);
    }
  if (i < MEMO_KEEP)
    g->memo[i] = (MemoRec) { .kind = kind };
  return (int32_t) i;
}

static void
get (G *g, uint32_t i)
{
  if (i < 256)
    {
      op (g, 'h');
      buf_byte (&g->o, (uint8_t) i);
    }
  else
    {
      op (g, 'j');
      buf_le (&g->o, i, 4);
    }
}

static void
put_str_raw (G *g, const char *s, size_t n)
{
  if (n < 256 && !fdp_rare (&g->f, 61))
    {
      op (g, 0x8c);   /* SHORT_BINUNICODE */
      buf_byte (&g->o, (uint8_t) n);
    }
  else if (g->proto >= 4 && fdp_rare (&g->f, 5))
    {
      op (g, 0x8d);   /* BINUNICODE8 */
      buf_le (&g->o, n, 8);
    }
  else
    {
      op (g, 'X');    /* BINUNICODE */
      buf_le (&g->o, n, 4);
    }
  buf_put (&g->o, s, n);
}

static int32_t
put_str (G *g, const char *s, size_t n)
{
  put_str_raw (g, s, n);
  return memoize (g, MK_STR);
}

static void
put_int (G *g, int64_t v)
{
  if (v >= 0 && v < 256)
    {
      op (g, 'K');
      buf_byte (&g->o, (uint8_t) v);
    }
  else if (v >= 0 && v < 65536)
    {
      op (g, 'M');
      buf_le (&g->o, (uint64_t) v, 2);
    }
  else if (v >= INT32_MIN && v <= INT32_MAX)
    {
      op (g, 'J');
      buf_le (&g->o, (uint64_t) v, 4);
    }
  else
    {
      /* LONG1, two's complement, as short as the pickler makes it */
      uint8_t b[9];
      int n = 0;
      uint64_t u = (uint64_t) v;
      do
        {
          b[n++] = (uint8_t) u;
          u = (uint64_t) ((int64_t) u >> 8);
        }
      while (n < 8 && !((u == 0 && !(b[n - 1] & 0x80)) || (u == UINT64_MAX && (b[n - 1] & 0x80))));
      op (g, 0x8a);
      buf_byte (&g->o, (uint8_t) n);
      buf_put (&g->o, b, (size_t) n);
    }
}

/* An unsigned integer of up to 9 bytes as LONG1 (2^63, 2^64 - 1, 2^64). */
static void
put_long1_u (G *g, uint64_t lo, uint8_t hi)
{
  op (g, 0x8a);
  buf_byte (&g->o, 9);
  buf_le (&g->o, lo, 8);
  buf_byte (&g->o, hi);
}

static void
put_float (G *g, double d)
{
  uint64_t u;
  memcpy (&u, &d, 8);
  op (g, 'G');
  for (int i = 7; i >= 0; i--)
    buf_byte (&g->o, (uint8_t) (u >> (8 * i)));
}

/* The items between MARK and the container opcode, in batches of 1000
 * as the pickler writes them (a batch of one: APPEND / SETITEM). */
typedef struct {
  unsigned in_batch, batch;
  bool     dict;
} Items;

static void
items_begin (G *g, Items *it, bool dict)
{
  it->in_batch = 0;
  it->dict = dict;
  it->batch = fdp_rare (&g->f, 53) ? 1 + fdp_pick (&g->f, 4) : 1000;
}

/* Before each item (for a dict: before its key). */
static void
item_next (G *g, Items *it)
{
  if (it->in_batch == 0)
    op (g, '(');
  it->in_batch++;
}

/* After each item: closes a full batch. */
static void
item_done (G *g, Items *it)
{
  if (it->in_batch >= it->batch)
    {
      op (g, it->dict ? 'u' : 'e');
      it->in_batch = 0;
    }
}

static void
items_end (G *g, Items *it)
{
  if (it->in_batch)
    op (g, it->dict ? 'u' : 'e');
  it->in_batch = 0;
}

/* ---- keys ---- */

enum {
  KY_SEGMENTS, KY_DEVICE_TRACES, KY_EXTERNAL_ANNOTATIONS, KY_ALLOCATOR_SETTINGS,
  KY_DEVICE, KY_ADDRESS, KY_TOTAL_SIZE, KY_ALLOCATED_SIZE, KY_ACTIVE_SIZE, KY_REQUESTED_SIZE, KY_STREAM,
  KY_SEGMENT_TYPE, KY_SEGMENT_POOL_ID, KY_IS_EXPANDABLE, KY_FRAMES, KY_BLOCKS,
  KY_SIZE, KY_STATE, KY_HISTORY, KY_ADDR, KY_REAL_SIZE,
  KY_ACTION, KY_TIME_US, KY_DEVICE_FREE, KY_NAME, KY_USER_METADATA, KY_FILENAME, KY_LINE, KY_STAGE,
  KY_MAX_SPLIT_SIZE, KY_EXPANDABLE_SEGMENTS, KY_ROUNDUP_POWER2_DIVISIONS, KY_GC_THRESHOLD, KY_COMPILE_CONTEXT,
  KY__COUNT
};
static const char *const key_names[KY__COUNT] = {
  "segments", "device_traces", "external_annotations", "allocator_settings",
  "device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream",
  "segment_type", "segment_pool_id", "is_expandable", "frames", "blocks",
  "size", "state", "history", "addr", "real_size",
  "action", "time_us", "device_free", "name", "user_metadata", "filename", "line", "stage",
  "max_split_size", "expandable_segments", "roundup_power2_divisions", "garbage_collection_threshold",
  "compile_context",
};

/* Writes key @k, usually as torch does (the string, memoised; a BINGET
 * once met); rarely another key: a near miss ("size\0x", "Size", "siz"),
 * an int. Returns true when the key written is @k (as Python compares
 * keys: every byte). */
static bool
key (G *g, int k)
{
  const char *name = key_names[k];
  size_t n = strlen (name);
  unsigned how = fdp_rare (&g->f, 41) ? 1 + fdp_pick (&g->f, 5) : 0;
  switch (how)
    {
    case 0:
      if (g->key_memo[k] >= 0 && !fdp_rare (&g->f, 89))
        get (g, (uint32_t) g->key_memo[k]);
      else
        {
          int32_t m = put_str (g, name, n);
          if (m >= 0)
            g->key_memo[k] = m;
        }
      return true;
    case 1:
      {
        /* the key, a NUL, more: the same key to a C string compare */
        char t[64];
        memcpy (t, name, n);
        t[n] = 0;
        t[n + 1] = 'x';
        put_str (g, t, n + 2);
        return false;
      }
    case 2:
      put_str (g, name, n - 1);
      return false;
    case 3:
      {
        char t[64];
        memcpy (t, name, n);
        t[0] = (char) (t[0] ^ 0x20);
        put_str (g, t, n);
        return false;
      }
    case 4:
      put_int (g, k);
      return false;
    default:
      op (g, 0x43);   /* SHORT_BINBYTES: b"size" is not "size" */
      buf_byte (&g->o, (uint8_t) n);
      buf_put (&g->o, name, n);
      memoize (g, MK_OTHER);
      return false;
    }
}

/* ---- values ---- */

static void gen_any (G *g);

/* A container nested @levels deep around an int. */
static void
nest (G *g, unsigned levels)
{
  for (unsigned i = 0; i < levels; i++)
    {
      op (g, ']');
      memoize (g, MK_LIST);
      op (g, '(');
    }
  put_int (g, 1);
  for (unsigned i = 0; i < levels; i++)
    op (g, 'e');
}

/* Something that is not an unsigned integer of the field's range. */
static void
gen_hostile (G *g, uint64_t max)
{
  switch (fdp_pick (&g->f, 17))
    {
    case 0: put_int (g, -1 - (int64_t) fdp_pick (&g->f, 255)); break;
    case 1: put_int (g, INT64_MIN); break;
    case 2: put_long1_u (g, (uint64_t) 1 << 63, 0); break;             /* 2^63 */
    case 3: put_long1_u (g, UINT64_MAX, 0); break;                     /* 2^64 - 1 */
    case 4: put_long1_u (g, 0, 1); break;                              /* 2^64 */
    case 5:
      {
        /* LONG4: 4000 bits and more, positive or negative */
        size_t n = 500 + fdp_pick (&g->f, 200);
        op (g, 0x8b);
        buf_le (&g->o, n, 4);
        for (size_t i = 0; i + 1 < n; i++)
          buf_byte (&g->o, 0xa5);
        buf_byte (&g->o, fdp_u8 (&g->f) & 0x80 ? 0x80 : 0x40);
      }
      break;
    case 6: put_float (g, 512.0); break;
    case 7: put_float (g, (double) NAN); break;
    case 8: put_float (g, (double) INFINITY); break;
    case 9: put_str (g, "512", 3); break;
    case 10: op (g, 'N'); break;
    case 11: op (g, fdp_u8 (&g->f) & 1 ? 0x88 : 0x89); break;          /* True / False */
    case 12: op (g, ']'); memoize (g, MK_LIST); break;
    case 13: op (g, '}'); memoize (g, MK_DICT); break;
    case 14:
      op (g, 0x43);
      buf_byte (&g->o, 2);
      buf_put (&g->o, "\x00\x02", 2);
      memoize (g, MK_OTHER);
      break;
    case 15:
      if (g->memo_n && !g->no_ref)
        get (g, fdp_pick (&g->f, g->memo_n < 256 ? g->memo_n : 256));   /* never an int: ints are not memoised */
      else
        op (g, 'N');
      break;
    default:
      if (max < (uint64_t) INT64_MAX)
        put_int (g, (int64_t) max + 1);
      else
        nest (g, 1 + fdp_pick (&g->f, 255) + (fdp_u8 (&g->f) & 1) * 200);   /* past ML_PK_MAX_DEPTH too */
      break;
    }
}

/* An unsigned integer field: @ordinary usually, else a chosen valid value
 * (0, the largest the reader takes, a wide encoding) or a hostile one.
 * Returns false when it wrote something the reader must refuse; *val is
 * the value written otherwise. */
static bool
gen_uint (G *g, uint64_t ordinary, uint64_t max, uint64_t *val)
{
  if (!fdp_rare (&g->f, 23))
    {
      put_int (g, (int64_t) ordinary);
      *val = ordinary;
      return true;
    }
  switch (fdp_pick (&g->f, 6))
    {
    case 0:
      put_int (g, 0);
      *val = 0;
      return true;
    case 1:
      put_int (g, (int64_t) max);
      *val = max;
      return true;
    case 2:
      {
        /* LONG1 of 8 bytes (a wide encoding of a small value): still the value */
        op (g, 0x8a);
        buf_byte (&g->o, 8);
        buf_le (&g->o, ordinary, 8);
        *val = ordinary;
        return true;
      }
    case 3:
      {
        uint64_t v = fdp_u64 (&g->f, 8) % (max + 1 ? max + 1 : max);
        put_int (g, (int64_t) v);
        *val = v;
        return true;
      }
    default:
      gen_hostile (g, max);
      return false;
    }
}

/* A string value: text, long (512 bytes and more), or rarely not a string. */
static void
gen_strval (G *g)
{
  if (fdp_rare (&g->f, 31))
    {
      gen_hostile (g, 1);
      return;
    }
  size_t n = gen_text (&g->f, g->text, sizeof g->text);
  put_str (g, g->text, n);
}

static void gen_any (G *g);

/* A value in a role that wants a dict, which is not one (nor a memo
 * reference, which might be a dict of that role). */
static void
gen_not_dict (G *g)
{
  g->no_ref = true;
  gen_any (g);
  g->no_ref = false;
}

/* A value of the wrong kind for a container role, never a memo
 * reference: None, an int, a string, or the other container (a dict where
 * a list belongs, a list where a dict does). The reader refuses each with
 * the path to the field (issue 26 item 5); they were read as nothing. */
static void
gen_wrong (G *g, bool want_dict)
{
  switch (fdp_pick (&g->f, 4))
    {
    case 0: op (g, 'N'); break;
    case 1: put_int (g, (int64_t) fdp_pick (&g->f, 100)); break;
    case 2: put_str (g, "list", 4); break;
    default:
      op (g, want_dict ? ']' : '}');
      memoize (g, want_dict ? MK_LIST : MK_DICT);
      break;
    }
}

/* Any value at all, a little nested. */
static void
gen_any (G *g)
{
  if (g->depth > 4)
    {
      put_int (g, 0);
      return;
    }
  g->depth++;
  switch (fdp_pick (&g->f, 6))
    {
    case 0: put_int (g, (int64_t) fdp_u64 (&g->f, 2)); break;
    case 1: gen_strval (g); break;
    case 2:
      {
        op (g, ']');
        memoize (g, MK_LIST);
        Items it;
        items_begin (g, &it, false);
        for (unsigned i = fdp_pick (&g->f, 4); i-- > 0;)
          {
            item_next (g, &it);
            gen_any (g);
            item_done (g, &it);
          }
        items_end (g, &it);
      }
      break;
    case 3:
      {
        /* a tuple, as the pickler writes them (TUPLE1..3, MARK ... TUPLE) */
        unsigned n = fdp_pick (&g->f, 5);
        if (n == 0)
          op (g, ')');
        else
          {
            if (n > 3)
              op (g, '(');
            for (unsigned i = 0; i < n; i++)
              gen_any (g);
            op (g, n == 1 ? 0x85 : n == 2 ? 0x86 : n == 3 ? 0x87 : 't');
            memoize (g, MK_OTHER);
          }
      }
      break;
    case 4: gen_hostile (g, 1); break;
    default: put_float (g, (double) fdp_u64 (&g->f, 2) / 7.0); break;
    }
  g->depth--;
}

/* ---- frames ---- */

static void
gen_frame (G *g)
{
  if (g->n_frame_memo && !fdp_rare (&g->f, 3))
    {
      get (g, (uint32_t) g->frame_memo[fdp_pick (&g->f, g->n_frame_memo)]);
      return;
    }
  static const char *const files[] = { "train.py", "torch/nn/modules/module.py", "??", "<frozen runpy>",
                                       "/usr/lib/python3/site-packages/torch/_tensor.py" };
  static const char *const funcs[] = { "forward", "step", "_call_impl", "malloc", "main" };
  op (g, '}');
  int32_t m = memoize (g, MK_FRAME);
  Items it;
  items_begin (g, &it, true);
  int order[3] = { KY_NAME, KY_FILENAME, KY_LINE };
  for (int i = 0; i < 3; i++)
    {
      if (fdp_rare (&g->f, 29))
        continue;
      item_next (g, &it);
      key (g, order[i]);
      if (order[i] == KY_LINE)
        {
          uint64_t v;
          gen_uint (g, 1 + fdp_pick (&g->f, 200), UINT32_MAX, &v);
        }
      else if (fdp_rare (&g->f, 7))
        gen_strval (g);
      else
        {
          const char *s = order[i] == KY_NAME ? funcs[fdp_pick (&g->f, 5)] : files[fdp_pick (&g->f, 5)];
          put_str (g, s, strlen (s));
        }
      item_done (g, &it);
    }
  items_end (g, &it);
  if (m >= 0 && g->n_frame_memo < 8)
    g->frame_memo[g->n_frame_memo++] = m;
}

static void
gen_frames (G *g)
{
  if (fdp_rare (&g->f, 37))
    {
      gen_any (g);   /* not a list of dicts */
      return;
    }
  if (g->n_frames_memo && !fdp_rare (&g->f, 4))
    {
      get (g, (uint32_t) g->frames_memo[fdp_pick (&g->f, g->n_frames_memo)]);
      return;
    }
  op (g, ']');
  int32_t m = memoize (g, MK_FRAMES);
  Items it;
  items_begin (g, &it, false);
  for (unsigned i = 1 + fdp_pick (&g->f, 4); i-- > 0;)
    {
      item_next (g, &it);
      if (fdp_rare (&g->f, 43))
        gen_any (g);
      else
        gen_frame (g);
      item_done (g, &it);
    }
  items_end (g, &it);
  if (m >= 0 && g->n_frames_memo < 8)
    g->frames_memo[g->n_frames_memo++] = m;
}

/* ---- the snapshot ---- */

#define SEG_BASE    ((uint64_t) 0x7f0000000000)
#define SEG_STRIDE  ((uint64_t) 1 << 28)
#define SMALL_SEG   ((uint64_t) 2 << 20)
#define LARGE_SEG   ((uint64_t) 20 << 20)
#define MAX_FIELD   ((uint64_t) INT64_MAX)
#define MAX_TIME_US ((uint64_t) INT64_MAX / 1000)

static const char *const actions[] = {
  "alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map", "segment_unmap",
  "snapshot", "oom", "annotate", "user_defined",
};
enum { A_ALLOC, A_FREE_REQ, A_FREE, A_SEG_ALLOC, A_SEG_FREE, A_SEG_MAP, A_SEG_UNMAP, A_SNAPSHOT, A_OOM, A_ANNOTATE,
       A_USER, A__COUNT };

/* The device a value written as "device" means to the reader: an int
 * (or a bool) is itself; anything else the reader takes as absent. */
static int
gen_device (G *g, int n_dev, bool *exact)
{
  if (!fdp_rare (&g->f, 19))
    {
      int d = (int) fdp_pick (&g->f, (unsigned) n_dev);
      put_int (g, d);
      return d;
    }
  switch (fdp_pick (&g->f, 4))
    {
    case 0: put_int (g, 4095); return 4095;
    case 1: put_int (g, 4096 + fdp_pick (&g->f, 100)); return -2;   /* not a device number */
    case 2: put_int (g, -1); return -2;
    default:
      gen_hostile (g, 1);
      *exact = false;   /* what the reader makes of it is not the oracle's to say */
      return -1;
    }
}

static void
gen_block (G *g, uint64_t at, uint64_t size, bool with_addr, bool *bad, uint64_t *addr_out, uint64_t *size_out)
{
  *addr_out = *size_out = UINT64_MAX;   /* what the reader reads, when it reads them */
  if (fdp_rare (&g->f, 59))
    {
      gen_not_dict (g);
      *bad = true;   /* a block that is not a dict has no "size" */
      return;
    }
  op (g, '}');
  memoize (g, MK_DICT);
  Items it;
  items_begin (g, &it, true);
  static const char *const states[] = { "active_allocated", "inactive", "active_pending_free", "allocated" };
  unsigned st = fdp_pick (&g->f, 4);
  bool active = st == 0 || st == 2, have_size = false, req_bad = false;
  uint64_t v;
  /* torch 2.x: address, size, requested_size, state, (history | frames) */
  if (with_addr)
    {
      item_next (g, &it);
      bool k = key (g, KY_ADDRESS);
      if (!gen_uint (g, at, MAX_FIELD, &v) && k)
        *bad = true;
      else if (k)
        *addr_out = v;
      item_done (g, &it);
    }
  if (!fdp_rare (&g->f, 47))
    {
      item_next (g, &it);
      bool k = key (g, KY_SIZE);
      if (!gen_uint (g, size, MAX_FIELD, &v) && k)
        *bad = true;
      else if (k)
        *size_out = v;
      have_size = k;
      item_done (g, &it);
    }
  if (!have_size)
    *bad = true;
  if (fdp_u8 (&g->f) & 1)
    {
      item_next (g, &it);
      bool k = key (g, KY_REQUESTED_SIZE);
      /* rarely more than the block holds (2^40 in 512 bytes): refused (item 8) */
      bool over = fdp_rare (&g->f, 19);
      if (!gen_uint (g, over ? size + 1 + fdp_pick (&g->f, 1 << 20) : size - fdp_pick (&g->f, 200), MAX_FIELD, &v) && k)
        req_bad = true;
      else if (k && *size_out != UINT64_MAX && v > *size_out)
        req_bad = true;
      item_done (g, &it);
    }
  item_next (g, &it);
  if (!key (g, KY_STATE))
    active = false;
  if (fdp_rare (&g->f, 13))
    {
      /* no state the reader knows ("x..." never starts with "active") */
      size_t n = gen_text (&g->f, g->text + 1, sizeof g->text - 1);
      g->text[0] = 'x';
      put_str (g, g->text, n + 1);
      active = false;
    }
  else
    put_str (g, states[st], strlen (states[st]));
  item_done (g, &it);
  if (req_bad && active)
    *bad = true;   /* requested_size is read for active blocks only */
  unsigned extra = fdp_pick (&g->f, 3);
  if (extra == 1)
    {
      /* history: the allocations this block served, last one wins */
      item_next (g, &it);
      key (g, KY_HISTORY);
      op (g, ']');
      memoize (g, MK_LIST);
      Items ih;
      items_begin (g, &ih, false);
      for (unsigned i = fdp_pick (&g->f, 3); i-- > 0;)
        {
          item_next (g, &ih);
          op (g, '}');
          memoize (g, MK_DICT);
          Items id;
          items_begin (g, &id, true);
          item_next (g, &id);
          key (g, KY_ADDR);
          gen_uint (g, at, MAX_FIELD, &v);
          item_done (g, &id);
          item_next (g, &id);
          key (g, KY_REAL_SIZE);
          gen_uint (g, size, MAX_FIELD, &v);
          item_done (g, &id);
          item_next (g, &id);
          key (g, KY_FRAMES);
          gen_frames (g);
          item_done (g, &id);
          items_end (g, &id);
          item_done (g, &ih);
        }
      items_end (g, &ih);
      item_done (g, &it);
    }
  else if (extra == 2)
    {
      item_next (g, &it);
      key (g, KY_FRAMES);
      gen_frames (g);
      item_done (g, &it);
    }
  items_end (g, &it);
}

static void
gen_segment (G *g, unsigned k, int n_dev)
{
  if (fdp_rare (&g->f, 67))
    {
      gen_not_dict (g);
      g->must_fail = true;   /* "segment K is a T, not a dict" (any device) */
      return;
    }
  op (g, '}');
  memoize (g, MK_DICT);
  Items it;
  items_begin (g, &it, true);
  bool exact = true, bad = false;
  int d = 0;
  bool expandable = fdp_rare (&g->f, 5);
  uint64_t addr = SEG_BASE + k * SEG_STRIDE, total = fdp_u8 (&g->f) & 1 ? LARGE_SEG : SMALL_SEG, v;
  if (fdp_rare (&g->f, 7))
    total = ((uint64_t) 1 + fdp_pick (&g->f, 64)) << 21;
  bool have_addr = false, have_size = false;
  /* device, address, total_size, allocated_size, active_size,
   * requested_size, stream, segment_type, segment_pool_id,
   * is_expandable, frames, blocks: the order torch writes */
  if (!fdp_rare (&g->f, 31))
    {
      item_next (g, &it);
      if (key (g, KY_DEVICE))
        d = gen_device (g, n_dev, &exact);
      else
        gen_device (g, n_dev, &exact);
      item_done (g, &it);
    }
  if (!fdp_rare (&g->f, 31))
    {
      item_next (g, &it);
      have_addr = key (g, KY_ADDRESS);
      if (!gen_uint (g, addr, MAX_FIELD, &addr) && have_addr)
        bad = true;
      item_done (g, &it);
    }
  if (!fdp_rare (&g->f, 31))
    {
      item_next (g, &it);
      have_size = key (g, KY_TOTAL_SIZE);
      if (!gen_uint (g, total, MAX_FIELD, &total) && have_size)
        bad = true;
      item_done (g, &it);
    }
  if (!have_addr || !have_size)
    bad = true;
  for (int kk = KY_ALLOCATED_SIZE; kk <= KY_REQUESTED_SIZE; kk++)
    if (fdp_u8 (&g->f) & 1)
      {
        item_next (g, &it);
        key (g, kk);
        gen_uint (g, total / 2, MAX_FIELD, &v);
        item_done (g, &it);
      }
  if (fdp_u8 (&g->f) & 1)
    {
      item_next (g, &it);
      bool kk = key (g, KY_STREAM);
      if (!gen_uint (g, fdp_pick (&g->f, 3), MAX_FIELD, &v) && kk)
        bad = true;
      item_done (g, &it);
    }
  item_next (g, &it);
  key (g, KY_SEGMENT_TYPE);
  if (fdp_rare (&g->f, 11))
    gen_strval (g);
  else
    put_str (g, total == SMALL_SEG ? "small" : "large", 5);
  item_done (g, &it);
  if (fdp_u8 (&g->f) & 1)
    {
      item_next (g, &it);
      key (g, KY_SEGMENT_POOL_ID);
      put_int (g, 0);
      put_int (g, 0);
      op (g, 0x86);
      memoize (g, MK_OTHER);
      item_done (g, &it);
    }
  if (expandable || fdp_u8 (&g->f) & 1)
    {
      item_next (g, &it);
      key (g, KY_IS_EXPANDABLE);
      op (g, expandable ? 0x88 : 0x89);
      item_done (g, &it);
    }
  if (fdp_rare (&g->f, 9))
    {
      item_next (g, &it);
      key (g, KY_FRAMES);
      gen_frames (g);
      item_done (g, &it);
    }
  /* blocks: tile the segment (with or without "address": torch 2.1+ / 1.13) */
  bool blocks_bad = false;
  if (!fdp_rare (&g->f, 17))
    {
      item_next (g, &it);
      bool said = key (g, KY_BLOCKS);
      if (fdp_rare (&g->f, 23))
        gen_any (g);
      else if (fdp_rare (&g->f, 23))
        {
          gen_wrong (g, false);   /* "segments[K]["blocks"] is a dict, not a list" (any device) */
          if (said)
            g->must_fail = true;
        }
      else
        {
          op (g, ']');
          memoize (g, MK_LIST);
          Items ib;
          items_begin (g, &ib, false);
          bool with_addr = !(fdp_u8 (&g->f) & 3) ? false : true;
          uint64_t at = addr, tile = addr;   /* tile: where the reader puts a block without "address" */
          unsigned nb = fdp_pick (&g->f, 6);
          bool many = fdp_rare (&g->f, 29);
          if (many)
            nb = 1000 + fdp_pick (&g->f, 200);   /* past one APPENDS batch (512 bytes each: inside 2 MiB) */
          for (unsigned b = 0; b < nb; b++)
            {
              uint64_t size = many ? 512 : ((uint64_t) 1 + fdp_pick (&g->f, 8)) * 512, ba, bs;
              /* rarely a block past its segment's end (item 8) */
              uint64_t put = with_addr && fdp_rare (&g->f, 37) ? addr + total + 512 * fdp_pick (&g->f, 8) : at;
              item_next (g, &ib);
              gen_block (g, put, size, with_addr, &blocks_bad, &ba, &bs);
              item_done (g, &ib);
              at += size;
              if (bs == UINT64_MAX)
                continue;   /* no size the reader takes: bad already */
              if (ba == UINT64_MAX)
                ba = tile;
              /* the reader refuses a block that is not inside its segment */
              if (ba < addr || bs > total || ba - addr > total - bs)
                blocks_bad = true;
              tile = ba + bs;
            }
          items_end (g, &ib);
          if (!said)
            blocks_bad = false;   /* b"blocks" or "Blocks": no blocks to the reader */
        }
      item_done (g, &it);
    }
  items_end (g, &it);
  if (g->dev >= 0 && exact && d == g->dev && (bad || blocks_bad))
    g->must_fail = true;
  if (d == -2)
    g->must_fail = true;   /* "segment K: device D is not a device number" */
  if (!exact)
    g->exact = false;
}

/* One trace entry of device list @dl; counted for the oracle when that
 * list is the device read. */
static void
gen_entry (G *g, int dl, uint64_t *time, unsigned n_slots)
{
  bool mine = g->dev >= 0 && dl == g->dev;
  if (g->n_entry_memo && fdp_rare (&g->f, 79))
    {
      /* the same entry dict again, by memo: the streaming reader has
       * given it away by now (it must say so, not read freed memory) */
      int32_t m = g->entry_memo[fdp_pick (&g->f, g->n_entry_memo)];
      get (g, (uint32_t) m);
      if (mine)
        g->exact = false;
      return;
    }
  if (fdp_rare (&g->f, 71))
    {
      gen_not_dict (g);
      if (mine)
        g->must_fail = true;   /* an entry that is not a dict */
      return;
    }
  op (g, '}');
  int32_t m = memoize (g, MK_ENTRY);
  Items it;
  items_begin (g, &it, true);
  unsigned a = fdp_pick (&g->f, A__COUNT);
  uint64_t slot = fdp_pick (&g->f, n_slots);
  uint64_t seg = fdp_pick (&g->f, 4);
  uint64_t addr = SEG_BASE + seg * SEG_STRIDE + slot * 512;
  uint64_t size = ((uint64_t) 1 + fdp_pick (&g->f, 16)) * 512;
  if (a == A_SEG_ALLOC || a == A_SEG_FREE || a == A_SEG_MAP || a == A_SEG_UNMAP)
    {
      addr = SEG_BASE + seg * SEG_STRIDE + (a >= A_SEG_MAP ? slot * LARGE_SEG : 0);
      size = fdp_u8 (&g->f) & 1 ? LARGE_SEG : SMALL_SEG;
    }
  bool clean = true, action_ok = true, dup_size = false, size_key = false;
  /* a duplicate key first: the later one is what Python keeps */
  if (fdp_rare (&g->f, 37))
    {
      dup_size = true;
      item_next (g, &it);
      key (g, KY_SIZE);
      gen_hostile (g, MAX_FIELD);
      item_done (g, &it);
    }
  /* action, addr, size, stream, time_us, frames (+ device_free for an
   * oom, name for an annotation): the order torch writes */
  item_next (g, &it);
  bool have_action = key (g, KY_ACTION);
  if (fdp_rare (&g->f, 47))
    {
      if (fdp_u8 (&g->f) & 1)
        put_int (g, 1);
      else
        put_str (g, "free", 4);
      action_ok = false;
    }
  else if (g->act_memo[a] >= 0 && !fdp_rare (&g->f, 61))
    get (g, (uint32_t) g->act_memo[a]);
  else
    {
      int32_t am = put_str (g, actions[a], strlen (actions[a]));
      if (am >= 0)
        g->act_memo[a] = am;
    }
  item_done (g, &it);
  if (!have_action)
    action_ok = false;
  uint64_t v;
  bool size_said = false;
  uint64_t size_v = 0;
  const int fkeys[] = { KY_ADDR, KY_SIZE, KY_STREAM, KY_TIME_US };
  for (int i = 0; i < 4; i++)
    {
      if (fdp_rare (&g->f, 53))
        continue;
      uint64_t ordinary = i == 0 ? addr : i == 1 ? size : i == 2 ? 0 : *time;
      uint64_t max = fkeys[i] == KY_TIME_US ? MAX_TIME_US : MAX_FIELD;
      item_next (g, &it);
      bool k = key (g, fkeys[i]);
      bool ok = gen_uint (g, ordinary, max, &v);
      if (!ok && k)
        clean = false;
      if (ok && k && fkeys[i] == KY_SIZE)
        size_said = true, size_v = v;
      if (k && fkeys[i] == KY_SIZE)
        size_key = true;
      item_done (g, &it);
    }
  *time += fdp_pick (&g->f, 100);
  if (fdp_rare (&g->f, 97))
    *time = MAX_TIME_US - fdp_pick (&g->f, 3);
  if (!fdp_rare (&g->f, 5))
    {
      item_next (g, &it);
      key (g, KY_FRAMES);
      gen_frames (g);
      item_done (g, &it);
    }
  if (fdp_u8 (&g->f) & 1)
    {
      /* torch 2.5+: "compile_context": "N/A", "user_metadata": "" (read
       * only for annotations) */
      item_next (g, &it);
      key (g, KY_COMPILE_CONTEXT);
      put_str (g, "N/A", 3);
      item_done (g, &it);
      if (a != A_ANNOTATE && a != A_USER)
        {
          item_next (g, &it);
          key (g, KY_USER_METADATA);
          put_str (g, "", 0);
          item_done (g, &it);
        }
    }
  if (a == A_OOM || fdp_rare (&g->f, 43))
    {
      item_next (g, &it);
      bool k = key (g, KY_DEVICE_FREE);
      if (!gen_uint (g, (uint64_t) 1 << 30, MAX_FIELD, &v) && k)
        clean = false;
      item_done (g, &it);
    }
  if (a == A_ANNOTATE || a == A_USER || fdp_rare (&g->f, 43))
    {
      item_next (g, &it);
      key (g, fdp_u8 (&g->f) & 1 ? KY_USER_METADATA : KY_NAME);
      gen_strval (g);
      item_done (g, &it);
    }
  items_end (g, &it);
  if (!action_ok || (dup_size && !size_key))
    clean = false;
  if (m >= 0 && m < MEMO_KEEP)
    {
      g->memo[m] = (MemoRec) { .kind = MK_ENTRY, .clean = clean, .action = (uint8_t) a, .size = size_v,
                               .dev = (uint8_t) dl };
      if (g->n_entry_memo < 16)
        g->entry_memo[g->n_entry_memo++] = m;
    }
  if (!mine)
    return;
  if (!clean)
    g->must_fail = true;
  else if (a == A_ALLOC)
    {
      g->n_alloc++;
      g->sum_alloc += size_said ? size_v : 0;
    }
  else if (a == A_ANNOTATE || a == A_USER)
    g->n_mark++;
}

static void
gen_traces (G *g, int n_dev)
{
  op (g, ']');
  memoize (g, MK_LIST);
  Items it;
  items_begin (g, &it, false);
  uint64_t time = 1700000000000000ull % MAX_TIME_US;
  unsigned n_lists = (unsigned) n_dev - (fdp_rare (&g->f, 13) ? 1 : 0);
  for (unsigned d = 0; d < n_lists; d++)
    {
      item_next (g, &it);
      if (fdp_rare (&g->f, 61))
        {
          gen_any (g);   /* a device list that is not a list */
          item_done (g, &it);
          if (g->dev == (int) d)
            g->exact = false;
          continue;
        }
      if (fdp_rare (&g->f, 61))
        {
          gen_wrong (g, false);   /* "device_traces[D] is None, not a list" (any device) */
          item_done (g, &it);
          g->must_fail = true;
          g->exact = false;
          continue;
        }
      op (g, ']');
      memoize (g, MK_LIST);
      Items ie;
      items_begin (g, &ie, false);
      unsigned n = fdp_pick (&g->f, 24), slots = 1 + fdp_pick (&g->f, 16);
      unsigned repeat = fdp_rare (&g->f, 41) ? 40 + fdp_pick (&g->f, 60) : 1;   /* a long trace from a short input */
      const uint8_t *mark = g->f.p;
      size_t left = g->f.n;
      for (unsigned r = 0; r < repeat; r++)
        {
          g->f.p = mark;   /* the same choices again: the same entries (memo references now) */
          g->f.n = left;
          for (unsigned i = 0; i < n; i++)
            {
              item_next (g, &ie);
              gen_entry (g, (int) d, &time, slots);
              item_done (g, &ie);
            }
        }
      items_end (g, &ie);
      item_done (g, &it);
    }
  items_end (g, &it);
}

static void
gen_annotations (G *g, int n_dev)
{
  op (g, ']');
  memoize (g, MK_LIST);
  Items it;
  items_begin (g, &it, false);
  for (unsigned i = fdp_pick (&g->f, 6); i-- > 0;)
    {
      item_next (g, &it);
      if (fdp_rare (&g->f, 41))
        {
          gen_wrong (g, true);   /* "external_annotations[K] is None, not a dict" */
          item_done (g, &it);
          g->must_fail = true;
          continue;
        }
      op (g, '}');
      memoize (g, MK_DICT);
      Items ia;
      items_begin (g, &ia, true);
      bool exact = true, named = false, timed = false, time_bad = false;
      int d = g->dev;
      uint64_t v;
      /* device, name, stage, time_us */
      if (!fdp_rare (&g->f, 11))
        {
          item_next (g, &ia);
          if (key (g, KY_DEVICE))
            d = gen_device (g, n_dev, &exact);
          else
            gen_device (g, n_dev, &exact);
          item_done (g, &ia);
        }
      if (!fdp_rare (&g->f, 17))
        {
          item_next (g, &ia);
          bool k = key (g, KY_NAME);
          bool str = !fdp_rare (&g->f, 19);
          if (str)
            {
              size_t n = gen_text (&g->f, g->text, sizeof g->text);
              put_str (g, g->text, n);
            }
          else
            put_int (g, 7);
          named = k && str;
          item_done (g, &ia);
        }
      if (fdp_u8 (&g->f) & 1)
        {
          item_next (g, &ia);
          key (g, KY_STAGE);
          if (fdp_rare (&g->f, 5))
            gen_strval (g);
          else
            {
              const char *stage = fdp_u8 (&g->f) & 1 ? "END" : "START";
              put_str (g, stage, strlen (stage));
            }
          item_done (g, &ia);
        }
      if (!fdp_rare (&g->f, 13))
        {
          item_next (g, &ia);
          bool k = key (g, KY_TIME_US);
          bool ok = gen_uint (g, 1700000000000000ull + fdp_pick (&g->f, 200), MAX_TIME_US, &v);
          timed = k;
          time_bad = k && !ok;
          item_done (g, &ia);
        }
      items_end (g, &ia);
      item_done (g, &it);
      if (!exact)
        g->exact = false;
      else if (g->dev >= 0 && named && d == g->dev)
        {
          if (time_bad)
            g->must_fail = true;
          else if (timed)
            g->n_mark++;
        }
    }
  items_end (g, &it);
}

static void
gen_settings (G *g)
{
  op (g, '}');
  memoize (g, MK_DICT);
  Items it;
  items_begin (g, &it, true);
  const int keys[] = { KY_MAX_SPLIT_SIZE, KY_EXPANDABLE_SEGMENTS, KY_ROUNDUP_POWER2_DIVISIONS, KY_GC_THRESHOLD };
  for (int i = 0; i < 4; i++)
    {
      if (fdp_u8 (&g->f) & 1)
        continue;
      item_next (g, &it);
      key (g, keys[i]);
      unsigned how = fdp_pick (&g->f, 5);
      if (how == 0)
        put_int (g, (int64_t) fdp_u64 (&g->f, 8));
      else if (how == 1 && keys[i] == KY_ROUNDUP_POWER2_DIVISIONS)
        {
          /* per size range: {64: 4, 128: 8, ...} */
          op (g, '}');
          memoize (g, MK_DICT);
          Items ir;
          items_begin (g, &ir, true);
          for (unsigned r = fdp_pick (&g->f, 5); r-- > 0;)
            {
              item_next (g, &ir);
              put_int (g, (int64_t) 64 << r);
              if (fdp_rare (&g->f, 5))
                gen_hostile (g, 1);
              else
                put_int (g, (int64_t) fdp_u64 (&g->f, 8));
              item_done (g, &ir);
            }
          items_end (g, &ir);
        }
      else if (how == 2)
        op (g, fdp_u8 (&g->f) & 1 ? 0x88 : 0x89);
      else if (how == 3)
        gen_hostile (g, 1);
      else
        put_int (g, (int64_t) fdp_pick (&g->f, 64) << 20);
      item_done (g, &it);
    }
  items_end (g, &it);
}

/* FRAME opcodes (protocol 4+), as the pickler splits: at an opcode
 * boundary once a frame holds @size bytes; rarely a frame length that
 * lies. */
static void
add_frames (G *g, size_t start, size_t size)
{
  Buf out = { 0 };
  buf_put (&out, g->o.b, start);
  size_t at = start, k = 0;
  bool lie = fdp_rare (&g->f, 31);
  while (at < g->o.n)
    {
      size_t end = at;
      while (k < g->n_ops && g->ops[k] <= at)
        k++;
      while (k < g->n_ops && g->ops[k] - at < size)
        k++;
      end = k < g->n_ops ? g->ops[k] : g->o.n;
      if (end == at)
        end = g->o.n;
      buf_byte (&out, 0x95);
      buf_le (&out, (uint64_t) ((int64_t) (end - at) + (lie ? (int) fdp_pick (&g->f, 9) - 4 : 0)), 8);
      buf_put (&out, g->o.b + at, end - at);
      at = end;
    }
  free (g->o.b);
  g->o = out;
}

static void
gen_snapshot (G *g)
{
  static const int protos[] = { 4, 2, 3, 5 };
  g->proto = protos[fdp_pick (&g->f, 4)];
  op (g, 0x80);
  buf_byte (&g->o, (uint8_t) g->proto);
  size_t body = g->o.n;
  int n_dev = 1 + (int) fdp_pick (&g->f, 3);
  g->dev = fdp_u8 (&g->f) & 1 ? (int) fdp_pick (&g->f, (unsigned) n_dev) : -1;
  g->exact = true;
  if (fdp_rare (&g->f, 17))
    {
      /* the legacy layout: a plain list of segments, no trace */
      op (g, ']');
      memoize (g, MK_LIST);
      Items it;
      items_begin (g, &it, false);
      for (unsigned k = fdp_pick (&g->f, 5); k-- > 0;)
        {
          item_next (g, &it);
          gen_segment (g, k, n_dev);
          item_done (g, &it);
        }
      items_end (g, &it);
    }
  else
    {
      op (g, '}');
      memoize (g, MK_DICT);
      Items it;
      items_begin (g, &it, true);
      /* segments, device_traces, allocator_settings, external_annotations;
       * sometimes in another order (device_traces first: streamed before
       * the segments are known), sometimes without one */
      int order[4] = { KY_SEGMENTS, KY_DEVICE_TRACES, KY_ALLOCATOR_SETTINGS, KY_EXTERNAL_ANNOTATIONS };
      if (fdp_rare (&g->f, 7))
        for (int i = 3; i > 0; i--)
          {
            int j = (int) fdp_pick (&g->f, (unsigned) i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
          }
      for (int i = 0; i < 4; i++)
        {
          int k = order[i];
          if (k != KY_SEGMENTS && fdp_rare (&g->f, 9))
            continue;
          item_next (g, &it);
          bool said = key (g, k), must_fail = g->must_fail;
          if (!said && (k == KY_SEGMENTS || k == KY_DEVICE_TRACES || k == KY_EXTERNAL_ANNOTATIONS))
            g->exact = false;   /* the key was missed on purpose: the oracle keeps out */
          if (fdp_rare (&g->f, 53))
            {
              gen_any (g);   /* the value of another type */
              g->exact = false;
            }
          else if (fdp_rare (&g->f, 47))
            {
              /* "\"device_traces\" is a dict, not a list": refused (item 5) */
              gen_wrong (g, k == KY_ALLOCATOR_SETTINGS);
              g->exact = false;
              g->must_fail = true;
            }
          else if (k == KY_SEGMENTS)
            {
              op (g, ']');
              memoize (g, MK_LIST);
              Items is;
              items_begin (g, &is, false);
              for (unsigned s = fdp_pick (&g->f, 6); s-- > 0;)
                {
                  item_next (g, &is);
                  gen_segment (g, s, n_dev);
                  item_done (g, &is);
                }
              items_end (g, &is);
            }
          else if (k == KY_DEVICE_TRACES)
            gen_traces (g, n_dev);
          else if (k == KY_ALLOCATOR_SETTINGS)
            gen_settings (g);
          else
            gen_annotations (g, n_dev);
          if (!said && k != KY_SEGMENTS)
            g->must_fail = must_fail;   /* "Device_traces": nothing in it is read */
          item_done (g, &it);
        }
      if (fdp_rare (&g->f, 11))
        {
          item_next (g, &it);
          size_t n = gen_text (&g->f, g->text, sizeof g->text);
          put_str (g, g->text, n);
          gen_any (g);
          item_done (g, &it);
        }
      items_end (g, &it);
    }
  op (g, '.');
  if (g->proto >= 4 && !fdp_rare (&g->f, 5))
    {
      static const size_t sizes[] = { 65536, 64, 4096, 1 };
      add_frames (g, body, sizes[fdp_pick (&g->f, 4)]);
    }
  if (fdp_rare (&g->f, 97))
    g->o.n -= fdp_pick (&g->f, (unsigned) (g->o.n < 256 ? g->o.n : 256));   /* cut short */
}

/* ---- the target ---- */

/* What `memlens stats` reads of a trace: every string it names. */
static void
read_back (const MlTrace *t)
{
  size_t sum = 0;
  for (size_t i = 0; i < t->n_events; i++)
    {
      const MlEvent *e = &t->events[i];
      sum += strlen (ml_trace_str (t, e->name));
      if (e->stack)
        {
          if (e->stack >= t->n_stacks)
            {
              fprintf (stderr, "fuzz: event %zu: stack %u of %zu\n", i, e->stack, t->n_stacks);
              abort ();
            }
          const MlStack *st = &t->stacks[e->stack];
          sum += strlen (ml_trace_str (t, st->site));
          for (uint32_t k = 0; k < st->n; k++)
            sum += strlen (ml_trace_str (t, ml_trace_stack_frame (t, st, k)->file))
                   + strlen (ml_trace_str (t, ml_trace_stack_frame (t, st, k)->func));
        }
    }
  if (t->device_reason)
    sum += strlen (ml_trace_str (t, t->device_reason));
  (void) sum;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static G g;
  memset (&g, 0, offsetof (G, n_ops));
  g.f = (Fdp) { data, size };
  g.n_ops = 0;
  memset (g.key_memo, 0xff, sizeof g.key_memo);
  memset (g.act_memo, 0xff, sizeof g.act_memo);
  gen_snapshot (&g);
  MlTrace *t = gen_load_judged (&g.o, NULL, &(GenOracle) {
    .dev = g.dev, .must_fail = g.must_fail, .exact = g.exact, .n_alloc = g.n_alloc, .sum_alloc = g.sum_alloc,
    .marks = true, .n_mark = g.n_mark, .refused = "holds a value the reader must refuse" });
  if (!t)
    return 0;
  read_back (t);
  fuzz_analyse_n (t, 0, 64);
  ml_trace_free (t);
  return 0;
}
