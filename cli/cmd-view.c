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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

#ifndef MEMLENS_BINDIR
#define MEMLENS_BINDIR "/usr/local/bin"
#endif

/* The viewer's options, checked here so that a mistyped one exits 2
 * with the usage before a window opens (GApplication would exit 1);
 * their values are checked by the viewer, which is also run alone. */
static const char *
default_axis (void)
{
  return "time when every event has one, else ticks";
}

static const CliOption view_options[] = {
  { "strategy", 's', 's', "S", "strategy to show first", NULL, cli_default_strategy },
  { "compare", 'c', 'c', "S", "show a second strategy below, with linked zoom" },
  { "device", 'd', 'd', "N", "snapshots with several devices: the device to show (the header's device selector "
    "switches)", NULL, cli_default_device },
  { "axis", 0, 'a', "time|ticks", "the x axis: time (real time) or ticks", NULL, default_axis },
  { "time-axis", 0, 'a', "time|ticks", "the same as --axis" },
  { "range", 0, 'R', "T0:T1|STAGE[#K]", "PyTorch snapshots, Kineto traces: load only ticks T0..T1 (1000:2000) or times from the "
    "first entry (1.5s:3s); either end may be left out; or a snapshot's external_annotations stage by name (its K-th)" },
  { "frames", 0, 'F', "user|all|REGEX", "which frame of a stack is a buffer's call site (as in every command)", NULL,
    NULL },
  { "version", 0, 'V', NULL, "the viewer's version" },
  { NULL },
};

static int
view_option (MlCliOpts *o, void *user, int key, const char *arg)
{
  MlError err = { 0 };
  if (key == 'F')
    {
      MlFrames f;
      if (ml_frames_parse (arg, &f, &err) < 0)
        return cli_error ("view", &err);
      setenv ("MEMLENS_VIEW_FRAMES", arg, 1);
      return 0;
    }
  if (key != 'R')
    return 0;
  MlRange r;
  if (ml_range_parse (arg, &r, &err) < 0)
    return cli_error ("view", &err);
  setenv ("MEMLENS_VIEW_RANGE", arg, 1);
  return 0;
}

static void
view_keys (FILE *fp)
{
  fputs ("\nA file that does not open is named with the reason in the window and on\n"
         "stderr; the exit status is then 2 unless a file opened before the window\n"
         "closed. A bad option or value exits 2 before any window opens.\n\n"
         "Keys: + / - zoom, 0 fit, arrows pan, Ctrl+F find, Ctrl+E export, Ctrl+O open.\n"
         "Mouse: Ctrl+scroll zooms at the pointer, drag pans, Shift+drag zooms to a range,\n"
         "click a buffer for its details and stack.\n", fp);
}

static int
try_exec (const char *path, char **argv)
{
  if (access (path, X_OK) != 0)
    return -1;
  argv[0] = (char *) path;
  execv (path, argv);
  return -1;
}

static int
cmd_view (int argc, char **argv)
{
  MlCliOpts o;
  int rc = cli_parse (&cli_cmd_view, argc, argv, &o, NULL);
  if (rc != CLI_PARSED)
    return rc;
  int first_file = optind;
  if (argc - first_file > 2)
    return cli_fail ("view", EXIT_BAD, "%d files: the viewer opens one, or two to compare (memlens view A B)", argc - first_file);
  char **args = calloc ((size_t) argc + 1, sizeof *args);
  if (!args)
    return cli_fail ("view", EXIT_BAD, "out of memory");
  /* all but --range and --frames (the viewer reads them from the environment) */
  int n_args = 1;
  for (int i = 1; i < argc; i++)
    {
      if (i < first_file && (strcmp (argv[i], "--range") == 0 || strcmp (argv[i], "--frames") == 0))
        {
          i++;
          continue;
        }
      if (i < first_file && (strncmp (argv[i], "--range=", 8) == 0 || strncmp (argv[i], "--frames=", 9) == 0))
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

const CliCommand cli_cmd_view = {
  .name = "view",
  .bit = CLI_VIEW,
  .summary = "open a trace in the GTK4 viewer (memlens-view)",
  .usage = "memlens view [OPTIONS] [FILE [FILE2]]\n",
  .about = "Opens FILE (any format memlens reads: PyTorch snapshot, memlens trace, profiler trace,\n"
           "MiniMalloc CSV, graph) in the GTK4 viewer: buffers by address and time, live /\n"
           "reserved / fragmentation curves, strategies side by side, peaks, races and OOMs.\n"
           "With FILE2, the two runs one below the other on one time and byte scale, with\n"
           "linked zoom (also Open → Compare with… in the window).\n",
  .options = view_options,
  .option = view_option,
  .more_help = view_keys,
  .run = cmd_view,
  .in_order = true,
};
