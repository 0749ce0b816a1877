/*
 * reg_kube.c - reading the MutatingWebhookConfiguration and patching the
 * guard's condition (and, with --ca-bundle, the webhooks' caBundle) on it,
 * through libripple-kube (guard.h). The guard needs only get and patch on
 * that one object (the chart's ClusterRole, deploy/helm/ripple/templates/guard.yaml).
 */
#include <stdio.h>
#include <string.h>

#include "guard.h"
#include "ripplex/sbuf.h"

static int mwc(ripple_kube_client_t *kc, const ripple_kube_resource_t **r,
               ripple_kube_status_t *st) {
  return ripple_kube_resolve(kc, "mutatingwebhookconfigurations.admissionregistration.k8s.io", r,
                             st);
}

int guard_reg_read(ripple_kube_client_t *kc, const char *name, guard_reg_t *out,
                   ripple_kube_status_t *st, char *why, size_t cap) {
  const ripple_kube_resource_t *r;
  json_t *cfg = NULL;
  int rc = mwc(kc, &r, st);
  if (rc == RIPPLE_OK) rc = ripple_kube_get(kc, r, NULL, name, &cfg, st);
  if (rc != RIPPLE_OK) {
    snprintf(why, cap, "%s", st && st->message[0] ? st->message : ripple_kube_strerror(rc));
    return rc;
  }
  rc = guard_reg_parse(cfg, out, why, cap);
  json_decref(cfg);
  return rc;
}

/* One strategic merge patch of the registration, by the guard's field manager. */
static int patch(ripple_kube_client_t *kc, const char *name, sbuf_t *p, ripple_kube_status_t *st) {
  const ripple_kube_resource_t *r;
  int rc = mwc(kc, &r, st);
  if (rc != RIPPLE_OK) return rc;
  if (p->oom) return RIPPLE_ENOMEM;
  ripple_kube_write_opts_t wo = {.field_manager = "ripple-guard"};
  return ripple_kube_patch(kc, r, NULL, name, RIPPLE_KUBE_PATCH_STRATEGIC, p->p, p->len, &wo, NULL,
                           st);
}

int guard_reg_set(ripple_kube_client_t *kc, const char *name, const guard_reg_t *reg, int off,
                  ripple_kube_status_t *st) {
  sbuf_t p;
  sbuf_init(&p);
  guard_reg_patch(reg, off, &p);
  int rc = patch(kc, name, &p, st);
  sbuf_free(&p);
  return rc;
}

int guard_reg_set_ca(ripple_kube_client_t *kc, const char *name, const guard_reg_t *reg,
                     const char *pem, size_t len, ripple_kube_status_t *st) {
  sbuf_t p;
  sbuf_init(&p);
  guard_reg_ca_patch(reg, pem, len, &p);
  int rc = patch(kc, name, &p, st);
  sbuf_free(&p);
  return rc;
}
