/* jsonutil.h — typed access to cJSON values with errors that name the
 * field and the value. 64-bit integers above 2^53 travel as decimal or
 * "0x" hex strings, since JSON numbers are doubles. */
#ifndef ML_JSONUTIL_H
#define ML_JSONUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#include "sim/base/error.h"

/* Reads field @key of @obj as an unsigned 64-bit integer. Returns 0 with
 * the value, 1 when absent (and @required is false), or ML_EINPUT. */
int  ml_json_u64 (const cJSON *obj, const char *key, bool required, uint64_t *out, MlError *err);
int  ml_json_i64 (const cJSON *obj, const char *key, bool required, int64_t *out, MlError *err);
int  ml_json_value_u64 (const cJSON *v, const char *what, uint64_t *out, MlError *err);
const char *ml_json_str (const cJSON *obj, const char *key);
/* The deepest nesting of objects and arrays the whole-document readers
 * (plans, Kineto traces, graphs) accept: their formats need a handful of
 * levels; cJSON recurses once per level. */
#define ML_JSON_MAX_DEPTH 100

/* Scans @len bytes of JSON text without parsing it and returns ML_EINPUT
 * ("line 3: nested more than 100 levels deep") when objects and arrays nest
 * deeper than @max_depth, else 0. Run it before cJSON, which would recurse
 * into a million-level document. */
int  ml_json_check_depth (const char *text, size_t len, int max_depth, MlError *err);
/* The offset in @text of the first \u0000 escape inside a JSON string,
 * else SIZE_MAX. cJSON keeps strings as C strings, so "Bytes\u0000x" would
 * be "Bytes" to every lookup: the readers refuse such text instead
 * (ml_json_check_depth does, and the JSONL reader per line). */
size_t ml_json_find_nul (const char *text, size_t len);
/* The message for it: "a string holds \u0000 (a NUL character) ..." */
#define ML_JSON_NUL_MSG "a string holds \\u0000 (a NUL character); memlens compares keys and strings whole and cannot keep one"
/* An MlReadCheck (sim/base/io.h) for JSON text: a NUL byte is never
 * JSON, so a binary file or /dev/zero is refused at its first piece. */
int  ml_json_text_check (const unsigned char *piece, size_t len, size_t offset, void *user, MlError *err);
/* Reads @path (gzip or plain, up to @max_bytes uncompressed) and parses it
 * as JSON; errors name the file and the line. On success *out is the
 * caller's (cJSON_Delete). */
int  ml_json_read_file (const char *path, size_t max_bytes, cJSON **out, MlError *err);
/* The values a whole-document reader takes, bounded by its input (the
 * tree takes some 80 bytes a value): at most one per 4 bytes of text and
 * 8 per byte of the file as stored (a gzip file's compressed bytes), but
 * always a million. Real plans, graphs and traces have 10-20 bytes of text
 * a value and at most one value per compressed byte. */
#define ML_JSON_TEXT_PER_VALUE    4
#define ML_JSON_VALUES_PER_STORED 8
#define ML_JSON_VALUES_MIN        ((uint64_t) 1 << 20)

/* Parses @len bytes of @text as one JSON document ("PATH" names it in
 * errors; when it is a file, its size bounds the tree): nesting checked
 * first (ml_json_check_depth), the values counted against the input
 * (ML_JSON_TEXT_PER_VALUE, ML_JSON_VALUES_PER_STORED) before cJSON builds
 * anything, text after the value refused ("PATH:LINE: text after the JSON
 * document"), a key given twice in one object refused ("PATH:LINE: byte
 * N: ..."), and an allocation failure inside cJSON said as ML_ENOMEM
 * "out of memory", not as a syntax error. On success *out is the caller's
 * (cJSON_Delete). */
int  ml_json_parse_doc (const char *path, const char *text, size_t len, cJSON **out, MlError *err);
/* cJSON_ParseWithLengthOpts (not requiring the end of the text) with
 * cJSON's allocations counted: NULL with *oom true means an allocation
 * failed, NULL with *oom false a syntax error. Thread-safe. */
cJSON *ml_json_parse (const char *text, size_t len, const char **end, bool *oom);
/* ML_EINPUT when an object anywhere in @root has a key twice
 * ("ops[3].name: the key appears twice in one object ..."): cJSON keeps
 * both, Python's json the last, and a reader taking the first would
 * silently disagree with Python. *@at is then the byte offset in @text
 * (the text @root was parsed from; may be NULL) of the key's second
 * occurrence, SIZE_MAX when unknown. ml_json_parse_doc runs it, so every
 * whole-document reader refuses such a file; the JSONL reader per line. */
int  ml_json_check_unique_keys (const cJSON *root, const char *text, size_t len, size_t *at, MlError *err);
/* Writes a u64 as a JSON number, or as a string above 2^53. */
void ml_json_put_u64 (FILE *fp, uint64_t v);
/* Writes @s as a JSON string literal with escapes. */
void ml_json_put_str (FILE *fp, const char *s);

#endif
