/* memlens diagnose — why a trace runs out of memory under a capacity. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/analysis/diagnose.h"
#include "render/report/report.h"
#include "sim/base/jsonutil.h"

static const char usage_text[] =
  "Usage: memlens diagnose [OPTIONS] TRACE [--capacity SIZE] [--strategy S]\n"
  "A trace that recorded an OOM (PyTorch snapshot) gets that OOM first: the\n"
  "request, the device's free bytes, reserved, allocated and cached free bytes\n"
  "and the largest cached block at that moment, the verdict (capacity: cached\n"
  "free + device free < request; fragmentation otherwise), the call site and\n"
  "what was live. Without --capacity the capacity is the device memory the\n"
  "OOM implies (reserved + device free).\n"
  "Then the trace is replayed with strategy S (default: caching when built,\n"
  "else best-fit) under the capacity, with the refused request included, and\n"
  "the first allocation that fails is explained: the verdict (fragmentation:\n"
  "enough free bytes but no block large enough; capacity: not enough bytes),\n"
  "live / reserved / free bytes and the largest free block, the buffers to\n"
  "blame by call site, which other strategies fit and with how much headroom,\n"
  "and what another alignment would save. Exit code 1 when the trace recorded\n"
  "an OOM or the strategy runs out of memory.\n";

/* The verdict's name in capitals, as the terminal shows it. */
static const char *
verdict_upper (MlOomVerdict v)
{
  static char buf[32];
  const char *name = ml_oom_verdict_name (v);
  size_t i = 0;
  for (; name[i] && i + 1 < sizeof buf; i++)
    buf[i] = (char) (name[i] >= 'a' && name[i] <= 'z' ? name[i] - 'a' + 'A' : name[i]);
  buf[i] = 0;
  return buf;
}

static void
print_oom_line (const MlBuffers *bufs, const MlOom *o)
{
  const MlBuffer *b = &bufs->buf[o->buffer];
  printf ("  OOM at tick %" PRIu64 ": request %s (buffer %" PRIu64 ", %s, stream %u)\n", o->tick, cli_size (o->request),
          b->id, ml_diagnosis_site_label (bufs, b->stack && bufs->trace && b->stack < bufs->trace->n_stacks
                                                      && bufs->trace->stacks[b->stack].site
                                                      ? bufs->trace->stacks[b->stack].site : b->name),
          b->stream);
  char why[256];
  printf ("  verdict: %s — %s\n", verdict_upper (o->verdict), ml_oom_reason (o, why, sizeof why));
  printf ("  live %s · reserved %s · free %s · largest free block %s\n", cli_size (o->live), cli_size (o->reserved),
          cli_size (o->free_bytes), cli_size (o->largest_free));
}

static void
print_recorded (const char *path, const MlBuffers *bufs, const MlDiagnosis *d)
{
  const MlTrace *t = bufs->trace;
  printf ("%s: the trace records an OOM on device %u\n", path, t ? t->device : 0);
  printf ("  OOM at tick %" PRIu64 " (trace entry %" PRIu64 "), stream %u: request %s, device free %s\n", d->rec_tick,
          d->rec_index, d->rec_stream, cli_size (d->rec_request), cli_size (d->rec_device_free));
  char frames[1024];
  if (*ml_diagnosis_user_frames (t, d->rec_stack, 3, frames, sizeof frames))
    printf ("  called from %s\n", frames);
  const char *settings = ml_trace_allocator_settings (t);
  if (settings)
    printf ("  allocator settings: %s\n", settings);
  if (d->rec_have_plan)
    {
      char why[256];
      printf ("  verdict: %s — %s\n", verdict_upper (d->rec_verdict), ml_diagnosis_recorded_reason (d, why, sizeof why));
      printf ("  reserved %s · allocated %s · cached free %s (largest block %s)\n", cli_size (d->rec_reserved),
              cli_size (d->rec_live), cli_size (d->rec_cached_free), cli_size (d->rec_largest_cached));
      printf ("  device memory implied: %s (reserved + device free)\n", cli_size (d->rec_reserved + d->rec_device_free));
    }
  else
    printf ("  allocated %s (the trace has no addresses: reserved and cached blocks unknown)\n", cli_size (d->rec_live));
  printf ("\n  blame: live at the OOM by call site (%zu buffer%s, %s requested)\n", d->rec_n_live_total, d->rec_n_live_total == 1 ? "" : "s",
          cli_size (d->rec_requested_live));
  for (size_t i = 0; i < d->rec_n_sites && i < 10; i++)
    {
      const MlSiteBlame *sb = &d->rec_sites[i];
      printf ("    %11s  %5zu buffer%s  %s (largest: buffer %" PRIu64 ", %s)\n", cli_size (sb->bytes), sb->count,
              sb->count == 1 ? " " : "s", ml_diagnosis_site_label (bufs, sb->site), bufs->buf[sb->largest].id,
              cli_size (bufs->buf[sb->largest].rsize));
    }
  if (d->rec_n_sites > 10)
    printf ("    ... %zu more call sites\n", d->rec_n_sites - 10);
  putchar ('\n');
}

static void
print_text (const char *path, const MlBuffers *bufs, const MlDiagnosis *d, const char *capacity_from)
{
  if (d->recorded)
    print_recorded (path, bufs, d);
  if (d->capacity)
    {
      if (d->recorded)
        printf ("what would fit: the trace replayed with the refused %s request live at tick %" PRIu64 ", under %s (%s)\n",
                cli_size (d->rec_request), d->rec_tick, cli_size (d->capacity), capacity_from);
      printf ("%s under %s with %s: ", path, cli_size (d->capacity), d->strategy);
      if (!d->oom.hit)
        printf ("fits (peak %s, headroom %s)\n", cli_size (d->peak),
                cli_size (d->capacity > d->peak ? d->capacity - d->peak : 0));
      else if (!d->oom.request)
        printf ("over the capacity (peak %s); no single request to blame\n", cli_size (d->peak));
      else
        {
          printf ("out of memory\n");
          print_oom_line (bufs, &d->oom);
          printf ("\n  blame: live at the OOM by call site (%zu buffer%s, %s requested)\n", d->n_live_total,
                  d->n_live_total == 1 ? "" : "s", cli_size (d->requested_live));
          for (size_t i = 0; i < d->n_sites && i < 10; i++)
            {
              const MlSiteBlame *s = &d->sites[i];
              printf ("    %11s  %5zu buffer%s  %s (largest: buffer %" PRIu64 ", %s)\n", cli_size (s->bytes), s->count,
                      s->count == 1 ? " " : "s", ml_diagnosis_site_label (bufs, s->site), bufs->buf[s->largest].id,
                      cli_size (bufs->buf[s->largest].rsize));
            }
          if (d->n_sites > 10)
            printf ("    ... %zu more call sites\n", d->n_sites - 10);
          printf ("  the largest live buffers:\n");
          for (size_t i = 0; i < d->n_live && i < 5; i++)
            {
              const MlBuffer *b = &bufs->buf[d->live[i]];
              char label[256];
              printf ("    %11s  buffer %-8" PRIu64 " %-32s ticks [%" PRIu64 ", %" PRIu64 ") stream %u\n",
                      cli_size (b->rsize), b->id, ml_report_buffer_label (bufs, d->live[i], label, sizeof label),
                      b->start, b->end, b->stream);
            }
        }
      printf ("\n  lower bound of the trace: %s", cli_size (d->lower_bound));
      if (d->lower_bound > d->capacity)
        printf (" — more than the capacity: no strategy can fit without freeing sooner or shrinking buffers\n");
      else
        printf (" — a planner could fit it with %s to spare\n", cli_size (d->capacity - d->lower_bound));
      if (d->n_alts)
        {
          printf ("\n  other strategies under %s (needs: the peak once the capacity is lifted at the OOM):\n",
                  cli_size (d->capacity));
          for (size_t i = 0; i < d->n_alts; i++)
            {
              const MlDiagAlt *a = &d->alts[i];
              if (a->status == ML_EINFEASIBLE && a->infeasible.n)
                {
                  char why[512];
                  printf ("    %-16s does not fit: proven, no layout fits the capacity: %s\n", a->name,
                          ml_infeasible_describe (&a->infeasible, bufs, false, why, sizeof why));
                  for (size_t k = 0; k < a->infeasible.n && k < 10; k++)
                    {
                      const MlBuffer *b = &bufs->buf[a->infeasible.buffers[k]];
                      char label[256];
                      printf ("      %11s  buffer %-8" PRIu64 " %-32s ticks [%" PRIu64 ", %" PRIu64 ")\n", cli_size (b->rsize), b->id,
                              ml_report_buffer_label (bufs, a->infeasible.buffers[k], label, sizeof label), b->start, b->end);
                    }
                  if (a->infeasible.n > 10)
                    printf ("      ... %zu more buffers\n", a->infeasible.n - 10);
                }
              else if (a->status == ML_EINFEASIBLE)
                printf ("    %-16s does not fit: proven, no layout fits the capacity\n", a->name);
              else if (a->status < 0)
                printf ("    %-16s error (%s)\n", a->name, ml_error_code_name (a->status));
              else if (!a->oom.hit)
                printf ("    %-16s fits: peak %s, headroom %s\n", a->name, cli_size (a->peak), cli_size (d->capacity - a->peak));
              else if (a->oom.request)
                printf ("    %-16s OOM at tick %" PRIu64 " (%s), needs %s\n", a->name, a->oom.tick,
                        ml_oom_verdict_name (a->oom.verdict), cli_size (a->peak));
              else
                printf ("    %-16s over the capacity: needs %s\n", a->name, cli_size (a->peak));
            }
        }
    }
  bool req = d->oom.hit && d->oom.request;
  printf ("\n  alignment (rounding of every size): %s\n", req ? "live at the OOM tick, and the lower bound" : "the lower bound");
  const MlAlignWhatIf *cur = NULL;
  for (size_t i = 0; i < d->n_what_if; i++)
    if (d->what_if[i].align == bufs->align)
      cur = &d->what_if[i];
  for (size_t i = 0; i < d->n_what_if; i++)
    {
      const MlAlignWhatIf *w = &d->what_if[i];
      char delta[64] = "";
      if (cur && w != cur)
        {
          int64_t diff = (int64_t) cur->lower_bound - (int64_t) w->lower_bound;
          if (diff == 0)
            snprintf (delta, sizeof delta, "same");
          else
            snprintf (delta, sizeof delta, "%s %s", diff > 0 ? "saves" : "costs",
                      cli_size ((uint64_t) (diff > 0 ? diff : -diff)));
        }
      else if (w == cur)
        snprintf (delta, sizeof delta, "(current)");
      if (req)
        printf ("    align %-8" PRIu64 " %11s  %11s  %s\n", w->align, cli_size (w->live_at_oom), cli_size (w->lower_bound), delta);
      else
        printf ("    align %-8" PRIu64 " %11s  %s\n", w->align, cli_size (w->lower_bound), delta);
    }
}

int
cmd_diagnose (int argc, char **argv)
{
  static const struct option longopts[] = {
    CLI_COMMON_LONGOPTS, CLI_RANGE_LONGOPT,
    { "strategy", required_argument, 0, 's' },
    { "strategies", required_argument, 0, 'S' },
    { "jobs", required_argument, 0, CLI_OPT_JOBS },
    { 0, 0, 0, 0 },
  };
  MlCliOpts o;
  cli_opts_init (&o);
  unsigned jobs = 0;
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "hs:", longopts, NULL)) != -1)
    {
      if (c == 'h')
        {
          printf ("%s\nOptions:\n  -s, --strategy S   the allocator to diagnose (default caching, else best-fit)\n"
                  "  --strategies A,B   the alternatives to try (default: all)\n" CLI_JOBS_HELP "%s", usage_text,
                  CLI_RANGE_HELP CLI_JSON_HELP CLI_COMMON_HELP);
          return EXIT_OK;
        }
      if (c == 's')
        o.strategy = optarg;
      else if (c == 'S')
        o.strategies = optarg;
      else if (c == CLI_OPT_JOBS)
        {
          if (!cli_jobs_option ("diagnose", optarg, &jobs))
            return EXIT_BAD;
        }
      else if (c == '?' || !cli_common_option ("diagnose", &o, c, optarg))
        return cli_usage ("diagnose", usage_text);
    }
  if (!cli_in_multi && optind < argc && (optind + 1 < argc || jobs))
    return cli_multi ("diagnose", cmd_diagnose, true, argc, argv, optind, jobs, &o);
  if (optind + 1 != argc)
    return cli_usage ("diagnose", usage_text);
  if (!o.strategy)
    o.strategy = ml_strategy_find ("caching") ? "caching" : "best-fit";
  if (!ml_strategy_find (o.strategy))
    return cli_fail ("diagnose", EXIT_BAD, "unknown strategy \"%s\" (see 'memlens strategies')", o.strategy);
  const MlStrategy **alts = cli_strategies ("diagnose", o.strategies ? o.strategies : "all");
  if (!alts)
    return EXIT_BAD;
  const char *path = argv[optind];
  MlTrace *t;
  MlBuffers *bufs;
  int rc = cli_load ("diagnose", path, &o, &t, &bufs);
  if (rc)
    {
      free (alts);
      return rc;
    }
  MlRecordedOom rec;
  MlError err = { 0 };
  MlBuffers *replay = NULL;
  const char *capacity_from = "--capacity";
  if (ml_recorded_oom (bufs, &rec, &err) < 0)
    {
      rc = cli_error ("diagnose", &err);
      goto out;
    }
  if (!o.knobs.capacity && ml_recorded_oom_capacity (&rec))
    {
      o.knobs.capacity = ml_recorded_oom_capacity (&rec);
      capacity_from = "the device memory the OOM implies: reserved + device free";
    }
  else if (!o.knobs.capacity)
    {
      o.knobs.capacity = t->capacity ? t->capacity : t->device_total;
      capacity_from = t->capacity ? "from the file name" : "the device's memory, from the trace";
    }
  if (!o.knobs.capacity && !rec.found)
    {
      rc = cli_fail ("diagnose", EXIT_BAD, "%s: give --capacity (e.g. --capacity 80G); the trace records no OOM to explain", path);
      goto out;
    }
  /* the replay includes the request the real allocator refused */
  if (rec.found && ml_recorded_oom_replay (bufs, &rec, &replay, &err) < 0)
    {
      rc = cli_error ("diagnose", &err);
      goto out;
    }
  const MlBuffers *run = replay ? replay : bufs;
  MlPlan *plan = NULL;
  rc = cli_get_plan ("diagnose", run, &o, &plan);
  if (rc == EXIT_OK && !plan->oom.hit && o.knobs.capacity)
    {
      /* the recorded plan or a plan file: measured against the capacity */
      MlMetrics m;
      if (ml_metrics_compute (run, plan, &m, NULL, NULL) == 0 && m.peak > o.knobs.capacity)
        ml_oom_over_capacity (&plan->oom);
    }
  if (rc == EXIT_OK)
    {
      MlDiagnosis d;
      o.knobs.progress = NULL;
      if (ml_diagnose (run, plan, o.knobs.capacity, alts, &o.knobs, rec.found ? &rec : NULL, &d, &err) < 0)
        rc = cli_error ("diagnose", &err);
      else
        {
          rc = d.oom.hit ? EXIT_PROBLEMS : EXIT_OK;
          if (o.json)
            {
              printf ("{\"trace\":");
              ml_json_put_str (stdout, path);
              printf (",\"device\":%u,\"alignment\":%" PRIu64 ",\"capacity_from\":", t->device, run->align);
              ml_json_put_str (stdout, capacity_from);
              if (ml_trace_allocator_settings (t))
                {
                  printf (",\"allocator_settings\":");
                  ml_json_put_str (stdout, ml_trace_allocator_settings (t));
                }
              printf (",\"diagnosis\":");
              if (ml_diagnosis_write_json (&d, run, stdout, &err) < 0)
                rc = cli_error ("diagnose", &err);
              printf ("}\n");
            }
          else
            print_text (path, run, &d, capacity_from);
          if (rc == EXIT_OK)
            rc = d.oom.hit || d.recorded ? EXIT_PROBLEMS : EXIT_OK;
          ml_diagnosis_clear (&d);
        }
      ml_plan_free (plan);
    }
out:
  ml_buffers_free (replay);
  free (alts);
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return rc;
}
