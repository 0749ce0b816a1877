/*
 * metrics.c - see metrics.h.
 */
#include "metrics.h"
#include "ripplex/sbuf.h"

#include <inttypes.h>

static const double bounds[HIST_BUCKETS] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                            0.025,  0.05,    0.1,    0.25,  0.5,    1,     5};
static const char *route_names[ROUTES] = {"ingest_mergelogs", "ingest_spans", "query", "list",
                                          "other"};

void metrics_observe(metrics_t *m, int route, int64_t ns) {
  double s = (double)ns / 1e9;
  int b = 0;
  while (b < HIST_BUCKETS && s > bounds[b]) b++;
  atomic_fetch_add(&m->hist[route][b], 1);
  atomic_fetch_add(&m->hist_sum_ns[route], (uint64_t)(ns > 0 ? ns : 0));
  atomic_fetch_add(&m->hist_count[route], 1);
}

static void counter(sbuf_t *o, const char *name, const char *help, const char *labels, uint64_t v) {
  if (help) sbuf_printf(o, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
  sbuf_printf(o, "%s%s %" PRIu64 "\n", name, labels, v);
}

static void gauge(sbuf_t *o, const char *name, const char *help, double v) {
  sbuf_printf(o, "# HELP %s %s\n# TYPE %s gauge\n%s %.0f\n", name, help, name, name, v);
}

void metrics_write(const metrics_t *m, const metrics_gauges_t *g, sbuf_t *o) {
  metrics_t *mm = (metrics_t *)m; /* atomic loads only */
  counter(o, "ripple_records_total", "Records stored, by kind.", "{kind=\"mergelog\"}",
          atomic_load(&mm->accepted[0]));
  counter(o, "ripple_records_total", NULL, "{kind=\"span\"}", atomic_load(&mm->accepted[1]));
  counter(o, "ripple_rejected_requests_total", "Ingest requests refused with a 4xx, by kind.",
          "{kind=\"mergelog\"}", atomic_load(&mm->rejected[0]));
  counter(o, "ripple_rejected_requests_total", NULL, "{kind=\"span\"}",
          atomic_load(&mm->rejected[1]));
  counter(o, "ripple_duplicate_mergelogs_total",
          "Mergelogs for a CPID that already had one (ignored).", "",
          atomic_load(&mm->duplicate_mergelogs));
  counter(o, "ripple_deleted_vertices_total", "CPIDs removed by retention.", "",
          atomic_load(&mm->deleted_vertices));
  counter(o, "ripple_store_rows_deleted_total", "Rows removed from storage by retention.", "",
          g->rows_deleted);
  counter(o, "ripple_store_commit_groups_total",
          "Transactions committed (each may hold many requests).", "", g->commit_groups);
  counter(o, "ripple_store_write_errors_total", "Requests whose write failed.", "",
          g->write_errors);
  gauge(o, "ripple_graph_vertices", "CPIDs in the merge graph.", (double)g->vertices);
  gauge(o, "ripple_graph_edges", "Edges in the merge graph.", (double)g->edges);
  gauge(o, "ripple_graph_spans", "Spans indexed by CPID.", (double)g->spans);
  gauge(o, "ripple_graph_memory_bytes", "Memory held by the merge graph and its indexes.",
        (double)g->graph_bytes);
  gauge(o, "ripple_storage_bytes", "Size of the database and its WAL on disk.",
        (double)g->storage_bytes);
  gauge(o, "ripple_http_connections", "Open HTTP connections.", (double)g->connections);
  sbuf_puts(o,
            "# HELP ripple_http_request_duration_seconds Time to answer a request, by route.\n"
            "# TYPE ripple_http_request_duration_seconds histogram\n");
  for (int r = 0; r < ROUTES; r++) {
    uint64_t cum = 0;
    for (int b = 0; b <= HIST_BUCKETS; b++) {
      cum += atomic_load(&mm->hist[r][b]);
      if (b < HIST_BUCKETS)
        sbuf_printf(
            o, "ripple_http_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %" PRIu64 "\n",
            route_names[r], bounds[b], cum);
      else
        sbuf_printf(o,
                    "ripple_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %" PRIu64
                    "\n",
                    route_names[r], cum);
    }
    sbuf_printf(o, "ripple_http_request_duration_seconds_sum{route=\"%s\"} %.9f\n", route_names[r],
                (double)atomic_load(&mm->hist_sum_ns[r]) / 1e9);
    sbuf_printf(o, "ripple_http_request_duration_seconds_count{route=\"%s\"} %" PRIu64 "\n",
                route_names[r], atomic_load(&mm->hist_count[r]));
  }
}
