/*
 * rnd.c - random bytes for CPIDs, span ids and hash seeds.
 *
 * A system call per CPID would dominate the merge path, so each thread keeps a
 * small buffer of bytes from the kernel's CSPRNG (getrandom). After fork() the
 * child must not reuse bytes the parent will also use, hence the atfork
 * handler that empties the buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "ripplex/rnd.h"

#define RND_BUF 512

static _Thread_local struct {
  unsigned char b[RND_BUF];
  size_t left;
} rnd;

/* macOS has no getrandom(2): getentropy(2) instead, at most 256 bytes a call
 * (the release's macOS build of kubectl-ripple, docs/install.md "Releases"). */
static ssize_t sys_random(unsigned char *p, size_t len) {
#if defined(__APPLE__)
  size_t n = len < 256 ? len : 256;
  return getentropy(p, n) == 0 ? (ssize_t)n : -1;
#else
  return getrandom(p, len, 0);
#endif
}

static pthread_once_t rnd_once = PTHREAD_ONCE_INIT;
static void rnd_child(void) { rnd.left = 0; }
static void rnd_init(void) { pthread_atfork(NULL, NULL, rnd_child); }

/* Fill exactly len bytes straight from the kernel. */
static int os_random(unsigned char *p, size_t len) {
  while (len > 0) {
    ssize_t n = sys_random(p, len);
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
