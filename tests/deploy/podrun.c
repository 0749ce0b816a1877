/*
 * podrun.c - a rendered Pod template's container run here as a kubelet would
 * (podrun.h): volumes materialised from the lab's Secrets, mounted in a private
 * mount namespace at the template's paths, the ServiceAccount token where client
 * libraries look for it, the template's user, a read-only root.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "podrun.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ripplex/b64.h"
#include "rw_lab.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define IMAGE_WORKDIR "/var/lib/ripple" /* the image's WORKDIR and HOME */
#define IMAGE_BIN "/usr/local/bin"      /* where the image has the programs */
#define IMAGE_SHARE "/usr/local/share/ripple"
#define MAX_MOUNTS 16
#define MAX_ARGS 64
#define MAX_ENV 32

typedef struct mnt {
  char src[256], dst[256];
  int ro;
} mnt_t;

typedef struct plan {
  mnt_t m[MAX_MOUNTS];
  int nm;
  char *argv[MAX_ARGS + 2];
  char *envp[MAX_ENV + 8];
  uid_t uid;
  gid_t gid, fs_group;
  char pool[32768]; /* the strings argv and envp point into */
  size_t used;
} plan_t;

/* A printf-formatted string kept in the plan's pool. */
static char *keep(plan_t *pl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *keep(plan_t *pl, const char *fmt, ...) {
  char *at = pl->pool + pl->used;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(at, sizeof pl->pool - pl->used, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof pl->pool - pl->used) fail_msg("podrun: arguments too long");
  pl->used += (size_t)n + 1;
  return at;
}

const json_t *podrun_template(const json_t *obj) {
  const json_t *t = lab_at(obj, "spec.template");
  return json_is_object(t) ? t : NULL;
}

/* mkdir -p */
static void mkdirs(const char *path, mode_t mode) {
  char p[256];
  snprintf(p, sizeof p, "%s", path);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = '\0';
    mkdir(p, mode);
    *s = '/';
  }
  if (mkdir(p, mode) != 0 && errno != EEXIST) fail_msg("mkdir %s: %s", p, strerror(errno));
}

/* A Secret volume's file, with the volume's defaultMode (or its item's mode). */
static void write_file(const char *dir, const char *name, const char *data, size_t len,
                       mode_t mode) {
  char path[320];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
    fail_msg("cannot write %s: %s", path, strerror(errno));
  if (chmod(path, mode) != 0) fail_msg("chmod %s: %s", path, strerror(errno));
}

/* A file mode from a volume's defaultMode or an item's mode m; dflt when m
 * is absent (the kubelet's 0644 for a volume). */
static mode_t mode_of(const json_t *m, mode_t dflt) {
  if (!m) return dflt;
  if (!json_is_integer(m) || json_integer_value(m) < 0 || json_integer_value(m) > 0777)
    fail_msg("podrun: a Secret volume's mode is not 0 to 0777");
  return (mode_t)json_integer_value(m);
}

/* Secret name's keys (items: only those, at their paths) into dir. */
static void secret_files(const podrun_opts_t *o, const char *name, const json_t *items,
                         const char *dir, mode_t mode) {
  char path[256];
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/secrets/%s", o->ns, name);
  json_t *s = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_request(o->kc, "GET", path, NULL, NULL, 0, &s, &st));
  const json_t *data = json_object_get(s, "data");
  const char *key;
  const json_t *v;
  json_object_foreach((json_t *)data, key, v) {
    const char *to = key;
    mode_t m = mode;
    if (json_array_size(items)) {
      to = NULL;
      size_t i;
      const json_t *it;
      json_array_foreach(items, i, it) {
        if (strcmp(json_string_value(json_object_get(it, "key")), key) != 0) continue;
        to = json_string_value(json_object_get(it, "path"));
        m = mode_of(json_object_get(it, "mode"), mode);
      }
      if (!to) continue;
    }
    char *raw = NULL;
    size_t n = 0;
    if (!json_is_string(v) ||
        b64_decode(json_string_value(v), json_string_length(v), &raw, &n) != RIPPLE_OK)
      fail_msg("podrun: Secret %s: data[%s] is not base64", name, key);
    write_file(dir, to, raw, n, m);
    free(raw);
  }
  json_decref(s);
}

/* Volume vol (from the template, or a claim template when claim) into dir. */
static void volume_files(const podrun_opts_t *o, const json_t *vol, const char *dir) {
  const json_t *sec = json_object_get(vol, "secret");
  const json_t *proj = json_object_get(vol, "projected");
  if (sec) {
    secret_files(o, lab_str(sec, "secretName"), json_object_get(sec, "items"), dir,
                 mode_of(json_object_get(sec, "defaultMode"), 0644));
  } else if (proj) {
    size_t i;
    const json_t *src;
    json_array_foreach(json_object_get(proj, "sources"), i, src) {
      const json_t *ss = json_object_get(src, "secret");
      if (!ss) fail_msg("podrun: a projected source other than a Secret");
      secret_files(o, lab_str(ss, "name"), json_object_get(ss, "items"), dir,
                   mode_of(json_object_get(proj, "defaultMode"), 0644));
    }
  } else if (!json_object_get(vol, "emptyDir")) {
    fail_msg("podrun: volume %s is of a kind podrun does not know", lab_str(vol, "name"));
  }
}

static const json_t *find_named(const json_t *arr, const char *name) {
  size_t i;
  const json_t *x;
  json_array_foreach(arr, i, x) {
    if (!strcmp(lab_str(x, "name") ? lab_str(x, "name") : "", name)) return x;
  }
  return NULL;
}

static int has_claim(const json_t *obj, const char *name) {
  size_t i;
  const json_t *x;
  json_array_foreach(lab_at(obj, "spec.volumeClaimTemplates"), i, x) {
    const char *n = lab_str(x, "metadata.name");
    if (n && !strcmp(n, name)) return 1;
  }
  return 0;
}

static void add_mount(plan_t *pl, const char *src, const char *dst, int ro) {
  if (pl->nm == MAX_MOUNTS) fail_msg("podrun: too many mounts");
  mnt_t *m = &pl->m[pl->nm++];
  /* A path cut short would mount the wrong directory: refuse it instead. */
  if (strlen(src) >= sizeof m->src || strlen(dst) >= sizeof m->dst)
    fail_msg("podrun: mount path too long: %s -> %s", src, dst);
  memcpy(m->src, src, strlen(src) + 1);
  memcpy(m->dst, dst, strlen(dst) + 1);
  m->ro = ro;
}

/* The volume's directory and the files in it (volumes here are flat), as the
 * kubelet gives them to the Pod's fsGroup. */
static void chown_tree(const char *dir, uid_t uid, gid_t gid) {
  if (chown(dir, uid, gid) != 0) fail_msg("podrun: chown %s: %s", dir, strerror(errno));
  DIR *d = opendir(dir);
  if (!d) {
    fail_msg("podrun: %s: %s", dir, strerror(errno));
    return;
  }
  for (struct dirent *e; (e = readdir(d));) {
    char path[512];
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (chown(path, uid, gid) != 0) fail_msg("podrun: chown %s: %s", path, strerror(errno));
  }
  closedir(d);
}

/* Every volumeMount of container c, materialised under p->dir. */
static void plan_mounts(podrun_t *p, plan_t *pl, const json_t *obj, const json_t *c,
                        const podrun_opts_t *o) {
  const json_t *spec = lab_at(podrun_template(obj), "spec");
  size_t i;
  const json_t *vm;
  json_array_foreach(json_object_get(c, "volumeMounts"), i, vm) {
    const char *name = lab_str(vm, "name");
    char dir[256];
    const json_t *vol = find_named(json_object_get(spec, "volumes"), name);
    if (!vol && !has_claim(obj, name)) fail_msg("podrun: volumeMount %s names no volume", name);
    if (vol || !o->data_dir) {
      snprintf(dir, sizeof dir, "%s/vol-%s", p->dir, name);
      mkdirs(dir, 0755);
      if (vol) volume_files(o, vol, dir);
    } else {
      snprintf(dir, sizeof dir, "%s", o->data_dir);
      mkdirs(dir, 0755);
    }
    chown_tree(dir, pl->uid, pl->fs_group);
    json_t *ro = json_object_get(vm, "readOnly");
    add_mount(pl, dir, lab_str(vm, "mountPath"), json_is_true(ro));
  }
}

/* The ServiceAccount's token, the cluster's CA and the namespace, as a Pod gets them. */
static void plan_token(podrun_t *p, plan_t *pl, const json_t *spec, const podrun_opts_t *o) {
  if (json_is_false(json_object_get(spec, "automountServiceAccountToken"))) return;
  const char *sa = lab_str(spec, "serviceAccountName");
  char path[256], dir[256];
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/serviceaccounts/%s/token", o->ns,
           sa ? sa : "default");
  json_t *tr = NULL;
  ripple_kube_status_t st;
  const char *body =
      "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenRequest\","
      "\"spec\":{\"expirationSeconds\":3600}}";
  LAB_OK(st, ripple_kube_request(o->kc, "POST", path, "application/json", body, strlen(body), &tr,
                                 &st));
  const char *token = lab_str(tr, "status.token");
  if (!token) {
    fail_msg("podrun: the TokenRequest for %s gave no token", sa);
    return;
  }
  snprintf(dir, sizeof dir, "%s/serviceaccount", p->dir);
  mkdirs(dir, 0755);
  write_file(dir, "token", token, strlen(token), 0644);
  write_file(dir, "namespace", o->ns, strlen(o->ns), 0644);
  FILE *f = o->ca_file ? fopen(o->ca_file, "rb") : NULL;
  if (!f) {
    fail_msg("podrun: cannot read the cluster's CA (%s)", o->ca_file ? o->ca_file : "unset");
    return;
  }
  char ca[16384];
  size_t n = fread(ca, 1, sizeof ca, f);
  fclose(f);
  write_file(dir, "ca.crt", ca, n, 0644); /* the projected token volume's own mode */
  json_decref(tr);
  add_mount(pl, dir, SA_DIR, 1);
}

/* $(VAR) in an argument, from the container's own environment (as the kubelet
 * expands it); an unknown $(VAR) stays as it is. */
static char *expand(plan_t *pl, const char *arg, char *const *envp) {
  char out[1024];
  size_t n = 0;
  for (const char *s = arg; *s && n + 1 < sizeof out;) {
    const char *end = s[0] == '$' && s[1] == '(' ? strchr(s, ')') : NULL;
    const char *val = NULL;
    for (int i = 0; end && envp[i]; i++) {
      size_t k = (size_t)(end - s - 2);
      if (!strncmp(envp[i], s + 2, k) && envp[i][k] == '=') val = envp[i] + k + 1;
    }
    if (val) {
      n += (size_t)snprintf(out + n, sizeof out - n, "%s", val);
      s = end + 1;
    } else {
      out[n++] = *s++;
    }
  }
  out[n < sizeof out ? n : sizeof out - 1] = '\0';
  return keep(pl, "%s", out);
}

static void plan_env(plan_t *pl, const json_t *c, const podrun_opts_t *o) {
  int n = 0;
  size_t i;
  const json_t *e;
  json_array_foreach(json_object_get(c, "env"), i, e) {
    if (n >= MAX_ENV) fail_msg("podrun: too many env entries");
    /* The Pod's own address: this "Pod" runs on loopback. */
    const char *field = lab_str(e, "valueFrom.fieldRef.fieldPath");
    if (field && !strcmp(field, "status.podIP")) {
      pl->envp[n++] = keep(pl, "%s=127.0.0.1", lab_str(e, "name"));
      continue;
    }
    if (!json_object_get(e, "value"))
      fail_msg("podrun: env %s is not a plain value", lab_str(e, "name"));
    pl->envp[n++] = keep(pl, "%s=%s", lab_str(e, "name"), lab_str(e, "value"));
  }
  pl->envp[n++] = keep(pl, "KUBERNETES_SERVICE_HOST=%s", o->api_host);
  pl->envp[n++] = keep(pl, "KUBERNETES_SERVICE_PORT=%s", o->api_port);
  /* The image's own (deploy/image/Containerfile: ENV HOME), and the runtime's PATH. */
  pl->envp[n++] = keep(pl, "HOME=%s", IMAGE_WORKDIR);
  pl->envp[n++] = keep(pl, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  pl->envp[n] = NULL;
}

static void plan_args(plan_t *pl, const json_t *c, const podrun_opts_t *o) {
  if (json_object_get(c, "command"))
    fail_msg("podrun: a command other than the image's entry point");
  int n = 0;
  pl->argv[n++] = keep(pl, "%s/ripple", IMAGE_BIN); /* the image's ENTRYPOINT */
  size_t i;
  const json_t *a;
  json_array_foreach(json_object_get(c, "args"), i, a) {
    if (n > MAX_ARGS) fail_msg("podrun: too many arguments");
    pl->argv[n++] = expand(pl, json_string_value(a), pl->envp);
  }
  pl->argv[n] = NULL;
}

static long num_or(const json_t *j, const char *path, long dflt) {
  long long v = lab_int(j, path);
  return v < 0 ? dflt : (long)v;
}

/* In the child: the mounts, a read-only root, the user; then exec. Only
 * async-signal-safe calls and _exit on failure (the message goes to the log). */
static void child(const plan_t *pl) {
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
    perror("podrun: unshare");
    _exit(125);
  }
  for (int i = 0; i < pl->nm; i++) {
    if (mount(pl->m[i].src, pl->m[i].dst, NULL, MS_BIND, NULL) != 0 ||
        (pl->m[i].ro &&
         mount(NULL, pl->m[i].dst, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0)) {
      perror(pl->m[i].dst);
      _exit(125);
    }
  }
  /* readOnlyRootFilesystem: the root's mount, in this namespace only. */
  if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0) {
    perror("podrun: read-only root");
    _exit(125);
  }
  gid_t groups[1] = {pl->fs_group};
  if (setgroups(1, groups) != 0 || setgid(pl->gid) != 0 || setuid(pl->uid) != 0 ||
      prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    perror("podrun: user");
    _exit(125);
  }
  if (chdir(IMAGE_WORKDIR) != 0 && chdir("/") != 0) _exit(125);
  execve(pl->argv[0], pl->argv, pl->envp);
  perror(pl->argv[0]);
  _exit(127);
}

void podrun_start(podrun_t *p, const json_t *obj, const podrun_opts_t *o) {
  memset(p, 0, sizeof *p);
  const json_t *spec = lab_at(podrun_template(obj), "spec");
  const json_t *c = json_array_get(json_object_get(spec, "containers"), 0);
  if (!c) fail_msg("podrun: %s has no container", lab_str(obj, "metadata.name"));
  snprintf(p->dir, sizeof p->dir, "/var/tmp/ripple-podrun-XXXXXX");
  if (!mkdtemp(p->dir)) fail_msg("mkdtemp: %s", strerror(errno));
  chmod(p->dir, 0755);
  snprintf(p->log, sizeof p->log, "%s/log", p->dir);
  plan_t pl = {0};
  const json_t *psc = json_object_get(spec, "securityContext");
  pl.uid = (uid_t)num_or(psc, "runAsUser", 0);
  pl.gid = (gid_t)num_or(psc, "runAsGroup", 0);
  pl.fs_group = (gid_t)num_or(psc, "fsGroup", (long)pl.gid);
  if (json_is_true(lab_at(psc, "runAsNonRoot")) && pl.uid == 0)
    fail_msg("podrun: runAsNonRoot without a runAsUser");
  /* The build's programs (and the dashboard beside them) where the image has
   * them, mounted first: a volume on /tmp must not hide a build tree under it. */
  char share[300];
  snprintf(share, sizeof share, "%s/../share/ripple", o->bin_dir);
  add_mount(&pl, o->bin_dir, IMAGE_BIN, 1);
  if (access(share, R_OK) == 0) add_mount(&pl, share, IMAGE_SHARE, 1);
  plan_mounts(p, &pl, obj, c, o);
  plan_token(p, &pl, spec, o);
  for (int i = 0; i < pl.nm; i++) mkdirs(pl.m[i].dst, 0755);
  plan_env(&pl, c, o);
  plan_args(&pl, c, o);
  int fd = open(p->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_msg("podrun: cannot open %s", p->log);
  p->pid = fork();
  if (p->pid == 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    child(&pl);
  }
  if (p->pid < 0) fail_msg("fork: %s", strerror(errno));
  close(fd);
}

int podrun_wait(podrun_t *p, int timeout_ms) {
  if (p->pid <= 0) return -1;
  for (int waited = 0;; waited += 50) {
    int status;
    pid_t r = waitpid(p->pid, &status, WNOHANG);
    if (r == p->pid) {
      p->pid = 0;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    if (waited >= timeout_ms) {
      kill(p->pid, SIGKILL);
      waitpid(p->pid, &status, 0);
      p->pid = 0;
      return -1;
    }
    nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
  }
}

int podrun_stop(podrun_t *p) {
  if (p->pid <= 0) return -1;
  kill(p->pid, SIGTERM);
  return podrun_wait(p, 30000);
}

void podrun_dump(const podrun_t *p) {
  FILE *f = fopen(p->log, "r");
  if (!f) return;
  char line[1024];
  fprintf(stderr, "---- %s\n", p->log);
  while (fgets(line, sizeof line, f)) fputs(line, stderr);
  fclose(f);
}
