/*
 * scenario.c - scenario files for `ripple run` (docs/run.md):
 *
 *   name: paper2-deployment
 *   parameters: {N: 100, image: ripple.invalid/noop:1}
 *   repetitions: 10
 *   watch: {resources: [deployments.apps, replicasets.apps, pods]}
 *   setup: [...]      # once, before the first repetition
 *   steps: [...]      # every repetition
 *   teardown: [...]   # once, at the end, also after a failure
 *
 * Parameters are substituted as text, before the YAML is read, so a value
 * takes its type from where it lands (replicas: ${N} is a number). That needs
 * the parameters first: they are read from a copy of the file in which every
 * ${...} is neutralised, so they themselves cannot use substitution.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"
#include "run.h"

#define SCN_MAX_FILE (4u << 20)

static int read_all(const char *path, char **out, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return RIPPLE_ESYS;
  char *buf = NULL;
  size_t n = 0, cap = 0;
  int rc = RIPPLE_OK;
  for (;;) {
    if (n + 4096 + 1 > cap) {
      cap = cap ? cap * 2 : 8192;
      char *b = cap <= SCN_MAX_FILE ? realloc(buf, cap) : NULL;
      if (!b) {
        rc = cap > SCN_MAX_FILE ? RIPPLE_ERANGE : RIPPLE_ENOMEM;
        break;
      }
      buf = b;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  if (rc == RIPPLE_OK && ferror(f)) rc = RIPPLE_ESYS;
  fclose(f);
  if (rc != RIPPLE_OK) {
    free(buf);
    return rc;
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return RIPPLE_OK;
}

static int valid_name(const char *s, size_t n) {
  if (n == 0 || n > 63) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
          (i > 0 && ((c >= '0' && c <= '9') || c == '-'))))
      return 0;
  }
  return 1;
}

/* Substitution with a lookup; lookup NULL replaces every ${...} with "0". */
static int subst(const scn_t *s, int run, const char *in, size_t len, char **out, char *err,
                 size_t cap) {
  size_t ocap = len + 64, n = 0;
  char *o = malloc(ocap);
  if (!o) return RIPPLE_ENOMEM;
  for (size_t i = 0; i < len;) {
    const char *val = NULL;
    char runbuf[16], *rest = NULL;
    size_t vlen = 0, skip = 1;
    if (in[i] == '$' && i + 1 < len && in[i + 1] == '$') {
      val = "$", vlen = 1, skip = 2;
    } else if (in[i] == '$' && i + 1 < len && in[i + 1] == '{') {
      const char *close = memchr(in + i + 2, '}', len - i - 2);
      size_t nlen = close ? (size_t)(close - in - i - 2) : 0;
      if (!close || !valid_name(in + i + 2, nlen)) {
        snprintf(err, cap, "'${' at offset %zu does not start a ${NAME}", i);
        free(o);
        return RIPPLE_EINVAL;
      }
      char name[64];
      memcpy(name, in + i + 2, nlen);
      name[nlen] = '\0';
      skip = nlen + 3;
      if (!s) {
        val = "0";
      } else if (!strcmp(name, "run")) {
        snprintf(runbuf, sizeof runbuf, "%d", run);
        val = runbuf;
      } else {
        val = json_string_value(json_object_get(s->params, name));
        if (!val) {
          snprintf(err, cap, "${%s}: no such parameter (set it with --set %s=VALUE)", name, name);
          free(o);
          return RIPPLE_EINVAL;
        }
      }
      vlen = strlen(val);
    } else {
      val = in + i, vlen = 1;
    }
    if (n + vlen + 1 > ocap) {
      ocap = (n + vlen + 1) * 2;
      rest = realloc(o, ocap);
      if (!rest) {
        free(o);
        return RIPPLE_ENOMEM;
      }
      o = rest;
    }
    memcpy(o + n, val, vlen);
    n += vlen;
    i += skip;
  }
  o[n] = '\0';
  *out = o;
  return RIPPLE_OK;
}

int scn_subst(const scn_t *s, int run, const char *text, size_t len, char **out, char *err,
              size_t cap) {
  return subst(s, run, text, len, out, err, cap);
}

/* A scalar parameter value as text (yjson_text: a real in its shortest form,
 * 0.1 and not 0.10000000000000001); null, lists and mappings are not values.
 * RIPPLE_EINVAL for those or for text longer than cap. */
static int param_text(const json_t *v, char *out, size_t cap) {
  char buf[YJSON_TEXT_MAX];
  const char *t = json_is_null(v) ? NULL : yjson_text(v, buf);
  if (!t || snprintf(out, cap, "%s", t) >= (int)cap) return RIPPLE_EINVAL;
  return RIPPLE_OK;
}

static int load_header(scn_t *s, const json_t *doc, char *err, size_t cap) {
  const char *name = json_string_value(json_object_get(doc, "name"));
  if (!name || !*name || strlen(name) >= sizeof s->name) {
    snprintf(err, cap, "%s: 'name' is missing or not a short string", s->path);
    return RIPPLE_EINVAL;
  }
  snprintf(s->name, sizeof s->name, "%s", name);
  json_t *rep = json_object_get(doc, "repetitions");
  s->repetitions = rep ? (int)json_integer_value(rep) : 1;
  if ((rep && !json_is_integer(rep)) || s->repetitions < 1 || s->repetitions > 100000) {
    snprintf(err, cap, "%s: 'repetitions' must be a whole number from 1", s->path);
    return RIPPLE_EINVAL;
  }
  s->params = json_object();
  if (!s->params) return RIPPLE_ENOMEM;
  json_t *params = json_object_get(doc, "parameters");
  if (params && !json_is_object(params)) {
    snprintf(err, cap, "%s: 'parameters' must be a mapping NAME: value", s->path);
    return RIPPLE_EINVAL;
  }
  const char *k;
  json_t *v;
  json_object_foreach(params, k, v) {
    char text[1024];
    if (!valid_name(k, strlen(k)) || !strcmp(k, "run") ||
        param_text(v, text, sizeof text) != RIPPLE_OK) {
      snprintf(err, cap,
               "%s: parameter '%s' needs a name of letters, digits, '_' or '-' (not 'run') "
               "and a plain value",
               s->path, k);
      return RIPPLE_EINVAL;
    }
    json_object_set_new(s->params, k, json_string(text));
  }
  return RIPPLE_OK;
}

static int load(const char *path, scn_t *s, char *err, size_t cap) {
  memset(s, 0, sizeof *s);
  int rc = read_all(path, &s->text, &s->len);
  if (rc != RIPPLE_OK) {
    snprintf(err, cap, "%s: %s", path, rc == RIPPLE_ESYS ? strerror(errno) : ripple_strerror(rc));
    return rc;
  }
  s->path = strdup(path);
  const char *slash = strrchr(path, '/');
  s->dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup("");
  if (!s->path || !s->dir) return RIPPLE_ENOMEM;
  char *neutral = NULL, yerr[256] = "";
  json_t *docs = NULL;
  rc = subst(NULL, 0, s->text, s->len, &neutral, err, cap);
  if (rc == RIPPLE_OK) {
    rc = yjson_parse(neutral, strlen(neutral), &docs, yerr, sizeof yerr);
    if (rc != RIPPLE_OK) snprintf(err, cap, "%s: %s", path, yerr);
  }
  free(neutral);
  if (rc == RIPPLE_OK && (json_array_size(docs) != 1 || !json_is_object(json_array_get(docs, 0)))) {
    snprintf(err, cap, "%s: a scenario is one YAML mapping", path);
    rc = RIPPLE_EINVAL;
  }
  if (rc == RIPPLE_OK) rc = load_header(s, json_array_get(docs, 0), err, cap);
  json_decref(docs);
  return rc;
}

int scn_load(const char *path, scn_t *s, char *err, size_t cap) {
  int rc = load(path, s, err, cap);
  if (rc != RIPPLE_OK) scn_free(s); /* nothing is the caller's on failure */
  return rc;
}

int scn_set(scn_t *s, const char *assignment, char *err, size_t cap) {
  const char *eq = strchr(assignment, '=');
  if (!eq || !valid_name(assignment, (size_t)(eq - assignment)) ||
      !strncmp(assignment, "run=", 4)) {
    snprintf(err, cap, "--set %s: expected NAME=VALUE (NAME of letters, digits, '_', '-')",
             assignment);
    return RIPPLE_EINVAL;
  }
  json_t *v = json_string(eq + 1);
  if (!v) {
    snprintf(err, cap, "--set %s: the value is not UTF-8 text", assignment);
    return RIPPLE_EINVAL;
  }
  char name[64];
  snprintf(name, sizeof name, "%.*s", (int)(eq - assignment), assignment);
  return json_object_set_new(s->params, name, v) == 0 ? RIPPLE_OK : RIPPLE_ENOMEM;
}

static int check_list(const json_t *doc, const char *key, char *err, size_t cap) {
  json_t *list = json_object_get(doc, key);
  if (!list) return RIPPLE_OK;
  if (!json_is_array(list)) {
    snprintf(err, cap, "'%s' must be a list of steps", key);
    return RIPPLE_EINVAL;
  }
  size_t i;
  json_t *step;
  json_array_foreach(list, i, step) {
    char why[256];
    if (step_check(step, why, sizeof why) != RIPPLE_OK) {
      snprintf(err, cap, "%s step %zu: %s", key, i + 1, why);
      return RIPPLE_EINVAL;
    }
  }
  return RIPPLE_OK;
}

int scn_expand(const scn_t *s, int run, json_t **doc, char *err, size_t cap) {
  char *text = NULL, why[512] = "";
  json_t *docs = NULL;
  int rc = subst(s, run, s->text, s->len, &text, why, sizeof why);
  if (rc == RIPPLE_OK) rc = yjson_parse(text, strlen(text), &docs, why, sizeof why);
  free(text);
  json_t *d = json_array_get(docs, 0);
  if (rc == RIPPLE_OK && !json_object_get(d, "steps")) {
    snprintf(why, sizeof why, "'steps' is missing");
    rc = RIPPLE_EINVAL;
  }
  static const char *const lists[] = {"setup", "steps", "teardown"};
  for (size_t i = 0; rc == RIPPLE_OK && i < 3; i++) rc = check_list(d, lists[i], why, sizeof why);
  if (rc != RIPPLE_OK) {
    snprintf(err, cap, "%s: %s", s->path, why);
    json_decref(docs);
    return rc;
  }
  *doc = json_incref(d);
  json_decref(docs);
  return RIPPLE_OK;
}

int scn_read_file(const scn_t *s, int run, const char *name, char **out, size_t *len, char *err,
                  size_t cap) {
  char path[4096], *raw = NULL;
  size_t rlen;
  snprintf(path, sizeof path, "%s%s", name[0] == '/' ? "" : s->dir, name);
  int rc = read_all(path, &raw, &rlen);
  if (rc != RIPPLE_OK) {
    snprintf(err, cap, "%s: %s", path, rc == RIPPLE_ESYS ? strerror(errno) : ripple_strerror(rc));
    return rc;
  }
  char why[256];
  rc = subst(s, run, raw, rlen, out, why, sizeof why);
  free(raw);
  if (rc != RIPPLE_OK) {
    snprintf(err, cap, "%s: %s", path, why);
    return rc;
  }
  *len = strlen(*out);
  return RIPPLE_OK;
}

void scn_free(scn_t *s) {
  free(s->path);
  free(s->dir);
  free(s->text);
  json_decref(s->params);
  memset(s, 0, sizeof *s);
}
