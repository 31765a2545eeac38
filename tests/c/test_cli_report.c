/* The CLI's result (runtime/src/cli/report.c), text and JSON, from results made up here: a failed or skipped check
 * is said so, and "launch-bound" only where the host's launch takes nearly the call's time. No GPU. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "tpg_test.h"

static char *render(const tpg_cli_result *r, int json) {
    char *t = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&t, &n);
    tpg_report_result(f, r, json);
    fclose(f);
    return t;
}

static tpg_cli_result base(void) {
    tpg_cli_result r;
    tpg_report_init(&r);
    r.config = "c", r.schedule = "s", r.kernel = "k", r.tp = 2, r.m = r.n = r.k = r.l = 1;
    r.check = TPG_CHECK_FAILED, r.max_error = 0.5, r.eps = 0.02, r.checked_elements = 10, r.deterministic = 1;
    r.timed = 1, r.avg_ms = 1.0, r.host_launch_ms = 0.1, r.tflops_per_gpu = 100.0, r.exit_code = 1;
    return r;
}

TPG_TEST(a_failed_check_is_reported_failed_in_text_and_json) {
    tpg_cli_result r = base();
    char *j = render(&r, 1), *t = render(&r, 0);
    TPG_EXPECT_STR_CONTAINS(j, "\"check\": \"failed\"");
    TPG_EXPECT_STR_CONTAINS(t, "Disposition: Failed");
    r.check = TPG_CHECK_NOT_RUN;
    free(j), j = render(&r, 1);
    TPG_EXPECT_STR_CONTAINS(j, "\"check\": \"not_run\"");
    free(j), free(t);
}

TPG_TEST(launch_bound_only_when_the_host_launch_nears_the_runtime) {
    tpg_cli_result r = base();
    char *t = render(&r, 0);
    TPG_EXPECT(strstr(t, "launch-bound") == NULL);
    r.host_launch_ms = 0.95;
    free(t), t = render(&r, 0);
    TPG_EXPECT_STR_CONTAINS(t, ": launch-bound");
    free(t);
}

TPG_TEST_MAIN(TPG_CASE(a_failed_check_is_reported_failed_in_text_and_json),
              TPG_CASE(launch_bound_only_when_the_host_launch_nears_the_runtime))
