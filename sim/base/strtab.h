/* strtab.h — an interned string table.
 *
 * Index 0 is always the empty string, so a zeroed uint32_t field means
 * "no name". Interning the same bytes twice returns the same index.
 * Strings live as long as the table; ml_strtab_get() returns a borrowed,
 * NUL-terminated pointer that stays valid until ml_strtab_free().
 */
#ifndef ML_STRTAB_H
#define ML_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct MlStrtab MlStrtab;

MlStrtab   *ml_strtab_new    (void);
void        ml_strtab_free   (MlStrtab *tab);
/* Returns the index, or UINT32_MAX when out of memory. */
uint32_t    ml_strtab_intern (MlStrtab *tab, const char *s, size_t len);
uint32_t    ml_strtab_intern0(MlStrtab *tab, const char *s);
const char *ml_strtab_get    (const MlStrtab *tab, uint32_t idx);
size_t      ml_strtab_count  (const MlStrtab *tab);

#endif
