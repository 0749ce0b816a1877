/*
 * dashboard.c - `kubectl ripple dashboard [CPID]` (docs/kubectl-ripple.md,
 * "The dashboard"): the trace server's dashboard in the user's browser with
 * no port-forward and no token copied by hand. A listener on 127.0.0.1 relays
 * GET and HEAD to the trace server through the same handle as every other
 * command (tserver.c: the API server's service proxy with the kubeconfig's
 * credentials, or --server URL), which adds the reader token.
 *
 * Every port is hostile, loopback too: other users of the machine can
 * connect, and any web page the user visits can make the browser send
 * requests to 127.0.0.1 (CSRF) or to a name of its own that resolves there
 * (DNS rebinding). So every request must carry the secret path prefix,
 * printed once on stdout and nowhere else; name the relay in its Host; not
 * be another page's fetch (Sec-Fetch-*: a navigation may come from anywhere,
 * the page the browser is opened on is a file); be a GET or HEAD without a body,
 * from a loopback address, of a path the dashboard asks for (relay.c). The
 * browser's own headers are never passed on: the token is the relay's only.
 * Answers carry the trace server's own security headers (its CSP, no
 * framing, no referrer: the prefix is in every URL).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr.h"
#include "ripplex/httpd.h"
#include "ripplex/webfile.h"

typedef struct relay {
  kr_ts_t *ts;
  char secret[KR_RELAY_SECRET_LEN + 1];
  unsigned port;
} relay_t;

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *type,
                              const char *p, size_t len, const char *extra, const char *value) {
  const char *hdrs[] = {WEBFILE_SECURITY_HEADERS, extra, value, NULL};
  return httpd_send_headers(c, status, type, p, len, hdrs);
}

static enum MHD_Result refuse(struct MHD_Connection *c, unsigned status, const char *why) {
  return answer(c, status, "text/plain; charset=utf-8", why, strlen(why), NULL, NULL);
}

static int peer_loopback(struct MHD_Connection *c) {
  const union MHD_ConnectionInfo *i =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (!i || !i->client_addr || i->client_addr->sa_family != AF_INET) return 0;
  const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)i->client_addr;
  return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
}

typedef struct query {
  char *buf;
  size_t cap, n;
  int bad;
} query_t;

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value) {
  (void)kind;
  query_t *q = cls;
  if (++q->n > 32 || kr_relay_query_add(q->buf, q->cap, key, value) != RIPPLE_OK) q->bad = 1;
  return q->bad ? MHD_NO : MHD_YES;
}

static unsigned no(const char **why, const char *text, unsigned status) {
  *why = text;
  return status;
}

/* What a request must be before anything is relayed; 0 when it may go on
 * (path holds the trace server's path, its query added), else the status
 * answered with *why. */
static unsigned admit(const relay_t *r, struct MHD_Connection *c, const char *url,
                      const char *method, char *path, size_t cap, const char **why) {
  if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
    return no(why, "only GET and HEAD\n", 405);
  if (!peer_loopback(c)) return no(why, "not from this machine\n", 403);
  if (!kr_relay_host_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host"), r->port))
    return no(why, "this relay answers http://127.0.0.1:PORT/ only\n", 421);
  if (!kr_relay_fetch_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site"),
                         MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Mode"),
                         MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Dest")))
    return no(why, "not from another site's page\n", 403);
  kr_relay_map_t m = kr_relay_map(r->secret, url, path, cap);
  if (m == KR_RELAY_NOT_FOUND) return no(why, "not found\n", 404);
  if (m == KR_RELAY_REDIRECT) return no(why, NULL, 308);
  query_t q = {path, cap, 0, 0};
  MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_arg, &q);
  if (q.bad) return no(why, "the query is too long\n", 414);
  return 0;
}

static enum MHD_Result relay_request(void *cls, struct MHD_Connection *c, const char *url,
                                     const char *method, const char *version, const char *data,
                                     size_t *size, void **con_cls) {
  (void)version;
  relay_t *r = cls;
  httpd_req_t *req = NULL;
  /* GET and HEAD have no body: any byte of one makes the request too big. */
  int rc = httpd_req_feed(c, con_cls, data, size, 0, &req);
  if (rc < 0) return MHD_NO;
  if (rc == 0) return MHD_YES;
  httpd_req_release(req);
  if (req->too_big) return refuse(c, 413, "a request has no body here\n");
  char path[KR_RELAY_PATH_MAX + KR_RELAY_QUERY_MAX + 2] = "";
  const char *why = NULL;
  unsigned st = admit(r, c, url, method, path, sizeof path, &why);
  if (st == 405) {
    return answer(c, st, "text/plain; charset=utf-8", why, strlen(why), "Allow", "GET, HEAD");
  } else if (st == 308) {
    char loc[KR_RELAY_SECRET_LEN + 3];
    snprintf(loc, sizeof loc, "/%s/", r->secret);
    enum MHD_Result res = answer(c, st, "text/plain; charset=utf-8", "", 0, "Location", loc);
    explicit_bzero(loc, sizeof loc);
    return res;
  } else if (st) {
    return refuse(c, st, why);
  }
  long status = 0;
  char *body = NULL, err[1024];
  size_t len = 0;
  /* HEAD goes up as GET: libmicrohttpd sends the headers only. */
  if (kr_ts_get_raw(r->ts, path, &status, &body, &len, err, sizeof err) != RIPPLE_OK) {
    char q[1100];
    ripple_log_quote(err, q, sizeof q);
    ripple_log(RIPPLE_LOG_WARN, "relay_failed", "msg=%s", q);
    size_t n = strlen(err);
    if (n + 1 < sizeof err) err[n++] = '\n';
    return answer(c, 502, "text/plain; charset=utf-8", err, n, NULL, NULL);
  }
  if (status < 100 || status > 599) status = 502;
  char *p = strchr(path, '?');
  if (p) *p = '\0';
  enum MHD_Result res =
      answer(c, (unsigned)status, kr_relay_type(path, status), body, len, NULL, NULL);
  free(body);
  return res;
}

/* ---- the browser ------------------------------------------------------------------------ */

/* What opens a URL in the user's browser here; NULL: no display known. */
static const char *opener(void) {
#ifdef __APPLE__
  return "open";
#else
  const char *x = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY");
  return (x && *x) || (w && *w) ? "xdg-open" : NULL;
#endif
}

/* Open url in the browser. Not by giving the URL to the opener: a command
 * line is readable by every user of the machine (ps), and the URL holds the
 * secret. A page of the user's own (0600, in a 0700 directory) that sends
 * the browser on is given instead (dir: where it is, removed at exit). */
static void open_browser(const char *url, char *dir, size_t dcap, pid_t *pid) {
  const char *tool = opener();
  if (!tool) {
    fprintf(stderr, "no display known: open the URL above in a browser on this machine\n");
    return;
  }
  const char *tmp = getenv("TMPDIR");
  char file[600] = "";
  snprintf(dir, dcap, "%s/kubectl-ripple-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  int fd = -1;
  if (mkdtemp(dir)) {
    snprintf(file, sizeof file, "%s/open.html", dir);
    fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  } else {
    dir[0] = '\0';
  }
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  int ok = f && fprintf(f,
                        "<!doctype html>\n<meta charset=\"utf-8\">\n"
                        "<meta name=\"referrer\" content=\"no-referrer\">\n"
                        "<meta http-equiv=\"refresh\" content=\"0;url=%s\">\n"
                        "<title>ripple</title><a href=\"%s\">the ripple dashboard</a>\n",
                        url, url) > 0;
  if (f) ok = fclose(f) == 0 && ok;
  if (!f && fd >= 0) close(fd);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (int i = 0; i < 3; i++)
    posix_spawn_file_actions_addopen(&fa, i, "/dev/null", i ? O_WRONLY : O_RDONLY, 0);
  char *const argv[] = {(char *)tool, file, NULL};
  if (!ok || posix_spawnp(pid, tool, &fa, NULL, argv, environ) != 0) {
    *pid = 0;
    fprintf(stderr, "cannot run %s: open the URL above in a browser\n", tool);
  }
  posix_spawn_file_actions_destroy(&fa);
}

static void browser_cleanup(const char *dir, pid_t pid) {
  if (pid > 0) waitpid(pid, NULL, WNOHANG);
  if (!dir[0]) return;
  char file[600];
  snprintf(file, sizeof file, "%s/open.html", dir);
  unlink(file);
  rmdir(dir);
}

/* ---- the command ------------------------------------------------------------------------ */

/* A first GET of the dashboard's page: its failure said now on the terminal
 * (the relay serves on: the server may come up later). */
static void probe(kr_ts_t *ts) {
  long status = 0;
  char *body = NULL, err[1024];
  size_t len = 0;
  if (kr_ts_get_raw(ts, "/", &status, &body, &len, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "warning: %s\n", err);
    return;
  }
  if (status != 200) {
    fprintf(stderr, "warning: the trace server %s answered HTTP %ld to GET /: ", kr_ts_where(ts),
            status);
    while (len && (body[len - 1] == '\n' || body[len - 1] == '\r')) body[--len] = '\0';
    kr_put_clean(stderr, body, 200);
    fputc('\n', stderr);
  }
  free(body);
}

int kr_dashboard(const kr_args_t *a, kr_ts_t *ts) {
  char canon[RIPPLE_CPID_STRLEN + 1] = "", err[512];
  ripple_cpid_t id;
  if (a->cpid) {
    if (ripple_cpid_parse(a->cpid, strlen(a->cpid), &id) != RIPPLE_OK) {
      fprintf(stderr, "error: \"%.60s\" is not a CPID\n", a->cpid);
      return 1;
    }
    ripple_cpid_format(&id, canon);
  }
  relay_t r = {.ts = ts};
  if (kr_relay_secret(r.secret) != RIPPLE_OK) {
    fprintf(stderr, "error: no random bytes for the relay's secret\n");
    return 1;
  }
  sigset_t sigs;
  httpd_signals(&sigs); /* before the daemon's threads: they inherit the mask */
  httpd_opts_t o = {.host = "127.0.0.1",
                    .port = (uint16_t)(a->port < 0 ? 0 : a->port),
                    .max_connections = 32,
                    .timeout_s = 60,
                    .per_ip_limit = 32,
                    .deadline_s = 10,
                    .on_request = relay_request,
                    .on_completed = httpd_req_done,
                    .cls = &r};
  struct MHD_Daemon *d = NULL;
  uint16_t port = 0;
  if (httpd_start(&o, &d, &port, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "error: %s\n", err);
    return 1;
  }
  r.port = port;
  char base[128], url[200];
  snprintf(base, sizeof base, "http://127.0.0.1:%u/%s/", (unsigned)port, r.secret);
  /* The dashboard keeps its scope in the deep link (docs/dashboard.md). */
  snprintf(url, sizeof url, "%s%s%s%s", base, canon[0] ? "#/trace/" : "", canon,
           !a->reachable ? ""
           : canon[0]    ? "?scope=reachable"
                         : "#/find?scope=reachable");
  /* The first line for scripts; written before serving, and stdout not used
   * again (it may be closed once read). */
  printf("dashboard: %s\n", base);
  if (canon[0]) printf("trace: %s\n", url);
  fflush(stdout);
  fprintf(stderr, "relaying to the trace server %s; Ctrl-C stops\n", kr_ts_where(ts));
  probe(ts);
  char dir[512] = "";
  pid_t pid = 0;
  if (!a->no_browser) open_browser(url, dir, sizeof dir, &pid);
  int sig = 0;
  while (sigwait(&sigs, &sig) != 0) {
  }
  httpd_stop(d);
  browser_cleanup(dir, pid);
  explicit_bzero(r.secret, sizeof r.secret);
  explicit_bzero(base, sizeof base);
  explicit_bzero(url, sizeof url);
  return 0;
}
