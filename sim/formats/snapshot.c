#include "sim/formats/snapshot.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/base/io.h"
#include "sim/formats/pickle.h"
#include "sim/base/u64map.h"

bool
ml_snapshot_sniff (const unsigned char *h, size_t len)
{
  /* PROTO 2..5, then (protocol 4+) FRAME or a container */
  return len >= 2 && h[0] == 0x80 && h[1] >= 2 && h[1] <= 5;
}

/* ---- what the pickle holds, for one device ---- */

typedef struct {
  uint64_t addr, size;
  uint64_t origin;        /* where the file has it (ORG_*), 0 = not known */
  uint32_t stream;
  bool     small, expandable, gone;
} Seg;

typedef struct {
  uint64_t addr, req;
  uint64_t origin;        /* where the file has it (ORG_*) */
  uint32_t stream;
  uint32_t stack;         /* from a trace entry (frames NULL) */
  MlPkValue *frames;      /* from a dump-time block */
  bool     gone;
  bool     freed_frames;  /* frames are the free's: allocated before the trace */
} Blk;

/* A trace entry as the steps read it: what the pickle's dict says, kept
 * while the pickle streams (the entry dict itself is gone by then). */
enum { ENT_OK, ENT_NOT_DICT, ENT_BAD_ACTION, ENT_BAD_FIELD };
typedef struct {
  uint64_t addr, size;    /* oom: addr = device_free */
  int64_t  time_us;       /* -1: none (or past what ns can hold) */
  uint32_t stack, stream;
  uint32_t name;          /* mark: its text; ENT_NOT_DICT: the pickle kind; ENT_BAD_ACTION: the action;
                           * ENT_BAD_FIELD: the value, described */
  uint8_t  kind;          /* MlEventKind; ENT_BAD_FIELD: which field (entry_fields) */
  uint8_t  bad;           /* ENT_* */
} Ent;

/* An address's first entries after the window (--range), as undoing
 * them backwards from the dump-time state needs them: the first is an
 * alloc (P_ALLOC: not live at the window's end); frees (P_FREES: live,
 * with the last free's size and stack); frees, then an alloc (P_FROZEN:
 * live with the last free's, and no dump-time block there is). */
enum { P_ALLOC = 1, P_FREES, P_FROZEN };
typedef struct {
  uint64_t addr, size;
  uint64_t origin;        /* the last free's entry (ORG_ENTRY) */
  uint32_t stream, stack;
  uint8_t  state;
} Post;

typedef struct {
  uint64_t index, request, device_free;
  int64_t  prefix;        /* segment bytes the trace added before it */
} OomAt;

/* Where the entries of a device trace fall against the window. */
enum { W_BEFORE, W_IN, W_AFTER };

typedef struct {
  Ent    *e;              /* the entries kept: all of them, or the window's */
  size_t  n, cap;
  /* every entry, counted as it streams (the device table) */
  uint64_t n_all;
  uint64_t actions[ML_EV__COUNT];
  int64_t  net, max_net;  /* segment bytes added so far, and at most */
  OomAt   *ooms;
  size_t   n_ooms, cap_ooms;
  /* the window (MlLoadOptions.range) */
  uint8_t  where;
  uint64_t first;         /* index of the window's first entry */
  int64_t  origin_us;     /* the first time_us of the trace, -1 = none yet */
  int64_t  last_us;       /* the latest time_us so far, -1 = none */
  int64_t  start_us;      /* the latest time_us before the window */
  Ent     *post;          /* segment entries after the window */
  size_t   n_post, cap_post;
  Post    *pb;            /* addresses allocated or freed after it */
  size_t   n_pb, cap_pb;
  MlU64Map pb_by_addr;
  bool     has_bad;       /* the first bad entry outside the window */
  uint64_t bad_index;
  Ent      bad;
} DevTrace;

/* A frame dict, interned once per memo object (its tag points here). */
typedef struct {
  uint32_t file, func, line;
  uint32_t site;          /* "file:line:func", interned on first use; 0 = not yet */
  bool     framework;
} FrameInfo;

typedef struct {
  const char *path;
  MlError    *err;
  MlTrace    *t;
  MlU64Map    freed;      /* frames list pointer -> stack, for stacks seen only at a free */
  MlU64Map    by_content; /* hash of (site, frames) -> stack index */
  FrameInfo  *finfo;      /* one per distinct (file, func, line) */
  size_t      n_finfo, cap_finfo;
  MlU64Map    finfo_by_content;
  MlFrame    *scratch;    /* frames of the stack being interned */
  size_t      cap_scratch;
  /* stacks by the frame dicts' identities: a frames list whose items are
   * the same document objects as one read before is that stack, known
   * without reading its frames (bounded: PTR_CACHE_MAX pointers) */
  MlU64Map    by_ptrs;    /* hash of the item pointers -> pents index */
  struct PtrEnt { uint32_t stack, n; size_t off; } *pents;
  size_t      n_pents, cap_pents;
  MlPkValue **ptrs;
  size_t      n_ptrs, cap_ptrs;
  Seg        *segs;
  size_t      n_segs, cap_segs;
  Blk        *blks;
  size_t      n_blks, cap_blks;
  MlU64Map    live;       /* addr -> index in blks; after the rebuild: addr -> buffer id */
  int64_t     dev;        /* the device read */
  /* the forward walk */
  uint64_t    tick, seg_id, next_id;
  uint32_t    small_name, large_name;
  struct Ann *anns;       /* external annotations of the device, by time */
  size_t      n_anns, next_ann;
  /* the device traces, one entry at a time from the pickle */
  DevTrace   *dt;
  size_t      n_dt;
  MlRange     range;      /* set: only a window of the trace */
  bool        entry_failed;  /* the error came from on_entry (it names the file) */
  /* entries the walk reads past, with a warning: a free of a block that
   * is already free, an alloc over a live block (entries missing inside
   * the trace); how many, and the first of each */
  size_t      n_refree, n_realloc;
  uint64_t    refree_at, realloc_at;  /* ORG_ENTRY */
  uint64_t    refree_addr, realloc_addr;
} Ctx;

/* Tags (MlPkValue.tag) this reader sets: the role in the top two bits so
 * a value met in another role is never mistaken, an index below. */
#define TAG_FRAME (1u << 30)
#define TAG_STACK (2u << 30)
#define TAG_KEY   (3u << 30)
#define TAG_ROLE  (3u << 30)
#define TAG_MAX   ((1u << 30) - 2)

static int
grow (void **p, size_t *cap, size_t need, size_t elem)
{
  if (need <= *cap)
    return 0;
  size_t c = *cap ? *cap * 2 : 64;
  while (c < need)
    c *= 2;
  void *q = realloc (*p, c * elem);
  if (!q)
    return ML_ENOMEM;
  *p = q;
  *cap = c;
  return 0;
}

static int
oom (Ctx *c)
{
  return ml_error_set (c->err, ML_ENOMEM, "%s: out of memory", c->path);
}

static int
intern (Ctx *c, const char *s, uint32_t *out)
{
  uint32_t i = ml_strtab_intern0 (c->t->strings, s ? s : "");
  if (i == UINT32_MAX)
    return oom (c);
  *out = i;
  return 0;
}

/* The string of a value, interned (by its bytes: a pickle may hold the
 * same text as several objects). */
static int
intern_val (Ctx *c, const MlPkValue *v, uint32_t *out)
{
  uint32_t i = v && v->kind == ML_PK_STR ? ml_strtab_intern (c->t->strings, v->s, v->len) : 0;
  if (i == UINT32_MAX)
    return oom (c);
  *out = i;
  return 0;
}

/* The keys the reader looks up in frames and trace entries. */
enum { K_OTHER, K_FILENAME, K_NAME, K_LINE, K_ACTION, K_ADDR, K_SIZE, K_STREAM, K_TIME_US, K_FRAMES,
       K_DEVICE_FREE, K_USER_METADATA, K_STATE, K_ADDRESS, K_REQUESTED_SIZE, K_HISTORY, K_REAL_SIZE, K__COUNT };

/* A string's tag: TAG_KEY | (field id + 1) << 8 | (action kind + 2),
 * each part 0 until computed (action 1: not an action). */
static unsigned
key_of (MlPkValue *k)
{
  static const char *const names[K__COUNT] = { "", "filename", "name", "line", "action", "addr", "size", "stream",
                                               "time_us", "frames", "device_free", "user_metadata", "state",
                                               "address", "requested_size", "history", "real_size" };
  if (k->kind != ML_PK_STR)
    return K_OTHER;   /* only strings are tagged (numbers may be shared) */
  bool cached = (k->tag & TAG_ROLE) == TAG_KEY;
  if (cached && (k->tag & 0xff00))
    return ((k->tag >> 8) & 0xff) - 1;
  unsigned id = K_OTHER;
  if (k->kind == ML_PK_STR)
    for (unsigned i = 1; i < K__COUNT; i++)
      if (k->len == strlen (names[i]) && memcmp (k->s, names[i], k->len) == 0)   /* "size\0x" is not "size" */
        {
          id = i;
          break;
        }
  if (cached || !k->tag)
    k->tag = TAG_KEY | (k->tag & 0xff) | (id + 1) << 8;
  return id;
}

/* The values of @d under the keys above, in one pass over its items
 * (NULL when absent); the last one wins, as in Python. */
static void
fields (const MlPkValue *d, const MlPkValue *out[K__COUNT])
{
  memset (out, 0, K__COUNT * sizeof *out);
  if (d->kind != ML_PK_DICT)
    return;
  for (size_t k = 0; k + 1 < d->n; k += 2)
    out[key_of (d->items[k])] = d->items[k + 1];
}

static bool
int_of (const MlPkValue *v, int64_t *out)
{
  if (!v || (v->kind != ML_PK_INT && v->kind != ML_PK_BOOL))
    return false;
  *out = v->i;
  return true;
}

/* The largest value the reader takes for an address, a size, a stream:
 * 2^63-1 (an address plus a size then never wraps around 2^64); for a
 * time in microseconds, what nanoseconds in an int64 hold. */
#define UINT_MAX_FIELD ((uint64_t) INT64_MAX)
#define TIME_US_MAX    ((uint64_t) INT64_MAX / 1000)

/* The error for field @key of @where holding the value @said (as
 * ml_pk_describe says it) where an integer from 0 to @max belongs. */
static int
bad_uint (Ctx *c, const char *where, const char *key, const char *said, uint64_t max)
{
  return ml_error_set (c->err, ML_EINPUT, "%s: %s: \"%s\" is %s; expected an integer from 0 to %" PRIu64, c->path,
                       where, key, said, max);
}

/* Reserved bytes that no int64 holds: the sizes of a device's segments
 * and segment events (each up to 2^63 - 1) added up past 2^63. */
static int
reserved_overflow (Ctx *c, size_t dev, size_t entry, uint64_t size)
{
  return ml_error_set (c->err, ML_EINPUT,
                       "%s: device_traces[%zu][%zu]: segment size %" PRIu64 " takes the reserved bytes past 2^63",
                       c->path, dev, entry, size);
}

/* Where a field is, for messages: "segment 3", "segment 3 block 7"
 * (formatted only when there is something to tell). */
typedef struct {
  const char *what;   /* "segment", "external annotation" */
  size_t      k, b;   /* b = SIZE_MAX: no block */
} Where;

/* Field @key of dict @d, an unsigned integer up to @max, of @w:
 * absent leaves *out (an error when @required); anything else that is
 * not such an integer is an error naming the value. */
static int
uint_value (Ctx *c, const MlPkValue *v, const char *key, uint64_t max, bool required, uint64_t *out, Where w)
{
  if (v ? ml_pk_uint (v, max, out) : !required)
    return 0;
  char where[96];
  if (w.b == SIZE_MAX)
    snprintf (where, sizeof where, "%s %zu", w.what, w.k);
  else
    snprintf (where, sizeof where, "%s %zu block %zu", w.what, w.k, w.b);
  if (!v)
    return ml_error_set (c->err, ML_EINPUT, "%s: %s has no \"%s\" (an integer)", c->path, where, key);
  char said[96];
  return bad_uint (c, where, key, ml_pk_describe (v, said, sizeof said), max);
}

static int
uint_field (Ctx *c, const MlPkValue *d, const char *key, uint64_t max, bool required, uint64_t *out, Where w)
{
  return uint_value (c, ml_pk_get (d, key), key, max, required, out, w);
}

/* The unsigned integer fields of a trace entry, as the Ent keeps the
 * one that is wrong (ENT_BAD_FIELD). */
static const struct { int key; const char *name; uint64_t max; } entry_fields[] = {
  { K_ADDR, "addr", UINT_MAX_FIELD }, { K_SIZE, "size", UINT_MAX_FIELD }, { K_STREAM, "stream", UINT_MAX_FIELD },
  { K_TIME_US, "time_us", TIME_US_MAX }, { K_DEVICE_FREE, "device_free", UINT_MAX_FIELD },
};

/* The frame of a frame dict: interned once per memo object; NULL when
 * out of memory (the error is set). */
static FrameInfo *
frame_of (Ctx *c, MlPkValue *f)
{
  if ((f->tag & TAG_ROLE) == TAG_FRAME)
    return &c->finfo[f->tag & ~TAG_ROLE];
  const MlPkValue *fv[K__COUNT];
  fields (f, fv);
  FrameInfo fi = { 0 };
  int64_t line = 0;
  int_of (fv[K_LINE], &line);
  if (intern_val (c, fv[K_FILENAME], &fi.file) < 0 || intern_val (c, fv[K_NAME], &fi.func) < 0)
    return NULL;
  fi.line = line > 0 && line < UINT32_MAX ? (uint32_t) line : 0;
  /* frame dicts of equal content are one frame (stacks hash by frame) */
  uint64_t h = (((uint64_t) fi.file * 0x9e3779b97f4a7c15ull) ^ fi.func) * 0xff51afd7ed558ccdull ^ fi.line;
  uint32_t idx;
  if (ml_u64map_get (&c->finfo_by_content, h, &idx) && c->finfo[idx].file == fi.file && c->finfo[idx].func == fi.func
      && c->finfo[idx].line == fi.line)
    {
      if (!f->tag)
        f->tag = TAG_FRAME | idx;
      return &c->finfo[idx];
    }
  fi.framework = ml_frame_is_framework (ml_trace_str (c->t, fi.file), ml_trace_str (c->t, fi.func));
  if (c->n_finfo > TAG_MAX || grow ((void **) &c->finfo, &c->cap_finfo, c->n_finfo + 1, sizeof *c->finfo) < 0
      || ml_u64map_put (&c->finfo_by_content, h, (uint32_t) c->n_finfo) < 0)
    {
      oom (c);
      return NULL;
    }
  c->finfo[c->n_finfo] = fi;
  if (!f->tag)
    f->tag = TAG_FRAME | (uint32_t) c->n_finfo;
  return &c->finfo[c->n_finfo++];
}

static uint64_t
hash_stack (uint32_t site, const MlFrame *fr, size_t n)
{
  uint64_t h = 0x9e3779b97f4a7c15ull ^ site;
  for (size_t k = 0; k < n; k++)
    {
      h = (h ^ fr[k].file) * 0xff51afd7ed558ccdull;
      h = (h ^ fr[k].func) * 0xc4ceb9fe1a85ec53ull;
      h = (h ^ fr[k].line) * 0x9e3779b97f4a7c15ull;
      h ^= h >> 29;
    }
  return h;
}

/* A stack by content: torch gives every traceback its own frames list, so
 * the iterations of a training loop repeat the same stacks as different
 * objects; the stack table keeps each distinct one once. */
static int
add_stack_h (Ctx *c, uint64_t h, uint32_t site, const MlFrame *fr, size_t n, uint32_t *out)
{
  uint32_t idx;
  if (ml_u64map_get (&c->by_content, h, &idx))
    {
      const MlStack *st = &c->t->stacks[idx];
      /* a stack of no frames (a frames list without a dict) may come
       * before the frame table has any: no pointer into it then */
      if (st->site == site && st->n == n && (n == 0 || memcmp (c->t->frames + st->first, fr, n * sizeof *fr) == 0))
        {
          *out = idx;
          return 0;
        }
    }
  idx = ml_trace_add_stack (c->t, site, fr, n);
  if (idx == UINT32_MAX || ml_u64map_put (&c->by_content, h, idx) < 0)
    return oom (c);
  *out = idx;
  return 0;
}

static int
add_stack (Ctx *c, uint32_t site, const MlFrame *fr, size_t n, uint32_t *out)
{
  return add_stack_h (c, hash_stack (site, fr, n), site, fr, n, out);
}

static int remember_ptrs (Ctx *c, uint64_t ph, const MlPkValue *frames, uint32_t idx);

/* The stack of a frames list: memo-shared lists give one stack, read
 * once (the list's tag; the streaming reader may keep a tagged list
 * without its items). */
static int
stack_of (Ctx *c, MlPkValue *frames, uint32_t *out)
{
  *out = 0;
  if (!frames || (frames->kind != ML_PK_LIST && frames->kind != ML_PK_TUPLE))
    return 0;
  if ((frames->tag & TAG_ROLE) == TAG_STACK)
    {
      *out = frames->tag & ~TAG_ROLE;
      return 0;
    }
  if (frames->n == 0)
    return 0;
  uint64_t ph = 0x51ed270b27a3f1d5ull;
  for (size_t k = 0; k < frames->n; k++)
    {
      ph = (ph ^ (uint64_t) (uintptr_t) frames->items[k]) * 0x9e3779b97f4a7c15ull;
      ph ^= ph >> 29;
    }
  uint32_t pi;
  if (ml_u64map_get (&c->by_ptrs, ph, &pi) && c->pents[pi].n == frames->n
      && memcmp (c->ptrs + c->pents[pi].off, frames->items, frames->n * sizeof *frames->items) == 0)
    {
      *out = c->pents[pi].stack;
      if (!frames->tag && *out <= TAG_MAX)
        frames->tag = TAG_STACK | *out;
      return 0;
    }
  /* hashed by frame (one per distinct content), not by its strings; a
   * list whose content is a known stack (every iteration of a training
   * loop) is only compared; one pass over the items */
  if (grow ((void **) &c->scratch, &c->cap_scratch, frames->n, sizeof *c->scratch) < 0)
    return oom (c);
  MlFrame *fr = c->scratch;
  size_t n = 0;
  uint64_t h = 0x243f6a8885a308d3ull;
  uint32_t site = 0, idx;
  for (size_t k = 0; k < frames->n; k++)
    {
      MlPkValue *f = frames->items[k];
      if (f->kind != ML_PK_DICT)
        continue;
      FrameInfo *fi = (f->tag & TAG_ROLE) == TAG_FRAME ? &c->finfo[f->tag & ~TAG_ROLE] : frame_of (c, f);
      if (!fi)
        return ML_ENOMEM;
      h = (h ^ (uint64_t) (fi - c->finfo)) * 0x9e3779b97f4a7c15ull;
      h ^= h >> 32;
      fr[n++] = (MlFrame) { .file = fi->file, .func = fi->func, .line = fi->line };
      if (!site && !fi->framework)
        {
          if (!fi->site)
            {
              char buf[1024];
              snprintf (buf, sizeof buf, "%s:%u:%s", ml_trace_str (c->t, fi->file), fi->line,
                        ml_trace_str (c->t, fi->func));
              int rc = intern (c, buf, &fi->site);
              if (rc < 0)
                return rc;
            }
          site = fi->site;
        }
    }
  h ^= site;
  if (ml_u64map_get (&c->by_content, h, &idx))
    {
      const MlStack *st = &c->t->stacks[idx];
      /* n == 0: a stack of no frames may come before the frame table
       * has any: no pointer into it then */
      if (st->site == site && st->n == n && (n == 0 || memcmp (c->t->frames + st->first, fr, n * sizeof *fr) == 0))
        {
          if (!frames->tag && idx <= TAG_MAX)
            frames->tag = TAG_STACK | idx;
          *out = idx;
          return remember_ptrs (c, ph, frames, idx);
        }
    }
  int rc = add_stack_h (c, h, site, fr, n, &idx);
  if (rc < 0)
    return rc;
  if (!frames->tag && idx <= TAG_MAX)
    frames->tag = TAG_STACK | idx;
  *out = idx;
  return remember_ptrs (c, ph, frames, idx);
}

#define PTR_CACHE_MAX ((size_t) 1 << 22)

/* Remembers that @frames's items (when all are document objects: their
 * addresses stay theirs) make stack @idx; for a stack met again. */
static int
remember_ptrs (Ctx *c, uint64_t ph, const MlPkValue *frames, uint32_t idx)
{
  size_t n = frames->n;
  if (c->n_ptrs + n > PTR_CACHE_MAX)
    return 0;
  for (size_t k = 0; k < n; k++)
    if (!ml_pk_in_document (frames->items[k]))
      return 0;
  if (grow ((void **) &c->ptrs, &c->cap_ptrs, c->n_ptrs + n, sizeof *c->ptrs) < 0
      || grow ((void **) &c->pents, &c->cap_pents, c->n_pents + 1, sizeof *c->pents) < 0
      || ml_u64map_put (&c->by_ptrs, ph, (uint32_t) c->n_pents) < 0)
    return oom (c);
  memcpy (c->ptrs + c->n_ptrs, frames->items, n * sizeof *c->ptrs);
  c->pents[c->n_pents++] = (struct PtrEnt) { idx, (uint32_t) n, c->n_ptrs };
  c->n_ptrs += n;
  return 0;
}

/* The same frames as the stack of the free of a block allocated before
 * the trace: the call site says so instead of naming an allocation site. */
static int
stack_at_free (Ctx *c, uint32_t st, uint32_t *out)
{
  *out = 0;
  if (!st || st >= c->t->n_stacks)
    return 0;
  uint32_t idx;
  if (ml_u64map_get (&c->freed, st, &idx))
    {
      *out = idx;
      return 0;
    }
  const MlStack *s = &c->t->stacks[st];
  if (grow ((void **) &c->scratch, &c->cap_scratch, s->n, sizeof *c->scratch) < 0)
    return oom (c);
  if (s->n)
    memcpy (c->scratch, c->t->frames + s->first, s->n * sizeof *c->scratch);
  uint32_t site = 0, n = s->n;
  int rc;
  for (uint32_t k = 0; k < n && !site; k++)
    {
      const char *file = ml_trace_str (c->t, c->scratch[k].file), *func = ml_trace_str (c->t, c->scratch[k].func);
      if (ml_frame_is_framework (file, func))
        continue;
      char buf[1024];
      snprintf (buf, sizeof buf, "allocated before the %s, freed at %s:%u:%s", c->tick ? "window" : "trace", file,
                c->scratch[k].line, func);
      if ((rc = intern (c, buf, &site)) < 0)
        return rc;
    }
  if ((rc = add_stack (c, site, c->scratch, n, &idx)) < 0)
    return rc;
  if (ml_u64map_put (&c->freed, st, idx) < 0)
    return oom (c);
  *out = idx;
  return 0;
}

/* Appends an event; @origin: where the file has it (ORG_*), 0 = nowhere. */
static int
emit (Ctx *c, MlEventKind kind, uint64_t tick, uint64_t id, uint64_t addr, uint64_t size, uint32_t stream,
      int64_t time_ns, uint32_t name, uint32_t stack, uint16_t flags, uint64_t origin)
{
  MlEvent ev = { .tick = tick, .id = id, .addr = addr, .size = size, .time_ns = time_ns, .name = name,
                 .stack = stack, .stream = stream, .kind = (uint8_t) kind, .flags = flags,
                 .device = c->t->device };
  if (!ml_trace_append (c->t, &ev) || (origin && ml_trace_set_origin (c->t, origin) < 0))
    return oom (c);
  return 0;
}

static const MlPkValue *
as_list (const MlPkValue *v)
{
  return v && (v->kind == ML_PK_LIST || v->kind == ML_PK_TUPLE) ? v : NULL;
}

#define MAX_DEVICE 4095

/* A "device" that is present and not an integer (a string, a float,
 * None, a bool) is an error naming @what, @k and the value (it read as
 * device 0); 0 otherwise. */
static int
check_device (Ctx *c, const MlPkValue *d, const char *what, size_t k)
{
  const MlPkValue *v = ml_pk_get (d, "device");
  if (!v || v->kind == ML_PK_INT)
    return 0;
  char said[96];
  return ml_error_set (c->err, ML_EINPUT, "%s: %s %zu: \"device\" is %s; expected a device number (0 .. %d)", c->path,
                       what, k, ml_pk_describe (v, said, sizeof said), MAX_DEVICE);
}

static int64_t
dev_of (const MlPkValue *seg)
{
  int64_t d = 0;
  ml_pk_get_int (seg, "device", &d);
  return d;
}

static int
add_seg (Ctx *c, uint64_t addr, uint64_t size, uint32_t stream, bool small, bool expandable, uint64_t origin)
{
  if (grow ((void **) &c->segs, &c->cap_segs, c->n_segs + 1, sizeof *c->segs) < 0)
    return oom (c);
  c->segs[c->n_segs++] = (Seg) { addr, size, origin, stream, small, expandable, false };
  return 0;
}

static int
add_blk (Ctx *c, uint64_t addr, uint64_t req, uint32_t stream, uint32_t stack, MlPkValue *frames, uint64_t origin)
{
  if (grow ((void **) &c->blks, &c->cap_blks, c->n_blks + 1, sizeof *c->blks) < 0)
    return oom (c);
  c->blks[c->n_blks] = (Blk) { addr, req, origin, stream, stack, frames, false, false };
  if (ml_u64map_put (&c->live, addr, (uint32_t) c->n_blks) < 0)
    return oom (c);
  c->n_blks++;
  return 0;
}

#define SMALL_BUFFER ((uint64_t) 2 << 20)   /* kSmallBuffer: a small-pool segment, an expandable small page */
#define LARGE_BUFFER ((uint64_t) 20 << 20)  /* kLargeBuffer: an expandable large page */

/* Pages of an expandable segment come in its pool's page size: a range
 * that is a whole number of 20 MiB pages is taken for the large pool (a
 * small-pool map is one 2 MiB page; an unmap of ten small pages would be
 * misnamed, the bytes stay right). */
static bool
is_large_pages (uint64_t size)
{
  return size % LARGE_BUFFER == 0;
}

static Seg *
find_seg (Ctx *c, uint64_t addr)
{
  for (size_t k = c->n_segs; k-- > 0;)
    if (!c->segs[k].gone && addr >= c->segs[k].addr && addr < c->segs[k].addr + c->segs[k].size)
      return &c->segs[k];
  return NULL;
}

static int
cmp_blk (const void *a, const void *b)
{
  const Blk *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

typedef struct Ann {
  uint64_t time;
  uint32_t name;
} Ann;

static int
cmp_ann (const void *a, const void *b)
{
  const Ann *x = a, *y = b;
  return x->time < y->time ? -1 : x->time > y->time;
}

static int
action_kind (const char *a, MlEventKind *k)
{
  static const struct { const char *name; MlEventKind kind; } map[] = {
    { "alloc", ML_EV_ALLOC }, { "free_requested", ML_EV_FREE_REQUESTED }, { "free_completed", ML_EV_FREE },
    { "segment_alloc", ML_EV_SEGMENT_ALLOC }, { "segment_free", ML_EV_SEGMENT_FREE },
    { "segment_map", ML_EV_SEGMENT_MAP }, { "segment_unmap", ML_EV_SEGMENT_UNMAP },
    { "oom", ML_EV_OOM }, { "snapshot", ML_EV_SNAPSHOT }, { "annotate", ML_EV_MARK },
    { "user_defined", ML_EV_MARK },
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (a && strcmp (a, map[i].name) == 0)
      {
        *k = map[i].kind;
        return 0;
      }
  return -1;
}

/* The kind of an action string, cached in its tag (the action strings
 * are memo-shared: one object per distinct action). */
static int
action_of (const MlPkValue *cv, MlEventKind *k)
{
  if (!cv || cv->kind != ML_PK_STR || strlen (cv->s) != cv->len)
    return -1;   /* "alloc\0x" is no action */
  MlPkValue *v = (MlPkValue *) cv;
  bool cached = (v->tag & TAG_ROLE) == TAG_KEY;
  if (cached && (v->tag & 0xff))
    {
      if ((v->tag & 0xff) == 1)
        return -1;
      *k = (MlEventKind) ((v->tag & 0xff) - 2);
      return 0;
    }
  int rc = action_kind (v->s, k);
  if (cached || !v->tag)
    v->tag = TAG_KEY | (v->tag & 0xff00) | (rc < 0 ? 1u : (uint32_t) *k + 2);
  return rc;
}

/* Where an event came from (MlTrace.event_origin), in the file's own
 * terms: the type in the top two bits. */
#define ORG_ENTRY   (UINT64_C (1) << 62)   /* device_traces[device][index]: the action (MlEventKind) in bits 56..61 */
#define ORG_SEGMENT (2ull << 62)   /* segments[k] */
#define ORG_BLOCK   (3ull << 62)   /* segments[k]["blocks"][b]: k in bits 32..61, b below */
#define ORG_INDEX   ((UINT64_C (1) << 56) - 1)

static uint64_t
org_entry (uint64_t index, MlEventKind action)
{
  return index <= ORG_INDEX ? ORG_ENTRY | (uint64_t) action << 56 | index : 0;
}

static uint64_t
org_block (size_t k, size_t b)
{
  if (k >= (UINT64_C (1) << 30) || b > UINT32_MAX)
    return 0;
  return b == SIZE_MAX ? ORG_SEGMENT | k : ORG_BLOCK | (uint64_t) k << 32 | b;
}

static const char *
action_name (MlEventKind k)
{
  switch (k)
    {
    case ML_EV_ALLOC: return "alloc";
    case ML_EV_FREE: return "free_completed";
    case ML_EV_FREE_REQUESTED: return "free_requested";
    case ML_EV_SEGMENT_ALLOC: return "segment_alloc";
    case ML_EV_SEGMENT_FREE: return "segment_free";
    case ML_EV_SEGMENT_MAP: return "segment_map";
    case ML_EV_SEGMENT_UNMAP: return "segment_unmap";
    case ML_EV_OOM: return "oom";
    case ML_EV_SNAPSHOT: return "snapshot";
    case ML_EV_MARK: return "annotate";
    default: return "?";
    }
}

/* MlTrace.origin_text of a snapshot: "device_traces[0][17] (alloc at
 * 0x7f0000000000)", "segments[2][\"blocks\"][5] (at 0x...)"; a block
 * live before the trace is named by the entry that frees it. */
static const char *
origin_text (const MlTrace *t, size_t i, uint64_t o, char *buf, size_t len)
{
  const MlEvent *ev = &t->events[i];
  MlEventKind action = (MlEventKind) ((o >> 56) & 63);
  switch (o >> 62)
    {
    case 1:
      if (ev->kind == ML_EV_ALLOC && action != ML_EV_ALLOC)
        snprintf (buf, len, "the block at 0x%" PRIx64 " from before the trace, freed by device_traces[%" PRIu32 "][%" PRIu64 "] (%s)",
                  ev->addr, t->device, o & ORG_INDEX, action_name (action));
      else
        snprintf (buf, len, "device_traces[%" PRIu32 "][%" PRIu64 "] (%s at 0x%" PRIx64 ")", t->device, o & ORG_INDEX,
                  action_name (action), ev->addr);
      break;
    case 2:
      snprintf (buf, len, "segments[%" PRIu64 "] (at 0x%" PRIx64 ")", o & ((UINT64_C (1) << 32) - 1), ev->addr);
      break;
    default:
      snprintf (buf, len, "segments[%" PRIu64 "][\"blocks\"][%" PRIu64 "] (at 0x%" PRIx64 ")", (o >> 32) & ((UINT64_C (1) << 30) - 1),
                o & ((UINT64_C (1) << 32) - 1), ev->addr);
      break;
    }
  return buf;
}

/* ---- step 0: each device trace entry, as the pickle streams it ---- */

static int
read_entry (Ctx *c, const MlPkValue *e, Ent *out, MlPkValue **frames)
{
  *frames = NULL;
  *out = (Ent) { .time_us = -1 };
  if (e->kind != ML_PK_DICT)
    {
      out->bad = ENT_NOT_DICT;
      out->name = e->kind;
      return 0;
    }
  const MlPkValue *f[K__COUNT];
  fields (e, f);
  MlEventKind kind;
  const char *action = f[K_ACTION] && f[K_ACTION]->kind == ML_PK_STR ? f[K_ACTION]->s : NULL;
  if (action_of (f[K_ACTION], &kind) < 0)
    {
      out->bad = ENT_BAD_ACTION;
      return action ? intern (c, action, &out->name) : 0;
    }
  out->kind = (uint8_t) kind;
  uint64_t stream = 0, time_us = UINT64_MAX, device_free = 0;
  uint64_t *outs[] = { &out->addr, &out->size, &stream, &time_us, &device_free };
  for (size_t k = 0; k < sizeof entry_fields / sizeof entry_fields[0]; k++)
    if (!ml_pk_uint (f[entry_fields[k].key], entry_fields[k].max, outs[k]))
      {
        /* told when (and if) the device's trace is walked */
        char said[96];
        out->bad = ENT_BAD_FIELD;
        out->kind = (uint8_t) k;
        return intern (c, ml_pk_describe (f[entry_fields[k].key], said, sizeof said), &out->name);
      }
  out->stream = (uint32_t) stream;
  if (time_us != UINT64_MAX)
    out->time_us = (int64_t) time_us;
  *frames = (MlPkValue *) f[K_FRAMES];
  if (kind == ML_EV_OOM)
    out->addr = device_free;
  else if (kind == ML_EV_MARK)
    {
      const char *text = f[K_NAME] && f[K_NAME]->kind == ML_PK_STR ? f[K_NAME]->s : NULL;
      if (!text && f[K_USER_METADATA] && f[K_USER_METADATA]->kind == ML_PK_STR)
        text = f[K_USER_METADATA]->s;
      return intern (c, text ? text : action, &out->name);
    }
  return 0;
}

static int
add_entry (Ctx *c, size_t list, MlPkValue *e)
{
  if (list >= ((size_t) 1 << 20))
    return ml_error_set (c->err, ML_EINPUT, "%s: device_traces has more than 2^20 devices", c->path);
  if (list >= c->n_dt)
    {
      DevTrace *dt = realloc (c->dt, (list + 1) * sizeof *dt);
      if (!dt)
        return oom (c);
      memset (dt + c->n_dt, 0, (list + 1 - c->n_dt) * sizeof *dt);
      c->dt = dt;
      c->n_dt = list + 1;
    }
  DevTrace *d = &c->dt[list];
  if (d->n_all == 0)
    {
      d->origin_us = d->last_us = d->start_us = -1;
      ml_u64map_init (&d->pb_by_addr);
      d->where = c->range.set ? W_BEFORE : W_IN;
    }
  Ent ent;
  MlPkValue *frames;
  int rc = read_entry (c, e, &ent, &frames);
  if (rc < 0)
    return rc;
  uint64_t index = d->n_all++;
  if (!ent.bad)
    {
      /* the device table's counts, from every entry */
      d->actions[ent.kind]++;
      bool over = false;
      if (ent.kind == ML_EV_SEGMENT_ALLOC || ent.kind == ML_EV_SEGMENT_MAP)
        over = __builtin_add_overflow (d->net, (int64_t) ent.size, &d->net);
      else if (ent.kind == ML_EV_SEGMENT_FREE || ent.kind == ML_EV_SEGMENT_UNMAP)
        over = __builtin_sub_overflow (d->net, (int64_t) ent.size, &d->net);
      if (over)
        return reserved_overflow (c, list, index, ent.size);
      if (ent.kind == ML_EV_OOM)
        {
          if (grow ((void **) &d->ooms, &d->cap_ooms, d->n_ooms + 1, sizeof *d->ooms) < 0)
            return oom (c);
          d->ooms[d->n_ooms++] = (OomAt) { index, ent.size, ent.addr, d->net };
        }
      if (d->net > d->max_net)
        d->max_net = d->net;
    }
  if (d->where != W_IN || c->range.set)
    {
      /* where the entry falls: ticks are entry index + 1; times count
       * from the trace's first, an entry without one at the last seen */
      if (ent.time_us >= 0)
        {
          if (d->origin_us < 0)
            d->origin_us = ent.time_us;
          if (ent.time_us > d->last_us)
            d->last_us = ent.time_us;
        }
      uint64_t at = index + 1;
      if (c->range.times)
        at = d->last_us >= 0 ? (uint64_t) (d->last_us - d->origin_us) * 1000 : 0;
      if (d->where == W_BEFORE && at >= c->range.from)
        d->where = W_IN, d->first = index;
      if (d->where == W_IN && at > c->range.to)
        d->where = W_AFTER;
      if (d->where == W_BEFORE)
        d->start_us = d->last_us;
    }
  if (d->where != W_IN && ent.bad)
    {
      if (!d->has_bad)
        d->has_bad = true, d->bad = ent, d->bad_index = index;
      return 0;
    }
  /* every frames list is read, in the window or not: one the reader has
   * tagged stays in the document as a stub, not with its items (torch's
   * free_requested and free_completed share one) */
  if (!ent.bad && (rc = stack_of (c, frames, &ent.stack)) < 0)
    return rc;
  if (d->where == W_BEFORE)
    return 0;
  if (d->where == W_AFTER)
    {
      MlEventKind k = ent.kind;
      if (k == ML_EV_SEGMENT_ALLOC || k == ML_EV_SEGMENT_FREE || k == ML_EV_SEGMENT_MAP || k == ML_EV_SEGMENT_UNMAP)
        {
          if (grow ((void **) &d->post, &d->cap_post, d->n_post + 1, sizeof *d->post) < 0)
            return oom (c);
          d->post[d->n_post++] = ent;
          return 0;
        }
      if (k != ML_EV_ALLOC && k != ML_EV_FREE)
        return 0;
      uint32_t idx;
      Post *p = ml_u64map_get (&d->pb_by_addr, ent.addr, &idx) ? &d->pb[idx] : NULL;
      if (p && p->state != P_FREES)
        return 0;
      if (p && k == ML_EV_ALLOC)
        {
          p->state = P_FROZEN;
          return 0;
        }
      if (!p)
        {
          if (grow ((void **) &d->pb, &d->cap_pb, d->n_pb + 1, sizeof *d->pb) < 0
              || ml_u64map_put (&d->pb_by_addr, ent.addr, (uint32_t) d->n_pb) < 0)
            return oom (c);
          p = &d->pb[d->n_pb++];
          *p = (Post) { .addr = ent.addr, .state = k == ML_EV_ALLOC ? P_ALLOC : P_FREES };
          if (k == ML_EV_ALLOC)
            return 0;
        }
      p->size = ent.size;
      p->stream = ent.stream;
      p->stack = ent.stack;
      p->origin = org_entry (index, ent.kind);
      return 0;
    }
  if (grow ((void **) &d->e, &d->cap, d->n + 1, sizeof *d->e) < 0)
    return oom (c);
  d->e[d->n++] = ent;
  return 0;
}

/* The pickle's item callback: entry @index of device @list (items come
 * in order: @index is the count so far). */
static int
on_entry (void *user, size_t list, size_t index, MlPkValue *e)
{
  Ctx *c = user;
  (void) index;
  int rc = add_entry (c, list, e);
  if (rc < 0)
    c->entry_failed = true;
  return rc;
}

/* ---- step 1: every device the file holds, and which one to read ---- */


/* The device table (MlDeviceInfo, MlDeviceOom): counts from the raw
 * entries of every device's trace, reserved bytes from the segments. */
static int
summarize_devices (Ctx *c, const MlPkValue *segments, const MlPkValue *traces)
{
  size_t n_dev = traces ? traces->n : 0;
  if (c->n_dt > n_dev)
    n_dev = c->n_dt;
  for (size_t k = 0; k < segments->n; k++)
    {
      int64_t d = dev_of (segments->items[k]);
      int rc = check_device (c, segments->items[k], "segment", k);
      if (rc < 0)
        return rc;
      if (d < 0 || d > MAX_DEVICE)
        return ml_error_set (c->err, ML_EINPUT, "%s: segment %zu: device %" PRId64 " is not a device number (0 .. %d)",
                             c->path, k, d, MAX_DEVICE);
      if ((size_t) d + 1 > n_dev)
        n_dev = (size_t) d + 1;
    }
  if (!n_dev)
    return 0;
  MlTrace *t = c->t;
  t->devices = calloc (n_dev, sizeof *t->devices);
  if (!t->devices)
    return oom (c);
  t->n_devices = n_dev;
  for (size_t d = 0; d < n_dev; d++)
    t->devices[d].device = (uint32_t) d;
  for (size_t k = 0; k < segments->n; k++)
    {
      MlDeviceInfo *di = &t->devices[dev_of (segments->items[k])];
      uint64_t size = 0;
      ml_pk_get_u64 (segments->items[k], "total_size", &size);
      di->segments++;
      if (__builtin_add_overflow (di->segment_bytes, size, &di->segment_bytes) || di->segment_bytes > (uint64_t) INT64_MAX)
        return ml_error_set (c->err, ML_EINPUT, "%s: segment %zu: device %u's segments add up past 2^63 bytes (total_size %" PRIu64 ")",
                             c->path, k, di->device, size);
    }
  size_t n_ooms = 0;
  for (size_t d = 0; d < c->n_dt; d++)
    n_ooms += c->dt[d].n_ooms;
  if (n_ooms && !(t->device_ooms = calloc (n_ooms, sizeof *t->device_ooms)))
    return oom (c);
  for (size_t d = 0; d < n_dev; d++)
    {
      MlDeviceInfo *di = &t->devices[d];
      di->reserved_end = di->segment_bytes;
      const DevTrace *dt = d < c->n_dt ? &c->dt[d] : NULL;
      if (!dt)
        {
          di->reserved_start = di->reserved_max = di->reserved_end;
          continue;
        }
      di->entries = dt->n_all;
      memcpy (di->actions, dt->actions, sizeof di->actions);
      /* net segment bytes over the trace, then forward from the start */
      int64_t cur, max;
      if (__builtin_sub_overflow ((int64_t) di->reserved_end, dt->net, &cur))
        return reserved_overflow (c, d, dt->n_all - 1, di->reserved_end);
      if (cur < 0)
        cur = 0;   /* the trace lost entries: it freed more than it shows */
      di->reserved_start = (uint64_t) cur;
      if (__builtin_add_overflow (cur, dt->max_net, &max))
        return reserved_overflow (c, d, dt->n_all - 1, (uint64_t) dt->max_net);
      for (size_t k = 0; k < dt->n_ooms; k++)
        {
          const OomAt *o = &dt->ooms[k];
          int64_t r;
          if (__builtin_add_overflow (cur, o->prefix, &r))
            return reserved_overflow (c, d, o->index, (uint64_t) o->prefix);
          t->device_ooms[t->n_device_ooms++] = (MlDeviceOom) {
            .device = (uint32_t) d, .index = o->index, .request = o->request,
            .device_free = o->device_free, .reserved = r > 0 ? (uint64_t) r : 0 };
        }
      di->reserved_max = (uint64_t) max;
      di->ooms = di->actions[ML_EV_OOM];
    }
  return 0;
}

/* The default device: the one with a recorded OOM, else the longest
 * trace, else the most segment bytes; the reason is kept for the caller
 * to show when the file holds more than one device. */
static int
pick_device (Ctx *c, const MlPkValue *segments, const MlPkValue *traces, const MlLoadOptions *opts, int64_t *out)
{
  const MlTrace *t = c->t;
  int64_t dev = opts->device;
  if (dev >= 0)
    {
      size_t n_dev_traces = traces ? traces->n : 0;
      bool known = (size_t) dev < n_dev_traces || (size_t) dev < c->n_dt;
      for (size_t k = 0; k < segments->n && !known; k++)
        known = dev_of (segments->items[k]) == dev;
      if (!known)
        return ml_error_set (c->err, ML_EINPUT, "%s: device %" PRId64 " has no segments and no trace (the file holds %zu device%s)",
                             c->path, dev, t->n_devices, t->n_devices == 1 ? "" : "s");
      *out = dev;
      return 0;
    }
  const MlDeviceInfo *best = NULL;
  const char *why = NULL;
  for (size_t d = 0; d < t->n_devices && !best; d++)
    if (t->devices[d].ooms)
      best = &t->devices[d], why = "it recorded an OOM";
  for (size_t d = 0; d < t->n_devices && !why; d++)
    if (t->devices[d].entries && (!best || t->devices[d].entries > best->entries))
      best = &t->devices[d];
  if (best && !why)
    why = "the longest trace";
  for (size_t d = 0; d < t->n_devices && !why; d++)
    if (!best || t->devices[d].segment_bytes > best->segment_bytes)
      best = &t->devices[d];
  if (best && !why)
    why = "no trace; the most segment bytes";
  *out = best ? best->device : 0;
  if (best && t->n_devices > 1)
    {
      char text[256];
      snprintf (text, sizeof text, "reading device %u of %zu: %s (%" PRIu64 " trace entries); --device N reads another",
                best->device, t->n_devices, why, best->entries);
      return intern (c, text, &c->t->device_reason);
    }
  return 0;
}

/* ---- step 2: the segments and live blocks at dump time ---- */

static int
read_segments (Ctx *c, const MlPkValue *segments)
{
  /* the live map takes every block of the device: one allocation */
  size_t n_blocks = 0;
  for (size_t k = 0; k < segments->n; k++)
    if (segments->items[k]->kind == ML_PK_DICT && dev_of (segments->items[k]) == c->dev)
      n_blocks += ml_pk_len (ml_pk_get (segments->items[k], "blocks"));
  if (ml_u64map_reserve (&c->live, n_blocks) < 0)
    return oom (c);
  for (size_t k = 0; k < segments->n; k++)
    {
      const MlPkValue *s = segments->items[k];
      if (s->kind != ML_PK_DICT)
        return ml_error_set (c->err, ML_EINPUT, "%s: segment %zu is a %s, not a dict", c->path, k, ml_pk_kind_name (s->kind));
      if (dev_of (s) != c->dev)
        continue;
      uint64_t addr = 0, size = 0, stream = 0;
      Where where = { "segment", k, SIZE_MAX };
      int rc;
      if ((rc = uint_field (c, s, "address", UINT_MAX_FIELD, true, &addr, where)) < 0
          || (rc = uint_field (c, s, "total_size", UINT_MAX_FIELD, true, &size, where)) < 0
          || (rc = uint_field (c, s, "stream", UINT_MAX_FIELD, false, &stream, where)) < 0)
        return rc;
      const char *type = ml_pk_get_str (s, "segment_type");
      int64_t expandable = 0;
      ml_pk_get_int (s, "is_expandable", &expandable);
      bool small = type ? strcmp (type, "small") == 0 : size == SMALL_BUFFER;
      rc = add_seg (c, addr, size, (uint32_t) stream, small, expandable != 0, org_block (k, SIZE_MAX));
      if (rc < 0)
        return rc;
      /* blocks tile the segment in address order: a block without
       * "address" (PyTorch 1.13 / 2.0) starts where the one before ended;
       * its requested size and stack are the last of its "history" */
      const MlPkValue *blocks = as_list (ml_pk_get (s, "blocks"));
      uint64_t at = addr;
      for (size_t b = 0; blocks && b < blocks->n; b++)
        {
          const MlPkValue *bl = blocks->items[b], *f[K__COUNT];
          fields (bl, f);   /* one pass, keys by their tag */
          const char *state = f[K_STATE] && f[K_STATE]->kind == ML_PK_STR ? f[K_STATE]->s : NULL;
          uint64_t baddr = UINT64_MAX, bsize = 0, req = UINT64_MAX;
          where.b = b;
          if (bl->kind != ML_PK_DICT)
            return ml_error_set (c->err, ML_EINPUT, "%s: segment %zu block %zu is a %s, not a dict", c->path, k, b,
                                 ml_pk_kind_name (bl->kind));
          if ((rc = uint_value (c, f[K_SIZE], "size", UINT_MAX_FIELD, true, &bsize, where)) < 0
              || (rc = uint_value (c, f[K_ADDRESS], "address", UINT_MAX_FIELD, false, &baddr, where)) < 0)
            return rc;
          if (baddr == UINT64_MAX)
            baddr = at;
          at = baddr + bsize;
          if (!state || strncmp (state, "active", 6) != 0)
            continue;
          const MlPkValue *hist = as_list (f[K_HISTORY]);
          const MlPkValue *last = hist && hist->n && hist->items[hist->n - 1]->kind == ML_PK_DICT
                                  ? hist->items[hist->n - 1] : NULL;
          const MlPkValue *frames = f[K_FRAMES];
          if ((rc = uint_value (c, f[K_REQUESTED_SIZE], "requested_size", UINT_MAX_FIELD, false, &req, where)) < 0)
            return rc;
          if (last && (!frames || req == UINT64_MAX))
            {
              const MlPkValue *lf[K__COUNT];
              fields (last, lf);
              if (!frames)
                frames = lf[K_FRAMES];
              int64_t rs;
              if (req == UINT64_MAX && int_of (lf[K_REAL_SIZE], &rs) && rs >= 0)
                req = (uint64_t) rs;
            }
          if (req == UINT64_MAX)
            req = bsize;
          if ((rc = add_blk (c, baddr, req, (uint32_t) stream, 0, (MlPkValue *) frames, org_block (k, b))) < 0)
            return rc;
        }
    }
  return 0;
}

/* Segments of one device, and blocks of one segment, must not overlap:
 * memory the allocator holds twice is a broken snapshot (or one glued
 * from two processes). The read goes on, with a warning that names the
 * first overlapping pair and how many there are. */
typedef struct {
  uint64_t addr, size;
  size_t   k;
} Span;

static int
cmp_span (const void *a, const void *b)
{
  const Span *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int
check_overlaps (Ctx *c, const MlPkValue *segments)
{
  Span *sp = malloc ((segments->n ? segments->n : 1) * sizeof *sp);
  if (!sp)
    return oom (c);
  size_t n = 0, seg_pairs = 0, blk_pairs = 0;
  char first_blk[200] = "";
  for (size_t k = 0; k < segments->n; k++)
    {
      const MlPkValue *s = segments->items[k];
      uint64_t addr, size;
      if (dev_of (s) != c->dev || !ml_pk_get_u64 (s, "address", &addr) || !ml_pk_get_u64 (s, "total_size", &size))
        continue;
      sp[n++] = (Span) { addr, size, k };
      /* blocks in the order the segment lists them (address order) */
      const MlPkValue *blocks = as_list (ml_pk_get (s, "blocks"));
      uint64_t at = addr, prev_end = addr, baddr, bsize;
      for (size_t b = 0; blocks && b < blocks->n; b++)
        {
          const MlPkValue *bl = blocks->items[b];
          if (!ml_pk_get_u64 (bl, "size", &bsize))
            continue;
          if (!ml_pk_get_u64 (bl, "address", &baddr))
            baddr = at;
          at = baddr + bsize;
          if (b > 0 && baddr < prev_end)
            {
              if (!blk_pairs++)
                snprintf (first_blk, sizeof first_blk, "segment %zu: block %zu at 0x%" PRIx64 " starts before block %zu ends at 0x%" PRIx64,
                          k, b, baddr, b - 1, prev_end);
            }
          if (at > prev_end)
            prev_end = at;
        }
    }
  qsort (sp, n, sizeof *sp, cmp_span);
  char first_seg[200] = "";
  uint64_t end = 0;
  size_t end_k = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (i > 0 && sp[i].addr < end)
        {
          if (!seg_pairs++)
            snprintf (first_seg, sizeof first_seg, "segment %zu [0x%" PRIx64 ", +%" PRIu64 ") overlaps segment %zu, which ends at 0x%" PRIx64,
                      sp[i].k, sp[i].addr, sp[i].size, end_k, end);
        }
      uint64_t e = sp[i].addr + sp[i].size < sp[i].addr ? UINT64_MAX : sp[i].addr + sp[i].size;
      if (i == 0 || e > end)
        {
          end = e;
          end_k = sp[i].k;
        }
    }
  free (sp);
  char note[320];
  if (seg_pairs)
    {
      snprintf (note, sizeof note, "%s (%zu overlapping segment%s in all; the segments hold some bytes twice)", first_seg, seg_pairs,
                seg_pairs == 1 ? "" : "s");
      if (ml_trace_add_note (c->t, note) < 0)
        return oom (c);
    }
  if (blk_pairs)
    {
      snprintf (note, sizeof note, "%s (%zu overlapping block%s in all)", first_blk, blk_pairs, blk_pairs == 1 ? "" : "s");
      if (ml_trace_add_note (c->t, note) < 0)
        return oom (c);
    }
  return 0;
}

/* Expandable segments are kept as their mapped ranges, as the snapshot
 * lists them (one segment per contiguous mapped range). Undoing a
 * segment_map takes its pages out of the range that holds them (which may
 * split it in two); undoing a segment_unmap puts them back, joined to the
 * ranges they touch. */
static int
range_cut (Ctx *c, uint64_t addr, uint64_t size)
{
  Seg *g = find_seg (c, addr);
  if (!g || !g->expandable)
    return 0;
  uint64_t end = addr + size, g_end = g->addr + g->size;
  if (end > g_end)
    end = g_end;
  Seg right = *g;
  right.addr = end;
  right.size = g_end - end;
  if (addr > g->addr)
    g->size = addr - g->addr;
  else
    g->gone = true;
  if (right.size)
    return add_seg (c, right.addr, right.size, right.stream, right.small, true, right.origin);
  return 0;
}

static int
range_add (Ctx *c, uint64_t addr, uint64_t size, uint32_t stream, uint64_t origin)
{
  Seg *below = addr ? find_seg (c, addr - 1) : NULL, *above = find_seg (c, addr + size);
  if (below && (!below->expandable || below->addr + below->size != addr))
    below = NULL;
  if (above && (!above->expandable || above->addr != addr + size))
    above = NULL;
  if (below)
    {
      below->size += size;
      if (above)
        {
          below->size += above->size;
          above->gone = true;
        }
      return 0;
    }
  if (above)
    {
      above->addr = addr;
      above->size += size;
      return 0;
    }
  return add_seg (c, addr, size, stream, !is_large_pages (size), true, origin);
}

/* ---- step 3: the state at the trace's first entry, by undoing the
 * trace backwards from the dump-time state; one entry per call, last
 * entry first ---- */

static int
undo_entry (Ctx *c, const Ent *e, uint64_t origin)
{
  if (e->bad)
    return 0;
  MlEventKind kind = e->kind;
  uint64_t addr = e->addr, size = e->size;
  uint32_t stream = e->stream;
  uint32_t idx;
  int rc = 0;
  switch (kind)
    {
    case ML_EV_ALLOC:
      if (ml_u64map_get (&c->live, addr, &idx))
        {
          c->blks[idx].gone = true;
          ml_u64map_del (&c->live, addr);
        }
      break;
    case ML_EV_FREE:
      if (!ml_u64map_get (&c->live, addr, &idx))
        {
          rc = add_blk (c, addr, size, stream, e->stack, NULL, origin);
          if (rc == 0)
            c->blks[c->n_blks - 1].freed_frames = true;
        }
      break;
    case ML_EV_SEGMENT_ALLOC:
      {
        Seg *g = find_seg (c, addr);
        if (g && g->addr == addr)
          g->gone = true;
      }
      break;
    case ML_EV_SEGMENT_MAP:
      rc = range_cut (c, addr, size);
      break;
    case ML_EV_SEGMENT_FREE:
      rc = add_seg (c, addr, size, (uint32_t) stream, size == SMALL_BUFFER, false, origin);
      break;
    case ML_EV_SEGMENT_UNMAP:
      rc = range_add (c, addr, size, (uint32_t) stream, origin);
      break;
    default:
      break;
    }
  return rc;
}

/* ---- step 4: tick 0, the allocator settings as a mark (the caching
 * emulation's defaults), the segments, then the live blocks by address ---- */

static int
emit_settings (Ctx *c, const MlPkValue *settings)
{
  if (!settings || settings->kind != ML_PK_DICT)
    return 0;
  char text[256];
  int64_t max_split = -1, expandable = 0, div = 0;
  ml_pk_get_int (settings, "max_split_size", &max_split);
  ml_pk_get_int (settings, "expandable_segments", &expandable);
  const MlPkValue *rp = ml_pk_get (settings, "roundup_power2_divisions");
  bool mixed = false;
  if (rp && (rp->kind == ML_PK_INT))
    div = rp->i;
  else if (rp && rp->kind == ML_PK_DICT)
    for (size_t k = 1; k < rp->n; k += 2)
      if (rp->items[k]->kind == ML_PK_INT)
        {
          if (k > 1 && rp->items[k]->i != div)
            mixed = true;
          div = rp->items[k]->i > div ? rp->items[k]->i : div;
        }
  /* max_split_size as the file has it: bytes; -1 (SIZE_MAX as a signed
   * integer) or absent is PyTorch's default, unlimited */
  char split[32];
  if (max_split > 0)
    snprintf (split, sizeof split, "%" PRId64, max_split >> 20);
  else
    snprintf (split, sizeof split, "unlimited");
  snprintf (text, sizeof text, "allocator settings: max_split_size_mb=%s,expandable_segments=%d,roundup_power2_divisions=%" PRId64 "%s",
            split, expandable != 0, div, mixed ? " (per size range in the file; the largest)" : "");
  uint32_t name = 0;
  int rc;
  if ((rc = intern (c, text, &name)) < 0)
    return rc;
  return emit (c, ML_EV_MARK, c->tick, 0, 0, 0, 0, -1, name, 0, 0, 0);
}

static int
emit_start_state (Ctx *c)
{
  int rc;
  if ((rc = intern (c, "small", &c->small_name)) < 0 || (rc = intern (c, "large", &c->large_name)) < 0)
    return rc;
  for (size_t k = 0; k < c->n_segs; k++)
    {
      const Seg *g = &c->segs[k];
      if (g->gone || !g->size)
        continue;
      if ((rc = emit (c, g->expandable ? ML_EV_SEGMENT_MAP : ML_EV_SEGMENT_ALLOC, c->tick, c->seg_id++, g->addr, g->size,
                      g->stream, -1, g->small ? c->small_name : c->large_name, 0, ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, g->origin)) < 0)
        return rc;
    }
  size_t n_live = 0;
  for (size_t k = 0; k < c->n_blks; k++)
    if (!c->blks[k].gone)
      c->blks[n_live++] = c->blks[k];
  /* by address; torch lists segments and their blocks in address order,
   * so usually they are already */
  bool sorted = true;
  for (size_t k = 1; k < n_live && sorted; k++)
    sorted = c->blks[k - 1].addr <= c->blks[k].addr;
  if (!sorted)
    qsort (c->blks, n_live, sizeof *c->blks, cmp_blk);
  ml_u64map_clear (&c->live);
  ml_u64map_init (&c->live);
  if (ml_u64map_reserve (&c->live, n_live) < 0)
    return oom (c);
  c->next_id = 1;
  /* a window that starts after the trace's first entry carries these in */
  uint16_t clipped = c->tick ? ML_EVF_CLIPPED : 0;
  for (size_t k = 0; k < n_live; k++)
    {
      const Blk *b = &c->blks[k];
      uint32_t st = b->stack;
      if ((b->frames && (rc = stack_of (c, b->frames, &st)) < 0)
          || (b->freed_frames && (rc = stack_at_free (c, st, &st)) < 0)
          || (rc = emit (c, ML_EV_ALLOC, c->tick, c->next_id, b->addr, b->req, b->stream, -1, 0, st,
                         ML_EVF_HAS_ID | ML_EVF_HAS_ADDR | clipped, b->origin)) < 0)
        return rc;
      if (ml_u64map_put (&c->live, b->addr, (uint32_t) c->next_id) < 0)
        return oom (c);
      if (c->next_id++ >= UINT32_MAX - 1)
        return ml_error_set (c->err, ML_EINPUT, "%s: more than 2^32 blocks", c->path);
    }
  return 0;
}

/* ---- step 5: the external annotations of this device, by time ---- */

static int
read_annotations (Ctx *c, const MlPkValue *annotations)
{
  if (!annotations || !annotations->n)
    return 0;
  c->anns = calloc (annotations->n, sizeof *c->anns);
  if (!c->anns)
    return oom (c);
  for (size_t k = 0; k < annotations->n; k++)
    {
      const MlPkValue *a = annotations->items[k];
      uint64_t time = UINT64_MAX;
      int64_t d = c->dev;
      int rc = check_device (c, a, "external annotation", k);
      if (rc < 0)
        return rc;
      ml_pk_get_int (a, "device", &d);
      const char *name = ml_pk_get_str (a, "name"), *stage = ml_pk_get_str (a, "stage");
      if (!name || d != c->dev)
        continue;
      rc = uint_field (c, a, "time_us", TIME_US_MAX, false, &time, (Where) { "external annotation", k, SIZE_MAX });
      if (rc < 0)
        return rc;
      if (time == UINT64_MAX)
        continue;   /* no time: nowhere to put it */
      /* "name stage", the stage lowercased ("START" -> "start") */
      size_t nl = strlen (name), sl = stage ? strlen (stage) : 0;
      char *text = malloc (nl + sl + 2);
      if (!text)
        return oom (c);
      memcpy (text, name, nl);
      text[nl] = 0;
      if (stage)
        {
          text[nl] = ' ';
          for (size_t j = 0; j <= sl; j++)
            text[nl + 1 + j] = (char) (stage[j] >= 'A' && stage[j] <= 'Z' ? stage[j] - 'A' + 'a' : stage[j]);
        }
      rc = intern (c, text, &c->anns[c->n_anns].name);
      free (text);
      if (rc < 0)
        return rc;
      c->anns[c->n_anns++].time = time;
    }
  qsort (c->anns, c->n_anns, sizeof *c->anns, cmp_ann);
  return 0;
}

/* Emits the annotations up to @time_us (all that are left when
 * @time_us is UINT64_MAX), one tick each. */
static int
emit_annotations_until (Ctx *c, uint64_t time_us)
{
  int rc = 0;
  while (rc == 0 && c->next_ann < c->n_anns && c->anns[c->next_ann].time <= time_us)
    {
      const Ann *a = &c->anns[c->next_ann++];
      rc = emit (c, ML_EV_MARK, ++c->tick, 0, 0, 0, 0, (int64_t) a->time * 1000, a->name, 0, 0, 0);
    }
  return rc;
}

/* ---- step 6: the trace, forward; entry @i per call, in order ---- */

static int
walk_entry (Ctx *c, size_t i, const Ent *e)
{
  if (e->bad == ENT_NOT_DICT)
    return ml_error_set (c->err, ML_EINPUT, "%s: device_traces[%" PRId64 "][%zu] is a %s, not a dict",
                         c->path, c->dev, i, ml_pk_kind_name ((MlPkKind) e->name));
  if (e->bad == ENT_BAD_ACTION)
    return ml_error_set (c->err, ML_EINPUT, "%s: device_traces[%" PRId64 "][%zu]: unknown action \"%s\"",
                         c->path, c->dev, i, e->name ? ml_trace_str (c->t, e->name) : "(none)");
  if (e->bad == ENT_BAD_FIELD)
    {
      char where[64];
      snprintf (where, sizeof where, "device_traces[%" PRId64 "][%zu]", c->dev, i);
      return bad_uint (c, where, entry_fields[e->kind].name, ml_trace_str (c->t, e->name), entry_fields[e->kind].max);
    }
  MlEventKind kind = e->kind;
  uint64_t addr = e->addr, size = e->size;
  uint32_t stream = e->stream;
  int64_t time_ns = -1;
  int rc = 0;
  if (e->time_us >= 0)
    {
      time_ns = e->time_us * 1000;
      if ((rc = emit_annotations_until (c, (uint64_t) e->time_us)) < 0)
        return rc;
    }
  uint64_t tick = ++c->tick, org = org_entry (i, kind);
  uint32_t st = e->stack, id;
  switch (kind)
    {
    case ML_EV_ALLOC:
      if (ml_u64map_get (&c->live, addr, &id))
        {
          /* allocated twice without a free in between: the trace lost an
           * entry; end the old buffer here so lifetimes stay valid (and
           * say so) */
          if (!c->n_realloc++)
            c->realloc_at = org, c->realloc_addr = addr;
          if ((rc = emit (c, ML_EV_FREE, tick, id, addr, 0, (uint32_t) stream, time_ns, 0, 0,
                          ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, org)) < 0)
            return rc;
        }
      if (ml_u64map_put (&c->live, addr, (uint32_t) c->next_id) < 0)
        return oom (c);
      return emit (c, kind, tick, c->next_id++, addr, size, (uint32_t) stream, time_ns, 0, st,
                   ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, org);
    case ML_EV_FREE:
    case ML_EV_FREE_REQUESTED:
      if (!ml_u64map_get (&c->live, addr, &id))
        {
          /* the rebuild made every block the trace frees live before it,
           * so the block was freed already, and no alloc came since: the
           * trace lost entries; nothing to end (and say so) */
          if (!c->n_refree++)
            c->refree_at = org, c->refree_addr = addr;
          return 0;
        }
      if (kind == ML_EV_FREE)
        ml_u64map_del (&c->live, addr);
      return emit (c, kind, tick, id, addr, size, (uint32_t) stream, time_ns, 0, st, ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, org);
    case ML_EV_OOM:
      return emit (c, kind, tick, 0, addr, size, (uint32_t) stream, time_ns, 0, st, 0, org);
    case ML_EV_MARK:
      return emit (c, kind, tick, 0, 0, 0, (uint32_t) stream, time_ns, e->name, st, 0, org);
    case ML_EV_SEGMENT_ALLOC:
    case ML_EV_SEGMENT_FREE:
      return emit (c, kind, tick, c->seg_id++, addr, size, (uint32_t) stream, time_ns,
                   size == SMALL_BUFFER ? c->small_name : c->large_name, st, ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, org);
    case ML_EV_SEGMENT_MAP:
    case ML_EV_SEGMENT_UNMAP:
      return emit (c, kind, tick, c->seg_id++, addr, size, (uint32_t) stream, time_ns,
                   is_large_pages (size) ? c->large_name : c->small_name, st, ML_EVF_HAS_ID | ML_EVF_HAS_ADDR, org);
    default:
      return emit (c, kind, tick, 0, addr, size, (uint32_t) stream, time_ns, 0, st, 0, org);
    }
}

/* The warnings for entries the walk read past (the CLI prints them). */
static int
note_lost_entries (Ctx *c)
{
  char note[512];
  if (c->n_refree)
    {
      snprintf (note, sizeof note, "device_traces[%" PRId64 "][%" PRIu64 "] (%s at 0x%" PRIx64 "): the block there is "
                "already free, with no alloc since its last free: the trace lost entries (recording stopped and "
                "started again, or a file glued together); the entry is ignored (%zu such entr%s in all)",
                c->dev, c->refree_at & ORG_INDEX, action_name ((MlEventKind) ((c->refree_at >> 56) & 63)),
                c->refree_addr, c->n_refree, c->n_refree == 1 ? "y" : "ies");
      if (ml_trace_add_note (c->t, note) < 0)
        return oom (c);
    }
  if (c->n_realloc)
    {
      snprintf (note, sizeof note, "device_traces[%" PRId64 "][%" PRIu64 "] (alloc at 0x%" PRIx64 "): the block there "
                "is still allocated, with no free since: the trace lost entries; the old block ends here (%zu such "
                "entr%s in all)", c->dev, c->realloc_at & ORG_INDEX, c->realloc_addr, c->n_realloc,
                c->n_realloc == 1 ? "y" : "ies");
      if (ml_trace_add_note (c->t, note) < 0)
        return oom (c);
    }
  return 0;
}

static void
dev_trace_free (DevTrace *d)
{
  free (d->e);
  free (d->ooms);
  free (d->post);
  free (d->pb);
  ml_u64map_clear (&d->pb_by_addr);
}

/* One end of --range as the user wrote it, near enough: a tick, or a
 * time in seconds. */
static void
range_text (const MlRange *r, uint64_t v, char *buf, size_t len)
{
  if (v == UINT64_MAX || (v == 0 && r == NULL))
    buf[0] = 0;
  else if (r->times)
    snprintf (buf, len, "%gs", (double) v / 1e9);
  else
    snprintf (buf, len, "%" PRIu64, v);
}

/* The steps, in order. */
static int
load (Ctx *c, const MlPkValue *root, const MlLoadOptions *opts)
{
  const MlPkValue *segments, *traces = NULL, *annotations = NULL, *settings = NULL;
  if (root->kind == ML_PK_LIST)
    segments = root;   /* legacy: a plain list of segments */
  else if (root->kind == ML_PK_DICT)
    {
      segments = as_list (ml_pk_get (root, "segments"));
      traces = as_list (ml_pk_get (root, "device_traces"));
      annotations = as_list (ml_pk_get (root, "external_annotations"));
      settings = ml_pk_get (root, "allocator_settings");
      if (!segments)
        return ml_error_set (c->err, ML_EINPUT, "%s: a PyTorch snapshot needs a \"segments\" list", c->path);
    }
  else
    return ml_error_set (c->err, ML_EINPUT, "%s: the pickle holds a %s, not a PyTorch memory snapshot (a dict or a list of segments)",
                         c->path, ml_pk_kind_name (root->kind));

  /* device lists the pickle did not stream (built whole: protocol 0/1) */
  int rc = 0;
  for (size_t d = 0; traces && d < traces->n; d++)
    {
      const MlPkValue *l = as_list (traces->items[d]);
      for (size_t k = 0; l && k < l->n; k++)
        if ((rc = on_entry (c, d, k, l->items[k])) < 0)
          return rc;
    }
  if ((rc = summarize_devices (c, segments, traces)) < 0 || (rc = pick_device (c, segments, traces, opts, &c->dev)) < 0)
    return rc;
  c->t->device = (uint32_t) c->dev;
  for (size_t d = 0; d < c->n_dt; d++)
    if ((int64_t) d != c->dev)
      {
        dev_trace_free (&c->dt[d]);
        c->dt[d] = (DevTrace) { 0 };
      }
  DevTrace *dt = (size_t) c->dev < c->n_dt ? &c->dt[c->dev] : NULL;
  const Ent *trace = dt ? dt->e : NULL;
  size_t n_trace = dt ? dt->n : 0;
  /* a bad entry outside the window is refused as in a whole load */
  if (dt && dt->has_bad && (rc = walk_entry (c, dt->bad_index, &dt->bad)) < 0)
    return rc;
  if (c->range.set && !n_trace && dt && dt->n_all)
    {
      char from[32], to[32];
      range_text (&c->range, c->range.from, from, sizeof from);
      range_text (&c->range, c->range.to, to, sizeof to);
      return ml_error_set (c->err, ML_EUSAGE, "%s: --range %s:%s holds no trace entry of device %" PRId64
                           " (%" PRIu64 " entries, ticks 1 .. %" PRIu64 "%s)", c->path, from, to, c->dev,
                           dt ? dt->n_all : 0, dt ? dt->n_all : 0,
                           !c->range.times ? "" : dt && dt->origin_us >= 0 ? ", times 0 .. the last" : ", no times recorded");
    }

  if ((rc = read_segments (c, segments)) < 0 || (rc = check_overlaps (c, segments)) < 0)
    return rc;
  /* back from the dump-time state: past the window's end (its segment
   * entries, each address's first entries), then through the window */
  bool cut_end = dt && c->range.set && dt->first + dt->n < dt->n_all;
  for (size_t i = dt ? dt->n_post : 0; i-- > 0;)
    if ((rc = undo_entry (c, &dt->post[i], 0)) < 0)
      return rc;
  for (size_t k = 0; dt && k < dt->n_pb; k++)
    {
      const Post *p = &dt->pb[k];
      uint32_t idx;
      bool live = ml_u64map_get (&c->live, p->addr, &idx);
      if (live && p->state != P_FREES)
        {
          c->blks[idx].gone = true;
          ml_u64map_del (&c->live, p->addr);
          live = false;
        }
      if (!live && p->state != P_ALLOC)
        {
          if ((rc = add_blk (c, p->addr, p->size, p->stream, p->stack, NULL, p->origin)) < 0)
            return rc;
          c->blks[c->n_blks - 1].freed_frames = true;
        }
    }
  for (size_t i = n_trace; i-- > 0;)
    if ((rc = undo_entry (c, &trace[i], org_entry (dt->first + i, trace[i].kind))) < 0)
      return rc;
  if ((rc = read_annotations (c, annotations)) < 0)
    return rc;
  if (dt && c->range.set && dt->first)
    {
      /* the state before the window sits at the tick of the entry before
       * it; the annotations before it count their ticks as in a whole load */
      c->tick = dt->first;
      while (c->next_ann < c->n_anns && dt->start_us >= 0 && c->anns[c->next_ann].time <= (uint64_t) dt->start_us)
        c->next_ann++, c->tick++;
    }
  c->t->windowed = c->range.set;
  c->t->window_first = c->tick;
  /* every event this load makes, in one allocation: the settings, the
   * segments and blocks at the start, an entry each (an alloc over a live
   * block makes two), the annotations, the frees after a window */
  size_t n_allocs = dt ? dt->actions[ML_EV_ALLOC] : 0;
  if (ml_trace_reserve (c->t, 1 + c->n_segs + c->n_blks + n_trace + (n_allocs < n_trace ? n_allocs : n_trace)
                                  + c->n_anns + (dt ? dt->n_pb : 0)) < 0)
    return oom (c);
  if ((rc = emit_settings (c, settings)) < 0 || (rc = emit_start_state (c)) < 0)
    return rc;
  for (size_t i = 0; i < n_trace; i++)
    if ((rc = walk_entry (c, (size_t) (dt->first + i), &trace[i])) < 0)
      return rc;
  c->t->window_last = c->tick;
  if ((rc = note_lost_entries (c)) < 0)
    return rc;
  if (!cut_end)
    return emit_annotations_until (c, UINT64_MAX);
  /* buffers live at the window's end that the trace frees later end
   * just after it */
  uint64_t tick = c->tick + 1;
  for (size_t k = 0; k < dt->n_pb; k++)
    {
      uint32_t id;
      if (ml_u64map_get (&c->live, dt->pb[k].addr, &id)
          && (rc = emit (c, ML_EV_FREE, tick, id, dt->pb[k].addr, 0, dt->pb[k].stream, -1, 0, 0,
                         ML_EVF_HAS_ID | ML_EVF_HAS_ADDR | ML_EVF_CLIPPED, 0)) < 0)
        return rc;
    }
  return 0;
}

/* Parse and map: the device traces stream into the steps' entries, the
 * rest (segments, settings, annotations) stays a document. */
static int
load_bytes (const unsigned char *data, size_t len, bool mapped, const char *name, const MlLoadOptions *opts,
            MlTrace **out, MlError *err)
{
  MlLoadOptions defaults;
  if (!opts)
    {
      ml_load_options_init (&defaults);
      opts = &defaults;
    }
  Ctx c = { .path = name, .err = err, .range = opts->range };
  ml_u64map_init (&c.by_content);
  ml_u64map_init (&c.by_ptrs);
  ml_u64map_init (&c.finfo_by_content);
  ml_u64map_init (&c.freed);
  ml_u64map_init (&c.live);
  MlPkDoc *doc = NULL;
  int rc = 0;
  c.t = ml_trace_new ();
  if (!c.t)
    rc = oom (&c);
  else
    {
      c.t->default_align = 512;
      c.t->has_addrs = true;
      c.t->source = ml_strtab_intern0 (c.t->strings, "pytorch-snapshot");
      c.t->origin_text = origin_text;
      MlPkStream st = { .key = "device_traces", .item = on_entry, .user = &c, .progress = opts->progress,
                        .drop_input = mapped };
      rc = ml_pk_parse_stream (data, len, &st, &doc, err);
      if (rc < 0 && !c.entry_failed)
        ml_error_prefix (err, "%s", name);
      if (rc == 0)
        rc = load (&c, ml_pk_root (doc), opts);
    }
  ml_u64map_clear (&c.by_content);
  ml_u64map_clear (&c.by_ptrs);
  free (c.pents);
  free (c.ptrs);
  ml_u64map_clear (&c.finfo_by_content);
  ml_u64map_clear (&c.freed);
  ml_u64map_clear (&c.live);
  free (c.segs);
  free (c.finfo);
  free (c.scratch);
  free (c.blks);
  free (c.anns);
  for (size_t d = 0; d < c.n_dt; d++)
    dev_trace_free (&c.dt[d]);
  free (c.dt);
  ml_pk_free (doc);
  if (rc < 0)
    {
      ml_trace_free (c.t);
      return rc;
    }
  *out = c.t;
  return 0;
}

int
ml_trace_load_snapshot_mem (const unsigned char *data, size_t len, const char *name, const MlLoadOptions *opts,
                            MlTrace **out, MlError *err)
{
  return load_bytes (data, len, false, name, opts, out, err);
}

#define SMALL_FILE ((off_t) 1 << 20)

int
ml_trace_load_snapshot (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err)
{
  /* a mapping, given back behind the reader: the file is never all in
   * memory; a pipe or the like is read whole */
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat sb;
  if (fd >= 0 && fstat (fd, &sb) == 0 && S_ISREG (sb.st_mode) && sb.st_size > 0 && sb.st_size < SMALL_FILE)
    {
      /* a small file is read: a mapping costs more system calls and
       * page faults than its bytes */
      size_t len = (size_t) sb.st_size, got = 0;
      unsigned char *data = malloc (len);
      ssize_t r = 1;
      while (data && got < len && (r = read (fd, data + got, len - got)) > 0)
        got += (size_t) r;
      close (fd);
      int rc = !data ? ml_error_set (err, ML_ENOMEM, "%s: out of memory", path)
               : got < len ? ml_error_set (err, ML_EIO, "%s: cannot read: %s", path, r < 0 ? strerror (errno) : "shorter than its size")
               : load_bytes (data, len, false, path, opts, out, err);
      free (data);
      return rc;
    }
  if (fd >= 0 && fstat (fd, &sb) == 0 && S_ISREG (sb.st_mode) && sb.st_size > 0)
    {
      size_t len = (size_t) sb.st_size;
      void *map = mmap (NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
      close (fd);
      if (map != MAP_FAILED)
        {
          madvise (map, len, MADV_SEQUENTIAL);
          int rc = load_bytes (map, len, true, path, opts, out, err);
          munmap (map, len);
          return rc;
        }
    }
  else if (fd >= 0)
    close (fd);
  char *data;
  size_t len;
  int rc = ml_read_file (path, (size_t) 1 << 33, &data, &len, err);
  if (rc < 0)
    return rc;
  rc = load_bytes ((const unsigned char *) data, len, false, path, opts, out, err);
  free (data);
  return rc;
}
