/*
 * wait.c - the wait step: watch objects until a condition holds or time runs
 * out. Conditions (`until:`):
 *
 *   deleted                       no object left (the named one is gone)
 *   count == N | count >= N       how many objects there are
 *   condition Ready               every object (at least one) has condition
 *                                 Ready with status "True"
 *   PATH == VALUE | != | >=       every object (at least one) has the field at
 *                                 the dotted PATH equal to VALUE (numbers
 *                                 compared as numbers; an absent field is 0
 *                                 against a number, as Kubernetes leaves zero
 *                                 counts out of status)
 *
 * The objects come from an informer (one list, then a watch), not from
 * polling the API server, so waiting adds no load that would distort what a
 * scenario measures; the condition is checked on the local cache.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ripple/ripple.h"
#include "run.h"

typedef enum cond_kind { C_DELETED, C_COUNT, C_CONDITION, C_FIELD } cond_kind_t;
typedef enum cond_op { OP_EQ, OP_NE, OP_GE } cond_op_t;

typedef struct cond {
  cond_kind_t kind;
  cond_op_t op;
  char path[256], value[256];
  /* results of one evaluation */
  size_t objects, matching;
  char seen[64]; /* the field's value on the first object, for the progress line */
} cond_t;

static int parse_op(const char *s, cond_op_t *op, size_t *len) {
  *len = 2;
  if (!strncmp(s, "==", 2)) return *op = OP_EQ, 0;
  if (!strncmp(s, "!=", 2)) return *op = OP_NE, 0;
  if (!strncmp(s, ">=", 2)) return *op = OP_GE, 0;
  return -1;
}

static int cond_parse(const char *s, cond_t *c, char *err, size_t cap) {
  memset(c, 0, sizeof *c);
  if (!strcmp(s, "deleted")) return c->kind = C_DELETED, RIPPLE_OK;
  if (!strncmp(s, "condition", 9) && (s[9] == ' ' || s[9] == '=')) {
    c->kind = C_CONDITION;
    snprintf(c->value, sizeof c->value, "%s", s + 10 + strspn(s + 10, " "));
    return c->value[0] ? RIPPLE_OK : RIPPLE_EINVAL;
  }
  const char *op = strpbrk(s, "=!>");
  size_t oplen, plen = op ? (size_t)(op - s) : 0;
  while (plen && s[plen - 1] == ' ') plen--;
  if (!op || plen == 0 || plen >= sizeof c->path || parse_op(op, &c->op, &oplen) != 0) {
    snprintf(err, cap, "until '%s': expected deleted, count == N, condition TYPE or PATH == VALUE",
             s);
    return RIPPLE_EINVAL;
  }
  memcpy(c->path, s, plen);
  const char *v = op + oplen;
  snprintf(c->value, sizeof c->value, "%s", v + strspn(v, " "));
  c->kind = !strcmp(c->path, "count") ? C_COUNT : C_FIELD;
  return RIPPLE_OK;
}

static json_t *dotted(json_t *obj, const char *path) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  json_t *v = obj;
  for (char *save = NULL, *t = strtok_r(buf, ".", &save); v && t; t = strtok_r(NULL, ".", &save))
    v = json_object_get(v, t);
  return v;
}

static int is_number(const char *s, double *d) {
  char *end;
  *d = strtod(s, &end);
  return *s && !*end;
}

/* Compare a value with the condition's text: numbers as numbers. */
static int compare(const cond_t *c, json_t *v, char *seen, size_t cap) {
  double want, have = 0;
  char text[256] = "";
  if (json_is_string(v))
    snprintf(text, sizeof text, "%s", json_string_value(v));
  else if (json_is_number(v))
    snprintf(text, sizeof text, "%.17g", json_number_value(v));
  else if (json_is_boolean(v))
    snprintf(text, sizeof text, "%s", json_is_true(v) ? "true" : "false");
  snprintf(seen, cap, "%s", v ? text : "(absent)");
  int num = is_number(c->value, &want) && (!v || json_is_number(v));
  if (num && v) have = json_number_value(v);
  int cmp = num ? (have > want) - (have < want) : strcmp(text, c->value) != 0 || (!v && !num);
  switch (c->op) {
    case OP_EQ: return cmp == 0;
    case OP_NE: return cmp != 0;
    default: return num ? cmp >= 0 : 0;
  }
}

static void eval_one(void *ud, json_t *obj) {
  cond_t *c = ud;
  int ok = 0;
  if (c->kind == C_CONDITION) {
    size_t i;
    json_t *cd;
    json_array_foreach(dotted(obj, "status.conditions"), i, cd) {
      const char *t = json_string_value(json_object_get(cd, "type"));
      const char *st = json_string_value(json_object_get(cd, "status"));
      if (t && st && !strcmp(t, c->value)) ok = !strcmp(st, "True");
    }
  } else {
    char seen[64];
    ok = compare(c, dotted(obj, c->path), seen, sizeof seen);
    if (c->objects == 0) snprintf(c->seen, sizeof c->seen, "%s", seen);
  }
  c->objects++;
  c->matching += (size_t)ok;
}

/* Evaluate on the cache; *state describes where things are. */
static int cond_eval(cond_t *c, ripple_kube_informer_t *inf, char *state, size_t cap) {
  c->objects = c->matching = 0;
  if (c->kind == C_DELETED || c->kind == C_COUNT) {
    size_t n = ripple_kube_informer_size(inf);
    snprintf(state, cap, "%zu object%s", n, n == 1 ? "" : "s");
    if (c->kind == C_DELETED) return n == 0;
    cond_t tmp = *c;
    json_t *v = json_integer((json_int_t)n);
    char seen[64];
    int ok = compare(&tmp, v, seen, sizeof seen);
    json_decref(v);
    return ok;
  }
  ripple_kube_informer_each(inf, eval_one, c);
  if (c->kind == C_CONDITION)
    snprintf(state, cap, "%zu/%zu %s", c->matching, c->objects, c->value);
  else if (c->objects == 1)
    snprintf(state, cap, "%s=%s", c->path, c->seen);
  else
    snprintf(state, cap, "%zu/%zu objects", c->matching, c->objects);
  return c->objects > 0 && c->matching == c->objects;
}

int wait_run(runner_t *r, const json_t *spec, char *err, size_t cap) {
  const char *rname = json_string_value(json_object_get(spec, "resource"));
  const char *name = json_string_value(json_object_get(spec, "name"));
  const char *sel = json_string_value(json_object_get(spec, "selector"));
  const char *ns = json_string_value(json_object_get(spec, "namespace"));
  const char *to = json_string_value(json_object_get(spec, "timeout"));
  int64_t timeout = 300000000000LL;
  if (to) ripple_duration_parse(to, &timeout);
  cond_t c;
  int rc = cond_parse(json_string_value(json_object_get(spec, "until")), &c, err, cap);
  if (rc != RIPPLE_OK) return rc;
  const ripple_kube_resource_t *res;
  ripple_kube_status_t st = {0};
  if ((rc = ripple_kube_resolve(r->kc, rname, &res, &st)) != RIPPLE_OK) {
    snprintf(err, cap, "%s: %s", rname, st.message);
    return rc;
  }
  char fsel[300];
  snprintf(fsel, sizeof fsel, "metadata.name=%s", name ? name : "");
  ripple_kube_watch_opts_t wo = {.strip_managed_fields = 1};
  wo.list.namespace_ = res->namespaced ? (ns ? ns : r->namespace_) : NULL;
  wo.list.label_selector = sel;
  wo.list.field_selector = name ? fsel : NULL;
  wo.timeout_s = 60;
  ripple_kube_informer_t *inf = NULL;
  if ((rc = ripple_kube_informer_start(r->kc, res, &wo, NULL, &inf)) != RIPPLE_OK) {
    snprintf(err, cap, "cannot watch %s: %s", rname, ripple_kube_strerror(rc));
    return rc;
  }
  char what[512], state[640] = "listing";
  snprintf(what, sizeof what, "%s%s%s until %s", rname, name ? "/" : "", name ? name : "",
           json_string_value(json_object_get(spec, "until")));
  int64_t deadline = ripple_now_ns() + timeout;
  rc = RIPPLE_ETIMEDOUT;
  while (!*r->stop && ripple_now_ns() < deadline) {
    if (ripple_kube_informer_wait_synced(inf, 100) == RIPPLE_OK) {
      if (cond_eval(&c, inf, state, sizeof state)) {
        rc = RIPPLE_OK;
        break;
      }
      struct timespec ts = {0, 50 * 1000000L};
      nanosleep(&ts, NULL);
    }
    if (r->progress) r->progress(r->progress_ud, what, state);
  }
  ripple_kube_informer_free(inf);
  if (rc != RIPPLE_OK)
    snprintf(err, cap, "%s: %s after %s (%s)", what, *r->stop ? "interrupted" : "timed out",
             to ? to : "5m", state);
  return *r->stop ? RIPPLE_ESTATE : rc;
}
