/* OOM diagnosis: the verdict on crafted fragmentation and capacity cases,
 * blame by call site, alternatives, alignment what-ifs, a recorded OOM. */
#include "tests/tap.h"

#include "sim/analysis/diagnose.h"
#include "sim/formats/load.h"
#include "strategies/registry.h"

#define H "{\"format\":\"memlens-trace\",\"version\":1,\"alignment\":1}\n"
#define A(id, size, site) "{\"kind\":\"alloc\",\"id\":" #id ",\"size\":" #size ",\"site\":\"" site "\"}\n"
#define F(id) "{\"kind\":\"free\",\"id\":" #id "}\n"

typedef struct {
  MlTrace *t;
  MlBuffers *b;
  MlPlan *p;
  MlDiagnosis d;
  int rc;
} Case;

static void
diagnose (Case *c, const char *text, const char *strategy, uint64_t capacity, uint64_t align)
{
  memset (c, 0, sizeof *c);
  char *path = tap_write_temp (text, ".jsonl");
  MlError err = { 0 };
  c->rc = ml_trace_load (path, NULL, &c->t, &err);
  unlink (path);
  free (path);
  if (c->rc == 0)
    c->rc = ml_buffers_build (c->t, align, &c->b, &err);
  MlKnobs k;
  ml_knobs_init (&k);
  k.capacity = capacity;
  if (c->rc == 0)
    c->rc = ml_sim_run (c->b, ml_strategy_find (strategy), &k, &c->p, &err);
  if (c->rc == 0)
    c->rc = ml_diagnose (c->b, c->p, capacity, ml_strategies_all (), &k, NULL, &c->d, &err);
  if (c->rc < 0)
    printf ("# %s\n", err.msg);
}

static void
done (Case *c)
{
  ml_diagnosis_clear (&c->d);
  ml_plan_free (c->p);
  ml_buffers_free (c->b);
  ml_trace_free (c->t);
}

int
main (void)
{
  Case c;
  /* 100 + 100 + 100 fill 300; freeing the outer two leaves two holes of
   * 100: 200 bytes free, none can take 150 */
  diagnose (&c, H A(1, 100, "x.py:1") A(2, 100, "y.py:2") A(3, 100, "x.py:1") F(1) F(3) A(4, 150, "z.py:3"),
            "first-fit", 300, 1);
  ok (c.rc == 0 && c.d.oom.hit, "first-fit under 300 runs out");
  ok (c.d.oom.verdict == ML_OOM_FRAGMENTATION, "verdict: fragmentation");
  is_u64 (c.d.oom.tick, 5, "at tick 5");
  is_u64 (c.d.oom.request, 150, "request 150");
  is_u64 (c.d.oom.live, 100, "100 live");
  is_u64 (c.d.oom.free_bytes, 200, "200 free");
  is_u64 (c.d.oom.largest_free, 100, "largest free block 100");
  is_u64 (c.d.n_live_total, 1, "one live buffer to blame");
  is_u64 (c.d.n_sites, 1, "one call site");
  is_str (ml_diagnosis_site_label (c.b, c.d.sites[0].site), "y.py:2", "blamed: y.py:2");
  done (&c);

  /* 100 + 100 live and a request of 150 under 300: not enough bytes */
  diagnose (&c, H A(1, 100, "x.py:1") A(2, 100, "y.py:2") A(3, 100, "x.py:1") F(1) A(4, 150, "z.py:3"),
            "first-fit", 300, 1);
  ok (c.rc == 0 && c.d.oom.hit && c.d.oom.verdict == ML_OOM_CAPACITY, "verdict: capacity");
  is_u64 (c.d.oom.free_bytes, 100, "100 free for a 150 request");
  is_u64 (c.d.requested_live, 200, "200 requested bytes live");
  is_u64 (c.d.n_sites, 2, "two call sites");
  is_str (ml_diagnosis_site_label (c.b, c.d.sites[0].site), "x.py:1", "x.py:1 first");
  is_u64 (c.d.sites[0].bytes, 100, "100 bytes each");
  done (&c);

  /* the alternatives: a best-fit hole of exactly the right size */
  diagnose (&c, H A(1, 100, "a") A(2, 10, "b") A(3, 60, "c") A(4, 10, "d") F(1) F(3) A(5, 60, "e") A(6, 100, "f"),
            "first-fit", 180, 1);
  ok (c.rc == 0 && c.d.oom.hit, "first-fit puts 60 in the 100 hole and runs out");
  bool best_fits = false;
  uint64_t headroom = 0;
  for (size_t i = 0; i < c.d.n_alts; i++)
    if (strcmp (c.d.alts[i].name, "best-fit") == 0)
      {
        best_fits = !c.d.alts[i].oom.hit;
        headroom = 180 - c.d.alts[i].peak;
      }
  ok (best_fits, "best-fit fits under 180");
  is_u64 (headroom, 0, "with 0 bytes of headroom (peak 180)");
  done (&c);

  /* alignment what-ifs: sizes 100 and 30 under alignment 64 */
  diagnose (&c, H A(1, 100, "a") A(2, 30, "b"), "first-fit", 1000, 64);
  ok (c.rc == 0 && !c.d.oom.hit, "fits under 1000");
  bool seen1 = false, seen64 = false;
  for (size_t i = 0; i < c.d.n_what_if; i++)
    {
      if (c.d.what_if[i].align == 1)
        seen1 = c.d.what_if[i].lower_bound == 130;
      if (c.d.what_if[i].align == 64)
        seen64 = c.d.what_if[i].lower_bound == 192;
    }
  ok (seen1, "align 1: lower bound 130");
  ok (seen64, "align 64: lower bound 192 (128 + 64)");
  done (&c);

  /* a recorded OOM with addresses: 2 segments of 100, 50 + 40 free in them */
  diagnose (&c,
            "{\"format\":\"memlens-trace\",\"version\":1,\"alignment\":1}\n"
            "{\"kind\":\"segment_alloc\",\"id\":1,\"addr\":1000,\"size\":100}\n"
            "{\"kind\":\"segment_alloc\",\"id\":2,\"addr\":2000,\"size\":100}\n"
            "{\"kind\":\"alloc\",\"id\":1,\"addr\":1000,\"size\":50}\n"
            "{\"kind\":\"alloc\",\"id\":2,\"addr\":2000,\"size\":60}\n"
            "{\"kind\":\"oom\",\"size\":80,\"device_free\":20}\n",
            "first-fit", 0, 1);
  ok (c.rc == 0 && c.d.recorded, "the recorded OOM is found");
  ok (c.d.rec_have_plan, "from the recorded addresses");
  is_u64 (c.d.rec_request, 80, "request 80");
  is_u64 (c.d.rec_cached_free, 90, "90 cached free");
  is_u64 (c.d.rec_largest_cached, 50, "largest cached block 50");
  ok (c.d.rec_verdict == ML_OOM_FRAGMENTATION, "90 cached + 20 device >= 80: fragmentation");
  done (&c);
  return tap_done ();
}
