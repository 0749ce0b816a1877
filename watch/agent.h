/*
 * agent.h - ripple-watch's agent: one libripple-kube watch per resource, all
 * writing to one output, with checkpoints and self-reports. main.c fills in
 * the options and runs it.
 */
#ifndef RIPPLE_WATCH_AGENT_H
#define RIPPLE_WATCH_AGENT_H

#include <signal.h>
#include <stdint.h>

#include "wdiff.h"

#define AGENT_MAX_RES 64

typedef struct agent_res_opts {
  const char *name;       /* as kubectl names it: pods, deployments.apps */
  const char *namespace_; /* NULL: the default (--namespace), "" all */
  const char *selector;   /* NULL: the default (--selector) */
} agent_res_opts_t;

typedef struct agent_opts {
  agent_res_opts_t res[AGENT_MAX_RES];
  int nres;
  const char *namespace_, *selector;
  const char *out; /* NULL or "-": stdout */
  uint64_t rotate_size;
  int64_t rotate_ns, report_ns, checkpoint_ns;
  const char *state_dir;
  const char *kubeconfig, *context;
  uint32_t watch_timeout_s;
  const char *trace_server; /* NULL: no spans */
  const char *trace_token;  /* its writer token (never logged), NULL: none */
  const char *trace_ca;     /* a CA file for an https trace server, NULL: the system's */
  int keep_managed_fields;  /* record metadata.managedFields (left out by default) */
  int no_details;           /* with trace_server: spans only, no details (wdetail.h) */
  int no_records;           /* with trace_server: no records at all, only what is sent */
  wdiff_redact_t redact;    /* never sent in details */
} agent_opts_t;

/* Run until *stop is set (by a signal handler); 0 on a clean stop. */
int agent_run(const agent_opts_t *o, volatile sig_atomic_t *stop);

#endif
