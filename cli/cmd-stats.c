#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/base/jsonutil.h"

static const char usage_text[] =
  "Usage: memlens stats [OPTIONS] TRACE\n"
  "       memlens stats [OPTIONS] TRACE... [--jobs N]   (one summary line per file)\n"
  "Events, buffers, streams, the lower bound and when, and the top peak\n"
  "points with the buffers that make them (largest first).\n";

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

int
cmd_stats (int argc, char **argv)
{
  static const struct option longopts[] = {
    CLI_COMMON_LONGOPTS, CLI_RANGE_LONGOPT,
    { "peaks", required_argument, 0, 'p' },
    { "blame", required_argument, 0, 'b' },
    { "jobs", required_argument, 0, CLI_OPT_JOBS },
    { 0, 0, 0, 0 },
  };
  MlCliOpts o;
  cli_opts_init (&o);
  unsigned long npeaks = 5, nblame = 5;
  unsigned jobs = 0;
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "hp:b:", longopts, NULL)) != -1)
    {
      if (c == 'h')
        {
          printf ("%s\nOptions:\n  --peaks N          peak points to show (default 5)\n"
                  "  --blame N          buffers per peak (default 5, 0 = all)\n" CLI_JOBS_HELP "%s", usage_text,
                  CLI_RANGE_HELP CLI_JSON_HELP CLI_COMMON_HELP);
          return EXIT_OK;
        }
      if (c == 'p' || c == 'b')
        {
          char *end;
          unsigned long v = strtoul (optarg, &end, 10);
          if (*end || !*optarg || v > 100000)
            return cli_fail ("stats", EXIT_BAD, "--%s %s: not a number", c == 'p' ? "peaks" : "blame", optarg);
          *(c == 'p' ? &npeaks : &nblame) = v;
          continue;
        }
      if (c == CLI_OPT_JOBS)
        {
          if (!cli_jobs_option ("stats", optarg, &jobs))
            return EXIT_BAD;
          continue;
        }
      if (c == '?' || !cli_common_option ("stats", &o, c, optarg))
        return cli_usage ("stats", usage_text);
    }
  if (!cli_in_multi && optind < argc && (optind + 1 < argc || jobs))
    return cli_multi ("stats", cmd_stats, false, argc, argv, optind, jobs, &o);
  if (optind + 1 != argc)
    return cli_usage ("stats", usage_text);
  const char *path = argv[optind];
  MlTrace *t;
  MlBuffers *bufs;
  int rc = cli_load ("stats", path, &o, &t, &bufs);
  if (rc)
    return rc;
  size_t kinds[ML_EV__COUNT] = { 0 };
  int64_t t_first = -1, t_last = -1;
  for (size_t i = 0; i < t->n_events; i++)
    {
      const MlEvent *ev = &t->events[i];
      kinds[ev->kind]++;
      if (ev->time_ns >= 0)
        {
          if (t_first < 0)
            t_first = ev->time_ns;
          t_last = ev->time_ns;
        }
    }
  size_t n_streams = ml_buffers_count_streams (bufs);
  uint64_t total = 0, never = 0, requested = 0, clipped = 0;
  for (size_t i = 0; i < bufs->n; i++)
    {
      clipped += (bufs->buf[i].flags & ML_BUF_CLIPPED) != 0;
      total += bufs->buf[i].rsize;
      requested += bufs->buf[i].size;
      never += (bufs->buf[i].flags & ML_BUF_NEVER_FREED) != 0;
    }
  MlPeaks peaks;
  MlError err = { 0 };
  if (ml_peaks_find (bufs, npeaks, nblame, &peaks, &err) < 0)
    {
      ml_buffers_free (bufs);
      ml_trace_free (t);
      return cli_error ("stats", &err);
    }
  if (o.json)
    {
      printf ("{\"trace\":");
      ml_json_put_str (stdout, path);
      printf (",\"source\":");
      ml_json_put_str (stdout, ml_trace_str (t, t->source));
      printf (",\"events\":%zu,\"buffers\":%zu,\"streams\":%zu,\"alignment\":%" PRIu64
              ",\"end_tick\":%" PRIu64 ",\"lower_bound\":%" PRIu64 ",\"lower_bound_tick\":%" PRIu64
              ",\"total_bytes\":%" PRIu64 ",\"requested_bytes\":%" PRIu64 ",\"never_freed\":%" PRIu64,
              t->n_events, bufs->n, n_streams, bufs->align, bufs->end_tick, bufs->lower_bound,
              bufs->lower_bound_tick, total, requested, never);
      if (t->capacity)
        printf (",\"capacity\":%" PRIu64, t->capacity);
      if (t->windowed)
        printf (",\"window\":{\"state_tick\":%" PRIu64 ",\"last_tick\":%" PRIu64 ",\"clipped\":%" PRIu64 "}",
                t->window_first, t->window_last, clipped);
      if (t->n_devices)
        {
          printf (",\"device\":%u,\"devices\":[", t->device);
          for (size_t d = 0; d < t->n_devices; d++)
            {
              const MlDeviceInfo *di = &t->devices[d];
              printf ("%s{\"device\":%u,\"entries\":%" PRIu64 ",\"segments\":%" PRIu64 ",\"reserved_start\":%" PRIu64
                      ",\"reserved_end\":%" PRIu64 ",\"reserved_max\":%" PRIu64 ",\"oom\":%s,\"actions\":{",
                      d ? "," : "", di->device, di->entries, di->segments, di->reserved_start, di->reserved_end,
                      di->reserved_max, di->ooms ? "true" : "false");
              bool first_kind = true;
              for (int k = 0; k < ML_EV__COUNT; k++)
                if (di->actions[k])
                  {
                    printf ("%s\"%s\":%" PRIu64, first_kind ? "" : ",", ml_event_kind_name ((MlEventKind) k), di->actions[k]);
                    first_kind = false;
                  }
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
      if (t->dropped_records)
        printf (",\"dropped_records\":%" PRIu64, t->dropped_records);
      printf (",\"event_kinds\":{");
      bool first = true;
      for (int k = 0; k < ML_EV__COUNT; k++)
        if (kinds[k])
          {
            printf ("%s\"%s\":%zu", first ? "" : ",", ml_event_kind_name ((MlEventKind) k), kinds[k]);
            first = false;
          }
      printf ("},\"marks\":[");
      for (size_t i = 0, m = 0; i < t->n_events && m < 100; i++)
        if (t->events[i].kind == ML_EV_MARK)
          {
            printf ("%s{\"tick\":%" PRIu64 ",\"text\":", m++ ? "," : "", t->events[i].tick);
            ml_json_put_str (stdout, ml_trace_str (t, t->events[i].name));
            printf ("}");
          }
      printf ("],\"peaks\":[");
      for (size_t p = 0; p < peaks.n; p++)
        {
          printf ("%s{\"tick\":%" PRIu64 ",\"live\":%" PRIu64 ",\"live_buffers\":%zu,\"blame\":[",
                  p ? "," : "", peaks.peaks[p].tick, peaks.peaks[p].live, peaks.peaks[p].n_live);
          for (size_t k = 0; k < peaks.peaks[p].n_blame; k++)
            {
              const MlBuffer *b = &bufs->buf[peaks.peaks[p].blame[k]];
              printf ("%s{\"index\":%u,\"id\":", k ? "," : "", peaks.peaks[p].blame[k]);
              ml_json_put_u64 (stdout, b->id);
              printf (",\"bytes\":%" PRIu64 ",\"start\":%" PRIu64 ",\"end\":%" PRIu64, b->rsize, b->start, b->end);
              if (b->name)
                printf (",\"name\":"), ml_json_put_str (stdout, ml_trace_str (t, b->name));
              if (b->stack && t->stacks[b->stack].site)
                printf (",\"site\":"), ml_json_put_str (stdout, ml_trace_str (t, t->stacks[b->stack].site));
              printf ("}");
            }
          printf ("]}");
        }
      printf ("]}\n");
    }
  else
    {
      printf ("trace        %s (%s)\n", path, ml_trace_str (t, t->source));
      printf ("events       %zu", t->n_events);
      for (int k = 0; k < ML_EV__COUNT; k++)
        if (kinds[k])
          printf ("%s %s %zu", k == 0 ? ":" : ",", ml_event_kind_name ((MlEventKind) k), kinds[k]);
      printf ("\nbuffers      %zu (%" PRIu64 " never freed), %s in all, %s requested\n",
              bufs->n, never, cli_size (total), cli_size (requested));
      printf ("streams      %zu allocating\n", n_streams);
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
                t->window_first, clipped, clipped == 1 ? "" : "s");
      if (t_first >= 0)
        printf ("time         %.3f ms\n", (double) (t_last - t_first) / 1e6);
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
      for (size_t p = 0; p < peaks.n; p++)
        {
          const MlPeak *pk = &peaks.peaks[p];
          printf ("\npeak %zu: tick %" PRIu64 ", %s live in %zu buffer%s%s\n", p + 1, pk->tick, cli_size (pk->live),
                  pk->n_live, pk->n_live == 1 ? "" : "s", pk->live == bufs->lower_bound ? " (the lower bound)" : "");
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
        }
    }
  ml_peaks_free (&peaks);
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return EXIT_OK;
}
