/* memlens stats — what a trace holds: events, buffers, devices, peaks. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/analysis/peak-groups.h"
#include "sim/base/jsonutil.h"
#include "sim/formats/snapshot.h"

typedef struct {
  unsigned long npeaks, nblame;
  const char   *group_by, *find, *find_frame;
} StatsArgs;

enum { OPT_GROUP_BY = CLI_OPT_OWN, OPT_FIND, OPT_FIND_FRAME };

static const CliOption stats_options[] = {
  { "peaks", 'p', 'p', "N", "peaks to show (one level is one peak), 0 = all", "5" },
  { "blame", 'b', 'b', "N", "buffers per peak, 0 = all", "5" },
  { "group-by", 0, OPT_GROUP_BY, "KEY", "the live bytes at each peak by group: compile_context, user_metadata (a "
    "PyTorch snapshot's entries; refused on formats that record none), or a regular expression over the stack's "
    "frames (file:line:function; the first matching frame, its first parenthesised part when there is one)", NULL },
  { "find", 0, OPT_FIND, "ADDR[@TICK]", "print only the buffers whose bytes held ADDR (any address inside them), at "
    "TICK or at any time; exit 1 when none did", NULL },
  { "find-frame", 0, OPT_FIND_FRAME, "TEXT", "print only the buffers allocated under a frame whose file:line:function "
    "contains TEXT; exit 1 when none was", NULL },
  { NULL },
};

static int
stats_option (MlCliOpts *o, void *user, int key, const char *arg)
{
  StatsArgs *a = user;
  MlError err = { 0 };
  MlGroupBy by;
  CliFind f;
  switch (key)
    {
    case OPT_GROUP_BY:
      if (ml_group_by_parse (arg, &by, &err) < 0)
        return cli_fail ("stats", EXIT_BAD, "%s", err.msg);
      a->group_by = arg;
      return 0;
    case OPT_FIND:
      if (cli_find_parse (arg, &f) < 0)
        return cli_fail ("stats", EXIT_BAD, "--find %s: expected an address (0x7f0000001000 or decimal), "
                         "optionally @TICK", arg);
      a->find = arg;
      return 0;
    case OPT_FIND_FRAME:
      if (!*arg)
        return cli_fail ("stats", EXIT_BAD, "--find-frame: expected some text");
      a->find_frame = arg;
      return 0;
    default:
      break;
    }
  char *end;
  unsigned long v = strtoul (arg, &end, 10);
  if (*end || !*arg || v > 100000)
    return cli_fail ("stats", EXIT_BAD, "--%s %s: not a number", key == 'p' ? "peaks" : "blame", arg);
  *(key == 'p' ? &a->npeaks : &a->nblame) = v;
  return 0;
}

/* What stats counts over the events and the buffers. */
typedef struct {
  size_t   kinds[ML_EV__COUNT];
  int64_t  t_first, t_last;
  size_t   n_streams;
  uint64_t total, never, requested, clipped;
} Totals;

static void
count (const MlTrace *t, const MlBuffers *bufs, Totals *c)
{
  memset (c, 0, sizeof *c);
  c->t_first = c->t_last = -1;
  for (size_t i = 0; i < t->n_events; i++)
    {
      const MlEvent *ev = &t->events[i];
      c->kinds[ev->kind]++;
      if (ev->time_ns >= 0)
        {
          if (c->t_first < 0)
            c->t_first = ev->time_ns;
          c->t_last = ev->time_ns;
        }
    }
  c->n_streams = ml_buffers_count_streams (bufs);
  for (size_t i = 0; i < bufs->n; i++)
    {
      c->clipped += (bufs->buf[i].flags & ML_BUF_CLIPPED) != 0;
      c->total += bufs->buf[i].rsize;
      c->requested += bufs->buf[i].size;
      c->never += (bufs->buf[i].flags & ML_BUF_NEVER_FREED) != 0;
    }
}

/* ---- JSON ---- */

/* Counts by kind; @name: the kind's name (memlens's event kinds, or a
 * snapshot's trace actions by PyTorch's names). */
static void
json_kinds (const uint64_t *counts, const char *(*name) (MlEventKind))
{
  bool first = true;
  for (int k = 0; k < ML_EV__COUNT; k++)
    if (counts[k])
      {
        printf ("%s\"%s\":%" PRIu64, first ? "" : ",", name ((MlEventKind) k), counts[k]);
        first = false;
      }
}

static void
json_devices (const MlTrace *t)
{
  printf (",\"device\":%u,\"devices\":[", t->device);
  for (size_t d = 0; d < t->n_devices; d++)
    {
      const MlDeviceInfo *di = &t->devices[d];
      printf ("%s{\"device\":%u,\"entries\":%" PRIu64 ",\"segments\":%" PRIu64 ",\"reserved_start\":%" PRIu64
              ",\"reserved_end\":%" PRIu64 ",\"reserved_max\":%" PRIu64 ",\"oom\":%s,\"actions\":{",
              d ? "," : "", di->device, di->entries, di->segments, di->reserved_start, di->reserved_end,
              di->reserved_max, di->ooms ? "true" : "false");
      /* a snapshot's trace actions by PyTorch's names (free_completed, annotate) */
      bool snapshot = strcmp (ml_trace_str (t, t->source), "pytorch-snapshot") == 0;
      json_kinds (di->actions, snapshot ? ml_snapshot_action_name : ml_event_kind_name);
      printf ("}");
      if (di->allocated_max)
        printf (",\"allocated_max\":%" PRIu64, di->allocated_max);
      printf (",\"ooms\":[");
      bool first_oom = true;
      for (size_t k = 0; k < t->n_device_ooms; k++)
        if (t->device_ooms[k].device == di->device)
          {
            const MlDeviceOom *r = &t->device_ooms[k];
            printf ("%s{\"index\":%" PRIu64 ",\"request\":%" PRIu64 ",\"device_free\":%" PRIu64 ",\"reserved\":%" PRIu64 "}",
                    first_oom ? "" : ",", r->index, r->request, r->device_free, r->reserved);
            first_oom = false;
          }
      printf ("]}");
    }
  printf ("]");
}

/* The peak groups (sim/analysis/peak-groups.h) and each one's blame at
 * its level's first tick: peaks->peaks[i] is groups->groups[i]'s. */
typedef struct {
  MlPeakGroups groups;
  MlPeaks      peaks;
  const char  *group_by;   /* --group-by, and each buffer's group */
  MlGroupKeys  keys;
} Peaks;

static void
peaks_free (Peaks *pk)
{
  ml_peaks_free (&pk->peaks);
  ml_peak_groups_free (&pk->groups);
  ml_group_keys_clear (&pk->keys);
}

static int
peaks_find (const MlBuffers *bufs, size_t max_groups, size_t max_blame, const char *group_by, Peaks *out,
            MlError *err)
{
  memset (out, 0, sizeof *out);
  MlGroupBy by;
  int rc = 0;
  if (group_by && (rc = ml_group_by_parse (group_by, &by, err)) == 0 && (rc = ml_group_check (bufs->trace, &by, err)) < 0)
    {
      char why[sizeof err->msg];
      snprintf (why, sizeof why, "%s", err->msg);
      return ml_error_set (err, ML_EUSAGE, "--group-by %s: %s", group_by, why);
    }
  if (group_by && rc == 0 && (rc = ml_group_keys (bufs, &by, &out->keys, err)) == 0)
    out->group_by = group_by;
  if (rc < 0)
    return rc;
  rc = ml_peak_groups_find (bufs, max_groups, &out->groups, err);
  if (rc < 0)
    return rc;
  out->peaks.peaks = calloc (out->groups.n ? out->groups.n : 1, sizeof *out->peaks.peaks);
  if (!out->peaks.peaks)
    rc = ml_error_set (err, ML_ENOMEM, "out of memory");
  for (size_t i = 0; rc == 0 && i < out->groups.n; i++, out->peaks.n++)
    rc = ml_peak_blame (bufs, out->groups.groups[i].top_tick, max_blame, &out->peaks.peaks[i], err);
  if (rc < 0)
    peaks_free (out);
  return rc;
}

static void
json_peak_group (const MlPeakGroup *g)
{
  printf (",\"times\":%zu,\"live_min\":%" PRIu64 ",\"ticks\":[", g->n, g->live_min);
  for (size_t k = 0; k < g->n; k++)
    printf ("%s%" PRIu64, k ? "," : "", g->ticks[k]);
  printf ("]");
  if (g->n > 1)
    printf (",\"every_ticks\":%.1f,\"regular\":%s", g->every_ticks, g->regular ? "true" : "false");
  if (g->n > 1 && g->every_ns >= 0)
    printf (",\"every_ns\":%.0f", g->every_ns);
}

static int
json_peaks (const MlBuffers *bufs, const Peaks *pks, MlError *err)
{
  const MlTrace *t = bufs->trace;
  const MlPeaks *peaks = &pks->peaks;
  printf ("],\"peaks\":[");
  for (size_t p = 0; p < peaks->n; p++)
    {
      printf ("%s{\"tick\":%" PRIu64 ",\"live\":%" PRIu64 ",\"live_buffers\":%zu", p ? "," : "", peaks->peaks[p].tick,
              peaks->peaks[p].live, peaks->peaks[p].n_live);
      json_peak_group (&pks->groups.groups[p]);
      printf (",\"blame\":[");
      for (size_t k = 0; k < peaks->peaks[p].n_blame; k++)
        {
          const MlBuffer *b = &bufs->buf[peaks->peaks[p].blame[k]];
          printf ("%s{\"index\":%u,\"id\":", k ? "," : "", peaks->peaks[p].blame[k]);
          ml_json_put_u64 (stdout, b->id);
          printf (",\"bytes\":%" PRIu64 ",\"start\":%" PRIu64 ",\"end\":%" PRIu64, b->rsize, b->start, b->end);
          if (b->name)
            printf (",\"name\":"), ml_json_put_str (stdout, ml_trace_str (t, b->name));
          if (b->stack && t->stacks[b->stack].site)
            printf (",\"site\":"), ml_json_put_str (stdout, ml_trace_str (t, t->stacks[b->stack].site));
          printf ("}");
        }
      printf ("]");
      if (pks->group_by && cli_stats_groups (stdout, bufs, &pks->keys, peaks->peaks[p].tick, peaks->peaks[p].live,
                                             true, err) < 0)
        return err->code;
      printf ("}");
    }
  const MlPeakGroups *g = &pks->groups;
  printf ("],\"peaks_left_out\":%zu,\"iterations\":", g->n_maxima - g->n);
  if (g->iter_group < 0)
    printf ("null");
  else
    {
      printf ("{\"peak\":%d,\"boundaries\":[", g->iter_group + 1);
      for (size_t k = 0; k < g->n_boundaries; k++)
        printf ("%s%" PRIu64, k ? "," : "", g->boundaries[k]);
      printf ("]}");
    }
  printf ("}\n");
  return 0;
}

static int
print_json (const char *path, const MlBuffers *bufs, const Totals *c, const Peaks *peaks, const MlRecordedOom *rec,
            MlError *err)
{
  const MlTrace *t = bufs->trace;
  printf ("{\"trace\":");
  ml_json_put_str (stdout, path);
  printf (",\"source\":");
  ml_json_put_str (stdout, ml_trace_str (t, t->source));
  cli_json_recorded_oom (t, rec);
  printf (",\"events\":%zu,\"buffers\":%zu,\"streams\":%zu,\"alignment\":%" PRIu64
          ",\"end_tick\":%" PRIu64 ",\"lower_bound\":%" PRIu64 ",\"lower_bound_tick\":%" PRIu64
          ",\"total_bytes\":%" PRIu64 ",\"requested_bytes\":%" PRIu64 ",\"never_freed\":%" PRIu64,
          t->n_events, bufs->n, c->n_streams, bufs->align, bufs->end_tick, bufs->lower_bound,
          bufs->lower_bound_tick, c->total, c->requested, c->never);
  if (t->capacity)
    printf (",\"capacity\":%" PRIu64, t->capacity);
  if (cli_stats_lanes_json (stdout, t, bufs, err) < 0)
    return err->code;
  if (t->windowed)
    printf (",\"window\":{\"state_tick\":%" PRIu64 ",\"last_tick\":%" PRIu64 ",\"clipped\":%" PRIu64 "}",
            t->window_first, t->window_last, c->clipped);
  if (t->n_devices)
    json_devices (t);
  else if (t->device == ML_TRACE_HOST)
    printf (",\"device\":\"host\"");
  if (t->dropped_records)
    printf (",\"dropped_records\":%" PRIu64, t->dropped_records);
  if (peaks->group_by)
    printf (",\"group_by\":"), ml_json_put_str (stdout, peaks->group_by);
  printf (",\"event_kinds\":{");
  uint64_t kinds[ML_EV__COUNT];
  for (int k = 0; k < ML_EV__COUNT; k++)
    kinds[k] = c->kinds[k];
  json_kinds (kinds, ml_event_kind_name);
  printf ("},\"marks\":[");
  for (size_t i = 0, m = 0; i < t->n_events && m < 100; i++)
    if (t->events[i].kind == ML_EV_MARK)
      {
        printf ("%s{\"tick\":%" PRIu64 ",\"text\":", m++ ? "," : "", t->events[i].tick);
        ml_json_put_str (stdout, ml_trace_str (t, t->events[i].name));
        printf ("}");
      }
  return json_peaks (bufs, peaks, err);
}

/* ---- text ---- */

static void
print_buffer_name (FILE *fp, const MlBuffers *bufs, uint32_t i)
{
  const MlBuffer *b = &bufs->buf[i];
  const MlTrace *t = bufs->trace;
  const char *site = b->stack ? ml_trace_str (t, t->stacks[b->stack].site) : "";
  if (b->name)
    fprintf (fp, "%s", ml_trace_str (t, b->name));
  else
    fprintf (fp, "buffer %" PRIu64, b->id);
  if (*site)
    fprintf (fp, "  (%s)", site);
}

static void
text_iterations (const MlPeakGroups *groups)
{
  if (groups->iter_group < 0)
    return;
  const MlPeakGroup *g = &groups->groups[groups->iter_group];
  printf ("iterations   %zu (peak %d recurs every ~%.0f ticks); boundaries at tick", groups->n_boundaries + 1,
          groups->iter_group + 1, g->every_ticks);
  for (size_t k = 0; k < groups->n_boundaries && k < 20; k++)
    printf ("%s %" PRIu64, k ? "," : "", groups->boundaries[k]);
  printf ("%s\n", groups->n_boundaries > 20 ? ", ..." : "");
}

static int
text_peaks (const MlBuffers *bufs, const Peaks *pks, MlError *err)
{
  const MlPeaks *peaks = &pks->peaks;
  for (size_t p = 0; p < peaks->n; p++)
    {
      const MlPeak *pk = &peaks->peaks[p];
      const MlPeakGroup *g = &pks->groups.groups[p];
      char what[160];
      printf ("\npeak %zu: %s", p + 1, ml_peak_group_describe (g, what, sizeof what));
      for (size_t k = 0; g->n > 1 && k < g->n && k < 10; k++)
        printf ("%s %" PRIu64, k ? "," : ": ticks", g->ticks[k]);
      printf ("%s\n", g->n > 10 ? ", ..." : "");
      printf ("  at tick %" PRIu64 ": %s live in %zu buffer%s%s\n", pk->tick, cli_size (pk->live), pk->n_live,
              pk->n_live == 1 ? "" : "s", pk->live == bufs->lower_bound ? " (the lower bound)" : "");
      for (size_t k = 0; k < pk->n_blame; k++)
        {
          const MlBuffer *b = &bufs->buf[pk->blame[k]];
          printf ("  %10s  %5.1f%%  [%" PRIu64 ", %" PRIu64 ")  ", cli_size (b->rsize),
                  pk->live ? 100.0 * (double) b->rsize / (double) pk->live : 0.0, b->start, b->end);
          print_buffer_name (stdout, bufs, pk->blame[k]);
          putchar ('\n');
        }
      if (pk->n_live > pk->n_blame)
        printf ("  ... and %zu more\n", pk->n_live - pk->n_blame);
      if (pks->group_by && cli_stats_groups (stdout, bufs, &pks->keys, pk->tick, pk->live, false, err) < 0)
        return err->code;
    }
  if (pks->groups.n_maxima > pks->groups.n)
    printf ("\n(%zu more local maxima: wiggles beside a higher peak, or lower peaks past --peaks)\n",
            pks->groups.n_maxima - pks->groups.n);
  return 0;
}

static int
print_text (const char *path, const MlBuffers *bufs, const Totals *c, const Peaks *peaks, const MlRecordedOom *rec,
            MlError *err)
{
  const MlTrace *t = bufs->trace;
  printf ("trace        %s (%s)\n", path, ml_trace_str (t, t->source));
  cli_print_recorded_oom (t, rec);
  printf ("events       %zu", t->n_events);
  for (int k = 0; k < ML_EV__COUNT; k++)
    if (c->kinds[k])
      printf ("%s %s %zu", k == 0 ? ":" : ",", ml_event_kind_name ((MlEventKind) k), c->kinds[k]);
  printf ("\nbuffers      %zu (%" PRIu64 " never freed), %s in all, %s requested\n",
          bufs->n, c->never, cli_size (c->total), cli_size (c->requested));
  if (cli_stats_lanes_text (stdout, t, bufs, err) < 0)
    return err->code;
  if (t->device == ML_TRACE_HOST)
    printf ("device       host: the pinned host memory (host_segments, host_traces)\n");
  for (size_t d = 0; d < t->n_devices; d++)
    {
      const MlDeviceInfo *di = &t->devices[d];
      printf ("%s %u%s: %" PRIu64 " trace entries, %" PRIu64 " segment%s, reserved %s at the end (%s at most)%s\n",
              d ? "            " : "devices     ", di->device, di->device == t->device ? " (read)" : "",
              di->entries, di->segments, di->segments == 1 ? "" : "s", cli_size (di->reserved_end), cli_size (di->reserved_max),
              di->ooms ? ", recorded an OOM" : "");
    }
  printf ("ticks        0 .. %" PRIu64 "\n", bufs->end_tick);
  if (t->windowed)
    printf ("window       ticks %" PRIu64 " .. %" PRIu64 " of the file (--range), from the state at tick %" PRIu64
            "; %" PRIu64 " buffer%s cut at its edges\n", t->window_first + (t->window_first > 0), t->window_last,
            t->window_first, c->clipped, c->clipped == 1 ? "" : "s");
  if (c->t_first >= 0)
    printf ("time         %.3f ms\n", (double) (c->t_last - c->t_first) / 1e6);
  printf ("alignment    %" PRIu64 "\n", bufs->align);
  if (t->capacity)
    printf ("capacity     %" PRIu64 " (%s, from the file name)\n", t->capacity, cli_size (t->capacity));
  if (t->dropped_records)
    printf ("dropped      %" PRIu64 " tracer records were lost\n", t->dropped_records);
  printf ("lower bound  %" PRIu64 " (%s) at tick %" PRIu64 "\n", bufs->lower_bound,
          cli_size (bufs->lower_bound), bufs->lower_bound_tick);
  /* marks: annotations, graph notes and in-place hazards */
  size_t n_marks = 0;
  for (size_t i = 0; i < t->n_events; i++)
    if (t->events[i].kind == ML_EV_MARK && n_marks++ < 10)
      printf ("mark         tick %" PRIu64 ": %s\n", t->events[i].tick, ml_trace_str (t, t->events[i].name));
  if (n_marks > 10)
    printf ("mark         ... and %zu more\n", n_marks - 10);
  text_iterations (&peaks->groups);
  return text_peaks (bufs, peaks, err);
}

static int
cmd_stats (int argc, char **argv)
{
  MlCliOpts o;
  StatsArgs a = { 0 };
  int rc = cli_parse (&cli_cmd_stats, argc, argv, &o, &a);
  if (rc != CLI_PARSED)
    return rc;
  if (!cli_in_multi && optind < argc && (optind + 1 < argc || cli_given (&o, CLI_OPT_JOBS)))
    return cli_multi ("stats", cmd_stats, false, argc, argv, optind, &o);
  if (optind + 1 != argc)
    return cli_usage (&cli_cmd_stats);
  if (a.find && a.find_frame)
    return cli_fail ("stats", EXIT_BAD, "--find and --find-frame: one search at a time");
  const char *path = argv[optind];
  MlTrace *t;
  MlBuffers *bufs;
  if ((rc = cli_load ("stats", path, &o, &t, &bufs)))
    return rc;
  if (a.find || a.find_frame)
    {
      CliFind f = { .text = a.find_frame, .tick = UINT64_MAX };
      if (a.find)
        cli_find_parse (a.find, &f);   /* checked when the option was read */
      rc = cli_stats_find (stdout, path, bufs, &f, a.find == NULL, o.json);
      ml_buffers_free (bufs);
      ml_trace_free (t);
      return rc;
    }
  Totals c;
  count (t, bufs, &c);
  Peaks peaks;
  MlRecordedOom rec;
  MlError err = { 0 };
  if ((rc = cli_recorded_oom ("stats", bufs, &rec)))
    ;
  else if (peaks_find (bufs, a.npeaks, a.nblame, a.group_by, &peaks, &err) < 0)
    rc = cli_error ("stats", &err);
  else
    {
      if ((o.json ? print_json (path, bufs, &c, &peaks, &rec, &err) : print_text (path, bufs, &c, &peaks, &rec, &err)) < 0)
        {
          peaks_free (&peaks);
          ml_buffers_free (bufs);
          ml_trace_free (t);
          return cli_error ("stats", &err);
        }
      peaks_free (&peaks);
      rc = rec.found ? EXIT_PROBLEMS : EXIT_OK;   /* the file records an OOM */
    }
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return rc;
}

const CliCommand cli_cmd_stats = {
  .name = "stats",
  .bit = CLI_STATS,
  .summary = "events, buffers, streams, the lower bound and the peaks with blame",
  .usage = "memlens stats [OPTIONS] TRACE\n"
           "memlens stats [OPTIONS] TRACE... [--jobs N]   (one summary line per file)\n",
  .about = "Events, buffers, streams, the lower bound and when, and the peaks with\n"
           "the buffers that make them (largest first): peaks of one level are one\n"
           "entry (\"19.37 GiB, 17 times, every ~324 ticks\"), wiggles within 5% of the\n"
           "highest peak beside a higher one are left out, and a trace whose peaks\n"
           "recur regularly has its iterations listed. A trace that\n"
           "recorded an OOM (a PyTorch snapshot) says so in its second line; exit code\n"
           "1 then, as for compare, report and diagnose.\n",
  .options = stats_options,
  .option = stats_option,
  .run = cmd_stats,
};
