/* infeasible.c — an irreducible infeasible subset (see infeasible.h). */
#include "sim/infeasible.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jsonutil.h"
#include "sim/base/units.h"

static int
cmp_u32 (const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
  return x < y ? -1 : x > y;
}

int
ml_infeasible_set (MlInfeasible *out, const MlBuffers *bufs, const uint32_t *set, size_t n,
                   uint64_t capacity, bool minimal)
{
  ml_infeasible_clear (out);
  if (n == 0)
    return 0;
  uint32_t *copy = malloc (n * sizeof *copy);
  if (!copy)
    return ML_ENOMEM;
  memcpy (copy, set, n * sizeof *copy);
  /* MlBuffers are by start: by index is by start */
  qsort (copy, n, sizeof *copy, cmp_u32);
  uint64_t t1 = UINT64_MAX, t2 = 0, a = 0, b = UINT64_MAX, total = 0;
  for (size_t k = 0; k < n; k++)
    {
      const MlBuffer *bf = &bufs->buf[copy[k]];
      if (bf->start < t1) t1 = bf->start;
      if (bf->end > t2) t2 = bf->end;
      if (bf->start > a) a = bf->start;
      if (bf->end < b) b = bf->end;
      total += bf->rsize;
    }
  *out = (MlInfeasible) { capacity, copy, n, total, a < b, a < b ? a : t1, a < b ? b : t2, minimal };
  return 0;
}

void
ml_infeasible_move (MlInfeasible *to, MlInfeasible *from)
{
  ml_infeasible_clear (to);
  *to = *from;
  memset (from, 0, sizeof *from);
}

void
ml_infeasible_clear (MlInfeasible *s)
{
  if (!s)
    return;
  free (s->buffers);
  memset (s, 0, sizeof *s);
}

const char *
ml_infeasible_describe (const MlInfeasible *s, const MlBuffers *bufs, bool list, char *buf, size_t len)
{
  char need[32], cap[32];
  ml_format_size (s->bytes, need, sizeof need);
  ml_format_size (s->capacity, cap, sizeof cap);
  char exact[48] = "";
  if (s->bytes >= 1024)
    snprintf (exact, sizeof exact, " (%" PRIu64 " bytes)", s->bytes);
  size_t at = (size_t) snprintf (buf, len, "%s %zu buffers, %s [%" PRIu64 ", %" PRIu64 "), need %s%s"
                                 " together and cannot fit in %s%s",
                                 s->minimal ? "these" : "a subset of", s->n,
                                 s->together ? "live together in" : "live in ticks", s->from, s->to, need, exact, cap,
                                 s->minimal ? " (without any one of them they do)" : " (time ran out before it was minimal)");
  for (size_t k = 0; list && k < s->n && at < len; k++)
    {
      const MlBuffer *bf = &bufs->buf[s->buffers[k]];
      if (at + 48 >= len && k + 1 < s->n)
        {
          snprintf (buf + at, len - at, " ...");
          break;
        }
      at += (size_t) snprintf (buf + at, len - at, "%s id %" PRIu64 " [%" PRIu64 ", %" PRIu64 ") %" PRIu64, k ? "," : ":",
                               bf->id, bf->start, bf->end, bf->rsize);
    }
  return buf;
}

int
ml_infeasible_write_json (const MlInfeasible *s, const MlBuffers *bufs, FILE *fp, MlError *err)
{
  fprintf (fp, "{\"capacity\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"minimal\":%s,\"together\":%s,\"from\":%" PRIu64
           ",\"to\":%" PRIu64 ",\"buffers\":[",
           s->capacity, s->bytes, s->minimal ? "true" : "false", s->together ? "true" : "false", s->from, s->to);
  for (size_t k = 0; k < s->n; k++)
    {
      const MlBuffer *bf = &bufs->buf[s->buffers[k]];
      fprintf (fp, "%s{\"id\":", k ? "," : "");
      ml_json_put_u64 (fp, bf->id);
      fprintf (fp, ",\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"size\":%" PRIu64 "}", bf->start, bf->end, bf->rsize);
    }
  fputs ("]}", fp);
  return ferror (fp) ? ml_error_set (err, ML_EIO, "write error: %s", strerror (errno ? errno : EIO)) : 0;
}
