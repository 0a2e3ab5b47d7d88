/* fuzz-events.c — lifetimes (ml_buffers_build) and everything behind them,
 * fed events straight from the bytes, so the fuzzer spends its time on
 * event sequences rather than on JSON syntax.
 *
 * Byte 0: alignment = 1 << (b & 15). Then 8 bytes per event:
 *   0 kind (mod the kind count)   1 bits: 0 has id, 1 has addr, 2-3 stream,
 *   2 id (small, so ids collide)    4-5 kind flags, 6 size << 32, 7 far tick
 *   3 tick step (bit 7 of byte 1: a jump of 2^40)
 *   4..7 size, little endian; addr = id * 4096 + (size & 0xfff000)
 */
#include "tests/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  MlTrace *t = ml_trace_new ();
  if (!t)
    return 0;
  uint64_t align = (uint64_t) 1 << (data[0] & 15);
  t->default_align = align;
  uint64_t tick = 0;
  for (size_t i = 1; i + 8 <= size; i += 8)
    {
      const uint8_t *r = data + i;
      uint64_t sz = (uint64_t) r[4] | (uint64_t) r[5] << 8 | (uint64_t) r[6] << 16 | (uint64_t) r[7] << 24;
      if (r[1] & 0x40)
        sz <<= 32;
      tick += r[3];
      if (r[1] & 0x80)
        tick += (uint64_t) 1 << 40;
      MlEvent ev = {
        .tick = tick,
        .kind = (uint8_t) (r[0] % ML_EV__COUNT),
        .id = r[2],
        .addr = (uint64_t) r[2] * 4096 + (sz & 0xfff000),
        .size = sz,
        .time_ns = -1,
        .stream = (r[1] >> 2) & 3,
        .flags = (uint16_t) (((r[1] & 1) ? ML_EVF_HAS_ID : 0) | ((r[1] & 2) ? ML_EVF_HAS_ADDR : 0)
                             | ((r[1] & 0x10) ? ML_EVF_WEIGHT : 0) | ((r[1] & 0x20) ? ML_EVF_ACTIVATION : 0)),
      };
      if (ev.flags & ML_EVF_HAS_ADDR)
        t->has_addrs = true;
      if (!ml_trace_append (t, &ev))
        break;
    }
  fuzz_analyse (t, 0);
  ml_trace_free (t);
  return 0;
}
