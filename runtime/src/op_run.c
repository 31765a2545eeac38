/* Running an op: its launches (or their capture into a caller's graph) and tpg_op_sync. */
#include "checks.h"
#include "nccl.h"
#include "op_internal.h"

/* Every rank has tensors and the graphs exist. */
static tpg_status check_ready(tpg_op *op) {
    tpg_ctx *ctx = op->ctx;
    if (op->out_of_step)
        TPG_FAIL(ctx, TPG_ERR_NOT_READY, "an earlier tpg_op_run launched the call on some local ranks and failed on "
                 "another, so the ranks' launch epochs are out of step for good; destroy the op and create a new one");
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

/* Does another local rank of the context run on rank r's device (share_devices)? */
static int device_shared(const tpg_ctx *ctx, int r) {
    for (int q = ctx->local_begin; q < ctx->local_end; q++)
        if (q != r && ctx->devices[q] == ctx->devices[r]) return 1;
    return 0;
}

/* How s orders against the device's other streams (*rs, for tpg__streams_ordered). A stream being captured is
 * compared by its handle only: its work goes into the caller's graph, ordered by the capture's dependencies. Flags
 * are read only where another local rank shares the device (the only pairs compared): no query a launch otherwise. */
static tpg_status stream_kind(tpg_op *op, int r, cudaStream_t s, int capturing, tpg_rank_stream *rs) {
    *rs = (tpg_rank_stream){op->ctx->devices[r], s, TPG_STREAM_NON_BLOCKING};
    if (s == 0 || s == cudaStreamLegacy) rs->kind = TPG_STREAM_LEGACY;
    else if (s == cudaStreamPerThread) rs->kind = TPG_STREAM_PER_THREAD;
    else if (!capturing && device_shared(op->ctx, r)) {
        unsigned int flags = 0;
        TPG_CHECK_CUDA(op->ctx, cudaStreamGetFlags(s, &flags));
        rs->kind = flags & cudaStreamNonBlocking ? TPG_STREAM_NON_BLOCKING : TPG_STREAM_BLOCKING;
    }
    return TPG_OK;
}

/* *capturing = whether s (a stream of rank r's device, checked) is being captured, and *rs how it is ordered; a
 * capture already invalidated is refused here, before any rank of the call is launched or captured. The caller
 * restores the device. */
static tpg_status stream_capturing(tpg_op *op, int r, cudaStream_t s, int *capturing, tpg_rank_stream *rs) {
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    TPG_CHECK(tpg__use_device(op->ctx, r));
    TPG_CHECK(tpg__check_stream_device(op->ctx, r, s));
    TPG_CHECK_CUDA(op->ctx, cudaStreamIsCapturing(s, &capture));
    if (capture == cudaStreamCaptureStatusInvalidated)
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d: the stream's capture was invalidated before this call (an "
                 "earlier operation on it failed to be captured)", r);
    *capturing = capture == cudaStreamCaptureStatusActive;
    return stream_kind(op, r, s, *capturing, rs);
}

/* Launches rank r's graph on s, used as given (0 is the legacy default stream, as everywhere in CUDA), or adds
 * it to s's capture; *launched = 1 once the launch is queued (an error after it still leaves the call on the
 * device). The caller restores the device. */
static tpg_status launch_rank(tpg_op *op, int r, cudaStream_t s, int capturing, int *launched) {
    tpg_ctx *ctx = op->ctx;
    TPG_CHECK(tpg__use_device(ctx, r));
    if (capturing) return tpg__graph_capture(op, r, s); /* nothing runs now: the record of the last launch stays */
    if (op->pdl && tpg__single_kernel(op)) TPG_CHECK(tpg__launch_single(op, r, s));
    else TPG_CHECK_CUDA(ctx, cudaGraphLaunch(op->exec[r], s));
    *launched = 1;
    op->has_run = 1;
    /* what the op's waits wait for: this launch, not the caller's later work on s, nor s itself (it may be gone) */
    const cudaError_t recorded = cudaEventRecord(op->launched[r], s);
    if (recorded != cudaSuccess) { /* no event covers this launch: wait for it here, so that no later wait (a */
        (void)cudaStreamSynchronize(s); /* destroy's above all) passes while it runs (unbounded over NCCL, where a */
        /* missing peer's receive holds it: an event record that fails leaves a context CUDA has broken anyway) */
        return tpg__cuda_error(ctx, recorded, __FILE__, __LINE__, "cudaEventRecord(op->launched[r], s)");
    }
    return TPG_OK;
}

tpg_status tpg_op_run(tpg_op *op, struct CUstream_st *const *streams) {
    TPG_REQUIRE_HANDLE(op);
    TPG_CHECK(check_ready(op));
    tpg_ctx *ctx = op->ctx;
    const int saved = tpg__save_device();
    tpg_status st = TPG_OK;
    int capturing[TPG_MAX_TP] = {0};
    tpg_rank_stream rs[TPG_MAX_TP];
    /* all local ranks captured or none: a call half captured, half run now would put the ranks' epochs out of step */
    for (int r = ctx->local_begin; r < ctx->local_end && st == TPG_OK; r++) {
        st = stream_capturing(op, r, streams ? (cudaStream_t)streams[r] : ctx->streams[r], &capturing[r], &rs[r]);
        for (int q = ctx->local_begin; q < r && st == TPG_OK; q++) { /* ranks sharing a device (share_devices) */
            const char *why = tpg__streams_ordered(&rs[q], &rs[r]);
            if (why)
                TPG_FAIL_GOTO(ctx, TPG_ERR_INVALID_ARGUMENT, out, "ranks %d and %d run on device %d and were given %s: "
                              "the call's graphs would run one after the other, and rank %d's start barrier would wait "
                              "for rank %d until the timeout; give each rank its own non-blocking stream (or streams "
                              "NULL: the context's own)", q, r, ctx->devices[r], why, q, r);
        }
        if (st == TPG_OK && capturing[r] != capturing[ctx->local_begin])
            TPG_FAIL_GOTO(ctx, TPG_ERR_INVALID_ARGUMENT, out, "rank %d's stream is %s but rank %d's is %s: capture every "
                          "local rank's stream of a call, or none", r, capturing[r] ? "being captured" : "not being captured",
                          ctx->local_begin, capturing[ctx->local_begin] ? "being captured" : "not being captured");
    }
    int done = 0, launched = 0; /* ranks local_begin.. that got the call (captured or launched), and launched */
    for (int r = ctx->local_begin; r < ctx->local_end && st == TPG_OK; r++) {
        int one = 0;
        st = launch_rank(op, r, streams ? (cudaStream_t)streams[r] : ctx->streams[r], capturing[r], &one);
        launched += one;
        done += st == TPG_OK;
    }
    const int ranks = ctx->local_end - ctx->local_begin;
    if (st != TPG_OK && launched > 0 && launched < ranks) { /* a prefix of the ranks runs this call, the rest not */
        op->out_of_step = 1;
        tpg__append_error(ctx, "; ranks %d..%d launched this call and the others did not, so the op's ranks are out "
                          "of step for good: destroy the op and create a new one", ctx->local_begin,
                          ctx->local_begin + launched - 1);
    } else if (st != TPG_OK && done > 0 && capturing[ctx->local_begin]) { /* nothing ran: the op is in step */
        tpg__append_error(ctx, "; the capture holds ranks %d..%d's nodes only: do not launch that graph",
                          ctx->local_begin, ctx->local_begin + done - 1);
    }
out:
    tpg__restore_device(saved);
    return st;
}

tpg_status tpg_op_run_rank(tpg_op *op, int rank, struct CUstream_st *stream) {
    TPG_REQUIRE_HANDLE(op);
    if (rank < 0 || rank >= op->ctx->tp)
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d is out of range 0..%d", rank, op->ctx->tp - 1);
    if (!tpg__is_local(op->ctx, rank))
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d is not driven by this process (its rank is %d)", rank,
                 op->ctx->local_begin);
    TPG_CHECK(check_ready(op));
    const int saved = tpg__save_device();
    int capturing = 0;
    tpg_rank_stream unused; /* another rank's stream is not known here (tpgemm.h: each rank its own) */
    tpg_status st = stream_capturing(op, rank, (cudaStream_t)stream, &capturing, &unused);
    int launched = 0; /* one rank: nothing to fall out of step with in this process */
    if (st == TPG_OK) st = launch_rank(op, rank, (cudaStream_t)stream, capturing, &launched);
    tpg__restore_device(saved);
    return st;
}

tpg_status tpg__op_own_stream(tpg_op *op, int r, cudaStream_t *s) {
    TPG_CHECK(tpg__use_device(op->ctx, r));
    if (!op->own_stream[r])
        TPG_CHECK_CUDA(op->ctx, cudaStreamCreateWithFlags(&op->own_stream[r], cudaStreamNonBlocking));
    *s = op->own_stream[r];
    return TPG_OK;
}

tpg_status tpg__op_read(tpg_op *op, int r, const void *src, void *dst, size_t bytes) {
    cudaStream_t s;
    TPG_CHECK(tpg__op_own_stream(op, r, &s));
    TPG_CHECK_CUDA(op->ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
    TPG_CHECK_CUDA(op->ctx, cudaStreamSynchronize(s));
    return TPG_OK;
}

tpg_status tpg__op_clear_word(tpg_op *op, int r, unsigned int *word) {
    cudaStream_t s;
    TPG_CHECK(tpg__op_own_stream(op, r, &s));
    TPG_CHECK_CUDA(op->ctx, cudaMemsetAsync(word, 0, sizeof *word, s));
    TPG_CHECK_CUDA(op->ctx, cudaStreamSynchronize(s));
    return TPG_OK;
}

tpg_status tpg__op_read_words(tpg_op *op, int r, tpg_op_words *w) {
    const tpg_buffer_layout *b = &op->layout;
    const size_t bytes = b->pull_seen + sizeof(unsigned int) - b->epoch;
    if (bytes > sizeof w->at)
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "buffer layout: epoch .. pull_seen spans %zu B", bytes);
    return tpg__op_read(op, r, tpg_buf_word(op->buffer[r], b->epoch), w->at, bytes);
}

void tpg__op_own_streams_free(tpg_op *op) {
    for (int r = op->ctx->local_begin; r < op->ctx->local_end; r++) {
        if (!op->own_stream[r]) continue;
        (void)cudaSetDevice(op->ctx->devices[r]);
        (void)cudaStreamDestroy(op->own_stream[r]);
        op->own_stream[r] = NULL;
    }
}

tpg_status tpg_op_sync(tpg_op *op) {
    TPG_REQUIRE_HANDLE(op);
    tpg_ctx *ctx = op->ctx;
    const int saved = tpg__save_device();
    tpg_status st = TPG_OK;
    unsigned int status[TPG_MAX_TP] = {0};
    /* every rank waited for and read before any word is cleared: a rank's failed wait must not leave an earlier
     * rank's timeout cleared and unreported */
    for (int r = ctx->local_begin; r < ctx->local_end; r++) TPG_CHECK_GOTO(tpg__op_wait(op, r), out);
    for (int r = ctx->local_begin; r < ctx->local_end; r++)
        TPG_CHECK_GOTO(tpg__op_read(op, r, tpg_buf_word(op->buffer[r], op->layout.status), &status[r],
                                    sizeof status[r]), out);
    for (int r = ctx->local_begin; r < ctx->local_end; r++)
        if (status[r]) TPG_CHECK_GOTO(tpg__op_clear_word(op, r, tpg_buf_word(op->buffer[r], op->layout.status)), out);
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
