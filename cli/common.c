#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/base/io.h"

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
cli_no_json (const char *cmd, const MlCliOpts *o)
{
  if (!o->json)
    return 0;
  return cli_fail (cmd, EXIT_BAD, "--json does not apply to %s: it writes a file and prints only a summary on stderr", cmd);
}

int
cli_usage (const char *cmd, const char *usage)
{
  fprintf (stderr, "%s\nRun 'memlens %s --help' for the options.\n", usage, cmd);
  return EXIT_BAD;
}

int
cli_common_option (const char *cmd, MlCliOpts *o, int opt, const char *arg)
{
  MlError err = { 0 };
  uint64_t v;
  switch (opt)
    {
    case CLI_OPT_ALIGN:
      if (ml_parse_size (arg, &v, &err) < 0)
        exit (cli_error (cmd, &err));
      if (v == 0 || (v & (v - 1)))
        exit (cli_fail (cmd, EXIT_BAD, "--align %s: the alignment must be a power of two", arg));
      o->knobs.align = v;
      return 1;
    case CLI_OPT_CAPACITY:
      if (ml_parse_size (arg, &o->knobs.capacity, &err) < 0)
        exit (cli_error (cmd, &err));
      if (o->knobs.capacity == 0)
        exit (cli_fail (cmd, EXIT_BAD, "--capacity %s: must be more than 0", arg));
      return 1;
    case CLI_OPT_CHUNK:
      if (ml_parse_size (arg, &o->knobs.chunk, &err) < 0)
        exit (cli_error (cmd, &err));
      if (o->knobs.chunk == 0)
        exit (cli_fail (cmd, EXIT_BAD, "--chunk %s: must be more than 0", arg));
      o->knobs_given |= ML_KNOB_CHUNK;
      return 1;
    case CLI_OPT_JSON:
      o->json = true;
      return 1;
    case CLI_OPT_QUIET:
      o->quiet = true;
      return 1;
    case CLI_OPT_FORMAT:
      o->load.format = arg;
      return 1;
    case CLI_OPT_RANGE:
      if (ml_range_parse (arg, &o->load.range, &err) < 0)
        exit (cli_error (cmd, &err));
      return 1;
    case CLI_OPT_DEVICE:
      if (ml_parse_u64 (arg, strlen (arg), &v) < 0 || v > 1024)
        exit (cli_fail (cmd, EXIT_BAD, "--device %s: not a device number", arg));
      o->load.device = (int) v;
      return 1;
    case CLI_OPT_TIMELIMIT:
      if (ml_parse_duration (arg, &o->knobs.time_limit, &err) < 0)
        exit (cli_error (cmd, &err));
      o->knobs_given |= ML_KNOB_TIME_LIMIT;
      return 1;
    case CLI_OPT_OPTIONS:
      o->knobs.options = arg;
      o->load.graph_options = arg;
      return 1;
    case CLI_OPT_REORDER:
      {
        /* graph loader option: appended to --options for the graph reader */
        static char buf[1024];
        if (strcmp (arg, "memory") != 0 && strcmp (arg, "priority") != 0 && strcmp (arg, "none") != 0)
          exit (cli_fail (cmd, EXIT_BAD, "--reorder %s: use memory, priority or none", arg));
        snprintf (buf, sizeof buf, "%s%sreorder=%s", o->load.graph_options ? o->load.graph_options : "",
                  o->load.graph_options ? "," : "", arg);
        o->load.graph_options = buf;
      }
      return 1;
    case CLI_OPT_MAXBLOCK:
      {
        /* graph loader option: appended for the graph reader only */
        static char buf[1024];
        if (ml_parse_size (arg, &v, &err) < 0)
          exit (cli_error (cmd, &err));
        if (v == 0)
          exit (cli_fail (cmd, EXIT_BAD, "--max-block %s: must be more than 0", arg));
        snprintf (buf, sizeof buf, "%s%smax_block=%" PRIu64, o->load.graph_options ? o->load.graph_options : "",
                  o->load.graph_options ? "," : "", v);
        o->load.graph_options = buf;
      }
      return 1;
    case CLI_OPT_DIM:
      {
        /* symbolic graph dimensions, "B=8,S=128" for the graph reader */
        static char buf[1024];
        const char *eq = strchr (arg, '=');
        if (!eq || eq == arg || ml_parse_u64 (eq + 1, strlen (eq + 1), &v) < 0 || strchr (arg, ','))
          exit (cli_fail (cmd, EXIT_BAD, "--dim %s: use NAME=SIZE, e.g. --dim B=8", arg));
        if (strlen (buf) + strlen (arg) + 2 > sizeof buf)
          exit (cli_fail (cmd, EXIT_BAD, "--dim %s: too many dimensions", arg));
        if (buf[0])
          strcat (buf, ",");
        strcat (buf, arg);
        o->load.dims = buf;
      }
      return 1;
    case CLI_OPT_SEED:
      if (ml_parse_u64 (arg, strlen (arg), &o->knobs.seed) < 0)
        exit (cli_fail (cmd, EXIT_BAD, "--seed %s: not a non-negative integer", arg));
      o->knobs_given |= ML_KNOB_SEED;
      return 1;
    case CLI_OPT_RETRIES:
      if (ml_parse_u64 (arg, strlen (arg), &v) < 0 || v > 1000)
        exit (cli_fail (cmd, EXIT_BAD, "--retries %s: not a number from 0 to 1000", arg));
      o->knobs.retries = (uint32_t) v;
      o->knobs_given |= ML_KNOB_RETRIES;
      return 1;
    }
  return 0;
}

void
cli_print_notes (const char *cmd, const char *path, const MlTrace *t, bool quiet)
{
  for (size_t i = 0; i < t->n_notes && !quiet; i++)
    fprintf (stderr, "memlens %s: warning: %s: %s\n", cmd, path, ml_trace_str (t, t->notes[i]));
}

int
cli_load (const char *cmd, const char *path, MlCliOpts *o, MlTrace **trace, MlBuffers **bufs)
{
  MlError err = { 0 };
  *trace = NULL;
  *bufs = NULL;
  o->load.progress = cli_progress (o->quiet);
  ml_out_protect (path);   /* no output of this command replaces it */
  int rc = ml_trace_load (path, &o->load, trace, &err);
  cli_progress_done ();
  if (rc < 0)
    return cli_error (cmd, &err);
  cli_print_notes (cmd, path, *trace, o->quiet);
  if ((*trace)->device_reason && !o->quiet)
    fprintf (stderr, "memlens %s: %s: %s\n", cmd, path, ml_trace_str (*trace, (*trace)->device_reason));
  bool graph_only = o->load.dims || (o->load.graph_options && strstr (o->load.graph_options, "max_block="));
  if (graph_only && strcmp (ml_trace_str (*trace, (*trace)->source), "graph") != 0)
    {
      cli_fail (cmd, EXIT_BAD, "%s: --dim and --max-block apply to graphs (docs/formats.md), not to a %s input", path,
                ml_trace_str (*trace, (*trace)->source));
      ml_trace_free (*trace);
      *trace = NULL;
      return EXIT_BAD;
    }
  if (ml_buffers_build (*trace, o->knobs.align, bufs, &err) < 0)
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

static void
progress_report (void *user, double fraction, const char *what)
{
  double now = ml_now ();
  if (now - progress_last < 0.2)
    return;
  progress_last = now;
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
      if (ml_plan_read_json (o->plan_path, bufs, plan, &err) < 0)
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
