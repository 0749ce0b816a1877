/*
 * run.h - `ripple run`'s parts: scenarios (scenario.c, YAML read through
 * ripplex/yjson.h), steps against the cluster (steps.c, wait.c), the watch
 * agent it starts and the processes it measures (agentproc.c, procstat.c),
 * and the progress line (progress.c). main.c puts them together. docs/run.md
 * describes the scenario format.
 *
 * Memory: functions that hand out strings or JSON values give the caller a
 * reference to free (free() / json_decref()); everything passed in stays the
 * caller's.
 */
#ifndef RIPPLE_RUN_H
#define RIPPLE_RUN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ripple/kube.h"
#include "ripplex/yjson.h"

/* ---- scenarios (scenario.c) ----------------------------------------------------- */

#define SCN_MAX_PARAMS 64

typedef struct scn {
  char *path, *dir; /* the scenario file and the directory relative paths start from */
  char *text;       /* its contents, before substitution */
  size_t len;
  json_t *params; /* name -> value (strings), defaults overridden by scn_set */
  char name[128];
  int repetitions;
} scn_t;

/* Read a scenario: its name, repetitions and parameter defaults. The steps are
 * checked by scn_expand, once the parameters are final. On failure *s holds
 * nothing (scn_free on it is harmless). */
int scn_load(const char *path, scn_t *s, char *err, size_t cap);
/* "NAME=VALUE" from the command line: replaces a default (or adds one). */
int scn_set(scn_t *s, const char *assignment, char *err, size_t cap);
/* Replace every ${NAME} in text by the parameter's value (${run} by run);
 * "$$" is a literal "$". An unknown name is an error naming it. */
int scn_subst(const scn_t *s, int run, const char *text, size_t len, char **out, char *err,
              size_t cap);
/* The scenario for repetition `run`, substituted and parsed, with its step
 * lists (setup, steps, teardown) checked. */
int scn_expand(const scn_t *s, int run, json_t **doc, char *err, size_t cap);
/* Read a file named by a scenario (relative to its directory) and substitute it. */
int scn_read_file(const scn_t *s, int run, const char *name, char **out, size_t *len, char *err,
                  size_t cap);
void scn_free(scn_t *s);

/* Check one step's shape without running it. */
int step_check(const json_t *step, char *err, size_t cap);

/* ---- running steps (steps.c, wait.c) ---------------------------------------------- */

typedef struct runner runner_t;
/* Progress of a wait: what it waits for and how far it is ("37/100"). */
typedef void (*progress_fn)(void *ud, const char *what, const char *state);

struct runner {
  ripple_kube_client_t *kc;
  const scn_t *scn;
  const char *namespace_; /* the default namespace of objects and waits */
  int run;                /* the repetition being run, from 1 */
  volatile int *stop;     /* set by a signal: give up waiting */
  progress_fn progress;
  void *progress_ud;
};

/* A one-line description of a step ("scale deployments.apps/web to 100"). */
void step_describe(const json_t *step, char *out, size_t cap);
/* Run one step; on failure err says what the cluster answered. */
int step_run(runner_t *r, const json_t *step, char *err, size_t cap);
/* The wait step ({resource, name|selector, until, timeout}). */
int wait_run(runner_t *r, const json_t *spec, char *err, size_t cap);

/* ---- processes: the watch agent and the ones we measure (agentproc.c, procstat.c) --- */

typedef struct proc_sample {
  double cpu_s; /* user + system CPU time so far */
  long rss_kib;
} proc_sample_t;

/* CPU time and resident memory of a process from /proc; RIPPLE_ENOENT when it
 * is gone. */
int procstat_read(pid_t pid, proc_sample_t *out);

typedef struct agentproc agentproc_t;

typedef struct agentproc_opts {
  const char *program; /* path of ripple-watch */
  const char *rundir;
  const char *resources; /* comma-separated */
  const char *namespace_;
  const char *kubeconfig, *context;
} agentproc_opts_t;

/* Start ripple-watch writing RUNDIR/changes.jsonl (its log to RUNDIR/agent.txt)
 * and wait until every resource is listed and watched. */
int agentproc_start(const agentproc_opts_t *o, uint32_t timeout_ms, agentproc_t **out, char *err,
                    size_t cap);
pid_t agentproc_pid(const agentproc_t *a);
/* Stop it cleanly (SIGTERM: it flushes and checkpoints) and free the handle;
 * RIPPLE_ESYS if it did not exit 0. */
int agentproc_stop(agentproc_t *a);

/* A thread sampling processes every interval into a CSV file:
 * time_ns,process,pid,cpu_s,rss_kib. */
typedef struct sampler sampler_t;
int sampler_start(const char *csv_path, int64_t interval_ns, sampler_t **out);
/* Add a process to sample under a name ("ripple-watch", "kube-apiserver"). */
int sampler_add(sampler_t *s, const char *name, pid_t pid);
/* Stop; *summary (may be NULL) is {name: {pid, cpu_s, rss_max_kib, rss_avg_kib}}
 * over the whole sampling, with the first and last samples' CPU difference. */
void sampler_stop(sampler_t *s, json_t **summary);

/* ---- the progress line (progress.c) ----------------------------------------------- */

/* On a terminal one line is rewritten in place; otherwise each finished step
 * is printed once. */
void progress_init(FILE *f);
void progress_step(const char *prefix, const char *what);
void progress_wait(void *ud, const char *what, const char *state);
void progress_done(const char *prefix, const char *what, double seconds, int ok, const char *err);

#endif
