/* The stream-K workspace of TP = 1 ops (templates/kernels/stream_k.h: what the kernel does with it): per
 * local rank, one fp32 slot of BM x BN sums and one flag per CTA of the persistent grid, allocated once per
 * op when its shape has a stream-K region. Flags start at 0; each launch's finishers reset the ones raised. */
#include "checks.h"
#include "op_internal.h"
#include "stream_k.h"

/* Bytes of rank's fp32 slots: one BM x BN tile per CTA of its persistent grid; its flags follow. */
static size_t partial_bytes(const tpg_op *op, int rank) {
    return (size_t)op->ctx->sm_count[rank] * (size_t)op->kernel->bm * (size_t)op->kernel->bn * sizeof(float);
}

/* Output tiles of the op's one stage, batches included. */
static int64_t op_tiles(const tpg_op *op) {
    const tpg_kernel_desc *k = op->kernel;
    return (op->shapes.stage_m + k->bm - 1) / k->bm * ((op->shapes.stage_n + k->bn - 1) / k->bn) * op->shapes.l;
}

/* The region for this op on `rank`, 0 if none: TP = 1 (one stage, no flags), a kernel built for it
 * (`stream_k: true`: cooperative, 1x1 cluster), and a shape whose last round it evens out. */
static int region_tiles(const tpg_op *op, int rank) {
    const tpg_kernel_desc *k = op->kernel;
    if (op->sched->tp != 1 || !k->stream_k) return 0;
    const int64_t tiles = op_tiles(op);
    const int64_t kb = (op->shapes.stage_k + k->bk - 1) / k->bk;
    if (kb > 0x7fffffff) return 0;
    return tpg_sk_tiles(tiles, op->ctx->sm_count[rank], (int)kb);
}

tpg_status tpg__stream_k_alloc(tpg_op *op) {
    tpg_ctx *ctx = op->ctx;
    tpg_status st = TPG_OK;
    const int saved = tpg__save_device();
    for (int r = ctx->local_begin; r < ctx->local_end; r++) {
        const int tiles = region_tiles(op, r);
        if (!tiles) continue;
        const size_t bytes = partial_bytes(op, r) + (size_t)ctx->sm_count[r] * sizeof(unsigned int);
        void *p = NULL;
        TPG_CHECK_GOTO(tpg__use_device(ctx, r), out);
        TPG_CHECK_CUDA_GOTO(ctx, cudaMalloc(&p, bytes), out);
        op->sk_work[r] = p;
        TPG_CHECK_CUDA_GOTO(ctx, cudaMemset(p, 0, bytes), out);
        op->sk_tiles[r] = tiles;
    }
out:
    tpg__restore_device(saved);
    return st;
}

void tpg__stream_k_params(const tpg_op *op, int rank, tpg_gemm_params *g) {
    g->sk_tiles = op->sk_work[rank] ? op->sk_tiles[rank] : 0;
    g->sk_rounds = g->sk_tiles ? (int)((op_tiles(op) - g->sk_tiles) / op->ctx->sm_count[rank]) : 0;
    g->sk_partials = (float *)op->sk_work[rank];
    g->sk_flags = op->sk_work[rank] ? (unsigned int *)((char *)op->sk_work[rank] + partial_bytes(op, rank)) : NULL;
}

void tpg__stream_k_free(tpg_op *op) {
    tpg__free_rank_buffers(op->ctx, op->sk_work);
    for (int r = op->ctx->local_begin; r < op->ctx->local_end; r++) op->sk_tiles[r] = 0;
}
