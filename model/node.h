/*
 * node.h: where a lock node listens (host, port, the password to AUTH with).
 * The harness starts or is given the nodes, the proxy forwards to them, the
 * locks connect to them and the faults act on them: each reads this one
 * description.
 */
#ifndef LS_MODEL_NODE_H
#define LS_MODEL_NODE_H

#include "util/secret.h"

struct lock_node {
    char host[64];
    int port;
    char password[LS_PASSWORD_MAX]; /* AUTH after connecting; "" = none (and through the
                                     * proxy, which authenticates for its clients) */
};

#endif
