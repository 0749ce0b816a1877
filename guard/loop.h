/*
 * loop.h - ripple-guard's options, its control loop (loop.c) and its probe
 * rounds (round.c).
 *
 * Memory: the options' strings are the caller's and must outlive the loop.
 */
#ifndef RIPPLE_GUARD_LOOP_H
#define RIPPLE_GUARD_LOOP_H

#include <signal.h>

#include "guard.h"

typedef struct guard_opts {
  const char *name;      /* the MutatingWebhookConfiguration */
  const char *url;       /* --url: probe this instead of clientConfig */
  const char *ca;        /* --ca: its PEM text (NULL: the system's CAs) */
  const char *ca_bundle; /* --ca-bundle: the file kept as every caBundle, re-read every resync */
  uint32_t interval_ms;  /* between probes */
  uint32_t probe_timeout_ms;
  uint32_t resync_ms; /* re-read the registration this often */
  unsigned fail_after, recover_after;
  int allow_remote; /* probe URLs (and endpoints) that are not on loopback */
  /* --endpoints: probe these as every webhook's Service's endpoints (tests) */
  const guard_eps_t *endpoints;
} guard_opts_t;

/* A round's state across rounds (round.c): each webhook's endpoints, when it
 * is registered by Service (or --endpoints stands for them). */
typedef struct guard_round {
  const guard_opts_t *o;
  ripple_kube_client_t *kc;
  guard_metrics_t *m;
  uint64_t seq;
  guard_eps_t eps[GUARD_MAX_WEBHOOKS];
  int known[GUARD_MAX_WEBHOOKS];     /* eps[i] was read: probe it, not the Service's URL */
  char key[GUARD_MAX_WEBHOOKS][300]; /* whose endpoints eps[i] are (NS/NAME:PORT) */
  int64_t next_read[GUARD_MAX_WEBHOOKS], read_at[GUARD_MAX_WEBHOOKS];
  char read_why[200];   /* the last failed read's reason: logged when it changes */
  int total, answering; /* this round's endpoints, summed over the webhooks */
  int partial;          /* some endpoint failed in a good round */
} guard_round_t;

/* One probe round over every webhook of reg, trusting ca (NULL: each
 * webhook's caBundle, or --ca with --url): 1 when every webhook answered (by
 * one endpoint at least), 0 when one did not (why says what), -1 when a
 * probe was refused (not on loopback, without --allow-remote). */
int guard_round_run(guard_round_t *g, const guard_reg_t *reg, const char *ca, size_t ca_len,
                    char *why, size_t cap);

/* Run until one of sigs arrives (they must be blocked in every thread). */
void guard_loop(const guard_opts_t *o, ripple_kube_client_t *kc, guard_metrics_t *m,
                const sigset_t *sigs);

#endif
