/* fake-driver — does what the CUDA driver does with CUDA_INJECTION64_PATH
 * at cuInit (dlopen it, call InitializeInjection), then exits with the code
 * given as argv[1]. Lets the tests run `memlens trace` end to end on a
 * machine with no driver: the tracer starts, CUPTI refuses, the program
 * goes on. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int
main (int argc, char **argv)
{
  const char *path = getenv ("CUDA_INJECTION64_PATH");
  if (path && *path)
    {
      void *h = dlopen (path, RTLD_NOW | RTLD_LOCAL);
      if (!h)
        {
          fprintf (stderr, "fake-driver: %s\n", dlerror ());
          return 99;
        }
      int (*init) (void) = (int (*) (void)) dlsym (h, "InitializeInjection");
      if (!init || init () != 1)
        {
          fprintf (stderr, "fake-driver: InitializeInjection missing or did not return 1\n");
          return 98;
        }
    }
  printf ("fake program ran\n");
  return argc > 1 ? atoi (argv[1]) : 0;
}
