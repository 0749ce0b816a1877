/*
 * test_kube_watch_lab.c - watches against the lab's API server: events with
 * their old state, bookmarks, server-side timeouts every second resumed
 * without losing a change, a resume from a checkpoint, and a checkpoint the
 * server no longer has (the API server restarted, etcd compacted): a 410,
 * and a relist that reports exactly what changed meanwhile.
 *
 * It restarts the API server, so it holds /tmp/ripple-lab.lock throughout.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripplex/sbuf.h"
#include "watch_lab.h"

#define WAIT_MS 60000

typedef struct ev {
  ripple_kube_event_type_t type;
  char name[64], rv[32], oldrv[32];
  int relist;
} ev_t;

/* What a watch delivered, and the state of each object it implies. */
typedef struct recorder {
  pthread_mutex_t mu;
  ev_t ev[1024];
  int n, synced, troubles;
  char rv[64];
  json_t *state; /* name -> last object */
} recorder_t;

static void on_event(void *ud, const ripple_kube_event_t *e) {
  recorder_t *r = ud;
  pthread_mutex_lock(&r->mu);
  if (r->n < 1024) {
    ev_t *x = &r->ev[r->n++];
    x->type = e->type;
    x->relist = e->relist;
    snprintf(x->name, sizeof x->name, "%s", lab_str(e->obj, "metadata.name"));
    snprintf(x->rv, sizeof x->rv, "%s", lab_str(e->obj, "metadata.resourceVersion"));
    snprintf(x->oldrv, sizeof x->oldrv, "%s",
             e->old ? lab_str(e->old, "metadata.resourceVersion") : "-");
  }
  const char *name = lab_str(e->obj, "metadata.name");
  if (e->type == RIPPLE_KUBE_DELETED)
    json_object_del(r->state, name);
  else
    json_object_set(r->state, name, e->obj);
  pthread_mutex_unlock(&r->mu);
}

static void on_synced(void *ud) {
  recorder_t *r = ud;
  pthread_mutex_lock(&r->mu);
  r->synced = 1;
  pthread_mutex_unlock(&r->mu);
}

static void on_progress(void *ud, const char *rv) {
  recorder_t *r = ud;
  pthread_mutex_lock(&r->mu);
  snprintf(r->rv, sizeof r->rv, "%s", rv);
  pthread_mutex_unlock(&r->mu);
}

static void on_trouble(void *ud, int err, const ripple_kube_status_t *st) {
  recorder_t *r = ud;
  (void)err, (void)st;
  pthread_mutex_lock(&r->mu);
  r->troubles++;
  pthread_mutex_unlock(&r->mu);
}

static recorder_t *recorder_new(void) {
  recorder_t *r = calloc(1, sizeof *r);
  assert_non_null(r);
  pthread_mutex_init(&r->mu, NULL);
  r->state = json_object();
  return r;
}

static void recorder_free(recorder_t *r) {
  json_decref(r->state);
  pthread_mutex_destroy(&r->mu);
  free(r);
}

static ripple_kube_watch_t *start(ripple_kube_client_t *c, recorder_t *r,
                                  const ripple_kube_watch_opts_t *o) {
  ripple_kube_watch_handlers_t h = {on_event, on_synced, on_progress, on_trouble, r};
  ripple_kube_watch_t *w = NULL;
  assert_int_equal(ripple_kube_watch_start(c, lab_resolve(c, "configmaps"), o, &h, &w), RIPPLE_OK);
  return w;
}

/* Index of the first event of this type for name (rv NULL: any), or -1. */
static int find(recorder_t *r, ripple_kube_event_type_t type, const char *name, const char *rv) {
  pthread_mutex_lock(&r->mu);
  int at = -1;
  for (int i = 0; i < r->n && at < 0; i++)
    if (r->ev[i].type == type && strcmp(r->ev[i].name, name) == 0 &&
        (!rv || strcmp(r->ev[i].rv, rv) == 0))
      at = i;
  pthread_mutex_unlock(&r->mu);
  return at;
}

static int wait_event(recorder_t *r, ripple_kube_event_type_t type, const char *name,
                      const char *rv) {
  for (int waited = 0; waited < WAIT_MS; waited += 100) {
    int at = find(r, type, name, rv);
    if (at >= 0) return at;
    wl_sleep_ms(100);
  }
  fail_msg("no %d event for %s (rv %s) within %d ms", (int)type, name, rv ? rv : "any", WAIT_MS);
  return -1;
}

static void wait_synced(recorder_t *r) {
  for (int waited = 0; waited < WAIT_MS; waited += 100) {
    pthread_mutex_lock(&r->mu);
    int s = r->synced;
    pthread_mutex_unlock(&r->mu);
    if (s) return;
    wl_sleep_ms(100);
  }
  fail_msg("the watch never synced");
}

/* "name=rv" lines of the state of recorder ud, sorted, as wl_list_state. */
static char *recorder_state(void *ud) {
  recorder_t *r = ud;
  pthread_mutex_lock(&r->mu);
  char *lines = wl_objects_state(r->state);
  pthread_mutex_unlock(&r->mu);
  return lines;
}

/* The watch's state equals a fresh list (within WAIT_MS). */
static void state_converged(ripple_kube_client_t *c, const char *ns, recorder_t *r) {
  wl_converged_to(c, ns, recorder_state, r, "watch's state", WAIT_MS);
}

/* ---- tests ------------------------------------------------------------------------- */

static void events_carry_old_state(void **state) {
  (void)state;
  ripple_kube_client_t *c = lab_client();
  char ns[64];
  lab_ns_new(c, "ripple-watch", ns, sizeof ns);
  recorder_t *r = recorder_new();
  ripple_kube_watch_opts_t o = {.list = {.namespace_ = ns}};
  ripple_kube_watch_t *w = start(c, r, &o);
  wait_synced(r);
  json_t *a1 = wl_cm_create(c, ns, "a", NULL, NULL), *a2 = wl_cm_set(c, ns, "a", "1");
  wl_cm_delete(c, ns, "a");
  const char *rv1 = lab_str(a1, "metadata.resourceVersion"),
             *rv2 = lab_str(a2, "metadata.resourceVersion");
  int add = wait_event(r, RIPPLE_KUBE_ADDED, "a", rv1);
  int mod = wait_event(r, RIPPLE_KUBE_MODIFIED, "a", rv2);
  int del = wait_event(r, RIPPLE_KUBE_DELETED, "a", NULL);
  assert_true(add < mod && mod < del);
  assert_string_equal(r->ev[add].oldrv, "-");
  assert_string_equal(r->ev[mod].oldrv, rv1);
  assert_string_equal(r->ev[del].oldrv, rv2);
  assert_int_equal(r->ev[del].relist, 0);
  ripple_kube_watch_stats_t s;
  ripple_kube_watch_stats(w, &s);
  assert_int_equal(s.bad_events, 0);
  assert_true(s.events >= 3);
  ripple_kube_watch_free(w);
  state_converged(c, ns, r);
  json_decref(a1), json_decref(a2);
  recorder_free(r);
  lab_ns_delete(c, ns);
  ripple_kube_client_free(c);
}

/* timeoutSeconds=1: the server ends the watch every second; changes made all
 * the while are all seen, and bookmarks arrive. */
static void timeouts_resume_without_loss(void **state) {
  (void)state;
  ripple_kube_client_t *c = lab_client();
  char ns[64];
  lab_ns_new(c, "ripple-watch", ns, sizeof ns);
  recorder_t *r = recorder_new();
  ripple_kube_watch_opts_t o = {.list = {.namespace_ = ns}, .timeout_s = 1};
  ripple_kube_watch_t *w = start(c, r, &o);
  wait_synced(r);
  char name[32], val[16];
  for (int i = 0; i < 40; i++) {
    snprintf(name, sizeof name, "cm-%d", i % 8);
    snprintf(val, sizeof val, "%d", i);
    if (i < 8) {
      json_decref(wl_cm_create(c, ns, name, NULL, NULL));
    } else if (i % 7 == 0) {
      wl_cm_delete(c, ns, name);
      json_decref(wl_cm_create(c, ns, name, NULL, NULL));
    } else {
      json_decref(wl_cm_set(c, ns, name, val));
    }
    wl_sleep_ms(150);
  }
  state_converged(c, ns, r);
  ripple_kube_watch_stats_t s;
  ripple_kube_watch_stats(w, &s);
  fprintf(stderr, "timeouts: events %llu reconnects %llu bookmarks %llu gone %llu\n",
          (unsigned long long)s.events, (unsigned long long)s.reconnects,
          (unsigned long long)s.bookmarks, (unsigned long long)s.gone);
  assert_true(s.reconnects >= 3);
  assert_int_equal(s.bad_events, 0);
  ripple_kube_watch_free(w);
  recorder_free(r);
  lab_ns_delete(c, ns);
  ripple_kube_client_free(c);
}

/* The watch cache sends a bookmark shortly before a watch's timeout (one of
 * 5 s here) carrying the newest version it has: writes this watch does not
 * select move its resume point without any event (bookmarks exist for
 * that). */
static void bookmarks_move_progress(void **state) {
  (void)state;
  ripple_kube_client_t *c = lab_client();
  char ns[64];
  lab_ns_new(c, "ripple-watch", ns, sizeof ns);
  recorder_t *r = recorder_new();
  ripple_kube_watch_opts_t o = {.list = {.namespace_ = ns, .label_selector = "selected=yes"},
                                .timeout_s = 5};
  ripple_kube_watch_t *w = start(c, r, &o);
  wait_synced(r);
  char first[64];
  pthread_mutex_lock(&r->mu);
  snprintf(first, sizeof first, "%s", r->rv);
  pthread_mutex_unlock(&r->mu);
  json_t *other = wl_cm_create(c, ns, "not-selected", NULL, NULL);
  ripple_kube_watch_stats_t s = {0};
  int moved = 0;
  /* Only a bookmark can move the resume point: no event is selected. */
  for (int waited = 0; !(moved && s.bookmarks) && waited < WAIT_MS; waited += 200) {
    wl_sleep_ms(200);
    ripple_kube_watch_stats(w, &s);
    pthread_mutex_lock(&r->mu);
    moved = strcmp(r->rv, first) != 0;
    pthread_mutex_unlock(&r->mu);
  }
  fprintf(stderr, "bookmarks: %llu, progress %s -> %s (write at %s)\n",
          (unsigned long long)s.bookmarks, first, r->rv,
          lab_str(other, "metadata.resourceVersion"));
  assert_true(moved);
  assert_true(s.bookmarks >= 1);
  pthread_mutex_lock(&r->mu);
  assert_int_equal(r->n, 0);
  pthread_mutex_unlock(&r->mu);
  ripple_kube_watch_free(w);
  json_decref(other);
  recorder_free(r);
  lab_ns_delete(c, ns);
  ripple_kube_client_free(c);
}

/* What a consumer restarting from a checkpoint already knows. */
static void recorder_seed(recorder_t *r, const json_t *known) {
  size_t i;
  json_t *o;
  json_array_foreach(known, i, o) { json_object_set(r->state, lab_str(o, "metadata.name"), o); }
}

/* The objects a recorder knows, as a JSON array (the watch's "known"). */
static json_t *known_of(recorder_t *r) {
  json_t *arr = json_array();
  const char *k;
  json_t *o;
  pthread_mutex_lock(&r->mu);
  json_object_foreach(r->state, k, o) { json_array_append(arr, o); }
  pthread_mutex_unlock(&r->mu);
  return arr;
}

typedef struct checkpoint {
  char rv[64];
  json_t *known;
} checkpoint_t;

/* Watch until a, b and c exist, then stop: the checkpoint a consumer saves. */
static void take_checkpoint(ripple_kube_client_t *c, const char *ns, checkpoint_t *cp) {
  recorder_t *r = recorder_new();
  ripple_kube_watch_opts_t o = {.list = {.namespace_ = ns}};
  ripple_kube_watch_t *w = start(c, r, &o);
  wait_synced(r);
  static const char *names[] = {"a", "b", "c"};
  for (int i = 0; i < 3; i++) {
    json_t *x = wl_cm_create(c, ns, names[i], NULL, NULL);
    wait_event(r, RIPPLE_KUBE_ADDED, names[i], lab_str(x, "metadata.resourceVersion"));
    json_decref(x);
  }
  ripple_kube_watch_free(w);
  snprintf(cp->rv, sizeof cp->rv, "%s", r->rv);
  cp->known = known_of(r);
  recorder_free(r);
}

static void resume_from_checkpoint(void **state) {
  (void)state;
  ripple_kube_client_t *c = lab_client();
  char ns[64];
  lab_ns_new(c, "ripple-watch", ns, sizeof ns);
  checkpoint_t cp = {"", NULL};
  take_checkpoint(c, ns, &cp);
  json_t *b2 = wl_cm_set(c, ns, "b", "changed"), *d = wl_cm_create(c, ns, "d", NULL, NULL);
  wl_cm_delete(c, ns, "c");
  recorder_t *r = recorder_new();
  recorder_seed(r, cp.known);
  ripple_kube_watch_opts_t o = {
      .list = {.namespace_ = ns}, .resource_version = cp.rv, .known = cp.known};
  ripple_kube_watch_t *w = start(c, r, &o);
  int mod = wait_event(r, RIPPLE_KUBE_MODIFIED, "b", lab_str(b2, "metadata.resourceVersion"));
  wait_event(r, RIPPLE_KUBE_ADDED, "d", lab_str(d, "metadata.resourceVersion"));
  int del = wait_event(r, RIPPLE_KUBE_DELETED, "c", NULL);
  assert_string_not_equal(r->ev[mod].oldrv, "-"); /* old state from the checkpoint */
  assert_string_not_equal(r->ev[del].oldrv, "-");
  ripple_kube_watch_stats_t s;
  ripple_kube_watch_stats(w, &s);
  assert_int_equal(s.relists, 0); /* resumed by the watch, not by a list */
  assert_int_equal(r->ev[mod].relist, 0);
  ripple_kube_watch_free(w);
  state_converged(c, ns, r);
  json_decref(b2), json_decref(d), json_decref(cp.known);
  recorder_free(r);
  lab_ns_delete(c, ns);
  ripple_kube_client_free(c);
}

/* A checkpoint from before an API server restart and an etcd compaction:
 * the server answers 410, the watch relists and reports the differences. */
static void expired_checkpoint_relists(void **state) {
  (void)state;
  ripple_kube_client_t *c = lab_client();
  char ns[64];
  lab_ns_new(c, "ripple-watch", ns, sizeof ns);
  checkpoint_t cp = {"", NULL};
  take_checkpoint(c, ns, &cp);
  json_t *a2 = wl_cm_set(c, ns, "a", "changed");
  wl_cm_delete(c, ns, "b");
  wl_lab("restart", "kube-apiserver");
  json_t *e = wl_cm_create(c, ns, "e", NULL, NULL);
  wl_lab("compact", NULL);
  recorder_t *r = recorder_new();
  recorder_seed(r, cp.known);
  ripple_kube_watch_opts_t o = {
      .list = {.namespace_ = ns}, .resource_version = cp.rv, .known = cp.known};
  ripple_kube_watch_t *w = start(c, r, &o);
  int mod = wait_event(r, RIPPLE_KUBE_MODIFIED, "a", lab_str(a2, "metadata.resourceVersion"));
  int add = wait_event(r, RIPPLE_KUBE_ADDED, "e", lab_str(e, "metadata.resourceVersion"));
  int del = wait_event(r, RIPPLE_KUBE_DELETED, "b", NULL);
  assert_true(r->ev[mod].relist && r->ev[add].relist && r->ev[del].relist);
  assert_string_not_equal(r->ev[mod].oldrv, "-");
  assert_int_equal(find(r, RIPPLE_KUBE_MODIFIED, "c", NULL), -1); /* unchanged: not reported */
  ripple_kube_watch_stats_t s;
  ripple_kube_watch_stats(w, &s);
  assert_true(s.gone >= 1);
  assert_true(s.relists >= 1);
  /* And the watch is live again afterwards. */
  json_t *f = wl_cm_create(c, ns, "f", NULL, NULL);
  int live = wait_event(r, RIPPLE_KUBE_ADDED, "f", lab_str(f, "metadata.resourceVersion"));
  assert_int_equal(r->ev[live].relist, 0);
  ripple_kube_watch_free(w);
  state_converged(c, ns, r);
  json_decref(a2), json_decref(e), json_decref(f), json_decref(cp.known);
  recorder_free(r);
  lab_ns_delete(c, ns);
  ripple_kube_client_free(c);
}

int main(void) {
  wl_lock();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(events_carry_old_state),     cmocka_unit_test(timeouts_resume_without_loss),
      cmocka_unit_test(bookmarks_move_progress),    cmocka_unit_test(resume_from_checkpoint),
      cmocka_unit_test(expired_checkpoint_relists),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
