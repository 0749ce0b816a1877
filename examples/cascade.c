/*
 * cascade.c - libripple by example: a small cascade, traced.
 *
 * An operator creates a Deployment (3 replicas) and a Service, then scales the
 * Deployment to 5. We play the controllers by hand, the way an instrumented
 * controller uses libripple: read contexts from the objects it observed,
 * merge them before writing, open spans for its work. Every mergelog and span
 * is printed as it is emitted; at the end the merge graph answers the
 * operator's question "what did my scale cause?".
 *
 * With a trace server (ripple server) URL as the first argument, records are
 * also shipped there; without one, this runs entirely offline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"

#define MAXML 64

static struct {
  ripple_cpid_t cpid, src[8];
  size_t nsrc;
  char who[40], what[64];
} mls[MAXML];
static size_t nml;
static ripple_shipper_t *shipper;
static int64_t t0;

static const char *short_id(const ripple_cpid_t *id, char *buf) {
  ripple_cpid_format(id, buf);
  buf[8] = '\0';
  return buf;
}

static void on_mergelog(void *ud, const ripple_mergelog_t *ml) {
  (void)ud;
  char a[RIPPLE_CPID_STRLEN + 1], b[RIPPLE_CPID_STRLEN + 1];
  const ripple_objref_t *o = ml->object;
  if (nml < MAXML) {
    mls[nml].cpid = ml->cpid;
    mls[nml].nsrc = ml->nsources < 8 ? ml->nsources : 8;
    memcpy(mls[nml].src, ml->sources, mls[nml].nsrc * sizeof(ripple_cpid_t));
    snprintf(mls[nml].who, sizeof mls[nml].who, "%s", ml->component ? ml->component : "?");
    snprintf(mls[nml].what, sizeof mls[nml].what, "%s/%s", o && o->kind ? o->kind : "?",
             o && o->name ? o->name : "?");
    nml++;
  }
  printf("  mergelog  %-22s %s", ml->component, short_id(&ml->cpid, a));
  if (ml->nsources == 0) printf(" (root)");
  for (size_t i = 0; i < ml->nsources; i++)
    printf("%s%s", i ? ", " : " <- ", short_id(&ml->sources[i], b));
  if (o) printf("   [%s %s]", o->kind, o->name);
  printf("\n");
  if (shipper) ripple_shipper_enqueue_mergelog(shipper, ml);
}

static void on_span(void *ud, const ripple_span_rec_t *sp) {
  (void)ud;
  char a[RIPPLE_CPID_STRLEN + 1];
  printf("  span      %-22s %s  %-28s +%.3f ms%s\n", sp->service, short_id(&sp->cpid, a), sp->name,
         (double)(sp->end_ns - t0) / 1e6, sp->parent_id ? "  (child)" : "");
  if (shipper) ripple_shipper_enqueue_span(shipper, sp);
}

static ripple_tracer_t *component(const char *name) {
  ripple_tracer_opts_t o = {.component = name};
  o.sink.mergelog = on_mergelog;
  o.sink.span = on_span;
  ripple_tracer_t *t = NULL;
  if (ripple_tracer_new(&o, &t) != RIPPLE_OK) {
    fprintf(stderr, "cascade: cannot create tracer %s\n", name);
    exit(1);
  }
  return t;
}

/* One controller step: merge sources into target; the span of the work
 * carries the CPID of the change the write belongs to. */
static void write_obj(ripple_tracer_t *t, const char *span, ripple_ctx_t *target,
                      const ripple_ctx_t *const *src, size_t n, const char *kind,
                      const char *name) {
  int64_t start = ripple_now_ns();
  ripple_objref_t ref = {NULL, kind, "default", name, NULL};
  ripple_merge_kind_t how;
  ripple_ctx_t out;
  if (ripple_merge(t, target, src, n, &ref, &out, &how) == RIPPLE_OK) *target = out;
  ripple_log_set_ctx(target);
  ripple_log(RIPPLE_LOG_INFO, "write", "object=%s/%s decision=%s", kind, name,
             ripple_merge_kind_name(how));
  ripple_log_set_ctx(NULL);
  ripple_span_t *s;
  if (ripple_span_start(t, target, span, &s) != RIPPLE_OK) return;
  ripple_span_set_start(s, start);
  ripple_span_set_attr(s, "object", name);
  ripple_span_end(s);
}

/* Log lines go to stdout here, in order with the rest of the story. */
static void log_line(void *ud, ripple_log_level_t level, const char *line) {
  (void)ud;
  (void)level;
  const char *ev = strstr(line, "event=");
  printf("  log       %s\n", ev ? ev : line);
}

static int reaches(const ripple_cpid_t *from, const ripple_cpid_t *to) {
  if (ripple_cpid_equal(from, to)) return 1;
  for (size_t i = 0; i < nml; i++)
    for (size_t k = 0; k < mls[i].nsrc; k++)
      if (ripple_cpid_equal(&mls[i].src[k], from) && reaches(&mls[i].cpid, to)) return 1;
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  ripple_log_setup("cascade", RIPPLE_LOG_INFO, log_line, NULL);
  if (argc > 1) {
    ripple_shipper_opts_t so = {.url = argv[1]};
    if (ripple_shipper_new(&so, &shipper) != RIPPLE_OK) {
      fprintf(stderr, "cascade: bad trace server URL '%s'\n", argv[1]);
      return 2;
    }
  }
  t0 = ripple_now_ns();
  ripple_tracer_t *kubectl = component("kubectl"), *deploy = component("deployment-controller"),
                  *rsc = component("replicaset-controller"), *sched = component("scheduler"),
                  *epc = component("endpoints-controller");
  ripple_ctx_t d, rs, pods[5], svc, ep, root;
  const ripple_ctx_t *src[8];
  memset(&rs, 0, sizeof rs); /* absent: not created yet */
  memset(pods, 0, sizeof pods);
  memset(&ep, 0, sizeof ep);

  printf("ripple cascade demo: libripple %d.%d.%d, N=%d ancestors\n\n", RIPPLE_VERSION_MAJOR,
         RIPPLE_VERSION_MINOR, RIPPLE_VERSION_PATCH, RIPPLE_ANC_DEFAULT);
  printf("1. kubectl creates Deployment web (3 replicas) and Service web\n");
  ripple_objref_t dref = {"apps/v1", "Deployment", "default", "web", NULL};
  ripple_root(kubectl, &dref, &d);
  src[0] = &d;
  write_obj(deploy, "syncDeployment", &rs, src, 1, "ReplicaSet", "web-7d9f8b6c5");
  src[0] = &rs;
  for (int i = 0; i < 3; i++)
    write_obj(rsc, "createPod", &pods[i], src, 1, "Pod", "web-7d9f8b6c5-p");
  ripple_objref_t sref = {"v1", "Service", "default", "web", NULL};
  ripple_root(kubectl, &sref, &svc);
  src[0] = &svc;
  write_obj(epc, "syncService", &ep, src, 1, "Endpoints", "web");

  printf("\n2. the Endpoints controller sees the Pods: two changes merge (paper, figure 5)\n");
  src[0] = &svc;
  for (int i = 0; i < 3; i++) src[i + 1] = &pods[i];
  write_obj(epc, "syncService", &ep, src, 4, "Endpoints", "web");

  printf("\n3. kubectl scales web to 5: a root, merged with the Deployment's context\n");
  ripple_root(kubectl, &dref, &root);
  ripple_ctx_t scale_root = root;
  src[0] = &root;
  write_obj(kubectl, "scale", &d, src, 1, "Deployment", "web");
  src[0] = &d;
  write_obj(deploy, "syncDeployment", &rs, src, 1, "ReplicaSet", "web-7d9f8b6c5");
  src[0] = &rs;
  for (int i = 3; i < 5; i++)
    write_obj(rsc, "createPod", &pods[i], src, 1, "Pod", "web-7d9f8b6c5-q");
  for (int i = 3; i < 5; i++) {
    src[0] = &pods[i];
    write_obj(sched, "bindPod", &pods[i], src, 1, "Pod", "web-7d9f8b6c5-q");
  }
  for (int i = 0; i < 5; i++) src[i] = &pods[i];
  write_obj(rsc, "updateStatus", &rs, src, 5, "ReplicaSet", "web-7d9f8b6c5");
  src[0] = &svc;
  for (int i = 0; i < 5; i++) src[i + 1] = &pods[i];
  write_obj(epc, "syncService", &ep, src, 6, "Endpoints", "web");

  char a[RIPPLE_CPID_STRLEN + 1];
  ripple_cpid_format(&scale_root.cpid, a);
  printf("\n4. what did the scale (root %s) cause? CPIDs reachable from it:\n", a);
  for (size_t i = 0; i < nml; i++)
    if (reaches(&scale_root.cpid, &mls[i].cpid))
      printf("   %s  made by %-22s for %s\n", short_id(&mls[i].cpid, a), mls[i].who, mls[i].what);
  char b[RIPPLE_CPID_STRLEN + 1];
  printf("   the new Pods carry %s, the Endpoints %s\n", short_id(&pods[4].cpid, a),
         short_id(&ep.cpid, b));

  char val[RIPPLE_CTX_STRMAX + 1];
  ripple_ctx_encode(&ep, val, sizeof val, NULL);
  const char *obj =
      "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"web\"}}";
  char *patch = NULL;
  int changed;
  ripple_object_patch_ctx(obj, strlen(obj), NULL, &ep, &patch, NULL, &changed);
  printf(
      "\n5. on the Endpoints object the context is one annotation; a webhook would answer:\n   "
      "%s\n",
      patch);
  ripple_free(patch);

  ripple_tracer_stats_t st;
  ripple_tracer_stats(epc, &st);
  printf("\nendpoints-controller: %llu merges, %llu new CPIDs, %llu reused, %llu unchanged\n",
         (unsigned long long)st.merges, (unsigned long long)st.mergelogs,
         (unsigned long long)st.reused, (unsigned long long)st.unchanged);
  ripple_tracer_free(kubectl);
  ripple_tracer_free(deploy);
  ripple_tracer_free(rsc);
  ripple_tracer_free(sched);
  ripple_tracer_free(epc);
  if (shipper) ripple_shipper_free(shipper, 5000);
  return 0;
}
