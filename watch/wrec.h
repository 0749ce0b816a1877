/*
 * wrec.h - the parts of ripple-watch that need no cluster, shared with the
 * tests: the JSON record of one change (docs/watch.md), the output file with
 * rotation and zstd compression, and the per-resource checkpoint (the objects
 * known, the resume point, and where in the output it was taken).
 */
#ifndef RIPPLE_WATCH_WREC_H
#define RIPPLE_WATCH_WREC_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ripple/kube.h"

/* ---- records ---------------------------------------------------------------------- */

/* "add", "update" or "delete". */
const char *wrec_op(ripple_kube_event_type_t t);

/* The record of one change as one JSON line with its newline, in *out
 * (freed with free). resource is "<plural>" or "<plural>.<group>". The
 * record is spliced from the event's text (obj_text, old_text, key, uid,
 * rv), which the watch has already checked, so no tree is built. */
int wrec_format(const ripple_kube_event_t *ev, const char *resource, char **out, size_t *len);

/* ---- output ----------------------------------------------------------------------- */

typedef struct wout {
  FILE *f;
  char *path;           /* NULL: stdout, never rotated */
  uint64_t size;        /* bytes in the current file */
  uint64_t rotate_size; /* 0: no size rotation */
  int64_t rotate_ns;    /* 0: no time rotation */
  int64_t opened_ns;
  ino_t ino; /* of the current file; 0 for stdout */
} wout_t;

int wout_open(wout_t *o, const char *path, uint64_t rotate_size, int64_t rotate_ns);
int wout_write(wout_t *o, const char *line, size_t len);
/* Flush to the kernel and to the disk. */
int wout_sync(wout_t *o);
/* 1 when the file is due for rotation. */
int wout_due(const wout_t *o, int64_t now_ns);
/* Sync, rename the file to PATH.<timestamp>, open a fresh one, compress the
 * old one to PATH.<timestamp>.zst and remove it. *rotated (may be NULL)
 * receives the name of the .zst file (freed with free). */
int wout_rotate(wout_t *o, char **rotated);
void wout_close(wout_t *o);

/* Compress src into dst (zstd, level 3). */
int wzstd_file(const char *src, const char *dst);

/* ---- known objects and checkpoints ------------------------------------------------ */

/* The objects one resource's output reflects: "ns/name" -> [uid, rv]. */
typedef struct wstate {
  json_t *known;
  char *rv;      /* resume point: at or before what the output reflects */
  ino_t out_ino; /* where the output stood when this state was saved */
  uint64_t out_off;
} wstate_t;

void wstate_init(wstate_t *s);
void wstate_clear(wstate_t *s);
/* Apply a change; returns 0 when the output already has it (a change
 * replayed after a restart), 1 when it is new. */
int wstate_apply(wstate_t *s, const char *op, const char *ns, const char *name, const char *uid,
                 const char *rv);
/* The known objects as the watch's opts.known (an array of stub objects). */
json_t *wstate_known_objects(const wstate_t *s);

/* Write the checkpoint to path atomically (temp file, fsync, rename, fsync
 * of the directory). */
int wstate_save(const wstate_t *s, const char *path);
/* RIPPLE_ENOENT when there is no checkpoint. */
int wstate_load(wstate_t *s, const char *path);
/* Apply the records of `resource` (restricted to namespace ns unless NULL
 * or "") that the output file at out_path has after the checkpoint's offset:
 * written, but not yet in a checkpoint when the agent stopped. */
int wstate_replay(wstate_t *s, const char *out_path, const char *resource, const char *ns);

#endif
