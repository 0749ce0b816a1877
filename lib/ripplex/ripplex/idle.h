/*
 * ripplex/idle.h - background work with a small but guaranteed share of the
 * CPU: the calling thread keeps the normal policy (SCHED_OTHER) with a nice
 * value IDLE_NICE_DELTA above the process's, so under contention it gets a
 * share by weight (nice 15 against one busy nice-0 thread: about 3% under
 * CFS/EEVDF; more as ingest's threads wait on I/O and locks) and, when the
 * CPU is free, all of it. The trace server's OTLP exporter, its details'
 * parser and writer, and the stall detector's feeder use it, so that they
 * cost ingest little and still make progress while ingest runs flat out (the
 * details' requests that wait too long for the parser are taken over at
 * normal priority within a CPU budget, and queues that are behind refuse
 * more: trace_details.c, store/facts.c). 15 rather than 10: at 10 the
 * exporter (with its normal-priority reader) cost full-rate ingest 17-19% on
 * one shared core, at 15 about 5% (docs/benchmarks.md, issue 28).
 *
 * Not the idle class (SCHED_IDLE), which it was until issue 28: an idle
 * thread gets nothing at all while another thread wants its core.
 * Nothing here is owned by the caller; no state is kept.
 *
 * A caveat that shapes its users: an unprivileged thread may raise its nice
 * value but not lower it again, so the work that must not wait (the
 * exporter's SQLite reads) stays in a thread of its own at normal priority.
 */
#ifndef RIPPLEX_IDLE_H
#define RIPPLEX_IDLE_H

/* How many nice levels below the process's a background thread runs. */
#define IDLE_NICE_DELTA 15

/* The nice value a background thread takes when the process runs at
 * `current`: IDLE_NICE_DELTA higher, capped at Linux's lowest priority (19). */
int idle_nice_for(int current);

/* Lower the calling thread's priority (this thread only: Linux nice is per
 * thread). 1 when done, 0 when the system refused or has no per-thread nice
 * (the thread runs on as it was). */
int idle_enter(void);

#endif
