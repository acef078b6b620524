/*
 * pq.h: libpq, loaded when the first PostgreSQL connection is made
 * (pq_load) instead of at every start of lockstorm. Linked, libpq brought
 * 22 shared libraries (itself, Kerberos, LDAP, GnuTLS, OpenSSL, ...) into every
 * lockstorm process, `lockstorm check` and `--version` included: 14 ms of
 * CPU per start on a 2-vCPU virtual machine (docs/performance.md "Fixed
 * costs of a check"), for the one lock and store that use it.
 *
 * Include this instead of <libpq-fe.h>: the libpq functions lockstorm
 * calls are macros for pointers that pq_load fills (libpq-fe.h still gives
 * the types and constants). Before pq_load, PQfinish and PQclear do
 * nothing (all they can be given then is NULL); the others are only
 * reachable from a connection, which pq_load comes before.
 */
#ifndef LS_PQ_H
#define LS_PQ_H

#include <stddef.h>

#include <libpq-fe.h>

#define PQ_FUNCS(X)                                                                             \
    X(PQclear) X(PQcmdStatus) X(PQconnectPoll) X(PQconnectStartParams) X(PQconsumeInput)        \
    X(PQerrorMessage) X(PQfinish) X(PQflush) X(PQgetResult) X(PQgetisnull) X(PQgetvalue)        \
    X(PQisBusy) X(PQnfields) X(PQntuples) X(PQresultErrorMessage) X(PQresultStatus)             \
    X(PQsendQuery) X(PQsetNoticeProcessor) X(PQsetnonblocking) X(PQsocket) X(PQstatus)

struct pq_api {
#define PQ_MEMBER(f) __typeof__(f) *f;
    PQ_FUNCS(PQ_MEMBER)
#undef PQ_MEMBER
};
extern struct pq_api pq_api;

/* Contract: libpq loaded (once per process; thread-safe). 0, or -1 with
 * one line in why: what could not be loaded, and what to install. */
int pq_load(char *why, size_t n);

#ifndef PQ_NO_MACROS
#define PQclear (pq_api.PQclear)
#define PQcmdStatus (pq_api.PQcmdStatus)
#define PQconnectPoll (pq_api.PQconnectPoll)
#define PQconnectStartParams (pq_api.PQconnectStartParams)
#define PQconsumeInput (pq_api.PQconsumeInput)
#define PQerrorMessage (pq_api.PQerrorMessage)
#define PQfinish (pq_api.PQfinish)
#define PQflush (pq_api.PQflush)
#define PQgetResult (pq_api.PQgetResult)
#define PQgetisnull (pq_api.PQgetisnull)
#define PQgetvalue (pq_api.PQgetvalue)
#define PQisBusy (pq_api.PQisBusy)
#define PQnfields (pq_api.PQnfields)
#define PQntuples (pq_api.PQntuples)
#define PQresultErrorMessage (pq_api.PQresultErrorMessage)
#define PQresultStatus (pq_api.PQresultStatus)
#define PQsendQuery (pq_api.PQsendQuery)
#define PQsetNoticeProcessor (pq_api.PQsetNoticeProcessor)
#define PQsetnonblocking (pq_api.PQsetnonblocking)
#define PQsocket (pq_api.PQsocket)
#define PQstatus (pq_api.PQstatus)
#endif

#endif
