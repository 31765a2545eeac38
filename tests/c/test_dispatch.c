/* tpg_dispatch_find over the generated dispatch table (generated/dispatch.c): exact layer lookups,
 * nearest-M selection, wildcards, and the failures; and tpg_config_pick, the default config of a
 * schedule for one GEMM (schedules.yaml prefer_from_local_k). Pure lookups: no device needed. */
#include <string.h>

#include "tables.h"
#include <stdint.h>

#include "tpg_test.h"
#include "tpgemm.h"

/* The config named by a row, as tpg_config_get reports it. */
static const char *config_name(const tpg_dispatch_entry *e) {
    static tpg_config_info info;
    return tpg_config_get(e->config, &info) == TPG_OK ? info.name : "?";
}

TPG_TEST(layer_lookup_names_the_preset_config) {
    tpg_dispatch_entry e;
    /* TP = 4: no tuned file covers it, so the preset's defaults: the all-gather default is the wide
     * config (prefer_from_local_k 1: every shape) */
    TPG_ASSERT_EQ_INT(tpg_dispatch_find("llama3-70b", "qkv", 16384, 0, 0, TPG_DTYPE_BF16, NULL, 4, &e), TPG_OK);
    TPG_EXPECT_EQ_INT(e.n, 10240);
    TPG_EXPECT_EQ_INT(e.k, 8192);
    TPG_EXPECT_EQ_STR(e.schedule, "AllGather1D_TilingCD_RotatingA");
    TPG_EXPECT_EQ_STR(config_name(&e), "ag_rota_bf16_wide_tp4");
    /* reduce-scatter: per-stage K = 28672 / 4 = 7168 < 10240, so the ping-pong config */
    TPG_ASSERT_EQ_INT(tpg_dispatch_find("llama3-70b", "down", 16384, 0, 0, TPG_DTYPE_BF16, NULL, 4, &e), TPG_OK);
    TPG_EXPECT_EQ_INT(e.k, 28672);
    TPG_EXPECT_EQ_STR(config_name(&e), "rs_tila_bf16_tp4");
}

TPG_TEST(shape_lookup_without_model_matches_n_and_k) {
    tpg_dispatch_entry e;
    TPG_ASSERT_EQ_INT(tpg_dispatch_find(NULL, NULL, 4096, 57344, 8192, TPG_DTYPE_BF16, NULL, 4, &e), TPG_OK);
    TPG_EXPECT_EQ_STR(e.model, "llama3-70b");
    TPG_EXPECT_EQ_STR(e.layer, "gate_up");
    TPG_EXPECT_EQ_INT(e.tp, 4);
}

/* llama3-8b's attn_out (N 4096, K 4096) and down (N 4096, K 14336) share N: K tells them apart, and without K the
 * first of the equals wins (attn_out: the preset's layers in order qkv, attn_out, gate_up, down). */
TPG_TEST(shape_lookup_filters_by_k_and_takes_the_first_of_equals) {
    tpg_dispatch_entry e;
    TPG_ASSERT_EQ_INT(tpg_dispatch_find(NULL, NULL, 8192, 4096, 14336, TPG_DTYPE_BF16, NULL, 2, &e), TPG_OK);
    TPG_EXPECT_EQ_STR(e.layer, "down");
    TPG_ASSERT_EQ_INT(tpg_dispatch_find(NULL, NULL, 8192, 4096, 4096, TPG_DTYPE_BF16, NULL, 2, &e), TPG_OK);
    TPG_EXPECT_EQ_STR(e.layer, "attn_out");
    TPG_ASSERT_EQ_INT(tpg_dispatch_find("llama3-8b", NULL, 0, 4096, 0, TPG_DTYPE_BF16, NULL, 2, &e), TPG_OK);
    TPG_EXPECT_EQ_STR(e.layer, "attn_out");
    TPG_ASSERT_EQ_INT(tpg_dispatch_find("llama3-8b", NULL, 1, 4096, 0, TPG_DTYPE_BF16, NULL, 2, &e), TPG_OK);
    TPG_EXPECT_EQ_STR(e.layer, "attn_out");
}

TPG_TEST(every_row_finds_itself) {
    const int rows = tpg_dispatch_count();
    TPG_ASSERT(rows > 0);
    for (int i = 0; i < rows; i++) {
        tpg_dispatch_entry want, got;
        TPG_ASSERT_EQ_INT(tpg_dispatch_get(i, &want), TPG_OK);
        TPG_ASSERT_EQ_INT(tpg_dispatch_find(want.model, want.layer, want.m, want.n, want.k, want.dtype,
                                            want.schedule, want.tp, &got), TPG_OK);
        TPG_EXPECT_EQ_INT(got.config, want.config);
        TPG_EXPECT(got.m == want.m && got.n == want.n && got.k == want.k);
    }
}

TPG_TEST(misses_and_bad_arguments) {
    tpg_dispatch_entry e;
    TPG_EXPECT_EQ_INT(tpg_dispatch_find("llama3-70b", "qkv", 16384, 0, 0, TPG_DTYPE_BF16, NULL, 3, &e),
                      TPG_ERR_UNKNOWN_CONFIG); /* no TP = 3 */
    TPG_EXPECT_EQ_INT(tpg_dispatch_find("llama3-70b", "qkv", 16384, 0, 0, TPG_DTYPE_E4M3, NULL, 2, &e),
                      TPG_ERR_UNKNOWN_CONFIG); /* no fp8 rows */
    TPG_EXPECT_EQ_INT(tpg_dispatch_find("no-such-model", NULL, 0, 0, 0, TPG_DTYPE_BF16, NULL, 2, &e),
                      TPG_ERR_UNKNOWN_CONFIG);
    TPG_EXPECT_EQ_INT(tpg_dispatch_find("llama3-70b", "qkv", 16384, 0, 0, TPG_DTYPE_BF16, NULL, 0, &e),
                      TPG_ERR_UNKNOWN_CONFIG); /* tp must be equal: 0 is no wildcard */
    TPG_EXPECT_EQ_INT(tpg_dispatch_find("llama3-70b", "qkv", 16384, 0, 0, TPG_DTYPE_BF16, NULL, 2, NULL),
                      TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_dispatch_get(-1, &e), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_dispatch_get(tpg_dispatch_count(), &e), TPG_ERR_INVALID_ARGUMENT);
    tpg_config_info info;
    TPG_EXPECT_EQ_INT(tpg_config_get(-1, &info), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_config_get(tpg_config_count(), &info), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_config_get(tpg_config_count() - 1, &info), TPG_OK);
}

/* A miss names every filter it was given and the nearest row, with the fields that differ: a row of the model and layer
 * asked may exist with other extents, and a message naming only those would read as if it did not. */
TPG_TEST(a_miss_names_the_nearest_row_and_what_differs) {
    tpg_dispatch_entry e;
    TPG_ASSERT_EQ_INT(tpg_dispatch_find("llama3-70b", "down", 16384, 8192, 29568, TPG_DTYPE_BF16, NULL, 2, &e),
                      TPG_ERR_UNKNOWN_CONFIG);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "layer down, dtype bf16, tp 2, n 8192, k 29568;");
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "differs in k: model llama3-70b, layer down, dtype bf16, tp 2");
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "n 8192, k 28672");
    TPG_ASSERT_EQ_INT(tpg_dispatch_find("llama3-70", "qkv", 16384, 0, 0, TPG_DTYPE_BF16, NULL, 2, &e),
                      TPG_ERR_UNKNOWN_CONFIG);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "differs in model: model llama3-");
    TPG_ASSERT_EQ_INT(tpg_dispatch_find("llama3-70b", "o_proj", 16384, 0, 0, TPG_DTYPE_BF16, NULL, 2, &e),
                      TPG_ERR_UNKNOWN_CONFIG);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "differs in layer: model llama3-70b, layer qkv");
    TPG_ASSERT_EQ_INT(tpg_dispatch_find("llama3-70b", "down", 16384, 0, 0, TPG_DTYPE_BF16,
                                        "AllGather1D_TilingCD_RotatingA", 2, &e), TPG_ERR_UNKNOWN_CONFIG);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "schedule AllGather1D_TilingCD_RotatingA;");
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "differs in schedule: ");
}

/* The name of the config tpg_config_pick chooses, or "?" when it fails. */
static const char *picked(const char *schedule, int tp, int64_t k) {
    static tpg_config_info info;
    int index = -1;
    if (tpg_config_pick(schedule, tp, TPG_DTYPE_BF16, 16384, 8192, k, &index) != TPG_OK) return "?";
    return tpg_config_get(index, &info) == TPG_OK ? info.name : "?";
}

TPG_TEST(config_pick_all_gather_prefers_wide_for_every_shape) {
    /* ag_rota_bf16_wide has prefer_from_local_k 1: it wins over the first by name (ag_rota_bf16) for
     * every K, the unknown one (k = 0) included */
    TPG_EXPECT_EQ_STR(picked("AllGather1D_TilingCD_RotatingA", 2, 0), "ag_rota_bf16_wide_tp2");
    TPG_EXPECT_EQ_STR(picked("AllGather1D_TilingCD_RotatingA", 2, 64), "ag_rota_bf16_wide_tp2");
    TPG_EXPECT_EQ_STR(picked("AllGather1D_TilingCD_RotatingA", 2, 28672), "ag_rota_bf16_wide_tp2");
}

TPG_TEST(config_pick_reduce_scatter_looks_at_the_per_stage_k) {
    /* rs_tila_bf16_wide has prefer_from_local_k 10240, compared with K / tp */
    const char *rs = "ReduceScatter1D_TilingA_RotatingC";
    TPG_EXPECT_EQ_STR(picked(rs, 2, 28672), "rs_tila_bf16_wide_tp2"); /* 14336 */
    TPG_EXPECT_EQ_STR(picked(rs, 2, 20480), "rs_tila_bf16_wide_tp2"); /* 10240: the bound holds */
    TPG_EXPECT_EQ_STR(picked(rs, 2, 8192), "rs_tila_bf16_tp2");       /* 4096 */
    TPG_EXPECT_EQ_STR(picked(rs, 4, 28672), "rs_tila_bf16_tp4");      /* 7168: the global K would pass */
    TPG_EXPECT_EQ_STR(picked(rs, 2, 0), "rs_tila_bf16_tp2");          /* unknown K: the first by name */
}

/* The pick on a device of `sms` SMs for the whole shape (m x n x k). */
static const char *picked_on(const char *schedule, int tp, int64_t m, int64_t n, int64_t k, int sms) {
    static tpg_config_info info;
    int index = -1;
    if (tpg_config_pick_sms(schedule, tp, TPG_DTYPE_BF16, m, n, k, sms, &index) != TPG_OK) return "?";
    return tpg_config_get(index, &info) == TPG_OK ? info.name : "?";
}

TPG_TEST(config_pick_takes_the_smaller_tile_where_the_wide_last_wave_is_nearly_empty) {
    const char *ag = "AllGather1D_TilingCD_RotatingA", *rs = "ReduceScatter1D_TilingA_RotatingC";
    /* 70B-qkv at M = 2048, TP = 2: 320 tiles of 128x256 (2.42 waves: 81% of the slots) against 640 of 128x128
     * (4.85 waves: 97%) on 132 SMs; on 160 SMs the 320 fill two whole waves and the wide config stays */
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, 2048, 10240, 8192, 132), "ag_rota_bf16_tp2");
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, 2048, 10240, 8192, 160), "ag_rota_bf16_wide_tp2");
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, 2048, 10240, 8192, 0), "ag_rota_bf16_wide_tp2"); /* shape-blind */
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, (int64_t)1 << 40, 10240, 8192, 132), "ag_rota_bf16_wide_tp2"); /* no shape */
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, 512, 57344, 8192, 132), "ag_rota_bf16_tp2");     /* 85% against 97% */
    /* within the margin the preferred one stays: 70B-qkv at M = 16384 (97.0% against 99.5%), 405B-fc1, and
     * 2048 x 7168 x 4096 at TP = 2, whose 128x160 walk fills 93% against 85% (measured 4.4% slower there) */
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, 16384, 10240, 8192, 132), "ag_rota_bf16_wide_tp2");
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, 16384, 106496, 16384, 132), "ag_rota_bf16_wide_tp2");
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, 2048, 7168, 4096, 132), "ag_rota_bf16_wide_tp2");
    /* the fullest fallback, not the first: 70B-qkv at M = 512 walks 80 wide or 160 ping-pong tiles (61% each) or
     * 128 of 128x160 (97%); at M = 1024, 81% ping-pong against 97% 128x160; a tie goes to the first by name */
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, 512, 10240, 8192, 132), "ag_rota_bf16_w160_tp2");
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, 1024, 10240, 8192, 132), "ag_rota_bf16_w160_tp2");
    TPG_EXPECT_EQ_STR(picked_on("AllGather1D_TilingCD_RotatingB", 2, 512, 10240, 8192, 132), "ag_rotb_bf16_w160_tp2");
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, 512, 10240, 8192, 128), "ag_rota_bf16_w160_tp2");   /* one whole wave */
    /* M = 2048: 128x128, 128x160 and 64x128 all fill 97%; weighted 97, 87 and 78 */
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, 2048, 10240, 8192, 132), "ag_rota_bf16_tp2");
    /* M = 128: two stages of 64 rows fill the ping-pong 64x128 tiles (61%) and half of the 128-row ones (30%) */
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, 128, 10240, 8192, 132), "ag_rota_bf16_pp64_tp2");
    TPG_EXPECT_EQ_STR(picked_on(rs, 2, 128, 8192, 8192, 132), "rs_tila_bf16_pp64_tp2"); /* none preferred */
    TPG_EXPECT_EQ_STR(picked_on(rs, 2, 16384, 8192, 8192, 132), "rs_tila_bf16_tp2");     /* never by name */
    /* decode, the row rule: M = 32 one-hop at TP = 2 is one GEMM of 32 rows - 64 tiles of 128x128 or of 64x128 -
     * whose wave scores (12% against 20% weighted) the wave check keeps; the 64x128 does the same walk with half the
     * rows a tile. Not where the tile counts differ (M = 2048: 97% fill both, more 64-row tiles) */
    TPG_EXPECT_EQ_STR(picked_on(rs, 2, 32, 8192, 8192, 132), "rs_tila_bf16_pp64_tp2");
    TPG_EXPECT_EQ_STR(picked_on(rs, 1, 16, 4096, 4096, 132), "rs_tila_bf16_pp64_tp1");
    TPG_EXPECT_EQ_STR(picked_on(rs, 8, 16, 8192, 28672, 132), "rs_tila_bf16_pp64_tp8");
    /* its one-row clause: 70B-fc1 at 16 tokens (one GEMM of 16 rows; 224 tiles of 64x128, 1.7 waves, against the wide
     * kernel's 112 in one wave, which the wave check keeps): all 16 rows fit one row of 64x128 tiles. Not at 256
     * rows a stage (M = 512) */
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, 16, 57344, 8192, 132), "ag_rota_bf16_pp64_tp2");
    TPG_EXPECT_EQ_STR(picked_on(ag, 1, 16, 28672, 8192, 132), "ag_rota_bf16_pp64_tp1");
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, 512, 57344, 8192, 132), "ag_rota_bf16_tp2");
    /* the split rule, last (TP = 1): 32 tiles of 128 k-blocks - 24% of 132 SMs, 24.6% of 130 - go to the stream-K
     * 64x128; at 104 SMs 31% is past the share, and so are 70B-qkv's 40 tiles at 16 tokens (the spread ping-pong);
     * one row of 112 tiles of 224 k-blocks within a wave is too many to spread (spread.h), 70B-fc2's 64 are not;
     * never at TP >= 2, nor at 64 k-blocks */
    TPG_EXPECT_EQ_STR(picked_on(ag, 1, 16, 4096, 8192, 132), "ag_rota_bf16_sk64_tp1");
    TPG_EXPECT_EQ_STR(picked_on(rs, 1, 16, 4096, 8192, 130), "rs_tila_bf16_sk64_tp1");
    TPG_EXPECT_EQ_STR(picked_on(ag, 1, 16, 4096, 8192, 104), "ag_rota_bf16_pp64_tp1");
    TPG_EXPECT_EQ_STR(picked_on(ag, 1, 16, 5120, 8192, 132), "ag_rota_bf16_pp64_tp1");
    TPG_EXPECT_EQ_STR(picked_on(rs, 1, 16, 14336, 14336, 132), "rs_tila_bf16_sk64_tp1");
    TPG_EXPECT_EQ_STR(picked_on(rs, 1, 16, 8192, 14336, 132), "rs_tila_bf16_pp64_tp1");
    TPG_EXPECT_EQ_STR(picked_on(ag, 2, 32, 10240, 8192, 132), "ag_rota_bf16_pp64_tp2");
    TPG_EXPECT_EQ_STR(picked_on(ag, 1, 16, 3072, 4096, 132), "ag_rota_bf16_pp64_tp1");
    /* k-blocks round up: K = 8184 is 127.9 blocks of 64, a tile's 128 k-loop trips */
    TPG_EXPECT_EQ_STR(picked_on(ag, 1, 16, 4096, 8184, 132), "ag_rota_bf16_sk64_tp1");
    /* reduce-scatter: the K rule first (ping-pong below a per-stage K of 10240, whatever the tiles) */
    TPG_EXPECT_EQ_STR(picked_on(rs, 2, 512, 8192, 28672, 132), "rs_tila_bf16_wide_tp2");
    TPG_EXPECT_EQ_STR(picked_on(rs, 2, 2048, 8192, 8192, 132), "rs_tila_bf16_tp2");
    /* llama3-8b qkv at TP = 8: 192 wide tiles (1.45 waves) against 384 (2.91) */
    TPG_EXPECT_EQ_STR(picked_on(ag, 8, 8192, 6144, 4096, 132), "ag_rota_bf16_tp8");
    /* the margin is "more than": 272 tiles of 128x128 fill 3 waves by exactly 50%, 408 of 64x128 4 waves by 75%,
     * weighted 60% - 10 points more, not more than 10 - and the pick stays */
    TPG_EXPECT_EQ_STR(picked_on("ReduceScatter1D_TilingB_RotatingC", 8, 192, 16896, 8192, 132), "rs_tilb_bf16_tp8");
}

/* tp <= 0 (any): the candidates of every TP, so equals of one kernel at several TPs meet; the first by name wins. */
TPG_TEST(config_pick_of_any_tp_keeps_the_rules_ties_and_bounds) {
    const char *ag = "AllGather1D_TilingCD_RotatingA";
    /* the wave check: the pp64 configs of TP 1 and 2 score alike (one GEMM of 32 rows); the first by name */
    TPG_EXPECT_EQ_STR(picked_on(ag, 0, 32, 28672, 8192, 132), "ag_rota_bf16_pp64_tp1");
    /* the row rule's one row of tiles includes its bound: TP = 2's 64 rows a stage fit one row of 64-row tiles */
    TPG_EXPECT_EQ_STR(picked_on("AllGather1D_TilingCD_RotatingB", 0, 128, 28672, 8192, 132), "ag_rotb_bf16_pp64_tp2");
    /* the row rule's same walk needs the pick's columns: TP = 4's 64x128 walk (one gathered GEMM of 96 rows) has as
     * many tiles as the wide TP = 1 kernel's on 66 SMs, 56, but other columns, and its 96 rows pass one row of 64 */
    TPG_EXPECT_EQ_STR(picked_on(ag, 0, 96, 14336, 8192, 66), "ag_rota_bf16_wide_tp1");
}

TPG_TEST(config_find_without_name_is_the_pick_for_an_unknown_shape) {
    /* tpg_config_find(NULL, ...) predates the shape rule: it must answer what pick does with k = 0 */
    int found = -1, pick = -2;
    TPG_ASSERT_EQ_INT(tpg_config_find(NULL, "ReduceScatter1D_TilingA_RotatingC", 2, TPG_DTYPE_BF16, &found), TPG_OK);
    TPG_ASSERT_EQ_INT(tpg_config_pick("ReduceScatter1D_TilingA_RotatingC", 2, TPG_DTYPE_BF16, 0, 0, 0, &pick), TPG_OK);
    TPG_EXPECT_EQ_INT(found, pick);
}

TPG_TEST(config_pickable_follows_by_name_not_the_partial_route) {
    /* the shipped twins that move partials another way than their family are all by_name, so the picks above
     * cannot tell the rule "leave out by_name" from "leave out those routes": a default with each route in turn can */
    int index = -1;
    TPG_ASSERT_EQ_INT(tpg_config_find("rs_tila_bf16_tp2", NULL, 0, TPG_DTYPE_BF16, &index), TPG_OK);
    tpg_config_desc c = tpg_configs[index];
    c.copy_engine_partials = c.pull_partials = 0; /* the family pushes, whichever route it ships with */
    TPG_EXPECT_EQ_INT(tpg__config_pickable(&c), 1);
    c.copy_engine_partials = 1;
    TPG_EXPECT_EQ_INT(tpg__config_pickable(&c), 1); /* a copy-engine family is a default's candidate */
    c.copy_engine_partials = 0;
    c.pull_partials = 1;
    TPG_EXPECT_EQ_INT(tpg__config_pickable(&c), 1);
    c.pull_partials = 0;
    c.by_name = 1;
    TPG_EXPECT_EQ_INT(tpg__config_pickable(&c), 0);
    c.by_name = 0;
    c.tuned = 1; /* a tuned choice's config runs through its dispatch row (the shipped table has none) */
    TPG_EXPECT_EQ_INT(tpg__config_pickable(&c), 0);
    /* and the shipped twins are the by_name ones, which tpg_config_get reports */
    tpg_config_info info;
    TPG_ASSERT_EQ_INT(tpg_config_find("rs_tila_bf16_pull_tp2", NULL, 0, TPG_DTYPE_BF16, &index), TPG_OK);
    TPG_ASSERT_EQ_INT(tpg_config_get(index, &info), TPG_OK);
    TPG_EXPECT_EQ_INT(info.by_name, 1);
    TPG_EXPECT_EQ_INT(tpg__config_pickable(&tpg_configs[index]), 0);
    TPG_ASSERT_EQ_INT(tpg_config_find("rs_tila_bf16_tp2", NULL, 0, TPG_DTYPE_BF16, &index), TPG_OK);
    TPG_ASSERT_EQ_INT(tpg_config_get(index, &info), TPG_OK);
    TPG_EXPECT_EQ_INT(info.by_name, 0);
}

TPG_TEST(config_pick_failures) {
    int index = -1;
    TPG_EXPECT_EQ_INT(tpg_config_pick("ReduceScatter1D_TilingA_RotatingC", 2, TPG_DTYPE_BF16, 1, 1, 1, NULL),
                      TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_config_pick("NoSuchSchedule", 2, TPG_DTYPE_BF16, 4096, 4096, 4096, &index),
                      TPG_ERR_UNKNOWN_CONFIG);
    TPG_EXPECT_EQ_INT(tpg_config_pick("ReduceScatter1D_TilingA_RotatingC", 3, TPG_DTYPE_BF16, 4096, 4096, 4096,
                                      &index),
                      TPG_ERR_UNKNOWN_CONFIG); /* no TP = 3 */
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "dtype bf16 is generated at tp 3 (the generated ones have tp ");
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), ", 2, 4, 8)");
    TPG_EXPECT_EQ_INT(tpg_config_pick("NoSuchSchedule", 2, TPG_DTYPE_BF16, 4096, 4096, 4096, &index),
                      TPG_ERR_UNKNOWN_CONFIG);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "no config of schedule 'NoSuchSchedule', dtype bf16 is generated");
    TPG_EXPECT_EQ_INT(tpg_config_pick_sms(NULL, 1, TPG_DTYPE_BF16, 4096, 4096, 4096, -5, &index),
                      TPG_ERR_INVALID_ARGUMENT); /* 0 is the K rule alone; below is no grid */
    TPG_EXPECT_EQ_INT(tpg_config_pick_sms(NULL, 1, TPG_DTYPE_BF16, 4096, 4096, 4096, TPG_PICK_SMS_LIMIT + 1, &index),
                      TPG_ERR_INVALID_ARGUMENT);
}

/* Extents no GPU holds get the K rule alone: the wave check's products would leave 64 bits (what UBSan saw, with K
 * near 2^63 or 2^32, before the K limit) and the pick must still be the same as for an unknown shape's K. */
TPG_TEST(config_pick_past_the_extent_limit_is_the_k_rule) {
    const int64_t huge[] = {(int64_t)1 << 31, (int64_t)1 << 32, INT64_MAX - 1};
    int rule = -1;
    TPG_ASSERT_EQ_INT(tpg_config_pick_sms(NULL, 1, TPG_DTYPE_BF16, 4096, 4096, huge[0], 0, &rule), TPG_OK);
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        int index = -1;
        TPG_EXPECT_EQ_INT(tpg_config_pick(NULL, 1, TPG_DTYPE_BF16, 4096, 4096, huge[i], &index), TPG_OK);
        TPG_EXPECT_EQ_INT(index, rule);
        /* M or N from 2^31 on too: the K rule for K = 16 */
        int small_k = -1;
        TPG_ASSERT_EQ_INT(tpg_config_pick_sms(NULL, 1, TPG_DTYPE_BF16, 128, 128, 16, 0, &small_k), TPG_OK);
        TPG_EXPECT_EQ_INT(tpg_config_pick_sms(NULL, 1, TPG_DTYPE_BF16, huge[i], 128, 16, 132, &index), TPG_OK);
        TPG_EXPECT_EQ_INT(index, small_k);
        TPG_EXPECT_EQ_INT(tpg_config_pick_sms(NULL, 1, TPG_DTYPE_BF16, 128, huge[i], 16, 132, &index), TPG_OK);
        TPG_EXPECT_EQ_INT(index, small_k);
        TPG_EXPECT_EQ_INT(tpg_config_pick_sms(NULL, 1, TPG_DTYPE_BF16, 128, 2147483391, huge[i], TPG_PICK_SMS_LIMIT,
                                              &index),
                          TPG_OK);
    }
}

/* A tuned row holds within TPG_TUNED_M_REACH of its M; past it, the schedule's default pick for the M asked. The
 * shipped table has no tuned row, so one is made from llama3-70b qkv at TP = 2 with another config. */
TPG_TEST(a_tuned_row_holds_near_its_m_only) {
    TPG_EXPECT(tpg__tuned_row_reaches(16384, 8192) && tpg__tuned_row_reaches(16384, 32768));
    TPG_EXPECT(!tpg__tuned_row_reaches(16384, 8191) && !tpg__tuned_row_reaches(16384, 32769));
    TPG_EXPECT(tpg__tuned_row_reaches(16384, 0) && tpg__tuned_row_reaches(128, 256) && !tpg__tuned_row_reaches(128, 16));
    tpg_dispatch_entry row, e;
    TPG_ASSERT_EQ_INT(tpg_dispatch_find("llama3-70b", "qkv", 16384, 0, 0, TPG_DTYPE_BF16, NULL, 2, &row), TPG_OK);
    TPG_ASSERT(!row.tuned && row.m == 16384);
    int at128 = -1;
    TPG_ASSERT_EQ_INT(tpg_config_pick(row.schedule, 2, TPG_DTYPE_BF16, 128, row.n, row.k, &at128), TPG_OK);
    TPG_ASSERT(at128 != row.config); /* else the case below could not tell the pick from the tuned choice */
    row.tuned = 1;
    row.config = at128 == 0 ? 1 : 0; /* a choice that neither default pick makes */
    TPG_ASSERT_EQ_INT(tpg__dispatch_resolve(&row, 9000, &e), TPG_OK);
    TPG_EXPECT(e.tuned && e.config == row.config && e.m == 16384);
    TPG_ASSERT_EQ_INT(tpg__dispatch_resolve(&row, 0, &e), TPG_OK);
    TPG_EXPECT(e.tuned && e.config == row.config);
    TPG_ASSERT_EQ_INT(tpg__dispatch_resolve(&row, 128, &e), TPG_OK);
    TPG_EXPECT(!e.tuned && e.config == at128 && e.m == 128 && e.n == row.n && e.k == row.k);
    /* an untuned row: as it is at its own M, the default pick at another */
    row.tuned = 0;
    TPG_ASSERT_EQ_INT(tpg__dispatch_resolve(&row, 16384, &e), TPG_OK);
    TPG_EXPECT(e.config == row.config && e.m == 16384);
    TPG_ASSERT_EQ_INT(tpg_dispatch_find("llama3-70b", "qkv", 128, 0, 0, TPG_DTYPE_BF16, NULL, 2, &e), TPG_OK);
    TPG_EXPECT(!e.tuned && e.config == at128 && e.m == 128);
    /* the nearest row by ratio: a row within the reach is always nearer than one outside it */
    TPG_EXPECT(tpg__m_ratio(16384, 9000) < tpg__m_ratio(2048, 9000));
    TPG_EXPECT(tpg__m_ratio(16384, 8192) == 2.0 && tpg__m_ratio(4096, 8192) == 2.0 && tpg__m_ratio(7, 0) == 1.0);
    row.tuned = 1;
    row.schedule = "NoSuchSchedule";
    TPG_EXPECT_EQ_INT(tpg__dispatch_resolve(&row, 128, &e), TPG_ERR_UNKNOWN_CONFIG);
    TPG_EXPECT(strstr(tpg_last_error(NULL), "NoSuchSchedule") != NULL);
}

TPG_TEST_MAIN(TPG_CASE(layer_lookup_names_the_preset_config), TPG_CASE(shape_lookup_without_model_matches_n_and_k),
              TPG_CASE(shape_lookup_filters_by_k_and_takes_the_first_of_equals),
              TPG_CASE(every_row_finds_itself), TPG_CASE(misses_and_bad_arguments),
              TPG_CASE(a_miss_names_the_nearest_row_and_what_differs),
              TPG_CASE(config_pick_all_gather_prefers_wide_for_every_shape),
              TPG_CASE(config_pick_reduce_scatter_looks_at_the_per_stage_k),
              TPG_CASE(config_pick_takes_the_smaller_tile_where_the_wide_last_wave_is_nearly_empty),
              TPG_CASE(config_pick_of_any_tp_keeps_the_rules_ties_and_bounds),
              TPG_CASE(config_find_without_name_is_the_pick_for_an_unknown_shape),
              TPG_CASE(config_pickable_follows_by_name_not_the_partial_route), TPG_CASE(config_pick_failures),
              TPG_CASE(config_pick_past_the_extent_limit_is_the_k_rule), TPG_CASE(a_tuned_row_holds_near_its_m_only))
