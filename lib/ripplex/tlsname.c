/*
 * tlsname.c - the text half of tlspeer.h: client names and subject DNs.
 * No TLS library here, so that the fuzz target runs it alone.
 */
#include <string.h>

#include "ripple/ripple.h"
#include "ripplex/tlspeer.h"

static int name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == ':' || c == '@';
}

int tlspeer_name_valid(const char *name) {
  if (!name) return 0;
  size_t n = strnlen(name, TLSPEER_NAME_MAX + 1);
  if (!n || n > TLSPEER_NAME_MAX) return 0;
  for (size_t i = 0; i < n; i++)
    if (!name_char(name[i])) return 0;
  return 1;
}

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c; }

int tlspeer_name_match(const char *const *names, size_t nnames, const char *cand, size_t len) {
  if (!cand || !len || len > TLSPEER_NAME_MAX || memchr(cand, '\0', len)) return 0;
  for (size_t i = 0; i < nnames; i++) {
    const char *n = names[i];
    if (!n || strlen(n) != len) continue;
    size_t k = 0;
    while (k < len && lower(n[k]) == lower(cand[k])) k++;
    if (k == len) return 1;
  }
  return 0;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The attribute type at p (before '='): 1 for the common name ("CN" in any
 * case, or its OID 2.5.4.3), 0 for another, -1 malformed. *p moves past
 * the '='. */
static int attr_type(const char **p, const char *end) {
  const char *s = *p;
  while (*p < end && **p != '=') {
    char c = **p;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '.'))
      return -1;
    (*p)++;
  }
  if (*p == end || *p == s) return -1;
  size_t n = (size_t)(*p - s);
  (*p)++;
  return (n == 2 && lower(s[0]) == 'c' && lower(s[1]) == 'n') ||
         (n == 7 && !memcmp(s, "2.5.4.3", 7));
}

/* One attribute value at p, unescaped into out (when out is not NULL) up to
 * the next unescaped ',' or '+' or end. RIPPLE_OK, RIPPLE_EINVAL, RIPPLE_ERANGE. */
static int attr_value(const char **p, const char *end, char *out, size_t cap, size_t *outlen) {
  size_t n = 0;
  if (*p < end && **p == '#') return RIPPLE_EINVAL; /* BER in hex: no text to match */
  while (*p < end && **p != ',' && **p != '+') {
    char c = **p;
    if (c == '\0') return RIPPLE_EINVAL;
    if (c == '\\') {
      if (++*p == end) return RIPPLE_EINVAL;
      int hi = hexval(**p);
      if (hi >= 0 && *p + 1 < end && hexval((*p)[1]) >= 0) {
        c = (char)(hi * 16 + hexval((*p)[1]));
        ++*p;
        if (c == '\0') return RIPPLE_EINVAL;
      } else if (strchr(" \"#+,;<=>\\", **p) && **p) {
        c = **p;
      } else {
        return RIPPLE_EINVAL;
      }
    } else if (c == '"' || c == ';' || c == '<' || c == '>') {
      return RIPPLE_EINVAL; /* must be escaped in RFC 4514 */
    }
    if (out) {
      if (n + 1 >= cap) return RIPPLE_ERANGE;
      out[n] = c;
    }
    n++;
    ++*p;
  }
  if (out) out[n] = '\0';
  *outlen = n;
  return RIPPLE_OK;
}

static int dn_cn(const char *dn, size_t len, char *out, size_t cap) {
  const char *p = dn, *end = dn + len;
  int found = 0;
  out[0] = '\0';
  while (p < end) {
    int cn = attr_type(&p, end);
    if (cn < 0) return RIPPLE_EINVAL;
    if (cn && found) return RIPPLE_EINVAL;
    size_t n = 0;
    int rc = attr_value(&p, end, cn ? out : NULL, cap, &n);
    if (rc != RIPPLE_OK) return rc;
    found |= cn;
    if (p < end && ++p == end) return RIPPLE_EINVAL; /* a separator with nothing after */
  }
  return found ? RIPPLE_OK : RIPPLE_ENOENT;
}

int tlspeer_dn_cn(const char *dn, size_t len, char *out, size_t cap) {
  if (!dn || !out || !cap) return RIPPLE_EINVAL;
  int rc = dn_cn(dn, len, out, cap);
  if (rc != RIPPLE_OK) out[0] = '\0'; /* nothing half-read is left to be used */
  return rc;
}
