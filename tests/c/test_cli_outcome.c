/* build/tpgemm's exit statuses and check verdict (runtime/src/cli/outcome.c): the rules a GPU run applies, checked
 * here on made-up results. No GPU. */
#include <math.h>

#include "cli/args.h"
#include "cli/outcome.h"
#include "tpg_test.h"

/* Every status of the table has the exit status --help gives its kind (args.c's usage text; the test below checks
 * that the text gives these numbers to these kinds). */
static int expected_exit(tpg_status st) {
    switch (st) {
    case TPG_OK: return 0;
    case TPG_ERR_INVALID_ARGUMENT: case TPG_ERR_UNKNOWN_CONFIG: case TPG_ERR_SHAPE: case TPG_ERR_ALIGNMENT:
    case TPG_ERR_UNSUPPORTED: return 2;
    case TPG_ERR_NO_DEVICE: case TPG_ERR_NOT_HOPPER: case TPG_ERR_NO_P2P: return 3;
    case TPG_ERR_TIMEOUT: return 4;
    default: return 5; /* out of memory, CUDA, not ready, bootstrap, NCCL */
    }
}

TPG_TEST(every_status_has_the_exit_status_help_gives_it) {
    int n = 0;
#define TPG_CHECK_ONE_(name, value, text)                                                            \
    TPG_EXPECT_EQ_INT(tpg_cli_exit_code(name), expected_exit(name));                                 \
    n++;
    TPG_STATUS_TABLE(TPG_CHECK_ONE_)
#undef TPG_CHECK_ONE_
    TPG_EXPECT_EQ_INT(n, 15);
    TPG_EXPECT_EQ_INT(tpg_cli_exit_code((tpg_status)99), EXIT_RUNTIME); /* a status this build does not know */
    TPG_EXPECT_EQ_INT(tpg_cli_exit_code(TPG_ERR_OUT_OF_MEMORY), 5);    /* the table's spelled-out literals */
    TPG_EXPECT_EQ_INT(tpg_cli_exit_code(TPG_ERR_TIMEOUT), 4);
}

TPG_TEST(help_gives_each_exit_status_the_kind_the_mapping_gives_it) {
    const char *u = tpg_args_usage();
    TPG_EXPECT_STR_CONTAINS(u, "Exit status: 0 passed");
    TPG_EXPECT_STR_CONTAINS(u, "1 check failed");
    TPG_EXPECT_STR_CONTAINS(u, "2 usage, config,\nshape, alignment or argument error");
    TPG_EXPECT_STR_CONTAINS(u, "3 not enough Hopper GPUs / no peer access");
    TPG_EXPECT_STR_CONTAINS(u, "4 a device-side wait\ntimed out");
    TPG_EXPECT_STR_CONTAINS(u, "5 another CUDA or runtime failure");
    TPG_EXPECT_EQ_INT(EXIT_PASSED, 0);
    TPG_EXPECT_EQ_INT(EXIT_CHECK_FAILED, 1);
    TPG_EXPECT_EQ_INT(EXIT_USAGE, 2);
    TPG_EXPECT_EQ_INT(EXIT_NO_GPU, 3);
    TPG_EXPECT_EQ_INT(EXIT_TIMEOUT, 4);
    TPG_EXPECT_EQ_INT(EXIT_RUNTIME, 5);
}

static tpg_cli_result compared(void) {
    tpg_cli_result r = {0};
    r.checked_elements = 1000, r.nonfinite = 0, r.max_error = 0.01, r.eps = 0.02, r.deterministic = 1;
    return r;
}

TPG_TEST(the_check_passes_only_what_it_compared_finite_within_eps_and_repeatable) {
    tpg_cli_result r = compared();
    TPG_EXPECT_EQ_INT(tpg_cli_check_verdict(&r), TPG_CHECK_PASSED);
    r.max_error = r.eps; /* the bound itself passes */
    TPG_EXPECT_EQ_INT(tpg_cli_check_verdict(&r), TPG_CHECK_PASSED);
    r.max_error = nextafter(r.eps, 1.0);
    TPG_EXPECT_EQ_INT(tpg_cli_check_verdict(&r), TPG_CHECK_FAILED);
    r = compared(), r.max_error = NAN;
    TPG_EXPECT_EQ_INT(tpg_cli_check_verdict(&r), TPG_CHECK_FAILED);
    r = compared(), r.max_error = INFINITY;
    TPG_EXPECT_EQ_INT(tpg_cli_check_verdict(&r), TPG_CHECK_FAILED);
    r = compared(), r.checked_elements = 0; /* compared nothing */
    TPG_EXPECT_EQ_INT(tpg_cli_check_verdict(&r), TPG_CHECK_FAILED);
    r = compared(), r.nonfinite = 1;
    TPG_EXPECT_EQ_INT(tpg_cli_check_verdict(&r), TPG_CHECK_FAILED);
    r = compared(), r.deterministic = 0;
    TPG_EXPECT_EQ_INT(tpg_cli_check_verdict(&r), TPG_CHECK_FAILED);
    r = compared(), r.deterministic = -1; /* not measured is not repeatable */
    TPG_EXPECT_EQ_INT(tpg_cli_check_verdict(&r), TPG_CHECK_FAILED);
}

TPG_TEST(a_failed_step_outranks_the_check_and_a_failed_check_exits_1) {
    TPG_EXPECT_EQ_INT(tpg_cli_run_exit(0, TPG_CHECK_PASSED), 0);
    TPG_EXPECT_EQ_INT(tpg_cli_run_exit(0, TPG_CHECK_SKIPPED), 0); /* --no-check */
    TPG_EXPECT_EQ_INT(tpg_cli_run_exit(0, TPG_CHECK_FAILED), EXIT_CHECK_FAILED);
    TPG_EXPECT_EQ_INT(tpg_cli_run_exit(EXIT_TIMEOUT, TPG_CHECK_FAILED), EXIT_TIMEOUT);
    TPG_EXPECT_EQ_INT(tpg_cli_run_exit(EXIT_RUNTIME, TPG_CHECK_NOT_RUN), EXIT_RUNTIME);
}

TPG_TEST(the_model_keeps_the_worst_layer_and_stops_at_an_error_not_at_a_failed_check) {
    int stop = -1, rc = 0;
    rc = tpg_cli_model_exit(rc, EXIT_PASSED, &stop);
    TPG_EXPECT_EQ_INT(rc, 0); TPG_EXPECT_EQ_INT(stop, 0);
    rc = tpg_cli_model_exit(rc, EXIT_CHECK_FAILED, &stop);
    TPG_EXPECT_EQ_INT(rc, 1); TPG_EXPECT_EQ_INT(stop, 0); /* the next layers still run */
    rc = tpg_cli_model_exit(rc, EXIT_PASSED, &stop);
    TPG_EXPECT_EQ_INT(rc, 1); TPG_EXPECT_EQ_INT(stop, 0); /* a later pass does not hide it */
    rc = tpg_cli_model_exit(rc, EXIT_TIMEOUT, &stop);
    TPG_EXPECT_EQ_INT(rc, EXIT_TIMEOUT); TPG_EXPECT_EQ_INT(stop, 1);
    for (int e = EXIT_USAGE; e <= EXIT_RUNTIME; e++) {
        TPG_EXPECT_EQ_INT(tpg_cli_model_exit(EXIT_RUNTIME, e, &stop), EXIT_RUNTIME);
        TPG_EXPECT_EQ_INT(stop, 1);
    }
}

TPG_TEST_MAIN(TPG_CASE(every_status_has_the_exit_status_help_gives_it),
              TPG_CASE(help_gives_each_exit_status_the_kind_the_mapping_gives_it),
              TPG_CASE(the_check_passes_only_what_it_compared_finite_within_eps_and_repeatable),
              TPG_CASE(a_failed_step_outranks_the_check_and_a_failed_check_exits_1),
              TPG_CASE(the_model_keeps_the_worst_layer_and_stops_at_an_error_not_at_a_failed_check))
