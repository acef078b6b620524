/*
 * rmodel.c: lookups in the result model shared by the text, Markdown, JUnit
 * and HTML renderers (see rmodel.h).
 */
#include "reports/rmodel.h"

#include <stdio.h>
#include <string.h>

#include "util/strbuf.h"

size_t rm_len(const struct json *v)
{
    return v && v->type == JSON_ARR ? v->n : 0;
}

long rm_story_of(const struct json *r, const char *cls)
{
    const struct json *vs = json_obj_get(r, "violations");
    for (size_t i = 0; i < rm_len(vs); i++)
        if (strcmp(json_get_str(vs->kids[i], "class", ""), cls) == 0 &&
            rm_len(json_obj_get(vs->kids[i], "story")))
            return (long)i;
    return -1;
}

int64_t rm_incident_of(const struct json *r, size_t i)
{
    const struct json *incs = json_obj_get(r, "incidents");
    for (size_t k = 0; k < rm_len(incs); k++) {
        const struct json *fv = json_obj_get(incs->kids[k], "first_violation");
        const struct json *listed = json_obj_get(incs->kids[k], "listed");
        int hit = fv && fv->type == JSON_NUM && fv->i == (int64_t)i;
        for (size_t j = 0; !hit && j < rm_len(listed); j++)
            hit = listed->kids[j]->type == JSON_NUM && listed->kids[j]->i == (int64_t)i;
        if (hit)
            return json_get_int(incs->kids[k], "id", (int64_t)k + 1);
    }
    return -1;
}

void rm_put_num(struct strbuf *sb, const struct json *v)
{
    if (v->is_int) {
        sb_printf(sb, "%lld", (long long)v->i);
        return;
    }
    char buf[64];
    snprintf(buf, sizeof(buf), "%.3f", v->d);
    char *e = buf + strlen(buf) - 1;
    while (e > buf && *e == '0')
        *e-- = '\0';
    if (*e == '.')
        *e = '\0';
    sb_puts(sb, buf);
}
