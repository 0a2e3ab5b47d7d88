/* memlens convert FILE... -o OUT.db: the SQLite export (docs/export.md). */
#ifndef ML_CLI_EXPORT_SQLITE_H
#define ML_CLI_EXPORT_SQLITE_H

#include <stddef.h>

struct MlCliOpts;

/* Loads each of @files (as the other commands do, with @o) into one new
 * database @out, replacing it once whole; an exit status. Without
 * SQLite in the build: EXIT_BAD, saying how to get it. */
int cli_export_sqlite (const char *out, char **files, size_t n, struct MlCliOpts *o);

#endif
