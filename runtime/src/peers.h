/* The peer table: every cross-device address an op uses, as a device pointer per (kind, rank).
 *
 * op.c publishes what a rank owns (its symmetric buffer, its A / B / C / D shard pointers) and
 * params.c / graph.c read any rank's entry; nothing above this table knows how a peer's address was
 * obtained.
 *
 * Single-process mode: one host thread drives every device, peer access is enabled between every pair
 * (tpg_ctx_create), and UVA makes a device pointer valid on every device, so publish stores the
 * pointer and get returns it.
 *
 * Multi-process mode (tpg_ctx_create_rank, op_rank.c): the local rank publishes its own pointers as
 * above; the other ranks' entries are addresses in THIS process of their allocations, opened with
 * cudaIpcOpenMemHandle from (handle, offset) pairs exchanged over the bootstrap (ipc.h: the per-context
 * cache, closed when the last op using an allocation is destroyed or replaces it). Only what peers really touch is
 * exchanged: every op's symmetric buffer at tpg_op_create, and at tpg_op_set_tensors the shard that
 * all-gather COPY nodes read (A or B, the rotating operand). get is the same in both modes.
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
/* Forgets every entry. Closes nothing: opened IPC mappings are released by tpg_ipc_release (ipc.c). */
void tpg_peers_clear(tpg_peers *t);

#endif /* TPG_PEERS_H */
