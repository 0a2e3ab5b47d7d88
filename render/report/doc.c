/* doc.c — building a document (see doc.h): its arena, blocks, tables and
 * data. */
#include "render/report/doc.h"

#include "sim/base/io.h"
#include "sim/base/utf8.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- the arena: chunks that only grow, freed together -------------------- */

typedef struct MlDocChunk {
  struct MlDocChunk *next;
  size_t          used, cap;
  max_align_t     data[];
} MlDocChunk;

struct MlDocArena {
  MlDocChunk *chunks;
};

enum { CHUNK_BYTES = 16384 };

/* @n zeroed bytes from @doc's arena, or NULL (and the document failed). */
static void *
doc_alloc (MlDoc *doc, size_t n)
{
  if (doc->failed)
    return NULL;
  size_t a = sizeof (max_align_t);
  n = (n + a - 1) / a * a;
  MlDocChunk *c = doc->arena->chunks;
  if (!c || c->cap - c->used < n)
    {
      size_t cap = n > CHUNK_BYTES ? n : CHUNK_BYTES;
      c = calloc (1, sizeof *c + cap);
      if (!c)
        {
          doc->failed = true;
          return NULL;
        }
      c->cap = cap;
      c->next = doc->arena->chunks;
      doc->arena->chunks = c;
    }
  void *p = (char *) c->data + c->used;
  c->used += n;
  return p;
}

MlDocSeries *
ml_doc_figure_series (MlDoc *doc, MlDocFigure *f, size_t n)
{
  MlDocSeries *s = n ? doc_alloc (doc, n * sizeof *s) : NULL;
  f->series = s;
  f->n_series = s ? n : 0;
  return s;
}

MlDocRankBar *
ml_doc_figure_ranks (MlDoc *doc, MlDocFigure *f, size_t n)
{
  MlDocRankBar *r = n ? doc_alloc (doc, n * sizeof *r) : NULL;
  f->ranks = r;
  f->n_ranks = r ? n : 0;
  return r;
}

MlDoc *
ml_doc_new (const char *title, const char *generator)
{
  MlDoc *doc = calloc (1, sizeof *doc);
  MlDocArena *arena = calloc (1, sizeof *arena);
  if (!doc || !arena)
    {
      free (doc);
      free (arena);
      return NULL;
    }
  doc->arena = arena;
  doc->title = ml_doc_strdup (doc, title);
  doc->generator = ml_doc_strdup (doc, generator);
  doc->data = doc_alloc (doc, sizeof *doc->data);
  if (doc->failed)
    {
      ml_doc_free (doc);
      return NULL;
    }
  doc->data->kind = ML_DOC_VAL_OBJECT;
  return doc;
}

void
ml_doc_free (MlDoc *doc)
{
  if (!doc)
    return;
  for (MlDocChunk *c = doc->arena->chunks, *next; c; c = next)
    {
      next = c->next;
      free (c);
    }
  free (doc->arena);
  free (doc);
}

int
ml_doc_status (const MlDoc *doc, MlError *err)
{
  return doc->failed ? ml_error_set (err, ML_ENOMEM, "out of memory for the report") : 0;
}

/* Text in the document is valid UTF-8, so every writer's output is (a
 * file name from the command line may hold any bytes): a byte that
 * starts no sequence becomes U+FFFD. */
static const char *
keep_utf8 (MlDoc *doc, const char *p, size_t n)
{
  if (ml_utf8_valid (p, n))
    return p;
  size_t m;
  char *fixed = ml_utf8_fix (p, n, &m), *q = fixed ? doc_alloc (doc, m + 1) : NULL;
  if (q)
    memcpy (q, fixed, m + 1);
  free (fixed);
  return q ? q : "";
}

const char *
ml_doc_strdup (MlDoc *doc, const char *s)
{
  if (!s)
    return NULL;
  size_t n = strlen (s) + 1;
  char *p = doc_alloc (doc, n);
  if (!p)
    return "";
  memcpy (p, s, n);
  return keep_utf8 (doc, p, n - 1);
}

static const char *
doc_vprintf (MlDoc *doc, const char *fmt, va_list ap)
{
  va_list ap2;
  va_copy (ap2, ap);
  int n = vsnprintf (NULL, 0, fmt, ap2);
  va_end (ap2);
  char *p = n >= 0 ? doc_alloc (doc, (size_t) n + 1) : NULL;
  if (!p)
    return "";
  vsnprintf (p, (size_t) n + 1, fmt, ap);
  return keep_utf8 (doc, p, (size_t) n);
}

const char *
ml_doc_printf (MlDoc *doc, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  const char *s = doc_vprintf (doc, fmt, ap);
  va_end (ap);
  return s;
}

/* ---- inline runs ----------------------------------------------------------- */

static void
append_run (MlDoc *doc, MlDocText *in, MlDocRunKind kind, MlDocTone tone, const char *text)
{
  MlDocRun *r = doc_alloc (doc, sizeof *r);
  if (!r)
    return;
  r->kind = kind;
  r->tone = tone;
  r->text = text;
  if (in->last)
    in->last->next = r;
  else
    in->first = r;
  in->last = r;
}

void
ml_doc_run (MlDoc *doc, MlDocText *in, MlDocRunKind kind, MlDocTone tone, const char *text)
{
  append_run (doc, in, kind, tone, ml_doc_strdup (doc, text ? text : ""));
}

void
ml_doc_textf (MlDoc *doc, MlDocText *in, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  const char *s = doc_vprintf (doc, fmt, ap);
  va_end (ap);
  append_run (doc, in, ML_DOC_RUN_TEXT, ML_DOC_TONE_PLAIN, s);
}

bool
ml_doc_text_empty (const MlDocText *in)
{
  for (const MlDocRun *r = in->first; r; r = r->next)
    if (r->kind == ML_DOC_RUN_BREAK || *r->text)
      return false;
  return true;
}

/* ---- blocks ------------------------------------------------------------- */

/* A block of @kind at the end; a static dummy when out of memory, so the
 * caller can fill it in all the same. */
static MlDocBlock *
add_block (MlDoc *doc, MlDocBlockKind kind)
{
  MlDocBlock *b = doc_alloc (doc, sizeof *b);
  if (!b)
    {
      static _Thread_local MlDocBlock dummy;
      memset (&dummy, 0, sizeof dummy);
      return &dummy;
    }
  b->kind = kind;
  if (doc->last)
    doc->last->next = b;
  else
    doc->blocks = b;
  doc->last = b;
  return b;
}

MlDocText *
ml_doc_heading (MlDoc *doc, int level)
{
  MlDocBlock *b = add_block (doc, ML_DOC_BLOCK_HEADING);
  b->level = level;
  return &b->text;
}

MlDocText *
ml_doc_para (MlDoc *doc, MlDocParaKind kind, MlDocTone tone)
{
  MlDocBlock *b = add_block (doc, ML_DOC_BLOCK_PARA);
  b->para = kind;
  b->tone = tone;
  return &b->text;
}

MlDocCard *
ml_doc_card (MlDoc *doc, const char *label, const char *value, const char *note)
{
  static _Thread_local MlDocCard dummy;
  MlDocCard *c = doc_alloc (doc, sizeof *c);
  if (!c)
    {
      memset (&dummy, 0, sizeof dummy);
      return &dummy;
    }
  c->label = ml_doc_strdup (doc, label);
  c->value = ml_doc_strdup (doc, value);
  c->note = ml_doc_strdup (doc, note);
  /* cards in a row make one block */
  MlDocBlock *b = doc->last && doc->last->kind == ML_DOC_BLOCK_CARDS ? doc->last : add_block (doc, ML_DOC_BLOCK_CARDS);
  MlDocCard **tail = &b->cards;
  while (*tail)
    tail = &(*tail)->next;
  *tail = c;
  return c;
}

void
ml_doc_attrf (MlDoc *doc, MlDocAttr **list, const char *name, const char *fmt, ...)
{
  MlDocAttr *a = doc_alloc (doc, sizeof *a);
  if (!a)
    return;
  va_list ap;
  va_start (ap, fmt);
  a->value = doc_vprintf (doc, fmt, ap);
  va_end (ap);
  a->name = ml_doc_strdup (doc, name);
  while (*list)
    list = &(*list)->next;
  *list = a;
}

MlDocTable *
ml_doc_table (MlDoc *doc, const char *id, const char *cls)
{
  static _Thread_local MlDocTable dummy;
  MlDocTable *t = doc_alloc (doc, sizeof *t);
  if (!t)
    {
      memset (&dummy, 0, sizeof dummy);
      return &dummy;
    }
  t->id = ml_doc_strdup (doc, id);
  t->cls = ml_doc_strdup (doc, cls);
  add_block (doc, ML_DOC_BLOCK_TABLE)->table = t;
  return t;
}

int
ml_doc_column (MlDoc *doc, MlDocTable *t, const char *label, const char *key, unsigned flags)
{
  assert (!t->rows && "columns are declared before the first row");
  if (t->n_cols == t->cap_cols)
    {
      size_t cap = t->cap_cols ? 2 * t->cap_cols : 16;
      MlDocColumn *cols = doc_alloc (doc, cap * sizeof *cols);
      if (!cols)
        return 0;
      if (t->n_cols)
        memcpy (cols, t->cols, t->n_cols * sizeof *cols);
      t->cols = cols;
      t->cap_cols = cap;
    }
  MlDocColumn *c = &t->cols[t->n_cols];
  c->label = ml_doc_strdup (doc, label ? label : "");
  c->key = ml_doc_strdup (doc, key);
  c->flags = flags;
  return (int) t->n_cols++;
}

MlDocRow *
ml_doc_row (MlDoc *doc, MlDocTable *t)
{
  static _Thread_local MlDocRow dummy;
  MlDocRow *r = doc_alloc (doc, sizeof *r);
  MlDocCell *cells = r ? doc_alloc (doc, (t->n_cols ? t->n_cols : 1) * sizeof *cells) : NULL;
  if (!r || !cells)
    {
      memset (&dummy, 0, sizeof dummy);
      return &dummy;
    }
  r->cells = cells;
  if (t->last)
    t->last->next = r;
  else
    t->rows = r;
  t->last = r;
  t->n_rows++;
  return r;
}

MlDocCell *
ml_doc_cell (MlDoc *doc, MlDocRow *row, int col)
{
  static _Thread_local MlDocCell dummy;
  if (doc->failed || !row->cells || col < 0)
    {
      memset (&dummy, 0, sizeof dummy);
      return &dummy;
    }
  return &row->cells[col];
}

MlDocCell *
ml_doc_cellf (MlDoc *doc, MlDocRow *row, int col, const char *fmt, ...)
{
  MlDocCell *c = ml_doc_cell (doc, row, col);
  va_list ap;
  va_start (ap, fmt);
  const char *s = doc_vprintf (doc, fmt, ap);
  va_end (ap);
  append_run (doc, &c->text, ML_DOC_RUN_TEXT, ML_DOC_TONE_PLAIN, s);
  return c;
}

void
ml_doc_rawf (MlDoc *doc, MlDocCell *cell, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  cell->raw = doc_vprintf (doc, fmt, ap);
  va_end (ap);
}

size_t
ml_doc_span (const MlDocTable *t, size_t col, int span, unsigned shown)
{
  size_t rest = 0;
  for (size_t k = col; k < t->n_cols; k++)
    rest += (t->cols[k].flags & shown) != 0;
  if (span == ML_DOC_SPAN_REST)
    return rest;
  size_t n = span > 1 ? (size_t) span : 1;
  return n < rest ? n : rest;
}

bool
ml_doc_table_has_note (const MlDocTable *t, unsigned shown)
{
  if (!ml_doc_text_empty (&t->note))
    return true;
  for (size_t c = 0; c < t->n_cols; c++)
    if ((t->cols[c].flags & shown) && t->cols[c].note)
      return true;
  return false;
}

void
ml_doc_set_csv (MlDoc *doc, const MlDocTable *table)
{
  doc->csv = table;
}

MlDocFigure *
ml_doc_figure (MlDoc *doc)
{
  static _Thread_local MlDocFigure dummy;
  MlDocFigure *f = doc_alloc (doc, sizeof *f);
  if (!f)
    {
      memset (&dummy, 0, sizeof dummy);
      return &dummy;
    }
  add_block (doc, ML_DOC_BLOCK_FIGURE)->figure = f;
  return f;
}

/* ---- data --------------------------------------------------------------- */

/* A value of @kind as member @key of @parent (in the place of a member of
 * that key, if any) or as its last element; NULL when out of memory. */
static MlDocValue *
add_value (MlDoc *doc, MlDocValue *parent, const char *key, MlDocValueKind kind)
{
  if (!parent)
    return NULL;
  if (key && parent->kind == ML_DOC_VAL_OBJECT)
    for (MlDocValue *v = parent->first; v; v = v->next)
      if (v->key && strcmp (v->key, key) == 0)
        {
          MlDocValue *next = v->next;
          const char *k = v->key;
          memset (v, 0, sizeof *v);
          v->key = k;
          v->next = next;
          v->kind = kind;
          return v;
        }
  MlDocValue *v = doc_alloc (doc, sizeof *v);
  if (!v)
    return NULL;
  v->kind = kind;
  v->key = key ? ml_doc_strdup (doc, key) : NULL;
  if (parent->last)
    parent->last->next = v;
  else
    parent->first = v;
  parent->last = v;
  return v;
}

MlDocValue *
ml_doc_value_object (MlDoc *doc, MlDocValue *parent, const char *key)
{
  return add_value (doc, parent, key, ML_DOC_VAL_OBJECT);
}

MlDocValue *
ml_doc_value_array (MlDoc *doc, MlDocValue *parent, const char *key)
{
  return add_value (doc, parent, key, ML_DOC_VAL_ARRAY);
}

void
ml_doc_value_absent (MlDoc *doc, MlDocValue *parent, const char *key)
{
  add_value (doc, parent, key, ML_DOC_VAL_ABSENT);
}

void
ml_doc_value_null (MlDoc *doc, MlDocValue *parent, const char *key)
{
  add_value (doc, parent, key, ML_DOC_VAL_NULL);
}

void
ml_doc_value_bool (MlDoc *doc, MlDocValue *parent, const char *key, bool b)
{
  MlDocValue *v = add_value (doc, parent, key, ML_DOC_VAL_BOOL);
  if (v)
    v->b = b;
}

void
ml_doc_value_u64 (MlDoc *doc, MlDocValue *parent, const char *key, uint64_t u)
{
  MlDocValue *v = add_value (doc, parent, key, ML_DOC_VAL_U64);
  if (v)
    v->u = u;
}

void
ml_doc_value_num (MlDoc *doc, MlDocValue *parent, const char *key, double num, int decimals)
{
  MlDocValue *v = add_value (doc, parent, key, ML_DOC_VAL_NUM);
  if (v)
    {
      v->num = num;
      v->decimals = decimals;
    }
}

void
ml_doc_value_str (MlDoc *doc, MlDocValue *parent, const char *key, const char *s)
{
  MlDocValue *v = add_value (doc, parent, key, s ? ML_DOC_VAL_STR : ML_DOC_VAL_NULL);
  if (v && s)
    v->str = ml_doc_strdup (doc, s);
}

void
ml_doc_value_writer (MlDoc *doc, MlDocValue *parent, const char *key, MlDocValueWriter write, const void *obj, const void *aux)
{
  MlDocValue *v = add_value (doc, parent, key, ML_DOC_VAL_WRITER);
  if (v)
    {
      v->write = write;
      v->obj = obj;
      v->aux = aux;
    }
}

void
ml_doc_value_splice (MlDoc *doc, MlDocValue *parent, MlDocValueWriter write, const void *obj, const void *aux)
{
  MlDocValue *v = add_value (doc, parent, NULL, ML_DOC_VAL_SPLICE);
  if (v)
    {
      v->write = write;
      v->obj = obj;
      v->aux = aux;
    }
}

int
ml_doc_finish (FILE *fp, MlError *err)
{
  if (fflush (fp) != 0 || ferror (fp))
    return ml_error_set (err, ML_EIO, "write error: %s", strerror (errno ? errno : EIO));
  return 0;
}

/* ---- files ---------------------------------------------------------------- */

static int
save_json (const MlDoc *doc, FILE *fp, const void *opts, MlError *err)
{
  return ml_doc_write_json (doc, fp, err);
}

static int
save_markdown (const MlDoc *doc, FILE *fp, const void *opts, MlError *err)
{
  return ml_doc_write_markdown (doc, fp, err);
}

static int
save_csv (const MlDoc *doc, FILE *fp, const void *opts, MlError *err)
{
  return ml_doc_write_csv (doc, fp, err);
}

MlDocWriter
ml_doc_text_writer (const char *path)
{
  char ext[16];
  ml_path_ext (path, ext, sizeof ext, NULL);
  if (strcmp (ext, "json") == 0)
    return save_json;
  if (strcmp (ext, "md") == 0 || strcmp (ext, "markdown") == 0)
    return save_markdown;
  if (strcmp (ext, "csv") == 0)
    return save_csv;
  return NULL;
}

int
ml_doc_save (const MlDoc *doc, const char *path, MlDocWriter write, const void *opts, MlError *err)
{
  MlOut *out = ml_out_open (path, err);
  if (!out)
    return err && err->code ? err->code : ML_EIO;
  int rc = write (doc, ml_out_file (out), opts, err);
  if (rc < 0)
    {
      ml_out_abort (out);
      return ml_error_prefix (err, "%s", strcmp (path, "-") ? path : "stdout");
    }
  return ml_out_commit (out, err);
}
