/*
 * server_rig.c - the trace server in the test's own process (server_rig.h).
 */
#include "server_rig.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_client.h"
#include "testutil.h"

rig_t *rig_new(void) {
  rig_t *r = calloc(1, sizeof *r);
  assert_non_null(r);
  snprintf(r->dir, sizeof r->dir, "/tmp/ripple-test-XXXXXX");
  assert_non_null(mkdtemp(r->dir));
  snprintf(r->db, sizeof r->db, "%s/trace.db", r->dir);
  r->cfg = (srv_config_t){
      .db_path = r->db,
      .query_limit = 100000,
      .limits = {.max_records = 1000, .max_sources = 64, .max_attrs = 16, .max_string = 256}};
  r->ho = (http_opts_t){.host = "127.0.0.1", .max_body = 1 << 20, .max_connections = 64};
  return r;
}

int rig_setup(void **state) {
  *state = rig_new();
  return 0;
}

void rig_post(const rig_t *r, const char *what, const char *body) {
  char url[256];
  snprintf(url, sizeof url, "%s/v1/%s", r->base, what);
  hc_resp_t resp;
  assert_int_equal(hc_request("POST", url, body, strlen(body), NULL, &resp), 0);
  if (resp.status != 200) fail_msg("POST %s: status %ld: %s", what, resp.status, resp.body);
  hc_resp_free(&resp);
}

void rig_open(rig_t *r) {
  char err[256];
  int rc = srv_open(&r->srv, &r->cfg, err, sizeof err);
  if (rc != RIPPLE_OK) fail_msg("srv_open: %s", err);
  rc = http_start(&r->srv, &r->ho, &r->h, err, sizeof err);
  if (rc != RIPPLE_OK) fail_msg("http_start: %s", err);
  /* Keep the port across restarts: a shipper must find the server again. */
  r->ho.port = http_port(r->h);
  snprintf(r->base, sizeof r->base, "http://127.0.0.1:%u", r->ho.port);
}

void rig_close(rig_t *r) {
  http_stop(r->h);
  srv_close(&r->srv);
  r->h = NULL;
}

void rig_first_database(rig_t *r, const char *rows) {
  static const char *schema =
      "PRAGMA journal_mode=WAL;"
      "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "INSERT INTO meta VALUES('schema', '1');"
      "CREATE TABLE mergelogs(seq INTEGER PRIMARY KEY, cpid BLOB NOT NULL,"
      "  time INTEGER NOT NULL, sources BLOB NOT NULL, body TEXT NOT NULL);"
      "CREATE INDEX mergelogs_time ON mergelogs(time);"
      "CREATE TABLE spans(seq INTEGER PRIMARY KEY, cpid BLOB NOT NULL,"
      "  start INTEGER NOT NULL, body TEXT NOT NULL);"
      "CREATE INDEX spans_start ON spans(start);";
  sqlite3 *d = NULL;
  assert_int_equal(sqlite3_open(r->db, &d), SQLITE_OK);
  assert_int_equal(sqlite3_exec(d, schema, NULL, NULL, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_exec(d, rows, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(d);
}

int rig_teardown(void **state) {
  rig_t *r = *state;
  if (r->h) rig_close(r);
  test_rmtree(r->dir);
  free(r);
  return 0;
}

void rig_self_signed(const rig_t *r, char *crt, size_t crtcap, char *key, size_t keycap) {
  char cmd[512];
  snprintf(crt, crtcap, "%s/tls.crt", r->dir);
  snprintf(key, keycap, "%s/tls.key", r->dir);
  snprintf(cmd, sizeof cmd,
           "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
           "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout %s -out %s "
           ">/dev/null 2>&1",
           key, crt);
  /* A test's own fixed command line, with paths it made itself. */
  assert_int_equal(system(cmd), 0); /* NOLINT(cert-env33-c) */
}

const char *rig_cpid(int key) {
  static char buf[8][40];
  static int next;
  char *b = buf[next++ % 8];
  snprintf(b, 40, "%08x-0000-4000-8000-000000000000", (unsigned)key);
  return b;
}

void rig_span(sbuf_t *s, int key, int n, const char *svc, const char *name, const char *kind,
              const char *obj, const char *owner, int k, int ms) {
  sbuf_printf(s,
              "%s{\"cpid\":\"%s\",\"span_id\":\"%016x\",\"service\":\"%s\",\"name\":\"%s\","
              "\"start\":\"2026-11-24T10:%02d:00Z\",\"end\":\"2026-11-24T10:%02d:%02d.%03dZ\","
              "\"attributes\":{\"kind\":\"%s\",\"namespace\":\"d\",\"name\":\"%s\",\"uid\":"
              "\"%s-uid\",\"owner\":\"%s\",\"operation\":\"UPDATE\",\"resourceVersion\":"
              "\"%d\"}}",
              s->len > 1 ? "," : "", rig_cpid(key), (unsigned)(key * 100 + n), svc, name, k, k,
              ms / 1000, ms % 1000, kind, obj, obj, owner, n);
}
