/*
 * kube_unit.c - objects and records for the Kubernetes client's unit tests
 * (kube_unit.h).
 */
#include "kube_unit.h"

#include <stdio.h>
#include <string.h>

#include "testutil.h"

json_t *unit_obj(const char *ns, const char *name, const char *uid, const char *rv,
                 const char *labels) {
  json_t *md = json_pack("{s:s, s:s, s:s}", "name", name, "uid", uid, "resourceVersion", rv);
  if (ns) json_object_set_new(md, "namespace", json_string(ns));
  if (labels) {
    json_t *l = json_object();
    char buf[256];
    snprintf(buf, sizeof buf, "%s", labels);
    for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
      char *eq = strchr(kv, '=');
      if (!eq) {
        fail_msg("label '%s' has no '='", kv);
        continue;
      }
      *eq = '\0';
      json_object_set_new(l, kv, json_string(eq + 1));
    }
    json_object_set_new(md, "labels", l);
  }
  return json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "ConfigMap", "metadata", md);
}

int unit_cmp_str(const void *a, const void *b) { return strcmp(a, b); }

krec_t *unit_rec(json_t *obj) {
  krec_t *r = NULL;
  if (krec_from_tree(obj, 0, &r) != RIPPLE_OK) fail_msg("krec_from_tree");
  json_decref(obj);
  return r;
}
