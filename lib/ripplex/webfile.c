/*
 * webfile.c - the Content-Type of the dashboard's files (ripplex/webfile.h).
 */
#include "ripplex/webfile.h"

#include <string.h>

const char webfile_csp[] = WEBFILE_CSP;

const char *webfile_type(const char *name) {
  static const char *const t[][2] = {{".html", "text/html; charset=utf-8"},
                                     {".js", "text/javascript; charset=utf-8"},
                                     {".css", "text/css; charset=utf-8"},
                                     {".svg", "image/svg+xml"},
                                     {".png", "image/png"},
                                     {".map", "application/json"},
                                     {".json", "application/json"},
                                     {".woff2", "font/woff2"},
                                     {".ico", "image/x-icon"},
                                     {".txt", "text/plain; charset=utf-8"}};
  const char *slash = strrchr(name, '/'), *dot = strrchr(name, '.');
  if (slash && dot && dot < slash) dot = NULL;
  for (size_t i = 0; dot && i < sizeof t / sizeof t[0]; i++)
    if (!strcmp(dot, t[i][0])) return t[i][1];
  return "application/octet-stream";
}
