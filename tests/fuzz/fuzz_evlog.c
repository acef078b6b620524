/*
 * fuzz_evlog.c: libFuzzer target for the binary event-log reader
 * (evlog_read) and the offline appender the harness uses after killing a
 * worker (evlog_append_offline). The input is written to a temporary file
 * (one per process, rewritten each time). Properties: no crash or sanitizer
 * report; the records handed back are exactly the valid prefix (checksum,
 * sequence, type); after an offline append the log reads back with one
 * more record (unless the file had no header, which the appender refuses).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/evlog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[4200];

/* scripts/fuzz.sh points TMPDIR into the build directory */
static const char *tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t && strlen(t) < 4000 ? t : "/tmp";
}

static void write_input(const uint8_t *data, size_t size)
{
    if (!path[0])
        snprintf(path, sizeof(path), "%s/lsfuzz-evlog-%d.bin", tmpdir(), (int)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        abort();
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0)
            abort();
        off += (size_t)w;
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return -1;
    write_input(data, size);
    struct evlog_file f;
    struct ls_err err = {0};
    if (evlog_read(path, &f, &err) != 0)
        return 0;
    size_t n = f.n;
    for (size_t i = 0; i < f.n; i++) /* every record handed back is valid */
        if (f.recs[i].seq != (uint32_t)i || f.recs[i].crc != ev_rec_crc(&f.recs[i]) ||
            f.recs[i].type < 1 || f.recs[i].type >= EV__MAX)
            __builtin_trap();
    int blank = f.blank;
    evlog_unmap(&f);
    struct ev_rec cr;
    memset(&cr, 0, sizeof(cr));
    cr.t = 12345;
    cr.type = EV_CRASH;
    struct ls_err e2 = {0};
    int rc = evlog_append_offline(path, &cr, &e2);
    if (blank && rc == 0)
        __builtin_trap(); /* nothing to append to */
    if (rc == 0) {
        struct ls_err e3 = {0};
        if (evlog_read(path, &f, &e3) != 0 || f.n != n + 1 || f.recs[n].type != EV_CRASH)
            __builtin_trap();
        evlog_unmap(&f);
    }
    return 0;
}
