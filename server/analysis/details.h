/*
 * details.h - turning what arrives about writes into facts (facts.h):
 *  - POST /v1/details: the watch agent's records, a JSON array of changes
 *    (a write's field diff, or an object's snapshot when it was created or
 *    deleted) and Kubernetes Events (docs/api.md, "Details");
 *  - POST /v1/audit: kube-apiserver's audit events, already read by audit.h.
 *
 * Each record is checked and written again with only the fields ripple
 * knows, so what is stored and served is uniform whatever the sender wrote.
 * The server never trusts a sender to have redacted a Secret: a Secret's
 * data and stringData values are replaced here too.
 *
 * Memory: a det_batch_t owns its facts and their strings; det_batch_free
 * releases them. Errors as decode.h: RIPPLE_EJSON, RIPPLE_EINVAL,
 * RIPPLE_ERANGE with err naming the record and field; RIPPLE_ENOMEM.
 */
#ifndef RIPPLE_SERVER_DETAILS_H
#define RIPPLE_SERVER_DETAILS_H

#include "ingest/audit.h"
#include "ingest/decode.h"
#include "store/facts.h"

/* The largest stored record (a snapshot of a big object is cut by the agent
 * long before this). */
#define DET_RECORD_MAX (256 * 1024)

typedef struct det_batch {
  fact_t *v;
  size_t n;
  void *mem; /* private */
} det_batch_t;

/* POST /v1/details: all or nothing, like the other ingest paths. */
int det_decode(const char *json, size_t len, const dec_limits_t *lim, det_batch_t *out,
               dec_error_t *err);
/* POST /v1/audit: one fact per kept audit event. */
int det_from_audit(const audit_batch_t *a, det_batch_t *out);
void det_batch_free(det_batch_t *b);

#endif
