#include "strategies/linear.h"

#include <inttypes.h>

#include "sim/sim.h"
#include "strategies/planner-private.h"

static int
linear_plan (const MlBuffers *bufs, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  uint64_t off = 0;
  double deadline = _ml_user_deadline (knobs);
  for (size_t i = 0; i < bufs->n; i++)
    {
      if ((i & 4095) == 0)
        {
          if (deadline > 0 && ml_now () >= deadline)
            return ml_error_set (err, ML_ETIMEOUT, "stopped at the time limit (%.3g s) after placing %zu of %zu buffers; no plan",
                                 knobs->time_limit, i, bufs->n);
          if (_ml_cancelled (knobs))
            return ml_error_set (err, ML_ECANCELLED, "cancelled");
        }
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
  .knobs = ML_KNOB_TIME_LIMIT,
  .plan = linear_plan,
};
