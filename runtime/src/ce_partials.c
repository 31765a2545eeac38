/* Copy-engine partials (schedules.yaml configs[].copy_engine_partials): a reduce-scatter ring over the peer transport
 * whose partials cross GPUs by copy engine instead of by the GEMM's stores.
 *
 * Why: a pushing tile's bulk stores into a peer's memory hold up its own operand loads - on one GPU, pushes over the
 * host link grew the pushing tiles' mainloops by ~10% and the ring ran 0.85-0.95 of itself with local pushes, as
 * 70B-o ran 0.94 of its local GEMM across two GPUs - while a copy engine carrying the same bytes beside the GEMM
 * cost it nothing (docs/perf_notes/2026-12-04-c.md, -d.md). So the GEMM writes every sending stage's partial into
 * its own send-bank slot, raises that slot's tile flags and counts each raised flag in its tile row (params.c;
 * buffers.h: tpg_buf_send_slot, tpg_buf_row_count; gemm_params.h: row_counts), and this file adds to the rank's
 * graph, per sending stage and per row band of its tiles (nccl_plan.h: bands of whole tile rows, at most
 * TPG_CE_RS_BANDS a stage, of about TPG_CE_RS_BAND_BYTES or more), one chain on a copy engine:
 *   wait   batch mem-op node: every tile row of the band counted all its tiles (no SM polls)
 *   copy   the band's bytes of the send-bank slot -> the receiver's slot, the one a push would have written
 *   flags  the band's own tile flags (each the epoch) -> the receiver's flags of that slot, which its stage waits on
 *          as on pushed ones; after the copy in graph order, so a flag lands after its data
 * and, once the last stage's last wait has passed, one copy of pinned zeros over the send bank's row counts (beside
 * that band's copies), so that the next call's
 * waits again wait for its tiles. A graph bakes a node's values in and the epoch moves every call: the counts give
 * the waits a value that repeats (a row's tiles). One wait a tile row, not one a tile flag, and no reset a flag: the
 * copy engine's front end takes ~0.2 us a wait and ~0.7 us a write, so 70B-o's 4096 tiles a stage would have kept
 * the chain busy ~3.7 ms against a 1.7 ms call (ce_chain_cost.cu, docs/perf_notes/2026-12-04-e.md). The zeros come
 * from host memory because a copy within one GPU runs as a kernel, which would wait for the persistent GEMM's end.
 *
 * Order: the chain starts after the GEMM's launch completion (every CTA of the persistent kernel has begun: a wait
 * node that ran before the GEMM started could never end, and a mem-op wait has no timeout) and after the start
 * barrier (the receiver's slot is free once every rank entered this call: its GEMM of the last call, which read the
 * slot, is done); the closing barrier waits for its last node. Both are second guards: a launch ends only when its
 * chain has, and the sender's closing barrier of the call before already waited for every peer's GEMM - the protocol
 * model (tests/test_protocol.py) holds without either, and fails without the waits or the zeros.
 * The stages' chains follow each other: stage s + 1's partial holds what stage s received, and each rank's chain of
 * stage s waits only on its GEMM's tiles, which wait only on chains of stage s - 1 - earlier in every rank's chain,
 * so none waits on itself. Only the ring's GEMM counts (the one-hop walk's params have no row_counts), and only into
 * the send bank.
 * The waits end whatever happens: the GEMM raises and counts every tile flag even after a timed-out wait (its waits'
 * results are not read: epilogue.cuh's tpg_epi_begin, and tpg_epi_flush / tpg_epilogue_finish raise the flags).
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

/* Batch mem-op nodes on s: wait until counts[0 .. rows) all reach `tiles` (GEQ: a count runs from 0 to a row's
 * tiles in each call, so the compare never wraps). */
static tpg_status row_waits(tpg_op *op, batch_mem_op_fn batch, cudaStream_t s, unsigned int *counts, int64_t rows,
                            unsigned int tiles) {
    CUstreamBatchMemOpParams ops[TPG_CE_BATCH_OPS];
    for (int64_t r0 = 0; r0 < rows; r0 += TPG_CE_BATCH_OPS) {
        const int n = rows - r0 < TPG_CE_BATCH_OPS ? (int)(rows - r0) : TPG_CE_BATCH_OPS;
        memset(ops, 0, sizeof ops[0] * (size_t)n);
        for (int i = 0; i < n; i++) {
            ops[i].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
            ops[i].waitValue.address = (CUdeviceptr)(uintptr_t)(counts + r0 + i);
            ops[i].waitValue.value = tiles;
            ops[i].waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
        }
        const CUresult r = batch((CUstream)s, (unsigned int)n, ops, 0);
        if (r != CUDA_SUCCESS)
            TPG_FAIL(op->ctx, TPG_ERR_CUDA, "cuStreamBatchMemOp (waits on %d tile-row counts of copy-engine partials) "
                     "failed with CUresult %d", n, (int)r);
    }
    return TPG_OK;
}

/* The capture's second stream: the zeros over the send bank's counts branch off after the last wait has passed and
 * run beside the last band's copies, whose receiver waits on them (ahead of those copies they would delay the last
 * band by a copy-engine operation, ~3 us; after them, the closing barrier). */
typedef struct zeros_branch {
    cudaStream_t s;
    cudaEvent_t fork, join;
} zeros_branch;

/* Forks the zeros off the capture on s (after everything captured so far) onto z. */
static tpg_status zeros_beside(tpg_op *op, int rank, cudaStream_t s, const zeros_branch *z) {
    tpg_ctx *ctx = op->ctx;
    const tpg_buffer_layout *b = &op->layout;
    const int64_t rows = b->row_count_rows / 2; /* two banks: the second is the send bank, its rows the last half */
    TPG_CHECK_CUDA(ctx, cudaEventRecord(z->fork, s));
    TPG_CHECK_CUDA(ctx, cudaStreamWaitEvent(z->s, z->fork, 0));
    TPG_CHECK_CUDA(ctx, cudaMemcpyAsync(tpg_buf_row_count(op->buffer[rank], b, rows), op->ce_zeros,
                                        (size_t)rows * sizeof(unsigned int), cudaMemcpyDefault, z->s));
    TPG_CHECK_CUDA(ctx, cudaEventRecord(z->join, z->s));
    return TPG_OK;
}

/* A traced call's event nodes after a band's wait, copy and flags (trace_events.c; nothing in a normal build): the
 * copy begins when the wait ended, the flags when the copy did. Captured on the chain's stream, they are in the chain:
 * its next node follows them (trace builds only). */
static tpg_status band_timed(tpg_op *op, int rank, cudaStream_t s, uint32_t kind, int stage, int peer, int band,
                             int *ev) {
    return tpg__trace_chain_event(op, rank, s, kind, stage, peer, band, *ev, ev);
}

/* The chain of rank's stage entry e (sending stage `stage`), band by band, on s; the last sending stage's forks the
 * zeros onto z after its last wait (z NULL for the others). */
static tpg_status stage_chain(tpg_op *op, int rank, int stage, const tpg_stage_entry *e, batch_mem_op_fn batch,
                              cudaStream_t s, const zeros_branch *z) {
    tpg_ctx *ctx = op->ctx;
    const tpg_buffer_layout *b = &op->layout;
    void *own = op->buffer[rank], *peer = tpg_peers_get(&op->peers, e->dst_peer, TPG_PEER_BUFFER);
    if (!peer)
        TPG_FAIL(ctx, TPG_ERR_NOT_READY, "rank %d's copy engine carries its partial to rank %d, whose buffer is not "
                 "mapped", rank, e->dst_peer);
    const int send = tpg_buf_send_slot(b, e->dst_slot);
    const int64_t tiles_n = op->nccl_rows.tiles_n;
    unsigned int *sent = tpg_buf_tile_flags(own, b, send), *arrived = tpg_buf_tile_flags(peer, b, e->dst_slot);
    unsigned int *counts = tpg_buf_row_count(own, b, send * b->tiles_per_stage / tiles_n);
    const char *from = tpg_buf_slot(own, b, send);
    char *to = tpg_buf_slot(peer, b, e->dst_slot);
    const int bands = tpg_ce_band_count(&op->nccl_rows, b->slot_bytes_used);
    for (int i = 0; i < bands; i++) {
        const tpg_nccl_band band = tpg_nccl_band_of(&op->nccl_rows, i, bands);
        int ev = -1;
        TPG_CHECK(row_waits(op, batch, s, counts + band.tile0 / tiles_n, band.tiles / tiles_n, (unsigned int)tiles_n));
        TPG_CHECK(band_timed(op, rank, s, 0, stage, e->dst_peer, i, &ev));
        if (z && i == bands - 1) TPG_CHECK(zeros_beside(op, rank, s, z));
        TPG_CHECK_CUDA(ctx, cudaMemcpyAsync(to + band.offset, from + band.offset, band.bytes, cudaMemcpyDefault, s));
        TPG_CHECK(band_timed(op, rank, s, TPG_TRACE_NODE_CE_COPY, stage, e->dst_peer, i, &ev));
        TPG_CHECK_CUDA(ctx, cudaMemcpyAsync(arrived + band.tile0, sent + band.tile0,
                                            (size_t)band.tiles * sizeof(unsigned int), cudaMemcpyDefault, s));
        TPG_CHECK(band_timed(op, rank, s, TPG_TRACE_NODE_CE_FLAGS, stage, e->dst_peer, i, &ev));
    }
    return TPG_OK;
}

/* Every sending stage's chain, in stage order, on s (capturing), the zeros on z after the last wait, joined. */
static tpg_status chains(tpg_op *op, int rank, batch_mem_op_fn batch, cudaStream_t s, const zeros_branch *z) {
    const tpg_schedule_table *t = op->sched;
    int last = -1;
    for (int st = 0; st < t->tp; st++) {
        const tpg_stage_entry *e = &t->stages[rank * t->tp + st];
        if (e->dst_peer >= 0 && e->dst_slot >= 0) last = st;
    }
    if (last < 0)
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "schedule %s: rank %d has no stage that sends a partial, so there "
                 "is nothing for copy-engine partials to carry", t->name, rank);
    for (int st = 0; st <= last; st++) {
        const tpg_stage_entry *e = &t->stages[rank * t->tp + st];
        if (e->dst_peer >= 0 && e->dst_slot >= 0)
            TPG_CHECK(stage_chain(op, rank, st, e, batch, s, st == last ? z : NULL));
    }
    TPG_CHECK_CUDA(op->ctx, cudaStreamWaitEvent(s, z->join, 0));
    return TPG_OK;
}

/* The nodes the capture on s ends with (the last band's flags and the zeros), into tails[0 .. *n). */
static tpg_status capture_tails(tpg_ctx *ctx, cudaStream_t s, cudaGraphNode_t tails[2], size_t *n) {
    enum cudaStreamCaptureStatus status;
    const cudaGraphNode_t *deps = NULL;
    const cudaGraphEdgeData *edges = NULL; /* asked for, so that the query is not lossy (graph.c does the same) */
    size_t ndeps = 0;
#if CUDART_VERSION >= 13000
    TPG_CHECK_CUDA(ctx, cudaStreamGetCaptureInfo(s, &status, NULL, NULL, &deps, &edges, &ndeps));
#else
    TPG_CHECK_CUDA(ctx, cudaStreamGetCaptureInfo_v3(s, &status, NULL, NULL, &deps, &edges, &ndeps));
#endif
    if (ndeps < 1 || ndeps > 2)
        TPG_FAIL(ctx, TPG_ERR_CUDA, "copy-engine partials: the captured chain ends in %zu nodes, not one or two",
                 ndeps);
    for (size_t i = 0; i < ndeps; i++) tails[i] = deps[i];
    *n = ndeps;
    return TPG_OK;
}

/* The capture itself, on s (and z) into rank's graph after start and the GEMM's launch completion; its last nodes
 * into tails[0 .. *n). */
static tpg_status capture(tpg_op *op, int rank, cudaStream_t s, const zeros_branch *z, batch_mem_op_fn batch,
                          cudaGraphNode_t start, cudaGraphNode_t gemm, cudaGraphNode_t tails[2], size_t *n) {
    tpg_ctx *ctx = op->ctx;
    const cudaGraphNode_t after[2] = {gemm, start};
    cudaGraphEdgeData edges[2];
    memset(edges, 0, sizeof edges);
    edges[0].from_port = cudaGraphKernelNodePortLaunchCompletion; /* every CTA has begun, not the kernel's end */
    TPG_CHECK_CUDA(ctx,
                   cudaStreamBeginCaptureToGraph(s, op->graph[rank], after, edges, 2, cudaStreamCaptureModeRelaxed));
    tpg_status st = chains(op, rank, batch, s, z);
    if (st == TPG_OK) st = capture_tails(ctx, s, tails, n);
    return tpg__capture_end(ctx, s, st, "cudaStreamEndCapture(copy-engine partials)");
}

tpg_status tpg__ce_partials_add(tpg_op *op, int rank, cudaGraphNode_t start, cudaGraphNode_t gemm,
                                cudaGraphNode_t end) {
    tpg_ctx *ctx = op->ctx;
    static void *batch_cache; /* tpg__driver_entry_cached */
    void *fn = NULL;
    TPG_CHECK(tpg__driver_entry_cached(ctx, "cuStreamBatchMemOp", &batch_cache, &fn));
    const batch_mem_op_fn batch = (batch_mem_op_fn)tpg__fn(fn);
    cudaStream_t s = NULL;
    zeros_branch z = {NULL, NULL, NULL};
    cudaGraphNode_t tails[2];
    size_t n = 0;
    tpg_status st = TPG_OK;
    TPG_CHECK_CUDA_GOTO(ctx, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), done);
    TPG_CHECK_CUDA_GOTO(ctx, cudaStreamCreateWithFlags(&z.s, cudaStreamNonBlocking), done);
    TPG_CHECK_CUDA_GOTO(ctx, cudaEventCreateWithFlags(&z.fork, cudaEventDisableTiming), done);
    TPG_CHECK_CUDA_GOTO(ctx, cudaEventCreateWithFlags(&z.join, cudaEventDisableTiming), done);
    st = capture(op, rank, s, &z, batch, start, gemm, tails, &n);
    for (size_t i = 0; st == TPG_OK && i < n; i++)
#if CUDART_VERSION >= 13000
        TPG_CHECK_CUDA_GOTO(ctx, cudaGraphAddDependencies(op->graph[rank], &tails[i], &end, NULL, 1), done);
#else
        TPG_CHECK_CUDA_GOTO(ctx, cudaGraphAddDependencies(op->graph[rank], &tails[i], &end, 1), done);
#endif
done:
    if (z.join) (void)cudaEventDestroy(z.join);
    if (z.fork) (void)cudaEventDestroy(z.fork);
    if (z.s) (void)cudaStreamDestroy(z.s);
    if (s) (void)cudaStreamDestroy(s);
    return st;
}

tpg_status tpg__ce_partials_alloc(tpg_op *op) {
    if (op->layout.row_count_rows == 0) return TPG_OK;
    const size_t bytes = (size_t)(op->layout.row_count_rows / 2) * sizeof(unsigned int);
    /* portable: every device of the process copies from it */
    TPG_CHECK_CUDA(op->ctx, cudaHostAlloc((void **)&op->ce_zeros, bytes, cudaHostAllocPortable));
    memset(op->ce_zeros, 0, bytes);
    return TPG_OK;
}

void tpg__ce_partials_free(tpg_op *op) {
    if (op->ce_zeros) (void)cudaFreeHost(op->ce_zeros);
    op->ce_zeros = NULL;
}

tpg_status tpg__ce_partials_check_idle(tpg_op *op, int rank) {
    const tpg_buffer_layout *b = &op->layout;
    const int64_t rows = b->row_count_rows / 2, first = rows; /* the send bank's */
    if (rows == 0) return TPG_OK;
    unsigned int *w = malloc((size_t)rows * sizeof *w);
    if (!w) TPG_FAIL(op->ctx, TPG_ERR_OUT_OF_MEMORY, "rank %d: no host memory to read %lld row counts", rank,
                     (long long)rows);
    const tpg_status read = tpg__op_read(op, rank, tpg_buf_row_count(op->buffer[rank], b, first), w,
                                         (size_t)rows * sizeof *w);
    int64_t bad = -1;
    for (int64_t i = 0; read == TPG_OK && i < rows && bad < 0; i++) bad = w[i] ? i : -1;
    const unsigned int value = bad >= 0 ? w[bad] : 0;
    free(w);
    if (read != TPG_OK) return read;
    if (bad >= 0)
        TPG_FAIL(op->ctx, TPG_ERR_NOT_READY, "rank %d: tile row %lld of the send bank still counts %u raised flags "
                 "after the call, so the next call's copy chain could carry a band before its tiles are written (did "
                 "two calls of the op run at once, or a launch fail?); destroy the op and create it again", rank,
                 (long long)bad, value);
    return TPG_OK;
}

tpg_status tpg__ce_partials_check_queues(tpg_op *op) {
    tpg_ctx *ctx = op->ctx;
    int shared = 0;
    for (int r = ctx->local_begin; r < ctx->local_end; r++)
        for (int q = ctx->local_begin; q < r; q++) shared |= ctx->devices[q] == ctx->devices[r];
    if (!tpg__op_ce_partials(op) || !shared) return TPG_OK; /* no chains: the walk, NCCL or TP = 1 */
    const char *env = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    if (env && atoi(env) >= TPG_CE_SHARED_CONNECTIONS) return TPG_OK;
    TPG_FAIL(ctx, TPG_ERR_UNSUPPORTED, "config %s: copy-engine partials (a reduce-scatter ring) with ranks sharing a "
             "GPU need CUDA_DEVICE_MAX_CONNECTIONS=%d in the environment before CUDA starts (it is %s): each rank's "
             "copy chain waits on a hardware queue of the GPU, and with fewer queues another rank's GEMM can be queued "
             "behind such a wait and never start", op->config->name, TPG_CE_SHARED_CONNECTIONS, env ? env : "unset");
}
