#include "sim/plan.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "sim/base/array.h"
#include "sim/base/io.h"
#include "sim/base/jsonutil.h"
#include "sim/base/u64map.h"

MlPlan *
ml_plan_new (size_t n, const char *strategy)
{
  MlPlan *p = calloc (1, sizeof *p);
  if (!p)
    return NULL;
  p->n = n;
  p->segment = calloc (n ? n : 1, sizeof *p->segment);
  p->offset = calloc (n ? n : 1, sizeof *p->offset);
  p->strategy = strdup (strategy ? strategy : "");
  if (!p->segment || !p->offset || !p->strategy)
    {
      ml_plan_free (p);
      return NULL;
    }
  return p;
}

void
ml_plan_free (MlPlan *p)
{
  if (!p)
    return;
  free (p->segment);
  free (p->offset);
  free (p->segments);
  free (p->maps);
  free (p->strategy);
  free (p->note);
  free (p);
}

long
ml_plan_add_segment (MlPlan *p, const MlSegment *seg)
{
  if (ML_ARRAY_RESERVE (p->segments, p->n_segments, p->cap_segments, 8) < 0)
    return -1;
  p->segments[p->n_segments] = *seg;
  return (long) p->n_segments++;
}

long
ml_plan_add_mapping (MlPlan *p, const MlMapping *map)
{
  if (p->n_maps == p->cap_maps)
    {
      size_t cap = p->cap_maps ? p->cap_maps * 2 : 8;
      MlMapping *m = realloc (p->maps, cap * sizeof *m);
      if (!m)
        return -1;
      p->maps = m;
      p->cap_maps = cap;
    }
  p->maps[p->n_maps] = *map;
  return (long) p->n_maps++;
}

int
ml_plan_set_note (MlPlan *p, const char *note)
{
  char *n = strdup (note);
  if (!n)
    return ML_ENOMEM;
  free (p->note);
  p->note = n;
  return 0;
}

uint64_t
ml_plan_arena_size (const MlPlan *p, const MlBuffers *bufs)
{
  uint64_t top = 0;
  /* buffers that hold no bytes (empty size or empty lifetime) take no room */
  for (size_t i = 0; i < p->n; i++)
    if (bufs->buf[i].rsize && bufs->buf[i].end > bufs->buf[i].start && p->offset[i] + bufs->buf[i].rsize > top)
      top = p->offset[i] + bufs->buf[i].rsize;
  return top;
}

int
ml_plan_make_arena (MlPlan *p, const MlBuffers *bufs)
{
  MlSegment seg = { .size = ml_plan_arena_size (p, bufs), .start = 0, .end = bufs->end_tick };
  p->n_segments = 0;
  p->n_maps = 0;
  if (ml_plan_add_segment (p, &seg) < 0)
    return ML_ENOMEM;
  memset (p->segment, 0, p->n * sizeof *p->segment);
  return 0;
}

/* ---- JSON ---- */

int
ml_oom_write_json (const MlOom *o, const MlBuffers *bufs, FILE *fp, MlError *err)
{
  if (!o->hit)
    {
      fputs ("null", fp);
      return ferror (fp) ? ml_error_set (err, ML_EIO, "write error: %s", strerror (errno ? errno : EIO)) : 0;
    }
  fprintf (fp, "{\"tick\":%" PRIu64 ",\"buffer\":", o->tick);
  if (o->request && o->buffer < bufs->n)
    ml_json_put_u64 (fp, bufs->buf[o->buffer].id);
  else
    fputs ("null", fp);
  fprintf (fp, ",\"request\":%" PRIu64 ",\"live\":%" PRIu64 ",\"reserved\":%" PRIu64 ",\"free\":%" PRIu64
           ",\"largest_free\":%" PRIu64 ",\"verdict\":\"%s\",\"retries\":%u,\"released\":%" PRIu64 "}",
           o->request, o->live, o->reserved, o->free_bytes, o->largest_free,
           ml_oom_verdict_name (o->verdict), o->retries, o->released);
  return ferror (fp) ? ml_error_set (err, ML_EIO, "write error: %s", strerror (errno ? errno : EIO)) : 0;
}

MlOomVerdict
ml_oom_verdict_of (uint64_t request, uint64_t free)
{
  if (!request)
    return ML_OOM_EMPTY_REQUEST;
  return free >= request ? ML_OOM_FRAGMENTATION : ML_OOM_CAPACITY;
}

const char *
ml_oom_verdict_name (MlOomVerdict v)
{
  switch (v)
    {
    case ML_OOM_CAPACITY:      return "capacity";
    case ML_OOM_FRAGMENTATION: return "fragmentation";
    case ML_OOM_OVER_CAPACITY: return "over-capacity";
    case ML_OOM_EMPTY_REQUEST: return "empty-request";
    }
  return "?";
}

void
ml_oom_over_capacity (MlOom *o)
{
  o->hit = true;
  o->request = 0;
  o->verdict = ML_OOM_OVER_CAPACITY;
}

int
ml_plan_write_json (const MlPlan *p, const MlBuffers *bufs, const char *path, MlError *err)
{
  MlOut *out = ml_out_open (path, err);
  if (!out)
    return err ? err->code : ML_EIO;
  FILE *fp = ml_out_file (out);
  fputs ("{\"format\":\"memlens-plan\",\"version\":1,\"strategy\":", fp);
  ml_json_put_str (fp, p->strategy ? p->strategy : "");
  fprintf (fp, ",\"alignment\":%" PRIu64 ",\"buffers_count\":%zu", p->align ? p->align : bufs->align, p->n);
  fprintf (fp, ",\"lower_bound\":%" PRIu64, bufs->lower_bound);
  fprintf (fp, ",\"optimal\":%s", p->optimal ? "true" : "false");
  if (p->proven_lb)
    fprintf (fp, ",\"proven_lower_bound\":%" PRIu64, p->proven_lb);
  fprintf (fp, ",\"seconds\":%.6f,\"nodes_visited\":%" PRIu64 ",\"backtracks\":%" PRIu64, p->seconds,
           p->nodes_visited, p->backtracks);
  if (p->note)
    fputs (",\"note\":", fp), ml_json_put_str (fp, p->note);
  fputs (",\n\"segments\":[", fp);
  for (size_t s = 0; s < p->n_segments; s++)
    {
      const MlSegment *g = &p->segments[s];
      fprintf (fp, "%s\n{\"id\":%zu,\"size\":", s ? "," : "", s);
      ml_json_put_u64 (fp, g->size);
      fprintf (fp, ",\"start\":%" PRIu64 ",\"end\":%" PRIu64, g->start, g->end);
      if (g->addr)
        fprintf (fp, ",\"addr\":\"0x%" PRIx64 "\"", g->addr);
      if (g->stream)
        fprintf (fp, ",\"stream\":%u", g->stream);
      if (g->flags & ML_SEG_GROWABLE)
        fputs (",\"growable\":true", fp);
      if (g->flags & ML_SEG_EXPANDABLE)
        fputs (",\"expandable\":true", fp);
      if (g->flags & ML_SEG_PAGED)
        fputs (",\"paged\":true", fp);
      fputc ('}', fp);
    }
  fputs ("],\n", fp);
  if (p->n_maps)
    {
      fputs ("\"maps\":[", fp);
      for (size_t k = 0; k < p->n_maps; k++)
        {
          const MlMapping *m = &p->maps[k];
          fprintf (fp, "%s\n{\"segment\":%u,\"offset\":", k ? "," : "", m->segment);
          ml_json_put_u64 (fp, m->offset);
          fputs (",\"size\":", fp);
          ml_json_put_u64 (fp, m->size);
          fprintf (fp, ",\"start\":%" PRIu64 ",\"end\":%" PRIu64 "}", m->start, m->end);
        }
      fputs ("],\n", fp);
    }
  fputs ("\"buffers\":[", fp);
  for (size_t i = 0; i < p->n; i++)
    {
      fprintf (fp, "%s\n{\"index\":%zu,\"id\":", i ? "," : "", i);
      ml_json_put_u64 (fp, bufs->buf[i].id);
      fprintf (fp, ",\"segment\":%u,\"offset\":", p->segment[i]);
      ml_json_put_u64 (fp, p->offset[i]);
      fputc ('}', fp);
    }
  fputs ("]}\n", fp);
  return ml_out_commit (out, err);
}

/* The plan's own fields: format, version, strategy (*@out made),
 * alignment, optimal. */
static int
read_plan_header (const cJSON *root, const char *path, const MlBuffers *bufs, MlPlan **out, MlError *err)
{
  const char *fmt = ml_json_str (root, "format");
  if (!fmt || strcmp (fmt, "memlens-plan") != 0)
    return ml_error_set (err, ML_EINPUT, "%s: not a memlens plan (\"format\" is not \"memlens-plan\")", path);
  uint64_t version, align = 0;
  int rc;
  if ((rc = ml_json_u64 (root, "version", true, &version, err)) < 0)
    return ml_error_prefix (err, "%s", path);
  if (version != 1)
    return ml_error_set (err, ML_EINPUT, "%s: plan version %" PRIu64 " is not supported (this memlens reads 1)", path, version);
  const char *strategy = ml_json_str (root, "strategy");
  MlPlan *p = *out = ml_plan_new (bufs->n, strategy ? strategy : "file");
  if (!p)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  if ((rc = ml_json_u64 (root, "alignment", false, &align, err)) < 0)
    return ml_error_prefix (err, "%s", path);
  p->align = rc == 0 ? align : bufs->align;
  p->optimal = cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (root, "optimal"));
  return 0;
}

/* Segment @k of "segments". */
static int
read_segment (const cJSON *it, size_t k, const char *path, const MlBuffers *bufs, MlPlan *p, MlError *err)
{
  MlSegment g = { 0 };
  uint64_t x;
  int rc;
  if ((rc = ml_json_u64 (it, "size", true, &g.size, err)) < 0
      || (rc = ml_json_u64 (it, "start", false, &g.start, err)) < 0
      || (rc = ml_json_u64 (it, "end", false, &x, err)) < 0)
    return ml_error_prefix (err, "%s: segment %zu", path, k);
  g.end = rc == 0 ? x : bufs->end_tick;
  if (g.size > ML_BUFFERS_MAX_TOTAL)
    return ml_error_set (err, ML_EINPUT, "%s: segment %zu: size %" PRIu64 " is past 2^60 bytes (1 EiB)", path, k, g.size);
  if ((rc = ml_json_u64 (it, "addr", false, &g.addr, err)) < 0
      || (rc = ml_json_u64 (it, "stream", false, &x, err)) < 0)
    return ml_error_prefix (err, "%s: segment %zu", path, k);
  if (rc == 0 && x > UINT32_MAX)
    return ml_error_set (err, ML_EINPUT, "%s: segment %zu: stream %" PRIu64 " is past 2^32 - 1", path, k, x);
  if (rc == 0)
    g.stream = (uint32_t) x;
  if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (it, "growable")))
    g.flags |= ML_SEG_GROWABLE;
  if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (it, "expandable")))
    g.flags |= ML_SEG_EXPANDABLE;
  if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (it, "paged")))
    g.flags |= ML_SEG_PAGED;
  if (ml_plan_add_segment (p, &g) < 0)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  return 0;
}

/* Map @k of "maps": pages [offset, offset + size) of a paged segment,
 * mapped during [start, end). */
static int
read_mapping (const cJSON *it, size_t k, const char *path, MlPlan *p, MlError *err)
{
  MlMapping m = { 0 };
  uint64_t seg;
  if (ml_json_u64 (it, "segment", true, &seg, err) < 0 || ml_json_u64 (it, "offset", true, &m.offset, err) < 0
      || ml_json_u64 (it, "size", true, &m.size, err) < 0 || ml_json_u64 (it, "start", true, &m.start, err) < 0
      || ml_json_u64 (it, "end", true, &m.end, err) < 0)
    return ml_error_prefix (err, "%s: map %zu", path, k);
  if (seg >= p->n_segments || !(p->segments[seg].flags & ML_SEG_PAGED))
    return ml_error_set (err, ML_EINPUT, "%s: map %zu: segment %" PRIu64 " is not a paged segment of the plan", path, k, seg);
  if (m.offset > p->segments[seg].size || m.size > p->segments[seg].size - m.offset || m.start > m.end)
    return ml_error_set (err, ML_EINPUT, "%s: map %zu: [%" PRIu64 ", +%" PRIu64 ") ticks [%" PRIu64 ", %" PRIu64
                         ") is outside segment %" PRIu64 " or ends before it starts", path, k, m.offset, m.size, m.start, m.end, seg);
  m.segment = (uint32_t) seg;
  if (ml_plan_add_mapping (p, &m) < 0)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  return 0;
}

/* Entry @k of "buffers": by "index" when given and consistent, else by
 * id (@ids: id -> index; ids must then be unique among the trace's
 * buffers); @seen marks the buffers placed. */
static int
read_placement (const cJSON *it, size_t k, const char *path, const MlBuffers *bufs, const MlU64Map *ids, uint8_t *seen,
                MlPlan *p, MlError *err)
{
  uint64_t id, seg = 0, off, index;
  int has_index;
  if (ml_json_u64 (it, "id", true, &id, err) < 0 || (has_index = ml_json_u64 (it, "index", false, &index, err)) < 0
      || ml_json_u64 (it, "segment", false, &seg, err) < 0 || ml_json_u64 (it, "offset", true, &off, err) < 0)
    return ml_error_prefix (err, "%s: buffer entry %zu", path, k);
  uint32_t b;
  if (has_index == 0 && index < bufs->n && bufs->buf[index].id == id)
    b = (uint32_t) index;
  else if (!ml_u64map_get (ids, id, &b))
    return ml_error_set (err, ML_EINPUT, "%s: buffer entry %zu: id %" PRIu64 " is not a buffer of this trace", path, k, id);
  if (seen[b])
    return ml_error_set (err, ML_EINPUT, "%s: buffer entry %zu: buffer %" PRIu64 " is placed twice", path, k, id);
  if (seg >= p->n_segments)
    return ml_error_set (err, ML_EINPUT, "%s: buffer %" PRIu64 ": segment %" PRIu64 " does not exist (%zu segments)",
                         path, id, seg, p->n_segments);
  if (off > ML_BUFFERS_MAX_TOTAL)
    return ml_error_set (err, ML_EINPUT, "%s: buffer %" PRIu64 ": offset %" PRIu64 " is past 2^60 bytes (1 EiB)", path, id, off);
  seen[b] = 1;
  p->segment[b] = (uint32_t) seg;
  p->offset[b] = off;
  return 0;
}

/* "buffers": every buffer of the trace placed exactly once. */
static int
read_placements (const cJSON *bs, const char *path, const MlBuffers *bufs, MlPlan *p, MlError *err)
{
  uint8_t *seen = calloc (bufs->n ? bufs->n : 1, 1);
  MlU64Map ids;
  ml_u64map_init (&ids);
  int rc = 0;
  if (!seen)
    rc = ml_error_set (err, ML_ENOMEM, "out of memory");
  for (size_t i = 0; i < bufs->n && rc == 0; i++)
    if (ml_u64map_put (&ids, bufs->buf[i].id, (uint32_t) i) < 0)
      rc = ml_error_set (err, ML_ENOMEM, "out of memory");
  const cJSON *it;
  size_t k = 0;
  cJSON_ArrayForEach (it, bs)
    {
      if (rc < 0 || (rc = read_placement (it, k, path, bufs, &ids, seen, p, err)) < 0)
        break;
      k++;
    }
  for (size_t i = 0; i < bufs->n && rc == 0; i++)
    if (!seen[i])
      rc = ml_error_set (err, ML_EINPUT, "%s: buffer %" PRIu64 " (index %zu) has no placement", path, bufs->buf[i].id, i);
  free (seen);
  ml_u64map_clear (&ids);
  return rc;
}

/* The plan in the document @root. */
static int
read_plan (const cJSON *root, const char *path, const MlBuffers *bufs, MlPlan **out, MlError *err)
{
  int rc;
  if ((rc = read_plan_header (root, path, bufs, out, err)) < 0)
    return rc;
  MlPlan *p = *out;
  const cJSON *segs = cJSON_GetObjectItemCaseSensitive (root, "segments");
  const cJSON *bs = cJSON_GetObjectItemCaseSensitive (root, "buffers");
  if (!cJSON_IsArray (segs) || !cJSON_IsArray (bs))
    return ml_error_set (err, ML_EINPUT, "%s: needs \"segments\" and \"buffers\" arrays", path);
  const cJSON *it;
  size_t k = 0;
  cJSON_ArrayForEach (it, segs)
    if ((rc = read_segment (it, k++, path, bufs, p, err)) < 0)
      return rc;
  const cJSON *maps = cJSON_GetObjectItemCaseSensitive (root, "maps");
  if (maps && !cJSON_IsArray (maps))
    return ml_error_set (err, ML_EINPUT, "%s: \"maps\" is not an array", path);
  k = 0;
  cJSON_ArrayForEach (it, maps)
    if ((rc = read_mapping (it, k++, path, p, err)) < 0)
      return rc;
  return read_placements (bs, path, bufs, p, err);
}

int
ml_plan_read_json (const char *path, const MlBuffers *bufs, MlPlan **out, MlError *err)
{
  char *text;
  size_t len;
  int rc = ml_read_file_checked (path, (size_t) 1 << 34, ml_json_text_check, (void *) path, &text, &len, err);
  if (rc < 0)
    return rc;
  cJSON *root = NULL;
  rc = ml_json_parse_doc (path, text, len, &root, err);
  free (text);
  if (rc < 0)
    return rc;
  /* a key given twice was refused by ml_json_parse_doc */
  MlPlan *p = NULL;
  rc = read_plan (root, path, bufs, &p, err);
  cJSON_Delete (root);
  if (rc < 0)
    {
      ml_plan_free (p);
      return rc;
    }
  *out = p;
  return 0;
}

int
ml_plan_unmap (MlPlan *p, uint32_t seg, uint64_t lo, uint64_t hi, uint64_t tick)
{
  size_t n = p->n_maps;
  for (size_t k = 0; k < n; k++)
    {
      MlMapping m = p->maps[k];
      if (m.segment != seg || m.end <= tick || m.start > tick || m.offset >= hi || m.offset + m.size <= lo)
        continue;
      p->maps[k].end = tick;
      uint64_t m_hi = m.offset + m.size;
      MlMapping left = m, right = m;
      left.start = right.start = tick;
      left.size = lo > m.offset ? lo - m.offset : 0;
      right.offset = hi;
      right.size = m_hi > hi ? m_hi - hi : 0;
      if ((left.size && ml_plan_add_mapping (p, &left) < 0) || (right.size && ml_plan_add_mapping (p, &right) < 0))
        return ML_ENOMEM;
    }
  return 0;
}

