/*
 * bench_ingest.c - ingest throughput of the real ripple-server binary on
 * loopback, against the target of the trace-server issue: 500,000 durable
 * records per second on one core.
 *
 *   bench_ingest --server build/release/bin/ripple-server [--seconds 10]
 *                [--conns 4] [--batch 1000] [--kind mergelogs|spans|both]
 *                [--sync normal|full|both] [--port P] [--rate R] [--records N]
 *                [--dates past|now]
 *
 * The server runs pinned to core 0 and this load generator to core 1, so the
 * figure is what one core of server does. Each connection is a thread with
 * one keep-alive HTTP/1.1 connection that sends a batch, waits for its answer,
 * and sends the next: a record counts only once the server answered 200, which
 * means it is committed. Bodies are built once per connection and only the
 * CPIDs (and span ids, times) are re-stamped before each request, so the
 * generator's own cost stays far below the server's. With --port it drives a
 * server that is already running instead of starting one. With --rate the
 * connections together send R records per second at most (each request on a
 * schedule), for measuring something else under a steady load. With
 * --records the connections together send N records (rounded up to whole
 * requests) and stop, or stop at --seconds if that comes first: for filling
 * a server to a known size (bench-memory.sh). Records are dated on a fixed
 * day in the past, which the stall detector learns from at once; with --dates
 * now they are dated when the run starts, so that its window holds them as it
 * would live ones.
 *
 *   bench_ingest --port P --kind otlp --body FILE [--batch SPANS] [--token T]
 *
 * sends the same pre-built OTLP/HTTP protobuf request (FILE, holding --batch
 * spans) to POST /v1/traces over and over, unchanged: to ripple-server or to
 * any other OTLP receiver (bench-vs-jaeger.sh). --token adds a bearer token.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"

#define CONNS_MAX 64
#define TARGET 500000 /* durable records per second on one core */

typedef struct opts {
  const char *server;
  double seconds;
  int conns, batch;
  const char *kind, *sync;
  int port;
  double rate;      /* records per second over all connections; 0: as fast as the server takes */
  uint64_t records; /* records to send over all connections; 0: until --seconds */
  const char *body, *token; /* --kind otlp: the request sent; a bearer token */
} opts_t;

/* --records: records the connections have claimed so far (a request claims its
 * batch before it is sent). */
static _Atomic uint64_t claimed;

/* The second records are dated in, before their stamped nanoseconds (a
 * span ends a second after its start): a fixed day in the past, or with
 * --dates now the second the run started. */
static char at_start[32] = "2026-11-21T22:18:34.", at_end[32] = "2026-11-21T22:18:35.";

static void date_now(void) {
  time_t t = time(NULL), t1 = t + 1;
  struct tm tm;
  strftime(at_start, sizeof at_start, "%Y-%m-%dT%H:%M:%S.", gmtime_r(&t, &tm));
  strftime(at_end, sizeof at_end, "%Y-%m-%dT%H:%M:%S.", gmtime_r(&t1, &tm));
}

/* --kind otlp: the request every connection sends, read once. */
static char *otlp_body;
static size_t otlp_len;

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- request bodies --------------------------------------------------------- */

/* A place in a body that is re-stamped before each request with the value
 * (first id of the request + rec - back): record rec's own id (back 0), or
 * the id of a record `back` places before it (a source, a parent span). */
typedef struct stamp {
  uint32_t off;
  uint16_t rec;
  uint8_t back;
  uint8_t what; /* 0: 12 hex digits (an id), 1: 9 decimal digits (nanoseconds) */
} stamp_t;

typedef struct body {
  char *p;
  size_t len, cap;
  stamp_t *st;
  size_t nst, capst;
  int rec;                  /* the record being laid out */
  int cascade, cascade_end; /* mergelogs: the records of the current cascade */
  uint64_t rng;             /* per connection, so threads share no generator */
} body_t;

/* splitmix64: deterministic per seed, and no shared state between threads. */
static uint32_t rnd(uint64_t *state) {
  uint64_t x = (*state += 0x9e3779b97f4a7c15ULL);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return (uint32_t)((x ^ (x >> 31)) >> 33);
}

static void put(body_t *b, const char *s) {
  size_t n = strlen(s);
  if (b->len + n > b->cap) {
    b->cap = (b->len + n) * 2;
    if (!(b->p = realloc(b->p, b->cap))) abort();
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
}

static void hole(body_t *b, int back, int what) {
  if (b->nst == b->capst) {
    b->capst = b->capst ? b->capst * 2 : 4096;
    if (!(b->st = realloc(b->st, b->capst * sizeof *b->st))) abort();
  }
  b->st[b->nst++] = (stamp_t){(uint32_t)b->len, (uint16_t)b->rec, (uint8_t)back, (uint8_t)what};
  put(b, what ? "000000000" : "000000000000");
}

/* A CPID whose last 12 digits are stamped; the first groups make ids unique
 * per run and per connection. */
static void cpid(body_t *b, uint32_t run, int conn, int back) {
  char pre[32];
  snprintf(pre, sizeof pre, "\"%08x-%04x-4000-8000-", run, conn);
  put(b, pre);
  hole(b, back, 0);
  put(b, "\"");
}

static const char *components[] = {"kube-controller-manager", "kubectl", "kube-scheduler",
                                   "kubelet"};
static const char *kinds[] = {"Deployment", "ReplicaSet", "Pod", "Service"};

/* Cascades of 5 to 50 CPIDs, as bench_server's graph: a root (an operator's
 * change), then CPIDs merging 1 to 3 earlier ones of the cascade (60% one,
 * 30% two, 10% three), and 3% of them also a CPID of an earlier cascade. */
static void mergelog(body_t *b, uint32_t run, int conn) {
  put(b, b->rec ? ",{\"cpid\":" : "{\"cpid\":");
  cpid(b, run, conn, 0);
  put(b, ",\"sources\":[");
  if (b->rec >= b->cascade_end) {
    b->cascade = b->rec;
    b->cascade_end = b->rec + 5 + (int)rnd(&b->rng) % 46;
  } else {
    int pos = b->rec - b->cascade, r = (int)rnd(&b->rng) % 100, n = r < 60 ? 1 : r < 90 ? 2 : 3;
    for (int k = 0; k < n && k < pos; k++) {
      if (k) put(b, ",");
      cpid(b, run, conn, k == 0 ? 1 : 2 + (int)rnd(&b->rng) % (pos - 1)); /* the one before, any */
    }
    if ((int)rnd(&b->rng) % 100 < 3) {
      put(b, ",");
      cpid(b, run, conn, pos + 1 + (int)rnd(&b->rng) % 200); /* back <= 249: fits a stamp */
    }
  }
  put(b, "],\"time\":\"");
  put(b, at_start);
  hole(b, 0, 1);
  char tail[320];
  snprintf(tail, sizeof tail,
           "Z\",\"component\":\"%s\",\"object\":{\"apiVersion\":\"apps/v1\",\"kind\":\"%s\","
           "\"namespace\":\"default\",\"name\":\"web-7d9f8b6c5-%05d\","
           "\"uid\":\"5b0c1f7e-2b7a-4c39-9b1e-%012d\"}}",
           components[(int)rnd(&b->rng) % 4], kinds[(int)rnd(&b->rng) % 4],
           (int)rnd(&b->rng) % 100000, (int)rnd(&b->rng));
  put(b, tail);
}

/* Three spans in four have a parent (the span before). */
static void span(body_t *b, uint32_t run, int conn) {
  put(b, b->rec ? ",{\"cpid\":" : "{\"cpid\":");
  cpid(b, run, conn, (int)rnd(&b->rng) % 3);
  put(b, ",\"span_id\":\"8000");
  hole(b, 0, 0);
  if (b->rec % 4) {
    put(b, "\",\"parent_id\":\"8000");
    hole(b, 1, 0);
  }
  char mid[160];
  snprintf(mid, sizeof mid, "\",\"service\":\"%s\",\"name\":\"sync%s\",\"start\":\"%s",
           components[(int)rnd(&b->rng) % 4], kinds[(int)rnd(&b->rng) % 4], at_start);
  put(b, mid);
  hole(b, 0, 1);
  put(b, "Z\",\"end\":\"");
  put(b, at_end);
  hole(b, 0, 1);
  /* The attributes ripple's webhook gives every span (docs/webhook.md); the
   * server indexes the object they name. */
  char tail[320];
  snprintf(tail, sizeof tail,
           "Z\",\"attributes\":{\"kind\":\"%s\",\"namespace\":\"default\","
           "\"name\":\"web-7d9f8b6c5-%05d\",\"uid\":\"5b0c1f7e-2b7a-4c39-9b1e-%012d\","
           "\"resourceVersion\":\"%d\",\"user\":\"system:serviceaccount:kube-system:%s\","
           "\"operation\":\"UPDATE\"}}",
           kinds[(int)rnd(&b->rng) % 4], (int)rnd(&b->rng) % 100000, (int)rnd(&b->rng),
           (int)rnd(&b->rng) % 1000000, components[(int)rnd(&b->rng) % 4]);
  put(b, tail);
}

static void body_build(body_t *b, int mergelogs, int n, uint32_t run, int conn) {
  memset(b, 0, sizeof *b);
  b->rng = (uint64_t)conn * 7919u + run;
  put(b, "[");
  for (b->rec = 0; b->rec < n; b->rec++) (mergelogs ? mergelog : span)(b, run, conn);
  put(b, "]");
}

/* Make every id of the request new: record i gets first + i. */
static void body_stamp(body_t *b, uint64_t first) {
  static const char hex[] = "0123456789abcdef";
  for (size_t k = 0; k < b->nst; k++) {
    const stamp_t *s = &b->st[k];
    uint64_t v = first + s->rec - s->back;
    char *d = b->p + s->off;
    if (s->what == 0) {
      for (int j = 11; j >= 0; j--, v >>= 4) d[j] = hex[v & 15];
    } else {
      v %= 1000000000;
      for (int j = 8; j >= 0; j--, v /= 10) d[j] = (char)('0' + v % 10);
    }
  }
}

/* ---- one connection ------------------------------------------------------------ */

typedef struct worker {
  int conn, port, mergelogs, batch;
  int64_t interval_ns; /* between requests (--rate); 0: none */
  uint64_t limit;      /* --records over all connections; 0: none */
  uint32_t run;
  int otlp;          /* send otlp_body to /v1/traces */
  const char *token; /* bearer token, or NULL */
  int64_t deadline;
  pthread_t thread;
  uint64_t records, requests, failures;
  int64_t *lat; /* ns per request */
  size_t nlat, caplat;
} worker_t;

static int dial(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static int send_all(int fd, struct iovec *iov, int n) {
  while (n > 0) {
    ssize_t w = writev(fd, iov, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    while (n > 0 && (size_t)w >= iov->iov_len) w -= (ssize_t)iov->iov_len, iov++, n--;
    if (n > 0) iov->iov_base = (char *)iov->iov_base + w, iov->iov_len -= (size_t)w;
  }
  return 0;
}

/* Read one answer; its status (and body length), or -1 when the connection
 * broke. */
static int read_answer(int fd, char *buf, size_t cap, size_t *body_len) {
  size_t have = 0;
  char *end = NULL;
  while (!end) {
    ssize_t r = read(fd, buf + have, cap - 1 - have);
    if (r <= 0) return -1;
    have += (size_t)r;
    buf[have] = '\0';
    end = strstr(buf, "\r\n\r\n");
    if (!end && have == cap - 1) return -1;
  }
  int status = (int)strtol(buf + 9, NULL, 10);
  size_t clen = 0;
  for (char *h = strchr(buf, '\n'); h && h < end; h = strchr(h + 1, '\n'))
    if (!strncasecmp(h + 1, "Content-Length:", 15)) clen = strtoul(h + 16, NULL, 10);
  size_t got = have - (size_t)(end + 4 - buf);
  while (got < clen) {
    ssize_t r = read(fd, buf, cap);
    if (r <= 0) return -1;
    got += (size_t)r;
  }
  *body_len = clen;
  return status;
}

static void note_latency(worker_t *w, int64_t ns) {
  if (w->nlat == w->caplat) {
    w->caplat = w->caplat ? w->caplat * 2 : 4096;
    if (!(w->lat = realloc(w->lat, w->caplat * sizeof *w->lat))) abort();
  }
  w->lat[w->nlat++] = ns;
}

static void *work(void *arg) {
  worker_t *w = arg;
  body_t b = {0};
  if (w->otlp)
    b.p = otlp_body, b.len = otlp_len;
  else
    body_build(&b, w->mergelogs, w->batch, w->run, w->conn);
  char head[1024], auth[600] = "", ans[4096];
  size_t alen;
  if (w->token) snprintf(auth, sizeof auth, "Authorization: Bearer %s\r\n", w->token);
  int hlen = snprintf(head, sizeof head,
                      "POST /v1/%s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Type: "
                      "application/%s\r\nContent-Length: %zu\r\n\r\n",
                      w->otlp        ? "traces"
                      : w->mergelogs ? "mergelogs"
                                     : "spans",
                      auth, w->otlp ? "x-protobuf" : "json", b.len);
  int fd = dial(w->port);
  int64_t next = mono_ns();
  for (uint64_t first = 1000; fd >= 0 && mono_ns() < w->deadline; first += (uint64_t)w->batch) {
    if (w->limit && atomic_fetch_add(&claimed, (uint64_t)w->batch) >= w->limit) break;
    if (w->interval_ns) { /* on schedule: wait for this request's turn */
      next += w->interval_ns;
      int64_t d = next - mono_ns();
      if (d > 0) nanosleep(&(struct timespec){d / 1000000000, d % 1000000000}, NULL);
    }
    if (!w->otlp) body_stamp(&b, first);
    struct iovec iov[2] = {{head, (size_t)hlen}, {b.p, b.len}};
    int64_t t0 = mono_ns();
    int status = send_all(fd, iov, 2) == 0 ? read_answer(fd, ans, sizeof ans, &alen) : -1;
    if (status < 0) {
      close(fd);
      fd = dial(w->port);
    }
    w->requests++;
    if (status == 200) {
      w->records += (uint64_t)w->batch;
      note_latency(w, mono_ns() - t0);
    } else {
      w->failures++;
    }
  }
  if (fd >= 0) close(fd);
  if (!w->otlp) free(b.p);
  free(b.st);
  return NULL;
}

/* ---- the server under test ----------------------------------------------------- */

typedef struct server {
  pid_t pid;
  FILE *log;
  pthread_t drain;
  char dir[64];
} server_t;

static void pin(int cpu) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) return; /* nothing to separate */
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

/* Keep reading the server's log so it never blocks on a full pipe; pass on
 * anything that is not routine. */
static void *drain(void *arg) {
  server_t *s = arg;
  char line[1024];
  while (fgets(line, sizeof line, s->log))
    if (!strstr(line, "level=info")) fputs(line, stderr);
  return NULL;
}

/* Start the server on core 0 with a fresh database; its port, or -1. */
static int server_start(server_t *s, const char *bin, const char *sync) {
  snprintf(s->dir, sizeof s->dir, "/tmp/bench_ingest.XXXXXX");
  if (!mkdtemp(s->dir)) return -1;
  char db[96];
  snprintf(db, sizeof db, "%s/ingest.db", s->dir);
  int p[2];
  if (pipe(p) != 0) return -1;
  if ((s->pid = fork()) < 0) return -1;
  if (s->pid == 0) {
    pin(0);
    dup2(p[1], 2);
    close(p[0]);
    close(p[1]);
    execl(bin, bin, "--listen", "127.0.0.1:0", "--db", db, "--max-cpids", "0", "--sync", sync,
          (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  s->log = fdopen(p[0], "r");
  char line[1024];
  int port = -1;
  while (port < 0 && fgets(line, sizeof line, s->log)) {
    const char *a = strstr(line, "event=listening addr=");
    if (a) port = (int)strtol(strchr(a + 21, ':') + 1, NULL, 10);
  }
  if (port < 0) fprintf(stderr, "bench_ingest: %s did not start\n", bin);
  pthread_create(&s->drain, NULL, drain, s);
  return port;
}

/* Server CPU time so far (user + system), in seconds. */
static double server_cpu(pid_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  /* utime and stime are fields 14 and 15; the name (field 2) may hold spaces. */
  char *p = strrchr(buf, ')');
  unsigned long ticks = 0;
  for (int field = 2; p && *p && field < 15; p++) {
    if (*p != ' ') continue;
    if (++field >= 14) ticks += strtoul(p + 1, NULL, 10);
  }
  return (double)ticks / (double)sysconf(_SC_CLK_TCK);
}

static void server_stop(server_t *s) {
  kill(s->pid, SIGTERM);
  waitpid(s->pid, NULL, 0);
  pthread_join(s->drain, NULL);
  fclose(s->log);
  bench_rmtree(s->dir);
}

/* ---- one run --------------------------------------------------------------------- */

/* Index of the p-th percentile in a sorted array of n. */
static size_t pct(size_t n, int p) { return n * (size_t)p / 100; }

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

static int failures;

/* Queries over HTTP on the database just filled, with the server idle: the
 * whole stack (HTTP, lock, graph, and for mergelogs the rows from SQLite).
 * The client runs on the server's core: on this VM, waking an idle vCPU from
 * the other one takes milliseconds about one time in twenty (the hypervisor),
 * which would measure the host rather than the server. */
static void queries(int port, uint32_t run_id, const worker_t *w, int conns, const char *what) {
  enum { N = 5000 };
  pin(0);
  static int64_t lat[N];
  static size_t bytes[N];
  int fd = dial(port), n = 0;
  char ans[65536];
  uint64_t rng = 1;
  for (; fd >= 0 && n < N; n++) {
    const worker_t *x = &w[rnd(&rng) % (unsigned)conns];
    if (!x->records) break;
    uint64_t id = 1000 + rnd(&rng) % x->records;
    char req[256];
    int len = snprintf(req, sizeof req,
                       "GET /v1/cpids/%08x-%04x-4000-8000-%012" PRIx64
                       "/%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                       run_id, x->conn, id, what);
    struct iovec iov = {req, (size_t)len};
    int64_t t0 = mono_ns();
    if (send_all(fd, &iov, 1) != 0 || read_answer(fd, ans, sizeof ans, &bytes[n]) != 200) break;
    lat[n] = mono_ns() - t0;
  }
  if (fd >= 0) close(fd);
  if (n < N) {
    fprintf(stderr, "bench_ingest: query %d for %s failed\n", n, what);
    failures++;
    return;
  }
  qsort(lat, N, sizeof *lat, cmp_i64);
  qsort(bytes, N, sizeof *bytes, cmp_size);
  printf(
      "    GET /v1/cpids/{cpid}/%-9s p50 %4.0f us, p99 %4.0f us, max %4.0f us (%d random CPIDs;"
      " answers p50 %zu, p99 %zu, max %zu bytes)\n",
      what, (double)lat[pct(N, 50)] / 1e3, (double)lat[pct(N, 99)] / 1e3, (double)lat[N - 1] / 1e3,
      N, bytes[pct(N, 50)], bytes[pct(N, 99)], bytes[N - 1]);
}

static void run(const opts_t *o, int mergelogs, const char *sync) {
  int otlp = mergelogs < 0;
  if (otlp) mergelogs = 0;
  server_t srv = {0};
  int port = o->port;
  if (!port && (port = server_start(&srv, o->server, sync)) < 0) {
    if (srv.pid > 0) server_stop(&srv);
    failures++;
    return;
  }
  pin(1);
  static worker_t w[CONNS_MAX];
  uint32_t run_id = (uint32_t)mono_ns() ^ (uint32_t)getpid();
  double cpu0 = srv.pid ? server_cpu(srv.pid) : 0;
  int64_t t0 = mono_ns();
  atomic_store(&claimed, 0);
  for (int i = 0; i < o->conns; i++) {
    w[i] =
        (worker_t){.conn = i,
                   .port = port,
                   .mergelogs = mergelogs,
                   .otlp = otlp,
                   .token = o->token,
                   .batch = o->batch,
                   .run = run_id,
                   .interval_ns = o->rate > 0 ? (int64_t)(1e9 * o->batch * o->conns / o->rate) : 0,
                   .limit = o->records,
                   .deadline = t0 + (int64_t)(o->seconds * 1e9)};
    pthread_create(&w[i].thread, NULL, work, &w[i]);
  }
  uint64_t records = 0, requests = 0, bad = 0;
  size_t nlat = 0;
  for (int i = 0; i < o->conns; i++) {
    pthread_join(w[i].thread, NULL);
    records += w[i].records, requests += w[i].requests, bad += w[i].failures;
    nlat += w[i].nlat;
  }
  double secs = (double)(mono_ns() - t0) / 1e9;
  double cpu = srv.pid ? server_cpu(srv.pid) - cpu0 : 0;
  int64_t *lat = malloc((nlat + 1) * sizeof *lat);
  size_t k = 0;
  for (int i = 0; i < o->conns; i++) {
    memcpy(lat + k, w[i].lat, w[i].nlat * sizeof *lat);
    k += w[i].nlat;
    free(w[i].lat);
  }
  qsort(lat, nlat, sizeof *lat, cmp_i64);
  double rate = (double)records / secs;
  int target = !otlp && !strcmp(sync, "normal") && o->rate <= 0 && !o->records,
      ok = !target || rate >= TARGET;
  printf("  %s, sync=%s, %d connections x %d records per request:\n",
         otlp        ? "OTLP spans"
         : mergelogs ? "mergelogs"
                     : "spans",
         otlp ? "(server's)" : sync, o->conns, o->batch);
  printf("    %8.0f records/s acknowledged", rate);
  if (target) printf("   target >= %d/s  %s", TARGET, ok ? "ok" : "MISSED");
  printf("\n    %" PRIu64 " records in %.1f s, %" PRIu64
         " failed requests; server CPU %.0f%%, %.0f "
         "records per server CPU-second; request p50 %.1f ms, p99 %.1f ms\n",
         records, secs, bad, 100 * cpu / secs, cpu > 0 ? (double)records / cpu : 0,
         nlat ? (double)lat[pct(nlat, 50)] / 1e6 : 0, nlat ? (double)lat[pct(nlat, 99)] / 1e6 : 0);
  fflush(stdout);
  free(lat);
  if (bad || !requests || !ok) failures++;
  if (mergelogs) {
    queries(port, run_id, w, o->conns, "related");
    queries(port, run_id, w, o->conns, "mergelogs");
  }
  if (srv.pid) server_stop(&srv);
}

static void usage(void) {
  fprintf(stderr,
          "usage: bench_ingest --server PATH [--seconds S] [--conns N] [--batch N]\n"
          "                    [--kind mergelogs|spans|both] [--sync normal|full|both] [--port P]\n"
          "                    [--rate RECORDS_PER_S] [--records N] [--dates past|now]\n"
          "       bench_ingest --port P --kind otlp --body FILE [--batch SPANS_IN_FILE]\n"
          "                    [--conns N] [--seconds S] [--token T]\n");
}

int main(int argc, char **argv) {
  opts_t o = {NULL, 10, 4, 1000, "both", "both", 0, 0, 0, NULL, NULL};
  int now = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *a = argv[i], *v = argv[i + 1];
    if (!strcmp(a, "--server"))
      o.server = v;
    else if (!strcmp(a, "--seconds"))
      o.seconds = strtod(v, NULL);
    else if (!strcmp(a, "--conns"))
      o.conns = (int)strtol(v, NULL, 10);
    else if (!strcmp(a, "--batch"))
      o.batch = (int)strtol(v, NULL, 10);
    else if (!strcmp(a, "--kind"))
      o.kind = v;
    else if (!strcmp(a, "--sync"))
      o.sync = v;
    else if (!strcmp(a, "--port"))
      o.port = (int)strtol(v, NULL, 10);
    else if (!strcmp(a, "--rate"))
      o.rate = strtod(v, NULL);
    else if (!strcmp(a, "--dates") && (!strcmp(v, "now") || !strcmp(v, "past")))
      now = !strcmp(v, "now");
    else if (!strcmp(a, "--records"))
      o.records = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--body"))
      o.body = v;
    else if (!strcmp(a, "--token"))
      o.token = v;
    else
      return usage(), 2;
  }
  /* 10000 records is the server's default --max-batch. */
  if ((!o.server && !o.port) || argc % 2 == 0 || o.conns < 1 || o.conns > CONNS_MAX ||
      o.batch < 1 || o.batch > 10000 || o.seconds <= 0)
    return usage(), 2;
  signal(SIGPIPE, SIG_IGN);
  if (now) date_now();
  if (!strcmp(o.kind, "otlp")) { /* a receiver already running: one run, as is */
    FILE *f = o.body && o.port ? fopen(o.body, "rb") : NULL;
    if (!f) return usage(), 2;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
      char *p = realloc(otlp_body, otlp_len + n);
      if (!p) abort();
      otlp_body = p;
      memcpy(otlp_body + otlp_len, buf, n);
      otlp_len += n;
    }
    fclose(f);
    printf("OTLP/HTTP protobuf into port %d (load on core 1), %.0f s\n", o.port, o.seconds);
    run(&o, -1, "normal");
    free(otlp_body);
    return failures ? 1 : 0;
  }
  printf("ripple-server ingest on loopback (server on core 0, load on core 1), %.0f s each\n",
         o.seconds);
  const char *syncs[] = {"normal", "full"};
  for (int s = 0; s < 2; s++) {
    if (strcmp(o.sync, "both") != 0 && strcmp(o.sync, syncs[s]) != 0) continue;
    if (strcmp(o.kind, "spans") != 0) run(&o, 1, syncs[s]);
    if (strcmp(o.kind, "mergelogs") != 0) run(&o, 0, syncs[s]);
  }
  return failures ? 1 : 0;
}
