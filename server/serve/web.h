/*
 * web.h - the dashboard's static files (docs/server.md, "The dashboard"):
 * index.html and the files under assets/ of one directory, read into memory
 * once at start and served from there, so a request never touches the file
 * system and nothing added to the directory later is ever served.
 *
 * Memory: web_open copies everything it keeps; web_free releases it. A
 * web_t is read-only once open and may be shared by any number of threads;
 * it must outlive the HTTP server that serves it.
 */
#ifndef RIPPLE_SERVER_WEB_H
#define RIPPLE_SERVER_WEB_H

#include <microhttpd.h>
#include <stddef.h>

#define WEB_MAX_FILES 256
#define WEB_MAX_BYTES ((size_t)32 << 20)

typedef struct web_file {
  char *name;        /* "index.html" or "assets/<name>" */
  const char *type;  /* Content-Type (web_type) */
  const char *cache; /* Cache-Control */
  char *data;        /* len bytes and a NUL */
  size_t len;
} web_file_t;

typedef struct web web_t;

/* Read dir/index.html and every regular file directly under dir/assets/
 * (assets/ may be absent). Symbolic links are not followed: one at
 * index.html or assets/ is refused, one under assets/ is left out, as are
 * subdirectories, hidden files and names of anything but letters, digits,
 * '.', '-' and '_'. More than WEB_MAX_FILES files or WEB_MAX_BYTES bytes in
 * all is refused. On failure err says what was wrong (RIPPLE_ESYS,
 * RIPPLE_ERANGE, RIPPLE_ENOMEM). */
int web_open(const char *dir, web_t **out, char *err, size_t cap);
void web_free(web_t *w);
/* How many files were loaded, and their bytes. */
size_t web_files(const web_t *w);
size_t web_bytes(const web_t *w);

/* Is url a dashboard path: "/", "/index.html" or "/assets/..."? */
int web_claims(const char *url);
/* The file a request path names: "/" and "/index.html" are index.html,
 * "/assets/<name>" that file. NULL for anything else: a name not loaded,
 * any "..", "//", '%' or subdirectory. w may be NULL (nothing found). */
const web_file_t *web_find(const web_t *w, const char *url);
/* The Content-Type for a file name, by its extension. */
const char *web_type(const char *name);

/* Answer a GET or HEAD of a path web_claims: the file with the dashboard's
 * security headers; 404 otherwise, for "/" and "/index.html" with a page
 * saying how to install the dashboard when w is NULL. */
enum MHD_Result web_answer(const web_t *w, struct MHD_Connection *c, const char *url);

#endif
