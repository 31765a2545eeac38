/* tpg_dispatch_find over the generated dispatch table (generated/dispatch.c): exact layer lookups,
 * nearest-M selection, wildcards, and the failures. Pure lookups: no device needed. */
#include <string.h>

#include "tpg_test.h"
#include "tpgemm.h"

/* The config named by a row, as tpg_config_get reports it. */
static const char *config_name(const tpg_dispatch_entry *e) {
    static tpg_config_info info;
    return tpg_config_get(e->config, &info) == TPG_OK ? info.name : "?";
}

TPG_TEST(layer_lookup_names_the_preset_config) {
    tpg_dispatch_entry e;
    /* TP = 4: no tuned file covers it (tuned/llama3-70b_tp2.yaml is TP = 2), so the preset's defaults */
    TPG_ASSERT_EQ_INT(tpg_dispatch_find("llama3-70b", "qkv", 16384, 0, 0, TPG_DTYPE_BF16, NULL, 4, &e), TPG_OK);
    TPG_EXPECT_EQ_INT(e.n, 10240);
    TPG_EXPECT_EQ_INT(e.k, 8192);
    TPG_EXPECT_EQ_STR(e.schedule, "AllGather1D_TilingCD_RotatingA");
    TPG_EXPECT_EQ_STR(config_name(&e), "ag_rota_bf16_tp4");
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
    TPG_EXPECT_EQ_INT(tpg_dispatch_find("llama3-70b", "qkv", 16384, 0, 0, TPG_DTYPE_BF16, NULL, 2, NULL),
                      TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_dispatch_get(-1, &e), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_dispatch_get(tpg_dispatch_count(), &e), TPG_ERR_INVALID_ARGUMENT);
}

TPG_TEST_MAIN(TPG_CASE(layer_lookup_names_the_preset_config), TPG_CASE(shape_lookup_without_model_matches_n_and_k),
              TPG_CASE(every_row_finds_itself), TPG_CASE(misses_and_bad_arguments))
