/* cupti-walk.c — walking a CUPTI activity buffer with libcupti. */
#include "trace/cupti-convert.h"

#include <cupti.h>

int
ml_cupti_walk_buffer (MlCuptiCollector *c, uint8_t *buffer, size_t valid_bytes,
                      size_t *n_records, MlError *err)
{
  CUpti_Activity *rec = NULL;
  size_t n = 0;
  int rc = 0;
  if (valid_bytes == 0)
    goto done;
  for (;;)
    {
      CUptiResult st = cuptiActivityGetNextRecord (buffer, valid_bytes, &rec);
      if (st == CUPTI_ERROR_MAX_LIMIT_REACHED)
        break;
      if (st != CUPTI_SUCCESS)
        {
          const char *why = NULL;
          cuptiGetResultString (st, &why);
          rc = ml_error_set (err, ML_EINPUT, "activity buffer of %zu bytes: record %zu (after %zu good ones): %s",
                             valid_bytes, n + 1, n, why ? why : "unknown CUPTI error");
          break;
        }
      n++;
      if (ml_cupti_collector_add (c, rec) < 0)
        {
          rc = ml_error_set (err, ML_ENOMEM, "out of memory after %zu records", n);
          break;
        }
    }
done:
  if (n_records)
    *n_records = n;
  return rc;
}
