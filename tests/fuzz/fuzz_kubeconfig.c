/*
 * fuzz_kubeconfig.c - libFuzzer target for kubeconfig loading (config.c):
 * YAML, base64 fields, paths, exec sections and $KUBECONFIG-style merging
 * are all outside input.
 *
 * The input is written to files in a private directory and loaded as an
 * explicit path; a line "#next" splits it into two files merged in order.
 * Properties beyond "does not crash or leak": a failure leaves no config
 * and says why; a success has an https-or-http server without a trailing
 * slash, a namespace and a context, and a client can be made from it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ripple/kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static void cleanup(void) {
  char p[128];
  snprintf(p, sizeof p, "%s/config", dir);
  unlink(p);
  snprintf(p, sizeof p, "%s/second", dir);
  unlink(p);
  rmdir(dir);
}

static int write_file(const char *path, const uint8_t *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  fwrite(p, 1, n, f);
  return fclose(f);
}

static void check(const ripple_kube_config_t *c) {
  const char *s = ripple_kube_config_server(c);
  size_t n = s ? strlen(s) : 0;
  if (!s || !strstr(s, "://") || (n > 1 && s[n - 1] == '/')) abort();
  const char *ns = ripple_kube_config_namespace(c);
  if (!ns || !*ns || !ripple_kube_config_context(c)) abort();
  ripple_kube_client_t *cl;
  if (ripple_kube_client_new(c, NULL, &cl) != RIPPLE_OK) abort();
  ripple_kube_client_free(cl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!dir[0]) {
    /* tmpfs when there is one: every input is written to a file */
    snprintf(dir, sizeof dir, "%s/fuzz-kubeconfig-%ld",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (long)getpid());
    (void)!mkdir(dir, 0700);
    atexit(cleanup);
    unsetenv("KUBERNETES_SERVICE_HOST");
    (void)!freopen("/dev/null", "r", stdin); /* a kubeconfig naming /dev/stdin must not block */
  }
  char a[128], b[128], list[300];
  snprintf(a, sizeof a, "%s/config", dir);
  snprintf(b, sizeof b, "%s/second", dir);
  const uint8_t *sep = size >= 7 ? memmem(data, size, "\n#next\n", 7) : NULL;
  size_t n1 = sep ? (size_t)(sep - data) : size;
  if (write_file(a, data, n1) != 0) return 0;
  if (sep && write_file(b, sep + 7, size - n1 - 7) != 0) return 0;
  snprintf(list, sizeof list, sep ? "%s:%s" : "%s", a, b);
  /* the last byte picks a context override now and then */
  const char *ctx = size && data[size - 1] == 'x' ? "x" : NULL;
  ripple_kube_config_opts_t o = {list, ctx, NULL, 0};
  ripple_kube_config_t *c = (ripple_kube_config_t *)&o; /* must be left alone on failure */
  char err[256];
  int rc = ripple_kube_config_load(&o, &c, err, sizeof err);
  if (rc != RIPPLE_OK) {
    if (c != (ripple_kube_config_t *)&o || !err[0]) abort();
    return 0;
  }
  check(c);
  ripple_kube_config_free(c);
  return 0;
}
