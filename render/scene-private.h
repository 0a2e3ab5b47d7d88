/* scene-private.h — what the files of the scene share (scene.h is the
 * public side): scene.c builds it, scene-bands.c its pool / stream bands,
 * scene-classes.c its colour classes. */
#ifndef ML_SCENE_PRIVATE_H
#define ML_SCENE_PRIVATE_H

#include "render/scene.h"

/* Reorders @order (the segments by address, or by index) so that the
 * segments of each (pool, stream) lie together, bands bottom first, and
 * makes scene->bands / seg_band when there are two groups or more (the
 * packed axis only). -1 when out of memory. */
int  _ml_scene_band_order (MlScene *scene, uint32_t *order);
/* Once the segments have their bases: each band's [lo, hi). */
void _ml_scene_band_extents (MlScene *scene);

/* Every colouring's classes (scene-classes.c), the frames one under
 * @frames_regex (NULL: none); ML_EUSAGE for a bad expression, ML_ENOMEM. */
int  _ml_scene_build_classes (MlScene *scene, const char *frames_regex, MlError *err);

#endif
