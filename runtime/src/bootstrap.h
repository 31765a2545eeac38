/* Multi-process collectives over the framework's all-gather (tpg_allgather_fn).
 *
 * Every collective call sends one fixed-size tpg_wire per rank, whatever the call, so that ranks that
 * call different things (or the same thing with different arguments) see a clean TPG_ERR_BOOTSTRAP
 * naming the rank instead of a size mismatch or a hang inside the framework. A wire carries the
 * sender's status so far: a call that fails on one rank fails on every rank (the failing rank keeps
 * its own status and message; the others get its status and a message naming it). Collective calls
 * therefore exchange even after a local failure, and end with tpg__agree when local work follows the
 * exchange (opening peers' handles, building graphs) so that no rank believes in an op a peer lacks.
 */
#ifndef TPG_BOOTSTRAP_H
#define TPG_BOOTSTRAP_H

#include <stdint.h>

#include "ipc.h"
#include "nccl.h"
#include "peers.h"
#include "tpgemm.h"

#define TPG_WIRE_MAGIC 0x74706707u /* "tpg" + wire version 7 (the low byte; 7: tpg_op_set_copy_chunks over NCCL) */
/* Every version's record has this size (from version 6 on), so that ranks of different builds still exchange
 * records of one size, and the version check below can say what is wrong (else the framework's all-gather would
 * see different sizes, and fail in its own way or hang). */
#define TPG_WIRE_BYTES 1024

typedef enum tpg_wire_call {
    TPG_CALL_CTX_CREATE = 1, /* tpg_ctx_create_rank: tp, rank, device, PCI bus id, timeout, share_devices */
    TPG_CALL_CTX_READY,      /* tpg_ctx_create_rank: peers mapped and checked */
    TPG_CALL_OP_CREATE,      /* tpg_op_create: problem + symmetric buffer handle */
    TPG_CALL_OP_READY,       /* tpg_op_create: peers' buffers opened */
    TPG_CALL_SET_TENSORS,    /* tpg_op_set_tensors: shard handles */
    TPG_CALL_TENSORS_READY,  /* tpg_op_set_tensors: peers' shards opened, graphs built / updated */
    TPG_CALL_OP_DESTROY,     /* tpg_op_destroy: every rank has stopped using every peer's memory */
    TPG_CALL_SET_RS_RING,    /* tpg_op_set_rs_ring: the choice (in `config`), which every rank must make alike */
    TPG_CALL_RS_RING_READY,  /* tpg_op_set_rs_ring: every rank's graphs rebuilt for the new walk */
    TPG_CALL_NCCL_JOIN,      /* tpg_ctx_create_rank over NCCL: every rank ready to enter ncclCommInitRank */
    TPG_CALL_NCCL_CONNECT,   /* tpg_ctx_create_rank over NCCL: every rank ready for its first send / receive */
    TPG_CALL_SET_COPY_CHUNKS,  /* tpg_op_set_copy_chunks over NCCL: the cut (in `config`), alike on every rank */
    TPG_CALL_COPY_CHUNKS_READY /* tpg_op_set_copy_chunks over NCCL: every rank's graphs rebuilt for the new cut */
} tpg_wire_call;

typedef union tpg_wire {
    struct {
        uint32_t magic;
        int32_t call;               /* tpg_wire_call */
        uint64_t serial;            /* the sender's count of collective calls on this context */
        int32_t tp, rank;
        int32_t status;             /* the sender's tpg_status so far */
        int32_t device;             /* CTX_CREATE: the sender's CUDA ordinal in its own process */
        char pci_bus_id[32];        /* CTX_CREATE: the sender's device, "0000:3b:00.0" */
        uint64_t timeout_ns;        /* CTX_CREATE */
        int32_t share_devices;      /* CTX_CREATE: tpg_rank_config.share_devices */
        int32_t transport;          /* CTX_CREATE: tpg_rank_config.transport */
        unsigned char nccl_id[TPG_NCCL_ID_BYTES]; /* CTX_CREATE, TPG_TRANSPORT_NCCL: rank 0's ncclUniqueId */
        int64_t config, m, n, k, l; /* OP_CREATE; SET_RS_RING / SET_COPY_CHUNKS: config = the choice */
        tpg_ipc_ref ref[TPG_PEER_KIND_COUNT]; /* OP_CREATE: BUFFER; SET_TENSORS: the shard peers copy from */
    };
    unsigned char bytes[TPG_WIRE_BYTES]; /* the fixed size; unused bytes are zero */
} tpg_wire;
_Static_assert(sizeof(tpg_wire) == TPG_WIRE_BYTES, "the wire's fields outgrew TPG_WIRE_BYTES");

/* "tpg_ctx_create_rank", "tpg_op_create", ... for messages. */
const char *tpg_wire_call_name(tpg_wire_call call);
/* Zeroes w and fills magic, call, serial (the next one), tp, rank and status from ctx. */
void tpg_wire_init(tpg_wire *w, const tpg_ctx *ctx, tpg_wire_call call, tpg_status status);
/* Whether the tp records of one exchange pair up with the one this rank sent: magic, tp, rank order, call and
 * serial, a status this build knows (TPG_ERR_BOOTSTRAP naming the rank). Pure: no CUDA, no callback. */
tpg_status tpg_wire_check_step(tpg_ctx *ctx, const tpg_wire *send, const tpg_wire *recv);
/* tpg_wire_check_step, then statuses: the local status if it failed (its message is already set), else the first
 * failed peer's. Pure. */
tpg_status tpg_wire_check(tpg_ctx *ctx, const tpg_wire *send, const tpg_wire *recv);
/* CTX_CREATE: the settings every rank must share (timeout_ns, share_devices, transport) agree with the local rank's;
 * TPG_ERR_BOOTSTRAP names the first rank that differs. Pure. */
tpg_status tpg_wire_check_settings(tpg_ctx *ctx, const tpg_wire *recv);
/* Sends *send (from tpg_wire_init), receives tp records into recv[TPG_MAX_TP], advances the serial,
 * checks them (tpg_wire_check). Where the callback fails or the records do not pair up (ranks in different calls),
 * the context's exchanges are broken for good: every later one fails at once, without the callback (a rank that
 * went on would pair its next call with a peer's leftover one, or wait for a peer that never comes), keeping the
 * local failure's message where the caller passes one. */
tpg_status tpg__exchange(tpg_ctx *ctx, const tpg_wire *send, tpg_wire *recv);
/* An exchange of statuses only: TPG_OK when every rank reports TPG_OK. */
tpg_status tpg__agree(tpg_ctx *ctx, tpg_wire_call call, tpg_status local);

#endif /* TPG_BOOTSTRAP_H */
