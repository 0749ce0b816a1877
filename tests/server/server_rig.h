/*
 * server_rig.h - the trace server in the test's own process, as test_server.c
 * and test_roots.c drive it: its parts (server.h, http.h) on a free loopback
 * port over a database in a temporary directory, so that a test can stop it,
 * change its configuration, open it again on the same port and look into the
 * database itself.
 */
#ifndef RIPPLE_TESTS_SERVER_RIG_H
#define RIPPLE_TESTS_SERVER_RIG_H

#include "ripplex/sbuf.h"
#include "serve/http.h"
#include "serve/server.h"

typedef struct rig {
  char dir[64], db[96], base[64]; /* base: "http://127.0.0.1:<port>" once open */
  srv_config_t cfg;
  http_opts_t ho;
  srv_t srv;
  http_t *h; /* NULL while closed */
} rig_t;

/* A rig over a fresh temporary directory, with the tests' limits; not open. */
rig_t *rig_new(void);
/* cmocka setup: *state = rig_new() (each test opens it itself). */
int rig_setup(void **state);
/* POST body to /v1/<what> ("mergelogs", "spans"); fails the test unless 200. */
void rig_post(const rig_t *r, const char *what, const char *body);
/* Open the database and listen (fails the test when either fails). */
void rig_open(rig_t *r);
/* Stop listening and close the database. */
void rig_close(rig_t *r);
/* Write r's database as the first server wrote it (schema 1 without the
 * roots table and the object columns), with rows (SQL INSERTs, may be ""),
 * before the rig is opened: how the tests see an older database upgraded. */
void rig_first_database(rig_t *r, const char *rows);
/* A self-signed certificate for 127.0.0.1 (openssl), written as crt and
 * key (paths of crtcap/keycap bytes) in r's directory. */
void rig_self_signed(const rig_t *r, char *crt, size_t crtcap, char *key, size_t keycap);
/* The CPID of a test's key: "%08x-0000-4000-8000-000000000000" (one of
 * eight rotating buffers, so a call can take several). */
const char *rig_cpid(int key);
/* A span as the webhook sends it, appended to the JSON array being built in
 * s: key's CPID, span n of it, the writer svc's write name on kind's object
 * obj (uid "<obj>-uid", resourceVersion n) owned by owner ("Kind/name" or
 * ""), ending ms into minute k. */
void rig_span(sbuf_t *s, int key, int n, const char *svc, const char *name, const char *kind,
              const char *obj, const char *owner, int k, int ms);
/* cmocka teardown of a rig in *state: closed if open, its directory removed. */
int rig_teardown(void **state);

#endif
