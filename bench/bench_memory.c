/*
 * bench_memory.c - what the trace server keeps in memory, per thing it
 * keeps (issue 28), measured in-process on its structures two ways:
 *
 *   accounting  the structures' own *_memory() functions (graph_memory,
 *               roots_memory, objects_memory, stall_memory): bytes they
 *               allocated, hash tables' empty slots and pools' unused slots
 *               included, malloc's own headers and rounding not;
 *   RSS         the growth of this process's resident set while they grow
 *               (/proc/self/statm): what the machine pays, malloc included.
 *
 *   CPIDs     a merge graph of N mergelogs in bench_ingest's cascade shape
 *             (cascades of 5-50, 1-3 sources, 3% joined to an earlier one)
 *   spans     N spans onto those CPIDs (graph_add_span; a span of a CPID
 *             not yet in the graph also makes its vertex)
 *   roots     one root entry per root mergelog, each for a new object uid
 *   objects   object index entries, as "Pod default web-...": one CPID per
 *             object (each entry a new object), then OBJECTS_KEEP per object
 *   stalls    the stall detector fed spans as bench_ingest makes them, past
 *             its window bound: per write in the window, and the bound
 *
 *   bench_memory [--cpids N] [--spans N] [--objects N] [--stall-spans N]
 *
 * The real server over loopback after 10M spans (RSS, database size) is
 * bench-memory.sh's job; it runs this first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/stall.h"
#include "graph/graph.h"
#include "graph/objects.h"
#include "graph/roots.h"

static int failures;

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint32_t rnd(void) {
  uint64_t x = (rng_state += 0x9e3779b97f4a7c15ULL);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return (uint32_t)((x ^ (x >> 31)) >> 33);
}

/* The CPID of record i: distinct per i, a valid v4 UUID. */
static void cpid_of(uint64_t i, ripple_cpid_t *id) {
  uint64_t hi = 0x5b0c1f7e2b7a4c39ULL, lo = i << 8; /* b[8] takes the variant bits */
  memcpy(id->b, &hi, 8);
  memcpy(id->b + 8, &lo, 8);
  id->b[6] = (uint8_t)((id->b[6] & 0x0f) | 0x40);
  id->b[8] = (uint8_t)((id->b[8] & 0x3f) | 0x80);
}

/* Resident pages: the second field of /proc/self/statm. */
static long rss_bytes(void) {
  char buf[256] = "";
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *p = strchr(buf, ' ');
  return p ? strtol(p + 1, NULL, 10) * sysconf(_SC_PAGESIZE) : 0;
}

static void row(const char *what, size_t acct, long rss, size_t n, const char *per) {
  printf("  %-44s %7.1f bytes (accounting) %7.1f bytes (RSS growth) per %s\n", what,
         (double)acct / (double)n, (double)rss / (double)n, per);
}

/* ---- CPIDs, spans, roots --------------------------------------------------------- */

typedef void (*mergelog_fn)(void *ud, uint64_t i, const ripple_cpid_t *src, size_t ns);

/* N mergelogs as bench_ingest makes them, from the same seed each time. */
static void shape(uint64_t n, mergelog_fn fn, void *ud) {
  uint64_t cascade = 0, end = 0;
  ripple_cpid_t src[4];
  rng_state = 0x9e3779b97f4a7c15ULL;
  for (uint64_t i = 0; i < n; i++) {
    size_t ns = 0;
    if (i >= end) {
      cascade = i;
      end = i + 5 + rnd() % 46;
    } else {
      uint64_t pos = i - cascade, k = rnd() % 100, want = k < 60 ? 1 : k < 90 ? 2 : 3;
      for (uint64_t j = 0; j < want && j < pos; j++)
        cpid_of(j == 0 ? i - 1 : i - 2 - rnd() % (pos - 1), &src[ns++]);
      if (rnd() % 100 < 3 && i > pos + 201) cpid_of(i - pos - 1 - rnd() % 200, &src[ns++]);
    }
    fn(ud, i, src, ns);
  }
}

static void to_graph(void *ud, uint64_t i, const ripple_cpid_t *src, size_t ns) {
  ripple_cpid_t c;
  cpid_of(i, &c);
  if (graph_add_mergelog(ud, &c, src, ns, NULL, (int64_t)i * 1000, i + 1) < 0) failures++;
}

/* Every cascade's root is a root mergelog of a new object uid. */
static void to_roots(void *ud, uint64_t i, const ripple_cpid_t *src, size_t ns) {
  (void)src;
  if (ns) return;
  ripple_cpid_t c;
  char uid[48];
  cpid_of(i, &c);
  int len = snprintf(uid, sizeof uid, "5b0c1f7e-2b7a-4c39-9b1e-%012llu", (unsigned long long)i);
  if (roots_add(ud, uid, (size_t)len, (int64_t)i * 1000, i + 1, &c) != RIPPLE_OK) failures++;
}

static void bench_graph(uint64_t ncpids, uint64_t nspans) {
  graph_t *g;
  roots_t *r;
  if (graph_new(&g) != RIPPLE_OK || roots_new(&r) != RIPPLE_OK) {
    failures++;
    return;
  }
  printf("per CPID and per span: merge graph and roots index\n");
  size_t m0 = graph_memory(g);
  long rss0 = rss_bytes();
  shape(ncpids, to_graph, g);
  long rss1 = rss_bytes();
  size_t m1 = graph_memory(g), r0 = roots_memory(r);
  printf("  %zu CPIDs with mergelogs, %zu edges (%.2f per CPID)\n", graph_vertices(g),
         graph_edges(g), (double)graph_edges(g) / (double)graph_vertices(g));
  row("CPID: vertex, its edges, index slot", m1 - m0, rss1 - rss0, graph_vertices(g), "CPID");
  shape(ncpids, to_roots, r);
  long rss_r = rss_bytes();
  row("root entry (a new object uid each)", roots_memory(r) - r0, rss_r - rss1, roots_count(r),
      "root");
  printf("    %zu roots\n", roots_count(r));
  rss1 = rss_r;

  /* Spans onto the CPIDs already there: 16 bytes a span node, and nothing else. */
  ripple_cpid_t c;
  for (uint64_t i = 0; i < nspans; i++) {
    cpid_of(rnd() % ncpids, &c);
    if (graph_add_span(g, &c, (int64_t)i, (int64_t)i + 1000000, ncpids + i + 1) != RIPPLE_OK)
      failures++;
  }
  long rss2 = rss_bytes();
  size_t m2 = graph_memory(g);
  row("span of a known CPID: span node", m2 - m1, rss2 - rss1, nspans, "span");

  /* Spans of CPIDs the graph has not seen: a span node and a vertex each. */
  for (uint64_t i = 0; i < nspans; i++) {
    cpid_of(ncpids + i, &c);
    if (graph_add_span(g, &c, (int64_t)i, (int64_t)i + 1000000, ncpids + nspans + i + 1) !=
        RIPPLE_OK)
      failures++;
  }
  long rss3 = rss_bytes();
  size_t m3 = graph_memory(g);
  row("span of a new CPID: span node and vertex", m3 - m2, rss3 - rss2, nspans, "span");
  printf("  graph at the end: %zu vertices, %zu spans, graph_memory %.1f MB\n", graph_vertices(g),
         graph_spans(g), (double)m3 / 1e6);
  graph_free(g);
  roots_free(r);
}

/* ---- the object index ------------------------------------------------------------- */

static void add_objects(objects_t *o, uint64_t nobj, unsigned per) {
  char name[32];
  ripple_cpid_t c;
  for (uint64_t i = 0; i < nobj; i++) {
    int len = snprintf(name, sizeof name, "web-7d9f8b6c5-%07llu", (unsigned long long)i);
    obj_name_t k = {"Pod", "default", name, 3, 7, (size_t)len};
    for (unsigned j = 0; j < per; j++) {
      cpid_of(i * OBJECTS_KEEP + j, &c);
      if (objects_add(o, &k, &c, (int64_t)(i * per + j)) != RIPPLE_OK) failures++;
    }
  }
}

/* n entries: n / per objects with per CPIDs each, into a fresh index. */
static void bench_objects(uint64_t n, unsigned per) {
  objects_t *o;
  if (objects_new(&o) != RIPPLE_OK) {
    failures++;
    return;
  }
  size_t m0 = objects_memory(o);
  long rss0 = rss_bytes();
  add_objects(o, n / per, per);
  size_t m1 = objects_memory(o);
  long rss1 = rss_bytes();
  char what[64];
  snprintf(what, sizeof what, "entry, %u CPID%s per object", per, per > 1 ? "s" : "");
  row(what, m1 - m0, rss1 - rss0, n / per * per, "entry");
  size_t slots = 64; /* keytab.c's rule: a power of two, at most half full */
  while (slots < 2 * objects_count(o)) slots *= 2;
  printf("    %zu objects, objects_memory %.1f MB (the key table %.0f%% full)\n", objects_count(o),
         (double)m1 / 1e6, 100.0 * (double)objects_count(o) / (double)slots);
  objects_free(o);
}

/* ---- the stall detector ----------------------------------------------------------- */

static int unrelated(void *ud, const ripple_cpid_t *anc, const ripple_cpid_t *desc) {
  (void)ud;
  return !memcmp(anc, desc, sizeof *anc);
}

/* Spans as bench_ingest makes them: 4 services x 4 span names, objects of 4
 * kinds and 100,000 names in "default", all UPDATEs. */
static void bench_stall(uint64_t n) {
  static const char *svc[] = {"kube-controller-manager", "kubectl", "kube-scheduler", "kubelet"};
  static const char *kinds[] = {"Deployment", "ReplicaSet", "Pod", "Service"};
  static const char *names[] = {"syncDeployment", "syncReplicaSet", "syncPod", "syncService"};
  stall_t *s;
  if (stall_new(&(stall_opts_t){0}, unrelated, NULL, &s) != RIPPLE_OK) {
    failures++;
    return;
  }
  printf("stall detector: %llu spans as bench_ingest makes them, fed and ticked\n",
         (unsigned long long)n);
  size_t m0 = stall_memory(s), full = 0;
  long rss0 = rss_bytes(), rss_full = 0;
  int64_t t0 = 1700000000LL * 1000000000LL;
  char obj[32];
  stall_stats_t st;
  for (uint64_t i = 0; i < n; i++) {
    stall_span_t sp = {.span_id = i + 1, .start = t0 + (int64_t)i * 10000};
    cpid_of(i, &sp.cpid);
    sp.end = sp.start + 1000000;
    unsigned k = rnd() % 4;
    snprintf(obj, sizeof obj, "web-7d9f8b6c5-%05u", rnd() % 100000);
    sp.service = svc[rnd() % 4], sp.name = names[k], sp.kind = kinds[k], sp.ns = "default";
    sp.obj = obj, sp.owner = "", sp.operation = "UPDATE";
    stall_add(s, &sp);
    if (i % 1000 == 999) stall_tick(s, sp.end);
    stall_stats(s, &st);
    if (!full && st.evicted) { /* the window just reached its bound */
      full = stall_memory(s);
      rss_full = rss_bytes();
      row("write in the window (window full)", full - m0, rss_full - rss0, st.window, "write");
    }
  }
  stall_stats(s, &st);
  size_t end = stall_memory(s);
  printf(
      "  at the bound: window %zu writes, %zu hop kinds, stall_memory %.1f MB"
      " (%.1f MB after %llu spans; RSS grew %.1f MB more)\n",
      st.window, st.kinds, (double)full / 1e6, (double)end / 1e6, (unsigned long long)n,
      (double)(rss_bytes() - rss_full) / 1e6);
  if (!full) failures++; /* never reached its bound: give it more spans */
  stall_free(s);
}

/* Each part in a process of its own, so that none reuses memory another
 * freed and every RSS growth starts from a clean heap. */
typedef struct part {
  void (*fn)(uint64_t n, unsigned per);
  uint64_t n;
  unsigned per;
} part_t;

static void part_graph(uint64_t n, unsigned spans) { bench_graph(n, spans); }
static void part_stall(uint64_t n, unsigned per) { (void)per, bench_stall(n); }

static void run_part(const part_t *p) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    p->fn(p->n, p->per);
    fflush(stdout);
    _exit(failures ? 1 : 0);
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) failures++;
}

int main(int argc, char **argv) {
  uint64_t ncpids = 4000000, nspans = 4000000, nobj = 2000000, nstall = 600000;
  for (int i = 1; i + 1 < argc; i += 2) {
    uint64_t v = strtoull(argv[i + 1], NULL, 10);
    if (!strcmp(argv[i], "--cpids") && v > 1000)
      ncpids = v;
    else if (!strcmp(argv[i], "--spans") && v && v <= UINT32_MAX)
      nspans = v;
    else if (!strcmp(argv[i], "--objects") && v >= OBJECTS_KEEP)
      nobj = v;
    else if (!strcmp(argv[i], "--stall-spans") && v)
      nstall = v;
    else
      return fprintf(stderr,
                     "usage: bench_memory [--cpids N] [--spans N] [--objects N] "
                     "[--stall-spans N]\n"),
             2;
  }
  if (argc % 2 == 0)
    return fprintf(stderr,
                   "usage: bench_memory [--cpids N] [--spans N] [--objects N] "
                   "[--stall-spans N]\n"),
           2;
  printf(
      "trace server state in memory, in-process (accounting: the structures' *_memory();"
      " RSS growth: /proc/self/statm)\n");
  part_t parts[] = {{part_graph, ncpids, (unsigned)nspans},
                    {bench_objects, nobj, 1},
                    {bench_objects, nobj, 2},
                    {bench_objects, nobj, OBJECTS_KEEP},
                    {part_stall, nstall, 0}};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
    if (i == 1) printf("per object index entry (\"Pod\" \"default\" \"web-7d9f8b6c5-NNNNNNN\")\n");
    run_part(&parts[i]);
  }
  return failures ? 1 : 0;
}
