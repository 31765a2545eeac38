/* What a build/tpgemm run comes to: its exit status and its check's verdict. Pure (no CUDA), so that
 * tests/c/test_cli_outcome.c checks on the CPU the rules that otherwise only a GPU run reaches. */
#ifndef TPG_CLI_OUTCOME_H
#define TPG_CLI_OUTCOME_H

#include "report.h"

/* build/tpgemm's exit statuses (see --help), ordered best to worst: a larger one outranks a smaller one. */
enum { EXIT_PASSED = 0, EXIT_CHECK_FAILED = 1, EXIT_USAGE = 2, EXIT_NO_GPU = 3, EXIT_TIMEOUT = 4, EXIT_RUNTIME = 5 };

/* The exit status of a run that stopped on status st: a bad argument or shape is the user's (2), a missing or
 * unfit GPU the machine's (3), a peer that never arrived a timeout (4), anything else the runtime's (5). */
int tpg_cli_exit_code(tpg_status st);

/* The check's verdict from what it compared (r->checked_elements, nonfinite, max_error, eps, deterministic):
 * passed only when it compared something, saw no non-finite value, stayed within eps (a NaN error is not) and the
 * repeated runs were bitwise equal. */
tpg_check_state tpg_cli_check_verdict(const tpg_cli_result *r);

/* A finished run's exit status: rc where a step failed, else 1 where the check failed, else 0. */
int tpg_cli_run_exit(int rc, tpg_check_state check);

/* --model: the status so far after a layer that exited layer_rc (the worst wins: a later timeout outranks an
 * earlier failed check), and through *stop whether the remaining layers are skipped (a usage, GPU, timeout or
 * runtime error: the next layers would meet it too; a failed check goes on). */
int tpg_cli_model_exit(int so_far, int layer_rc, int *stop);

#endif /* TPG_CLI_OUTCOME_H */
