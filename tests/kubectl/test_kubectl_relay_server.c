/*
 * test_kubectl_relay_server.c - `kubectl ripple dashboard` against the real
 * ripple-server (directly, --server URL: no cluster). The server wants a
 * reader token and serves a small dashboard bundle of the test's; the real
 * kubectl-ripple relays it. Its first line on stdout is the URL, read here
 * before the pipe is closed (the relay serves on without a stdout). Through
 * the relay: the page, a script and the API with the right Content-Types,
 * the relay's token added (and the browser's never taken); refused: a path
 * without the prefix or with a wrong one, a wrong Host (DNS rebinding), a
 * request from another site's page, a POST, a body. SIGTERM stops it with
 * status 0, and its stderr never holds the secret or the token.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http_client.h"
#include "testutil.h"

#define CPID "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60"
#define T "2026-11-22T00:00:00.000000000Z"
#define TOKEN "relay-test-reader-token-0123456789"

typedef struct rig {
  char dir[64], base[64];
  pid_t server, relay;
  unsigned port;   /* the relay's */
  char url[512];   /* the relay's, with the secret */
  char secret[64]; /* its path prefix */
  char trace[640]; /* the trace's page */
} rig_t;

static const char *bin(const char *var) {
  const char *p = getenv(var);
  if (!p || !*p) fail_msg("$%s is not set (run through ctest)", var);
  return p;
}

static void put_file(const char *dir, const char *name, const char *text) {
  char p[256];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

/* A dashboard bundle of the shape web/build.mjs makes. */
static void bundle(const rig_t *r) {
  char web[128];
  snprintf(web, sizeof web, "%s/web", r->dir);
  assert_int_equal(mkdir(web, 0755), 0);
  put_file(web, "index.html",
           "<!doctype html><html><head><script src=\"assets/app-T.js\"></script></head>"
           "<body>relay test page</body></html>\n");
  char assets[160];
  snprintf(assets, sizeof assets, "%s/assets", web);
  assert_int_equal(mkdir(assets, 0755), 0);
  put_file(assets, "app-T.js", "console.log('relay test');\n");
  put_file(assets, "app-T.css", "body{}\n");
}

static void server_start(rig_t *r) {
  char web[96], tokens[96];
  snprintf(web, sizeof web, "%s/web", r->dir);
  snprintf(tokens, sizeof tokens, "%s/readers", r->dir);
  put_file(r->dir, "readers", TOKEN "\n");
  const char *const more[] = {"--web", web, "--reader-token-file", tokens, NULL};
  r->server = test_server_start(r->dir, more, r->base, sizeof r->base);
}

static void post(const rig_t *r, const char *path, const char *body) {
  if (!hc_post_ok(r->base, path, body)) fail_msg("POST %s was not accepted", path);
}

static void record(const rig_t *r) {
  post(r, "/v1/mergelogs",
       "[{\"cpid\":\"" CPID "\",\"sources\":[],\"time\":\"" T
       "\",\"component\":\"kubernetes-admin\"}]");
  post(r, "/v1/spans",
       "[{\"cpid\":\"" CPID
       "\",\"span_id\":\"0000000000000001\",\"service\":\"kubernetes-admin\","
       "\"name\":\"update deployments\",\"start\":\"" T "\",\"end\":\"" T
       "\",\"attributes\":{\"kind\":\"Deployment\",\"namespace\":\"demo\",\"name\":\"web\","
       "\"uid\":\"\",\"user\":\"kubernetes-admin\",\"operation\":\"UPDATE\"}}]");
}

/* kubectl-ripple dashboard --no-browser --port 0 --server BASE CPID; its
 * URL lines read from its stdout, which is then closed. */
static void relay_start(rig_t *r) {
  int p[2];
  assert_int_equal(pipe(p), 0);
  char log[96];
  snprintf(log, sizeof log, "%s/relay.log", r->dir);
  r->relay = fork();
  assert_true(r->relay >= 0);
  if (r->relay == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 2) < 0 || dup2(p[1], 1) < 0) _exit(126);
    close(p[0]);
    close(p[1]);
    setenv("RIPPLE_READER_TOKEN", TOKEN, 1);
    unsetenv("DISPLAY");
    execl(bin("RIPPLE_KUBECTL_BIN"), "kubectl-ripple", "dashboard", "--no-browser", "--port", "0",
          "--server", r->base, CPID, (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  FILE *f = fdopen(p[0], "r");
  assert_non_null(f);
  char line[512];
  /* The first line is the dashboard's URL, the second the trace's. */
  if (!fgets(line, sizeof line, f)) fail_msg("the relay printed nothing (see %s)", log);
  static const char lead[] = "dashboard: http://127.0.0.1:";
  char *end = NULL;
  unsigned long port =
      strncmp(line, lead, sizeof lead - 1) ? 0 : strtoul(line + sizeof lead - 1, &end, 10);
  size_t n = end && *end == '/' ? strcspn(end + 1, "/") : 0;
  if (!end || !port || port > 65535 || !n || n >= sizeof r->secret ||
      strcmp(end + 1 + n, "/\n") != 0) {
    fail_msg("the first line is not the URL: %s", line);
    return;
  }
  r->port = (unsigned)port;
  memcpy(r->secret, end + 1, n);
  r->secret[n] = '\0';
  assert_int_equal(strlen(r->secret), 43);
  line[strcspn(line, "\n")] = '\0';
  snprintf(r->url, sizeof r->url, "%s", line + strlen("dashboard: "));
  assert_non_null(fgets(line, sizeof line, f));
  line[strcspn(line, "\n")] = '\0';
  char want[640];
  snprintf(want, sizeof want, "trace: %s#/trace/" CPID, r->url);
  assert_string_equal(line, want);
  snprintf(r->trace, sizeof r->trace, "%s", line + strlen("trace: "));
  fclose(f); /* the relay serves on without its stdout */
}

typedef struct raw {
  int status;
  char type[128], location[256], csp[512];
  char *body;
} raw_t;

static void header(const char *head, const char *name, char *out, size_t cap) {
  char key[64];
  snprintf(key, sizeof key, "\r\n%s:", name);
  const char *h = strcasestr(head, key);
  out[0] = '\0';
  if (!h) return;
  h += strlen(key);
  while (*h == ' ') h++;
  size_t n = strcspn(h, "\r\n");
  snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), h);
}

/* One request as written (extra: more header lines, each ending CRLF),
 * over a new connection to the relay. */
static void raw(const rig_t *r, const char *method, const char *target, const char *host,
                const char *extra, raw_t *out) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(s >= 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)r->port)};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(connect(s, (struct sockaddr *)&sa, sizeof sa), 0);
  char req[2048];
  int n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n%s\r\n",
                   method, target, host, extra ? extra : "");
  assert_int_equal(write(s, req, (size_t)n), n);
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  if (!buf) abort();
  ssize_t got;
  while ((got = read(s, buf + len, cap - len - 1)) > 0) {
    len += (size_t)got;
    if (len + 1 == cap) {
      char *grown = realloc(buf, cap *= 2);
      if (!grown) abort(); /* out of memory in a test */
      buf = grown;
    }
  }
  close(s);
  buf[len] = '\0';
  memset(out, 0, sizeof *out);
  if (strncmp(buf, "HTTP/1.", 7) != 0 || len < 12) fail_msg("no answer to %s", target);
  out->status = (int)strtol(buf + 9, NULL, 10);
  char *end = strstr(buf, "\r\n\r\n");
  assert_non_null(end);
  *end = '\0';
  header(buf, "Content-Type", out->type, sizeof out->type);
  header(buf, "Location", out->location, sizeof out->location);
  header(buf, "Content-Security-Policy", out->csp, sizeof out->csp);
  out->body = strdup(end + 4);
  free(buf);
}

static int setup(void **state) {
  rig_t *r = calloc(1, sizeof *r);
  assert_non_null(r);
  snprintf(r->dir, sizeof r->dir, "/tmp/ripple-test-XXXXXX");
  assert_non_null(mkdtemp(r->dir));
  bundle(r);
  server_start(r);
  record(r);
  relay_start(r);
  *state = r;
  return 0;
}

static int teardown(void **state) {
  rig_t *r = *state;
  int st;
  if (r->relay > 0) kill(r->relay, SIGTERM), waitpid(r->relay, &st, 0);
  kill(r->server, SIGTERM);
  waitpid(r->server, &st, 0);
  test_rmtree(r->dir);
  free(r);
  return 0;
}

static void path(const rig_t *r, const char *rest, char *out, size_t cap) {
  snprintf(out, cap, "/%s%s", r->secret, rest);
}

static void test_relays(void **state) {
  rig_t *r = *state;
  char host[64], t[256];
  snprintf(host, sizeof host, "127.0.0.1:%u", r->port);
  raw_t a;
  /* The page, its script, under the prefix; localhost names it too. */
  path(r, "/", t, sizeof t);
  raw(r, "GET", t, host, NULL, &a);
  assert_int_equal(a.status, 200);
  assert_string_equal(a.type, "text/html; charset=utf-8");
  assert_non_null(strstr(a.body, "relay test page"));
  assert_non_null(strstr(a.csp, "default-src 'self'"));
  free(a.body);
  path(r, "/assets/app-T.js", t, sizeof t);
  snprintf(host, sizeof host, "localhost:%u", r->port);
  raw(r, "GET", t, host, "Sec-Fetch-Site: same-origin\r\n", &a);
  assert_int_equal(a.status, 200);
  assert_string_equal(a.type, "text/javascript; charset=utf-8");
  assert_non_null(strstr(a.body, "relay test"));
  free(a.body);
  path(r, "/assets/app-T.css", t, sizeof t);
  raw(r, "HEAD", t, host, NULL, &a);
  assert_int_equal(a.status, 200);
  assert_string_equal(a.type, "text/css; charset=utf-8");
  assert_string_equal(a.body, "");
  free(a.body);
  /* The API: the server wants the token (not given here directly), the
   * relay adds its own and ignores the browser's. */
  char direct[160];
  snprintf(direct, sizeof direct, "%s/v1/cpids/" CPID "/spans", r->base);
  hc_resp_t d;
  assert_int_equal(hc_request("GET", direct, NULL, 0, NULL, &d), 0);
  assert_int_equal(d.status, 401);
  hc_resp_free(&d);
  path(r, "/v1/cpids/" CPID "/spans", t, sizeof t);
  raw(r, "GET", t, host, "X-Ripple-Token: wrong\r\nAuthorization: Bearer wrong\r\n", &a);
  assert_int_equal(a.status, 200);
  assert_string_equal(a.type, "application/json");
  assert_non_null(strstr(a.body, "update deployments"));
  free(a.body);
  /* A query goes along (the server's answer to a bad limit says so). */
  path(r, "/v1/roots?limit=notanumber", t, sizeof t);
  raw(r, "GET", t, host, NULL, &a);
  assert_int_equal(a.status, 400);
  assert_string_equal(a.type, "application/json");
  assert_non_null(strstr(a.body, "limit"));
  free(a.body);
  /* A file the server does not have: its 404, as text. */
  path(r, "/assets/app-none.js", t, sizeof t);
  raw(r, "GET", t, host, NULL, &a);
  assert_int_equal(a.status, 404);
  assert_string_equal(a.type, "text/plain; charset=utf-8");
  free(a.body);
  /* The prefix without its slash: sent to it. */
  path(r, "", t, sizeof t);
  raw(r, "GET", t, host, NULL, &a);
  assert_int_equal(a.status, 308);
  path(r, "/", t, sizeof t);
  assert_string_equal(a.location, t);
  free(a.body);
}

static void test_refuses(void **state) {
  rig_t *r = *state;
  char host[64], t[256];
  snprintf(host, sizeof host, "127.0.0.1:%u", r->port);
  raw_t a;
  static const char spans[] = "/v1/cpids/" CPID "/spans";
  static const char *const bad_paths[] = {"/", "/index.html", spans, "/assets/app-T.js",
                                          "/metrics"};
  for (size_t i = 0; i < sizeof bad_paths / sizeof bad_paths[0]; i++) {
    raw(r, "GET", bad_paths[i], host, NULL, &a);
    if (a.status != 404) fail_msg("%s without the prefix: %d", bad_paths[i], a.status);
    assert_null(strstr(a.body, "relay test"));
    free(a.body);
  }
  /* A wrong secret (its last character changed). */
  path(r, "/", t, sizeof t);
  t[43] = t[43] == 'A' ? 'Q' : 'A';
  raw(r, "GET", t, host, NULL, &a);
  assert_int_equal(a.status, 404);
  free(a.body);
  /* Paths out of the dashboard's. */
  path(r, "/metrics", t, sizeof t);
  raw(r, "GET", t, host, NULL, &a);
  assert_int_equal(a.status, 404);
  free(a.body);
  path(r, "/assets/../v1/cpids/" CPID "/spans", t, sizeof t);
  raw(r, "GET", t, host, NULL, &a);
  assert_int_equal(a.status, 404);
  free(a.body);
  /* DNS rebinding: the right path under another name, or another port. */
  path(r, "/v1/cpids/" CPID "/spans", t, sizeof t);
  char other[96];
  snprintf(other, sizeof other, "attacker.example:%u", r->port);
  raw(r, "GET", t, other, NULL, &a);
  assert_int_equal(a.status, 421);
  assert_null(strstr(a.body, "update deployments"));
  free(a.body);
  snprintf(other, sizeof other, "127.0.0.1:%u", r->port + 1);
  raw(r, "GET", t, other, NULL, &a);
  assert_int_equal(a.status, 421);
  free(a.body);
  /* Another site's page (another port of 127.0.0.1 is the same site). */
  raw(r, "GET", t, host, "Sec-Fetch-Site: same-site\r\n", &a);
  assert_int_equal(a.status, 403);
  free(a.body);
  raw(r, "GET", t, host, "Sec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: no-cors\r\n", &a);
  assert_int_equal(a.status, 403);
  free(a.body);
  /* A top-level navigation from elsewhere still needs the secret. */
  raw(r, "GET", "/v1/roots", host,
      "Sec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: navigate\r\nSec-Fetch-Dest: document\r\n", &a);
  assert_int_equal(a.status, 404);
  free(a.body);
  /* Not GET or HEAD; a body. */
  raw(r, "POST", t, host, "Content-Length: 0\r\n", &a);
  assert_int_equal(a.status, 405);
  free(a.body);
  raw(r, "DELETE", t, host, NULL, &a);
  assert_int_equal(a.status, 405);
  free(a.body);
  raw(r, "GET", t, host, "Content-Length: 5\r\n\r\nhello", &a);
  assert_int_equal(a.status, 413);
  free(a.body);
}

/* SIGTERM: status 0; the secret and the token were never on stderr. */
static void test_stop(void **state) {
  rig_t *r = *state;
  int st;
  assert_int_equal(kill(r->relay, SIGTERM), 0);
  assert_int_equal(waitpid(r->relay, &st, 0), r->relay);
  r->relay = 0;
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  char log[96], text[8192];
  snprintf(log, sizeof log, "%s/relay.log", r->dir);
  FILE *f = fopen(log, "r");
  assert_non_null(f);
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  assert_non_null(strstr(text, "relaying to the trace server"));
  assert_null(strstr(text, r->secret));
  assert_null(strstr(text, TOKEN));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_relays),
      cmocka_unit_test(test_refuses),
      cmocka_unit_test(test_stop),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
