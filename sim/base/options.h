/* options.h — "k=v,k=v" option strings (strategy --options, graph options).
 */
#ifndef ML_OPTIONS_H
#define ML_OPTIONS_H

#include "sim/base/error.h"

/* Parses "k=v,k=v" options: calls @fn for each pair (a bare "k" gives
 * value "1"); stops at the first error @fn returns and returns it. The
 * strings handed to @fn live only for that call. */
int ml_options_foreach (const char *options,
                        int (*fn) (void *user, const char *key, const char *value, MlError *err),
                        void *user, MlError *err);

#endif
