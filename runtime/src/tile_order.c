/* The walk-order table of `raster: hilbert` kernels (scheduler.cuh, TPG_RASTER 1): one Hilbert order
 * over a stage's units (raster.c), computed once per op on the host and copied to every local device.
 * Every stage and batch of the op has the same units_m x units_n grid, so one table serves them all. */
#include <stdlib.h>

#include "buffers.h"
#include "checks.h"
#include "op_internal.h"
#include "raster.h"

/* One table, for a walk of walk_m rows a stage, copied to every local rank's device into tables[]. */
static tpg_status alloc_table(tpg_op *op, int64_t walk_m, void **tables) {
    const tpg_kernel_desc *k = op->kernel;
    tpg_ctx *ctx = op->ctx;
    int64_t units_m, units_n;
    tpg_raster_grid(walk_m, op->shapes.stage_n, k->bm, k->bn, k->cluster_m, k->cluster_n, &units_m, &units_n);
    if (units_m > 0x7fff || units_n > 0x7fff)
        TPG_FAIL(ctx, TPG_ERR_SHAPE, "kernel %s (raster: hilbert): %lld x %lld tile units per stage, at "
                 "most 32767 each; use raster: grouped for this shape", k->name, (long long)units_m, (long long)units_n);
    const size_t bytes = sizeof(int32_t) * (size_t)(units_m * units_n);
    int32_t *host = malloc(bytes);
    if (!host) TPG_FAIL(ctx, TPG_ERR_OUT_OF_MEMORY, "tile order: host allocation of %zu bytes failed", bytes);
    (void)tpg_raster_hilbert((int)units_m, (int)units_n, host);
    tpg_status st = TPG_OK;
    const int saved = tpg__save_device();
    for (int r = ctx->local_begin; r < ctx->local_end; r++) {
        TPG_CHECK_GOTO(tpg__use_device(ctx, r), out);
        TPG_CHECK_CUDA_GOTO(ctx, cudaMalloc(&tables[r], bytes), out);
        TPG_CHECK_GOTO(tpg__device_fill(ctx, tables[r], host, bytes), out);
    }
out:
    free(host);
    tpg__restore_device(saved);
    return st;
}

/* The gathered walk is one GEMM of every stage's rows (params.c: gathered_params); an op that may run the one-hop
 * walk gets that GEMM's table too, both kept until the op goes: a graph captured before tpg_op_set_rs_ring still
 * launches with the table of its own walk. */
tpg_status tpg__tile_order_alloc(tpg_op *op) {
    if (!op->kernel->raster) return TPG_OK;
    const int64_t stage_m = op->shapes.stage_m, tp = op->sched->tp;
    TPG_CHECK(alloc_table(op, op->gathered ? tp * stage_m : stage_m, op->tile_order));
    return op->one_hop ? alloc_table(op, tp * stage_m, op->tile_order_one_hop) : TPG_OK;
}

void tpg__tile_order_free(tpg_op *op) {
    tpg__free_rank_buffers(op->ctx, op->tile_order);
    tpg__free_rank_buffers(op->ctx, op->tile_order_one_hop);
}
