/*
 * json.h: a small JSON document model with a strict parser and a writer.
 * It is the result model's representation (reports/), the JSONL history
 * format's (checkers/) and later the adapter protocol's. Objects keep
 * insertion order so rendered output is stable. Not a streaming parser:
 * one value per call (JSONL readers call it once per line).
 *
 * Ownership: every json_new_* returns a node the caller owns (json_free).
 * json_obj_set/json_arr_push take ownership of the value they are given.
 * Getters return borrowed pointers valid while the parent lives.
 *
 * Arena: between json_arena_begin and json_arena_end, the calling thread's
 * nodes (their strings, keys and child arrays too) are carved from blocks
 * freed together by json_arena_end; json_free of such a node frees only
 * its descendants made outside the arena. For a document built, written
 * and dropped at once (a check's result: ~20,000 nodes), this takes the
 * allocator's time out of building it and most of freeing it. Other
 * threads (the pass's helpers feed checkers that add to the result) make
 * their nodes on the heap, and an arena node one of them adds to keeps
 * its keys and children on the heap from then on. json_parse makes its
 * nodes on the heap, in an arena too (what is parsed during a check is
 * mostly read and let go). One thread at a time may be in an arena: a
 * node of one arena grown by a thread in another would take that one's
 * memory.
 */
#ifndef LS_JSON_H
#define LS_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ };

struct json {
    enum json_type type;
    unsigned char is_int; /* JSON_NUM: the value is an integer that fits int64 */
    unsigned char arena;  /* made in an arena (json_arena_begin): not freed one by one */
    unsigned char heap_arrays; /* in an arena, but its keys and kids are on the heap (it
                                  grew in a thread outside the arena) */
    int64_t i;         /* JSON_NUM integer value (also JSON_BOOL 0/1) */
    double d;          /* JSON_NUM as double */
    char *s;           /* JSON_STR: NUL-terminated, may contain NUL (see n) */
    size_t n;          /* string length, or number of children */
    size_t cap;
    char **keys;       /* JSON_OBJ: keys[i] names kids[i] */
    struct json **kids;
};

struct json *json_new_null(void);
struct json *json_new_bool(int b);
struct json *json_new_int(int64_t v);
struct json *json_new_num(double v);   /* non-finite values become null */
struct json *json_new_str(const char *s);
struct json *json_new_strn(const char *s, size_t n);
struct json *json_new_arr(void);
struct json *json_new_obj(void);
void json_free(struct json *v);
struct json *json_clone(const struct json *v);

/* Sets key (replacing an existing value). Takes ownership of val; returns val. */
struct json *json_obj_set(struct json *obj, const char *key, struct json *val);
struct json *json_obj_set_int(struct json *obj, const char *key, int64_t v);
struct json *json_obj_set_num(struct json *obj, const char *key, double v);
struct json *json_obj_set_str(struct json *obj, const char *key, const char *s);
struct json *json_obj_set_bool(struct json *obj, const char *key, int b);
struct json *json_arr_push(struct json *arr, struct json *val);
/* obj[key] when it is an object; otherwise a new empty object set there. Borrowed. */
struct json *json_obj_child(struct json *obj, const char *key);

/* Borrowed lookups; NULL when absent or of another type. */
struct json *json_obj_get(const struct json *obj, const char *key);
struct json *json_arr_get(const struct json *arr, size_t i);
/* Path lookup: "checks.mutex.violations", "violations.0.class",
 * "violations[0].class". NULL when any step is missing. */
struct json *json_path(const struct json *root, const char *path);

/* Typed getters with a default when absent/wrong type. */
int64_t json_get_int(const struct json *obj, const char *key, int64_t dflt);
double json_get_num(const struct json *obj, const char *key, double dflt);
const char *json_get_str(const struct json *obj, const char *key, const char *dflt);

/* Parse exactly one JSON value from s[0..n) (surrounding whitespace allowed).
 * On success *out is a new tree the caller frees. On failure returns
 * LS_EINPUT and writes "offset N: what" into errbuf. Nesting is limited to
 * 256 levels. */
int json_parse(const char *s, size_t n, struct json **out, char *errbuf, size_t errlen);

/* Contract: parse the whole file at path into *out (caller frees). Returns
 * 0; -1 when it cannot be read (errno kept, errbuf = strerror); -2 when it
 * is not one JSON value (errbuf = json_parse's "offset N: what"). */
int json_load_file(const char *path, struct json **out, char *errbuf, size_t errlen);

/* Serialize. indent < 0: compact, one line; otherwise pretty with that many
 * spaces per level. Integers print exactly; doubles with up to 17 digits. */
void json_write(struct strbuf *sb, const struct json *v, int indent);

/* Contract: from now until json_arena_end(a), this thread's new nodes are
 * made in the arena a (see above). Returns NULL, and changes nothing, when
 * the thread is in an arena already (its nodes stay in the outer one).
 * Past a bound (64 MiB) the arena's nodes are made on the heap again. */
struct json_arena *json_arena_begin(void);

/* Contract: free every block of a (NULL: nothing) and leave it. Every node
 * made in it must be gone already (json_free: their descendants from the
 * heap are freed there) or never be touched again. */
void json_arena_end(struct json_arena *a);

#endif
