/* window.h — MlWindow: one trace, its timeline(s), lists and knobs.
 *
 * Layout: a header bar (open, the device selector for files with several
 * devices, strategy drop-down, compare toggle and its
 * second drop-down, search, zoom, export and view menus); the main area
 * with the timeline (and the second one in compare mode, sharing the
 * time span), the overview strip of live bytes with the visible window,
 * and a progress bar with a cancel button while a worker runs; a side
 * panel with pages Details (the selected buffer and its stack), Peaks,
 * Issues (races and OOMs), Search, Compare (the table of strategies) and
 * Knobs (alignment, capacity, chunk, time limit, strategy options).
 *
 * Window actions (reachable from menus, shortcuts and tests):
 *   win.zoom-in, win.zoom-out, win.zoom-fit, win.pan-left, win.pan-right,
 *   win.select-range((dd)) zoom to ticks [t0, t1),
 *   win.select-buffer(i) select a buffer by index (-1 none),
 *   win.strategy(s), win.strategy2(s), win.compare(b) (stateful),
 *   win.device(i) reload the file reading device i (stateful),
 *   win.compare-file (File → Compare with…), win.stop-comparing,
 *   win.color-by(s), win.time-axis(s) ("auto", "ticks", "time"),
 *   win.toggle-time-axis (the T key), win.plot(s) ("address", "active",
 *   "segments") (stateful),
 *   win.export((ss)) format ("png", "svg", "pdf"; reports "html", "md",
 *   "json", "csv") and path,
 *   win.export-dialog(s), win.apply-knobs, win.compare-all, win.cancel,
 *   win.search, win.show-panel(b), win.close.
 */
#ifndef ML_GUI_WINDOW_H
#define ML_GUI_WINDOW_H

#include <gtk/gtk.h>

#include "gui/document.h"
#include "gui/peaks-page.h"
#include "gui/state-page.h"
#include "gui/tune-page.h"
#include "gui/timeline-view.h"

G_BEGIN_DECLS

#define ML_TYPE_WINDOW (ml_window_get_type ())
G_DECLARE_FINAL_TYPE (MlWindow, ml_window, ML, WINDOW, GtkApplicationWindow)

MlWindow *ml_window_new (GtkApplication *app);

/* Shows @recent (the application's recent files; the window keeps a
 * reference) under the Open menu. */
void ml_window_set_recent_menu (MlWindow *self, GMenuModel *recent);

/* Loads @path in a worker; the window shows progress and stays usable.
 * Emits "job-finished" (gboolean ok) when done, and before it
 * "file-opened" (const char *path) when the file opened (a file opened
 * to compare emits it too): the application keeps its recent files. */
void ml_window_open_path   (MlWindow *self, const char *path);
/* Shows the open dialog. */
void ml_window_choose_file (MlWindow *self);
/* The device the next ml_window_open_path() reads (-1: the reader's
 * choice); later opens start from their file's default again. */
void ml_window_set_initial_device (MlWindow *self, int device);
/* Reloads the document's file reading @device (as the device selector
 * does); FALSE when the file holds no such device. */
gboolean ml_window_show_device (MlWindow *self, guint device);
/* "device 1 of 3: it recorded an OOM (14 trace entries)": which device
 * the window shows and why ("the pinned host memory (host_segments,
 * host_traces)" for --device host); NULL for files with one device.
 * Free it. */
char *ml_window_dup_device_text (MlWindow *self);
/* Strategies to use for the next load (NULL = default / no compare). */
void ml_window_set_initial_strategies (MlWindow *self, const char *strategy, const char *compare);

/* Loads @path as a second file, drawn below the first on one time and
 * byte scale (linked zoom; the same strategy; a changed strategy re-runs
 * both). Called before the first file has loaded, it waits for it. */
void ml_window_compare_with (MlWindow *self, const char *path);
/* Drops the second file. */
void ml_window_stop_comparing (MlWindow *self);
/* The second file's document (borrowed), or NULL. */
MlDocument *ml_window_get_document2 (MlWindow *self);
/* The document shown (borrowed; NULL before a file is loaded). */
MlDocument *ml_window_get_document (MlWindow *self);
/* Timeline @i (0, or 1 in compare mode). */
MlTimelineView *ml_window_get_timeline (MlWindow *self, int i);
/* Whether a worker is running. */
gboolean ml_window_is_busy (MlWindow *self);
/* The text of the details panel (for tests). */
char *ml_window_dup_details_text (MlWindow *self);
/* Writes the current view (both timelines in compare mode) as @format
 * ("png", "svg", "pdf") or the report ("md") to @path. */
gboolean ml_window_export (MlWindow *self, const char *format, const char *path, GError **error);
/* Writes the project's report (render/report/report.h) to @path (.html, .md, .json,
 * .csv) in a worker; "job-finished" tells when it is done. */
void ml_window_export_report (MlWindow *self, const char *path);
/* Chooses peak group @index in the Peaks list (as a click does): the
 * view centres on its first tick at its level, outlines what is live
 * there and selects the largest buffer. FALSE when there is no such
 * peak. */
gboolean ml_window_show_peak (MlWindow *self, guint index);
/* Shows the State page at @tick (the allocator's blocks after its
 * events) and marks the tick on the timeline. */
gboolean ml_window_show_state (MlWindow *self, guint64 tick);
/* The Peaks page (borrowed; for tests). */
MlPeaksPage *ml_window_get_peaks_page (MlWindow *self);
/* The State page (borrowed; for tests). */
MlStatePage *ml_window_get_state_page (MlWindow *self);
/* Shows the Settings page (a snapshot's allocator settings: memlens
 * tune's answer and the reserved curves) and returns it (borrowed). */
MlTunePage *ml_window_show_tune_page (MlWindow *self);
/* Types @text into the knob entry @name ("align", "capacity", "chunk",
 * "time-limit", "options"); win.apply-knobs then re-runs. */
gboolean ml_window_set_knob (MlWindow *self, const char *name, const char *text);
/* The Knobs page's last sweep (borrowed), or NULL. */
const MlKnobSweep *ml_window_get_sweep (MlWindow *self);
/* The device drop-down (borrowed; for tests). */
GtkWidget *ml_window_get_device_selector (MlWindow *self);
/* The search entry in the header, and the buffers its text found (the
 * Find page's, outlined in the timeline; NULL when nothing is searched). */
GtkWidget *ml_window_get_search_entry (MlWindow *self);
const GArray *ml_window_get_search_hits (MlWindow *self);
/* The banner's message (NULL when it is not on screen; borrowed). */
const char *ml_window_get_message (MlWindow *self);
/* Shows a message in the window's banner. */
void ml_window_show_message (MlWindow *self, const char *text);

G_END_DECLS

#endif
