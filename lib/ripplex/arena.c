/*
 * arena.c - see ripplex/arena.h.
 */
#include "ripplex/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_MIN 65536

void *arena_alloc(arena_chunk_t **head, size_t n) {
  if (n > SIZE_MAX - 15) return NULL;
  n = (n + 15) & ~(size_t)15;
  arena_chunk_t *c = *head;
  if (!c || c->cap - c->used < n) {
    size_t cap = n > CHUNK_MIN ? n : CHUNK_MIN;
    c = malloc(sizeof *c + cap);
    if (!c) return NULL;
    c->next = *head;
    c->used = 0;
    c->cap = cap;
    *head = c;
  }
  void *p = c->mem + c->used;
  c->used += n;
  memset(p, 0, n);
  return p;
}

arena_mark_t arena_mark(const arena_chunk_t *head) {
  return (arena_mark_t){(arena_chunk_t *)head, head ? head->used : 0};
}

void arena_rewind(arena_chunk_t **head, arena_mark_t m) {
  while (*head && *head != m.c) {
    arena_chunk_t *next = (*head)->next;
    free(*head);
    *head = next;
  }
  if (*head) (*head)->used = m.used;
}

void arena_free(arena_chunk_t **head) {
  for (arena_chunk_t *c = *head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  *head = NULL;
}
