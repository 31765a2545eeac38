/* tpg_status_string / dtype helpers: every status has its own non-empty string. No GPU needed. */
#include <string.h>

#include "checks.h"
#include "tpg_test.h"
#include "tpgemm.h"

static const tpg_status all[] = {
#define TPG_STATUS_LIST_(name, value, text) name,
    TPG_STATUS_TABLE(TPG_STATUS_LIST_)
#undef TPG_STATUS_LIST_
};
enum { NUM_STATUS = sizeof all / sizeof all[0] };

TPG_TEST(every_status_has_a_distinct_string) {
    TPG_EXPECT(NUM_STATUS >= 13);
    for (int i = 0; i < NUM_STATUS; i++) {
        const char *s = tpg_status_string(all[i]);
        TPG_ASSERT(s != NULL);
        TPG_EXPECT(strlen(s) > 0);
        for (int j = 0; j < i; j++) TPG_EXPECT(strcmp(s, tpg_status_string(all[j])) != 0);
    }
}

TPG_TEST(strings_name_the_status) {
    TPG_EXPECT_STR_CONTAINS(tpg_status_string(TPG_OK), "TPG_OK");
    TPG_EXPECT_STR_CONTAINS(tpg_status_string(TPG_ERR_SHAPE), "TPG_ERR_SHAPE");
    TPG_EXPECT_STR_CONTAINS(tpg_status_string(TPG_ERR_TIMEOUT), "timeout");
}

TPG_TEST(unknown_status_is_handled) {
    const char *s = tpg_status_string((tpg_status)12345);
    TPG_ASSERT(s != NULL);
    TPG_EXPECT_STR_CONTAINS(s, "unknown");
    TPG_EXPECT(tpg_status_string((tpg_status)-1) != NULL);
}

TPG_TEST(last_error_without_context_is_a_string) { TPG_EXPECT(tpg_last_error(NULL) != NULL); }

TPG_TEST(dtype_sizes_and_names) {
    TPG_EXPECT_EQ_INT(tpg_dtype_size(TPG_DTYPE_BF16), 2);
    TPG_EXPECT_EQ_INT(tpg_dtype_size(TPG_DTYPE_FP16), 2);
    TPG_EXPECT_EQ_INT(tpg_dtype_size(TPG_DTYPE_E4M3), 1);
    TPG_EXPECT_EQ_INT(tpg_dtype_size(TPG_DTYPE_E5M2), 1);
    TPG_EXPECT_EQ_INT(tpg_dtype_size(TPG_DTYPE_FP32), 4);
    TPG_EXPECT_EQ_STR(tpg_dtype_name(TPG_DTYPE_BF16), "bf16");
    TPG_EXPECT_EQ_STR(tpg_dtype_name(TPG_DTYPE_E5M2), "e5m2");
    TPG_EXPECT_EQ_STR(tpg_dtype_name((tpg_dtype)99), "unknown");
    TPG_EXPECT_EQ_INT(tpg_dtype_size((tpg_dtype)99), 0);
    /* D, C and partials: the operand type for 16-bit operands, bf16 for fp8 */
    TPG_EXPECT_EQ_INT(tpg_output_dtype(TPG_DTYPE_FP16), TPG_DTYPE_FP16);
    TPG_EXPECT_EQ_INT(tpg_output_dtype(TPG_DTYPE_BF16), TPG_DTYPE_BF16);
    TPG_EXPECT_EQ_INT(tpg_output_dtype(TPG_DTYPE_E4M3), TPG_DTYPE_BF16);
    TPG_EXPECT_EQ_INT(tpg_output_dtype(TPG_DTYPE_E5M2), TPG_DTYPE_BF16);
}

TPG_TEST(ctx_create_rejects_bad_arguments_with_a_message) {
    tpg_ctx *ctx = (tpg_ctx *)1;
    TPG_EXPECT_EQ_INT(tpg_ctx_create(NULL, &ctx), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT(ctx == NULL);
    tpg_ctx_config cfg = TPG_CTX_CONFIG_INIT;
    cfg.tp = 9;
    TPG_EXPECT_EQ_INT(tpg_ctx_create(&cfg, &ctx), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "tp = 9");
}

/* A device list's own faults are the caller's arguments, named before (and whatever) the machine's devices: they
 * once read "TP = 2 needs 2 CUDA devices" wherever fewer were visible. */
TPG_TEST(ctx_create_names_a_bad_device_list_before_counting_devices) {
    tpg_ctx *ctx = NULL;
    int negative[2] = {0, -5}, twice[2] = {1, 1};
    tpg_ctx_config cfg = TPG_CTX_CONFIG_INIT;
    cfg.tp = 2;
    cfg.devices = negative;
    TPG_EXPECT_EQ_INT(tpg_ctx_create(&cfg, &ctx), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "devices[1] = -5 is not a device ordinal");
    cfg.devices = twice;
    TPG_EXPECT_EQ_INT(tpg_ctx_create(&cfg, &ctx), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "devices[0] = devices[1] = 1");
    TPG_EXPECT(ctx == NULL);
    TPG_EXPECT_EQ_INT(tpg_ctx_create(&cfg, NULL), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "tpg_ctx_create: out is NULL");
    int unset[2] = {-1, 0}; /* the usual "no device" sentinel is no ordinal either */
    cfg.devices = unset;
    TPG_EXPECT_EQ_INT(tpg_ctx_create(&cfg, &ctx), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "devices[0] = -1 is not a device ordinal");
    int eight[8] = {0, 1, 2, 3, 4, 5, 6, -1}; /* tp = 8, the most, passes the tp check: its list is what fails */
    cfg.tp = 8;
    cfg.devices = eight;
    TPG_EXPECT_EQ_INT(tpg_ctx_create(&cfg, &ctx), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "devices[7] = -1 is not a device ordinal");
}

/* share_devices lets the ranks repeat an ordinal and needs one device, not tp: an ordinal no machine here has fails
 * as NO_DEVICE, by the count (none visible) or by the ordinal (some visible). */
TPG_TEST(ctx_create_with_shared_devices_needs_one_device) {
    tpg_ctx *ctx = NULL;
    int same[2] = {63, 63};
    tpg_ctx_config cfg = TPG_CTX_CONFIG_INIT;
    cfg.tp = 2;
    cfg.devices = same;
    cfg.share_devices = 1;
    TPG_EXPECT_EQ_INT(tpg_ctx_create(&cfg, &ctx), TPG_ERR_NO_DEVICE);
    const char *err = tpg_last_error(NULL);
    if (strstr(err, "needs"))
        TPG_EXPECT_STR_CONTAINS(err, "TP = 2 needs 1 CUDA device;");
    else
        TPG_EXPECT_STR_CONTAINS(err, "devices[0] = 63 is not a visible CUDA device");
}

TPG_TEST(dispatch_find_refuses_a_dtype_as_the_config_lookups_do) {
    tpg_dispatch_entry e;
    TPG_EXPECT_EQ_INT(tpg_dispatch_find(NULL, NULL, 16384, 0, 0, (tpg_dtype)99, NULL, 2, &e), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "dtype 99 is not a tpg_dtype");
}

TPG_TEST(op_setters_reject_a_null_op) {
    TPG_EXPECT_EQ_INT(tpg_op_set_pdl(NULL, 1), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "tpg_op_set_pdl: op is NULL");
    TPG_EXPECT_EQ_INT(tpg_op_set_gather_copy_engine(NULL, 1), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_op_set_scalars(NULL, 1.0f, 0.0f), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_op_run(NULL, NULL), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "tpg_op_run: op is NULL");
    tpg_shard_shape shape;
    TPG_EXPECT_EQ_INT(tpg_op_shard_shape(NULL, 0, &shape), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "tpg_op_shard_shape: op is NULL");
    tpg_op *op = (tpg_op *)1;
    tpg_op_desc d = {0, 128, 128, 128, 1, 1.0f, 0.0f};
    TPG_EXPECT_EQ_INT(tpg_op_create(NULL, &d, &op), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT(op == NULL);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "tpg_op_create: ctx is NULL");
}

/* A failed lookup leaves its reason where tpg_ctx_create's would be (no context holds it), not the one before. */
TPG_TEST(lookups_say_why_they_failed) {
    tpg_config_info ci;
    TPG_EXPECT_EQ_INT(tpg_config_get(-1, &ci), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "index -1 is outside");
    int index;
    TPG_EXPECT_EQ_INT(tpg_config_find("no_such_config", NULL, 0, TPG_DTYPE_BF16, &index), TPG_ERR_UNKNOWN_CONFIG);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "'no_such_config'");
    TPG_EXPECT_EQ_INT(tpg_config_find(NULL, NULL, 0, (tpg_dtype)99, &index), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "dtype 99 is not a tpg_dtype");
    TPG_EXPECT_EQ_INT(tpg_config_pick(NULL, 2, (tpg_dtype)-1, 128, 128, 128, &index), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_config_pick("NoSuchSchedule", 2, TPG_DTYPE_BF16, 128, 128, 128, &index),
                      TPG_ERR_UNKNOWN_CONFIG);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "no config of schedule 'NoSuchSchedule', dtype bf16 is generated");
    char lost[2048]; /* a caller's string of any length: the message keeps its own words after it */
    memset(lost, 'x', sizeof lost - 1);
    lost[sizeof lost - 1] = 0;
    TPG_EXPECT_EQ_INT(tpg_config_pick(lost, 2, TPG_DTYPE_BF16, 128, 128, 128, &index), TPG_ERR_UNKNOWN_CONFIG);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "', dtype bf16 is generated");
    tpg_dispatch_entry e;
    TPG_EXPECT_EQ_INT(tpg_dispatch_get(tpg_dispatch_count(), &e), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "tpg_dispatch_get: index");
}

TPG_TEST(an_appended_message_follows_the_cause_and_stops_at_the_buffer) {
    tpg__set_error(NULL, "launch failed: %s", "cudaErrorLaunchFailure");
    tpg__append_error(NULL, "; ranks %d..%d were launched", 0, 0);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "launch failed: cudaErrorLaunchFailure; ranks 0..0 were launched");
    char longer[3000];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    for (int i = 0; i < 3; i++) tpg__append_error(NULL, "%s", longer);
    const size_t n = strlen(tpg_last_error(NULL));
    TPG_EXPECT(n > 900 && n < 3000); /* cut at the buffer, never past it */
    TPG_EXPECT(strncmp(tpg_last_error(NULL), "launch failed", 13) == 0);
}

TPG_TEST_MAIN(TPG_CASE(every_status_has_a_distinct_string), TPG_CASE(strings_name_the_status),
              TPG_CASE(unknown_status_is_handled), TPG_CASE(last_error_without_context_is_a_string),
              TPG_CASE(dtype_sizes_and_names), TPG_CASE(ctx_create_rejects_bad_arguments_with_a_message),
              TPG_CASE(ctx_create_names_a_bad_device_list_before_counting_devices),
              TPG_CASE(ctx_create_with_shared_devices_needs_one_device),
              TPG_CASE(dispatch_find_refuses_a_dtype_as_the_config_lookups_do),
              TPG_CASE(op_setters_reject_a_null_op), TPG_CASE(lookups_say_why_they_failed),
              TPG_CASE(an_appended_message_follows_the_cause_and_stops_at_the_buffer))
