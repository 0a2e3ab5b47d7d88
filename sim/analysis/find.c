/* find.c — search a trace's buffers by address and by frame (find.h). */
#include "sim/analysis/find.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sites.h"

int
ml_find_addr_parse (const char *text, bool allow_now, MlFindAddr *out)
{
  char *end;
  *out = (MlFindAddr) { .tick = UINT64_MAX };
  if (!*text || *text == '-' || *text == '@' || isspace ((unsigned char) *text))
    return -1;
  errno = 0;
  out->addr = strtoull (text, &end, 0);
  if (errno || end == text)
    return -1;
  if (*end == '@')
    {
      const char *t = end + 1;
      if (!*t && allow_now)
        {
          out->now = true;
          return 0;
        }
      if (!isdigit ((unsigned char) *t))
        return -1;
      out->tick = strtoull (t, &end, 10);
      if (errno)
        return -1;
    }
  return *end ? -1 : 0;
}

bool
ml_find_addr_holds (const MlFindAddr *q, uint64_t base, uint64_t size, uint64_t start, uint64_t end)
{
  return q->addr >= base && q->addr - base < (size ? size : 1)
         && (q->tick == UINT64_MAX || (start <= q->tick && q->tick < end));
}

/* @hay contains @needle, ASCII case folded when @fold (@needle lower). */
static bool
contains (const char *hay, const char *needle, bool fold)
{
  if (!fold)
    return strstr (hay, needle) != NULL;
  size_t n = strlen (needle);
  for (; *hay; hay++)
    {
      size_t k = 0;
      while (k < n && hay[k] && tolower ((unsigned char) hay[k]) == needle[k])
        k++;
      if (k == n)
        return true;
    }
  return n == 0;
}

uint8_t *
ml_find_frame_stacks (const MlTrace *t, const char *text, bool fold)
{
  /* the distinct frames (MlTrace.frame_table) once each, then each stack */
  uint8_t *frame_hit = calloc (t->n_frame_table + 1, 1);
  uint8_t *stack_hit = calloc (t->n_stacks + 1, 1);
  if (!frame_hit || !stack_hit)
    {
      free (frame_hit);
      free (stack_hit);
      return NULL;
    }
  char buf[1024];
  for (size_t f = 0; f < t->n_frame_table; f++)
    {
      ml_frame_text (t, &t->frame_table[f], buf, sizeof buf);
      frame_hit[f] = contains (buf, text, fold);
    }
  for (size_t s = 0; s < t->n_stacks; s++)
    {
      const MlStack *st = &t->stacks[s];
      for (uint32_t k = 0; k < st->n && !stack_hit[s]; k++)
        {
          size_t slot = (size_t) st->first + k;
          stack_hit[s] = slot < t->n_stack_frames && t->stack_frames[slot] < t->n_frame_table
                         && frame_hit[t->stack_frames[slot]];
        }
    }
  free (frame_hit);
  return stack_hit;
}

size_t
ml_buffer_annotations (const MlBuffers *bufs, size_t i, uint32_t *out, size_t cap)
{
  const MlTrace *t = bufs->trace;
  const MlBuffer *b = &bufs->buf[i];
  size_t n = 0;
  if (!t)
    return 0;
  for (size_t e = bufs->alloc_event ? bufs->alloc_event[i] : 0; e < t->n_events && t->events[e].tick <= b->end; e++)
    {
      const MlEvent *ev = &t->events[e];
      if (ev->kind != ML_EV_MARK || !(ev->flags & ML_EVF_HAS_ID) || ev->id != b->id || !ev->name)
        continue;
      if (n < cap)
        out[n] = ev->name;
      n++;
    }
  return n;
}
