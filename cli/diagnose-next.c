/* diagnose-next.c — the shortfall, what to free, the devices (diagnose-next.h). */
#include "cli/diagnose-next.h"

#include <inttypes.h>
#include <stdlib.h>

#include "render/report/report.h"
#include "sim/base/jsonutil.h"

static const MlBuffers *rank_bufs;   /* qsort's context (one ranking at a time) */

static double
weight (const MlBuffer *b)
{
  return (double) b->rsize * (double) (b->end - b->start);
}

static int
by_weight (const void *x, const void *y)
{
  const MlBuffer *a = &rank_bufs->buf[*(const uint32_t *) x], *b = &rank_bufs->buf[*(const uint32_t *) y];
  double wa = weight (a), wb = weight (b);
  if (wa != wb)
    return wa < wb ? 1 : -1;
  return a->id < b->id ? -1 : a->id > b->id;
}

int
cli_shortfall_find (const MlBuffers *bufs, const MlDiagnosis *d, CliShortfall *s)
{
  *s = (CliShortfall) { 0 };
  bool oom = d->recorded || (d->oom.hit && d->oom.request);
  if (!d->capacity || !oom)
    return 0;
  s->needs = d->lower_bound;
  s->has = d->capacity;
  s->tick = d->recorded ? d->rec_tick : d->oom.tick;
  s->live = malloc ((bufs->n + 1) * sizeof *s->live);
  if (!s->live)
    return ML_ENOMEM;
  for (size_t i = 0; i < bufs->n; i++)
    if (bufs->buf[i].start <= s->tick && s->tick < bufs->buf[i].end)
      s->live[s->n_live++] = (uint32_t) i;
  rank_bufs = bufs;
  qsort (s->live, s->n_live, sizeof *s->live, by_weight);
  return 0;
}

void
cli_shortfall_clear (CliShortfall *s)
{
  free (s->live);
  *s = (CliShortfall) { 0 };
}

/* The buffers to show: until their bytes close the gap, at most 8. */
static size_t
shown (const MlBuffers *bufs, const CliShortfall *s, uint64_t *freed)
{
  uint64_t gap = s->needs - s->has, sum = 0;
  size_t k = 0;
  while (k < s->n_live && k < 8 && sum < gap)
    sum += bufs->buf[s->live[k++]].rsize;
  *freed = sum;
  return k;
}

void
cli_shortfall_print (const MlBuffers *bufs, const CliShortfall *s)
{
  if (!s->has)
    return;
  if (s->needs <= s->has)
    {
      printf ("  no shortfall: the trace needs at least %s (its lower bound), the device has %s: a better layout fits "
              "with %s to spare\n", cli_size (s->needs), cli_size (s->has), cli_size (s->has - s->needs));
      return;
    }
  printf ("  shortfall: the trace needs at least %s (its lower bound), the device has %s: free at least %s\n",
          cli_size (s->needs), cli_size (s->has), cli_size (s->needs - s->has));
  uint64_t freed;
  size_t k = shown (bufs, s, &freed);
  if (!k)
    return;
  printf ("  to close it, free sooner or shrink (live at tick %" PRIu64 ", the largest held longest first):\n", s->tick);
  uint64_t sum = 0;
  for (size_t i = 0; i < k; i++)
    {
      const MlBuffer *b = &bufs->buf[s->live[i]];
      char label[256];
      sum += b->rsize;
      printf ("    %11s  buffer %-8" PRIu64 " held [%" PRIu64 ", %" PRIu64 ")  %-32s %s\n", cli_size (b->rsize), b->id,
              b->start, b->end, ml_report_buffer_label (bufs, s->live[i], label, sizeof label),
              sum >= s->needs - s->has ? "closes it" : "");
    }
  if (freed < s->needs - s->has)
    printf ("    freeing %s of the live buffers frees %s, less than the shortfall: the request itself must shrink\n",
            k == s->n_live ? "all" : "these", cli_size (freed));
}

void
cli_shortfall_json (const MlBuffers *bufs, const CliShortfall *s)
{
  if (!s->has)
    return;
  printf (",\"shortfall\":{\"needs\":%" PRIu64 ",\"device_has\":%" PRIu64 ",\"free_at_least\":%" PRIu64
          ",\"tick\":%" PRIu64 ",\"free_first\":[", s->needs, s->has, s->needs > s->has ? s->needs - s->has : 0, s->tick);
  uint64_t freed;
  size_t k = s->needs > s->has ? shown (bufs, s, &freed) : 0;
  for (size_t i = 0; i < k; i++)
    {
      const MlBuffer *b = &bufs->buf[s->live[i]];
      char label[256];
      printf ("%s{\"id\":", i ? "," : "");
      ml_json_put_u64 (stdout, b->id);
      printf (",\"bytes\":%" PRIu64 ",\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"label\":", b->rsize, b->start, b->end);
      ml_json_put_str (stdout, ml_report_buffer_label (bufs, s->live[i], label, sizeof label));
      printf ("}");
    }
  printf ("]}");
}

void
cli_devices_print (const MlTrace *t)
{
  if (!t || t->n_devices < 2)
    return;
  uint64_t most = 0, least = UINT64_MAX;
  printf ("  devices: reserved at the end (at most):");
  for (size_t d = 0; d < t->n_devices; d++)
    {
      const MlDeviceInfo *di = &t->devices[d];
      printf ("%s device %u%s %s (%s)", d ? "," : "", di->device, di->device == t->device ? " (read)" : "",
              cli_size (di->reserved_end), cli_size (di->reserved_max));
      if (di->reserved_max > most)
        most = di->reserved_max;
      if (di->reserved_max && di->reserved_max < least)
        least = di->reserved_max;
    }
  if (least != UINT64_MAX && most > least)
    printf ("; the most is %.1fx the least: the work is split unevenly", (double) most / (double) least);
  putchar ('\n');
}
