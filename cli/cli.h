/* cli.h — what the memlens subcommands share: loading, knobs, output.
 *
 * Exit codes: 0 ok; 1 the check found problems or the run hit OOM; 2 bad
 * usage or bad input. Errors go to stderr as "memlens CMD: message".
 */
#ifndef ML_CLI_H
#define ML_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>   /* optind */

#include "sim/base/io.h"
#include "sim/formats/load.h"
#include "sim/sim.h"
#include "sim/base/units.h"
#include "strategies/caching-tune.h"
#include "strategies/registry.h"
#include "sim/analysis/diagnose.h"
#include "sim/analysis/groups.h"
#include "sim/analysis/knob-sweep.h"
#include "cli/options.h"

enum { EXIT_OK = 0, EXIT_PROBLEMS = 1, EXIT_BAD = 2 };

/* Common options. */
typedef struct MlCliOpts {
  MlLoadOptions load;
  MlKnobs       knobs;
  bool          json;
  bool          quiet;
  const char   *output;
  const char   *strategies;   /* comma list */
  const char   *strategy;
  const char   *plan_path;
  unsigned      jobs;         /* --jobs: several files at a time */
  unsigned      knobs_given;  /* the MlKnob bits set on the command line */
  int           given[64];    /* the keys of the options given, in order */
  unsigned      n_given;
  /* the command needs the buffers, not the events (an offline plan, a
   * plan file checked): cli_load lets a reader that can build them
   * itself do so (ml_trace_load_buffers: a CSV in a third of the memory) */
  bool          buffers_only;
} MlCliOpts;

void cli_opts_init (MlCliOpts *o);

/* Reads @cmd's command line with its rows (cli/options.h): fills @o
 * (cli_opts_init first) with the shared options and hands the command's
 * own to cmd->option (@user is its state), defaults first. Returns
 * CLI_PARSED with optind at the first operand; EXIT_OK after --help;
 * EXIT_BAD after saying what is wrong. */
#define CLI_PARSED (-1)
int  cli_parse (const CliCommand *cmd, int argc, char **argv, MlCliOpts *o, void *user);
/* Whether the option with @key was on the command line (not a default). */
bool cli_given (const MlCliOpts *o, int key);

/* Takes a shared option (a key of cli_shared_options) into @o; returns 1
 * if it took it, 0 if not, or exits with EXIT_BAD on a bad value. */
int  cli_common_option (const char *cmd, MlCliOpts *o, int opt, const char *arg);

/* Loads @path and builds its lifetimes with o->knobs.align (0 = the
 * format's default); o->knobs.capacity defaults to the capacity the input
 * implies (a CSV's file name). Prints the error and returns EXIT_BAD on failure. */
int  cli_load (const char *cmd, const char *path, MlCliOpts *o, MlTrace **trace, MlBuffers **bufs);
/* --device N naming a device that holds no memory (of a file with
 * several): EXIT_BAD with the others listed, instead of an empty run. */
int  cli_check_device (const char *cmd, const char *path, const MlCliOpts *o, const MlTrace *t);
/* Prints the reader's warnings about @t (MlTrace.notes) and which device
 * it read and why (MlTrace.device_reason) unless @quiet. */
void cli_print_notes (const char *cmd, const char *path, const MlTrace *t, bool quiet);

/* Prints "memlens CMD: msg" and returns @code. */
int  cli_fail (const char *cmd, int code, const char *fmt, ...) __attribute__((format (printf, 3, 4)));
int  cli_error (const char *cmd, const MlError *err);
/* The usage and "Run 'memlens CMD --help'" on stderr; returns EXIT_BAD. */
int  cli_usage (const CliCommand *cmd);

/* Parses a strategy list ("a,b,c" or "all"); NULL-terminated array the
 * caller frees. Prints and returns NULL on an unknown name. */
const MlStrategy **cli_strategies (const char *cmd, const char *list);

/* Notes on stderr (unless --quiet) each knob given on the command line
 * that none of @list (NULL-terminated) reads: "--seed does not apply to
 * first-fit (read by anneal)". --options is not judged: the graph reader
 * reads it too. */
void cli_note_knobs (const char *cmd, const MlCliOpts *o, const MlStrategy *const *list);
/* The same note for --sweep KNOB=...: a swept knob that no strategy of
 * @list (NULL-terminated) reads, on stderr. */
void cli_note_sweep (const char *cmd, const char *spec, const MlStrategy *const *list);

/* --options against @list (NULL-terminated) before anything is read: a
 * key that no strategy of @list reads (nor the graph reader) is bad
 * usage. Returns EXIT_OK, or EXIT_BAD with the key, the keys each strategy
 * of @list reads and the strategies that read it on stderr. The caching
 * emulation judges PyTorch's settings itself (cli_check_rows). */
int cli_check_options (const char *cmd, const MlCliOpts *o, const MlStrategy *const *list);
/* After @n strategies ran (@rows[i], the recorded plan's row included):
 * EXIT_OK when their rows may be shown; EXIT_BAD, each reason on stderr
 * (the strategy, its error, the option keys it reads), when a strategy
 * refused its settings (an option it does not read, a bad value, a knob
 * it cannot take: bad usage) or when every strategy failed (an answer is
 * no failure: a plan, an OOM, a proof that none fits, a stop at the time
 * limit), so that no table or report is written. */
int cli_check_rows (const char *cmd, const MlResult *const *rows, size_t n);

/* The same for a --sweep: a value a strategy refused (--sweep chunk=3
 * under alignment 512) is bad usage, EXIT_BAD with each refusal on stderr. */
int cli_check_sweep (const char *cmd, const MlKnobSweep *sw);

/* " a b": the strategies whose options understand @key (a static string). */
const char *cli_strategies_reading (const char *key);

/* The progress reporter for long runs (stderr, only when it is a tty). */
const MlProgress *cli_progress (bool quiet);
void cli_progress_done (void);

/* 1.50 GiB style sizes, into a static rotating buffer (for printf). */
const char *cli_size (uint64_t bytes);
/* A fragmentation of @m as compare prints it: "0.333", or "n/a" where
 * the plan's free space is not known (MlMetrics.frag_unknown). */
const char *cli_frag (const MlMetrics *m, double frag, char *buf, size_t len);

/* The trace's recorded OOM (ml_recorded_oom): EXIT_OK with rec->found
 * false when it has none, else the error's exit code after saying it.
 * The rule every command that reads a snapshot keeps: the recorded OOM is
 * in its first lines (cli_print_recorded_oom, --json "recorded_oom") and
 * its exit code is 1 (EXIT_PROBLEMS). */
int  cli_recorded_oom (const char *cmd, const MlBuffers *bufs, MlRecordedOom *rec);
/* "recorded OOM device 1, tick 12 (trace entry 11): request 70.00 MiB,
 * device free 45.00 MiB" and a newline, on stdout. */
void cli_print_recorded_oom (const MlTrace *t, const MlRecordedOom *rec);
/* ,"recorded_oom":{"device":1,"tick":12,"index":11,"request":N,"device_free":N}
 * on stdout (nothing when @rec found none). */
void cli_json_recorded_oom (const MlTrace *t, const MlRecordedOom *rec);
/* stats: streams (their values), memory pools, pending frees and a
 * snapshot's own account of its trace (allocator settings, the ring
 * buffer, skipped actions), as JSON members (",\"stream_ids\":...") or
 * text lines (stats-lanes.c). */
int cli_stats_lanes_json (FILE *fp, const MlTrace *t, const MlBuffers *bufs, MlError *err);
int cli_stats_lanes_text (FILE *fp, const MlTrace *t, const MlBuffers *bufs, MlError *err);
/* stats --group-by: the groups live at @tick (of @live bytes), as the
 * JSON member ",\"groups\":[...]" or text lines (stats-query.c). */
int cli_stats_groups (FILE *fp, const MlBuffers *bufs, const MlGroupKeys *keys, uint64_t tick, uint64_t live,
                      bool json, MlError *err);
/* stats --find ADDR[@TICK] / --find-frame TEXT. */
typedef struct {
  const char *text;   /* the argument */
  uint64_t    addr;
  uint64_t    tick;   /* UINT64_MAX: at any tick */
} CliFind;
/* "0x7f0000001000", "4096@17"; 0, or -1 when it is neither. */
int cli_find_parse (const char *arg, CliFind *f);
/* The buffers that held f->addr (at f->tick), or (@by_frame) whose stack
 * has a frame containing f->text; returns EXIT_OK when some were found,
 * EXIT_PROBLEMS when none. */
int cli_stats_find (FILE *fp, const char *path, const MlBuffers *bufs, const CliFind *f, bool by_frame, bool json);

/* The plan to use: --plan file, else --strategy S run over @bufs, else
 * the recorded plan when the trace has addresses, else best-fit. */
int  cli_get_plan (const char *cmd, const MlBuffers *bufs, MlCliOpts *o, MlPlan **plan);

void cli_install_signals (void);

/* Several files (stats / compare / diagnose FILE... [--jobs N]): each in
 * a child process, o->jobs at a time, @run's output per file when @print_each
 * (in the order of the files), then one summary table (device, peak
 * reserved, peak allocated, OOM, top call site; --json: an array).
 * @first = the index of the first file in @argv (options before it).
 * Returns the worst exit status. cli_in_multi is true in the children. */
extern bool cli_in_multi;
int  cli_multi (const char *cmd, int (*run) (int, char **), bool print_each, int argc, char **argv, int first,
                MlCliOpts *o);
/* memlens report FILE... -o OUT: the view across the ranks of the files
 * (argv[@first..@argc)) as a report (.html when @html): the exit status. */
int  cli_report_ranks (int argc, char **argv, int first, MlCliOpts *o, bool html);
/* --jobs N; returns false (with a message) on a bad value */
bool cli_jobs_option (const char *cmd, const char *arg, unsigned *jobs);

/* The answer of a tune run and the strands of the recorded settings and
 * the answer, as diagnose shows them (cmd-tune.c). */
void cli_tune_print_brief (const char *path, const MlTune *t);
/* tune's whole text (cmd-tune.c), and the trace alone loaded as tune loads it. */
void cli_tune_print (const char *path, const MlTrace *trace, const MlTune *t);
int  cli_tune_load (const char *path, MlCliOpts *o, MlTrace **t);
/* tune over runs at several batch sizes (tune-batch.c): @spec is --batch
 * (NULL: from the file names). */
int  cli_tune_batches (char **paths, size_t n_paths, const char *spec, MlCliOpts *o, const MlTuneOpts *to);

/* The commands (cmd-*.c), listed by cli/commands.c. */
extern const CliCommand cli_cmd_stats, cli_cmd_compare, cli_cmd_plan, cli_cmd_check, cli_cmd_convert,
  cli_cmd_strategies, cli_cmd_view, cli_cmd_render, cli_cmd_diff, cli_cmd_diagnose, cli_cmd_report, cli_cmd_trace,
  cli_cmd_replay, cli_cmd_fit, cli_cmd_tune;

#endif
