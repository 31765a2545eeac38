/* The context's internals, shared by ctx.c, ctx_rank.c, op.c, op_run.c, op_rank.c, params.c and graph.c. */
#ifndef TPG_CTX_INTERNAL_H
#define TPG_CTX_INTERNAL_H

#include <cuda_runtime_api.h>

#include "gemm_params.h" /* TPG_MAX_TP */
#include "ipc.h"
#include "tpgemm.h"

#define TPG_ERROR_BYTES 1024

struct tpg_ctx {
    int tp;
    int devices[TPG_MAX_TP];       /* CUDA ordinal of each rank */
    int sm_count[TPG_MAX_TP];      /* multiprocessors of each rank's device (persistent grid) */
    cudaStream_t streams[TPG_MAX_TP]; /* one non-blocking stream per rank */
    uint64_t timeout_ns;           /* bound on every device-side wait */
    int num_ops;                   /* live ops; tpg_ctx_destroy refuses while > 0 */
    struct tpg_op *ops;            /* the live ops, newest first (tpg_op.next_in_ctx): the NCCL wait looks for a
                                      timed-out launch of another op queued ahead of the one it waits for */
    /* Ranks this process drives: [0, tp) in single-process mode, [rank, rank + 1) in multi-process
     * mode. Per-device work (streams, buffers, params, graphs, launches) walks only these; the peer
     * table still holds every rank. */
    int local_begin, local_end;
    tpg_allgather_fn allgather;    /* multi-process bootstrap; NULL in single-process mode */
    void *allgather_user;
    uint64_t collective_serial;    /* collective calls so far; all ranks must agree (bootstrap.c) */
    int exchange_broken;           /* an exchange failed out of step: no later one is made (bootstrap.c) */
    tpg_ipc_cache ipc;             /* peer allocations opened through CUDA IPC (multi-process) */
    int transport;                 /* tpg_transport (multi-process; single-process contexts use peer access) */
    struct tpg_nccl *nccl;         /* TPG_TRANSPORT_NCCL: the loaded library and this context's communicator */
    char error[TPG_ERROR_BYTES];   /* tpg_last_error(ctx) */
};

static inline int tpg__is_local(const tpg_ctx *ctx, int rank) {
    return rank >= ctx->local_begin && rank < ctx->local_end;
}
static inline int tpg__multi_process(const tpg_ctx *ctx) { return ctx->allgather != NULL; }
static inline int tpg__over_nccl(const tpg_ctx *ctx) { return ctx->transport == TPG_TRANSPORT_NCCL; }

/* ctx.c helpers shared with ctx_rank.c. device_count treats "no driver" / "no device" as 0 devices and names the
 * CUDA error behind them in *why_none ("" when the count is real);
 * create_streams makes one stream per local rank; ctx_release frees streams, IPC mappings and ctx. */
tpg_status tpg__device_count(tpg_ctx *ctx, int *count, const char **why_none);
tpg_status tpg__create_streams(tpg_ctx *ctx);
/* Sets rank r's persistent grid from its device's SM count: all of them, or with ranks sharing the device
 * (devices[] equal) an even share less the SMs kept free for same-device copies (tpg_ctx_config.share_devices). */
tpg_status tpg__set_sm_count(tpg_ctx *ctx, int r, int sms);
void tpg__ctx_release(tpg_ctx *ctx);

/* Makes rank's device current; the caller's device is restored by tpg__restore_device. */
tpg_status tpg__use_device(tpg_ctx *ctx, int rank);
/* Whether rank's device may load from p (ctx.c says which memory another GPU may not read); 1 where unknown. */
int tpg__device_reads(tpg_ctx *ctx, int rank, const void *p);
/* TPG_ERR_INVALID_ARGUMENT, naming both devices, when s (not 0, legacy or per-thread) belongs to another device than
 * rank's: a launch there fails with a bare CUDA error (or, captured, joins the wrong device's graph). */
tpg_status tpg__check_stream_device(tpg_ctx *ctx, int rank, cudaStream_t s);
/* How a stream is ordered against the other streams of its device (the CUDA programming guide's default-stream
 * rules): the legacy default stream (0, cudaStreamLegacy) waits for and holds back every blocking stream of the
 * device, the per-thread default stream among them; a non-blocking stream is ordered with none. */
typedef enum { TPG_STREAM_LEGACY, TPG_STREAM_PER_THREAD, TPG_STREAM_BLOCKING, TPG_STREAM_NON_BLOCKING } tpg_stream_kind;
typedef struct tpg_rank_stream {
    int device;
    const void *handle;
    tpg_stream_kind kind;
} tpg_rank_stream;
/* Why two ranks' launches on these streams would run one after the other (a static string), or NULL where they need
 * not: the same device and the same stream, or the legacy default stream beside one it holds back. A call's ranks
 * must run at once: each rank's start barrier waits for the others. Pure (tests/c/test_op_refused.c). */
const char *tpg__streams_ordered(const tpg_rank_stream *a, const tpg_rank_stream *b);
/* What device a has of device b's memory: nothing, access without native atomics (PCIe P2P, where the
 * barriers' red.release.sys adds to a peer's counter would not be atomic: barrier.cu), or both (NVLink). */
typedef enum tpg_peer_link { TPG_PEER_NONE, TPG_PEER_NO_ATOMICS, TPG_PEER_OK } tpg_peer_link;
tpg_status tpg__peer_link(tpg_ctx *ctx, int a, int b, tpg_peer_link *link);

/* Returns the current device (or -1) so that API calls leave the caller's current device alone. */
int tpg__save_device(void);
void tpg__restore_device(int saved);
/* Frees bufs[r] (device memory of local rank r, or NULL) on each local rank's device and sets it to NULL;
 * the caller's current device is kept. For an op's per-rank buffers (tile order, stream-K, trace). */
void tpg__free_rank_buffers(const tpg_ctx *ctx, void **bufs);

#endif /* TPG_CTX_INTERNAL_H */
