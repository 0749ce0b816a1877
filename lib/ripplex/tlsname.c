/*
 * tlsname.c - the text half of tlspeer.h: the names --client-name takes,
 * and how a certificate's name is matched against them.
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
