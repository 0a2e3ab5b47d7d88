/* tap.h — a tiny TAP producer for the test programs (meson protocol 'tap').
 * Asserts stay on in tests: every check prints ok / not ok, and the exit
 * status is the number of failures (capped). */
#ifndef ML_TAP_H
#define ML_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tap_n, tap_failed;

/* True under memcheck (tests/valgrind.sh sets ML_TEST_QUICK): long random
 * loops run a shorter course there; the full course runs natively. */
static inline int
tap_quick (void)
{
  const char *q = getenv ("ML_TEST_QUICK");
  return q && *q && *q != '0';
}

static inline int
tap_ok (int cond, const char *file, int line, const char *fmt, ...)
{
  va_list ap;
  tap_n++;
  printf ("%s %d - ", cond ? "ok" : "not ok", tap_n);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  printf ("\n");
  if (!cond)
    {
      tap_failed++;
      printf ("#   failed at %s:%d\n", file, line);
    }
  fflush (stdout);
  return cond;
}

#define ok(cond, ...) tap_ok (!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* A check that cannot run here: "ok N # SKIP why" (meson counts it as
 * skipped, never as passed). */
static inline void
skip (const char *why)
{
  printf ("ok %d # SKIP %s\n", ++tap_n, why);
  fflush (stdout);
}

/* Setup that must succeed (a container insert, a plan segment): when
 * @cond is false the test bails out (TAP "Bail out!", exit 1) rather than
 * asserting things about a half-built fixture. */
#define must(cond)                                                                   \
  do {                                                                               \
    if (!(cond))                                                                     \
      {                                                                              \
        printf ("Bail out! %s:%d: %s failed\n", __FILE__, __LINE__, #cond);         \
        exit (1);                                                                    \
      }                                                                              \
  } while (0)
#define is_u64(got, want, ...)                                                       \
  do {                                                                               \
    uint64_t g_ = (uint64_t) (got), w_ = (uint64_t) (want);                          \
    if (!ok (g_ == w_, __VA_ARGS__))                                                 \
      printf ("#   got %" PRIu64 ", want %" PRIu64 "\n", g_, w_);                    \
  } while (0)
#define is_str(got, want, ...)                                                       \
  do {                                                                               \
    const char *g_ = (got), *w_ = (want);                                            \
    if (!ok (g_ && w_ && strcmp (g_, w_) == 0, __VA_ARGS__))                         \
      printf ("#   got \"%s\", want \"%s\"\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
  } while (0)
#define has_str(hay, needle, ...)                                                    \
  do {                                                                               \
    const char *h_ = (hay), *n_ = (needle);                                          \
    if (!ok (h_ && strstr (h_, n_), __VA_ARGS__))                                    \
      printf ("#   \"%s\" does not contain \"%s\"\n", h_ ? h_ : "(null)", n_);       \
  } while (0)

static inline int
tap_done (void)
{
  printf ("1..%d\n", tap_n);
  return tap_failed > 100 ? 100 : tap_failed;
}

/* Writes @text to a fresh temporary file named with @suffix; returns a
 * malloc'd path. */
static inline char *
tap_write_temp (const char *text, const char *suffix)
{
  const char *dir = getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp";
  static int counter;
  char *path = malloc (4096);
  snprintf (path, 4096, "%s/memlens-test-%d-%d%s", dir, (int) getpid (), counter++, suffix);
  FILE *fp = fopen (path, "w");
  if (!fp)
    {
      perror (path);
      exit (99);
    }
  fputs (text, fp);
  fclose (fp);
  return path;
}

#endif
