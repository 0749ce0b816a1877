/*
 * objects.h - the objects of a change log, indexed by uid, with their
 * records in time order and the parent/child links the rules give
 * (objects.c). hops.c measures on top of this index.
 */
#ifndef RIPPLE_ANALYZE_OBJECTS_H
#define RIPPLE_ANALYZE_OBJECTS_H

#include "analyze.h"

typedef struct aobj aobj_t;
struct aobj {
  const char *uid, *kind, *ns, *name;
  const cl_record_t **recs; /* in time order */
  size_t nrec, caprec;
  const json_t *last; /* the latest object seen */
  aobj_t *parent;     /* the controlling owner, when the rules confirm it */
  aobj_t **kids;
  size_t nkids, capkids;
  /* observed changes (NULL when not seen as they happened) */
  const cl_record_t *add, *del, *sched, *running, *ready;
};

typedef struct aindex {
  aobj_t *objs;
  size_t n;
  size_t *slots; /* open addressing over objs, SIZE_MAX = empty */
  size_t nslots;
} aindex_t;

int aindex_build(aindex_t *ix, const cl_log_t *log, const ripple_rules_t *rules);
aobj_t *aindex_find(const aindex_t *ix, const char *uid);
void aindex_free(aindex_t *ix);

/* The integer at obj.a.b, or -1 when absent. */
int64_t aobj_int(const json_t *obj, const char *a, const char *b);

#endif
