/* stats-query.c — `memlens stats --group-by` (live bytes by group at each
 * peak, sim/analysis/groups.h) and `--find` / `--find-frame` (which
 * buffer held an address, at a tick or ever; which buffers a frame
 * allocated). docs/pytorch.md, "Groups and search". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/analysis/find.h"
#include "sim/analysis/lanes.h"
#include "sim/base/jsonutil.h"

/* ---- --group-by ---- */

int
cli_stats_groups (FILE *fp, const MlBuffers *bufs, const MlGroupKeys *keys, uint64_t tick, uint64_t live,
                  bool json, MlError *err)
{
  MlGroupRow *rows;
  size_t n;
  int rc = ml_group_at (bufs, keys, tick, &rows, &n, err);
  if (rc < 0)
    return rc;
  fprintf (fp, json ? ",\"groups\":[" : "  by group:\n");
  for (size_t k = 0; k < n; k++)
    if (json)
      {
        fprintf (fp, "%s{\"group\":", k ? "," : "");
        ml_json_put_str (fp, keys->names[rows[k].group]);
        fprintf (fp, ",\"bytes\":%" PRIu64 ",\"buffers\":%" PRIu64 "}", rows[k].bytes, rows[k].buffers);
      }
    else
      fprintf (fp, "  %10s  %5.1f%%  %s (%" PRIu64 " buffer%s)\n", cli_size (rows[k].bytes),
               live ? 100.0 * (double) rows[k].bytes / (double) live : 0.0, keys->names[rows[k].group],
               rows[k].buffers, rows[k].buffers == 1 ? "" : "s");
  if (json)
    fputc (']', fp);
  free (rows);
  return 0;
}

/* ---- --find ---- */

int
cli_find_parse (const char *arg, CliFind *f)
{
  MlFindAddr q;
  memset (f, 0, sizeof *f);
  f->text = arg;
  f->tick = UINT64_MAX;
  if (ml_find_addr_parse (arg, false, &q) < 0)
    return -1;
  f->addr = q.addr;
  f->tick = q.tick;
  return 0;
}

/* Buffer @i's annotations (annotate entries tied to it), "; "-joined. */
static void
put_annotations (FILE *fp, const MlBuffers *bufs, size_t i, bool json)
{
  uint32_t names[64];
  size_t n = ml_buffer_annotations (bufs, i, names, 64);
  if (json)
    fprintf (fp, ",\"annotations\":[");
  for (size_t k = 0; k < n && k < 64; k++)
    if (json)
      fprintf (fp, "%s", k ? "," : ""), ml_json_put_str (fp, ml_trace_str (bufs->trace, names[k]));
    else
      fprintf (fp, "%s%s", k ? "; " : "; annotated: ", ml_trace_str (bufs->trace, names[k]));
  if (json)
    fputc (']', fp);
}

static void
put_found (FILE *fp, const MlBuffers *bufs, size_t i, uint64_t addr, bool with_offset, bool json, bool first)
{
  const MlTrace *t = bufs->trace;
  const MlBuffer *b = &bufs->buf[i];
  char stream[ML_STREAM_LABEL_MAX], pool[ML_POOL_LABEL_MAX];
  const char *site = b->stack ? ml_trace_str (t, t->stacks[b->stack].site) : "";
  ml_trace_stream_label (t, b->stream, stream);
  ml_trace_pool_label (t, ml_buffer_pool (bufs, i), pool);
  if (json)
    {
      fprintf (fp, "%s{\"index\":%zu,\"id\":", first ? "" : ",", i);
      ml_json_put_u64 (fp, b->id);
      fprintf (fp, ",\"addr\":");
      ml_json_put_u64 (fp, b->addr);
      fprintf (fp, ",\"bytes\":%" PRIu64 ",\"requested\":%" PRIu64 ",\"start\":%" PRIu64 ",\"end\":%" PRIu64,
               b->rsize, b->size, b->start, b->end);
      if (with_offset)
        fprintf (fp, ",\"offset\":%" PRIu64, addr - b->addr);
      fprintf (fp, ",\"stream\":\"%s\",\"pool\":\"%s\",\"site\":", stream, pool);
      ml_json_put_str (fp, site ? site : "");
      put_annotations (fp, bufs, i, true);
      fputc ('}', fp);
      return;
    }
  fprintf (fp, "  buffer %" PRIu64 ": %s at 0x%" PRIx64 " .. 0x%" PRIx64, b->id, cli_size (b->rsize), b->addr,
           b->addr + b->rsize);
  if (with_offset)
    fprintf (fp, " (+%" PRIu64 ")", addr - b->addr);
  fprintf (fp, ", ticks [%" PRIu64 ", %" PRIu64 ")%s, stream %s, pool %s", b->start, b->end,
           (b->flags & ML_BUF_NEVER_FREED) ? " (never freed)" : "", stream, pool);
  if (site && *site)
    fprintf (fp, "  (%s)", site);
  put_annotations (fp, bufs, i, false);
  fputc ('\n', fp);
}

/* Whether buffer @i matches @f: its bytes hold the address (at the tick),
 * or (@stacks, by frame) a frame of its stack contains the text. */
static bool
matches (const MlBuffers *bufs, size_t i, const CliFind *f, const uint8_t *stacks)
{
  const MlBuffer *b = &bufs->buf[i];
  if (stacks)
    return b->stack && b->stack < bufs->trace->n_stacks && stacks[b->stack];
  MlFindAddr q = { f->addr, f->tick, false };
  return (b->flags & ML_BUF_HAS_ADDR) && b->rsize && ml_find_addr_holds (&q, b->addr, b->rsize, b->start, b->end);
}

int
cli_stats_find (FILE *fp, const char *path, const MlBuffers *bufs, const CliFind *f, bool by_frame, bool json)
{
  size_t found = 0;
  uint64_t bytes = 0;
  uint8_t *stacks = NULL;
  if (by_frame && !(stacks = ml_find_frame_stacks (bufs->trace, f->text, false)))
    {
      fprintf (stderr, "memlens stats: out of memory\n");
      return EXIT_PROBLEMS;
    }
  if (json)
    {
      fprintf (fp, "{\"trace\":");
      ml_json_put_str (fp, path);
      fprintf (fp, by_frame ? ",\"find_frame\":" : ",\"find\":");
      ml_json_put_str (fp, f->text);
      if (!by_frame)
        {
          fprintf (fp, ",\"addr\":");
          ml_json_put_u64 (fp, f->addr);
          if (f->tick != UINT64_MAX)
            fprintf (fp, ",\"tick\":%" PRIu64, f->tick);
        }
      fprintf (fp, ",\"buffers\":[");
    }
  for (size_t i = 0; i < bufs->n; i++)
    if (matches (bufs, i, f, stacks))
      {
        if (!json && !found)
          {
            if (by_frame)
              fprintf (fp, "buffers allocated under a frame containing \"%s\":\n", f->text);
            else if (f->tick != UINT64_MAX)
              fprintf (fp, "0x%" PRIx64 " at tick %" PRIu64 " was held by:\n", f->addr, f->tick);
            else
              fprintf (fp, "0x%" PRIx64 " was held by, in time order:\n", f->addr);
          }
        if (json || found < 50)
          put_found (fp, bufs, i, f->addr, !by_frame, json, found == 0);
        found++;
        bytes += bufs->buf[i].rsize;
      }
  if (json)
    fprintf (fp, "],\"found\":%zu,\"bytes\":%" PRIu64 "}\n", found, bytes);
  else if (!found && by_frame)
    fprintf (fp, "no buffer was allocated under a frame containing \"%s\"\n", f->text);
  else if (!found)
    {
      fprintf (fp, "no buffer held 0x%" PRIx64, f->addr);
      if (f->tick != UINT64_MAX)
        fprintf (fp, " at tick %" PRIu64, f->tick);
      fputc ('\n', fp);
    }
  else
    fprintf (fp, "%s%zu buffer%s, %s in all\n", found > 50 ? "  ...\n" : "", found, found == 1 ? "" : "s",
             cli_size (bytes));
  free (stacks);
  return found ? EXIT_OK : EXIT_PROBLEMS;
}
