/* knobs-page.h — MlKnobsPage: the side panel's Knobs (the run's settings).
 *
 * Entries for alignment, capacity, pool chunk, time limit, retries and
 * strategy options; Enter in any of them, or Apply, activates
 * win.apply-knobs, which reads them back with ml_knobs_page_read().
 *
 * Below them a sweep: a knob with values ("chunk=1M,2M,4M") and the
 * strategies to run; Sweep activates win.sweep-knob, which runs every
 * strategy once per value (sim/analysis/knob-sweep.h) and hands the
 * result to ml_knobs_page_show_sweep(): a plot of the peak against the
 * value, one line per strategy, and the rows as text.
 */
#ifndef ML_GUI_KNOBS_PAGE_H
#define ML_GUI_KNOBS_PAGE_H

#include <gtk/gtk.h>

#include "gui/document.h"

G_BEGIN_DECLS

#define ML_TYPE_KNOBS_PAGE (ml_knobs_page_get_type ())
G_DECLARE_FINAL_TYPE (MlKnobsPage, ml_knobs_page, ML, KNOBS_PAGE, GtkWidget)

/* Shows @doc's alignment and capacity (its knobs, else the trace's
 * implied capacity); NULL leaves the entries. */
void     ml_knobs_page_set_document (MlKnobsPage *self, MlDocument *doc);
/* Parses the entries over @base into @out. FALSE (with the reasons shown
 * on the page and the bad entries marked) when one does not parse. */
gboolean ml_knobs_page_read (MlKnobsPage *self, const MlViewKnobs *base, MlViewKnobs *out);
/* Types @text into entry @name ("align", "capacity", "chunk",
 * "time-limit", "options", "sweep", "sweep-strategies"); FALSE for an
 * unknown name. */
gboolean ml_knobs_page_set_text (MlKnobsPage *self, const char *name, const char *text);

/* The sweep's entries (borrowed until they change). */
const char *ml_knobs_page_get_sweep_spec (MlKnobsPage *self);
const char *ml_knobs_page_get_sweep_strategies (MlKnobsPage *self);
/* Shows @sweep (the page takes it; NULL clears) or, with @sweep NULL and
 * @status set, a message. */
void     ml_knobs_page_show_sweep (MlKnobsPage *self, MlKnobSweep *sweep, const char *status);
/* The sweep shown (borrowed), or NULL. */
const MlKnobSweep *ml_knobs_page_get_sweep (MlKnobsPage *self);
/* The sweep's rows as text, one line per value and strategy (caller frees). */
char    *ml_knobs_page_dup_sweep_text (MlKnobsPage *self);

G_END_DECLS

#endif
