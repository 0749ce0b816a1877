/*
 * jaeger_lab.h - a real Jaeger v2 (the lab's, built by `lab/build.sh --jaeger`)
 * as the OTLP backend of lab tests: started on free loopback ports with memory
 * storage, fed over OTLP/HTTP by the code under test, and read back through
 * its query API (/api/v3, OTLP JSON) so a test can assert what arrived.
 *
 * Jaeger runs without a batch processor and without an exporter queue, so a
 * 200 from its OTLP receiver means the spans are in storage: a test may query
 * right after a successful export. Every port it opens is on 127.0.0.1 (the
 * lab's network rule, docs/lab.md); it dials nothing.
 *
 * Memory: the handle belongs to the caller from jaeger_lab_start() until the
 * one jaeger_lab_stop(), which also removes its temporary directory (config
 * and log). The URL and path strings are borrowed from the handle and live
 * as long as it does. jaeger_lab_trace() gives the caller a new reference
 * (json_decref it); jaeger_lab_find_span() returns a pointer borrowed from
 * the result it was given. No function here uses cmocka: failures are return
 * codes and messages, so a test decides how to fail.
 */
#ifndef RIPPLE_TESTS_JAEGER_LAB_H
#define RIPPLE_TESTS_JAEGER_LAB_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct jaeger_lab jaeger_lab_t;

/* Start the binary named by $RIPPLE_LAB_JAEGER and wait (30 s at most) until
 * its health check, query API and OTLP receiver answer. On failure returns a
 * negative RIPPLE_E* code and a message for people in err (the log's last
 * lines when Jaeger exited or never became healthy):
 *   RIPPLE_EINVAL  $RIPPLE_LAB_JAEGER unset or not executable, or out NULL
 *   RIPPLE_ESYS    a system call failed (ports, temporary directory, fork)
 *   RIPPLE_ESTATE  Jaeger exited before it was healthy
 *   RIPPLE_ETIMEDOUT  it did not become healthy in 30 s (it is killed)
 * Set RIPPLE_JAEGER_KEEP=1 to keep the temporary directory at stop. */
int jaeger_lab_start(jaeger_lab_t **out, char *err, size_t errcap);
/* jaeger_lab_start() with an OTLP gRPC receiver too, on 127.0.0.1:grpc_port
 * (given, not picked: kube-apiserver of `lab/lab up --apiserver-tracing`
 * exports there, $RIPPLE_LAB_OTLP_PORT), plaintext as kube-apiserver sends.
 * Over gRPC, spans arrive when the sender's batch leaves (kube-apiserver's
 * every 5 s): wait for them with jaeger_lab_wait_spans(). A port in use
 * fails the start with Jaeger's message (RIPPLE_ESTATE). */
int jaeger_lab_start_grpc(jaeger_lab_t **out, unsigned grpc_port, char *err, size_t errcap);

/* "http://127.0.0.1:P/v1/traces": where OTLP/HTTP trace exports go. */
const char *jaeger_lab_otlp_url(const jaeger_lab_t *j);
/* "http://127.0.0.1:Q": the query API (GET Q/api/v3/traces/{id}, ...). */
const char *jaeger_lab_query_url(const jaeger_lab_t *j);
/* Jaeger's log (stdout and stderr) and its pid, -1 after kill or stop. */
const char *jaeger_lab_log_path(const jaeger_lab_t *j);
pid_t jaeger_lab_pid(const jaeger_lab_t *j);

/* GET /api/v3/traces/{trace_hex32}?raw_traces=true (no clock-skew
 * adjustment). Returns
 *   RIPPLE_OK      *out = the answer's "result" object ({"resourceSpans":
 *                  [...]}, OTLP JSON), a new reference
 *   RIPPLE_ENOENT  404: Jaeger has no span of that trace
 *   RIPPLE_EINVAL  trace_hex32 is not 32 hex digits, or j or out NULL
 *   RIPPLE_ESTATE  no answer (Jaeger not running) or another HTTP status
 *   RIPPLE_EJSON   a 200 whose body is not JSON with a "result" object
 * jaeger_lab_last_error() describes the last failure (status and body). */
int jaeger_lab_trace(jaeger_lab_t *j, const char *trace_hex32, json_t **out);

/* jaeger_lab_trace() until the trace has at least `want` spans or timeout_ms
 * has passed (polling every 50 ms), for code that exports in the background.
 * RIPPLE_OK with *out as jaeger_lab_trace() gives it; RIPPLE_ETIMEDOUT when
 * fewer arrived (*out untouched; jaeger_lab_last_error() says how many);
 * otherwise jaeger_lab_trace()'s errors other than RIPPLE_ENOENT. */
int jaeger_lab_wait_spans(jaeger_lab_t *j, const char *trace_hex32, size_t want, int timeout_ms,
                          json_t **out);

/* The last failure of jaeger_lab_trace()/jaeger_lab_wait_spans(), "" if none;
 * borrowed until the next call. */
const char *jaeger_lab_last_error(const jaeger_lab_t *j);

/* The spans in result.resourceSpans[].scopeSpans[].spans[] (0 for NULL or
 * another shape). */
size_t jaeger_lab_count_spans(const json_t *result);
/* The span whose spanId is span_hex16 (hex, either case), borrowed from
 * result; NULL when absent. */
json_t *jaeger_lab_find_span(const json_t *result, const char *span_hex16);

/* SIGKILL Jaeger and reap it: every stored span is gone, the ports refuse.
 * RIPPLE_OK, or RIPPLE_ESTATE when it was not running. The handle stays
 * valid: jaeger_lab_restart() or jaeger_lab_stop() next. */
int jaeger_lab_kill(jaeger_lab_t *j);
/* Start Jaeger again on the same ports and configuration (killing it first
 * if it runs), with empty storage; the log is appended to. Errors as
 * jaeger_lab_start(). */
int jaeger_lab_restart(jaeger_lab_t *j, char *err, size_t errcap);
/* SIGTERM (SIGKILL after 10 s), reap, remove the temporary directory, free
 * the handle. NULL is fine. */
void jaeger_lab_stop(jaeger_lab_t *j);

#endif
