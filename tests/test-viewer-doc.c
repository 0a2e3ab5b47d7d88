/* The viewer's document model without a display: loading in a worker,
 * re-running with new knobs and strategies, cancelling, searching, times
 * and the races list (gui/document.h). GLib only: runs where Xvfb is
 * missing too. */
#include <glib/gstdio.h>
#include <string.h>

#include "gui/document.h"
#include "sim/recorded.h"
#include "tests/tap.h"

typedef struct {
  GMainLoop  *loop;
  MlDocument *doc;
  GError     *error;
  int         progress_calls;
} Wait;

static void
on_progress (double fraction, const char *what, gpointer user)
{
  ((Wait *) user)->progress_calls++;
}

static void
on_loaded (GObject *src, GAsyncResult *res, gpointer user)
{
  Wait *w = user;
  w->doc = ml_document_load_finish (res, &w->error);
  g_main_loop_quit (w->loop);
}

static void
on_rerun (GObject *src, GAsyncResult *res, gpointer user)
{
  Wait *w = user;
  w->doc = ml_document_rerun_finish (res, &w->error);
  g_main_loop_quit (w->loop);
}

static MlDocument *
load (const char *path, const MlViewKnobs *k, const char *s1, const char *s2, GError **error, int *progress)
{
  Wait w = { g_main_loop_new (NULL, FALSE), NULL, NULL, 0 };
  ml_document_load_async (path, k, s1, s2, NULL, on_progress, &w, on_loaded, &w);
  g_main_loop_run (w.loop);
  g_main_loop_unref (w.loop);
  if (error)
    *error = w.error;
  else
    g_clear_error (&w.error);
  if (progress)
    *progress = w.progress_calls;
  return w.doc;
}

static MlDocument *
rerun (MlDocument *doc, const MlViewKnobs *k, const char *s1, const char *s2, GCancellable *c, GError **error)
{
  Wait w = { g_main_loop_new (NULL, FALSE), NULL, NULL, 0 };
  ml_document_rerun_async (doc, k, s1, s2, c, NULL, NULL, on_rerun, &w);
  if (c)
    g_cancellable_cancel (c);
  g_main_loop_run (w.loop);
  g_main_loop_unref (w.loop);
  *error = w.error;
  return w.doc;
}

/* Three buffers, hand-worked: a [0,2) 100 B, b [1,4) 200 B, c [2,4) 300 B
 * (never freed: the end of the trace is tick 4), alignment 1 (CSV). Live
 * bytes: tick 0: 100, tick 1: 300, tick 2: 500, tick 3: 500. Lower bound 500. */
static const char csv[] =
  "id,lower,upper,size\n"
  "conv1.weight,0,2,100\n"
  "attn.qkv,1,4,200\n"
  "mlp.up,2,4,300\n";

/* Cross-stream reuse: x on stream 1 freed at tick 1, y on stream 2 gets the
 * same address at tick 2 with no sync in between; times 1 µs apart. */
static const char races[] =
  "{\"format\":\"memlens-trace\",\"version\":1,\"alignment\":256}\n"
  "{\"kind\":\"alloc\",\"id\":1,\"addr\":\"0x1000\",\"size\":512,\"stream\":1,\"time_ns\":5000,\"name\":\"x\"}\n"
  "{\"kind\":\"free\",\"id\":1,\"addr\":\"0x1000\",\"stream\":1,\"time_ns\":6000}\n"
  "{\"kind\":\"alloc\",\"id\":2,\"addr\":\"0x1000\",\"size\":512,\"stream\":2,\"time_ns\":7000,\"name\":\"y\"}\n"
  "{\"kind\":\"free\",\"id\":2,\"addr\":\"0x1000\",\"stream\":2,\"time_ns\":8000}\n";

int
main (void)
{
  char *p_csv = tap_write_temp (csv, ".csv");
  char *p_races = tap_write_temp (races, ".jsonl");
  char *p_bad = tap_write_temp ("{\"format\":\"memlens-trace\",\"version\":1}\n{\"kind\":\"free\",\"id\":9}\n", ".jsonl");
  GError *error = NULL;
  int progress = 0;

  /* loading: default strategy without addresses is best-fit */
  MlDocument *doc = load (p_csv, NULL, NULL, NULL, &error, &progress);
  ok (doc != NULL, "the CSV loads in a worker");
  is_u64 (doc->bufs->n, 3, "three buffers");
  is_u64 (doc->bufs->lower_bound, 500, "lower bound 500 (ticks 2 and 3)");
  is_str (doc->runs[0]->strategy, "best-fit", "no addresses: best-fit first");
  ok (doc->runs[1] == NULL, "no second run outside compare mode");
  ok (doc->runs[0]->scene != NULL && doc->runs[0]->scene->n_items == 3, "the run has a scene with three items");
  /* online best-fit: a@0, b@100 (tail), a's hole [0,100) is too small for
   * c at tick 2, so c goes to the tail @300: peak 600 */
  is_u64 (doc->runs[0]->metrics.peak, 600, "best-fit needs 600 (c does not fit a's hole)");
  ok (progress > 0, "progress was reported on the main context (%d calls)", progress);
  ok (doc->peaks.n >= 1 && doc->peaks.peaks[0].live == 500, "the first peak point has 500 B live");
  ok (ml_trace_tick_time (ml_document_trace (doc), 2) == -1, "a CSV has no times");

  /* search */
  GArray *hits = ml_document_search (doc, doc->runs[0], "QKV", 10);
  ok (hits->len == 1 && g_array_index (hits, guint32, 0) == 1, "search is a case-insensitive substring of the name");
  g_array_unref (hits);
  hits = ml_document_search (doc, doc->runs[0], "", 10);
  ok (hits->len == 0, "an empty search finds nothing");
  g_array_unref (hits);
  hits = ml_document_search (doc, doc->runs[0], ".", 2);
  ok (hits->len == 2, "search stops at its limit");
  g_array_unref (hits);
  char tmp[32];
  is_str (ml_document_buffer_label (doc, 2, tmp, sizeof tmp), "mlp.up", "a buffer's label is its name");

  /* re-run: compare mode, alignment 256, a capacity under the lower bound */
  MlViewKnobs k;
  ml_view_knobs_init (&k);
  k.align = 256;
  k.capacity = 600;
  MlDocument *d2 = rerun (doc, &k, "linear", "first-fit", NULL, &error);
  ok (d2 != NULL && d2->box == doc->box, "the re-run shares the loaded trace");
  is_u64 (d2->bufs->align, 256, "alignment 256 rebuilds the lifetimes");
  is_u64 (d2->bufs->lower_bound, 768, "lower bound 768 after rounding (256 + 512)");
  is_str (d2->runs[0]->strategy, "linear", "first run: linear");
  is_str (d2->runs[1]->strategy, "first-fit", "second run: first-fit");
  is_u64 (d2->runs[0]->metrics.peak, 1024, "linear stacks everything: 256 + 256 + 512");
  ok (d2->runs[0]->plan->oom.hit, "linear runs out of 600 B");
  is_u64 (d2->runs[0]->plan->oom.tick, 2, "at tick 2 (c: 512 + 512 > 600)");
  ok (doc->bufs->align == 1 && doc->runs[0]->metrics.peak == 600, "the previous document is unchanged");

  /* cancel */
  GCancellable *c = g_cancellable_new ();
  MlDocument *d3 = rerun (doc, &k, "best-fit", NULL, c, &error);
  ok (d3 == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED), "a cancelled re-run returns G_IO_ERROR_CANCELLED");
  g_clear_error (&error);
  g_object_unref (c);

  /* races and times: the recorded plan, cross-stream reuse */
  MlDocument *dr = load (p_races, NULL, NULL, NULL, &error, NULL);
  ok (dr != NULL, "the race fixture loads");
  is_str (dr->runs[0]->strategy, ml_strategy_recorded.name, "with addresses: the recorded plan first");
  ok (dr->runs[0]->issues.total[ML_ISSUE_CROSS_STREAM] == 1, "one cross-stream reuse is listed");
  ok (ml_trace_tick_time (ml_document_trace (dr), 0) == 0 && ml_trace_tick_time (ml_document_trace (dr), 2) == 2000,
      "times count from the first event (tick 2: 2 µs)");
  hits = ml_document_search (dr, dr->runs[0], "0x1100", 10);
  ok (hits->len == 2, "an address inside both buffers finds both");
  g_array_unref (hits);

  /* a bad file */
  MlDocument *db = load (p_bad, NULL, NULL, NULL, &error, NULL);
  ok (db == NULL && error && strstr (error->message, "9"), "a free of an unknown id is an error naming it: %s",
      error ? error->message : "");
  g_clear_error (&error);

  ml_document_unref (d2);
  ml_document_unref (dr);
  ml_document_unref (doc);
  g_unlink (p_csv);
  g_unlink (p_races);
  g_unlink (p_bad);
  free (p_csv);
  free (p_races);
  free (p_bad);
  return tap_done ();
}
