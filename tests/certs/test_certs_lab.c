/*
 * test_certs_lab.c - the real ripple-certs ($RIPPLE_CERTS_BIN) against the
 * lab, in a namespace of the test's own.
 *
 * A first run creates the TLS Secret and two token Secrets; the certificate
 * really serves: a TLS handshake in memory (two OpenSSL ends over a BIO pair,
 * nothing started, nothing listening) with the server end on tls.crt and
 * tls.key and the client end trusting ca.crt only and checking the name. A
 * second run keeps everything (same resourceVersions, "kept" in the log); a
 * dry run changes nothing; a corrupt tls.crt is replaced; a token Secret is
 * never changed, even one whose token someone set; a --dns name added later
 * causes a replacement; a Secret of the wrong type is refused. Two
 * --tls-secret (the webhook's and the trace server's) share one CA, each
 * serving its own names; one that can no longer be kept renews both, under a
 * new CA. Then with the
 * credentials of a service account: without RBAC it fails naming the verb
 * and the Secret; with exactly the Role docs/certs.md gives, it succeeds.
 * Finally an API server that does not answer: exit 1 after --timeout.
 */
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "certs.h"
#include "ripplex/b64.h"
#include "rw_lab.h"
#include "testutil.h"

static ripple_kube_client_t *kc;
static char ns[64];
static char logpath[128];

static void cleanup(void) {
  if (kc && ns[0]) {
    ripple_kube_status_t st;
    ripple_kube_delete(kc, lab_resolve(kc, "namespaces"), NULL, ns, NULL, &st);
    ns[0] = '\0';
  }
  if (logpath[0]) unlink(logpath);
}

static int teardown(void **state) {
  (void)state;
  cleanup();
  ripple_kube_client_free(kc);
  kc = NULL;
  return 0;
}

/* ---- running ripple-certs ------------------------------------------------------ */

/* Run ripple-certs with --namespace ns and args (NULL-terminated), its
 * stdout and stderr into *out (the caller frees it); its exit status. */
static int run_certs(const char *kubeconfig, char **out, const char *const *args) {
  const char *bin = getenv("RIPPLE_CERTS_BIN");
  if (!bin) {
    fail_msg("RIPPLE_CERTS_BIN is not set: run through ctest");
    *out = strdup(""); /* not reached: fail_msg does not return */
    return -1;
  }
  const char *argv[40] = {bin, "--namespace", ns};
  size_t n = 3;
  if (kubeconfig) argv[n++] = "--kubeconfig", argv[n++] = kubeconfig;
  for (; *args && n < 39; args++) argv[n++] = *args;
  argv[n] = NULL;
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) _exit(126);
    execv(bin, (char *const *)argv);
    _exit(127);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  FILE *f = fopen(logpath, "r");
  assert_non_null(f);
  char *text = calloc(1, 1 << 20);
  assert_non_null(text);
  size_t got = fread(text, 1, (1 << 20) - 1, f);
  text[got] = '\0';
  fclose(f);
  *out = text;
  fprintf(stderr, "---- ripple-certs (exit %d):\n%s", WEXITSTATUS(status), text);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* How many lines of the log have every one of the words (NULL-terminated). */
static int lines_with(const char *log, const char *const *words) {
  int count = 0;
  for (const char *p = log; *p;) {
    size_t len = strcspn(p, "\n");
    char line[4096];
    snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
    int all = 1;
    for (const char *const *w = words; all && *w; w++) all = strstr(line, *w) != NULL;
    count += all;
    p += len + (p[len] == '\n');
  }
  return count;
}

/* RUN(kubeconfig, &log, args...) and LINES(log, words...): the lists
 * NULL-terminated for the functions above. */
#define RUN(kcfg, out, ...) run_certs(kcfg, out, (const char *const[]){__VA_ARGS__, NULL})
#define LINES(log, ...) lines_with(log, (const char *const[]){__VA_ARGS__, NULL})

/* ---- Secrets ---------------------------------------------------------------------- */

static json_t *get_secret(const char *name) {
  json_t *s = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_get(kc, lab_resolve(kc, "secrets"), ns, name, &s, &st));
  return s;
}

static int secret_absent(const char *name) {
  json_t *s = NULL;
  ripple_kube_status_t st;
  int rc = ripple_kube_get(kc, lab_resolve(kc, "secrets"), ns, name, &s, &st);
  json_decref(s);
  return rc == RIPPLE_KUBE_ENOTFOUND;
}

static char *rv(const char *name) {
  json_t *s = get_secret(name);
  char *v = strdup(lab_str(s, "metadata.resourceVersion"));
  json_decref(s);
  return v;
}

/* data[key] of a Secret, decoded (the caller frees it). */
static char *data(const json_t *s, const char *key) {
  const json_t *b = json_object_get(json_object_get(s, "data"), key);
  if (!json_is_string(b)) fail_msg("Secret has no data[%s]", key);
  char *out = NULL;
  size_t len;
  assert_int_equal(b64_decode(json_string_value(b), json_string_length(b), &out, &len), RIPPLE_OK);
  return out;
}

/* Set data[key] of Secret name to text by an update. */
static void set_data(const char *name, const char *key, const char *text) {
  json_t *s = get_secret(name);
  char *b = b64_encode_str(text, strlen(text));
  json_object_set_new(json_object_get(s, "data"), key, json_string(b));
  free(b);
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_update(kc, lab_resolve(kc, "secrets"), ns, s, NULL, NULL, &st));
  json_decref(s);
}

static void assert_labels(const json_t *s) {
  const json_t *l = lab_at(s, "metadata.labels");
  assert_string_equal(json_string_value(json_object_get(l, "app.kubernetes.io/name")), "ripple");
  assert_string_equal(json_string_value(json_object_get(l, "app.kubernetes.io/managed-by")),
                      "ripple-certs");
}

/* ---- TLS, verified by OpenSSL ------------------------------------------------------ */

static X509 *read_x509(const char *pem) {
  BIO *b = BIO_new_mem_buf(pem, -1);
  X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
  BIO_free(b);
  assert_non_null(x);
  return x;
}

static void step(SSL *s, int *done, int *failed) {
  if (*done || *failed) return;
  int r = SSL_do_handshake(s);
  if (r == 1)
    *done = 1;
  else if (SSL_get_error(s, r) != SSL_ERROR_WANT_READ &&
           SSL_get_error(s, r) != SSL_ERROR_WANT_WRITE)
    *failed = 1;
}

/* A TLS handshake in memory: a server end with crt and key, a client end
 * that trusts ca only and wants host. 1 when it completes and verifies. */
static int tls_serves(const char *ca, const char *crt, const char *key, const char *host) {
  SSL_CTX *sctx = SSL_CTX_new(TLS_server_method()), *cctx = SSL_CTX_new(TLS_client_method());
  X509 *leaf = read_x509(crt), *anchor = read_x509(ca);
  BIO *kb = BIO_new_mem_buf(key, -1);
  EVP_PKEY *pk = PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL);
  BIO_free(kb);
  assert_int_equal(SSL_CTX_use_certificate(sctx, leaf), 1);
  assert_int_equal(SSL_CTX_use_PrivateKey(sctx, pk), 1);
  assert_int_equal(X509_STORE_add_cert(SSL_CTX_get_cert_store(cctx), anchor), 1);
  SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);
  SSL *s = SSL_new(sctx), *c = SSL_new(cctx);
  assert_int_equal(SSL_set1_host(c, host), 1);
  SSL_set_tlsext_host_name(c, host);
  BIO *sb = NULL, *cb = NULL;
  assert_int_equal(BIO_new_bio_pair(&sb, 0, &cb, 0), 1);
  SSL_set_bio(s, sb, sb);
  SSL_set_bio(c, cb, cb);
  SSL_set_accept_state(s);
  SSL_set_connect_state(c);
  int cdone = 0, sdone = 0, cfail = 0, sfail = 0;
  for (int i = 0; i < 100 && !(cdone && sdone) && !cfail && !sfail; i++) {
    step(c, &cdone, &cfail);
    step(s, &sdone, &sfail);
  }
  int ok = cdone && sdone && SSL_get_verify_result(c) == X509_V_OK;
  SSL_free(c);
  SSL_free(s);
  SSL_CTX_free(sctx);
  SSL_CTX_free(cctx);
  X509_free(leaf);
  X509_free(anchor);
  EVP_PKEY_free(pk);
  ERR_clear_error();
  return ok;
}

/* The TLS Secret serves every name and not another. */
static void assert_serves(const char *name, const char *const *hosts, size_t n) {
  json_t *s = get_secret(name);
  assert_string_equal(lab_str(s, "type"), "kubernetes.io/tls");
  assert_labels(s);
  char *ca = data(s, CERTS_KEY_CA), *crt = data(s, CERTS_KEY_CRT), *key = data(s, CERTS_KEY_KEY);
  for (size_t i = 0; i < n; i++)
    if (!tls_serves(ca, crt, key, hosts[i])) fail_msg("%s does not serve %s", name, hosts[i]);
  assert_false(tls_serves(ca, crt, key, "not-a-name.example"));
  free(ca);
  free(crt);
  free(key);
  json_decref(s);
}

static char *token_of(const char *name) {
  json_t *s = get_secret(name);
  assert_string_equal(lab_str(s, "type"), "Opaque");
  assert_labels(s);
  char *t = data(s, CERTS_KEY_TOKEN);
  json_decref(s);
  return t;
}

/* ---- the tests --------------------------------------------------------------------- */

static void begin(void) {
  kc = lab_client();
  lab_ns_new(kc, "ripple-certs-test", ns, sizeof ns);
  snprintf(logpath, sizeof logpath, "/tmp/test_certs_lab.%d.log", (int)getpid());
  atexit(cleanup);
}

static void test_certs_ensure(void **state) {
  (void)state;
  begin();
  char dns1[128], dns2[128], dns3[128], *log = NULL;
  snprintf(dns1, sizeof dns1, "ripple-webhook.%s.svc", ns);
  snprintf(dns2, sizeof dns2, "ripple-webhook.%s.svc.cluster.local", ns);
  snprintf(dns3, sizeof dns3, "ripple-guard.%s.svc", ns);
  const char *names[] = {dns1, dns2, dns3};
#define BASE "--tls-secret", "wh-tls", "--dns", dns1, "--dns", dns2, "--timeout", "30s"
#define TOKENS "--token-secret", "tok-a", "--token-secret", "tok-b"

  /* Created. */
  assert_int_equal(RUN(NULL, &log, BASE, TOKENS), 0);
  assert_int_equal(LINES(log, "event=tls_secret_created", "secret=", "wh-tls"), 1);
  assert_int_equal(LINES(log, "event=token_secret_created"), 2);
  assert_int_equal(LINES(log, "component=ripple-certs", "event=done"), 1);
  assert_int_equal(LINES(log, "PRIVATE KEY"), 0);
  free(log);
  assert_serves("wh-tls", names, 2);
  char *ta = token_of("tok-a"), *tb = token_of("tok-b");
  assert_int_equal(strlen(ta), 64);
  assert_int_equal(strspn(ta, "0123456789abcdef"), 64);
  assert_string_not_equal(ta, tb);
  char *rv_tls = rv("wh-tls"), *rv_a = rv("tok-a"), *rv_b = rv("tok-b");

  /* Kept: nothing written. */
  assert_int_equal(RUN(NULL, &log, BASE, TOKENS), 0);
  assert_int_equal(LINES(log, "event=tls_secret_kept"), 1);
  assert_int_equal(LINES(log, "event=token_secret_kept"), 2);
  free(log);
  char *v;
  assert_string_equal(v = rv("wh-tls"), rv_tls), free(v);
  assert_string_equal(v = rv("tok-a"), rv_a), free(v);
  assert_string_equal(v = rv("tok-b"), rv_b), free(v);

  /* A dry run that would replace and create: says so, changes nothing. */
  assert_int_equal(
      RUN(NULL, &log, BASE, "--dns", dns3, TOKENS, "--token-secret", "tok-c", "--dry-run"), 0);
  assert_int_equal(LINES(log, "would replace Secret", "wh-tls", "missing_san"), 1);
  assert_int_equal(LINES(log, "would create Secret", "tok-c"), 1);
  free(log);
  assert_string_equal(v = rv("wh-tls"), rv_tls), free(v);
  assert_true(secret_absent("tok-c"));

  /* A corrupt tls.crt is replaced; the tokens are not touched. */
  set_data("wh-tls", CERTS_KEY_CRT, "garbage");
  assert_int_equal(RUN(NULL, &log, BASE, TOKENS), 0);
  assert_int_equal(LINES(log, "event=tls_secret_replaced", "why=bad_tls.crt"), 1);
  free(log);
  assert_serves("wh-tls", names, 2);
  assert_string_equal(v = rv("tok-a"), rv_a), free(v);

  /* A token Secret is never changed, whatever its token. */
  set_data("tok-a", CERTS_KEY_TOKEN, "set-by-hand");
  free(rv_a);
  rv_a = rv("tok-a");
  assert_int_equal(RUN(NULL, &log, BASE, TOKENS), 0);
  assert_int_equal(LINES(log, "event=token_secret_kept", "tok-a"), 1);
  free(log);
  assert_string_equal(v = rv("tok-a"), rv_a), free(v);
  assert_string_equal(v = token_of("tok-a"), "set-by-hand"), free(v);
  assert_string_equal(v = token_of("tok-b"), tb), free(v);

  /* A name added later: a new certificate (and CA) with every name. */
  json_t *before = get_secret("wh-tls");
  char *ca_before = data(before, CERTS_KEY_CA);
  json_decref(before);
  assert_int_equal(RUN(NULL, &log, BASE, "--dns", dns3, TOKENS), 0);
  assert_int_equal(LINES(log, "event=tls_secret_replaced", "why=missing_san"), 1);
  free(log);
  assert_serves("wh-tls", names, 3);
  json_t *after = get_secret("wh-tls");
  char *ca_after = data(after, CERTS_KEY_CA);
  assert_string_not_equal(ca_before, ca_after);
  json_decref(after);
  free(ca_before);
  free(ca_after);
  free(ta);
  free(tb);
  free(rv_tls);
  free(rv_a);
  free(rv_b);
#undef BASE
#undef TOKENS
}

/* Two TLS Secrets under one CA: made together, kept together, renewed together. */
static void test_certs_shared_ca(void **state) {
  (void)state;
  if (!kc) begin();
  char wh[128], srv[128], *log = NULL, *v;
  snprintf(wh, sizeof wh, "ripple-webhook.%s.svc", ns);
  snprintf(srv, sizeof srv, "ripple-server.%s.svc", ns);
  const char *whn[] = {wh}, *srvn[] = {srv};
#define PAIR "--tls-secret", "p-wh", "--dns", wh, "--tls-secret", "p-srv", "--dns", srv

  assert_int_equal(RUN(NULL, &log, PAIR, "--timeout", "30s"), 0);
  assert_int_equal(LINES(log, "event=tls_secret_created"), 2);
  assert_int_equal(LINES(log, "event=start", "tls_secrets=2"), 1);
  free(log);
  assert_serves("p-wh", whn, 1);
  assert_serves("p-srv", srvn, 1);
  json_t *a = get_secret("p-wh"), *b = get_secret("p-srv");
  char *ca1 = data(a, CERTS_KEY_CA), *ca2 = data(b, CERTS_KEY_CA);
  char *k1 = data(a, CERTS_KEY_KEY), *k2 = data(b, CERTS_KEY_KEY);
  assert_string_equal(ca1, ca2);   /* one CA ... */
  assert_string_not_equal(k1, k2); /* ... and a key of each one's own */
  json_decref(a);
  json_decref(b);
  free(k1);
  free(k2);
  free(ca2);
  /* The server's Secret does not serve the webhook's name. */
  json_t *sb = get_secret("p-srv");
  char why[64];
  assert_int_equal(certs_tls_check(sb, whn, 1, time(NULL), 0, why, sizeof why), 0);
  assert_string_equal(why, "missing_san");
  json_decref(sb);

  /* Kept together. */
  char *rv_wh = rv("p-wh"), *rv_srv = rv("p-srv");
  assert_int_equal(RUN(NULL, &log, PAIR, "--timeout", "30s"), 0);
  assert_int_equal(LINES(log, "event=tls_secret_kept"), 2);
  free(log);
  assert_string_equal(v = rv("p-wh"), rv_wh), free(v);
  assert_string_equal(v = rv("p-srv"), rv_srv), free(v);

  /* One corrupt: both made anew under a new CA, which they share again. */
  set_data("p-srv", CERTS_KEY_CRT, "garbage");
  assert_int_equal(RUN(NULL, &log, PAIR, "--timeout", "30s"), 0);
  assert_int_equal(LINES(log, "event=tls_secret_replaced", "p-srv", "why=bad_tls.crt"), 1);
  assert_int_equal(LINES(log, "event=tls_secret_replaced", "p-wh", "why=new_ca"), 1);
  free(log);
  assert_serves("p-wh", whn, 1);
  assert_serves("p-srv", srvn, 1);
  a = get_secret("p-wh");
  b = get_secret("p-srv");
  char *n1 = data(a, CERTS_KEY_CA), *n2 = data(b, CERTS_KEY_CA);
  assert_string_equal(n1, n2);
  assert_string_not_equal(n1, ca1);
  json_decref(a);
  json_decref(b);
  free(n1);
  free(n2);
  free(ca1);
  free(rv_wh);
  free(rv_srv);

  /* A --renew-before not below --days is a usage error, before anything is read. */
  assert_int_equal(RUN(NULL, &log, PAIR, "--days", "20", "--renew-before", "30d"), 2);
  free(log);
#undef PAIR
}

/* A Secret of another type, a token Secret without a token: refused, said
 * why, left alone. */
static void test_certs_refuses(void **state) {
  (void)state;
  if (!kc) begin();
  json_t *o = lab_json(
      "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"opaque\"},"
      "\"type\":\"Opaque\",\"data\":{\"other\":\"eA==\"}}");
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(kc, lab_resolve(kc, "secrets"), ns, o, NULL, NULL, &st));
  json_decref(o);
  char *rv0 = rv("opaque"), *log = NULL, *v;
  assert_int_equal(RUN(NULL, &log, "--tls-secret", "opaque", "--dns", "a.svc", "--timeout", "10s"),
                   1);
  assert_int_equal(LINES(log, "event=failed", "cannot be changed", "opaque"), 1);
  free(log);
  assert_int_equal(RUN(NULL, &log, "--token-secret", "opaque", "--timeout", "10s"), 1);
  assert_int_equal(LINES(log, "event=failed", "without a 'token' key"), 1);
  free(log);
  assert_string_equal(v = rv("opaque"), rv0), free(v);
  free(rv0);
}

/* A kubeconfig for service account sa of ns, by a TokenRequest, into path. */
static void sa_kubeconfig(const char *sa, const char *path) {
  json_t *o = lab_json(
      "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{"
      "\"name\":\"%s\"}}",
      sa);
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(kc, lab_resolve(kc, "serviceaccounts"), ns, o, NULL, NULL, &st));
  json_decref(o);
  char p[256];
  snprintf(p, sizeof p, "/api/v1/namespaces/%s/serviceaccounts/%s/token", ns, sa);
  const char *body =
      "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenRequest\","
      "\"spec\":{\"expirationSeconds\":600}}";
  json_t *ans = NULL;
  LAB_OK(st, ripple_kube_request(kc, "POST", p, "application/json", body, strlen(body), &ans, &st));
  ripple_kube_config_t *cfg = NULL;
  char err[256];
  assert_int_equal(ripple_kube_config_load(NULL, &cfg, err, sizeof err), RIPPLE_OK);
  const char *ca = getenv("RIPPLE_LAB_CA");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f,
          "apiVersion: v1\nkind: Config\nclusters:\n- name: lab\n  cluster:\n    server: %s\n"
          "    %s%s\nusers:\n- name: sa\n  user:\n    token: %s\ncontexts:\n- name: sa\n"
          "  context: {cluster: lab, user: sa}\ncurrent-context: sa\n",
          ripple_kube_config_server(cfg), ca ? "certificate-authority: " : "",
          ca ? ca : "insecure-skip-tls-verify: true", lab_str(ans, "status.token"));
  fclose(f);
  ripple_kube_config_free(cfg);
  json_decref(ans);
}

/* Without RBAC: exit 1 naming the verb and the Secret. With the Role of
 * docs/certs.md (create on secrets; get and update on the names only): done. */
static void test_certs_rbac(void **state) {
  (void)state;
  if (!kc) begin();
  char kcfg[128], *log = NULL;
  snprintf(kcfg, sizeof kcfg, "/tmp/test_certs_lab.%d.kubeconfig", (int)getpid());
  sa_kubeconfig("certs", kcfg);
#define ARGS "--tls-secret", "rbac-tls", "--dns", "x.svc", "--token-secret", "rbac-tok"
  assert_int_equal(RUN(kcfg, &log, ARGS, "--timeout", "2s"), 1);
  assert_int_equal(LINES(log, "event=api_retry", "verb=get", "http=403") >= 1, 1);
  assert_int_equal(LINES(log, "event=failed", "forbidden to get Secret", "rbac-tls", "verb 'get'"),
                   1);
  free(log);
  json_t *role = lab_json(
      "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":{"
      "\"name\":\"ripple-certs\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],"
      "\"verbs\":[\"create\"]},{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],"
      "\"resourceNames\":[\"rbac-tls\",\"rbac-tok\"],\"verbs\":[\"get\",\"update\"]}]}");
  json_t *rb = lab_json(
      "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":{"
      "\"name\":\"ripple-certs\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\","
      "\"kind\":\"Role\",\"name\":\"ripple-certs\"},\"subjects\":[{\"kind\":\"ServiceAccount\","
      "\"name\":\"certs\",\"namespace\":\"%s\"}]}",
      ns);
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(kc, lab_resolve(kc, "roles"), ns, role, NULL, NULL, &st));
  LAB_OK(st, ripple_kube_create(kc, lab_resolve(kc, "rolebindings"), ns, rb, NULL, NULL, &st));
  json_decref(role);
  json_decref(rb);
  /* The authorizer may take a moment to see the Role: ripple-certs retries. */
  assert_int_equal(RUN(kcfg, &log, ARGS, "--timeout", "30s"), 0);
  assert_int_equal(LINES(log, "event=tls_secret_created"), 1);
  assert_int_equal(LINES(log, "event=token_secret_created"), 1);
  free(log);
  set_data("rbac-tls", CERTS_KEY_KEY, "garbage"); /* so that the update is needed too */
  assert_int_equal(RUN(kcfg, &log, ARGS, "--timeout", "30s"), 0);
  assert_int_equal(LINES(log, "event=tls_secret_replaced", "why=bad_tls.key"), 1);
  assert_int_equal(LINES(log, "event=token_secret_kept"), 1);
  free(log);
  unlink(kcfg);
#undef ARGS
}

/* An API server that does not answer: retried for --timeout, then exit 1
 * naming the call and the server. */
static void test_certs_unreachable(void **state) {
  (void)state;
  if (!kc) begin();
  char kcfg[128], *log = NULL;
  snprintf(kcfg, sizeof kcfg, "/tmp/test_certs_lab.%d.dead.kubeconfig", (int)getpid());
  FILE *f = fopen(kcfg, "w");
  assert_non_null(f);
  /* Port 1 on loopback: nothing listens there. */
  fputs(
      "apiVersion: v1\nkind: Config\nclusters:\n- name: dead\n  cluster:\n"
      "    server: https://127.0.0.1:1\n    insecure-skip-tls-verify: true\nusers:\n"
      "- name: u\n  user:\n    token: t\ncontexts:\n- name: dead\n"
      "  context: {cluster: dead, user: u}\ncurrent-context: dead\n",
      f);
  fclose(f);
  assert_int_equal(RUN(kcfg, &log, "--token-secret", "t", "--timeout", "2s"), 1);
  assert_true(LINES(log, "event=api_retry", "verb=get") >= 2);
  assert_int_equal(
      LINES(log, "event=failed", "get Secret", "https://127.0.0.1:1", "did not answer"), 1);
  free(log);
  unlink(kcfg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_certs_ensure),      cmocka_unit_test(test_certs_refuses),
      cmocka_unit_test(test_certs_shared_ca),   cmocka_unit_test(test_certs_rbac),
      cmocka_unit_test(test_certs_unreachable),
  };
  return cmocka_run_group_tests(tests, NULL, teardown);
}
