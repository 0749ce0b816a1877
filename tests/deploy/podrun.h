/*
 * podrun.h - run a container of a rendered Pod template on this machine, out of
 * cluster, the way a kubelet would start it: exactly the template's arguments and
 * environment, its volumes at their mount paths (Secrets read from the lab's API
 * server, emptyDirs and claims as fresh directories), the ServiceAccount's token and
 * the cluster's CA where a Pod finds them, its user and group, and a read-only root
 * file system. So the chart's flags, files and environment are what the test runs,
 * not a copy of them.
 *
 * Each container runs in a mount namespace of its own (unshare(2) with
 * CLONE_NEWNS): the mounts are seen by it alone. The mount points themselves
 * (/etc/ripple/..., /var/lib/ripple, /var/run/secrets/kubernetes.io/serviceaccount)
 * must exist on the host, so podrun creates missing ones as empty directories. Needs
 * root (CAP_SYS_ADMIN), as the lab tests have.
 *
 * The build's bin directory (and share/ripple beside it) is mounted where the image
 * has its programs, /usr/local/bin (and /usr/local/share/ripple), and a container's
 * args run as the image's entry point does: "/usr/local/bin/ripple ARGS...".
 *
 * Memory: podrun_t owns nothing on the heap; json_t arguments are borrowed.
 */
#ifndef RIPPLE_TESTS_PODRUN_H
#define RIPPLE_TESTS_PODRUN_H

#include <jansson.h>
#include <sys/types.h>

#include "ripple/kube.h"

typedef struct podrun {
  pid_t pid;
  char dir[128]; /* volumes, the token, the log */
  char log[192]; /* its stdout and stderr */
} podrun_t;

typedef struct podrun_opts {
  ripple_kube_client_t *kc; /* reads Secrets, requests the ServiceAccount token */
  const char *ns;           /* the Pod's namespace */
  const char *bin_dir;      /* where the build's ripple programs are */
  const char *api_host;     /* KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT */
  const char *api_port;
  const char *ca_file;  /* the cluster's CA: the token's ca.crt */
  const char *data_dir; /* for volumeClaimTemplates: kept across restarts; NULL: fresh */
} podrun_opts_t;

/* The Pod template (a Deployment's, StatefulSet's or Job's spec.template) of the
 * rendered object obj; NULL when obj has none. */
const json_t *podrun_template(const json_t *obj);

/* Start the first container of obj's Pod template. Fails the test when anything
 * it needs is missing (a Secret, a volume kind it does not know, valueFrom). */
void podrun_start(podrun_t *p, const json_t *obj, const podrun_opts_t *o);

/* Wait for it to exit (at most timeout_ms); its exit status, -1 on timeout or a
 * signal (it is then killed). */
int podrun_wait(podrun_t *p, int timeout_ms);

/* SIGTERM and wait: the exit status (0 is a clean stop), -1 if it had to be killed. */
int podrun_stop(podrun_t *p);

/* Print its log to stderr (for a failing test). */
void podrun_dump(const podrun_t *p);

#endif
