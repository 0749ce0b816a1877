/*
 * endpoints_kube.c - a webhook's Service and its EndpointSlices read through
 * libripple-kube (guard.h): get of the one Service, for the name of the port
 * the registration calls, and a list of its slices by the label
 * kubernetes.io/service-name in its namespace. The chart's Role grants just
 * that (deploy/helm/ripple/templates/guard.yaml). A list, not an informer:
 * the guard reads them every --resync and again when no endpoint answered,
 * so a rollout that replaced every Pod since is seen before the webhook is
 * judged down.
 */
#include <stdio.h>
#include <string.h>

#include "guard.h"

typedef struct slices {
  guard_eps_t *eps;
  const char *port_name;
} slices_t;

static void on_slice(void *ud, json_t *obj) {
  slices_t *s = ud;
  if (!obj) { /* the list restarted: forget what it gave so far */
    memset(s->eps, 0, sizeof *s->eps);
    return;
  }
  (void)guard_eps_add_slice(s->eps, obj, s->port_name);
}

static int service_port_name(ripple_kube_client_t *kc, const guard_target_t *t, char *name,
                             size_t cap, ripple_kube_status_t *st, char *why, size_t wcap) {
  const ripple_kube_resource_t *r;
  json_t *svc = NULL;
  int rc = ripple_kube_resolve(kc, "services", &r, st);
  if (rc == RIPPLE_OK) rc = ripple_kube_get(kc, r, t->svc_ns, t->svc_name, &svc, st);
  if (rc != RIPPLE_OK) {
    snprintf(why, wcap, "service %s/%s: %s", t->svc_ns, t->svc_name,
             st->message[0] ? st->message : ripple_kube_strerror(rc));
    return rc;
  }
  rc = guard_svc_port_name(svc, t->svc_port, name, cap, why, wcap);
  json_decref(svc);
  return rc;
}

int guard_eps_read(ripple_kube_client_t *kc, const guard_target_t *t, guard_eps_t *out,
                   ripple_kube_status_t *st, char *why, size_t cap) {
  char port_name[128], sel[320];
  int rc = service_port_name(kc, t, port_name, sizeof port_name, st, why, cap);
  if (rc != RIPPLE_OK) return rc;
  const ripple_kube_resource_t *r;
  rc = ripple_kube_resolve(kc, "endpointslices.discovery.k8s.io", &r, st);
  snprintf(sel, sizeof sel, "kubernetes.io/service-name=%s", t->svc_name);
  ripple_kube_list_opts_t lo = {.namespace_ = t->svc_ns, .label_selector = sel};
  static guard_eps_t eps; /* one thread reads: kept off the stack */
  memset(&eps, 0, sizeof eps);
  slices_t s = {&eps, port_name};
  if (rc == RIPPLE_OK) rc = ripple_kube_list(kc, r, &lo, on_slice, &s, NULL, st);
  if (rc != RIPPLE_OK) {
    snprintf(why, cap, "endpointslices of %s/%s: %s", t->svc_ns, t->svc_name,
             st->message[0] ? st->message : ripple_kube_strerror(rc));
    return rc;
  }
  *out = eps;
  return RIPPLE_OK;
}
