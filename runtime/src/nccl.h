/* NCCL, loaded at run time, for the transport beyond one NVLink domain (tpg_rank_config.transport =
 * TPG_TRANSPORT_NCCL; docs/ARCHITECTURE.md "NCCL transport").
 *
 * Why dlopen: NCCL is not a build dependency of tpgemm (CUDA, Jinja2, PyYAML and Ninja are), and a framework
 * process already has one loaded (PyTorch's). The library is TPG_NCCL_LIBRARY when set (a path or a soname),
 * else "libnccl.so.2". Only the stable C entry points of NCCL 2.x are used; their prototypes are declared
 * here, so no nccl.h is needed to build. The communicator is this context's own (ncclCommInitRank over the
 * id that rank 0 made, exchanged through the framework's all-gather), never the framework's: a transfer of
 * tpgemm's can then not interleave with the framework's collectives on one communicator. */
#ifndef TPG_NCCL_H
#define TPG_NCCL_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "tpgemm.h"

#define TPG_NCCL_ID_BYTES 128 /* sizeof(ncclUniqueId) */
#define TPG_NCCL_CONNECT_MIN_S 60.0 /* the least bound on the first transfers (tpg_nccl_connect_all) */
#define TPG_NCCL_ABORT_DRAIN_S 10.0 /* after an abort: NCCL's kernels poll its flag and return within this */

typedef struct tpg_nccl tpg_nccl;

/* Seconds on the monotonic clock, for the host's bounded waits on NCCL (its own calls have no timeout). */
double tpg_nccl_now_s(void);
/* Loads the library and its entry points; *out NULL on failure (TPG_ERR_NCCL names the library and the
 * missing symbol or dlerror()). */
tpg_status tpg_nccl_load(tpg_ctx *ctx, tpg_nccl **out);
/* ncclGetUniqueId (rank 0, before the exchange). */
tpg_status tpg_nccl_unique_id(tpg_ctx *ctx, tpg_nccl *n, unsigned char id[TPG_NCCL_ID_BYTES]);
/* ncclCommInitRank on the current device: collective, blocks until every rank has called it. */
tpg_status tpg_nccl_comm_init(tpg_ctx *ctx, tpg_nccl *n, int tp, int rank, const unsigned char id[TPG_NCCL_ID_BYTES]);
/* A byte to and from every other rank, outside any capture, right after the communicator's init: NCCL connects
 * point-to-point peers on their first transfer, which blocks on the peer; done here, inside tpg_ctx_create_rank's
 * collective step, no later capture (tpg_op_set_tensors) waits on a peer that may have failed before its own. */
/* `ready` (the context's agreement step) runs once, on every path, after this rank's buffer and stream exist and
 * before its first transfer: it returns a failure when any rank failed, so that no rank waits for a peer that will
 * never send. The transfers' wait is bounded (timeout_ns, the context's, but at least TPG_NCCL_CONNECT_MIN_S):
 * past it the communicator is aborted and the call fails with TPG_ERR_TIMEOUT. */
tpg_status tpg_nccl_connect_all(tpg_ctx *ctx, tpg_nccl *n, int tp, int rank, uint64_t timeout_ns,
                                tpg_status (*ready)(tpg_ctx *ctx, tpg_status local));
/* What this rank's settings would make ncclCommInitRank refuse at once while its peers wait in it for this rank
 * (NCCL_MIN_CTAS above the transport's CTA cap), or make NCCL's kernels take the GEMM's SMs: checked before the
 * agreement to join, on each setting as tpg_nccl_setting finds it. */
tpg_status tpg_nccl_env_check(tpg_ctx *ctx, const tpg_nccl *n);
/* An NCCL setting as NCCL will read it (nccl_env.c): the environment (where set, even empty), else the user's config
 * file (NCCL_CONF_FILE, else ~/.nccl.conf), else /etc/nccl.conf. Its text into value and where it came from into
 * where ("the environment", "NCCL's config file PATH"); NULL where none sets it. */
const char *tpg_nccl_setting(const char *name, char *value, size_t size, char *where, size_t where_size);
/* One point-to-point message: `bytes` at buf sent to (send != 0) or received from `peer`. */
typedef struct tpg_nccl_msg {
    void *buf;
    size_t bytes;
    int peer; /* < 0: skipped */
    int send;
} tpg_nccl_msg;
/* Messages as one NCCL group on stream s (captured when s is being captured). NCCL matches a pair of ranks'
 * messages in issue order, so both sides must list theirs in the same order. */
tpg_status tpg_nccl_exchange(tpg_ctx *ctx, tpg_nccl *n, const tpg_nccl_msg *msgs, int count, cudaStream_t s);
/* ncclCommAbort: stops every NCCL operation of the communicator that has not completed (NCCL's kernels poll the
 * abort flag), so that a stream stuck in a receive from a rank that never came completes. Returns at once (the
 * reclaim runs on a thread of its own: nccl.c says why). The communicator is gone afterwards: tpg_nccl_aborted
 * says so, and tpg_op_run and every later transfer's capture refuse with TPG_ERR_NCCL. */
tpg_status tpg_nccl_abort(tpg_ctx *ctx, tpg_nccl *n);
int tpg_nccl_aborted(const tpg_nccl *n);
/* "NCCL 2.21.5" into buf, for messages and the plan. */
void tpg_nccl_version(const tpg_nccl *n, char *buf, size_t size);
/* A call of an op over this communicator went into a caller's CUDA graph (tpg__graph_capture): that graph holds
 * NCCL's captured plans, and may outlive the context. */
void tpg_nccl_note_capture(tpg_nccl *n);
/* Destroys the communicator (if any) and unloads the library; NULL is a no-op. After a capture the destroy runs on a
 * detached thread: NCCL's waits until every graph holding one of its plans is destroyed, the caller's included. */
void tpg_nccl_release(tpg_nccl *n);

#endif /* TPG_NCCL_H */
