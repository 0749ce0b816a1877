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

/* The security headers of every answer about the dashboard's files, as
 * name, value pairs for httpd_send_headers (ripplex/httpd.h): its CSP, no
 * sniffing, no framing, no referrer, and no use by another origin. */
#define WEBFILE_SECURITY_HEADERS                                                                  \
  "Content-Security-Policy", WEBFILE_CSP, "X-Content-Type-Options", "nosniff", "X-Frame-Options", \
      "DENY", "Referrer-Policy", "no-referrer", "Cross-Origin-Resource-Policy", "same-origin",    \
      "Cross-Origin-Opener-Policy", "same-origin"

/* The Content-Type of a file by its name's extension (after the last '/'),
 * application/octet-stream for any other. */
const char *webfile_type(const char *name);

#endif
