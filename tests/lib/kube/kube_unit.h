/*
 * kube_unit.h - objects and records for the Kubernetes client's unit tests
 * (test_kube_watch.c, test_kube_informer.c).
 */
#ifndef RIPPLE_TESTS_KUBE_UNIT_H
#define RIPPLE_TESTS_KUBE_UNIT_H

#include <jansson.h>

#include "watch_internal.h"

/* A compact ConfigMap: {"metadata":{"name":N,"namespace":NS,"uid":U,
 * "resourceVersion":RV,"labels":{...}}} with labels given as "k=v,k=v"; ns
 * and labels may be NULL. */
json_t *unit_obj(const char *ns, const char *name, const char *uid, const char *rv,
                 const char *labels);
/* qsort order of fixed-size strings (char[N] elements). */
int unit_cmp_str(const void *a, const void *b);
/* A record of obj (taken). */
krec_t *unit_rec(json_t *obj);

#endif
