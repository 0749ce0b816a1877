/*
 * stall_tab.h - the bottom of the stall detector (stall_int.h): hash tables
 * (open addressing, at most half full, backward-shift deletion) and the
 * interned strings its writes and hop kinds name things by.
 */
#ifndef RIPPLE_SERVER_STALL_TAB_H
#define RIPPLE_SERVER_STALL_TAB_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/stall_int.h"

typedef int (*htab_eq_fn)(const void *item, const void *key);
void *htab_find(const htab_t *t, uint64_t h, htab_eq_fn eq, const void *key);
int htab_add(htab_t *t, uint64_t h, void *p);
void htab_del(htab_t *t, uint64_t h, const void *p);
/* Bytes of t's slots (empty ones too; not the items). */
size_t htab_memory(const htab_t *t);

uint64_t stall_mix(uint64_t x);

/* Strings: found (1, *out NULL for "") or not interned (0); a new reference
 * (RIPPLE_OK or RIPPLE_ENOMEM); a reference dropped. */
int str_find(const stall_t *s, const char *p, size_t n, sstr_t **out);
int str_ref(stall_t *s, const char *p, sstr_t **out);
void str_unref(stall_t *s, sstr_t *x);

#endif
