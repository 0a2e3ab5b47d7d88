#include "sim/formats/graph.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jsonutil.h"
#include "sim/base/sort.h"
#include "sim/base/options.h"
#include "sim/base/u64map.h"
#include "sim/base/units.h"

bool
ml_graph_sniff (const unsigned char *h, size_t len)
{
  return len > 2 && h[0] == '{' && memmem (h, len, "\"memlens-graph\"", 15) != NULL;
}

unsigned
ml_dtype_size (const char *d)
{
  static const struct { const char *name; unsigned size; } t[] = {
    { "f64", 8 }, { "float64", 8 }, { "f32", 4 }, { "float32", 4 }, { "f16", 2 }, { "float16", 2 },
    { "bf16", 2 }, { "bfloat16", 2 }, { "fp8", 1 }, { "f8", 1 }, { "i64", 8 }, { "int64", 8 },
    { "i32", 4 }, { "int32", 4 }, { "i8", 1 }, { "int8", 1 }, { "u8", 1 }, { "uint8", 1 }, { "bool", 1 },
  };
  for (size_t i = 0; d && i < sizeof t / sizeof t[0]; i++)
    if (strcmp (d, t[i].name) == 0)
      return t[i].size;
  return 0;
}

enum { K_ACT = 0, K_INPUT, K_OUTPUT, K_WEIGHT };

typedef struct {
  const char *name;
  uint64_t    bytes;
  int         kind;
  long        producer;   /* op index, -1 = graph input / weight */
  uint32_t    root;       /* the buffer it lives in (in-place aliases) */
  bool        zero_copy, no_reuse, fixed;   /* constraints (sim/constraints.h) */
  uint32_t    alt;        /* written inside this branch alternative (1-based), 0 = outside */
  uint64_t    fixed_at;   /* the offset of a fixed tensor */
} Tensor;

typedef struct {
  const char *name;
  uint32_t   *in, *out;
  size_t      n_in, n_out;
  uint32_t   *ip_in, *ip_out;   /* in-place pairs */
  size_t      n_ip;
} Op;

typedef struct {
  const char *path;
  MlError    *err;
  Tensor     *t;
  size_t      nt;
  Op         *ops;
  size_t      nops;
  uint64_t    align;
  uint64_t    zero_copy_align;
  uint64_t    max_block;
  bool        exclude[4];
  bool        pin[4];     /* resident for the whole graph at a fixed offset */
  MlU64Map    names;      /* FNV-1a hash of a name -> the first tensor with it */
  /* symbolic dimensions: the file's "dims", then MlLoadOptions.dims */
  struct { char name[64]; uint64_t value; bool from_opts, used; } dim[32];
  size_t      n_dims;
} G;

static uint64_t
name_hash (const char *s)
{
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char) *s) * 1099511628211ull;
  return h;
}

static long
find_tensor (const G *g, const char *name)
{
  uint32_t i;
  if (!ml_u64map_get (&g->names, name_hash (name), &i))
    return -1;
  if (strcmp (g->t[i].name, name) == 0)
    return (long) i;
  for (size_t k = 0; k < g->nt; k++)   /* a hash collision: rare */
    if (strcmp (g->t[k].name, name) == 0)
      return (long) k;
  return -1;
}

static int
name_list (G *g, const cJSON *arr, size_t op, const char *what, uint32_t **out, size_t *n)
{
  *out = NULL;
  *n = 0;
  if (!arr)
    return 0;
  if (!cJSON_IsArray (arr))
    return ml_error_set (g->err, ML_EINPUT, "%s: op %zu: \"%s\" is not an array of tensor names", g->path, op, what);
  size_t cnt = (size_t) cJSON_GetArraySize (arr);
  *out = calloc (cnt ? cnt : 1, sizeof **out);
  if (!*out)
    return ml_error_set (g->err, ML_ENOMEM, "out of memory");
  const cJSON *it;
  cJSON_ArrayForEach (it, arr)
    {
      const char *nm = cJSON_GetStringValue (it);
      long ti = nm ? find_tensor (g, nm) : -1;
      if (ti < 0)
        return ml_error_set (g->err, ML_EINPUT, "%s: op %zu (%s): %s \"%s\" is not a declared tensor", g->path, op,
                             g->ops[op].name, what, nm ? nm : "(not a string)");
      (*out)[(*n)++] = (uint32_t) ti;
    }
  return 0;
}

static uint32_t
root_of (const G *g, uint32_t t)
{
  return g->t[t].root;
}

/* Lifetimes of the roots under @order: start / end ticks; returns the
 * peak of live aligned bytes. */
static uint64_t
lifetimes (const G *g, const uint32_t *order, uint64_t *start, uint64_t *end, uint64_t *scratch)
{
  size_t n = g->nops;
  for (size_t i = 0; i < g->nt; i++)
    start[i] = UINT64_MAX, end[i] = 0;
  for (size_t i = 0; i < g->nt; i++)
    if (g->t[i].producer < 0 && root_of (g, (uint32_t) i) == i)
      start[i] = 0, end[i] = 1;
  for (size_t p = 0; p < n; p++)
    {
      const Op *o = &g->ops[order[p]];
      uint64_t tick = p + 1;
      for (size_t k = 0; k < o->n_out; k++)
        {
          uint32_t r = root_of (g, o->out[k]);
          if (start[r] == UINT64_MAX)
            start[r] = tick;
          if (end[r] < tick + 1)
            end[r] = tick + 1;
        }
      for (size_t k = 0; k < o->n_in; k++)
        {
          uint32_t r = root_of (g, o->in[k]);
          if (end[r] < tick + 1)
            end[r] = tick + 1;
        }
    }
  for (size_t i = 0; i < g->nt; i++)
    {
      uint32_t r = root_of (g, (uint32_t) i);
      if (g->t[i].kind == K_OUTPUT || g->t[i].kind == K_WEIGHT || g->pin[g->t[i].kind] || g->t[r].fixed)
        end[r] = n + 1;
      if (g->pin[g->t[i].kind] || g->t[r].fixed)
        start[r] = 0;
    }
  /* peak: a difference array over ticks 0 .. n + 1 */
  memset (scratch, 0, (n + 2) * sizeof *scratch);
  uint64_t *minus = scratch + n + 2;
  memset (minus, 0, (n + 2) * sizeof *minus);
  for (size_t i = 0; i < g->nt; i++)
    if (root_of (g, (uint32_t) i) == i && start[i] != UINT64_MAX && !g->exclude[g->t[i].kind])
      {
        uint64_t b = ml_align_up (g->t[i].bytes, g->align);
        scratch[start[i]] += b;
        if (end[i] < n + 2)
          minus[end[i]] += b;
      }
  uint64_t live = 0, peak = 0;
  for (size_t k = 0; k < n + 2; k++)
    {
      live = live + scratch[k] - minus[k];
      if (live > peak)
        peak = live;
    }
  return peak;
}

/* The memory-aware topological order (see graph.h). */
static int
memory_order (const G *g, uint32_t *order)
{
  size_t n = g->nops, nt = g->nt;
  uint32_t *uses = calloc (nt ? nt : 1, sizeof *uses);     /* remaining reads per root */
  uint32_t *missing = calloc (n ? n : 1, sizeof *missing); /* unfinished producers per op */
  bool *done = calloc (n ? n : 1, 1), *made = calloc (nt ? nt : 1, 1);
  size_t n_reads = 0;
  for (size_t o = 0; o < n; o++)
    n_reads += g->ops[o].n_in;
  /* the readers of each tensor (CSR), one entry per read */
  size_t *first = calloc (nt + 1, sizeof *first);
  uint32_t *readers = calloc (n_reads ? n_reads : 1, sizeof *readers);
  if (!uses || !missing || !done || !made || !first || !readers)
    {
      free (uses), free (missing), free (done), free (made), free (first), free (readers);
      return ML_ENOMEM;
    }
  for (size_t o = 0; o < n; o++)
    for (size_t k = 0; k < g->ops[o].n_in; k++)
      {
        uses[root_of (g, g->ops[o].in[k])]++;
        if (g->t[g->ops[o].in[k]].producer >= 0)
          missing[o]++;
        first[g->ops[o].in[k] + 1]++;
      }
  for (size_t i = 0; i < nt; i++)
    first[i + 1] += first[i];
  {
    size_t *fill = calloc (nt + 1, sizeof *fill);
    if (!fill)
      {
        free (uses), free (missing), free (done), free (made), free (first), free (readers);
        return ML_ENOMEM;
      }
    for (size_t o = 0; o < n; o++)
      for (size_t k = 0; k < g->ops[o].n_in; k++)
        {
          uint32_t t = g->ops[o].in[k];
          readers[first[t] + fill[t]++] = (uint32_t) o;
        }
    free (fill);
  }
  for (size_t i = 0; i < nt; i++)
    made[i] = g->t[i].producer < 0;
  for (size_t p = 0; p < n; p++)
    {
      long best = -1;
      int64_t best_score = 0;
      uint64_t best_alloc = 0;
      for (size_t o = 0; o < n; o++)
        {
          if (done[o] || missing[o])
            continue;
          const Op *op = &g->ops[o];
          int64_t freed = 0, alloc = 0;
          for (size_t k = 0; k < op->n_out; k++)
            {
              uint32_t r = root_of (g, op->out[k]);
              if (r == op->out[k])
                alloc += (int64_t) ml_align_up (g->t[r].bytes, g->align);
            }
          for (size_t k = 0; k < op->n_in; k++)
            {
              uint32_t r = root_of (g, op->in[k]);
              size_t here = 0;
              for (size_t j = 0; j < op->n_in; j++)
                here += root_of (g, op->in[j]) == r;
              bool first_read = true;
              for (size_t j = 0; j < k; j++)
                first_read &= root_of (g, op->in[j]) != r;
              bool persistent = g->t[r].kind == K_OUTPUT || g->t[r].kind == K_WEIGHT;
              for (size_t j = 0; j < op->n_out; j++)
                persistent |= root_of (g, op->out[j]) == r;
              if (first_read && !persistent && uses[r] == here)
                freed += (int64_t) ml_align_up (g->t[r].bytes, g->align);
            }
          int64_t score = freed - alloc;
          if (best < 0 || score > best_score || (score == best_score && (uint64_t) alloc > best_alloc))
            best = (long) o, best_score = score, best_alloc = (uint64_t) alloc;
        }
      if (best < 0)
        {
          free (uses), free (missing), free (done), free (made), free (first), free (readers);
          return ML_EINPUT;   /* a cycle: cannot happen after validation */
        }
      order[p] = (uint32_t) best;
      done[best] = true;
      const Op *op = &g->ops[best];
      for (size_t k = 0; k < op->n_in; k++)
        uses[root_of (g, op->in[k])]--;
      for (size_t k = 0; k < op->n_out; k++)
        if (!made[op->out[k]])
          {
            uint32_t t = op->out[k];
            made[t] = true;
            for (size_t r = first[t]; r < first[t + 1]; r++)
              missing[readers[r]]--;
          }
    }
  free (uses), free (missing), free (done), free (made), free (first), free (readers);
  return 0;
}

/* GE's memory-priority order (see graph.h): a depth-first walk back from
 * the ops nobody waits for, each op emitted right after the producers of
 * its inputs, the producer of the largest input first, so each chain runs
 * just before its consumer. Iterative: O(ops + reads log reads). */
static int
priority_order (const G *g, uint32_t *order)
{
  size_t n = g->nops, nt = g->nt, emitted = 0;
  uint8_t *state = calloc (n ? n : 1, 1);   /* 0 new, 1 on the stack, 2 emitted */
  bool *read = calloc (nt ? nt : 1, 1);
  size_t max_in = 1;
  for (size_t o = 0; o < n; o++)
    if (g->ops[o].n_in > max_in)
      max_in = g->ops[o].n_in;
  uint32_t *stack = malloc ((n ? n : 1) * sizeof *stack);
  size_t *pos = calloc (n ? n : 1, sizeof *pos);      /* next input to visit */
  uint32_t *prod = malloc ((n ? n : 1) * max_in * sizeof *prod);   /* per op: producers, largest input first */
  size_t *n_prod = calloc (n ? n : 1, sizeof *n_prod);
  if (!state || !read || !stack || !pos || !prod || !n_prod)
    {
      free (state), free (read), free (stack), free (pos), free (prod), free (n_prod);
      return ML_ENOMEM;
    }
  for (size_t o = 0; o < n; o++)
    {
      const Op *op = &g->ops[o];
      uint32_t *p = prod + o * max_in;
      for (size_t k = 0; k < op->n_in; k++)
        {
          read[op->in[k]] = true;
          long pr = g->t[op->in[k]].producer;
          if (pr < 0 || (size_t) pr == o)
            continue;
          bool dup = false;
          for (size_t j = 0; j < n_prod[o]; j++)
            dup |= p[j] == (uint32_t) pr;
          if (dup)
            continue;
          /* insertion by the size of the input, largest first (stable) */
          size_t j = n_prod[o]++;
          uint64_t b = g->t[op->in[k]].bytes;
          while (j > 0 && g->t[op->in[k]].bytes > 0 && b > 0)
            {
              uint64_t bj = 0;
              const Op *q = &g->ops[p[j - 1]];
              for (size_t m = 0; m < q->n_out; m++)
                for (size_t r = 0; r < op->n_in; r++)
                  if (q->out[m] == op->in[r] && g->t[op->in[r]].bytes > bj)
                    bj = g->t[op->in[r]].bytes;
              if (bj >= b)
                break;
              p[j] = p[j - 1];
              j--;
            }
          p[j] = (uint32_t) pr;
        }
    }
  /* roots: ops none of whose outputs is read (sinks), in the given order,
   * then anything left */
  for (int pass = 0; pass < 2; pass++)
    for (size_t r = 0; r < n; r++)
      {
        if (state[r])
          continue;
        if (pass == 0)
          {
            bool sink = true;
            for (size_t k = 0; k < g->ops[r].n_out; k++)
              sink &= !read[g->ops[r].out[k]];
            if (!sink)
              continue;
          }
        size_t sp = 0;
        stack[sp++] = (uint32_t) r;
        state[r] = 1;
        while (sp)
          {
            uint32_t o = stack[sp - 1];
            if (pos[o] < n_prod[o])
              {
                uint32_t p = prod[o * max_in + pos[o]++];
                if (state[p] == 0)
                  {
                    state[p] = 1;
                    stack[sp++] = p;
                  }
                continue;
              }
            state[o] = 2;
            order[emitted++] = o;
            sp--;
          }
      }
  free (state), free (read), free (stack), free (pos), free (prod), free (n_prod);
  return emitted == n ? 0 : ML_EINPUT;
}

typedef struct {
  G   *g;
  int  reorder;   /* 0 none, 1 memory, 2 priority */
} Opts;

static int
graph_option (void *user, const char *key, const char *value, MlError *err)
{
  Opts *o = user;
  if (strcmp (key, "reorder") == 0)
    {
      if (strcmp (value, "memory") == 0)
        o->reorder = 1;
      else if (strcmp (value, "priority") == 0)
        o->reorder = 2;
      else if (strcmp (value, "none") == 0)
        o->reorder = 0;
      else
        return ml_error_set (err, ML_EUSAGE, "graph option reorder=%s: use memory, priority or none", value);
    }
  else if (strcmp (key, "max_block") == 0)
    {
      if (ml_parse_size (value, &o->g->max_block, err) < 0 || o->g->max_block == 0)
        return ml_error_set (err, ML_EUSAGE, "graph option max_block=%s: a size of at least 1 byte, e.g. 400M", value);
    }
  else if (strcmp (key, "exclude") == 0 || strcmp (key, "pin") == 0)
    {
      bool *set = key[0] == 'e' ? o->g->exclude : o->g->pin;
      if (strcmp (value, "weights") == 0)
        set[K_WEIGHT] = true;
      else if (strcmp (value, "inputs") == 0)
        set[K_INPUT] = true;
      else if (strcmp (value, "outputs") == 0)
        set[K_OUTPUT] = true;
      else
        return ml_error_set (err, ML_EUSAGE, "graph option %s=%s: use weights, inputs or outputs", key, value);
    }
  return 0;   /* other keys belong to the strategies */
}

static int
emit (MlTrace *t, MlEventKind kind, uint64_t tick, uint64_t id, uint64_t size, uint32_t name, uint16_t flags)
{
  MlEvent ev = { .tick = tick, .id = id, .size = size, .time_ns = -1, .name = name, .kind = (uint8_t) kind,
                 .flags = flags };
  return ml_trace_append (t, &ev) ? 0 : ML_ENOMEM;
}

static int
bind_dim (G *g, const char *name, size_t len, uint64_t value, bool from_opts, const char *where)
{
  int code = from_opts ? ML_EUSAGE : ML_EINPUT;
  if (!len || len >= sizeof g->dim[0].name)
    return ml_error_set (g->err, code, "%s: %s: a dimension name must have 1 to 63 characters", g->path, where);
  for (size_t i = 0; i < len; i++)
    if (!(name[i] == '_' || (name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= 'a' && name[i] <= 'z')
          || (i > 0 && name[i] >= '0' && name[i] <= '9')))
      return ml_error_set (g->err, code, "%s: %s: \"%.*s\" is not a dimension name (letters, digits, _)", g->path,
                           where, (int) len, name);
  size_t k;
  for (k = 0; k < g->n_dims; k++)
    if (strlen (g->dim[k].name) == len && memcmp (g->dim[k].name, name, len) == 0)
      break;
  if (k == g->n_dims)
    {
      if (k == sizeof g->dim / sizeof g->dim[0])
        return ml_error_set (g->err, code, "%s: %s: more than 32 symbolic dimensions", g->path, where);
      memcpy (g->dim[k].name, name, len);
      g->dim[k].name[len] = 0;
      g->n_dims++;
    }
  g->dim[k].value = value;
  g->dim[k].from_opts |= from_opts;
  return 0;
}

/* The file's "dims" (defaults), then the caller's "B=8,S=128" over them. */
static int
read_dims (G *g, const cJSON *root, const char *opts)
{
  const cJSON *dims = cJSON_GetObjectItemCaseSensitive (root, "dims"), *d;
  int rc;
  if (dims && !cJSON_IsObject (dims))
    return ml_error_set (g->err, ML_EINPUT, "%s: \"dims\" is not an object of dimension names and sizes", g->path);
  cJSON_ArrayForEach (d, dims)
    {
      uint64_t v;
      if (ml_json_value_u64 (d, d->string, &v, g->err) < 0)
        return ml_error_prefix (g->err, "%s: dims", g->path);
      if ((rc = bind_dim (g, d->string, strlen (d->string), v, false, "dims")) < 0)
        return rc;
    }
  for (const char *p = opts; p && *p;)
    {
      const char *comma = strchr (p, ','), *end = comma ? comma : p + strlen (p);
      const char *eq = memchr (p, '=', (size_t) (end - p));
      uint64_t v;
      if (!eq || ml_parse_u64 (eq + 1, (size_t) (end - eq - 1), &v) < 0)
        return ml_error_set (g->err, ML_EUSAGE, "--dim %.*s: use NAME=SIZE, e.g. B=8", (int) (end - p), p);
      if ((rc = bind_dim (g, p, (size_t) (eq - p), v, true, "--dim")) < 0)
        return rc;
      p = comma ? comma + 1 : end;
    }
  return 0;
}

/* One dimension of a shape: an integer, or a product of integers and
 * dimension names, "B", "4*B", "B*S". */
static int
shape_dim (G *g, const cJSON *d, const char *tensor, uint64_t *out)
{
  if (!cJSON_IsString (d))
    {
      if (ml_json_value_u64 (d, "dimension", out, g->err) < 0)
        return ml_error_prefix (g->err, "%s: tensor \"%s\"", g->path, tensor);
      return 0;
    }
  const char *s = d->valuestring;
  uint64_t v = 1;
  for (const char *p = s;;)
    {
      const char *star = strchr (p, '*'), *end = star ? star : p + strlen (p);
      size_t len = (size_t) (end - p);
      uint64_t f = 0;
      if (len && p[0] >= '0' && p[0] <= '9')
        {
          if (ml_parse_u64 (p, len, &f) < 0)
            return ml_error_set (g->err, ML_EINPUT, "%s: tensor \"%s\": dimension \"%s\" is not a product of integers and names",
                                 g->path, tensor, s);
        }
      else
        {
          size_t k;
          for (k = 0; k < g->n_dims; k++)
            if (strlen (g->dim[k].name) == len && memcmp (g->dim[k].name, p, len) == 0)
              break;
          if (k == g->n_dims)
            return ml_error_set (g->err, ML_EINPUT, "%s: tensor \"%s\": dimension \"%.*s\" is not bound (\"dims\" in the file, or --dim %.*s=N)",
                                 g->path, tensor, (int) len, p, (int) len, p);
          g->dim[k].used = true;
          f = g->dim[k].value;
        }
      if (f && v > (UINT64_MAX >> 8) / f)
        return ml_error_set (g->err, ML_EINPUT, "%s: tensor \"%s\": dimension \"%s\" is over 2^56", g->path, tensor, s);
      v *= f;
      if (!star)
        break;
      p = star + 1;
    }
  *out = v;
  return 0;
}

static uint16_t
constraint_flags (const Tensor *t)
{
  return (uint16_t) ((t->zero_copy ? ML_EVF_ZERO_COPY : 0) | (t->no_reuse ? ML_EVF_NO_REUSE : 0));
}

/* "contiguous": [["a","b"],...]: each group's tensors (their buffers) back
 * to back, in order. */
static int
add_groups (G *g, const cJSON *root, MlTrace *tr)
{
  const cJSON *groups = cJSON_GetObjectItemCaseSensitive (root, "contiguous"), *grp;
  if (!groups)
    return 0;
  if (!cJSON_IsArray (groups))
    return ml_error_set (g->err, ML_EINPUT, "%s: \"contiguous\" is not an array of arrays of tensor names", g->path);
  size_t gi = 0;
  uint64_t *ids = calloc (g->nt + 1, sizeof *ids);
  if (!ids)
    return ml_error_set (g->err, ML_ENOMEM, "out of memory");
  int rc = 0;
  cJSON_ArrayForEach (grp, groups)
    {
      size_t n = 0;
      const cJSON *it;
      if (!cJSON_IsArray (grp) || cJSON_GetArraySize (grp) < 2)
        {
          rc = ml_error_set (g->err, ML_EINPUT, "%s: contiguous group %zu: an array of at least two tensor names", g->path, gi);
          break;
        }
      cJSON_ArrayForEach (it, grp)
        {
          const char *nm = cJSON_GetStringValue (it);
          long ti = nm ? find_tensor (g, nm) : -1;
          if (ti < 0)
            {
              rc = ml_error_set (g->err, ML_EINPUT, "%s: contiguous group %zu: \"%s\" is not a declared tensor", g->path, gi,
                                 nm ? nm : "(not a string)");
              break;
            }
          const Tensor *t = &g->t[g->t[ti].root];
          if (t->zero_copy || t->fixed || g->exclude[t->kind] || g->pin[t->kind] || n >= g->nt)
            {
              rc = ml_error_set (g->err, ML_EINPUT, "%s: contiguous group %zu: tensor \"%s\" is %s", g->path, gi, nm,
                                 t->zero_copy ? "zero_copy (outside the arena)" : t->fixed ? "fixed at its own offset"
                                 : g->exclude[t->kind] ? "excluded" : g->pin[t->kind] ? "pinned" : "listed too often");
              break;
            }
          uint64_t id = g->t[ti].root + 1;
          for (size_t k = 0; k < n && rc == 0; k++)
            if (ids[k] == id)
              rc = ml_error_set (g->err, ML_EINPUT, "%s: contiguous group %zu: \"%s\" shares its buffer with an earlier member (in place)",
                                 g->path, gi, nm);
          if (rc < 0)
            break;
          ids[n++] = id;
        }
      if (rc < 0)
        break;
      if (ml_trace_add_group (tr, ids, n) < 0)
        {
          rc = ml_error_set (g->err, ML_ENOMEM, "out of memory");
          break;
        }
      gi++;
    }
  free (ids);
  return rc;
}

typedef struct {
  const cJSON *op;
  uint32_t     alt;      /* 1-based alternative of a branch, 0 = the main sequence */
  size_t       parent;   /* the branch op's position */
} Flat;

static int build_ops (G *g, const cJSON *root, const MlLoadOptions *opts, MlTrace **out, Flat **flat_out);

static int
build (G *g, const cJSON *root, const MlLoadOptions *opts, MlTrace **out)
{
  Flat *flat = NULL;
  int rc = build_ops (g, root, opts, out, &flat);
  free (flat);
  return rc;
}

static int
build_ops (G *g, const cJSON *root, const MlLoadOptions *opts, MlTrace **out, Flat **flat_out)
{
  Flat *flat = NULL;
  const cJSON *tensors = cJSON_GetObjectItemCaseSensitive (root, "tensors");
  const cJSON *ops = cJSON_GetObjectItemCaseSensitive (root, "ops");
  if (!cJSON_IsArray (tensors) || !cJSON_IsArray (ops))
    return ml_error_set (g->err, ML_EINPUT, "%s: a graph needs \"tensors\" and \"ops\" arrays", g->path);
  uint64_t align = 256, zc_align = 0;
  int rc;
  const cJSON *al = cJSON_GetObjectItemCaseSensitive (root, "alignment");
  if (cJSON_IsObject (al))
    {
      /* per kind: {"default":512,"zero_copy":32} */
      const cJSON *k;
      cJSON_ArrayForEach (k, al)
        if (strcmp (k->string, "default") != 0 && strcmp (k->string, "zero_copy") != 0)
          return ml_error_set (g->err, ML_EINPUT, "%s: alignment \"%s\": the kinds are default (the arena) and zero_copy",
                               g->path, k->string);
      if ((rc = ml_json_u64 (al, "default", false, &align, g->err)) < 0
          || (rc = ml_json_u64 (al, "zero_copy", false, &zc_align, g->err)) < 0)
        return ml_error_prefix (g->err, "%s: alignment", g->path);
      if (zc_align == 0 || (zc_align & (zc_align - 1)))
        return ml_error_set (g->err, ML_EINPUT, "%s: alignment zero_copy %" PRIu64 " is not a power of two", g->path,
                             zc_align);
    }
  else if ((rc = ml_json_u64 (root, "alignment", false, &align, g->err)) < 0)
    return ml_error_prefix (g->err, "%s", g->path);
  if (align == 0 || (align & (align - 1)))
    return ml_error_set (g->err, ML_EINPUT, "%s: alignment %" PRIu64 " is not a power of two", g->path, align);
  g->align = align;
  g->zero_copy_align = zc_align;
  if ((rc = ml_json_u64 (root, "max_block", false, &g->max_block, g->err)) < 0)
    return ml_error_prefix (g->err, "%s", g->path);
  Opts o = { g, 0 };
  if ((rc = ml_options_foreach (opts->graph_options, graph_option, &o, g->err)) < 0)
    return rc;
  if ((rc = read_dims (g, root, opts->dims)) < 0)
    return rc;

  g->nt = 0;
  g->t = calloc ((size_t) cJSON_GetArraySize (tensors) + 1, sizeof *g->t);
  const cJSON *it;
  /* ops in the order they run, each branch's alternatives one after the
   * other right after the branch op (the worst case: see graph.h) */
  size_t n_flat = 0;
  cJSON_ArrayForEach (it, ops)
    {
      n_flat++;
      const cJSON *br = cJSON_GetObjectItemCaseSensitive (it, "branch"), *alt, *aop;
      cJSON_ArrayForEach (alt, br)
        cJSON_ArrayForEach (aop, alt)
          n_flat++;
    }
  flat = *flat_out = calloc (n_flat + 1, sizeof *flat);
  g->ops = calloc (n_flat + 1, sizeof *g->ops);
  if (!g->t || !g->ops || !flat)
    return ml_error_set (g->err, ML_ENOMEM, "out of memory");
  n_flat = 0;
  uint32_t n_alts = 0;
  cJSON_ArrayForEach (it, ops)
    {
      size_t parent = n_flat;
      flat[n_flat++] = (Flat) { it, 0, SIZE_MAX };
      const cJSON *br = cJSON_GetObjectItemCaseSensitive (it, "branch"), *alt, *aop;
      if (br && (!cJSON_IsArray (br) || cJSON_GetArraySize (br) < 1))
        return ml_error_set (g->err, ML_EINPUT, "%s: op %zu: \"branch\" is an array of alternatives, each an array of ops",
                             g->path, parent);
      cJSON_ArrayForEach (alt, br)
        {
          if (!cJSON_IsArray (alt))
            return ml_error_set (g->err, ML_EINPUT, "%s: op %zu: a branch alternative is an array of ops", g->path, parent);
          n_alts++;
          cJSON_ArrayForEach (aop, alt)
            {
              if (cJSON_GetObjectItemCaseSensitive (aop, "branch"))
                return ml_error_set (g->err, ML_EINPUT, "%s: op %zu: branches do not nest", g->path, n_flat);
              flat[n_flat++] = (Flat) { aop, n_alts, parent };
            }
        }
    }
  cJSON_ArrayForEach (it, tensors)
    {
      size_t i = g->nt;
      Tensor *t = &g->t[i];
      t->name = ml_json_str (it, "name");
      if (!t->name || !*t->name)
        return ml_error_set (g->err, ML_EINPUT, "%s: tensor %zu has no \"name\"", g->path, i);
      if (find_tensor (g, t->name) >= 0)
        return ml_error_set (g->err, ML_EINPUT, "%s: tensor \"%s\" is declared twice", g->path, t->name);
      const char *dtype = ml_json_str (it, "dtype");
      unsigned dsize = ml_dtype_size (dtype);
      uint64_t bytes;
      if ((rc = ml_json_u64 (it, "bytes", false, &bytes, g->err)) < 0)
        return ml_error_prefix (g->err, "%s: tensor \"%s\"", g->path, t->name);
      if (rc == 1)
        {
          if (!dsize)
            return ml_error_set (g->err, ML_EINPUT, "%s: tensor \"%s\": dtype \"%s\" is not one of f64 f32 f16 bf16 fp8 i64 i32 i8 u8 bool",
                                 g->path, t->name, dtype ? dtype : "(none)");
          const cJSON *shape = cJSON_GetObjectItemCaseSensitive (it, "shape");
          if (!cJSON_IsArray (shape))
            return ml_error_set (g->err, ML_EINPUT, "%s: tensor \"%s\" needs a \"shape\" array (or \"bytes\")", g->path, t->name);
          uint64_t elems = 1;
          const cJSON *d;
          cJSON_ArrayForEach (d, shape)
            {
              uint64_t dim;
              if ((rc = shape_dim (g, d, t->name, &dim)) < 0)
                return rc;
              if (dim && elems > (UINT64_MAX >> 8) / dim)
                return ml_error_set (g->err, ML_EINPUT, "%s: tensor \"%s\": the shape has more than 2^56 elements", g->path, t->name);
              elems *= dim;
            }
          bytes = elems * dsize;
        }
      if (bytes > ((uint64_t) 1 << 56))
        return ml_error_set (g->err, ML_EINPUT, "%s: tensor \"%s\": %" PRIu64 " bytes is over the 2^56 limit", g->path, t->name, bytes);
      t->bytes = bytes;
      const char *kind = ml_json_str (it, "kind");
      if (!kind || strcmp (kind, "activation") == 0 || strcmp (kind, "gradient") == 0)
        t->kind = K_ACT;   /* a gradient is an activation of the backward pass */
      else if (strcmp (kind, "optimizer_state") == 0)
        t->kind = K_WEIGHT;   /* resident like the weights it belongs to */
      else if (strcmp (kind, "input") == 0)
        t->kind = K_INPUT;
      else if (strcmp (kind, "output") == 0)
        t->kind = K_OUTPUT;
      else if (strcmp (kind, "weight") == 0)
        t->kind = K_WEIGHT;
      else
        return ml_error_set (g->err, ML_EINPUT, "%s: tensor \"%s\": kind \"%s\" is not input, output, weight, activation, gradient or optimizer_state",
                             g->path, t->name, kind);
      t->producer = -1;
      t->root = (uint32_t) i;
      t->zero_copy = cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (it, "zero_copy"));
      t->no_reuse = cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (it, "no_reuse"));
      if ((rc = ml_json_u64 (it, "fixed", false, &t->fixed_at, g->err)) < 0)
        return ml_error_prefix (g->err, "%s: tensor \"%s\": fixed (an offset)", g->path, t->name);
      t->fixed = rc == 0;
      if (t->fixed && t->zero_copy)
        return ml_error_set (g->err, ML_EINPUT, "%s: tensor \"%s\" is both fixed (in the arena) and zero_copy (outside it)",
                             g->path, t->name);
      if (!ml_u64map_get (&g->names, name_hash (t->name), NULL)
          && ml_u64map_put (&g->names, name_hash (t->name), (uint32_t) i) < 0)
        return ml_error_set (g->err, ML_ENOMEM, "out of memory");
      g->nt++;
    }
  for (size_t fi = 0; fi < n_flat; fi++)
    {
      it = flat[fi].op;
      size_t i = g->nops;
      Op *op = &g->ops[i];
      op->name = ml_json_str (it, "name");
      if (!op->name)
        op->name = "(unnamed)";
      g->nops++;
      if ((rc = name_list (g, cJSON_GetObjectItemCaseSensitive (it, "inputs"), i, "input", &op->in, &op->n_in)) < 0
          || (rc = name_list (g, cJSON_GetObjectItemCaseSensitive (it, "outputs"), i, "output", &op->out, &op->n_out)) < 0)
        return rc;
      if (flat[fi].alt)
        {
          /* an alternative writes the branch op's outputs (each its own
           * write of them): they exist since the branch op, so for the
           * lifetimes it is a read */
          const Op *parent = &g->ops[flat[fi].parent];
          size_t keep = 0;
          uint32_t *in = realloc (op->in, (op->n_in + op->n_out + 1) * sizeof *in);
          if (!in)
            return ml_error_set (g->err, ML_ENOMEM, "out of memory");
          op->in = in;
          for (size_t k = 0; k < op->n_out; k++)
            {
              bool of_parent = false;
              for (size_t j = 0; j < parent->n_out; j++)
                of_parent |= parent->out[j] == op->out[k];
              if (of_parent)
                op->in[op->n_in++] = op->out[k];
              else
                op->out[keep++] = op->out[k];
            }
          op->n_out = keep;
        }
      for (size_t k = 0; k < op->n_in; k++)
        {
          const Tensor *t = &g->t[op->in[k]];
          if (t->alt && t->alt != flat[fi].alt)
            return ml_error_set (g->err, ML_EINPUT, "%s: op %zu (%s) reads \"%s\", which only branch alternative %u writes",
                                 g->path, i, op->name, t->name, t->alt);
        }
      const cJSON *ip = cJSON_GetObjectItemCaseSensitive (it, "inplace");
      size_t nip = cJSON_IsArray (ip) ? (size_t) cJSON_GetArraySize (ip) : 0;
      op->ip_in = calloc (nip + 1, sizeof *op->ip_in);
      op->ip_out = calloc (nip + 1, sizeof *op->ip_out);
      if (!op->ip_in || !op->ip_out)
        return ml_error_set (g->err, ML_ENOMEM, "out of memory");
      const cJSON *pair;
      cJSON_ArrayForEach (pair, ip)
        {
          const char *a = cJSON_GetStringValue (cJSON_GetArrayItem (pair, 0));
          const char *b = cJSON_GetStringValue (cJSON_GetArrayItem (pair, 1));
          long ta = a ? find_tensor (g, a) : -1, tb = b ? find_tensor (g, b) : -1;
          bool a_in = false, b_out = false;
          for (size_t k = 0; k < op->n_in; k++)
            a_in |= ta >= 0 && op->in[k] == (uint32_t) ta;
          for (size_t k = 0; k < op->n_out; k++)
            b_out |= tb >= 0 && op->out[k] == (uint32_t) tb;
          if (!cJSON_IsArray (pair) || cJSON_GetArraySize (pair) != 2 || !a_in || !b_out)
            return ml_error_set (g->err, ML_EINPUT, "%s: op %zu (%s): an in-place pair must be [input, output] of the op",
                                 g->path, i, op->name);
          op->ip_in[op->n_ip] = (uint32_t) ta;
          op->ip_out[op->n_ip++] = (uint32_t) tb;
        }
      for (size_t k = 0; k < op->n_in; k++)
        {
          const Tensor *t = &g->t[op->in[k]];
          if (t->producer < 0 && t->kind != K_INPUT && t->kind != K_WEIGHT)
            return ml_error_set (g->err, ML_EINPUT, "%s: op %zu (%s) reads \"%s\" before any op writes it", g->path, i,
                                 op->name, t->name);
        }
      for (size_t k = 0; k < op->n_out; k++)
        {
          Tensor *t = &g->t[op->out[k]];
          if (t->producer >= 0 || t->kind == K_INPUT || t->kind == K_WEIGHT)
            return ml_error_set (g->err, ML_EINPUT, "%s: op %zu (%s) writes \"%s\", which %s", g->path, i, op->name, t->name,
                                 t->producer >= 0 ? "another op already wrote" : "is a graph input or weight");
          t->producer = (long) i;
          t->alt = flat[fi].alt;
        }
      for (size_t k = 0; k < op->n_ip; k++)
        {
          g->t[op->ip_out[k]].root = g->t[op->ip_in[k]].root;
          Tensor *r = &g->t[g->t[op->ip_in[k]].root];
          if (g->t[op->ip_out[k]].bytes > r->bytes)
            r->bytes = g->t[op->ip_out[k]].bytes;
          if (g->t[op->ip_out[k]].kind == K_OUTPUT)
            r->kind = K_OUTPUT;
          if (g->t[op->ip_out[k]].fixed)
            return ml_error_set (g->err, ML_EINPUT, "%s: op %zu (%s): \"%s\" is written in place over \"%s\": fix the input, not the output",
                                 g->path, i, op->name, g->t[op->ip_out[k]].name, g->t[op->ip_in[k]].name);
          r->zero_copy |= g->t[op->ip_out[k]].zero_copy;
          r->no_reuse |= g->t[op->ip_out[k]].no_reuse;
          if (r->zero_copy && r->fixed)
            return ml_error_set (g->err, ML_EINPUT, "%s: op %zu (%s): \"%s\" is zero_copy but writes over the fixed \"%s\"",
                                 g->path, i, op->name, g->t[op->ip_out[k]].name, r->name);
        }
    }

  /* fixed tensors: aligned, apart from each other */
  uint64_t fixed_top = 0;
  for (size_t i = 0; i < g->nt; i++)
    {
      const Tensor *a = &g->t[i];
      if (!a->fixed)
        continue;
      if (a->fixed_at % g->align)
        return ml_error_set (g->err, ML_EINPUT, "%s: tensor \"%s\": fixed offset %" PRIu64 " is not a multiple of the alignment %" PRIu64,
                             g->path, a->name, a->fixed_at, g->align);
      if (g->exclude[a->kind])
        return ml_error_set (g->err, ML_EINPUT, "%s: tensor \"%s\" is fixed but its kind is excluded", g->path, a->name);
      uint64_t a_end = a->fixed_at + ml_align_up (a->bytes, g->align);
      if (a_end > fixed_top)
        fixed_top = a_end;
      for (size_t j = 0; j < i; j++)
        if (g->t[j].fixed && g->t[j].fixed_at < a_end && a->fixed_at < g->t[j].fixed_at + ml_align_up (g->t[j].bytes, g->align))
          return ml_error_set (g->err, ML_EINPUT, "%s: fixed tensors \"%s\" and \"%s\" overlap", g->path, g->t[j].name, a->name);
    }
  for (size_t k = 0; k < g->n_dims; k++)
    if (g->dim[k].from_opts && !g->dim[k].used)
      return ml_error_set (g->err, ML_EUSAGE, "%s: --dim %s: no tensor shape uses the dimension \"%s\"", g->path,
                           g->dim[k].name, g->dim[k].name);

  /* the order */
  size_t n = g->nops;
  uint32_t *order = calloc (n + 1, sizeof *order), *best = calloc (n + 1, sizeof *best);
  uint64_t *start = calloc (g->nt + 1, sizeof *start), *end = calloc (g->nt + 1, sizeof *end);
  uint64_t *scratch = calloc (2 * (n + 2), sizeof *scratch);
  uint32_t *by_end = NULL;
  size_t *rd_first = NULL, *rd_fill = NULL;   /* the readers of each tensor, */
  uint32_t *rd_pos = NULL;                    /* by position in the order    */
  MlTrace *tr = ml_trace_new ();
  if (!order || !best || !start || !end || !scratch || !tr)
    {
      rc = ml_error_set (g->err, ML_ENOMEM, "out of memory");
      goto out;
    }
  for (size_t i = 0; i < n; i++)
    order[i] = (uint32_t) i;
  uint64_t peak0 = lifetimes (g, order, start, end, scratch), peak1 = peak0;
  char note[256] = "";
  if (o.reorder)
    {
      const char *how = o.reorder == 2 ? "priority" : "memory";
      if ((rc = o.reorder == 2 ? priority_order (g, best) : memory_order (g, best)) < 0)
        {
          rc = ml_error_set (g->err, rc, "%s: the ops have a dependency cycle", g->path);
          goto out;
        }
      peak1 = lifetimes (g, best, start, end, scratch);
      if (peak1 < peak0)
        {
          memcpy (order, best, n * sizeof *order);
          snprintf (note, sizeof note, "reorder=%s: live peak %" PRIu64 " -> %" PRIu64 " bytes (-%.2f%%)", how, peak0, peak1,
                    100.0 * (double) (peak0 - peak1) / (double) peak0);
        }
      else
        snprintf (note, sizeof note, "reorder=%s: kept the given order (live peak %" PRIu64 "; the %s order needs %" PRIu64 ")",
                  how, peak0, o.reorder == 2 ? "memory-priority" : "memory-aware", peak1);
      lifetimes (g, order, start, end, scratch);
    }

  tr->source = ml_strtab_intern0 (tr->strings, "graph");
  tr->default_align = align;
  tr->zero_copy_align = g->zero_copy_align;
  tr->max_block = g->max_block;
  if ((rc = add_groups (g, root, tr)) < 0)
    goto out;
  static const uint16_t kind_flag[] = { ML_EVF_ACTIVATION, ML_EVF_INPUT, ML_EVF_OUTPUT, ML_EVF_WEIGHT };
  if (note[0] && (rc = emit (tr, ML_EV_MARK, 0, 0, 0, ml_strtab_intern0 (tr->strings, note), 0)) < 0)
    goto oom;
  /* pinned tensors are packed in declaration order from the end of the
   * fixed ones (0 when none) */
  uint64_t pin_at = fixed_top;
  for (size_t i = 0; i < g->nt; i++)
    if (g->t[i].root == i && start[i] == 0 && !g->exclude[g->t[i].kind])
      {
        uint16_t flags = ML_EVF_HAS_ID | kind_flag[g->t[i].kind] | constraint_flags (&g->t[i]);
        MlEvent ev = { .tick = 0, .id = i + 1, .size = g->t[i].bytes, .time_ns = -1,
                       .name = ml_strtab_intern0 (tr->strings, g->t[i].name), .kind = ML_EV_ALLOC, .flags = flags };
        if (g->t[i].fixed)
          {
            ev.flags |= ML_EVF_PINNED;
            ev.addr = g->t[i].fixed_at;
          }
        else if (g->pin[g->t[i].kind] && !g->t[i].zero_copy)
          {
            ev.flags |= ML_EVF_PINNED;
            ev.addr = pin_at;
            pin_at += ml_align_up (g->t[i].bytes, align);
          }
        if (!ml_trace_append (tr, &ev))
          goto oom;
      }
  /* the roots by end tick (stable), for the frees */
  size_t n_by_end = 0, next_end = 0;
  by_end = calloc (g->nt + 1, sizeof *by_end);
  if (!by_end)
    goto oom;
  for (size_t i = 0; i < g->nt; i++)
    if (g->t[i].root == i && start[i] != UINT64_MAX && end[i] <= n && !g->exclude[g->t[i].kind])
      by_end[n_by_end++] = (uint32_t) i;
  if (ml_sort_indexes_by_key (by_end, n_by_end, end, sizeof *end) < 0)
    goto oom;
  /* positions that read each tensor, ascending (CSR): an in-place write
   * finds its input's next and last readers by binary search instead of
   * scanning every later op (quadratic in a chain of in-place ops) */
  size_t n_reads = 0;
  for (size_t q = 0; q < n; q++)
    n_reads += g->ops[order[q]].n_in;
  rd_first = calloc (g->nt + 2, sizeof *rd_first);
  rd_fill = calloc (g->nt + 1, sizeof *rd_fill);
  rd_pos = calloc (n_reads + 1, sizeof *rd_pos);
  if (!rd_first || !rd_fill || !rd_pos)
    goto oom;
  for (size_t q = 0; q < n; q++)
    for (size_t j = 0; j < g->ops[order[q]].n_in; j++)
      rd_first[g->ops[order[q]].in[j] + 1]++;
  for (size_t t = 0; t < g->nt; t++)
    rd_first[t + 1] += rd_first[t];
  for (size_t q = 0; q < n; q++)
    for (size_t j = 0; j < g->ops[order[q]].n_in; j++)
      {
        uint32_t t = g->ops[order[q]].in[j];
        rd_pos[rd_first[t] + rd_fill[t]++] = (uint32_t) q;
      }
  for (size_t p = 0; p < n; p++)
    {
      uint64_t tick = p + 1;
      for (; next_end < n_by_end && end[by_end[next_end]] == tick; next_end++)
        if ((rc = emit (tr, ML_EV_FREE, tick, by_end[next_end] + 1, 0, 0, ML_EVF_HAS_ID)) < 0)
          goto oom;
      const Op *op = &g->ops[order[p]];
      for (size_t k = 0; k < op->n_out; k++)
        {
          uint32_t r = op->out[k];
          if (g->t[r].root != r || start[r] != tick || g->exclude[g->t[r].kind])
            continue;
          if ((rc = emit (tr, ML_EV_ALLOC, tick, r + 1, g->t[r].bytes, ml_strtab_intern0 (tr->strings, g->t[r].name),
                          ML_EVF_HAS_ID | kind_flag[g->t[r].kind] | constraint_flags (&g->t[r]))) < 0)
            goto oom;
        }
      /* in-place writes: recorded for ml_check_races(); a mark names
       * each hazard (the overwritten input is read by a later op) */
      for (size_t k = 0; k < op->n_ip; k++)
        {
          uint32_t victim = op->ip_in[k];
          uint64_t last_read = tick;
          const Op *reader = NULL;
          size_t lo = rd_first[victim], hi = rd_first[victim + 1], end_r = hi;
          while (lo < hi)   /* the first reading position after p */
            {
              size_t mid = lo + (hi - lo) / 2;
              if (rd_pos[mid] <= p)
                lo = mid + 1;
              else
                hi = mid;
            }
          if (lo < end_r)
            {
              reader = &g->ops[order[rd_pos[lo]]];
              last_read = (uint64_t) rd_pos[end_r - 1] + 1;
            }
          MlInplaceWrite w = { .op_tick = tick, .output_id = g->t[op->ip_out[k]].root + 1,
                               .input_id = g->t[victim].root + 1, .last_read = last_read,
                               .op_name = ml_strtab_intern0 (tr->strings, op->name) };
          if (g->exclude[g->t[g->t[victim].root].kind])
            continue;   /* the buffer is not in the trace */
          if (ml_trace_add_inplace (tr, &w) < 0)
            goto oom;
          if (reader)
            {
              char msg[400];
              snprintf (msg, sizeof msg, "in-place hazard: op \"%s\" writes \"%s\" over \"%s\", which op \"%s\" reads later",
                        op->name, g->t[op->ip_out[k]].name, g->t[victim].name, reader->name);
              if ((rc = emit (tr, ML_EV_MARK, tick, g->t[victim].root + 1, 0, ml_strtab_intern0 (tr->strings, msg),
                              ML_EVF_HAS_ID)) < 0)
                goto oom;
            }
        }
    }
  rc = 0;
  goto out;
oom:
  rc = ml_error_set (g->err, ML_ENOMEM, "out of memory");
out:
  free (order);
  free (best);
  free (start);
  free (end);
  free (scratch);
  free (by_end);
  free (rd_first);
  free (rd_fill);
  free (rd_pos);
  if (rc < 0)
    ml_trace_free (tr);
  else
    *out = tr;
  return rc;
}

int
ml_trace_from_graph (const cJSON *root, const char *name, const MlLoadOptions *opts, MlTrace **out, MlError *err)
{
  MlLoadOptions defaults;
  if (!opts)
    {
      ml_load_options_init (&defaults);
      opts = &defaults;
    }
  G g = { .path = name, .err = err };
  ml_u64map_init (&g.names);
  int rc = cJSON_IsObject (root) ? build (&g, root, opts, out)
                                 : ml_error_set (err, ML_EINPUT, "%s: a graph is a JSON object", name);
  for (size_t i = 0; g.ops && i < g.nops; i++)
    {
      free (g.ops[i].in);
      free (g.ops[i].out);
      free (g.ops[i].ip_in);
      free (g.ops[i].ip_out);
    }
  free (g.ops);
  free (g.t);
  ml_u64map_clear (&g.names);
  return rc;
}

int
ml_trace_load_graph (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err)
{
  cJSON *root;
  int rc = ml_json_read_file (path, (size_t) 1 << 32, &root, err);
  if (rc < 0)
    return rc;
  rc = ml_trace_from_graph (root, path, opts, out, err);
  cJSON_Delete (root);
  return rc;
}
