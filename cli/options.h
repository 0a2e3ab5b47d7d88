/* options.h — every option of the memlens command, described once.
 *
 * A command (CliCommand) names its own options in a table beside its
 * code; the options several commands share live in one table
 * (cli/options.c), each row with the commands that read it. From these
 * rows come the getopt_long table of each command (cli/parse.c), its
 * --help, the manual page memlens(1) and the bash completion
 * (cli/doc.c), so that none of them can say what the parser does not do.
 *
 * An option's argument, as help shows it, also tells the completion what
 * to offer: "FILE" (or a name ending in "FILE") a file name, "S" one
 * strategy, "A,B,..." strategies, "x|y|z" one of those words.
 */
#ifndef ML_CLI_OPTIONS_H
#define ML_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct MlCliOpts;

/* The commands, as bits of CliOption.commands. */
enum {
  CLI_STATS      = 1u << 0,
  CLI_COMPARE    = 1u << 1,
  CLI_PLAN       = 1u << 2,
  CLI_CHECK      = 1u << 3,
  CLI_FIT        = 1u << 4,
  CLI_DIAGNOSE   = 1u << 5,
  CLI_REPORT     = 1u << 6,
  CLI_DIFF       = 1u << 7,
  CLI_RENDER     = 1u << 8,
  CLI_CONVERT    = 1u << 9,
  CLI_STRATEGIES = 1u << 10,
  CLI_VIEW       = 1u << 11,
  CLI_TRACE      = 1u << 12,
  CLI_REPLAY     = 1u << 13,
  CLI_TUNE       = 1u << 14,
  CLI_ALL        = (1u << 15) - 1,
};

typedef struct CliOption {
  const char *name;      /* the long name, without the dashes */
  char        letter;    /* the short option ('s' for -s), or 0 */
  int         key;       /* what the handler is given: a CLI_OPT_ id, or the letter */
  const char *arg;       /* the argument as help shows it; NULL: a flag */
  const char *help;      /* one or more sentences, wrapped when printed */
  /* The default as one would type it: the parser hands it to the
   * option's handler before the command line, and help shows it. */
  const char *dflt;
  /* A default the code computes (the strategies' table, the knobs'
   * initial values, a rule over the input): help shows its text. */
  const char *(*dflt_text) (void);
  unsigned    commands;  /* rows of the shared table: the commands that read it */
} CliOption;

typedef struct CliCommand {
  const char *name;
  unsigned    bit;          /* its CLI_ bit */
  const char *summary;      /* one line for 'memlens --help' */
  const char *usage;        /* the synopsis, one "memlens CMD ..." per line */
  const char *about;        /* what it does, exit codes */
  const CliOption *options; /* its own options, ended by a row without a name */
  /* Takes one of its own options (the key, the argument or NULL) into
   * @o or the command's state @user: 0, or EXIT_BAD after saying why. */
  int (*option) (struct MlCliOpts *o, void *user, int key, const char *arg);
  /* More help after the options (formats, keys), or NULL. */
  void (*more_help) (FILE *fp);
  int (*run) (int argc, char **argv);
  bool        in_order;     /* options end at the first operand (a program, files passed on) */
} CliCommand;

/* Ids of the shared options (the keys of options.c's rows). */
enum {
  CLI_OPT_ALIGN = 1001, CLI_OPT_CAPACITY, CLI_OPT_JSON, CLI_OPT_FORMAT, CLI_OPT_DEVICE, CLI_OPT_TIMELIMIT,
  CLI_OPT_OPTIONS, CLI_OPT_SEED, CLI_OPT_CHUNK, CLI_OPT_QUIET, CLI_OPT_RETRIES, CLI_OPT_REORDER, CLI_OPT_DIM,
  CLI_OPT_MAXBLOCK, CLI_OPT_RANGE, CLI_OPT_JOBS, CLI_OPT_STRATEGY, CLI_OPT_STRATEGIES, CLI_OPT_PLAN, CLI_OPT_FRAMES,
  /* a command's own options number from here */
  CLI_OPT_OWN = 2001,
};

/* The shared options, ended by a row without a name. */
extern const CliOption cli_shared_options[];

/* Every command, in the order 'memlens --help' lists them, NULL-ended
 * (cli/commands.c); "sim" is compare under another name. */
const CliCommand *const *cli_commands (void);
const CliCommand *cli_command_find (const char *name);

/* The rows @cmd accepts, in help order (its own, then the shared ones),
 * into @rows (room for @max); returns how many. */
size_t cli_command_options (const CliCommand *cmd, const CliOption **rows, size_t max);
/* The row of @cmd named @name, or NULL when it does not read it. */
const CliOption *cli_command_option (const CliCommand *cmd, const char *name);

/* The defaults the viewer shares with the commands: the strategy shown
 * first and the device read from a snapshot (help's words). */
const char *cli_default_strategy (void);
const char *cli_default_device (void);

/* Help, manual page and completion (cli/doc.c). */
void cli_help_write (FILE *fp, const CliCommand *cmd);
/* "Usage: ..." and the description: what a usage error prints. */
void cli_usage_write (FILE *fp, const CliCommand *cmd);
void cli_man_write (FILE *fp, const char *version);
void cli_completion_write (FILE *fp);

#endif
