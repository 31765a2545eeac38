/* The NCCL transport's part of a rank's graph (tpg_rank_config.transport = TPG_TRANSPORT_NCCL).
 *
 * graph.c builds the rank's graph from a fixed two-node list, the start node (the barrier kernel with no
 * peers: it only advances the rank's epoch) and the persistent GEMM after it, and then this file adds the
 * transfers as a second branch after the start node, by stream capture into that graph
 * (cudaStreamBeginCaptureToGraph): NCCL records its own kernels and host nodes there as it does in any
 * captured stream. The branch runs the steps of nccl_plan.h in order, each in pieces:
 *   all-gather      per copy piece c: ncclSend(own shard piece) + ncclRecv(slot piece) ; raise stage flag s, piece c
 *   reduce-scatter  per row band b (nccl_plan.h): wait for the band's tile flags and write its verdict word
 *                   (transfer_flags.h) ; ncclSend(band + verdict) + ncclRecv(receive bank band + verdict) ; raise the
 *                   receive bank's flags of the band if the sender's verdict is this epoch
 * then raises transfers_done, while the GEMM runs beside it on all SMs but TPG_NCCL_FREE_SMS (ctx_rank.c), where
 * NCCL's and the flag kernels run. After the GEMM a last flag kernel waits for transfers_done: NCCL never times
 * out, and a send whose peer has gone would otherwise leave the stream busy for good with nothing on the device
 * reporting it. The steps are strictly ordered on one stream: NCCL requires the same order of point-to-point
 * calls on every rank, and one rank's graph may run only one of them at a time.
 *
 * What a rank writes is its own memory only, ordered by its own stream: the next call's receive into a slot
 * follows this call's GEMM, which read it. Hence no start or closing barrier across ranks.
 * The op's waits on these graphs are bounded (nccl_wait.c). */
#include <string.h>

#include "checks.h"
#include "nccl.h"
#include "nccl_plan.h"
#include "op_internal.h"
#include "transfer_flags.h"

/* A flag kernel's parameters for rank (trailer: NULL, or the verdict word of a reduce-scatter slot). */
static tpg_flags_params flags_params(const tpg_op *op, int rank, tpg_flags_mode mode, unsigned int *flags, int count,
                                     unsigned int *trailer) {
    tpg_flags_params p;
    memset(&p, 0, sizeof p);
    p.mode = mode;
    p.count = count;
    p.flags = flags;
    p.epoch = tpg_buf_word(op->buffer[rank], op->layout.epoch);
    p.status = tpg_buf_word(op->buffer[rank], op->layout.status);
    p.gave_up_epoch = tpg_buf_word(op->buffer[rank], op->layout.gave_up);
    p.timeout_ns = op->ctx->timeout_ns;
    p.trailer = trailer;
    return p;
}

/* The verdict word after the partial in slot `slot` of rank's buffer (the slot's last TPG_FLAGS_TRAILER_BYTES). */
static unsigned int *trailer_of(const tpg_op *op, int rank, int slot) {
    return (unsigned int *)((char *)tpg_buf_slot(op->buffer[rank], &op->layout, slot) + op->layout.slot_bytes_used -
                            TPG_FLAGS_TRAILER_BYTES);
}

/* One flag kernel launch on s. */
static tpg_status flags_launch(tpg_op *op, int rank, tpg_flags_mode mode, unsigned int *flags, int count,
                               unsigned int *trailer, cudaStream_t s) {
    tpg_flags_params p = flags_params(op, rank, mode, flags, count, trailer);
    void *args[1] = {&p};
    TPG_CHECK_CUDA(op->ctx, cudaLaunchKernel(tpg_flags_kernel_entry(), (dim3){1, 1, 1}, (dim3){TPG_FLAGS_THREADS, 1, 1},
                                             args, 0, s));
    return TPG_OK;
}

/* The rotating shard rank r's all-gather transfers send (NULL for reduce-scatter, which sends its own slots). */
static const void *sent_shard(const tpg_op *op, int r) {
    if (op->sched->comm != TPG_COMM_ALLGATHER) return NULL;
    return op->sched->rotating == TPG_OPERAND_A ? op->tensors[r].a : op->tensors[r].b;
}

/* All-gather step: the shard in the op's copy pieces (copy_plan.h), each received and then announced by its own
 * stage flag, so that the stage's first tiles start while later pieces are in flight. */
static tpg_status allgather_step(tpg_op *op, int rank, const tpg_nccl_step *st, cudaStream_t s) {
    char *shard = (char *)sent_shard(op, rank), *slot = tpg_buf_slot(op->buffer[rank], &op->layout, st->recv_slot);
    for (int c = 0; c < op->copy.chunks; c++) {
        size_t off = 0, bytes = 0;
        tpg_copy_plan_piece(&op->copy, c, &off, &bytes);
        const tpg_nccl_msg m[2] = {{shard + off, bytes, st->send_peer, 1}, {slot + off, bytes, st->recv_peer, 0}};
        TPG_CHECK(tpg_nccl_exchange(op->ctx, op->ctx->nccl, m, 2, s));
        TPG_CHECK(flags_launch(op, rank, TPG_FLAGS_RAISE, tpg_buf_stage_flags(op->buffer[rank], &op->layout, st->stage) + c,
                               1, NULL, s));
    }
    return TPG_OK;
}

/* Reduce-scatter step: the stage's partial in row bands (nccl_plan.h, tpg_nccl_band), each sent once its tiles
 * wrote it, with its verdict word, and announced on the receiver by its tiles' flags: the next stage's first tiles
 * add their partial while later bands are still computed or in flight. */
static tpg_status reduce_scatter_step(tpg_op *op, int rank, const tpg_nccl_step *st, cudaStream_t s) {
    void *own = op->buffer[rank];
    const tpg_buffer_layout *b = &op->layout;
    const int recv = tpg_buf_recv_slot(b, st->recv_slot), bands = tpg__nccl_rs_bands(op);
    for (int i = 0; i < bands; i++) {
        const tpg_nccl_band band = tpg_nccl_band_of(&op->nccl_rows, i, bands);
        char *out = (char *)tpg_buf_slot(own, b, st->send_slot) + band.offset;
        char *in = (char *)tpg_buf_slot(own, b, recv) + band.offset;
        unsigned int *out_verdict = trailer_of(op, rank, st->send_slot) + i, *in_verdict = trailer_of(op, rank, recv) + i;
        TPG_CHECK(flags_launch(op, rank, TPG_FLAGS_WAIT, tpg_buf_tile_flags(own, b, st->send_slot) + band.tile0,
                               (int)band.tiles, out_verdict, s));
        const tpg_nccl_msg m[4] = {{out, band.bytes, st->send_peer, 1}, {out_verdict, 4, st->send_peer, 1},
                                   {in, band.bytes, st->recv_peer, 0}, {in_verdict, 4, st->recv_peer, 0}};
        TPG_CHECK(tpg_nccl_exchange(op->ctx, op->ctx->nccl, m, 4, s));
        TPG_CHECK(flags_launch(op, rank, TPG_FLAGS_RAISE, tpg_buf_tile_flags(own, b, recv) + band.tile0, (int)band.tiles,
                               in_verdict, s));
    }
    return TPG_OK;
}

/* One step of the plan on s (the captured stream). */
static tpg_status step_capture(tpg_op *op, int rank, const tpg_nccl_step *st, cudaStream_t s) {
    return op->sched->comm == TPG_COMM_ALLGATHER ? allgather_step(op, rank, st, s) : reduce_scatter_step(op, rank, st, s);
}

/* The wait after the GEMM (header comment): a kernel node on `gemm`. */
static tpg_status tail_add(tpg_op *op, int rank, cudaGraphNode_t gemm) {
    tpg_flags_params p = flags_params(op, rank, TPG_FLAGS_WAIT, tpg_buf_word(op->buffer[rank], op->layout.transfers_done),
                                      1, NULL);
    void *args[1] = {&p};
    struct cudaKernelNodeParams k;
    memset(&k, 0, sizeof k);
    k.func = (void *)tpg_flags_kernel_entry();
    k.gridDim = (dim3){1, 1, 1};
    k.blockDim = (dim3){TPG_FLAGS_THREADS, 1, 1};
    k.kernelParams = args;
    cudaGraphNode_t node;
    TPG_CHECK_CUDA(op->ctx, cudaGraphAddKernelNode(&node, op->graph[rank], &gemm, 1, &k));
    return TPG_OK;
}

tpg_status tpg__nccl_transfers_add(tpg_op *op, int rank, cudaGraphNode_t after, cudaGraphNode_t gemm) {
    tpg_ctx *ctx = op->ctx;
    tpg_nccl_step steps[TPG_MAX_TP - 1];
    char why[256];
    const int n = tpg_nccl_plan(op->sched, rank, steps, why, sizeof why);
    if (n < 0) TPG_FAIL(ctx, TPG_ERR_UNSUPPORTED, "the NCCL transport cannot run %s: %s", op->config->name, why);
    cudaStream_t s;
    TPG_CHECK(tpg__op_own_stream(op, rank, &s));
    op->nccl_shard[rank] = sent_shard(op, rank);
    TPG_CHECK_CUDA(ctx, cudaStreamBeginCaptureToGraph(s, op->graph[rank], &after, NULL, 1, cudaStreamCaptureModeRelaxed));
    tpg_status st = TPG_OK;
    for (int i = 0; i < n && st == TPG_OK; i++) st = step_capture(op, rank, &steps[i], s);
    if (st == TPG_OK)
        st = flags_launch(op, rank, TPG_FLAGS_RAISE, tpg_buf_word(op->buffer[rank], op->layout.transfers_done), 1, NULL, s);
    TPG_CHECK(tpg__capture_end(ctx, s, st, "cudaStreamEndCapture(NCCL transfers)"));
    return tail_add(op, rank, gemm);
}

int tpg__nccl_needs_rebuild(const tpg_op *op, int r) { return op->nccl_shard[r] != sent_shard(op, r); }

/* each band's verdict word lies in the slot's trailer */
_Static_assert(TPG_NCCL_RS_BANDS * sizeof(unsigned int) <= TPG_FLAGS_TRAILER_BYTES, "a verdict word per band");

int tpg__nccl_rs_bands(const tpg_op *op) { return tpg_nccl_band_count(&op->nccl_rows); }
