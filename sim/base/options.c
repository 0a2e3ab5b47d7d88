#include "sim/base/options.h"

#include <stdlib.h>
#include <string.h>

int
ml_options_foreach (const char *options,
                    int (*fn) (void *user, const char *key, const char *value, MlError *err),
                    void *user, MlError *err)
{
  if (!options || !*options)
    return 0;
  char *copy = strdup (options);
  if (!copy)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  int rc = 0;
  char *save = NULL;
  for (char *tok = strtok_r (copy, ",", &save); tok && rc == 0; tok = strtok_r (NULL, ",", &save))
    {
      char *eq = strchr (tok, '=');
      if (!eq)
        rc = fn (user, tok, "1", err);
      else
        {
          *eq = 0;
          rc = fn (user, tok, eq + 1, err);
        }
    }
  free (copy);
  return rc;
}
