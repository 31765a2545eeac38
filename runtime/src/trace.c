/* Timeline trace buffers of an op (trace.h). Compiled only into the trace build (build/trace/), where
 * tpg_gemm_params.trace and tpg_barrier_params.trace exist. */
#include "trace.h"

#include <stddef.h>
#include <string.h>

#include "buffers.h"
#include "checks.h"
#include "op_internal.h"
#include "trace_format.h"

#ifndef TPG_TRACE
#error "runtime/src/trace.c belongs to the trace build (ninja trace: -DTPG_TRACE)"
#endif

/* Referenced by every trace kernel's entry function (gemm_sm90.cuh): linking a trace kernel with a
 * normal runtime, whose tpg_gemm_params lacks the trace field, fails at link time instead of at run time. */
const int tpg_trace_build_abi = 1;

/* Points rank r's params at its buffer (or NULL); params.c calls it after every rebuild of the params. */
void tpg__trace_apply(tpg_op *op, int r) {
    tpg_trace_header *h = (tpg_trace_header *)op->trace_buf[r];
    op->gemm[r].trace = h;
    op->barrier[TPG_BARRIER_START][r].trace = h ? (unsigned long long *)h->barrier[TPG_BARRIER_START] : NULL;
    op->barrier[TPG_BARRIER_END][r].trace = h ? (unsigned long long *)h->barrier[TPG_BARRIER_END] : NULL;
    for (int m = TPG_BARRIER_START; m <= TPG_BARRIER_END; m++)
        op->barrier[m][r].trace_gave_up = h ? &h->barrier_gave_up[m] : NULL;
}

void tpg__trace_free(tpg_op *op) {
    tpg__free_rank_buffers(op->ctx, op->trace_buf);
    for (int r = op->ctx->local_begin; r < op->ctx->local_end; r++) tpg__trace_apply(op, r);
    memset(op->trace_bytes, 0, sizeof op->trace_bytes);
}

tpg_status tpg__trace_enable(tpg_op *op, uint32_t cap) {
    TPG_REQUIRE_HANDLE(op);
    tpg_ctx *ctx = op->ctx;
    if (!op->built) TPG_FAIL(ctx, TPG_ERR_NOT_READY, "trace: the graphs are not built; set every rank's tensors first");
    if (cap == 0) cap = TPG_TRACE_DEFAULT_CAP;
    tpg__trace_free(op);
    const int saved = tpg__save_device();
    tpg_status st = TPG_OK;
    for (int r = ctx->local_begin; r < ctx->local_end; r++) {
        /* one CTA block per SM: the persistent grid never exceeds the SM count */
        const uint32_t ctas = (uint32_t)ctx->sm_count[r];
        const size_t bytes = (size_t)tpg_trace_bytes(ctas, cap);
        TPG_CHECK_GOTO(tpg__use_device(ctx, r), fail);
        TPG_CHECK_CUDA_GOTO(ctx, cudaMalloc(&op->trace_buf[r], bytes), fail);
        TPG_CHECK_GOTO(tpg__device_fill(ctx, op->trace_buf[r], NULL, bytes), fail);
        tpg_trace_header h;
        memset(&h, 0, sizeof h);
        h.magic = TPG_TRACE_MAGIC;
        h.version = TPG_TRACE_VERSION;
        h.ctas = ctas;
        h.cap = cap;
        TPG_CHECK_GOTO(tpg__device_fill(ctx, op->trace_buf[r], &h, sizeof h), fail);
        op->trace_bytes[r] = bytes;
        tpg__trace_apply(op, r);
    }
    TPG_CHECK_GOTO(tpg__graphs_update(op), fail);
    tpg__restore_device(saved);
    return TPG_OK;
fail:
    tpg__trace_free(op);
    if (op->built) (void)tpg__graphs_update(op); /* a failed update dropped the graphs already */
    tpg__restore_device(saved);
    return st;
}

tpg_status tpg__trace_read(tpg_op *op, int rank, void *host, size_t *bytes) {
    TPG_REQUIRE_HANDLE(op);
    tpg_ctx *ctx = op->ctx;
    if (!bytes) TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "trace: bytes is NULL");
    if (rank < ctx->local_begin || rank >= ctx->local_end || !op->trace_buf[rank])
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "trace: rank %d has no trace buffer (tpg__trace_enable first)", rank);
    tpg_trace_header h;
    const int saved = tpg__save_device();
    tpg_status st = TPG_OK;
    TPG_CHECK_GOTO(tpg__use_device(ctx, rank), out);
    TPG_CHECK_GOTO(tpg__op_read(op, rank, op->trace_buf[rank], &h, sizeof h), out);
    *bytes = (size_t)tpg_trace_bytes(h.ctas, h.cap);
    if (*bytes > op->trace_bytes[rank]) /* a header a kernel overwrote: never read past the allocation */
        TPG_FAIL_GOTO(ctx, TPG_ERR_CUDA, out, "trace: rank %d's header claims %zu bytes of a %zu-byte buffer", rank,
                      *bytes, (size_t)op->trace_bytes[rank]);
    if (host) TPG_CHECK_GOTO(tpg__op_read(op, rank, op->trace_buf[rank], host, *bytes), out);
out:
    tpg__restore_device(saved);
    return st;
}

tpg_status tpg__trace_rearm(tpg_op *op, int rank, cudaStream_t stream) {
    TPG_REQUIRE_HANDLE(op);
    tpg_ctx *ctx = op->ctx;
    if (rank < ctx->local_begin || rank >= ctx->local_end || !op->trace_buf[rank])
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "trace: rank %d has no trace buffer (tpg__trace_enable first)", rank);
    /* keep the host-written magic, version, ctas and cap; zero every record, count and timestamp */
    const size_t keep = offsetof(tpg_trace_header, barrier);
    const int saved = tpg__save_device();
    tpg_status st = TPG_OK;
    TPG_CHECK_GOTO(tpg__use_device(ctx, rank), out);
    TPG_CHECK_GOTO(tpg__check_stream_device(ctx, rank, stream), out); /* unordered with the call on another GPU */
    TPG_CHECK_CUDA_GOTO(ctx, cudaMemsetAsync((char *)op->trace_buf[rank] + keep, 0, op->trace_bytes[rank] - keep,
                                             stream), out);
out:
    tpg__restore_device(saved);
    return st;
}

tpg_status tpg__trace_disable(tpg_op *op) {
    TPG_REQUIRE_HANDLE(op);
    const int saved = tpg__save_device();
    tpg__trace_free(op);
    tpg_status st = op->built ? tpg__graphs_update(op) : TPG_OK;
    tpg__restore_device(saved);
    return st;
}
