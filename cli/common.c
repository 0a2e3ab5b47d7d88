#include "cli/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/base/io.h"
#include "sim/base/jsonutil.h"
#include "sim/base/options.h"
#include "sim/formats/plan-csv.h"

void
cli_opts_init (MlCliOpts *o)
{
  memset (o, 0, sizeof *o);
  ml_load_options_init (&o->load);
  ml_knobs_init (&o->knobs);
}

int
cli_fail (const char *cmd, int code, const char *fmt, ...)
{
  va_list ap;
  fprintf (stderr, "memlens %s: ", cmd);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  return code;
}

int
cli_error (const char *cmd, const MlError *err)
{
  int code = err->code == ML_EOOM ? EXIT_PROBLEMS : EXIT_BAD;
  return cli_fail (cmd, code, "%s", err->msg[0] ? err->msg : ml_error_code_name (err->code));
}

int
cli_usage (const CliCommand *cmd)
{
  cli_usage_write (stderr, cmd);
  fprintf (stderr, "\nRun 'memlens %s --help' for the options.\n", cmd->name);
  return EXIT_BAD;
}

int
cli_check_device (const char *cmd, const char *path, const MlCliOpts *o, const MlTrace *t)
{
  if (o->load.device < 0 || t->n_devices < 2)
    return EXIT_OK;
  for (size_t d = 0; d < t->n_devices; d++)
    if (t->devices[d].device == (uint32_t) o->load.device && ml_device_info_empty (&t->devices[d]))
      {
        char list[1024];
        return cli_fail (cmd, EXIT_BAD, "%s: device %d holds no memory: no allocation in its trace, no segment at the "
                         "dump (the others: %s)", path, o->load.device,
                         ml_trace_list_devices (t, (uint32_t) o->load.device, list, sizeof list));
      }
  return EXIT_OK;
}

void
cli_print_notes (const char *cmd, const char *path, const MlTrace *t, bool quiet)
{
  for (size_t i = 0; i < t->n_notes && !quiet; i++)
    fprintf (stderr, "memlens %s: warning: %s: %s\n", cmd, path, ml_trace_str (t, t->notes[i]));
  if (t->device_reason && !quiet)
    fprintf (stderr, "memlens %s: %s: %s\n", cmd, path, ml_trace_str (t, t->device_reason));
}

int
cli_load (const char *cmd, const char *path, MlCliOpts *o, MlTrace **trace, MlBuffers **bufs)
{
  MlError err = { 0 };
  *trace = NULL;
  *bufs = NULL;
  o->load.progress = cli_progress (o->quiet);
  ml_out_protect (path);   /* no output of this command replaces it */
  int rc = o->buffers_only ? ml_trace_load_buffers (path, &o->load, o->knobs.align, trace, bufs, &err)
                            : ml_trace_load (path, &o->load, trace, &err);
  cli_progress_done ();
  if (rc < 0)
    return cli_error (cmd, &err);
  cli_print_notes (cmd, path, *trace, o->quiet);
  if (cli_check_device (cmd, path, o, *trace))
    {
      ml_buffers_free (*bufs);
      ml_trace_free (*trace);
      *bufs = NULL;
      *trace = NULL;
      return EXIT_BAD;
    }
  bool graph_only = o->load.dims || (o->load.graph_options && strstr (o->load.graph_options, "max_block="));
  if (graph_only && strcmp (ml_trace_str (*trace, (*trace)->source), "graph") != 0)
    {
      cli_fail (cmd, EXIT_BAD, "%s: --dim and --max-block apply to graphs (docs/formats.md), not to a %s input", path,
                ml_trace_str (*trace, (*trace)->source));
      ml_buffers_free (*bufs);
      ml_trace_free (*trace);
      *bufs = NULL;
      *trace = NULL;
      return EXIT_BAD;
    }
  if (!*bufs && ml_buffers_build (*trace, o->knobs.align, bufs, &err) < 0)
    {
      ml_error_prefix (&err, "%s", path);
      ml_trace_free (*trace);
      *trace = NULL;
      return cli_error (cmd, &err);
    }
  if (o->knobs.align == 0)
    o->knobs.align = (*bufs)->align;
  /* the capacity an input implies (A.1048576.csv) unless --capacity says otherwise */
  if (!o->knobs.capacity && (*trace)->capacity)
    o->knobs.capacity = (*trace)->capacity;
  return EXIT_OK;
}

const MlStrategy **
cli_strategies (const char *cmd, const char *list)
{
  if (!list || strcmp (list, "default") == 0)
    list = ml_strategies_default ();
  size_t cap = 1;
  for (const char *p = list; *p; p++)
    cap += *p == ',';
  const MlStrategy *const *all = ml_strategies_all ();
  size_t n_all = 0;
  while (all[n_all])
    n_all++;
  if (strcmp (list, "all") == 0)
    cap = n_all;
  const MlStrategy **out = calloc (cap + 1, sizeof *out);
  char *copy = strcmp (list, "all") == 0 ? NULL : strdup (list);
  if (!out || (!copy && strcmp (list, "all") != 0))
    {
      fprintf (stderr, "memlens %s: out of memory\n", cmd);
      free (out);
      return NULL;
    }
  if (strcmp (list, "all") == 0)
    {
      memcpy (out, all, n_all * sizeof *out);
      return out;
    }
  char *save = NULL;
  size_t n = 0;
  for (char *tok = strtok_r (copy, ",", &save); tok; tok = strtok_r (NULL, ",", &save))
    {
      const MlStrategy *s = ml_strategy_find (tok);
      if (!s)
        {
          fprintf (stderr, "memlens %s: unknown strategy \"%s\"; known:", cmd, tok);
          for (size_t i = 0; i < n_all; i++)
            fprintf (stderr, " %s", all[i]->name);
          fputc ('\n', stderr);
          free (copy);
          free (out);
          return NULL;
        }
      out[n++] = s;
    }
  free (copy);
  if (n == 0)
    {
      fprintf (stderr, "memlens %s: the strategy list is empty\n", cmd);
      free (out);
      return NULL;
    }
  return out;
}

void
cli_note_knobs (const char *cmd, const MlCliOpts *o, const MlStrategy *const *list)
{
  if (o->quiet)
    return;
  for (unsigned k = 1; k < ML_KNOB__END; k <<= 1)
    {
      if (!(o->knobs_given & k) || k == ML_KNOB_OPTIONS)
        continue;
      bool read = false;
      for (size_t i = 0; list && list[i]; i++)
        read |= (list[i]->knobs & k) != 0;
      if (read)
        continue;
      fprintf (stderr, "memlens %s: --%s does not apply to", cmd, ml_knob_name ((MlKnob) k));
      for (size_t i = 0; list && list[i]; i++)
        fprintf (stderr, "%s%s", i ? ", " : " ", list[i]->name);
      const char *sep = " (read by ";
      for (const MlStrategy *const *s = ml_strategies_all (); *s; s++)
        if ((*s)->knobs & k)
          {
            fprintf (stderr, "%s%s", sep, (*s)->name);
            sep = ", ";
          }
      fputs (*sep == ',' ? ")\n" : ": no strategy reads it\n", stderr);
    }
}

/* A swept knob that no strategy of @list reads gets a note, not silence
 * (align and capacity apply to every strategy: the driver honours them). */
void
cli_note_sweep (const char *cmd, const char *spec, const MlStrategy *const *list)
{
  char knob[64];
  snprintf (knob, sizeof knob, "%.*s", (int) strcspn (spec, "="), spec);
  if (strcmp (knob, "align") == 0 || strcmp (knob, "capacity") == 0)
    return;
  unsigned bit = 0;
  for (unsigned k = 1; k < ML_KNOB__END; k <<= 1)
    if (k != ML_KNOB_OPTIONS && strcmp (knob, ml_knob_name ((MlKnob) k)) == 0)
      bit = k;
  bool read = false;
  for (size_t i = 0; list[i]; i++)
    read |= bit ? (list[i]->knobs & bit) != 0 : ml_strategy_reads_option (list[i], knob);
  if (read)
    return;
  fprintf (stderr, "memlens %s: --sweep %s does not apply to", cmd, knob);
  for (size_t i = 0; list[i]; i++)
    fprintf (stderr, "%s%s", i ? ", " : " ", list[i]->name);
  const char *sep = " (read by ";
  for (const MlStrategy *const *s = ml_strategies_all (); *s; s++)
    if (bit ? ((*s)->knobs & bit) != 0 : ml_strategy_reads_option (*s, knob))
      {
        fprintf (stderr, "%s%s", sep, (*s)->name);
        sep = ", ";
      }
  fputs (*sep == ',' ? "): every row is the same run\n" : ": no strategy reads it): every row is the same run\n", stderr);
}

/* The option keys @s reads, "a, b, c", or "no options" (a static string). */
static const char *
keys_of (const MlStrategy *s)
{
  static char buf[512];
  size_t used = 0;
  buf[0] = 0;
  for (const char *const *k = s->options; k && *k && used < sizeof buf; k++)
    used += (size_t) snprintf (buf + used, sizeof buf - used, "%s%s", used ? ", " : "", *k);
  return used ? buf : "no options";
}

/* One key of --options: up to '=' (or ':', PyTorch's own syntax). */
static int
check_key (void *user, const char *key, const char *value, MlError *err)
{
  (void) value;
  const MlStrategy *const *list = user;
  char k[128];
  key += strspn (key, " \t");
  int kl = (int) strcspn (key, ":");
  while (kl > 0 && (key[kl - 1] == ' ' || key[kl - 1] == '\t'))
    kl--;
  snprintf (k, sizeof k, "%.*s", kl, key);
  if (ml_options_is_graph_key (k))
    return 0;
  for (size_t i = 0; list[i]; i++)
    if (ml_strategy_reads_option (list[i], k) || ((list[i]->knobs & ML_KNOB_OPTIONS) && !list[i]->options))
      return 0;
  char reads[2048];
  size_t used = 0;
  for (size_t i = 0; list[i] && used < sizeof reads; i++)
    used += (size_t) snprintf (reads + used, sizeof reads - used, "%s%s reads %s", i ? "; " : "", list[i]->name,
                               keys_of (list[i]));
  /* a near key: one that starts with the other ("max_split_size" for max_split_size_mb) */
  const char *near = NULL;
  size_t kn = strlen (k);
  for (size_t i = 0; list[i] && !near; i++)
    for (const char *const *o = list[i]->options; o && *o && !near; o++)
      if (kn >= 3 && (strncmp (*o, k, kn) == 0 || strncmp (*o, k, strlen (*o)) == 0))
        near = *o;
  char hint[160] = "";
  if (near)
    snprintf (hint, sizeof hint, "; did you mean %s?", near);
  return ml_error_set (err, ML_EUSAGE, "--options: no strategy of this run reads the key \"%s\"%s (%s; \"%s\" is read by%s)",
                       k, hint, reads, k, cli_strategies_reading (k));
}

int
cli_check_options (const char *cmd, const MlCliOpts *o, const MlStrategy *const *list)
{
  if (!o->knobs.options || !*o->knobs.options)
    return EXIT_OK;
  MlError err = { 0 };
  if (ml_options_foreach (o->knobs.options, check_key, (void *) list, &err) < 0)
    return cli_error (cmd, &err);
  return EXIT_OK;
}

/* A row that failed: not an answer (a plan, an OOM under the capacity,
 * a proof that none fits, a stop at the time limit the user set). */
static bool
failed_row (const MlResult *r)
{
  return r->status != 0 && r->status != ML_EOOM && r->status != ML_EINFEASIBLE && r->status != ML_ETIMEOUT;
}

int
cli_check_rows (const char *cmd, const MlResult *const *rows, size_t n)
{
  size_t ran = 0, failed = 0, refused = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (!rows[i]->strategy || (rows[i]->strategy->flags & ML_STRATEGY_RECORDED))
        continue;
      ran++;
      failed += failed_row (rows[i]);
      refused += rows[i]->status == ML_EUSAGE;
    }
  if (!refused && (!ran || failed < ran))
    return EXIT_OK;
  for (size_t i = 0; i < n; i++)
    {
      const MlResult *r = rows[i];
      if (!r->strategy || (r->strategy->flags & ML_STRATEGY_RECORDED) || !failed_row (r)
          || (refused && r->status != ML_EUSAGE))
        continue;
      fprintf (stderr, "memlens %s: %s", cmd, r->error);
      /* an option refused: the keys it reads, unless the strategy named them */
      if (r->status == ML_EUSAGE && (strstr (r->error, "option") || strstr (r->error, "setting"))
          && !strstr (r->error, "(known:"))
        fprintf (stderr, " (%s reads %s)", r->strategy->name, keys_of (r->strategy));
      fputc ('\n', stderr);
    }
  if (refused)
    fprintf (stderr, "memlens %s: %zu of the %zu strategies refused their settings: nothing written\n", cmd, refused, ran);
  else
    fprintf (stderr, "memlens %s: every strategy failed (%zu): nothing written\n", cmd, ran);
  return EXIT_BAD;
}

int
cli_check_sweep (const char *cmd, const MlKnobSweep *sw)
{
  size_t refused = 0, n = sw ? sw->n_values * sw->n_strategies : 0;
  for (size_t i = 0; i < n; i++)
    if (sw->rows[i].status == ML_EUSAGE && ++refused)
      fprintf (stderr, "memlens %s: --sweep %s=%s: %s\n", cmd, sw->knob, sw->rows[i].value, sw->rows[i].error);
  if (!refused)
    return EXIT_OK;
  fprintf (stderr, "memlens %s: %zu of the sweep's %zu runs refused their settings: nothing written\n", cmd, refused, n);
  return EXIT_BAD;
}

const char *
cli_strategies_reading (const char *key)
{
  static char list[256];
  size_t len = 0;
  list[0] = 0;
  for (const MlStrategy *const *s = ml_strategies_all (); *s; s++)
    if (ml_strategy_reads_option (*s, key) && len < sizeof list)
      len += (size_t) snprintf (list + len, sizeof list - len, " %s", (*s)->name);
  return len ? list : " none in this build";
}

static double progress_last;
static bool progress_shown;
static const char *progress_what;

/* At most five lines a second, but a new step ("writing events" after
 * "reading") at once. */
static void
progress_report (void *user, double fraction, const char *what)
{
  double now = ml_now ();
  if (now - progress_last < 0.2 && what == progress_what)
    return;
  progress_last = now;
  progress_what = what;
  progress_shown = true;
  if (fraction > 1)
    fraction = 1;
  fprintf (stderr, "\r%-20s %5.1f%%", what, fraction * 100.0);
  fflush (stderr);
}

static MlProgress progress = { progress_report, NULL, NULL };

const MlProgress *
cli_progress (bool quiet)
{
  if (quiet || !isatty (STDERR_FILENO))
    return NULL;
  return &progress;
}

void
cli_progress_done (void)
{
  if (progress_shown)
    {
      fprintf (stderr, "\r%-40s\r", "");
      progress_shown = false;
    }
}

const char *
cli_frag (const MlMetrics *m, double frag, char *buf, size_t len)
{
  if (m->frag_unknown)
    snprintf (buf, len, "n/a");
  else
    snprintf (buf, len, "%.3f", frag);
  return buf;
}

const char *
cli_size (uint64_t bytes)
{
  static char bufs[8][32];
  static int next;
  char *b = bufs[next++ & 7];
  return ml_format_size (bytes, b, 32);
}

int
cli_get_plan (const char *cmd, const MlBuffers *bufs, MlCliOpts *o, MlPlan **plan)
{
  MlError err = { 0 };
  if (o->plan_path)
    {
      ml_out_protect (o->plan_path);
      char ext[16];
      ml_path_ext (o->plan_path, ext, sizeof ext, NULL);
      if ((strcmp (ext, "csv") == 0 ? ml_plan_read_csv (o->plan_path, bufs, plan, &err)
                                    : ml_plan_read_json (o->plan_path, bufs, plan, &err)) < 0)
        return cli_error (cmd, &err);
      return EXIT_OK;
    }
  const MlStrategy *s = o->strategy ? ml_strategy_find (o->strategy) : ml_strategy_initial (ml_plan_has_recorded (bufs));
  if (!s)
    return cli_fail (cmd, EXIT_BAD, "unknown strategy \"%s\" (see 'memlens strategies')", o->strategy);
  o->knobs.progress = cli_progress (o->quiet);
  int rc = ml_sim_run (bufs, s, &o->knobs, plan, &err);
  cli_progress_done ();
  if (rc < 0)
    return cli_error (cmd, &err);
  return EXIT_OK;
}

static void
on_signal (int sig)
{
  ml_out_unlink_all ();
  static const char msg[] = "\nmemlens: interrupted; no partial output was left behind\n";
  ssize_t w = write (STDERR_FILENO, msg, sizeof msg - 1);
  (void) w;
  signal (sig, SIG_DFL);
  raise (sig);
}

void
cli_install_signals (void)
{
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGHUP, &sa, NULL);
  /* past a file-size limit (ulimit -f) a write fails with EFBIG instead
   * of killing the process: the output's error path then removes its
   * temporary file and says "File too large" */
  signal (SIGXFSZ, SIG_IGN);
}

bool
cli_jobs_option (const char *cmd, const char *arg, unsigned *jobs)
{
  char *end;
  unsigned long v = strtoul (arg, &end, 10);
  if (*end || !*arg || v == 0 || v > 1024)
    {
      cli_fail (cmd, EXIT_BAD, "--jobs %s: not a number from 1 to 1024", arg);
      return false;
    }
  *jobs = (unsigned) v;
  return true;
}

int
cli_recorded_oom (const char *cmd, const MlBuffers *bufs, MlRecordedOom *rec)
{
  MlError err = { 0 };
  if (ml_recorded_oom (bufs, rec, &err) < 0)
    return cli_error (cmd, &err);
  return EXIT_OK;
}

void
cli_print_recorded_oom (const MlTrace *t, const MlRecordedOom *rec)
{
  if (!rec->found)
    return;
  printf ("recorded OOM device %u, tick %" PRIu64 " (trace entry %" PRIu64 "): request %s, device free %s\n", t->device,
          rec->tick, rec->index, cli_size (rec->request), cli_size (rec->device_free));
}

void
cli_json_recorded_oom (const MlTrace *t, const MlRecordedOom *rec)
{
  if (!rec->found)
    return;
  printf (",\"recorded_oom\":{\"device\":%u,\"tick\":%" PRIu64 ",\"index\":%" PRIu64 ",\"request\":%" PRIu64
          ",\"device_free\":%" PRIu64 "}", t->device, rec->tick, rec->index, rec->request, rec->device_free);
}
