/*
 * watch.c - a watch that loses nothing: list, then watch from the list's
 * resourceVersion, resume after every disconnection from the last version
 * seen, and relist when the server says that version is gone.
 *
 * One thread per watch runs this loop. The server ends every watch after
 * timeoutSeconds (a clean close: resume at once), connections drop when the
 * API server restarts (resume with jittered exponential backoff, so a fleet
 * of watchers does not stampede a recovering server), and a resume from a
 * version the server no longer has (compacted in etcd, or older than a fresh
 * API server's watch cache) answers 410, in the HTTP status or, from the
 * watch cache, as an ERROR event in a 200 stream. Then only a list can say
 * what the world looks like; the store (watch_store.c) turns the difference
 * between the old state and the list into events, so a consumer that applies
 * events ends with exactly the server's state.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ripplex/clock.h"
#include "ripplex/logonce.h"
#include "ripplex/rnd.h"
#include "ripplex/sbuf.h"
#include "watch_internal.h"

#define BACKOFF_BASE_MS 250u
#define TIMEOUT_GRACE_S 30u /* beyond timeoutSeconds, the connection is dead */

enum { CONN_OPEN, CONN_GONE, CONN_ERROR };
enum { W_CLOSED, W_GONE, W_FAILED, W_STOP };

struct ripple_kube_watch {
  ripple_kube_client_t *c;
  ripple_kube_resource_t r; /* strings owned below */
  char *group, *version, *resource, *kind;
  char *ns, *lsel, *fsel;
  uint32_t page_size, timeout_s, backoff_max_ms;
  int strip;
  int text_only; /* events without trees */
  ripple_kube_watch_handlers_t h;
  wstore_emit_fn change; /* an informer's, instead of h.event */
  wstore_t store;
  char *rv;
  int listed; /* the state is established: the first list is done, or a checkpoint */
  int need_list;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv; /* wakes a backoff sleep when stopping */
  atomic_int stop;
  _Atomic uint64_t n_events, n_bookmarks, n_relists, n_reconnects, n_gone, n_bad, n_dropped;
  /* The connection in progress. */
  wdec_t dec;
  int conn;
  uint64_t conn_frames;
  ripple_kube_status_t conn_st; /* of an ERROR event */
};

static int stopped(ripple_kube_watch_t *w) { return atomic_load(&w->stop); }

static void set_rv(ripple_kube_watch_t *w, const char *rv) {
  if (!rv || (w->rv && strcmp(w->rv, rv) == 0)) return;
  char *d = strdup(rv);
  if (!d) return; /* keep the older version: resuming from it is still correct */
  free(w->rv);
  w->rv = d;
  if (w->h.progress) w->h.progress(w->h.ud, w->rv);
}

static void trouble(ripple_kube_watch_t *w, int err, const ripple_kube_status_t *st) {
  char msg[600];
  ripple_log_quote(st && *st->message ? st->message : ripple_kube_strerror(err), msg, sizeof msg);
  ripple_log(RIPPLE_LOG_WARN, "kube_watch_retry", "resource=%s http=%ld err=%d msg=%s",
             w->r.resource, st ? st->http : 0L, err, msg);
  if (w->h.trouble) w->h.trouble(w->h.ud, err, st);
}

/* A change for the consumer: to an informer as records, to a watch's
 * handler as trees (built here unless the decoder built one already). */
static void emit(void *ud, const wchange_t *ch) {
  ripple_kube_watch_t *w = ud;
  atomic_fetch_add(&w->n_events, 1);
  if (w->change) {
    w->change(w->h.ud, ch);
    return;
  }
  if (!w->h.event) return;
  json_t *obj = NULL, *old = NULL;
  if (!w->text_only) {
    obj = ch->obj ? json_incref(ch->obj) : krec_tree(ch->rec);
    old = !ch->old ? NULL : ch->old == ch->rec ? json_incref(obj) : krec_tree(ch->old);
  }
  if (w->text_only || (obj && (old || !ch->old))) {
    ripple_kube_event_t ev = {.type = ch->type,
                              .obj = obj,
                              .old = old,
                              .time_ns = ch->time_ns,
                              .relist = ch->relist,
                              .obj_text = ch->rec->json,
                              .old_text = ch->old ? ch->old->json : NULL,
                              .obj_len = ch->rec->len,
                              .old_len = ch->old ? ch->old->len : 0,
                              .key = ch->rec->key,
                              .uid = ch->rec->uid,
                              .rv = ch->rec->rv};
    w->h.event(w->h.ud, &ev);
  } else {
    atomic_fetch_add(&w->n_dropped, 1); /* out of memory */
  }
  json_decref(obj);
  json_decref(old);
}

/* Sleep before the next attempt: equal jitter over an exponential delay,
 * capped. Returns early when the watch stops. */
static void backoff(ripple_kube_watch_t *w, unsigned *attempt) {
  uint64_t d = (uint64_t)BACKOFF_BASE_MS << (*attempt < 16 ? *attempt : 16);
  if (d > w->backoff_max_ms) d = w->backoff_max_ms;
  if (*attempt < 32) (*attempt)++;
  uint32_t r = 0;
  rnd_bytes(&r, sizeof r);
  d = d / 2 + r % (d / 2 + 1);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_sec += (time_t)(d / 1000);
  ts.tv_nsec += (long)(d % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
  pthread_mutex_lock(&w->mu);
  while (!stopped(w) && pthread_cond_timedwait(&w->cv, &w->mu, &ts) == 0) {
  }
  pthread_mutex_unlock(&w->mu);
}

/* ---- list ---------------------------------------------------------------------- */

typedef struct listing {
  ripple_kube_watch_t *w;
  wstore_t *fresh;
} listing_t;

static void on_item(void *ud, json_t *obj) {
  listing_t *l = ud;
  if (!obj) { /* the list restarted (an expired continue token) */
    wstore_clear(l->fresh);
    return;
  }
  krec_t *r;
  if (krec_from_tree(obj, l->w->strip, &r) != RIPPLE_OK) return;
  wstore_put(l->fresh, r);
  krec_unref(r);
}

static int relist(ripple_kube_watch_t *w) {
  wstore_t fresh;
  wstore_init(&fresh);
  ripple_kube_list_opts_t lo = {w->ns, w->lsel, w->fsel, w->page_size};
  listing_t l = {w, &fresh};
  char *rv = NULL;
  ripple_kube_status_t st;
  memset(&st, 0, sizeof st);
  int rc = ripple_kube_list(w->c, &w->r, &lo, on_item, &l, &rv, &st);
  if (rc == RIPPLE_OK) rc = wstore_replace(&w->store, &fresh, w->listed, ripple_now_ns(), emit, w);
  wstore_free(&fresh);
  if (rc != RIPPLE_OK) {
    ripple_free(rv);
    trouble(w, rc, &st);
    return rc;
  }
  set_rv(w, rv);
  ripple_free(rv);
  w->need_list = 0;
  if (w->listed) {
    atomic_fetch_add(&w->n_relists, 1);
  } else {
    w->listed = 1;
    if (w->h.synced) w->h.synced(w->h.ud);
  }
  return RIPPLE_OK;
}

/* ---- one watch request ------------------------------------------------------------ */

static int on_event(void *ud, const wev_t *ev) {
  ripple_kube_watch_t *w = ud;
  w->conn_frames++;
  switch (ev->type) {
    case WEV_BOOKMARK:
      atomic_fetch_add(&w->n_bookmarks, 1);
      set_rv(w, ev->rv);
      break;
    case WEV_ERROR: {
      ripple_kube_status_t *st = &w->conn_st;
      st->http = ev->code;
      snprintf(st->reason, sizeof st->reason, "%s", ev->reason);
      snprintf(st->message, sizeof st->message, "%s", ev->message);
      w->conn = ev->code == 410 ? CONN_GONE : CONN_ERROR;
      return 1; /* the server ends the stream after an ERROR anyway */
    }
    default: {
      krec_t *rec;
      if (krec_make(ev->text, ev->text_len, ev->cut, ev->cut_len, ev->obj, &rec) == RIPPLE_OK) {
        wstore_apply(&w->store, ev->type, rec, w->dec.flags & WDEC_TREE ? ev->obj : NULL,
                     ripple_now_ns(), emit, w);
        krec_unref(rec);
      } else {
        atomic_fetch_add(&w->n_dropped, 1); /* a key too long, or out of memory */
      }
      set_rv(w, ev->rv);
      break;
    }
  }
  return stopped(w);
}

/* A bad frame is skipped and counted; the first one is logged, once per
 * process, so a broken server or proxy cannot flood the log. */
static void note_bad(ripple_kube_watch_t *w) {
  if (w->dec.bad == atomic_load(&w->n_bad)) return;
  atomic_store(&w->n_bad, w->dec.bad);
  char why[128];
  ripple_log_quote(w->dec.why, why, sizeof why);
  RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "kube_watch_bad_event", "resource=%s why=%s", w->r.resource,
                  why);
}

static int on_data(void *ud, const char *p, size_t n) {
  ripple_kube_watch_t *w = ud;
  int rc = wdec_feed(&w->dec, p, n);
  note_bad(w);
  return rc || stopped(w);
}

static int on_cancelled(void *ud) { return stopped((ripple_kube_watch_t *)ud); }

static void watch_path(ripple_kube_watch_t *w, sbuf_t *b) {
  kube_path(b, &w->r, w->ns, NULL, NULL);
  sbuf_printf(b,
              "?watch=1&allowWatchBookmarks=true&timeoutSeconds=%u&resourceVersion=", w->timeout_s);
  kube_escape(b, w->rv ? w->rv : "");
  if (w->lsel && *w->lsel) {
    sbuf_puts(b, "&labelSelector=");
    kube_escape(b, w->lsel);
  }
  if (w->fsel && *w->fsel) {
    sbuf_puts(b, "&fieldSelector=");
    kube_escape(b, w->fsel);
  }
}

/* An ERROR event's code as an error (410 Expired is handled before). */
static int status_err(long code) {
  int err = kube_check(code, NULL, 0, NULL);
  return err == RIPPLE_OK ? RIPPLE_KUBE_EHTTP : err;
}

static int watch_once(ripple_kube_watch_t *w) {
  sbuf_t path;
  sbuf_init(&path);
  watch_path(w, &path);
  if (path.oom) {
    sbuf_free(&path);
    return trouble(w, RIPPLE_ENOMEM, NULL), W_FAILED;
  }
  wdec_reset(&w->dec);
  w->conn = CONN_OPEN;
  w->conn_frames = 0;
  memset(&w->conn_st, 0, sizeof w->conn_st);
  kube_stream_t s = {on_data, on_cancelled, w};
  kube_req_t rq = {"GET", path.p, NULL, NULL, 0, (w->timeout_s + TIMEOUT_GRACE_S) * 1000u, &s};
  long status = 0;
  ripple_kube_status_t st;
  int rc = kube_do(w->c, &rq, &status, NULL, &st);
  sbuf_free(&path);
  /* A refused request's Status body has no newline at its end. */
  if (rc == RIPPLE_OK && w->conn == CONN_OPEN) wdec_end(&w->dec);
  note_bad(w);
  if (stopped(w)) return W_STOP;
  if (w->conn == CONN_GONE || status == 410) return W_GONE;
  if (w->conn == CONN_ERROR) {
    trouble(w, status_err(w->conn_st.http), &w->conn_st);
    return W_FAILED;
  }
  if (rc != RIPPLE_OK) return trouble(w, rc, &st), W_FAILED;
  if (status != 200) {
    rc = kube_check(status, NULL, 0, &st);
    return trouble(w, rc, &st), W_FAILED;
  }
  return W_CLOSED;
}

/* ---- the thread -------------------------------------------------------------------- */

static void *run(void *arg) {
  ripple_kube_watch_t *w = arg;
  unsigned attempt = 0;
  int watched = 0, gone_in_row = 0;
  if (w->listed && w->h.synced) w->h.synced(w->h.ud); /* from a checkpoint */
  while (!stopped(w)) {
    if (w->need_list) {
      if (relist(w) != RIPPLE_OK) {
        backoff(w, &attempt);
        continue;
      }
      attempt = 0;
    }
    if (watched++) atomic_fetch_add(&w->n_reconnects, 1);
    int64_t t0 = mono_ns();
    int res = watch_once(w);
    if (res == W_STOP) break;
    if (res == W_GONE) {
      atomic_fetch_add(&w->n_gone, 1);
      char rv[96];
      ripple_log_quote(w->rv ? w->rv : "", rv, sizeof rv);
      ripple_log(RIPPLE_LOG_INFO, "kube_watch_gone", "resource=%s rv=%s", w->r.resource, rv);
      w->need_list = 1;
      /* Gone again at once after a relist: the server is confused, do not spin. */
      if (gone_in_row++) backoff(w, &attempt);
      continue;
    }
    gone_in_row = 0;
    if (res == W_CLOSED && (w->conn_frames || mono_ns() - t0 >= 1000000000))
      attempt = 0; /* a normal end (timeoutSeconds): resume at once */
    else
      backoff(w, &attempt); /* failed, or closed at once: do not spin */
  }
  return NULL;
}

/* ---- public ------------------------------------------------------------------------- */

static char *dup_opt(const char *s, int *oom) {
  if (!s) return NULL;
  char *d = strdup(s);
  if (!d) *oom = 1;
  return d;
}

static void watch_destroy(ripple_kube_watch_t *w) {
  wstore_free(&w->store);
  wdec_free(&w->dec);
  free(w->group), free(w->version), free(w->resource), free(w->kind);
  free(w->ns), free(w->lsel), free(w->fsel), free(w->rv);
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
  free(w);
}

static int watch_init(ripple_kube_watch_t *w, const ripple_kube_resource_t *r,
                      const ripple_kube_watch_opts_t *o) {
  int oom = 0;
  w->group = dup_opt(r->group ? r->group : "", &oom);
  w->version = dup_opt(r->version, &oom);
  w->resource = dup_opt(r->resource, &oom);
  w->kind = dup_opt(r->kind ? r->kind : "", &oom);
  w->r = (ripple_kube_resource_t){w->group, w->version, w->resource, w->kind, r->namespaced};
  w->ns = dup_opt(o->list.namespace_, &oom);
  w->lsel = dup_opt(o->list.label_selector, &oom);
  w->fsel = dup_opt(o->list.field_selector, &oom);
  w->page_size = o->list.page_size;
  w->timeout_s = o->timeout_s ? o->timeout_s : 300;
  if (w->timeout_s > 86400) w->timeout_s = 86400;
  w->backoff_max_ms = o->backoff_max_ms ? o->backoff_max_ms : 30000;
  if (w->backoff_max_ms < BACKOFF_BASE_MS) w->backoff_max_ms = BACKOFF_BASE_MS;
  w->strip = o->strip_managed_fields;
  w->text_only = o->text_only;
  wstore_init(&w->store);
  int rc = RIPPLE_OK;
  if (o->resource_version && *o->resource_version) {
    w->rv = dup_opt(o->resource_version, &oom);
    if (o->known) rc = wstore_load(&w->store, o->known, w->strip);
    w->listed = 1;
  } else {
    w->need_list = 1;
  }
  if (rc == RIPPLE_OK && (oom || !w->version || !w->resource)) rc = RIPPLE_ENOMEM;
  return rc;
}

int kube_watch_start(ripple_kube_client_t *c, const ripple_kube_resource_t *r,
                     const ripple_kube_watch_opts_t *o, const ripple_kube_watch_handlers_t *h,
                     wstore_emit_fn change, int trees, ripple_kube_watch_t **out) {
  if (!c || !r || !r->version || !r->resource || !out) return RIPPLE_EINVAL;
  ripple_kube_watch_opts_t none;
  memset(&none, 0, sizeof none);
  if (!o) o = &none;
  ripple_kube_watch_t *w = calloc(1, sizeof *w);
  if (!w) return RIPPLE_ENOMEM;
  w->c = c;
  if (h) w->h = *h;
  w->change = change;
  pthread_mutex_init(&w->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&w->cv, &ca);
  pthread_condattr_destroy(&ca);
  wdec_init(&w->dec, 0,
            (o->strip_managed_fields ? WDEC_STRIP : 0) | (trees && !o->text_only ? WDEC_TREE : 0),
            on_event, w);
  int rc = watch_init(w, r, o);
  if (rc == RIPPLE_OK && pthread_create(&w->thread, NULL, run, w) != 0) rc = RIPPLE_ESYS;
  if (rc != RIPPLE_OK) {
    watch_destroy(w);
    return rc;
  }
  *out = w;
  return RIPPLE_OK;
}

int ripple_kube_watch_start(ripple_kube_client_t *c, const ripple_kube_resource_t *r,
                            const ripple_kube_watch_opts_t *o,
                            const ripple_kube_watch_handlers_t *h, ripple_kube_watch_t **out) {
  return kube_watch_start(c, r, o, h, NULL, 1, out);
}

void ripple_kube_watch_free(ripple_kube_watch_t *w) {
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  atomic_store(&w->stop, 1);
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  watch_destroy(w);
}

void ripple_kube_watch_stats(ripple_kube_watch_t *w, ripple_kube_watch_stats_t *out) {
  if (!w || !out) return;
  out->events = atomic_load(&w->n_events);
  out->bookmarks = atomic_load(&w->n_bookmarks);
  out->relists = atomic_load(&w->n_relists);
  out->reconnects = atomic_load(&w->n_reconnects);
  out->gone = atomic_load(&w->n_gone);
  out->bad_events = atomic_load(&w->n_bad) + atomic_load(&w->n_dropped);
}
