/* Which ops get a stream-K workspace and what their launches read of it (runtime/src/stream_k.c): the one-stage launch
 * - TP = 1, or the gathered and one-hop walks' one GEMM of all M rows - and no other. A one-hop op left without it
 * would run with no region (slower, silently); a ring launch handed one would split a multi-stage walk the kernels do
 * not split. The op is put together by hand (no GPU, no allocation). */
#include <stdio.h>

#include "ctx_internal.h"
#include "op_internal.h"
#include "stream_k.h"
#include "tpg_test.h"

enum { SMS = 132, M = 4096, N = 2304, K = 4096 };

/* An op of config `<base>_tp<tp>` on SMS-SM devices for m x n x k, l batches, its shapes as tpg_op_create sets them. */
static tpg_op *op_shape(const char *base, int tp, int64_t m, int64_t n, int64_t k, int64_t l) {
    static tpg_ctx ctx;
    static tpg_op op;
    char name[96];
    int idx = -1;
    snprintf(name, sizeof name, "%s_tp%d", base, tp);
    if (tpg_config_find(name, NULL, tp, TPG_DTYPE_BF16, &idx) != TPG_OK) return NULL;
    ctx = (tpg_ctx){0};
    ctx.tp = tp, ctx.local_end = tp;
    for (int r = 0; r < tp; r++) ctx.sm_count[r] = SMS;
    op = (tpg_op){0};
    op.ctx = &ctx, op.config = &tpg_configs[idx], op.sched = op.config->schedule, op.kernel = op.config->kernel;
    if (tpg_shapes_init(op.sched, tp, m, n, k, l, 2, &op.shapes, NULL, 0) != TPG_OK) return NULL;
    return &op;
}

static tpg_op *op_of(const char *base, int tp) { return op_shape(base, tp, M, N, K, 1); }

TPG_TEST(the_workspace_is_for_one_stage_launches_only) {
    tpg_op *op = op_of("rs_tila_bf16_sk64", 1);
    TPG_ASSERT(op != NULL);
    TPG_EXPECT_EQ_INT(tpg__stream_k_rows(op), op->shapes.stage_m);
    op = op_of("rs_tila_bf16_sk64", 2);
    TPG_ASSERT(op != NULL);
    TPG_EXPECT_EQ_INT(tpg__stream_k_rows(op), 0); /* the ring: a stage a launch step */
    op->one_hop = 1;
    TPG_EXPECT_EQ_INT(tpg__stream_k_rows(op), 2 * op->shapes.stage_m);
    op = op_of("ag_rota_bf16_sk64", 2);
    TPG_ASSERT(op != NULL);
    TPG_EXPECT_EQ_INT(tpg__stream_k_rows(op), 0);
    op->gathered = 1;
    TPG_EXPECT_EQ_INT(tpg__stream_k_rows(op), 2 * op->shapes.stage_m);
}

/* With a workspace, the one GEMM of all rows gets the region stream_k.h gives its tiles, the rounds before it, and
 * the counts after the SMS fp32 slots; the walk's stage launches (a ring kept by tpg_op_set_rs_ring) get none. */
TPG_TEST(a_launch_reads_the_region_of_its_own_shape) {
    tpg_op *op = op_of("rs_tila_bf16_sk64", 2);
    TPG_ASSERT(op != NULL);
    op->one_hop = 1;
    static float work[1];
    op->sk_work[1] = work;
    const tpg_kernel_desc *k = op->kernel;
    tpg_gemm_params g = {0};
    g.m = tpg__stream_k_rows(op), g.num_stages = 1;
    tpg__stream_k_params(op, 1, &g);
    const long long tiles = (g.m + k->bm - 1) / k->bm * ((op->shapes.stage_n + k->bn - 1) / k->bn);
    const int expect = tpg_sk_launch_tiles(tiles, SMS, (op->shapes.stage_k + k->bk - 1) / k->bk, 1);
    TPG_ASSERT(expect > 0); /* the shape has a region to hand out */
    TPG_EXPECT_EQ_INT(g.sk_tiles, expect);
    TPG_EXPECT_EQ_INT(g.sk_rounds, (tiles - expect) / SMS);
    TPG_EXPECT(g.sk_partials == work);
    TPG_EXPECT((char *)g.sk_counts == (char *)work + (size_t)SMS * k->bm * k->bn * sizeof(float));
    g = (tpg_gemm_params){0};
    g.m = op->shapes.stage_m, g.num_stages = 2; /* the ring's launch */
    tpg__stream_k_params(op, 1, &g);
    TPG_EXPECT_EQ_INT(g.sk_tiles, 0);
    TPG_EXPECT_EQ_INT(g.sk_rounds, 0);
    g = (tpg_gemm_params){0};
    g.m = tpg__stream_k_rows(op), g.num_stages = 1;
    tpg__stream_k_params(op, 0, &g); /* rank 0 has no workspace */
    TPG_EXPECT_EQ_INT(g.sk_tiles, 0);
    TPG_EXPECT(g.sk_partials == NULL && g.sk_counts == NULL);
}

/* The kernel walks sk_rounds data-parallel tiles on each of the SMS CTAs, then the region: the last sk_tiles of all
 * its tiles (gemm_sm90_walk.cuh), so the two must add up to every tile of the launch - batches and ragged rows
 * included - or tiles go unwritten. Ragged K counts its last partial k-block, as the kernel's split does. */
TPG_TEST(the_region_and_rounds_cover_every_tile_of_the_launch) {
    static float work[1];
    struct { const char *base; int tp; int64_t m, k, l; int one_hop; } cases[] = {
        {"rs_tila_bf16_sk64", 1, 100, 1416, 3, 0}, /* 2 ragged tile rows x 18 x 3 batches, 23 k-blocks */
        {"rs_tila_bf16_sk64", 1, 300, 4096, 4, 0}, /* 5 x 18 x 4 = 360 tiles: a round before the region */
        {"rs_tila_bf16_sk64", 2, 48, 4096, 1, 1},  /* one-hop: one GEMM of 48 rows, part of a tile */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tpg_op *op = op_shape(cases[i].base, cases[i].tp, cases[i].m, N, cases[i].k, cases[i].l);
        TPG_ASSERT(op != NULL);
        op->one_hop = cases[i].one_hop;
        op->sk_work[0] = work;
        const tpg_kernel_desc *k = op->kernel;
        tpg_gemm_params g = {0};
        g.m = (int)tpg__stream_k_rows(op), g.num_stages = 1;
        tpg__stream_k_params(op, 0, &g);
        const long long tiles = (g.m + k->bm - 1) / k->bm * ((N + k->bn - 1) / k->bn) * cases[i].l;
        TPG_EXPECT(g.sk_tiles > 0);
        TPG_EXPECT_EQ_INT((long long)g.sk_rounds * SMS + g.sk_tiles, tiles);
    }
    /* 18 tiles of 23 k-blocks (K = 1416 = 22 x 64 + 8): ranges of 4 k-blocks a CTA, a region; of 22 there would be
     * none */
    tpg_op *op = op_shape("rs_tila_bf16_sk64", 1, 64, N, 1416, 1);
    TPG_ASSERT(op != NULL);
    op->sk_work[0] = work;
    tpg_gemm_params g = {0};
    g.m = 64, g.num_stages = 1;
    tpg__stream_k_params(op, 0, &g);
    TPG_EXPECT_EQ_INT(g.sk_tiles, 18);
    TPG_EXPECT_EQ_INT(tpg_sk_launch_tiles(18, SMS, 22, 1), 0);
}

TPG_TEST_MAIN(TPG_CASE(the_workspace_is_for_one_stage_launches_only),
              TPG_CASE(a_launch_reads_the_region_of_its_own_shape),
              TPG_CASE(the_region_and_rounds_cover_every_tile_of_the_launch))
