/* page-groups.c — the interactive page's colourings by what a PyTorch
 * snapshot says each allocation belongs to (page-private.h): its
 * compile_context and its user_metadata, the groups of `stats --group-by`
 * (sim/analysis/groups.h), ranked into classes as the scene ranks call
 * sites: by drawn area (bytes × ticks), ML_PALETTE_N classes, then
 * "N others". Only for a grouping the scene's colourings (MlColorBy)
 * lack. */
#include "render/page-private.h"

#include <stdlib.h>
#include <string.h>

#include "sim/analysis/groups.h"

static const MlGroupMode modes[] = { ML_GROUP_COMPILE_CONTEXT, ML_GROUP_USER_METADATA };

/* Whether some buffer's alloc entry records a text for @mode. */
static bool
any_recorded (const MlBuffers *bufs, MlGroupMode mode)
{
  const MlTrace *t = bufs->trace;
  if (!t || !bufs->alloc_event)
    return false;
  for (size_t i = 0; i < bufs->n; i++)
    {
      if (bufs->alloc_event[i] >= t->n_events)
        continue;
      MlEventMeta m = ml_trace_event_meta (t, bufs->alloc_event[i]);
      uint32_t idx = mode == ML_GROUP_COMPILE_CONTEXT ? m.compile_context : m.user_metadata;
      if (idx && *ml_trace_str (t, idx))
        return true;
    }
  return false;
}

typedef struct {
  double   area;
  uint64_t peak_bytes;
  size_t   count;
  uint32_t group, cls;
  const char *name;
} Rank;

static int
rank_cmp (const void *a, const void *b)
{
  const Rank *x = a, *y = b;
  if (x->area != y->area)
    return x->area > y->area ? -1 : 1;
  return strcmp (x->name, y->name);
}

/* @g's classes and per-item classes from the groups @keys. */
static int
rank_groups (const MlScene *s, const MlGroupKeys *keys, MlPageGrouping *g)
{
  Rank *r = calloc (keys->n_names ? keys->n_names : 1, sizeof *r);
  uint32_t *cls_of = malloc ((keys->n_names ? keys->n_names : 1) * sizeof *cls_of);
  g->cls = malloc (s->n_items ? s->n_items : 1);
  if (!r || !cls_of || !g->cls)
    {
      free (r);
      free (cls_of);
      return -1;
    }
  for (size_t k = 0; k < keys->n_names; k++)
    r[k] = (Rank) { .group = (uint32_t) k, .name = keys->names[k] };
  uint64_t lbt = s->bufs->lower_bound_tick;
  for (size_t i = 0; i < s->n_items; i++)
    {
      const MlSceneItem *it = &s->items[i];
      Rank *x = &r[keys->of_buffer[it->buffer]];
      x->area += (double) it->size * (double) (it->end - it->start);
      x->count++;
      x->peak_bytes += it->start <= lbt && lbt < it->end ? it->size : 0;
    }
  qsort (r, keys->n_names, sizeof *r, rank_cmp);
  int rc = 0;
  MlSceneClass *other = &g->classes[ML_PALETTE_N];
  for (size_t k = 0; k < keys->n_names && rc == 0; k++)
    {
      MlSceneClass *c = k < ML_PALETTE_N ? &g->classes[k] : other;
      cls_of[r[k].group] = k < ML_PALETTE_N ? (uint32_t) k : ML_PALETTE_N;
      if (k < ML_PALETTE_N && !(c->label = strdup (r[k].name)))
        rc = -1;
      c->area += r[k].area;
      c->peak_bytes += r[k].peak_bytes;
      c->count += r[k].count;
    }
  if (rc == 0 && keys->n_names > ML_PALETTE_N)
    {
      char tmp[64];
      snprintf (tmp, sizeof tmp, "%zu others", keys->n_names - ML_PALETTE_N);
      rc = (other->label = strdup (tmp)) ? 0 : -1;
    }
  for (size_t i = 0; i < s->n_items && rc == 0; i++)
    g->cls[i] = (uint8_t) cls_of[keys->of_buffer[s->items[i].buffer]];
  free (r);
  free (cls_of);
  return rc;
}

bool
_ml_page_coloring_empty (const MlScene *s, MlColorBy by)
{
  const MlSceneClass *c = &s->classes[by][0];
  return s->n_items && s->n_classes[by] == 1 && c->label && strcmp (c->label, "(none)") == 0
         && c->count == s->n_items;
}

int
_ml_page_groupings (const MlScene *s, MlPageGrouping *out, size_t *n, MlError *err)
{
  *n = 0;
  for (size_t m = 0; m < sizeof modes / sizeof *modes; m++)
    {
      MlGroupBy by = { modes[m], NULL };
      MlColorBy scene_has;
      if (ml_color_by_parse (ml_group_by_name (&by), &scene_has) == 0)
        continue;
      MlPageGrouping *g = &out[(*n)++];
      memset (g, 0, sizeof *g);
      g->key = ml_group_by_name (&by);
      if (!any_recorded (s->bufs, by.mode))
        {
          g->empty = true;   /* every buffer "(none)": offered, but says so */
          continue;
        }
      MlGroupKeys keys;
      int rc = ml_group_keys (s->bufs, &by, &keys, err);
      if (rc < 0)
        return rc;
      rc = rank_groups (s, &keys, g);
      ml_group_keys_clear (&keys);
      if (rc < 0)
        return ml_error_set (err, ML_ENOMEM, "out of memory for the page's %s colours", g->key);
    }
  return 0;
}

void
_ml_page_groupings_clear (MlPageGrouping *g, size_t n)
{
  for (size_t k = 0; k < n; k++)
    {
      for (size_t c = 0; c <= ML_PALETTE_N; c++)
        free (g[k].classes[c].label);
      free (g[k].cls);
      memset (&g[k], 0, sizeof g[k]);
    }
}
