/*
 * render.c - a trace for people: the cascade tree, one write per line,
 *
 *   Deployment demo/web  kubernetes-admin  update deployments  +0.0ms
 *   └─ ReplicaSet demo/web-7d9f  deployment-controller  update replicasets  +3.1ms  (3.1ms after
 * cause)
 *
 * (the object, the component that wrote it, the write, when relative to the
 * root change, the time since its cause, and with details how many fields
 * it changed or that it was refused), then the stalls, the per-hop table, then
 * the trace's page in the dashboard (kr_dashboard_url). With
 * colour only when asked (a terminal without NO_COLOR): plain output is
 * stable text that scripts and tests can compare.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kr.h"

typedef struct out {
  FILE *f;
  int colour;
  const kr_trace_t *t;
  /* The tree's columns above the current line: 5 bytes a level at most
   * ("│  "), so some 800 levels; deeper subtrees are not drawn. */
  char prefix[4096];
  size_t len;
} out_t;

int kr_want_colour(int fd) {
  const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
  if (no && *no) return 0;
  if (term && !strcmp(term, "dumb")) return 0;
  return isatty(fd);
}

void kr_fmt_dur(int64_t ns, char *out, size_t cap) {
  const char *sign = ns < 0 ? "-" : "";
  uint64_t v = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
  if (v < 1000000000ull) {
    snprintf(out, cap, "%s%.1fms", sign, (double)v / 1e6);
  } else if (v < 60000000000ull) {
    snprintf(out, cap, "%s%.2fs", sign, (double)v / 1e9);
  } else {
    uint64_t s = v / 1000000000ull;
    snprintf(out, cap, "%s%llum%02llus", sign, (unsigned long long)(s / 60),
             (unsigned long long)(s % 60));
  }
}

static void put(out_t *o, const char *colour, const char *s) {
  if (o->colour) fputs(colour, o->f);
  fputs(s, o->f);
  if (o->colour) fputs(C_RESET, o->f);
}

static void object_label(const kr_span_t *s, char *out, size_t cap) {
  const char *name = *s->oname ? s->oname : "(generated)";
  const char *kind = *s->kind ? s->kind : "?";
  if (*s->ns)
    snprintf(out, cap, "%s %s/%s", kind, s->ns, name);
  else
    snprintf(out, cap, "%s %s", kind, name);
}

/* "3 fields" (of a diff) or "refused 409" (the audit's code), when known. */
static void details(out_t *o, const kr_span_t *s) {
  char buf[48];
  long code = kr_refused_code(s);
  size_t n = kr_change_fields(s);
  if (code) {
    snprintf(buf, sizeof buf, "refused %ld", code);
    fputs("  ", o->f);
    put(o, C_RED, buf);
  } else if (n) {
    snprintf(buf, sizeof buf, "%zu field%s", n, n == 1 ? "" : "s");
    fputs("  ", o->f);
    put(o, C_DIM, buf);
  }
}

static void line(out_t *o, const kr_span_t *s, const char *glyph) {
  char obj[700], at[32], since[32];
  if (o->len) put(o, C_DIM, o->prefix);
  if (*glyph) put(o, C_DIM, glyph);
  object_label(s, obj, sizeof obj);
  put(o, C_BOLD, obj);
  fputs("  ", o->f);
  put(o, C_CYAN, s->service);
  fprintf(o->f, "  %s  ", s->name);
  at[0] = '+';
  kr_fmt_dur(kr_diff(s->end_ns, o->t->t0_ns), at + 1, sizeof at - 1);
  if (at[1] == '-') memmove(at, at + 1, strlen(at)); /* "-1.0ms", not "+-1.0ms" */
  put(o, C_YELLOW, at);
  if (s->cause >= 0) {
    kr_fmt_dur(kr_diff(s->end_ns, s->start_ns), since, sizeof since);
    fputs("  (", o->f);
    put(o, C_GREEN, since);
    fputs(" after cause)", o->f);
  }
  details(o, s);
  fputc('\n', o->f);
}

static int push(out_t *o, const char *s) {
  size_t n = strlen(s);
  if (o->len + n + 1 > sizeof o->prefix) return -1;
  memcpy(o->prefix + o->len, s, n + 1);
  o->len += n;
  return 0;
}

static void subtree(out_t *o, long i) {
  const kr_span_t *s = &o->t->spans[i];
  for (size_t k = 0; k < s->nchildren; k++) {
    int last = k + 1 == s->nchildren;
    line(o, &o->t->spans[s->children[k]], last ? "└─ " : "├─ ");
    size_t keep = o->len;
    if (push(o, last ? "   " : "│  ") != 0) return;
    subtree(o, s->children[k]);
    o->len = keep;
    o->prefix[keep] = '\0';
  }
}

void kr_render_tree(FILE *f, const kr_trace_t *t, int colour) {
  static out_t o; /* large; rendering is single-threaded */
  memset(&o, 0, sizeof o);
  o.f = f, o.colour = colour, o.t = t;
  fprintf(f, "cpid %s: %zu write%s, %zu CPID%s%s\n", t->cpid, t->n, t->n == 1 ? "" : "s", t->ncpids,
          t->ncpids == 1 ? "" : "s", t->truncated ? " (truncated by the server)" : "");
  if (!t->n) fputs("no spans yet (the webhook ships them within a second)\n", f);
  for (size_t k = 0; k < t->ntop; k++) {
    line(&o, &t->spans[t->top[k]], "");
    subtree(&o, t->top[k]);
  }
}

char *kr_dashboard_url(const char *server, const char *cpid) {
  size_t n = strlen(server);
  while (n && server[n - 1] == '/') n--;
  static const char mid[] = "/#/trace/";
  size_t len = n + sizeof mid - 1 + strlen(cpid);
  char *url = malloc(len + 1);
  if (url) snprintf(url, len + 1, "%.*s%s%s", (int)n, server, mid, cpid);
  return url;
}

void kr_render_hops(FILE *f, const kr_trace_t *t, int colour) {
  kr_hop_t *rows = NULL;
  size_t n = 0;
  if (kr_hops(t, &rows, &n) != RIPPLE_OK) return;
  if (!n) {
    free(rows);
    return;
  }
  int wc = (int)strlen("component"), ww = (int)strlen("write");
  for (size_t r = 0; r < n; r++) {
    if ((int)strlen(rows[r].service) > wc) wc = (int)strlen(rows[r].service);
    if ((int)strlen(rows[r].name) > ww) ww = (int)strlen(rows[r].name);
  }
  fputc('\n', f);
  if (colour) fputs(C_BOLD, f);
  fprintf(f, "%-*s  %-*s  %5s  %9s  %9s\n", wc, "component", ww, "write", "count", "p50", "max");
  if (colour) fputs(C_RESET, f);
  for (size_t r = 0; r < n; r++) {
    char p50[32], max[32];
    kr_fmt_dur(rows[r].p50_ns, p50, sizeof p50);
    kr_fmt_dur(rows[r].max_ns, max, sizeof max);
    fprintf(f, "%-*s  %-*s  %5zu  %9s  %9s\n", wc, rows[r].service, ww, rows[r].name, rows[r].count,
            p50, max);
  }
  free(rows);
}
