/* pickle.c — the pickle document: the arena its values live in, and
 * parsing (the machine in pickle-vm.c, its opcodes in pickle-ops.c). */
#include "sim/formats/pickle-private.h"

#include <stdlib.h>

/* Every value, string and item array lives in an arena of CHUNK_BYTES
 * chunks; see MlPkArena. */
#define CHUNK_BYTES ((size_t) 1 << 20)

static MlPkValue none_value = { .kind = ML_PK_NONE };

static void
chunks_free (MlPkChunk *c)
{
  for (MlPkChunk *next; c; c = next)
    {
      next = c->next;
      free (c);
    }
}

static void
arena_free (MlPkArena *a)
{
  chunks_free (a->chunks);
  chunks_free (a->spare);
  a->chunks = a->spare = NULL;
}

/* Empties @a; its chunks of the usual size stay for the next round (a
 * streamed batch needs the same again: no malloc, no page faults). */
void
_ml_pk_arena_reset (MlPkArena *a)
{
  for (MlPkChunk *c = a->chunks, *next; c; c = next)
    {
      next = c->next;
      if (c->cap == a->chunk)
        {
          c->used = 0;
          c->next = a->spare;
          a->spare = c;
        }
      else
        free (c);
    }
  a->chunks = NULL;
}

void *
_ml_pk_arena (MlPkArena *a, size_t n)
{
  n = (n + 15) & ~(size_t) 15;
  MlPkChunk *c = a->chunks;
  if (c && c->cap - c->used >= n)
    {
      void *p = (unsigned char *) c->data + c->used;
      c->used += n;
      return p;
    }
  size_t usual = a->chunk ? a->chunk : CHUNK_BYTES;
  size_t cap = n > usual / 4 ? n : usual;
  MlPkChunk *fresh;
  if (cap == usual && a->spare)
    {
      fresh = a->spare;
      a->spare = fresh->next;
    }
  else if (!(fresh = malloc (sizeof *fresh + cap)))
    return NULL;
  fresh->used = n;
  fresh->cap = cap;
  if (cap == n && c)
    {
      /* a big piece: its own chunk, behind the one being filled */
      fresh->next = c->next;
      c->next = fresh;
    }
  else
    {
      fresh->next = c;
      a->chunks = fresh;
    }
  return fresh->data;
}

void
ml_pk_free (MlPkDoc *doc)
{
  if (!doc)
    return;
  arena_free (&doc->arena);
  free (doc);
}

MlPkValue *
ml_pk_root (const MlPkDoc *doc)
{
  return doc->root ? doc->root : &none_value;
}

int
ml_pk_parse_stream (const unsigned char *data, size_t len, const MlPkStream *stream, MlPkDoc **out, MlError *err)
{
  MlPkDoc *doc = calloc (1, sizeof *doc);
  if (!doc)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  MlPkVm vm = { .p = data, .end = data + len, .base = data, .doc = doc, .err = err, .stream = stream,
                .key_len = stream && stream->key ? strlen (stream->key) : 0 };
  if (stream && (!stream->key || !stream->item))
    vm.stream = NULL;
  ml_u64map_init (&vm.sparse);
  ml_u64map_init (&vm.collapsed);
  /* a value takes up to ~30 times its opcode's bytes */
  size_t chunk = 16 << 10;
  while (chunk < CHUNK_BYTES && chunk < len * 8)
    chunk *= 2;
  doc->arena.chunk = vm.scratch.chunk = chunk;
  int rc = len ? _ml_pk_run (&vm) : ml_error_set (err, ML_EINPUT, "empty pickle");
  free (vm.stack);
  free (vm.marks);
  free (vm.memo);
  free (vm.sparse_vals);
  free (vm.mlog);
  arena_free (&vm.scratch);
  ml_u64map_clear (&vm.sparse);
  ml_u64map_clear (&vm.collapsed);
  free (vm.collapsed_vals);
  if (rc < 0)
    {
      ml_pk_free (doc);
      return rc;
    }
  *out = doc;
  return 0;
}

int
ml_pk_parse (const unsigned char *data, size_t len, MlPkDoc **out, MlError *err)
{
  return ml_pk_parse_stream (data, len, NULL, out, err);
}
