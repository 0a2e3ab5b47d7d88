/* csv.c — MiniMalloc CSV: id,lower,upper,size[,offset][,alignment].
 *
 * Half-open lifetimes [lower, upper). Column aliases follow the upstream
 * reader: begin/start = lower, buffer/buffer_id = id, and an "end" column
 * is inclusive (upper = end + 1). Each row becomes an alloc at tick lower
 * and a free at tick upper; an offset column becomes the recorded address,
 * so the "recorded" plan of a solved instance is its solution.
 */
#include "sim/formats/csv.h"
#include "sim/formats/plan-csv.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/base/io.h"
#include "sim/buffers.h"
#include "sim/base/sort.h"
#include "sim/base/u64map.h"
#include "sim/base/units.h"

enum { COL_ID, COL_LOWER, COL_UPPER, COL_SIZE, COL_OFFSET, COL_ALIGN, COL__N };

typedef struct {
  uint64_t id, lower, upper, size, offset;
  uint32_t name;
  uint32_t line;     /* in the file, for messages */
  bool     has_offset;
} Row;

uint64_t
ml_capacity_from_name (const char *path)
{
  const char *base = strrchr (path, '/');
  base = base ? base + 1 : path;
  char buf[256];
  size_t n = strlen (base);
  if (n >= sizeof buf)
    return 0;
  memcpy (buf, base, n + 1);
  char *dot = strrchr (buf, '.');     /* drop the extension */
  if (!dot)
    return 0;
  *dot = 0;
  char *num = strrchr (buf, '.');
  if (!num)
    return 0;
  num++;
  uint64_t v;
  if (ml_parse_u64 (num, strlen (num), &v) < 0)
    return 0;
  return v;
}

static int
split_fields (char *line, char **fields, int max)
{
  int n = 0;
  char *p = line;
  for (;;)
    {
      if (n == max)
        return -1;
      fields[n++] = p;
      char *c = strchr (p, ',');
      if (!c)
        break;
      *c = 0;
      p = c + 1;
    }
  for (int i = 0; i < n; i++)
    {
      char *f = fields[i];
      while (isspace ((unsigned char) *f))
        f++;
      char *e = f + strlen (f);
      while (e > f && isspace ((unsigned char) e[-1]))
        *--e = 0;
      fields[i] = f;
    }
  return n;
}

static int
field_u64 (const char *text, const char *what, uint64_t *out, MlError *err)
{
  if (*text == '-')
    return ml_error_set (err, ML_EINPUT, "%s %s is negative", what, text);
  if (!*text)
    return ml_error_set (err, ML_EINPUT, "%s is empty", what);
  if (ml_parse_u64 (text, strlen (text), out) < 0)
    {
      if (strspn (text, "0123456789") == strlen (text))
        return ml_error_set (err, ML_EINPUT, "%s %s is too large (at most 2^64-1)", what, text);
      return ml_error_set (err, ML_EINPUT, "%s \"%.40s\" is not a non-negative integer", what, text);
    }
  return 0;
}

/* The reader's state: the columns the header named, the rows so far. */
typedef struct {
  MlTrace *t;
  Row     *rows;
  size_t   n, cap;
  int      col[COL__N];   /* field index of each column, -1 = absent */
  int      ncols;
  bool     header, end_inclusive, all_numeric;
  uint64_t align;         /* the largest "alignment" of a row (1 = none) */
  /* ids seen -> their line: by number while every id so far is a plain
   * decimal (digits, no leading zero: its text is the number's, so the
   * number tells the texts apart and no text is kept), else by interned
   * text (see text_ids) */
  bool     by_number;
  MlU64Map ids;
} Csv;

/* The header: which field is which column. */
static int
read_header (Csv *c, char **f, int nf, MlError *err)
{
  c->header = true;
  /* a UTF-8 byte-order mark (spreadsheets write one) is no part of the
   * first column's name */
  if (nf > 0 && (unsigned char) f[0][0] == 0xef && (unsigned char) f[0][1] == 0xbb && (unsigned char) f[0][2] == 0xbf)
    f[0] += 3;
  c->ncols = nf;
  for (int i = 0; i < nf; i++)
    {
      const char *h = f[i];
      int k = -1;
      if (!strcasecmp (h, "id") || !strcasecmp (h, "buffer") || !strcasecmp (h, "buffer_id")) k = COL_ID;
      else if (!strcasecmp (h, "lower") || !strcasecmp (h, "begin") || !strcasecmp (h, "start")) k = COL_LOWER;
      else if (!strcasecmp (h, "upper")) k = COL_UPPER;
      else if (!strcasecmp (h, "end")) { k = COL_UPPER; c->end_inclusive = true; }
      else if (!strcasecmp (h, "size")) k = COL_SIZE;
      else if (!strcasecmp (h, "offset")) k = COL_OFFSET;
      else if (!strcasecmp (h, "alignment")) k = COL_ALIGN;
      else if (!strcasecmp (h, "hint") || !strcasecmp (h, "gaps")) continue;  /* accepted, not used */
      else
        return ml_error_set (err, ML_EINPUT, "unknown column \"%.40s\" (expected id,lower,upper,size[,offset])", h);
      if (c->col[k] >= 0)
        return ml_error_set (err, ML_EINPUT, "column \"%.40s\" appears twice", h);
      c->col[k] = i;
    }
  static const char *const need[] = { "id", "lower", "upper", "size" };
  for (int k = 0; k < 4; k++)
    if (c->col[k] < 0)
      return ml_error_set (err, ML_EINPUT, "the header has no \"%s\" column (expected id,lower,upper,size)", need[k]);
  return 0;
}

/* The optional columns of a row: its offset (where a solution placed
 * it) and its alignment. */
static int
read_placement (Csv *c, char **f, Row *row, const char *idtext, MlError *err)
{
  int rc;
  if (c->col[COL_OFFSET] >= 0 && *f[c->col[COL_OFFSET]])
    {
      if ((rc = field_u64 (f[c->col[COL_OFFSET]], "offset", &row->offset, err)) < 0)
        return rc;
      /* the offset is where the solution placed the buffer: it must end
       * where a plan can address (a plan file's bound), never wrap */
      if (row->offset > ML_BUFFERS_MAX_TOTAL || row->size > ML_BUFFERS_MAX_TOTAL - row->offset)
        return ml_error_set (err, ML_EINPUT, "buffer %.40s: offset %" PRIu64 " + size %" PRIu64 " ends past 2^60 bytes (1 EiB), "
                             "more than any plan can address", idtext, row->offset, row->size);
      row->has_offset = true;
    }
  if (c->col[COL_ALIGN] >= 0 && *f[c->col[COL_ALIGN]])
    {
      uint64_t a;
      if ((rc = field_u64 (f[c->col[COL_ALIGN]], "alignment", &a, err)) < 0)
        return rc;
      if (a == 0 || (a & (a - 1)))
        return ml_error_set (err, ML_EINPUT, "alignment %" PRIu64 " is not a power of two", a);
      if (a > c->align)
        c->align = a;
    }
  return 0;
}

/* The first id that is not a plain decimal: from here on ids are told
 * apart by their text ("01" and "1" are two ids unless all are numbers),
 * so the rows so far get their texts back (each the decimal of its
 * number) and the map is keyed by them. */
static int
text_ids (Csv *c, MlError *err)
{
  c->by_number = false;
  ml_u64map_clear (&c->ids);
  ml_u64map_init (&c->ids);
  for (size_t i = 0; i < c->n; i++)
    {
      char text[24];
      snprintf (text, sizeof text, "%" PRIu64, c->rows[i].id);
      c->rows[i].name = ml_strtab_intern0 (c->t->strings, text);
      if (c->rows[i].name == UINT32_MAX || ml_u64map_put (&c->ids, c->rows[i].name, c->rows[i].line) < 0)
        return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  return 0;
}

/* A row after the header: one buffer. */
static int
read_row (Csv *c, char **f, int nf, const MlLineReader *r, MlError *err)
{
  if (nf != c->ncols)
    return ml_error_set (err, ML_EINPUT, "%d fields, the header has %d%s", nf, c->ncols,
                         r->missing_newline ? " (the file looks truncated)" : "");
  if (c->n == c->cap)
    {
      size_t cap = c->cap ? c->cap * 2 : 1024;
      Row *r2 = realloc (c->rows, cap * sizeof *c->rows);
      if (!r2)
        return ml_error_set (err, ML_ENOMEM, "out of memory");
      c->rows = r2;
      c->cap = cap;
    }
  Row *row = &c->rows[c->n];
  memset (row, 0, sizeof *row);
  row->line = r->lineno <= UINT32_MAX ? (uint32_t) r->lineno : 0;
  const char *idtext = f[c->col[COL_ID]];
  int rc;
  if (!*idtext)
    return ml_error_set (err, ML_EINPUT, "id is empty");
  bool numeric = ml_parse_u64 (idtext, strlen (idtext), &row->id) == 0;
  if (!numeric)
    {
      c->all_numeric = false;
      row->id = c->n;
    }
  if (c->by_number && !(numeric && (idtext[0] != '0' || idtext[1] == 0)) && (rc = text_ids (c, err)) < 0)
    return rc;
  if (!c->by_number && (row->name = ml_strtab_intern0 (c->t->strings, idtext)) == UINT32_MAX)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  if ((rc = field_u64 (f[c->col[COL_LOWER]], "lower", &row->lower, err)) < 0
      || (rc = field_u64 (f[c->col[COL_UPPER]], c->end_inclusive ? "end" : "upper", &row->upper, err)) < 0
      || (rc = field_u64 (f[c->col[COL_SIZE]], "size", &row->size, err)) < 0)
    return rc;
  if (c->end_inclusive)
    {
      if (row->upper == UINT64_MAX)
        return ml_error_set (err, ML_EINPUT, "end %" PRIu64 " is too large", row->upper);
      row->upper++;
    }
  if (row->upper <= row->lower)
    return ml_error_set (err, ML_EINPUT, "buffer %.40s: upper %" PRIu64 " <= lower %" PRIu64 " (lifetimes are half-open [lower, upper))",
                         idtext, row->upper, row->lower);
  if ((rc = read_placement (c, f, row, idtext, err)) < 0)
    return rc;
  /* duplicate ids: by the text, so "b1" and "01" are told apart */
  uint32_t prev;
  uint64_t key = c->by_number ? row->id : row->name;
  if (ml_u64map_get (&c->ids, key, &prev))
    return ml_error_set (err, ML_EINPUT, "duplicate id %.40s (first on line %u)", idtext, prev);
  if (ml_u64map_put (&c->ids, key, (uint32_t) r->lineno) < 0)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  c->n++;
  return 0;
}

/* Every line of the file: the header, then the rows. */
static int
read_lines (Csv *c, const char *path, const MlLoadOptions *opts, MlError *err)
{
  MlLineReader r;
  int rc = ml_lines_open (&r, path, err);
  if (rc < 0)
    return rc;
  while ((rc = ml_lines_next (&r, err)) > 0)
    {
      if ((r.lineno & 0xffff) == 0 && opts && (rc = ml_load_progress (opts, &r, err)) < 0)
        break;
      if (r.len == 0)
        continue;
      char *f[64];
      int nf = split_fields (r.line, f, 64);
      if (nf < 0)
        rc = ml_error_set (err, ML_EINPUT, "more than 64 columns");
      else
        rc = c->header ? read_row (c, f, nf, &r, err) : read_header (c, f, nf, err);
      if (rc < 0)
        break;
    }
  if (rc < 0)
    ml_error_prefix (err, "%s:%ld", path, r.lineno);
  else if (!c->header)
    rc = ml_error_set (err, ML_EINPUT, "%s: empty file (expected the header id,lower,upper,size)", path);
  ml_lines_close (&r);
  return rc;
}

/* Numeric ids must also be unique as numbers ("1" and "01"). */
static int
check_numeric_ids (const Csv *c, const char *path, MlError *err)
{
  int rc = 0;
  MlU64Map num;
  ml_u64map_init (&num);
  for (size_t i = 0; i < c->n && rc == 0; i++)
    {
      uint32_t first;
      if (ml_u64map_get (&num, c->rows[i].id, &first))
        rc = ml_error_set (err, ML_EINPUT, "%s:%" PRIu32 ": duplicate id %" PRIu64 " (first on line %" PRIu32 ")", path,
                           c->rows[i].line, c->rows[i].id, first);
      else if (ml_u64map_put (&num, c->rows[i].id, c->rows[i].line) < 0)
        rc = ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  ml_u64map_clear (&num);
  return rc;
}

/* What the trace says besides its events. */
static void
set_header (Csv *c, const char *path)
{
  c->t->default_align = c->align;
  c->t->source = ml_strtab_intern0 (c->t->strings, "csv");
  c->t->capacity = ml_capacity_from_name (path);
}

/* The events: allocs by lower (stable), frees by upper; frees first at
 * a tick. */
static int
emit_events (Csv *c, const char *path, MlError *err)
{
  size_t n = c->n;
  const Row *rows = c->rows;
  MlTrace *t = c->t;
  int rc = 0;
  uint32_t *by_lower = malloc ((n ? n : 1) * sizeof *by_lower), *by_upper = malloc ((n ? n : 1) * sizeof *by_upper);
  if (!by_lower || !by_upper)
    goto oom;
  for (size_t i = 0; i < n; i++)
    by_lower[i] = by_upper[i] = (uint32_t) i;
  if (n && (ml_sort_indexes_by_key (by_lower, n, &rows[0].lower, sizeof (Row)) < 0
            || ml_sort_indexes_by_key (by_upper, n, &rows[0].upper, sizeof (Row)) < 0))
    goto oom;
  if (t->cap_events < 2 * n)
    {
      MlEvent *ev = realloc (t->events, 2 * (n ? n : 1) * sizeof *ev);
      if (!ev)
        goto oom;
      t->events = ev;
      t->cap_events = 2 * (n ? n : 1);
    }
  size_t a = 0, b = 0;
  bool any_offset = false;
  while (a < n || b < n)
    {
      bool take_free = b < n && (a == n || rows[by_upper[b]].upper <= rows[by_lower[a]].lower);
      const Row *row = &rows[take_free ? by_upper[b++] : by_lower[a++]];
      MlEvent ev = {
        .tick = take_free ? row->upper : row->lower,
        .id = row->id,
        .size = take_free ? 0 : row->size,
        .time_ns = -1,
        .kind = take_free ? ML_EV_FREE : ML_EV_ALLOC,
        .flags = ML_EVF_HAS_ID,
        .name = c->all_numeric ? 0 : row->name,
      };
      if (!take_free && row->has_offset)
        {
          ev.addr = row->offset;
          ev.flags |= ML_EVF_HAS_ADDR;
          any_offset = true;
        }
      ml_trace_append (t, &ev);   /* capacity reserved above */
      if (ml_trace_set_origin (t, row->line) < 0)
        goto oom;
    }
  t->has_addrs = any_offset;
  set_header (c, path);
  goto out;
oom:
  rc = ml_error_set (err, ML_ENOMEM, "out of memory");
out:
  free (by_lower);
  free (by_upper);
  return rc;
}

/* Reads every row of @path into @c (a new trace, its rows); 0 or an
 * error (then nothing is left to free but c->t and c->rows). */
static int
read_csv (Csv *c, const char *path, const MlLoadOptions *opts, MlError *err)
{
  *c = (Csv) { .t = ml_trace_new (), .all_numeric = true, .align = 1, .by_number = true };
  for (int i = 0; i < COL__N; i++)
    c->col[i] = -1;
  ml_u64map_init (&c->ids);
  if (!c->t)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  int rc = read_lines (c, path, opts, err);
  ml_u64map_clear (&c->ids);
  if (rc == 0 && c->all_numeric && !c->by_number)
    rc = check_numeric_ids (c, path, err);
  return rc;
}

int
ml_trace_load_csv (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err)
{
  Csv c;
  int rc = read_csv (&c, path, opts, err);
  if (rc == 0)
    rc = emit_events (&c, path, err);
  free (c.rows);
  if (rc < 0)
    {
      ml_trace_free (c.t);
      return rc;
    }
  *out = c.t;
  return 0;
}

/* Row @row as buffer @buf (ml_buffers_build's rules, for an alloc at
 * lower freed at upper): sizes rounded to @align within the total a plan
 * can address (*total), the offset as the recorded address. Errors name
 * the row's line, as the events' origins would. */
static int
row_buffer (const Csv *c, const Row *row, uint64_t align, uint64_t *total, MlBuffer *buf, MlError *err)
{
  *buf = (MlBuffer) { .id = row->id, .size = row->size, .rsize = ml_align_up (row->size, align), .start = row->lower,
                      .end = row->upper, .name = c->all_numeric ? 0 : row->name };
  if (buf->rsize < buf->size)
    return ml_error_set (err, ML_EINPUT, "line %" PRIu32 ": size %" PRIu64 " overflows when aligned to %" PRIu64,
                         row->line, row->size, align);
  if (buf->rsize > ML_BUFFERS_MAX_TOTAL - *total)
    return ml_error_set (err, ML_EINPUT, "line %" PRIu32 ": size %" PRIu64 " brings the buffers' total past 2^60 bytes "
                         "(1 EiB), more than any plan can address", row->line, row->size);
  *total += buf->rsize;
  if (row->has_offset)
    {
      buf->addr = row->offset;
      buf->flags = ML_BUF_HAS_ADDR;
    }
  return 0;
}

/* The buffers of @c's rows, by lower (stable): what ml_buffers_build
 * makes of the events ml_trace_load_csv would write, but for by_end and
 * the bound (ml_buffers_index, once the rows are freed). */
static int
rows_to_buffers (const Csv *c, uint64_t align, MlBuffers **out, MlError *err)
{
  size_t n = c->n;
  if (n >= UINT32_MAX)
    return ml_error_set (err, ML_EINPUT, "%zu allocations: at most %u are supported", n, UINT32_MAX - 1);
  MlBuffers *b = calloc (1, sizeof *b);
  uint32_t *by_lower = malloc ((n ? n : 1) * sizeof *by_lower);
  if (b)
    {
      b->buf = malloc ((n ? n : 1) * sizeof *b->buf);
      b->by_end = malloc ((n ? n : 1) * sizeof *b->by_end);
    }
  int rc = 0;
  for (size_t i = 0; i < n && by_lower; i++)
    by_lower[i] = (uint32_t) i;
  if (!b || !b->buf || !b->by_end || !by_lower
      || (n && ml_sort_indexes_by_key (by_lower, n, &c->rows[0].lower, sizeof (Row)) < 0))
    rc = ml_error_set (err, ML_ENOMEM, "out of memory for %zu buffers", n);
  uint64_t total = 0, last = 0;
  for (size_t k = 0; k < n && rc == 0; k++)
    rc = row_buffer (c, &c->rows[by_lower[k]], align, &total, &b->buf[k], err);
  /* the last event is the free at the highest upper, the first such row */
  for (size_t i = 0; i < n && rc == 0; i++)
    if (c->rows[i].upper == UINT64_MAX)
      rc = ml_error_set (err, ML_EINPUT, "line %" PRIu32 ": tick %" PRIu64 " leaves no room for the end of the trace "
                         "(at most 2^64-2)", c->rows[i].line, c->rows[i].upper);
    else if (c->rows[i].upper > last)
      last = c->rows[i].upper;
  free (by_lower);
  if (rc == 0)
    {
      b->n = n;
      b->align = b->zero_copy_align = align;
      b->trace = c->t;
      b->end_tick = n ? last + 1 : 0;
    }
  if (rc < 0)
    {
      ml_buffers_free (b);
      return rc;
    }
  *out = b;
  return 0;
}

int
ml_buffers_load_csv (const char *path, const MlLoadOptions *opts, uint64_t align, MlTrace **trace, MlBuffers **bufs,
                     MlError *err)
{
  Csv c;
  int rc = read_csv (&c, path, opts, err);
  if (rc == 0)
    {
      set_header (&c, path);
      for (size_t i = 0; i < c.n && !c.t->has_addrs; i++)
        c.t->has_addrs = c.rows[i].has_offset;
      if (align == 0)
        align = c.align;
      rc = align & (align - 1) ? ml_error_set (err, ML_EUSAGE, "alignment %" PRIu64 " is not a power of two", align)
                               : rows_to_buffers (&c, align, bufs, err);
      if (rc < 0)
        ml_error_prefix (err, "%s", path);
    }
  free (c.rows);
  if (rc == 0 && (rc = ml_buffers_index (*bufs, err)) < 0)
    ml_buffers_free (*bufs);
  if (rc < 0)
    {
      *bufs = NULL;
      ml_trace_free (c.t);
      return rc;
    }
  *trace = c.t;
  return 0;
}

int
ml_buffers_write_csv (const MlBuffers *bufs, const MlPlan *plan, const char *path, MlError *err)
{
  return ml_buffers_write_csv_with (bufs, plan, path, NULL, err);
}

int
ml_buffers_write_csv_with (const MlBuffers *bufs, const MlPlan *plan, const char *path, const MlProgress *pg,
                           MlError *err)
{
  if (plan && plan->n_segments > 1)
    return ml_error_set (err, ML_EUNSUPPORTED, "%s: a plan with %zu segments has no single offset per buffer; CSV holds one arena",
                         path, plan->n_segments);
  MlOut *out = ml_out_open (path, err);
  if (!out)
    return err ? err->code : ML_EIO;
  FILE *fp = ml_out_file (out);
  /* CSV ids must be unique (ml_buffers_csv_id: the plan reader matches
   * rows by the same rule) */
  int unique = ml_buffers_csv_ids_unique (bufs, err);
  if (unique < 0)
    {
      ml_out_abort (out);
      return unique;
    }
  fputs (plan ? "id,lower,upper,size,offset\n" : "id,lower,upper,size\n", fp);
  for (size_t i = 0; i < bufs->n; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      char id[256];
      if (pg && (i & 0xffff) == 0)
        {
          if (pg->cancelled && *pg->cancelled)
            {
              ml_out_abort (out);
              return ml_error_set (err, ML_ECANCELLED, "%s: cancelled", path);
            }
          if (pg->report)
            pg->report (pg->user, (double) i / (double) bufs->n, "writing buffers");
        }
      fputs (ml_buffers_csv_id (bufs, i, unique, id, sizeof id), fp);
      fprintf (fp, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, b->start, b->end, b->size);
      if (plan)
        fprintf (fp, ",%" PRIu64, plan->offset[i]);
      fputc ('\n', fp);
    }
  return ml_out_commit (out, err);
}
