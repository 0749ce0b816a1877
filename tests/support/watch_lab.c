/*
 * watch_lab.c - see watch_lab.h.
 */
#include "watch_lab.h"

#include "ripplex/sbuf.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void wl_sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

void wl_wait_root_ca(ripple_kube_client_t *c, const char *ns) {
  for (int waited = 0; waited < 60000; waited += 100) {
    json_t *obj = NULL;
    ripple_kube_status_t st;
    int rc = ripple_kube_get(c, lab_resolve(c, "configmaps"), ns, "kube-root-ca.crt", &obj, &st);
    json_decref(obj);
    if (rc == RIPPLE_OK) return;
    if (rc != RIPPLE_KUBE_ENOTFOUND) fail_msg("getting kube-root-ca.crt: %s", st.message);
    wl_sleep_ms(100);
  }
  fail_msg("no kube-root-ca.crt in %s after 60 s", ns);
}

void wl_lock(void) {
  static int locked; /* a second flock on another descriptor would wait for the first */
  const char *held = getenv("RIPPLE_LAB_LOCK_HELD");
  if (locked || (held && strcmp(held, "1") == 0)) return;
  locked = 1;
  /* Kept open (and locked) until the process exits. */
  int fd = open("/tmp/ripple-lab.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) fail_msg("cannot open /tmp/ripple-lab.lock");
  fprintf(stderr, "waiting for /tmp/ripple-lab.lock\n");
  if (flock(fd, LOCK_EX) != 0) fail_msg("cannot lock /tmp/ripple-lab.lock");
  fprintf(stderr, "holding /tmp/ripple-lab.lock\n");
}

void wl_lab(const char *cmd, const char *arg) {
  const char *src = getenv("RIPPLE_SOURCE_DIR");
  if (!src) fail_msg("RIPPLE_SOURCE_DIR is not set (the CTest registration sets it)");
  char lab[1024];
  snprintf(lab, sizeof lab, "%s/lab/lab", src);
  char *argv[] = {lab, (char *)cmd, (char *)arg, NULL};
  /* The lab's output goes to stderr, with the test's. */
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, 2, 1);
  pid_t pid;
  int rc = posix_spawn(&pid, lab, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) fail_msg("cannot run %s: %s", lab, strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_msg("lab/lab %s %s failed (status %d)", cmd, arg ? arg : "", status);
}

json_t *wl_cm_create(ripple_kube_client_t *c, const char *ns, const char *name, const char *labels,
                     const json_t *owner) {
  json_t *cm = lab_json(
      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
      "\"%s\",\"labels\":%s},\"data\":{\"v\":\"0\"}}",
      name, labels ? labels : "{}");
  if (owner) {
    json_t *ref =
        json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", "v1", "kind", "ConfigMap", "name",
                  lab_str(owner, "metadata.name"), "uid", lab_str(owner, "metadata.uid"));
    json_object_set_new(json_object_get(cm, "metadata"), "ownerReferences", ref);
  }
  json_t *out = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(c, lab_resolve(c, "configmaps"), ns, cm, NULL, &out, &st));
  json_decref(cm);
  return out;
}

json_t *wl_cm_set(ripple_kube_client_t *c, const char *ns, const char *name, const char *value) {
  char patch[256];
  snprintf(patch, sizeof patch, "{\"data\":{\"v\":\"%s\"}}", value);
  json_t *out = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_patch(c, lab_resolve(c, "configmaps"), ns, name, RIPPLE_KUBE_PATCH_MERGE,
                               patch, strlen(patch), NULL, &out, &st));
  return out;
}

void wl_cm_delete(ripple_kube_client_t *c, const char *ns, const char *name) {
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_delete(c, lab_resolve(c, "configmaps"), ns, name, NULL, &st));
}

typedef struct lines {
  char **v;
  size_t n, cap;
} lines_t;

static void add_line(void *ud, json_t *obj) {
  lines_t *l = ud;
  if (!obj) { /* a restarted list: forget */
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    l->n = 0;
    return;
  }
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 64;
    l->v = realloc(l->v, l->cap * sizeof *l->v);
    assert_non_null(l->v);
  }
  char buf[512];
  snprintf(buf, sizeof buf, "%s=%s", lab_str(obj, "metadata.name"),
           lab_str(obj, "metadata.resourceVersion"));
  l->v[l->n++] = strdup(buf);
}

static int cmp_line(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join(lines_t *l) {
  if (l->n) qsort(l->v, l->n, sizeof *l->v, cmp_line);
  sbuf_t out;
  sbuf_init(&out);
  sbuf_putc(&out, '\0'); /* "" for an empty list */
  out.len = 0;
  for (size_t i = 0; i < l->n; i++) {
    sbuf_printf(&out, "%s\n", l->v[i]);
    free(l->v[i]);
  }
  free(l->v);
  assert_false(out.oom);
  return out.p;
}

char *wl_list_state(ripple_kube_client_t *c, const char *ns) {
  lines_t l = {0};
  ripple_kube_list_opts_t o = {ns, NULL, NULL, 0};
  char *rv = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_list(c, lab_resolve(c, "configmaps"), &o, add_line, &l, &rv, &st));
  ripple_free(rv);
  return join(&l);
}

char *wl_cache_state(ripple_kube_informer_t *inf) {
  lines_t l = {0};
  ripple_kube_informer_each(inf, add_line, &l);
  return join(&l);
}

void wl_converged_to(ripple_kube_client_t *c, const char *ns, char *(*state)(void *ud), void *ud,
                     const char *what, int timeout_ms) {
  char *list = NULL, *mine = NULL;
  for (int waited = 0;; waited += 200) {
    free(list), free(mine);
    list = wl_list_state(c, ns);
    mine = state(ud);
    if (strcmp(list, mine) == 0) break;
    if (waited >= timeout_ms)
      fail_msg("the %s never matched a fresh list within %d ms:\nlist:\n%s\n%s:\n%s", what,
               timeout_ms, list, what, mine);
    wl_sleep_ms(200);
  }
  free(list), free(mine);
}

char *wl_objects_state(const json_t *objs) {
  lines_t l = {0};
  const char *k;
  json_t *o;
  json_object_foreach((json_t *)objs, k, o) { add_line(&l, o); }
  return join(&l);
}

static char *cache_state(void *inf) { return wl_cache_state(inf); }

void wl_converged(ripple_kube_client_t *c, const char *ns, ripple_kube_informer_t *inf,
                  int timeout_ms) {
  wl_converged_to(c, ns, cache_state, inf, "informer's cache", timeout_ms);
}
