/* peaks-page.c — MlPeaksPage. */
#include "gui/peaks-page.h"

#include "sim/base/units.h"

struct _MlPeaksPage {
  MlListPage parent;
  GArray    *shown;   /* guint: the peak points listed */
};

G_DEFINE_FINAL_TYPE (MlPeaksPage, ml_peaks_page, ML_TYPE_LIST_PAGE)

gboolean
ml_peaks_near (const MlPeak *p, const MlPeak *q, guint64 end_tick)
{
  guint64 window = MAX ((guint64) ML_PEAKS_MERGE_TICKS, end_tick / 100);
  guint64 dt = p->tick > q->tick ? p->tick - q->tick : q->tick - p->tick;
  guint64 hi = MAX (p->live, q->live), lo = MIN (p->live, q->live);
  return dt <= window && (double) (hi - lo) <= ML_PEAKS_MERGE_FRACTION * (double) hi;
}

GArray *
ml_peaks_page_get_shown (MlPeaksPage *self)
{
  return self->shown;
}

void
ml_peaks_page_set_document (MlPeaksPage *self, MlDocument *d)
{
  MlListPage *lp = ML_LIST_PAGE (self);
  ml_list_page_clear (lp);
  g_array_set_size (self->shown, 0);
  ml_list_page_set_header (lp, NULL);
  if (!d)
    return;
  char a[32], b[32];
  gsize merged = 0;
  for (size_t i = 0; i < d->peaks.n; i++)
    {
      const MlPeak *p = &d->peaks.peaks[i];
      /* a plateau gives many local maxima of one level a few ticks apart:
       * list it once, at its highest (the first: largest first) */
      gboolean near = FALSE;
      for (guint k = 0; k < self->shown->len && !near; k++)
        near = ml_peaks_near (p, &d->peaks.peaks[g_array_index (self->shown, guint, k)], d->bufs->end_tick);
      if (near)
        {
          merged++;
          continue;
        }
      guint idx = (guint) i;
      g_array_append_val (self->shown, idx);
      g_autofree char *title = g_strdup_printf ("%s %s live at tick %" G_GUINT64_FORMAT,
                                                i == 0 ? "Peak:" : "Local max:",
                                                ml_format_size (p->live, a, sizeof a), p->tick);
      GString *sub = g_string_new (NULL);
      g_string_append_printf (sub, "%zu buffers live", p->n_live);
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
  if (merged)
    {
      g_autofree char *h = g_strdup_printf ("%zu more local maxima lie within %.0f%% and a few ticks of one listed "
                                            "(the same plateau): not repeated.", merged, ML_PEAKS_MERGE_FRACTION * 100);
      ml_list_page_set_header (lp, h);
    }
}

static void
ml_peaks_page_finalize (GObject *obj)
{
  g_array_unref (ML_PEAKS_PAGE (obj)->shown);
  G_OBJECT_CLASS (ml_peaks_page_parent_class)->finalize (obj);
}

static void
ml_peaks_page_class_init (MlPeaksPageClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = ml_peaks_page_finalize;
}

static void
ml_peaks_page_init (MlPeaksPage *self)
{
  self->shown = g_array_new (FALSE, FALSE, sizeof (guint));
}
