/* progress.h — progress and cancellation for long runs (readers, strategies).
 *
 * A plain struct the caller owns; the libraries only read it. report() may
 * be NULL; it gets a fraction in [0, 1] and a short text. cancelled, when
 * set, is polled: a run that sees it non-zero stops with ML_ECANCELLED.
 */
#ifndef ML_PROGRESS_H
#define ML_PROGRESS_H

typedef struct {
  void (*report) (void *user, double fraction, const char *what);
  void  *user;
  volatile int *cancelled;
} MlProgress;

#endif
