/*
 * bench_fights.c - what the field-fight detector (server/analysis/fights.h)
 * costs ingest: per span of an update (the webhook's), decoding it as the
 * server does (dec_decode) against feeding it to the detector
 * (fights_feed_spans: its body parsed again); per change of the watch agent
 * (det_decode) against fights_feed_facts. docs/benchmarks.md, "Field fights".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/details.h"
#include "analysis/fights_feed.h"
#include "benchutil.h"
#include "ingest/decode.h"
#include "ripplex/sbuf.h"

#define BATCH 1000

static const dec_limits_t lim = {
    .max_records = 10000, .max_sources = 4096, .max_string = 4096, .max_attrs = 64};

typedef struct ctx {
  sbuf_t spans, changes;
  fights_t *f;
  dec_batch_t sb;
  det_batch_t cb;
} ctx_t;

static void build(ctx_t *c) {
  sbuf_init(&c->spans);
  sbuf_init(&c->changes);
  sbuf_putc(&c->spans, '[');
  sbuf_putc(&c->changes, '[');
  for (int i = 0; i < BATCH; i++) {
    if (i) sbuf_putc(&c->spans, ','), sbuf_putc(&c->changes, ',');
    /* A controller's update of a Deployment, as the webhook sends it. */
    sbuf_printf(&c->spans,
                "{\"cpid\":\"9c459e9c-463c-42d6-bf69-%012d\",\"span_id\":\"%016x\",\"service\":"
                "\"deployment-controller\",\"name\":\"update deployments\",\"start\":"
                "\"2026-11-25T18:14:54.123456789Z\",\"end\":\"2026-11-25T18:14:54.125Z\","
                "\"attributes\":{\"kind\":\"Deployment\",\"namespace\":\"shop\",\"name\":"
                "\"web-%d\",\"uid\":\"0b4e0000-0000-4000-8000-%012d\",\"resourceVersion\":\"%d\","
                "\"user\":\"system:serviceaccount:kube-system:deployment-controller\","
                "\"operation\":\"UPDATE\",\"owner\":\"\"}}",
                i, i + 1, i, i, 1000 + i);
    sbuf_printf(&c->changes,
                "{\"type\":\"change\",\"op\":\"update\",\"time\":\"2026-11-25T18:14:54.2Z\","
                "\"object\":{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"namespace\":"
                "\"shop\",\"name\":\"web-%d\",\"uid\":\"0b4e0000-0000-4000-8000-%012d\"},"
                "\"resourceVersion\":\"%d\",\"previousResourceVersion\":\"%d\",\"diff\":["
                "{\"path\":\"/spec/replicas\",\"old\":1,\"new\":3},{\"path\":\"/metadata/"
                "annotations/deployment.kubernetes.io~1desired-replicas\",\"old\":\"1\",\"new\":"
                "\"3\"},{\"path\":\"/status/replicas\",\"old\":1,\"new\":3}]}",
                i, i, 2000 + i, 1000 + i);
  }
  sbuf_putc(&c->spans, ']');
  sbuf_putc(&c->changes, ']');
}

static void decode_spans(void *ud, long iters) {
  ctx_t *c = ud;
  dec_error_t err;
  for (long i = 0; i < iters; i += BATCH) {
    dec_batch_t b;
    if (dec_decode(DEC_SPANS, c->spans.p, c->spans.len, &lim, &b, &err) != RIPPLE_OK) abort();
    dec_batch_free(&b);
  }
}

static void feed_spans(void *ud, long iters) {
  ctx_t *c = ud;
  for (long i = 0; i < iters; i += BATCH) fights_feed_spans(c->f, &c->sb);
}

static void decode_changes(void *ud, long iters) {
  ctx_t *c = ud;
  dec_error_t err;
  for (long i = 0; i < iters; i += BATCH) {
    det_batch_t b;
    if (det_decode(c->changes.p, c->changes.len, &lim, &b, &err) != RIPPLE_OK) abort();
    det_batch_free(&b);
  }
}

static void feed_changes(void *ud, long iters) {
  ctx_t *c = ud;
  for (long i = 0; i < iters; i += BATCH) fights_feed_facts(c->f, &c->cb);
}

int main(void) {
  ctx_t c;
  dec_error_t err;
  build(&c);
  if (fights_new(NULL, &c.f) != RIPPLE_OK ||
      dec_decode(DEC_SPANS, c.spans.p, c.spans.len, &lim, &c.sb, &err) != RIPPLE_OK ||
      det_decode(c.changes.p, c.changes.len, &lim, &c.cb, &err) != RIPPLE_OK) {
    fprintf(stderr, "bench_fights: setup failed: %s\n", err.msg);
    return 1;
  }
  long n = 50 * BATCH;
  printf("span of an update: decode %.2f us, fights feed %.2f us\n",
         bench_measure(decode_spans, &c, n) / 1e3, bench_measure(feed_spans, &c, n) / 1e3);
  printf("change with a diff: decode %.2f us, fights feed %.2f us\n",
         bench_measure(decode_changes, &c, n) / 1e3, bench_measure(feed_changes, &c, n) / 1e3);
  dec_batch_free(&c.sb);
  det_batch_free(&c.cb);
  fights_free(c.f);
  sbuf_free(&c.spans);
  sbuf_free(&c.changes);
  return 0;
}
