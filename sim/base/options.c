#include "sim/base/options.h"

#include <stdlib.h>
#include <string.h>

size_t
ml_options_item_len (const char *p)
{
  size_t n = 0;
  int depth = 0;
  for (; p[n] && (p[n] != ',' || depth > 0); n++)
    if (p[n] == '[')
      depth++;
    else if (p[n] == ']' && depth > 0)
      depth--;
  return n;
}

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
  for (char *tok = copy; *tok && rc == 0;)
    {
      size_t n = ml_options_item_len (tok);
      char *next = tok + n + (tok[n] == ',');
      tok[n] = 0;
      char *open = strchr (tok, '[');
      if (open && !strchr (open, ']'))
        rc = ml_error_set (err, ML_EUSAGE, "option \"%s\": the list has no closing ']'", tok);
      else if (*tok)
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
      tok = next;
    }
  free (copy);
  return rc;
}

bool
ml_options_is_graph_key (const char *key)
{
  static const char *const graph_keys[] = { "reorder", "max_block", "exclude", "pin", NULL };
  for (const char *const *k = graph_keys; *k; k++)
    if (strcmp (*k, key) == 0)
      return true;
  return false;
}
