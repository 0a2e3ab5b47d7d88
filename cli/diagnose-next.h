/* diagnose-next.h — what diagnose says after "why": the shortfall, the
 * buffers whose freeing closes it, and how the devices of a snapshot
 * compare (cli/diagnose-next.c). */
#ifndef ML_CLI_DIAGNOSE_NEXT_H
#define ML_CLI_DIAGNOSE_NEXT_H

#include "cli/cli.h"

/* The bytes the trace needs at least (its lower bound) against the
 * capacity, and the buffers live at the OOM ranked by bytes x ticks held
 * (the ones a program can free sooner or shrink to close the gap). */
typedef struct {
  uint64_t  needs, has;     /* the lower bound, the capacity */
  uint64_t  tick;           /* the OOM the buffers are live at */
  uint32_t *live;           /* owned: indices into the buffers, ranked */
  size_t    n_live;
} CliShortfall;

/* For @d over @bufs (the buffers diagnose replayed); 0, or ML_ENOMEM.
 * Nothing to say (s->has == 0) without a capacity or an OOM. */
int  cli_shortfall_find (const MlBuffers *bufs, const MlDiagnosis *d, CliShortfall *s);
void cli_shortfall_clear (CliShortfall *s);
/* "  shortfall: the trace needs at least X ..., the device has Y: free at
 * least X - Y" and the buffers that close it. */
void cli_shortfall_print (const MlBuffers *bufs, const CliShortfall *s);
/* ,"shortfall":{...} (nothing when there is nothing to say). */
void cli_shortfall_json (const MlBuffers *bufs, const CliShortfall *s);
/* "  devices: reserved at the end (at most) ...": a snapshot's other
 * devices against the one read, and how uneven they are. */
void cli_devices_print (const MlTrace *t);

#endif
