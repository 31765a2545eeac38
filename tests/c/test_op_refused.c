/* tpg_op_set_tensors (one process) whose graph build fails drops the tensors it was given, as tpgemm.h says: a later
 * call that rebuilds the graphs (tpg_op_set_scalars) once rebuilt them on buffers the caller was told were not taken.
 * The op is put together by hand (no GPU): its ranks on device ordinals that no machine has, so that the first
 * CUDA call of the build fails on a machine with GPUs or without. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx_internal.h"
#include "op_internal.h"
#include "tpg_test.h"

enum { TP = 2, SIDE = 1024 };

static tpg_op *two_rank_op_of(tpg_ctx *ctx, const char *schedule) {
    int idx = -1;
    if (tpg_config_find(NULL, schedule, TP, TPG_DTYPE_BF16, &idx) != TPG_OK) return NULL;
    ctx->tp = TP, ctx->local_end = TP, ctx->devices[0] = 998, ctx->devices[1] = 999;
    ctx->sm_count[0] = ctx->sm_count[1] = 132;
    tpg_op *op = calloc(1, sizeof *op);
    if (!op) return NULL;
    op->ctx = ctx, op->config = &tpg_configs[idx], op->sched = op->config->schedule, op->kernel = op->config->kernel;
    op->desc = (tpg_op_desc){idx, SIDE, SIDE, SIDE, 1, 1.0f, 0.0f};
    if (tpg_shapes_init(op->sched, TP, SIDE, SIDE, SIDE, 1, 2, &op->shapes, NULL, 0) != TPG_OK) return NULL;
    op->copy = tpg_copy_plan_for(op->sched, op->kernel, &op->shapes, 1);
    tpg_peers_init(&op->peers, TP);
    static char buf[TP][4096] __attribute__((aligned(256)));
    for (int r = 0; r < TP; r++) {
        op->buffer[r] = buf[r];
        tpg_peers_publish(&op->peers, r, TPG_PEER_BUFFER, buf[r]);
    }
    ctx->num_ops = 1;
    return op;
}

static tpg_op *two_rank_op(tpg_ctx *ctx) { return two_rank_op_of(ctx, "AllGather1D_TilingCD_RotatingA"); }

/* Whether a CUDA device is visible: there the tensor check's first CUDA call (cudaPointerGetAttributes, which fails
 * without a driver and is then passed over) sees the fake pointers as host memory and asks the fake ordinal 998 for
 * its pageable-memory attribute, so rank 0's tpg_op_set_tensors fails before any build (TPG_ERR_CUDA; seen on an H100,
 * 2026-12-07) and the case cannot reach the build it is about. CI has no GPU: the case runs there. */
static int cuda_device_visible(void) {
    int n = 0;
    const int visible = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    (void)cudaGetLastError();
    return visible;
}

/* what two_rank_op and the cases' calloc made: the op's peer table, the op, the context */
static void free_hand_made(tpg_op *op, tpg_ctx *ctx) {
    tpg_peers_clear(&op->peers);
    free(op);
    free(ctx);
}

/* 1 (and the line saying so) where a CUDA device is visible: the case `name` needs a machine without one (`why`) */
static int skipped_where_a_device_is_visible(const char *name, const char *why) {
    if (!cuda_device_visible()) return 0;
    printf("skipped %s: a CUDA device is visible (the case needs a machine without one: %s)\n", name, why);
    return 1;
}

TPG_TEST(a_failed_build_drops_the_tensors_it_was_given) {
    if (skipped_where_a_device_is_visible("a_failed_build_drops_the_tensors_it_was_given",
                                          "its ranks sit on device ordinals no machine has"))
        return;
    tpg_ctx *ctx = calloc(1, sizeof *ctx);
    TPG_ASSERT(ctx);
    tpg_op *op = two_rank_op(ctx);
    TPG_ASSERT(op);
    const tpg_tensors t0 = {(void *)0x10000, (void *)0x20000, NULL, (void *)0x30000, NULL, NULL};
    const tpg_tensors t1 = {(void *)0x40000, (void *)0x50000, NULL, (void *)0x60000, NULL, NULL};
    TPG_EXPECT_EQ_INT(tpg_op_set_tensors(op, 0, &t0), TPG_OK); /* rank 1 not set yet: nothing is built */
    TPG_EXPECT(op->has_tensors[0]);
    TPG_EXPECT(tpg_op_set_tensors(op, 1, &t1) != TPG_OK); /* every rank set: the build fails at its first CUDA call */
    TPG_EXPECT(!op->has_tensors[1] && op->tensors[1].a == NULL && !op->built);
    TPG_EXPECT(op->has_tensors[0]); /* a rank not named in the failed call keeps its tensors */
    TPG_EXPECT_EQ_INT(tpg_op_run(op, NULL), TPG_ERR_NOT_READY);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "rank 1 has no tensors");
    TPG_EXPECT_EQ_INT(tpg_op_set_scalars(op, 2.0f, 0.0f), TPG_OK); /* builds nothing on the dropped tensors */
    TPG_EXPECT(!op->built);
    free_hand_made(op, ctx);
}

/* tpg_op_run refuses streams that would run one local rank's launch behind another's on a shared device. */
TPG_TEST(streams_that_order_ranks_on_one_device_are_found) {
    void *const s1 = (void *)0x1000, *const s2 = (void *)0x2000;
    const tpg_rank_stream legacy0 = {0, NULL, TPG_STREAM_LEGACY}, legacy0_handle = {0, (void *)0x1, TPG_STREAM_LEGACY},
                          legacy1 = {1, NULL, TPG_STREAM_LEGACY}, per_thread0 = {0, (void *)0x2, TPG_STREAM_PER_THREAD},
                          nb0 = {0, s1, TPG_STREAM_NON_BLOCKING}, nb0b = {0, s2, TPG_STREAM_NON_BLOCKING},
                          nb1 = {1, s1, TPG_STREAM_NON_BLOCKING}, bl0 = {0, s2, TPG_STREAM_BLOCKING};
    TPG_EXPECT(tpg__streams_ordered(&legacy0, &legacy1) == NULL); /* 0 on two devices: two streams */
    TPG_EXPECT(tpg__streams_ordered(&nb0, &nb1) == NULL);
    TPG_EXPECT(tpg__streams_ordered(&nb0, &nb0b) == NULL);
    TPG_EXPECT(tpg__streams_ordered(&nb0, &bl0) == NULL); /* a blocking stream waits for the legacy one only */
    TPG_EXPECT(tpg__streams_ordered(&per_thread0, &bl0) == NULL);
    TPG_EXPECT(tpg__streams_ordered(&legacy0, &nb0) == NULL);
    TPG_EXPECT_STR_CONTAINS(tpg__streams_ordered(&nb0, &nb0), "the same stream");
    TPG_EXPECT_STR_CONTAINS(tpg__streams_ordered(&legacy0, &legacy0_handle), "legacy default stream");
    TPG_EXPECT_STR_CONTAINS(tpg__streams_ordered(&legacy0, &bl0), "holds back");
    TPG_EXPECT_STR_CONTAINS(tpg__streams_ordered(&per_thread0, &legacy0), "holds back");
    TPG_EXPECT_STR_CONTAINS(tpg__streams_ordered(&per_thread0, &per_thread0), "the same stream");
}

/* tpg_op_set_overlap_barriers refuses, before any CUDA call, what has no barrier to overlap (TP = 1) and a kernel in
 * clusters (a barrier kernel gets no SM beside a cluster launch); the op keeps its mode. */
TPG_TEST(overlap_barriers_refused_at_tp1_and_in_clusters) {
    tpg_ctx *ctx = calloc(1, sizeof *ctx);
    TPG_ASSERT(ctx);
    tpg_op *op = two_rank_op(ctx);
    TPG_ASSERT(op);
    const tpg_schedule_table *two = op->sched;
    int one = -1;
    TPG_ASSERT_EQ_INT(tpg_config_find(NULL, "AllGather1D_TilingCD_RotatingA", 1, TPG_DTYPE_BF16, &one), TPG_OK);
    op->sched = tpg_configs[one].schedule;
    TPG_EXPECT_EQ_INT(tpg_op_set_overlap_barriers(op, 1), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "a TP = 1 op has no barriers to overlap");
    op->sched = two;
    const tpg_kernel_desc *clustered = NULL;
    for (int i = 0; i < tpg_num_configs && !clustered; i++)
        if (tpg_configs[i].kernel->cluster_m * tpg_configs[i].kernel->cluster_n > 1) clustered = tpg_configs[i].kernel;
    TPG_ASSERT(clustered != NULL);
    op->kernel = clustered;
    TPG_EXPECT_EQ_INT(tpg_op_set_overlap_barriers(op, 1), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "runs in clusters of");
    TPG_EXPECT(!op->overlap);
    free_hand_made(op, ctx);
}

/* tpg_op_create's checks of the description, before any allocation or CUDA call: a config index one past the table
 * and a config of another TP than the context's. */
TPG_TEST(op_create_refuses_a_config_out_of_range_or_of_another_tp) {
    tpg_ctx *ctx = calloc(1, sizeof *ctx);
    TPG_ASSERT(ctx);
    ctx->tp = TP, ctx->local_end = TP, ctx->devices[0] = 998, ctx->devices[1] = 999;
    tpg_op *op = (tpg_op *)1;
    tpg_op_desc d = {tpg_config_count(), SIDE, SIDE, SIDE, 1, 1.0f, 0.0f};
    TPG_EXPECT_EQ_INT(tpg_op_create(ctx, &d, &op), TPG_ERR_UNKNOWN_CONFIG);
    TPG_EXPECT(op == NULL);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "is out of range");
    TPG_ASSERT_EQ_INT(tpg_config_find(NULL, "AllGather1D_TilingCD_RotatingA", 1, TPG_DTYPE_BF16, &d.config), TPG_OK);
    TPG_EXPECT_EQ_INT(tpg_op_create(ctx, &d, &op), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "is built for tp = 1 but the context has tp = 2");
    TPG_EXPECT(op == NULL && ctx->num_ops == 0);
    free(ctx);
}

/* The argument checks of tpg_op_shard_shape, tpg_op_set_tensors, tpg_op_set_scalars and tpg_op_set_copy_chunks that
 * come before any CUDA call: ranks 0..tp-1, a, b and d required and 16-byte aligned, beta != 0 needs C, 1..32
 * pieces and none but 1 where nothing is copied. A refused call changes nothing. */
TPG_TEST(op_setters_refuse_bad_arguments_before_any_cuda_call) {
    tpg_ctx *ctx = calloc(1, sizeof *ctx);
    TPG_ASSERT(ctx);
    tpg_op *op = two_rank_op(ctx);
    TPG_ASSERT(op);
    tpg_shard_shape sh;
    TPG_EXPECT_EQ_INT(tpg_op_shard_shape(op, TP - 1, &sh), TPG_OK);
    TPG_EXPECT_EQ_INT(tpg_op_shard_shape(op, TP, &sh), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "rank = 2 must be in 0..1");
    const tpg_tensors t = {(void *)0x10000, (void *)0x20000, NULL, (void *)0x30000, NULL, NULL};
    TPG_EXPECT_EQ_INT(tpg_op_set_tensors(op, TP, &t), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "rank = 2 must be in 0..1");
    tpg_tensors bad = t;
    bad.d = NULL;
    TPG_EXPECT_EQ_INT(tpg_op_set_tensors(op, 0, &bad), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "tensor d must not be NULL");
    bad = t;
    bad.b = (const char *)t.b + 8; /* 8-byte aligned only */
    TPG_EXPECT_EQ_INT(tpg_op_set_tensors(op, 0, &bad), TPG_ERR_ALIGNMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "tensor b = ");
    TPG_EXPECT(!op->has_tensors[0] && !op->has_tensors[1]);
    /* rank 0 set by hand without C: beta != 0 is refused and the scalars stay */
    op->tensors[0] = t;
    op->has_tensors[0] = 1;
    TPG_EXPECT_EQ_INT(tpg_op_set_scalars(op, 2.0f, 1.0f), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "beta = 1 needs C, but rank 0 has c = NULL");
    TPG_EXPECT(op->desc.alpha == 1.0f && op->desc.beta == 0.0f);
    op->has_tensors[0] = 0;
    /* pieces: 1..TPG_MAX_COPY_CHUNKS (no tensors yet: the cut is recorded, nothing is built) */
    TPG_EXPECT_EQ_INT(tpg_op_set_copy_chunks(op, TPG_MAX_COPY_CHUNKS + 1), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_op_set_copy_chunks(op, 0), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_op_set_copy_chunks(op, TPG_MAX_COPY_CHUNKS), TPG_OK);
    TPG_EXPECT(op->copy.chunks > 1 && op->copy.chunks <= TPG_MAX_COPY_CHUNKS);
    tpg_peers_clear(&op->peers);
    free(op);
    ctx->num_ops = 0;
    /* reduce-scatter copies nothing: 1 is the only cut */
    op = two_rank_op_of(ctx, "ReduceScatter1D_TilingA_RotatingC");
    TPG_ASSERT(op);
    TPG_EXPECT_EQ_INT(op->copy.chunks, 0);
    TPG_EXPECT_EQ_INT(tpg_op_set_copy_chunks(op, 1), TPG_OK);
    TPG_EXPECT_EQ_INT(tpg_op_set_copy_chunks(op, 2), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "copies nothing");
    TPG_EXPECT_EQ_INT(op->copy.chunks, 0);
    free_hand_made(op, ctx);
}

/* The checks of tpg_op_set_tensors after the device check, which on a machine without a driver passes every pointer
 * over (cudaPointerGetAttributes fails): beta != 0 without C, fp8 scales on 16-bit operands, a scale's 4-byte
 * alignment. Where a CUDA device is visible the fake pointers fail that check first (see cuda_device_visible). */
TPG_TEST(set_tensors_refuses_what_the_operands_cannot_use) {
    if (skipped_where_a_device_is_visible("set_tensors_refuses_what_the_operands_cannot_use", "its pointers are fake"))
        return;
    tpg_ctx *ctx = calloc(1, sizeof *ctx);
    TPG_ASSERT(ctx);
    tpg_op *op = two_rank_op(ctx);
    TPG_ASSERT(op);
    const tpg_tensors t = {(void *)0x10000, (void *)0x20000, NULL, (void *)0x30000, NULL, NULL};
    op->desc.beta = 0.5f;
    TPG_EXPECT_EQ_INT(tpg_op_set_tensors(op, 0, &t), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "c is NULL but beta = 0.5");
    op->desc.beta = 0.0f;
    static float scales[2] __attribute__((aligned(16)));
    tpg_tensors scaled = t;
    scaled.scale_b = &scales[0]; /* bf16 operands take no scale */
    TPG_EXPECT_EQ_INT(tpg_op_set_tensors(op, 0, &scaled), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "scale_a / scale_b are the per-tensor scales of fp8 operands");
    const tpg_kernel_desc *fp8 = NULL;
    for (int i = 0; i < tpg_num_configs && !fp8; i++)
        if (tpg_dtype_size(tpg_configs[i].kernel->dtype_ab) == 1) fp8 = tpg_configs[i].kernel;
    TPG_ASSERT(fp8 != NULL);
    op->kernel = fp8;
    scaled.scale_b = NULL;
    scaled.scale_a = (const float *)((const char *)&scales[0] + 2); /* 2-byte aligned only */
    TPG_EXPECT_EQ_INT(tpg_op_set_tensors(op, 0, &scaled), TPG_ERR_ALIGNMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "scale_a = ");
    TPG_EXPECT(!op->has_tensors[0]);
    free_hand_made(op, ctx);
}

/* A shared device's SMs less TPG_SHARED_DEVICE_FREE_SMS and one per rank on it, split evenly (tpgemm.h,
 * tpg_ctx_config.share_devices); fewer than 2 a rank is refused. tpg_ctx_device answers -1 past the last rank, and
 * tpg_ctx_destroy frees nothing while an op is alive. */
TPG_TEST(context_arithmetic_and_checks) {
    tpg_ctx *ctx = calloc(1, sizeof *ctx);
    TPG_ASSERT(ctx);
    ctx->tp = TP, ctx->local_end = TP, ctx->devices[0] = ctx->devices[1] = 3;
    TPG_EXPECT_EQ_INT(tpg__set_sm_count(ctx, 0, 132), TPG_OK);
    TPG_EXPECT_EQ_INT(ctx->sm_count[0], (132 - TPG_SHARED_DEVICE_FREE_SMS - TP) / TP);
    const int least = TPG_SHARED_DEVICE_FREE_SMS + TP + 2 * TP; /* 2 SMs a rank */
    TPG_EXPECT_EQ_INT(tpg__set_sm_count(ctx, 1, least), TPG_OK);
    TPG_EXPECT_EQ_INT(ctx->sm_count[1], 2);
    TPG_EXPECT_EQ_INT(tpg__set_sm_count(ctx, 1, least - 1), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "too few for 2 ranks sharing it");
    ctx->devices[1] = 4; /* a device of its own: all its SMs */
    TPG_EXPECT_EQ_INT(tpg__set_sm_count(ctx, 1, 132), TPG_OK);
    TPG_EXPECT_EQ_INT(ctx->sm_count[1], 132);
    TPG_EXPECT_EQ_INT(tpg_ctx_device(ctx, TP - 1), 4);
    TPG_EXPECT_EQ_INT(tpg_ctx_device(ctx, TP), -1);
    TPG_EXPECT_EQ_INT(tpg_ctx_device(ctx, -1), -1);
    ctx->num_ops = 1;
    const tpg_status st = tpg_ctx_destroy(ctx);
    TPG_EXPECT_EQ_INT(st, TPG_ERR_INVALID_ARGUMENT);
    if (st == TPG_OK) return; /* it freed the context */
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(ctx), "1 op(s) created on this context are still alive");
    free(ctx);
}

TPG_TEST_MAIN(TPG_CASE(a_failed_build_drops_the_tensors_it_was_given),
              TPG_CASE(streams_that_order_ranks_on_one_device_are_found),
              TPG_CASE(overlap_barriers_refused_at_tp1_and_in_clusters),
              TPG_CASE(op_create_refuses_a_config_out_of_range_or_of_another_tp),
              TPG_CASE(op_setters_refuse_bad_arguments_before_any_cuda_call),
              TPG_CASE(set_tensors_refuses_what_the_operands_cannot_use), TPG_CASE(context_arithmetic_and_checks))
