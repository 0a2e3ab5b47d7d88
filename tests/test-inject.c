/* The injection library: it loads, exports InitializeInjection, and with
 * no usable driver it returns 1 after one message on stderr, writes no
 * trace and tells the manifest why. argv[1] = libmemlens-inject.so. */
#include "tests/tap.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>

static char *
slurp (const char *path)
{
  FILE *fp = fopen (path, "r");
  if (!fp)
    return strdup ("");
  char *buf = calloc (1, 65536);
  size_t n = fread (buf, 1, 65535, fp);
  buf[n] = 0;
  fclose (fp);
  return buf;
}

static int
count (const char *hay, const char *needle)
{
  int n = 0;
  for (const char *p = hay; (p = strstr (p, needle)); p += strlen (needle))
    n++;
  return n;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      printf ("1..0 # SKIP no injection library given\n");
      return 0; /* TAP: the skip is the plan; 77 would be an error */
    }
  void *drv = dlopen ("libcuda.so.1", RTLD_LAZY);
  bool have_driver = drv != NULL;
  if (drv)
    dlclose (drv);

  char dir[] = "/tmp/memlens-inject-XXXXXX";
  if (!mkdtemp (dir))
    return 99;
  char errpath[256], manifest[256], out[256];
  snprintf (errpath, sizeof errpath, "%s/stderr", dir);
  snprintf (manifest, sizeof manifest, "%s/manifest", dir);
  snprintf (out, sizeof out, "%s/t-%%p.jsonl", dir);
  setenv ("MEMLENS_TRACE_MANIFEST", manifest, 1);
  setenv ("MEMLENS_TRACE_OUTPUT", out, 1);
  setenv ("MEMLENS_TRACE_KINDS", "kernels,sync", 1);

  void *h = dlopen (argv[1], RTLD_NOW | RTLD_LOCAL);
  ok (h != NULL, "the injection library loads (%s)", h ? "" : dlerror ());
  if (!h)
    return tap_done ();
  int (*init) (void) = (int (*) (void)) dlsym (h, "InitializeInjection");
  ok (init != NULL, "it exports InitializeInjection");
  ok (dlsym (h, "ml_trace_new") == NULL && dlsym (h, "ml_cupti_convert") == NULL,
      "it exports nothing else (no ml_* symbols leak into the traced program)");
  if (!init)
    return tap_done ();

  /* capture stderr around the call */
  fflush (stderr);
  int saved = dup (2);
  int fd = open (errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2 (fd, 2);
  close (fd);
  int r1 = init ();
  int r2 = init ();
  fflush (stderr);
  dup2 (saved, 2);
  close (saved);

  is_u64 (r1, 1, "InitializeInjection returns 1");
  is_u64 (r2, 1, "a second call returns 1 too");
  char *msg = slurp (errpath);
  if (have_driver)
    {
      skip ("a CUDA driver is installed: the no-driver messages cannot be checked");
    }
  else
    {
      is_u64 (count (msg, "memlens-inject["), 1, "exactly one message on stderr");
      has_str (msg, "the program runs on", "it says the program goes on");
      char *man = slurp (manifest);
      has_str (man, "fail\t", "the manifest says why nothing was recorded");
      free (man);
    }
  free (msg);
  printf ("# exit: no trace file must appear\n");
  /* the exit handler (if any) must not write a trace: nothing started.
   * The library stays loaded, as the driver leaves it: unloading it would
   * unload libcupti and orphan what libcupti keeps. */
  char cmd[512];
  snprintf (cmd, sizeof cmd, "ls %s/t-*.jsonl >/dev/null 2>&1", dir);
  ok (system (cmd) != 0 || have_driver, "no trace file was written");
  snprintf (cmd, sizeof cmd, "rm -rf %s", dir);
  if (system (cmd) != 0)
    printf ("# could not remove %s\n", dir);
  return tap_done ();
}
