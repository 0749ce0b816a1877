/*
 * ripplex/idle.h - background work that yields to everything else: a thread
 * in Linux's idle scheduling class runs only on CPU time nothing else of
 * the process (or the machine) wants. The trace server's OTLP exporter and
 * its details' parser and writer use it, so that they never slow ingest.
 *
 * A caveat that shapes its users: an unprivileged thread may enter the idle
 * class but not leave it, and a starved thread holding a lock (a SQLite read
 * transaction, a mutex) holds it for as long as it is starved.
 */
#ifndef RIPPLEX_IDLE_H
#define RIPPLEX_IDLE_H

/* Put the calling thread in the idle class. 1 when it is, 0 when the system
 * has no such class or refused (the thread runs on as it was). */
int idle_enter(void);

#endif
