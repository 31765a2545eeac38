/* Copy-engine partials (schedules.yaml configs[].copy_engine_partials): a reduce-scatter ring over the peer transport
 * whose partials cross GPUs by copy engine instead of by the GEMM's stores.
 *
 * Why: a pushing tile's bulk stores into a peer's memory hold up its own operand loads - on one GPU, pushes over the
 * host link grew the pushing tiles' mainloops by ~10% and the ring ran 0.85-0.95 of itself with local pushes, as
 * 70B-o ran 0.94 of its local GEMM across two GPUs - while a copy engine carrying the same bytes beside the GEMM
 * cost it nothing (docs/perf_notes/2026-12-04-c.md, -d.md). So the GEMM writes every sending stage's partial into
 * its own send-bank slot and raises that slot's tile flags (params.c; buffers.h: tpg_buf_send_slot), and this file
 * adds to the rank's graph, per sending stage and per row band of its tiles (nccl_plan.h: the bands of the NCCL
 * transport, at most TPG_CE_RS_BANDS a stage), one chain on a copy engine:
 *   wait   batch mem-op node: every tile flag of the band nonzero (no SM polls; the GEMM raised them with the epoch)
 *   copy   the band's bytes of the send-bank slot -> the receiver's slot, the one a push would have written
 *   flags  the band's own tile flags (each the epoch) -> the receiver's flags of that slot, which its stage waits on
 *          as on pushed ones; after the copy in graph order, so a flag lands after its data
 *   reset  batch mem-op node: the band's own flags back to 0, so the next call's wait again waits for its tiles
 * A graph bakes a node's values in; the epoch moves every call, so the waits test "raised at all" and the resets
 * make that mean "raised in this call" - which holds because nothing else writes the send bank's flags (the one-hop
 * walk, which the op may switch to and back, raises the first bank's: with the send bank first, a chain after one
 * of its calls passed at once and copied its flags of an old epoch, 2026-12-04 10:33Z). The flags written to the
 * receiver are the epoch itself, copied.
 *
 * Order: the chain starts after the GEMM's launch completion (every CTA of the persistent kernel has begun: a wait
 * node that ran before the GEMM started could never end, and a mem-op wait has no timeout) and after the start
 * barrier (the receiver's slot is free once every rank entered this call: its GEMM of the last call, which read the
 * slot, is done); the closing barrier waits for its last node. Both are second guards: a launch ends only when its
 * chain has, and the sender's closing barrier of the call before already waited for every peer's GEMM - the protocol
 * model (tests/test_protocol.py) holds without either, and fails without the waits or the resets.
 * The stages' chains follow each other: stage s + 1's partial holds what stage s received, and each rank's chain of
 * stage s waits only on its GEMM's tiles, which wait only on chains of stage s - 1 - earlier in every rank's chain,
 * so none waits on itself.
 * The waits end whatever happens: the GEMM raises every tile flag even after a timed-out wait (sync.cuh).
 *
 * A mem-op wait holds the hardware queue it sits on. With one rank a GPU, work of the caller's queued behind it waits
 * at most until this call's GEMM raised the band; with ranks sharing a GPU, another rank's GEMM could queue there and
 * never start, so such ops need 32 queues (tpg__ce_partials_check_queues). Not yet timed across GPUs: the x2 plan in
 * docs/PERF_NOTES.md (`bench/run_tp.sh --alt-copy-engine-partials`). */
#include <cuda.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "op_internal.h"
#include "tensormap.h"

/* Ranks sharing a GPU (tpg_ctx_config.share_devices) run their graphs' branches side by side on one GPU's hardware
 * queues, 8 by default: a chain's wait ahead of another rank's GEMM on one queue held it back until the waits timed
 * out (one GPU, TP = 4 and 8, 2026-12-04 10:25Z); with 32 (the most CUDA takes) every run passed. The check reads
 * the environment when the op is made, while what counts is the value CUDA read at its start, and 32 queues make such
 * a collision unlikely, not impossible: a guard for correctness runs on one GPU, best effort. */
#define TPG_CE_SHARED_CONNECTIONS 32
/* cuStreamBatchMemOp takes fewer than 256 operations a call. */
#define TPG_CE_BATCH_OPS 255

typedef CUresult (*batch_mem_op_fn)(CUstream, unsigned int, CUstreamBatchMemOpParams *, unsigned int);

/* One or more batch mem-op nodes on s: wait until flags[0 .. count) are all nonzero, or write 0 to each. */
static tpg_status flag_ops(tpg_op *op, batch_mem_op_fn batch, cudaStream_t s, unsigned int *flags, int64_t count,
                           int wait) {
    CUstreamBatchMemOpParams ops[TPG_CE_BATCH_OPS];
    for (int64_t t0 = 0; t0 < count; t0 += TPG_CE_BATCH_OPS) {
        const int n = count - t0 < TPG_CE_BATCH_OPS ? (int)(count - t0) : TPG_CE_BATCH_OPS;
        memset(ops, 0, sizeof ops[0] * (size_t)n);
        for (int i = 0; i < n; i++) {
            const CUdeviceptr at = (CUdeviceptr)(uintptr_t)(flags + t0 + i);
            if (wait) {
                ops[i].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
                ops[i].waitValue.address = at;
                /* (*flag & value) != 0: raised, whatever the epoch. Not GEQ 1: it compares with wrap-around, so
                 * past 2^31 calls no epoch would pass and the wait would never end */
                ops[i].waitValue.value = 0xFFFFFFFFu;
                ops[i].waitValue.flags = CU_STREAM_WAIT_VALUE_AND;
            } else {
                ops[i].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
                ops[i].writeValue.address = at;
                ops[i].writeValue.value = 0;
                ops[i].writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
            }
        }
        const CUresult r = batch((CUstream)s, (unsigned int)n, ops, 0);
        if (r != CUDA_SUCCESS)
            TPG_FAIL(op->ctx, TPG_ERR_CUDA, "cuStreamBatchMemOp (%s %d tile flags of copy-engine partials) failed with "
                     "CUresult %d", wait ? "waits on" : "resets", n, (int)r);
    }
    return TPG_OK;
}

/* The bands a stage's partial moves in (nccl_plan.h: the NCCL transport's, at most TPG_CE_RS_BANDS). */
static int stage_bands(const tpg_op *op) { return tpg_nccl_band_count_at_most(&op->nccl_rows, TPG_CE_RS_BANDS); }

/* The chain of rank's stage entry e (a sending stage), band by band, on s. */
static tpg_status stage_chain(tpg_op *op, int rank, const tpg_stage_entry *e, batch_mem_op_fn batch, cudaStream_t s) {
    tpg_ctx *ctx = op->ctx;
    const tpg_buffer_layout *b = &op->layout;
    void *own = op->buffer[rank], *peer = tpg_peers_get(&op->peers, e->dst_peer, TPG_PEER_BUFFER);
    if (!peer)
        TPG_FAIL(ctx, TPG_ERR_NOT_READY, "rank %d's copy engine carries its partial to rank %d, whose buffer is not "
                 "mapped", rank, e->dst_peer);
    const int send = tpg_buf_send_slot(b, e->dst_slot);
    unsigned int *sent = tpg_buf_tile_flags(own, b, send), *arrived = tpg_buf_tile_flags(peer, b, e->dst_slot);
    const char *from = tpg_buf_slot(own, b, send);
    char *to = tpg_buf_slot(peer, b, e->dst_slot);
    const int bands = stage_bands(op);
    for (int i = 0; i < bands; i++) {
        const tpg_nccl_band band = tpg_nccl_band_of(&op->nccl_rows, i, bands);
        TPG_CHECK(flag_ops(op, batch, s, sent + band.tile0, band.tiles, 1));
        TPG_CHECK_CUDA(ctx, cudaMemcpyAsync(to + band.offset, from + band.offset, band.bytes, cudaMemcpyDefault, s));
        TPG_CHECK_CUDA(ctx, cudaMemcpyAsync(arrived + band.tile0, sent + band.tile0,
                                            (size_t)band.tiles * sizeof(unsigned int), cudaMemcpyDefault, s));
        TPG_CHECK(flag_ops(op, batch, s, sent + band.tile0, band.tiles, 0));
    }
    return TPG_OK;
}

/* Every sending stage's chain, in stage order, on s (capturing). */
static tpg_status chains(tpg_op *op, int rank, batch_mem_op_fn batch, cudaStream_t s) {
    const tpg_schedule_table *t = op->sched;
    for (int st = 0; st < t->tp; st++) {
        const tpg_stage_entry *e = &t->stages[rank * t->tp + st];
        if (e->dst_peer >= 0 && e->dst_slot >= 0) TPG_CHECK(stage_chain(op, rank, e, batch, s));
    }
    return TPG_OK;
}

/* The node the capture on s ends with (its one dependency), into *tail. */
static tpg_status capture_tail(tpg_ctx *ctx, cudaStream_t s, cudaGraphNode_t *tail) {
    enum cudaStreamCaptureStatus status;
    const cudaGraphNode_t *deps = NULL;
    const cudaGraphEdgeData *edges = NULL; /* asked for, so that the query is not lossy (graph.c does the same) */
    size_t ndeps = 0;
#if CUDART_VERSION >= 13000
    TPG_CHECK_CUDA(ctx, cudaStreamGetCaptureInfo(s, &status, NULL, NULL, &deps, &edges, &ndeps));
#else
    TPG_CHECK_CUDA(ctx, cudaStreamGetCaptureInfo_v3(s, &status, NULL, NULL, &deps, &edges, &ndeps));
#endif
    if (ndeps != 1)
        TPG_FAIL(ctx, TPG_ERR_CUDA, "copy-engine partials: the captured chain ends in %zu nodes, not one", ndeps);
    *tail = deps[0];
    return TPG_OK;
}

/* The capture itself, on s into rank's graph after start and the GEMM's launch completion; *tail its last node. */
static tpg_status capture(tpg_op *op, int rank, cudaStream_t s, batch_mem_op_fn batch, cudaGraphNode_t start,
                          cudaGraphNode_t gemm, cudaGraphNode_t *tail) {
    tpg_ctx *ctx = op->ctx;
    const cudaGraphNode_t after[2] = {gemm, start};
    cudaGraphEdgeData edges[2];
    memset(edges, 0, sizeof edges);
    edges[0].from_port = cudaGraphKernelNodePortLaunchCompletion; /* every CTA has begun, not the kernel's end */
    TPG_CHECK_CUDA(ctx,
                   cudaStreamBeginCaptureToGraph(s, op->graph[rank], after, edges, 2, cudaStreamCaptureModeRelaxed));
    tpg_status st = chains(op, rank, batch, s);
    if (st == TPG_OK) st = capture_tail(ctx, s, tail);
    return tpg__capture_end(ctx, s, st, "cudaStreamEndCapture(copy-engine partials)");
}

tpg_status tpg__ce_partials_add(tpg_op *op, int rank, cudaGraphNode_t start, cudaGraphNode_t gemm,
                                cudaGraphNode_t end) {
    tpg_ctx *ctx = op->ctx;
    static batch_mem_op_fn batch; /* cached; benign race: every thread stores the same value */
    if (!batch) {
        void *fn = NULL;
        TPG_CHECK(tpg__driver_entry(ctx, "cuStreamBatchMemOp", &fn));
        batch = (batch_mem_op_fn)fn;
    }
    cudaStream_t s;
    TPG_CHECK_CUDA(ctx, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraphNode_t tail = NULL;
    tpg_status st = capture(op, rank, s, batch, start, gemm, &tail);
    (void)cudaStreamDestroy(s);
    TPG_CHECK(st);
#if CUDART_VERSION >= 13000
    TPG_CHECK_CUDA(ctx, cudaGraphAddDependencies(op->graph[rank], &tail, &end, NULL, 1));
#else
    TPG_CHECK_CUDA(ctx, cudaGraphAddDependencies(op->graph[rank], &tail, &end, 1));
#endif
    return TPG_OK;
}

tpg_status tpg__ce_partials_check_queues(tpg_op *op) {
    tpg_ctx *ctx = op->ctx;
    int shared = 0;
    for (int r = ctx->local_begin; r < ctx->local_end; r++)
        for (int q = ctx->local_begin; q < r; q++) shared |= ctx->devices[q] == ctx->devices[r];
    if (!op->config->copy_engine_partials || tpg__over_nccl(ctx) || !shared) return TPG_OK;
    const char *env = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    if (env && atoi(env) >= TPG_CE_SHARED_CONNECTIONS) return TPG_OK;
    TPG_FAIL(ctx, TPG_ERR_UNSUPPORTED, "config %s: copy-engine partials with ranks sharing a GPU need "
             "CUDA_DEVICE_MAX_CONNECTIONS=%d in the environment before CUDA starts (it is %s): each rank's copy chain "
             "waits on a hardware queue of the GPU, and with fewer queues another rank's GEMM can be queued behind "
             "such a wait and never start", op->config->name, TPG_CE_SHARED_CONNECTIONS, env ? env : "unset");
}
