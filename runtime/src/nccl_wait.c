/* The NCCL transport's bounded wait for an op's launches (tpg__op_wait over NCCL: tpg_op_sync, destroy, rebuilds).
 *
 * Why not cudaStreamSynchronize: a receive from a rank that never makes the call keeps NCCL's kernel, and so the
 * launch, running for good (NCCL has no timeout). The device's own waits do time out - the GEMM's stage and tile
 * waits, the flag kernels' (transfer_flags.h), among them the wait after the GEMM for all transfers - and record it
 * in the status word and the launch's give-up word; a partial received incomplete (its sender gave up) sets that word
 * too. So this polls the op's own launch event (recorded after each launch, so the caller's later work on the stream
 * does not count) and, while the launch runs, those words: once the launch now running (its epoch = the give-up
 * word) has given up either way and is still busy TPG_NCCL_ABORT_GRACE_S later - its other waits return at once, so
 * only a transfer NCCL still owes it holds it: a peer that stopped - the context's communicator is aborted (nccl.h:
 * NCCL's kernels return), and the call fails with TPG_ERR_TIMEOUT.
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
#include "nccl_plan.h"
#include "op_internal.h"

#define TPG_NCCL_ABORT_GRACE_S 1.0  /* after the device's timeout: the launch's other waits have given up by then */

/* How the launch running on rank r gave up (tpg_nccl_launch_gave_up: 0 where it did not; a bit left over from an
 * earlier launch that nobody synced does not count once this one started). Read beside the launch, on the op's own
 * non-blocking stream, as one copy of the control words. Before the op's newest launch starts, its words are still
 * the previous launch's: after a call that gave up, later calls of the op are undefined anyway (tpg_op_sync). */
static tpg_status running_launch_gave_up(tpg_op *op, int r, unsigned int *how) {
    const tpg_buffer_layout *b = &op->layout;
    tpg_op_words w;
    TPG_CHECK(tpg__op_read_words(op, r, &w));
    *how = tpg_nccl_launch_gave_up(tpg__op_word(&w, b, b->status), tpg__op_word(&w, b, b->gave_up),
                                   tpg__op_word(&w, b, b->epoch));
    return TPG_OK;
}

/* Whether a launch on rank r of op or of another op of the context over NCCL runs and has given up (*how, as
 * above; *other: it is another op's). Such a launch never ends without an abort if NCCL still owes it a transfer,
 * and a launch queued behind it never starts. */
static tpg_status some_launch_gave_up(tpg_op *op, int r, unsigned int *how, int *other) {
    TPG_CHECK(running_launch_gave_up(op, r, how));
    *other = 0;
    for (tpg_op *o = op->ctx->ops; o && !*how; o = o->next_in_ctx) {
        int busy = 0;
        if (o == op || !tpg__op_over_nccl(o) || !(o->has_run || o->was_captured)) continue;
        TPG_CHECK(tpg__op_still_busy(o, r, &busy));
        if (busy) TPG_CHECK(running_launch_gave_up(o, r, how));
        *other = *how != 0;
    }
    return TPG_OK;
}

tpg_status tpg__nccl_op_wait(tpg_op *op, int r) {
    tpg_ctx *ctx = op->ctx;
    TPG_CHECK(tpg__use_device(ctx, r));
    const struct timespec pause = {0, 1000000}; /* 1 ms */
    double gave_up_at = -1.0, aborted_at = -1.0;
    unsigned int how = 0;   /* how the launch that gave up did (tpg_nccl_launch_gave_up) */
    int by_other = 0;       /* the launch that gave up is another op's */
    for (;;) {
        int busy = 0;
        TPG_CHECK(tpg__op_still_busy(op, r, &busy));
        if (!busy) break;
        if (aborted_at >= 0.0 && tpg_nccl_now_s() - aborted_at > TPG_NCCL_ABORT_DRAIN_S)
            TPG_FAIL(ctx, TPG_ERR_NCCL, "rank %d: the launch still runs %.0f s after its NCCL communicator was aborted",
                     r, TPG_NCCL_ABORT_DRAIN_S);
        if (aborted_at < 0.0) {
            TPG_CHECK(some_launch_gave_up(op, r, &how, &by_other));
            if (!how) gave_up_at = -1.0; /* that launch ended in time: a later one's grace is its own */
            else if (gave_up_at < 0.0) gave_up_at = tpg_nccl_now_s();
            if (how && tpg_nccl_now_s() - gave_up_at > TPG_NCCL_ABORT_GRACE_S) {
                TPG_CHECK(tpg_nccl_abort(ctx, ctx->nccl));
                aborted_at = tpg_nccl_now_s();
            }
        }
        nanosleep(&pause, NULL);
    }
    if (aborted_at >= 0.0 && how == TPG_DEVICE_TIMEOUT)
        TPG_FAIL(ctx, TPG_ERR_TIMEOUT, "rank %d (device %d): a stage wait %stimed out after %.3f s and NCCL's transfer "
                 "never completed (a peer did not make %s call); the context's NCCL communicator was aborted to end "
                 "it: destroy the context and create a new one", r, ctx->devices[r],
                 by_other ? "of another op's launch ahead of this one's " : "", (double)ctx->timeout_ns * 1e-9,
                 by_other ? "that" : "this");
    if (aborted_at >= 0.0)
        TPG_FAIL(ctx, TPG_ERR_TIMEOUT, "rank %d (device %d): a partial %sreceived over NCCL was incomplete (its "
                 "sender's wait gave up after the %.3f s timeout) and a later NCCL transfer never completed (that peer "
                 "stopped or aborted); the context's NCCL communicator was aborted to end it: destroy the context and "
                 "create a new one", r, ctx->devices[r],
                 by_other ? "that another op's launch ahead of this one's " : "", (double)ctx->timeout_ns * 1e-9);
    if (tpg_nccl_aborted(ctx->nccl) && (op->has_run || op->was_captured))
        TPG_FAIL(ctx, TPG_ERR_NCCL, "rank %d (device %d): the context's NCCL communicator was aborted after a timeout "
                 "(of this op or another one), so a call of this op then in flight may have used a receive NCCL cut "
                 "short: destroy the context and create a new one", r, ctx->devices[r]);
    return TPG_OK;
}
