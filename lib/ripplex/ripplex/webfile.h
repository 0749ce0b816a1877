/*
 * ripplex/webfile.h - how the dashboard's files are served, wherever they are
 * served from: ripple-server (server/serve/web.c) and the local relay of
 * `kubectl ripple dashboard` (kubectl/relay.c, dashboard.c) give the same
 * Content-Type for the same file and the same Content-Security-Policy.
 *
 * Memory: the strings are static; nothing is allocated.
 */
#ifndef RIPPLEX_WEBFILE_H
#define RIPPLEX_WEBFILE_H

/* The dashboard has no inline script or style and talks to its own origin only. */
#define WEBFILE_CSP                                                                  \
  "default-src 'self'; img-src 'self' data:; style-src 'self'; connect-src 'self'; " \
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

/* The Content-Type of a file by its name's extension (after the last '/'),
 * application/octet-stream for any other. */
const char *webfile_type(const char *name);

#endif
