/* Shape arithmetic of the four schedules (runtime/src/shapes.c). Pure arithmetic, no GPU. The schedule
 * tables are spelled here with only the dims shapes.c reads, so the test does not depend on the
 * generated set. */
#include "shapes.h"
#include "tpg_test.h"

static tpg_schedule_table sched(const char *name, tpg_comm comm, tpg_dim sa, tpg_dim sb, tpg_dim sd, tpg_dim st,
                                tpg_operand rot) {
    tpg_schedule_table t = {0};
    t.name = name;
    t.comm = comm;
    t.shard_a = sa;
    t.shard_b = sb;
    t.shard_d = sd;
    t.stage_dim = st;
    t.rotating = rot;
    return t;
}
#define AG_A sched("AllGather1D_TilingCD_RotatingA", TPG_COMM_ALLGATHER, TPG_DIM_M, TPG_DIM_N, TPG_DIM_N, TPG_DIM_M, TPG_OPERAND_A)
#define AG_B sched("AllGather1D_TilingCD_RotatingB", TPG_COMM_ALLGATHER, TPG_DIM_M, TPG_DIM_N, TPG_DIM_M, TPG_DIM_N, TPG_OPERAND_B)
#define RS_A sched("ReduceScatter1D_TilingA_RotatingC", TPG_COMM_REDUCE_SCATTER, TPG_DIM_K, TPG_DIM_K, TPG_DIM_M, TPG_DIM_M, TPG_OPERAND_D)
#define RS_B sched("ReduceScatter1D_TilingB_RotatingC", TPG_COMM_REDUCE_SCATTER, TPG_DIM_K, TPG_DIM_K, TPG_DIM_N, TPG_DIM_N, TPG_OPERAND_D)

static const int tps[] = {1, 2, 4, 8};
static const int64_t problems[][4] = {{2048, 4096, 1024, 1}, {512, 1024, 2048, 2}};

TPG_TEST(allgather_rotating_a) {
    tpg_schedule_table t = AG_A;
    for (int i = 0; i < 4; i++) {
        for (int p = 0; p < 2; p++) {
            const int P = tps[i];
            const int64_t M = problems[p][0], N = problems[p][1], K = problems[p][2], L = problems[p][3];
            tpg_shapes s;
            TPG_ASSERT_EQ_INT(tpg_shapes_init(&t, P, M, N, K, L, 2, &s, NULL, 0), TPG_OK);
            TPG_EXPECT_EQ_INT(s.stage_m, M / P);
            TPG_EXPECT_EQ_INT(s.stage_n, N / P);
            TPG_EXPECT_EQ_INT(s.stage_k, K);
            for (int r = 0; r < P; r++) {
                tpg_shard_shape sh;
                tpg_shapes_shard(&t, &s, r, &sh);
                TPG_EXPECT_EQ_INT(sh.a_rows, M / P);
                TPG_EXPECT_EQ_INT(sh.a_cols, K);
                TPG_EXPECT_EQ_INT(sh.a_row0, r * M / P);
                TPG_EXPECT_EQ_INT(sh.b_rows, N / P);
                TPG_EXPECT_EQ_INT(sh.b_row0, r * N / P);
                TPG_EXPECT_EQ_INT(sh.d_rows, M);
                TPG_EXPECT_EQ_INT(sh.d_cols, N / P);
                TPG_EXPECT_EQ_INT(sh.d_row0, 0);
                TPG_EXPECT_EQ_INT(sh.d_col0, r * N / P);
            }
        }
    }
}

TPG_TEST(allgather_rotating_b) {
    tpg_schedule_table t = AG_B;
    for (int i = 0; i < 4; i++) {
        for (int p = 0; p < 2; p++) {
            const int P = tps[i];
            const int64_t M = problems[p][0], N = problems[p][1], K = problems[p][2], L = problems[p][3];
            tpg_shapes s;
            TPG_ASSERT_EQ_INT(tpg_shapes_init(&t, P, M, N, K, L, 2, &s, NULL, 0), TPG_OK);
            TPG_EXPECT_EQ_INT(s.stage_m, M / P);
            TPG_EXPECT_EQ_INT(s.stage_n, N / P);
            TPG_EXPECT_EQ_INT(s.stage_k, K);
            tpg_shard_shape sh;
            tpg_shapes_shard(&t, &s, P - 1, &sh);
            TPG_EXPECT_EQ_INT(sh.a_rows, M / P);
            TPG_EXPECT_EQ_INT(sh.b_rows, N / P);
            TPG_EXPECT_EQ_INT(sh.b_cols, K);
            TPG_EXPECT_EQ_INT(sh.d_rows, M / P);
            TPG_EXPECT_EQ_INT(sh.d_cols, N);
            TPG_EXPECT_EQ_INT(sh.d_row0, (P - 1) * M / P);
            TPG_EXPECT_EQ_INT(sh.d_col0, 0);
        }
    }
}

TPG_TEST(reduce_scatter_tiling_a_and_b) {
    tpg_schedule_table ta = RS_A, tb = RS_B;
    for (int i = 0; i < 4; i++) {
        for (int p = 0; p < 2; p++) {
            const int P = tps[i];
            const int64_t M = problems[p][0], N = problems[p][1], K = problems[p][2], L = problems[p][3];
            tpg_shapes s;
            TPG_ASSERT_EQ_INT(tpg_shapes_init(&ta, P, M, N, K, L, 2, &s, NULL, 0), TPG_OK);
            TPG_EXPECT_EQ_INT(s.stage_m, M / P);
            TPG_EXPECT_EQ_INT(s.stage_n, N);
            TPG_EXPECT_EQ_INT(s.stage_k, K / P);
            tpg_shard_shape sh;
            tpg_shapes_shard(&ta, &s, 1 % P, &sh);
            TPG_EXPECT_EQ_INT(sh.a_rows, M);
            TPG_EXPECT_EQ_INT(sh.a_cols, K / P);
            TPG_EXPECT_EQ_INT(sh.a_col0, (1 % P) * K / P);
            TPG_EXPECT_EQ_INT(sh.a_row0, 0);
            TPG_EXPECT_EQ_INT(sh.b_rows, N);
            TPG_EXPECT_EQ_INT(sh.b_cols, K / P);
            TPG_EXPECT_EQ_INT(sh.b_col0, (1 % P) * K / P); /* B is split along K with A: the same columns */
            TPG_EXPECT_EQ_INT(sh.b_row0, 0);
            TPG_EXPECT_EQ_INT(sh.d_rows, M / P);
            TPG_EXPECT_EQ_INT(sh.d_cols, N);
            TPG_EXPECT_EQ_INT(sh.d_row0, (1 % P) * M / P);

            TPG_ASSERT_EQ_INT(tpg_shapes_init(&tb, P, M, N, K, L, 2, &s, NULL, 0), TPG_OK);
            TPG_EXPECT_EQ_INT(s.stage_m, M);
            TPG_EXPECT_EQ_INT(s.stage_n, N / P);
            TPG_EXPECT_EQ_INT(s.stage_k, K / P);
            tpg_shapes_shard(&tb, &s, P - 1, &sh);
            TPG_EXPECT_EQ_INT(sh.d_rows, M);
            TPG_EXPECT_EQ_INT(sh.d_cols, N / P);
            TPG_EXPECT_EQ_INT(sh.d_col0, (P - 1) * N / P);
            TPG_EXPECT_EQ_INT(sh.d_row0, 0);
        }
    }
}

TPG_TEST(divisibility_failures_name_the_value) {
    char msg[256];
    tpg_shapes s;
    tpg_schedule_table t = AG_A;
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&t, 3, 1000, 3072, 1024, 1, 2, &s, msg, sizeof msg), TPG_ERR_SHAPE);
    TPG_EXPECT_STR_CONTAINS(msg, "M = 1000 must be divisible by tp = 3");
    TPG_EXPECT_STR_CONTAINS(msg, "AllGather1D_TilingCD_RotatingA shards A along M");
    t = AG_B;
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&t, 4, 1024, 1000 + 2, 1024, 1, 2, &s, msg, sizeof msg), TPG_ERR_SHAPE);
    TPG_EXPECT_STR_CONTAINS(msg, "N = 1002");
    t = RS_A;
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&t, 8, 1024, 1024, 1004, 2, 2, &s, msg, sizeof msg), TPG_ERR_SHAPE);
    TPG_EXPECT_STR_CONTAINS(msg, "K = 1004 must be divisible by tp = 8");
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&t, 2, 0, 1024, 1024, 1, 2, &s, msg, sizeof msg), TPG_ERR_SHAPE);
    TPG_EXPECT_STR_CONTAINS(msg, "M = 0 must be >= 1");
    /* K = 0 as well: the kernels rely on every tile having a k-block (no zero-fill, gemm_sm90_roles.cuh) */
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&t, 2, 1024, 1024, 0, 1, 2, &s, msg, sizeof msg), TPG_ERR_SHAPE);
    TPG_EXPECT_STR_CONTAINS(msg, "K = 0 must be >= 1");
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&t, 2, 64, 64, 64, 0, 2, &s, msg, sizeof msg), TPG_ERR_SHAPE);
    TPG_EXPECT_STR_CONTAINS(msg, "L = 0");
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&t, 2, (int64_t)1 << 32, 64, 64, 1, 2, &s, msg, sizeof msg), TPG_ERR_SHAPE);
    TPG_EXPECT_STR_CONTAINS(msg, "2^31");
}

TPG_TEST(alignment_failures_name_the_value) {
    char msg[256];
    tpg_shapes s;
    tpg_schedule_table t = RS_B;
    /* K/tp = 36 bf16 elements = 72 bytes: not a multiple of 16. */
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&t, 2, 256, 256, 72, 1, 2, &s, msg, sizeof msg), TPG_ERR_ALIGNMENT);
    TPG_EXPECT_STR_CONTAINS(msg, "K/tp = 36");
    t = AG_A;
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&t, 1, 256, 256, 100, 1, 2, &s, msg, sizeof msg), TPG_ERR_ALIGNMENT);
    TPG_EXPECT_STR_CONTAINS(msg, "K = 100");
    /* N / tp = 12 is not a multiple of 8. */
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&t, 2, 256, 24, 64, 1, 2, &s, msg, sizeof msg), TPG_ERR_ALIGNMENT);
    TPG_EXPECT_STR_CONTAINS(msg, "n = 12");
    /* fp8 needs K a multiple of 16 elements; 1-byte K = 48 passes. */
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&t, 2, 256, 256, 48, 1, 1, &s, msg, sizeof msg), TPG_OK);
    TPG_EXPECT_EQ_STR(msg, "");
}

/* Huge extents must fail, never wrap around int64 into a "valid" shape. */
TPG_TEST(huge_batches_and_rows_are_rejected) {
    tpg_schedule_table t = RS_A;
    tpg_shapes s;
    char msg[256];
    const int64_t big = (int64_t)1 << 24;
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&t, 2, big, big, 64, (int64_t)1 << 40, 2, &s, msg, sizeof msg), TPG_ERR_SHAPE);
    TPG_EXPECT_STR_CONTAINS(msg, "L = 1099511627776 must be < 2^31");
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&t, 2, big, 1024, 64, 1 << 10, 2, &s, msg, sizeof msg), TPG_ERR_SHAPE);
    TPG_EXPECT_STR_CONTAINS(msg, "x L 1024 must be < 2^31");
    /* the boundary: rows x L = 2^31 - 2 passes, 2^31 does not (M = rows of A, L = 1) */
    tpg_schedule_table ag = AG_A;
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&ag, 1, ((int64_t)1 << 30) - 1, 1024, 64, 2, 2, &s, NULL, 0), TPG_OK);
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&ag, 1, (int64_t)1 << 30, 1024, 64, 2, 2, &s, NULL, 0), TPG_ERR_SHAPE);
    /* the output's columns count too: rotating B's D map spans N (2^30) rows of the local output, x L = 2 */
    tpg_schedule_table agb = AG_B;
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&agb, 2, 16, (int64_t)1 << 30, 64, 2, 2, &s, msg, sizeof msg), TPG_ERR_SHAPE);
    TPG_EXPECT_STR_CONTAINS(msg, "rows 1073741824 x L 2 must be < 2^31");
}

/* The kernel rounds extents up to whole tiles in int: within a tile of 2^31 that wrapped (tiles_m -16777215 at M =
 * 2^31 - 64, k_blocks -33554431 at K = 2^31 - 8) while the shape passed. The bound is 2^31 - 512 (past a tile's
 * longest side, 320). */
TPG_TEST(extents_within_a_tile_of_2_31_are_rejected) {
    tpg_schedule_table ag = AG_A;
    tpg_shapes s;
    char msg[256];
    const int64_t limit = ((int64_t)1 << 31) - 512;
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&ag, 1, limit + 448, 8, 16, 1, 2, &s, msg, sizeof msg), TPG_ERR_SHAPE);
    TPG_EXPECT_STR_CONTAINS(msg, "per-stage M = 2147483584 must be <= 2^31 - 512");
    /* the widest tile, 320: N = 2^31 - 256 would round up past 2^31 (the shape passed at the old bound) */
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&ag, 1, 1, ((int64_t)1 << 31) - 256, 8, 1, 2, &s, NULL, 0), TPG_ERR_SHAPE);
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&ag, 1, 1, 8, limit + 504, 1, 2, &s, msg, sizeof msg), TPG_ERR_SHAPE);
    TPG_EXPECT_STR_CONTAINS(msg, "per-stage K = 2147483640");
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&ag, 1, limit + 1, 8, 16, 1, 2, &s, NULL, 0), TPG_ERR_SHAPE);
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&ag, 1, limit, 8, 16, 1, 2, &s, NULL, 0), TPG_OK);
    TPG_EXPECT_EQ_INT(tpg_shapes_init(&ag, 1, 1, 8, limit, 1, 2, &s, NULL, 0), TPG_OK);
}

/* The tiles of a stage (tpg_shapes_stage_tiles: the op's tile flags per slot, buffers.c) round each side up in its
 * own tile size; tpg_shapes_init_for refuses a walk of tp stages of them past 2^31 - 2^16 (the kernel's int walk)
 * even where one stage's tiles fit. */
TPG_TEST(stage_tiles_and_the_walk_limit) {
    tpg_schedule_table t = RS_A;
    tpg_kernel_desc k = {0};
    k.bm = 64, k.bn = 128, k.dtype_ab = TPG_DTYPE_BF16;
    tpg_shapes s;
    tpg_shapes_compute(&t, 1, 100, 200, 64, 3, &s); /* 2 x 2 tiles of 64x128, 3 batches */
    TPG_EXPECT_EQ_INT(tpg_shapes_stage_tiles(&s, &k), 12);
    t.tp = 8;
    const tpg_config_desc c = {.name = "rs_test_tp8", .schedule = &t, .kernel = &k};
    char msg[256];
    /* stage 2^21 x 2^20: 2^15 x 2^13 tiles a stage, 2^31 over 8 stages; half of N fits */
    TPG_EXPECT_EQ_INT(tpg_shapes_init_for(&c, (int64_t)1 << 24, (int64_t)1 << 20, 64, 1, &s, msg, sizeof msg),
                      TPG_ERR_SHAPE);
    TPG_EXPECT_STR_CONTAINS(msg, "8 stages x 268435456 tiles");
    TPG_EXPECT_EQ_INT(tpg_shapes_init_for(&c, (int64_t)1 << 24, (int64_t)1 << 19, 64, 1, &s, NULL, 0), TPG_OK);
}

TPG_TEST_MAIN(TPG_CASE(allgather_rotating_a), TPG_CASE(allgather_rotating_b), TPG_CASE(reduce_scatter_tiling_a_and_b),
              TPG_CASE(divisibility_failures_name_the_value), TPG_CASE(alignment_failures_name_the_value),
              TPG_CASE(huge_batches_and_rows_are_rejected),
              TPG_CASE(extents_within_a_tile_of_2_31_are_rejected), TPG_CASE(stage_tiles_and_the_walk_limit))
