/*
 * agent.c - ripple-watch's agent. Each resource has its own watch thread;
 * their events meet under one lock, where each change is checked against
 * what the output already holds (wstate: a change delivered again after a
 * restart is not written twice) and written as one record. The main thread
 * checkpoints every resource that moved (after syncing the output, so a
 * checkpoint never covers a line that is not on disk), rotates the output,
 * and logs a report of its own cost.
 */
#include "agent.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ripple/kube.h"
#include "ripple/ripple.h"
#include "wrec.h"
#include "wtrace.h"

typedef struct ares {
  struct agent *a;
  char name[256]; /* the records' "resource" */
  const char *ns, *selector;
  const ripple_kube_resource_t *r;
  wdetail_res_t det; /* what details of its changes say about the kind */
  char api_version[128];
  wstate_t st;
  char ckpt[4096];
  int dirty;
  uint64_t events, written;
  ripple_kube_watch_t *w;
} ares_t;

typedef struct agent {
  pthread_mutex_t mu;
  const agent_opts_t *o;
  wout_t out;
  ares_t res[AGENT_MAX_RES];
  int nres;
  int failed;      /* the output could not be written: stop */
  wtrace_t *trace; /* NULL without --trace-server */
} agent_t;

static void on_event(void *ud, const ripple_kube_event_t *ev) {
  ares_t *r = ud;
  char ns[256] = "";
  const char *slash = strchr(ev->key, '/'), *name = slash ? slash + 1 : ev->key;
  if (slash) snprintf(ns, sizeof ns, "%.*s", (int)(slash - ev->key), ev->key);
  const char *uid = ev->uid, *rv = ev->rv;
  char *line = NULL;
  size_t len = 0;
  int records = !r->a->o->no_records;
  int rc = records ? wrec_format(ev, r->name, &line, &len) : RIPPLE_OK, fresh = 0;
  pthread_mutex_lock(&r->a->mu);
  r->events++;
  if (rc == RIPPLE_OK && wstate_apply(&r->st, wrec_op(ev->type), ns, name, uid, rv)) {
    fresh = 1;
    if (records && wout_write(&r->a->out, line, len) != RIPPLE_OK) r->a->failed = 1;
    if (records && !r->a->out.path) fflush(r->a->out.f); /* a pipe's reader wants it now */
    r->written += records;
    r->dirty = 1;
  }
  pthread_mutex_unlock(&r->a->mu);
  if (rc != RIPPLE_OK) ripple_log(RIPPLE_LOG_ERROR, "watch_record_failed", "err=%d", rc);
  if (fresh && r->a->trace) {
    wtrace_change(r->a->trace, ev, r->name);
    if (!r->a->o->no_details) wtrace_detail(r->a->trace, ev, &r->det, &r->a->o->redact);
  }
  free(line);
}

static void on_progress(void *ud, const char *rv) {
  ares_t *r = ud;
  pthread_mutex_lock(&r->a->mu);
  if (!r->st.rv || strcmp(r->st.rv, rv) != 0) {
    char *c = strdup(rv);
    if (c) free(r->st.rv), r->st.rv = c, r->dirty = 1;
  }
  pthread_mutex_unlock(&r->a->mu);
}

/* Listed (or resumed) and watching: `ripple run` waits for this line. */
static void on_synced(void *ud) {
  ares_t *r = ud;
  ripple_log(RIPPLE_LOG_INFO, "watch_synced", "resource=%s", r->name);
}

static void on_trouble(void *ud, int err, const ripple_kube_status_t *st) {
  ares_t *r = ud;
  char msg[600];
  ripple_log_quote(st ? st->message : "", msg, sizeof msg);
  ripple_log(RIPPLE_LOG_WARN, "watch_trouble", "resource=%s err=%s message=%s", r->name,
             ripple_kube_strerror(err), msg);
}

/* Under the lock: sync the output, then save the checkpoints of resources
 * that moved (all with force). */
static void checkpoint_all(agent_t *a, int force) {
  if (!a->o->state_dir) return;
  if (wout_sync(&a->out) != RIPPLE_OK) {
    ripple_log(RIPPLE_LOG_ERROR, "watch_out_sync_failed", "errno=%d", errno);
    return; /* no checkpoint may cover lines that are not on disk */
  }
  for (int i = 0; i < a->nres; i++) {
    ares_t *r = &a->res[i];
    if (!r->dirty && !force) continue;
    r->st.out_ino = a->out.ino;
    r->st.out_off = a->out.size;
    if (wstate_save(&r->st, r->ckpt) == RIPPLE_OK)
      r->dirty = 0;
    else
      ripple_log(RIPPLE_LOG_ERROR, "watch_checkpoint_failed", "path=%s errno=%d", r->ckpt, errno);
  }
}

static void maybe_rotate(agent_t *a) {
  if (!wout_due(&a->out, ripple_now_ns())) return;
  /* Checkpoints at the old file's end first: a restart then has nothing to
   * replay from it (wstate_replay). */
  checkpoint_all(a, 1);
  char *zst = NULL;
  int rc = wout_rotate(&a->out, &zst);
  if (rc == RIPPLE_OK)
    ripple_log(RIPPLE_LOG_INFO, "watch_rotated", "file=%s", zst);
  else
    ripple_log(RIPPLE_LOG_ERROR, "watch_rotate_failed", "err=%s errno=%d", ripple_errname(rc),
               errno);
  free(zst);
  checkpoint_all(a, 1);
}

static void report(agent_t *a) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  long rss = 0; /* pages: statm's second field */
  char statm[128];
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fgets(statm, sizeof statm, f)) {
      char *end;
      strtol(statm, &end, 10);
      rss = strtol(end, NULL, 10);
    }
    fclose(f);
  }
  char ev[2048] = "";
  size_t n = 0;
  pthread_mutex_lock(&a->mu);
  for (int i = 0; i < a->nres && n < sizeof ev; i++)
    n += (size_t)snprintf(ev + n, sizeof ev - n, "%s%s:%llu", i ? "," : "", a->res[i].name,
                          (unsigned long long)a->res[i].written);
  pthread_mutex_unlock(&a->mu);
  ripple_log(RIPPLE_LOG_INFO, "watch_report",
             "cpu_user_ms=%lld cpu_sys_ms=%lld max_rss_kb=%ld rss_kb=%ld records=%s",
             (long long)ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000,
             (long long)ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000, ru.ru_maxrss,
             rss * (sysconf(_SC_PAGESIZE) / 1024), ev);
}

static int res_init(agent_t *a, ripple_kube_client_t *kc, int i) {
  const agent_res_opts_t *ro = &a->o->res[i];
  ares_t *r = &a->res[i];
  ripple_kube_status_t st;
  r->a = a;
  wstate_init(&r->st);
  int rc = ripple_kube_resolve(kc, ro->name, &r->r, &st);
  if (rc != RIPPLE_OK) {
    fprintf(stderr, "ripple-watch: %s: %s\n", ro->name, st.message);
    return rc;
  }
  snprintf(r->name, sizeof r->name, "%s%s%s", r->r->resource, *r->r->group ? "." : "", r->r->group);
  snprintf(r->api_version, sizeof r->api_version, "%s%s%s", r->r->group, *r->r->group ? "/" : "",
           r->r->version);
  r->det = (wdetail_res_t){r->r->kind, r->api_version,
                           !strcmp(r->r->resource, "events") &&
                               (!*r->r->group || !strcmp(r->r->group, "events.k8s.io"))};
  r->ns = ro->namespace_ ? ro->namespace_ : a->o->namespace_;
  r->selector = ro->selector ? ro->selector : a->o->selector;
  if (!r->r->namespaced) r->ns = NULL;
  if (!a->o->state_dir) return RIPPLE_OK;
  char path[sizeof r->ckpt]; /* r->name and r->ckpt share an object: no snprintf between */
  snprintf(path, sizeof path, "%s/%s%s%s.ckpt", a->o->state_dir, r->name,
           r->ns && *r->ns ? "@" : "", r->ns && *r->ns ? r->ns : "");
  memcpy(r->ckpt, path, sizeof path);
  rc = wstate_load(&r->st, r->ckpt);
  if (rc == RIPPLE_ENOENT) return RIPPLE_OK;
  if (rc != RIPPLE_OK) {
    fprintf(stderr, "ripple-watch: checkpoint %s is unreadable; move it away to start over\n",
            r->ckpt);
    return rc;
  }
  if (a->o->out && strcmp(a->o->out, "-") != 0)
    rc = wstate_replay(&r->st, a->o->out, r->name, r->ns);
  ripple_log(RIPPLE_LOG_INFO, "watch_resumed", "resource=%s rv=%s known=%zu", r->name,
             r->st.rv ? r->st.rv : "", json_object_size(r->st.known));
  return rc;
}

static int res_start(agent_t *a, ripple_kube_client_t *kc, ares_t *r) {
  ripple_kube_watch_opts_t wo = {0};
  wo.list.namespace_ = r->ns;
  wo.list.label_selector = r->selector;
  wo.timeout_s = a->o->watch_timeout_s;
  wo.strip_managed_fields = !a->o->keep_managed_fields;
  wo.text_only = 1; /* records and spans are made from the text: no trees */
  json_t *known = NULL;
  if (r->st.rv) {
    wo.resource_version = r->st.rv;
    wo.known = known = wstate_known_objects(&r->st);
  }
  ripple_kube_watch_handlers_t h = {.event = on_event,
                                    .synced = on_synced,
                                    .progress = on_progress,
                                    .trouble = on_trouble,
                                    .ud = r};
  int rc = ripple_kube_watch_start(kc, r->r, &wo, &h, &r->w);
  json_decref(known); /* the watch copies what it keeps */
  return rc;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void main_loop(agent_t *a, volatile sig_atomic_t *stop) {
  int64_t next_ckpt = ripple_now_ns() + a->o->checkpoint_ns;
  int64_t next_report = ripple_now_ns() + a->o->report_ns;
  while (!*stop && !a->failed) {
    sleep_ms(100);
    int64_t now = ripple_now_ns();
    if (now >= next_ckpt) {
      pthread_mutex_lock(&a->mu);
      checkpoint_all(a, 0);
      maybe_rotate(a);
      pthread_mutex_unlock(&a->mu);
      next_ckpt = now + a->o->checkpoint_ns;
    }
    if (a->o->report_ns > 0 && now >= next_report) {
      report(a);
      next_report = now + a->o->report_ns;
    }
  }
}

int agent_run(const agent_opts_t *o, volatile sig_atomic_t *stop) {
  static agent_t a; /* large (checkpoint paths); one per process */
  memset(&a, 0, sizeof a);
  pthread_mutex_init(&a.mu, NULL);
  a.o = o;
  a.nres = o->nres;
  if (o->state_dir && mkdir(o->state_dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "ripple-watch: --state-dir %s: %s\n", o->state_dir, strerror(errno));
    return 1;
  }
  if (!o->no_records && wout_open(&a.out, o->out, o->rotate_size, o->rotate_ns) != RIPPLE_OK) {
    fprintf(stderr, "ripple-watch: --out %s: %s\n", o->out, strerror(errno));
    return 1;
  }
  ripple_kube_config_t *cfg = NULL;
  ripple_kube_client_t *kc = NULL;
  char err[512];
  ripple_kube_config_opts_t co = {.kubeconfig = o->kubeconfig, .context = o->context};
  int rc = ripple_kube_config_load(&co, &cfg, err, sizeof err);
  if (rc != RIPPLE_OK) fprintf(stderr, "ripple-watch: %s\n", err);
  if (rc == RIPPLE_OK) rc = ripple_kube_client_new(cfg, NULL, &kc);
  ripple_kube_config_free(cfg);
  if (rc == RIPPLE_OK && o->trace_server &&
      (rc = wtrace_new(o->trace_server, o->trace_token, o->trace_ca, &a.trace)) != RIPPLE_OK)
    fprintf(stderr, "ripple-watch: --trace-server %s: %s\n", o->trace_server, ripple_strerror(rc));
  for (int i = 0; rc == RIPPLE_OK && i < a.nres; i++) rc = res_init(&a, kc, i);
  for (int i = 0; rc == RIPPLE_OK && i < a.nres; i++) rc = res_start(&a, kc, &a.res[i]);
  if (rc == RIPPLE_OK) {
    ripple_log(RIPPLE_LOG_INFO, "watch_started", "resources=%d", a.nres);
    main_loop(&a, stop);
  }
  for (int i = 0; i < a.nres; i++) ripple_kube_watch_free(a.res[i].w); /* no callbacks after */
  if (rc == RIPPLE_OK && !a.failed) {
    checkpoint_all(&a, 0);
    report(&a);
    ripple_log(RIPPLE_LOG_INFO, "watch_stopped", "resources=%d", a.nres);
  }
  wout_close(&a.out);
  wtrace_free(a.trace, 5000);
  for (int i = 0; i < a.nres; i++) wstate_clear(&a.res[i].st);
  ripple_kube_client_free(kc);
  pthread_mutex_destroy(&a.mu);
  return rc == RIPPLE_OK && !a.failed ? 0 : 1;
}
