/* The NCCL transport's bounded wait for an op's launches (tpg__op_wait over NCCL: tpg_op_sync, destroy, rebuilds).
 *
 * Why not cudaStreamSynchronize: a receive from a rank that never makes the call keeps NCCL's kernel, and so the
 * launch, running for good (NCCL has no timeout). The device's own waits do time out - the GEMM's stage and tile
 * waits, the flag kernels' (transfer_flags.h), among them the wait after the GEMM for all transfers - and record it
 * in the status word and the launch's give-up word. So this polls the op's own launch event (recorded after each
 * launch, so the caller's later work on the stream does not count) and, while the launch runs, those words: once
 * the launch now running (its epoch = the give-up word) has timed out and is still busy TPG_NCCL_ABORT_GRACE_S later,
 * the context's communicator is aborted (nccl.h: NCCL's kernels return), and the call fails with TPG_ERR_TIMEOUT.
 * Another op's launch counts too: on a stream both use (the context's own, streams NULL), the launch waited for may
 * be queued behind one of another op that lost its peer, whose stuck receive holds it back for good, and which no
 * wait of that op may ever come to abort (a caller that syncs its last op only).
 * After an abort every later wait of any op of the context fails with TPG_ERR_NCCL: a call in flight then may have
 * added a receive that NCCL cut short. */
#define _POSIX_C_SOURCE 199309L /* nanosleep, clock_gettime under -std=c11 */
#include <string.h>
#include <time.h>

#include "checks.h"
#include "epoch.h"
#include "nccl.h"
#include "op_internal.h"

#define TPG_NCCL_ABORT_GRACE_S 1.0  /* after the device's timeout: the launch's other waits have given up by then */

/* Whether the launch running on rank r has timed out: the status word has the timeout bit and the give-up word
 * holds the running launch's epoch (a bit left over from an earlier call that nobody synced does not count). Read
 * beside the launch, on the op's own non-blocking stream, as one copy of the control words. */
static tpg_status running_launch_timed_out(tpg_op *op, int r, int *timed_out) {
    const tpg_buffer_layout *b = &op->layout;
    tpg_op_words w;
    TPG_CHECK(tpg__op_read_words(op, r, &w));
    const unsigned int epoch = tpg__op_word(&w, b, b->epoch), status = tpg__op_word(&w, b, b->status),
                       gave_up = tpg__op_word(&w, b, b->gave_up);
    *timed_out = (status & TPG_DEVICE_TIMEOUT) && tpg_epoch_gave_up(gave_up, epoch);
    return TPG_OK;
}

/* Whether a launch on rank r of op or of another op of the context over NCCL runs and has timed out (*other: it is
 * another op's). Such a launch never ends without an abort, and a launch queued behind it never starts. */
static tpg_status some_launch_timed_out(tpg_op *op, int r, int *timed_out, int *other) {
    TPG_CHECK(running_launch_timed_out(op, r, timed_out));
    *other = 0;
    for (tpg_op *o = op->ctx->ops; o && !*timed_out; o = o->next_in_ctx) {
        int busy = 0;
        if (o == op || !tpg__op_over_nccl(o) || !(o->has_run || o->was_captured)) continue;
        TPG_CHECK(tpg__op_still_busy(o, r, &busy));
        if (busy) TPG_CHECK(running_launch_timed_out(o, r, timed_out));
        *other = *timed_out;
    }
    return TPG_OK;
}

tpg_status tpg__nccl_op_wait(tpg_op *op, int r) {
    tpg_ctx *ctx = op->ctx;
    TPG_CHECK(tpg__use_device(ctx, r));
    const struct timespec pause = {0, 1000000}; /* 1 ms */
    double timed_out_at = -1.0, aborted_at = -1.0;
    int by_other = 0; /* the launch that timed out is another op's */
    for (;;) {
        int busy = 0, timed_out = 0;
        TPG_CHECK(tpg__op_still_busy(op, r, &busy));
        if (!busy) break;
        if (aborted_at >= 0.0 && tpg_nccl_now_s() - aborted_at > TPG_NCCL_ABORT_DRAIN_S)
            TPG_FAIL(ctx, TPG_ERR_NCCL, "rank %d: the launch still runs %.0f s after its NCCL communicator was aborted",
                     r, TPG_NCCL_ABORT_DRAIN_S);
        if (aborted_at < 0.0) TPG_CHECK(some_launch_timed_out(op, r, &timed_out, &by_other));
        if (aborted_at < 0.0 && !timed_out) timed_out_at = -1.0; /* that launch ended in time: a later one's grace */
        if (timed_out && timed_out_at < 0.0) timed_out_at = tpg_nccl_now_s(); /* is its own */
        if (timed_out && tpg_nccl_now_s() - timed_out_at > TPG_NCCL_ABORT_GRACE_S) {
            TPG_CHECK(tpg_nccl_abort(ctx, ctx->nccl));
            aborted_at = tpg_nccl_now_s();
        }
        nanosleep(&pause, NULL);
    }
    if (aborted_at >= 0.0)
        TPG_FAIL(ctx, TPG_ERR_TIMEOUT, "rank %d (device %d): a stage wait %stimed out after %.3f s and NCCL's transfer "
                 "never completed (a peer did not make %s call); the context's NCCL communicator was aborted to end "
                 "it: destroy the context and create a new one", r, ctx->devices[r],
                 by_other ? "of another op's launch ahead of this one's " : "", (double)ctx->timeout_ns * 1e-9,
                 by_other ? "that" : "this");
    if (tpg_nccl_aborted(ctx->nccl) && (op->has_run || op->was_captured))
        TPG_FAIL(ctx, TPG_ERR_NCCL, "rank %d (device %d): the context's NCCL communicator was aborted after a timeout "
                 "(of this op or another one), so a call of this op then in flight may have used a receive NCCL cut "
                 "short: destroy the context and create a new one", r, ctx->devices[r]);
    return TPG_OK;
}
