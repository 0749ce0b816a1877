/*
 * test_web.c - the dashboard's static files (server/web.h): what a directory
 * loads (types, cache rules, what is left out), every request path that must
 * find nothing, every directory that must be refused (missing index.html,
 * symbolic links, too many files, too many bytes), and the real server
 * serving them: status, body, the security headers, HEAD, no token needed
 * where the API wants one, and the page that says the dashboard is missing.
 */
#include <curl/curl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/web.h"
#include "server_rig.h"
#include "testutil.h"

static const char csp[] =
    "default-src 'self'; img-src 'self' data:; style-src 'self'; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/* ---- a bundle directory ----------------------------------------------------- */

static void put(const char *dir, const char *name, const char *text) {
  FILE *f = fopen(test_path(dir, name), "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static char *new_dir(void) {
  char *d = strdup("/tmp/ripple-web-XXXXXX");
  assert_non_null(d);
  assert_non_null(mkdtemp(d));
  return d;
}

/* index.html, one asset of each type, and what must not be served. */
static char *bundle(void) {
  char *d = new_dir();
  put(d, "index.html", "<!doctype html><script src=\"/assets/app-1a2b.js\"></script>\n");
  assert_int_equal(mkdir(test_path(d, "assets"), 0755), 0);
  static const char *const names[] = {"app-1a2b.js",     "app-1a2b.css", "logo.svg", "logo.png",
                                      "app-1a2b.js.map", "data.json",    "f.woff2",  "favicon.ico",
                                      "LICENSE.txt",     "blob.bin"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    put(d, test_path("assets", names[i]), names[i]);
  put(d, "assets/.hidden.js", "hidden");
  put(d, "assets/with space.js", "space");
  put(d, "secret.txt", "beside index.html, not under assets/");
  assert_int_equal(mkdir(test_path(d, "assets/sub"), 0755), 0);
  put(d, "assets/sub/deep.js", "deep");
  assert_int_equal(symlink("/etc/passwd", test_path(d, "assets/passwd.txt")), 0);
  assert_int_equal(symlink("../secret.txt", test_path(d, "assets/link.txt")), 0);
  return d;
}

static void drop(char *d) {
  test_rmtree(d);
  free(d);
}

/* ---- loading ---------------------------------------------------------------- */

static void test_types(void **state) {
  (void)state;
  static const char *const t[][2] = {{"a.html", "text/html; charset=utf-8"},
                                     {"a.js", "text/javascript; charset=utf-8"},
                                     {"a.css", "text/css; charset=utf-8"},
                                     {"a.svg", "image/svg+xml"},
                                     {"a.png", "image/png"},
                                     {"a.js.map", "application/json"},
                                     {"a.json", "application/json"},
                                     {"a.woff2", "font/woff2"},
                                     {"a.ico", "image/x-icon"},
                                     {"a.txt", "text/plain; charset=utf-8"},
                                     {"a.bin", "application/octet-stream"},
                                     {"Makefile", "application/octet-stream"},
                                     {"a.JS", "application/octet-stream"},
                                     {"a.html.gz", "application/octet-stream"}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    assert_string_equal(web_type(t[i][0]), t[i][1]);
}

static void test_load(void **state) {
  (void)state;
  char *d = bundle(), err[256] = "";
  web_t *w = NULL;
  assert_int_equal(web_open(d, &w, err, sizeof err), RIPPLE_OK);
  assert_int_equal(web_files(w), 11); /* index.html and the ten plain assets */
  const web_file_t *f = web_find(w, "/");
  assert_non_null(f);
  assert_ptr_equal(web_find(w, "/index.html"), f);
  assert_string_equal(f->name, "index.html");
  assert_string_equal(f->type, "text/html; charset=utf-8");
  assert_string_equal(f->cache, "no-cache");
  assert_int_equal(f->len,
                   strlen("<!doctype html><script src=\"/assets/app-1a2b.js\"></script>\n"));
  f = web_find(w, "/assets/app-1a2b.js");
  assert_non_null(f);
  assert_string_equal(f->type, "text/javascript; charset=utf-8");
  assert_string_equal(f->cache, "public, max-age=31536000, immutable");
  assert_memory_equal(f->data, "app-1a2b.js", f->len);
  assert_string_equal(web_find(w, "/assets/app-1a2b.js.map")->type, "application/json");
  assert_string_equal(web_find(w, "/assets/f.woff2")->type, "font/woff2");
  assert_string_equal(web_find(w, "/assets/blob.bin")->type, "application/octet-stream");
  /* Left out: hidden, odd names, subdirectories, symbolic links, files beside index.html. */
  static const char *const none[] = {
      "/assets/.hidden.js", "/assets/with space.js", "/assets/sub/deep.js", "/assets/passwd.txt",
      "/assets/link.txt",   "/secret.txt",           "/assets/secret.txt",  "/assets/sub"};
  for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) assert_null(web_find(w, none[i]));
  web_free(w);
  drop(d);
}

/* Changes after the start are never seen: the files were read once. */
static void test_snapshot(void **state) {
  (void)state;
  char *d = bundle(), err[256];
  web_t *w;
  assert_int_equal(web_open(d, &w, err, sizeof err), RIPPLE_OK);
  put(d, "assets/new.js", "new");
  put(d, "index.html", "changed");
  assert_null(web_find(w, "/assets/new.js"));
  assert_memory_equal(web_find(w, "/")->data, "<!doctype", 9);
  web_free(w);
  drop(d);
}

static void test_refused_paths(void **state) {
  (void)state;
  char *d = bundle(), err[256];
  web_t *w;
  assert_int_equal(web_open(d, &w, err, sizeof err), RIPPLE_OK);
  static const char *const bad[] = {
      "",
      "index.html",
      "/index.htm",
      "/index.html/",
      "/assets/",
      "/assets",
      "/assets/../index.html",
      "/assets/..",
      "/assets/../secret.txt",
      "/../index.html",
      "//index.html",
      "/assets//app-1a2b.js",
      "/assets/app-1a2b.js/",
      "/assets/%2e%2e/index.html",
      "/assets/app%2d1a2b.js",
      "/assets/app-1a2b.js%00",
      "/assets/./app-1a2b.js",
      "/assets/unknown.js",
      "/assets/APP-1A2B.JS",
      "/v1/roots",
      "/favicon.ico",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (web_find(w, bad[i])) fail_msg("found %s", bad[i]);
  }
  assert_null(web_find(w, NULL));
  assert_null(web_find(NULL, "/"));
  assert_true(web_claims("/") && web_claims("/index.html") && web_claims("/assets/x"));
  assert_false(web_claims("/v1/roots") || web_claims("/healthz") || web_claims("/assetsx"));
  web_free(w);
  drop(d);
}

/* web_open fails with rc and a message naming what; *out untouched. */
static void refused(const char *dir, int rc, const char *says) {
  static char mark;
  char err[512] = "";
  web_t *w = (web_t *)(void *)&mark;
  assert_int_equal(web_open(dir, &w, err, sizeof err), rc);
  assert_ptr_equal(w, (web_t *)(void *)&mark);
  if (!strstr(err, says)) fail_msg("error \"%s\" does not say \"%s\"", err, says);
}

static void test_refused_dirs(void **state) {
  (void)state;
  char *d = new_dir();
  refused(test_path(d, "none"), RIPPLE_ESYS, "No such file");
  refused(d, RIPPLE_ESYS, "index.html: No such file");
  assert_int_equal(mkdir(test_path(d, "index.html"), 0755), 0);
  refused(d, RIPPLE_ESYS, "index.html: not a regular file");
  assert_int_equal(rmdir(test_path(d, "index.html")), 0);
  put(d, "real.html", "x");
  assert_int_equal(symlink("real.html", test_path(d, "index.html")), 0);
  refused(d, RIPPLE_ESYS, "index.html: a symbolic link");
  assert_int_equal(unlink(test_path(d, "index.html")), 0);
  put(d, "index.html", "x");
  /* assets/ as a link to a directory elsewhere, or a file */
  char *other = new_dir();
  assert_int_equal(symlink(other, test_path(d, "assets")), 0);
  refused(d, RIPPLE_ESYS, "assets: not a directory");
  assert_int_equal(unlink(test_path(d, "assets")), 0);
  put(d, "assets", "a file");
  refused(d, RIPPLE_ESYS, "assets: not a directory");
  assert_int_equal(unlink(test_path(d, "assets")), 0);
  /* no assets/ at all is fine */
  web_t *w;
  char err[256];
  assert_int_equal(web_open(d, &w, err, sizeof err), RIPPLE_OK);
  assert_int_equal(web_files(w), 1);
  web_free(w);
  drop(other);
  drop(d);
}

static void test_too_many_files(void **state) {
  (void)state;
  char *d = new_dir(), name[64];
  put(d, "index.html", "x");
  assert_int_equal(mkdir(test_path(d, "assets"), 0755), 0);
  for (int i = 0; i < WEB_MAX_FILES - 1; i++) {
    snprintf(name, sizeof name, "assets/a%d.js", i);
    put(d, name, "1");
  }
  web_t *w;
  char err[256];
  assert_int_equal(web_open(d, &w, err, sizeof err), RIPPLE_OK); /* 256 in all */
  assert_int_equal(web_files(w), WEB_MAX_FILES);
  web_free(w);
  put(d, "assets/one-more.js", "1");
  refused(d, RIPPLE_ERANGE, "more than 256 files");
  drop(d);
}

static void sized(const char *path, off_t size) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(fd >= 0);
  assert_int_equal(ftruncate(fd, size), 0); /* sparse: costs no disk */
  close(fd);
}

static void test_too_large(void **state) {
  (void)state;
  char *d = new_dir();
  put(d, "index.html", "x");
  assert_int_equal(mkdir(test_path(d, "assets"), 0755), 0);
  sized(test_path(d, "assets/big.js"), (off_t)WEB_MAX_BYTES - 1);
  web_t *w;
  char err[256];
  assert_int_equal(web_open(d, &w, err, sizeof err), RIPPLE_OK); /* exactly the limit */
  assert_int_equal(web_bytes(w), WEB_MAX_BYTES);
  web_free(w);
  put(d, "assets/small.js", "1");
  refused(d, RIPPLE_ERANGE, "more than 32 MiB");
  assert_int_equal(unlink(test_path(d, "assets/small.js")), 0);
  sized(test_path(d, "index.html"), (off_t)WEB_MAX_BYTES + 1);
  refused(d, RIPPLE_ERANGE, "more than 32 MiB");
  drop(d);
}

/* ---- through the real server ------------------------------------------------ */

typedef struct answer {
  long status;
  char head[8192];
  size_t hlen;
  char *body;
  size_t len;
} answer_t;

static size_t take_body(char *p, size_t size, size_t n, void *ud) {
  answer_t *a = ud;
  char *grown = realloc(a->body, a->len + size * n + 1);
  if (!grown) return 0;
  memcpy(grown + a->len, p, size * n);
  a->len += size * n;
  grown[a->len] = '\0';
  a->body = grown;
  return size * n;
}

static size_t take_head(char *p, size_t size, size_t n, void *ud) {
  answer_t *a = ud;
  size_t k = size * n < sizeof a->head - 1 - a->hlen ? size * n : sizeof a->head - 1 - a->hlen;
  memcpy(a->head + a->hlen, p, k);
  a->hlen += k;
  a->head[a->hlen] = '\0';
  return size * n;
}

static void fetch(const rig_t *r, const char *method, const char *path, answer_t *a) {
  memset(a, 0, sizeof *a);
  char url[512];
  snprintf(url, sizeof url, "%s%s", r->base, path);
  CURL *c = curl_easy_init();
  assert_non_null(c);
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
  if (!strcmp(method, "HEAD")) curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  if (!strcmp(method, "POST")) curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, take_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, take_head);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, a);
  assert_int_equal(curl_easy_perform(c), CURLE_OK);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a->status);
  curl_easy_cleanup(c);
}

/* The value of header name, "" when absent (in a static buffer). */
static const char *header(const answer_t *a, const char *name) {
  static char v[1024];
  size_t n = strlen(name);
  v[0] = '\0';
  for (const char *l = a->head; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (strncasecmp(l, name, n) != 0 || l[n] != ':') continue;
    const char *s = l + n + 1;
    while (*s == ' ') s++;
    size_t k = strcspn(s, "\r\n");
    snprintf(v, sizeof v, "%.*s", (int)k, s);
    break;
  }
  return v;
}

static void assert_guarded(const answer_t *a) {
  assert_string_equal(header(a, "Content-Security-Policy"), csp);
  assert_string_equal(header(a, "X-Content-Type-Options"), "nosniff");
  assert_string_equal(header(a, "X-Frame-Options"), "DENY");
  assert_string_equal(header(a, "Referrer-Policy"), "no-referrer");
  assert_string_equal(header(a, "Cross-Origin-Resource-Policy"), "same-origin");
  assert_string_equal(header(a, "Cross-Origin-Opener-Policy"), "same-origin");
}

static void answer_free(answer_t *a) { free(a->body); }

static char *reader_tokens[] = {"reader-secret", NULL};

static void test_served(void **state) {
  (void)state;
  char *d = bundle(), err[256];
  web_t *w;
  assert_int_equal(web_open(d, &w, err, sizeof err), RIPPLE_OK);
  rig_t *r = rig_new();
  r->ho.web = w;
  r->ho.reader_tokens = reader_tokens; /* the files need none */
  rig_open(r);
  answer_t a;
  fetch(r, "GET", "/", &a);
  assert_int_equal(a.status, 200);
  assert_int_equal(a.len, web_find(w, "/")->len);
  assert_memory_equal(a.body, web_find(w, "/")->data, a.len);
  assert_string_equal(header(&a, "Content-Type"), "text/html; charset=utf-8");
  assert_string_equal(header(&a, "Cache-Control"), "no-cache");
  assert_guarded(&a);
  answer_free(&a);
  fetch(r, "GET", "/assets/app-1a2b.css?v=1", &a); /* a query does not matter */
  assert_int_equal(a.status, 200);
  assert_string_equal(a.body, "app-1a2b.css");
  assert_string_equal(header(&a, "Content-Type"), "text/css; charset=utf-8");
  assert_string_equal(header(&a, "Cache-Control"), "public, max-age=31536000, immutable");
  assert_guarded(&a);
  answer_free(&a);
  fetch(r, "HEAD", "/assets/app-1a2b.js", &a);
  assert_int_equal(a.status, 200);
  assert_int_equal(a.len, 0);
  assert_string_equal(header(&a, "Content-Length"), "11");
  assert_string_equal(header(&a, "Content-Type"), "text/javascript; charset=utf-8");
  assert_guarded(&a);
  answer_free(&a);
  static const char *const missing[] = {"/assets/nope.js", "/assets/../index.html",
                                        "/assets/%2e%2e/secret.txt", "/assets/passwd.txt",
                                        "/assets/sub/deep.js"};
  for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
    fetch(r, "GET", missing[i], &a);
    if (a.status != 404) fail_msg("%s: %ld", missing[i], a.status);
    assert_null(strstr(a.body ? a.body : "", "root:"));
    answer_free(&a);
  }
  fetch(r, "GET", "/assets/nope.js", &a);
  assert_guarded(&a);
  assert_string_equal(header(&a, "Cache-Control"), "no-store");
  answer_free(&a);
  /* The API is as it was: its reads still want the token. */
  fetch(r, "GET", "/v1/roots", &a);
  assert_int_equal(a.status, 401);
  answer_free(&a);
  fetch(r, "POST", "/", &a);
  assert_int_equal(a.status, 404);
  answer_free(&a);
  r->ho.reader_tokens = NULL;
  rig_teardown((void **)&r);
  web_free(w);
  drop(d);
}

static void test_not_installed(void **state) {
  (void)state;
  rig_t *r = rig_new();
  rig_open(r); /* no web */
  answer_t a;
  static const char *const index[] = {"/", "/index.html"};
  for (size_t i = 0; i < 2; i++) {
    fetch(r, "GET", index[i], &a);
    assert_int_equal(a.status, 404);
    assert_string_equal(header(&a, "Content-Type"), "text/html; charset=utf-8");
    assert_non_null(strstr(a.body, "The dashboard is not installed"));
    assert_non_null(strstr(a.body, "--web DIR"));
    assert_non_null(strstr(a.body, "<code>make</code>"));
    assert_guarded(&a);
    answer_free(&a);
  }
  fetch(r, "HEAD", "/", &a);
  assert_int_equal(a.status, 404);
  assert_int_equal(a.len, 0);
  answer_free(&a);
  fetch(r, "GET", "/assets/app.js", &a);
  assert_int_equal(a.status, 404);
  answer_free(&a);
  fetch(r, "GET", "/healthz", &a);
  assert_int_equal(a.status, 200);
  answer_free(&a);
  rig_teardown((void **)&r);
}

int main(void) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_types),         cmocka_unit_test(test_load),
      cmocka_unit_test(test_snapshot),      cmocka_unit_test(test_refused_paths),
      cmocka_unit_test(test_refused_dirs),  cmocka_unit_test(test_too_many_files),
      cmocka_unit_test(test_too_large),     cmocka_unit_test(test_served),
      cmocka_unit_test(test_not_installed),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  curl_global_cleanup();
  return rc;
}
