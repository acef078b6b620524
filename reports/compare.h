/*
 * compare.h: the text tables of `lockstorm compare`: the comparison
 * document (format "lockstorm-compare", built by harness/compare_model.h)
 * rendered, nothing computed.
 */
#ifndef LS_COMPARE_H
#define LS_COMPARE_H

#include "util/json.h"
#include "util/strbuf.h"

/* The comparison as text tables (see docs/compare.md for the columns). */
void render_compare_text(const struct json *cmp, struct strbuf *sb);

#endif
