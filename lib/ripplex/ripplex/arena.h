/*
 * ripplex/arena.h - memory for one batch, freed at once: chunks of 64 KiB (or
 * one as large as a bigger request) that allocations are carved from, for
 * parsers that keep many small pieces of one request (the trace server's
 * OTLP batches, its audit event lists).
 *
 * Memory: everything allocated from an arena lives until arena_free (or an
 * arena_rewind to a mark taken before it). Not thread-safe.
 */
#ifndef RIPPLEX_ARENA_H
#define RIPPLEX_ARENA_H

#include <stddef.h>

typedef struct arena_chunk {
  struct arena_chunk *next;
  size_t used, cap;
  _Alignas(max_align_t) unsigned char mem[];
} arena_chunk_t;

/* An empty arena is a NULL head: `arena_chunk_t *a = NULL;`. */

/* n bytes, 16-byte aligned and zeroed; NULL when out of memory. */
void *arena_alloc(arena_chunk_t **head, size_t n);

/* Where an arena is, to give back what is allocated after it. */
typedef struct arena_mark {
  arena_chunk_t *c;
  size_t used;
} arena_mark_t;
arena_mark_t arena_mark(const arena_chunk_t *head);
void arena_rewind(arena_chunk_t **head, arena_mark_t m);

/* Everything; *head is NULL after. */
void arena_free(arena_chunk_t **head);

#endif
