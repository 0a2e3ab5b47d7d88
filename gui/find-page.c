/* find-page.c — MlFindPage. */
#include "gui/find-page.h"

#include "sim/base/units.h"

#define ML_FIND_MAX 500

struct _MlFindPage {
  MlListPage parent;
  GArray    *hits;
};

G_DEFINE_FINAL_TYPE (MlFindPage, ml_find_page, ML_TYPE_LIST_PAGE)

static const char *const hint = "Type a name, a call site, a frame (model.py:12), #id, or 0xADDRESS: every buffer that held it; 0xADDRESS@TICK: at that tick; 0xADDRESS@: at the State page's tick.";

void
ml_find_page_set_document (MlFindPage *self, MlDocument *doc, const char *text)
{
  MlListPage *lp = ML_LIST_PAGE (self);
  ml_list_page_clear (lp);
  g_clear_pointer (&self->hits, g_array_unref);
  if (!doc || !text || !*text)
    {
      ml_list_page_set_header (lp, hint);
      return;
    }
  GArray *hits = ml_document_search (doc, doc->runs[0], text, ML_FIND_MAX);
  char a[32], tmp[32], sl[256];
  for (guint i = 0; i < hits->len; i++)
    {
      guint32 k = g_array_index (hits, guint32, i);
      const MlBuffer *b = &doc->bufs->buf[k];
      g_autofree char *sub = g_strdup_printf ("#%" G_GUINT64_FORMAT " · %s · ticks [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ")",
                                              b->id, ml_format_size (b->size, a, sizeof a), b->start, b->end);
      MlTarget t = { ML_TARGET_BUFFER, b->start, (long) k, -1, i };
      ml_list_page_append (lp, ml_short_label (ml_document_buffer_label (doc, k, tmp, sizeof tmp), sl, sizeof sl), sub, &t);
    }
  g_autofree char *count = g_strdup_printf (hits->len >= ML_FIND_MAX ? "%u+ buffers match (outlined)"
                                                                     : "%u buffers match (outlined)", hits->len);
  ml_list_page_set_header (lp, count);
  self->hits = hits;
}

GArray *
ml_find_page_get_hits (MlFindPage *self)
{
  return self->hits;
}

static void
ml_find_page_finalize (GObject *obj)
{
  g_clear_pointer (&ML_FIND_PAGE (obj)->hits, g_array_unref);
  G_OBJECT_CLASS (ml_find_page_parent_class)->finalize (obj);
}

static void
ml_find_page_class_init (MlFindPageClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = ml_find_page_finalize;
}

static void
ml_find_page_init (MlFindPage *self)
{
  ml_list_page_set_header (ML_LIST_PAGE (self), hint);
}
