/* The cross-rank view of many traces (one per GPU rank): what each
 * child of cli_multi sends back, and the view the parent prints. */
#ifndef ML_CLI_RANKS_H
#define ML_CLI_RANKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
  int      done;          /* the child got this far */
  int      load_rc;       /* 0 when the file loaded */
  uint32_t device;
  uint64_t entries;       /* events */
  uint64_t reserved_peak, allocated_peak, allocated_tick;
  uint32_t ooms;
  bool     oom_timed;     /* first_oom_ns is the first OOM's time */
  int64_t  first_oom_ns;
  uint64_t site_bytes;
  char     site[512];
  uint32_t n_sites;       /* (site, bytes) records in the job's sites file */
  int64_t  meta_rank;     /* the rank the file itself names (Kineto's distributedInfo.rank), -1: none */
} CliRankSummary;

/* One file of the view: its name, summary and sites file (records of
 * cli_rank_put_site, read from the start). */
typedef struct {
  const char           *path;
  const CliRankSummary *s;
  FILE                 *sites;
  int                   status;   /* the file's exit status */
} CliRank;

/* The rank a file's name says: the digits after "rank" (any case, at
 * most two characters between: rank3, rank_03, RANK-12); -1 when none. */
long cli_rank_of_name (const char *path);
/* A file's rank: what the file says (@meta_rank >= 0), else its name's;
 * -1 when neither says. */
long cli_rank_of (const char *path, int64_t meta_rank);
/* "rank 3", or the file's name when it names no rank: in @buf, or the
 * name (borrowed). */
const char *cli_rank_label (const CliRank *r, char *buf, size_t len);
/* A record of the sites file: a call site and the bytes it holds live at
 * the rank's allocated peak. */
int  cli_rank_put_site (FILE *fp, const char *site, uint64_t bytes);
/* Whether @n files (more than one) look like the ranks of one job: each
 * names a rank (cli_rank_of) and no two the same, or their names (without
 * the folder) are distinct and equal once their digits are taken out
 * (snapshot_0.pickle, snapshot_1.pickle). */
bool cli_ranks_one_job (const CliRank *r, size_t n);
/* The cross-rank view of @n files: text, or the JSON object's
 * "cross_rank" value (null when they are not the ranks of one job: the
 * text says why). */
void cli_ranks_print (FILE *fp, const CliRank *r, size_t n, bool json);

/* The JSON array of the @n files: each one's rank, device, events,
 * peaks, OOMs (first_oom_ns), top call site and exit status; a file that
 * failed: "error": true and its exit status. */
void cli_ranks_files_json (FILE *fp, const CliRank *r, size_t n);

/* Reads the @n files from argv[@first] (@cmd's loading options in @o),
 * o->jobs at a time in child processes, and hands their view to @sink
 * (which returns an exit status): the worst of the files' and the
 * sink's. The files' messages go to stderr first. */
typedef int (*CliRanksSink) (const CliRank *r, size_t n, void *user);
int cli_multi_ranks (const char *cmd, int argc, char **argv, int first, struct MlCliOpts *o, CliRanksSink sink,
                     void *user);

#endif
