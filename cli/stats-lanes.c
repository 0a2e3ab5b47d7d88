/* stats-lanes.c — what `memlens stats` says of streams, memory pools,
 * pending frees and a PyTorch snapshot's own account of its trace
 * (sim/analysis/lanes.h; docs/pytorch.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "sim/analysis/lanes.h"
#include "sim/base/jsonutil.h"

/* The skipped actions as names, comma separated. */
static void
put_skipped (FILE *fp, const MlTrace *t, bool json)
{
  bool first = true;
  for (int k = 0; k < ML_EV__COUNT; k++)
    if (t->skipped_actions & (1u << k))
      {
        const char *name = k == ML_EV_FREE ? "free_completed" : ml_event_kind_name ((MlEventKind) k);
        fprintf (fp, json ? "%s\"%s\"" : "%s%s", first ? "" : json ? "," : ", ", name);
        first = false;
      }
}

int
cli_stats_lanes_json (FILE *fp, const MlTrace *t, const MlBuffers *bufs, MlError *err)
{
  MlLanes l;
  int rc = ml_lanes_compute (bufs, &l, err);
  if (rc < 0)
    return rc;
  fprintf (fp, ",\"stream_ids\":[");
  for (size_t s = 0; s < l.n_streams; s++)
    {
      fputs (s ? "," : "", fp);
      ml_json_put_u64 (fp, ml_trace_stream_id (t, l.streams[s].stream));
    }
  fprintf (fp, "],\"pools\":[");
  for (size_t p = 0; p < l.n_pools; p++)
    {
      MlPoolId id = ml_trace_pool_id (t, (uint32_t) p);
      fprintf (fp, "%s{\"id\":[%" PRId64 ",%" PRId64 "],\"kind\":\"%s\",\"buffers\":%" PRIu64 ",\"live_max\":%" PRIu64
               ",\"live_end\":%" PRIu64 ",\"reserved_end\":%" PRIu64 "}", p ? "," : "", id.first, id.second,
               ml_pool_kind (t, (uint32_t) p), l.pools[p].buffers, l.pools[p].live_max, l.pools[p].live_end,
               l.pools[p].reserved_end);
    }
  fprintf (fp, "],\"pending_free\":{\"buffers\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", l.pending_buffers, l.pending_bytes);
  if (t->alloc_conf)
    fputs (",\"allocator_settings\":", fp), ml_json_put_str (fp, t->alloc_conf);
  if (t->ring_entries)
    fprintf (fp, ",\"trace_alloc_max_entries\":%" PRIu64, t->ring_entries);
  if (t->ring_wrapped >= 0)
    fprintf (fp, ",\"trace_alloc_overflowed\":%s", t->ring_wrapped ? "true" : "false");
  fprintf (fp, ",\"skipped_actions\":[");
  put_skipped (fp, t, true);
  fprintf (fp, "]");
  ml_lanes_clear (&l);
  return 0;
}

int
cli_stats_lanes_text (FILE *fp, const MlTrace *t, const MlBuffers *bufs, MlError *err)
{
  MlLanes l;
  int rc = ml_lanes_compute (bufs, &l, err);
  if (rc < 0)
    return rc;
  char lab[ML_STREAM_LABEL_MAX];
  fprintf (fp, "streams      %zu allocating", l.n_streams);
  for (size_t s = 0; s < l.n_streams && s < 8; s++)
    fprintf (fp, "%s%s (%" PRIu64 " buffer%s)", s ? ", " : ": ", ml_trace_stream_label (t, l.streams[s].stream, lab),
             l.streams[s].buffers, l.streams[s].buffers == 1 ? "" : "s");
  fprintf (fp, "%s\n", l.n_streams > 8 ? ", ..." : "");
  if (l.n_pools > 1)
    {
      char pl[ML_POOL_LABEL_MAX];
      for (size_t p = 0; p < l.n_pools; p++)
        fprintf (fp, "%s %s %s: %" PRIu64 " buffer%s, %s live at most, %s reserved at the end\n",
                 p ? "            " : "pools       ", ml_trace_pool_label (t, (uint32_t) p, pl), ml_pool_kind (t, (uint32_t) p),
                 l.pools[p].buffers, l.pools[p].buffers == 1 ? "" : "s", cli_size (l.pools[p].live_max),
                 cli_size (l.pools[p].reserved_end));
    }
  if (l.pending_buffers)
    fprintf (fp, "pending      %" PRIu64 " buffer%s freed by the program, waiting on another stream's work at the end "
             "(active_pending_free): %s\n", l.pending_buffers, l.pending_buffers == 1 ? "" : "s", cli_size (l.pending_bytes));
  if (t->alloc_conf && *t->alloc_conf)
    fprintf (fp, "settings     PYTORCH_CUDA_ALLOC_CONF=%s\n", t->alloc_conf);
  if (t->ring_wrapped > 0)
    fprintf (fp, "history      the trace is the last %" PRIu64 " entries of the run: PyTorch's ring buffer "
             "(trace_alloc_max_entries) wrapped\n", t->ring_entries);
  if (t->skipped_actions)
    {
      fprintf (fp, "skipped      not recorded: ");
      put_skipped (fp, t, false);
      fprintf (fp, " (skip_actions)\n");
    }
  ml_lanes_clear (&l);
  return 0;
}
