/*
 * metrics.c - see metrics.h.
 */
#include "serve/metrics.h"

#include <stdio.h>

#include "ripplex/prom.h"
#include "ripplex/sbuf.h"

static const double bounds[HIST_BUCKETS] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                            0.025,  0.05,    0.1,    0.25,  0.5,    1,     5};
static const char *route_names[ROUTES] = {"ingest_mergelogs", "ingest_spans", "query", "list",
                                          "other"};

void metrics_observe(metrics_t *m, int route, int64_t ns) {
  size_t b = prom_bucket(bounds, HIST_BUCKETS, (double)ns / 1e9);
  atomic_fetch_add(&m->hist[route][b], 1);
  atomic_fetch_add(&m->hist_sum_ns[route], (uint64_t)(ns > 0 ? ns : 0));
  atomic_fetch_add(&m->hist_count[route], 1);
}

/* A counter family with one sample per kind of record. */
static void by_kind(sbuf_t *o, const char *name, const char *help,
                    const atomic_uint_fast64_t v[2]) {
  prom_family(o, name, "counter", help);
  prom_sample_u(o, name, "kind=\"mergelog\"", atomic_load(&v[0]));
  prom_sample_u(o, name, "kind=\"span\"", atomic_load(&v[1]));
}

static void durations(const metrics_t *m, sbuf_t *o) {
  const char *n = "ripple_http_request_duration_seconds";
  prom_family(o, n, "histogram", "Time to answer a request, by route.");
  for (int r = 0; r < ROUTES; r++) {
    uint64_t counts[HIST_BUCKETS + 1];
    for (int b = 0; b <= HIST_BUCKETS; b++) counts[b] = atomic_load(&m->hist[r][b]);
    char labels[64];
    snprintf(labels, sizeof labels, "route=\"%s\"", route_names[r]);
    prom_histogram(o, n, labels,
                   &(prom_hist_t){.bounds = bounds,
                                  .nbounds = HIST_BUCKETS,
                                  .counts = counts,
                                  .sum = (double)atomic_load(&m->hist_sum_ns[r]) / 1e9,
                                  .count = atomic_load(&m->hist_count[r])});
  }
}

void metrics_write(const metrics_t *m, const metrics_gauges_t *g, sbuf_t *o) {
  by_kind(o, "ripple_records_total", "Records stored, by kind.", m->accepted);
  by_kind(o, "ripple_rejected_requests_total", "Ingest requests refused with a 4xx, by kind.",
          m->rejected);
  prom_counter(o, "ripple_duplicate_mergelogs_total",
               "Mergelogs for a CPID that already had one (ignored).",
               atomic_load(&m->duplicate_mergelogs));
  prom_counter(o, "ripple_deleted_vertices_total", "CPIDs removed by retention.",
               atomic_load(&m->deleted_vertices));
  prom_counter(o, "ripple_store_rows_deleted_total", "Rows removed from storage by retention.",
               g->rows_deleted);
  prom_counter(o, "ripple_store_commit_groups_total",
               "Transactions committed (each may hold many requests).", g->commit_groups);
  prom_counter(o, "ripple_store_write_errors_total", "Requests whose write failed.",
               g->write_errors);
  prom_gauge(o, "ripple_graph_vertices", "CPIDs in the merge graph.", (double)g->vertices);
  prom_gauge(o, "ripple_graph_edges", "Edges in the merge graph.", (double)g->edges);
  prom_gauge(o, "ripple_graph_spans", "Spans indexed by CPID.", (double)g->spans);
  prom_gauge(o, "ripple_graph_memory_bytes", "Memory held by the merge graph and its indexes.",
             (double)g->graph_bytes);
  prom_gauge(o, "ripple_objects", "Objects in the object index.", (double)g->objects);
  prom_counter(o, "ripple_objects_refused_total",
               "Records whose object was not indexed: the object index was full.",
               g->objects_refused);
  prom_gauge(o, "ripple_storage_bytes", "Size of the database and its WAL on disk.",
             (double)g->storage_bytes);
  prom_gauge(o, "ripple_http_connections", "Open HTTP connections.", (double)g->connections);
  durations(m, o);
}
