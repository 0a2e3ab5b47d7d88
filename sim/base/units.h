/* units.h — sizes and durations as people write them.
 *
 * Sizes: plain bytes ("1048576") or a number with a binary suffix, case
 * insensitive, optional "B"/"iB": "4K", "256M", "40G", "1.5GiB", "2T".
 * Durations: "10s", "500ms", "2m", "1h", or plain seconds ("2.5").
 */
#ifndef ML_UNITS_H
#define ML_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/base/error.h"

int  ml_parse_size     (const char *text, uint64_t *bytes, MlError *err);
int  ml_parse_duration (const char *text, double *seconds, MlError *err);
/* Formats @bytes as "512 B", "4.00 KiB", "1.50 GiB" into @buf; returns buf. */
char *ml_format_size   (uint64_t bytes, char *buf, size_t len);
/* Parses a plain unsigned decimal integer that must fit in 64 bits:
 * 0, or ML_EINPUT (empty, not a digit, too large). */
int  ml_parse_u64      (const char *text, size_t len, uint64_t *out) ML_MUST_CHECK;

/* Parses @len bytes of a decimal number as JSON writes it ("-12",
 * "1700000000123456.789", "1.5e3") times 10^@scale10, to the nearest
 * integer, exactly (the digits are read as an integer, not a double):
 * 0, or ML_EINPUT (not a number, or past an int64). */
int  ml_parse_decimal_scaled (const char *text, size_t len, int scale10, int64_t *out) ML_MUST_CHECK;

#endif
