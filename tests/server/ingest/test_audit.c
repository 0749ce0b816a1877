/*
 * test_audit.c - reading kube-apiserver's audit webhook batches
 * (server/audit.c).
 *
 * Bodies are written with ' for " so they read like the audit events they
 * are (J() swaps them back). Pinned here: which events are kept, skipped or
 * malformed; that nothing of a request or response object but its kind and a
 * few metadata fields is kept (a Secret's data never); the whole-body errors
 * and their precedence; limits on nesting, events and string length; repeated
 * keys (the last wins, like Go's decoder) and null (absent). The speed of a
 * 20 MB batch is printed, not asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ingest/audit.h"
#include "ripplex/sbuf.h"
#include "ripplex/utf8.h"
#include "testutil.h"

#define LIST(items) \
  "{'kind':'EventList','apiVersion':'audit.k8s.io/v1','metadata':{},'items':[" items "]}"
#define TS                                                    \
  "'requestReceivedTimestamp':'2026-11-25T18:14:54.120001Z'," \
  "'stageTimestamp':'2026-11-25T18:14:54.123456Z'"
/* An event; rest is more fields, each followed by a comma. */
#define EV(id, verb, stage, rest)                                                           \
  "{'kind':'Event','apiVersion':'audit.k8s.io/v1','level':'RequestResponse','auditID':'" id \
  "','stage':'" stage "','verb':'" verb "'," rest TS "}"
#define T_STAGE 1795630494123456000LL /* 2026-11-25T18:14:54.123456Z */
#define T_RECV 1795630494120001000LL

#define SECRET "c3VwZXJzZWNyZXQ="
#define SECRET_TEXT "supersecret"

/* ' -> " */
static char *J(const char *s) {
  char *p = strdup(s);
  assert_non_null(p);
  for (char *q = p; *q; q++)
    if (*q == '\'') *q = '"';
  return p;
}

static void parse_raw_ok(const char *body, size_t len, size_t max, audit_batch_t *b) {
  char err[256];
  int rc = audit_parse(body, len, max, b, err, sizeof err);
  if (rc != RIPPLE_OK) fail_msg("refused (%s): %s", ripple_errname(rc), err);
}

static void parse_ok(const char *sq, size_t max, audit_batch_t *b) {
  char *body = J(sq);
  parse_raw_ok(body, strlen(body), max, b);
  free(body);
}

/* The code of a refusal; err gets its message; the batch is left untouched. */
static int parse_err_raw(const char *body, size_t len, size_t max, char *err, size_t cap) {
  audit_batch_t b, before;
  memset(&b, 0xab, sizeof b);
  memcpy(&before, &b, sizeof b);
  int rc = audit_parse(body, len, max, &b, err, cap);
  assert_int_not_equal(rc, RIPPLE_OK);
  assert_memory_equal(&b, &before, sizeof b);
  assert_true(strlen(err) > 0);
  return rc;
}

static int parse_err(const char *sq, size_t max, char *err, size_t cap) {
  char *body = J(sq);
  int rc = parse_err_raw(body, strlen(body), max, err, cap);
  free(body);
  return rc;
}

/* Every string an event holds. */
static size_t strings_of(const audit_event_t *e, const char **out) {
  const char *const s[] = {
      e->audit_id,      e->verb,     e->stage,       e->user,      e->impersonated, e->user_agent,
      e->source_ip,     e->resource, e->subresource, e->api_group, e->api_version,  e->ns,
      e->name,          e->uid,      e->rv,          e->status,    e->reason,       e->message,
      e->resp_kind,     e->resp_uid, e->resp_rv,     e->resp_name, e->resp_ns,      e->req_kind,
      e->generate_name, e->span_id,  e->cpid};
  size_t n = sizeof s / sizeof *s;
  memcpy(out, s, sizeof s);
  for (size_t i = 0; i < AUDIT_GROUPS_MAX; i++) out[n++] = e->groups[i];
  return n;
}

static int valid_utf8(const char *s) {
  size_t n = strlen(s);
  for (size_t i = 0, l; i < n; i += l)
    if (!(l = utf8_len((const unsigned char *)s + i, n - i))) return 0;
  return 1;
}

/* ---- what is kept ---------------------------------------------------------- */

#define CREATE                                                                                    \
  EV("a1-create", "create", "ResponseComplete",                                                   \
     "'requestURI':'/api/v1/namespaces/default/pods',"                                            \
     "'user':{'username':'system:serviceaccount:kube-system:replicaset-controller','uid':'0c2a'," \
     "'groups':['system:serviceaccounts','system:serviceaccounts:kube-system',"                   \
     "'system:authenticated'],'extra':{'authentication.kubernetes.io/pod-name':['kcm-kind']}},"   \
     "'sourceIPs':['172.18.0.2','10.0.0.1'],'userAgent':'kube-controller-manager/v1.31.0',"       \
     "'objectRef':{'resource':'pods','namespace':'default','apiVersion':'v1'},"                   \
     "'responseStatus':{'metadata':{},'code':201},"                                               \
     "'requestObject':{'kind':'Pod','apiVersion':'v1','metadata':{'generateName':'web-7d4b9c-',"  \
     "'namespace':'default','ownerReferences':[{'kind':'ReplicaSet','name':'web-7d4b9c',"         \
     "'uid':'5b0e'}]},'spec':{'containers':[{'name':'web','image':'nginx:1.27'}]}},"              \
     "'responseObject':{'apiVersion':'v1','metadata':{'name':'web-7d4b9c-x2k4q',"                 \
     "'generateName':'web-7d4b9c-','namespace':'default',"                                        \
     "'uid':'e3b0c442-98fc-4c14-9afb-f4c8996fb924','resourceVersion':'48213',"                    \
     "'managedFields':[{'manager':'kube-controller-manager','fieldsV1':{'f:metadata':"            \
     "{'f:name':{}}}}]},'spec':{'nodeName':'n1'},'status':{'phase':'Pending'},'kind':'Pod'},")

#define CONFLICT                                                                              \
  EV("a2-update", "update", "ResponseComplete",                                               \
     "'objectRef':{'resource':'deployments','namespace':'default','name':'web','uid':'1f0e'," \
     "'apiGroup':'apps','apiVersion':'v1','resourceVersion':'48100'},"                        \
     "'responseStatus':{'metadata':{},'status':'Failure','message':'Operation cannot be "     \
     "fulfilled on deployments.apps \\'web\\': the object has been modified',"                \
     "'reason':'Conflict','details':{'name':'web','group':'apps','kind':'deployments'},"      \
     "'code':409},"                                                                           \
     "'requestObject':{'kind':'Deployment','metadata':{'name':'web','namespace':'default',"   \
     "'resourceVersion':'48100'},'spec':{'replicas':3,'template':{'metadata':{'name':'tmpl'," \
     "'generateName':'no-'}}}},")

#define DELETE                                                                                     \
  EV("a3-delete", "delete", "ResponseComplete",                                                    \
     "'user':{'username':'kubernetes-admin','groups':['system:masters']},"                         \
     "'impersonatedUser':{'username':'alice','groups':['dev']},"                                   \
     "'objectRef':{'resource':'pods','namespace':'default','name':'web-7d4b9c-x2k4q',"             \
     "'apiVersion':'v1'},'responseStatus':{'metadata':{},'code':200},"                             \
     "'requestObject':{'kind':'DeleteOptions','apiVersion':'v1','propagationPolicy':'Background'}" \
     ","                                                                                           \
     "'responseObject':{'kind':'Pod','metadata':{'name':'web-7d4b9c-x2k4q','namespace':'default'," \
     "'uid':'e3b0c442-98fc-4c14-9afb-f4c8996fb924','resourceVersion':'48400',"                     \
     "'deletionTimestamp':'2026-11-25T18:15:24Z'}},")

#define PATCH_STATUS                                                                          \
  EV("a4-patch", "patch", "ResponseComplete",                                                 \
     "'user':{'username':'system:node:kind-worker','groups':['system:nodes']},"               \
     "'objectRef':{'resource':'pods','namespace':'default','name':'web-7d4b9c-x2k4q',"        \
     "'apiVersion':'v1','subresource':'status'},'responseStatus':{'metadata':{},'code':200}," \
     "'requestObject':{'metadata':{'uid':'e3b0c442'},'status':{'conditions':"                 \
     "[{'type':'Ready','status':'True'}]}},"                                                  \
     "'responseObject':{'kind':'Pod','metadata':{'name':'web-7d4b9c-x2k4q','namespace':"      \
     "'default','uid':'e3b0c442-98fc-4c14-9afb-f4c8996fb924','resourceVersion':'48450'}},")

#define GET                                                                \
  EV("a5-get", "get", "ResponseComplete",                                  \
     "'objectRef':{'resource':'pods','namespace':'default','name':'web'}," \
     "'responseStatus':{'metadata':{},'code':200},")

#define RECEIVED EV("a1-create", "create", "RequestReceived", "'objectRef':{'resource':'pods'},")

static void writes_kept(void **state) {
  (void)state;
  audit_batch_t b;
  parse_ok(LIST(RECEIVED "," CREATE "," CONFLICT "," GET "," DELETE "," PATCH_STATUS), 100, &b);
  assert_int_equal(b.n, 4);
  assert_int_equal(b.skipped, 2);
  assert_int_equal(b.malformed, 0);

  const audit_event_t *c = &b.ev[0];
  assert_string_equal(c->audit_id, "a1-create");
  assert_string_equal(c->verb, "create");
  assert_string_equal(c->stage, "ResponseComplete");
  assert_string_equal(c->user, "system:serviceaccount:kube-system:replicaset-controller");
  assert_int_equal(c->ngroups, 3);
  assert_int_equal(c->ngroups_total, 3);
  assert_string_equal(c->groups[2], "system:authenticated");
  assert_string_equal(c->groups[3], "");
  assert_string_equal(c->impersonated, "");
  assert_string_equal(c->source_ip, "172.18.0.2");
  assert_string_equal(c->user_agent, "kube-controller-manager/v1.31.0");
  assert_string_equal(c->resource, "pods");
  assert_string_equal(c->ns, "default");
  assert_string_equal(c->name, "");
  assert_string_equal(c->api_version, "v1");
  assert_string_equal(c->api_group, "");
  assert_int_equal(c->code, 201);
  assert_string_equal(c->status, "");
  assert_string_equal(c->req_kind, "Pod");
  assert_string_equal(c->generate_name, "web-7d4b9c-");
  assert_string_equal(c->resp_kind, "Pod"); /* after its metadata */
  assert_string_equal(c->resp_uid, "e3b0c442-98fc-4c14-9afb-f4c8996fb924");
  assert_string_equal(c->resp_rv, "48213");
  assert_string_equal(c->resp_name, "web-7d4b9c-x2k4q");
  assert_string_equal(c->resp_ns, "default");
  assert_int_equal(c->stage_ns, T_STAGE);
  assert_int_equal(c->received_ns, T_RECV);
  assert_string_equal(c->span_id, "");

  const audit_event_t *u = &b.ev[1];
  assert_string_equal(u->verb, "update");
  assert_int_equal(u->code, 409);
  assert_string_equal(u->status, "Failure");
  assert_string_equal(u->reason, "Conflict");
  assert_string_equal(u->message,
                      "Operation cannot be fulfilled on deployments.apps \"web\": the object has "
                      "been modified");
  assert_string_equal(u->api_group, "apps");
  assert_string_equal(u->uid, "1f0e");
  assert_string_equal(u->rv, "48100");
  assert_string_equal(u->req_kind, "Deployment");
  assert_string_equal(u->generate_name, ""); /* the template's is not the object's */
  assert_string_equal(u->resp_kind, "");
  assert_string_equal(u->resp_uid, "");
  assert_string_equal(u->user, "");
  assert_int_equal(u->ngroups, 0);

  const audit_event_t *d = &b.ev[2];
  assert_string_equal(d->verb, "delete");
  assert_string_equal(d->user, "kubernetes-admin");
  assert_string_equal(d->impersonated, "alice");
  assert_int_equal(d->ngroups, 1);
  assert_string_equal(d->groups[0], "system:masters"); /* not the impersonated user's */
  assert_string_equal(d->req_kind, "DeleteOptions");
  assert_string_equal(d->resp_rv, "48400");

  const audit_event_t *p = &b.ev[3];
  assert_string_equal(p->verb, "patch");
  assert_string_equal(p->resource, "pods");
  assert_string_equal(p->subresource, "status");
  assert_string_equal(p->name, "web-7d4b9c-x2k4q");
  assert_string_equal(p->req_kind, "");
  assert_string_equal(p->resp_uid, "e3b0c442-98fc-4c14-9afb-f4c8996fb924");
  assert_string_equal(p->resp_rv, "48450");
  audit_batch_free(&b);
  audit_batch_free(&b); /* a freed batch is empty */
}

static void stages_and_verbs(void **state) {
  (void)state;
  audit_batch_t b;
  parse_ok(LIST(EV("1", "deletecollection", "ResponseComplete", "") "," EV(
               "2", "create", "Panic", "") "," EV("3", "watch", "ResponseStarted",
                                                  "") "," EV("4", "list", "ResponseComplete",
                                                             "") "," EV("5", "create",
                                                                        "ResponseStarted", "")),
           100, &b);
  assert_int_equal(b.n, 2);
  assert_int_equal(b.skipped, 3);
  assert_string_equal(b.ev[0].verb, "deletecollection");
  assert_string_equal(b.ev[1].stage, "Panic");
  audit_batch_free(&b);
}

static void annotations(void **state) {
  (void)state;
  audit_batch_t b;
  parse_ok(LIST(EV("1", "create", "ResponseComplete",
                   "'annotations':{'authorization.k8s.io/decision':'allow',"
                   "'ripple-webhook.ripple.dev/ripple-span':'5c1d9e0a7b3f2e11',"
                   "'ripple-span':'no-slash','x/ripple-span-not':'not-a-suffix',"
                   "'ripple-webhook.ripple.dev/ripple-cpid':'9c459e9c-463c-42d6-bf69-f6f89ba0d84e',"
                   "'mutation.webhook.admission.k8s.io/round_0_index_0':'{\\'p\\':1}'},") ","
                /* two webhooks: the last key wins */
                EV("2", "update", "ResponseComplete",
                   "'annotations':{'a.example/ripple-span':'1111','b.example/ripple-span':"
                   "'2222'},") ","
                /* an annotation that is not a string */
                EV("3", "update", "ResponseComplete", "'annotations':{'a.example/other':5},")),
           100, &b);
  assert_int_equal(b.n, 2);
  assert_int_equal(b.malformed, 1);
  assert_string_equal(b.ev[0].span_id, "5c1d9e0a7b3f2e11");
  assert_string_equal(b.ev[0].cpid, "9c459e9c-463c-42d6-bf69-f6f89ba0d84e");
  assert_string_equal(b.ev[1].span_id, "2222");
  assert_string_equal(b.ev[1].cpid, "");
  audit_batch_free(&b);
}

/* A Secret's data is in its request and response objects, its metadata's
 * annotations (kubectl's last-applied configuration) and audit annotations of
 * the object (not of the event): none of it is kept. */
static void secrets_never_kept(void **state) {
  (void)state;
#define SECRET_OBJ(meta)                                                                       \
  "{'kind':'Secret','apiVersion':'v1','metadata':{" meta ",'labels':{'pw':'" SECRET            \
  "'},'annotations':{"                                                                         \
  "'kubectl.kubernetes.io/last-applied-configuration':'{\\'data\\':{\\'password\\':\\'" SECRET \
  "\\'}}','x.example/ripple-span':'" SECRET_TEXT "'}},'data':{'password':'" SECRET             \
  "','name':'" SECRET "'},'stringData':{'uid':'" SECRET_TEXT "'},'type':'Opaque'}"
  audit_batch_t b;
  parse_ok(
      LIST(EV("s1", "create", "ResponseComplete",
              "'objectRef':{'resource':'secrets','namespace':'default','name':'db'},"
              "'requestObject':" SECRET_OBJ("'name':'db'") ",'responseObject':" SECRET_OBJ(
                  "'name':'db','namespace':'default',"
                  "'uid':'9a8b','resourceVersion':'"
                  "485'") ",") "," EV("s2", "update",
                                      "ResponseComple"
                                      "te",
                                      "'responseObjec"
                                      "t':{'kind':'"
                                      "SecretList','"
                                      "items':"
                                      "[" SECRET_OBJ("'name':'x'") "]},'requestObject':" SECRET_OBJ(
                                          "'name':'"
                                          "db'") ",") "," EV("s3", "get", "ResponseComplete",
                                                             "'responseObject':" SECRET_OBJ(
                                                                 "'name':'db'") ",")),
      100, &b);
  assert_int_equal(b.n, 2);
  assert_int_equal(b.skipped, 1);
  assert_string_equal(b.ev[0].resp_kind, "Secret");
  assert_string_equal(b.ev[0].resp_name, "db");
  assert_string_equal(b.ev[0].resp_uid, "9a8b");
  assert_string_equal(b.ev[1].resp_kind, "SecretList");
  assert_string_equal(b.ev[1].resp_name, "");
  for (size_t i = 0; i < b.n; i++) {
    const char *s[64];
    size_t n = strings_of(&b.ev[i], s);
    for (size_t k = 0; k < n; k++) {
      assert_null(strstr(s[k], "c3VwZXJz"));
      assert_null(strstr(s[k], SECRET_TEXT));
    }
  }
  audit_batch_free(&b);
#undef SECRET_OBJ
}

/* ---- malformed events --------------------------------------------------------- */

#define GOOD(id) EV(id, "create", "ResponseComplete", "")
#define BAD(id, rest) EV(id, "create", "ResponseComplete", rest)
#define BARE(fields) "{" fields "}"
#define STS "'stageTimestamp':'2026-11-25T18:14:54Z'"

static void malformed_counted(void **state) {
  (void)state;
  static const char *const bad[] = {
      BARE("'verb':'create','stage':'ResponseComplete'," STS),
      BARE("'auditID':'','verb':'create','stage':'ResponseComplete'," STS),
      BARE("'auditID':'x','stage':'ResponseComplete'," STS),
      BARE("'auditID':'x','verb':'create'," STS),
      BARE("'auditID':'x','verb':'create','stage':'ResponseComplete'"),
      BARE("'auditID':'x','verb':5,'stage':'ResponseComplete'," STS),
      BARE("'auditID':'x','verb':'get','stage':true," STS), /* not a write, but malformed */
      BARE("'auditID':'x','verb':'create','stage':'ResponseComplete','stageTimestamp':5"),
      BARE("'auditID':'x','verb':'create','stage':'ResponseComplete','stageTimestamp':"
           "'yesterday'"),
      BARE("'auditID':'x','verb':'create','stage':'ResponseComplete','stageTimestamp':"
           "'2026-11-25 18:14:54'"),
      BAD("b1", "'user':{'groups':5},"),
      BAD("b2", "'user':{'groups':[1]},"),
      BAD("b3", "'user':'alice',"),
      BAD("b4", "'responseStatus':{'code':'abc'},"),
      BAD("b5", "'responseStatus':{'code':1.5},"),
      BAD("b6", "'responseStatus':{'code':99999999999},"),
      BAD("b7", "'responseStatus':{'code':true},"),
      BAD("b8", "'responseStatus':{'message':{'a':1}},"),
      BAD("b9", "'requestObject':'x',"),
      BAD("b10", "'responseObject':[],"),
      BAD("b11", "'responseObject':{'metadata':{'uid':7}},"),
      BAD("b12", "'responseObject':{'kind':['Pod']},"),
      BAD("b13", "'objectRef':[],"),
      BAD("b14", "'objectRef':{'name':false},"),
      BAD("b15", "'sourceIPs':'1.2.3.4',"),
      BAD("b16", "'annotations':['a'],"),
      BAD("b17", "'requestReceivedTimestamp':'2026-13-01T00:00:00Z',"),
      BAD("b18", "'impersonatedUser':{'username':1},"),
      "null",
      "'x'",
      "5",
      "true",
      "[]",
      "[{'auditID':'x'}]",
  };
  size_t nbad = sizeof bad / sizeof *bad;
  sbuf_t body;
  sbuf_init(&body);
  sbuf_puts(&body, "{'kind':'EventList','apiVersion':'audit.k8s.io/v1','items':[" GOOD("g0"));
  for (size_t i = 0; i < nbad; i++) sbuf_printf(&body, ",%s", bad[i]);
  sbuf_puts(&body, "," GOOD("g1") "," GOOD("g2") "]}");
  assert_false(body.oom);
  audit_batch_t b;
  parse_ok(body.p, 1000, &b);
  sbuf_free(&body);
  assert_int_equal(b.malformed, nbad);
  assert_int_equal(b.skipped, 0);
  assert_int_equal(b.n, 3);
  assert_string_equal(b.ev[0].audit_id, "g0");
  assert_string_equal(b.ev[1].audit_id, "g1");
  assert_string_equal(b.ev[2].audit_id, "g2");
  audit_batch_free(&b);

  /* Each alone: malformed, and the body still fine. */
  for (size_t i = 0; i < nbad; i++) {
    char one[4096];
    snprintf(one, sizeof one, "{'kind':'EventList','apiVersion':'audit.k8s.io/v1','items':[%s]}",
             bad[i]);
    parse_ok(one, 10, &b);
    if (b.malformed != 1) fail_msg("not malformed: %s", bad[i]);
    assert_int_equal(b.n, 0);
    audit_batch_free(&b);
  }
}

/* ---- the body as a whole ------------------------------------------------------ */

static void body_errors(void **state) {
  (void)state;
  static const struct {
    const char *body, *says;
  } cases[] = {
      {"", "malformed JSON"},
      {"   ", "malformed JSON"},
      {"{", "malformed JSON at byte"},
      {"{'kind':'EventList',}", "malformed JSON at byte"},
      {"{'kind':'EventList' 'items':[]}", "malformed JSON at byte"},
      {"[]", "not a JSON object"},
      {"'EventList'", "not a JSON object"},
      {"5", "not a JSON object"},
      {"null", "not a JSON object"},
      {"{'apiVersion':'audit.k8s.io/v1','items':[]}", "kind is not"},
      {"{'kind':'PodList','apiVersion':'v1','items':[]}", "kind is not"},
      {"{'kind':'EventList','apiVersion':'audit.k8s.io/v1beta1','items':[]}", "apiVersion is not"},
      {"{'kind':'EventList','apiVersion':5,'items':[]}", "apiVersion is not"},
      {"{'kind':{'a':'EventList'},'apiVersion':'audit.k8s.io/v1','items':[]}", "kind is not"},
      {"{'kind':'EventList','kind':'Event','apiVersion':'audit.k8s.io/v1'}", "kind is not"},
      {"{'kind':'EventList','apiVersion':'audit.k8s.io/v1','items':'x'}", "\"items\" is not"},
      {"{'kind':'EventList','apiVersion':'audit.k8s.io/v1','items':{}}", "\"items\" is not"},
      {"{'kind':'EventList','apiVersion':'audit.k8s.io/v1','items':5}", "\"items\" is not"},
      {"{'kind':'EventList','apiVersion':'audit.k8s.io/v1','items':[]} x", "malformed JSON"},
      {"{'kind':'EventList','apiVersion':'audit.k8s.io/v1','items':[]} '", "after the EventList"},
      {"{'kind':'EventList','apiVersion':'audit.k8s.io/v1','items':[]}{}", "malformed JSON"},
      {"{'kind':'EventList',/* c */'apiVersion':'audit.k8s.io/v1','items':[]}", "malformed JSON"},
      {"{'kind':'EventList','apiVersion':'audit.k8s.io/v1','items':[{'x':'\xc0\xaf'}]}",
       "invalid UTF-8"},
      {"{'kind':'EventList','apiVersion':'audit.k8s.io/v1','items':[{'x':'\xed\xa0\x80'}]}",
       "invalid UTF-8"},
      {"{'kind':'EventList','apiVersion':'audit.k8s.io/v1','items':[{'x':'\\ud800'}]}",
       "surrogate"},
      {"{'kind':'EventList','apiVersion':'audit.k8s.io/v1','items':[{'x':'\xff'}]}",
       "invalid UTF-8"},
      {"{'kind':'EventList',\v'apiVersion':'audit.k8s.io/v1','items':[]}", "vertical tab"},
      {"{'kind':'EventList','apiVersion':'audit.k8s.io/v1','items':[{'x':'\t'}]}",
       "malformed JSON"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char err[256];
    int rc = parse_err(cases[i].body, 100, err, sizeof err);
    if (rc != RIPPLE_EJSON || !strstr(err, cases[i].says))
      fail_msg("%s: %s (%s), wanted '%s'", cases[i].body, ripple_errname(rc), err, cases[i].says);
  }
  /* The place of what was wrong. */
  char err[256];
  assert_int_equal(parse_err("{'kind':'EventList','items':'x'}", 100, err, sizeof err),
                   RIPPLE_EJSON);
  assert_string_equal(err, "at byte 30: \"items\" is not an array");
  assert_int_equal(parse_err("{'kind':'EventList','items':[}", 100, err, sizeof err), RIPPLE_EJSON);
  assert_non_null(strstr(err, "malformed JSON at byte 29: "));

  /* NUL bytes: raw ones are not JSON; \u0000 is, and cuts a kept string. */
  static const char raw[] =
      "{\"kind\":\"EventList\",\"apiVersion\":\"audit.k8s.io/v1\",\0\"items\":[]}";
  assert_int_equal(parse_err_raw(raw, sizeof raw - 1, 100, err, sizeof err), RIPPLE_EJSON);
  static const char raw2[] =
      "{\"kind\":\"EventList\",\"apiVersion\":\"audit.k8s.io/v1\",\"items\":[{\"x\":\"a\0b\"}]}";
  assert_int_equal(parse_err_raw(raw2, sizeof raw2 - 1, 100, err, sizeof err), RIPPLE_EJSON);
  audit_batch_t b;
  parse_ok(LIST(EV("n1", "create", "ResponseComplete",
                   "'responseStatus':{'message':'ab\\u0000cd','reason':'\\u0000'},"
                   "'objectRef':{'name':'x\\u0000'},'requestObject':{'data':'\\u0000'},")),
           10, &b);
  assert_int_equal(b.n, 1);
  assert_string_equal(b.ev[0].message, "ab...");
  assert_string_equal(b.ev[0].reason, "...");
  assert_string_equal(b.ev[0].name, "x...");
  audit_batch_free(&b);

  /* No err buffer: still the code. */
  char *body = J("[]");
  assert_int_equal(audit_parse(body, 2, 10, &b, NULL, 0), RIPPLE_EJSON);
  free(body);
}

static void empty_and_odd_lists(void **state) {
  (void)state;
  audit_batch_t b;
  parse_ok("{'kind':'EventList','apiVersion':'audit.k8s.io/v1','metadata':{},'items':[]}", 0, &b);
  assert_int_equal(b.n + b.skipped + b.malformed, 0);
  audit_batch_free(&b);
  /* No items, null items: nothing to read. Unknown keys anywhere are skipped. */
  parse_ok(" {'apiVersion':'audit.k8s.io/v1','kind':'EventList'} ", 0, &b);
  assert_int_equal(b.n, 0);
  audit_batch_free(&b);
  parse_ok("{'items':null,'kind':'EventList','apiVersion':'audit.k8s.io/v1'}", 0, &b);
  assert_int_equal(b.n, 0);
  audit_batch_free(&b);
  parse_ok("{'items':[" GOOD("x") "],'kind':'EventList','apiVersion':'audit.k8s.io/v1',"
           "'more':{'items':[1,2,{'a':[null,true,1.5e3]}]}}",
           1, &b);
  assert_int_equal(b.n, 1);
  audit_batch_free(&b);
}

/* ---- limits ------------------------------------------------------------------ */

/* An EventList whose one event's requestObject holds `levels` nested arrays:
 * the deepest container is levels + 4 deep (list, items, event, object). */
static char *nested(size_t levels) {
  sbuf_t s;
  sbuf_init(&s);
  sbuf_puts(&s,
            "{\"kind\":\"EventList\",\"apiVersion\":\"audit.k8s.io/v1\",\"items\":[{"
            "\"auditID\":\"d\",\"verb\":\"create\",\"stage\":\"ResponseComplete\","
            "\"stageTimestamp\":\"2026-11-25T18:14:54Z\",\"requestObject\":{\"x\":");
  for (size_t i = 0; i < levels; i++) sbuf_putc(&s, '[');
  for (size_t i = 0; i < levels; i++) sbuf_putc(&s, ']');
  sbuf_puts(&s, "}}]}");
  assert_false(s.oom);
  return s.p;
}

static void depth_limit(void **state) {
  (void)state;
  audit_batch_t b;
  char err[256];
  char *s = nested(508);
  parse_raw_ok(s, strlen(s), 10, &b);
  assert_int_equal(b.n, 1);
  audit_batch_free(&b);
  free(s);
  s = nested(509);
  assert_int_equal(parse_err_raw(s, strlen(s), 10, err, sizeof err), RIPPLE_EJSON);
  assert_non_null(strstr(err, "nesting deeper than 512 levels"));
  free(s);
  /* A bomb in items, unclosed: refused at the 513th bracket, before the end. */
  sbuf_t bomb;
  sbuf_init(&bomb);
  sbuf_puts(&bomb, "{\"items\":");
  for (size_t i = 0; i < 10 * 1000 * 1000; i++) sbuf_putc(&bomb, '[');
  assert_false(bomb.oom);
  assert_int_equal(parse_err_raw(bomb.p, bomb.len, 10, err, sizeof err), RIPPLE_EJSON);
  assert_string_equal(err, "at byte 520: nesting deeper than 512 levels");
  /* Not an object: refused at the first. */
  assert_int_equal(parse_err_raw(bomb.p + 9, bomb.len - 9, 10, err, sizeof err), RIPPLE_EJSON);
  assert_non_null(strstr(err, "not a JSON object"));
  sbuf_free(&bomb);
}

static void max_events(void **state) {
  (void)state;
  const char *three = LIST(GOOD("1") "," GET "," GOOD("3"));
  audit_batch_t b;
  char err[256];
  assert_int_equal(parse_err(three, 2, err, sizeof err), RIPPLE_ERANGE);
  assert_string_equal(err, "3 events in one request; at most 2 are accepted");
  parse_ok(three, 3, &b);
  assert_int_equal(b.n, 2);
  audit_batch_free(&b);
  assert_int_equal(parse_err(three, 0, err, sizeof err), RIPPLE_ERANGE);
  /* Not an EventList wins over too many. */
  assert_int_equal(parse_err("{'items':[1,2,3]}", 2, err, sizeof err), RIPPLE_EJSON);
  /* A repeated items: the last array is the list. */
  parse_ok("{'kind':'EventList','apiVersion':'audit.k8s.io/v1','items':[" GOOD("1") "," GOOD(
               "2") "," GOOD("3") "],'items':[" GOOD("4") "]}",
           2, &b);
  assert_int_equal(b.n, 1);
  assert_string_equal(b.ev[0].audit_id, "4");
  audit_batch_free(&b);

  /* A million tiny items. */
  size_t count = 1000 * 1000;
  sbuf_t s;
  sbuf_init(&s);
  sbuf_puts(&s, "{\"kind\":\"EventList\",\"apiVersion\":\"audit.k8s.io/v1\",\"items\":[{}");
  for (size_t i = 1; i < count; i++) sbuf_puts(&s, ",{}");
  sbuf_puts(&s, "]}");
  assert_false(s.oom);
  assert_int_equal(parse_err_raw(s.p, s.len, 1000, err, sizeof err), RIPPLE_ERANGE);
  assert_string_equal(err, "1000000 events in one request; at most 1000 are accepted");
  parse_raw_ok(s.p, s.len, count, &b);
  assert_int_equal(b.malformed, count);
  assert_int_equal(b.n, 0);
  audit_batch_free(&b);
  sbuf_free(&s);
}

/* A body with one event whose message is `msg` (raw JSON string content). */
static char *with_message(const char *msg) {
  sbuf_t s;
  sbuf_init(&s);
  sbuf_printf(&s,
              "{\"kind\":\"EventList\",\"apiVersion\":\"audit.k8s.io/v1\",\"items\":[{"
              "\"auditID\":\"l\",\"verb\":\"create\",\"stage\":\"ResponseComplete\","
              "\"stageTimestamp\":\"2026-11-25T18:14:54Z\",\"responseStatus\":{\"message\":"
              "\"%s\"}}]}",
              msg);
  assert_false(s.oom);
  return s.p;
}

static char *repeat(const char *unit, size_t times, const char *prefix) {
  sbuf_t s;
  sbuf_init(&s);
  sbuf_puts(&s, prefix);
  for (size_t i = 0; i < times; i++) sbuf_puts(&s, unit);
  assert_false(s.oom);
  return s.p;
}

static void long_strings(void **state) {
  (void)state;
  static const struct {
    const char *unit, *prefix;
    size_t times, kept; /* bytes kept before "...", or the whole length */
    int cut;
  } cases[] = {
      {"a", "", AUDIT_STR_MAX, AUDIT_STR_MAX, 0},
      {"a", "", AUDIT_STR_MAX + 1, AUDIT_STR_MAX, 1},
      {"\xc3\xa9", "a", 600, 1023, 1},         /* é: 2 bytes; 1 + 2 * 511 */
      {"\xc3\xa9", "", 512, 1024, 0},          /* exactly the limit */
      {"\xe2\x82\xac", "", 400, 1023, 1},      /* €: 3 bytes */
      {"\xe2\x82\xac", "ab", 400, 1022, 1},    /* 2 + 3 * 340 */
      {"\xf0\x9f\x98\x80", "a", 300, 1021, 1}, /* 😀: 4 bytes; 1 + 4 * 255 */
      {"\\u00e9", "", 600, 1024, 1},           /* escapes count as what they decode to */
      {"x", "", 5 * 1000 * 1000, AUDIT_STR_MAX, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *msg = repeat(cases[i].unit, cases[i].times, cases[i].prefix);
    char *body = with_message(msg);
    audit_batch_t b;
    parse_raw_ok(body, strlen(body), 1, &b);
    assert_int_equal(b.n, 1);
    const char *m = b.ev[0].message;
    size_t n = strlen(m);
    assert_true(valid_utf8(m));
    assert_true(n <= AUDIT_STR_MAX + 3);
    if (cases[i].cut) {
      assert_int_equal(n, cases[i].kept + 3);
      assert_string_equal(m + n - 3, "...");
    } else {
      assert_int_equal(n, cases[i].kept);
      assert_memory_equal(m, msg, n);
    }
    audit_batch_free(&b);
    free(body);
    free(msg);
  }
}

static void timestamps(void **state) {
  (void)state;
  static const struct {
    const char *ts;
    int64_t ns;
  } cases[] = {
      {"2026-11-25T18:14:54.123456Z", 1795630494123456000LL},
      {"2026-11-25T18:14:54Z", 1795630494000000000LL},
      {"2026-11-25T19:14:54.5+01:00", 1795630494500000000LL},
      {"2026-11-25T12:44:54-05:30", 1795630494000000000LL},
      {"2026-11-25T18:14:54.123456789Z", 1795630494123456789LL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char body[512];
    snprintf(body, sizeof body,
             "{\"kind\":\"EventList\",\"apiVersion\":\"audit.k8s.io/v1\",\"items\":[{"
             "\"auditID\":\"t\",\"verb\":\"update\",\"stage\":\"ResponseComplete\","
             "\"stageTimestamp\":\"%s\",\"requestReceivedTimestamp\":\"%s\"}]}",
             cases[i].ts, cases[i].ts);
    audit_batch_t b;
    parse_raw_ok(body, strlen(body), 1, &b);
    assert_int_equal(b.n, 1);
    assert_int_equal(b.ev[0].stage_ns, cases[i].ns);
    assert_int_equal(b.ev[0].received_ns, cases[i].ns);
    audit_batch_free(&b);
  }
  /* requestReceivedTimestamp is optional. */
  audit_batch_t b;
  parse_ok(LIST("{'auditID':'t','verb':'update','stage':'ResponseComplete'," STS "}"), 1, &b);
  assert_int_equal(b.n, 1);
  assert_int_equal(b.ev[0].received_ns, 0);
  assert_int_equal(b.ev[0].stage_ns, 1795630494000000000LL);
  audit_batch_free(&b);
}

/* ---- repeated keys, null, caps ------------------------------------------------- */

static void repeats_and_null(void **state) {
  (void)state;
  audit_batch_t b;
  parse_ok(LIST(EV("r1", "get", "ResponseComplete",
                   "'verb':'create','stage':null,'auditID':null,"
                   "'user':{'username':'a','groups':['g1','g2']},'user':{'groups':['g3']},"
                   "'sourceIPs':['1.1.1.1'],'sourceIPs':['2.2.2.2','3.3.3.3'],"
                   "'responseStatus':{'code':500,'reason':'x'},'responseStatus':{'code':201},"
                   "'responseObject':{'kind':'Pod','metadata':{'uid':'u1','name':'n1'}},"
                   "'responseObject':{'metadata':{'uid':'u2'},'metadata':{'name':'n2'}},"
                   "'requestObject':{'kind':'Pod'},'requestObject':null,"
                   "'objectRef':{'name':'o1','namespace':'ns1'},'objectRef':{'name':'o2'},"
                   "'impersonatedUser':null,'annotations':null,'userAgent':null,")),
           10, &b);
  assert_int_equal(b.n, 1);
  const audit_event_t *e = &b.ev[0];
  assert_string_equal(e->verb, "create");
  assert_string_equal(e->audit_id, "r1");
  assert_string_equal(e->user, "a");
  assert_int_equal(e->ngroups, 1);
  assert_string_equal(e->groups[0], "g3");
  assert_string_equal(e->groups[1], "");
  assert_string_equal(e->source_ip, "2.2.2.2");
  assert_int_equal(e->code, 201);
  assert_string_equal(e->reason, "x");
  assert_string_equal(e->resp_kind, "");
  assert_string_equal(e->resp_uid, "u2");
  assert_string_equal(e->resp_name, "n2");
  assert_string_equal(e->req_kind, "Pod");
  assert_string_equal(e->name, "o2");
  assert_string_equal(e->ns, "ns1");
  audit_batch_free(&b);
}

static void groups_capped(void **state) {
  (void)state;
  audit_batch_t b;
  parse_ok(LIST(EV("g", "create", "ResponseComplete",
                   "'user':{'groups':['0','1','2','3','4','5','6','7','8','9','10','11','12','13',"
                   "'14','15','16','17','18','19'],'username':'u'},")),
           10, &b);
  assert_int_equal(b.ev[0].ngroups, AUDIT_GROUPS_MAX);
  assert_int_equal(b.ev[0].ngroups_total, 20);
  assert_string_equal(b.ev[0].groups[AUDIT_GROUPS_MAX - 1], "15");
  assert_string_equal(b.ev[0].user, "u");
  audit_batch_free(&b);
}

/* ---- speed ----------------------------------------------------------------------- */

/* A big object: a ConfigMap-like data map of 100 entries of ~240 bytes, some
 * with escapes, and managedFields. About 25 KB. */
static void big_object(sbuf_t *s, const char *kind, int i) {
  sbuf_printf(s,
              "{\"kind\":\"%s\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"cm-%d\","
              "\"namespace\":\"bench\",\"uid\":\"00000000-0000-4000-8000-%012d\","
              "\"resourceVersion\":\"%d\",\"managedFields\":[{\"manager\":\"kubectl\","
              "\"fieldsV1\":{\"f:data\":{\"f:k\":{}}}}]},\"data\":{",
              kind, i, i, 1000 + i);
  for (int k = 0; k < 100; k++) {
    sbuf_printf(s, "%s\"key-%03d\":\"", k ? "," : "", k);
    for (int j = 0; j < 6; j++) sbuf_puts(s, "0123456789abcdef \\\"quoted\\\" \\u00e9t\xc3\xa9 ");
    sbuf_putc(s, '"');
  }
  sbuf_puts(s, "},\"list\":[1,2.5,true,null,{\"a\":[[],{}]}]}");
}

static void big_batch_speed(void **state) {
  (void)state;
  sbuf_t body;
  sbuf_init(&body);
  sbuf_puts(&body, "{\"kind\":\"EventList\",\"apiVersion\":\"audit.k8s.io/v1\",\"items\":[");
  for (int i = 0; i < 400; i++) {
    sbuf_printf(&body,
                "%s{\"kind\":\"Event\",\"level\":\"RequestResponse\",\"auditID\":\"id-%d\","
                "\"stage\":\"ResponseComplete\",\"verb\":\"update\",\"user\":{\"username\":"
                "\"admin\",\"groups\":[\"system:masters\"]},\"objectRef\":{\"resource\":"
                "\"configmaps\",\"namespace\":\"bench\",\"name\":\"cm-%d\"},"
                "\"responseStatus\":{\"metadata\":{},\"code\":200},\"requestObject\":",
                i ? "," : "", i, i);
    big_object(&body, "ConfigMap", i);
    sbuf_puts(&body, ",\"responseObject\":");
    big_object(&body, "ConfigMap", i);
    sbuf_puts(&body, ",\"stageTimestamp\":\"2026-11-25T18:14:54.123456Z\"}");
  }
  sbuf_puts(&body, "]}");
  assert_false(body.oom);
  struct timespec t0, t1;
  audit_batch_t b;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  parse_raw_ok(body.p, body.len, 1000, &b);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  printf("audit_parse: %.1f MB, %zu events in %.1f ms (%.0f MB/s; no timing is asserted)\n",
         (double)body.len / 1e6, b.n, s * 1e3, (double)body.len / 1e6 / s);
  assert_int_equal(b.n, 400);
  assert_string_equal(b.ev[399].resp_name, "cm-399");
  assert_string_equal(b.ev[399].resp_uid, "00000000-0000-4000-8000-000000000399");
  audit_batch_free(&b);
  sbuf_free(&body);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(writes_kept),         cmocka_unit_test(stages_and_verbs),
      cmocka_unit_test(annotations),         cmocka_unit_test(secrets_never_kept),
      cmocka_unit_test(malformed_counted),   cmocka_unit_test(body_errors),
      cmocka_unit_test(empty_and_odd_lists), cmocka_unit_test(depth_limit),
      cmocka_unit_test(max_events),          cmocka_unit_test(long_strings),
      cmocka_unit_test(timestamps),          cmocka_unit_test(repeats_and_null),
      cmocka_unit_test(groups_capped),       cmocka_unit_test(big_batch_speed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
