/*
 * core.h - what the subsystems above the graph share of the trace server's
 * state: the merge graph and its indexes, the lock that guards them, and the
 * two stores behind them (records and details).
 *
 * The server (serve/server.h) owns one inside its srv_t, opens and frees
 * what it points to, and hands it to search (search.h), analysis and export,
 * so that none of them needs the server's own header: dependencies point
 * down only (server/README.md).
 *
 * Threads: g, roots and objects are written by the store's writer thread
 * (its commit hook) under the write lock and read by queries under the read
 * lock; store and facts are safe to call from any thread.
 */
#ifndef RIPPLE_SERVER_CORE_H
#define RIPPLE_SERVER_CORE_H

#include <pthread.h>

#include "graph/graph.h"
#include "graph/objects.h"
#include "graph/roots.h"
#include "store/facts.h"
#include "store/store.h"

typedef struct core {
  graph_t *g;
  roots_t *roots;        /* objects' root mergelogs, by uid */
  objects_t *objects;    /* objects' recent CPIDs, by kind/namespace/name */
  pthread_rwlock_t lock; /* guards g, roots and objects: the store's writer thread writes,
                            queries read */
  store_t *store;
  facts_t *facts; /* details: changes, Events, audit events */
} core_t;

#endif
