/*
 * wdetail.h - the details ripple-watch sends to the trace server with
 * --trace-server (docs/api.md, "Details"): for every change of a watched
 * object, what changed (a field diff for an update; a snapshot for a create
 * or a delete, so short-lived objects can still be shown), and for a watched
 * Event (core/v1 "events" or "events.k8s.io" "events"), the Event itself,
 * about its involved object.
 *
 * What never leaves: see wdiff.h (Secrets' data, managedFields, ripple's
 * own annotations, the redaction list). An Event's message is cut at 1 KiB.
 *
 * Memory: *out is malloc'd (free it). Errors: RIPPLE_OK; RIPPLE_ENOENT when
 * there is nothing to send (an Event deleted, an Event with no involved
 * object); RIPPLE_EJSON for an object that is not JSON; RIPPLE_ENOMEM.
 */
#ifndef RIPPLE_WATCH_WDETAIL_H
#define RIPPLE_WATCH_WDETAIL_H

#include <stddef.h>

#include "ripple/kube.h"
#include "wdiff.h"

/* What kind of object a watched resource holds. */
typedef struct wdetail_res {
  const char *kind, *api_version; /* when the object does not say */
  int events;                     /* an Event resource */
} wdetail_res_t;

int wdetail_format(const ripple_kube_event_t *ev, const wdetail_res_t *res,
                   const wdiff_redact_t *redact, char **out, size_t *len);

#endif
