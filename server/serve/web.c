/*
 * web.c - the dashboard's static files (web.h): read once at start, served
 * from memory with the headers that keep a browser from doing more with them
 * than the dashboard means to.
 *
 * Every file is opened relative to the directory's descriptor with
 * O_NOFOLLOW, so a symbolic link never leads a request out of the
 * directory, and a request can only name a file that was loaded: there is
 * no path from a URL to the file system at all.
 */
#include "serve/web.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ripple/ripple.h"
#include "ripplex/httpd.h"
#include "ripplex/webfile.h"

struct web {
  web_file_t f[WEB_MAX_FILES];
  size_t n, bytes;
};

static const char cache_index[] = "no-cache";
/* Asset names carry a hash of their content: a changed file has a new name. */
static const char cache_asset[] = "public, max-age=31536000, immutable";

const char *web_type(const char *name) { return webfile_type(name); }

/* ---- loading ---------------------------------------------------------------- */

/* Names a bundler writes; anything else under assets/ is not served. */
static int plain_name(const char *s) {
  size_t n = strlen(s);
  return n > 0 && n <= 200 && s[0] != '.' &&
         strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* Up to size bytes of fd; *got less at the end of a file shortened meanwhile. */
static int read_all(int fd, char *buf, size_t size, size_t *got) {
  size_t n = 0;
  while (n < size) {
    ssize_t r = read(fd, buf + n, size - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    n += (size_t)r;
  }
  *got = n;
  return 0;
}

/* Read the regular file fd (closed here) as name into the next slot. */
static int load_fd(web_t *w, const char *dir, int fd, const char *name, char *err, size_t cap) {
  struct stat st;
  int rc = RIPPLE_ESYS;
  char *data = NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    snprintf(err, cap, "%s/%s: not a regular file", dir, name);
    goto out;
  }
  if (w->n == WEB_MAX_FILES) {
    snprintf(err, cap, "%s: more than %d files; is it the dashboard bundle's directory?", dir,
             WEB_MAX_FILES);
    rc = RIPPLE_ERANGE;
    goto out;
  }
  size_t size = (size_t)st.st_size;
  if (size > WEB_MAX_BYTES - w->bytes) {
    snprintf(err, cap, "%s: more than %zu MiB of files; is it the dashboard bundle's directory?",
             dir, WEB_MAX_BYTES >> 20);
    rc = RIPPLE_ERANGE;
    goto out;
  }
  web_file_t *f = &w->f[w->n];
  if (!(data = malloc(size + 1)) || !(f->name = strdup(name))) {
    rc = RIPPLE_ENOMEM;
    snprintf(err, cap, "out of memory reading %s/%s", dir, name);
    goto out;
  }
  size_t got;
  if (read_all(fd, data, size, &got) != 0) {
    snprintf(err, cap, "%s/%s: %s", dir, name, strerror(errno));
    free(f->name);
    f->name = NULL;
    goto out;
  }
  data[got] = '\0';
  f->data = data, data = NULL;
  f->len = got; /* a file shortened meanwhile is served as read */
  f->type = web_type(name);
  f->cache = strncmp(name, "assets/", 7) ? cache_index : cache_asset;
  w->bytes += got;
  w->n++;
  rc = RIPPLE_OK;
out:
  free(data);
  close(fd);
  return rc;
}

static int load_index(web_t *w, const char *dir, int dfd, char *err, size_t cap) {
  int fd = openat(dfd, "index.html", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, cap, "%s/index.html: %s", dir,
             errno == ELOOP ? "a symbolic link (not followed)" : strerror(errno));
    return RIPPLE_ESYS;
  }
  return load_fd(w, dir, fd, "index.html", err, cap);
}

/* Every regular file directly under dir/assets/; none when it is absent. */
static int load_assets(web_t *w, const char *dir, int dfd, char *err, size_t cap) {
  int afd = openat(dfd, "assets", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (afd < 0 && errno == ENOENT) return RIPPLE_OK;
  if (afd < 0) {
    snprintf(err, cap, "%s/assets: %s", dir,
             errno == ELOOP || errno == ENOTDIR
                 ? "not a directory (symbolic links are not followed)"
                 : strerror(errno));
    return RIPPLE_ESYS;
  }
  DIR *d = fdopendir(afd);
  if (!d) {
    snprintf(err, cap, "%s/assets: %s", dir, strerror(errno));
    close(afd);
    return RIPPLE_ESYS;
  }
  int rc = RIPPLE_OK;
  for (struct dirent *e; rc == RIPPLE_OK && (e = readdir(d));) {
    struct stat st;
    if (!plain_name(e->d_name) || fstatat(afd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode))
      continue;
    int fd = openat(afd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue; /* replaced meanwhile by what is not served */
    char name[sizeof "assets/" + sizeof e->d_name];
    snprintf(name, sizeof name, "assets/%s", e->d_name);
    rc = load_fd(w, dir, fd, name, err, cap);
  }
  closedir(d);
  return rc;
}

int web_open(const char *dir, web_t **out, char *err, size_t cap) {
  if (!dir || !out) return RIPPLE_EINVAL;
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    snprintf(err, cap, "%s: %s", dir, strerror(errno));
    return RIPPLE_ESYS;
  }
  web_t *w = calloc(1, sizeof *w);
  int rc = RIPPLE_ENOMEM;
  if (!w)
    snprintf(err, cap, "out of memory");
  else if ((rc = load_index(w, dir, dfd, err, cap)) == RIPPLE_OK)
    rc = load_assets(w, dir, dfd, err, cap);
  close(dfd);
  if (rc != RIPPLE_OK) {
    web_free(w);
    return rc;
  }
  *out = w;
  return RIPPLE_OK;
}

void web_free(web_t *w) {
  if (!w) return;
  for (size_t i = 0; i < w->n; i++) {
    free(w->f[i].name);
    free(w->f[i].data);
  }
  free(w);
}

size_t web_files(const web_t *w) { return w ? w->n : 0; }
size_t web_bytes(const web_t *w) { return w ? w->bytes : 0; }

/* ---- serving ---------------------------------------------------------------- */

static int is_index(const char *url) { return !strcmp(url, "/") || !strcmp(url, "/index.html"); }

int web_claims(const char *url) { return is_index(url) || !strncmp(url, "/assets/", 8); }

const web_file_t *web_find(const web_t *w, const char *url) {
  if (!w || !url || strstr(url, "..") || strstr(url, "//") || strchr(url, '%')) return NULL;
  const char *name = "index.html";
  if (!is_index(url)) {
    if (strncmp(url, "/assets/", 8) != 0 || !plain_name(url + 8)) return NULL;
    name = url + 1;
  }
  for (size_t i = 0; i < w->n; i++)
    if (!strcmp(w->f[i].name, name)) return &w->f[i];
  return NULL;
}

static const char missing_page[] =
    "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    "<title>ripple: no dashboard</title></head>\n<body>\n"
    "<h1>The dashboard is not installed</h1>\n"
    "<p>This ripple-server answers its HTTP API (<code>/v1/...</code>, docs/api.md) but has no "
    "dashboard files.</p>\n"
    "<p>Build them with <code>make</code> (the bundle goes to <code>share/ripple/web</code> "
    "beside the build's <code>bin/</code>, where the server looks for it), or start the server "
    "with <code>--web DIR</code>, DIR holding the bundle's <code>index.html</code> and "
    "<code>assets/</code>.</p>\n"
    "</body></html>\n";

enum MHD_Result web_answer(const web_t *w, struct MHD_Connection *c, const char *url) {
  const web_file_t *f = web_find(w, url);
  const char *hdrs[] = {WEBFILE_SECURITY_HEADERS, f ? "Cache-Control" : NULL, f ? f->cache : NULL,
                        NULL};
  if (f) return httpd_send_headers(c, 200, f->type, f->data, f->len, hdrs);
  if (!w && is_index(url))
    return httpd_send_headers(c, 404, "text/html; charset=utf-8", missing_page,
                              sizeof missing_page - 1, hdrs);
  static const char nf[] = "not found\n";
  return httpd_send_headers(c, 404, "text/plain; charset=utf-8", nf, sizeof nf - 1, hdrs);
}
