/*
 * status.c - libripple-kube's error messages (status.h) and the descriptions
 * of its error codes (ripple_kube_strerror, kube.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "status.h"

int kube_fail(ripple_kube_status_t *st, int err, const char *fmt, ...) {
  if (!st) return err;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->message, sizeof st->message, fmt, ap);
  va_end(ap);
  return err;
}

const char *ripple_kube_strerror(int err) {
  switch (err) {
    case RIPPLE_KUBE_EHTTP: return "the API server refused the request";
    case RIPPLE_KUBE_ENOTFOUND: return "not found";
    case RIPPLE_KUBE_ECONFLICT: return "conflict (changed meanwhile, or already exists)";
    case RIPPLE_KUBE_EGONE: return "resource version too old (expired)";
    case RIPPLE_KUBE_EFORBIDDEN: return "not authenticated or not allowed";
    case RIPPLE_KUBE_EINVALID: return "the object is invalid";
    case RIPPLE_KUBE_ECONNECT: return "no answer from the API server";
    case RIPPLE_KUBE_ECONFIG: return "unusable kubeconfig";
    case RIPPLE_KUBE_ECRED: return "the credential plugin failed";
    default: return ripple_strerror(err);
  }
}
