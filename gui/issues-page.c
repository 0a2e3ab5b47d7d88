/* issues-page.c — MlIssuesPage. */
#include "gui/issues-page.h"

#include "sim/base/units.h"

struct _MlIssuesPage {
  MlListPage parent;
};

G_DEFINE_FINAL_TYPE (MlIssuesPage, ml_issues_page, ML_TYPE_LIST_PAGE)

/* Whether @run's OOM has a row of its own: every one but the recorded
 * run's copy of the trace's own OOM (ml_recorded_oom_mark: no buffer),
 * which is listed with the trace's. */
static gboolean
run_oom (const MlDocument *d, const MlRun *run)
{
  return run && run->plan && run->plan->oom.hit && run->plan->oom.buffer < d->bufs->n;
}

static const char *
short_buffer (const MlDocument *d, long k, char *buf, gsize len)
{
  char tmp[32];
  return ml_short_label (ml_document_buffer_label (d, (guint32) k, tmp, sizeof tmp), buf, len);
}

void
ml_issues_page_set_document (MlIssuesPage *self, MlDocument *d)
{
  MlListPage *lp = ML_LIST_PAGE (self);
  ml_list_page_clear (lp);
  if (!d)
    return;
  char a[32], b[32];
  for (int r = 0; r < 2; r++)
    {
      const MlRun *run = d->runs[r];
      if (!run)
        continue;
      size_t total = ml_issues_count (&run->issues);
      g_autofree char *h = g_strdup_printf ("Races and plan errors in %s: %zu", run->strategy, total);
      ml_list_page_append (lp, h, total ? NULL : "none: the plan is valid", NULL);
      for (size_t i = 0; i < run->issues.n; i++)
        {
          const MlIssue *is = &run->issues.items[i];
          char ta[256], tb[256];
          g_autofree char *title = g_strdup_printf ("%s at tick %" G_GUINT64_FORMAT ": %s / %s",
                                                    ml_issue_kind_name (is->kind), is->tick,
                                                    short_buffer (d, is->a, ta, sizeof ta),
                                                    short_buffer (d, is->b, tb, sizeof tb));
          MlTarget t = { ML_TARGET_RACE, is->tick, is->a, is->b, (guint) i };
          ml_list_page_append (lp, title, is->why, &t);
        }
    }
  gsize n_oom = d->n_oom_ticks;
  for (int r = 0; r < 2; r++)
    if (run_oom (d, d->runs[r]))
      n_oom++;
  g_autofree char *h = g_strdup_printf ("Out of memory: %zu", n_oom);
  guint64 cap = d->knobs.capacity ? d->knobs.capacity : ml_document_trace (d)->capacity;
  ml_list_page_append (lp, h,
                       n_oom ? NULL : cap ? "no strategy shown ran out of the capacity" : "set a capacity in Knobs to simulate OOMs",
                       NULL);
  for (int r = 0; r < 2; r++)
    {
      const MlRun *run = d->runs[r];
      if (!run_oom (d, run))
        continue;
      const MlOom *o = &run->plan->oom;
      g_autofree char *title = g_strdup_printf ("%s: OOM at tick %" G_GUINT64_FORMAT " (%s)", run->strategy, o->tick,
                                                ml_oom_verdict_name (o->verdict));
      char c[32], e[32];
      g_autofree char *sub = g_strdup_printf ("request %s; live %s, free %s, largest free block %s",
                                              ml_format_size (o->request, a, sizeof a), ml_format_size (o->live, b, sizeof b),
                                              ml_format_size (o->free_bytes, c, sizeof c),
                                              ml_format_size (o->largest_free, e, sizeof e));
      MlTarget t = { ML_TARGET_OOM_PLAN, o->tick, (long) o->buffer, -1, (guint) r };
      ml_list_page_append (lp, title, sub, &t);
    }
  const MlTrace *tr = ml_document_trace (d);
  for (gsize i = 0; i < d->n_oom_ticks; i++)
    {
      g_autofree char *title = g_strdup_printf ("Recorded OOM at tick %" G_GUINT64_FORMAT, d->oom_ticks[i]);
      /* the event of its request */
      g_autofree char *sub = NULL;
      GString *stack = g_string_new (NULL);
      for (size_t e = 0; e < tr->n_events; e++)
        if (tr->events[e].kind == ML_EV_OOM && tr->events[e].tick == d->oom_ticks[i])
          {
            const MlEvent *ev = &tr->events[e];
            const char *site = ev->stack && ev->stack < tr->n_stacks ? ml_trace_str (tr, tr->stacks[ev->stack].site) : NULL;
            sub = g_strdup_printf ("request %s, device free %s%s%s", ml_format_size (ev->size, a, sizeof a),
                                   ml_format_size (ev->addr, b, sizeof b), site && *site ? "; at " : "",
                                   site && *site ? site : "");
            /* the failed request's stack, whole, on hover */
            if (ev->stack && ev->stack < tr->n_stacks)
              {
                const MlStack *sk = &tr->stacks[ev->stack];
                for (guint32 f = 0; f < sk->n; f++)
                  {
                    const MlFrame *fr = ml_trace_stack_frame (tr, sk, f);
                    g_string_append_printf (stack, "%s%s  %s:%u", stack->len ? "\n" : "", ml_trace_str (tr, fr->func),
                                            ml_trace_str (tr, fr->file), fr->line);
                  }
              }
            break;
          }
      MlTarget t = { ML_TARGET_OOM_TRACE, d->oom_ticks[i], -1, -1, (guint) i };
      ml_list_page_append_full (lp, title, sub ? sub : "the real allocator failed here", stack->len ? stack->str : NULL, &t);
      g_string_free (stack, TRUE);
    }
}

static void
ml_issues_page_class_init (MlIssuesPageClass *klass)
{
}

static void
ml_issues_page_init (MlIssuesPage *self)
{
}
