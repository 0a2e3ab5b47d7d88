/* fuzz-pickle.c — the pickle virtual machine (ml_pk_parse) on its own:
 * opcodes, lengths, memo references, nesting. */
#include "tests/fuzz/fuzz.h"
#include "sim/formats/pickle.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  MlPkDoc *doc;
  MlError err = { 0 };
  if (ml_pk_parse (data, size, &doc, &err) == 0)
    {
      const MlPkValue *root = ml_pk_root (doc);
      int64_t i;
      uint64_t u;
      ml_pk_get (root, "segments");
      ml_pk_get_int (root, "device", &i);
      ml_pk_get_u64 (root, "total_size", &u);
      ml_pk_get_str (root, "state");
      for (size_t k = 0; k < ml_pk_len (root); k++)
        ml_pk_get_str (root->items[k], "segment_type");
      ml_pk_free (doc);
    }
  return 0;
}
