/* utf8.h — UTF-8 as the outputs need it: every JSON, HTML, CSV or
 * Markdown file memlens writes is valid UTF-8, whatever bytes a trace
 * held (a snapshot's file name decoded with surrogateescape, raw bytes
 * in a pickle string, a JSONL name). */
#ifndef ML_UTF8_H
#define ML_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* The length (1 to 4) of the well-formed UTF-8 sequence at @s (@n bytes
 * left), or 0 when the byte at @s starts none: a stray continuation byte,
 * an overlong form, a surrogate (U+D800 .. U+DFFF), past U+10FFFF, a
 * sequence cut short. */
size_t ml_utf8_seq (const unsigned char *s, size_t n);
/* True when @s[0 .. n) is well-formed UTF-8. */
bool   ml_utf8_valid (const char *s, size_t n);
/* The replacement character U+FFFD, written for each byte that starts no
 * sequence (as Python's errors="replace" does for most). */
#define ML_UTF8_REPLACEMENT "\xef\xbf\xbd"
/* A copy of @s[0 .. n) with each such byte replaced by U+FFFD,
 * NUL-terminated, its length in *@out_len; NULL when out of memory. */
char  *ml_utf8_fix (const char *s, size_t n, size_t *out_len);

#endif
