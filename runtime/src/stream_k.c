/* The stream-K workspace of ops with a one-stage launch - TP = 1, or the gathered and one-hop walks' one GEMM of all
 * M rows (templates/kernels/stream_k.h: what the kernel does with it): per local rank, one fp32 slot of BM x BN sums
 * per CTA of the persistent grid and one contribution count per tile of the region (fewer than two a CTA: the
 * region is at most a partial round plus a full one), allocated once per op when its shape has a stream-K region.
 * Counts start at 0; each launch's finishers take back what their tiles' contributors added. */
#include "buffers.h"
#include "checks.h"
#include "op_internal.h"
#include "stream_k.h"

/* Bytes of rank's fp32 slots: one BM x BN tile per CTA of its persistent grid; its counts follow. */
static size_t partial_bytes(const tpg_op *op, int rank) {
    return (size_t)op->ctx->sm_count[rank] * (size_t)op->kernel->bm * (size_t)op->kernel->bn * sizeof(float);
}

/* Output tiles of a one-stage launch of m rows (batches included). */
static int64_t launch_tiles(const tpg_op *op, int64_t m) {
    const tpg_kernel_desc *k = op->kernel;
    return (m + k->bm - 1) / k->bm * ((op->shapes.stage_n + k->bn - 1) / k->bn) * op->shapes.l;
}

/* The region of a launch of `stages` stages of m rows on `rank`, 0 if none: a kernel built for it (`stream_k:
 * true`: cooperative, 1x1 cluster), one stage - TP = 1, or the one GEMM of all M rows of a gathered or one-hop walk
 * (the kernel splits only such launches: gemm_sm90_walk.cuh, tpg_sk_region) - and a shape whose last round it
 * evens out. In a one-hop walk the finisher of a tile runs its epilogue, which raises the tile's flag for the peers'
 * REDUCE; a contributor only adds to its tile's stream-K count. A finisher waits for given CTAs of its own grid, so the
 * grid (one CTA per SM: graph.c) must be resident at once - which the gathered walk's pulls alone do not assume
 * (pull_shards.cuh): where another kernel holds SMs until a peer moves, that wait ends in the op's timeout. */
static int region_tiles(const tpg_op *op, int rank, int64_t m, int stages) {
    const tpg_kernel_desc *k = op->kernel;
    if (!k->stream_k) return 0;
    const int64_t kb = (op->shapes.stage_k + k->bk - 1) / k->bk;
    return tpg_sk_launch_tiles(launch_tiles(op, m), op->ctx->sm_count[rank], kb, stages);
}

int64_t tpg__stream_k_rows(const tpg_op *op) {
    if (op->sched->tp == 1) return op->shapes.stage_m;
    return op->gathered || op->one_hop ? (int64_t)op->sched->tp * op->shapes.stage_m : 0;
}

tpg_status tpg__stream_k_alloc(tpg_op *op) {
    tpg_ctx *ctx = op->ctx;
    tpg_status st = TPG_OK;
    const int saved = tpg__save_device();
    for (int r = ctx->local_begin; r < ctx->local_end; r++) {
        const int64_t rows = tpg__stream_k_rows(op);
        const int tiles = rows ? region_tiles(op, r, rows, 1) : 0;
        if (!tiles) continue;
        const size_t bytes = partial_bytes(op, r) + 2 * (size_t)ctx->sm_count[r] * sizeof(unsigned int);
        void *p = NULL;
        TPG_CHECK_GOTO(tpg__use_device(ctx, r), out);
        TPG_CHECK_CUDA_GOTO(ctx, cudaMalloc(&p, bytes), out);
        op->sk_work[r] = p;
        TPG_CHECK_GOTO(tpg__device_fill(ctx, p, NULL, bytes), out);
    }
out:
    tpg__restore_device(saved);
    return st;
}

void tpg__stream_k_params(const tpg_op *op, int rank, tpg_gemm_params *g) {
    /* the launch as built (g->m, g->num_stages: the walk's), so that a ring kept instead of one-hop has no region */
    g->sk_tiles = op->sk_work[rank] ? region_tiles(op, rank, g->m, g->num_stages) : 0;
    g->sk_rounds = g->sk_tiles ? (int)((launch_tiles(op, g->m) - g->sk_tiles) / op->ctx->sm_count[rank]) : 0;
    g->sk_partials = (float *)op->sk_work[rank];
    g->sk_counts = op->sk_work[rank] ? (unsigned int *)((char *)op->sk_work[rank] + partial_bytes(op, rank)) : NULL;
}

void tpg__stream_k_free(tpg_op *op) {
    tpg__free_rank_buffers(op->ctx, op->sk_work);
}
