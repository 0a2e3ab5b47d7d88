/* self-test.h — scripted runs of a real window, for tests and benchmarks.
 *
 * --self-test=DIR: waits for the window's file to load, then drives it
 * through its actions and widgets (zoom, select a range, pick a buffer by
 * the hit test, switch strategy, compare, search, export), checking each
 * step's effect, printing TAP to stdout and writing screenshots and
 * exports to DIR. The process exits 0 when every check passed.
 *
 * --bench=FILE: zooms and pans through a fixed path (fit, zoom in at a
 * point to a few ticks, pan, zoom out), waits for each frame, and writes
 * the frame clock timings (before-paint to after-paint) and the
 * timeline's own drawing time as JSON to FILE.
 */
#ifndef ML_GUI_SELF_TEST_H
#define ML_GUI_SELF_TEST_H

#include "gui/window.h"

G_BEGIN_DECLS

void ml_self_test_start (MlWindow *win, const char *dir, const char *bench_file);
/* The exit status the scripted run asks for (0 when none ran). */
int  ml_self_test_status (void);
/* Whether a scripted run (--self-test or --bench) was started. */
gboolean ml_self_test_ran (void);

G_END_DECLS

#endif
