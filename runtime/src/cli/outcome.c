/* build/tpgemm's exit statuses and check verdict (outcome.h). */
#include "outcome.h"

int tpg_cli_exit_code(tpg_status st) {
    switch (st) {
    case TPG_OK: return EXIT_PASSED;
    case TPG_ERR_INVALID_ARGUMENT:
    case TPG_ERR_UNKNOWN_CONFIG:
    case TPG_ERR_SHAPE:
    case TPG_ERR_ALIGNMENT:
    case TPG_ERR_UNSUPPORTED: return EXIT_USAGE;
    case TPG_ERR_NO_DEVICE:
    case TPG_ERR_NOT_HOPPER:
    case TPG_ERR_NO_P2P: return EXIT_NO_GPU;
    case TPG_ERR_TIMEOUT: return EXIT_TIMEOUT;
    default: return EXIT_RUNTIME;
    }
}

tpg_check_state tpg_cli_check_verdict(const tpg_cli_result *r) {
    /* a check that compared nothing passes nothing */
    const int ok = r->checked_elements > 0 && r->nonfinite == 0 && r->max_error <= r->eps && r->deterministic == 1;
    return ok ? TPG_CHECK_PASSED : TPG_CHECK_FAILED;
}

int tpg_cli_run_exit(int rc, tpg_check_state check) {
    return !rc && check == TPG_CHECK_FAILED ? EXIT_CHECK_FAILED : rc;
}

int tpg_cli_model_exit(int so_far, int layer_rc, int *stop) {
    *stop = layer_rc >= EXIT_USAGE;
    return layer_rc > so_far ? layer_rc : so_far;
}
