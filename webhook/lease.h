/*
 * lease.h - which ripple-webhook replica is "the decider": the one holding a
 * coordination.k8s.io/v1 Lease. The webhook's decisions come from its memory
 * of recent writes, so several replicas behind one Service must let one of
 * them decide; the others forward to it (docs/webhook.md). This is the
 * election, as client-go's leaderelection does it:
 *
 *   - A replica takes the Lease when it does not exist (create), when its
 *     holderIdentity is empty, when its record names this replica's identity
 *     without this process having acquired it (a restarted container keeps its
 *     pod's address), or when the record (holder, renewTime, resourceVersion)
 *     has not changed for the record's leaseDurationSeconds by this replica's
 *     own monotonic clock. Remote timestamps are never compared with the local
 *     clock: clocks of machines differ, their rates barely do.
 *   - Every write carries the resourceVersion read, so of two replicas taking
 *     it at once one gets a conflict and stays a follower.
 *   - The holder renews every retry_ms and stops calling itself the decider
 *     renew_deadline_ms after the start of its last successful write. Others
 *     take it no sooner than leaseDurationSeconds after they saw that write,
 *     which the server accepted after it started; renew_deadline < duration
 *     leaves the difference for clock rate drift. So two replicas never both
 *     report themselves the decider.
 *
 * A malformed Lease (wrong types, oversized strings) is held by nobody this
 * replica knows: it expires after the duration like any other.
 *
 * Memory: the caller owns what it passes in; wh_lease_start copies the
 * strings and borrows the client, which must outlive the lease. The handle
 * is released by exactly one wh_lease_stop.
 *
 * Threads: wh_lease_start runs one thread that does all the I/O.
 * wh_lease_state may be called from any thread (a mutex, no I/O). Start and
 * stop are called once each, from one thread.
 *
 * The second half of this header is the election's pure part (the record,
 * MicroTime, the decision as a function of the record and local times), for
 * lease.c and the tests.
 */
#ifndef RIPPLE_WEBHOOK_LEASE_H
#define RIPPLE_WEBHOOK_LEASE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ripple/kube.h"

typedef struct wh_lease wh_lease_t;

typedef struct wh_lease_opts {
  /* Borrowed, must outlive the lease. Its timeout_ms bounds each request and
   * so how long wh_lease_stop can take (two requests at most): give the lease
   * a client of its own with a timeout near retry_ms..renew_deadline_ms. */
  ripple_kube_client_t *kc;
  const char *ns, *name; /* the Lease object (copied) */
  /* This replica's peer URL, e.g. "https://10.1.2.3:8443" (copied), at most
   * WH_LEASE_ID_MAX - 1 bytes. Replicas must have different identities. */
  const char *identity;
  uint32_t duration_ms;       /* spec.leaseDurationSeconds, rounded up to seconds; default 4000 */
  uint32_t retry_ms;          /* how often to read or renew; default 500 */
  uint32_t renew_deadline_ms; /* default 3000; retry_ms < renew_deadline_ms < duration */
} wh_lease_opts_t;

/* Check the options and start the thread: RIPPLE_OK, RIPPLE_EINVAL (a
 * missing string, an identity too long, timings out of order), RIPPLE_ENOMEM,
 * RIPPLE_ESYS (no thread). Failing API calls are not an error here: the
 * thread logs them and keeps trying. */
int wh_lease_start(const wh_lease_opts_t *o, wh_lease_t **out);

/* Stop the thread and free l. From the call on this replica is no longer the
 * decider; when it held the Lease it releases it (holderIdentity "",
 * leaseDurationSeconds 1), so that another replica takes it at once. Best
 * effort: at most two requests of the client's timeout. NULL-safe. */
void wh_lease_stop(wh_lease_t *l);
/* The same without freeing l: wh_lease_state may still be called (it says 0)
 * until wh_lease_stop, which then only frees. For a replica that answers on
 * a while after giving the Lease up (the handover, handover.h). */
void wh_lease_release(wh_lease_t *l);

/* 1 when this replica is the decider now (it holds the Lease and its last
 * renewal started less than renew_deadline_ms ago by its monotonic clock),
 * else 0. Each output may be NULL:
 *   holder    the live holder's identity (this replica's own when it is the
 *             decider), "" when none is known; truncated to cap bytes;
 *   since_ns  CLOCK_MONOTONIC ns at which this replica last became the
 *             decider, 0 if never;
 *   gen       a counter that grows whenever the holding changes as this
 *             replica sees it (another holder, or the same identity
 *             acquiring again: a restarted replica has lost its memory).
 * Cheap: a mutex, no I/O. 0 and empty outputs for NULL l. */
int wh_lease_state(wh_lease_t *l, char *holder, size_t cap, int64_t *since_ns, uint64_t *gen);

/* For tests: a paused thread does no I/O, as a frozen process would (its
 * state still says decider until the renew deadline, by the clock). */
void wh_lease_pause(wh_lease_t *l, int paused);

/* ---------------------------------------------------------------------------
 * The pure part (leaserec.c): no I/O, no clock of its own
 * ------------------------------------------------------------------------- */

enum {
  WH_LEASE_ID_MAX = 256,   /* holderIdentity, with its NUL */
  WH_LEASE_RV_MAX = 64,    /* resourceVersion, with its NUL */
  WH_LEASE_TIME_MAX = 40,  /* acquireTime / renewTime as stored, with its NUL */
  WH_LEASE_MICROTIME = 27, /* strlen("2006-01-02T15:04:05.000000Z") */
  WH_LEASE_DUR_MAX_S = 3600,
};

/* metav1.MicroTime text of a wall-clock time (ns since the epoch, UTC),
 * truncated to microseconds: "2006-01-02T15:04:05.000000Z" and a NUL. */
void wh_lease_time_format(int64_t wall_ns, char out[WH_LEASE_MICROTIME + 1]);
/* RFC 3339 as the API server writes times ("...Z" or "+hh:mm", 0 to 9
 * fraction digits): RIPPLE_OK and *wall_ns, or RIPPLE_EINVAL (malformed, or
 * outside what int64 ns hold: 1678..2261). */
int wh_lease_time_parse(const char *s, int64_t *wall_ns);

typedef enum wh_lease_holder {
  WH_LEASE_FREE, /* holderIdentity absent or "" */
  WH_LEASE_HELD, /* holder says who */
  WH_LEASE_BAD,  /* not a string, or too long: held by someone unknown */
} wh_lease_holder_t;

/* What a Lease says, bounded. Text that does not fit or has the wrong type
 * is "" (and counted by wh_lease_rec_parse). */
typedef struct wh_lease_rec {
  wh_lease_holder_t state;
  char holder[WH_LEASE_ID_MAX];
  char rv[WH_LEASE_RV_MAX]; /* "": none, so no write is possible */
  char acquire[WH_LEASE_TIME_MAX], renew[WH_LEASE_TIME_MAX];
  int64_t duration_s;  /* 0 unless 1..WH_LEASE_DUR_MAX_S */
  int64_t transitions; /* 0 unless 0..INT32_MAX */
} wh_lease_rec_t;

/* Read a Lease object into *out: the number of fields that were malformed
 * (0: none), or RIPPLE_EJSON when lease is not an object. */
int wh_lease_rec_parse(const json_t *lease, wh_lease_rec_t *out);
/* The Lease's spec for r (holderIdentity, leaseDurationSeconds, acquireTime,
 * renewTime, leaseTransitions); a new reference, NULL when out of memory. */
json_t *wh_lease_spec(const wh_lease_rec_t *r);

/* What this replica knows of the Lease, all in its own monotonic time. */
typedef struct wh_lease_view {
  int exists;                    /* the last read found the Lease */
  wh_lease_rec_t rec;            /* the record last seen (read or written) */
  int64_t observed_ns;           /* when rec last changed, as seen here */
  int held;                      /* this process acquired the current holding and renews it */
  int64_t renewed_ns;            /* start of the last successful write while held */
  char mine_rv[WH_LEASE_RV_MAX]; /* resourceVersion of this process's last write */
  uint64_t gen;                  /* holdings seen */
} wh_lease_view_t;

typedef enum wh_lease_action {
  WH_LEASE_WAIT,    /* someone else holds it and it has not expired */
  WH_LEASE_CREATE,  /* there is no Lease */
  WH_LEASE_TAKE,    /* free, expired, or left by an earlier run of this replica */
  WH_LEASE_RENEW,   /* this process holds it */
  WH_LEASE_RELEASE, /* (wh_lease_plan only) give it up */
} wh_lease_action_t;

/* Flags of wh_lease_observe. */
enum {
  WH_LEASE_CHANGED = 1,    /* the record changed: observed_ns restarted */
  WH_LEASE_NEW_HOLDER = 2, /* the holding changed (gen grew) */
  WH_LEASE_LOST = 4,       /* this process held it and no longer does */
};

/* Fold a record just read or written (at now_ns) into v: WH_LEASE_* flags. */
unsigned wh_lease_observe(wh_lease_view_t *v, const wh_lease_rec_t *r, const char *me,
                          int64_t now_ns);
/* The lease duration of v's record in ns: the record's own, or dflt_ns when
 * it has none that is valid. */
int64_t wh_lease_dur_ns(const wh_lease_view_t *v, int64_t dflt_ns);
/* What to do after a read at now_ns (dflt_ns: this replica's duration). */
wh_lease_action_t wh_lease_decide(const wh_lease_view_t *v, const char *me, int64_t now_ns,
                                  int64_t dflt_ns);
/* The record to write for action a (CREATE, TAKE, RENEW or RELEASE) at
 * wall-clock wall_ns with this replica's duration dur_s. */
void wh_lease_plan(const wh_lease_view_t *v, wh_lease_action_t a, const char *me, int64_t wall_ns,
                   int64_t dur_s, wh_lease_rec_t *next);
/* A write of plan a, started at start_ns, succeeded and the server stored r
 * (seen at now_ns): fold it in and, unless a is RELEASE, hold the lease. */
unsigned wh_lease_wrote(wh_lease_view_t *v, wh_lease_action_t a, const wh_lease_rec_t *r,
                        const char *me, int64_t start_ns, int64_t now_ns);
/* Is this process the decider at now_ns? */
int wh_lease_is_decider(const wh_lease_view_t *v, int64_t now_ns, int64_t deadline_ns);
/* The holder's renewals failed for deadline_ns: give up the holding (1), or
 * 0 when v does not hold it or is still within the deadline. */
int wh_lease_step_down(wh_lease_view_t *v, int64_t now_ns, int64_t deadline_ns);

#endif
