/*
 * error.c - error codes to text, and the library's one deallocator.
 */
#include <stdlib.h>

#include "ripple/ripple.h"

static const struct {
  int code;
  const char *name;
  const char *text;
} errors[] = {
    {RIPPLE_OK, "RIPPLE_OK", "success"},
    {RIPPLE_EINVAL, "RIPPLE_EINVAL", "invalid argument"},
    {RIPPLE_ENOMEM, "RIPPLE_ENOMEM", "out of memory"},
    {RIPPLE_ENOENT, "RIPPLE_ENOENT", "no trace context present"},
    {RIPPLE_EBADCTX, "RIPPLE_EBADCTX", "malformed trace context"},
    {RIPPLE_EVERSION, "RIPPLE_EVERSION", "unknown trace context format version"},
    {RIPPLE_EJSON, "RIPPLE_EJSON", "malformed or unexpected JSON document"},
    {RIPPLE_ERANGE, "RIPPLE_ERANGE", "buffer too small or limit exceeded"},
    {RIPPLE_EFULL, "RIPPLE_EFULL", "queue full, record dropped"},
    {RIPPLE_ESYS, "RIPPLE_ESYS", "system call failed"},
    {RIPPLE_ESTATE, "RIPPLE_ESTATE", "handle is shutting down"},
    {RIPPLE_ETIMEDOUT, "RIPPLE_ETIMEDOUT", "timed out"},
};

const char *ripple_strerror(int err) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].code == err) return errors[i].text;
  return "unknown error";
}

const char *ripple_errname(int err) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].code == err) return errors[i].name;
  return "RIPPLE_E?";
}

void ripple_free(void *p) { free(p); }
