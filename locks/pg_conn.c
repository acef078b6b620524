/*
 * pg_conn.c: libpq with deadlines (see pg_conn.h). Everything goes through
 * the non-blocking API: PQconnectStart/PQconnectPoll for the handshake,
 * PQsendQuery then PQconsumeInput/PQisBusy/PQgetResult for statements,
 * poll(2) on PQsocket in between, bounded by the caller's deadline.
 */
#include "locks/pg_conn.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "util/timeutil.h"

/* Wait until fd is ready for events or the deadline. Returns 1 ready,
 * 0 timeout, -1 error. */
static int wait_fd(int fd, short events, int64_t deadline_ns)
{
    for (;;) {
        int64_t left = deadline_ns - ls_now_ns();
        if (left <= 0)
            return 0;
        struct pollfd p = {fd, events, 0};
        int ms = (int)((left + LS_NS_PER_MS - 1) / LS_NS_PER_MS);
        int r = poll(&p, 1, ms);
        if (r > 0)
            return 1;
        if (r == 0)
            continue; /* re-check the deadline */
        if (errno != EINTR)
            return -1;
    }
}

static void set_why(char *why, size_t n, const char *what, const char *msg)
{
    if (!why || !n)
        return;
    char clean[256];
    size_t j = 0;
    for (const char *p = msg ? msg : ""; *p && j + 1 < sizeof(clean); p++)
        clean[j++] = (*p == '\n' || *p == '\r') ? ' ' : *p;
    while (j > 0 && clean[j - 1] == ' ')
        j--;
    clean[j] = '\0';
    snprintf(why, n, "%s%s%s", what, clean[0] ? ": " : "", clean);
}

static void quiet_notice(void *arg, const char *msg)
{
    (void)arg;
    (void)msg;
}

PGconn *pgc_connect(const char *host, int port, int64_t deadline_ns, char *why, size_t n)
{
    if (pq_load(why, n) != 0)
        return NULL;
    char ports[16];
    snprintf(ports, sizeof(ports), "%d", port);
    const char *const keys[] = {"host", "port", "user", "dbname", "application_name",
                                "sslmode", "gssencmode", NULL};
    const char *const vals[] = {host, ports, PG_USER, PG_DBNAME, "lockstorm", "disable",
                                "disable", NULL};
    PGconn *c = PQconnectStartParams(keys, vals, 0);
    if (!c) {
        set_why(why, n, "connect", "out of memory");
        return NULL;
    }
    if (PQstatus(c) == CONNECTION_BAD) {
        set_why(why, n, "connect", PQerrorMessage(c));
        PQfinish(c);
        return NULL;
    }
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    for (;;) {
        if (st == PGRES_POLLING_OK)
            break;
        if (st == PGRES_POLLING_FAILED) {
            set_why(why, n, "connect", PQerrorMessage(c));
            PQfinish(c);
            return NULL;
        }
        int r = wait_fd(PQsocket(c), st == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline_ns);
        if (r <= 0) {
            set_why(why, n, "connect", r == 0 ? "timeout" : strerror(errno));
            PQfinish(c);
            return NULL;
        }
        st = PQconnectPoll(c);
    }
    PQsetNoticeProcessor(c, quiet_notice, NULL); /* "you don't own a lock" is an answer here */
    if (PQsetnonblocking(c, 1) != 0) {
        set_why(why, n, "connect", PQerrorMessage(c));
        PQfinish(c);
        return NULL;
    }
    return c;
}

int pgc_exec(PGconn *c, const char *sql, int64_t deadline_ns, PGresult **res, char *why,
             size_t n)
{
    *res = NULL;
    if (!c || PQstatus(c) != CONNECTION_OK) {
        set_why(why, n, "no connection", NULL);
        return PGC_CONN;
    }
    if (!PQsendQuery(c, sql)) {
        set_why(why, n, "send", PQerrorMessage(c));
        return PGC_CONN;
    }
    for (;;) { /* flush what the non-blocking send left */
        int f = PQflush(c);
        if (f == 0)
            break;
        if (f < 0) {
            set_why(why, n, "send", PQerrorMessage(c));
            return PGC_CONN;
        }
        int r = wait_fd(PQsocket(c), POLLOUT, deadline_ns);
        if (r <= 0) {
            set_why(why, n, r == 0 ? "timeout" : "send", r == 0 ? "sending" : strerror(errno));
            return r == 0 ? PGC_TIMEOUT : PGC_CONN;
        }
    }
    PGresult *last = NULL, *err = NULL;
    for (;;) {
        while (PQisBusy(c)) {
            int r = wait_fd(PQsocket(c), POLLIN, deadline_ns);
            if (r <= 0) {
                PQclear(last);
                PQclear(err);
                set_why(why, n, r == 0 ? "timeout" : "receive",
                        r == 0 ? "no reply by the deadline" : strerror(errno));
                return r == 0 ? PGC_TIMEOUT : PGC_CONN;
            }
            if (!PQconsumeInput(c)) {
                PQclear(last);
                PQclear(err);
                set_why(why, n, "receive", PQerrorMessage(c));
                return PGC_CONN;
            }
        }
        PGresult *r = PQgetResult(c);
        if (!r)
            break;
        ExecStatusType es = PQresultStatus(r);
        if (es == PGRES_FATAL_ERROR || es == PGRES_BAD_RESPONSE || es == PGRES_NONFATAL_ERROR) {
            if (!err)
                err = r;
            else
                PQclear(r);
        } else {
            PQclear(last);
            last = r;
        }
    }
    if (PQstatus(c) != CONNECTION_OK) {
        PQclear(last);
        set_why(why, n, "connection lost", err ? PQresultErrorMessage(err) : PQerrorMessage(c));
        PQclear(err);
        return PGC_CONN;
    }
    if (err) {
        PQclear(last);
        set_why(why, n, "server", PQresultErrorMessage(err));
        *res = err;
        return PGC_ERROR;
    }
    *res = last;
    return PGC_OK;
}

int pgc_dead(PGconn *c)
{
    if (!c || PQstatus(c) != CONNECTION_OK)
        return 1;
    int fd = PQsocket(c);
    if (fd < 0)
        return 1;
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0)
        return 0;
    if (p.revents & (POLLERR | POLLHUP))
        return 1;
    char b;
    ssize_t r = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

int64_t pgc_key_of_name(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    int64_t k;
    memcpy(&k, &h, sizeof(k));
    return k;
}

int64_t pgc_key(int res)
{
    char name[48];
    snprintf(name, sizeof(name), "lockstorm:r%d", res);
    return pgc_key_of_name(name);
}
