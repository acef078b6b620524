/*
 * strbuf.h: a growable byte buffer for building text (JSON, reports, Redis
 * arguments). Allocation failure aborts: lockstorm treats OOM while building
 * output as fatal, which keeps every caller free of NULL checks.
 */
#ifndef LS_STRBUF_H
#define LS_STRBUF_H

#include <stddef.h>

struct strbuf {
    char *buf;  /* NUL-terminated when len > 0 or after sb_cstr(); owned */
    size_t len;
    size_t cap;
};

#define STRBUF_INIT {NULL, 0, 0}

void sb_init(struct strbuf *sb);
void sb_free(struct strbuf *sb);
void sb_reset(struct strbuf *sb);               /* len = 0, keeps memory */
void sb_reserve(struct strbuf *sb, size_t extra);
void sb_append(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_putc(struct strbuf *sb, char c);
void sb_printf(struct strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append s as a JSON string literal, quotes included. */
void sb_json_str(struct strbuf *sb, const char *s, size_t n);
/* Returns the buffer as a C string (never NULL). Borrowed. */
const char *sb_cstr(struct strbuf *sb);
/* Hands the buffer to the caller (free() it); sb is reset to empty. */
char *sb_steal(struct strbuf *sb);
/* Write the whole buffer to path (created 0644, replaced atomically via a
 * temporary file in the same directory). Returns 0 or -errno. */
int sb_write_file(const struct strbuf *sb, const char *path);
/* Append the whole file at path to sb. Returns 0 or -errno (sb then holds
 * what was read before the error). */
int sb_read_file(struct strbuf *sb, const char *path);

#endif
