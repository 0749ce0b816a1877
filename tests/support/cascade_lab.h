/*
 * cascade_lab.h - what the cascade lab tests share (tests/webhook's
 * test_cascades*_lab.c, tests/web's test_dashboard_lab.c), on top of wh_lab.h (the real
 * trace server and webhook for one namespace of the test's own): writes as a
 * person makes them with a root CPID the test knows, raw requests to the API
 * server (DELETE with its admission warnings, /metrics as text), the objects
 * the tests make, and the trace server's answers as JSON.
 *
 * The tests run one at a time (RUN_SERIAL), so one global state is enough.
 */
#ifndef RIPPLE_TESTS_CASCADE_LAB_H
#define RIPPLE_TESTS_CASCADE_LAB_H

#include <jansson.h>
#include <stddef.h>

#include "ripple/kube.h"
#include "rw_lab.h"
#include "wh_lab.h"

#define CL_CPID (RIPPLE_CPID_STRLEN + 1)

/* The image of every container the tests make (KWOK runs none), and a Pod
 * spec's containers of it. */
#define CL_IMAGE "ripple.invalid/noop"
#define CL_CONTAINERS "\"containers\":[{\"name\":\"c\",\"image\":\"" CL_IMAGE ":1\"}]"

/* The test's client, namespace, processes and registration (wh_lab.h). */
extern whlab_t cl;

/* The client, the trace server and the webhook, a fresh namespace
 * "<prefix>-<random>" and the webhook registered for it. For the client and
 * the namespace only: whlab_begin_cluster(&cl, prefix). */
void cl_begin(const char *prefix);
/* Start the webhook and the trace server unless they run; register them for
 * cl.ns (a new registration each time). */
void cl_start_webhook(void);
/* Remove the registration and wait until writes to cl.ns pass unchanged. */
void cl_unregister(void);
/* cmocka teardown: the registration, the namespace (unless ""), the processes. */
int cl_teardown(void **state);

/* ---- objects and writes ----------------------------------------------------- */

/* What the tests make: a Deployment and a StatefulSet (its service: name) of
 * replicas noop Pods labelled app=name, and a Service over app=name's Pods. */
json_t *cl_deployment(const char *name, int replicas);
json_t *cl_statefulset(const char *name, int replicas);
json_t *cl_service(const char *name);
/* The status fields of a Deployment that count its replicas ready (for
 * cl_wait_fields). */
extern const char *const CL_READY_APPS[];

/* The object, or NULL when it does not exist. */
json_t *cl_get(const char *resource, const char *name);
/* Create o (taken) carrying a fresh root context of its kind; the CPID to cpid. */
void cl_create_root(const char *resource, json_t *o, char cpid[CL_CPID]);
/* A merge patch as `kubectl ripple` writes it: a fresh root context under
 * kind's key plus the members of fields ("\"spec\":{\"replicas\":4}"). */
void cl_patch_root(const char *resource, const char *kind, const char *name, const char *fields,
                   char cpid[CL_CPID]);

/* A request to the API server as the lab's admin (curl, client certificate):
 * the HTTP status; *body (may be NULL, caller frees) the answer; warning (may
 * be NULL) the CPID of a "ripple: cpid X" admission warning, "" if none. */
long cl_api(const char *method, const char *path, const char *body, char **out,
            char warning[CL_CPID]);
/* A person's DELETE (propagationPolicy Background) of resource/name in ns
 * (NULL: cluster-scoped); the CPID the webhook's warning names into cpid
 * ("" if none). Fails the test unless the answer is 200 or 202. */
void cl_delete_person(const char *resource, const char *ns, const char *name, char cpid[CL_CPID]);

/* Poll cond every 100 ms up to timeout_ms; fail the test naming what when it
 * never holds. */
void cl_wait(int (*cond)(void *ud), void *ud, int timeout_ms, const char *what);
/* ripple-watch ($RIPPLE_WATCH_BIN, which ctest sets) on cl.ns, sending to the
 * trace server, with the arguments of more (NULL-terminated) after
 * --namespace and --trace-server, its log in cl.dir/watch.log; returns once
 * its first `watches` watches are synced. cl_watch_stop kills it (teardowns
 * call it; nothing when none runs). */
void cl_watch_start(const char *const *more, int watches);
void cl_watch_stop(void);
/* Fail unless the trace server took every record the webhook sent
 * (ripple_webhook_shipper_rejected_total 0): it refuses a whole batch for one
 * malformed record, and the cascades in it would only look cut. */
void cl_nothing_refused(void);
/* Stop the lab's kube-scheduler (SIGSTOP; its pid from $RIPPLE_LAB_DIR/run),
 * and let it go on (SIGCONT). Stopped, it is resumed at exit and on SIGINT or
 * SIGTERM too: a stopped scheduler would stop every later test. */
void cl_scheduler_stop(void);
void cl_scheduler_resume(void);
/* Number of Ready nodes a Pod without tolerations can go to. */
int cl_nodes(void);
/* Wait until every status path (NULL-terminated, e.g. "status.readyReplicas")
 * of resource/name is want, and status.observedGeneration (when the kind has
 * one) is metadata.generation. */
void cl_wait_fields(const char *resource, const char *name, long long want,
                    const char *const *paths, int timeout_ms);
/* Wait until exactly n Pods match selector, each Running and Ready. */
void cl_wait_pods(const char *selector, size_t n, int timeout_ms);
/* Wait until resource/name is gone. */
void cl_wait_gone(const char *resource, const char *name, int timeout_ms);
/* {name: cpid} of the objects of resource matching selector, their context
 * under kind's key ("" when they have none). */
json_t *cl_cpids(const char *resource, const char *selector, const char *kind);

/* ---- the trace server ------------------------------------------------------ */

/* The related CPIDs of cpid as an object {cpid: true}. */
json_t *cl_related_set(const char *cpid);
/* Every span the trace server holds (all pages), an array. */
json_t *cl_all_spans(void);
/* Wait until the trace server's stored span count has stopped growing. */
void cl_spans_settle(void);
const char *cl_attr(const json_t *span, const char *key);
/* Spans of arr named name, on an object called obj (NULL: any) of kind (NULL:
 * any). */
size_t cl_count(const json_t *arr, const char *name, const char *obj, const char *kind);
/* Does names ({name: ...}) hold every object name that a span of arr named
 * name refers to, and does each of names have between lo and hi such spans? */
void cl_expect_each(const json_t *arr, const char *name, const json_t *names, size_t lo, size_t hi);
/* Print a summary of spans (name and object, counted) to stderr. */
void cl_dump_spans(const char *label, const json_t *arr);

/* ---- the API server's write counters -------------------------------------- */

/* apiserver_request_total of writes (POST, PUT, PATCH, DELETE; dry runs left
 * out) summed over codes, as {"<resource>[/<sub>] <VERB>": n} for the
 * resources listed in res (NULL-terminated). */
json_t *cl_write_counts(const char *const *res);
/* cl_write_counts(res) once no namespace is terminating (at most 180 s: the
 * counts are cluster-wide) and the counters have stood still for 2 s (at
 * most 30 s): the cascade and the controllers' follow-ups are done. */
json_t *cl_quiet_counts(const char *const *res);
/* after - before of two cl_write_counts answers, the keys that changed only. */
json_t *cl_counts_diff(const json_t *before, const json_t *after);
/* How many calls to this test's webhook kube-apiserver let through unchanged
 * because the webhook did not answer in time (failurePolicy Ignore):
 * apiserver_admission_webhook_fail_open_count for the registration. */
long long cl_fail_opens(void);

#endif
