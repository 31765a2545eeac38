/* The peer table: every cross-device address an op uses, as a device pointer per (kind, rank).
 *
 * op.c publishes what a rank owns (its symmetric buffer, its A / B / C / D shard pointers) and
 * params.c / graph.c read any rank's entry; nothing above this table knows how a peer's address was
 * obtained.
 *
 * Single-process mode (the only one implemented): one host thread drives every device, peer access is
 * enabled between every pair (tpg_ctx_create), and UVA makes a device pointer valid on every device,
 * so publish stores the pointer and get returns it.
 *
 * Multi-process mode (one rank per process, to be added): the table also holds the local rank and a
 * bootstrap callback (an all-gather of bytes supplied by the framework). publish(kind) of the local
 * rank exports an IPC handle (cudaIpcGetMemHandle, or a VMM fabric / POSIX-fd handle) of the
 * allocation that contains ptr plus the offset of ptr in it (cuMemGetAddressRange); a collective
 * tpg_peers_exchange() all-gathers (handle, offset) of every rank and kind, opens the remote handles
 * (cudaIpcOpenMemHandle, cached per allocation) and fills the other ranks' entries; get is unchanged.
 * Closing the opened handles goes into tpg_peers_clear.
 */
#ifndef TPG_PEERS_H
#define TPG_PEERS_H

#include "gemm_params.h" /* TPG_MAX_TP */
#include "tpgemm.h"

typedef enum tpg_peer_kind {
    TPG_PEER_BUFFER = 0, /* the op's symmetric allocation (slots, flags, epoch, counters, status) */
    TPG_PEER_SHARD_A,    /* the rank's A shard (read by peers' COPY nodes when A rotates) */
    TPG_PEER_SHARD_B,    /* the rank's B shard (read by peers' COPY nodes when B rotates) */
    TPG_PEER_KIND_COUNT
} tpg_peer_kind;

typedef struct tpg_peers {
    int tp;
    void *ptr[TPG_PEER_KIND_COUNT][TPG_MAX_TP];
} tpg_peers;

void tpg_peers_init(tpg_peers *t, int tp);
/* Records that rank's object of `kind` lives at ptr (a device pointer on rank's device). */
void tpg_peers_publish(tpg_peers *t, int rank, tpg_peer_kind kind, void *ptr);
/* rank's object of `kind`, addressable from every device of this process; NULL if not published. */
void *tpg_peers_get(const tpg_peers *t, int rank, tpg_peer_kind kind);
/* Forgets every entry (multi-process mode: also closes opened handles). */
void tpg_peers_clear(tpg_peers *t);

#endif /* TPG_PEERS_H */
