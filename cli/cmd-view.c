/* cmd-view.c — `memlens view [FILE [FILE2]]`: runs the GTK4 viewer.
 *
 * The viewer is a separate program, memlens-view (gui/), so that this
 * command never links GTK: it looks for memlens-view beside this binary
 * (installed), in ../gui/ (the build tree), in MEMLENS_BINDIR, then on
 * PATH; $MEMLENS_VIEW overrides them all. Arguments pass through, but
 * --range (checked here) travels as $MEMLENS_VIEW_RANGE, which the
 * viewer's loading job reads (gui/document.c).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

#ifndef MEMLENS_BINDIR
#define MEMLENS_BINDIR "/usr/local/bin"
#endif

static const char usage_text[] =
  "Usage: memlens view [OPTIONS] [FILE [FILE2]]\n\n"
  "Opens FILE (any format memlens reads: PyTorch snapshot, memlens trace, profiler trace,\n"
  "MiniMalloc CSV, graph) in the GTK4 viewer: buffers by address and time, live /\n"
  "reserved / fragmentation curves, strategies side by side, peaks, races and OOMs.\n"
  "With FILE2, the two runs one below the other on one time and byte scale, with\n"
  "linked zoom (also Open → Compare with… in the window).\n\n"
  "Options:\n"
  "  -s, --strategy NAME  strategy to show first (default: recorded when the trace\n"
  "                       has addresses, else best-fit)\n"
  "  -c, --compare NAME   show a second strategy below, with linked zoom\n"
  "  -d, --device N       snapshots with several devices: the device to show\n"
  "                       (default: the one with an OOM, else the longest trace;\n"
  "                       the header's device selector switches)\n"
  "  --axis A             the x axis: time (real time) or ticks (default: time\n"
  "                       when every event has one)\n"
  "  --range T0:T1        PyTorch snapshots, Kineto traces: load only ticks T0..T1\n"
  "                       (1000:2000) or times from the first entry (1.5s:3s);\n"
  "                       either end may be left out\n"
  "  --version            the viewer's version\n"
  "  -h, --help           this help\n\n"
  "A file that does not open is named with the reason in the window and on\n"
  "stderr; the exit status is then 2 unless a file opened before the window\n"
  "closed. A bad option or value exits 2 before any window opens.\n\n"
  "Keys: + / - zoom, 0 fit, arrows pan, Ctrl+F find, Ctrl+E export, Ctrl+O open.\n"
  "Mouse: Ctrl+scroll zooms at the pointer, drag pans, Shift+drag zooms to a range,\n"
  "click a buffer for its details and stack.\n";

static int
try_exec (const char *path, char **argv)
{
  if (access (path, X_OK) != 0)
    return -1;
  argv[0] = (char *) path;
  execv (path, argv);
  return -1;
}

int
cmd_view (int argc, char **argv)
{
  /* the viewer's options, checked here so that a mistyped one exits 2
   * with the usage before a window opens (GApplication would exit 1);
   * their values are checked by the viewer, which is also run alone */
  static const struct option longopts[] = {
    { "help", no_argument, 0, 'h' },
    { "strategy", required_argument, 0, 's' },
    { "compare", required_argument, 0, 'c' },
    { "device", required_argument, 0, 'd' },
    { "axis", required_argument, 0, 'a' },
    { "time-axis", required_argument, 0, 'a' },
    { "version", no_argument, 0, 'V' },
    { "self-test", required_argument, 0, 'T' },
    { "bench", required_argument, 0, 'B' },
    { "range", required_argument, 0, 'R' },
    { 0, 0, 0, 0 },
  };
  int c;
  optind = 1;
  opterr = 1;
  while ((c = getopt_long (argc, argv, "+hs:c:d:", longopts, NULL)) != -1)
    {
      if (c == 'h')
        {
          fputs (usage_text, stdout);
          return EXIT_OK;
        }
      if (c == '?' || c == ':')
        return cli_usage ("view", "Usage: memlens view [OPTIONS] [FILE [FILE2]]");
      if (c == 'R')
        {
          MlRange r;
          MlError err = { 0 };
          if (ml_range_parse (optarg, &r, &err) < 0)
            return cli_error ("view", &err);
          setenv ("MEMLENS_VIEW_RANGE", optarg, 1);
        }
    }
  int first_file = optind;
  if (argc - first_file > 2)
    return cli_fail ("view", EXIT_BAD, "%d files: the viewer opens one, or two to compare (memlens view A B)", argc - first_file);
  char **args = calloc ((size_t) argc + 1, sizeof *args);
  if (!args)
    return cli_fail ("view", EXIT_BAD, "out of memory");
  /* all but --range (the viewer reads it from the environment) */
  int n_args = 1;
  for (int i = 1; i < argc; i++)
    {
      if (i < first_file && strcmp (argv[i], "--range") == 0)
        {
          i++;
          continue;
        }
      if (i < first_file && strncmp (argv[i], "--range=", 8) == 0)
        continue;
      args[n_args++] = argv[i];
    }

  const char *env = getenv ("MEMLENS_VIEW");
  if (env && *env)
    {
      try_exec (env, args);
      free (args);
      return cli_fail ("view", EXIT_BAD, "cannot run $MEMLENS_VIEW (%s): %s", env, strerror (errno));
    }
  char self[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  if (n > 0)
    {
      self[n] = 0;
      char *slash = strrchr (self, '/');
      if (slash)
        {
          *slash = 0;
          char path[PATH_MAX + 32];
          snprintf (path, sizeof path, "%s/memlens-view", self);
          try_exec (path, args);
          snprintf (path, sizeof path, "%s/../gui/memlens-view", self);
          try_exec (path, args);
        }
    }
  try_exec (MEMLENS_BINDIR "/memlens-view", args);
  args[0] = (char *) "memlens-view";
  execvp ("memlens-view", args);
  free (args);
  return cli_fail ("view", EXIT_BAD,
                   "the viewer (memlens-view) is not installed: this memlens was built without GTK 4.8 "
                   "(meson -Dgui=enabled needs libgtk-4-dev)");
}
