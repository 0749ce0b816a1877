/*
 * recv_server.h - an HTTP receiver on 127.0.0.1 for testing the shipper's
 * delivery rules (it is not the trace server: it only counts what arrives and
 * fails on command).
 */
#ifndef RIPPLE_RECV_SERVER_H
#define RIPPLE_RECV_SERVER_H

#include <stddef.h>

typedef struct recv_server recv_server_t;

recv_server_t *recv_start(void);
int recv_port(const recv_server_t *r);
/* Answer `status` to everything; fail the first `fail_first` requests with
 * 503; with `hang`, accept requests and never answer until stopped. */
void recv_configure(recv_server_t *r, int status, int fail_first, int hang);
size_t recv_records(recv_server_t *r, const char *path); /* array elements received */
size_t recv_requests(recv_server_t *r);
size_t recv_triggered(recv_server_t *r); /* mergelogs received naming a trigger */
size_t recv_invalid(recv_server_t *r);   /* bodies that were not JSON arrays of objects */
/* Copy of the last Authorization header, or "" */
void recv_last_auth(recv_server_t *r, char *out, size_t cap);
void recv_stop(recv_server_t *r);

#endif
