/*
 * test_history_deferred.c: a run directory's closed logs, whose records
 * the checkers' pass checks instead of the load (deferred): the files kept
 * open for it (or read through the mappings), a damaged record found there
 * (the history loaded again with every record checked; or, when the logs
 * cannot be read again, the log cut in place, its worker's stream ending
 * at its last good record's place, a damaged first record included), a
 * log shortened after the load, a record only its checksum finds (the
 * helpers' to find), one log far ahead of the others, and pread failing
 * on a second pass; on 1 to 3 threads. Loading histories is
 * test_history.c; what both write and read is in history_test.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "checkers/check.h"
#include "checkers/pass.h"
#include "model/evlog.h"
#include "tests/unit/history_test.h"
#include "tests/unit/testing.h"
#include "util/strbuf.h"

static char *tmp;

/* Contract: a run directory tmp/stem that ran secs seconds, with a
 * workload of `workers` workers on one resource (a log left to the pass
 * names no resource at load: without the workload's, its records would be
 * bad, r0 unknown); dir its path. 0 or -1. */
static int rundir_workers(char *dir, size_t n, const char *stem, int secs, int workers)
{
    char path[8192], text[256], end[32];
    snprintf(dir, n, "%s/%s", tmp, stem);
    snprintf(end, sizeof(end), "%d000000000", secs);
    snprintf(path, sizeof(path), "%s/workload.yaml", dir);
    snprintf(text, sizeof(text),
             "name: t\nseed: 1\nduration: %ds\nlock: {impl: redis-single}\n"
             "workers: {count: %d, resources: 1}\n", secs, workers);
    return make_rundir(dir, end) == 0 && write_file(path, text) == 0 ? 0 : -1;
}

/* A cleanly closed log is checked record by record in the checkers' pass,
 * not at load (checkers/history.h "unverified"). A bad record in its
 * middle (corruption: crashes leave logs unclosed) makes the check load the
 * history again with every record checked first: the verdict and warnings
 * are those of checking everything at load. */
static int has_gap(const struct json *r, const char *needle)
{
    const struct json *g = json_path(r, "evidence.gaps");
    for (size_t i = 0; g && g->type == JSON_ARR && i < g->n; i++)
        if (g->kids[i]->type == JSON_STR && strstr(g->kids[i]->s, needle))
            return 1;
    return 0;
}

static double numv(const struct json *v)
{
    return v->is_int ? (double)v->i : v->d;
}

/* Contract: worker id's closed log of the n records r in dir. 0 or -1. */
static int write_recs(const char *dir, int id, struct ev_rec *r, int n)
{
    char path[8192];
    snprintf(path, sizeof(path), "%s/events/worker-%03d.bin", dir, id);
    struct evlog_writer *w;
    struct ls_err err = {0, ""};
    if (evlog_open(&w, path, (uint32_t)id, 0, 0, 0, &err) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        evlog_append(w, &r[i]);
    return evlog_close(w, &err);
}

/* Contract: record k of worker id's log in dir damaged (its checksum no
 * longer matches; its time kept). */
static void damage_rec(const char *dir, int id, size_t k)
{
    char path[8192];
    snprintf(path, sizeof(path), "%s/events/worker-%03d.bin", dir, id);
    int fd = open(path, O_WRONLY);
    REQUIRE(fd >= 0);
    CHECK(pwrite(fd, "\x55\x55", 2, (off_t)(EVLOG_HEADER_SIZE + k * EVLOG_REC_SIZE + 40)) == 2);
    close(fd);
}

/* Contract: dir's history loaded into *h (worker dw's log left to the
 * pass) and checked on jobs threads, listing `listed` violations, into *r;
 * with unreadable, run.json is away while it is checked, so that the logs
 * cannot be read again. */
static void check_cut(const char *dir, int dw, struct history *h, int unreadable, int jobs,
                      int listed, struct json **r)
{
    *r = NULL; /* (and h empty) when a REQUIRE below returns */
    memset(h, 0, sizeof(*h));
    char path[8192], saved[8192];
    struct ls_err err = {0, ""};
    snprintf(path, sizeof(path), "%s/run.json", dir);
    snprintf(saved, sizeof(saved), "%s/run.json.saved", dir);
    REQUIRE(history_load_rundir(dir, h, &err) == 0);
    CHECK_INT(h->w[dw].unverified, 1);
    if (unreadable)
        REQUIRE(rename(path, saved) == 0);
    struct check_params p;
    check_params_from(h, &p);
    p.max_violations = listed;
    p.jobs = jobs;
    p.par_min_events = 0;
    *r = check_run(h, &p);
    if (unreadable)
        REQUIRE(rename(saved, path) == 0);
}

/* The logs cannot be read again and one of them is damaged: the pass cuts
 * it at its last good record, and its worker's log ends at that record's
 * place in the merged order, not at the damaged record's (its own time,
 * later). Worker 0 holds r0 from 10 ms without a lease, its last good
 * record at 100, the damaged one (an exit) at 500, one more after it (a
 * damaged last record is found at load); worker 1 holds from 50
 * to 300, worker 2 from 60 to 70. So the hold of 0 ends at 100 (open), and
 * both violations (1 entering on 0; 2 on 0 and 1) end at the second latest
 * exit of their holds: 100. Ended at the damaged record's place, 0's hold
 * ended after 1's exit at 300 was heard, and a violation counted without
 * its holders (past the listed ones) ended at 300. */
static void test_rundir_cut_in_place(void)
{
    char dir[4096];
    REQUIRE(rundir_workers(dir, sizeof(dir), "cutplace", 1, 3) == 0);
    struct ev_rec a[5] = {rec(5, EV_ACQUIRE_OK, 0), rec(10, EV_ENTER, 0),
                          rec(100, EV_STORE_READ, 0), rec(500, EV_EXIT, 0),
                          rec(510, EV_RELEASE_INVOKE, 0)}; /* a valid last record: the log
                                                              is left to the pass */
    a[0].flags = EVF_NO_LEASE;
    struct ev_rec b[3] = {rec(40, EV_ACQUIRE_OK, 0), rec(50, EV_ENTER, 0), rec(300, EV_EXIT, 0)};
    struct ev_rec c[3] = {rec(55, EV_ACQUIRE_OK, 0), rec(60, EV_ENTER, 0), rec(70, EV_EXIT, 0)};
    b[0].valid_until = c[0].valid_until = 1000 * 1000000LL;
    REQUIRE(write_recs(dir, 0, a, 5) == 0 && write_recs(dir, 1, b, 3) == 0 &&
            write_recs(dir, 2, c, 3) == 0);
    damage_rec(dir, 0, 3);
    for (int listed = 0; listed <= 2; listed++)
        for (int jobs = 1; jobs <= 2; jobs++) {
            struct history h;
            struct json *r;
            check_cut(dir, 0, &h, 1, jobs, listed, &r);
            if (!r) {
                history_free(&h);
                return;
            }
            CHECK_INT(h.w[0].n, 3);
            CHECK(has_warning(r, "reading them again failed"));
            CHECKF(geti(r, "checks.mutex.violations") == 2 && geti(r, "checks.mutex.incidents") == 1,
                   "listed %d, %d threads: %lld violations, %lld incidents", listed, jobs,
                   (long long)geti(r, "checks.mutex.violations"),
                   (long long)geti(r, "checks.mutex.incidents"));
            const struct json *e = json_path(r, "incidents.0.end_ms");
            CHECKF(listed == 0 || (e && e->type == JSON_NUM && fabs(numv(e) - 100) < 1e-9),
                   "listed %d, %d threads: the incident ends at %g ms", listed, jobs,
                   e && e->type == JSON_NUM ? numv(e) : -1.0);
            if (listed > 0) {
                const struct json *ov = json_path(r, "violations.0.overlap_ms");
                CHECKF(ov && ov->type == JSON_NUM && fabs(numv(ov) - 50) < 1e-9,
                       "listed %d: the first overlap lasts %g ms", listed,
                       ov && ov->type == JSON_NUM ? numv(ov) : -1.0);
            }
            json_free(r);
            history_free(&h);
        }
}

/* The same when the damaged record is a log's first: the log has no good
 * record and ends before any record is taken. Worker 1's first record (at
 * 50 ms) is damaged; worker 2 exits at 50, the instant worker 0 enters:
 * touching, no violation. Ended at the damaged record's time, worker 1's
 * log made the checker judge the entries at 50 before worker 2's exit at
 * 50 came: a violation. */
static void test_rundir_cut_first(void)
{
    char dir[4096];
    REQUIRE(rundir_workers(dir, sizeof(dir), "cutfirst", 1, 3) == 0);
    struct ev_rec a[3] = {rec(40, EV_ACQUIRE_OK, 0), rec(50, EV_ENTER, 0), rec(60, EV_EXIT, 0)};
    struct ev_rec b[2] = {rec(50, EV_STORE_READ, 0), rec(70, EV_STORE_READ, 0)};
    struct ev_rec c[3] = {rec(10, EV_ACQUIRE_OK, 0), rec(20, EV_ENTER, 0), rec(50, EV_EXIT, 0)};
    a[0].valid_until = c[0].valid_until = 1000 * 1000000LL;
    REQUIRE(write_recs(dir, 0, a, 3) == 0 && write_recs(dir, 1, b, 2) == 0 &&
            write_recs(dir, 2, c, 3) == 0);
    damage_rec(dir, 1, 0);
    for (int again = 0; again <= 1; again++) /* read again: it fails, or not */
        for (int jobs = 1; jobs <= 3; jobs++) {
            struct history h;
            struct json *r;
            check_cut(dir, 1, &h, !again, jobs, 50, &r);
            if (!r) {
                history_free(&h);
                return;
            }
            CHECKF(geti(r, "checks.mutex.violations") == 0 && h.w[1].n == 0,
                   "read again %s, %d threads: %lld violations, worker 1 kept %zu records",
                   again ? "fine" : "failed", jobs, (long long)geti(r, "checks.mutex.violations"),
                   (size_t)h.w[1].n);
            json_free(r);
            history_free(&h);
        }
}

static void test_rundir_deferred(void)
{
    char dir[4096], path[8192];
    snprintf(dir, sizeof(dir), "%s/run3", tmp);
    REQUIRE(make_rundir(dir, "1000000000") == 0);
    snprintf(path, sizeof(path), "%s/storage.jsonl", dir);
    REQUIRE(write_file(path, "{\"res\":\"r0\",\"plain\":0}\n{\"res\":\"r1\",\"plain\":2}\n") == 0);
    /* two overlapping holds of r1: worker 1 enters at 53 while 0 holds to 300 */
    REQUIRE(write_worker(dir, 0, 1, 0, 1, 301, 2, 300, 1) == 0);
    REQUIRE(write_worker(dir, 1, 1, 40, 52, 352, 53, 60, 1) == 0);
    struct history h;
    struct ls_err err = {0, ""};
    int fds = t_open_fds();
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    CHECK_INT(h.w[1].unverified, 1);
    /* each closed log keeps its file open for the pass to pread (the
     * history's own: history_free closes them) */
    CHECK(h.w[0].file.has_fd && h.w[1].file.has_fd);
    CHECK_INT(t_open_fds(), fds + 2);
    size_t full = h.w[1].n;
    struct check_params p;
    check_params_from(&h, &p);
    struct json *r = check_run(&h, &p);
    CHECK_INT(geti(r, "checks.mutex.violations"), 1);
    CHECK_INT(h.w[1].unverified, 0); /* the pass checked every record */
    CHECK_INT(h.w[1].n, full);
    json_free(r);
    history_free(&h);
    CHECK_INT(t_open_fds(), fds);
    /* LS_CHECK_READ=map: read through the mappings, nothing kept open, the
     * same findings */
    setenv("LS_CHECK_READ", "map", 1);
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    CHECK(!h.w[0].file.has_fd && !h.w[1].file.has_fd);
    CHECK_INT(t_open_fds(), fds);
    check_params_from(&h, &p);
    r = check_run(&h, &p);
    CHECK_INT(geti(r, "checks.mutex.violations"), 1);
    json_free(r);
    history_free(&h);
    unsetenv("LS_CHECK_READ");

    /* worker 1's second record (its grant) no longer matches its checksum */
    snprintf(path, sizeof(path), "%s/events/worker-001.bin", dir);
    int fd = open(path, O_WRONLY);
    REQUIRE(fd >= 0);
    CHECK(pwrite(fd, "\x55\x55", 2, EVLOG_HEADER_SIZE + EVLOG_REC_SIZE + 40) == 2);
    close(fd);
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    CHECK_INT(h.w[1].unverified, 1);
    CHECK_INT(h.w[1].n, full); /* not read yet */
    check_params_from(&h, &p);
    r = check_run(&h, &p);
    CHECK_INT(h.w[1].unverified, 0);
    CHECK_INT(h.w[1].n, 1); /* loaded again: its invoke only */
    CHECK_INT(h.w[1].complete, 0);
    CHECK_INT(geti(r, "checks.mutex.violations"), 0);
    CHECK(has_warning(r, "worker 1: event log has a torn tail"));
    CHECK_INT(geti(r, "evidence.logs.damaged"), 1); /* found by the pass, after the load */
    CHECK(has_gap(r, "events/worker-001.bin: damaged after record 1"));
    CHECK_STR(gets_(r, "verdict_checks"), "unknown");
    json_free(r);
    history_free(&h);

    /* the logs cannot be read again (run.json gone after the load): the
     * damaged log is cut at its bad record, nothing past it reaches a
     * checker, and the history says why */
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    CHECK_INT(h.w[1].unverified, 1);
    snprintf(path, sizeof(path), "%s/run.json", dir);
    char saved[8192];
    snprintf(saved, sizeof(saved), "%s/run.json.saved", dir);
    REQUIRE(rename(path, saved) == 0);
    check_params_from(&h, &p);
    r = check_run(&h, &p);
    CHECK_INT(h.w[1].n, 1); /* cut before the damaged grant */
    CHECK_INT(h.w[1].complete, 0);
    CHECK_INT(geti(r, "checks.mutex.violations"), 0);
    CHECK(has_warning(r, "reading them again failed"));
    CHECK_INT(geti(r, "evidence.logs.damaged"), 1);
    CHECK(has_gap(r, "worker 1: event log damaged at record 1"));
    CHECK_STR(gets_(r, "verdict_checks"), "unknown");
    struct strbuf one = STRBUF_INIT;
    json_write(&one, r, -1);
    json_free(r);
    history_free(&h);
    /* the same on 2 and 3 threads (pass.h pass_run_jobs, forced on this
     * small history): the merging thread cuts while helpers read ahead, the same result */
    for (int jobs = 2; jobs <= 3; jobs++) {
        REQUIRE(rename(saved, path) == 0);
        REQUIRE(history_load_rundir(dir, &h, &err) == 0);
        REQUIRE(rename(path, saved) == 0);
        check_params_from(&h, &p);
        p.jobs = jobs;
        p.par_min_events = 0;
        r = check_run(&h, &p);
        CHECK_INT(h.w[1].n, 1);
        struct strbuf par = STRBUF_INIT;
        json_write(&par, r, -1);
        CHECKF(strcmp(one.buf, par.buf) == 0, "%d threads: %s\n1 thread: %s", jobs, par.buf,
               one.buf);
        sb_free(&par);
        json_free(r);
        history_free(&h);
    }
    sb_free(&one);
    REQUIRE(rename(saved, path) == 0);

    /* the same directory loaded for export is checked before export */
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    char out[8192];
    snprintf(out, sizeof(out), "%s/export.jsonl", tmp);
    REQUIRE(export_to(&h, out) == 0);
    CHECK_INT(h.w[1].n, 1);
    history_free(&h);
}

/* A closed log that shrinks after the load (the pass reads it with pread):
 * the records past its new end read as zeros, a bad record, and the
 * history is loaded again with the log as it is now, damaged. (This log
 * fits one page, where the mapping reads zeros past the end too; past the
 * last page of a longer one, reading the mapping would be SIGBUS.) */
/* Contract: a new run directory (its path in dir) whose worker 0 holds
 * r1 at 1-300 ms and worker 1 as write_worker's arguments say, both logs
 * closed; then damage(dir) when given; loaded into *h. 0 or -1. */
static int two_workers(char *dir, size_t n, const char *stem, int64_t inv, int64_t ok,
                       int64_t vu, int64_t enter, int64_t exit_, int (*damage)(const char *),
                       struct history *h)
{
    static int calls;
    snprintf(dir, n, "%s/%s-%d", tmp, stem, calls++);
    struct ls_err err = {0, ""};
    if (make_rundir(dir, "1000000000") != 0 || write_worker(dir, 0, 1, 0, 1, 301, 2, 300, 1) != 0 ||
        write_worker(dir, 1, 1, inv, ok, vu, enter, exit_, 1) != 0 || (damage && damage(dir) != 0))
        return -1;
    return history_load_rundir(dir, h, &err);
}

/* Contract: flip a byte of the token of worker 1's record 1. 0 or -1. */
static int flip_token(const char *dir)
{
    char path[8192];
    snprintf(path, sizeof(path), "%s/events/worker-001.bin", dir);
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return -1;
    unsigned char x = 0;
    off_t at = EVLOG_HEADER_SIZE + 1 * EVLOG_REC_SIZE + offsetof(struct ev_rec, token);
    int rc = pread(fd, &x, 1, at) == 1 ? 0 : -1;
    x ^= 0x55;
    if (rc == 0 && pwrite(fd, &x, 1, at) != 1)
        rc = -1;
    close(fd);
    return rc;
}

/* jobs: the pass's threads (1: one; more: the helpers read the logs ahead) */
static void rundir_shrunk(int jobs)
{
    char dir[4096], path[8192];
    struct history h;
    REQUIRE(two_workers(dir, sizeof(dir), "run-shrunk", 40, 52, 352, 53, 60, NULL, &h) == 0);
    CHECK(h.w[1].file.has_fd && h.w[1].unverified);
    size_t full = h.w[1].n;
    snprintf(path, sizeof(path), "%s/events/worker-001.bin", dir);
    REQUIRE(truncate(path, EVLOG_HEADER_SIZE + EVLOG_REC_SIZE) == 0); /* its first record only */
    struct check_params p;
    check_params_from(&h, &p);
    p.jobs = jobs;
    p.par_min_events = 0;
    struct json *r = check_run(&h, &p);
    REQUIRE(r != NULL);
    CHECKF(full > 1 && h.w[1].n == 1, "jobs %d: worker 1: %zu records of %zu", jobs, h.w[1].n,
           full);
    CHECK_INT(geti(r, "evidence.logs.damaged"), 1);
    CHECK_INT(geti(r, "checks.mutex.violations"), 0);
    json_free(r);
    history_free(&h);
}

/* A record whose checksum fails but whose time, number and type are
 * right (a byte of its token flipped): only the checksum finds it, and
 * with helpers it is theirs to find (the merging thread checks only the
 * time order of the chunks they read). */
static void damaged_token(int jobs, int wait)
{
    char dir[4096];
    struct history h;
    REQUIRE(two_workers(dir, sizeof(dir), "run-dmg", 400, 401, 800, 402, 500, flip_token, &h) == 0);
    CHECK(h.w[1].file.has_fd && h.w[1].unverified);
    struct check_params p;
    check_params_from(&h, &p);
    p.jobs = jobs;
    p.par_min_events = 0;
    pass_test_ring_wait(wait);
    struct json *r = check_run(&h, &p);
    pass_test_ring_wait(0);
    REQUIRE(r != NULL);
    CHECKF(h.w[1].n == 1, "jobs %d wait %d: worker 1 has %zu records, not 1 (cut at the bad one)",
           jobs, wait, h.w[1].n);
    CHECK_INT(geti(r, "evidence.logs.damaged"), 1);
    json_free(r);
    history_free(&h);
}

static void test_damaged_ahead(void)
{
    damaged_token(1, 0);
    damaged_token(2, 0);
    damaged_token(2, 1);
    damaged_token(3, 1);
}

/* One worker's 6,000 records come before any other's: the merging thread
 * takes chunk after chunk of that one log while the other 19 give nothing
 * back. A helper asleep until more chunks are given back than that ring
 * can give must still be woken when the merging thread waits for it (a
 * review found that it was not, with every chunk taken from the helpers;
 * whether the helper is asleep then is a matter of timing, and this test
 * did not see the hang before the fix; alarm() makes one a failure). The
 * pass must run through with every chunk read and checked by the helper:
 * no reload, the right counts. */
static void test_ring_wait_skewed(void)
{
    char dir[4096];
    enum { N0 = 6000, NW = 20 };
    REQUIRE(rundir_workers(dir, sizeof(dir), "run-skewed", 10, NW) == 0);
    static int64_t t[N0];
    static int ty[N0];
    for (int i = 0; i < N0; i++) {
        t[i] = 1 + i;
        ty[i] = i % 2 ? EV_ACQUIRE_BUSY : EV_ACQUIRE_INVOKE;
    }
    REQUIRE(write_epoch_log(dir, 0, 0, t, ty, N0, 1) == 0);
    for (int w = 1; w < NW; w++) {
        int64_t tw[2] = {8000 + w, 8001 + w};
        REQUIRE(write_epoch_log(dir, w, 0, tw, ty, 2, 1) == 0);
    }
    struct history h;
    struct ls_err err = {0, ""};
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    REQUIRE(h.nworkers == NW);
    for (int w = 0; w < NW; w++)
        CHECKF(h.w[w].file.has_fd && h.w[w].unverified, "worker %d: has_fd %d unverified %d", w,
               h.w[w].file.has_fd, h.w[w].unverified);
    struct check_params p;
    check_params_from(&h, &p);
    p.jobs = 2;
    p.par_min_events = 0;
    pass_test_ring_wait(1);
    alarm(60);
    struct json *r = check_run(&h, &p);
    alarm(0);
    pass_test_ring_wait(0);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "counts.attempts"), N0 / 2 + NW - 1);
    CHECK_INT(geti(r, "evidence.logs.damaged"), 0);
    CHECK(h.memo == NULL || !h.memo->verify_all); /* the pass above ran through: no reload */
    json_free(r);
    history_free(&h);
}

/* pread made to fail (EIO) in one log (its device and inode) for the
 * bytes [from, to), while its mapping still reads them: what a second pass
 * over a history whose log became unreadable there meets. This test
 * program's pread stands in for the C library's (the pass's
 * hist_read_recs calls it); armed in one test only. */
static struct {
    int armed;
    dev_t dev;
    ino_t ino;
    off_t from, to;
    int hits;
} pread_fail;

static ssize_t pread_shim(int fd, void *buf, size_t n, off_t off)
{
    if (pread_fail.armed && off + (off_t)n > pread_fail.from && off < pread_fail.to) {
        struct stat st;
        if (fstat(fd, &st) == 0 && st.st_dev == pread_fail.dev && st.st_ino == pread_fail.ino) {
            pread_fail.hits++;
            if (off >= pread_fail.from) {
                errno = EIO;
                return -1;
            }
            n = (size_t)(pread_fail.from - off);
        }
    }
    return syscall(SYS_pread64, fd, buf, n, off);
}

/* (with _FILE_OFFSET_BITS=64 the headers name it pread64: so does this) */
ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    return pread_shim(fd, buf, n, off);
}

/* A second pass over a verified history whose log reads short with pread
 * at records 1,100 to 1,199 (in a chunk in the middle of a run: the pass
 * reads the rest of that run through the mapping, passing over its chunks
 * still to come): the same result on 1 thread and on 2 and 3, with the
 * consumers fed by a helper (all of them, and the merging thread making
 * the calls). A review found the helper's cursor reading the short
 * chunk's slot after the merging thread had given it back, when a helper
 * had refilled it with a chunk that read whole: records of the wrong
 * chunk, a different result from run to run. */
static void test_second_pass_short_read(void)
{
    char dir[4096], path[8192];
    REQUIRE(rundir_workers(dir, sizeof(dir), "run-shortread", 100, 2) == 0);
    enum { N = 6000 };
    static int64_t t[N];
    static int ty[N];
    for (int w = 0; w < 2; w++) { /* attempts refused after varied waits */
        for (int i = 0; i < N; i++) {
            t[i] = (i ? t[i - 1] : w) + 1 + (i * 7 + w) % 13;
            ty[i] = i % 2 ? EV_ACQUIRE_BUSY : EV_ACQUIRE_INVOKE;
        }
        REQUIRE(write_epoch_log(dir, w, 0, t, ty, N, 1) == 0);
    }
    struct history h;
    struct ls_err err = {0, ""};
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    struct check_params p;
    check_params_from(&h, &p);
    p.jobs = 1;
    struct json *r = check_run(&h, &p); /* checks every record: the logs are verified */
    json_free(r);
    REQUIRE(h.w[0].file.has_fd && !h.w[0].unverified);
    struct stat st;
    evlog_path(path, sizeof(path), dir, 0, 0);
    REQUIRE(stat(path, &st) == 0);
    pread_fail.dev = st.st_dev;
    pread_fail.ino = st.st_ino;
    pread_fail.from = EVLOG_HEADER_SIZE + 1100 * EVLOG_REC_SIZE;
    pread_fail.to = EVLOG_HEADER_SIZE + 1200 * EVLOG_REC_SIZE;
    pread_fail.hits = 0;
    pread_fail.armed = 1;
    struct strbuf one = STRBUF_INIT;
    r = check_run(&h, &p);
    json_write(&one, r, -1);
    json_free(r);
    CHECK(pread_fail.hits > 0);
    /* wait: every chunk read by the helpers (pass_test_ring_wait), so the
     * short chunk's slot is refilled before the merging thread passes its
     * last chunk over, always (the review's case, which the free-running
     * pass meets by timing only) */
    const char *off[] = {"all", "main:all", ""};
    for (int wait = 0; wait <= 1; wait++)
        for (int k = 0; k < 3; k++)
            for (int jobs = 2; jobs <= 3; jobs++) {
                setenv("LS_CHECK_OFFLOAD", off[k], 1);
                check_params_from(&h, &p);
                p.jobs = jobs;
                p.par_min_events = 0;
                pread_fail.hits = 0;
                pass_test_ring_wait(wait);
                alarm(60);
                r = check_run(&h, &p);
                alarm(0);
                pass_test_ring_wait(0);
                struct strbuf par = STRBUF_INIT;
                json_write(&par, r, -1);
                CHECKF(strcmp(one.buf, par.buf) == 0 && pread_fail.hits > 0,
                       "LS_CHECK_OFFLOAD=%s, %d threads, wait %d (%d short reads): %.300s\n"
                       "1 thread: %.300s",
                       off[k], jobs, wait, pread_fail.hits, par.buf, one.buf);
                sb_free(&par);
                json_free(r);
            }
    unsetenv("LS_CHECK_OFFLOAD");
    pread_fail.armed = 0;
    sb_free(&one);
    history_free(&h);
}

static void test_rundir_shrunk(void)
{
    rundir_shrunk(1);
    rundir_shrunk(2);
    rundir_shrunk(3);
    pass_test_ring_wait(1); /* the helpers read and check every chunk */
    rundir_shrunk(2);
    rundir_shrunk(3);
    pass_test_ring_wait(0);
}

/* Which consumers helper 0 is handed (passpar.c offload_pick): the
 * merging thread keeps units up to a third of the consumers' cost, the
 * heaviest that fits first; a unit goes whole; a consumer of unknown cost
 * (0) stays with the merging thread and keeps its unit there;
 * LS_CHECK_OFFLOAD names them instead. */
static void test_offload_pick(void)
{
    static const struct pass_ops a = {"a", 0, NULL, NULL, NULL, 100},
                                 b = {"b", 0, NULL, NULL, NULL, 60},
                                 c = {"c", 0, NULL, NULL, NULL, 90},
                                 d = {"d", 0, NULL, NULL, NULL, 55},
                                 e = {"e", 0, NULL, NULL, NULL, 40},
                                 f = {"f", 0, NULL, NULL, NULL, 40},
                                 g = {"g", 0, NULL, NULL, NULL, 25},
                                 u = {"u", 0, NULL, NULL, NULL, 0};
    /* a and b fused (160); of 410 the merging thread may keep 135: c (90)
     * first, then e (40); d (55), f and g no longer fit (the lightest
     * first would have kept g, e and f) */
    struct pass_consumer cs[8] = {{&a, NULL, 1}, {&c, NULL, 0}, {&d, NULL, 0}, {&e, NULL, 0},
                                  {&f, NULL, 0}, {&g, NULL, 0}, {&b, NULL, 1}, {&u, NULL, 0}};
    int off[8];
    unsetenv("LS_CHECK_OFFLOAD");
    CHECK_INT(pass_test_offload_pick(cs, 8, off), 5);
    static const int want[8] = {1, 0, 1, 0, 1, 1, 1, 0};
    for (int k = 0; k < 8; k++)
        CHECKF(off[k] == want[k], "%s: off %d, want %d", cs[k].ops->name, off[k], want[k]);
    /* u (unknown cost) fused with a and b: the unit stays; of the other
     * 250 the merging thread may keep 82: d (55) and then g (25) */
    cs[7].unit = 1;
    CHECK_INT(pass_test_offload_pick(cs, 8, off), 3);
    static const int want2[8] = {0, 1, 0, 1, 1, 0, 0, 0};
    for (int k = 0; k < 8; k++)
        CHECKF(off[k] == want2[k], "%s: off %d, want %d", cs[k].ops->name, off[k], want2[k]);
    /* named: exactly those, a unit whole */
    cs[7].unit = 0;
    setenv("LS_CHECK_OFFLOAD", "b,g", 1);
    CHECK_INT(pass_test_offload_pick(cs, 8, off), 3);
    CHECK(off[0] && off[6] && off[5] && !off[1] && !off[7]);
    unsetenv("LS_CHECK_OFFLOAD");
}

int main(void)
{
    tmp = t_tmpdir();
    RUN(test_rundir_deferred);
    RUN(test_rundir_cut_in_place);
    RUN(test_rundir_cut_first);
    RUN(test_rundir_shrunk);
    RUN(test_damaged_ahead);
    RUN(test_ring_wait_skewed);
    RUN(test_second_pass_short_read);
    RUN(test_offload_pick);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
