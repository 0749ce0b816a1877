/*
 * merge.c - the merge decision: which CPID an object gets when a component
 * writes it because of other objects (the paper's Algorithm 1, section 4.2).
 *
 * Inputs are contexts: the target's own (if any) and those of the sources the
 * component read. Each context says "my CPID descends from these ancestors".
 * A CPID is *covered* when some context lists it as an ancestor. The CPIDs no
 * context covers are the roots of the paper's CPID graph:
 *
 *   - one root r: r descends from every other CPID in play (follow coverers
 *     upward; the relation is acyclic for honest lists, so the walk ends at r).
 *     r is reused and no mergelog is needed;
 *   - several roots: the changes really merge here; a new CPID is made and a
 *     mergelog names every distinct CPID in play as a source;
 *   - no root: the lists contradict each other (a cycle, which honest writers
 *     cannot produce). We merge anew, which is always safe, and say so.
 *
 * Coverage is a set membership test, so the decision costs one pass over all
 * ids with a hash set: an Endpoints object with thousands of Pods as sources
 * stays linear.
 *
 * Ancestor lists are hints for future decisions, never the record of lineage
 * (mergelogs are). Two rules keep them useful and safe:
 *   - nearest first: a new list interleaves the inputs level by level (their
 *     CPIDs, then everyone's first ancestor, then second...), cut at N;
 *   - idempotence: if the target already carries the winning CPID it is left
 *     exactly as it is. Rewriting its list with "new knowledge" would let two
 *     writers that read each other (a Deployment and its ReplicaSet) ping-pong
 *     an annotation forever, and would turn status writes into extra writes.
 */
#include <stdlib.h>

#include "internal.h"
#include "merge.h"

enum { F_USED = 1, F_DISTINCT = 2, F_COVERED = 4, F_OUT = 8 };

typedef struct slot {
  ripple_cpid_t id;
  uint32_t flags;
} slot_t;

typedef struct idset {
  slot_t *s;
  size_t mask;
} idset_t;

static uint64_t hash_seed;

static size_t id_hash(const ripple_cpid_t *id) { return (size_t)cpid_hash(id, hash_seed); }

static slot_t *idset_get(idset_t *h, const ripple_cpid_t *id) {
  for (size_t i = id_hash(id) & h->mask;; i = (i + 1) & h->mask) {
    slot_t *s = &h->s[i];
    if (!s->flags) {
      s->id = *id;
      s->flags = F_USED;
      return s;
    }
    if (cpid_eq(&s->id, id)) return s;
  }
}

void merge_init_seed(uint64_t seed) { hash_seed = seed; }

/* Append `id` to out unless excluded, already present, or the list is full. */
static void out_add(idset_t *h, ripple_ctx_t *out, uint32_t n, const ripple_cpid_t *id,
                    const ripple_cpid_t *exclude) {
  if (out->nanc >= n || (exclude && cpid_eq(id, exclude))) return;
  slot_t *s = idset_get(h, id);
  if (s->flags & F_OUT) return;
  s->flags |= F_OUT;
  out->anc[out->nanc++] = *id;
}

/* Level-by-level interleave of contexts whose CPID matches (or not) `r`. Level
 * 0 is the contexts' own CPIDs, level k their (k-1)th ancestor. */
static void out_levels(idset_t *h, const ripple_ctx_t *const *c, size_t m, uint32_t n,
                       const ripple_cpid_t *r, int carriers, ripple_ctx_t *out) {
  for (uint32_t lvl = carriers ? 1 : 0; lvl <= RIPPLE_ANC_MAX && out->nanc < n; lvl++) {
    int any = 0;
    for (size_t i = 0; i < m && out->nanc < n; i++) {
      if (r && cpid_eq(&c[i]->cpid, r) != carriers) continue;
      const ripple_cpid_t *id = lvl == 0 ? &c[i]->cpid : NULL;
      if (lvl > 0 && lvl - 1 < c[i]->nanc) id = &c[i]->anc[lvl - 1];
      if (!id) continue;
      any = 1;
      out_add(h, out, n, id, r);
    }
    if (!any) break;
  }
}

int merge_decide(const ripple_ctx_t *const *c, size_t m, int has_target, uint32_t n,
                 merge_result_t *res) {
  memset(&res->out, 0, sizeof res->out);
  res->nsources = 0;
  res->cycle = 0;
  if (m == 0) {
    res->how = RIPPLE_MERGE_NONE;
    return RIPPLE_OK;
  }
  size_t ids = 0;
  for (size_t i = 0; i < m; i++) {
    if (c[i]->nanc > RIPPLE_ANC_MAX) return RIPPLE_EINVAL;
    ids += 1 + c[i]->nanc;
  }
  size_t cap = 64;
  while (cap < ids * 2) cap <<= 1;
  slot_t local[128];
  idset_t h = {cap <= 128 ? local : calloc(cap, sizeof(slot_t)), cap - 1};
  if (!h.s) return RIPPLE_ENOMEM;
  if (h.s == local) memset(local, 0, cap * sizeof(slot_t));

  /* Distinct CPIDs in input order (target first) become the mergelog's sources
   * if one is needed; everything any list names is covered. A list naming its
   * own CPID is ignored for that entry: it would cover itself. */
  for (size_t i = 0; i < m; i++) {
    slot_t *s = idset_get(&h, &c[i]->cpid);
    if (!(s->flags & F_DISTINCT)) {
      s->flags |= F_DISTINCT;
      res->sources[res->nsources++] = c[i]->cpid;
    }
  }
  for (size_t i = 0; i < m; i++)
    for (uint32_t k = 0; k < c[i]->nanc; k++)
      if (!cpid_eq(&c[i]->anc[k], &c[i]->cpid)) idset_get(&h, &c[i]->anc[k])->flags |= F_COVERED;

  size_t roots = 0;
  const ripple_cpid_t *root = NULL;
  for (size_t i = 0; i < res->nsources; i++) {
    if (!(idset_get(&h, &res->sources[i])->flags & F_COVERED)) {
      roots++;
      root = &res->sources[i];
    }
  }

  if (roots == 1 && has_target && cpid_eq(root, &c[0]->cpid)) {
    res->out = *c[0];
    if (res->out.nanc > n) res->out.nanc = n;
    res->how = res->out.nanc == c[0]->nanc ? RIPPLE_MERGE_UNCHANGED : RIPPLE_MERGE_REUSED;
  } else if (roots == 1) {
    /* Reuse r: its own list first (it is nearest to r), then what the other
     * inputs add. The target's old CPID is among them: it is r's ancestor. */
    res->out.cpid = *root;
    out_levels(&h, c, m, n, root, 1, &res->out);
    out_levels(&h, c, m, n, root, 0, &res->out);
    res->how = RIPPLE_MERGE_REUSED;
  } else {
    /* A new CPID (filled in by the caller): every input is its ancestor. */
    res->cycle = roots == 0;
    out_levels(&h, c, m, n, NULL, 0, &res->out);
    res->how = RIPPLE_MERGE_NEW;
  }
  if (h.s != local) free(h.s);
  return RIPPLE_OK;
}
