/*
 * exec.h - client-go credential plugins (exec.c): a kubeconfig's exec
 * section, and running it. Below the client, which calls it; it reports
 * through status.h and calls nothing above it.
 */
#ifndef RIPPLE_KUBE_EXEC_H
#define RIPPLE_KUBE_EXEC_H

#include <stdint.h>

#include "ripple/kube.h"

typedef struct kube_exec {
  char *command;
  char **args;       /* NULL-terminated, args[0] is command */
  char **env;        /* NULL-terminated "NAME=value" added to the environment */
  char *api_version; /* client.authentication.k8s.io/v1 (or v1beta1) */
  int interactive;   /* never: we have no terminal; a plugin that needs one fails */
} kube_exec_t;

/* Run the credential plugin: a token, or a client certificate and key, and
 * when they expire (0: never). Fills st->message on failure. */
int kube_exec_run(const kube_exec_t *e, const char *server, char **token, char **cert_pem,
                  char **key_pem, int64_t *expiry_ns, ripple_kube_status_t *st);
void kube_exec_free(kube_exec_t *e);

/* A deep copy into *out (NULL for no exec section): RIPPLE_OK or
 * RIPPLE_ENOMEM. */
int kube_exec_dup(const kube_exec_t *e, kube_exec_t **out);

#endif
