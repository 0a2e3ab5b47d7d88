/* page-encode.c — base64 columns and JSON strings of the interactive page
 * (page-private.h). */
#include "render/page-private.h"

#include <inttypes.h>
#include <string.h>

static const char b64_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void
b64_flush (MlB64 *b)
{
  fwrite (b->out, 1, b->n_out, b->fp);
  b->n_out = 0;
}

static void
b64_quad (MlB64 *b, const uint8_t *p, int n)
{
  uint32_t v = (uint32_t) p[0] << 16 | (n > 1 ? (uint32_t) p[1] << 8 : 0) | (n > 2 ? p[2] : 0);
  if (b->n_out + 4 > sizeof b->out)
    b64_flush (b);
  b->out[b->n_out++] = b64_digits[v >> 18 & 63];
  b->out[b->n_out++] = b64_digits[v >> 12 & 63];
  b->out[b->n_out++] = n > 1 ? b64_digits[v >> 6 & 63] : '=';
  b->out[b->n_out++] = n > 2 ? b64_digits[v & 63] : '=';
}

void
_ml_b64_byte (MlB64 *b, uint8_t x)
{
  b->in[b->n_in++] = x;
  if (b->n_in == 3)
    {
      b64_quad (b, b->in, 3);
      b->n_in = 0;
    }
}

void
_ml_b64_u32 (MlB64 *b, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    _ml_b64_byte (b, (uint8_t) (v >> (8 * i)));
}

void
_ml_b64_f32 (MlB64 *b, float f)
{
  uint32_t v;
  memcpy (&v, &f, sizeof v);
  _ml_b64_u32 (b, v);
}

void
_ml_b64_f64 (MlB64 *b, double d)
{
  uint64_t v;
  memcpy (&v, &d, sizeof v);
  for (int i = 0; i < 8; i++)
    _ml_b64_byte (b, (uint8_t) (v >> (8 * i)));
}

void
_ml_b64_end (MlB64 *b)
{
  if (b->n_in)
    b64_quad (b, b->in, b->n_in);
  b->n_in = 0;
  b64_flush (b);
}

void
_ml_b64_string (FILE *fp, const void *data, size_t n)
{
  MlB64 b = { .fp = fp };
  fputc ('"', fp);
  for (size_t i = 0; i < n; i++)
    _ml_b64_byte (&b, ((const uint8_t *) data)[i]);
  _ml_b64_end (&b);
  fputc ('"', fp);
}

void
_ml_json_str (FILE *fp, const char *s)
{
  fputc ('"', fp);
  for (const unsigned char *p = (const unsigned char *) (s ? s : ""); *p; p++)
    {
      if (*p == '"' || *p == '\\')
        fprintf (fp, "\\%c", *p);
      else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&' || *p == 0x7f)
        fprintf (fp, "\\u%04x", *p);
      else
        fputc (*p, fp);
    }
  fputc ('"', fp);
}

void
_ml_json_u64 (FILE *fp, uint64_t v)
{
  fprintf (fp, v <= (UINT64_C (1) << 53) ? "%" PRIu64 : "\"%" PRIu64 "\"", v);
}
