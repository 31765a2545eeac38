/* The barriers beside the GEMM (tpg_op_set_overlap_barriers): whether the kernels fit, and the check that the
 * GEMM's epochs (counted on from its own previous one, templates/kernels/gemm_params.h) agree with the start
 * barrier's.
 *
 * Why the fit matters: the start barrier becomes a root of the graph next to the persistent GEMM, which
 * holds every SM; an all-gather's copies wait for that barrier and the GEMM's later stages wait for the
 * copies. A barrier that found no room would start only after the GEMM ended: never, the GEMM times out.
 * Measured on H200 (tests/gpu/selftest_coresident.cu, docs/PERF_NOTES.md 20:24Z): the barrier runs beside
 * every shipped 1x1 kernel, using exactly the registers and shared memory those leave, and not beside a
 * cluster launch. So: 1x1 kernels only, and the resources checked with the device's own limits. */
#include <string.h>

#include "checks.h"
#include "op_internal.h"

/* Registers a CTA of `threads` threads at `regs` per thread takes: whole warps, each in 256-register units. */
static int cta_registers(int regs, int threads) {
    const int per_warp = (regs * 32 + 255) / 256 * 256;
    return per_warp * ((threads + 31) / 32);
}

/* Shared memory a CTA takes: what it asks for in the SM's 128-byte allocation units (sm_90), and the driver's
 * per-CTA reservation. */
static long cta_shared(long bytes, int reserved) { return (bytes + 127) / 128 * 128 + reserved; }

tpg_sm_share tpg__barrier_beside(int gemm_regs, int gemm_threads, long gemm_smem, int barrier_regs, long barrier_smem,
                                 int reserved) {
    tpg_sm_share need;
    need.regs = cta_registers(gemm_regs, gemm_threads) + cta_registers(barrier_regs, 1);
    need.smem = cta_shared(gemm_smem, reserved) + cta_shared(barrier_smem, reserved);
    need.threads = (gemm_threads + 31) / 32 * 32 + 32;
    return need;
}

/* Whether one barrier CTA (1 thread) fits on an SM beside one CTA of the op's GEMM kernel on rank's device. */
static tpg_status barrier_fits_beside(tpg_op *op, int rank) {
    tpg_ctx *ctx = op->ctx;
    const tpg_kernel_desc *k = op->kernel;
    struct cudaFuncAttributes g, b;
    int regs_sm = 0, smem_sm = 0, reserved = 0, threads_sm = 0;
    TPG_CHECK(tpg__use_device(ctx, rank));
    TPG_CHECK_CUDA(ctx, cudaFuncGetAttributes(&g, k->entry()));
    TPG_CHECK_CUDA(ctx, cudaFuncGetAttributes(&b, tpg_barrier_kernel_entry()));
    const int dev = ctx->devices[rank];
    TPG_CHECK_CUDA(ctx, cudaDeviceGetAttribute(&regs_sm, cudaDevAttrMaxRegistersPerMultiprocessor, dev));
    TPG_CHECK_CUDA(ctx, cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
    TPG_CHECK_CUDA(ctx, cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev));
    TPG_CHECK_CUDA(ctx, cudaDeviceGetAttribute(&threads_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
    const tpg_sm_share n = tpg__barrier_beside(g.numRegs, k->threads, (long)g.sharedSizeBytes + k->smem_bytes,
                                               b.numRegs, (long)b.sharedSizeBytes, reserved);
    if (n.regs > regs_sm || n.smem > smem_sm || n.threads > threads_sm)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "kernel %s: the start barrier does not fit on an SM beside one of its "
                 "CTAs on rank %d (registers %d of %d, shared memory %ld of %d B, threads %d of %d), so the GEMM must "
                 "wait for it", k->name, rank, n.regs, regs_sm, n.smem, smem_sm, n.threads, threads_sm);
    return TPG_OK;
}

tpg_status tpg_op_set_overlap_barriers(tpg_op *op, int enable) {
    TPG_REQUIRE_HANDLE(op);
    tpg_ctx *ctx = op->ctx;
    enable = enable != 0;
    if (enable == op->overlap) return TPG_OK;
    if (enable && op->sched->tp < 2)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "config %s: a TP = 1 op has no barriers to overlap", op->config->name);
    if (enable && tpg__over_nccl(ctx))
        TPG_FAIL(ctx, TPG_ERR_UNSUPPORTED, "config %s: the NCCL transport has no cross-device barriers to overlap (its "
                 "GEMM waits only for its own start node)", op->config->name);
    if (enable && op->kernel->cluster_m * op->kernel->cluster_n > 1)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "config %s: kernel %s runs in clusters of %dx%d, and a barrier kernel "
                 "gets no SM beside a cluster launch (measured on H200), so its GEMM must wait for the start barrier",
                 op->config->name, op->kernel->name, op->kernel->cluster_m, op->kernel->cluster_n);
    const int saved = tpg__save_device();
    tpg_status st = TPG_OK;
    for (int r = ctx->local_begin; enable && r < ctx->local_end && st == TPG_OK; r++) st = barrier_fits_beside(op, r);
    if (st == TPG_OK) {
        /* the graphs change shape (dependencies) and the GEMM's epoch source: drop them (after their
         * launches) and build anew */
        if (op->built) tpg__graphs_drop(op);
        op->overlap = enable;
        st = tpg__op_refresh(op);
        if (st != TPG_OK) { /* back to the mode the op had, with its graphs if they build (the error stays) */
            op->overlap = !enable;
            tpg__op_rebuild_keeping_error(op, tpg__op_refresh);
        }
    }
    tpg__restore_device(saved);
    return st;
}

tpg_status tpg__check_epochs(tpg_op *op, int rank) {
    if (op->sched->tp < 2) return TPG_OK;
    const tpg_buffer_layout *b = &op->layout;
    tpg_op_words words;
    TPG_CHECK(tpg__op_read_words(op, rank, &words));
    const size_t at[6] = {b->epoch, b->last_epoch, b->epoch_readers, b->pull_next, b->pull_count, b->pull_seen};
    unsigned int w[6];
    for (int i = 0; i < 6; i++) w[i] = tpg__op_word(&words, b, at[i]);
    if (w[0] != w[1] || w[2] != 0)
        TPG_FAIL(op->ctx, TPG_ERR_NOT_READY, "rank %d: the start barrier's epoch is %u, the GEMM's %u and %u of its CTAs "
                 "are still counted in, so the GEMM's waits and flags are out of step with its peers' (did a launch of "
                 "the op fail, or did two calls of it run at once?); destroy the op and create it again", rank, w[0],
                 w[1], w[2]);
    if (w[3] || w[4] || w[5]) /* 0 between launches (templates/kernels/pull_shards.cuh) */
        TPG_FAIL(op->ctx, TPG_ERR_NOT_READY, "rank %d: the GEMM's shard pulls left their words at next slice %u, %u "
                 "done, %u CTAs counted in, so the next launch's pulls would be miscounted (did a launch of the op "
                 "fail?); destroy the op and create it again", rank, w[3], w[4], w[5]);
    return tpg__ce_partials_check_idle(op, rank); /* 0 between calls: the chain copies zeros over them */
}
