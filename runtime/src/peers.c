/* The peer table (modes in peers.h): plain storage; op_rank.c fills peers' entries in multi-process mode. */
#include <string.h>

#include "peers.h"

void tpg_peers_init(tpg_peers *t, int tp) {
    memset(t, 0, sizeof *t);
    t->tp = tp;
}

void tpg_peers_publish(tpg_peers *t, int rank, tpg_peer_kind kind, void *ptr) {
    if (rank >= 0 && rank < t->tp && kind >= 0 && kind < TPG_PEER_KIND_COUNT) t->ptr[kind][rank] = ptr;
}

void *tpg_peers_get(const tpg_peers *t, int rank, tpg_peer_kind kind) {
    if (rank < 0 || rank >= t->tp || kind < 0 || kind >= TPG_PEER_KIND_COUNT) return NULL;
    return t->ptr[kind][rank];
}

void tpg_peers_clear(tpg_peers *t) { memset(t->ptr, 0, sizeof t->ptr); }
