/*
 * procstat.c - CPU time and memory of processes, for the agent's own cost
 * next to the API server's (the paper's figures 7 and 8).
 *
 * Samples come from /proc/PID/stat (utime + stime in clock ticks) and
 * /proc/PID/status (VmRSS), so any process on the machine can be measured
 * without its cooperation. A sampler thread writes one CSV row per process
 * per interval; the summary takes CPU as the difference between the first
 * and the last sample, so work done before the scenario started is not
 * counted.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ripple/ripple.h"
#include "run.h"

#define SAMPLER_MAX 8

int procstat_read(pid_t pid, proc_sample_t *out) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return RIPPLE_ENOENT;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  /* The command name may hold spaces and parentheses: fields start after the
   * last ')'. utime and stime are fields 14 and 15, the 12th and 13th after it. */
  char *p = strrchr(buf, ')'), *save = NULL, *tok = p ? strtok_r(p + 1, " ", &save) : NULL;
  for (int field = 3; tok && field < 14; field++) tok = strtok_r(NULL, " ", &save);
  char *end1 = NULL, *end2 = NULL;
  unsigned long long ut = tok ? strtoull(tok, &end1, 10) : 0;
  tok = tok ? strtok_r(NULL, " ", &save) : NULL;
  unsigned long long st = tok ? strtoull(tok, &end2, 10) : 0;
  if (!tok || !end1 || *end1 || !end2 || *end2) return RIPPLE_EINVAL;
  long rss = 0;
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  if ((f = fopen(path, "r")) == NULL) return RIPPLE_ENOENT;
  while (fgets(buf, sizeof buf, f))
    if (!strncmp(buf, "VmRSS:", 6)) rss = strtol(buf + 6, NULL, 10);
  fclose(f);
  out->cpu_s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
  out->rss_kib = rss;
  return RIPPLE_OK;
}

typedef struct sproc {
  char name[64];
  pid_t pid;
  int n;
  proc_sample_t first, last;
  long rss_max;
  double rss_sum;
} sproc_t;

struct sampler {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  FILE *csv;
  int64_t interval_ns;
  int stop;
  sproc_t procs[SAMPLER_MAX];
  int nprocs;
};

static void sample_all(sampler_t *s) {
  int64_t now = ripple_now_ns();
  for (int i = 0; i < s->nprocs; i++) {
    sproc_t *p = &s->procs[i];
    proc_sample_t x;
    if (procstat_read(p->pid, &x) != RIPPLE_OK) continue;
    if (p->n++ == 0) p->first = x;
    p->last = x;
    if (x.rss_kib > p->rss_max) p->rss_max = x.rss_kib;
    p->rss_sum += (double)x.rss_kib;
    fprintf(s->csv, "%lld,%s,%d,%.3f,%ld\n", (long long)now, p->name, (int)p->pid, x.cpu_s,
            x.rss_kib);
  }
  fflush(s->csv);
}

static void *sampler_main(void *arg) {
  sampler_t *s = arg;
  pthread_mutex_lock(&s->mu);
  while (!s->stop) {
    sample_all(s);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t t = (int64_t)ts.tv_nsec + s->interval_ns;
    ts.tv_sec += (time_t)(t / 1000000000LL);
    ts.tv_nsec = (long)(t % 1000000000LL);
    while (!s->stop && pthread_cond_timedwait(&s->cv, &s->mu, &ts) != ETIMEDOUT) {
    }
  }
  sample_all(s); /* the last word: the state at the end */
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

int sampler_start(const char *csv_path, int64_t interval_ns, sampler_t **out) {
  sampler_t *s = calloc(1, sizeof *s);
  if (!s) return RIPPLE_ENOMEM;
  if ((s->csv = fopen(csv_path, "w")) == NULL) {
    free(s);
    return RIPPLE_ESYS;
  }
  fprintf(s->csv, "time_ns,process,pid,cpu_s,rss_kib\n");
  s->interval_ns = interval_ns > 0 ? interval_ns : 1000000000LL;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  if (pthread_create(&s->thread, NULL, sampler_main, s) != 0) {
    fclose(s->csv);
    free(s);
    return RIPPLE_ESYS;
  }
  *out = s;
  return RIPPLE_OK;
}

int sampler_add(sampler_t *s, const char *name, pid_t pid) {
  pthread_mutex_lock(&s->mu);
  int rc = s->nprocs < SAMPLER_MAX ? RIPPLE_OK : RIPPLE_ERANGE;
  if (rc == RIPPLE_OK) {
    sproc_t *p = &s->procs[s->nprocs++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->pid = pid;
  }
  pthread_mutex_unlock(&s->mu);
  return rc;
}

void sampler_stop(sampler_t *s, json_t **summary) {
  if (!s) return;
  pthread_mutex_lock(&s->mu);
  s->stop = 1;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->thread, NULL);
  json_t *sum = summary ? json_object() : NULL;
  for (int i = 0; sum && i < s->nprocs; i++) {
    sproc_t *p = &s->procs[i];
    if (p->n == 0) continue;
    json_object_set_new(
        sum, p->name,
        json_pack("{s:i,s:i,s:f,s:i,s:f}", "pid", (json_int_t)p->pid, "samples", (json_int_t)p->n,
                  "cpu_s", p->last.cpu_s - p->first.cpu_s, "rss_max_kib", (json_int_t)p->rss_max,
                  "rss_avg_kib", p->rss_sum / p->n));
  }
  if (summary) *summary = sum;
  fclose(s->csv);
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  free(s);
}
