/*
 * cpid.c - Change Propagation IDs: random UUIDs, their text form, and the
 * library's random source.
 *
 * CPIDs are generated independently by many components, so they must never
 * collide: they are version-4 UUIDs from the kernel's CSPRNG (getrandom). A
 * system call per CPID would dominate the merge path, so each thread keeps a
 * small buffer of random bytes. After fork() the child must not reuse bytes the
 * parent will also use, hence the atfork handler that empties the buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/random.h>
#include <unistd.h>

#include "internal.h"

#define RND_BUF 512

static _Thread_local struct {
  unsigned char b[RND_BUF];
  size_t left;
} rnd;

static pthread_once_t rnd_once = PTHREAD_ONCE_INIT;
static void rnd_child(void) { rnd.left = 0; }
static void rnd_init(void) { pthread_atfork(NULL, NULL, rnd_child); }

/* Fill exactly len bytes straight from the kernel. */
static int os_random(unsigned char *p, size_t len) {
  while (len > 0) {
    ssize_t n = getrandom(p, len, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != ENOSYS) return RIPPLE_ESYS;
      /* Kernels before 3.17: fall back to the device. */
      int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
      if (fd < 0) return RIPPLE_ESYS;
      while (len > 0) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
          close(fd);
          return RIPPLE_ESYS;
        }
        p += r;
        len -= (size_t)r;
      }
      close(fd);
      return RIPPLE_OK;
    }
    p += n;
    len -= (size_t)n;
  }
  return RIPPLE_OK;
}

int rnd_bytes(void *buf, size_t len) {
  pthread_once(&rnd_once, rnd_init);
  unsigned char *out = buf;
  if (len > RND_BUF / 2) return os_random(out, len);
  if (rnd.left < len) {
    int rc = os_random(rnd.b, RND_BUF);
    if (rc != RIPPLE_OK) return rc;
    rnd.left = RND_BUF;
  }
  memcpy(out, rnd.b + (RND_BUF - rnd.left), len);
  /* Wipe what we hand out so a core dump does not reveal future/past IDs. */
  memset(rnd.b + (RND_BUF - rnd.left), 0, len);
  rnd.left -= len;
  return RIPPLE_OK;
}

void cpid_from_random(ripple_cpid_t *id) {
  id->b[6] = (uint8_t)((id->b[6] & 0x0f) | 0x40); /* version 4 */
  id->b[8] = (uint8_t)((id->b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
}

int ripple_cpid_generate(ripple_cpid_t *out) {
  if (!out) return RIPPLE_EINVAL;
  int rc = rnd_bytes(out->b, sizeof out->b);
  if (rc != RIPPLE_OK) return rc;
  cpid_from_random(out);
  return RIPPLE_OK;
}

static int hexval(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int ripple_cpid_parse(const char *s, size_t len, ripple_cpid_t *out) {
  if (!s || !out) return RIPPLE_EINVAL;
  if (len != RIPPLE_CPID_STRLEN) return RIPPLE_EBADCTX;
  ripple_cpid_t id;
  size_t j = 0;
  for (size_t i = 0; i < RIPPLE_CPID_STRLEN;) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return RIPPLE_EBADCTX;
      i++;
      continue;
    }
    int hi = hexval((unsigned char)s[i]), lo = hexval((unsigned char)s[i + 1]);
    if (hi < 0 || lo < 0) return RIPPLE_EBADCTX;
    id.b[j++] = (uint8_t)(hi << 4 | lo);
    i += 2;
  }
  if (cpid_nil(&id)) return RIPPLE_EBADCTX;
  *out = id;
  return RIPPLE_OK;
}

void ripple_cpid_format(const ripple_cpid_t *id, char *out) {
  static const char hex[] = "0123456789abcdef";
  size_t o = 0;
  for (size_t i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
    out[o++] = hex[id->b[i] >> 4];
    out[o++] = hex[id->b[i] & 15];
  }
  out[o] = '\0';
}

int ripple_cpid_equal(const ripple_cpid_t *a, const ripple_cpid_t *b) { return cpid_eq(a, b); }

int ripple_cpid_is_nil(const ripple_cpid_t *id) { return cpid_nil(id); }
