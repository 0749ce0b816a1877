/*
 * config.c - configuration the way kubectl reads it: kubeconfig files
 * ($KUBECONFIG merged with client-go's rules, an explicit path, or
 * ~/.kube/config), one context resolved into a self-contained
 * ripple_kube_config_t, or the in-cluster service account.
 *
 * A kubeconfig is outside input: a YAML or base64 error, a field of the
 * wrong type or a missing file gives RIPPLE_KUBE_ECONFIG and a message that
 * names the file and the field, never a crash. Fields we do not know are
 * ignored, as kubectl ignores them. Files are read by yjson (ripple's one
 * YAML reader, which bounds aliases and nesting) and walked as JSON.
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_util.h"
#include "kube_internal.h"
#include "ripplex/b64.h"
#include "ripplex/sbuf.h"
#include "ripplex/yjson.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define EXEC_V1 "client.authentication.k8s.io/v1"
#define EXEC_V1BETA1 "client.authentication.k8s.io/v1beta1"
#define EXEC_EXT_NODES 10000 /* the exec extension goes into one environment variable */

typedef struct kfile {
  char *path; /* absolute, as client-go makes it before resolving relative paths */
  char *dir;
  json_t *docs; /* the file's documents as yjson reads them; kubectl uses the first */
} kfile_t;

/* One named cluster, user or context: the mapping under its cluster:/user:/
 * context: key (NULL when absent or null), and the file that defined it. */
typedef struct kentry {
  const char *name;
  kfile_t *file;
  json_t *node;
} kentry_t;

typedef struct klist {
  kentry_t *v;
  size_t n, cap;
} klist_t;

typedef struct loader {
  kfile_t *files;
  size_t nfiles;
  klist_t clusters, users, contexts;
  const char *current; /* current-context of the first file that sets it */
  kfile_t *scope_file; /* what the field helpers are reading */
  char scope[512];     /* "kubeconfig /x: user \"bob\"", the prefix of messages */
  char *err;
  size_t errcap;
  json_t *exec_ext; /* the cluster's client.authentication.k8s.io/exec extension */
  json_t *texts;    /* numbers and booleans read as text, kept as long as the loader */
} loader_t;

/* ---- errors --------------------------------------------------------------- */

static int lfail(loader_t *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int lfail(loader_t *ld, const char *fmt, ...) {
  if (!ld->err || !ld->errcap) return RIPPLE_KUBE_ECONFIG;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ld->err, ld->errcap, fmt, ap);
  va_end(ap);
  return RIPPLE_KUBE_ECONFIG;
}

/* A message about the entry being read, prefixed with its scope. */
static int sfail(loader_t *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sfail(loader_t *ld, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return lfail(ld, "%s: %s", ld->scope, msg);
}

static void set_scope(loader_t *ld, const char *kind, const kentry_t *e) {
  ld->scope_file = e->file;
  snprintf(ld->scope, sizeof ld->scope, "kubeconfig %s: %s \"%s\"", e->file->path, kind, e->name);
}

/* ---- fields ------------------------------------------------------------------ */

/* The value of key in a mapping; NULL when absent or null, which Go's zero
 * value makes the same thing (and when map is not a mapping). */
static json_t *yget(const json_t *map, const char *key) {
  json_t *v = json_object_get(map, key);
  return json_is_null(v) ? NULL : v;
}

static int yscalar(const json_t *v) { return v && !json_is_object(v) && !json_is_array(v); }

/* The text of a scalar (kube_json_text), valid as long as the loader: yjson
 * types plain scalars, the fields here are strings. *out NULL for a mapping
 * or a list; RIPPLE_ENOMEM. */
static int ytext(loader_t *ld, const json_t *v, const char **out) {
  char buf[YJSON_TEXT_MAX];
  const char *t = yjson_text(v, buf);
  *out = t;
  if (t != buf) return RIPPLE_OK;
  json_t *s = json_string(buf);
  if (!ld->texts) ld->texts = json_array();
  if (!s || json_array_append_new(ld->texts, s) != 0) return RIPPLE_ENOMEM;
  *out = json_string_value(s);
  return RIPPLE_OK;
}

/* A string field of the entry in scope; *out NULL when absent, null or "",
 * which Go's zero value makes the same thing. */
static int ystr(loader_t *ld, const json_t *map, const char *key, const char **out) {
  *out = NULL;
  json_t *n = yget(map, key);
  if (!n) return RIPPLE_OK;
  if (!yscalar(n)) return sfail(ld, "%s: expected a string", key);
  const char *v;
  if (ytext(ld, n, &v) != RIPPLE_OK) return sfail(ld, "%s: out of memory", key);
  *out = *v ? v : NULL;
  return RIPPLE_OK;
}

/* YAML 1.1 booleans, as the Go YAML library kubectl uses accepts them. */
static int ybool(loader_t *ld, const json_t *map, const char *key, int *out) {
  json_t *n = yget(map, key);
  if (json_is_boolean(n)) return *out = json_is_true(n), RIPPLE_OK;
  const char *v;
  int rc = ystr(ld, map, key, &v);
  if (rc != RIPPLE_OK || !v) {
    *out = 0;
    return rc;
  }
  static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
  static const char *const no[] = {"false", "False", "FALSE", "no", "No",
                                   "NO",    "off",   "Off",   "OFF"};
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
    if (!strcmp(v, yes[i])) return *out = 1, RIPPLE_OK;
    if (!strcmp(v, no[i])) return *out = 0, RIPPLE_OK;
  }
  return sfail(ld, "%s: expected true or false, not \"%s\"", key, v);
}

/* A []byte field (base64 as client-go takes it: padded, wrapped over lines
 * or not) or the file named by its path twin. */
static int yblob(loader_t *ld, const json_t *map, const char *datakey, const char *filekey,
                 char **out) {
  const char *data, *path;
  int rc = ystr(ld, map, datakey, &data);
  if (rc == RIPPLE_OK) rc = ystr(ld, map, filekey, &path);
  if (rc != RIPPLE_OK) return rc;
  if (data) { /* client-go: the data wins over the file */
    rc = b64_decode_lines(data, strlen(data), out, NULL);
    if (rc == RIPPLE_ENOMEM) return sfail(ld, "%s: out of memory", datakey);
    if (rc != RIPPLE_OK) return sfail(ld, "%s: not valid base64", datakey);
    return RIPPLE_OK;
  }
  if (!path) return RIPPLE_OK;
  char *full = kube_path_join(ld->scope_file->dir, path);
  if (!full) return sfail(ld, "%s: out of memory", filekey);
  int e = kube_read_file(full, out, NULL) == RIPPLE_OK ? 0 : errno;
  if (e) rc = sfail(ld, "%s %s: %s", filekey, full, strerror(e));
  free(full);
  return rc;
}

/* ---- reading files ---------------------------------------------------------- */

static int klist_add(klist_t *l, const char *name, kfile_t *f, json_t *node) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 8;
    kentry_t *v = realloc(l->v, cap * sizeof *v);
    if (!v) return RIPPLE_ENOMEM;
    l->v = v, l->cap = cap;
  }
  l->v[l->n++] = (kentry_t){name, f, node};
  return RIPPLE_OK;
}

static kentry_t *klist_find(const klist_t *l, size_t from, const char *name) {
  for (size_t i = from; i < l->n; i++)
    if (!strcmp(l->v[i].name, name)) return &l->v[i];
  return NULL;
}

/* clusters:, users: or contexts: of one file. The first file to define a name
 * wins; a name twice in one file is an error, as in client-go. */
static int collect(loader_t *ld, kfile_t *f, const json_t *root, const char *listkey,
                   const char *itemkey, klist_t *l) {
  json_t *seq = yget(root, listkey);
  if (!seq) return RIPPLE_OK;
  if (!json_is_array(seq)) return lfail(ld, "kubeconfig %s: %s: expected a list", f->path, listkey);
  size_t first = l->n, i;
  json_t *item;
  json_array_foreach(seq, i, item) {
    json_t *name = yget(item, "name");
    const char *nm = NULL;
    if (json_is_object(item) && ytext(ld, name, &nm) != RIPPLE_OK)
      return lfail(ld, "out of memory");
    if (!nm)
      return lfail(ld, "kubeconfig %s: %s[%zu]: expected a mapping with a name", f->path, listkey,
                   i);
    json_t *body = yget(item, itemkey);
    if (body && !json_is_object(body))
      return lfail(ld, "kubeconfig %s: %s[%zu] \"%s\": %s: expected a mapping", f->path, listkey, i,
                   nm, itemkey);
    if (klist_find(l, first, nm))
      return lfail(ld, "kubeconfig %s: %s: \"%s\" is defined twice", f->path, listkey, nm);
    if (klist_find(l, 0, nm)) continue;
    if (klist_add(l, nm, f, body) != RIPPLE_OK) return lfail(ld, "out of memory");
  }
  return RIPPLE_OK;
}

static int parse_file(loader_t *ld, kfile_t *f, const char *text, size_t len) {
  char msg[256] = "";
  int rc = yjson_parse(text, len, &f->docs, msg, sizeof msg);
  if (rc == RIPPLE_ENOMEM) return lfail(ld, "kubeconfig %s: out of memory", f->path);
  if (rc != RIPPLE_OK) return lfail(ld, "kubeconfig %s: %s", f->path, msg);
  /* kubectl reads the first document; an empty file is an empty config */
  json_t *root = json_array_get(f->docs, 0);
  if (!root) return RIPPLE_OK;
  if (!json_is_object(root))
    return lfail(ld, "kubeconfig %s: expected a mapping (apiVersion, clusters, ...)", f->path);
  rc = collect(ld, f, root, "clusters", "cluster", &ld->clusters);
  if (rc == RIPPLE_OK) rc = collect(ld, f, root, "users", "user", &ld->users);
  if (rc == RIPPLE_OK) rc = collect(ld, f, root, "contexts", "context", &ld->contexts);
  if (rc != RIPPLE_OK) return rc;
  json_t *cur = yget(root, "current-context");
  if (cur && !yscalar(cur))
    return lfail(ld, "kubeconfig %s: current-context: expected a string", f->path);
  const char *v;
  if (!cur || ld->current) return RIPPLE_OK;
  if (ytext(ld, cur, &v) != RIPPLE_OK) return lfail(ld, "out of memory");
  if (*v) ld->current = v;
  return RIPPLE_OK;
}

static char *abs_path(const char *p) {
  if (p[0] == '/') return strdup(p);
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return strdup(p);
  return kube_path_join(cwd, p);
}

/* Load one file. A missing file sets *missing instead of failing when the
 * caller tolerates it ($KUBECONFIG entries, as kubectl skips them). */
static int load_file(loader_t *ld, const char *path, int tolerate_missing, int *missing) {
  *missing = 0;
  kfile_t *f = &ld->files[ld->nfiles];
  memset(f, 0, sizeof *f);
  if (!(f->path = abs_path(path))) return lfail(ld, "out of memory");
  ld->nfiles++;
  char *slash = strrchr(f->path, '/');
  f->dir = slash == f->path ? strdup("/") : strndup(f->path, (size_t)(slash - f->path));
  if (!f->dir) return lfail(ld, "out of memory");
  char *text;
  size_t len;
  int e = kube_read_file(f->path, &text, &len) == RIPPLE_OK ? 0 : errno;
  if (e == ENOENT && tolerate_missing) {
    *missing = 1;
    return RIPPLE_OK;
  }
  if (e) return lfail(ld, "kubeconfig %s: %s", f->path, strerror(e));
  int rc = parse_file(ld, f, text, len);
  free(text);
  return rc;
}

/* A ':'-separated list of files, read in order. */
static int load_list(loader_t *ld, const char *list, int tolerate_missing, size_t *found) {
  size_t n = 1;
  for (const char *p = list; *p; p++) n += *p == ':';
  ld->files = calloc(n, sizeof *ld->files);
  if (!ld->files) return lfail(ld, "out of memory");
  *found = 0;
  const char *p = list;
  for (;;) {
    size_t len = strcspn(p, ":");
    if (len) {
      char *path = strndup(p, len);
      if (!path) return lfail(ld, "out of memory");
      int missing;
      int rc = load_file(ld, path, tolerate_missing, &missing);
      free(path);
      if (rc != RIPPLE_OK) return rc;
      *found += !missing;
    }
    if (!p[len]) break;
    p += len + 1;
  }
  return RIPPLE_OK;
}

/* ---- resolving one context ---------------------------------------------------- */

static int set_str(loader_t *ld, const json_t *map, const char *key, char **dst) {
  const char *v;
  int rc = ystr(ld, map, key, &v);
  if (rc != RIPPLE_OK || !v) return rc;
  if (!(*dst = strdup(v))) return sfail(ld, "out of memory");
  return RIPPLE_OK;
}

static int normalize_server(loader_t *ld, ripple_kube_config_t *c) {
  if (!c->server) return sfail(ld, "no server");
  size_t n = strlen(c->server);
  while (n > 1 && c->server[n - 1] == '/') c->server[--n] = '\0';
  if (strstr(c->server, "://")) return RIPPLE_OK;
  /* client-go takes a bare host:port to mean https */
  sbuf_t b;
  sbuf_init(&b);
  sbuf_printf(&b, "https://%s", c->server);
  char *s;
  if (sbuf_take(&b, &s, NULL) != RIPPLE_OK) {
    sbuf_free(&b);
    return sfail(ld, "out of memory");
  }
  free(c->server);
  c->server = s;
  return RIPPLE_OK;
}

static int load_cluster(loader_t *ld, const kentry_t *e, ripple_kube_config_t *c) {
  set_scope(ld, "cluster", e);
  const json_t *m = e->node;
  int rc = set_str(ld, m, "server", &c->server);
  if (rc == RIPPLE_OK) rc = normalize_server(ld, c);
  if (rc == RIPPLE_OK)
    rc = yblob(ld, m, "certificate-authority-data", "certificate-authority", &c->ca_pem);
  if (rc == RIPPLE_OK) rc = ybool(ld, m, "insecure-skip-tls-verify", &c->insecure);
  if (rc == RIPPLE_OK) rc = set_str(ld, m, "tls-server-name", &c->tls_server_name);
  if (rc == RIPPLE_OK) rc = set_str(ld, m, "proxy-url", &c->proxy_url);
  if (rc != RIPPLE_OK) return rc;
  if (c->insecure && c->ca_pem)
    return sfail(ld, "insecure-skip-tls-verify with a certificate-authority: choose one");
  /* extensions that are not a list, or not ours, are ignored like unknown fields */
  size_t i;
  json_t *x;
  json_array_foreach(yget(m, "extensions"), i, x) {
    const char *nm = json_string_value(yget(x, "name"));
    if (nm && !strcmp(nm, "client.authentication.k8s.io/exec")) ld->exec_ext = yget(x, "extension");
  }
  return RIPPLE_OK;
}

/* Defined in the exec part below. */
static int load_exec(loader_t *ld, const json_t *m, ripple_kube_config_t *c);

static int load_token_file(loader_t *ld, const json_t *m, ripple_kube_config_t *c) {
  const char *tf;
  int rc = ystr(ld, m, "tokenFile", &tf);
  if (rc != RIPPLE_OK || !tf) return rc;
  if (!(c->token_file = kube_path_join(ld->scope_file->dir, tf))) return sfail(ld, "out of memory");
  /* Read now so a typo is reported here, not at the first request. */
  char *text;
  int e = kube_read_file(c->token_file, &text, NULL) == RIPPLE_OK ? 0 : errno;
  if (e) return sfail(ld, "tokenFile %s: %s", c->token_file, strerror(e));
  free(text);
  return RIPPLE_OK;
}

static int load_user(loader_t *ld, const kentry_t *e, ripple_kube_config_t *c) {
  set_scope(ld, "user", e);
  const json_t *m = e->node;
  int rc = yblob(ld, m, "client-certificate-data", "client-certificate", &c->cert_pem);
  if (rc == RIPPLE_OK) rc = yblob(ld, m, "client-key-data", "client-key", &c->key_pem);
  if (rc == RIPPLE_OK) rc = set_str(ld, m, "token", &c->token);
  if (rc == RIPPLE_OK) rc = load_token_file(ld, m, c);
  if (rc == RIPPLE_OK) rc = set_str(ld, m, "username", &c->username);
  if (rc == RIPPLE_OK) rc = set_str(ld, m, "password", &c->password);
  if (rc == RIPPLE_OK) rc = load_exec(ld, m, c);
  if (rc != RIPPLE_OK) return rc;
  if (!c->cert_pem != !c->key_pem)
    return sfail(ld, "%s without %s", c->cert_pem ? "client-certificate" : "client-key",
                 c->cert_pem ? "client-key" : "client-certificate");
  if ((c->token || c->token_file) && c->username)
    return sfail(ld, "token and username/password: only one authentication method is allowed");
  if (yget(m, "auth-provider") && !c->token && !c->token_file && !c->exec && !c->cert_pem)
    return sfail(ld, "auth-provider is not supported: use an exec plugin instead");
  return RIPPLE_OK;
}

static int load_context(loader_t *ld, const char *name, ripple_kube_config_t *c, const char *ns) {
  if (!name)
    return lfail(ld, "kubeconfig %s: no current-context, and no context was given",
                 ld->files[0].path);
  kentry_t *x = klist_find(&ld->contexts, 0, name);
  if (!x)
    return lfail(ld, "kubeconfig: context \"%s\" is not defined in %s%s", name, ld->files[0].path,
                 ld->nfiles > 1 ? " or the files after it" : "");
  set_scope(ld, "context", x);
  const char *cl, *us, *cns;
  int rc = ystr(ld, x->node, "cluster", &cl);
  if (rc == RIPPLE_OK) rc = ystr(ld, x->node, "user", &us);
  if (rc == RIPPLE_OK) rc = ystr(ld, x->node, "namespace", &cns);
  if (rc != RIPPLE_OK) return rc;
  if (!cl) return sfail(ld, "no cluster");
  kentry_t *ce = klist_find(&ld->clusters, 0, cl);
  if (!ce) return sfail(ld, "cluster \"%s\" is not defined", cl);
  kentry_t *ue = us ? klist_find(&ld->users, 0, us) : NULL;
  if (us && !ue) return sfail(ld, "user \"%s\" is not defined", us);
  c->context = strdup(name);
  c->namespace_ = strdup(ns ? ns : cns ? cns : "default");
  if (!c->context || !c->namespace_) return lfail(ld, "out of memory");
  rc = load_cluster(ld, ce, c);
  if (rc == RIPPLE_OK && ue) rc = load_user(ld, ue, c);
  return rc;
}

/* ---- exec plugins ---------------------------------------------------------------- */

static char **strv_new(size_t n) { return calloc(n + 1, sizeof(char *)); }

static int exec_args(loader_t *ld, const json_t *m, kube_exec_t *x) {
  json_t *a = yget(m, "args");
  if (a && !json_is_array(a)) return sfail(ld, "exec: args: expected a list");
  size_t n = json_array_size(a);
  if (!(x->args = strv_new(n + 1)) || !(x->args[0] = strdup(x->command)))
    return sfail(ld, "out of memory");
  for (size_t i = 0; i < n; i++) {
    char buf[YJSON_TEXT_MAX];
    const char *v = yjson_text(json_array_get(a, i), buf); /* a null item is "" */
    if (!v) return sfail(ld, "exec: args[%zu]: expected a string", i);
    if (!(x->args[i + 1] = strdup(v))) return sfail(ld, "out of memory");
  }
  return RIPPLE_OK;
}

static int exec_env(loader_t *ld, const json_t *m, kube_exec_t *x) {
  json_t *a = yget(m, "env");
  if (a && !json_is_array(a)) return sfail(ld, "exec: env: expected a list");
  size_t n = json_array_size(a);
  /* one more slot for KUBERNETES_EXEC_INFO */
  if (!(x->env = strv_new(n + 1))) return sfail(ld, "out of memory");
  for (size_t i = 0; i < n; i++) {
    const json_t *v = json_array_get(a, i);
    const char *name, *value;
    if (!json_is_object(v)) return sfail(ld, "exec: env[%zu]: expected a mapping", i);
    int rc = ystr(ld, v, "name", &name);
    if (rc == RIPPLE_OK) rc = ystr(ld, v, "value", &value);
    if (rc != RIPPLE_OK) return rc;
    if (!name || strchr(name, '=')) return sfail(ld, "exec: env[%zu]: bad or missing name", i);
    sbuf_t b;
    sbuf_init(&b);
    sbuf_printf(&b, "%s=%s", name, value ? value : "");
    if (sbuf_take(&b, &x->env[i], NULL) != RIPPLE_OK) {
      sbuf_free(&b);
      return sfail(ld, "out of memory");
    }
  }
  return RIPPLE_OK;
}

static int exec_mode(loader_t *ld, const json_t *m, kube_exec_t *x) {
  const char *mode;
  int rc = ystr(ld, m, "interactiveMode", &mode);
  if (rc != RIPPLE_OK) return rc;
  if (!mode) {
    if (!strcmp(x->api_version, EXEC_V1))
      return sfail(ld, "exec: interactiveMode is required with %s (Never or IfAvailable)", EXEC_V1);
    mode = "IfAvailable";
  }
  if (!strcmp(mode, "Never"))
    x->interactive = 0;
  else if (!strcmp(mode, "IfAvailable"))
    x->interactive = 1;
  else if (!strcmp(mode, "Always"))
    return sfail(ld,
                 "exec: interactiveMode Always needs a terminal, and ripple has none: use "
                 "Never or IfAvailable");
  else
    return sfail(ld, "exec: interactiveMode \"%s\": expected Never, IfAvailable or Always", mode);
  return RIPPLE_OK;
}

/* Values in v, counted up to limit: yjson expands aliases (up to a million
 * values), and the extension goes whole into one environment variable. */
static size_t json_nodes(const json_t *v, size_t limit) {
  size_t n = 1;
  const char *k;
  const json_t *e;
  size_t i;
  if (json_is_object(v)) {
    json_object_foreach((json_t *)v, k, e) {
      if (n > limit) break;
      n += json_nodes(e, limit - n);
    }
  } else if (json_is_array(v)) {
    json_array_foreach(v, i, e) {
      if (n > limit) break;
      n += json_nodes(e, limit - n);
    }
  }
  return n;
}

/* KUBERNETES_EXEC_INFO, which client-go always gives the plugin; the cluster
 * only with provideClusterInfo. */
static int exec_info(loader_t *ld, kube_exec_t *x, const ripple_kube_config_t *c, int cluster) {
  if (cluster && ld->exec_ext && json_nodes(ld->exec_ext, EXEC_EXT_NODES) > EXEC_EXT_NODES)
    return sfail(ld,
                 "exec: provideClusterInfo: the cluster's client.authentication.k8s.io/exec "
                 "extension has more than %d values",
                 EXEC_EXT_NODES);
  json_t *spec = json_pack("{s:b}", "interactive", 0);
  json_t *info = json_pack("{s:s,s:s,s:o}", "apiVersion", x->api_version, "kind", "ExecCredential",
                           "spec", spec);
  if (info && cluster) {
    json_t *cl = json_pack("{s:s}", "server", c->server);
    if (c->tls_server_name)
      json_object_set_new(cl, "tls-server-name", json_string(c->tls_server_name));
    if (c->insecure) json_object_set_new(cl, "insecure-skip-tls-verify", json_true());
    if (c->proxy_url) json_object_set_new(cl, "proxy-url", json_string(c->proxy_url));
    if (c->ca_pem) {
      char *b = b64_encode_str(c->ca_pem, strlen(c->ca_pem));
      if (b) json_object_set_new(cl, "certificate-authority-data", json_string(b));
      free(b);
    }
    if (ld->exec_ext) json_object_set(cl, "config", ld->exec_ext);
    json_object_set_new(spec, "cluster", cl);
  }
  char *s = info ? json_dumps(info, JSON_COMPACT) : NULL;
  json_decref(info);
  size_t i = 0;
  while (x->env[i]) i++;
  sbuf_t b;
  sbuf_init(&b);
  sbuf_printf(&b, "KUBERNETES_EXEC_INFO=%s", s ? s : "");
  free(s);
  if (!s || sbuf_take(&b, &x->env[i], NULL) != RIPPLE_OK) {
    sbuf_free(&b);
    return sfail(ld, "out of memory");
  }
  return RIPPLE_OK;
}

static int load_exec(loader_t *ld, const json_t *m, ripple_kube_config_t *c) {
  json_t *ex = yget(m, "exec");
  if (!ex) return RIPPLE_OK;
  if (!json_is_object(ex)) return sfail(ld, "exec: expected a mapping");
  kube_exec_t *x = calloc(1, sizeof *x);
  if (!x) return sfail(ld, "out of memory");
  c->exec = x;
  const char *api, *cmd;
  int provide;
  int rc = ystr(ld, ex, "apiVersion", &api);
  if (rc == RIPPLE_OK) rc = ystr(ld, ex, "command", &cmd);
  if (rc == RIPPLE_OK) rc = ybool(ld, ex, "provideClusterInfo", &provide);
  if (rc != RIPPLE_OK) return rc;
  if (!api) return sfail(ld, "exec: no apiVersion (use %s)", EXEC_V1);
  if (strcmp(api, EXEC_V1) != 0 && strcmp(api, EXEC_V1BETA1) != 0)
    return sfail(ld, "exec: apiVersion %s is not supported (use %s or %s)", api, EXEC_V1,
                 EXEC_V1BETA1);
  if (!cmd) return sfail(ld, "exec: no command");
  x->api_version = strdup(api);
  /* client-go resolves a command with a slash against the kubeconfig's
   * directory; a bare name is looked up in PATH */
  x->command = strchr(cmd, '/') ? kube_path_join(ld->scope_file->dir, cmd) : strdup(cmd);
  if (!x->api_version || !x->command) return sfail(ld, "out of memory");
  rc = exec_args(ld, ex, x);
  if (rc == RIPPLE_OK) rc = exec_env(ld, ex, x);
  if (rc == RIPPLE_OK) rc = exec_mode(ld, ex, x);
  if (rc == RIPPLE_OK) rc = exec_info(ld, x, c, provide);
  return rc;
}

/* ---- in-cluster ------------------------------------------------------------------- */

/* A service-account file; the token and namespace without trailing whitespace. */
static int sa_read(loader_t *ld, const char *dir, const char *name, int required, char **out) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int e = kube_read_file(path, out, NULL) == RIPPLE_OK ? 0 : errno;
  if (e == ENOENT && !required) return RIPPLE_OK;
  if (e) return lfail(ld, "in-cluster: %s: %s", path, strerror(e));
  if (!strcmp(name, "ca.crt")) return RIPPLE_OK; /* PEM, used as is */
  size_t n = strlen(*out);
  while (n && strchr(" \t\r\n", (*out)[n - 1])) (*out)[--n] = '\0';
  return RIPPLE_OK;
}

static int load_in_cluster(loader_t *ld, const char *ns, ripple_kube_config_t *c) {
  const char *host = getenv("KUBERNETES_SERVICE_HOST");
  const char *port = getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port)
    return lfail(ld,
                 "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not "
                 "set (not running in a pod?)");
  const char *dir = getenv("RIPPLE_KUBE_SA_DIR");
  if (!dir || !*dir) dir = SA_DIR;
  sbuf_t b;
  sbuf_init(&b);
  int v6 = strchr(host, ':') != NULL;
  sbuf_printf(&b, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port);
  char *token = NULL, *nsfile = NULL;
  int rc = sbuf_take(&b, &c->server, NULL) == RIPPLE_OK ? RIPPLE_OK : lfail(ld, "out of memory");
  sbuf_free(&b);
  /* The token rotates: keep the file's name, read it now to fail early. */
  if (rc == RIPPLE_OK) rc = sa_read(ld, dir, "token", 1, &token);
  if (rc == RIPPLE_OK) rc = sa_read(ld, dir, "ca.crt", 1, &c->ca_pem);
  if (rc == RIPPLE_OK) rc = sa_read(ld, dir, "namespace", 0, &nsfile);
  if (rc == RIPPLE_OK) {
    sbuf_init(&b);
    sbuf_printf(&b, "%s/token", dir);
    if (sbuf_take(&b, &c->token_file, NULL) != RIPPLE_OK) rc = lfail(ld, "out of memory");
    sbuf_free(&b);
  }
  if (rc == RIPPLE_OK && token && !*token) rc = lfail(ld, "in-cluster: %s/token is empty", dir);
  if (rc == RIPPLE_OK) {
    c->context = strdup("");
    /* client-go's in-cluster order: POD_NAMESPACE, then the service account's */
    const char *pod_ns = getenv("POD_NAMESPACE");
    if (!ns && pod_ns && *pod_ns) ns = pod_ns;
    c->namespace_ = strdup(ns ? ns : nsfile && *nsfile ? nsfile : "default");
    if (!c->context || !c->namespace_) rc = lfail(ld, "out of memory");
  }
  free(token);
  free(nsfile);
  return rc;
}

/* ---- loading ------------------------------------------------------------------------ */

static void loader_free(loader_t *ld) {
  for (size_t i = 0; i < ld->nfiles; i++) {
    json_decref(ld->files[i].docs);
    free(ld->files[i].path);
    free(ld->files[i].dir);
  }
  free(ld->files);
  free(ld->clusters.v);
  free(ld->users.v);
  free(ld->contexts.v);
  json_decref(ld->texts);
}

static int in_cluster_possible(void) {
  const char *h = getenv("KUBERNETES_SERVICE_HOST");
  return h && *h;
}

/* Which files to read, in kubectl's order; *list NULL means in-cluster. */
static int pick_source(loader_t *ld, const ripple_kube_config_opts_t *o, char **list,
                       int *tolerate) {
  *list = NULL;
  *tolerate = 0;
  if (o->in_cluster) return RIPPLE_OK;
  const char *env = getenv("KUBECONFIG");
  if (o->kubeconfig && *o->kubeconfig) {
    *list = strdup(o->kubeconfig);
  } else if (env && *env) {
    *list = strdup(env);
    *tolerate = 1;
  } else {
    const char *home = getenv("HOME");
    char path[4096];
    snprintf(path, sizeof path, "%s/.kube/config", home ? home : "");
    if (home && *home && access(path, F_OK) == 0)
      *list = strdup(path);
    else if (in_cluster_possible())
      return RIPPLE_OK;
    else
      return lfail(ld,
                   "no kubeconfig: $KUBECONFIG is not set, %s does not exist, and "
                   "KUBERNETES_SERVICE_HOST is not set (not in a cluster)",
                   path);
  }
  return *list ? RIPPLE_OK : lfail(ld, "out of memory");
}

static int load(loader_t *ld, const ripple_kube_config_opts_t *o, ripple_kube_config_t *c) {
  const char *ns = o->namespace_ && *o->namespace_ ? o->namespace_ : NULL;
  char *list;
  int tolerate;
  int rc = pick_source(ld, o, &list, &tolerate);
  if (rc != RIPPLE_OK) return rc;
  if (!list) return load_in_cluster(ld, ns, c);
  size_t found = 0;
  rc = load_list(ld, list, tolerate, &found);
  if (rc == RIPPLE_OK && !found) {
    /* kubectl: nothing in $KUBECONFIG exists, so try the service account */
    if (in_cluster_possible())
      rc = load_in_cluster(ld, ns, c);
    else
      rc = lfail(ld, "no kubeconfig: none of the files in %s exists (and not in a cluster)", list);
  } else if (rc == RIPPLE_OK) {
    rc = load_context(ld, o->context && *o->context ? o->context : ld->current, c, ns);
  }
  free(list);
  return rc;
}

int ripple_kube_config_load(const ripple_kube_config_opts_t *o, ripple_kube_config_t **out,
                            char *err, size_t errcap) {
  static const ripple_kube_config_opts_t none;
  if (err && errcap) err[0] = '\0';
  if (!out) return RIPPLE_EINVAL;
  loader_t ld;
  memset(&ld, 0, sizeof ld);
  ld.err = err, ld.errcap = errcap;
  ripple_kube_config_t *c = calloc(1, sizeof *c);
  if (!c) return lfail(&ld, "out of memory"), RIPPLE_ENOMEM;
  int rc = load(&ld, o ? o : &none, c);
  loader_free(&ld);
  if (rc != RIPPLE_OK) {
    ripple_kube_config_free(c);
    return rc;
  }
  *out = c;
  return RIPPLE_OK;
}
