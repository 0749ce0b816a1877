/*
 * wstate.c - what one watched resource's output reflects, and its checkpoint.
 *
 * Exactly once across restarts: the checkpoint records the objects known
 * (ns/name -> uid, rv), the resume point and the output file's inode and
 * length when it was saved. On start the records written after that length
 * (flushed, but not yet checkpointed when the agent died) are applied again,
 * and the watch resumes from the newest of them; a change the watch then
 * delivers again is recognised (same uid and rv as known) and not written
 * twice.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ripple/ripple.h"
#include "wrec.h"

void wstate_init(wstate_t *s) {
  memset(s, 0, sizeof *s);
  s->known = json_object();
}

void wstate_clear(wstate_t *s) {
  json_decref(s->known);
  free(s->rv);
  memset(s, 0, sizeof *s);
}

static void set_rv(wstate_t *s, const char *rv) {
  char *c = strdup(rv);
  if (!c) return;
  free(s->rv);
  s->rv = c;
}

int wstate_apply(wstate_t *s, const char *op, const char *ns, const char *name, const char *uid,
                 const char *rv) {
  char key[512];
  snprintf(key, sizeof key, "%s/%s", ns, name);
  json_t *cur = json_object_get(s->known, key);
  const char *cuid = json_string_value(json_array_get(cur, 0));
  const char *crv = json_string_value(json_array_get(cur, 1));
  if (!strcmp(op, "delete")) {
    if (!cur || strcmp(cuid ? cuid : "", uid) != 0) return 0;
    json_object_del(s->known, key);
    return 1;
  }
  if (cur && cuid && crv && !strcmp(cuid, uid) && !strcmp(crv, rv)) return 0;
  json_object_set_new(s->known, key, json_pack("[s,s]", uid, rv));
  return 1;
}

json_t *wstate_known_objects(const wstate_t *s) {
  json_t *arr = json_array();
  const char *key;
  json_t *v;
  json_object_foreach(s->known, key, v) {
    const char *slash = strchr(key, '/');
    if (!slash) continue;
    json_t *md = json_pack("{s:s, s:s, s:s}", "name", slash + 1, "uid",
                           json_string_value(json_array_get(v, 0)), "resourceVersion",
                           json_string_value(json_array_get(v, 1)));
    if (slash > key) json_object_set_new(md, "namespace", json_stringn(key, (size_t)(slash - key)));
    json_array_append_new(arr, json_pack("{s:o}", "metadata", md));
  }
  return arr;
}

static int fsync_dir(const char *path) {
  char *copy = strdup(path);
  if (!copy) return RIPPLE_ENOMEM;
  int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
  free(copy);
  if (fd < 0) return RIPPLE_ESYS;
  int rc = fsync(fd) == 0 ? RIPPLE_OK : RIPPLE_ESYS;
  close(fd);
  return rc;
}

int wstate_save(const wstate_t *s, const char *path) {
  json_t *j =
      json_pack("{s:i, s:s?, s:I, s:I, s:O}", "version", 1, "rv", s->rv, "out_ino",
                (json_int_t)s->out_ino, "out_off", (json_int_t)s->out_off, "known", s->known);
  if (!j) return RIPPLE_ENOMEM;
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  int rc = f ? RIPPLE_OK : RIPPLE_ESYS;
  if (f && json_dumpf(j, f, JSON_COMPACT) != 0) rc = RIPPLE_ESYS;
  if (f && fflush(f) != 0) rc = RIPPLE_ESYS;
  if (f && rc == RIPPLE_OK && fsync(fileno(f)) != 0) rc = RIPPLE_ESYS;
  if (f) fclose(f);
  json_decref(j);
  if (rc == RIPPLE_OK && rename(tmp, path) != 0) rc = RIPPLE_ESYS;
  if (rc == RIPPLE_OK)
    rc = fsync_dir(path);
  else
    unlink(tmp);
  return rc;
}

int wstate_load(wstate_t *s, const char *path) {
  json_error_t e;
  json_t *j = json_load_file(path, 0, &e);
  if (!j) return errno == ENOENT && access(path, F_OK) != 0 ? RIPPLE_ENOENT : RIPPLE_EJSON;
  json_t *known = json_object_get(j, "known");
  const char *rv = json_string_value(json_object_get(j, "rv"));
  if (!json_is_object(known)) {
    json_decref(j);
    return RIPPLE_EJSON;
  }
  json_decref(s->known);
  s->known = json_incref(known);
  if (rv) set_rv(s, rv);
  s->out_ino = (ino_t)json_integer_value(json_object_get(j, "out_ino"));
  s->out_off = (uint64_t)json_integer_value(json_object_get(j, "out_off"));
  json_decref(j);
  return RIPPLE_OK;
}

static void replay_line(wstate_t *s, const char *line, const char *resource, const char *ns) {
  json_t *r = json_loads(line, 0, NULL);
  const char *res = json_string_value(json_object_get(r, "resource"));
  const char *rns = json_string_value(json_object_get(r, "namespace"));
  if (res && rns && !strcmp(res, resource) && (!ns || !*ns || !strcmp(ns, rns))) {
    const char *op = json_string_value(json_object_get(r, "op"));
    const char *name = json_string_value(json_object_get(r, "name"));
    const char *uid = json_string_value(json_object_get(r, "uid"));
    const char *rv = json_string_value(json_object_get(r, "rv"));
    if (op && name && uid && rv) {
      wstate_apply(s, op, rns, name, uid, rv);
      /* A relisted object's rv is older than the relist's: not a resume point. */
      if (!json_is_true(json_object_get(r, "relist"))) set_rv(s, rv);
    }
  }
  json_decref(r);
}

int wstate_replay(wstate_t *s, const char *out_path, const char *resource, const char *ns) {
  FILE *f = fopen(out_path, "r");
  if (!f) return errno == ENOENT ? RIPPLE_OK : RIPPLE_ESYS;
  struct stat st;
  /* Another inode: the file was rotated after the checkpoint, which was
   * taken at the old file's end, so nothing is missing. */
  if (fstat(fileno(f), &st) != 0 || st.st_ino != s->out_ino || (uint64_t)st.st_size <= s->out_off ||
      fseeko(f, (off_t)s->out_off, SEEK_SET) != 0) {
    fclose(f);
    return RIPPLE_OK;
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, f)) > 0)
    if (line[n - 1] == '\n') replay_line(s, line, resource, ns);
  free(line);
  fclose(f);
  return RIPPLE_OK;
}
