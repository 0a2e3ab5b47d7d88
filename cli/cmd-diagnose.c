/* memlens diagnose — why a trace runs out of memory under a capacity. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/diagnose-next.h"
#include "sim/analysis/diagnose.h"
#include "render/report/report.h"
#include "sim/base/jsonutil.h"

/* The allocator diagnose replays unless told: PyTorch's when built. */
static const char *
default_strategy (void)
{
  return ml_strategy_find ("caching") ? "caching" : "best-fit";
}

static const CliOption diagnose_options[] = {
  { "strategy", 's', 's', "S", "the allocator to diagnose", NULL, default_strategy },
  { "strategies", 0, 'S', "A,B,...", "the alternatives to try, or \"all\"", "all" },
  { "capacity", 0, CLI_OPT_CAPACITY, "SIZE", "the device capacity, e.g. 40G, 80G, 1048576 (default: the device "
    "memory a recorded OOM implies, reserved + device free; else the capacity the input names, a JSONL trace's "
    "\"capacity\" or a CSV named NAME.BYTES.csv; else the device's memory as the trace records it)" },
  { NULL },
};

static int
diagnose_option (MlCliOpts *o, void *user, int key, const char *arg)
{
  if (key == 's')
    o->strategy = arg;
  else if (key == 'S')
    o->strategies = arg;
  else
    cli_common_option ("diagnose", o, key, arg);
  return 0;
}

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
  char sl[ML_STREAM_LABEL_MAX];
  printf ("  OOM at tick %" PRIu64 ": request %s (buffer %" PRIu64 ", %s, stream %s)\n", o->tick, cli_size (o->request),
          b->id, ml_diagnosis_site_label (bufs, b->stack && bufs->trace && b->stack < bufs->trace->n_stacks
                                                      && bufs->trace->stacks[b->stack].site
                                                      ? bufs->trace->stacks[b->stack].site : b->name),
          ml_trace_stream_label (bufs->trace, b->stream, sl));
  char why[256];
  printf ("  verdict: %s — %s\n", verdict_upper (o->verdict), ml_oom_reason (o, why, sizeof why));
  printf ("  live %s · reserved %s · free %s · largest free range on the device %s\n", cli_size (o->live), cli_size (o->reserved),
          cli_size (o->free_bytes), cli_size (o->largest_free));
}

/* A blame table: the bytes live at an OOM by call site, largest first. */
static void
print_blame (const MlBuffers *bufs, const MlSiteBlame *sites, size_t n_sites, size_t n_live, uint64_t requested)
{
  printf ("\n  blame: live at the OOM by call site (%zu buffer%s, %s requested)\n", n_live, n_live == 1 ? "" : "s",
          cli_size (requested));
  for (size_t i = 0; i < n_sites && i < 10; i++)
    {
      const MlSiteBlame *sb = &sites[i];
      printf ("    %11s  %5zu buffer%s  %s (largest: buffer %" PRIu64 ", %s)\n", cli_size (sb->bytes), sb->count,
              sb->count == 1 ? " " : "s", ml_diagnosis_site_label (bufs, sb->site), bufs->buf[sb->largest].id,
              cli_size (bufs->buf[sb->largest].rsize));
    }
  if (n_sites > 10)
    printf ("    ... %zu more call sites\n", n_sites - 10);
}

static void
print_recorded (const char *path, const MlBuffers *bufs, const MlDiagnosis *d, const CliShortfall *s)
{
  const MlTrace *t = bufs->trace;
  printf ("%s: the trace records an OOM on device %u\n", path, t ? t->device : 0);
  char sl[ML_STREAM_LABEL_MAX];
  printf ("  OOM at tick %" PRIu64 " (trace entry %" PRIu64 "), stream %s: request %s, device free %s\n", d->rec_tick,
          d->rec_index, ml_trace_stream_label (t, d->rec_stream, sl), cli_size (d->rec_request), cli_size (d->rec_device_free));
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
      printf ("  reserved %s · allocated %s · cached free %s (largest free block in the cache %s)\n", cli_size (d->rec_reserved),
              cli_size (d->rec_live), cli_size (d->rec_cached_free), cli_size (d->rec_largest_cached));
      printf ("  device memory implied: %s (reserved + device free)\n", cli_size (d->rec_reserved + d->rec_device_free));
    }
  else
    printf ("  allocated %s (the trace has no addresses: reserved and cached blocks unknown)\n", cli_size (d->rec_live));
  cli_shortfall_print (bufs, s);
  cli_devices_print (t);
  print_blame (bufs, d->rec_sites, d->rec_n_sites, d->rec_n_live_total, d->rec_requested_live);
  putchar ('\n');
}

/* Whether the replay's OOM blames what the recorded one did (the same
 * sites, bytes and counts): one table then, not two. */
static bool
same_blame (const MlDiagnosis *d)
{
  if (!d->recorded || d->rec_n_sites != d->n_sites || d->rec_n_live_total != d->n_live_total)
    return false;
  for (size_t i = 0; i < d->n_sites; i++)
    if (d->rec_sites[i].site != d->sites[i].site || d->rec_sites[i].bytes != d->sites[i].bytes
        || d->rec_sites[i].count != d->sites[i].count)
      return false;
  return true;
}


/* The replay under the capacity: fits, or the OOM with its blame. */
static void
print_replay (const char *path, const MlBuffers *bufs, const MlDiagnosis *d)
{
  printf ("%s under %s with %s: ", path, cli_size (d->capacity), d->strategy);
  if (!d->oom.hit)
    {
      printf ("fits (peak %s, headroom %s)\n", cli_size (d->peak), cli_size (d->capacity > d->peak ? d->capacity - d->peak : 0));
      return;
    }
  if (!d->oom.request)
    {
      printf ("over the capacity (peak %s); no single request to blame\n", cli_size (d->peak));
      return;
    }
  printf ("out of memory\n");
  print_oom_line (bufs, &d->oom);
  if (same_blame (d))
    printf ("\n  blame: as at the recorded OOM above (%zu buffer%s, %s requested)\n", d->n_live_total,
            d->n_live_total == 1 ? "" : "s", cli_size (d->requested_live));
  else
    print_blame (bufs, d->sites, d->n_sites, d->n_live_total, d->requested_live);
  printf ("  the largest live buffers:\n");
  for (size_t i = 0; i < d->n_live && i < 5; i++)
    {
      const MlBuffer *b = &bufs->buf[d->live[i]];
      char label[256], sl[ML_STREAM_LABEL_MAX];
      printf ("    %11s  buffer %-8" PRIu64 " %-32s ticks [%" PRIu64 ", %" PRIu64 ") stream %s\n",
              cli_size (b->rsize), b->id, ml_report_buffer_label (bufs, d->live[i], label, sizeof label),
              b->start, b->end, ml_trace_stream_label (bufs->trace, b->stream, sl));
    }
}


/* A strategy proven not to fit, with the buffers that prove it. */
static void
print_infeasible (const MlBuffers *bufs, const MlDiagAlt *a)
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

/* The other strategies under the capacity. */
static void
print_alts (const MlBuffers *bufs, const MlDiagnosis *d)
{
  printf ("\n  other strategies under %s (needs: the peak once the capacity is lifted at the OOM):\n",
          cli_size (d->capacity));
  for (size_t i = 0; i < d->n_alts; i++)
    {
      const MlDiagAlt *a = &d->alts[i];
      if (a->status == ML_EINFEASIBLE && a->infeasible.n)
        print_infeasible (bufs, a);
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

/* What another alignment would cost or save. */
static void
print_align (const MlBuffers *bufs, const MlDiagnosis *d)
{
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

static void
print_text (const char *path, const MlBuffers *bufs, const MlDiagnosis *d, const CliShortfall *s, const char *capacity_from,
            const MlTune *tune)
{
  if (d->recorded)
    print_recorded (path, bufs, d, s);
  else if (s->has)
    {
      cli_shortfall_print (bufs, s);
      putchar ('\n');
    }
  if (d->capacity)
    {
      if (d->recorded)
        printf ("what would fit: the trace replayed with the refused %s request live at tick %" PRIu64 ", under %s (%s)\n",
                cli_size (d->rec_request), d->rec_tick, cli_size (d->capacity), capacity_from);
      print_replay (path, bufs, d);
      printf ("\n  lower bound of the trace: %s", cli_size (d->lower_bound));
      if (d->lower_bound > d->capacity)
        printf (" — more than the capacity: no strategy can fit without freeing sooner or shrinking buffers\n");
      else
        printf (" — a planner could fit it with %s to spare\n", cli_size (d->capacity - d->lower_bound));
      if (d->n_alts)
        print_alts (bufs, d);
    }
  print_align (bufs, d);
  if (tune)
    cli_tune_print_brief (path, tune);
}

static int
print_json (const char *path, const MlBuffers *run, const MlDiagnosis *d, const CliShortfall *s, const char *capacity_from,
            const MlTune *tune)
{
  const MlTrace *t = run->trace;
  MlError err = { 0 };
  int rc = EXIT_OK;
  printf ("{\"trace\":");
  ml_json_put_str (stdout, path);
  printf (",\"device\":%u,\"alignment\":%" PRIu64 ",\"capacity_from\":", t->device, run->align);
  ml_json_put_str (stdout, capacity_from);
  if (ml_trace_allocator_settings (t))
    {
      printf (",\"allocator_settings\":");
      ml_json_put_str (stdout, ml_trace_allocator_settings (t));
    }
  cli_shortfall_json (run, s);
  printf (",\"diagnosis\":");
  if (ml_diagnosis_write_json (d, run, stdout, &err) < 0)
    rc = cli_error ("diagnose", &err);
  if (tune && rc == EXIT_OK)
    {
      printf (",\"tune\":");
      if (ml_tune_write_json (stdout, tune, &err) < 0)
        rc = cli_error ("diagnose", &err);
    }
  printf ("}\n");
  return rc;
}

/* The capacity to diagnose under, and where it comes from: --capacity,
 * else the device memory a recorded OOM implies, else the file name's,
 * else the device's. */
static const char *
choose_capacity (const MlTrace *t, const MlRecordedOom *rec, MlCliOpts *o)
{
  if (o->knobs.capacity)
    return "--capacity";
  if (ml_recorded_oom_capacity (rec))
    {
      o->knobs.capacity = ml_recorded_oom_capacity (rec);
      return "the device memory the OOM implies: reserved + device free";
    }
  o->knobs.capacity = t->capacity ? t->capacity : t->device_total;
  return t->capacity ? "from the file name" : "the device's memory, from the trace";
}

/* Replays @run with the strategy (or the plan given) under the capacity
 * and explains the first failure. */
static int
diagnose_run (const char *path, const MlBuffers *run, const MlRecordedOom *rec, const MlStrategy *const *alts,
              const char *capacity_from, MlCliOpts *o)
{
  MlPlan *plan = NULL;
  int rc = cli_get_plan ("diagnose", run, o, &plan);
  if (rc != EXIT_OK)
    return rc;
  if (!plan->oom.hit && o->knobs.capacity)
    {
      /* the recorded plan or a plan file: measured against the capacity */
      MlMetrics m;
      if (ml_metrics_compute (run, plan, &m, NULL, NULL) == 0 && m.peak > o->knobs.capacity)
        ml_oom_over_capacity (&plan->oom);
    }
  MlDiagnosis d;
  MlError err = { 0 };
  o->knobs.progress = NULL;
  CliShortfall sf = { 0 };
  if (ml_diagnose (run, plan, o->knobs.capacity, alts, &o->knobs, rec->found ? rec : NULL, &d, &err) < 0)
    rc = cli_error ("diagnose", &err);
  else if (cli_shortfall_find (run, &d, &sf) < 0)
    {
      rc = cli_fail ("diagnose", EXIT_BAD, "out of memory");
      ml_diagnosis_clear (&d);
    }
  else
    {
      /* a snapshot: which allocator setting would have fitted (memlens tune) */
      MlTune *tune = NULL;
      const char *source = ml_trace_str (run->trace, run->trace->source);
      MlTuneOpts to = { .capacity = o->knobs.capacity, .jobs = 1 };
      if (source && strcmp (source, "pytorch-snapshot") == 0 && ml_tune_run (run->trace, &to, &tune, &err) < 0
          && !o->quiet)
        fprintf (stderr, "memlens diagnose: %s: the allocator settings could not be replayed: %s\n", path, err.msg);
      if (o->json)
        rc = print_json (path, run, &d, &sf, capacity_from, tune);
      else
        print_text (path, run, &d, &sf, capacity_from, tune);
      ml_tune_free (tune);
      if (rc == EXIT_OK)
        rc = d.oom.hit || d.recorded ? EXIT_PROBLEMS : EXIT_OK;
      ml_diagnosis_clear (&d);
    }
  cli_shortfall_clear (&sf);
  ml_plan_free (plan);
  return rc;
}

/* One loaded trace: its recorded OOM, the capacity, the replay. */
static int
diagnose_trace (const char *path, const MlTrace *t, const MlBuffers *bufs, const MlStrategy *const *alts, MlCliOpts *o)
{
  MlRecordedOom rec;
  MlError err = { 0 };
  if (ml_recorded_oom (bufs, &rec, &err) < 0)
    return cli_error ("diagnose", &err);
  const char *capacity_from = choose_capacity (t, &rec, o);
  if (!o->knobs.capacity && !rec.found)
    return cli_fail ("diagnose", EXIT_BAD, "%s: give --capacity (e.g. --capacity 80G); the trace records no OOM to explain", path);
  /* the replay includes the request the real allocator refused */
  MlBuffers *replay = NULL;
  if (rec.found && ml_recorded_oom_replay (bufs, &rec, &replay, &err) < 0)
    return cli_error ("diagnose", &err);
  int rc = diagnose_run (path, replay ? replay : bufs, &rec, alts, capacity_from, o);
  ml_buffers_free (replay);
  return rc;
}

static int
cmd_diagnose (int argc, char **argv)
{
  MlCliOpts opts, *o = &opts;
  int rc = cli_parse (&cli_cmd_diagnose, argc, argv, o, NULL);
  if (rc != CLI_PARSED)
    return rc;
  if (!cli_in_multi && optind < argc && (optind + 1 < argc || cli_given (o, CLI_OPT_JOBS)))
    return cli_multi ("diagnose", cmd_diagnose, true, argc, argv, optind, o);
  if (optind + 1 != argc)
    return cli_usage (&cli_cmd_diagnose);
  if (!o->strategy)
    o->strategy = default_strategy ();
  if (!ml_strategy_find (o->strategy))
    return cli_fail ("diagnose", EXIT_BAD, "unknown strategy \"%s\" (see 'memlens strategies')", o->strategy);
  if ((rc = cli_check_options ("diagnose", o, (const MlStrategy *const[]) { ml_strategy_find (o->strategy), NULL }))
      != EXIT_OK)
    return rc;
  const MlStrategy **alts = cli_strategies ("diagnose", o->strategies);
  if (!alts)
    return EXIT_BAD;
  const char *path = argv[optind];
  MlTrace *t;
  MlBuffers *bufs;
  if ((rc = cli_load ("diagnose", path, o, &t, &bufs)) == EXIT_OK)
    {
      rc = diagnose_trace (path, t, bufs, alts, o);
      ml_buffers_free (bufs);
      ml_trace_free (t);
    }
  free (alts);
  return rc;
}

const CliCommand cli_cmd_diagnose = {
  .name = "diagnose",
  .bit = CLI_DIAGNOSE,
  .summary = "explain an out-of-memory under a capacity: verdict, blame, what would fit",
  .usage = "memlens diagnose [OPTIONS] TRACE [--capacity SIZE] [--strategy S]\n",
  .about = "A trace that recorded an OOM (PyTorch snapshot) gets that OOM first: the\n"
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
           "an OOM or the strategy runs out of memory.\n",
  .options = diagnose_options,
  .option = diagnose_option,
  .run = cmd_diagnose,
};
