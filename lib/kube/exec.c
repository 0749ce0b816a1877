/*
 * exec.c - client-go credential plugins (client.authentication.k8s.io/v1 and
 * v1beta1): run the command a kubeconfig's exec section names and read the
 * ExecCredential it prints (a bearer token, or a client certificate and key,
 * and when they expire).
 *
 * A plugin is a program we do not control: it gets /dev/null as stdin (we
 * have no terminal to lend it), its stdout is bounded, its stderr is kept
 * for the error message, and it is killed with its process group when it
 * does not finish in time (60 s; RIPPLE_KUBE_EXEC_TIMEOUT_MS overrides it,
 * for tests).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec.h"
#include "ripplex/sbuf.h"
#include "status.h"

#define OUT_MAX (1u << 20) /* an ExecCredential is a few KiB; more is a broken plugin */
#define ERR_TAIL 320       /* bytes of stderr quoted in the message */
#define TIMEOUT_MS 60000

static int64_t timeout_ns(void) {
  const char *s = getenv("RIPPLE_KUBE_EXEC_TIMEOUT_MS");
  char *end;
  long v = s ? strtol(s, &end, 10) : 0;
  if (!s || *end || v <= 0) v = TIMEOUT_MS;
  return (int64_t)v * 1000000;
}

static size_t name_len(const char *kv) { return strcspn(kv, "="); }

static int same_name(const char *a, const char *b) {
  size_t n = name_len(a);
  return n == name_len(b) && !memcmp(a, b, n);
}

/* The process environment plus the plugin's variables; a later entry with
 * the same name wins, as with Go's exec.Cmd. The strings are borrowed. */
static char **build_env(char **extra) {
  size_t n = 0, m = 0;
  while (environ && environ[n]) n++;
  while (extra && extra[m]) m++;
  char **v = calloc(n + m + 1, sizeof *v);
  if (!v) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    int shadowed = 0;
    for (size_t j = 0; j < m && !shadowed; j++) shadowed = same_name(environ[i], extra[j]);
    if (!shadowed) v[k++] = environ[i];
  }
  for (size_t i = 0; i < m; i++) {
    int shadowed = 0;
    for (size_t j = i + 1; j < m && !shadowed; j++) shadowed = same_name(extra[i], extra[j]);
    if (!shadowed) v[k++] = extra[i];
  }
  return v;
}

typedef struct proc {
  pid_t pid;
  int out, err; /* read ends, -1 once at EOF */
  sbuf_t stdout_buf;
  char tail[ERR_TAIL + 1];
  size_t tail_len;
  int status;
  int poll_errno;
} proc_t;

/* A pipe whose ends close on exec. macOS has no pipe2(2): pipe(2), then
 * FD_CLOEXEC (the release's macOS build of kubectl-ripple). */
static int pipe_cloexec(int fd[2]) {
#if defined(__APPLE__)
  if (pipe(fd) != 0) return -1;
  if (fcntl(fd[0], F_SETFD, FD_CLOEXEC) != 0 || fcntl(fd[1], F_SETFD, FD_CLOEXEC) != 0) {
    int err = errno;
    close(fd[0]), close(fd[1]);
    errno = err;
    return -1;
  }
  return 0;
#else
  return pipe2(fd, O_CLOEXEC);
#endif
}

/* Start the plugin in its own process group, so a timeout kills whatever it
 * started too. Returns 0 or an errno value. */
static int spawn(const kube_exec_t *e, proc_t *p) {
  int po[2], pe[2];
  if (pipe_cloexec(po) != 0) return errno;
  if (pipe_cloexec(pe) != 0) {
    int err = errno;
    close(po[0]), close(po[1]);
    return err;
  }
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, po[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
  posix_spawnattr_init(&at);
  sigset_t none, def;
  sigemptyset(&none);
  sigemptyset(&def);
  sigaddset(&def, SIGPIPE); /* the caller may ignore it; the plugin should not */
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &def);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setflags(&at,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  char **env = build_env(e->env);
  int rc = env ? posix_spawnp(&p->pid, e->command, &fa, &at, e->args, env) : ENOMEM;
  free(env);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(po[1]), close(pe[1]);
  if (rc != 0) {
    close(po[0]), close(pe[0]);
    return rc;
  }
  p->out = po[0], p->err = pe[0];
  return 0;
}

static void keep_tail(proc_t *p, const char *s, size_t n) {
  if (n >= ERR_TAIL) {
    memcpy(p->tail, s + n - ERR_TAIL, ERR_TAIL);
    p->tail_len = ERR_TAIL;
  } else {
    size_t keep = p->tail_len + n > ERR_TAIL ? ERR_TAIL - n : p->tail_len;
    memmove(p->tail, p->tail + p->tail_len - keep, keep);
    memcpy(p->tail + keep, s, n);
    p->tail_len = keep + n;
  }
  p->tail[p->tail_len] = '\0';
}

/* Read what is ready on one pipe; closes it at EOF. */
static void drain(proc_t *p, int *fd, int is_out) {
  char buf[8192];
  ssize_t n = read(*fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    close(*fd);
    *fd = -1;
  } else if (is_out) {
    sbuf_put(&p->stdout_buf, buf, (size_t)n);
  } else {
    keep_tail(p, buf, (size_t)n);
  }
}

enum { RUN_OK, RUN_TIMEOUT, RUN_TOOBIG, RUN_ERROR };

/* Collect output until the plugin exits (and its pipes are drained) or the
 * deadline passes. Output left behind by a grandchild that keeps the pipe
 * open is not waited for. */
static int collect(proc_t *p, int64_t deadline) {
  int reaped = 0;
  for (;;) {
    if (!reaped) {
      pid_t r = waitpid(p->pid, &p->status, WNOHANG);
      if (r == p->pid || (r < 0 && errno == ECHILD)) reaped = 1;
    }
    if (reaped && p->out < 0 && p->err < 0) return RUN_OK;
    if (p->stdout_buf.len > OUT_MAX || p->stdout_buf.oom) return RUN_TOOBIG;
    int64_t left = deadline - ripple_now_ns();
    if (left <= 0 && !reaped) return RUN_TIMEOUT;
    struct pollfd fds[2] = {{p->out, POLLIN, 0}, {p->err, POLLIN, 0}};
    int wait_ms = (p->out < 0 && p->err < 0) ? 10 : 200;
    if (left / 1000000 < wait_ms) wait_ms = (int)(left / 1000000) + 1;
    int n = poll(fds, 2, reaped ? 0 : wait_ms);
    if (n < 0 && errno != EINTR) return p->poll_errno = errno, RUN_ERROR;
    if (n == 0 && reaped) return RUN_OK; /* exited; a grandchild holds the pipe */
    if (p->out >= 0 && fds[0].revents) drain(p, &p->out, 1);
    if (p->err >= 0 && fds[1].revents) drain(p, &p->err, 0);
  }
}

/* The plugin's stderr on one line, for a message. */
static const char *tail_text(proc_t *p) {
  char *t = p->tail;
  for (char *c = t; *c; c++)
    if ((unsigned char)*c < 0x20) *c = ' ';
  while (*t == ' ') t++;
  size_t n = strlen(t);
  while (n && t[n - 1] == ' ') t[--n] = '\0';
  return t;
}

static int fail_exit(const kube_exec_t *e, proc_t *p, ripple_kube_status_t *st) {
  const char *t = tail_text(p);
  char what[64];
  if (WIFSIGNALED(p->status))
    snprintf(what, sizeof what, "was killed by signal %d", WTERMSIG(p->status));
  else
    snprintf(what, sizeof what, "exited with status %d", WEXITSTATUS(p->status));
  return kube_fail(st, RIPPLE_KUBE_ECRED, "exec plugin %s %s%s%s", e->command, what, *t ? ": " : "",
                   t);
}

/* The credential's fields, all optional until checked. */
typedef struct cred {
  const char *kind, *api, *token, *cert, *key, *exp;
} cred_t;

static const char *nonempty(json_t *o, const char *key) {
  const char *v = json_string_value(json_object_get(o, key));
  return v && *v ? v : NULL;
}

static int check_cred(const kube_exec_t *e, const cred_t *c, int64_t *exp,
                      ripple_kube_status_t *st) {
  const char *cmd = e->command;
  if (!c->kind || strcmp(c->kind, "ExecCredential") != 0)
    return kube_fail(st, RIPPLE_KUBE_ECRED, "exec plugin %s: its output is not an ExecCredential",
                     cmd);
  if (!c->api || strcmp(c->api, e->api_version) != 0)
    return kube_fail(
        st, RIPPLE_KUBE_ECRED,
        "exec plugin %s: it answered with apiVersion %.64s, the kubeconfig asks for %s", cmd,
        c->api ? c->api : "(none)", e->api_version);
  if (!c->token && !c->cert && !c->key)
    return kube_fail(st, RIPPLE_KUBE_ECRED,
                     "exec plugin %s: it returned neither a token nor a client certificate", cmd);
  if (!c->cert != !c->key)
    return kube_fail(st, RIPPLE_KUBE_ECRED,
                     "exec plugin %s: it returned a client %s without its %s", cmd,
                     c->cert ? "certificate" : "key", c->cert ? "key" : "certificate");
  if (c->exp && ripple_time_parse(c->exp, strlen(c->exp), exp) != RIPPLE_OK)
    return kube_fail(st, RIPPLE_KUBE_ECRED,
                     "exec plugin %s: expirationTimestamp \"%.64s\" is not RFC 3339", cmd, c->exp);
  return RIPPLE_OK;
}

/* Parse the ExecCredential. Outputs are written only on success. */
static int parse_cred(const kube_exec_t *e, proc_t *p, char **token, char **cert, char **key,
                      int64_t *expiry, ripple_kube_status_t *st) {
  json_error_t je;
  json_t *j = json_loadb(p->stdout_buf.p ? p->stdout_buf.p : "", p->stdout_buf.len, 0, &je);
  if (!j) {
    const char *t = tail_text(p);
    return kube_fail(st, RIPPLE_KUBE_ECRED, "exec plugin %s: its output is not JSON (%s)%s%s",
                     e->command, je.text, *t ? ": " : "", t);
  }
  json_t *s = json_object_get(j, "status");
  cred_t c = {nonempty(j, "kind"),          nonempty(j, "apiVersion"),
              nonempty(s, "token"),         nonempty(s, "clientCertificateData"),
              nonempty(s, "clientKeyData"), nonempty(s, "expirationTimestamp")};
  int64_t ns = 0;
  int rc = check_cred(e, &c, &ns, st);
  if (rc == RIPPLE_OK) {
    char *a = c.token ? strdup(c.token) : NULL, *b = c.cert ? strdup(c.cert) : NULL;
    char *k = c.key ? strdup(c.key) : NULL;
    if ((c.token && !a) || (c.cert && !b) || (c.key && !k)) {
      free(a), free(b), free(k);
      rc = kube_fail(st, RIPPLE_ENOMEM, "out of memory");
    } else {
      *token = a, *cert = b, *key = k, *expiry = ns;
    }
  }
  json_decref(j);
  return rc;
}

int kube_exec_run(const kube_exec_t *e, const char *server, char **token, char **cert_pem,
                  char **key_pem, int64_t *expiry_ns, ripple_kube_status_t *st) {
  (void)server; /* the cluster reaches the plugin in KUBERNETES_EXEC_INFO (config.c) */
  if (!e || !e->command || !e->args || !e->api_version || !token || !cert_pem || !key_pem ||
      !expiry_ns)
    return RIPPLE_EINVAL;
  if (e->interactive > 1)
    return kube_fail(st, RIPPLE_KUBE_ECRED, "exec plugin %s needs a terminal, and there is none",
                     e->command);
  proc_t p;
  memset(&p, 0, sizeof p);
  sbuf_init(&p.stdout_buf);
  int err = spawn(e, &p);
  if (err)
    return kube_fail(st, RIPPLE_KUBE_ECRED, "exec plugin %s: cannot run it: %s", e->command,
                     strerror(err));
  int64_t limit = timeout_ns();
  int how = collect(&p, ripple_now_ns() + limit);
  if (how != RUN_OK) {
    kill(-p.pid, SIGKILL);
    while (waitpid(p.pid, &p.status, 0) < 0 && errno == EINTR) {
    }
  }
  if (p.out >= 0) close(p.out);
  if (p.err >= 0) close(p.err);
  int rc;
  if (how == RUN_TIMEOUT)
    rc = kube_fail(st, RIPPLE_KUBE_ECRED, "exec plugin %s did not finish within %lld ms%s%s",
                   e->command, (long long)(limit / 1000000), p.tail_len ? ": " : "", tail_text(&p));
  else if (how == RUN_ERROR)
    rc = kube_fail(st, RIPPLE_KUBE_ECRED, "exec plugin %s: waiting for it failed: %s", e->command,
                   strerror(p.poll_errno));
  else if (how == RUN_TOOBIG)
    rc = kube_fail(st, RIPPLE_KUBE_ECRED, "exec plugin %s printed more than %u bytes", e->command,
                   OUT_MAX);
  else if (!WIFEXITED(p.status) || WEXITSTATUS(p.status) != 0)
    rc = fail_exit(e, &p, st);
  else
    rc = parse_cred(e, &p, token, cert_pem, key_pem, expiry_ns, st);
  sbuf_free(&p.stdout_buf);
  return rc;
}

/* ---- the exec section of a config ---------------------------------------- */

static void free_strv(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++) free(*p);
  free(v);
}

void kube_exec_free(kube_exec_t *e) {
  if (!e) return;
  free(e->command);
  free_strv(e->args);
  free_strv(e->env);
  free(e->api_version);
  free(e);
}

static char **strv_dup(char **v, int *oom) {
  if (!v) return NULL;
  size_t n = 0;
  while (v[n]) n++;
  char **d = calloc(n + 1, sizeof *d);
  if (!d) return *oom = 1, NULL;
  for (size_t i = 0; i < n; i++) {
    if (!(d[i] = strdup(v[i]))) {
      *oom = 1; /* d stays NULL-terminated here, so kube_exec_free frees it */
      break;
    }
  }
  return d;
}

int kube_exec_dup(const kube_exec_t *e, kube_exec_t **out) {
  *out = NULL;
  if (!e) return RIPPLE_OK;
  kube_exec_t *x = calloc(1, sizeof *x);
  if (!x) return RIPPLE_ENOMEM;
  int oom = 0;
  x->command = e->command ? strdup(e->command) : NULL;
  x->api_version = e->api_version ? strdup(e->api_version) : NULL;
  x->args = strv_dup(e->args, &oom);
  x->env = strv_dup(e->env, &oom);
  x->interactive = e->interactive;
  if (oom || (e->command && !x->command) || (e->api_version && !x->api_version)) {
    kube_exec_free(x);
    return RIPPLE_ENOMEM;
  }
  *out = x;
  return RIPPLE_OK;
}
