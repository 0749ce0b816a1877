/*
 * test_kube_informer_lab.c - informers against the lab's API server: the cache
 * and its indexes (owner, labels), callbacks with the old object, reads from
 * another thread while events arrive, and faults: the API server restarted
 * during a watch, a 410 forced by an etcd compaction, connections cut every
 * second by a 1 s watch timeout. Changes are made while the informer cannot
 * see them (its thread held in a handler, the API server down), and after
 * each fault the cache must equal a fresh list: same names, same
 * resourceVersions, nothing lost, nothing stale.
 *
 * It restarts the API server, so it holds /tmp/ripple-lab.lock throughout.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "watch_lab.h"

#define WAIT_MS 120000

/* What the handlers saw: name -> last object per kind of callback. */
typedef struct tracker {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  json_t *added, *updated_old, *updated, *removed;
  int gate_armed, gate_open, gated; /* hold the thread in add("gate") */
} tracker_t;

static void wait_gate(tracker_t *t) {
  t->gated = 1;
  pthread_cond_broadcast(&t->cv);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += 300; /* never forever, whatever the test does */
  while (!t->gate_open && pthread_cond_timedwait(&t->cv, &t->mu, &ts) != ETIMEDOUT) {
  }
}

static void on_add(void *ud, json_t *obj) {
  tracker_t *t = ud;
  pthread_mutex_lock(&t->mu);
  const char *name = lab_str(obj, "metadata.name");
  json_object_set(t->added, name, obj);
  if (t->gate_armed && strcmp(name, "gate") == 0) wait_gate(t);
  pthread_mutex_unlock(&t->mu);
}

static void on_update(void *ud, json_t *old, json_t *obj) {
  tracker_t *t = ud;
  pthread_mutex_lock(&t->mu);
  json_object_set(t->updated, lab_str(obj, "metadata.name"), obj);
  json_object_set(t->updated_old, lab_str(obj, "metadata.name"), old);
  pthread_mutex_unlock(&t->mu);
}

static void on_remove(void *ud, json_t *obj) {
  tracker_t *t = ud;
  pthread_mutex_lock(&t->mu);
  json_object_set(t->removed, lab_str(obj, "metadata.name"), obj);
  pthread_mutex_unlock(&t->mu);
}

static tracker_t *tracker_new(void) {
  tracker_t *t = calloc(1, sizeof *t);
  assert_non_null(t);
  pthread_mutex_init(&t->mu, NULL);
  pthread_cond_init(&t->cv, NULL);
  t->added = json_object(), t->updated = json_object(), t->updated_old = json_object();
  t->removed = json_object();
  return t;
}

static void tracker_free(tracker_t *t) {
  json_decref(t->added), json_decref(t->updated), json_decref(t->updated_old);
  json_decref(t->removed);
  pthread_mutex_destroy(&t->mu);
  pthread_cond_destroy(&t->cv);
  free(t);
}

/* The resourceVersion the tracker's map holds for name ("" if none). */
static const char *seen_rv(tracker_t *t, json_t *map, const char *name) {
  pthread_mutex_lock(&t->mu);
  const char *rv = lab_str(json_object_get(map, name), "metadata.resourceVersion");
  pthread_mutex_unlock(&t->mu);
  return rv ? rv : "";
}

static ripple_kube_informer_t *start(ripple_kube_client_t *c, const char *ns, tracker_t *t,
                                     uint32_t timeout_s) {
  ripple_kube_informer_handlers_t h = {on_add, on_update, on_remove, NULL, t};
  ripple_kube_watch_opts_t o = {.list = {.namespace_ = ns}, .timeout_s = timeout_s};
  ripple_kube_informer_t *inf = NULL;
  assert_int_equal(
      ripple_kube_informer_start(c, lab_resolve(c, "configmaps"), &o, t ? &h : NULL, &inf),
      RIPPLE_OK);
  assert_int_equal(ripple_kube_informer_wait_synced(inf, 60000), RIPPLE_OK);
  return inf;
}

static void print_stats(const char *what, ripple_kube_informer_t *inf,
                        ripple_kube_watch_stats_t *s) {
  ripple_kube_informer_stats(inf, s);
  fprintf(stderr,
          "%s: events %llu reconnects %llu gone %llu relists %llu bookmarks %llu bad %llu\n", what,
          (unsigned long long)s->events, (unsigned long long)s->reconnects,
          (unsigned long long)s->gone, (unsigned long long)s->relists,
          (unsigned long long)s->bookmarks, (unsigned long long)s->bad_events);
}

static void count(void *ud, json_t *obj) {
  (void)obj;
  (*(size_t *)ud)++;
}

static void count_text(void *ud, const char *json, size_t len) {
  (void)json, (void)len;
  (*(size_t *)ud)++;
}

static void take_tree(void *ud, const char *json, size_t len) {
  json_t **out = ud;
  json_decref(*out);
  *out = json_loadb(json, len, 0, NULL);
  assert_non_null(*out);
}

/* ns/name from the cache as a tree, or NULL when the read says it is not
 * cached (RIPPLE_ENOENT). */
static json_t *cached(ripple_kube_informer_t *inf, const char *ns, const char *name) {
  json_t *obj = NULL;
  int rc = ripple_kube_informer_get_text(inf, ns, name, take_tree, &obj);
  if (rc == RIPPLE_ENOENT)
    assert_null(obj);
  else
    assert_int_equal(rc, RIPPLE_OK);
  return obj;
}

/* ---- the cache and its indexes -------------------------------------------------------- */

static size_t selected(ripple_kube_informer_t *inf, const char *ns, const char *sel) {
  size_t n = 0;
  assert_int_equal(ripple_kube_informer_select_text(inf, ns, sel, count_text, &n), RIPPLE_OK);
  return n;
}

static size_t owned(ripple_kube_informer_t *inf, const json_t *owner) {
  size_t n = 0;
  assert_int_equal(
      ripple_kube_informer_by_owner_text(inf, lab_str(owner, "metadata.uid"), count_text, &n),
      RIPPLE_OK);
  return n;
}

static void check_indexes(ripple_kube_informer_t *inf, const char *ns, const json_t *owner,
                          const json_t *w1) {
  assert_int_equal(ripple_kube_informer_size(inf), 5); /* + kube-root-ca.crt */
  json_t *got = cached(inf, ns, "w1");
  assert_non_null(got);
  assert_string_equal(lab_str(got, "metadata.resourceVersion"),
                      lab_str(w1, "metadata.resourceVersion"));
  assert_string_equal(lab_str(got, "data.v"), "0");
  json_decref(got);
  assert_null(cached(inf, ns, "nothing"));
  assert_int_equal(owned(inf, owner), 2);
  assert_int_equal(selected(inf, ns, "app=web"), 2);
  assert_int_equal(selected(inf, NULL, "app=web,tier!=back"), 1);
  assert_int_equal(selected(inf, ns, "app in (web,db)"), 3);
  assert_int_equal(selected(inf, ns, "!app"), 2); /* owner, kube-root-ca.crt */
  assert_int_equal(selected(inf, "elsewhere", "app=web"), 0);
  size_t n = 0;
  assert_int_equal(ripple_kube_informer_select_text(inf, ns, "app in (web", count_text, &n),
                   RIPPLE_EINVAL);
  assert_int_equal(n, 0);
  assert_int_equal(ripple_kube_informer_each(inf, count, &n), RIPPLE_OK);
  assert_int_equal(n, 5);
}

static void cache_indexes_callbacks(void **state) {
  (void)state;
  ripple_kube_client_t *c = lab_client();
  char ns[64];
  lab_ns_new(c, "ripple-inf", ns, sizeof ns);
  wl_wait_root_ca(c, ns);
  json_t *owner = wl_cm_create(c, ns, "owner", NULL, NULL);
  json_t *w1 = wl_cm_create(c, ns, "w1", "{\"app\":\"web\",\"tier\":\"front\"}", owner);
  json_decref(wl_cm_create(c, ns, "w2", "{\"app\":\"web\",\"tier\":\"back\"}", owner));
  json_decref(wl_cm_create(c, ns, "d1", "{\"app\":\"db\"}", NULL));
  tracker_t *t = tracker_new();
  ripple_kube_informer_t *inf = start(c, ns, t, 0);
  ripple_kube_informer_t *bare = start(c, ns, NULL, 0); /* no handlers: no trees of events */
  check_indexes(inf, ns, owner, w1);
  check_indexes(bare, ns, owner, w1);
  /* A label change moves w2 in the index; the update handler gets the old object. */
  const char *patch = "{\"metadata\":{\"labels\":{\"app\":\"db\"}}}";
  json_t *w2 = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_patch(c, lab_resolve(c, "configmaps"), ns, "w2", RIPPLE_KUBE_PATCH_MERGE,
                               patch, strlen(patch), NULL, &w2, &st));
  wl_cm_delete(c, ns, "w1");
  wl_converged(c, ns, inf, WAIT_MS);
  wl_converged(c, ns, bare, WAIT_MS);
  assert_string_equal(seen_rv(t, t->updated, "w2"), lab_str(w2, "metadata.resourceVersion"));
  pthread_mutex_lock(&t->mu);
  assert_string_equal(lab_str(json_object_get(t->updated_old, "w2"), "metadata.labels.app"), "web");
  pthread_mutex_unlock(&t->mu);
  assert_string_not_equal(seen_rv(t, t->removed, "w1"), ""); /* the deletion's version */
  for (int i = 0; i < 2; i++) {
    ripple_kube_informer_t *x = i ? bare : inf;
    assert_int_equal(selected(x, ns, "app=web"), 0);
    assert_int_equal(selected(x, ns, "app=db"), 2);
    assert_int_equal(owned(x, owner), 1);
  }
  ripple_kube_informer_free(bare);
  ripple_kube_informer_free(inf);
  tracker_free(t);
  json_decref(owner), json_decref(w1), json_decref(w2);
  lab_ns_delete(c, ns);
  ripple_kube_client_free(c);
}

/* ---- faults ------------------------------------------------------------------------------ */

/* Hold the informer's thread in a handler, so that what follows happens
 * while it cannot see. */
static void gate_close(ripple_kube_client_t *c, const char *ns, tracker_t *t) {
  pthread_mutex_lock(&t->mu);
  t->gate_armed = 1, t->gate_open = 0, t->gated = 0;
  pthread_mutex_unlock(&t->mu);
  json_decref(wl_cm_create(c, ns, "gate", NULL, NULL));
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += 60;
  pthread_mutex_lock(&t->mu);
  while (!t->gated && pthread_cond_timedwait(&t->cv, &t->mu, &ts) != ETIMEDOUT) {
  }
  int gated = t->gated;
  pthread_mutex_unlock(&t->mu);
  if (!gated) fail_msg("the informer never delivered the gate ConfigMap");
}

static void gate_open(tracker_t *t) {
  pthread_mutex_lock(&t->mu);
  t->gate_open = 1;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
}

typedef struct outage {
  json_t *created, *changed; /* stored objects */
} outage_t;

/* Changes the informer cannot see: create n1, n2, change k1, delete k2 and
 * k3 (part 1: n1 and k2; part 2: the rest). */
static void change_meanwhile(ripple_kube_client_t *c, const char *ns, outage_t *o, int part) {
  if (part != 2) {
    o->created = json_pack("[o]", wl_cm_create(c, ns, "n1", NULL, NULL));
    wl_cm_delete(c, ns, "k2");
  }
  if (part != 1) {
    json_array_append_new(o->created, wl_cm_create(c, ns, "n2", "{\"app\":\"new\"}", NULL));
    o->changed = wl_cm_set(c, ns, "k1", "changed-in-outage");
    wl_cm_delete(c, ns, "k3");
  }
}

/* Wait until the informer's counters say what a fault must have caused. */
static void wait_stats(ripple_kube_informer_t *inf, uint64_t reconnects, uint64_t relists,
                       ripple_kube_watch_stats_t *s) {
  for (int waited = 0;; waited += 100) {
    ripple_kube_informer_stats(inf, s);
    if (s->reconnects >= reconnects && s->relists >= relists) return;
    if (waited >= WAIT_MS)
      fail_msg("after the fault: %llu reconnects, %llu relists; want %llu and %llu",
               (unsigned long long)s->reconnects, (unsigned long long)s->relists,
               (unsigned long long)reconnects, (unsigned long long)relists);
    wl_sleep_ms(100);
  }
}

/* Every change of the outage reached the handlers, with the right states. */
static void check_outage_seen(tracker_t *t, const outage_t *o, const char *k1_before) {
  size_t i;
  json_t *x;
  json_array_foreach(o->created, i, x) {
    assert_string_equal(seen_rv(t, t->added, lab_str(x, "metadata.name")),
                        lab_str(x, "metadata.resourceVersion"));
  }
  assert_string_equal(seen_rv(t, t->updated, "k1"),
                      lab_str(o->changed, "metadata.resourceVersion"));
  assert_string_equal(seen_rv(t, t->updated_old, "k1"), k1_before);
  assert_string_not_equal(seen_rv(t, t->removed, "k2"), "");
  assert_string_not_equal(seen_rv(t, t->removed, "k3"), "");
}

static void fault(int compact) {
  ripple_kube_client_t *c = lab_client();
  char ns[64];
  lab_ns_new(c, "ripple-inf", ns, sizeof ns);
  json_t *k1 = wl_cm_create(c, ns, "k1", NULL, NULL);
  json_decref(wl_cm_create(c, ns, "k2", NULL, NULL));
  json_decref(wl_cm_create(c, ns, "k3", NULL, NULL));
  tracker_t *t = tracker_new();
  ripple_kube_informer_t *inf = start(c, ns, t, 0);
  gate_close(c, ns, t);
  outage_t o = {0};
  if (compact) {
    /* Everything after the old connection died; then etcd forgets it all:
     * only a relist can find these changes. */
    wl_lab("restart", "kube-apiserver");
    change_meanwhile(c, ns, &o, 0);
    wl_lab("compact", NULL);
  } else {
    /* Some changes while the old connection lives (the server sends them
     * into it before it dies), some after the restart. */
    change_meanwhile(c, ns, &o, 1);
    wl_lab("restart", "kube-apiserver");
    change_meanwhile(c, ns, &o, 2);
  }
  gate_open(t);
  ripple_kube_watch_stats_t s;
  wait_stats(inf, 1, compact ? 1 : 0, &s);
  wl_converged(c, ns, inf, WAIT_MS);
  check_outage_seen(t, &o, lab_str(k1, "metadata.resourceVersion"));
  print_stats(compact ? "compaction" : "restart", inf, &s);
  if (compact) assert_true(s.gone >= 1);
  /* Live again: a change after the fault arrives as a plain event. */
  json_t *after = wl_cm_create(c, ns, "after", NULL, NULL);
  wl_converged(c, ns, inf, WAIT_MS);
  assert_string_equal(seen_rv(t, t->added, "after"), lab_str(after, "metadata.resourceVersion"));
  ripple_kube_informer_free(inf);
  tracker_free(t);
  json_decref(k1), json_decref(after), json_decref(o.created), json_decref(o.changed);
  lab_ns_delete(c, ns);
  ripple_kube_client_free(c);
}

static void apiserver_restart(void **state) {
  (void)state;
  fault(0);
}

static void compaction_forces_relist(void **state) {
  (void)state;
  fault(1);
}

/* ---- connections cut every second, readers on another thread ------------------------ */

typedef struct reader {
  ripple_kube_informer_t *inf;
  const char *ns;
  atomic_int stop, failed;
  size_t reads;
} reader_t;

static void *read_loop(void *arg) {
  reader_t *r = arg;
  while (!atomic_load(&r->stop)) {
    /* No cmocka assertions off the main thread: failures are counted. */
    size_t n = 0;
    int rc = ripple_kube_informer_get_text(r->inf, r->ns, "cm-1", count_text, &n);
    if (rc != RIPPLE_OK && rc != RIPPLE_ENOENT) atomic_fetch_add(&r->failed, 1);
    if (ripple_kube_informer_select_text(r->inf, r->ns, "app=churn", count_text, &n) != RIPPLE_OK)
      atomic_fetch_add(&r->failed, 1);
    if (ripple_kube_informer_each(r->inf, count, &n) != RIPPLE_OK) atomic_fetch_add(&r->failed, 1);
    r->reads += 3;
  }
  return NULL;
}

static void timeouts_and_readers(void **state) {
  (void)state;
  ripple_kube_client_t *c = lab_client();
  char ns[64], name[32], val[16];
  lab_ns_new(c, "ripple-inf", ns, sizeof ns);
  ripple_kube_informer_t *inf = start(c, ns, NULL, 1);
  reader_t r = {inf, ns, 0, 0, 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, read_loop, &r), 0);
  for (int i = 0; i < 40; i++) {
    snprintf(name, sizeof name, "cm-%d", i % 6);
    snprintf(val, sizeof val, "%d", i);
    if (i < 6)
      json_decref(wl_cm_create(c, ns, name, "{\"app\":\"churn\"}", NULL));
    else if (i % 5 == 0)
      wl_cm_delete(c, ns, name), json_decref(wl_cm_create(c, ns, name, NULL, NULL));
    else
      json_decref(wl_cm_set(c, ns, name, val));
    wl_sleep_ms(150);
  }
  wl_converged(c, ns, inf, WAIT_MS);
  atomic_store(&r.stop, 1);
  pthread_join(th, NULL);
  ripple_kube_watch_stats_t s;
  print_stats("1 s timeouts", inf, &s);
  assert_true(s.reconnects >= 3);
  assert_int_equal(s.bad_events, 0);
  assert_true(r.reads > 0);
  assert_int_equal(atomic_load(&r.failed), 0);
  ripple_kube_informer_free(inf);
  lab_ns_delete(c, ns);
  ripple_kube_client_free(c);
}

int main(void) {
  wl_lock();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cache_indexes_callbacks),
      cmocka_unit_test(timeouts_and_readers),
      cmocka_unit_test(apiserver_restart),
      cmocka_unit_test(compaction_forces_relist),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
