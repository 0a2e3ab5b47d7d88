/* The cross-rank view (issue 28 item 3): over the files that loaded, the
 * peak reserved and allocated per rank, their imbalance (max / mean and
 * which rank), the ranks that recorded an OOM and when (against the first
 * one), and the call site whose bytes at the allocated peak differ most
 * between the heaviest rank (the largest peak allocated) and the median
 * one (the lower median of the peaks allocated). */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/ranks.h"
#include "sim/base/jsonutil.h"

long
cli_rank_of_name (const char *path)
{
  const char *name = strrchr (path, '/') ? strrchr (path, '/') + 1 : path;
  for (const char *p = name; *p; p++)
    if (strncasecmp (p, "rank", 4) == 0)
      {
        const char *d = p + 4;
        for (int k = 0; k < 2 && *d && !isdigit ((unsigned char) *d); k++)
          d++;
        if (!isdigit ((unsigned char) *d))
          continue;
        long v = 0;
        for (; isdigit ((unsigned char) *d) && v < 100000000; d++)
          v = v * 10 + (*d - '0');
        return v;
      }
  return -1;
}

long
cli_rank_of (const char *path, int64_t meta_rank)
{
  return meta_rank >= 0 ? (long) meta_rank : cli_rank_of_name (path);
}

int
cli_rank_put_site (FILE *fp, const char *site, uint64_t bytes)
{
  uint32_t len = (uint32_t) strlen (site);
  return fwrite (&len, sizeof len, 1, fp) == 1 && fwrite (site, 1, len, fp) == len
                 && fwrite (&bytes, sizeof bytes, 1, fp) == 1
             ? 0
             : -1;
}

typedef struct {
  char    *name;
  uint64_t bytes;
} Site;

static int
cmp_site (const void *a, const void *b)
{
  return strcmp (((const Site *) a)->name, ((const Site *) b)->name);
}

/* The sites of @r, sorted by name; NULL (and *n = 0) when unreadable. */
static Site *
read_sites (const CliRank *r, size_t *n)
{
  *n = 0;
  Site *s = calloc (r->s->n_sites ? r->s->n_sites : 1, sizeof *s);
  if (!s || !r->sites)
    return s;
  rewind (r->sites);
  for (uint32_t k = 0; k < r->s->n_sites; k++)
    {
      uint32_t len;
      if (fread (&len, sizeof len, 1, r->sites) != 1 || len > (1u << 20) || !(s[k].name = malloc (len + 1))
          || fread (s[k].name, 1, len, r->sites) != len || fread (&s[k].bytes, sizeof s[k].bytes, 1, r->sites) != 1)
        {
          if (k < r->s->n_sites)
            free (s[k].name);
          break;
        }
      s[k].name[len] = 0;
      (*n)++;
    }
  qsort (s, *n, sizeof *s, cmp_site);
  return s;
}

static void
free_sites (Site *s, size_t n)
{
  for (size_t k = 0; k < n; k++)
    free (s[k].name);
  free (s);
}

/* The call site whose bytes differ most between ranks @h and @m (the
 * largest |h - m|, of equal ones the first by name); none when no site
 * differs. */
typedef struct {
  char     name[512];
  uint64_t h, m;
  bool     found;
} Gap;

static Gap
site_gap (const CliRank *h, const CliRank *m)
{
  Gap g = { .found = false };
  size_t nh, nm;
  Site *sh = read_sites (h, &nh), *sm = read_sites (m, &nm);
  uint64_t best = 0;
  for (size_t i = 0, j = 0; i < nh || j < nm;)
    {
      int c = i == nh ? 1 : j == nm ? -1 : strcmp (sh[i].name, sm[j].name);
      const char *name = c <= 0 ? sh[i].name : sm[j].name;
      uint64_t bh = c <= 0 ? sh[i].bytes : 0, bm = c >= 0 ? sm[j].bytes : 0;
      uint64_t d = bh > bm ? bh - bm : bm - bh;
      if (d > best)
        {
          best = d, g.found = true, g.h = bh, g.m = bm;
          snprintf (g.name, sizeof g.name, "%s", name);
        }
      i += c <= 0;
      j += c >= 0;
    }
  free_sites (sh, nh);
  free_sites (sm, nm);
  return g;
}

static const char *
base (const char *path)
{
  return strrchr (path, '/') ? strrchr (path, '/') + 1 : path;
}

const char *
cli_rank_label (const CliRank *r, char *buf, size_t len)
{
  long k = cli_rank_of (r->path, r->s->done ? r->s->meta_rank : -1);
  if (k < 0)
    return base (r->path);
  snprintf (buf, len, "rank %ld", k);
  return buf;
}

static void
json_rank (FILE *fp, const CliRank *r)
{
  long k = cli_rank_of (r->path, r->s->done ? r->s->meta_rank : -1);
  fprintf (fp, "\"file\":");
  ml_json_put_str (fp, r->path);
  if (k < 0)
    fprintf (fp, ",\"rank\":null");
  else
    fprintf (fp, ",\"rank\":%ld", k);
}

/* The peak's line: max, which rank, mean, max / mean. */
static void
put_peak (FILE *fp, const char *what, const CliRank *r, const size_t *ok, size_t n, bool reserved, bool json,
          bool first)
{
  size_t imax = ok[0];
  double sum = 0;
  for (size_t k = 0; k < n; k++)
    {
      const CliRankSummary *s = r[ok[k]].s;
      uint64_t v = reserved ? s->reserved_peak : s->allocated_peak;
      sum += (double) v;
      if (v > (reserved ? r[imax].s->reserved_peak : r[imax].s->allocated_peak))
        imax = ok[k];
    }
  uint64_t max = reserved ? r[imax].s->reserved_peak : r[imax].s->allocated_peak;
  double mean = sum / (double) n, ratio = mean > 0 ? (double) max / mean : 1.0;
  char buf[64];
  if (json)
    {
      fprintf (fp, "%s\"%s\":{\"max\":%" PRIu64 ",\"mean\":%.1f,\"imbalance\":%.4f,\"max_at\":{", first ? "" : ",",
               reserved ? "peak_reserved" : "peak_allocated", max, mean, ratio);
      json_rank (fp, &r[imax]);
      fprintf (fp, "}}");
      return;
    }
  fprintf (fp, "%-15s max %s on %s, mean %s: imbalance (max / mean) %.3fx\n", what, cli_size (max),
           cli_rank_label (&r[imax], buf, sizeof buf), cli_size ((uint64_t) (mean + 0.5)), ratio);
}

static void
put_ooms (FILE *fp, const CliRank *r, const size_t *ok, size_t n, bool json)
{
  bool any = false, timed = true;
  int64_t t0 = INT64_MAX;
  for (size_t k = 0; k < n; k++)
    if (r[ok[k]].s->ooms)
      {
        any = true;
        timed = timed && r[ok[k]].s->oom_timed;
        if (r[ok[k]].s->oom_timed && r[ok[k]].s->first_oom_ns < t0)
          t0 = r[ok[k]].s->first_oom_ns;
      }
  if (json)
    fprintf (fp, ",\"oom\":[");
  else if (!any)
    fprintf (fp, "%-15s none recorded\n", "OOM:");
  else
    fprintf (fp, "%-15s", "OOM:");
  char buf[64];
  bool sep = false;
  for (size_t k = 0; k < n; k++)
    {
      const CliRankSummary *s = r[ok[k]].s;
      if (!s->ooms)
        continue;
      if (json)
        {
          fprintf (fp, "%s{", sep ? "," : "");
          json_rank (fp, &r[ok[k]]);
          fprintf (fp, ",\"ooms\":%u", s->ooms);
          if (s->oom_timed)
            fprintf (fp, ",\"first_oom_ns\":%" PRId64 ",\"after_first_oom_ns\":%" PRId64, s->first_oom_ns,
                     timed ? s->first_oom_ns - t0 : 0);
          fprintf (fp, "}");
        }
      else if (timed)
        fprintf (fp, "%s %s +%.3f s", sep ? "," : "", cli_rank_label (&r[ok[k]], buf, sizeof buf),
                 (double) (s->first_oom_ns - t0) / 1e9);
      else
        fprintf (fp, "%s %s", sep ? "," : "", cli_rank_label (&r[ok[k]], buf, sizeof buf));
      sep = true;
    }
  if (json)
    fprintf (fp, "]");
  else if (any)
    fprintf (fp, timed ? "   (the first OOM of each rank, after the first of all)\n" : "   (no times recorded)\n");
}

/* @name without its digits, into @buf */
static void
undigit (const char *name, char *buf, size_t len)
{
  size_t k = 0;
  for (; *name && k + 1 < len; name++)
    if (!isdigit ((unsigned char) *name))
      buf[k++] = *name;
  buf[k] = 0;
}

bool
cli_ranks_one_job (const CliRank *r, size_t n)
{
  bool named = true, alike = true;
  char a[512], b[512];
  for (size_t k = 0; k < n; k++)
    {
      long rk = cli_rank_of (r[k].path, r[k].s->done ? r[k].s->meta_rank : -1);
      named = named && rk >= 0;
      undigit (base (r[k].path), k ? b : a, sizeof a);
      alike = alike && (k == 0 || strcmp (a, b) == 0);
      for (size_t j = 0; j < k; j++)
        {
          long rj = cli_rank_of (r[j].path, r[j].s->done ? r[j].s->meta_rank : -1);
          if ((named && rj == rk) || strcmp (base (r[j].path), base (r[k].path)) == 0)
            named = alike = false;   /* one rank twice, or one name twice */
        }
    }
  return n > 1 && (named || alike);
}

static const CliRank *sort_r;

static int
cmp_alloc (const void *a, const void *b)
{
  size_t x = *(const size_t *) a, y = *(const size_t *) b;
  uint64_t vx = sort_r[x].s->allocated_peak, vy = sort_r[y].s->allocated_peak;
  return vx < vy ? -1 : vx > vy ? 1 : x < y ? -1 : x > y;
}

void
cli_ranks_print (FILE *fp, const CliRank *r, size_t n, bool json)
{
  size_t *ok = calloc (n ? n : 1, sizeof *ok), m = 0;
  if (!ok)
    return;
  for (size_t k = 0; k < n; k++)
    if (r[k].s->done)
      ok[m++] = k;
  if (!cli_ranks_one_job (r, n))
    {
      if (json)
        fprintf (fp, "null");
      else
        fprintf (fp, "== across the ranks: not shown ==\nthese files do not look like the ranks of one job, whose files "
                 "each name their own rank (rank3 in the name, or a Kineto trace's distributedInfo.rank) or have names "
                 "that differ only in their numbers (snapshot_0.pickle, snapshot_1.pickle)\n");
      free (ok);
      return;
    }
  if (json)
    fprintf (fp, "{\"ranks\":%zu", m);
  else
    fprintf (fp, "== across the ranks (%zu of %zu files read) ==\n", m, n);
  if (m)
    {
      if (json)
        fprintf (fp, ",");
      put_peak (fp, "peak reserved:", r, ok, m, true, json, true);
      put_peak (fp, "peak allocated:", r, ok, m, false, json, false);
      put_ooms (fp, r, ok, m, json);
      size_t *by = malloc (m * sizeof *by);
      if (by)
        {
          memcpy (by, ok, m * sizeof *by);
          sort_r = r;
          qsort (by, m, sizeof *by, cmp_alloc);
          const CliRank *h = &r[by[m - 1]], *md = &r[by[(m - 1) / 2]];
          Gap g = site_gap (h, md);
          char b1[64], b2[64];
          if (json)
            {
              fprintf (fp, ",\"site_gap\":{\"heaviest\":{");
              json_rank (fp, h);
              fprintf (fp, "},\"median\":{");
              json_rank (fp, md);
              fprintf (fp, "},\"site\":");
              ml_json_put_str (fp, g.found ? g.name : "");
              fprintf (fp, ",\"heaviest_bytes\":%" PRIu64 ",\"median_bytes\":%" PRIu64 "}", g.h, g.m);
            }
          else if (g.found)
            {
              fprintf (fp, "%-15s heaviest %s against the median %s: %s holds %s there, %s on the median\n",
                       "call site:", cli_rank_label (h, b1, sizeof b1), cli_rank_label (md, b2, sizeof b2), g.name,
                       cli_size (g.h), cli_size (g.m));
            }
          else
            fprintf (fp, "%-15s heaviest %s, median %s: no call site holds other bytes at their peaks\n", "call site:",
                     cli_rank_label (h, b1, sizeof b1), cli_rank_label (md, b2, sizeof b2));
          free (by);
        }
    }
  if (json)
    fprintf (fp, "}");
  free (ok);
}

void
cli_ranks_files_json (FILE *fp, const CliRank *r, size_t n)
{
  fprintf (fp, "[");
  for (size_t k = 0; k < n; k++)
    {
      const CliRankSummary *s = r[k].s;
      fprintf (fp, "%s{", k ? "," : "");
      json_rank (fp, &r[k]);
      if (!s->done)
        {
          fprintf (fp, ",\"error\":true,\"exit\":%d}", r[k].status);
          continue;
        }
      fprintf (fp, ",\"device\":%u,\"events\":%" PRIu64 ",\"peak_reserved\":%" PRIu64 ",\"peak_allocated\":%" PRIu64
               ",\"peak_allocated_tick\":%" PRIu64 ",\"ooms\":%u,",
               s->device, s->entries, s->reserved_peak, s->allocated_peak, s->allocated_tick, s->ooms);
      if (s->oom_timed)
        fprintf (fp, "\"first_oom_ns\":%" PRId64 ",", s->first_oom_ns);
      fprintf (fp, "\"top_site\":");
      ml_json_put_str (fp, s->site);
      fprintf (fp, ",\"top_site_bytes\":%" PRIu64 ",\"exit\":%d}", s->site_bytes, r[k].status);
    }
  fprintf (fp, "]");
}
