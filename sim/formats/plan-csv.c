/* plan-csv.c — a plan written as CSV read back against the trace's buffers. */
#include "sim/formats/plan-csv.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/base/io.h"
#include "sim/base/strtab.h"
#include "sim/base/u64map.h"
#include "sim/base/units.h"

int
ml_buffers_csv_ids_unique (const MlBuffers *bufs, MlError *err)
{
  MlU64Map seen;
  ml_u64map_init (&seen);
  int unique = 1;
  for (size_t i = 0; i < bufs->n && unique == 1; i++)
    {
      if (ml_u64map_get (&seen, bufs->buf[i].id, NULL))
        unique = 0;
      else if (ml_u64map_put (&seen, bufs->buf[i].id, 0) < 0)
        unique = ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  ml_u64map_clear (&seen);
  return unique;
}

const char *
ml_buffers_csv_id (const MlBuffers *bufs, size_t i, bool unique, char *buf, size_t len)
{
  const char *text = ml_buffer_id_text (bufs, i, buf, len);
  if (unique || text != buf)   /* the id, or the CSV's own text */
    return text;
  snprintf (buf, len, "%zu", i);
  return buf;
}

enum { COL_ID, COL_LOWER, COL_UPPER, COL_SIZE, COL_OFFSET, COL__N };
static const char *const col_names[COL__N] = { "id", "lower", "upper", "size", "offset" };

/* Splits @line at commas, blanks around each field trimmed; -1 past @max. */
static int
split (char *line, char **f, int max)
{
  int n = 0;
  for (char *p = line;; p++)
    {
      if (n == max)
        return -1;
      while (*p == ' ' || *p == '\t' || *p == '\r')
        p++;
      f[n++] = p;
      char *c = strchr (p, ',');
      char *e = c ? c : p + strlen (p);
      while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        e--;
      if (!c)
        {
          *e = 0;
          return n;
        }
      *e = 0;
      p = c;
    }
}

/* The header's columns into @col; every one of col_names is needed. */
static int
read_header (const char *path, char **f, int nf, int *col, MlError *err)
{
  for (int c = 0; c < COL__N; c++)
    col[c] = -1;
  if (nf > 0 && (unsigned char) f[0][0] == 0xef && (unsigned char) f[0][1] == 0xbb && (unsigned char) f[0][2] == 0xbf)
    f[0] += 3;   /* a byte-order mark */
  for (int i = 0; i < nf; i++)
    {
      int c = 0;
      while (c < COL__N && strcasecmp (f[i], col_names[c]) != 0)
        c++;
      if (c == COL__N)
        return ml_error_set (err, ML_EINPUT, "%s:1: unknown column \"%.40s\" (a plan CSV has id,lower,upper,size,offset)",
                             path, f[i]);
      if (col[c] >= 0)
        return ml_error_set (err, ML_EINPUT, "%s:1: column \"%s\" appears twice", path, col_names[c]);
      col[c] = i;
    }
  for (int c = 0; c < COL__N; c++)
    if (col[c] < 0)
      return ml_error_set (err, ML_EINPUT, "%s:1: no \"%s\" column: a plan CSV has id,lower,upper,size,offset "
                           "(memlens plan -o PLAN.csv writes one)", path, col_names[c]);
  return 0;
}

static int
field (const char *path, long line, const char *id, const char *what, const char *text, uint64_t *out, MlError *err)
{
  if (ml_parse_u64 (text, strlen (text), out) < 0)
    return ml_error_set (err, ML_EINPUT, "%s:%ld: buffer %s: %s \"%.40s\" is not a non-negative integer", path, line, id,
                         what, text);
  return 0;
}

/* The buffers by their CSV ids: a plain decimal id (digits, no leading
 * zero: the text of its number) by its number, any other interned, then
 * the buffer of each id's index (a million numeric ids: no text kept, a
 * third of `check`'s time). */
typedef struct {
  int       unique;    /* ml_buffers_csv_ids_unique */
  size_t    rows;      /* rows read so far */
  bool      indexed;   /* num, ids and buffer are filled in (index_ids) */
  MlU64Map  num;       /* plain decimal id -> buffer */
  MlStrtab *ids;       /* the other ids */
  size_t    n_known;   /* ids past this were only looked up */
  uint32_t *buffer;    /* n_known */
} Ids;

/* Whether @s is a plain decimal that fits 64 bits (*@v). */
static bool
plain_decimal (const char *s, uint64_t *v)
{
  return (s[0] != '0' || s[1] == 0) && ml_parse_u64 (s, strlen (s), v) == 0;
}

static int index_ids (const MlBuffers *bufs, Ids *ids, MlError *err);

/* Whether buffer @i's CSV id is the plain decimal @v: a plan memlens
 * wrote lists the buffers in order, so row k is most often buffer k,
 * found without the index. */
static bool
is_buffer (const MlBuffers *bufs, size_t i, int unique, uint64_t v)
{
  if (i >= bufs->n)
    return false;
  char buf[32];
  uint64_t w;
  return plain_decimal (ml_buffers_csv_id (bufs, i, unique == 1, buf, sizeof buf), &w) && w == v;
}

/* One row: its buffer, checked against the trace, and its offset. */
static int
read_row (const char *path, long line, char **f, const int *col, const MlBuffers *bufs, Ids *ids, long *row_of,
          MlPlan *p, MlError *err)
{
  const char *id = f[col[COL_ID]];
  uint64_t v[COL__N];
  uint32_t idx = UINT32_MAX;
  bool plain = plain_decimal (id, &v[COL_ID]);
  int rc;
  if (plain && is_buffer (bufs, ids->rows, ids->unique, v[COL_ID]))
    idx = (uint32_t) ids->rows;
  else if (!ids->indexed && (rc = index_ids (bufs, ids, err)) < 0)
    return rc;
  ids->rows++;
  if (idx != UINT32_MAX)
    ;
  else if (plain)
    ml_u64map_get (&ids->num, v[COL_ID], &idx);
  else
    {
      uint32_t k = ml_strtab_intern0 (ids->ids, id);
      if (k == UINT32_MAX)
        return ml_error_set (err, ML_ENOMEM, "out of memory");
      idx = k && k < ids->n_known ? ids->buffer[k] : UINT32_MAX;
    }
  if (idx == UINT32_MAX)
    return ml_error_set (err, ML_EINPUT, "%s:%ld: buffer %s: the trace has no buffer with this id", path, line, id);
  if (row_of[idx])
    return ml_error_set (err, ML_EINPUT, "%s:%ld: buffer %s appears twice (first on line %ld)", path, line, id,
                         row_of[idx]);
  for (int c = COL_LOWER; c < COL__N; c++)
    if (field (path, line, id, col_names[c], f[col[c]], &v[c], err) < 0)
      return err ? err->code : ML_EINPUT;
  const MlBuffer *b = &bufs->buf[idx];
  const uint64_t want[] = { [COL_LOWER] = b->start, [COL_UPPER] = b->end, [COL_SIZE] = b->size };
  static const char *const says[] = { [COL_LOWER] = "starts at tick", [COL_UPPER] = "ends at tick",
                                      [COL_SIZE] = "has size" };
  for (int c = COL_LOWER; c <= COL_SIZE; c++)
    if (v[c] != want[c])
      return ml_error_set (err, ML_EINPUT, "%s:%ld: buffer %s: %s %" PRIu64 ", but in the trace it %s %" PRIu64
                           " (a plan of another trace, or of other options?)", path, line, id, col_names[c], v[c],
                           says[c], want[c]);
  if (v[COL_OFFSET] > ML_BUFFERS_MAX_TOTAL)
    return ml_error_set (err, ML_EINPUT, "%s:%ld: buffer %s: offset %" PRIu64 " is past 2^60 bytes (1 EiB)", path, line,
                         id, v[COL_OFFSET]);
  row_of[idx] = line;
  p->segment[idx] = 0;
  p->offset[idx] = v[COL_OFFSET];
  return 0;
}

static int
index_ids (const MlBuffers *bufs, Ids *ids, MlError *err)
{
  int unique = ids->unique;
  ids->indexed = true;
  ids->ids = ml_strtab_new ();
  ids->buffer = malloc ((bufs->n + 1) * sizeof *ids->buffer);
  if (!ids->ids || !ids->buffer)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  ids->buffer[0] = UINT32_MAX;   /* the empty string */
  if (ml_u64map_reserve (&ids->num, bufs->n) < 0)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  for (size_t i = 0, texts = 0; i < bufs->n; i++)
    {
      char buf[256];
      const char *id = ml_buffers_csv_id (bufs, i, unique, buf, sizeof buf);
      uint64_t v;
      uint32_t k = 0;
      bool known;
      if (plain_decimal (id, &v))
        {
          known = ml_u64map_get (&ids->num, v, NULL);
          if (!known && ml_u64map_put (&ids->num, v, (uint32_t) i) < 0)
            return ml_error_set (err, ML_ENOMEM, "out of memory");
        }
      else
        {
          if ((k = ml_strtab_intern0 (ids->ids, id)) == UINT32_MAX)
            return ml_error_set (err, ML_ENOMEM, "out of memory");
          known = k != ++texts;
        }
      if (known)
        return ml_error_set (err, ML_EINPUT, "buffer %s: two buffers of the trace have this id", id);
      if (k)
        ids->buffer[k] = (uint32_t) i;
    }
  ids->n_known = ml_strtab_count (ids->ids);
  return 0;
}

/* Every buffer has a row; the arena holds the highest end. */
static int
finish (const char *path, const MlBuffers *bufs, const long *row_of, MlPlan *p, MlError *err)
{
  uint64_t top = 0;
  for (size_t i = 0; i < bufs->n; i++)
    {
      if (!row_of[i])
        {
          char id[256];
          int unique = ml_buffers_csv_ids_unique (bufs, NULL);
          return ml_error_set (err, ML_EINPUT, "%s: buffer %s of the trace has no row (a plan needs every buffer)", path,
                               ml_buffers_csv_id (bufs, i, unique == 1, id, sizeof id));
        }
      if (p->offset[i] + bufs->buf[i].rsize > top)
        top = p->offset[i] + bufs->buf[i].rsize;
    }
  MlSegment g = { .size = top, .start = 0, .end = bufs->end_tick };
  if (ml_plan_add_segment (p, &g) < 0)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  return 0;
}

int
ml_plan_read_csv (const char *path, const MlBuffers *bufs, MlPlan **out, MlError *err)
{
  MlLineReader r;
  int rc = ml_lines_open (&r, path, err);
  if (rc < 0)
    return rc;
  const char *base = strrchr (path, '/');
  MlPlan *p = ml_plan_new (bufs->n, base ? base + 1 : path);   /* the plan is named after its file */
  long *row_of = calloc (bufs->n + 1, sizeof *row_of);
  Ids ids = { 0 };
  ml_u64map_init (&ids.num);
  int col[COL__N], ncols = -1;
  if (!p || !row_of)
    rc = ml_error_set (err, ML_ENOMEM, "out of memory");
  else if ((ids.unique = ml_buffers_csv_ids_unique (bufs, err)) < 0)
    rc = ids.unique;
  while (rc >= 0 && (rc = ml_lines_next (&r, err)) > 0)
    {
      char *f[16];
      int nf = split (r.line, f, 16);
      if (r.len == 0)
        continue;
      if (nf < 0)
        rc = ml_error_set (err, ML_EINPUT, "%s:%ld: more than 16 columns", path, r.lineno);
      else if (ncols < 0)
        rc = read_header (path, f, ncols = nf, col, err);
      else if (nf != ncols)
        rc = ml_error_set (err, ML_EINPUT, "%s:%ld: %d fields, the header has %d%s", path, r.lineno, nf, ncols,
                           r.missing_newline ? " (the file looks truncated)" : "");
      else
        rc = read_row (path, r.lineno, f, col, bufs, &ids, row_of, p, err);
    }
  if (rc == 0 && ncols < 0)
    rc = ml_error_set (err, ML_EINPUT, "%s: empty: a plan CSV has the header id,lower,upper,size,offset", path);
  if (rc == 0)
    rc = finish (path, bufs, row_of, p, err);
  ml_lines_close (&r);
  ml_strtab_free (ids.ids);
  ml_u64map_clear (&ids.num);
  free (ids.buffer);
  free (row_of);
  if (rc < 0)
    {
      ml_plan_free (p);
      return rc;
    }
  p->align = bufs->align;
  *out = p;
  return 0;
}
