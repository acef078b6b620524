/*
 * test_json.c: util/json's arena (json_arena_begin/end) against the heap:
 * the same documents, built by the same random calls, render the same
 * bytes either way; trees that mix arena and heap nodes free without a
 * leak or a double free (the sanitizer build runs this too); a nested
 * begin leaves its nodes to the outer arena; past the arena's bound new
 * nodes come from the heap again.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"
#include "util/json.h"
#include "util/rng.h"

/* Contract: a random value of depth at most d, built from r by every kind
 * of call the model has (objects with keys set twice, strings with NULs
 * and escapes, integers, doubles, clones, parsed text). */
static struct json *random_value(struct rng *r, int d)
{
    int k = (int)rng_below(r, d > 0 ? 9 : 6);
    switch (k) {
    case 0: return json_new_null();
    case 1: return json_new_bool((int)rng_below(r, 2));
    case 2: return json_new_int(rng_range(r, -1000000000000LL, 1000000000000LL));
    case 3: return json_new_num(rng_double(r) * 1e6 - 5e5);
    case 4: {
        char s[40];
        size_t n = (size_t)rng_below(r, sizeof(s));
        for (size_t i = 0; i < n; i++)
            s[i] = (char)rng_below(r, 128); /* NULs, quotes, control bytes */
        return json_new_strn(s, n);
    }
    case 5: {
        static const char *const texts[] = {"{\"a\":[1,2.5,\"x\\u0000y\"],\"b\":{}}",
                                            "[true,false,null,-0,1e3]", "\"plain\""};
        struct json *v = NULL;
        char err[128];
        const char *t = texts[rng_below(r, 3)];
        if (json_parse(t, strlen(t), &v, err, sizeof(err)) != 0)
            return json_new_null();
        return v;
    }
    case 6: {
        struct json *a = json_new_arr();
        int n = (int)rng_below(r, 12);
        for (int i = 0; i < n; i++)
            json_arr_push(a, random_value(r, d - 1));
        return a;
    }
    case 7: {
        struct json *o = json_new_obj();
        int n = (int)rng_below(r, 12);
        for (int i = 0; i < n; i++) {
            char key[8];
            snprintf(key, sizeof(key), "k%d", (int)rng_below(r, 8)); /* some set again */
            json_obj_set(o, key, random_value(r, d - 1));
        }
        return o;
    }
    default: {
        struct json *v = random_value(r, d - 1);
        struct json *c = json_clone(v);
        json_free(v);
        return c;
    }
    }
}

static char *render(const struct json *v)
{
    struct strbuf sb = STRBUF_INIT;
    json_write(&sb, v, 2);
    return sb_steal(&sb);
}

/* The same calls give the same document in an arena as on the heap. */
static void test_arena_same_documents(void)
{
    int in_arena = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        struct rng r;
        rng_seed(&r, seed, 0);
        struct json *heap = random_value(&r, 5);
        char *want = render(heap);
        json_free(heap);

        rng_seed(&r, seed, 0);
        struct json_arena *a = json_arena_begin();
        REQUIRE(a != NULL);
        struct json *in = random_value(&r, 5);
        in_arena += in->arena; /* not a parsed value: those are the heap's */
        char *got = render(in);
        json_free(in);
        json_arena_end(a);
        CHECKF(strcmp(want, got) == 0, "seed %llu", (unsigned long long)seed);
        free(want);
        free(got);
    }
    CHECKF(in_arena > 250, "%d of 300 made in the arena", in_arena);
}

/* Heap nodes under arena ones and arena ones under heap ones: each is
 * freed once, by json_free or the arena (a leak or a double free fails
 * the sanitizer build). */
static void test_arena_mixed_trees(void)
{
    struct rng r;
    rng_seed(&r, 77, 1);
    struct json *early = json_new_obj(); /* made before the arena: the heap */
    json_obj_set_str(early, "made", "before");
    json_arr_push(json_obj_set(early, "list", json_new_arr()), json_new_int(1));

    struct json_arena *a = json_arena_begin();
    REQUIRE(a != NULL);
    struct json *root = json_new_obj();
    json_obj_set(root, "early", early);             /* a heap subtree in the arena's */
    json_arr_push(json_obj_get(early, "list"), json_new_str("late")); /* an arena one in it */
    json_obj_set(root, "replaced", json_new_str("first"));
    json_obj_set(root, "replaced", random_value(&r, 4)); /* the first one let go */
    CHECK(early->arena == 0);
    CHECK(json_arr_get(json_obj_get(early, "list"), 1)->arena == 1);
    char *text = render(root);
    CHECK(strstr(text, "\"late\"") != NULL);
    free(text);
    json_free(root);
    json_arena_end(a);
    json_arena_end(NULL); /* nothing */
}

/* Another thread (the pass's helpers feed checkers that add incidents to
 * arrays made in the arena) adds to arena nodes: with room left and past
 * it, to an array and an object; its own nodes are the heap's. */
struct adder {
    struct json *arr, *obj;
    int made_in_arena; /* a node it made came from an arena: wrong */
};

static void *add_from_thread(void *arg)
{
    struct adder *ad = arg;
    for (int i = 0; i < 40; i++) {
        struct json *v = json_new_obj();
        ad->made_in_arena |= v->arena;
        json_obj_set_int(v, "i", i);
        json_arr_push(ad->arr, v);
        char key[16];
        snprintf(key, sizeof(key), "t%d", i);
        json_obj_set_str(ad->obj, key, "from a thread");
    }
    return NULL;
}

static void test_arena_other_thread(void)
{
    struct json_arena *a = json_arena_begin();
    REQUIRE(a != NULL);
    struct adder ad = {json_new_arr(), json_new_obj(), 0};
    json_arr_push(ad.arr, json_new_str("first")); /* room for 3 more in the arena's array */
    json_obj_set_str(ad.obj, "first", "in the arena");
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, add_from_thread, &ad) == 0);
    pthread_join(th, NULL);
    CHECK(!ad.made_in_arena);
    CHECK(ad.arr->arena && ad.arr->heap_arrays);
    CHECK_INT(ad.arr->n, 41);
    CHECK_INT(ad.obj->n, 41);
    json_arr_push(ad.arr, json_new_str("last")); /* this thread again: the heap arrays grow */
    json_obj_set_str(ad.obj, "last", "again");
    CHECK_STR(json_arr_get(ad.arr, 0)->s, "first");
    CHECK_INT(json_get_int(json_arr_get(ad.arr, 40), "i", -1), 39);
    CHECK_STR(json_get_str(ad.obj, "first", ""), "in the arena");
    CHECK_STR(json_get_str(ad.obj, "t39", ""), "from a thread");
    CHECK_STR(json_get_str(ad.obj, "last", ""), "again");
    json_free(ad.arr);
    json_free(ad.obj);
    json_arena_end(a);
}

/* What json_parse makes is the heap's, in an arena too: parsed and let go
 * a line at a time, it takes nothing from the arena. */
static void test_arena_parse_on_heap(void)
{
    struct json_arena *a = json_arena_begin();
    REQUIRE(a != NULL);
    struct json *keep = json_new_arr();
    for (int i = 0; i < 1000; i++) {
        const char *line = "{\"t\":1,\"w\":2,\"type\":\"enter\",\"res\":[\"r0\",{\"x\":null}]}";
        struct json *v = NULL;
        char err[128];
        REQUIRE(json_parse(line, strlen(line), &v, err, sizeof(err)) == 0);
        CHECK(v->arena == 0 && json_obj_get(v, "res")->arena == 0);
        if (i % 100 == 0)
            json_arr_push(keep, v); /* kept: freed with the arena node it joins */
        else
            json_free(v);
    }
    CHECK(keep->arena == 1);
    struct json *made = json_new_str("made here"); /* the arena is still this thread's */
    CHECK(made->arena == 1);
    json_arr_push(keep, made);
    json_free(keep);
    json_arena_end(a);
}

/* A begin inside an arena returns NULL: the inner nodes are the outer's. */
static void test_arena_nested(void)
{
    struct json_arena *outer = json_arena_begin();
    REQUIRE(outer != NULL);
    struct json_arena *inner = json_arena_begin();
    CHECK(inner == NULL);
    struct json *v = json_new_arr();
    json_arr_push(v, json_new_str("x"));
    json_arena_end(inner); /* no-op: v stays valid */
    CHECK(v->arena == 1);
    CHECK_STR(json_arr_get(v, 0)->s, "x");
    json_free(v);
    json_arena_end(outer);
    struct json *h = json_new_null(); /* no arena now */
    CHECK(h->arena == 0);
    json_free(h);
}

/* Past the bound, new nodes come from the heap; nodes made in the arena
 * still grow there. */
static void test_arena_bound(void)
{
    struct json_arena *a = json_arena_begin();
    REQUIRE(a != NULL);
    struct json *big = json_new_arr();
    struct json *last = NULL;
    size_t n = 0;
    while (n < 2000000) { /* 64 MiB of 64-byte nodes and their array: ~700,000 */
        last = json_arr_push(big, json_new_int((int64_t)n));
        n++;
        if (!last->arena)
            break;
    }
    CHECKF(last && !last->arena, "%zu nodes, all in the arena", n);
    CHECK(big->arena == 1);
    json_arr_push(big, json_new_str("after the bound"));
    CHECK(json_arr_get(big, big->n - 1)->arena == 0);
    CHECK_INT(json_arr_get(big, 0)->i, 0);
    CHECK_INT(json_arr_get(big, n - 1)->i, (int64_t)(n - 1));
    json_free(big);
    json_arena_end(a);
}

int main(void)
{
    RUN(test_arena_same_documents);
    RUN(test_arena_mixed_trees);
    RUN(test_arena_other_thread);
    RUN(test_arena_parse_on_heap);
    RUN(test_arena_nested);
    RUN(test_arena_bound);
    return t_finish();
}
