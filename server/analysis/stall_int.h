/*
 * stall_int.h - the stall detector's private types (stall.h), shared by its
 * parts, top to bottom:
 *   stall.c        the window of writes, finding followers, flagging and
 *                  ending stalls (stall.h);
 *   stall_learn.c  hop kinds, delay histograms and the expectations learned
 *                  from them (stall_learn.h);
 *   stall_index.c  the slab of writes, their lists and index lists
 *                  (stall_index.h);
 *   stall_tab.c    hash tables and interned strings (stall_tab.h).
 * Each includes only the headers of the parts below it; what a lower part
 * must tell an upper one comes as a callback (kind_dropped_fn). This header
 * holds types and inline helpers only.
 *
 * Writes live in a slab of chunks and are named by index, so that the links
 * of the five lists a write can be on stay 4 bytes each and pointers to
 * writes stay valid while the slab grows.
 */
#ifndef RIPPLE_SERVER_STALL_INT_H
#define RIPPLE_SERVER_STALL_INT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/stall.h"

#define STALL_NIL UINT32_MAX
#define STALL_ANY UINT32_MAX /* an expectation's next hop: any */
/* Delay buckets: below 1 ms, then 10% wide from 1 ms, the last one open (from
 * about 70 minutes; its upper edge is reported as 76 minutes). */
#define STALL_NB 162
#define STALL_NEXT_MAX 32 /* follower hop kinds learned per hop kind and kept per write */
#define STALL_CHUNK 4096  /* writes per slab chunk */
#define STALL_HALVE_AT \
  (1u << 24) /* a hop kind's counts are halved here (no overflow, slow aging) */

/* The lists a write is on; each has its own links in the write. */
enum { L_WIN, L_PEND, L_OBJ, L_OWN, L_ANON, L_N };
/* The indexes: by object (kind, ns, name), by owner (ns, "Kind/name"), and
 * creates without a name by (kind, ns, owner). */
enum { IK_OBJ, IK_OWN, IK_ANON, IK_N };

/* An interned string, shared by everything that names it, freed with its
 * last reference. "" is never interned: it is NULL. */
typedef struct sstr {
  uint64_t h;
  uint32_t refs, len;
  char s[];
} sstr_t;

/* Open addressing with linear probing, at most half full; a slot holds an
 * item and its hash, items leave by backward shift (no tombstones). */
typedef struct hslot {
  void *p;
  uint64_t h;
} hslot_t;
typedef struct htab {
  hslot_t *slot;
  size_t mask, n;
} htab_t;

/* The first follower of one hop kind after a write. */
typedef struct fol {
  uint32_t kb;
  int64_t delay;
} fol_t;

/* What a hop kind's writes usually lead to (kb STALL_ANY: anything). */
typedef struct expect {
  uint32_t kb, samples;
  double share;
  int64_t p99, wait;
} expect_t;

typedef struct kpair {
  uint32_t kb;
  int stale; /* p99 is to be recomputed */
  uint64_t n;
  int64_t p99;
  uint32_t hist[STALL_NB];
} kpair_t;

typedef struct hkind {
  uint32_t id;
  sstr_t *service, *name;
  uint64_t n;
  kpair_t any; /* followed by anything (kb STALL_ANY) */
  kpair_t **pair;
  uint32_t npair;
  expect_t *exp; /* sorted by the next hop's service and name, "any" alone */
  uint32_t nexp;
  int64_t wmin;          /* the shortest wait of exp */
  int64_t next_check;    /* no write on the pending list is due before */
  uint32_t phead, ptail; /* writes that may still stall, in arrival order */
  uint32_t active;       /* position in stall_t.active, STALL_NIL */
  int dirty;
} hkind_t;

typedef struct srec {
  struct srec *prev, *next;
  uint32_t w, kb;
  int64_t flagged;
} srec_t;

typedef struct ikey {
  uint64_t h;
  const sstr_t *a, *b, *c;
  uint32_t head, tail, n;
  int type;
} ikey_t;

/* F_DEFER: matured while still waiting for a hop it expects, or while a
 * stall: learned from only once that is settled (stall.c, advance). */
enum { F_USED = 1, F_YOUNG = 2, F_WAIT = 4, F_PEND = 8, F_MATURED = 16, F_GONE = 32, F_DEFER = 64 };
enum { OP_OTHER, OP_CREATE, OP_UPDATE, OP_DELETE, OP_CONNECT };

typedef struct went {
  ripple_cpid_t cpid;
  uint64_t span_id;
  int64_t end;
  int64_t any_delay; /* the first follower's, -1: none yet */
  int64_t gone;      /* with F_GONE: when its object was deleted or rewritten */
  sstr_t *kind, *ns, *obj, *owner;
  sstr_t *link; /* a create without a name: the name a follower gave it */
  ikey_t *key[IK_N];
  uint32_t next[L_N], prev[L_N];
  uint32_t hk;
  fol_t *fol;
  srec_t *st;
  uint8_t nfol, cfol, op, flags;
} went_t;

struct stall {
  stall_opts_t o;
  stall_related_fn related;
  void *ud;
  uint64_t seed;
  int64_t edge[STALL_NB]; /* upper edges of the delay buckets */
  htab_t strs, keys, kinds_tab;
  hkind_t **kind;
  uint32_t nkind, ckind;
  uint32_t *active; /* hop kinds with expectations */
  uint32_t nactive;
  uint32_t *dirty; /* hop kinds that learned since their expectations were made */
  uint32_t ndirty;
  size_t npairs;
  went_t **chunk;
  uint32_t nchunk, cchunk, nhigh, wfree;
  uint32_t yhead, ytail, whead, wtail; /* the window: young, then waiting */
  size_t nwin;
  srec_t *shead, *stail;
  size_t nstall;
  int64_t now;      /* the detector's clock */
  int64_t tick_now; /* the latest stall_tick's */
  int64_t max_end;
  uint64_t flagged, resolved, superseded, expired, evicted, matured;
};

static inline went_t *stall_w(const stall_t *s, uint32_t i) {
  return &s->chunk[i / STALL_CHUNK][i % STALL_CHUNK];
}

static inline const char *stall_s(const sstr_t *x) { return x ? x->s : ""; }

static inline int64_t stall_sat_add(int64_t a, int64_t b) {
  return b > 0 && a > INT64_MAX - b ? INT64_MAX : a + b;
}

#endif
