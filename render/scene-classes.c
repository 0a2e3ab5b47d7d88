/* scene-classes.c — the colour classes of a scene (scene.h): each
 * colouring's keys, ranked into at most ML_PALETTE_N classes and "N
 * others", each a legend entry with its label, area, count and bytes at
 * the lower-bound tick. The groups (compile_context, user_metadata, a
 * regular expression over frames) are those of sim/analysis/groups.h, so
 * a picture's legend names the groups `stats --group-by` prints. */
#include "render/scene-private.h"

#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/u64map.h"

#define NONE_LABEL "(none)"

/* Distinct keys of one colouring, ranked into classes. */
typedef struct {
  uint64_t key;
  double   area;
  uint64_t peak_bytes;
  size_t   count;
  uint32_t cls;
} Slot;

typedef struct {
  Slot    *slots;
  size_t   n, cap;
  MlU64Map map;
} Keys;

static long
keys_slot (Keys *k, uint64_t key)
{
  uint32_t v;
  if (ml_u64map_get (&k->map, key, &v))
    return v;
  if (k->n == k->cap)
    {
      size_t cap = k->cap ? k->cap * 2 : 64;
      Slot *p = realloc (k->slots, cap * sizeof *p);
      if (!p)
        return -1;
      k->slots = p;
      k->cap = cap;
    }
  k->slots[k->n] = (Slot) { .key = key };
  if (ml_u64map_put (&k->map, key, (uint32_t) k->n) < 0)
    return -1;
  return (long) k->n++;
}

static int by_area_desc (const void *a, const void *b)
{
  const Slot *x = *(Slot *const *) a, *y = *(Slot *const *) b;
  if (x->area != y->area)
    return x->area > y->area ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

static int by_key (const void *a, const void *b)
{
  const Slot *x = *(Slot *const *) a, *y = *(Slot *const *) b;
  return x->key < y->key ? -1 : x->key > y->key;
}

static const char *const kind_labels[] = { "activation", "weight", "input", "output", "kind not recorded" };

static uint64_t
kind_key (uint32_t flags)
{
  if (flags & ML_BUF_ACTIVATION) return 0;
  if (flags & ML_BUF_WEIGHT) return 1;
  if (flags & ML_BUF_INPUT) return 2;
  if (flags & ML_BUF_OUTPUT) return 3;
  return 4;
}

static uint64_t
site_key (const MlBuffers *bufs, const MlBuffer *b)
{
  const MlTrace *t = bufs->trace;
  if (t && b->stack && b->stack < t->n_stacks && t->stacks[b->stack].site)
    return t->stacks[b->stack].site;
  return b->name;   /* 0 = unnamed */
}

static const char *
site_text (const MlScene *s, uint64_t key)
{
  const char *text = key && s->bufs->trace ? ml_trace_str (s->bufs->trace, (uint32_t) key) : "(no call site)";
  return text && *text ? text : "(no call site)";
}

/* A buffer's key in a group colouring: the interned text of its
 * compile_context or user_metadata (0 = none), or its group under the
 * frames expression (@frames; 0 = "(none)"). */
static uint64_t
group_key (const MlScene *s, MlColorBy by, uint32_t buffer, const MlGroupKeys *frames)
{
  if (by == ML_COLOR_BY_FRAMES)
    return frames && buffer < frames->n ? frames->of_buffer[buffer] : 0;
  const MlTrace *t = s->bufs->trace;
  if (!t || !s->bufs->alloc_event)
    return 0;
  MlEventMeta meta = ml_trace_event_meta (t, s->bufs->alloc_event[buffer]);
  uint32_t idx = by == ML_COLOR_BY_COMPILE_CONTEXT ? meta.compile_context : meta.user_metadata;
  const char *text = idx ? ml_trace_str (t, idx) : NULL;
  return text && *text ? idx : 0;
}

static char *
class_label (const MlScene *s, MlColorBy by, uint64_t key, const MlGroupKeys *frames)
{
  char tmp[64];
  const char *text = tmp;
  switch (by)
    {
    case ML_COLOR_BY_COMPILE_CONTEXT:
    case ML_COLOR_BY_USER_METADATA:
      text = key && s->bufs->trace ? ml_trace_str (s->bufs->trace, (uint32_t) key) : NONE_LABEL;
      break;
    case ML_COLOR_BY_FRAMES:
      text = frames && key < frames->n_names ? frames->names[key] : NONE_LABEL;
      break;
    case ML_COLOR_BY_SITE:
      {
        char shortened[512];
        return strdup (ml_short_label (site_text (s, key), shortened, sizeof shortened));
      }
    case ML_COLOR_BY_STREAM:
      if (s->bufs->trace && key <= UINT32_MAX)
        {
          char sl[ML_STREAM_LABEL_MAX];
          snprintf (tmp, sizeof tmp, "stream %s", ml_trace_stream_label (s->bufs->trace, (uint32_t) key, sl));
        }
      else
        snprintf (tmp, sizeof tmp, "stream %" PRIu64, key);
      break;
    case ML_COLOR_BY_KIND:
      text = kind_labels[key < 5 ? key : 4];
      break;
    default:
      text = "?";
    }
  return strdup (text);
}

/* Call sites whose short labels read the same keep more of their paths
 * until they differ ("models/attention.py:12:f", "vision/attention.py:
 * 12:f"); sites whose whole texts are the same are the same words anyway. */
static int
distinct_site_labels (MlScene *s, const uint64_t *keys, size_t n)
{
  MlSceneClass *c = s->classes[ML_COLOR_BY_SITE];
  for (unsigned parts = 2; parts <= 16; parts++)
    {
      bool same[ML_PALETTE_N] = { false };
      bool any = false;
      for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
          if (strcmp (c[i].label, c[j].label) == 0 && strcmp (site_text (s, keys[i]), site_text (s, keys[j])) != 0)
            same[i] = same[j] = any = true;
      if (!any)
        return 0;
      for (size_t i = 0; i < n; i++)
        if (same[i])
          {
            char buf[512];
            char *l = strdup (ml_short_label_keep (site_text (s, keys[i]), parts, buf, sizeof buf));
            if (!l)
              return -1;
            free (c[i].label);
            c[i].label = l;
          }
    }
  return 0;
}

/* Ranks the keys of one colouring into classes and labels them. Kinds
 * and streams keep their natural order (the same stream is the same
 * colour in every trace); call sites and groups are ranked by drawn
 * area. */
static int
assign_classes (MlScene *s, MlColorBy by, Keys *k, uint32_t *slot_of, const MlGroupKeys *frames)
{
  Slot **order = malloc ((k->n ? k->n : 1) * sizeof *order);
  if (!order)
    return -1;
  for (size_t i = 0; i < k->n; i++)
    order[i] = &k->slots[i];
  qsort (order, k->n, sizeof *order, by == ML_COLOR_BY_STREAM || by == ML_COLOR_BY_KIND ? by_key : by_area_desc);
  MlSceneClass *other = &s->classes[by][ML_PALETTE_N];
  for (size_t r = 0; r < k->n; r++)
    {
      Slot *sl = order[r];
      if (r < ML_PALETTE_N)
        {
          sl->cls = (uint32_t) r;
          MlSceneClass *c = &s->classes[by][r];
          c->label = class_label (s, by, sl->key, frames);
          if (!c->label)
            {
              free (order);
              return -1;
            }
          c->area = sl->area;
          c->peak_bytes = sl->peak_bytes;
          c->count = sl->count;
          s->n_classes[by] = r + 1;
        }
      else
        {
          sl->cls = ML_PALETTE_N;
          other->area += sl->area;
          other->peak_bytes += sl->peak_bytes;
          other->count += sl->count;
        }
    }
  if (by == ML_COLOR_BY_SITE)
    {
      uint64_t keys[ML_PALETTE_N];
      for (size_t r = 0; r < s->n_classes[by]; r++)
        keys[r] = order[r]->key;
      if (distinct_site_labels (s, keys, s->n_classes[by]) < 0)
        {
          free (order);
          return -1;
        }
    }
  if (other->count)
    {
      char tmp[64];
      snprintf (tmp, sizeof tmp, "%zu others", k->n - ML_PALETTE_N);
      other->label = strdup (tmp);
      if (!other->label)
        {
          free (order);
          return -1;
        }
    }
  for (size_t i = 0; i < s->n_items; i++)
    s->items[i].cls[by] = (uint8_t) k->slots[slot_of[i]].cls;
  free (order);
  return 0;
}

/* The classes of colouring @by (@frames: the frames expression's groups,
 * for ML_COLOR_BY_FRAMES; NULL: every buffer "(none)"). */
static int
build_one (MlScene *s, MlColorBy by, uint32_t *slot_of, const MlGroupKeys *frames)
{
  int rc = 0;
  uint64_t lbt = s->bufs->lower_bound_tick;
  Keys k = { 0 };
  ml_u64map_init (&k.map);
  for (size_t i = 0; i < s->n_items; i++)
    {
      const MlSceneItem *it = &s->items[i];
      const MlBuffer *b = &s->bufs->buf[it->buffer];
      uint64_t key = by == ML_COLOR_BY_SITE ? site_key (s->bufs, b)
                   : by == ML_COLOR_BY_STREAM ? b->stream
                   : by == ML_COLOR_BY_KIND ? kind_key (b->flags) : group_key (s, by, it->buffer, frames);
      long sl = keys_slot (&k, key);
      if (sl < 0)
        {
          rc = -1;
          break;
        }
      Slot *x = &k.slots[sl];
      x->area += (double) it->size * (double) (it->end - it->start);
      x->count++;
      if (it->start <= lbt && lbt < it->end)
        x->peak_bytes += it->size;
      slot_of[i] = (uint32_t) sl;
    }
  if (rc == 0 && by == ML_COLOR_BY_SITE && k.n == 1 && k.slots[0].key == 0)
    {
      /* no names and no call sites (planning instances): one colour
       * per buffer, so neighbours can be told apart */
      s->site_per_buffer = true;
      for (size_t i = 0; i < s->n_items; i++)
        {
          uint64_t h = s->bufs->buf[s->items[i].buffer].id * 0x9E3779B97F4A7C15ull;
          s->items[i].cls[by] = (uint8_t) ((h >> 32) % ML_PALETTE_N);
        }
    }
  else if (rc == 0)
    rc = assign_classes (s, by, &k, slot_of, frames);
  free (k.slots);
  ml_u64map_clear (&k.map);
  return rc;
}

/* Colouring @by's classes forgotten (to be built again). */
static void
clear_classes (MlScene *s, MlColorBy by)
{
  for (int k = 0; k <= ML_PALETTE_N; k++)
    free (s->classes[by][k].label);
  memset (s->classes[by], 0, sizeof s->classes[by]);
  s->n_classes[by] = 0;
}

int
ml_scene_color_frames (MlScene *s, const char *regex, MlError *err)
{
  MlGroupKeys keys = { 0 };
  bool any = regex && *regex;
  if (any)
    {
      regex_t re;
      int rc = regcomp (&re, regex, REG_EXTENDED);
      if (rc != 0)
        {
          char why[128];
          regerror (rc, &re, why, sizeof why);
          return ml_error_set (err, ML_EUSAGE, "colour by frames: \"%s\" is not a regular expression: %s", regex, why);
        }
      regfree (&re);
      MlGroupBy by = { ML_GROUP_FRAMES, regex };
      if ((rc = ml_group_keys (s->bufs, &by, &keys, err)) < 0)
        return rc;
    }
  uint32_t *slot_of = malloc ((s->n_items ? s->n_items : 1) * sizeof *slot_of);
  char *copy = any ? strdup (regex) : NULL;
  int rc = -1;
  if (slot_of && (copy || !any))
    {
      clear_classes (s, ML_COLOR_BY_FRAMES);
      free (s->frames_regex);
      s->frames_regex = copy, copy = NULL;
      rc = build_one (s, ML_COLOR_BY_FRAMES, slot_of, any ? &keys : NULL);
    }
  free (copy);
  free (slot_of);
  ml_group_keys_clear (&keys);
  return rc < 0 ? ml_error_set (err, ML_ENOMEM, "out of memory for the colour classes") : 0;
}

int
ml_color_by_check (const MlTrace *t, MlColorBy by, const char *regex, MlError *err)
{
  MlGroupBy g = { ML_GROUP_FRAMES, regex ? regex : "frames" };
  if (by == ML_COLOR_BY_COMPILE_CONTEXT)
    g.mode = ML_GROUP_COMPILE_CONTEXT;
  else if (by == ML_COLOR_BY_USER_METADATA)
    g.mode = ML_GROUP_USER_METADATA;
  else if (by != ML_COLOR_BY_FRAMES)
    return 0;
  return ml_group_check (t, &g, err);
}

int
_ml_scene_build_classes (MlScene *s, const char *frames_regex, MlError *err)
{
  uint32_t *slot_of = malloc ((s->n_items ? s->n_items : 1) * sizeof *slot_of);
  int rc = slot_of ? 0 : -1;
  for (int by = 0; by < ML_COLOR_BY__COUNT && rc == 0; by++)
    if (by != ML_COLOR_BY_FRAMES)
      rc = build_one (s, (MlColorBy) by, slot_of, NULL);
  free (slot_of);
  if (rc < 0)
    return ml_error_set (err, ML_ENOMEM, "out of memory for the colour classes of %zu buffers", s->n_items);
  return ml_scene_color_frames (s, frames_regex, err);
}
