/* memlens convert FILE... -o OUT.db (issue 28 item 4): every file into one
 * SQLite database, one row per file in `files` (its rank from the file's
 * name) and its devices, segments, buffers, events, stacks, frames and
 * call sites beside it; the schema is docs/export.md. The database is
 * written to ml_out's temporary file and renamed over OUT.db once it is
 * whole: a failed convert leaves no partial database behind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/export-sqlite.h"
#include "cli/ranks.h"
#include "sim/base/io.h"
#include "sim/base/u64map.h"

#ifdef ML_HAVE_SQLITE
#include <sqlite3.h>

static const char schema[] =
  "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
  "CREATE TABLE files (file_id INTEGER PRIMARY KEY, path TEXT NOT NULL, rank INTEGER, source TEXT NOT NULL,"
  " device INTEGER NOT NULL, events INTEGER NOT NULL, buffers INTEGER NOT NULL, peak_allocated INTEGER NOT NULL,"
  " peak_allocated_tick INTEGER NOT NULL);"
  "CREATE TABLE devices (file_id INTEGER NOT NULL REFERENCES files, device INTEGER NOT NULL, is_read INTEGER NOT NULL,"
  " trace_entries INTEGER NOT NULL, segments INTEGER NOT NULL, segment_bytes INTEGER NOT NULL,"
  " reserved_start INTEGER NOT NULL, reserved_end INTEGER NOT NULL, reserved_max INTEGER NOT NULL,"
  " ooms INTEGER NOT NULL, PRIMARY KEY (file_id, device));"
  "CREATE TABLE events (file_id INTEGER NOT NULL REFERENCES files, event_id INTEGER NOT NULL, tick INTEGER NOT NULL,"
  " kind TEXT NOT NULL, trace_id INTEGER NOT NULL, addr INTEGER NOT NULL, size INTEGER NOT NULL, time_ns INTEGER,"
  " name TEXT, stack_id INTEGER NOT NULL, stream INTEGER NOT NULL, device INTEGER NOT NULL,"
  " PRIMARY KEY (file_id, event_id));"
  "CREATE TABLE segments (file_id INTEGER NOT NULL REFERENCES files, segment_id INTEGER NOT NULL,"
  " addr INTEGER NOT NULL, size INTEGER NOT NULL, stream INTEGER NOT NULL, start_tick INTEGER NOT NULL,"
  " end_tick INTEGER, PRIMARY KEY (file_id, segment_id));"
  "CREATE TABLE buffers (file_id INTEGER NOT NULL REFERENCES files, buffer_id INTEGER NOT NULL,"
  " trace_id INTEGER NOT NULL, size INTEGER NOT NULL, rsize INTEGER NOT NULL, addr INTEGER,"
  " start_tick INTEGER NOT NULL, end_tick INTEGER NOT NULL, stream INTEGER NOT NULL, stack_id INTEGER NOT NULL,"
  " site_id INTEGER NOT NULL, PRIMARY KEY (file_id, buffer_id));"
  "CREATE TABLE stacks (file_id INTEGER NOT NULL REFERENCES files, stack_id INTEGER NOT NULL,"
  " site_id INTEGER NOT NULL, frames INTEGER NOT NULL, PRIMARY KEY (file_id, stack_id));"
  "CREATE TABLE frames (file_id INTEGER NOT NULL REFERENCES files, stack_id INTEGER NOT NULL,"
  " depth INTEGER NOT NULL, filename TEXT NOT NULL, line INTEGER NOT NULL, function TEXT NOT NULL,"
  " PRIMARY KEY (file_id, stack_id, depth));"
  "CREATE TABLE call_sites (file_id INTEGER NOT NULL REFERENCES files, site_id INTEGER NOT NULL,"
  " site TEXT NOT NULL, PRIMARY KEY (file_id, site_id));"
  "BEGIN;";

/* after the rows: the common queries' indexes (docs/export.md) */
static const char indexes[] =
  "CREATE INDEX buffers_site ON buffers (file_id, site_id);"
  "CREATE INDEX buffers_ticks ON buffers (file_id, start_tick, end_tick);"
  "CREATE INDEX events_kind ON events (file_id, kind, tick);"
  "CREATE INDEX frames_file ON frames (filename, line);"
  "CREATE INDEX call_sites_site ON call_sites (site);"
  "CREATE INDEX files_rank ON files (rank);"
  "COMMIT;";

typedef struct {
  sqlite3      *db;
  sqlite3_stmt *st[8];
  const char   *out;
} Db;

enum { S_FILE, S_DEVICE, S_EVENT, S_SEGMENT, S_BUFFER, S_STACK, S_FRAME, S_SITE };
static const char *const inserts[8] = {
  "INSERT INTO files VALUES (?,?,?,?,?,?,?,?,?)",
  "INSERT INTO devices VALUES (?,?,?,?,?,?,?,?,?,?)",
  "INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
  "INSERT INTO segments VALUES (?,?,?,?,?,?,?)",
  "INSERT INTO buffers VALUES (?,?,?,?,?,?,?,?,?,?,?)",
  "INSERT INTO stacks VALUES (?,?,?,?)",
  "INSERT INTO frames VALUES (?,?,?,?,?,?)",
  "INSERT INTO call_sites VALUES (?,?,?)",
};

static int
db_fail (Db *d, const char *what)
{
  return cli_fail ("convert", EXIT_BAD, "%s: %s: %s", d->out, what, sqlite3_errmsg (d->db));
}

/* Binds the 64-bit values @v (NULL where @null has the bit) and the
 * texts @s to statement @k in order, @nv values first, and steps it. */
static int
row (Db *d, int k, const int64_t *v, int nv, unsigned null, const char *const *s, int ns)
{
  sqlite3_stmt *st = d->st[k];
  sqlite3_reset (st);
  for (int i = 0; i < nv; i++)
    if (null & (1u << i))
      sqlite3_bind_null (st, i + 1);
    else
      sqlite3_bind_int64 (st, i + 1, v[i]);
  for (int i = 0; i < ns; i++)
    if (s[i])
      sqlite3_bind_text (st, nv + i + 1, s[i], -1, SQLITE_STATIC);
    else
      sqlite3_bind_null (st, nv + i + 1);
  return sqlite3_step (st) == SQLITE_DONE ? 0 : db_fail (d, "cannot insert a row");
}

/* files has its texts in the middle: bound by hand */
static int
put_file (Db *d, int64_t fid, const char *path, const MlTrace *t, const MlBuffers *bufs)
{
  sqlite3_stmt *st = d->st[S_FILE];
  long rank = cli_rank_of (path, t->has_rank ? (int64_t) t->rank : -1);
  sqlite3_reset (st);
  sqlite3_bind_int64 (st, 1, fid);
  sqlite3_bind_text (st, 2, path, -1, SQLITE_STATIC);
  if (rank >= 0)
    sqlite3_bind_int64 (st, 3, rank);
  else
    sqlite3_bind_null (st, 3);
  sqlite3_bind_text (st, 4, ml_trace_str (t, t->source), -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 5, t->device);
  sqlite3_bind_int64 (st, 6, (int64_t) t->n_events);
  sqlite3_bind_int64 (st, 7, (int64_t) bufs->n);
  sqlite3_bind_int64 (st, 8, (int64_t) bufs->lower_bound);
  sqlite3_bind_int64 (st, 9, (int64_t) bufs->lower_bound_tick);
  return sqlite3_step (st) == SQLITE_DONE ? 0 : db_fail (d, "cannot insert a row");
}

static int
put_devices (Db *d, int64_t fid, const MlTrace *t)
{
  for (size_t k = 0; k < t->n_devices; k++)
    {
      const MlDeviceInfo *di = &t->devices[k];
      int64_t v[10] = { fid, di->device, di->device == t->device, (int64_t) di->entries, (int64_t) di->segments,
                        (int64_t) di->segment_bytes, (int64_t) di->reserved_start, (int64_t) di->reserved_end,
                        (int64_t) di->reserved_max, (int64_t) di->ooms };
      if (row (d, S_DEVICE, v, 10, 0, NULL, 0) < 0)
        return -1;
    }
  return 0;
}

static bool
is_seg_start (uint8_t k)
{
  return k == ML_EV_SEGMENT_ALLOC || k == ML_EV_SEGMENT_MAP;
}

static bool
is_seg_end (uint8_t k)
{
  return k == ML_EV_SEGMENT_FREE || k == ML_EV_SEGMENT_UNMAP;
}

/* The segments the events map: a segment event starts one at its
 * address, the next free / unmap of that address ends it (end -1: mapped
 * at the end). */
typedef struct {
  const MlEvent *start;
  int64_t        end;
} Seg;

static int
put_segments (Db *d, int64_t fid, const MlTrace *t)
{
  Seg *seg = NULL;
  size_t n = 0, cap = 0;
  MlU64Map open;
  ml_u64map_init (&open);
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < t->n_events; i++)
    {
      const MlEvent *ev = &t->events[i];
      uint32_t k;
      if (is_seg_start (ev->kind))
        {
          if (n == cap && !(seg = realloc (seg, (cap = cap ? cap * 2 : 64) * sizeof *seg)))
            rc = cli_fail ("convert", EXIT_BAD, "out of memory");
          else if (n >= UINT32_MAX || ml_u64map_put (&open, ev->addr, (uint32_t) n) < 0)
            rc = cli_fail ("convert", EXIT_BAD, "out of memory");
          else
            seg[n++] = (Seg) { ev, -1 };
        }
      else if (is_seg_end (ev->kind) && ml_u64map_get (&open, ev->addr, &k))
        {
          seg[k].end = (int64_t) ev->tick;
          ml_u64map_del (&open, ev->addr);
        }
    }
  for (size_t k = 0; rc == 0 && k < n; k++)
    {
      const MlEvent *ev = seg[k].start;
      int64_t v[7] = { fid, (int64_t) k, (int64_t) ev->addr, (int64_t) ev->size,
                       (int64_t) ml_trace_stream_id (t, ev->stream), (int64_t) ev->tick, seg[k].end };
      rc = row (d, S_SEGMENT, v, 7, seg[k].end < 0 ? 1u << 6 : 0, NULL, 0);
    }
  ml_u64map_clear (&open);
  free (seg);
  return rc;
}

/* events: file, id, tick, kind, trace_id, addr, size, time, name, stack,
 * stream, device */
static int
put_events (Db *d, int64_t fid, const MlTrace *t, const MlProgress *pg)
{
  sqlite3_stmt *st = d->st[S_EVENT];
  for (size_t i = 0; i < t->n_events; i++)
    {
      const MlEvent *ev = &t->events[i];
      if (pg && (i & 0xffff) == 0)
        pg->report (pg->user, (double) i / (double) t->n_events, "writing events");
      sqlite3_reset (st);
      sqlite3_bind_int64 (st, 1, fid);
      sqlite3_bind_int64 (st, 2, (int64_t) i);
      sqlite3_bind_int64 (st, 3, (int64_t) ev->tick);
      sqlite3_bind_text (st, 4, ml_event_kind_name ((MlEventKind) ev->kind), -1, SQLITE_STATIC);
      sqlite3_bind_int64 (st, 5, (int64_t) ev->id);
      sqlite3_bind_int64 (st, 6, (int64_t) ev->addr);
      sqlite3_bind_int64 (st, 7, (int64_t) ev->size);
      if (t->has_times)
        sqlite3_bind_int64 (st, 8, ev->time_ns);
      else
        sqlite3_bind_null (st, 8);
      if (ev->name)
        sqlite3_bind_text (st, 9, ml_trace_str (t, ev->name), -1, SQLITE_STATIC);
      else
        sqlite3_bind_null (st, 9);
      sqlite3_bind_int64 (st, 10, ev->stack);
      sqlite3_bind_int64 (st, 11, (int64_t) ml_trace_stream_id (t, ev->stream));
      sqlite3_bind_int64 (st, 12, ev->device);
      if (sqlite3_step (st) != SQLITE_DONE)
        return db_fail (d, "cannot insert a row");
    }
  return put_segments (d, fid, t);
}

static uint32_t
site_of (const MlTrace *t, uint32_t stack)
{
  return stack && stack < t->n_stacks ? t->stacks[stack].site : 0;
}

/* buffers, stacks, their frames and the call sites (each site once) */
static int
put_buffers (Db *d, int64_t fid, const MlTrace *t, const MlBuffers *bufs, const MlProgress *pg)
{
  for (size_t i = 0; i < bufs->n; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      if (pg && (i & 0xffff) == 0)
        pg->report (pg->user, (double) i / (double) bufs->n, "writing buffers");
      int64_t v[11] = { fid, (int64_t) i, (int64_t) b->id, (int64_t) b->size, (int64_t) b->rsize, (int64_t) b->addr,
                        (int64_t) b->start, (int64_t) b->end, (int64_t) ml_trace_stream_id (t, b->stream), b->stack,
                        site_of (t, b->stack) };
      if (row (d, S_BUFFER, v, 11, (b->flags & ML_BUF_HAS_ADDR) ? 0 : 1u << 5, NULL, 0) < 0)
        return -1;
    }
  MlU64Map seen;
  ml_u64map_init (&seen);
  int rc = 0;
  for (size_t k = 1; rc == 0 && k < t->n_stacks; k++)
    {
      const MlStack *st = &t->stacks[k];
      if (pg && (k & 0xffff) == 0)
        pg->report (pg->user, (double) k / (double) t->n_stacks, "writing stacks");
      int64_t v[6] = { fid, (int64_t) k, st->site, st->n };
      if ((rc = row (d, S_STACK, v, 4, 0, NULL, 0)) < 0)
        break;
      for (uint32_t f = 0; rc == 0 && f < st->n; f++)
        {
          const MlFrame *fr = ml_trace_stack_frame (t, st, f);
          int64_t fv[4] = { fid, (int64_t) k, f, fr->line };
          const char *txt[2] = { ml_trace_str (t, fr->file), ml_trace_str (t, fr->func) };
          /* frames: file, stack, depth, filename, line, function */
          sqlite3_stmt *s = d->st[S_FRAME];
          sqlite3_reset (s);
          sqlite3_bind_int64 (s, 1, fv[0]);
          sqlite3_bind_int64 (s, 2, fv[1]);
          sqlite3_bind_int64 (s, 3, fv[2]);
          sqlite3_bind_text (s, 4, txt[0], -1, SQLITE_STATIC);
          sqlite3_bind_int64 (s, 5, fv[3]);
          sqlite3_bind_text (s, 6, txt[1], -1, SQLITE_STATIC);
          if (sqlite3_step (s) != SQLITE_DONE)
            rc = db_fail (d, "cannot insert a row");
        }
      uint32_t dummy;
      if (rc == 0 && st->site && !ml_u64map_get (&seen, st->site, &dummy))
        {
          if (ml_u64map_put (&seen, st->site, 1) < 0)
            rc = cli_fail ("convert", EXIT_BAD, "out of memory");
          const char *txt = ml_trace_str (t, st->site);
          int64_t sv[2] = { fid, st->site };
          if (rc == 0)
            rc = row (d, S_SITE, sv, 2, 0, &txt, 1);
        }
    }
  ml_u64map_clear (&seen);
  return rc;
}

static int
put_one (Db *d, int64_t fid, const char *path, MlCliOpts *o)
{
  MlTrace *t;
  MlBuffers *bufs;
  int rc = cli_load ("convert", path, o, &t, &bufs);
  if (rc)
    return rc;
  const MlProgress *pg = cli_progress (o->quiet);
  if (put_file (d, fid, path, t, bufs) < 0 || put_devices (d, fid, t) < 0 || put_events (d, fid, t, pg) < 0
      || put_buffers (d, fid, t, bufs, pg) < 0)
    rc = EXIT_BAD;
  cli_progress_done ();
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return rc;
}

int
cli_export_sqlite (const char *out, char **files, size_t n, MlCliOpts *o)
{
  MlError err = { 0 };
  if (strcmp (out, "-") == 0)
    return cli_fail ("convert", EXIT_BAD, "a SQLite database is written to a file, not to standard output");
  MlOut *mo = ml_out_open (out, &err);   /* refuses an input, keeps the old file until the new one is whole */
  if (!mo)
    return cli_error ("convert", &err);
  Db d = { .out = out };
  int rc = EXIT_OK;
  if (sqlite3_open_v2 (ml_out_tmp_path (mo), &d.db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
    rc = db_fail (&d, "cannot open the database");
  else if (sqlite3_exec (d.db, schema, NULL, NULL, NULL) != SQLITE_OK)
    rc = db_fail (&d, "cannot make the tables");
  for (int k = 0; rc == EXIT_OK && k < 8; k++)
    if (sqlite3_prepare_v2 (d.db, inserts[k], -1, &d.st[k], NULL) != SQLITE_OK)
      rc = db_fail (&d, "cannot prepare an insert");
  for (size_t k = 0; rc == EXIT_OK && k < n; k++)
    {
      for (size_t j = 0; j < k; j++)
        if (strcmp (files[j], files[k]) == 0)
          {
            rc = cli_fail ("convert", EXIT_BAD, "%s: given twice", files[k]);
            break;
          }
      if (rc == EXIT_OK)
        rc = put_one (&d, (int64_t) k + 1, files[k], o);
    }
  if (rc == EXIT_OK && sqlite3_exec (d.db, indexes, NULL, NULL, NULL) != SQLITE_OK)
    rc = db_fail (&d, "cannot make the indexes");
  for (int k = 0; k < 8; k++)
    sqlite3_finalize (d.st[k]);
  if (d.db && sqlite3_close (d.db) != SQLITE_OK && rc == EXIT_OK)
    rc = cli_fail ("convert", EXIT_BAD, "%s: cannot close the database", out);
  if (rc != EXIT_OK)
    ml_out_abort (mo);
  else if (ml_out_commit (mo, &err) < 0)
    rc = cli_error ("convert", &err);
  else if (!o->quiet)
    fprintf (stderr, "memlens convert: wrote %s (%zu file%s)\n", out, n, n == 1 ? "" : "s");
  return rc;
}

#else

int
cli_export_sqlite (const char *out, char **files, size_t n, MlCliOpts *o)
{
  (void) files, (void) n, (void) o;
  return cli_fail ("convert", EXIT_BAD,
                   "%s: this memlens was built without SQLite: install libsqlite3-dev (tools/deps.sh) and build "
                   "again (meson setup --reconfigure build), or write .jsonl or .csv",
                   out);
}

#endif
