/* commands.c — the table of the memlens commands (each defined in its
 * cmd-*.c), in the order 'memlens --help' and memlens(1) list them. */
#include "cli/cli.h"

#include <string.h>

static const CliCommand *const commands[] = {
  &cli_cmd_stats, &cli_cmd_compare, &cli_cmd_plan, &cli_cmd_check, &cli_cmd_fit, &cli_cmd_diagnose, &cli_cmd_tune,
  &cli_cmd_report,
  &cli_cmd_diff, &cli_cmd_render, &cli_cmd_convert, &cli_cmd_strategies, &cli_cmd_view, &cli_cmd_trace,
  &cli_cmd_replay, NULL,
};

const CliCommand *const *
cli_commands (void)
{
  return commands;
}

const CliCommand *
cli_command_find (const char *name)
{
  if (strcmp (name, "sim") == 0)   /* the old name of compare */
    name = "compare";
  for (const CliCommand *const *c = commands; *c; c++)
    if (strcmp ((*c)->name, name) == 0)
      return *c;
  return NULL;
}
