/* Many traces in one command (one snapshot per GPU rank): each file is
 * handled in its own child process, at most --jobs N at a time; the
 * children's output is printed in the order of the files, then one
 * summary table (device, peak reserved, peak allocated, OOM, the call
 * site holding the most bytes at the allocated peak) and the view across
 * the ranks (cli/ranks.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/ranks.h"
#include "sim/base/jsonutil.h"

bool cli_in_multi;

typedef CliRankSummary Summary;

static int
cmp_u32_bytes (const void *a, const void *b)
{
  const uint64_t *x = a, *y = b;   /* pairs (site, bytes) */
  return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The summary of @path, loaded as the command would (same options). */
static void
summarise (const char *cmd, const char *path, MlCliOpts *o, Summary *s, FILE *sites)
{
  MlTrace *t;
  MlBuffers *bufs;
  s->load_rc = cli_load (cmd, path, o, &t, &bufs);
  if (s->load_rc)
    return;
  s->device = t->device;
  s->meta_rank = t->has_rank ? (int64_t) t->rank : -1;
  s->entries = t->n_events;
  /* reserved: the segments, as the trace maps and unmaps them */
  uint64_t reserved = 0;
  for (size_t i = 0; i < t->n_events; i++)
    {
      const MlEvent *ev = &t->events[i];
      if (ev->kind == ML_EV_SEGMENT_ALLOC || ev->kind == ML_EV_SEGMENT_MAP)
        reserved += ev->size;
      else if ((ev->kind == ML_EV_SEGMENT_FREE || ev->kind == ML_EV_SEGMENT_UNMAP) && reserved >= ev->size)
        reserved -= ev->size;
      else if (ev->kind == ML_EV_OOM && !s->ooms++ && t->has_times)
        s->oom_timed = true, s->first_oom_ns = ev->time_ns;
      if (reserved > s->reserved_peak)
        s->reserved_peak = reserved;
    }
  s->allocated_peak = bufs->lower_bound;
  s->allocated_tick = bufs->lower_bound_tick;
  /* the site with the most bytes live at the allocated peak */
  uint64_t (*by)[2] = calloc (bufs->n ? bufs->n : 1, sizeof *by);
  size_t n = 0;
  for (size_t i = 0; by && i < bufs->n; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      if (b->start <= s->allocated_tick && s->allocated_tick < b->end)
        {
          by[n][0] = b->stack && b->stack < t->n_stacks ? t->stacks[b->stack].site : 0;
          by[n++][1] = b->rsize;
        }
    }
  if (n)
    qsort (by, n, sizeof *by, cmp_u32_bytes);
  uint64_t best_site = 0;
  for (size_t i = 0; i < n;)
    {
      size_t j = i;
      uint64_t sum = 0;
      for (; j < n && by[j][0] == by[i][0]; j++)
        sum += by[j][1];
      if (sum > s->site_bytes)
        s->site_bytes = sum, best_site = by[i][0];
      if (sites && cli_rank_put_site (sites, by[i][0] ? ml_trace_str (t, (uint32_t) by[i][0]) : "(no call site)", sum) == 0)
        s->n_sites++;
      i = j;
    }
  free (by);
  snprintf (s->site, sizeof s->site, "%s", best_site ? ml_trace_str (t, (uint32_t) best_site) : "(no call site)");
  ml_buffers_free (bufs);
  ml_trace_free (t);
  s->done = 1;
}

typedef struct {
  pid_t   pid;
  int     pipe;      /* the summary */
  FILE   *out, *err; /* the command's output */
  FILE   *sites;     /* the bytes per call site at the allocated peak */
  int     status;
  Summary s;
} Job;

static void
copy_out (FILE *from, FILE *to)
{
  char buf[65536];
  size_t n;
  rewind (from);
  while ((n = fread (buf, 1, sizeof buf, from)) > 0)
    fwrite (buf, 1, n, to);
}

/* The view's records of the @n jobs (in @r, to fill) */
static void
as_ranks (const Job *job, size_t n, char **paths, CliRank *r)
{
  for (size_t k = 0; k < n; k++)
    r[k] = (CliRank) { .path = paths[k], .s = &job[k].s, .sites = job[k].sites, .status = job[k].status };
}

/* Runs the @n files from argv[@first] in children, o->jobs at a time
 * (@run's output per file when @print_each), into @job: 0, or the exit
 * status after saying why not. */
static int
run_jobs (const char *cmd, int (*run) (int, char **), bool print_each, int argc, char **argv, int first,
          MlCliOpts *o, Job *job)
{
  size_t n = (size_t) (argc - first);
  char **av = calloc ((size_t) first + 2, sizeof *av);
  if (!av)
    return cli_fail (cmd, EXIT_BAD, "out of memory");
  memcpy (av, argv, (size_t) first * sizeof *av);
  unsigned jobs = o->jobs ? o->jobs : 1;
  size_t next = 0, running = 0, finished = 0;
  fflush (stdout);
  fflush (stderr);
  while (finished < n)
    {
      while (next < n && running < jobs)
        {
          Job *j = &job[next];
          int fds[2];
          j->out = tmpfile ();
          j->err = tmpfile ();
          j->sites = tmpfile ();
          if (!j->out || !j->err || !j->sites || pipe (fds) < 0)
            return errno == ENOMEM ? cli_fail (cmd, EXIT_BAD, "out of memory")
                                   : cli_fail (cmd, EXIT_BAD, "cannot make a temporary file: %s", strerror (errno));
          j->pid = fork ();
          if (j->pid < 0)
            return errno == ENOMEM ? cli_fail (cmd, EXIT_BAD, "out of memory")
                                   : cli_fail (cmd, EXIT_BAD, "cannot fork: %s", strerror (errno));
          if (j->pid == 0)
            {
              close (fds[0]);
              dup2 (fileno (j->out), STDOUT_FILENO);
              dup2 (fileno (j->err), STDERR_FILENO);
              cli_in_multi = true;
              Summary s = { .meta_rank = -1 };
              int rc = 0;
              if (print_each)
                {
                  av[first] = argv[first + next];
                  av[first + 1] = NULL;
                  rc = run (first + 1, av);
                  fflush (stdout);
                }
              if (rc != EXIT_BAD)
                summarise (cmd, argv[first + next], o, &s, j->sites);
              fflush (j->sites);
              fflush (stderr);
              if (write (fds[1], &s, sizeof s) != (ssize_t) sizeof s)
                _exit (EXIT_BAD);
              /* no command run (stats prints only the summary): a file
               * that recorded an OOM exits 1, as stats, compare, diagnose
               * and report of one file do */
              _exit (rc ? rc : s.load_rc ? s.load_rc : !print_each && s.ooms ? EXIT_PROBLEMS : EXIT_OK);
            }
          close (fds[1]);
          j->pipe = fds[0];
          next++;
          running++;
        }
      int status;
      pid_t pid = wait (&status);
      if (pid < 0)
        break;
      for (size_t k = 0; k < next; k++)
        if (job[k].pid == pid)
          {
            if (read (job[k].pipe, &job[k].s, sizeof job[k].s) != (ssize_t) sizeof job[k].s)
              job[k].s.done = 0;
            close (job[k].pipe);
            job[k].status = WIFEXITED (status) ? WEXITSTATUS (status) : EXIT_BAD;
            running--;
            finished++;
          }
    }
  free (av);
  return EXIT_OK;
}

static void
close_jobs (Job *job, size_t n)
{
  for (size_t k = 0; k < n; k++)
    {
      if (job[k].out)
        fclose (job[k].out);
      if (job[k].err)
        fclose (job[k].err);
      if (job[k].sites)
        fclose (job[k].sites);
    }
  free (job);
}

int
cli_multi_ranks (const char *cmd, int argc, char **argv, int first, MlCliOpts *o, CliRanksSink sink, void *user)
{
  size_t n = (size_t) (argc - first);
  Job *job = calloc (n ? n : 1, sizeof *job);
  CliRank *r = calloc (n ? n : 1, sizeof *r);
  int rc = job && r ? run_jobs (cmd, NULL, false, argc, argv, first, o, job) : cli_fail (cmd, EXIT_BAD, "out of memory");
  if (rc == EXIT_OK)
    {
      for (size_t k = 0; k < n; k++)
        {
          copy_out (job[k].err, stderr);
          if (job[k].status > rc)
            rc = job[k].status;
        }
      as_ranks (job, n, argv + first, r);
      int s = sink (r, n, user);
      rc = s > rc ? s : rc;
    }
  free (r);
  if (job)
    close_jobs (job, n);
  return rc;
}

int
cli_multi (const char *cmd, int (*run) (int, char **), bool print_each, int argc, char **argv, int first,
           MlCliOpts *o)
{
  size_t n = (size_t) (argc - first);
  Job *job = calloc (n ? n : 1, sizeof *job);
  CliRank *r = calloc (n ? n : 1, sizeof *r);
  if (!job || !r)
    {
      free (job);
      free (r);
      return cli_fail (cmd, EXIT_BAD, "out of memory");
    }
  int rc = run_jobs (cmd, run, print_each, argc, argv, first, o, job);
  if (rc != EXIT_OK)
    {
      free (r);
      close_jobs (job, n);
      return rc;
    }
  int worst = EXIT_OK;
  for (size_t k = 0; k < n; k++)
    {
      Job *j = &job[k];
      if (print_each && !o->json)
        printf ("== %s ==\n", argv[first + k]);
      if (print_each && !o->json)
        copy_out (j->out, stdout);
      fflush (stdout);
      copy_out (j->err, stderr);
      if (j->status > worst)
        worst = j->status;
    }
  as_ranks (job, n, argv + first, r);
  if (o->json)
    {
      printf ("{\"files\":");
      cli_ranks_files_json (stdout, r, n);
      printf (",\"cross_rank\":");
      cli_ranks_print (stdout, r, n, true);
      printf ("}\n");
    }
  else
    {
      if (print_each)
        printf ("== summary ==\n");
      printf ("%-28s %6s %14s %14s %5s  %s\n", "file", "device", "peak reserved", "peak allocated", "OOM",
              "top call site at the allocated peak (bytes live there)");
      for (size_t k = 0; k < n; k++)
        {
          const Summary *s = &job[k].s;
          const char *name = strrchr (argv[first + k], '/') ? strrchr (argv[first + k], '/') + 1 : argv[first + k];
          if (!s->done)
            {
              printf ("%-28s  failed (exit %d; the message is above)\n", name, job[k].status);
              continue;
            }
          printf ("%-28s %6u %14s %14s %5s  %s (%s)\n", name, s->device, cli_size (s->reserved_peak),
                  cli_size (s->allocated_peak), s->ooms ? "yes" : "no", s->site, cli_size (s->site_bytes));
        }
      if (n > 1)
        cli_ranks_print (stdout, r, n, false);
    }
  free (r);
  close_jobs (job, n);
  return worst;
}
