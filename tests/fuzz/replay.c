/* replay.c — main() for the fuzz targets when libFuzzer is not linked:
 * runs the target once on every file named on the command line (folders:
 * every file inside, sorted) and prints TAP. A crash, a sanitizer report
 * or a hang fails the test; this is how CI replays the seed corpus and
 * every input that once crashed a target (tests/fuzz/regress/). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static int n;

static void
run_file (const char *path)
{
  FILE *fp = fopen (path, "rb");
  if (!fp)
    {
      printf ("not ok %d - %s: cannot open\n", ++n, path);
      return;
    }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc (cap);
  size_t got;
  while (buf && (got = fread (buf + len, 1, cap - len, fp)) > 0)
    {
      len += got;
      if (len == cap)
        {
          uint8_t *b2 = realloc (buf, cap *= 2);
          if (!b2)
            free (buf);
          buf = b2;
        }
    }
  fclose (fp);
  if (!buf)
    {
      printf ("not ok %d - %s: out of memory\n", ++n, path);
      return;
    }
  /* an exact-size copy, so that ASan sees reads past the input's end */
  uint8_t *exact = malloc (len ? len : 1);
  memcpy (exact, buf, len);
  free (buf);
  fflush (stdout);
  LLVMFuzzerTestOneInput (exact, len);
  free (exact);
  printf ("ok %d - %s\n", ++n, path);
  fflush (stdout);
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

int
main (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      struct stat st;
      if (stat (argv[i], &st) != 0)
        continue;   /* an empty regress folder is not in git */
      if (!S_ISDIR (st.st_mode))
        {
          run_file (argv[i]);
          continue;
        }
      DIR *d = opendir (argv[i]);
      if (!d)
        continue;
      char **names = NULL;
      size_t k = 0, cap = 0;
      struct dirent *e;
      while ((e = readdir (d)))
        {
          if (e->d_name[0] == '.')
            continue;
          if (k == cap)
            names = realloc (names, (cap = cap ? cap * 2 : 64) * sizeof *names);
          size_t len = strlen (argv[i]) + strlen (e->d_name) + 2;
          names[k] = malloc (len);
          snprintf (names[k++], len, "%s/%s", argv[i], e->d_name);
        }
      closedir (d);
      if (k)
        qsort (names, k, sizeof *names, cmp_str);
      for (size_t j = 0; j < k; j++)
        {
          run_file (names[j]);
          free (names[j]);
        }
      free (names);
    }
  printf ("1..%d\n", n);
  return 0;
}
