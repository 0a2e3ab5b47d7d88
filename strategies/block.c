#include "strategies/block.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "strategies/planner-private.h"

typedef struct {
  bool max;   /* classes=max */
} Opt;

static int
block_option (void *user, const char *key, const char *value, MlError *err)
{
  Opt *o = user;
  if (strcmp (key, "classes") == 0)
    {
      if (strcmp (value, "binary") == 0)
        o->max = false;
      else if (strcmp (value, "max") == 0)
        o->max = true;
      else
        return ml_error_set (err, ML_EUSAGE, "ge-block: classes=%s: use binary or max", value);
      return 0;
    }
  return ml_error_set (err, ML_EUSAGE, "ge-block: unknown option \"%s\" (known: classes=binary|max)", key);
}

static unsigned
class_of (uint64_t size)
{
  unsigned k = 0;
  while (k < 63 && ((uint64_t) 1 << k) < size)
    k++;
  return k;
}

static int
block_plan (const MlBuffers *bufs, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  Opt opt = { false };
  int rc = ml_options_foreach (knobs->options, block_option, &opt, err);
  if (rc < 0)
    return rc;
  size_t n = bufs->n;
  uint64_t *boff = malloc ((n ? n : 1) * sizeof *boff);    /* per block: offset, size */
  uint64_t *bsize = malloc ((n ? n : 1) * sizeof *bsize);
  uint32_t *of = malloc ((n ? n : 1) * sizeof *of);        /* per buffer: its block */
  uint32_t *next = malloc ((n ? n : 1) * sizeof *next);    /* free lists, linked by block */
  uint32_t head[64];
  size_t nb = 0;
  uint64_t top = 0, reused = 0;
  if (!boff || !bsize || !of || !next)
    {
      rc = ml_error_set (err, ML_ENOMEM, "out of memory planning %zu buffers", n);
      goto out;
    }
  for (int k = 0; k < 64; k++)
    head[k] = UINT32_MAX;
  MlSweep sw;
  MlSweepStep st;
  ml_sweep_init (&sw, bufs);
  double deadline = _ml_user_deadline (knobs);
  size_t steps = 0, placed = 0;
  while (ml_sweep_next (&sw, &st))
    {
      if ((steps++ & 4095) == 0)
        {
          if (deadline > 0 && ml_now () >= deadline)
            {
              rc = ml_error_set (err, ML_ETIMEOUT, "stopped at the time limit (%.3g s) after placing %zu of %zu buffers in blocks; no plan",
                                 knobs->time_limit, placed, n);
              goto out;
            }
          if (_ml_cancelled (knobs))
            {
              rc = ml_error_set (err, ML_ECANCELLED, "cancelled");
              goto out;
            }
          if ((steps & 0x3ffff) == 1)
            _ml_report (knobs, n ? (double) placed / (double) n : 0, "placing");
        }
      placed += st.is_alloc;
      const MlBuffer *b = &bufs->buf[st.buffer];
      if (!b->rsize || b->end <= b->start)
        {
          if (st.is_alloc)
            plan->offset[st.buffer] = 0, of[st.buffer] = UINT32_MAX;
          continue;
        }
      unsigned k = opt.max ? 0 : class_of (b->rsize);
      if (!st.is_alloc)
        {
          uint32_t blk = of[st.buffer];
          next[blk] = head[k];
          head[k] = blk;
          continue;
        }
      uint32_t *link = NULL;
      if (opt.max)
        {
          /* the smallest free block that is large enough */
          for (uint32_t *p = &head[0]; *p != UINT32_MAX; p = &next[*p])
            if (bsize[*p] >= b->rsize && (!link || bsize[*p] < bsize[*link]))
              link = p;
        }
      else if (head[k] != UINT32_MAX)
        link = &head[k];
      uint32_t blk;
      if (link)
        {
          blk = *link;
          *link = next[blk];
          reused++;
        }
      else
        {
          uint64_t size = opt.max ? b->rsize : (uint64_t) 1 << k;
          if (size > ML_BUFFERS_MAX_TOTAL || top > ML_BUFFERS_MAX_TOTAL - size)
            {
              rc = ml_error_set (err, ML_EINPUT, "ge-block: the blocks pass 2^60 bytes at buffer %" PRIu64, b->id);
              goto out;
            }
          blk = (uint32_t) nb++;
          boff[blk] = top;
          bsize[blk] = size;
          top += size;
        }
      of[st.buffer] = blk;
      plan->offset[st.buffer] = boff[blk];
    }
  char note[128];
  snprintf (note, sizeof note, "classes=%s: %zu blocks, %" PRIu64 " requests reused a block", opt.max ? "max" : "binary",
            nb, reused);
  if (ml_plan_set_note (plan, note) < 0)
    rc = ml_error_set (err, ML_ENOMEM, "out of memory");
out:
  free (boff);
  free (bsize);
  free (of);
  free (next);
  return rc;
}

static const char *const block_keys[] = { "classes", NULL };

const MlStrategy ml_strategy_ge_block = {
  .name = "ge-block",
  .summary = "offline: Ascend GE-style block assigner, sizes rounded to block classes, reuse by class (classes=binary|max)",
  .kind = ML_STRATEGY_OFFLINE,
  .knobs = ML_KNOB_TIME_LIMIT | ML_KNOB_OPTIONS,
  .options = block_keys,
  .plan = block_plan,
};
