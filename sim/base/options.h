/* options.h — "k=v,k=v" option strings (strategy --options, graph options).
 *
 * A value may hold a bracketed list whose commas do not separate options
 * (PyTorch's "roundup_power2_divisions=[256:1,512:2,>:4]").
 */
#ifndef ML_OPTIONS_H
#define ML_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/base/error.h"

/* Parses "k=v,k=v" options: calls @fn for each pair (a bare "k" gives
 * value "1"); stops at the first error @fn returns and returns it. The
 * strings handed to @fn live only for that call. ML_EUSAGE names an
 * unclosed "[". */
int ml_options_foreach (const char *options,
                        int (*fn) (void *user, const char *key, const char *value, MlError *err),
                        void *user, MlError *err);

/* True when @key is one of the graph reader's options (reorder,
 * max_block, exclude, pin): --options carries them beside the
 * strategies' own. */
bool ml_options_is_graph_key (const char *key);

/* The length of the item that starts at @p: up to the first ',' (or the
 * end) outside brackets. An unclosed '[' runs to the end. */
size_t ml_options_item_len (const char *p);

#endif
