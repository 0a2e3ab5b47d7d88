/* page-private.h — what the files behind page.h share: base64 of
 * little-endian columns and JSON strings safe inside a <script> of an
 * XHTML page (page-encode.c), the panels' data (page-panels.c) and the
 * level-of-detail tiles (page-tiles.c). */
#ifndef ML_PAGE_PRIVATE_H
#define ML_PAGE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "render/scene.h"

typedef struct {
  FILE   *fp;
  uint8_t in[3];
  int     n_in;
  char    out[4096];
  size_t  n_out;
} MlB64;

void _ml_b64_byte (MlB64 *b, uint8_t x);
void _ml_b64_u32  (MlB64 *b, uint32_t v);
void _ml_b64_f32  (MlB64 *b, float f);
/* An IEEE double, little-endian (exact for integers up to 2^53). */
void _ml_b64_f64  (MlB64 *b, double d);
void _ml_b64_end  (MlB64 *b);
/* The bytes @data as one base64 JSON string value ("..."). */
void _ml_b64_string (FILE *fp, const void *data, size_t n);

/* A JSON string that is also safe inside a <script> element of an
 * XHTML page: <, > and & written as \u escapes. */
void _ml_json_str (FILE *fp, const char *s);
/* An unsigned 64-bit integer for JSON: a number up to 2^53 (exact in
 * JavaScript), a string of its digits past it. */
void _ml_json_u64 (FILE *fp, uint64_t v);

/* Whether the page offers colouring @by of @s: all but frames without
 * an expression (the page has no box for one). */
bool _ml_page_coloring_offered (const MlScene *s, MlColorBy by);
/* Whether colouring @by of @s puts every buffer in one class "(none)"
 * (compile_context or user_metadata of a trace that records none): the
 * page lists it disabled, saying so. */
bool _ml_page_coloring_empty (const MlScene *s, MlColorBy by);

/* The panels' data, as members of the figure's JSON object (each
 * starting with a comma): the colour classes of each colouring, the
 * live / reserved / fragmentation curves, the peaks with their blame,
 * the segments' lifetimes and mappings (for the state at a tick), and
 * the stacks of the buffers (@stack: per item, its index in the table
 * written, 0 = none; filled here). */
int _ml_page_panels (FILE *fp, const MlScene *s, uint32_t *stack, MlError *err);

/* The level-of-detail tiles (page-tiles.c), as a member "tiles" of the
 * figure's JSON object: for a scene of at least ML_PAGE_TILE_MIN_ITEMS
 * items, the address × time picture of the buffers coloured by call site
 * ("address") and the stacked one ("active") at ML_PAGE_TILE_LEVELS
 * levels each, level L as 2^L PNG tiles of ML_PAGE_TILE_W x
 * ML_PAGE_TILE_H pixels side by side over the ticks, each over the whole
 * vertical axis. Writes nothing for smaller scenes. */
#define ML_PAGE_TILE_W 2048
#define ML_PAGE_TILE_H 1024
#define ML_PAGE_TILE_LEVELS 4
#define ML_PAGE_TILE_MIN_ITEMS 10000
int _ml_page_tiles (FILE *fp, const MlScene *s, MlError *err);

#endif
