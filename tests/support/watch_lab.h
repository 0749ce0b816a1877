/*
 * watch_lab.h - what the lab tests of watches and informers share
 * (test_kube_watch.c, test_kube_informer.c): the lab's lock and commands
 * (restart a component, compact etcd), ConfigMaps to change, and the
 * comparison of what a consumer holds with a fresh list.
 */
#ifndef RIPPLE_WATCH_LAB_H
#define RIPPLE_WATCH_LAB_H

#include <jansson.h>

#include "ripple/kube.h"
#include "rw_lab.h"

/* Take /tmp/ripple-lab.lock for the rest of the process, as every test that
 * restarts a component must (other programs use the lab too). Skipped when
 * RIPPLE_LAB_LOCK_HELD=1 says the caller holds it already; a second call in
 * the same process is a no-op. */
void wl_lock(void);

/* Run "lab/lab CMD [ARG]" from $RIPPLE_SOURCE_DIR (arg may be NULL); fails
 * the test when it fails. */
void wl_lab(const char *cmd, const char *arg);

/* ConfigMaps in ns. Labels as JSON ("{\"app\":\"web\"}") or NULL; owner: a
 * ConfigMap's uid to name in ownerReferences, or NULL. Return the stored
 * object (json_decref it). */
json_t *wl_cm_create(ripple_kube_client_t *c, const char *ns, const char *name, const char *labels,
                     const json_t *owner);
json_t *wl_cm_set(ripple_kube_client_t *c, const char *ns, const char *name, const char *value);
void wl_cm_delete(ripple_kube_client_t *c, const char *ns, const char *name);

/* "name=resourceVersion" of every ConfigMap, sorted, one per line: from a
 * fresh list, and from an informer's cache. Free with free(). */
char *wl_list_state(ripple_kube_client_t *c, const char *ns);
char *wl_cache_state(ripple_kube_informer_t *inf);
/* The same of the objects that are the values of the JSON object objs. */
char *wl_objects_state(const json_t *objs);

/* Wait (at most timeout_ms) until the cache equals a fresh list; fail
 * showing both if it never does. */
void wl_converged(ripple_kube_client_t *c, const char *ns, ripple_kube_informer_t *inf,
                  int timeout_ms);
/* The same for any consumer: state(ud) returns what it holds as
 * wl_list_state() does (freed here); the failure names it what. */
void wl_converged_to(ripple_kube_client_t *c, const char *ns, char *(*state)(void *ud), void *ud,
                     const char *what, int timeout_ms);

/* Wait until the controller manager has put kube-root-ca.crt into a new
 * namespace, so that counts of ConfigMaps do not depend on when it does. */
void wl_wait_root_ca(ripple_kube_client_t *c, const char *ns);

/* Sleep for ms milliseconds. */
void wl_sleep_ms(int ms);

#endif
