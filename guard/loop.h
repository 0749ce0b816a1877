/*
 * loop.h - ripple-guard's options and its control loop (loop.c).
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
  int allow_remote; /* probe URLs that are not on loopback */
} guard_opts_t;

/* Run until one of sigs arrives (they must be blocked in every thread). */
void guard_loop(const guard_opts_t *o, ripple_kube_client_t *kc, guard_metrics_t *m,
                const sigset_t *sigs);

#endif
