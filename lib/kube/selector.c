/*
 * selector.c - label selectors as the API server reads them, for queries of
 * an informer's cache ("app=web,tier!=db", "env in (a,b)", "!legacy").
 *
 * The grammar and the meaning follow k8s.io/apimachinery/pkg/labels: a
 * comma-separated list of requirements that must all hold; "!=" and "notin"
 * also match objects without the label; "in ()" means the empty value. Keys
 * and values are checked as the API server checks them, so a selector this
 * accepts selects what the server would select. The set-based operators for
 * numbers ("gt", "lt", ">" and "<") are refused: labels are strings here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "watch_internal.h"

typedef enum ks_op { KS_EQ, KS_NE, KS_IN, KS_NOTIN, KS_EXISTS, KS_NOTEXISTS } ks_op_t;

typedef struct ksreq {
  char *key;
  ks_op_t op;
  char **vals;
  size_t nvals;
} ksreq_t;

struct ksel {
  ksreq_t *reqs;
  size_t n;
};

/* ---- lexing --------------------------------------------------------------------- */

typedef enum tok { T_END, T_IDENT, T_NOT, T_EQ, T_NE, T_OPEN, T_CLOSE, T_COMMA, T_BAD } tok_t;

typedef struct lex {
  const char *s, *p;
  tok_t tok;
  const char *start; /* of the token */
  size_t len;
  char *err;
  size_t errcap;
} lex_t;

static int special(char c) { return strchr("!=(),<>", c) != NULL; }
static int space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static void next(lex_t *l) {
  while (space(*l->p)) l->p++;
  l->start = l->p;
  char c = *l->p;
  if (!c) {
    l->tok = T_END, l->len = 0;
    return;
  }
  if (!special(c)) {
    while (*l->p && !special(*l->p) && !space(*l->p)) l->p++;
    l->tok = T_IDENT, l->len = (size_t)(l->p - l->start);
    return;
  }
  l->p++;
  l->len = 1;
  switch (c) {
    case '!':
      if (*l->p == '=')
        l->p++, l->len = 2, l->tok = T_NE;
      else
        l->tok = T_NOT;
      return;
    case '=':
      if (*l->p == '=') l->p++, l->len = 2;
      l->tok = T_EQ;
      return;
    case '(': l->tok = T_OPEN; return;
    case ')': l->tok = T_CLOSE; return;
    case ',': l->tok = T_COMMA; return;
    default: l->tok = T_BAD; return; /* '<' or '>' */
  }
}

static int fail(lex_t *l, const char *what) {
  if (l->err && l->errcap)
    snprintf(l->err, l->errcap, "label selector \"%s\": %s at position %zu", l->s, what,
             (size_t)(l->start - l->s));
  return RIPPLE_EINVAL;
}

/* ---- validation (k8s.io/apimachinery/pkg/util/validation) ------------------------ */

static int alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A label value, or the name part of a key: up to 63 of [-_.A-Za-z0-9],
 * beginning and ending with a letter or digit. */
static int valid_name(const char *s, size_t n, int empty_ok) {
  if (n == 0) return empty_ok;
  if (n > 63 || !alnum(s[0]) || !alnum(s[n - 1])) return 0;
  for (size_t i = 0; i < n; i++)
    if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') return 0;
  return 1;
}

/* A key's prefix: a DNS subdomain (lower case, dot-separated labels). */
static int valid_prefix(const char *s, size_t n) {
  if (n == 0 || n > 253) return 0;
  size_t lab = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (c == '.') {
      if (lab == 0 || s[i - 1] == '-') return 0;
      lab = 0;
      continue;
    }
    if (!ok && c != '-') return 0;
    if (lab == 0 && c == '-') return 0;
    lab++;
  }
  return lab > 0 && s[n - 1] != '-';
}

static int valid_key(const char *s, size_t n) {
  const char *slash = memchr(s, '/', n);
  if (!slash) return valid_name(s, n, 0);
  size_t pl = (size_t)(slash - s);
  return valid_prefix(s, pl) && valid_name(slash + 1, n - pl - 1, 0);
}

/* ---- parsing -------------------------------------------------------------------- */

static int add_val(ksreq_t *r, const char *s, size_t n) {
  char **v = realloc(r->vals, (r->nvals + 1) * sizeof *v);
  if (!v) return RIPPLE_ENOMEM;
  r->vals = v;
  if (!(v[r->nvals] = strndup(s, n))) return RIPPLE_ENOMEM;
  r->nvals++;
  return RIPPLE_OK;
}

/* A value after = or != : an identifier, or nothing (the empty value). */
static int parse_value(lex_t *l, ksreq_t *r) {
  next(l);
  if (l->tok == T_END || l->tok == T_COMMA) return add_val(r, "", 0);
  if (l->tok != T_IDENT) return fail(l, "expected a value");
  if (!valid_name(l->start, l->len, 1)) return fail(l, "invalid label value");
  int rc = add_val(r, l->start, l->len);
  next(l);
  return rc;
}

/* "(a, b, )": identifiers or empty values separated by commas. */
static int parse_set(lex_t *l, ksreq_t *r) {
  next(l);
  if (l->tok != T_OPEN) return fail(l, "expected '('");
  for (;;) {
    next(l);
    int rc;
    if (l->tok == T_IDENT) {
      if (!valid_name(l->start, l->len, 1)) return fail(l, "invalid label value");
      if ((rc = add_val(r, l->start, l->len)) != RIPPLE_OK) return rc;
      next(l);
    } else if ((rc = add_val(r, "", 0)) != RIPPLE_OK) {
      return rc;
    }
    if (l->tok == T_CLOSE) break;
    if (l->tok != T_COMMA) return fail(l, "expected ',' or ')'");
  }
  next(l);
  return RIPPLE_OK;
}

static int parse_req(lex_t *l, ksreq_t *r) {
  int neg = l->tok == T_NOT;
  if (neg) next(l);
  if (l->tok != T_IDENT) return fail(l, "expected a label key");
  if (!valid_key(l->start, l->len)) return fail(l, "invalid label key");
  if (!(r->key = strndup(l->start, l->len))) return RIPPLE_ENOMEM;
  next(l);
  if (neg || l->tok == T_END || l->tok == T_COMMA) {
    r->op = neg ? KS_NOTEXISTS : KS_EXISTS;
    return RIPPLE_OK;
  }
  if (l->tok == T_EQ || l->tok == T_NE) {
    r->op = l->tok == T_EQ ? KS_EQ : KS_NE;
    return parse_value(l, r);
  }
  if (l->tok == T_IDENT && l->len == 2 && memcmp(l->start, "in", 2) == 0) {
    r->op = KS_IN;
    return parse_set(l, r);
  }
  if (l->tok == T_IDENT && l->len == 5 && memcmp(l->start, "notin", 5) == 0) {
    r->op = KS_NOTIN;
    return parse_set(l, r);
  }
  return fail(l, "expected an operator (=, ==, !=, in, notin)");
}

void ksel_free(ksel_t *sel) {
  if (!sel) return;
  for (size_t i = 0; i < sel->n; i++) {
    free(sel->reqs[i].key);
    for (size_t j = 0; j < sel->reqs[i].nvals; j++) free(sel->reqs[i].vals[j]);
    free(sel->reqs[i].vals);
  }
  free(sel->reqs);
  free(sel);
}

int ksel_parse(const char *s, ksel_t **out, char *err, size_t errcap) {
  if (!s || !out) return RIPPLE_EINVAL;
  ksel_t *sel = calloc(1, sizeof *sel);
  if (!sel) return RIPPLE_ENOMEM;
  lex_t l = {s, s, T_END, s, 0, err, errcap};
  next(&l);
  int rc = RIPPLE_OK;
  while (l.tok != T_END) {
    ksreq_t *reqs = realloc(sel->reqs, (sel->n + 1) * sizeof *reqs);
    if (!reqs) {
      rc = RIPPLE_ENOMEM;
      break;
    }
    sel->reqs = reqs;
    memset(&reqs[sel->n], 0, sizeof reqs[0]);
    rc = parse_req(&l, &reqs[sel->n++]);
    if (rc != RIPPLE_OK) break;
    if (l.tok == T_COMMA) {
      next(&l);
      if (l.tok == T_END) rc = fail(&l, "expected a requirement after ','");
    } else if (l.tok != T_END) {
      rc = fail(&l, "expected ',' or the end");
    }
    if (rc != RIPPLE_OK) break;
  }
  if (rc != RIPPLE_OK) {
    ksel_free(sel);
    return rc;
  }
  *out = sel;
  return RIPPLE_OK;
}

/* ---- matching ------------------------------------------------------------------- */

static int in_set(const ksreq_t *r, const char *v) {
  for (size_t i = 0; i < r->nvals; i++)
    if (strcmp(r->vals[i], v) == 0) return 1;
  return 0;
}

static const char *json_label(const void *labels, size_t n, const char *key) {
  (void)n;
  return json_string_value(json_object_get(labels, key));
}

static const char *packed_label(const void *labels, size_t n, const char *key) {
  const char *p = labels;
  for (size_t i = 0; i < n; i++) {
    const char *v = p + strlen(p) + 1;
    if (strcmp(p, key) == 0) return v;
    p = v + strlen(v) + 1;
  }
  return NULL;
}

typedef const char *(*label_fn)(const void *labels, size_t n, const char *key);

static int match(const ksel_t *sel, label_fn get, const void *labels, size_t n) {
  for (size_t i = 0; i < sel->n; i++) {
    const ksreq_t *r = &sel->reqs[i];
    const char *v = get(labels, n, r->key);
    int ok;
    switch (r->op) {
      case KS_EQ:
      case KS_IN: ok = v && in_set(r, v); break;
      case KS_NE:
      case KS_NOTIN: ok = !v || !in_set(r, v); break;
      case KS_EXISTS: ok = v != NULL; break;
      default: ok = v == NULL; break;
    }
    if (!ok) return 0;
  }
  return 1;
}

int ksel_match(const ksel_t *sel, const json_t *labels) {
  return match(sel, json_label, labels, 0);
}

int ksel_match_packed(const ksel_t *sel, const char *labels, size_t n) {
  return match(sel, packed_label, labels, n);
}

int ksel_equality(const ksel_t *sel, const char **key, const char **value) {
  for (size_t i = 0; i < sel->n; i++) {
    const ksreq_t *r = &sel->reqs[i];
    if ((r->op == KS_EQ || r->op == KS_IN) && r->nvals == 1) {
      *key = r->key;
      *value = r->vals[0];
      return 1;
    }
  }
  return 0;
}
