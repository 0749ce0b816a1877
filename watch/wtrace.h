/*
 * wtrace.h - ripple-watch's --trace-server: each change of an object that
 * carries a ripple context (its cpid.ripple.dev/<kind> annotation) is sent
 * to the trace server as a span of that CPID, through libripple's shipper;
 * and every change's details (what changed; watched Events), whatever the
 * object carries.
 */
#ifndef RIPPLE_WATCH_WTRACE_H
#define RIPPLE_WATCH_WTRACE_H

#include "ripple/kube.h"
#include "ripple/ripple.h"
#include "wdetail.h"

typedef struct wtrace wtrace_t;

/* url: the trace server; token: its writer token (a bearer token, NULL: none);
 * ca_file: a CA (PEM) to trust for https (NULL: the system's). */
int wtrace_new(const char *url, const char *token, const char *ca_file, wtrace_t **out);
/* Send the change as a span named "<op> <resource>" (service "ripple-watch",
 * attributes object, namespace, uid, rv); an object without a context is
 * skipped. Never waits on the network. */
void wtrace_change(wtrace_t *t, const ripple_kube_event_t *ev, const char *resource);
/* Send what the change changed, or the Event, as a detail (wdetail.h);
 * never waits on the network. Failures are counted (wtrace_detail_errors). */
void wtrace_detail(wtrace_t *t, const ripple_kube_event_t *ev, const wdetail_res_t *res,
                   const wdiff_redact_t *redact);
uint64_t wtrace_detail_errors(const wtrace_t *t);
/* Deliver what is queued (for at most timeout_ms) and free. */
void wtrace_free(wtrace_t *t, uint32_t timeout_ms);

#endif
