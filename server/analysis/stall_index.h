/*
 * stall_index.h - the stall detector's memory (stall_int.h): the slab its
 * writes live in, the lists a write is on, and the index lists by key.
 * Built on stall_tab.h.
 */
#ifndef RIPPLE_SERVER_STALL_INDEX_H
#define RIPPLE_SERVER_STALL_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/stall_int.h"

/* A write into (append) or out of (unlink) list l whose ends are *head and *tail. */
void stall_list_append(stall_t *s, uint32_t *head, uint32_t *tail, uint32_t i, int l);
void stall_list_unlink(stall_t *s, uint32_t *head, uint32_t *tail, uint32_t i, int l);
/* The index list of key (type, a, b, c), NULL when it has no write. */
const ikey_t *stall_key_find(const stall_t *s, int type, const sstr_t *a, const sstr_t *b,
                             const sstr_t *c);
/* Write i onto (RIPPLE_OK, RIPPLE_ENOMEM) or off the index list of its key of type. */
int stall_index_add(stall_t *s, uint32_t i, int type, const sstr_t *a, const sstr_t *b,
                    const sstr_t *c);
void stall_index_del(stall_t *s, uint32_t i, int type);
/* A cleared write from the slab (STALL_NIL without memory), and one given back
 * with its references, index lists and followers. */
uint32_t stall_went_alloc(stall_t *s);
void stall_went_free(stall_t *s, uint32_t i);
/* Bytes held by the slab (all its chunks), the writes' followers, the index
 * lists and the interned strings, with their tables' empty slots. */
size_t stall_index_memory(const stall_t *s);

#endif
