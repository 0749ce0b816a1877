/*
 * fuzz_audit.c - libFuzzer target for what POST /audit reads from
 * kube-apiserver's audit webhook backend: an audit.k8s.io/v1 EventList
 * (audit_parse).
 *
 * The first byte picks max_events: below 0x20 it is that number, else 1000
 * (so a seed that starts with a space is a plain EventList). Properties:
 * nothing crashes or leaks; a failure is RIPPLE_EJSON or RIPPLE_ERANGE with a
 * message and leaves the batch untouched; a success keeps at most max_events
 * events, each a complete write with an auditID, and every string it holds is
 * NUL-terminated strict UTF-8 of at most AUDIT_STR_MAX + 3 bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/audit.h"
#include "ripple/ripple.h"
#include "ripplex/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_str(const char *s) {
  if (!s) abort();
  size_t n = strlen(s);
  if (n > AUDIT_STR_MAX + 3) abort();
  for (size_t i = 0, l; i < n; i += l)
    if (!(l = utf8_len((const unsigned char *)s + i, n - i))) abort();
}

static int one_of(const char *s, const char *const *set) {
  for (; *set; set++)
    if (!strcmp(s, *set)) return 1;
  return 0;
}

static void check_event(const audit_event_t *e) {
  static const char *const stages[] = {"ResponseComplete", "Panic", NULL};
  static const char *const verbs[] = {"create", "update",           "patch",
                                      "delete", "deletecollection", NULL};
  const char *const strs[] = {
      e->audit_id,      e->verb,     e->stage,       e->user,      e->impersonated, e->user_agent,
      e->source_ip,     e->resource, e->subresource, e->api_group, e->api_version,  e->ns,
      e->name,          e->uid,      e->rv,          e->status,    e->reason,       e->message,
      e->resp_kind,     e->resp_uid, e->resp_rv,     e->resp_name, e->resp_ns,      e->req_kind,
      e->generate_name, e->span_id,  e->cpid};
  for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) check_str(strs[i]);
  for (size_t i = 0; i < AUDIT_GROUPS_MAX; i++) check_str(e->groups[i]);
  if (!*e->audit_id || !one_of(e->verb, verbs) || !one_of(e->stage, stages)) abort();
  if (e->ngroups > AUDIT_GROUPS_MAX || e->ngroups > e->ngroups_total) abort();
  if (e->ngroups != (e->ngroups_total < AUDIT_GROUPS_MAX ? e->ngroups_total : AUDIT_GROUPS_MAX))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  size_t max = data[0] < 0x20 ? data[0] : 1000;
  audit_batch_t b, zero;
  memset(&b, 0, sizeof b);
  memset(&zero, 0, sizeof zero);
  char err[256];
  int rc = audit_parse((const char *)data + 1, size - 1, max, &b, err, sizeof err);
  if (rc != RIPPLE_OK) {
    if (rc != RIPPLE_EJSON && rc != RIPPLE_ERANGE) abort();
    if (!err[0] || memcmp(&b, &zero, sizeof b) != 0) abort();
    return 0;
  }
  if (b.n > max || (b.n && !b.ev)) abort();
  for (size_t i = 0; i < b.n; i++) check_event(&b.ev[i]);
  audit_batch_free(&b);
  if (memcmp(&b, &zero, sizeof b) != 0) abort();
  return 0;
}
