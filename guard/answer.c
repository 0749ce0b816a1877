/*
 * answer.c - the probe's AdmissionReview and the check of what came back
 * (guard.h).
 *
 * The probe is what the API server would send for a dry-run ConfigMap create
 * in a namespace that never exists: the webhook answers it the way it answers
 * every write (so the probe goes through the same code), but dryRun means no
 * mergelog, no span and no memory, and nothing is ever stored. The answer
 * comes from outside (a webhook that may be broken), so every field is
 * checked for its type before it is believed; tests/fuzz/fuzz_guard.c fuzzes
 * it.
 */
#include <stdio.h>
#include <string.h>

#include "guard.h"
#include "ripplex/sbuf.h"

void guard_probe_body(sbuf_t *b, const char *uid) {
  sbuf_puts(b,
            "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
            "\"request\":{\"uid\":");
  sbuf_json_str(b, uid);
  sbuf_puts(b,
            ",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"ConfigMap\"},"
            "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"configmaps\"},"
            "\"requestKind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"ConfigMap\"},"
            "\"requestResource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":"
            "\"configmaps\"},\"name\":\"ripple-guard-probe\",\"namespace\":\"" GUARD_PROBE_NS
            "\",\"operation\":\"CREATE\",\"userInfo\":{\"username\":\"ripple-guard\"},"
            "\"object\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
            "\"ripple-guard-probe\",\"namespace\":\"" GUARD_PROBE_NS
            "\"}},\"oldObject\":null,\"dryRun\":true,\"options\":{\"apiVersion\":"
            "\"meta.k8s.io/v1\",\"kind\":\"CreateOptions\",\"dryRun\":[\"All\"]}}}");
}

static int bad(char *why, size_t cap, const char *what) {
  snprintf(why, cap, "%s", what);
  return RIPPLE_EJSON;
}

int guard_answer_check(const char *body, size_t len, const char *uid, char *why, size_t cap) {
  if (!body || !uid) return bad(why, cap, "no answer");
  json_error_t err;
  json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &err);
  if (!j) return bad(why, cap, "the answer is not JSON");
  int rc = RIPPLE_EJSON;
  const json_t *resp = json_object_get(j, "response");
  const char *av = json_string_value(json_object_get(j, "apiVersion"));
  const char *kind = json_string_value(json_object_get(j, "kind"));
  const char *ruid = json_string_value(json_object_get(resp, "uid"));
  if (!json_is_object(j))
    bad(why, cap, "the answer is not a JSON object");
  else if (!av || strcmp(av, "admission.k8s.io/v1") != 0)
    bad(why, cap, "apiVersion is not admission.k8s.io/v1");
  else if (!kind || strcmp(kind, "AdmissionReview") != 0)
    bad(why, cap, "kind is not AdmissionReview");
  else if (!json_is_object(resp))
    bad(why, cap, "no response object");
  else if (!ruid || strcmp(ruid, uid) != 0)
    bad(why, cap, "response.uid is not the probe's");
  else if (!json_is_boolean(json_object_get(resp, "allowed")))
    bad(why, cap, "response.allowed is not a boolean");
  else
    rc = RIPPLE_OK;
  json_decref(j);
  return rc;
}
