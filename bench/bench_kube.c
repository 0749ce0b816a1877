/*
 * bench_kube.c - the watch and informer hot path without a cluster, against
 * the targets of issue 5:
 *   watch-event decoding of realistic Pod updates (framing, decoding, the
 *   watch's last-known state, the informer's cache and indexes), one core:
 *                                                     >= 50,000 events/s
 *   informer memory per cached Pod, compared with the Pod's JSON size.
 * Also measured: the same path for an informer with an update handler, which
 * needs jansson trees of the new and the old object for every event, and
 * jansson's own parser for comparison.
 * The Pod is a KWOK Pod of the lab as the API server sends it (managedFields
 * of kube-controller-manager and of kwok's status updates), with a fuller
 * container (ports, env, probe, resources): 5.5 KiB per event. The stream
 * holds MODIFIED events of 1,000 Pods, each with a new resourceVersion and
 * Pod IP, cut into 16 KiB chunks as libcurl delivers them. Each rate is the
 * median of 7 rounds. Run through `make bench` (an optimised build).
 */
#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ripplex/sbuf.h"
#include "watch_internal.h"

#define ROUNDS 7
#define NPODS 1000
#define NEVENTS 8000
#define CHUNK 16384
#define MEM_PODS 10000
#define TARGET_EPS 50000.0

/* A MODIFIED event of a lab Pod; @NAME@, @UID@, @RV@, @NODE@, @IP@ are filled in. */
static const char tmpl[] =
    "{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\""
    "creationTimestamp\":\"2026-11-22T00:35:30Z\",\"generateName\":\"web-69cdb697c7-\",\"genera"
    "tion\":1,\"labels\":{\"app\":\"web\",\"pod-template-hash\":\"69cdb697c7\",\"tier\":\"front"
    "end\",\"version\":\"v1.4.2\"},\"managedFields\":[{\"apiVersion\":\"v1\",\"fieldsType\":\"F"
    "ieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:generateName\":{},\"f:labels\":{\".\":{},\"f:a"
    "pp\":{},\"f:pod-template-hash\":{},\"f:tier\":{},\"f:version\":{}},\"f:ownerReferences\":{"
    "\".\":{},\"k:{\\\"uid\\\":\\\"2dfcd41d-4eee-4771-b0aa-b3a3a099406b\\\"}\":{}},\"f:annotati"
    "ons\":{\".\":{},\"f:kubectl.kubernetes.io/restartedAt\":{},\"f:cpid.ripple.dev/pod\":{}}},"
    "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"web\\\"}\":{\".\":{},\"f:image\":{},\""
    "f:imagePullPolicy\":{},\"f:name\":{},\"f:resources\":{\".\":{},\"f:limits\":{\".\":{},\"f:"
    "cpu\":{},\"f:memory\":{}},\"f:requests\":{\".\":{},\"f:cpu\":{},\"f:memory\":{}}},\"f:term"
    "inationMessagePath\":{},\"f:terminationMessagePolicy\":{},\"f:env\":{\".\":{},\"k:{\\\"nam"
    "e\\\":\\\"LOG_LEVEL\\\"}\":{\".\":{},\"f:name\":{},\"f:value\":{}},\"k:{\\\"name\\\":\\\"P"
    "OD_NAME\\\"}\":{\".\":{},\"f:name\":{},\"f:valueFrom\":{\".\":{},\"f:fieldRef\":{}}},\"k:{"
    "\\\"name\\\":\\\"POD_IP\\\"}\":{\".\":{},\"f:name\":{},\"f:valueFrom\":{\".\":{},\"f:field"
    "Ref\":{}}}},\"f:ports\":{\".\":{},\"k:{\\\"containerPort\\\":8080,\\\"protocol\\\":\\\"TCP"
    "\\\"}\":{\".\":{},\"f:containerPort\":{},\"f:name\":{},\"f:protocol\":{}},\"k:{\\\"contain"
    "erPort\\\":9090,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},\"f:containerPort\":{},\"f:name"
    "\":{},\"f:protocol\":{}}},\"f:readinessProbe\":{\".\":{},\"f:failureThreshold\":{},\"f:htt"
    "pGet\":{\".\":{},\"f:path\":{},\"f:port\":{},\"f:scheme\":{}},\"f:periodSeconds\":{},\"f:s"
    "uccessThreshold\":{},\"f:timeoutSeconds\":{}}}},\"f:dnsPolicy\":{},\"f:enableServiceLinks"
    "\":{},\"f:restartPolicy\":{},\"f:schedulerName\":{},\"f:securityContext\":{},\"f:terminati"
    "onGracePeriodSeconds\":{}}},\"manager\":\"kube-controller-manager\",\"operation\":\"Update"
    "\",\"time\":\"2026-11-22T00:35:30Z\"},{\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\","
    "\"fieldsV1\":{\"f:status\":{\"f:conditions\":{\"k:{\\\"type\\\":\\\"ContainersReady\\\"}\""
    ":{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\":{"
    "}},\"k:{\\\"type\\\":\\\"Initialized\\\"}\":{\".\":{},\"f:lastProbeTime\":{},\"f:lastTrans"
    "itionTime\":{},\"f:status\":{},\"f:type\":{}},\"k:{\\\"type\\\":\\\"Ready\\\"}\":{\".\":{}"
    ",\"f:lastProbeTime\":{},\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\":{}}},\"f:co"
    "ntainerStatuses\":{},\"f:hostIP\":{},\"f:hostIPs\":{},\"f:phase\":{},\"f:podIP\":{},\"f:po"
    "dIPs\":{\".\":{},\"k:{\\\"ip\\\":\\\"198.18.1.1\\\"}\":{\".\":{},\"f:ip\":{}}},\"f:startTi"
    "me\":{}}},\"manager\":\"kwok\",\"operation\":\"Update\",\"subresource\":\"status\",\"time"
    "\":\"2026-11-22T00:35:30Z\"}],\"name\":\"@NAME@\",\"namespace\":\"bench\",\"ownerReference"
    "s\":[{\"apiVersion\":\"apps/v1\",\"blockOwnerDeletion\":true,\"controller\":true,\"kind\":"
    "\"ReplicaSet\",\"name\":\"web-69cdb697c7\",\"uid\":\"2dfcd41d-4eee-4771-b0aa-b3a3a099406b"
    "\"}],\"resourceVersion\":\"@RV@\",\"uid\":\"@UID@\",\"annotations\":{\"kubectl.kubernetes."
    "io/restartedAt\":\"2026-11-21T22:06:30Z\",\"cpid.ripple.dev/pod\":\"v1;0b9e2f7c-1111-4a2b-"
    "9c3d-123456789abc;@UID@\"}},\"spec\":{\"containers\":[{\"image\":\"registry.example.com/sh"
    "op/web:v1.4.2\",\"imagePullPolicy\":\"IfNotPresent\",\"name\":\"web\",\"resources\":{\"lim"
    "its\":{\"cpu\":\"500m\",\"memory\":\"256Mi\"},\"requests\":{\"cpu\":\"100m\",\"memory\":\""
    "128Mi\"}},\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\""
    ":\"File\",\"volumeMounts\":[{\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount"
    "\",\"name\":\"kube-api-access-h98dx\",\"readOnly\":true}],\"ports\":[{\"containerPort\":80"
    "80,\"name\":\"http\",\"protocol\":\"TCP\"},{\"containerPort\":9090,\"name\":\"metrics\",\""
    "protocol\":\"TCP\"}],\"env\":[{\"name\":\"LOG_LEVEL\",\"value\":\"info\"},{\"name\":\"POD_"
    "NAME\",\"valueFrom\":{\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":\"metadata.name\"}"
    "}},{\"name\":\"POD_IP\",\"valueFrom\":{\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":"
    "\"status.podIP\"}}}],\"readinessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080,"
    "\"scheme\":\"HTTP\"},\"periodSeconds\":5,\"timeoutSeconds\":1,\"successThreshold\":1,\"fai"
    "lureThreshold\":3}}],\"dnsPolicy\":\"ClusterFirst\",\"enableServiceLinks\":true,\"nodeName"
    "\":\"@NODE@\",\"preemptionPolicy\":\"PreemptLowerPriority\",\"priority\":0,\"restartPolicy"
    "\":\"Always\",\"schedulerName\":\"default-scheduler\",\"securityContext\":{},\"serviceAcco"
    "unt\":\"default\",\"serviceAccountName\":\"default\",\"terminationGracePeriodSeconds\":30,"
    "\"tolerations\":[{\"effect\":\"NoExecute\",\"key\":\"node.kubernetes.io/not-ready\",\"oper"
    "ator\":\"Exists\",\"tolerationSeconds\":300},{\"effect\":\"NoExecute\",\"key\":\"node.kube"
    "rnetes.io/unreachable\",\"operator\":\"Exists\",\"tolerationSeconds\":300}],\"volumes\":[{"
    "\"name\":\"kube-api-access-h98dx\",\"projected\":{\"defaultMode\":420,\"sources\":[{\"serv"
    "iceAccountToken\":{\"expirationSeconds\":3607,\"path\":\"token\"}},{\"configMap\":{\"items"
    "\":[{\"key\":\"ca.crt\",\"path\":\"ca.crt\"}],\"name\":\"kube-root-ca.crt\"}},{\"downwardA"
    "PI\":{\"items\":[{\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":\"metadata.namespace\""
    "},\"path\":\"namespace\"}]}}]}}]},\"status\":{\"conditions\":[{\"lastProbeTime\":null,\"la"
    "stTransitionTime\":\"2026-11-22T00:35:30Z\",\"status\":\"True\",\"type\":\"Initialized\"},"
    "{\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-11-22T00:35:30Z\",\"status\":\"True"
    "\",\"type\":\"Ready\"},{\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-11-22T00:35:3"
    "0Z\",\"status\":\"True\",\"type\":\"ContainersReady\"},{\"lastProbeTime\":null,\"lastTrans"
    "itionTime\":\"2026-11-22T00:35:30Z\",\"status\":\"True\",\"type\":\"PodScheduled\"}],\"con"
    "tainerStatuses\":[{\"image\":\"registry.example.com/shop/web:v1.4.2\",\"imageID\":\"\",\"l"
    "astState\":{},\"name\":\"web\",\"ready\":true,\"restartCount\":0,\"state\":{\"running\":{"
    "\"startedAt\":\"2026-11-22T00:35:30Z\"}},\"started\":true}],\"hostIP\":\"127.0.0.1\",\"hos"
    "tIPs\":[{\"ip\":\"127.0.0.1\"}],\"phase\":\"Running\",\"podIP\":\"@IP@\",\"podIPs\":[{\"ip"
    "\":\"@IP@\"}],\"qosClass\":\"BestEffort\",\"startTime\":\"2026-11-22T00:35:30Z\"}}}";

typedef struct stream {
  char *p;
  size_t len, nevents;
  size_t obj_bytes; /* sum of the objects' JSON sizes (without the event envelope) */
} stream_t;

static void subst(sbuf_t *b, const char *t, const char *const vals[5]) {
  static const char *const keys[5] = {"@NAME@", "@UID@", "@RV@", "@NODE@", "@IP@"};
  while (*t) {
    const char *at = strchr(t, '@');
    if (!at) {
      sbuf_puts(b, t);
      return;
    }
    sbuf_put(b, t, (size_t)(at - t));
    int k = 0;
    while (k < 5 && strncmp(at, keys[k], strlen(keys[k])) != 0) k++;
    if (k == 5) {
      sbuf_putc(b, '@');
      t = at + 1;
    } else {
      sbuf_puts(b, vals[k]);
      t = at + strlen(keys[k]);
    }
  }
}

/* n events over npods Pods, rv counting up from rv0. */
static void make_stream(stream_t *s, size_t npods, size_t n, long rv0) {
  sbuf_t b;
  sbuf_init(&b);
  s->obj_bytes = 0;
  for (size_t i = 0; i < n; i++) {
    size_t pod = i % npods;
    char name[48], uid[64], rv[24], node[24], ip[24];
    snprintf(name, sizeof name, "web-69cdb697c7-%05u", (unsigned)(pod % 100000));
    snprintf(uid, sizeof uid, "447723d1-907d-40bd-ba64-%012x", (unsigned)pod);
    snprintf(rv, sizeof rv, "%ld", rv0 + (long)i);
    snprintf(node, sizeof node, "kwok-node-%zu", pod % 4);
    snprintf(ip, sizeof ip, "198.18.%zu.%zu", (i / 250) % 256, i % 250 + 1);
    const char *vals[5] = {name, uid, rv, node, ip};
    size_t before = b.len;
    subst(&b, tmpl, vals);
    s->obj_bytes += b.len - before - strlen("{\"type\":\"MODIFIED\",\"object\":}");
    sbuf_putc(&b, '\n');
  }
  if (b.oom) abort();
  s->p = b.p;
  s->len = b.len;
  s->nevents = n;
}

/* ---- the path: framing + decoding + watch state + informer cache --------------- */

/* What watch.c's on_event and informer.c's on_change do with each event. */
typedef struct path {
  wstore_t store;
  icache_t cache;
  wdec_t dec;
  int handlers; /* an informer with an update handler: trees of obj and old */
  uint64_t events, updates;
} path_t;

static void to_cache(void *ud, const wchange_t *ch) {
  path_t *p = ud;
  if (icache_apply(&p->cache, ch) != RIPPLE_OK) abort();
  if (!p->handlers || ch->type != RIPPLE_KUBE_MODIFIED) return;
  json_t *obj = ch->obj ? json_incref(ch->obj) : krec_tree(ch->rec), *old = krec_tree(ch->old);
  if (!obj || !old) abort();
  p->updates += json_object_size(obj) != 0; /* the handler */
  json_decref(obj);
  json_decref(old);
}

static int on_event(void *ud, const wev_t *ev) {
  path_t *p = ud;
  p->events++;
  if (ev->type > WEV_DELETED) return 0;
  krec_t *rec;
  if (krec_make(ev->text, ev->text_len, ev->cut, ev->cut_len, ev->obj, &rec) != RIPPLE_OK) abort();
  wstore_apply(&p->store, ev->type, rec, p->handlers ? ev->obj : NULL, 0, to_cache, p);
  krec_unref(rec);
  return 0;
}

static void path_init(path_t *p, int strip, int handlers) {
  memset(p, 0, sizeof *p);
  wstore_init(&p->store);
  if (icache_init(&p->cache) != RIPPLE_OK) abort();
  p->handlers = handlers;
  wdec_init(&p->dec, 0, (strip ? WDEC_STRIP : 0) | (handlers ? WDEC_TREE : 0), on_event, p);
}

static void path_free(path_t *p) {
  wdec_free(&p->dec);
  wstore_free(&p->store);
  icache_free(&p->cache);
}

static void feed(path_t *p, const stream_t *s) {
  for (size_t off = 0; off < s->len; off += CHUNK)
    wdec_feed(&p->dec, s->p + off, s->len - off < CHUNK ? s->len - off : CHUNK);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median events per second through the whole path. */
static double rate_path(const stream_t *s, int strip, int handlers) {
  double r[ROUNDS];
  path_t p;
  path_init(&p, strip, handlers);
  feed(&p, s); /* warm up: every Pod is in the cache, as in a live watch */
  for (int i = 0; i < ROUNDS; i++) {
    uint64_t e0 = p.events;
    double t0 = now_s();
    feed(&p, s);
    r[i] = (double)(p.events - e0) / (now_s() - t0);
  }
  if (p.dec.bad || (handlers && !p.updates)) abort();
  path_free(&p);
  qsort(r, ROUNDS, sizeof r[0], cmp_double);
  return r[ROUNDS / 2];
}

/* For comparison: jansson's json_loadb on each line, nothing else. */
static double rate_jansson(const stream_t *s) {
  double r[ROUNDS];
  for (int i = 0; i < ROUNDS; i++) {
    double t0 = now_s();
    for (const char *l = s->p, *end = s->p + s->len; l < end;) {
      const char *nl = memchr(l, '\n', (size_t)(end - l));
      json_t *j = json_loadb(l, (size_t)(nl - l), 0, NULL);
      if (!j) abort();
      json_decref(j);
      l = nl + 1;
    }
    r[i] = (double)s->nevents / (now_s() - t0);
  }
  qsort(r, ROUNDS, sizeof r[0], cmp_double);
  return r[ROUNDS / 2];
}

/* ---- memory ------------------------------------------------------------------------ */

static long rss_bytes(void) {
  char buf[128] = "";
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (!fgets(buf, sizeof buf, f)) buf[0] = '\0';
    fclose(f);
  }
  char *end;
  strtol(buf, &end, 10); /* size, then resident pages */
  return strtol(end, NULL, 10) * sysconf(_SC_PAGESIZE);
}

/* Bytes allocated per cached Pod (malloc's count) and RSS growth per Pod. */
static void memory(const stream_t *s, int strip, double *heap, double *rss) {
  malloc_trim(0);
  size_t m0 = mallinfo2().uordblks;
  long r0 = rss_bytes();
  path_t p;
  path_init(&p, strip, 0);
  feed(&p, s);
  if (icache_size(&p.cache) != s->nevents) abort();
  *heap = (double)(mallinfo2().uordblks - m0) / (double)s->nevents;
  *rss = (double)(rss_bytes() - r0) / (double)s->nevents;
  path_free(&p);
}

int main(void) {
  stream_t s, mem;
  make_stream(&s, NPODS, NEVENTS, 1000000);
  make_stream(&mem, MEM_PODS, MEM_PODS, 1); /* one ADDED-like event per Pod */
  double ev_bytes = (double)s.len / (double)s.nevents;
  double obj_bytes = (double)mem.obj_bytes / (double)mem.nevents;
  printf("libripple-kube benchmarks (median of %d rounds; %zu events of %.0f bytes, %d Pods)\n",
         ROUNDS, s.nevents, ev_bytes, NPODS);
  int missed = 0;
  static const char *const what[4] = {
      "informer cache, whole objects", "informer cache, managedFields dropped",
      "with an update handler, whole", "with an update handler, dropped"};
  for (int i = 0; i < 4; i++) {
    int strip = i & 1, handlers = i >> 1;
    double r = rate_path(&s, strip, handlers);
    int ok = r >= TARGET_EPS;
    if (!handlers) missed += !ok;
    printf("  %-40s %9.0f events/s %7.1f MB/s", what[i], r, r * ev_bytes / 1e6);
    if (handlers)
      printf("  (trees of obj and old)\n");
    else
      printf("  target >= %.0f  %s\n", TARGET_EPS, ok ? "ok" : "MISSED");
  }
  double j = rate_jansson(&s);
  printf("  %-40s %9.0f events/s %7.1f MB/s\n", "for comparison: json_loadb of each event", j,
         j * ev_bytes / 1e6);
  for (int strip = 0; strip < 2; strip++) {
    double heap, rss;
    memory(&mem, strip, &heap, &rss);
    printf(
        "  informer memory per Pod, %-22s %7.0f bytes heap, %7.0f RSS: %.2fx its %.0f-byte JSON\n",
        strip ? "managedFields dropped" : "whole objects", heap, rss, heap / obj_bytes, obj_bytes);
  }
  free(s.p);
  free(mem.p);
  printf("%s\n", missed ? "some targets MISSED" : "all targets met");
  return 0;
}
