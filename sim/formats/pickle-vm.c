/* pickle-vm.c — the pickle machine's state: values, the stack and its
 * marks, the memo, containers and their items, and the scratch of a
 * streamed list (values built for its items, gone once they were handed
 * over, except what the memo still holds: that moves to the document). */
#include "sim/formats/pickle-private.h"

#include <inttypes.h>
#include <stdlib.h>

MlPkValue _ml_pk_streamed = { .kind = ML_PK_NONE };

MlPkValue *
_ml_pk_new_value (MlPkVm *vm, MlPkKind kind)
{
  bool scratch = _ml_pk_in_stream (vm);
  MlPkValue *v = _ml_pk_arena (scratch ? &vm->scratch : &vm->doc->arena, sizeof *v);
  if (!v)
    return NULL;
  memset (v, 0, sizeof *v);
  v->kind = kind;
  v->flags = scratch ? F_SCRATCH : 0;
  return v;
}

/* The copy of a promoted scratch value: strings keep it in .items,
 * everything else in .s (fields those kinds do not use). */
static MlPkValue *
fwd_get (const MlPkValue *v)
{
  return v->kind == ML_PK_STR || v->kind == ML_PK_BYTES ? (MlPkValue *) v->items : (MlPkValue *) v->s;
}

static void
fwd_set (MlPkValue *v, MlPkValue *copy)
{
  if (v->kind == ML_PK_STR || v->kind == ML_PK_BYTES)
    v->items = (MlPkValue **) copy;
  else
    v->s = (char *) copy;
  v->flags |= F_FWD;
}

/* The document's value for the container (or retired string) @v the
 * consumer has tagged: one per kind and tag, kept without items or text;
 * NULL when out of memory. */
static MlPkValue *
collapsed (MlPkVm *vm, const MlPkValue *v)
{
  uint64_t key = (uint64_t) v->kind << 32 | v->tag;
  uint32_t at;
  if (ml_u64map_get (&vm->collapsed, key, &at))
    return vm->collapsed_vals[at];
  MlPkValue *c = _ml_pk_arena (&vm->doc->arena, sizeof *c);
  if (!c || vm->n_collapsed >= UINT32_MAX - 1)
    return NULL;
  *c = (MlPkValue) { .kind = v->kind, .depth = v->depth, .flags = F_COLLAPSED, .tag = v->tag, .s = (char *) "" };
  if (vm->n_collapsed == vm->cap_collapsed)
    {
      size_t cap = vm->cap_collapsed ? vm->cap_collapsed * 2 : 64;
      MlPkValue **p = realloc (vm->collapsed_vals, cap * sizeof *p);
      if (!p)
        return NULL;
      vm->collapsed_vals = p;
      vm->cap_collapsed = cap;
    }
  if (ml_u64map_put (&vm->collapsed, key, (uint32_t) vm->n_collapsed) < 0)
    return NULL;
  vm->collapsed_vals[vm->n_collapsed++] = c;
  return c;
}

/* @v in the document: itself when it is there, else a copy of it (made
 * once: the copy is remembered) with its items promoted in turn. A
 * container the consumer has tagged is kept without its items: it has
 * read them, and knows it by its tag; one such value per kind and tag. */
static MlPkValue *
promote_at (MlPkVm *vm, MlPkValue *v, unsigned depth)
{
  if (!(v->flags & F_SCRATCH))
    return v;
  if (v->flags & F_FWD)
    return fwd_get (v);
  if (depth > ML_PK_MAX_DEPTH)
    {
      ml_error_set (vm->err, ML_EINPUT, "byte %zu: containers nested deeper than 256", vm->op_at);
      return NULL;
    }
  MlPkDoc *doc = vm->doc;
  bool container = v->kind == ML_PK_LIST || v->kind == ML_PK_TUPLE || v->kind == ML_PK_DICT;
  if ((container || (v->flags & F_RETIRE)) && v->tag)
    {
      MlPkValue *c = collapsed (vm, v);
      if (!c)
        goto oom;
      fwd_set (v, c);
      return c;
    }
  MlPkValue *c = _ml_pk_arena (&doc->arena, sizeof *c);
  if (!c)
    goto oom;
  *c = *v;
  c->flags &= (uint16_t) ~(F_SCRATCH | F_HANDED);
  if (v->kind == ML_PK_STR || v->kind == ML_PK_BYTES)
    {
      if (!(c->s = _ml_pk_arena (&doc->arena, v->len + 1)))
        goto oom;
      memcpy (c->s, v->s, v->len + 1);
      c->items = NULL;
    }
  else
    {
      c->s = NULL;
      c->items = NULL;
      c->cap = 0;
      if (container && v->n)
        {
          /* the copy is made before its items so that a cycle ends */
          fwd_set (v, c);
          MlPkValue **it = _ml_pk_arena (&doc->arena, v->n * sizeof *it);
          if (!it)
            goto oom;
          for (size_t k = 0; k < v->n; k++)
            if (!(it[k] = promote_at (vm, v->items[k], depth + 1)))
              return NULL;
          c->items = it;
          c->cap = v->n;
          return c;
        }
    }
  fwd_set (v, c);
  return c;
oom:
  ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  return NULL;
}

MlPkValue *
_ml_pk_promote (MlPkVm *vm, MlPkValue *v)
{
  return promote_at (vm, v, 0);
}

/* Room in @c for @more items (one allocation for a whole APPENDS batch). */
static int
reserve (MlPkVm *vm, MlPkValue *c, size_t more)
{
  if (c->cap - c->n >= more)
    return 0;
  if (c->n + more >= (uint32_t) 1 << 31)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory for a container of 2^31 items");
  uint32_t cap = c->cap ? c->cap * 2 : 4;
  if (cap < c->n + more)
    cap = (uint32_t) (c->n + more);
  MlPkValue **it = _ml_pk_arena (c->flags & F_SCRATCH ? &vm->scratch : &vm->doc->arena, cap * sizeof *it);
  if (!it)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  if (c->n)
    memcpy (it, c->items, c->n * sizeof *it);
  c->items = it;
  c->cap = cap;
  return 0;
}

static int
push_item (MlPkVm *vm, MlPkValue *c, MlPkValue *item)
{
  bool scratch = c->flags & F_SCRATCH;
  if (!scratch && (item->flags & F_SCRATCH) && !(item = _ml_pk_promote (vm, item)))
    return vm->err ? vm->err->code : ML_ENOMEM;   /* the error is set */
  if (c->n == c->cap)
    {
      if (c->cap >= (uint32_t) 1 << 31)
        return ml_error_set (vm->err, ML_ENOMEM, "out of memory for a container of 2^31 items");
      uint32_t cap = c->cap ? c->cap * 2 : 4;
      MlPkValue **it = _ml_pk_arena (scratch ? &vm->scratch : &vm->doc->arena, cap * sizeof *it);
      if (!it)
        return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
      if (c->n)
        memcpy (it, c->items, c->n * sizeof *it);
      c->items = it;
      c->cap = cap;
    }
  c->items[c->n++] = item;
  return 0;
}
int
_ml_pk_fail (MlPkVm *vm, const char *what)
{
  return ml_error_set (vm->err, ML_EINPUT, "byte %zu: opcode 0x%02x: %s", vm->op_at, vm->op, what);
}

int
_ml_pk_truncated (MlPkVm *vm, size_t n)
{
  return ml_error_set (vm->err, ML_EINPUT, "byte %zu: opcode 0x%02x needs %zu bytes, %zu left (truncated file?)",
                       vm->op_at, vm->op, n, (size_t) (vm->end - vm->p));
}

int
_ml_pk_push_grow (MlPkVm *vm, MlPkValue *v)
{
  if (!v)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  if (vm->sp == vm->cap)
    {
      if (vm->cap >= MAX_STACK)
        return _ml_pk_fail (vm, "stack deeper than 16M entries");
      size_t cap = vm->cap ? vm->cap * 2 : 64;
      MlPkValue **s = realloc (vm->stack, cap * sizeof *s);
      if (!s)
        return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
      vm->stack = s;
      vm->cap = cap;
    }
  vm->stack[vm->sp++] = v;
  return 0;
}

/* The height of the topmost mark, or an error. */
int
_ml_pk_pop_mark (MlPkVm *vm, size_t *height)
{
  if (!vm->n_marks)
    return _ml_pk_fail (vm, "no MARK on the stack");
  *height = vm->marks[--vm->n_marks];
  if (*height > vm->sp)
    return _ml_pk_fail (vm, "MARK above the stack top");
  return 0;
}

int
_ml_pk_memo_put (MlPkVm *vm, uint64_t idx, MlPkValue *v)
{
  if (!v)
    return _ml_pk_fail (vm, "memoising an empty stack");
  if (v->flags & F_SCRATCH)
    {
      /* to be promoted (or dropped, for a streamed item) with the scratch */
      if (vm->n_mlog == vm->cap_mlog)
        {
          size_t cap = vm->cap_mlog ? vm->cap_mlog * 2 : 1024;
          uint64_t *m = realloc (vm->mlog, cap * sizeof *m);
          if (!m)
            return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
          vm->mlog = m;
          vm->cap_mlog = cap;
        }
      vm->mlog[vm->n_mlog++] = idx;
    }
  if (idx < vm->n_memo)
    {
      vm->memo[idx] = v;
      return 0;
    }
  if (idx == vm->n_memo)
    {
      if (vm->n_memo == vm->cap_memo)
        {
          size_t cap = vm->cap_memo ? vm->cap_memo * 2 : 256;
          MlPkValue **m = realloc (vm->memo, cap * sizeof *m);
          if (!m)
            return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
          vm->memo = m;
          vm->cap_memo = cap;
        }
      vm->memo[vm->n_memo++] = v;
      return 0;
    }
  /* sparse index: the map gives a slot in sparse_vals */
  uint32_t slot;
  if (ml_u64map_get (&vm->sparse, idx, &slot))
    {
      vm->sparse_vals[slot] = v;
      return 0;
    }
  if (vm->n_sparse == vm->cap_sparse)
    {
      size_t cap = vm->cap_sparse ? vm->cap_sparse * 2 : 16;
      MlPkValue **m = cap < UINT32_MAX ? realloc (vm->sparse_vals, cap * sizeof *m) : NULL;
      if (!m)
        return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
      vm->sparse_vals = m;
      vm->cap_sparse = cap;
    }
  vm->sparse_vals[vm->n_sparse] = v;
  if (ml_u64map_put (&vm->sparse, idx, (uint32_t) vm->n_sparse++) < 0)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  return 0;
}

static MlPkValue **
memo_slot (MlPkVm *vm, uint64_t idx)
{
  if (idx < vm->n_memo)
    return &vm->memo[idx];
  uint32_t slot;
  if (ml_u64map_get (&vm->sparse, idx, &slot))
    return &vm->sparse_vals[slot];
  return NULL;
}

/* A value for the memo word @w (_ml_pk_enc_p): its kind and tag, no
 * items, no text; in the scratch inside a streamed list (gone with it),
 * else the document's one for that kind and tag. */
static MlPkValue *
decode (MlPkVm *vm, const MlPkValue *w)
{
  uint64_t bits = (uint64_t) (uintptr_t) w;
  MlPkValue k = { .kind = (MlPkKind) ((bits >> 1) & 127), .tag = (uint32_t) (bits >> 8), .flags = F_RETIRE };
  if (!_ml_pk_in_stream (vm))
    return collapsed (vm, &k);
  MlPkValue *v = _ml_pk_new_value (vm, k.kind);
  if (v)
    {
      v->tag = k.tag;
      v->flags |= F_COLLAPSED;
      v->s = (char *) "";
    }
  return v;
}

void
ml_pk_retire (MlPkValue *v)
{
  if (v && (v->kind == ML_PK_STR || v->kind == ML_PK_BYTES) && (v->flags & F_SCRATCH) && !(v->flags & F_FWD))
    v->flags |= F_RETIRE;
}

int
_ml_pk_memo_get (MlPkVm *vm, uint64_t idx)
{
  MlPkValue *m = idx < vm->n_memo ? vm->memo[idx] : NULL;
  if (m && m != &_ml_pk_streamed && !_ml_pk_enc_p (m))
    return _ml_pk_push (vm, m);
  MlPkValue **v = memo_slot (vm, idx);
  if (!v)
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: memo reference %" PRIu64 " was never stored", vm->op_at, idx);
  if (*v == &_ml_pk_streamed)
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: memo reference %" PRIu64 " is an item of a streamed list, "
                         "which is not kept", vm->op_at, idx);
  if (_ml_pk_enc_p (*v))
    {
      MlPkValue *d = decode (vm, *v);
      return d ? _ml_pk_push (vm, d) : ml_error_set (vm->err, ML_ENOMEM, "out of memory");
    }
  return _ml_pk_push (vm, *v);
}

/* After the items above the streamed list went to the callback: what the
 * memo holds of the scratch moves to the document, the items handed over
 * are forgotten, and the scratch is emptied. */
static int
scratch_reset (MlPkVm *vm)
{
  for (size_t k = 0; k < vm->n_mlog; k++)
    {
      MlPkValue **slot = memo_slot (vm, vm->mlog[k]);
      if (!slot || _ml_pk_enc_p (*slot) || !((*slot)->flags & F_SCRATCH))
        continue;
      MlPkValue *v = *slot;
      bool container = v->kind == ML_PK_LIST || v->kind == ML_PK_TUPLE || v->kind == ML_PK_DICT;
      if (v->flags & F_HANDED)
        *slot = &_ml_pk_streamed;
      else if (v->tag && (container || (v->flags & F_RETIRE)) && !(v->flags & F_FWD) && v->kind < 128)
        *slot = (MlPkValue *) (uintptr_t) ((uint64_t) v->tag << 8 | (uint64_t) v->kind << 1 | 1);   /* read for good: its tag */
      else if (!(*slot = _ml_pk_promote (vm, *slot)))
        return vm->err ? vm->err->code : ML_ENOMEM;
    }
  vm->n_mlog = 0;
  _ml_pk_arena_reset (&vm->scratch);
  return 0;
}

/* Where a value pushed now at stack position @pos will go: the container
 * and, for a dict, the key. The pickler writes a container, MARK, its
 * items, APPENDS / SETITEMS (or one item and APPEND / SETITEM). */
static MlPkValue *
parent_of (const MlPkVm *vm, size_t pos, const MlPkValue **key)
{
  *key = NULL;
  if (vm->n_marks)
    {
      size_t m = vm->marks[vm->n_marks - 1];
      MlPkValue *c = m ? vm->stack[m - 1] : NULL;
      if (c && c->kind == ML_PK_LIST)
        return c;
      if (c && c->kind == ML_PK_DICT && (pos - m) % 2 == 1 && vm->stack[pos - 1]->kind == ML_PK_STR)
        {
          *key = vm->stack[pos - 1];
          return c;
        }
    }
  if (pos >= 1 && vm->stack[pos - 1]->kind == ML_PK_LIST)
    return vm->stack[pos - 1];
  if (pos >= 2 && vm->stack[pos - 2]->kind == ML_PK_DICT && vm->stack[pos - 1]->kind == ML_PK_STR)
    {
      *key = vm->stack[pos - 1];
      return vm->stack[pos - 2];
    }
  return NULL;
}

/* A new empty list: is it root[key], or a list inside it (streamed)? */
void
_ml_pk_mark_stream_list (MlPkVm *vm, MlPkValue *l)
{
  if (!vm->stream || _ml_pk_in_stream (vm))
    return;
  const MlPkValue *key;
  MlPkValue *parent = parent_of (vm, vm->sp, &key);
  if (!parent)
    return;
  if (key && vm->sp >= 2 && parent == vm->stack[0] && key->len == vm->key_len
      && memcmp (key->s, vm->stream->key, vm->key_len) == 0)
    l->flags |= F_DTLIST;
  else if (!key && (parent->flags & F_DTLIST))
    {
      l->flags |= F_STREAMED;
      size_t m = vm->n_marks ? vm->marks[vm->n_marks - 1] : 0;
      l->i = (int64_t) (parent->n + (m >= 1 && vm->stack[m - 1] == parent ? vm->sp - m : 0));
      vm->slist = l;
      vm->spos = vm->sp;
    }
}
int
_ml_pk_build_seq (MlPkVm *vm, MlPkKind kind, size_t from)
{
  if (kind == ML_PK_DICT && (vm->sp - from) % 2)
    return _ml_pk_fail (vm, "odd number of dict items");
  MlPkValue *t = _ml_pk_new_value (vm, kind);
  if (!t)
    return ml_error_set (vm->err, ML_ENOMEM, "out of memory");
  uint32_t depth = 0;
  int rc0 = reserve (vm, t, vm->sp - from);
  if (rc0 < 0)
    return rc0;
  for (size_t k = from; k < vm->sp; k++)
    {
      if (vm->stack[k]->kind == ML_PK__MARK)
        return _ml_pk_fail (vm, "a MARK inside the items");
      if (vm->stack[k]->depth + 1u > depth)
        depth = vm->stack[k]->depth + 1u;
      int rc = push_item (vm, t, vm->stack[k]);
      if (rc < 0)
        return rc;
    }
  if (depth > ML_PK_MAX_DEPTH)
    return _ml_pk_fail (vm, "containers nested deeper than " "256");
  t->depth = (uint16_t) depth;
  vm->sp = from;
  return _ml_pk_push (vm, t);
}

/* A tuple added to root[key] is a device trace as a list is (Python
 * reads both alike), built whole on the stack before TUPLE: its items go
 * to the callback as a streamed list's do, as list @list, and it stays in
 * the document empty, so the consumer sees every device trace the same
 * way. (Its items may be scratch, built above a streamed list; kept in
 * the tuple they went with the scratch before the consumer read them:
 * found by fuzz-snapshot-gen.) */
static int
stream_tuple (MlPkVm *vm, MlPkValue *t, size_t list)
{
  for (size_t k = 0; k < t->n; k++)
    {
      MlPkValue *it = t->items[k];
      if (it->flags & F_SCRATCH)
        it->flags |= F_HANDED;
      int rc = vm->stream->item (vm->stream->user, list, k, it);
      if (rc < 0)
        return rc;
    }
  t->n = 0;
  return 0;
}

/* Adds stack[from .. sp) to the container below them. */
int
_ml_pk_add_items (MlPkVm *vm, size_t from, bool dict)
{
  if (from == 0)
    return _ml_pk_fail (vm, "no container under the items");
  MlPkValue *c = vm->stack[from - 1];
  if (dict ? c->kind != ML_PK_DICT : c->kind != ML_PK_LIST)
    return ml_error_set (vm->err, ML_EINPUT, "byte %zu: opcode 0x%02x: adding items to a %s", vm->op_at, vm->op,
                         ml_pk_kind_name (c->kind));
  if (dict && (vm->sp - from) % 2)
    return _ml_pk_fail (vm, "odd number of dict items");
  if (c->flags & F_COLLAPSED)
    return _ml_pk_fail (vm, "items added to a container read already (a memo reference to it)");
  if (c->flags & F_STREAMED)
    {
      for (size_t k = from; k < vm->sp; k++)
        {
          MlPkValue *it = vm->stack[k];
          if (it->kind == ML_PK__MARK)
            return _ml_pk_fail (vm, "a MARK inside the items");
          if (it->flags & F_SCRATCH)
            it->flags |= F_HANDED;
          int rc = vm->stream->item (vm->stream->user, (size_t) c->i, c->len++, it);
          if (rc < 0)
            return rc;
        }
      vm->sp = from;
      return c == vm->slist && from == vm->spos + 1 && vm->sp == from ? scratch_reset (vm) : 0;
    }
  int rc = reserve (vm, c, vm->sp - from);
  if (rc < 0)
    return rc;
  if (c->flags & F_DTLIST)
    for (size_t k = from; k < vm->sp; k++)
      if (vm->stack[k]->kind == ML_PK_TUPLE && vm->stack[k]->n
          && (rc = stream_tuple (vm, vm->stack[k], c->n + (k - from))) < 0)
        return rc;
  /* locals: the stores into items cannot then alias the loop's state */
  unsigned depth = c->depth, deepest = 0;
  bool into_doc = !(c->flags & F_SCRATCH), marks = false, self = false;
  MlPkValue **stack = vm->stack, **items = c->items;
  size_t sp = vm->sp, n = c->n;
  for (size_t k = from; k < sp; k++)
    {
      MlPkValue *it = stack[k];
      marks |= it->kind == ML_PK__MARK;
      self |= it == c;
      deepest = it->depth > deepest ? it->depth : deepest;
      if (into_doc && (it->flags & F_SCRATCH))
        {
          if (marks || self)
            break;
          if (!(it = _ml_pk_promote (vm, it)))
            return vm->err ? vm->err->code : ML_ENOMEM;
        }
      items[n++] = it;   /* room reserved above */
    }
  if (marks)
    return _ml_pk_fail (vm, "a MARK inside the items");
  if (self)
    return _ml_pk_fail (vm, "a container inside itself");
  if (deepest + 1u > ML_PK_MAX_DEPTH)
    return _ml_pk_fail (vm, "containers nested deeper than 256");
  c->n = (uint32_t) n;
  if (sp > from && deepest + 1u > depth)
    c->depth = (uint16_t) (deepest + 1u);
  vm->sp = from;
  return 0;
}
