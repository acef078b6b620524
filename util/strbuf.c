/*
 * strbuf.c: growable buffer. See strbuf.h.
 */
#include "util/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/xalloc.h"

void sb_init(struct strbuf *sb)
{
    sb->buf = NULL;
    sb->len = sb->cap = 0;
}

void sb_free(struct strbuf *sb)
{
    free(sb->buf);
    sb_init(sb);
}

void sb_reset(struct strbuf *sb)
{
    sb->len = 0;
    if (sb->buf)
        sb->buf[0] = '\0';
}

void sb_reserve(struct strbuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap)
        return;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    char *p = realloc(sb->buf, cap);
    if (!p) 
        xalloc_die();
    sb->buf = p;
    sb->cap = cap;
}

void sb_append(struct strbuf *sb, const char *s, size_t n)
{
    sb_reserve(sb, n);
    memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}

void sb_puts(struct strbuf *sb, const char *s)
{
    sb_append(sb, s, strlen(s));
}

void sb_putc(struct strbuf *sb, char c)
{
    sb_reserve(sb, 1);
    sb->buf[sb->len++] = c;
    sb->buf[sb->len] = '\0';
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[256];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    if ((size_t)n < sizeof(tmp)) {
        sb_append(sb, tmp, (size_t)n);
    } else {
        sb_reserve(sb, (size_t)n);
        vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap2);
        sb->len += (size_t)n;
    }
    va_end(ap2);
}

void sb_json_str(struct strbuf *sb, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    sb_reserve(sb, n + 2);
    sb_putc(sb, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': sb_append(sb, "\\\"", 2); break;
        case '\\': sb_append(sb, "\\\\", 2); break;
        case '\n': sb_append(sb, "\\n", 2); break;
        case '\r': sb_append(sb, "\\r", 2); break;
        case '\t': sb_append(sb, "\\t", 2); break;
        default:
            if (c < 0x20 || c == 0x7f) {
                char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                sb_append(sb, u, 6);
            } else {
                sb_putc(sb, (char)c);
            }
        }
    }
    sb_putc(sb, '"');
}

const char *sb_cstr(struct strbuf *sb)
{
    if (!sb->buf)
        sb_reserve(sb, 0);
    sb->buf[sb->len] = '\0';
    return sb->buf;
}

char *sb_steal(struct strbuf *sb)
{
    sb_cstr(sb);
    char *p = sb->buf;
    sb_init(sb);
    return p;
}

int sb_write_file(const struct strbuf *sb, const char *path)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return -errno;
    size_t off = 0;
    while (off < sb->len) {
        ssize_t w = write(fd, sb->buf + off, sb->len - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            unlink(tmp);
            return -e;
        }
        off += (size_t)w;
    }
    if (close(fd) < 0) {
        int e = errno;
        unlink(tmp);
        return -e;
    }
    if (rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return -e;
    }
    return 0;
}

int sb_read_file(struct strbuf *sb, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    for (;;) {
        sb_reserve(sb, 65536);
        ssize_t r = read(fd, sb->buf + sb->len, sb->cap - sb->len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : 0;
            close(fd);
            return -e;
        }
        sb->len += (size_t)r;
        sb->buf[sb->len] = '\0';
    }
}
