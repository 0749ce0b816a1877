/*
 * changelog.c - reading the change logs `ripple watch` writes: one JSON line
 * per change, plain or zstd-compressed (rotated files), from files or a run
 * directory. A line that is not a change record is counted and skipped, so a
 * log cut short by a crash still gives what it holds.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "analyze.h"
#include "ripple/ripple.h"

/* Kind and apiVersion per resource, for objects written without them (watch
 * events of typed clients sometimes drop them). */
static const struct {
  const char *resource, *kind, *api;
} kinds[] = {
    {"pods", "Pod", "v1"},
    {"nodes", "Node", "v1"},
    {"services", "Service", "v1"},
    {"endpoints", "Endpoints", "v1"},
    {"configmaps", "ConfigMap", "v1"},
    {"replicasets.apps", "ReplicaSet", "apps/v1"},
    {"deployments.apps", "Deployment", "apps/v1"},
    {"statefulsets.apps", "StatefulSet", "apps/v1"},
    {"daemonsets.apps", "DaemonSet", "apps/v1"},
    {"jobs.batch", "Job", "batch/v1"},
    {"endpointslices.discovery.k8s.io", "EndpointSlice", "discovery.k8s.io/v1"},
};

static void fill_kind(json_t *obj, const char *resource) {
  if (json_is_string(json_object_get(obj, "kind")) || !resource) return;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    if (strcmp(kinds[i].resource, resource) != 0) continue;
    json_object_set_new(obj, "kind", json_string(kinds[i].kind));
    if (!json_is_string(json_object_get(obj, "apiVersion")))
      json_object_set_new(obj, "apiVersion", json_string(kinds[i].api));
    return;
  }
}

static int op_parse(const char *s, cl_op_t *op) {
  if (!s) return RIPPLE_EJSON;
  if (!strcmp(s, "add"))
    *op = CL_ADD;
  else if (!strcmp(s, "update"))
    *op = CL_UPDATE;
  else if (!strcmp(s, "delete"))
    *op = CL_DELETE;
  else
    return RIPPLE_EJSON;
  return RIPPLE_OK;
}

void cl_record_clear(cl_record_t *r) {
  json_decref(r->object);
  json_decref(r->old);
  memset(r, 0, sizeof *r);
}

int cl_parse_line(const char *line, size_t len, cl_record_t *out) {
  json_t *doc = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
  if (!json_is_object(doc)) {
    json_decref(doc);
    return RIPPLE_EJSON;
  }
  cl_record_t r = {0};
  json_t *t = json_object_get(doc, "time_ns");
  json_t *obj = json_object_get(doc, "object");
  json_t *old = json_object_get(doc, "old");
  int rc = op_parse(json_string_value(json_object_get(doc, "op")), &r.op);
  if (rc == RIPPLE_OK && (!json_is_integer(t) || json_integer_value(t) < 0)) rc = RIPPLE_EJSON;
  if (rc == RIPPLE_OK && !json_is_object(obj)) rc = RIPPLE_EJSON;
  if (rc == RIPPLE_OK && old && !json_is_object(old) && !json_is_null(old)) rc = RIPPLE_EJSON;
  if (rc != RIPPLE_OK) {
    json_decref(doc);
    return rc;
  }
  r.t = json_integer_value(t);
  r.relist = json_is_true(json_object_get(doc, "relist"));
  r.object = json_incref(obj);
  r.old = json_is_object(old) ? json_incref(old) : NULL;
  fill_kind(r.object, json_string_value(json_object_get(doc, "resource")));
  json_decref(doc);
  r.uid = ripple_rules_field(r.object, "metadata.uid");
  r.kind = json_string_value(json_object_get(r.object, "kind"));
  r.ns = ripple_rules_field(r.object, "metadata.namespace");
  r.name = ripple_rules_field(r.object, "metadata.name");
  if (!r.uid || !r.kind || !r.name) {
    cl_record_clear(&r);
    return RIPPLE_EJSON;
  }
  if (!r.ns) r.ns = "";
  *out = r;
  return RIPPLE_OK;
}

int cl_log_add_line(cl_log_t *log, const char *line, size_t len) {
  while (len && (line[len - 1] == '\r' || line[len - 1] == ' ')) len--;
  if (!len) return RIPPLE_OK;
  log->lines++;
  cl_record_t r;
  if (cl_parse_line(line, len, &r) != RIPPLE_OK) {
    log->malformed++;
    return RIPPLE_OK;
  }
  if (log->n == log->cap) {
    size_t cap = log->cap ? log->cap * 2 : 256;
    cl_record_t *grown = realloc(log->r, cap * sizeof *grown);
    if (!grown) {
      cl_record_clear(&r);
      return RIPPLE_ENOMEM;
    }
    log->r = grown;
    log->cap = cap;
  }
  r.seq = log->n;
  log->r[log->n++] = r;
  return RIPPLE_OK;
}

/* Splits a byte stream into lines across chunk boundaries. */
typedef struct lines {
  char *buf;
  size_t len, cap;
  bool overlong; /* the current line passed CL_MAX_LINE: drop it, count it once */
} lines_t;

static int lines_end(cl_log_t *log, lines_t *ls) {
  int rc = RIPPLE_OK;
  if (ls->overlong) {
    log->lines++;
    log->malformed++;
  } else {
    rc = cl_log_add_line(log, ls->buf, ls->len);
  }
  ls->len = 0;
  ls->overlong = false;
  return rc;
}

static int lines_feed(cl_log_t *log, lines_t *ls, const char *p, size_t n) {
  while (n) {
    const char *nl = memchr(p, '\n', n);
    size_t take = nl ? (size_t)(nl - p) : n;
    if (!ls->overlong && ls->len + take > CL_MAX_LINE) ls->overlong = true;
    if (!ls->overlong && take) {
      if (ls->len + take > ls->cap) {
        size_t cap = ls->cap ? ls->cap : 65536;
        while (cap < ls->len + take) cap *= 2;
        char *grown = realloc(ls->buf, cap);
        if (!grown) return RIPPLE_ENOMEM;
        ls->buf = grown;
        ls->cap = cap;
      }
      memcpy(ls->buf + ls->len, p, take);
      ls->len += take;
    }
    if (!nl) break;
    int rc = lines_end(log, ls);
    if (rc != RIPPLE_OK) return rc;
    p = nl + 1;
    n -= take + 1;
  }
  return RIPPLE_OK;
}

static bool is_zstd(const unsigned char *p, size_t n) {
  return n >= 4 && p[0] == 0x28 && p[1] == 0xB5 && p[2] == 0x2F && p[3] == 0xFD;
}

/* A reader gives up to cap bytes; 0 at the end, negative on error. */
typedef long (*reader_fn)(void *src, void *buf, size_t cap);

/* Decompress a zstd stream (one or more frames) into lines. A truncated last
 * frame (a rotation cut short) keeps what was decompressed and counts one
 * malformed line. */
static int read_zstd(cl_log_t *log, lines_t *ls, reader_fn rd, void *src, const void *first,
                     size_t nfirst) {
  ZSTD_DCtx *dctx = ZSTD_createDCtx();
  size_t incap = ZSTD_DStreamInSize(), outcap = ZSTD_DStreamOutSize();
  char *in = malloc(incap), *out = malloc(outcap);
  int rc = dctx && in && out ? RIPPLE_OK : RIPPLE_ENOMEM;
  size_t pending = 1; /* ZSTD's hint: nonzero while a frame is unfinished */
  const void *chunk = first;
  size_t nchunk = nfirst;
  while (rc == RIPPLE_OK) {
    if (!chunk) {
      long got = rd(src, in, incap);
      if (got < 0) rc = RIPPLE_ESYS;
      if (got <= 0) break;
      chunk = in;
      nchunk = (size_t)got;
    }
    ZSTD_inBuffer ib = {chunk, nchunk, 0};
    while (rc == RIPPLE_OK && ib.pos < ib.size) {
      ZSTD_outBuffer ob = {out, outcap, 0};
      pending = ZSTD_decompressStream(dctx, &ob, &ib);
      if (ZSTD_isError(pending)) {
        log->malformed++;
        rc = RIPPLE_EJSON; /* corrupt: stop reading this file */
        break;
      }
      rc = lines_feed(log, ls, out, ob.pos);
    }
    chunk = NULL;
  }
  if (rc == RIPPLE_OK && pending != 0) log->malformed++;
  if (rc == RIPPLE_EJSON) rc = RIPPLE_OK;
  ZSTD_freeDCtx(dctx);
  free(in);
  free(out);
  return rc;
}

static int read_stream(cl_log_t *log, reader_fn rd, void *src) {
  lines_t ls = {0};
  char head[65536];
  long got = rd(src, head, sizeof head);
  int rc = got < 0 ? RIPPLE_ESYS : RIPPLE_OK;
  if (rc == RIPPLE_OK && is_zstd((const unsigned char *)head, got > 0 ? (size_t)got : 0)) {
    rc = read_zstd(log, &ls, rd, src, head, (size_t)got);
  } else {
    while (rc == RIPPLE_OK && got > 0) {
      rc = lines_feed(log, &ls, head, (size_t)got);
      if (rc == RIPPLE_OK) got = rd(src, head, sizeof head);
      if (got < 0) rc = RIPPLE_ESYS;
    }
  }
  if (rc == RIPPLE_OK && (ls.len || ls.overlong)) rc = lines_end(log, &ls);
  free(ls.buf);
  return rc;
}

static long file_read(void *src, void *buf, size_t cap) {
  FILE *f = src;
  size_t got = fread(buf, 1, cap, f);
  if (got == 0 && ferror(f)) return -1;
  return (long)got;
}

typedef struct membuf {
  const char *p;
  size_t left;
} membuf_t;

static long mem_read(void *src, void *buf, size_t cap) {
  membuf_t *m = src;
  size_t n = m->left < cap ? m->left : cap;
  memcpy(buf, m->p, n);
  m->p += n;
  m->left -= n;
  return (long)n;
}

int cl_log_read_buffer(cl_log_t *log, const void *buf, size_t len) {
  if (!log || (!buf && len)) return RIPPLE_EINVAL;
  membuf_t m = {buf, len};
  return read_stream(log, mem_read, &m);
}

static int read_file(cl_log_t *log, const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return RIPPLE_ESYS;
  }
  int rc = read_stream(log, file_read, f);
  fclose(f);
  if (rc != RIPPLE_OK) snprintf(err, errlen, "%s: %s", path, ripple_strerror(rc));
  return rc;
}

static bool is_log_name(const char *name) {
  size_t n = strlen(name);
  if (name[0] == '.') return false;
  if (strstr(name, ".jsonl")) return true;
  return (n > 4 && !strcmp(name + n - 4, ".log")) || (n > 4 && !strcmp(name + n - 4, ".zst"));
}

static int read_dir(cl_log_t *log, const char *path, char *err, size_t errlen) {
  struct dirent **ents = NULL;
  int n = scandir(path, &ents, NULL, alphasort);
  if (n < 0) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return RIPPLE_ESYS;
  }
  int rc = RIPPLE_OK;
  for (int i = 0; i < n; i++) {
    if (rc == RIPPLE_OK && is_log_name(ents[i]->d_name)) {
      char full[4096];
      snprintf(full, sizeof full, "%s/%s", path, ents[i]->d_name);
      rc = read_file(log, full, err, errlen);
    }
    free(ents[i]);
  }
  free(ents);
  return rc;
}

int cl_log_read_path(cl_log_t *log, const char *path, char *err, size_t errlen) {
  if (!log || !path) return RIPPLE_EINVAL;
  DIR *d = opendir(path);
  if (d) {
    closedir(d);
    return read_dir(log, path, err, errlen);
  }
  return read_file(log, path, err, errlen);
}

static int rec_cmp(const void *a, const void *b) {
  const cl_record_t *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void cl_log_sort(cl_log_t *log) {
  if (log->n) qsort(log->r, log->n, sizeof *log->r, rec_cmp);
}

void cl_log_free(cl_log_t *log) {
  for (size_t i = 0; i < log->n; i++) cl_record_clear(&log->r[i]);
  free(log->r);
  memset(log, 0, sizeof *log);
}
