#include "strategies/linear.h"

#include <inttypes.h>

static int
linear_plan (const MlBuffers *bufs, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  uint64_t off = 0;
  for (size_t i = 0; i < bufs->n; i++)
    {
      plan->offset[i] = off;
      if (off + bufs->buf[i].rsize < off)
        return ml_error_set (err, ML_EINPUT, "the sum of all sizes overflows 64 bits at buffer %" PRIu64, bufs->buf[i].id);
      off += bufs->buf[i].rsize;
    }
  return 0;
}

const MlStrategy ml_strategy_linear = {
  .name = "linear",
  .summary = "offline baseline: every buffer at a fresh offset, no reuse; O(n)",
  .kind = ML_STRATEGY_OFFLINE,
  .flags = ML_STRATEGY_DEFAULT,
  .plan = linear_plan,
};
