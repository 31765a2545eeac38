/* Running an op: its launches (or their capture into a caller's graph) and tpg_op_sync. */
#include "checks.h"
#include "nccl.h"
#include "op_internal.h"

/* Every rank has tensors and the graphs exist. */
static tpg_status check_ready(tpg_op *op) {
    tpg_ctx *ctx = op->ctx;
    for (int r = 0; r < ctx->tp; r++)
        if (!op->has_tensors[r])
            TPG_FAIL(ctx, TPG_ERR_NOT_READY, "rank %d has no tensors; call tpg_op_set_tensors for every rank first", r);
    if (!op->built)
        TPG_FAIL(ctx, TPG_ERR_NOT_READY, "the graphs are not built: an earlier call that builds or updates them failed "
                 "(tpg_op_set_tensors, set_scalars, set_copy_chunks, set_overlap_barriers, set_gather_copy_engine or "
                 "set_rs_ring); call tpg_op_set_tensors for every rank again");
    if (tpg__op_over_nccl(op) && tpg_nccl_aborted(ctx->nccl))
        TPG_FAIL(ctx, TPG_ERR_NCCL, "the context's NCCL communicator was aborted after a timeout; destroy the context "
                 "and create a new one");
    return TPG_OK;
}

/* *capturing = whether s (a stream of rank r's device, checked) is being captured; a capture already invalidated is
 * refused here, before any rank of the call is launched or captured. The caller restores the device. */
static tpg_status stream_capturing(tpg_op *op, int r, cudaStream_t s, int *capturing) {
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    TPG_CHECK(tpg__use_device(op->ctx, r));
    TPG_CHECK(tpg__check_stream_device(op->ctx, r, s));
    TPG_CHECK_CUDA(op->ctx, cudaStreamIsCapturing(s, &capture));
    if (capture == cudaStreamCaptureStatusInvalidated)
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d: the stream's capture was invalidated before this call (an "
                 "earlier operation on it failed to be captured)", r);
    *capturing = capture == cudaStreamCaptureStatusActive;
    return TPG_OK;
}

/* Launches rank r's graph on s, used as given (0 is the legacy default stream, as everywhere in CUDA), or adds
 * it to s's capture; the caller restores the device. */
static tpg_status launch_rank(tpg_op *op, int r, cudaStream_t s, int capturing) {
    tpg_ctx *ctx = op->ctx;
    TPG_CHECK(tpg__use_device(ctx, r));
    if (capturing) return tpg__graph_capture(op, r, s); /* nothing runs now: the record of the last launch stays */
    if (op->pdl && tpg__single_kernel(op)) TPG_CHECK(tpg__launch_single(op, r, s));
    else TPG_CHECK_CUDA(ctx, cudaGraphLaunch(op->exec[r], s));
    /* what the op's waits wait for: this launch, not the caller's later work on s, nor s itself (it may be gone) */
    TPG_CHECK_CUDA(ctx, cudaEventRecord(op->launched[r], s));
    op->has_run = 1;
    return TPG_OK;
}

tpg_status tpg_op_run(tpg_op *op, void *const *streams) {
    if (!op) return TPG_ERR_INVALID_ARGUMENT;
    TPG_CHECK(check_ready(op));
    tpg_ctx *ctx = op->ctx;
    const int saved = tpg__save_device();
    tpg_status st = TPG_OK;
    int capturing[TPG_MAX_TP] = {0};
    /* all local ranks captured or none: a call half captured, half run now would put the ranks' epochs out of step */
    for (int r = ctx->local_begin; r < ctx->local_end && st == TPG_OK; r++) {
        st = stream_capturing(op, r, streams ? (cudaStream_t)streams[r] : ctx->streams[r], &capturing[r]);
        if (st == TPG_OK && capturing[r] != capturing[ctx->local_begin])
            TPG_FAIL_GOTO(ctx, TPG_ERR_INVALID_ARGUMENT, out, "rank %d's stream is %s but rank %d's is %s: capture every "
                          "local rank's stream of a call, or none", r, capturing[r] ? "being captured" : "not being captured",
                          ctx->local_begin, capturing[ctx->local_begin] ? "being captured" : "not being captured");
    }
    for (int r = ctx->local_begin; r < ctx->local_end && st == TPG_OK; r++)
        st = launch_rank(op, r, streams ? (cudaStream_t)streams[r] : ctx->streams[r], capturing[r]);
out:
    tpg__restore_device(saved);
    return st;
}

tpg_status tpg_op_run_rank(tpg_op *op, int rank, void *stream) {
    if (!op) return TPG_ERR_INVALID_ARGUMENT;
    if (rank < 0 || rank >= op->ctx->tp)
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d is out of range 0..%d", rank, op->ctx->tp - 1);
    if (!tpg__is_local(op->ctx, rank))
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d is not driven by this process (its rank is %d)", rank,
                 op->ctx->local_begin);
    TPG_CHECK(check_ready(op));
    const int saved = tpg__save_device();
    int capturing = 0;
    tpg_status st = stream_capturing(op, rank, (cudaStream_t)stream, &capturing);
    if (st == TPG_OK) st = launch_rank(op, rank, (cudaStream_t)stream, capturing);
    tpg__restore_device(saved);
    return st;
}

/* Reads and clears rank's status word (the op is idle: the caller waited for its launches). The clear runs on s (the
 * context's stream of the rank) and is waited for: a plain cudaMemset would go to the legacy stream, which the
 * context's non-blocking streams do not wait for, so the next launch could race it (and lose a new bit, or see the
 * old one). */
static tpg_status read_status(tpg_op *op, int rank, cudaStream_t s, unsigned int *status) {
    unsigned int *word = tpg_buf_word(op->buffer[rank], op->layout.status);
    TPG_CHECK_CUDA(op->ctx, cudaMemcpy(status, word, sizeof *status, cudaMemcpyDeviceToHost));
    if (*status) {
        TPG_CHECK_CUDA(op->ctx, cudaMemsetAsync(word, 0, sizeof *word, s));
        TPG_CHECK_CUDA(op->ctx, cudaStreamSynchronize(s));
    }
    return TPG_OK;
}

tpg_status tpg_op_sync(tpg_op *op) {
    if (!op) return TPG_ERR_INVALID_ARGUMENT;
    tpg_ctx *ctx = op->ctx;
    const int saved = tpg__save_device();
    tpg_status st = TPG_OK;
    unsigned int status[TPG_MAX_TP] = {0};
    for (int r = ctx->local_begin; r < ctx->local_end; r++) {
        TPG_CHECK_GOTO(tpg__op_wait(op, r), out);
        TPG_CHECK_GOTO(read_status(op, r, ctx->streams[r], &status[r]), out);
    }
    for (int r = ctx->local_begin; r < ctx->local_end; r++) {
        if (!status[r]) continue;
        if (status[r] == TPG_DEVICE_PEER_GAVE_UP && tpg__op_over_nccl(op))
            TPG_FAIL_GOTO(ctx, TPG_ERR_TIMEOUT, out,
                          "rank %d (device %d): a partial this rank received over NCCL was incomplete (its sender's wait "
                          "timed out or gave up before all its tiles were written), so this rank's output of the call "
                          "is not valid (status 0x%x)", r, ctx->devices[r], status[r]);
        if (status[r] == TPG_DEVICE_PEER_GAVE_UP)
            TPG_FAIL_GOTO(ctx, TPG_ERR_TIMEOUT, out,
                          "rank %d (device %d): a peer gave up on this call after its %.3f s timeout while this rank "
                          "was late, so its closing barrier no longer held the inputs this rank read; this rank's "
                          "output of the call is not valid (status 0x%x)", r, ctx->devices[r],
                          (double)ctx->timeout_ns * 1e-9, status[r]);
        const char *what = (status[r] & TPG_DEVICE_BARRIER_TIMEOUT) && (status[r] & TPG_DEVICE_TIMEOUT)
                               ? "a cross-device barrier and a stage wait"
                           : (status[r] & TPG_DEVICE_BARRIER_TIMEOUT) ? "a cross-device barrier"
                                                                      : "a stage wait (peer data or flag)";
        TPG_FAIL_GOTO(ctx, TPG_ERR_TIMEOUT, out,
                      "rank %d (device %d): %s timed out after %.3f s (status 0x%x); check that every rank runs the "
                      "same op", r, ctx->devices[r], what, (double)ctx->timeout_ns * 1e-9, status[r]);
    }
    /* after the timeouts, which say more: the GEMM's epoch must still agree with the start barrier's */
    for (int r = ctx->local_begin; r < ctx->local_end; r++) TPG_CHECK_GOTO(tpg__check_epochs(op, r), out);
out:
    tpg__restore_device(saved);
    return st;
}
