/*
 * core.h - what every part of the webhook's engine reads: its state (struct
 * wh) and what it decided for one write (wh_decision_t), and its clock.
 *
 * The engine's files call each other top to bottom only:
 *
 *   engine.c    one request (wh.h)
 *     decide.c    the decision (decide.h)
 *       deletes.c   a delete's cause (deletes.h)
 *       roots.c     roots and the write's own context (roots.h)
 *       sources.c, stamp.c, traceparent.c, annotate.c, objtext.c, memo.c
 *     pending.c   bindings waiting for their Pod (pending.h)
 *     emit.c      the span of a write, mergelogs named after the writer (emit.h)
 *
 * Each part's entry points are in a header of its own; this one holds only
 * the types they all share, so none of them needs a header of a file above
 * it. Programs use wh.h.
 */
#ifndef RIPPLE_WEBHOOK_CORE_H
#define RIPPLE_WEBHOOK_CORE_H

#include <stdint.h>

#include "ctxmac.h"
#include "memo.h"
#include "metrics.h"
#include "review.h"
#include "ripple/ripple.h"
#include "ripple/rules.h"
#include "users.h"
#include "wh.h"

/* "Kind/name" of a controlling owner: a kind and a name of up to 253 bytes. */
#define WH_OWNER_MAX 320

/* What the engine decided for one write (decide.c). */
typedef struct wh_decision {
  int traced;       /* 0: nothing to do (excluded, no context anywhere) */
  const char *skip; /* why not traced, for the debug log */
  int root;         /* a root change */
  ripple_ctx_t ctx; /* the context of the write */
  ripple_merge_kind_t how;
  char *patch; /* a JSON Patch to return, or NULL; ripple_free it */
  size_t patch_len;
  int bad_annotation; /* the object's own annotation was malformed */
  int spontaneous;    /* a controller's write with no traced source: a root of its own */
  int cause_unknown;  /* WH_UNCERTAIN: a controller's write whose cause this replica cannot
                       * know for sure: a root of its own */
  int pending;        /* a binding whose Pod is not known yet: its span waits (pending.c) */
  int held;           /* ctx is held in memory, not written to the object (decide.c) */
  int wrote_ctx;      /* patch sets ctx on the object (not a held one, not a removal) */
  /* The MAC beside the object's context once the patch is applied
   * (ctxmac.h, decide.c): left as the write has it, the MAC of mac_ctx, the
   * stored object's own (a context put back), or none. */
  enum { WH_MAC_LEAVE, WH_MAC_SIGN, WH_MAC_OLD, WH_MAC_DROP } mac;
  ripple_ctx_t mac_ctx;
  uint64_t parent_id; /* the span's parent: a client's span (traceparent.c), or 0 */
  /* The span's id, chosen before the answer so the answer's audit annotation
   * can name it (the trace server joins audit events to spans by it); 0: one
   * is chosen when the span is emitted. */
  uint64_t span_id;
  /* --traceparent (traceparent.c): the patch sets one; the write's own (or its
   * owner's copy) was kept; the root is the client's trace; the client's was
   * malformed. */
  int tp_written, tp_kept, tp_root, tp_invalid;
  int has_last; /* a delete of an object that had a context: last is its CPID */
  ripple_cpid_t last;
  int64_t start_ns; /* span start: when the write's cause was admitted */
  char kind[64];    /* kind of the object the context belongs to */
  char uid[64];     /* the object's uid ("" when unknown) */
  char rv[64];      /* the resourceVersion the write is based on ("" on create) */
  char service[WH_SERVICE_MAX];
  char owner[WH_OWNER_MAX]; /* "Kind/name" of the object's controlling owner ("": none known) */
} wh_decision_t;

typedef struct wh_pending wh_pending_t; /* pending.h */

struct wh {
  ripple_tracer_t *tracer;
  wh_memo_t *memo;
  wh_pending_t *pending;
  ripple_rules_t *own_rules; /* when none were given */
  const ripple_rules_t *rules;
  wh_opts_t o;
  char *exclude_ns[WH_EXCLUDE_MAX];
  ripple_sink_t down; /* the sink the engine's records go to */
  wh_metrics_t m;
  int metrics_ok;      /* m's mutex was initialised */
  wh_ctxmac_t mac;     /* the contexts' MAC key (len 0: unsigned) */
  wh_claims_t *claims; /* who started which root (ctxmac.h) */
};

/* wh_now without a call (the parts below the engine use it). */
static inline int64_t wh_clock(const wh_t *w) {
  return w->o.clock_ns ? w->o.clock_ns(w->o.hook_ud) : ripple_now_ns();
}

#endif
