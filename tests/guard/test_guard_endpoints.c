/*
 * test_guard_endpoints.c - how ripple-guard finds a Service's endpoints, no
 * cluster (guard/endpoints.c): the name of the Service port the registration
 * calls, the ready endpoints of EndpointSlices at the port of that name,
 * malformed slices and endpoints skipped and counted, --endpoints' list, the
 * loopback rule for addresses, streaks carried across reads, and a
 * registration by Service giving the guard what to read.
 */
#include <stdio.h>
#include <string.h>

#include "guard.h"
#include "ripplex/sbuf.h"
#include "testutil.h"

/* A Service of two named ports, as the chart's webhook has one. */
static const char *svc_json =
    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"wh\"},\"spec\":{"
    "\"ports\":[{\"name\":\"metrics\",\"port\":9090,\"targetPort\":9090},"
    "{\"name\":\"https\",\"port\":443,\"targetPort\":\"https\"}]}}";

/* Three endpoints, one not ready, one terminating but ready, one with no
 * conditions (unknown is ready); the https port resolved to 8443. */
static const char *slice_json =
    "{\"apiVersion\":\"discovery.k8s.io/v1\",\"kind\":\"EndpointSlice\",\"addressType\":\"IPv4\","
    "\"ports\":[{\"name\":\"metrics\",\"port\":9090,\"protocol\":\"TCP\"},"
    "{\"name\":\"https\",\"port\":8443,\"protocol\":\"TCP\"}],\"endpoints\":["
    "{\"addresses\":[\"10.0.0.1\"],\"conditions\":{\"ready\":true}},"
    "{\"addresses\":[\"10.0.0.2\"],\"conditions\":{\"ready\":false,\"terminating\":true}},"
    "{\"addresses\":[\"10.0.0.3\",\"10.0.0.9\"],\"conditions\":{\"ready\":true,"
    "\"terminating\":true}},"
    "{\"addresses\":[\"10.0.0.4\"]}]}";

static int has(const guard_eps_t *e, const char *addr, unsigned port) {
  for (size_t i = 0; i < e->n; i++)
    if (!strcmp(e->e[i].addr, addr) && e->e[i].port == port) return 1;
  return 0;
}

static int add(guard_eps_t *e, const char *json, const char *port_name) {
  json_t *j = json_loads(json, 0, NULL);
  assert_non_null(j);
  int rc = guard_eps_add_slice(e, j, port_name);
  json_decref(j);
  return rc;
}

static void test_service_port_name(void **state) {
  (void)state;
  json_t *svc = json_loads(svc_json, 0, NULL);
  char name[64], why[200];
  assert_int_equal(guard_svc_port_name(svc, 443, name, sizeof name, why, sizeof why), RIPPLE_OK);
  assert_string_equal(name, "https");
  assert_int_equal(guard_svc_port_name(svc, 80, name, sizeof name, why, sizeof why), RIPPLE_ENOENT);
  assert_non_null(strstr(why, "no port 80"));
  json_decref(svc);
  /* One unnamed port: "" in the slices too. */
  svc = json_loads("{\"spec\":{\"ports\":[{\"port\":443,\"targetPort\":8443}]}}", 0, NULL);
  assert_int_equal(guard_svc_port_name(svc, 443, name, sizeof name, why, sizeof why), RIPPLE_OK);
  assert_string_equal(name, "");
  json_decref(svc);
  svc = json_loads("{\"spec\":{\"ports\":{}}}", 0, NULL);
  assert_int_equal(guard_svc_port_name(svc, 443, name, sizeof name, why, sizeof why), RIPPLE_EJSON);
  json_decref(svc);
}

static void test_ready_endpoints_by_port_name(void **state) {
  (void)state;
  guard_eps_t e = {0};
  assert_int_equal(add(&e, slice_json, "https"), 3);
  assert_int_equal(e.n, 3);
  assert_true(has(&e, "10.0.0.1", 8443));
  assert_false(has(&e, "10.0.0.2", 8443)); /* not ready */
  assert_true(has(&e, "10.0.0.3", 8443));  /* the first address only */
  assert_false(has(&e, "10.0.0.9", 8443));
  assert_true(has(&e, "10.0.0.4", 8443));
  assert_int_equal(e.bad, 0);
  /* The same slice again (a list that restarted, two slices overlapping
   * during an update): nothing twice. */
  assert_int_equal(add(&e, slice_json, "https"), 0);
  assert_int_equal(e.n, 3);
  /* The other port of the same Pods is another endpoint. */
  assert_int_equal(add(&e, slice_json, "metrics"), 3);
  assert_true(has(&e, "10.0.0.1", 9090));
  /* A port the slice does not have: its Pods do not serve it. */
  guard_eps_t f = {0};
  assert_int_equal(add(&f, slice_json, "grpc"), 0);
  assert_int_equal(f.n, 0);
  assert_int_equal(f.bad, 0);
}

static void test_ipv6_unnamed_and_empty(void **state) {
  (void)state;
  guard_eps_t e = {0};
  assert_int_equal(add(&e,
                       "{\"addressType\":\"IPv6\",\"ports\":[{\"port\":8443}],\"endpoints\":["
                       "{\"addresses\":[\"fd00::1\"],\"conditions\":{\"ready\":null}}]}",
                       ""),
                   1);
  char text[80];
  guard_ep_text(&e.e[0], text, sizeof text);
  assert_string_equal(text, "[fd00::1]:8443");
  /* Go writes a slice without endpoints or ports as null. */
  assert_int_equal(add(&e, "{\"addressType\":\"IPv4\",\"ports\":null,\"endpoints\":null}", ""), 0);
  /* FQDN slices are never a Service's Pods: nothing, and nothing wrong. */
  assert_int_equal(add(&e,
                       "{\"addressType\":\"FQDN\",\"ports\":[{\"port\":1}],\"endpoints\":["
                       "{\"addresses\":[\"a.example\"]}]}",
                       ""),
                   0);
  assert_int_equal(e.n, 1);
  assert_int_equal(e.bad, 0);
}

static void test_malformed_skipped_and_counted(void **state) {
  (void)state;
  static const char *const slices[] = {
      "[]",
      "{\"ports\":[],\"endpoints\":[]}",
      "{\"addressType\":\"IPX\",\"endpoints\":[]}",
      "{\"addressType\":\"IPv4\",\"ports\":{},\"endpoints\":[]}",
      "{\"addressType\":\"IPv4\",\"ports\":[7],\"endpoints\":[]}",
      "{\"addressType\":\"IPv4\",\"ports\":[{\"name\":1,\"port\":7}],\"endpoints\":[]}",
      "{\"addressType\":\"IPv4\",\"ports\":[{\"port\":70000}],\"endpoints\":[]}",
      "{\"addressType\":\"IPv4\",\"ports\":[{\"port\":\"7\"}],\"endpoints\":[]}",
      "{\"addressType\":\"IPv4\",\"ports\":[{\"port\":7}],\"endpoints\":{}}",
  };
  guard_eps_t e = {0};
  for (size_t i = 0; i < sizeof slices / sizeof slices[0]; i++)
    assert_int_equal(add(&e, slices[i], ""), RIPPLE_EJSON);
  assert_int_equal(e.bad, sizeof slices / sizeof slices[0]);
  assert_string_equal(e.why, "a slice is not an object");
  assert_int_equal(e.n, 0);
  /* Bad endpoints are skipped one by one; the good ones of the slice stay. */
  guard_eps_t f = {0};
  assert_int_equal(add(&f,
                       "{\"addressType\":\"IPv4\",\"ports\":[{\"port\":7}],\"endpoints\":["
                       "\"x\",{\"addresses\":[]},{\"addresses\":[\"fd00::1\"]},"
                       "{\"addresses\":[\"10.0.0.1/8\"]},{\"addresses\":[7]},"
                       "{\"addresses\":[\"10.0.0.5\"],\"conditions\":{\"ready\":\"yes\"}},"
                       "{\"addresses\":[\"10.0.0.6\"],\"conditions\":[]},"
                       "{\"addresses\":[\"10.0.0.7\"],\"conditions\":{\"ready\":true}}]}",
                       ""),
                   1);
  assert_int_equal(f.bad, 7);
  assert_true(has(&f, "10.0.0.7", 7));
}

static void test_endpoints_capped(void **state) {
  (void)state;
  guard_eps_t e = {0};
  sbuf_t b;
  sbuf_init(&b);
  sbuf_puts(&b, "{\"addressType\":\"IPv4\",\"ports\":[{\"port\":443}],\"endpoints\":[");
  for (int i = 0; i < GUARD_MAX_ENDPOINTS + 5; i++)
    sbuf_printf(&b, "%s{\"addresses\":[\"10.1.0.%d\"]}", i ? "," : "", i);
  sbuf_puts(&b, "]}");
  sbuf_putc(&b, '\0');
  assert_false(b.oom);
  const char *slice = b.p;
  assert_int_equal(add(&e, slice, ""), GUARD_MAX_ENDPOINTS);
  assert_int_equal(e.dropped, 5);
  sbuf_free(&b);
}

static void test_endpoints_option(void **state) {
  (void)state;
  guard_eps_t e;
  char why[200];
  assert_int_equal(
      guard_eps_parse_list("127.0.0.1:8443,[::1]:9443,127.0.0.1:8443", &e, why, sizeof why),
      RIPPLE_OK);
  assert_int_equal(e.n, 2);
  assert_true(has(&e, "127.0.0.1", 8443));
  assert_true(has(&e, "::1", 9443));
  static const char *const bad[] = {"",           "127.0.0.1",    "127.0.0.1:",   "127.0.0.1:0",
                                    "host:443",   "::1:443",      "[::1:443",     "1.2.3.4:99999",
                                    "1.2.3.4:8x", "127.0.0.1:1,", "[127.0.0.1]:1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_not_equal(guard_eps_parse_list(bad[i], &e, why, sizeof why), RIPPLE_OK);
  assert_true(guard_addr_loopback("127.0.0.1"));
  assert_true(guard_addr_loopback("127.9.8.7"));
  assert_true(guard_addr_loopback("::1"));
  assert_false(guard_addr_loopback("10.0.0.1"));
  assert_false(guard_addr_loopback("::2"));
  assert_false(guard_addr_loopback("localhost"));
}

static void test_streaks_carried(void **state) {
  (void)state;
  guard_eps_t a, b;
  char why[200];
  assert_int_equal(guard_eps_parse_list("127.0.0.1:1,127.0.0.1:2", &a, why, sizeof why), 0);
  assert_int_equal(guard_eps_parse_list("127.0.0.1:3,127.0.0.1:2", &b, why, sizeof why), 0);
  a.e[1].failing = 1;
  assert_false(guard_eps_same(&a, &b));
  guard_eps_carry(&b, &a);
  assert_int_equal(b.e[0].failing, 0);
  assert_int_equal(b.e[1].failing, 1);
  assert_int_equal(guard_eps_parse_list("127.0.0.1:2,127.0.0.1:1", &b, why, sizeof why), 0);
  assert_true(guard_eps_same(&a, &b));
}

static void test_registration_by_service(void **state) {
  (void)state;
  json_t *cfg = json_loads(
      "{\"webhooks\":[{\"name\":\"w\",\"clientConfig\":{\"service\":{\"namespace\":\"rs\","
      "\"name\":\"wh\",\"path\":\"/mutate\"}}},{\"name\":\"u\",\"clientConfig\":{\"url\":"
      "\"https://127.0.0.1:1/\"}}]}",
      0, NULL);
  guard_reg_t r;
  char why[200];
  assert_int_equal(guard_reg_parse(cfg, &r, why, sizeof why), RIPPLE_OK);
  assert_string_equal(r.t[0].url, "https://wh.rs.svc:443/mutate");
  assert_string_equal(r.t[0].svc_ns, "rs");
  assert_string_equal(r.t[0].svc_name, "wh");
  assert_int_equal(r.t[0].svc_port, 443);
  assert_null(r.t[1].svc_ns);
  guard_reg_free(&r);
  json_decref(cfg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_service_port_name),
      cmocka_unit_test(test_ready_endpoints_by_port_name),
      cmocka_unit_test(test_ipv6_unnamed_and_empty),
      cmocka_unit_test(test_malformed_skipped_and_counted),
      cmocka_unit_test(test_endpoints_capped),
      cmocka_unit_test(test_endpoints_option),
      cmocka_unit_test(test_streaks_carried),
      cmocka_unit_test(test_registration_by_service),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
