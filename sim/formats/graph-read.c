/* graph-read.c — reading a graph document (docs/formats.md, "Graph
 * JSON"): its settings and symbolic dimensions, the tensors, the ops in
 * the order they run with their reads, writes and in-place pairs, the
 * fixed tensors and the contiguous groups; every error names the file,
 * the tensor or op and the value. */
#include "sim/formats/graph-private.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jsonutil.h"
#include "sim/base/options.h"
#include "sim/base/units.h"

/* ---- names ---- */

static uint64_t
name_hash (const char *s)
{
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char) *s) * 1099511628211ull;
  return h;
}

long
_ml_graph_find_tensor (const MlGraph *g, const char *name)
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
name_list (MlGraph *g, const cJSON *arr, size_t op, const char *what, uint32_t **out, size_t *n)
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
      long ti = nm ? _ml_graph_find_tensor (g, nm) : -1;
      if (ti < 0)
        return ml_error_set (g->err, ML_EINPUT, "%s: op %zu (%s): %s \"%s\" is not a declared tensor", g->path, op,
                             g->ops[op].name, what, nm ? nm : "(not a string)");
      (*out)[(*n)++] = (uint32_t) ti;
    }
  return 0;
}

/* ---- settings and dimensions ---- */

static int
graph_option (void *user, const char *key, const char *value, MlError *err)
{
  MlGraph *g = user;
  if (strcmp (key, "reorder") == 0)
    {
      if (strcmp (value, "memory") == 0)
        g->reorder = ML_GRAPH_REORDER_MEMORY;
      else if (strcmp (value, "priority") == 0)
        g->reorder = ML_GRAPH_REORDER_PRIORITY;
      else if (strcmp (value, "none") == 0)
        g->reorder = ML_GRAPH_REORDER_NONE;
      else
        return ml_error_set (err, ML_EUSAGE, "graph option reorder=%s: use memory, priority or none", value);
    }
  else if (strcmp (key, "max_block") == 0)
    {
      if (ml_parse_size (value, &g->max_block, err) < 0 || g->max_block == 0)
        return ml_error_set (err, ML_EUSAGE, "graph option max_block=%s: a size of at least 1 byte, e.g. 400M", value);
    }
  else if (strcmp (key, "exclude") == 0 || strcmp (key, "pin") == 0)
    {
      bool *set = key[0] == 'e' ? g->exclude : g->pin;
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
bind_dim (MlGraph *g, const char *name, size_t len, uint64_t value, bool from_opts, const char *where)
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
read_dims (MlGraph *g, const cJSON *root, const char *opts)
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
shape_dim (MlGraph *g, const cJSON *d, const char *tensor, uint64_t *out)
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

int
_ml_graph_read_settings (MlGraph *g, const cJSON *root, const MlLoadOptions *opts)
{
  uint64_t align = ML_TRACE_ALIGN, zc_align = 0;
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
  if ((rc = ml_options_foreach (opts->graph_options, graph_option, g, g->err)) < 0)
    return rc;
  return read_dims (g, root, opts->dims);
}

/* ---- the ops, in the order they run ---- */

int
_ml_graph_flatten_ops (MlGraph *g, const cJSON *ops)
{
  /* each branch's alternatives one after the other right after the
   * branch op (the worst case: see graph.h) */
  size_t n_flat = 0;
  const cJSON *it;
  cJSON_ArrayForEach (it, ops)
    {
      n_flat++;
      const cJSON *br = cJSON_GetObjectItemCaseSensitive (it, "branch"), *alt, *aop;
      cJSON_ArrayForEach (alt, br)
        cJSON_ArrayForEach (aop, alt)
          n_flat++;
    }
  MlGraphFlat *flat = g->flat = calloc (n_flat + 1, sizeof *flat);
  g->ops = calloc (n_flat + 1, sizeof *g->ops);
  if (!g->t || !g->ops || !flat)
    return ml_error_set (g->err, ML_ENOMEM, "out of memory");
  n_flat = 0;
  uint32_t n_alts = 0;
  cJSON_ArrayForEach (it, ops)
    {
      size_t parent = n_flat;
      flat[n_flat++] = (MlGraphFlat) { it, 0, SIZE_MAX };
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
              flat[n_flat++] = (MlGraphFlat) { aop, n_alts, parent };
            }
        }
    }
  g->n_flat = n_flat;
  return 0;
}

/* ---- the tensors ---- */

/* The bytes of tensor @t: "bytes", or its "shape" times its dtype's size. */
static int
tensor_bytes (MlGraph *g, const cJSON *it, const MlGraphTensor *t, uint64_t *out)
{
  const char *dtype = ml_json_str (it, "dtype");
  unsigned dsize = ml_dtype_size (dtype);
  uint64_t bytes;
  int rc;
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
  *out = bytes;
  return 0;
}

static int
tensor_kind (MlGraph *g, const cJSON *it, MlGraphTensor *t)
{
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
  return 0;
}

/* Tensor @i of "tensors": its name, bytes, kind and constraints. */
static int
read_tensor (MlGraph *g, const cJSON *it, size_t i)
{
  MlGraphTensor *t = &g->t[i];
  int rc;
  t->name = ml_json_str (it, "name");
  if (!t->name || !*t->name)
    return ml_error_set (g->err, ML_EINPUT, "%s: tensor %zu has no \"name\"", g->path, i);
  if (_ml_graph_find_tensor (g, t->name) >= 0)
    return ml_error_set (g->err, ML_EINPUT, "%s: tensor \"%s\" is declared twice", g->path, t->name);
  if ((rc = tensor_bytes (g, it, t, &t->bytes)) < 0 || (rc = tensor_kind (g, it, t)) < 0)
    return rc;
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
  return 0;
}

int
_ml_graph_read_tensors (MlGraph *g, const cJSON *tensors)
{
  const cJSON *it;
  int rc;
  cJSON_ArrayForEach (it, tensors)
    {
      if ((rc = read_tensor (g, it, g->nt)) < 0)
        return rc;
      g->nt++;
    }
  return 0;
}

/* ---- the ops ---- */

/* An alternative writes the branch op's outputs (each its own write of
 * them): they exist since the branch op, so for the lifetimes it is a
 * read. */
static int
alternative_writes (MlGraph *g, MlGraphOp *op, const MlGraphOp *parent)
{
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
  return 0;
}

/* "inplace": [[input, output], ...] of op @i. */
static int
read_inplace (MlGraph *g, const cJSON *it, MlGraphOp *op, size_t i)
{
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
      long ta = a ? _ml_graph_find_tensor (g, a) : -1, tb = b ? _ml_graph_find_tensor (g, b) : -1;
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
  return 0;
}

/* Op @i reads only what exists (written before, in its own alternative,
 * or a graph input or weight) and writes what nothing wrote yet: it
 * becomes the producer of its outputs. */
static int
check_reads_writes (MlGraph *g, const MlGraphOp *op, size_t i, uint32_t alt)
{
  for (size_t k = 0; k < op->n_in; k++)
    {
      const MlGraphTensor *t = &g->t[op->in[k]];
      if (t->producer < 0 && t->kind != K_INPUT && t->kind != K_WEIGHT)
        return ml_error_set (g->err, ML_EINPUT, "%s: op %zu (%s) reads \"%s\" before any op writes it", g->path, i,
                             op->name, t->name);
    }
  for (size_t k = 0; k < op->n_out; k++)
    {
      MlGraphTensor *t = &g->t[op->out[k]];
      if (t->producer >= 0 || t->kind == K_INPUT || t->kind == K_WEIGHT)
        return ml_error_set (g->err, ML_EINPUT, "%s: op %zu (%s) writes \"%s\", which %s", g->path, i, op->name, t->name,
                             t->producer >= 0 ? "another op already wrote" : "is a graph input or weight");
      t->producer = (long) i;
      t->alt = alt;
    }
  return 0;
}

/* Each in-place output of op @i lives in its input's buffer (the root):
 * the root takes the larger size, the output kind and the constraints. */
static int
join_inplace (MlGraph *g, const MlGraphOp *op, size_t i)
{
  for (size_t k = 0; k < op->n_ip; k++)
    {
      MlGraphTensor *out = &g->t[op->ip_out[k]];
      out->root = g->t[op->ip_in[k]].root;
      MlGraphTensor *r = &g->t[g->t[op->ip_in[k]].root];
      if (out->bytes > r->bytes)
        r->bytes = out->bytes;
      if (out->kind == K_OUTPUT)
        r->kind = K_OUTPUT;
      if (out->fixed)
        return ml_error_set (g->err, ML_EINPUT, "%s: op %zu (%s): \"%s\" is written in place over \"%s\": fix the input, not the output",
                             g->path, i, op->name, out->name, g->t[op->ip_in[k]].name);
      r->zero_copy |= out->zero_copy;
      r->no_reuse |= out->no_reuse;
      if (r->zero_copy && r->fixed)
        return ml_error_set (g->err, ML_EINPUT, "%s: op %zu (%s): \"%s\" is zero_copy but writes over the fixed \"%s\"",
                             g->path, i, op->name, out->name, r->name);
    }
  return 0;
}

static int
read_op (MlGraph *g, const MlGraphFlat *f)
{
  const cJSON *it = f->op;
  size_t i = g->nops;
  MlGraphOp *op = &g->ops[i];
  int rc;
  op->name = ml_json_str (it, "name");
  if (!op->name)
    op->name = "(unnamed)";
  g->nops++;
  if ((rc = name_list (g, cJSON_GetObjectItemCaseSensitive (it, "inputs"), i, "input", &op->in, &op->n_in)) < 0
      || (rc = name_list (g, cJSON_GetObjectItemCaseSensitive (it, "outputs"), i, "output", &op->out, &op->n_out)) < 0)
    return rc;
  if (f->alt && (rc = alternative_writes (g, op, &g->ops[f->parent])) < 0)
    return rc;
  for (size_t k = 0; k < op->n_in; k++)
    {
      const MlGraphTensor *t = &g->t[op->in[k]];
      if (t->alt && t->alt != f->alt)
        return ml_error_set (g->err, ML_EINPUT, "%s: op %zu (%s) reads \"%s\", which only branch alternative %u writes",
                             g->path, i, op->name, t->name, t->alt);
    }
  if ((rc = read_inplace (g, it, op, i)) < 0 || (rc = check_reads_writes (g, op, i, f->alt)) < 0)
    return rc;
  return join_inplace (g, op, i);
}

int
_ml_graph_read_ops (MlGraph *g)
{
  int rc;
  for (size_t fi = 0; fi < g->n_flat; fi++)
    if ((rc = read_op (g, &g->flat[fi])) < 0)
      return rc;
  return 0;
}

/* ---- after the ops ---- */

int
_ml_graph_check_fixed (MlGraph *g, uint64_t *top)
{
  /* fixed tensors: aligned, apart from each other */
  uint64_t fixed_top = 0;
  for (size_t i = 0; i < g->nt; i++)
    {
      const MlGraphTensor *a = &g->t[i];
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
  *top = fixed_top;
  return 0;
}

/* "contiguous": [["a","b"],...]: each group's tensors (their buffers) back
 * to back, in order. */
int
_ml_graph_add_groups (MlGraph *g, const cJSON *root, MlTrace *tr)
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
          long ti = nm ? _ml_graph_find_tensor (g, nm) : -1;
          if (ti < 0)
            {
              rc = ml_error_set (g->err, ML_EINPUT, "%s: contiguous group %zu: \"%s\" is not a declared tensor", g->path, gi,
                                 nm ? nm : "(not a string)");
              break;
            }
          const MlGraphTensor *t = &g->t[g->t[ti].root];
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
