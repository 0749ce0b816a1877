/*
 * wout.c - ripple-watch's output: one file (or stdout) of JSON lines, rotated
 * by size and/or age, each rotated file compressed with zstd. Rotation runs
 * inline, in the writer's lock: a rotated file is small (it is bounded by
 * --rotate-size) and compressing it inline keeps every line on disk in
 * exactly one place at every moment, which the checkpoints rely on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "ripple/ripple.h"
#include "wrec.h"

/* A kill in the middle of a write can leave a torn last line: cut it off, so
 * the file holds whole records only (its change is delivered again, since no
 * checkpoint can cover it). */
static int cut_torn_tail(const char *path) {
  int fd = open(path, O_RDWR);
  if (fd < 0) return errno == ENOENT ? RIPPLE_OK : RIPPLE_ESYS;
  off_t end = lseek(fd, 0, SEEK_END), pos = end;
  char buf[4096];
  int rc = RIPPLE_OK;
  while (pos > 0) {
    size_t n = pos < (off_t)sizeof buf ? (size_t)pos : sizeof buf;
    if (pread(fd, buf, n, pos - (off_t)n) != (ssize_t)n) {
      rc = RIPPLE_ESYS;
      break;
    }
    size_t i = n;
    while (i > 0 && buf[i - 1] != '\n') i--;
    if (i > 0) {
      pos = pos - (off_t)n + (off_t)i;
      break;
    }
    pos -= (off_t)n;
  }
  if (rc == RIPPLE_OK && pos != end) {
    ripple_log(RIPPLE_LOG_WARN, "watch_out_torn_tail", "bytes=%lld", (long long)(end - pos));
    if (ftruncate(fd, pos) != 0) rc = RIPPLE_ESYS;
  }
  close(fd);
  return rc;
}

int wout_open(wout_t *o, const char *path, uint64_t rotate_size, int64_t rotate_ns) {
  memset(o, 0, sizeof *o);
  o->rotate_size = rotate_size;
  o->rotate_ns = rotate_ns;
  o->opened_ns = ripple_now_ns();
  if (!path || !strcmp(path, "-")) {
    o->f = stdout;
    return RIPPLE_OK;
  }
  int rc = cut_torn_tail(path);
  if (rc != RIPPLE_OK) return rc;
  o->path = strdup(path);
  if (!o->path) return RIPPLE_ENOMEM;
  o->f = fopen(path, "a");
  struct stat st;
  if (!o->f || fstat(fileno(o->f), &st) != 0) {
    if (o->f) fclose(o->f);
    free(o->path);
    o->path = NULL;
    o->f = NULL;
    return RIPPLE_ESYS;
  }
  /* Records are a few KiB each: a large buffer turns a write(2) per record
   * into one per MiB. Nothing is lost by it: checkpoints flush and fsync
   * before they cover a line. */
  setvbuf(o->f, NULL, _IOFBF, 1u << 20);
  o->size = (uint64_t)st.st_size;
  o->ino = st.st_ino;
  return RIPPLE_OK;
}

int wout_write(wout_t *o, const char *line, size_t len) {
  if (fwrite(line, 1, len, o->f) != len) return RIPPLE_ESYS;
  o->size += len;
  return RIPPLE_OK;
}

int wout_sync(wout_t *o) {
  if (fflush(o->f) != 0) return RIPPLE_ESYS;
  /* stdout may be a pipe, where fsync fails with EINVAL: nothing to do. */
  if (fsync(fileno(o->f)) != 0 && errno != EINVAL && errno != EROFS) return RIPPLE_ESYS;
  return RIPPLE_OK;
}

int wout_due(const wout_t *o, int64_t now_ns) {
  if (!o->path || o->size == 0) return 0;
  if (o->rotate_size && o->size >= o->rotate_size) return 1;
  return o->rotate_ns && now_ns - o->opened_ns >= o->rotate_ns;
}

static int compress_loop(FILE *in, FILE *out, ZSTD_CCtx *cc) {
  enum { CHUNK = 1 << 16 };
  char *ibuf = malloc(CHUNK), *obuf = malloc(ZSTD_CStreamOutSize());
  int rc = ibuf && obuf ? RIPPLE_OK : RIPPLE_ENOMEM;
  size_t n;
  int last = 0;
  while (rc == RIPPLE_OK && !last) {
    n = fread(ibuf, 1, CHUNK, in);
    last = n < CHUNK;
    ZSTD_inBuffer ib = {ibuf, n, 0};
    size_t left;
    do {
      ZSTD_outBuffer ob = {obuf, ZSTD_CStreamOutSize(), 0};
      left = ZSTD_compressStream2(cc, &ob, &ib, last ? ZSTD_e_end : ZSTD_e_continue);
      if (ZSTD_isError(left))
        rc = RIPPLE_ERANGE;
      else if (fwrite(obuf, 1, ob.pos, out) != ob.pos)
        rc = RIPPLE_ESYS;
    } while (rc == RIPPLE_OK && (last ? left != 0 : ib.pos < ib.size));
  }
  if (rc == RIPPLE_OK && ferror(in)) rc = RIPPLE_ESYS;
  free(ibuf);
  free(obuf);
  return rc;
}

int wzstd_file(const char *src, const char *dst) {
  FILE *in = fopen(src, "rb");
  if (!in) return RIPPLE_ESYS;
  FILE *out = fopen(dst, "wb");
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  int rc = out && cc ? RIPPLE_OK : RIPPLE_ESYS;
  if (rc == RIPPLE_OK) {
    ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
    rc = compress_loop(in, out, cc);
  }
  if (out && fflush(out) != 0) rc = RIPPLE_ESYS;
  if (out && rc == RIPPLE_OK && fsync(fileno(out)) != 0) rc = RIPPLE_ESYS;
  if (out) fclose(out);
  fclose(in);
  ZSTD_freeCCtx(cc);
  if (rc != RIPPLE_OK) unlink(dst);
  return rc;
}

int wout_rotate(wout_t *o, char **rotated) {
  if (!o->path) return RIPPLE_EINVAL;
  int rc = wout_sync(o);
  if (rc != RIPPLE_OK) return rc;
  char ts[RIPPLE_TIME_STRLEN + 1];
  ripple_time_format(ripple_now_ns(), ts);
  size_t cap = strlen(o->path) + sizeof ts + 8;
  char *old = malloc(cap), *zst = malloc(cap);
  if (!old || !zst) {
    free(old);
    free(zst);
    return RIPPLE_ENOMEM;
  }
  snprintf(old, cap, "%s.%s", o->path, ts);
  snprintf(zst, cap, "%s.%s.zst", o->path, ts);
  FILE *nf = NULL;
  struct stat st;
  if (rename(o->path, old) != 0 || !(nf = fopen(o->path, "a")) || fstat(fileno(nf), &st) != 0) {
    rc = RIPPLE_ESYS;
    if (nf) fclose(nf);
  } else {
    fclose(o->f);
    o->f = nf;
    setvbuf(o->f, NULL, _IOFBF, 1u << 20);
    o->size = 0;
    o->ino = st.st_ino;
    o->opened_ns = ripple_now_ns();
    rc = wzstd_file(old, zst);
    /* The uncompressed copy stays when compression fails: nothing is lost. */
    if (rc == RIPPLE_OK) unlink(old);
  }
  free(old);
  if (rc == RIPPLE_OK && rotated)
    *rotated = zst;
  else
    free(zst);
  return rc;
}

void wout_close(wout_t *o) {
  if (!o->f) return;
  wout_sync(o);
  if (o->path) fclose(o->f);
  free(o->path);
  memset(o, 0, sizeof *o);
}
