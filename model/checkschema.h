/*
 * checkschema.h: what a checker's section of result.json (checks.<name>)
 * looks like to the renderers: its name, a title, and which of its fields
 * the text summary line and the JUnit message show, in what order, with
 * which labels and units, and under which conditions (fencing offered,
 * counters available, a member present). The text and JUnit renderers
 * render any checker from its description; a checker without one gets its
 * verdict and note only. Data and the reading of its conditions: the
 * checkers fill the sections, the renderers (reports/) read these tables;
 * nothing here computes a result.
 */
#ifndef LS_MODEL_CHECKSCHEMA_H
#define LS_MODEL_CHECKSCHEMA_H

/* How a field's value is shown in the text summary (JUnit always shows the
 * JSON scalar as is, "null" when missing). */
enum checkfield_fmt {
    CF_VAL,  /* integers exact, doubles trimmed to 3 decimals, "-" when missing or null */
    CF_MS,   /* as CF_VAL with "ms" appended to a number */
    CF_PCT,  /* a share in [0,1] as a percentage with one decimal ("12.5%"), else "-" */
    CF_STR,  /* a string as is, "?" when missing or not a string */
    CF_NONE  /* no value: the item is its literal text only */
};

/* Conditions on an item (all given bits must hold). "Offered" and
 * "available" are read as the description says (checkschema.offered,
 * .available, .available_else). */
enum checkfield_when {
    CF_ALWAYS = 0,
    CF_OFFERED = 1,       /* the section's offered member is not false */
    CF_NOT_OFFERED = 2,   /* the section's offered member is false */
    CF_AVAILABLE = 4,     /* its counters are available */
    CF_UNAVAILABLE = 8,   /* they are not */
    CF_IF_STRING = 16,    /* the item's own path holds a string */
    CF_IF_PRESENT = 32    /* the item's gate path (or its own path) is present */
};

/* One piece of a summary line: literal text `pre`, then the value at
 * `path` (dotted, relative to checks.<name>; NULL: none) in `fmt`, then
 * literal `post` (NULL: none). `gate` names the member CF_IF_PRESENT
 * looks for (NULL: path). */
struct checkfield {
    const char *pre;
    const char *path;
    enum checkfield_fmt fmt;
    const char *post;
    unsigned when;
    const char *gate;
};

/* Traits the renderers show beyond the fields. */
enum checkschema_flag {
    CS_OVERLAPS = 1,   /* its findings are the overlaps (violations, by_class, incidents):
                          the verdict's reason counts them and the violation stories
                          belong to its JUnit test case */
    CS_STARVATION = 2  /* its section carries starvation signs (fairness, longest stall,
                          stuck resources) the text summary flags with "???" */
};

/* A checker's section described. Field lists end with an entry whose pre
 * and path are both NULL. */
struct checkschema {
    const char *name;              /* checks.<name> */
    const char *title;             /* for people: "mutual exclusion" */
    unsigned flags;                /* CS_* */
    const char *offered;           /* member whose false means "not offered" (NULL: none) */
    const char *available;         /* bool member saying the counters are available */
    const char *available_else;    /* without that bool: available when this is present */
    const struct checkfield *text;  /* summary.txt line after the verdict (NULL: none) */
    const struct checkfield *junit; /* junit.xml message after "NAME: VERDICT" (NULL: none) */
};

/* The descriptions of today's checkers, in the order the checkers run. */
extern const struct checkschema checkschemas[];
extern const int ncheckschemas;

struct json;

/* Contract: does item f of description cs hold its conditions (enum
 * checkfield_when) for c, the checker's section of result.json? Both
 * renderers ask this, so text and JUnit agree on what a section shows. */
int checkfield_shown(const struct checkschema *cs, const struct checkfield *f,
                     const struct json *c);

/* Contract: the description of checker name, or NULL when it has none
 * (NULL name too). The pointer is to static data. */
const struct checkschema *checkschema_find(const char *name);

#endif
