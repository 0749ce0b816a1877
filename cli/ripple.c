/*
 * ripple.c - the `ripple` command: one entry point for ripple's programs.
 *
 *   ripple server [options]   ->  ripple-server [options]
 *
 * (kubectl-ripple is the one exception: kubectl runs it as `kubectl ripple`.)
 *
 * Like git, each subcommand is its own program, `ripple-<name>`, looked up
 * first next to this executable and then on PATH. Keeping them separate keeps
 * each program's dependencies (SQLite for the server, say) out of the others.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
  const char *name, *what;
} commands[] = {
    {"server", "the trace server: stores mergelogs and spans, answers queries (docs/api.md)"},
    {"watch", "the watch agent: records every change of Kubernetes resources (docs/watch.md)"},
    {"analyze", "per-hop propagation times from change logs (docs/analyze.md)"},
    {"run", "runs a change scenario with the watch agent recording (docs/run.md)"},
    {"webhook", "the admission webhook: CPIDs for unmodified controllers (docs/webhook.md)"},
    {"guard", "takes the webhook out of the write path while it does not answer (docs/guard.md)"},
    {"certs", "creates the webhook's TLS Secret and token Secrets in-cluster (docs/certs.md)"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: ripple <command> [options]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].what);
  fprintf(f, "\n`ripple <command> --help` describes a command's options.\n");
}

/* The directory this executable lives in, or "" if the kernel will not say. */
static void self_dir(char *out, size_t cap) {
  ssize_t n = readlink("/proc/self/exe", out, cap - 1);
  out[n > 0 ? n : 0] = '\0';
  char *slash = strrchr(out, '/');
  if (slash)
    slash[1] = '\0';
  else
    out[0] = '\0';
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
      !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const char *cmd = argv[1];
  int known = 0;
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    known |= !strcmp(commands[i].name, cmd);
  if (!known) {
    fprintf(stderr, "ripple: '%s' is not a ripple command\n\n", cmd);
    usage(stderr);
    return 2;
  }
  char prog[64], path[PATH_MAX + 64];
  snprintf(prog, sizeof prog, "ripple-%s", cmd);
  self_dir(path, PATH_MAX);
  if (path[0]) {
    size_t len = strlen(path);
    snprintf(path + len, sizeof path - len, "%s", prog);
    argv[1] = path;
    execv(path, argv + 1);
  }
  argv[1] = prog;
  execvp(prog, argv + 1);
  fprintf(stderr, "ripple: cannot run %s: %s (is it installed next to ripple or on PATH?)\n", prog,
          strerror(errno));
  return 127;
}
