/* The plan (runtime/src/plan.c): shape arithmetic against shapes.c for every generated config, buffer and
 * traffic sizes, and the text / JSON output. Pure C, no GPU. */
#include <inttypes.h>
#include <stdlib.h>

#include "plan.h"
#include "shapes.h"
#include "tpg_test.h"

static const tpg_config_desc *find(const char *name) {
    for (int i = 0; i < tpg_num_configs; i++)
        if (!strcmp(tpg_configs[i].name, name)) return &tpg_configs[i];
    return NULL;
}

/* The config that runs config `name`'s schedule and kernel with pushed partials: itself, or where its partials go
 * another way its by_name push twin (schedules.yaml <family>_push) - so that the checks of the push's plan hold
 * whichever route the shipped reduce-scatter defaults take. */
static const tpg_config_desc *pushing(const char *name) {
    const tpg_config_desc *c = find(name);
    for (int i = 0; c && (c->pull_partials || c->copy_engine_partials) && i < tpg_num_configs; i++) {
        const tpg_config_desc *t = &tpg_configs[i];
        if (t->schedule == c->schedule && t->kernel == c->kernel && !t->pull_partials && !t->copy_engine_partials)
            return t;
    }
    return c && !c->pull_partials && !c->copy_engine_partials ? c : NULL;
}

/* The plan for the op modes `modes` (TPG_PLAN_*) written into a malloc'd string. */
static char *plan_modes(const tpg_config_desc *c, int64_t m, int64_t n, int64_t k, int64_t l, int chunks, int modes,
                        int json) {
    FILE *f = tmpfile();
    if (!f) return NULL;
    tpg_status st = tpg_plan_write(f, c, m, n, k, l, chunks, modes, json);
    long size = ftell(f);
    char *buf = st == TPG_OK && size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (buf) {
        rewind(f);
        size_t got = fread(buf, 1, (size_t)size, f);
        buf[got] = '\0';
    }
    fclose(f);
    return buf;
}

static char *plan_chunks(const tpg_config_desc *c, int64_t m, int64_t n, int64_t k, int64_t l, int chunks, int json) {
    return plan_modes(c, m, n, k, l, chunks, 0, json);
}

static char *plan_text(const tpg_config_desc *c, int64_t m, int64_t n, int64_t k, int64_t l, int json) {
    return plan_chunks(c, m, n, k, l, 0, json);
}

TPG_TEST(allgather_rotating_a_seed_default) {
    const tpg_config_desc *c = find("ag_rota_bf16_tp2");
    TPG_ASSERT(c != NULL);
    tpg_plan_shape ps;
    TPG_ASSERT_EQ_INT(tpg_plan_compute(c, 16384, 106496, 16384, 1, 0, &ps), TPG_OK);
    TPG_EXPECT_EQ_INT(ps.stage_m, 8192);
    TPG_EXPECT_EQ_INT(ps.stage_n, 53248);
    TPG_EXPECT_EQ_INT(ps.stage_k, 16384);
    TPG_EXPECT_EQ_INT(ps.num_slots, 1);
    TPG_EXPECT_EQ_INT(ps.slot_bytes, 8192LL * 16384 * 2); /* one A shard */
    TPG_EXPECT_EQ_INT(ps.moved_bytes, 8192LL * 16384 * 2);
    TPG_EXPECT_EQ_INT(ps.flags_bytes, 2 * 32 * 4); /* TPG_MAX_COPY_CHUNKS per stage */
    TPG_EXPECT(ps.flops_per_device == 2.0 * 16384.0 * 106496.0 * 16384.0 / 2.0);
    TPG_EXPECT_EQ_INT(ps.tiles_per_stage, (8192 / c->kernel->bm) * (53248 / c->kernel->bn));
}

TPG_TEST(seed_tp8_local_problem) {
    /* The seed prints 2048 x 13312 x 16384 for its default AG problem at TP = 8. */
    const tpg_config_desc *c = find("ag_rota_bf16_tp8");
    TPG_ASSERT(c != NULL);
    tpg_plan_shape ps;
    TPG_ASSERT_EQ_INT(tpg_plan_compute(c, 16384, 106496, 16384, 1, 0, &ps), TPG_OK);
    TPG_EXPECT_EQ_INT(ps.stage_m, 2048);
    TPG_EXPECT_EQ_INT(ps.stage_n, 13312);
    TPG_EXPECT_EQ_INT(ps.stage_k, 16384);
    TPG_EXPECT_EQ_INT(ps.slots_bytes, 7LL * 2048 * 16384 * 2);
}

TPG_TEST(allgather_rotating_b_moves_b) {
    const tpg_config_desc *c = find("ag_rotb_fp16_tp4");
    TPG_ASSERT(c != NULL);
    tpg_plan_shape ps;
    TPG_ASSERT_EQ_INT(tpg_plan_compute(c, 8192, 6144, 4096, 1, 0, &ps), TPG_OK);
    TPG_EXPECT_EQ_INT(ps.stage_m, 2048);
    TPG_EXPECT_EQ_INT(ps.stage_n, 1536);
    TPG_EXPECT_EQ_INT(ps.slot_bytes, 1536LL * 4096 * 2);
    TPG_EXPECT_EQ_INT(ps.moved_bytes, 3LL * 1536 * 4096 * 2);
}

TPG_TEST(allgather_copies_cut_into_pieces) {
    /* 8B-qkv at TP = 4: a 2048 x 4096 A shard; 4 pieces of 512 rows (whole 128-row tiles), 4 MiB each */
    const tpg_config_desc *c = find("ag_rota_bf16_tp4");
    TPG_ASSERT(c != NULL);
    tpg_plan_shape ps;
    TPG_ASSERT_EQ_INT(tpg_plan_compute(c, 8192, 6144, 4096, 1, 4, &ps), TPG_OK);
    TPG_EXPECT_EQ_INT(ps.copy_chunks, 4);
    TPG_EXPECT_EQ_INT(ps.copy_chunk_rows, 512);
    TPG_EXPECT_EQ_INT(ps.copy_chunk_bytes, 512LL * 4096 * 2);
    /* 0: the config's own cut (schedules.yaml copy_chunks) */
    TPG_ASSERT_EQ_INT(tpg_plan_compute(c, 8192, 6144, 4096, 1, 0, &ps), TPG_OK);
    TPG_EXPECT_EQ_INT(ps.copy_chunks, c->copy_chunks);
    /* the text names the cut, and the graph has a COPY and a FLAG per piece */
    char *text = plan_chunks(c, 8192, 6144, 4096, 1, 3, 0);
    TPG_ASSERT(text != NULL);
    TPG_EXPECT_STR_CONTAINS(text, "Copies cut into 3 pieces of 768 rows");
    TPG_EXPECT_STR_CONTAINS(text, "COPY[s=3 peer=");
    TPG_EXPECT_STR_CONTAINS(text, "FLAG[s=3 piece=2]");
    free(text);
    char *json = plan_chunks(c, 8192, 6144, 4096, 1, 3, 1);
    TPG_ASSERT(json != NULL);
    TPG_EXPECT_STR_CONTAINS(json, "\"copy\": {\"chunks\": 3, \"chunk_rows\": 768");
    free(json);
    /* rotating B cuts its B shard (512 rows) in whole tiles of BN = 256 rows, not BM = 128: 2 pieces, not 4 */
    TPG_ASSERT(find("ag_rotb_bf16_wide_tp2") != NULL);
    TPG_ASSERT_EQ_INT(tpg_plan_compute(find("ag_rotb_bf16_wide_tp2"), 4096, 1024, 1024, 1, 4, &ps), TPG_OK);
    TPG_EXPECT_EQ_INT(ps.copy_chunks, 2);
    TPG_EXPECT_EQ_INT(ps.copy_chunk_rows, 256);
    /* reduce-scatter copies nothing */
    TPG_ASSERT_EQ_INT(tpg_plan_compute(find("rs_tila_bf16_tp4"), 16384, 8192, 28672, 1, 4, &ps), TPG_OK);
    TPG_EXPECT_EQ_INT(ps.copy_chunks, 0);
}

TPG_TEST(reduce_scatter_pushes_partials) {
    const tpg_config_desc *c = pushing("rs_tila_bf16_tp4");
    TPG_ASSERT(c != NULL);
    tpg_plan_shape ps;
    TPG_ASSERT_EQ_INT(tpg_plan_compute(c, 16384, 8192, 28672, 2, 0, &ps), TPG_OK);
    TPG_EXPECT_EQ_INT(ps.stage_m, 4096);
    TPG_EXPECT_EQ_INT(ps.stage_n, 8192);
    TPG_EXPECT_EQ_INT(ps.stage_k, 7168);
    TPG_EXPECT_EQ_INT(ps.tiles_per_stage, 2LL * (4096 / c->kernel->bm) * (8192 / c->kernel->bn));
    TPG_EXPECT_EQ_INT(ps.slot_bytes, 2LL * 4096 * 8192 * 2);
    TPG_EXPECT_EQ_INT(ps.moved_bytes, 3LL * 2 * 4096 * 8192 * 2);
    TPG_EXPECT_EQ_INT(ps.flags_bytes, 3LL * ps.tiles_per_stage * 4);
}

/* The plan (json: the JSON form) of config at M = m, N = 8192, K = 28672 for the op modes `modes` holds `want`. */
static void expect_modes_plan_has(const char *config, int64_t m, int modes, int json, const char *want) {
    char *t = plan_modes(find(config), m, 8192, 28672, 1, 0, modes, json);
    TPG_EXPECT(t != NULL);
    if (t) TPG_EXPECT_STR_CONTAINS(t, want);
    free(t);
}

static void expect_plan_has(const char *config, int64_t m, int json, const char *want) {
    expect_modes_plan_has(config, m, 0, json, want);
}

static void expect_ring_plan_has(const char *config, int64_t m, int json, const char *want) {
    expect_modes_plan_has(config, m, TPG_PLAN_RS_RING, json, want);
}

/* A ping-pong reduce-scatter ring (1x1 clusters) of one row of tiles a stage: tiles_n x l x stages units, kept a
 * ring (the one-hop arm of the rule: one_hop_rule). */
static tpg_walk_facts ring_walk(int stages, int64_t rows, int64_t tiles_n, int64_t l, int sms) {
    const tpg_walk_facts w = {.reduce_scatter = 1, .stages_split_m = 1, .pingpong = 1, .cluster_m = 1, .cluster_n = 1,
                              .stages = stages,
                              .stage_rows = rows, .tiles_m = 1, .tiles_n = tiles_n, .l = l,
                              .b_bytes = TPG_INTERLEAVE_MIN_B_BYTES, .sms = sms, .keep_ring = 1};
    return w;
}

/* The one-hop walk (params.c: one_hop_params): a reduce-scatter of at most TPG_ONE_HOP_MAX_ROWS rows a stage and one
 * batch, on any kernel, unless over NCCL or kept a ring - then the ring's own rule. */
TPG_TEST(one_hop_rule) {
    tpg_walk_facts w = ring_walk(2, TPG_ONE_HOP_MAX_ROWS, 16, 1, 132);
    w.keep_ring = 0;
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_ONE_HOP);
    const tpg_walk_facts one_hop = w;
    tpg_walk_facts any[6]; /* one-hop on any kernel, any grid, any B, stage count and tiling */
    for (int i = 0; i < 6; i++) any[i] = one_hop;
    any[0].pingpong = 0;
    any[1].cluster_m = 2;
    any[2].sms = 16;
    any[3].b_bytes = 1;
    any[4].stages = 8;
    any[5].stage_rows = 1;
    for (int i = 0; i < 6; i++) TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&any[i]), TPG_WALK_ONE_HOP);
    tpg_walk_facts never[6];
    for (int i = 0; i < 6; i++) never[i] = one_hop;
    never[0].stage_rows = TPG_ONE_HOP_MAX_ROWS + 1;
    never[1].l = 2;
    never[2].band_waits = 1;
    never[3].keep_ring = 1;
    never[4].stages_split_m = 0;
    never[5].stages = 1;
    for (int i = 0; i < 6; i++) TPG_EXPECT(tpg_plan_walk_order(&never[i]) != TPG_WALK_ONE_HOP);
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&never[3]), TPG_WALK_INTERLEAVED_ONE_WAVE); /* kept: the ring's rule */
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&never[0]), TPG_WALK_INTERLEAVED_ONE_WAVE);
    TPG_EXPECT(tpg_walk_is_one_gemm(TPG_WALK_ONE_HOP) && tpg_walk_is_one_gemm(TPG_WALK_GATHERED));
    TPG_EXPECT(!tpg_walk_is_one_gemm(TPG_WALK_INTERLEAVED_GATED) && !tpg_walk_is_one_gemm(TPG_WALK_STAGE_AFTER_STAGE));
}

/* The plan of a one-hop walk: one GEMM of all rows into the own slots (tp of them), a REDUCE between the GEMM and the
 * closing barrier, its transport; --rs-ring (TPG_PLAN_RS_RING) the ring with the same buffers. */
TPG_TEST(one_hop_plan) {
    const int ring = TPG_PLAN_RS_RING;
    expect_plan_has("rs_tila_bf16_pp64_tp8", 128, 0, "walk order        one-hop (a reduce-scatter of at most 64 rows");
    expect_plan_has("rs_tila_bf16_pp64_tp8", 128, 0, "dev 3: 0 BARRIER_START | 1 GEMM <-0 | 2 REDUCE <-1,0 | "
                                                     "3 BARRIER_END <-2\n");
    expect_plan_has("rs_tila_bf16_pp64_tp8", 128, 1, "\"stages_gathered\": false, \"gemm_pulls\": false, "
                                                     "\"one_hop\": true");
    expect_plan_has("rs_tila_bf16_pp64_tp8", 128, 1, "\"transport\": \"NVLink loads by the block owner's REDUCE "
                                                     "kernel (pull)\", \"pull_partials\": 0");
    expect_plan_has("rs_tila_bf16_pp64_tp8", 128, 0, "128 tiles of 8 stages in one GEMM");
    expect_modes_plan_has("rs_tila_bf16_pp64_tp8", 128, ring, 1, "\"one_hop\": false");
    expect_modes_plan_has("rs_tila_bf16_pp64_tp8", 128, ring, 0, "dev 3: 0 BARRIER_START | 1 GEMM <-0 | "
                                                                "2 BARRIER_END <-1\n");
    for (int modes = 0; modes <= ring; modes += ring) /* the buffers are the same either way: 8 slots of 16 rows */
        expect_modes_plan_has("rs_tila_bf16_pp64_tp8", 128, modes, 1, "\"buffers_per_device\": {\"slots\": 8, "
                              "\"slot_bytes\": 262144, \"slots_bytes\": 2097152, \"flags_bytes\": 2048}");
    /* the barriers beside the GEMM: the REDUCE still follows the start barrier, whose epoch it reads */
    expect_modes_plan_has("rs_tila_bf16_pp64_tp8", 128, TPG_PLAN_OVERLAP, 0, "dev 0: 0 BARRIER_START | 1 GEMM | "
                          "2 REDUCE <-1,0 | 3 BARRIER_END <-2,0\n");
    expect_plan_has("rs_tila_bf16_pp64_tp2", 256, 1, "\"one_hop\": false"); /* 128 rows a stage: the ring */
}

/* A's TMA box (plan.h: tpg_plan_a_box_rows): a tile's rows, or a launch's fewer rows rounded up to 8; never trimmed
 * in a 1x2 cluster, whose CTAs multicast A's halves. The plan names a trimmed box with the launch's rows: all M rows
 * where the walk is one GEMM of them (one-hop, gathered), else a stage's. */
TPG_TEST(a_box_rule) {
    tpg_kernel_desc k = {0};
    k.bm = 64, k.cluster_m = 1, k.cluster_n = 1;
    const int64_t rows[] = {1, 12, 16, 17, 63, 64, 65, 100000};
    const int want64[] = {8, 16, 16, 24, 64, 64, 64, 64}, want128[] = {8, 16, 16, 24, 64, 64, 72, 128};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        k.bm = 64;
        TPG_EXPECT_EQ_INT(tpg_plan_a_box_rows(&k, rows[i]), want64[i]);
        k.bm = 128;
        TPG_EXPECT_EQ_INT(tpg_plan_a_box_rows(&k, rows[i]), want128[i]);
        k.cluster_n = 2; /* halves of 64 rows, whatever the launch */
        TPG_EXPECT_EQ_INT(tpg_plan_a_box_rows(&k, rows[i]), 64);
        k.cluster_n = 1;
    }
    TPG_EXPECT_EQ_INT((int)tpg_walk_launch_rows(TPG_WALK_ONE_HOP, 8, 16), 128);
    TPG_EXPECT_EQ_INT((int)tpg_walk_launch_rows(TPG_WALK_GATHERED, 4, 24), 96);
    TPG_EXPECT_EQ_INT((int)tpg_walk_launch_rows(TPG_WALK_INTERLEAVED_FEW_ROWS, 4, 24), 24);
    expect_plan_has("rs_tila_bf16_pp64_tp2", 32, 0,
                    "A box             32 of the tile's 64 rows (the launch has 32 rows");
    expect_ring_plan_has("rs_tila_bf16_pp64_tp2", 32, 0, "A box             16 of the tile's 64 rows");
    expect_plan_has("ag_rota_bf16_wide_tp1", 12, 0, "A box             16 of the tile's 128 rows");
    char *t = plan_text(find("rs_tila_bf16_pp64_tp8"), 128, 8192, 28672, 1, 0); /* one-hop: 128 rows, whole boxes */
    TPG_EXPECT(t != NULL && !strstr(t, "A box"));
    free(t);
}

/* The interleaved walk (params.c): a ping-pong reduce-scatter ring of one row of tiles a stage, in one wave or of
 * at most TPG_INTERLEAVE_MAX_ROWS rows a stage (then not over the NCCL transport). */
TPG_TEST(stage_minor_rule) {
    tpg_walk_facts w = ring_walk(2, 128, 64, 1, 132); /* 128 units on 132 SMs */
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_INTERLEAVED_ONE_WAVE);
    w.band_waits = 1; /* one wave is safe over NCCL */
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_INTERLEAVED_ONE_WAVE);
    w = ring_walk(4, 128, 33, 1, 132); /* exactly one wave */
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_INTERLEAVED_ONE_WAVE);
    w = ring_walk(4, 128, 34, 1, 132); /* 136 units: two waves of 128-row stages */
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_STAGE_AFTER_STAGE);
    w = ring_walk(4, TPG_INTERLEAVE_MAX_ROWS, 34, 1, 132); /* two waves of 64-row stages */
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_INTERLEAVED_FEW_ROWS);
    w.band_waits = 1; /* ... but not over NCCL */
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_STAGE_AFTER_STAGE);
    w.band_waits = 0;
    w.b_bytes = TPG_INTERLEAVE_MIN_B_BYTES - 1; /* ... nor where a stage's B stays in L2 */
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_STAGE_AFTER_STAGE);
    w = ring_walk(2, 128, 64, 1, 132);
    w.b_bytes = 1; /* one wave: B's size does not matter */
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_INTERLEAVED_ONE_WAVE);
    w = ring_walk(2, TPG_INTERLEAVE_MAX_ROWS + 1, 128, 1, 132); /* 65 rows (a 128-row tile) in two waves */
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_STAGE_AFTER_STAGE);
    w = ring_walk(2, 128, 64, 1, 66); /* the one-wave ring on half a GPU */
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_STAGE_AFTER_STAGE);
    w = ring_walk(2, 128, 33, 2, 132); /* batches count: 132 units */
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_INTERLEAVED_ONE_WAVE);
    w = ring_walk(2, 128, 34, 2, 132);
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_STAGE_AFTER_STAGE);
    /* never: two rows a stage, a cooperative kernel, all-gather, stages that split N (TilingB: the stages read
     * different B tiles), one stage, clusters (the grid may be smaller) */
    const tpg_walk_facts few = ring_walk(2, 64, 16, 1, 132);
    tpg_walk_facts never[7];
    for (int i = 0; i < 7; i++) never[i] = few;
    never[0].tiles_m = 2;
    never[1].pingpong = 0;
    never[2].reduce_scatter = 0;
    never[3].stages_split_m = 0;
    never[4].stages = 1;
    never[5].cluster_m = 2;
    never[6].cluster_n = 2;
    for (int i = 0; i < 7; i++) TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&never[i]), TPG_WALK_STAGE_AFTER_STAGE);
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&few), TPG_WALK_INTERLEAVED_ONE_WAVE); /* the control */
}

/* An all-gather walk of one row of tiles a stage on a ping-pong kernel whose copies are chained, of l batches. */
static tpg_walk_facts gather_walk(int stages, int64_t rows, int64_t tiles_n, int64_t l, int sms) {
    tpg_walk_facts w = ring_walk(stages, rows, tiles_n, l, sms);
    w.reduce_scatter = 0;
    w.copies_chained = 1;
    return w;
}

/* The gathered all-gather walk: at most TPG_GATHER_MAX_ROWS rows a stage and one batch, chained copies, not over
 * NCCL - on any kernel, in any number of waves, whatever B's size (one GEMM of all rows: no tile is part-filled by a
 * stage's rows, B is read once). */
TPG_TEST(stage_gathered_rule) {
    tpg_walk_facts w = gather_walk(2, TPG_GATHER_MAX_ROWS, 16, 1, 132);
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_GATHERED);
    w = gather_walk(8, 16, 104, 1, 132); /* several waves */
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_GATHERED);
    const tpg_walk_facts gathered = gather_walk(4, 32, 16, 1, 132);
    tpg_walk_facts any[6];
    for (int i = 0; i < 6; i++) any[i] = gathered;
    any[0].pingpong = 0; /* cooperative */
    any[1].cluster_m = 2;
    any[2].tiles_m = 2;
    any[3].b_bytes = 1;
    any[4].sms = 16;
    any[5].stage_rows = 1;
    for (int i = 0; i < 6; i++) TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&any[i]), TPG_WALK_GATHERED);
    tpg_walk_facts never[6];
    for (int i = 0; i < 6; i++) never[i] = gathered;
    never[0].stage_rows = TPG_GATHER_MAX_ROWS + 1;
    never[1].l = 2;
    never[2].band_waits = 1;
    never[3].copies_chained = 0;
    never[4].stages_split_m = 0; /* RotatingB */
    never[5].stages = 1;
    for (int i = 0; i < 6; i++) TPG_EXPECT(tpg_plan_walk_order(&never[i]) != TPG_WALK_GATHERED);
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&never[0]), TPG_WALK_STAGE_AFTER_STAGE);
    never[1].tiles_m = 1; /* batched: the gated arm's */
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&never[1]), TPG_WALK_INTERLEAVED_GATED);
}

/* The gated all-gather walk: batched (else gathered), at most TPG_INTERLEAVE_MAX_ROWS rows and at least
 * TPG_INTERLEAVE_MIN_B_BYTES of B a stage, in one wave or more, chained copies, not over NCCL; never the one-wave
 * arm (B in L2 is re-read cheaply, and the stage-0 tiles would wait for shards they do not need). */
TPG_TEST(stage_gated_rule) {
    tpg_walk_facts w = gather_walk(2, TPG_INTERLEAVE_MAX_ROWS, 16, 2, 132);
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_INTERLEAVED_GATED);
    w = gather_walk(4, 32, 208, 2, 132); /* several waves */
    TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&w), TPG_WALK_INTERLEAVED_GATED);
    const tpg_walk_facts gated = gather_walk(2, TPG_INTERLEAVE_MAX_ROWS, 16, 2, 132);
    tpg_walk_facts never[8];
    for (int i = 0; i < 8; i++) never[i] = gated;
    never[0].stage_rows = TPG_INTERLEAVE_MAX_ROWS + 1;
    never[1].b_bytes = TPG_INTERLEAVE_MIN_B_BYTES - 1; /* also in one wave */
    never[2].band_waits = 1;
    never[3].copies_chained = 0;
    never[4].stages_split_m = 0; /* RotatingB */
    never[5].pingpong = 0;
    never[6].tiles_m = 2;
    never[7].cluster_m = 2;
    for (int i = 0; i < 8; i++) TPG_EXPECT_EQ_INT(tpg_plan_walk_order(&never[i]), TPG_WALK_STAGE_AFTER_STAGE);
}

/* The plan's walk order line and JSON field for the shipped configs (N = 8192, K = 28672 unless given). */
TPG_TEST(stage_minor_plan) {
    /* the reduce-scatter rings of at most 64 rows a stage: kept a ring (the default there is one-hop: one_hop_plan) */
    expect_ring_plan_has("rs_tila_bf16_pp64_tp2", 128, 0, "walk order        stages interleaved (a ping-pong "
                                                     "reduce-scatter ring of one wave");
    expect_ring_plan_has("rs_tila_bf16_pp64_tp2", 128, 1, "\"stage_minor\": true");
    expect_plan_has("rs_tila_bf16_pp64_tp2", 512, 1, "\"stage_minor\": false"); /* four tile rows a stage */
    /* all-gather: at 128 rows a stage gathered - tp slots; by default the GEMM pulls every shard (no copy or flag
     * node: START -> GEMM -> END); by copy engine (asked, or beside the barriers) the own shard's copy a GEMM
     * dependency, every stage on the last copy's flag; batched, at 64 rows, interleaved and gated; at 256 rows stage
     * after stage, each stage on its own shard */
    const int ce = TPG_PLAN_COPY_ENGINE;
    expect_plan_has("ag_rota_bf16_pp64_tp2", 256, 1, "\"stage_minor\": false, \"stages_gated\": false, "
                                                     "\"stages_gathered\": true, \"gemm_pulls\": true");
    expect_modes_plan_has("ag_rota_bf16_pp64_tp2", 256, ce, 1, "\"stages_gathered\": true, \"gemm_pulls\": false");
    expect_modes_plan_has("ag_rota_bf16_pp64_tp2", 256, TPG_PLAN_OVERLAP, 1, "\"gemm_pulls\": false");
    expect_plan_has("ag_rota_bf16_pp64_tp2", 256, 1, "\"waits_on\": \"its own CTAs' pulls of every shard (gathered");
    expect_plan_has("ag_rota_bf16_pp64_tp2", 256, 1, "\"transport\": \"NVLink loads by the GEMM's CTAs (pull)\"");
    expect_plan_has("ag_rota_bf16_pp64_tp2", 256, 1, "{\"device\": 1, \"nodes\": [{\"index\": 0, \"kind\": "
                                                     "\"BARRIER_START\", \"stage\": -1, \"peer\": -1, \"slot\": -1, "
                                                     "\"piece\": 0, \"own_shard\": false, \"deps\": []}, "
                                                     "{\"index\": 1, \"kind\": \"GEMM\"");
    expect_plan_has("ag_rota_bf16_wide_tp8", 128, 0, "dev 7: 0 BARRIER_START | 1 GEMM <-0 | 2 BARRIER_END <-1\n");
    expect_plan_has("ag_rota_bf16_wide_tp8", 128, 0, "pulled by the GEMM's CTAs before their tiles");
    expect_modes_plan_has("ag_rota_bf16_pp64_tp2", 256, ce, 1, "\"stage\": 0, \"block\": 1, \"peer\": 1, "
                          "\"src_slot\": -1, \"dst_peer\": -1, \"dst_slot\": -1, \"waits_on\": \"flag 1: the last "
                          "copy, and the own shard's copy (gathered");
    for (int modes = 0; modes <= ce; modes += ce) /* the buffers are the same either way */
        expect_modes_plan_has("ag_rota_bf16_pp64_tp2", 256, modes, 1, "\"buffers_per_device\": {\"slots\": 2, "
                              "\"slot_bytes\": 7340032, \"slots_bytes\": 14680064, \"flags_bytes\": 256}, "
                              "\"bytes_moved_per_device\": 7340032");
    expect_modes_plan_has("ag_rota_bf16_pp64_tp2", 256, ce, 1, "{\"device\": 1, \"nodes\": [{\"index\": 0, \"kind\": "
                          "\"COPY\", \"stage\": 0, \"peer\": 1, \"slot\": 1, \"piece\": 0, \"own_shard\": true, "
                          "\"deps\": []}, {\"index\": 1, \"kind\": \"BARRIER_START\"");
    expect_modes_plan_has("ag_rota_bf16_pp64_tp2", 256, ce, 1, "{\"index\": 4, \"kind\": \"GEMM\", \"stage\": -1, "
                          "\"peer\": -1, \"slot\": -1, \"piece\": 0, \"own_shard\": false, \"deps\": [1, 0]}, "
                          "{\"index\": 5, \"kind\": \"BARRIER_END\"");
    expect_plan_has("ag_rota_bf16_wide_tp8", 128, 0, "walk order        gathered (an all-gather of at most 128 rows");
    expect_modes_plan_has("ag_rota_bf16_wide_tp8", 128, ce, 0, "| 14 COPY[s=7 peer=6 slot=6] <-13 |");
    expect_modes_plan_has("ag_rota_bf16_wide_tp8", 128, ce, 0, "dev 7: 0 COPY[s=0 peer=7 slot=7 own shard] | 1 "
                          "BARRIER_START |");
    expect_plan_has("ag_rota_bf16_pp64_tp2", 512, 1, "\"stage_minor\": false, \"stages_gated\": false, "
                                                     "\"stages_gathered\": false");
    expect_plan_has("ag_rota_bf16_pp64_tp2", 512, 1, "\"waits_on\": \"nothing (own A shard)\"");
    expect_plan_has("ag_rota_bf16_pp64_tp2", 512, 1, "\"buffers_per_device\": {\"slots\": 1,");
    char *batched = plan_text(find("ag_rota_bf16_pp64_tp2"), 128, 8192, 28672, 2, 0);
    TPG_EXPECT(batched != NULL);
    if (batched) TPG_EXPECT_STR_CONTAINS(batched, "walk order        stages interleaved and gated");
    free(batched);
    expect_ring_plan_has("rs_tila_bf16_pp64_tp2", 128, 1, "\"stage_minor\": true, \"stages_gated\": false");
    expect_plan_has("rs_tilb_bf16_pp64_tp2", 64, 1, "\"stage_minor\": false"); /* one row, one wave, split N */
    /* 256 units of 32 rows: two waves */
    expect_ring_plan_has("rs_tila_bf16_pp64_tp4", 128, 0, "interleaved (a ping-pong reduce-scatter ring of at most 64 rows");
    char *t = plan_modes(find("rs_tila_bf16_pp64_tp8"), 256, 8192, 8192, 1, 0, TPG_PLAN_RS_RING, 1); /* 32 rows, 16 MiB of B a stage */
    TPG_EXPECT(t != NULL);
    if (t) TPG_EXPECT_STR_CONTAINS(t, "\"stage_minor\": false");
    free(t);
    expect_plan_has("rs_tila_bf16_pp64_tp4", 512, 1, "\"stage_minor\": false"); /* two tile rows a stage */
    /* the 128x128 ping-pong: one tile row of 128 rows a stage in two waves (the row cap decides), and of 16 rows
     * with 56 MiB of B in four */
    expect_plan_has("rs_tila_bf16_tp4", 512, 1, "\"stage_minor\": false");
    const tpg_config_desc *pushing_pp128 = pushing("rs_tila_bf16_tp8"); /* a copy-engine ring never interleaves */
    TPG_ASSERT(pushing_pp128 != NULL);                                   /* past one wave */
    const char *pp128 = pushing_pp128->name;
    expect_ring_plan_has(pp128, 128, 0, "interleaved (a ping-pong reduce-scatter ring of at most 64 rows");
    /* B's threshold is bytes: at 16 rows and K = 3072 a stage, bf16 reads 48 MiB of B, e4m3 24 MiB */
    const char *want[2][2] = {{pp128, "\"stage_minor\": true"}, {"rs_tila_e4m3_tp8", "\"stage_minor\": false"}};
    for (int i = 0; i < 2; i++) {
        char *p = plan_modes(find(want[i][0]), 128, 8192, 24576, 1, 0, TPG_PLAN_RS_RING, 1);
        TPG_EXPECT(p != NULL);
        if (p) TPG_EXPECT_STR_CONTAINS(p, want[i][1]);
        free(p);
    }
}

/* What the plan says a launch does where the walk decides it: the stream-K region of the one GEMM of all rows (one-hop,
 * gathered; a kept ring's stages have none: stream_k.c), the gated walk's wait on the last copy's flag for every stage
 * (params.c: gate_on_last_shard), and a one-device graph left as it is beside the barriers (it has none). */
TPG_TEST(plan_follows_the_launch) {
    expect_plan_has("rs_tila_bf16_sk64_tp2", 48, 0, "stream-K          64 of the 64 tiles (224 k-blocks each)");
    expect_ring_plan_has("rs_tila_bf16_sk64_tp2", 48, 0, "stream-K          0 of the 128 tiles (224 k-blocks each) "
                         "split along k at 132 SMs: none");
    char *t = plan_modes(find("ag_rota_bf16_pp64_tp4"), 256, 8192, 28672, 2, 0, 0, 1); /* 64 rows, batched: gated */
    TPG_ASSERT(t != NULL);
    int waits = 0;
    for (const char *at = t; (at = strstr(at, "\"waits_on\": \"flag 3: the last copy (gated")) != NULL; at++) waits++;
    TPG_EXPECT_EQ_INT(waits, 16); /* 4 devices x 4 stages, each device's last copy that of stage 3 */
    free(t);
    expect_modes_plan_has("ag_rota_bf16_tp1", 512, TPG_PLAN_OVERLAP, 0, "dev 0: 0 GEMM\n");
}

TPG_TEST(tp1_moves_nothing) {
    const char *names[] = {"rs_tilb_fp16_tp1", "ag_rota_bf16_tp1"};
    for (int i = 0; i < 2; i++) {
        const tpg_config_desc *c = find(names[i]);
        TPG_ASSERT(c != NULL);
        tpg_plan_shape ps;
        TPG_ASSERT_EQ_INT(tpg_plan_compute(c, 512, 1024, 256, 1, 0, &ps), TPG_OK);
        TPG_EXPECT_EQ_INT(ps.num_slots, 0);
        TPG_EXPECT_EQ_INT(ps.moved_bytes, 0);
        TPG_EXPECT_EQ_INT(ps.flags_bytes, 0);
        TPG_EXPECT_EQ_INT(ps.copy_chunks, 0);
    }
}

TPG_TEST(invalid_arguments) {
    tpg_plan_shape ps;
    const tpg_config_desc *c = find("ag_rota_bf16_tp2");
    TPG_ASSERT(c != NULL);
    TPG_EXPECT_EQ_INT(tpg_plan_compute(NULL, 1, 1, 1, 1, 0, &ps), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_plan_compute(c, 0, 1, 1, 1, 0, &ps), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_plan_compute(c, 1, 1, 1, 0, 0, &ps), TPG_ERR_INVALID_ARGUMENT);
    /* k = 0 too: the kernels rely on k >= 1 (every tile has a k-block; its first wgmma zeroes the accumulators) */
    TPG_EXPECT_EQ_INT(tpg_plan_compute(c, 1, 1, 0, 1, 0, &ps), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_plan_write(NULL, c, 1, 1, 1, 1, 0, 0, 0), TPG_ERR_INVALID_ARGUMENT);
    /* A shape that validation rejects still has a plan. */
    TPG_EXPECT_EQ_INT(tpg_plan_compute(c, 1001, 1000, 100, 1, 0, &ps), TPG_OK);
}

TPG_TEST(text_names_stages_peers_and_traffic) {
    TPG_ASSERT(pushing("rs_tila_bf16_tp4") != NULL);
    char *t = plan_text(pushing("rs_tila_bf16_tp4"), 16384, 8192, 8192, 1, 0);
    TPG_ASSERT(t != NULL);
    TPG_EXPECT_STR_CONTAINS(t, "ReduceScatter1D_TilingA_RotatingC");
    TPG_EXPECT_STR_CONTAINS(t, "Local GEMM Problem Size (per stage): 4096 x 8192 x 2048");
    /* Device 0, stage 1: block (0-1-1)%4 = 2, peer 3, src slot 0, pushes to dev 1 slot 1. */
    TPG_EXPECT_STR_CONTAINS(t, "  0    1      2      3     0         1         1         dev 1 slot 1 (+flags)");
    /* Last stage writes the user's D block d. */
    TPG_EXPECT_STR_CONTAINS(t, "  2    3      2      1     2         -1        -1        own D block 2");
    TPG_EXPECT_STR_CONTAINS(t, "pushed over NVLink");
    TPG_EXPECT_STR_CONTAINS(t, "dev 3: 0 BARRIER_START | 1 GEMM <-0 | 2 BARRIER_END <-1");
    free(t);

    t = plan_text(find("ag_rota_bf16_tp2"), 16384, 106496, 16384, 1, 0);
    TPG_ASSERT(t != NULL);
    TPG_EXPECT_STR_CONTAINS(t, "Local GEMM Problem Size (per stage): 8192 x 53248 x 16384");
    TPG_EXPECT_STR_CONTAINS(t, "flag 1: copy of A shard 0 from dev 0 into slot 0");
    TPG_EXPECT_STR_CONTAINS(t, "Bytes moved per device per call: 268435456 B (256.0 MiB)");
    TPG_EXPECT_STR_CONTAINS(t, "copy engine");
    TPG_EXPECT_STR_CONTAINS(t, "COPY[s=1 peer=0 slot=0]");
    free(t);
}

TPG_TEST(json_is_one_balanced_object) {
    for (int i = 0; i < tpg_num_configs; i++) {
        char *t = plan_text(&tpg_configs[i], 2048, 3072, 1024, 2, 1);
        TPG_ASSERT(t != NULL);
        size_t len = strlen(t);
        TPG_EXPECT(len > 2 && t[0] == '{' && t[len - 1] == '\n' && t[len - 2] == '}');
        int depth = 0, min_depth = 0, in_str = 0;
        for (size_t j = 0; j + 1 < len; j++) {
            char ch = t[j];
            if (in_str) {
                if (ch == '\\') j++;
                else if (ch == '"') in_str = 0;
                continue;
            }
            if (ch == '"') in_str = 1;
            else if (ch == '{' || ch == '[') depth++;
            else if (ch == '}' || ch == ']') depth--;
            if (depth < min_depth) min_depth = depth;
            if (depth == 0 && j + 2 < len) min_depth = -1; /* closed before the end */
        }
        TPG_EXPECT_EQ_INT(depth, 0);
        TPG_EXPECT_EQ_INT(min_depth, 0);
        TPG_EXPECT_STR_CONTAINS(t, "\"bytes_moved_per_device\"");
        free(t);
    }
}

TPG_TEST(names) {
    TPG_EXPECT_EQ_STR(tpg_plan_node_kind_name(TPG_NODE_COPY), "COPY");
    TPG_EXPECT_EQ_STR(tpg_plan_node_kind_name(99), "UNKNOWN");
    TPG_EXPECT_EQ_STR(tpg_plan_dim_name(TPG_DIM_K), "K");
    TPG_EXPECT_EQ_STR(tpg_plan_operand_name(TPG_OPERAND_D), "D");
}

TPG_TEST_MAIN(TPG_CASE(allgather_rotating_a_seed_default),
              TPG_CASE(seed_tp8_local_problem), TPG_CASE(allgather_rotating_b_moves_b),
              TPG_CASE(allgather_copies_cut_into_pieces), TPG_CASE(reduce_scatter_pushes_partials),
              TPG_CASE(stage_minor_rule), TPG_CASE(stage_gathered_rule), TPG_CASE(stage_gated_rule),
              TPG_CASE(stage_minor_plan), TPG_CASE(one_hop_rule), TPG_CASE(one_hop_plan), TPG_CASE(a_box_rule),
              TPG_CASE(plan_follows_the_launch),
              TPG_CASE(tp1_moves_nothing),
              TPG_CASE(invalid_arguments),
              TPG_CASE(text_names_stages_peers_and_traffic), TPG_CASE(json_is_one_balanced_object), TPG_CASE(names))
