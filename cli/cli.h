/* cli.h — what the memlens subcommands share: loading, knobs, output.
 *
 * Exit codes: 0 ok; 1 the check found problems or the run hit OOM; 2 bad
 * usage or bad input. Errors go to stderr as "memlens CMD: message".
 */
#ifndef ML_CLI_H
#define ML_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "sim/base/io.h"
#include "sim/formats/load.h"
#include "sim/sim.h"
#include "sim/base/units.h"
#include "strategies/registry.h"

enum { EXIT_OK = 0, EXIT_PROBLEMS = 1, EXIT_BAD = 2 };

typedef struct {
  const char *name;
  const char *summary;
  int (*run) (int argc, char **argv);
} MlCommand;

/* Common options. */
typedef struct {
  MlLoadOptions load;
  MlKnobs       knobs;
  bool          json;
  bool          quiet;
  const char   *output;
  const char   *strategies;   /* comma list */
  const char   *strategy;
  const char   *plan_path;
  unsigned      knobs_given;  /* the MlKnob bits set on the command line */
} MlCliOpts;

void cli_opts_init (MlCliOpts *o);

/* Handles an option shared by commands (see CLI_COMMON_LONGOPTS); returns
 * 1 if it took it, 0 if not, or exits with EXIT_BAD on a bad value. */
int  cli_common_option (const char *cmd, MlCliOpts *o, int opt, const char *arg);

#define CLI_OPT_ALIGN     1001
#define CLI_OPT_CAPACITY  1002
#define CLI_OPT_JSON      1003
#define CLI_OPT_FORMAT    1004
#define CLI_OPT_DEVICE    1005
#define CLI_OPT_TIMELIMIT 1006
#define CLI_OPT_OPTIONS   1007
#define CLI_OPT_SEED      1008
#define CLI_OPT_CHUNK     1009
#define CLI_OPT_QUIET     1010
#define CLI_OPT_RETRIES   1011
#define CLI_OPT_REORDER   1012
#define CLI_OPT_DIM       1013
#define CLI_OPT_MAXBLOCK  1014
#define CLI_OPT_RANGE     1015

#define CLI_COMMON_LONGOPTS                                        \
  { "align",      required_argument, 0, CLI_OPT_ALIGN },           \
  { "capacity",   required_argument, 0, CLI_OPT_CAPACITY },        \
  { "json",       no_argument,       0, CLI_OPT_JSON },            \
  { "format",     required_argument, 0, CLI_OPT_FORMAT },          \
  { "device",     required_argument, 0, CLI_OPT_DEVICE },          \
  { "time-limit", required_argument, 0, CLI_OPT_TIMELIMIT },       \
  { "options",    required_argument, 0, CLI_OPT_OPTIONS },         \
  { "seed",       required_argument, 0, CLI_OPT_SEED },            \
  { "chunk",      required_argument, 0, CLI_OPT_CHUNK },           \
  { "retries",    required_argument, 0, CLI_OPT_RETRIES },         \
  { "reorder",    required_argument, 0, CLI_OPT_REORDER },         \
  { "dim",        required_argument, 0, CLI_OPT_DIM },             \
  { "max-block",  required_argument, 0, CLI_OPT_MAXBLOCK },        \
  { "quiet",      no_argument,       0, CLI_OPT_QUIET },           \
  { "help",       no_argument,       0, 'h' }

/* --range (the load window) is not among the common options: render has
 * its own --range (the ticks to draw); the other commands add these. */
#define CLI_RANGE_LONGOPT { "range", required_argument, 0, CLI_OPT_RANGE }
#define CLI_RANGE_HELP \
  "  --range T0:T1      PyTorch snapshots, Kineto traces: only ticks T0..T1\n" \
  "                     (1000:2000) or times from the first entry (1.5s:3s,\n" \
  "                     200ms:); either end may be left out; the rest of the file\n" \
  "                     is skipped as it streams\n"

#define CLI_COMMON_HELP \
  "  --align N          alignment in bytes (default: 256, CSV: 1)\n" \
  "  --capacity SIZE    device capacity, e.g. 40G, 80G, 1048576\n" \
  "  --format NAME      input format (default: by extension or content)\n" \
  "  --device N         PyTorch snapshots: which device (default: longest trace)\n" \
  "  --time-limit T     per strategy, e.g. 10s, 2m (offline planners)\n" \
  "  --options K=V,...  strategy options\n" \
  "  --seed N           seed for randomised strategies (default 1)\n" \
  "  --chunk SIZE       pool chunk / buddy segment size (default 4M; pool, buddy only)\n" \
  "  --retries N        after a refusal under --capacity, give the cache back and\n" \
  "                     retry up to N times (default 3; caching, pool, buddy: the\n" \
  "                     fit strategies and the planners cache nothing)\n" \
  "  --reorder memory|priority  graphs: a memory-aware op order, or GE's memory priority\n" \
  "  --dim NAME=N       graphs: bind a symbolic dimension (repeatable)\n" \
  "  --max-block SIZE   graphs: arena blocks of at most SIZE (offline planners)\n" \
  "  --quiet            no progress on stderr\n" \
  "  -h, --help         this help\n"

/* Only for the commands that read o->json; the others refuse it
 * (cli_no_json). */
#define CLI_JSON_HELP \
  "  --json             machine-readable output on stdout\n"

/* For a command that writes a file and prints nothing to parse: refuses
 * --json (EXIT_BAD, a message) instead of ignoring it; 0 when not given. */
int  cli_no_json (const char *cmd, const MlCliOpts *o);

/* Loads @path and builds its lifetimes with o->knobs.align (0 = the
 * format's default); o->knobs.capacity defaults to the capacity the input
 * implies (a CSV's file name). Prints the error and returns EXIT_BAD on failure. */
int  cli_load (const char *cmd, const char *path, MlCliOpts *o, MlTrace **trace, MlBuffers **bufs);
/* Prints the reader's warnings about @t (MlTrace.notes) unless @quiet. */
void cli_print_notes (const char *cmd, const char *path, const MlTrace *t, bool quiet);

/* Prints "memlens CMD: msg" and returns @code. */
int  cli_fail (const char *cmd, int code, const char *fmt, ...) __attribute__((format (printf, 3, 4)));
int  cli_error (const char *cmd, const MlError *err);
int  cli_usage (const char *cmd, const char *usage);

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

/* The plan to use: --plan file, else --strategy S run over @bufs, else
 * the recorded plan when the trace has addresses, else best-fit. */
int  cli_get_plan (const char *cmd, const MlBuffers *bufs, MlCliOpts *o, MlPlan **plan);

void cli_install_signals (void);

/* Several files (stats / compare / diagnose FILE... [--jobs N]): each in
 * a child process, N at a time, @run's output per file when @print_each
 * (in the order of the files), then one summary table (device, peak
 * reserved, peak allocated, OOM, top call site; --json: an array).
 * @first = the index of the first file in @argv (options before it).
 * Returns the worst exit status. cli_in_multi is true in the children. */
extern bool cli_in_multi;
int  cli_multi (const char *cmd, int (*run) (int, char **), bool print_each, int argc, char **argv, int first,
                unsigned jobs, MlCliOpts *o);
#define CLI_OPT_JOBS 1099
#define CLI_JOBS_HELP "  --jobs N           several files: N at a time (default 1), then a summary table\n"
/* --jobs N; returns false (with a message) on a bad value */
bool cli_jobs_option (const char *cmd, const char *arg, unsigned *jobs);

int cmd_stats   (int argc, char **argv);
int cmd_compare (int argc, char **argv);
int cmd_plan    (int argc, char **argv);
int cmd_check   (int argc, char **argv);
int cmd_convert (int argc, char **argv);
int cmd_strategies (int argc, char **argv);
int cmd_view    (int argc, char **argv);
int cmd_render  (int argc, char **argv);
int cmd_diff    (int argc, char **argv);
int cmd_diagnose (int argc, char **argv);
int cmd_report  (int argc, char **argv);
int cmd_trace   (int argc, char **argv);
int cmd_replay  (int argc, char **argv);
int cmd_fit     (int argc, char **argv);

#endif
