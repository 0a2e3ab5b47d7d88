/* Units, the string table, the treap, the hash map and the radix sort. */
#include "tests/tap.h"

#include "sim/base/array.h"
#include "sim/base/btree.h"
#include "sim/base/sort.h"
#include "sim/base/strtab.h"
#include "sim/base/treap.h"
#include "sim/base/u64map.h"
#include "sim/base/units.h"

static void
test_units (void)
{
  uint64_t v;
  MlError err = { 0 };
  ok (ml_parse_size ("40G", &v, &err) == 0 && v == 40ull << 30, "40G");
  ok (ml_parse_size ("256M", &v, &err) == 0 && v == 256ull << 20, "256M");
  ok (ml_parse_size ("4K", &v, &err) == 0 && v == 4096, "4K");
  ok (ml_parse_size ("4kib", &v, &err) == 0 && v == 4096, "4kib");
  ok (ml_parse_size ("1.5GiB", &v, &err) == 0 && v == 3ull << 29, "1.5GiB");
  ok (ml_parse_size ("1048576", &v, &err) == 0 && v == 1048576, "plain bytes");
  ok (ml_parse_size ("-4", &v, &err) < 0, "negative refused");
  has_str (err.msg, "negative", "message says negative");
  ok (ml_parse_size ("12Q", &v, &err) < 0, "unknown unit refused");
  has_str (err.msg, "'Q'", "message names the unit");
  ok (ml_parse_size ("99999999999999999999", &v, &err) < 0, "overflow refused");
  ok (ml_parse_size ("20000000000G", &v, &err) < 0, "overflow with unit refused");
  ok (ml_parse_size ("", &v, &err) < 0, "empty refused");
  double s;
  ok (ml_parse_duration ("10s", &s, &err) == 0 && s == 10, "10s");
  ok (ml_parse_duration ("500ms", &s, &err) == 0 && s == 0.5, "500ms");
  ok (ml_parse_duration ("2m", &s, &err) == 0 && s == 120, "2m");
  ok (ml_parse_duration ("x", &s, &err) < 0, "bad duration refused");
  char buf[32];
  is_str (ml_format_size (512, buf, sizeof buf), "512 B", "format bytes");
  is_str (ml_format_size (1536, buf, sizeof buf), "1.50 KiB", "format KiB");
  is_str (ml_format_size (40ull << 30, buf, sizeof buf), "40.00 GiB", "format GiB");
  /* decimals scaled exactly: Kineto's ts (µs, three decimals) in ns */
  int64_t ns;
#define DEC(text, scale, want) \
  ok (ml_parse_decimal_scaled (text, strlen (text), scale, &ns) == 0 && ns == (want), "%s x 10^%d = %s", text, scale, #want)
  DEC ("1700000000123456.789", 3, INT64_C (1700000000123456789));
  DEC ("1700000000123456.7895", 3, INT64_C (1700000000123456790));
  DEC ("-12", 3, INT64_C (-12000));
  DEC ("1.5e3", 0, INT64_C (1500));
  DEC ("25E-1", 0, INT64_C (3));
  DEC ("0.0004", 3, INT64_C (0));
  DEC ("9223372036854775807", 0, INT64_MAX);
  DEC ("1e-400", 3, INT64_C (0));
#undef DEC
  volatile double us = 1700000000123456.789;
  ok ((int64_t) (us * 1000) != INT64_C (1700000000123456789), "(through a double it is %" PRId64 ")", (int64_t) (us * 1000));
  static const char *const bad[] = { "", "-", ".", "1e", "1x", "0x10", "9223372036854775808", "1e19", " 1", "nan" };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ok (ml_parse_decimal_scaled (bad[i], strlen (bad[i]), 0, &ns) == ML_EINPUT, "\"%s\" refused", bad[i]);
}

static void
test_strtab (void)
{
  MlStrtab *t = ml_strtab_new ();
  is_u64 (ml_strtab_intern0 (t, ""), 0, "empty string is index 0");
  uint32_t a = ml_strtab_intern0 (t, "alpha"), b = ml_strtab_intern0 (t, "beta");
  ok (a != b && a != 0, "distinct strings, distinct indexes");
  is_u64 (ml_strtab_intern0 (t, "alpha"), a, "interning twice gives the same index");
  const char *pa = ml_strtab_get (t, a);
  for (int i = 0; i < 100000; i++)
    {
      char s[32];
      snprintf (s, sizeof s, "s%d", i);
      ml_strtab_intern0 (t, s);
    }
  ok (pa == ml_strtab_get (t, a), "borrowed pointers stay valid as the table grows");
  is_str (ml_strtab_get (t, b), "beta", "lookup");
  is_u64 (ml_strtab_count (t), 100003, "count");
  ml_strtab_free (t);
  ml_strtab_free (NULL);
  /* names are valid UTF-8 whatever bytes came in (issue 26 item 10) */
  t = ml_strtab_new ();
  uint32_t u = ml_strtab_intern0 (t, "caf\xed\xb3\xa9 \xc0\xaf \xf4\x90\x80\x80 \xe2\x82 ok \xe2\x82\xac \xf0\x9f\x98\x80");
  is_str (ml_strtab_get (t, u), "caf\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd "
          "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd ok \xe2\x82\xac \xf0\x9f\x98\x80",
          "a surrogate, an overlong '/', past U+10FFFF, a cut sequence: U+FFFD a byte; the euro sign and an emoji kept");
  is_u64 (ml_strtab_intern0 (t, "caf\xed\xb3\xa9 \xc0\xaf \xf4\x90\x80\x80 \xe2\x82 ok \xe2\x82\xac \xf0\x9f\x98\x80"), u,
          "the same bytes find the same name");
  ml_strtab_free (t);
}

static uint64_t rng = 42;
static uint64_t
rnd (void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static void
test_treap (void)
{
  MlTreap t;
  ml_treap_init (&t);
  /* free-block map: key = offset, value = size */
  must (ml_treap_insert (&t, 0, 0, 10) != ML_TREAP_NIL);
  must (ml_treap_insert (&t, 100, 0, 50) != ML_TREAP_NIL);
  must (ml_treap_insert (&t, 300, 0, 20) != ML_TREAP_NIL);
  must (ml_treap_insert (&t, 500, 0, 80) != ML_TREAP_NIL);
  uint32_t n = ml_treap_first_with_value (&t, 30, NULL);
  is_u64 (t.nodes[n].a, 100, "first fit for 30 is at 100");
  n = ml_treap_first_with_value (&t, 60, NULL);
  is_u64 (t.nodes[n].a, 500, "first fit for 60 is at 500");
  ok (ml_treap_first_with_value (&t, 81, NULL) == ML_TREAP_NIL, "nothing fits 81");
  n = ml_treap_first_with_value_from (&t, 101, 0, 15, NULL);
  is_u64 (t.nodes[n].a, 300, "next fit from 101 for 15 is at 300");
  n = ml_treap_predecessor (&t, 300, 0, NULL);
  is_u64 (t.nodes[n].a, 100, "predecessor of 300");
  n = ml_treap_lower_bound (&t, 301, 0, NULL);
  is_u64 (t.nodes[n].a, 500, "lower bound of 301");
  ok (ml_treap_remove (&t, 500, 0), "remove");
  ok (!ml_treap_remove (&t, 500, 0), "remove twice fails");
  is_u64 (ml_treap_max_value (&t), 50, "max after removal");
  ml_treap_set_value (&t, 0, 0, 70);
  is_u64 (ml_treap_max_value (&t), 70, "max follows set_value");
  ml_treap_clear (&t);

  /* random operations against a plain array */
  enum { N = 2000 };
  static uint64_t val[N];
  static int present[N];
  int bad = 0;
  ml_treap_init (&t);
  for (int step = 0; step < 20000; step++)
    {
      int k = (int) (rnd () % N);
      if (present[k])
        {
          ml_treap_remove (&t, (uint64_t) k, 0);
          present[k] = 0;
        }
      else
        {
          val[k] = rnd () % 1000;
          must (ml_treap_insert (&t, (uint64_t) k, 0, val[k]) != ML_TREAP_NIL);
          present[k] = 1;
        }
      uint64_t want_v = rnd () % 1000;
      int want = -1;
      for (int i = 0; i < N; i++)
        if (present[i] && val[i] >= want_v)
          {
            want = i;
            break;
          }
      uint32_t got = ml_treap_first_with_value (&t, want_v, NULL);
      if ((want < 0) != (got == ML_TREAP_NIL) || (want >= 0 && t.nodes[got].a != (uint64_t) want))
        bad++;
    }
  is_u64 (bad, 0, "first_with_value agrees with a linear scan over 20000 random steps");
  ml_treap_clear (&t);
}

static void
test_u64map (void)
{
  MlU64Map m;
  ml_u64map_init (&m);
  int bad = 0;
  for (uint64_t i = 0; i < 50000; i++)
    must (ml_u64map_put (&m, i * 7919, (uint32_t) i) >= 0);
  for (uint64_t i = 0; i < 50000; i += 2)
    ml_u64map_del (&m, i * 7919);
  for (uint64_t i = 0; i < 50000; i++)
    {
      uint32_t v;
      bool found = ml_u64map_get (&m, i * 7919, &v);
      if (found != (i % 2 == 1) || (found && v != i))
        bad++;
    }
  is_u64 (bad, 0, "hash map: 50000 puts, 25000 deletes, all lookups right");
  is_u64 (m.n, 25000, "hash map count");
  ml_u64map_clear (&m);
}

static void
test_sort (void)
{
  enum { N = 100000 };
  static uint64_t keys[N];
  static uint32_t idx[N];
  for (int i = 0; i < N; i++)
    {
      keys[i] = rnd () % 5000;
      idx[i] = (uint32_t) i;
    }
  must (ml_sort_indexes_by_key (idx, N, keys, sizeof keys[0]) >= 0);
  int bad = 0;
  for (int i = 1; i < N; i++)
    if (keys[idx[i - 1]] > keys[idx[i]] || (keys[idx[i - 1]] == keys[idx[i]] && idx[i - 1] > idx[i]))
      bad++;
  is_u64 (bad, 0, "radix sort is sorted and stable");
}

/* The B+ tree against a sorted array: inserts and removes up to 60,000
 * keys (four levels), walks, lookups, first fit, next fit, the maximum. */
static uint64_t bt_rng = 99;
static uint64_t
bt_rnd (void)
{
  bt_rng ^= bt_rng << 13;
  bt_rng ^= bt_rng >> 7;
  bt_rng ^= bt_rng << 17;
  return bt_rng;
}

static int
cmp_key (const void *x, const void *y)
{
  uint64_t a = *(const uint64_t *) x, b = *(const uint64_t *) y;
  return a < b ? -1 : a > b;
}

static void
test_btree (void)
{
  enum { MAXK = 60000 };
  uint64_t *keys = malloc (MAXK * sizeof *keys), *sorted = malloc (MAXK * sizeof *sorted);
  size_t nk = 0;
  int bad_walk = 0, bad_find = 0, bad_first = 0, bad_next = 0, bad_max = 0, checks = 0;
  unsigned max_height = 0;
  MlBTree t;
  ml_btree_init (&t, true);
  int steps = tap_quick () ? 60000 : 300000;
  for (int it = 0; it < steps; it++)
    {
      bool grow = it < steps / 2 ? bt_rnd () % 3 != 0 : bt_rnd () % 5 == 0;
      if (nk && (!grow || nk == MAXK))
        {
          size_t k = bt_rnd () % nk;
          MlBtPos q = ml_btree_lower_bound (&t, keys[k], 0, NULL);
          if (!ml_btree_at_or_next (&t, &q) || ml_btree_a (&t, q) != keys[k])
            bad_find++;
          else
            ml_btree_remove (&t, q);
          keys[k] = keys[--nk];
        }
      else
        {
          uint64_t a = bt_rnd () % 10000000;
          MlBtPos q = ml_btree_lower_bound (&t, a, 0, NULL);
          if (ml_btree_at_or_next (&t, &q) && ml_btree_a (&t, q) == a)
            continue;
          if (ml_btree_insert (&t, a, 0, a % 977) < 0)
            bad_find++;
          keys[nk++] = a;
        }
      if (t.height > max_height)
        max_height = t.height;
      if (it % (tap_quick () ? 6000 : 1500) != 0)
        continue;
      checks++;
      memcpy (sorted, keys, nk * sizeof *keys);
      qsort (sorted, nk, sizeof *sorted, cmp_key);
      MlBtPos p = ml_btree_lower_bound (&t, 0, 0, NULL), before;
      size_t i = 0;
      for (; ml_btree_at_or_next (&t, &p); p.i++, i++)
        if (i >= nk || ml_btree_a (&t, p) != sorted[i])
          break;
      if (i != nk || t.count != nk)
        bad_walk++;
      uint64_t m = 0;
      for (size_t j = 0; j < nk; j++)
        m = sorted[j] % 977 > m ? sorted[j] % 977 : m;
      if (ml_btree_max (&t) != m)
        bad_max++;
      for (int r = 0; r < 20; r++)
        {
          uint64_t v = bt_rnd () % 980, x = bt_rnd () % 10000000;
          long want = -1, got = -1;
          for (size_t j = 0; j < nk && want < 0; j++)
            if (sorted[j] % 977 >= v)
              want = (long) sorted[j];
          if (ml_btree_first_fit (&t, v, &p, NULL))
            got = (long) ml_btree_a (&t, p);
          bad_first += got != want;
          want = got = -1;
          for (size_t j = 0; j < nk && want < 0; j++)
            if (sorted[j] >= x && sorted[j] % 977 >= v)
              want = (long) sorted[j];
          if (ml_btree_next_fit (&t, ml_btree_lower_bound (&t, x, 0, NULL), v, &p, NULL))
            got = (long) ml_btree_a (&t, p);
          bad_next += got != want;
          /* the entry before x */
          want = -1;
          for (size_t j = 0; j < nk && sorted[j] < x; j++)
            want = (long) sorted[j];
          got = ml_btree_before (&t, ml_btree_lower_bound (&t, x, 0, NULL), &before) ? (long) ml_btree_a (&t, before) : -1;
          bad_find += got != want;
        }
    }
  ok (max_height >= (tap_quick () ? 2u : 3u), "the tree grew to %u inner levels", max_height);
  ok (checks >= 10 && bad_walk == 0, "walks in key order over every key (%d checks)", checks);
  is_u64 (bad_find, 0, "lookups and predecessors agree with the sorted keys");
  is_u64 (bad_first, 0, "first fit agrees");
  is_u64 (bad_next, 0, "next fit agrees");
  is_u64 (bad_max, 0, "the maximum agrees");
  ok (t.count == nk && t.height <= 1, "shrunk back: %zu keys, %u levels", t.count, t.height);
  ml_btree_clear (&t);
  free (keys);
  free (sorted);
}

/* The u64 helpers every planner shares, by hand. */
static void
test_sorted_u64 (void)
{
  uint64_t v[] = { 5, 1, UINT64_MAX, 5, 3, 1 };
  size_t k = ml_sort_unique_u64 (v, 6);
  ok (k == 4 && v[0] == 1 && v[1] == 3 && v[2] == 5 && v[3] == UINT64_MAX, "sort-unique: 1 3 5 max (%zu)", k);
  is_u64 (ml_lower_bound_u64 (v, k, 0), 0, "lower bound of 0: 0");
  is_u64 (ml_lower_bound_u64 (v, k, 3), 1, "lower bound of 3: 1 (one value below)");
  is_u64 (ml_lower_bound_u64 (v, k, 4), 2, "lower bound of 4: 2");
  is_u64 (ml_upper_bound_u64 (v, k, 3), 2, "upper bound of 3: 2 (1 and 3 at or below)");
  is_u64 (ml_upper_bound_u64 (v, k, UINT64_MAX), 4, "upper bound of the maximum: all");
  is_u64 (ml_lower_bound_u64 (v, 0, 7), 0, "an empty array: 0");
  is_u64 (ml_sort_unique_u64 (v, 0), 0, "sort-unique of nothing: 0");
  uint64_t *a = NULL;
  size_t n = 0, cap = 0;
  bool all = true;
  for (uint64_t i = 0; i < 100; i++)
    {
      all &= ML_ARRAY_RESERVE (a, n, cap, 4) == 0;
      a[n++] = i;
    }
  ok (all && n == 100 && cap == 128 && a[99] == 99, "an array grows 4, 8, ... 128 for 100 elements (cap %zu)", cap);
  free (a);
}

int
main (void)
{
  test_units ();
  test_strtab ();
  test_treap ();
  test_btree ();
  test_u64map ();
  test_sort ();
  test_sorted_u64 ();
  return tap_done ();
}
