/* memlens — the command: thin, parses arguments, calls the libraries. */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#ifndef MEMLENS_VERSION
#define MEMLENS_VERSION "dev"
#endif

static void
usage (FILE *fp)
{
  fprintf (fp,
           "memlens %s — GPU and deep-learning memory: timelines, allocators, planners\n\n"
           "Usage: memlens COMMAND [OPTIONS] ...\n\nCommands:\n", MEMLENS_VERSION);
  for (const CliCommand *const *c = cli_commands (); *c; c++)
    {
      fprintf (fp, "  %-11s %s\n", (*c)->name, (*c)->summary);
      if (*c == &cli_cmd_compare)
        fprintf (fp, "  %-11s %s\n", "sim", "same as compare");
    }
  fprintf (fp,
           "\nSizes are bytes or 4K, 256M, 40G. Every command has --help.\n"
           "memlens --man writes the manual page memlens(1), memlens --completion the bash\n"
           "completion (both installed with memlens).\n"
           "Exit codes: 0 ok, 1 problems found or out of memory, 2 bad usage or input.\n");
}

/* The command's own flags: --help, --version, --man, --completion; -1
 * when @arg is none of them. */
static int
own_flag (const char *arg)
{
  if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0 || strcmp (arg, "help") == 0)
    usage (stdout);
  else if (strcmp (arg, "--version") == 0)
    printf ("memlens %s\n", MEMLENS_VERSION);
  else if (strcmp (arg, "--man") == 0)
    cli_man_write (stdout, MEMLENS_VERSION);
  else if (strcmp (arg, "--completion") == 0)
    cli_completion_write (stdout);
  else
    return -1;
  return EXIT_OK;
}

/* What went to stdout must have arrived: a full disk or a closed pipe is
 * an error, not a quiet 0 (fclose flushes what is left). */
static int
close_stdout (const char *cmd, int rc)
{
  errno = 0;
  bool failed = ferror (stdout) != 0;
  if (fclose (stdout) != 0 || failed)
    {
      fprintf (stderr, "memlens%s%s: cannot write to standard output: %s\n", cmd ? " " : "", cmd ? cmd : "",
               errno ? strerror (errno) : "a write failed");
      return EXIT_BAD;
    }
  return rc;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      usage (stderr);
      return EXIT_BAD;
    }
  int rc = own_flag (argv[1]);
  if (rc >= 0)
    return close_stdout (NULL, rc);
  cli_install_signals ();
  /* Blocks of 256 KiB and more come from mmap and go back to the system
   * when freed. glibc's default raises that threshold to the size of
   * each such block freed (up to 32 MiB), after which a reader's or a
   * sort's temporaries of a few MiB stay in the heap once freed: a third
   * of `memlens plan`'s memory on a million buffers (issue 30). */
#ifdef __GLIBC__
  mallopt (M_MMAP_THRESHOLD, 256 * 1024);
#endif
  const CliCommand *cmd = cli_command_find (argv[1]);
  if (cmd)
    return close_stdout (argv[1], cmd->run (argc - 1, argv + 1));
  fprintf (stderr, "memlens: unknown command \"%s\"\n\n", argv[1]);
  usage (stderr);
  return EXIT_BAD;
}
