/*
 * pg_conn.h: PostgreSQL client plumbing shared by the pg-advisory lock
 * (locks/pg_advisory.c) and the protected resource on PostgreSQL
 * (backends/pgstore.c): libpq used asynchronously so that every connect
 * and every statement has a client-side deadline (a blackholed link must
 * end in "timeout", never a worker blocked forever), and the advisory-lock
 * key of a resource. Not here: what the statements mean.
 */
#ifndef LS_PG_CONN_H
#define LS_PG_CONN_H

#include "locks/pq.h" /* libpq, loaded at the first connection */
#include <stdint.h>

/* The harness's database: the superuser initdb creates and the database
 * every client connects to (backends/postgres.c). */
#define PG_USER "lockstorm"
#define PG_DBNAME "postgres"

/* Outcome of pgc_exec. */
enum pgc_status {
    PGC_OK = 0,       /* the statement(s) ran; *res holds the last result */
    PGC_ERROR = 1,    /* the server answered with an error (nothing partial); *res holds it */
    PGC_TIMEOUT = 2,  /* no complete answer by the deadline: outcome unknown */
    PGC_CONN = 3,     /* the connection failed before or while sending/receiving */
};

/* Connect to host:port as PG_USER to PG_DBNAME, waiting at most until
 * deadline_ns (CLOCK_MONOTONIC). Returns a connection in CONNECTION_OK, or
 * NULL with a one-line reason in why. Caller frees with PQfinish. */
PGconn *pgc_connect(const char *host, int port, int64_t deadline_ns, char *why, size_t n);

/* Send sql (one or more statements separated by ';', no parameters) and
 * collect every result until deadline_ns. On PGC_OK / PGC_ERROR *res is
 * the last result (caller frees with PQclear; for PGC_ERROR the first
 * error's result); otherwise *res is NULL and the connection must be
 * dropped (its state is unknown). why gets the server's or libpq's
 * message on failure. */
int pgc_exec(PGconn *c, const char *sql, int64_t deadline_ns, PGresult **res, char *why,
             size_t n);

/* Has the server gone away under c (EOF or reset seen on its socket,
 * without blocking)? 1 when the connection is known dead. */
int pgc_dead(PGconn *c);

/* The advisory-lock key of a resource: FNV-1a 64-bit over the bytes of
 * the lock name "lockstorm:r<res>" (the name every lockstorm impl uses),
 * reinterpreted as a signed 64-bit integer (pg_try_advisory_lock(bigint)).
 * Documented in docs/locks.md. */
int64_t pgc_key_of_name(const char *name);
int64_t pgc_key(int res);

#endif
