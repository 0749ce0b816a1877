/*
 * audit.h - reading kube-apiserver's audit webhook backend: a POST body that
 * is an audit.k8s.io/v1 EventList, turned into the few facts the trace joins
 * to its spans (docs/api.md, "Audit").
 *
 * The body can be large (a batch of hundreds of events with whole request and
 * response objects, Secrets included), so it is read with yajl's event
 * parser in one pass, no tree: of requestObject and responseObject only
 * metadata.uid, metadata.resourceVersion, metadata.name, metadata.namespace
 * and kind are kept; every other byte of them is skipped unread. Nothing of
 * an object's data is ever kept.
 *
 * Events kept: stage "ResponseComplete" or "Panic", verb create, update,
 * patch, delete or deletecollection. Others are counted as skipped. An event
 * that is malformed (a required field missing or of the wrong type, a
 * timestamp that is not RFC 3339) is counted and skipped; the rest of the
 * list is still read. A body that is not JSON, or not an EventList, is an
 * error for the whole request.
 *
 * Memory: audit_parse fills an audit_batch_t whose strings live in its arena;
 * audit_batch_free releases everything. Errors: RIPPLE_OK, RIPPLE_EJSON
 * (err says what and where), RIPPLE_ERANGE (more than max_events events),
 * RIPPLE_ENOMEM.
 */
#ifndef RIPPLE_SERVER_AUDIT_H
#define RIPPLE_SERVER_AUDIT_H

#include <stddef.h>
#include <stdint.h>

/* Strings longer than this are cut (at a UTF-8 boundary) and end in "...". */
#define AUDIT_STR_MAX 1024
/* Groups kept per user; more are counted in ngroups_total. */
#define AUDIT_GROUPS_MAX 16

typedef struct audit_event {
  /* Every string is NUL-terminated, "" when absent, valid UTF-8. */
  const char *audit_id; /* auditID */
  const char *verb;     /* create, update, patch, delete, deletecollection */
  const char *stage;    /* ResponseComplete or Panic */
  const char *user;     /* user.username */
  const char *groups[AUDIT_GROUPS_MAX];
  size_t ngroups, ngroups_total;
  const char *impersonated; /* impersonatedUser.username */
  const char *user_agent;
  const char *source_ip; /* sourceIPs[0] */
  /* objectRef */
  const char *resource, *subresource, *api_group, *api_version, *ns, *name, *uid, *rv;
  /* responseStatus: code (0: absent), status ("Failure"...), reason, message */
  int code;
  const char *status, *reason, *message;
  /* From responseObject (the object as stored; absent for a failure) */
  const char *resp_kind, *resp_uid, *resp_rv, *resp_name, *resp_ns;
  /* From requestObject: its kind and metadata.generateName */
  const char *req_kind, *generate_name;
  /* annotations whose key ends in "/ripple-span" and "/ripple-cpid" (the
   * webhook's auditAnnotations, prefixed with its configuration's name) */
  const char *span_id, *cpid;
  int64_t received_ns, stage_ns; /* requestReceivedTimestamp, stageTimestamp */
} audit_event_t;

typedef struct audit_batch {
  audit_event_t *ev;
  size_t n;
  size_t skipped;   /* well-formed events that are not writes or not complete */
  size_t malformed; /* events missing a required field (auditID, verb, stage,
                       stageTimestamp) or with a field of the wrong type */
  void *arena;      /* private */
} audit_batch_t;

int audit_parse(const char *body, size_t len, size_t max_events, audit_batch_t *out, char *err,
                size_t errcap);
void audit_batch_free(audit_batch_t *b);

#endif
