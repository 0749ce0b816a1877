/*
 * wconfig.h - ripple-watch's --config FILE.yaml: resources, each with an
 * optional namespace and labelSelector (wconfig.c shows the format).
 */
#ifndef RIPPLE_WATCH_WCONFIG_H
#define RIPPLE_WATCH_WCONFIG_H

#include <stddef.h>

#include "agent.h"

/* Add the file's resources to o (and its defaults where o has none). On
 * failure err names the file and what is wrong. */
int wconfig_load(const char *path, agent_opts_t *o, char *err, size_t cap);

#endif
