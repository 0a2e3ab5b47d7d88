/* state.h — drawing the allocator state at a tick (sim/analysis/state.h).
 *
 * One row per segment reserved at the tick, as wide as the panel, split
 * into its blocks in address order: allocated blocks in their buffer's
 * colour (the scene's colouring), free (cached) blocks light grey,
 * unmapped address space white with a dashed outline; sizes written where
 * they fit. A line on top sums the three. When the rows would be thinner
 * than a line of text, the segments with the most reserved bytes are
 * drawn and the rest counted.
 */
#ifndef ML_RENDER_STATE_H
#define ML_RENDER_STATE_H

#include "render/timeline.h"
#include "sim/analysis/state.h"

void ml_state_draw (cairo_t *cr, const MlRect *area, const MlState *state, const MlScene *scene,
                    const MlStyle *style);

#endif
