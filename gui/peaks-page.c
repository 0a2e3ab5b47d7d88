/* peaks-page.c — MlPeaksPage. */
#include "gui/peaks-page.h"

#include "sim/base/units.h"

struct _MlPeaksPage {
  MlListPage parent;
};

G_DEFINE_FINAL_TYPE (MlPeaksPage, ml_peaks_page, ML_TYPE_LIST_PAGE)

void
ml_peaks_page_set_document (MlPeaksPage *self, MlDocument *d)
{
  MlListPage *lp = ML_LIST_PAGE (self);
  ml_list_page_clear (lp);
  ml_list_page_set_header (lp, NULL);
  if (!d)
    return;
  char b[32];
  for (size_t i = 0; i < d->peaks.n; i++)
    {
      const MlPeak *p = &d->peaks.peaks[i];
      const MlPeakGroup *g = &d->groups.groups[i];
      char what[160];
      g_autofree char *title = g_strdup_printf ("%s %s", i == 0 ? "Peak:" : "Lower peak:",
                                                ml_peak_group_describe (g, what, sizeof what));
      GString *sub = g_string_new (NULL);
      g_string_append_printf (sub, "at tick %" G_GUINT64_FORMAT ": %zu buffers live", p->tick, p->n_live);
      for (size_t k = 0; k < MIN (p->n_blame, (size_t) 3); k++)
        {
          char tmp[32], sl[256];
          const MlBuffer *bb = &d->bufs->buf[p->blame[k]];
          g_string_append_printf (sub, "%s %s %s", k ? "," : ";",
                                  ml_short_label (ml_document_buffer_label (d, p->blame[k], tmp, sizeof tmp), sl, sizeof sl),
                                  ml_format_size (bb->rsize, b, sizeof b));
        }
      MlTarget t = { ML_TARGET_PEAK, p->tick, p->n_blame ? (long) p->blame[0] : -1, -1, (guint) i };
      ml_list_page_append (lp, title, sub->str, &t);
      g_string_free (sub, TRUE);
    }
  if (d->peaks.n == 0)
    ml_list_page_append (lp, "No buffers: nothing to show", NULL, NULL);
  GString *h = g_string_new (NULL);
  const MlPeakGroups *gs = &d->groups;
  if (gs->iter_group >= 0)
    g_string_append_printf (h, "The trace repeats: %zu iterations, one per occurrence of the %s peak (dotted lines on "
                            "the timeline). ", gs->n_boundaries + 1,
                            ml_format_size (gs->groups[gs->iter_group].live, b, sizeof b));
  if (gs->n_maxima > gs->n)
    g_string_append_printf (h, "%zu more local maxima are wiggles beside a higher peak (within 5%% of the highest) or "
                            "lower: not listed.", gs->n_maxima - gs->n);
  if (h->len)
    ml_list_page_set_header (lp, h->str);
  g_string_free (h, TRUE);
}

static void
ml_peaks_page_class_init (MlPeaksPageClass *klass)
{
}

static void
ml_peaks_page_init (MlPeaksPage *self)
{
}
