/* memlens trace — run a program under the CUPTI tracer (trace/inject.c).
 *
 * Sets CUDA_INJECTION64_PATH to libmemlens-inject.so (MEMLENS_INJECT, else
 * beside this binary, else the build tree's trace/, else the install's
 * libdir), runs the program, waits, reports what the tracer wrote (it
 * appends one line per file to a manifest this command reads back) and
 * exits with the program's own exit code.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"

#ifndef ML_INJECT_NAME
#define ML_INJECT_NAME "libmemlens-inject.so"
#endif

static const char usage_text[] =
  "Usage: memlens trace [OPTIONS] -- PROGRAM [ARGS...]\n"
  "Runs PROGRAM with the CUPTI tracer injected into its CUDA driver and writes\n"
  "its device allocations (and, when asked, kernels and synchronisations) as a\n"
  "native trace, one file per process. Exits with the program's exit code.\n";

static const char options_text[] =
  "Options:\n"
  "  -o, --output PATTERN  trace file; %p = process id (default memlens-%p.jsonl);\n"
  "                        a second device's events go to PATTERN.devN.jsonl\n"
  "      --kernels         also record kernels (name, stream, start, end)\n"
  "      --sync            also record synchronisations and CUDA events\n"
  "                        (happens-before edges for the cross-stream check)\n"
  "      --sites           record which library made each allocation (libtorch_cuda.so,\n"
  "                        libcublasLt.so, ...) as its call site; costs some time per call\n"
  "      --torch-tensors   PyTorch: set PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync\n"
  "                        so every tensor is one allocation (this changes the\n"
  "                        allocator being measured; see docs/tracing.md)\n"
  "      --flush-ms N      flush CUPTI buffers every N ms (default 500; 0 = when they fill)\n"
  "      --checkpoint S    rewrite the trace every S seconds while the program runs, so\n"
  "                        a crash loses little (default 10; 0 = only at exit)\n"
  "      --quiet           no summary on stderr\n"
  "  -h, --help            this help\n"
  "Environment: MEMLENS_INJECT=path of libmemlens-inject.so overrides the search.\n";

/* While the program runs, a signal sent to memlens trace (kill, a job
 * scheduler's SIGTERM) goes on to the program, which then writes its
 * trace and exits; memlens waits for it. The terminal's ^C and ^\ already
 * reach the program (one process group): those are not sent twice. */
static volatile sig_atomic_t child_pid;
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define N_FORWARDED (sizeof forwarded / sizeof forwarded[0])

static void
forward_signal (int sig, siginfo_t *si, void *uc)
{
  (void) uc;
  if (si && si->si_code == SI_KERNEL)
    return;   /* from the terminal, to the whole process group */
  if (child_pid > 0)
    kill ((pid_t) child_pid, sig);
}

/* Dies of @sig as the program did, so a parent sees the same death
 * (WIFSIGNALED), not an exit status of 128 + N; no core of memlens. */
static void
die_of (int sig)
{
  struct rlimit no_core = { 0, 0 };
  setrlimit (RLIMIT_CORE, &no_core);
  fflush (NULL);
  signal (sig, SIG_DFL);
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, sig);
  sigprocmask (SIG_UNBLOCK, &set, NULL);
  raise (sig);
}

static bool
is_file (const char *p)
{
  struct stat st;
  return stat (p, &st) == 0 && S_ISREG (st.st_mode);
}

/* Finds the injection library; writes its absolute path into @out. */
static bool
find_inject (char *out, size_t len)
{
  const char *env = getenv ("MEMLENS_INJECT");
  if (env && *env)
    {
      if (!realpath (env, out) || !is_file (out))
        return false;
      return true;
    }
  char exe[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return false;
  exe[n] = 0;
  char *dir = dirname (exe);
  static const char *const rel[] = {
    "", "../trace/", "../lib/memlens/", "../lib64/memlens/", "../lib/x86_64-linux-gnu/memlens/",
#ifdef ML_INJECT_LIBDIR
    ML_INJECT_LIBDIR "/",
#endif
  };
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
    {
      char cand[PATH_MAX * 2];
      if (rel[i][0] == '/')
        snprintf (cand, sizeof cand, "%s%s", rel[i], ML_INJECT_NAME);
      else
        snprintf (cand, sizeof cand, "%s/%s%s", dir, rel[i], ML_INJECT_NAME);
      if (is_file (cand) && realpath (cand, out))
        return true;
    }
  (void) len;
  return false;
}

static void
explain_nothing (const char *manifest_fail)
{
  fprintf (stderr, "memlens trace: no trace was written: ");
  if (manifest_fail)
    {
      fprintf (stderr, "the tracer started but could not record: %s.\n", manifest_fail);
      return;
    }
  void *h = dlopen ("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!h)
    {
      const char *why = dlerror ();
      fprintf (stderr, "this machine has no CUDA driver (%s), so the program could not initialise CUDA "
               "and there was nothing to record. Run it where a GPU and its driver are installed.\n",
               why ? why : "libcuda.so.1 not found");
      return;
    }
  dlclose (h);
  fprintf (stderr, "the program never initialised CUDA (the driver loads the tracer when a process "
             "calls cuInit), or it was killed before it could write (traces are written at exit).\n");
}

int
cmd_trace (int argc, char **argv)
{
  enum { OPT_KERNELS = 2001, OPT_SYNC, OPT_TORCH, OPT_FLUSH, OPT_QUIET, OPT_CHECKPOINT, OPT_SITES };
  static const struct option longopts[] = {
    { "output",        required_argument, 0, 'o' },
    { "kernels",       no_argument,       0, OPT_KERNELS },
    { "sync",          no_argument,       0, OPT_SYNC },
    { "sites",         no_argument,       0, OPT_SITES },
    { "torch-tensors", no_argument,       0, OPT_TORCH },
    { "flush-ms",      required_argument, 0, OPT_FLUSH },
    { "checkpoint",    required_argument, 0, OPT_CHECKPOINT },
    { "quiet",         no_argument,       0, OPT_QUIET },
    { "help",          no_argument,       0, 'h' },
    { 0, 0, 0, 0 },
  };
  const char *output = "memlens-%p.jsonl";
  bool kernels = false, sync = false, sites = false, torch = false, quiet = false;
  uint64_t flush_ms = 500, checkpoint_s = 10;
  int c;
  optind = 1;
  /* "+": stop at the first non-option, the program's name */
  while ((c = getopt_long (argc, argv, "+ho:", longopts, NULL)) != -1)
    {
      switch (c)
        {
        case 'h':
          printf ("%s\n%s", usage_text, options_text);
          return EXIT_OK;
        case 'o':
          output = optarg;
          break;
        case OPT_KERNELS: kernels = true; break;
        case OPT_SYNC:    sync = true; break;
        case OPT_SITES:   sites = true; break;
        case OPT_TORCH:   torch = true; break;
        case OPT_QUIET:   quiet = true; break;
        case OPT_FLUSH:
          if (ml_parse_u64 (optarg, strlen (optarg), &flush_ms) < 0 || flush_ms > 3600000)
            return cli_fail ("trace", EXIT_BAD, "--flush-ms %s: expected milliseconds, 0 to 3600000", optarg);
          break;
        case OPT_CHECKPOINT:
          if (ml_parse_u64 (optarg, strlen (optarg), &checkpoint_s) < 0 || checkpoint_s > 86400)
            return cli_fail ("trace", EXIT_BAD, "--checkpoint %s: expected seconds, 0 to 86400", optarg);
          break;
        default:
          return cli_usage ("trace", usage_text);
        }
    }
  if (optind >= argc)
    return cli_fail ("trace", EXIT_BAD, "no program to run (usage: memlens trace [OPTIONS] -- PROGRAM [ARGS...])");
  if (!*output || strcmp (output, "-") == 0)
    return cli_fail ("trace", EXIT_BAD, "--output: give a file name (the trace is written when the program exits)");

  /* the output pattern, absolute: the program may change directory */
  char out_abs[PATH_MAX + 8];
  if (output[0] == '/')
    snprintf (out_abs, sizeof out_abs, "%s", output);
  else
    {
      char cwd[PATH_MAX];
      if (!getcwd (cwd, sizeof cwd))
        return cli_fail ("trace", EXIT_BAD, "cannot read the current directory: %s", strerror (errno));
      if (snprintf (out_abs, sizeof out_abs, "%s/%s", cwd, output) >= (int) sizeof out_abs)
        return cli_fail ("trace", EXIT_BAD, "--output %s: path too long", output);
    }
  /* fail now, not after a long run: the trace goes where the pattern says */
  {
    char dir[PATH_MAX + 8];
    snprintf (dir, sizeof dir, "%s", out_abs);
    char *d = dirname (dir);
    if (access (d, W_OK) != 0)
      return cli_fail ("trace", EXIT_BAD, "--output %s: cannot write into %s: %s", output, d, strerror (errno));
  }
  /* the arguments are fine: now the injection library */
  char inject[PATH_MAX];
  if (!find_inject (inject, sizeof inject))
    {
      const char *env = getenv ("MEMLENS_INJECT");
      if (env && *env)
        return cli_fail ("trace", EXIT_BAD, "MEMLENS_INJECT=%s: no such file", env);
      return cli_fail ("trace", EXIT_BAD, "cannot find %s beside this memlens (%s); this memlens was probably "
                       "built without CUPTI (meson option cuda, cudatoolkit), or set MEMLENS_INJECT", ML_INJECT_NAME,
#ifdef ML_HAVE_CUPTI
                       "CUPTI was found at build time"
#else
                       "CUPTI was not found at build time"
#endif
                       );
    }

  char manifest[PATH_MAX];
  const char *tmpdir = getenv ("TMPDIR");
  snprintf (manifest, sizeof manifest, "%s/memlens-trace-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  int mfd = mkstemp (manifest);
  if (mfd < 0)
    return cli_fail ("trace", EXIT_BAD, "cannot create a temporary file in %s: %s", tmpdir ? tmpdir : "/tmp", strerror (errno));
  close (mfd);

  const char *prev = getenv ("CUDA_INJECTION64_PATH");
  if (prev && *prev && strcmp (prev, inject) != 0 && !quiet)
    fprintf (stderr, "memlens trace: replacing CUDA_INJECTION64_PATH=%s\n", prev);
  char kinds[64] = "";
  snprintf (kinds, sizeof kinds, "%s,%s,%s", kernels ? "kernels" : "", sync ? "sync" : "", sites ? "sites" : "");
  char flush[24];
  snprintf (flush, sizeof flush, "%llu", (unsigned long long) flush_ms);
  setenv ("CUDA_INJECTION64_PATH", inject, 1);
  setenv ("MEMLENS_TRACE_OUTPUT", out_abs, 1);
  setenv ("MEMLENS_TRACE_MANIFEST", manifest, 1);
  setenv ("MEMLENS_TRACE_KINDS", kinds, 1);
  setenv ("MEMLENS_TRACE_FLUSH_MS", flush, 1);
  char ckpt_s[24];
  snprintf (ckpt_s, sizeof ckpt_s, "%llu", (unsigned long long) checkpoint_s);
  setenv ("MEMLENS_TRACE_CHECKPOINT_S", ckpt_s, 1);
  if (torch)
    {
      const char *conf = getenv ("PYTORCH_CUDA_ALLOC_CONF");
      char buf[1024];
      if (conf && *conf && !strstr (conf, "backend:"))
        snprintf (buf, sizeof buf, "%s,backend:cudaMallocAsync", conf);
      else
        {
          if (conf && *conf && !quiet)
            fprintf (stderr, "memlens trace: PYTORCH_CUDA_ALLOC_CONF=%s already names a backend; using backend:cudaMallocAsync\n", conf);
          snprintf (buf, sizeof buf, "backend:cudaMallocAsync");
        }
      setenv ("PYTORCH_CUDA_ALLOC_CONF", buf, 1);
    }

  /* signals to memlens go on to the program (forward_signal); blocked
   * around fork so that none lands before child_pid is known */
  struct sigaction fwd, old_sa[N_FORWARDED];
  memset (&fwd, 0, sizeof fwd);
  fwd.sa_sigaction = forward_signal;
  fwd.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset (&fwd.sa_mask);
  sigset_t block, old_mask;
  sigemptyset (&block);
  for (size_t i = 0; i < N_FORWARDED; i++)
    sigaddset (&block, forwarded[i]);
  sigprocmask (SIG_BLOCK, &block, &old_mask);
  for (size_t i = 0; i < N_FORWARDED; i++)
    sigaction (forwarded[i], &fwd, &old_sa[i]);
  fflush (NULL);
  /* a close-on-exec pipe tells a failed exec from the program's own exit */
  int pfd[2];
  pid_t pid = -1;
  if (pipe2 (pfd, O_CLOEXEC) == 0 && (pid = fork ()) < 0)
    {
      close (pfd[0]);
      close (pfd[1]);
    }
  if (pid < 0)
    {
      int e = errno;
      for (size_t i = 0; i < N_FORWARDED; i++)
        sigaction (forwarded[i], &old_sa[i], NULL);
      sigprocmask (SIG_SETMASK, &old_mask, NULL);
      unlink (manifest);
      return cli_fail ("trace", EXIT_BAD, "cannot start %s: %s", argv[optind], strerror (e));
    }
  if (pid == 0)
    {
      close (pfd[0]);
      /* the program gets the dispositions memlens was started with */
      for (size_t i = 0; i < N_FORWARDED; i++)
        sigaction (forwarded[i], &old_sa[i], NULL);
      if (old_sa[1].sa_handler != SIG_IGN)
        signal (SIGTERM, SIG_DFL);
      if (old_sa[2].sa_handler != SIG_IGN)
        signal (SIGHUP, SIG_DFL);
      signal (SIGXFSZ, SIG_DFL);
      sigprocmask (SIG_SETMASK, &old_mask, NULL);
      execvp (argv[optind], argv + optind);
      int e = errno;
      ssize_t w = write (pfd[1], &e, sizeof e);
      (void) w;
      _exit (e == ENOENT ? 127 : 126);
    }
  child_pid = pid;
  sigprocmask (SIG_SETMASK, &old_mask, NULL);
  close (pfd[1]);
  int exec_errno = 0;
  ssize_t got;
  while ((got = read (pfd[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
    ;
  close (pfd[0]);
  int status = 0;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  child_pid = 0;
  for (size_t i = 0; i < N_FORWARDED; i++)
    sigaction (forwarded[i], &old_sa[i], NULL);
  if (got == (ssize_t) sizeof exec_errno)
    {
      unlink (manifest);
      fprintf (stderr, "memlens trace: cannot run %s: %s\n", argv[optind], strerror (exec_errno));
      return exec_errno == ENOENT ? 127 : 126;
    }
  int code = WIFEXITED (status) ? WEXITSTATUS (status) : WIFSIGNALED (status) ? 128 + WTERMSIG (status) : 1;

  /* what the tracer wrote */
  FILE *fp = fopen (manifest, "r");
  size_t files = 0;
  char first_fail[512] = "";
  /* checkpoints of processes that never wrote their final trace */
  char *ckpt[64];
  size_t n_ckpt = 0;
  /* final files, to catch processes overwriting each other's trace */
  char *done[64];
  size_t n_done = 0;
  bool clobbered = false;
  if (fp)
    {
      char line[8192];
      while (fgets (line, sizeof line, fp))
        {
          line[strcspn (line, "\n")] = 0;
          char *save = NULL, *f[10] = { 0 };
          int nf = 0;
          for (char *tok = strtok_r (line, "\t", &save); tok && nf < 10; tok = strtok_r (NULL, "\t", &save))
            f[nf++] = tok;
          if (nf >= 2 && strcmp (f[0], "fail") == 0 && !first_fail[0])
            snprintf (first_fail, sizeof first_fail, "%s", f[1]);
          if (nf >= 2 && (strcmp (f[0], "checkpoint") == 0 || strcmp (f[0], "ok") == 0))
            {
              size_t j;
              for (j = 0; j < n_ckpt && strcmp (ckpt[j], f[1]) != 0; j++)
                ;
              if (f[0][0] == 'c' && j == n_ckpt && n_ckpt < 64)
                ckpt[n_ckpt++] = strdup (f[1]);
              else if (f[0][0] == 'o' && j < n_ckpt)
                {
                  free (ckpt[j]);
                  ckpt[j] = ckpt[--n_ckpt];
                }
            }
          if (nf >= 10 && strcmp (f[0], "ok") == 0)
            {
              files++;
              size_t j;
              for (j = 0; j < n_done && strcmp (done[j], f[1]) != 0; j++)
                ;
              if (j < n_done && !clobbered && !quiet)
                {
                  fprintf (stderr, "memlens trace: several processes wrote %s, each replacing the last; "
                           "put %%p in --output for one file per process\n", f[1]);
                  clobbered = true;
                }
              else if (j == n_done && n_done < 64)
                done[n_done++] = strdup (f[1]);
              if (!quiet)
                {
                  fprintf (stderr, "memlens trace: wrote %s: %s events (%s allocations, %s kernels, %s syncs) "
                           "from %s CUPTI records, %s dropped",
                           f[1], f[2], f[3], f[4], f[5], f[6], f[7]);
                  if (strcmp (f[8], "0") != 0)
                    fprintf (stderr, ", %s frees of memory allocated before tracing", f[8]);
                  if (strcmp (f[9], "0") != 0)
                    fprintf (stderr, ", %s lost frees implied", f[9]);
                  fputc ('\n', stderr);
                  if (strcmp (f[2], "0") == 0)
                    fprintf (stderr, "memlens trace: the program initialised CUDA but allocated no device memory%s\n",
                             strcmp (f[6], "0") == 0 ? " (CUPTI delivered no records)" : "");
                }
            }
        }
      fclose (fp);
    }
  unlink (manifest);
  for (size_t j = 0; j < n_done; j++)
    free (done[j]);
  for (size_t j = 0; j < n_ckpt; j++)
    {
      if (ckpt[j] && !quiet)
        fprintf (stderr, "memlens trace: %s holds a checkpoint only: the process did not exit normally, "
                 "so the events after its last checkpoint are missing (the trace ends in a \"checkpoint\" mark)\n", ckpt[j]);
      free (ckpt[j]);
      files++;
    }
  if (files == 0 && !quiet)
    explain_nothing (first_fail[0] ? first_fail : NULL);
  if (WIFSIGNALED (status))
    {
      if (!quiet)
        fprintf (stderr, "memlens trace: %s was killed by signal %d (%s)\n", argv[optind], WTERMSIG (status),
                 strsignal (WTERMSIG (status)));
      die_of (WTERMSIG (status));
    }
  return code;
}
