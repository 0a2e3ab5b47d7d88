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

enum { OPT_KERNELS = CLI_OPT_OWN, OPT_SYNC, OPT_TORCH, OPT_FLUSH, OPT_QUIET, OPT_CHECKPOINT, OPT_SITES };

static const CliOption trace_options[] = {
  { "output", 'o', 'o', "PATTERN", "trace file; %p = process id; a second device's events go to PATTERN.devN.jsonl",
    "memlens-%p.jsonl" },
  { "kernels", 0, OPT_KERNELS, NULL, "also record kernels (name, stream, start, end)" },
  { "sync", 0, OPT_SYNC, NULL, "also record synchronisations and CUDA events (happens-before edges for the "
    "cross-stream check)" },
  { "sites", 0, OPT_SITES, NULL, "record which library made each allocation (libtorch_cuda.so, libcublasLt.so, ...) "
    "as its call site; costs some time per call" },
  { "torch-tensors", 0, OPT_TORCH, NULL, "PyTorch: set PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync so every "
    "tensor is one allocation (this changes the allocator being measured; see docs/tracing.md)" },
  { "flush-ms", 0, OPT_FLUSH, "N", "flush CUPTI buffers every N ms (0 = when they fill)", "500" },
  { "checkpoint", 0, OPT_CHECKPOINT, "S", "rewrite the trace every S seconds while the program runs, so a crash "
    "loses little (0 = only at exit)", "10" },
  { "quiet", 0, OPT_QUIET, NULL, "no summary on stderr" },
  { NULL },
};

typedef struct {
  const char *output;
  bool        kernels, sync, sites, torch, quiet;
  uint64_t    flush_ms, checkpoint_s;
} TraceArgs;

static int
trace_option (MlCliOpts *o, void *user, int key, const char *arg)
{
  TraceArgs *a = user;
  switch (key)
    {
    case 'o': a->output = arg; break;
    case OPT_KERNELS: a->kernels = true; break;
    case OPT_SYNC:    a->sync = true; break;
    case OPT_SITES:   a->sites = true; break;
    case OPT_TORCH:   a->torch = true; break;
    case OPT_QUIET:   a->quiet = true; break;
    case OPT_FLUSH:
      if (ml_parse_u64 (arg, strlen (arg), &a->flush_ms) < 0 || a->flush_ms > 3600000)
        return cli_fail ("trace", EXIT_BAD, "--flush-ms %s: expected milliseconds, 0 to 3600000", arg);
      break;
    case OPT_CHECKPOINT:
      if (ml_parse_u64 (arg, strlen (arg), &a->checkpoint_s) < 0 || a->checkpoint_s > 86400)
        return cli_fail ("trace", EXIT_BAD, "--checkpoint %s: expected seconds, 0 to 86400", arg);
      break;
    }
  return 0;
}

static void
trace_environment_help (FILE *fp)
{
  fputs ("Environment: MEMLENS_INJECT=path of libmemlens-inject.so overrides the search.\n", fp);
}

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

/* The output pattern, absolute (the program may change directory), into
 * @out; fails now, not after a long run, when its folder is not writable. */
static int
output_path (const char *output, char *out, size_t len)
{
  if (!*output || strcmp (output, "-") == 0)
    return cli_fail ("trace", EXIT_BAD, "--output: give a file name (the trace is written when the program exits)");
  if (output[0] == '/')
    snprintf (out, len, "%s", output);
  else
    {
      char cwd[PATH_MAX];
      if (!getcwd (cwd, sizeof cwd))
        return cli_fail ("trace", EXIT_BAD, "cannot read the current directory: %s", strerror (errno));
      if (snprintf (out, len, "%s/%s", cwd, output) >= (int) len)
        return cli_fail ("trace", EXIT_BAD, "--output %s: path too long", output);
    }
  char dir[PATH_MAX + 8];
  snprintf (dir, sizeof dir, "%s", out);
  char *d = dirname (dir);
  if (access (d, W_OK) != 0)
    return cli_fail ("trace", EXIT_BAD, "--output %s: cannot write into %s: %s", output, d, strerror (errno));
  return EXIT_OK;
}

/* The injection library's path into @inject, or why there is none. */
static int
injection_library (char *inject, size_t len)
{
  if (find_inject (inject, len))
    return EXIT_OK;
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

/* The tracer's settings, for the program's environment. */
static void
set_environment (const TraceArgs *a, const char *inject, const char *out_abs, const char *manifest)
{
  const char *prev = getenv ("CUDA_INJECTION64_PATH");
  if (prev && *prev && strcmp (prev, inject) != 0 && !a->quiet)
    fprintf (stderr, "memlens trace: replacing CUDA_INJECTION64_PATH=%s\n", prev);
  char kinds[64] = "";
  snprintf (kinds, sizeof kinds, "%s,%s,%s", a->kernels ? "kernels" : "", a->sync ? "sync" : "", a->sites ? "sites" : "");
  char flush[24];
  snprintf (flush, sizeof flush, "%llu", (unsigned long long) a->flush_ms);
  setenv ("CUDA_INJECTION64_PATH", inject, 1);
  setenv ("MEMLENS_TRACE_OUTPUT", out_abs, 1);
  setenv ("MEMLENS_TRACE_MANIFEST", manifest, 1);
  setenv ("MEMLENS_TRACE_KINDS", kinds, 1);
  setenv ("MEMLENS_TRACE_FLUSH_MS", flush, 1);
  char ckpt_s[24];
  snprintf (ckpt_s, sizeof ckpt_s, "%llu", (unsigned long long) a->checkpoint_s);
  setenv ("MEMLENS_TRACE_CHECKPOINT_S", ckpt_s, 1);
  if (a->torch)
    {
      const char *conf = getenv ("PYTORCH_CUDA_ALLOC_CONF");
      char buf[1024];
      if (conf && *conf && !strstr (conf, "backend:"))
        snprintf (buf, sizeof buf, "%s,backend:cudaMallocAsync", conf);
      else
        {
          if (conf && *conf && !a->quiet)
            fprintf (stderr, "memlens trace: PYTORCH_CUDA_ALLOC_CONF=%s already names a backend; using backend:cudaMallocAsync\n", conf);
          snprintf (buf, sizeof buf, "backend:cudaMallocAsync");
        }
      setenv ("PYTORCH_CUDA_ALLOC_CONF", buf, 1);
    }
}

/* Runs @argv (the program) and waits for it: its wait status in
 * *status; -1 with *rc set when it could not start or run. */
static int
run_program (char **argv, const char *manifest, int *status, int *rc)
{
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
      *rc = cli_fail ("trace", EXIT_BAD, "cannot start %s: %s", argv[0], strerror (e));
      return -1;
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
      execvp (argv[0], argv);
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
  *status = 0;
  while (waitpid (pid, status, 0) < 0 && errno == EINTR)
    ;
  child_pid = 0;
  for (size_t i = 0; i < N_FORWARDED; i++)
    sigaction (forwarded[i], &old_sa[i], NULL);
  if (got == (ssize_t) sizeof exec_errno)
    {
      unlink (manifest);
      fprintf (stderr, "memlens trace: cannot run %s: %s\n", argv[0], strerror (exec_errno));
      *rc = exec_errno == ENOENT ? 127 : 126;
      return -1;
    }
  return 0;
}

/* What the tracer wrote, read back from the manifest (one line per file:
 * "ok", "checkpoint" or "fail" and its fields). */
typedef struct {
  size_t files;
  char   first_fail[512];
  char  *ckpt[64];   /* checkpoints of processes that never wrote their final trace */
  size_t n_ckpt;
  char  *done[64];   /* final files, to catch processes overwriting each other's trace */
  size_t n_done;
  bool   clobbered;
} Manifest;

/* A final trace: counted, said, and checked against the others. */
static void
manifest_ok (Manifest *m, char **f, bool quiet)
{
  m->files++;
  size_t j;
  for (j = 0; j < m->n_done && strcmp (m->done[j], f[1]) != 0; j++)
    ;
  if (j < m->n_done && !m->clobbered && !quiet)
    {
      fprintf (stderr, "memlens trace: several processes wrote %s, each replacing the last; "
               "put %%p in --output for one file per process\n", f[1]);
      m->clobbered = true;
    }
  else if (j == m->n_done && m->n_done < 64)
    m->done[m->n_done++] = strdup (f[1]);
  if (quiet)
    return;
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

static void
manifest_line (Manifest *m, char *line, bool quiet)
{
  line[strcspn (line, "\n")] = 0;
  char *save = NULL, *f[10] = { 0 };
  int nf = 0;
  for (char *tok = strtok_r (line, "\t", &save); tok && nf < 10; tok = strtok_r (NULL, "\t", &save))
    f[nf++] = tok;
  if (nf >= 2 && strcmp (f[0], "fail") == 0 && !m->first_fail[0])
    snprintf (m->first_fail, sizeof m->first_fail, "%s", f[1]);
  if (nf >= 2 && (strcmp (f[0], "checkpoint") == 0 || strcmp (f[0], "ok") == 0))
    {
      size_t j;
      for (j = 0; j < m->n_ckpt && strcmp (m->ckpt[j], f[1]) != 0; j++)
        ;
      if (f[0][0] == 'c' && j == m->n_ckpt && m->n_ckpt < 64)
        m->ckpt[m->n_ckpt++] = strdup (f[1]);
      else if (f[0][0] == 'o' && j < m->n_ckpt)
        {
          free (m->ckpt[j]);
          m->ckpt[j] = m->ckpt[--m->n_ckpt];
        }
    }
  if (nf >= 10 && strcmp (f[0], "ok") == 0)
    manifest_ok (m, f, quiet);
}

/* Reads and removes the manifest; says what was written, or why nothing was. */
static void
report_manifest (const char *manifest, bool quiet)
{
  Manifest m = { 0 };
  FILE *fp = fopen (manifest, "r");
  if (fp)
    {
      char line[8192];
      while (fgets (line, sizeof line, fp))
        manifest_line (&m, line, quiet);
      fclose (fp);
    }
  unlink (manifest);
  for (size_t j = 0; j < m.n_done; j++)
    free (m.done[j]);
  for (size_t j = 0; j < m.n_ckpt; j++)
    {
      if (m.ckpt[j] && !quiet)
        fprintf (stderr, "memlens trace: %s holds a checkpoint only: the process did not exit normally, "
                 "so the events after its last checkpoint are missing (the trace ends in a \"checkpoint\" mark)\n", m.ckpt[j]);
      free (m.ckpt[j]);
      m.files++;
    }
  if (m.files == 0 && !quiet)
    explain_nothing (m.first_fail[0] ? m.first_fail : NULL);
}

static int
cmd_trace (int argc, char **argv)
{
  MlCliOpts o;
  TraceArgs a = { 0 };
  int rc = cli_parse (&cli_cmd_trace, argc, argv, &o, &a);
  if (rc != CLI_PARSED)
    return rc;
  if (optind >= argc)
    return cli_fail ("trace", EXIT_BAD, "no program to run (usage: memlens trace [OPTIONS] -- PROGRAM [ARGS...])");
  char out_abs[PATH_MAX + 8], inject[PATH_MAX];
  if ((rc = output_path (a.output, out_abs, sizeof out_abs)) || (rc = injection_library (inject, sizeof inject)))
    return rc;
  char manifest[PATH_MAX];
  const char *tmpdir = getenv ("TMPDIR");
  snprintf (manifest, sizeof manifest, "%s/memlens-trace-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  int mfd = mkstemp (manifest);
  if (mfd < 0)
    return cli_fail ("trace", EXIT_BAD, "cannot create a temporary file in %s: %s", tmpdir ? tmpdir : "/tmp", strerror (errno));
  close (mfd);
  set_environment (&a, inject, out_abs, manifest);
  int status;
  if (run_program (argv + optind, manifest, &status, &rc) < 0)
    return rc;
  int code = WIFEXITED (status) ? WEXITSTATUS (status) : WIFSIGNALED (status) ? 128 + WTERMSIG (status) : 1;
  report_manifest (manifest, a.quiet);
  if (WIFSIGNALED (status))
    {
      if (!a.quiet)
        fprintf (stderr, "memlens trace: %s was killed by signal %d (%s)\n", argv[optind], WTERMSIG (status),
                 strsignal (WTERMSIG (status)));
      die_of (WTERMSIG (status));
    }
  return code;
}

const CliCommand cli_cmd_trace = {
  .name = "trace",
  .bit = CLI_TRACE,
  .summary = "run a CUDA program under the CUPTI tracer and write its allocation timeline",
  .usage = "memlens trace [OPTIONS] -- PROGRAM [ARGS...]\n",
  .about = "Runs PROGRAM with the CUPTI tracer injected into its CUDA driver and writes\n"
           "its device allocations (and, when asked, kernels and synchronisations) as a\n"
           "native trace, one file per process. Exits with the program's exit code.\n",
  .options = trace_options,
  .option = trace_option,
  .more_help = trace_environment_help,
  .run = cmd_trace,
  .in_order = true,
};
