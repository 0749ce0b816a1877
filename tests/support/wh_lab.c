/*
 * wh_lab.c - the trace server and the webhook as real processes for lab
 * tests, the test's namespace, and the webhook's registration (wh_lab.h),
 * made by the one generator of registrations, webhook/deploy/registration.sh.
 */
#include "wh_lab.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http_client.h"
#include "ripplex/sbuf.h"
#include "rw_lab.h"
#include "testutil.h"

static void show_log(const char *path) {
  FILE *f = fopen(path, "r");
  char line[1024];
  while (f && fgets(line, sizeof line, f)) fputs(line, stderr);
  if (f) fclose(f);
}

void whlab_spawn(whlab_proc_t *p, char *const argv[]) {
  p->port = 0;
  p->pid = fork();
  assert_true(p->pid >= 0);
  if (p->pid == 0) {
    int fd = open(p->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 2) < 0 || !argv[0]) _exit(126);
    execv(argv[0], argv);
    _exit(127);
  }
  p->port = test_listen_port(p->log, 30000);
  if (!p->port) {
    show_log(p->log);
    fail_msg("%s did not start (its log is above)", argv[0]);
  }
}

void whlab_kill(whlab_proc_t *p) {
  if (p->pid <= 0) return;
  kill(p->pid, SIGKILL);
  waitpid(p->pid, NULL, 0);
  p->pid = -1;
}

void whlab_stop(whlab_proc_t *p) {
  /* kill(-1, ...) would reach every process of the user. */
  if (p->pid <= 0) fail_msg("stopping a process that is not running (%s)", p->log);
  kill(p->pid, SIGTERM);
  int st = -1;
  waitpid(p->pid, &st, 0);
  p->pid = -1;
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static size_t sink(char *p, size_t sz, size_t n, void *ud) {
  if (ud) sbuf_put(ud, p, sz * n);
  return sz * n;
}

long whlab_webhook_get(const whlab_t *l, const char *path, char **body) {
  return whlab_get_port(l->webhook.port, path, body);
}

long whlab_get_port(unsigned port, const char *path, char **body) {
  char url[128];
  snprintf(url, sizeof url, "https://127.0.0.1:%u%s", port, path);
  sbuf_t b;
  sbuf_init(&b);
  CURL *c = curl_easy_init();
  assert_non_null(c);
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_CAINFO, getenv("RIPPLE_LAB_CA"));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, body ? &b : NULL);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  long status = 0;
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(c);
  if (body) {
    sbuf_putc(&b, '\0');
    *body = b.p;
  } else {
    sbuf_free(&b);
  }
  return status;
}

static int webhook_ready(void *ud) { return whlab_webhook_get(ud, "/readyz", NULL) == 200; }

/* The lab's CA and webhook certificate: from the environment (scripts/with-lab
 * exports them) or the lab's state directory. */
static void pki_env(void) {
  const char *lab_dir = getenv("RIPPLE_LAB_DIR");
  static const char *const files[][2] = {{"RIPPLE_LAB_CA", "ca.crt"},
                                         {"RIPPLE_LAB_WEBHOOK_CERT", "webhook.crt"},
                                         {"RIPPLE_LAB_WEBHOOK_KEY", "webhook.key"}};
  for (size_t i = 0; i < 3; i++) {
    char path[300];
    snprintf(path, sizeof path, "%s/pki/%s", lab_dir ? lab_dir : "/tmp/ripple-lab", files[i][1]);
    if (!getenv(files[i][0])) setenv(files[i][0], path, 1);
    const char *file = getenv(files[i][0]);
    if (!file || access(file, R_OK) != 0) fail_msg("cannot read %s", file ? file : path);
  }
}

/* The key of the contexts' MACs (--context-key-file), as the chart's install
 * hook makes it: random, in a file of the test's directory, the same for
 * every replica. */
static const char *context_key_file(const whlab_t *l) {
  static char path[300];
  unsigned char raw[32] = {0};
  char hex[65] = "";
  FILE *r = fopen("/dev/urandom", "rb");
  if (!r || fread(raw, 1, sizeof raw, r) != sizeof raw) fail_msg("cannot read /dev/urandom");
  fclose(r);
  for (size_t i = 0; i < sizeof raw; i++) snprintf(hex + 2 * i, 3, "%02x", raw[i]);
  snprintf(path, sizeof path, "%s/context.key", l->dir);
  FILE *f = fopen(path, "w");
  if (!f || fprintf(f, "%s\n", hex) < 0 || fclose(f) != 0) fail_msg("cannot write %s", path);
  return path;
}

void whlab_start(whlab_t *l) {
  const char *srv_bin = getenv("RIPPLE_SERVER_BIN"), *wh_bin = getenv("RIPPLE_WEBHOOK_BIN");
  if (!srv_bin || !wh_bin) {
    fail_msg("RIPPLE_SERVER_BIN and RIPPLE_WEBHOOK_BIN are needed (ctest sets them)");
    return;
  }
  pki_env();
  snprintf(l->dir, sizeof l->dir, "/tmp/ripple-wh-lab-XXXXXX");
  assert_non_null(mkdtemp(l->dir));
  char db[300];
  snprintf(db, sizeof db, "%s/trace.db", l->dir);
  snprintf(l->server.log, sizeof l->server.log, "%s/server.log", l->dir);
  snprintf(l->webhook.log, sizeof l->webhook.log, "%s/webhook.log", l->dir);
  char *sargv[16] = {(char *)srv_bin, "--listen", "127.0.0.1:0", "--db", db};
  for (size_t i = 0, n = 5; i < 8 && l->server_args[i]; i++) sargv[n++] = (char *)l->server_args[i];
  whlab_spawn(&l->server, sargv);
  snprintf(l->trace, sizeof l->trace, "http://127.0.0.1:%u", l->server.port);
  /* The lab's test operator's RippleApp owns what it makes (lab/operator):
   * a kind the webhook follows only when told (docs/webhook.md, "Owner
   * kinds"). */
  char *wargv[32] = {(char *)wh_bin,
                     "--listen",
                     "127.0.0.1:0",
                     "--tls-cert",
                     getenv("RIPPLE_LAB_WEBHOOK_CERT"),
                     "--tls-key",
                     getenv("RIPPLE_LAB_WEBHOOK_KEY"),
                     "--kubeconfig",
                     getenv("KUBECONFIG"),
                     "--trace-server",
                     l->trace,
                     "--context-key-file",
                     (char *)context_key_file(l),
                     "--owner-kind",
                     "lab.ripple.dev/RippleApp"};
  size_t n = 15;
  /* Only the lab's API servers may POST /mutate (lab/apiserver.sh gives them
   * a client certificate of this CA), as the chart runs it. */
  const char *client_ca = getenv("RIPPLE_LAB_WEBHOOK_CLIENT_CA");
  if (client_ca && access(client_ca, R_OK) == 0) {
    wargv[n++] = "--client-ca";
    wargv[n++] = (char *)client_ca;
  }
  for (size_t i = 0; i < 8 && l->webhook_args[i]; i++) wargv[n++] = (char *)l->webhook_args[i];
  if (l->replicas > 1) {
    whlab_replicas_start(l, wargv);
    return;
  }
  whlab_spawn(&l->webhook, wargv);
  if (!lab_wait(webhook_ready, l, 60000)) fail_msg("the webhook's informers did not sync");
  fprintf(stderr, "# logs: %s %s\n", l->server.log, l->webhook.log);
}

long whlab_post_as(const char *user, const char *group, const char *path, const char *body,
                   sbuf_t *out) {
  const char *server = getenv("RIPPLE_LAB_SERVER"), *ca = getenv("RIPPLE_LAB_CA");
  const char *crt = getenv("RIPPLE_LAB_ADMIN_CERT"), *key = getenv("RIPPLE_LAB_ADMIN_KEY");
  if (!server || !ca || !crt || !key) fail_msg("the lab's env is needed (eval \"$(lab/lab env)\")");
  char url[512], as[300], grp[300];
  snprintf(url, sizeof url, "%s%s", server, path);
  snprintf(as, sizeof as, "Impersonate-User: %s", user);
  struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
  h = curl_slist_append(h, as);
  if (group) {
    snprintf(grp, sizeof grp, "Impersonate-Group: %s", group);
    h = curl_slist_append(h, grp);
  }
  CURL *c = curl_easy_init();
  assert_non_null(c);
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_CAINFO, ca);
  curl_easy_setopt(c, CURLOPT_SSLCERT, crt);
  curl_easy_setopt(c, CURLOPT_SSLKEY, key);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  long status = 0;
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  return status;
}

int whlab_probe(ripple_kube_client_t *kc, const char *ns, json_t **out) {
  json_t *svc = lab_json(
      "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":"
      "\"ripple-probe\"},\"spec\":{\"ports\":[{\"port\":80}]}}");
  ripple_kube_write_opts_t wo = {.dry_run = 1};
  ripple_kube_status_t st;
  *out = NULL;
  int rc = ripple_kube_create(kc, lab_resolve(kc, "services"), ns, svc, &wo, out, &st);
  json_decref(svc);
  return rc == RIPPLE_OK;
}

int whlab_annotated(ripple_kube_client_t *kc, const char *ns) {
  json_t *out = NULL;
  int ok = whlab_probe(kc, ns, &out) &&
           json_object_get(json_object_get(json_object_get(out, "metadata"), "annotations"),
                           "cpid.ripple.dev/service") != NULL;
  json_decref(out);
  return ok;
}

/* Does the webhook's context come back on a dry-run write in the test's
 * namespace? */
static int webhook_active(void *ud) {
  whlab_t *l = ud;
  return whlab_annotated(l->kc, l->ns);
}

void whlab_capture(char *const argv[], sbuf_t *out) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (dup2(fds[1], 1) < 0) _exit(126);
    close(fds[0]);
    execv(argv[0], argv);
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) sbuf_put(out, buf, (size_t)n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || out->oom || !out->len)
    fail_msg("%s failed (status %d)", argv[0], status);
}

/* The registration as YAML from the one generator every registration comes
 * from (webhook/deploy/registration.sh, template deploy/helm/ripple/files/registration.yaml). */
static void registration_yaml(const whlab_t *l, const char *name, const char *ns, sbuf_t *out) {
  const char *src = getenv("RIPPLE_SOURCE_DIR"), *ca = getenv("RIPPLE_LAB_CA");
  if (!src || !ca) fail_msg("RIPPLE_SOURCE_DIR and RIPPLE_LAB_CA are needed (ctest sets them)");
  char script[512], url[64];
  snprintf(script, sizeof script, "%s/webhook/deploy/registration.sh", src);
  snprintf(url, sizeof url, "https://127.0.0.1:%u/mutate", l->webhook.port);
  char *argv[] = {script,      "--name",   (char *)name,   "--url",    url,
                  "--ca-file", (char *)ca, "--namespaces", (char *)ns, NULL};
  whlab_capture(argv, out);
}

void whlab_register(whlab_t *l, const char *prefix) {
  char sfx[8], name[64];
  lab_suffix(sfx, 6);
  snprintf(name, sizeof name, "%s-%s", prefix, sfx);
  sbuf_t y;
  sbuf_init(&y);
  registration_yaml(l, name, l->ns, &y);
  /* The API server takes YAML as it is: the generator's text is what is stored. */
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_request(l->kc, "POST",
                                 "/apis/admissionregistration.k8s.io/v1/"
                                 "mutatingwebhookconfigurations",
                                 "application/yaml", y.p, y.len, NULL, &st));
  sbuf_free(&y);
  snprintf(l->name, sizeof l->name, "%s", name);
  /* The API server picks a new registration up a moment later (longer just
   * after it restarted): wait until a dry-run write comes back annotated. */
  if (!lab_wait(webhook_active, l, 60000)) fail_msg("the registration %s never took effect", name);
}

void whlab_unregister(whlab_t *l) {
  ripple_kube_status_t st;
  const ripple_kube_resource_t *r;
  if (l->kc && l->name[0] &&
      ripple_kube_resolve(l->kc, "mutatingwebhookconfigurations", &r, &st) == RIPPLE_OK) {
    int rc = ripple_kube_delete(l->kc, r, NULL, l->name, NULL, &st);
    if (rc != RIPPLE_OK && rc != RIPPLE_KUBE_ENOTFOUND)
      fprintf(stderr, "# cannot remove webhook registration %s: %s\n", l->name, st.message);
  }
  l->name[0] = '\0';
}

/* ---- the test's setting -------------------------------------------------------- */

static whlab_t *exit_lab; /* the one lab of this process */

static void kill_at_exit(void) {
  if (!exit_lab) return;
  whlab_kill(&exit_lab->server);
  whlab_kill(&exit_lab->webhook);
  whlab_replicas_kill(exit_lab);
}

void whlab_begin_cluster(whlab_t *l, const char *ns_prefix) {
  memset(l, 0, sizeof *l);
  l->server.pid = l->webhook.pid = l->lb.pid = -1;
  for (int k = 0; k < WHLAB_REPLICAS_MAX; k++) l->webhooks[k].pid = -1;
  if (!exit_lab) atexit(kill_at_exit);
  exit_lab = l;
  l->kc = lab_client();
  lab_ns_new(l->kc, ns_prefix, l->ns, sizeof l->ns);
  fprintf(stderr, "# namespace %s\n", l->ns);
}

void whlab_begin(whlab_t *l, const char *ns_prefix, const char *reg_prefix) {
  whlab_begin_cluster(l, ns_prefix);
  whlab_start(l);
  whlab_register(l, reg_prefix);
}

void whlab_ns_delete(whlab_t *l) {
  lab_ns_delete(l->kc, l->ns);
  l->ns[0] = '\0';
}

void whlab_end(whlab_t *l) {
  whlab_unregister(l);
  ripple_kube_status_t st;
  const ripple_kube_resource_t *r;
  if (l->kc && l->ns[0] && ripple_kube_resolve(l->kc, "namespaces", &r, &st) == RIPPLE_OK)
    ripple_kube_delete(l->kc, r, NULL, l->ns, NULL, &st);
  whlab_kill(&l->server);
  whlab_kill(&l->webhook);
  whlab_replicas_kill(l);
  ripple_kube_client_free(l->kc);
  l->kc = NULL;
  l->ns[0] = '\0';
}

/* ---- objects and traces ------------------------------------------------------ */

json_t *whlab_get(whlab_t *l, const char *resource, const char *name) {
  json_t *o = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_get(l->kc, lab_resolve(l->kc, resource), l->ns, name, &o, &st));
  return o;
}

void whlab_create(whlab_t *l, const char *resource, json_t *o) {
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(l->kc, lab_resolve(l->kc, resource), l->ns, o, NULL, NULL, &st));
  json_decref(o);
}

void whlab_patch(whlab_t *l, const char *resource, const char *name, const char *patch) {
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_patch(l->kc, lab_resolve(l->kc, resource), l->ns, name,
                               RIPPLE_KUBE_PATCH_MERGE, patch, strlen(patch), NULL, NULL, &st));
}

void whlab_new_cpid(char *out) {
  ripple_cpid_t id;
  assert_int_equal(ripple_cpid_generate(&id), RIPPLE_OK);
  ripple_cpid_format(&id, out);
}

int whlab_obj_cpid(const json_t *obj, const char *kind, char *out) {
  char key[RIPPLE_ANNOTATION_KEYMAX];
  assert_int_equal(ripple_annotation_key(kind, key, sizeof key), RIPPLE_OK);
  const char *v = json_string_value(json_object_get(lab_at(obj, "metadata.annotations"), key));
  ripple_ctx_t c;
  if (!v || ripple_ctx_decode(v, strlen(v), RIPPLE_ANC_MAX, &c) != RIPPLE_OK) return 0;
  ripple_cpid_format(&c.cpid, out);
  return 1;
}

json_t *whlab_trace(const whlab_t *l, const char *cpid, const char *what) {
  char path[160];
  snprintf(path, sizeof path, "/v1/cpids/%s/%s", cpid, what);
  json_t *j = hc_get_json(l->trace, path, 200);
  if (!j) fail_msg("GET %s%s did not answer 200", l->trace, path);
  return j;
}
