/* replay-nocuda.c — the CUDA backend's place when nvcc was not found. */
#include "trace/replay.h"

bool
ml_replay_cuda_available (void)
{
  return false;
}

int
ml_replay_cuda (const MlReplayProgram *prog, unsigned iterations, int device,
                MlReplayResult *res, MlError *err)
{
  return ml_error_set (err, ML_EUNSUPPORTED,
                       "this memlens was built without the CUDA replay backend (nvcc was not found when it was configured)");
}
