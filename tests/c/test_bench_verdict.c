/* The local-GEMM benchmark's verdict on a variant from its comparisons with cuBLAS's output (bench/verdict.c): the
 * first comparison sets the check, a later one (after the sustained rounds) can only fail it, and a failure says why
 * in check_note - a check failure (exit 1), not a variant error (exit 5); and which variant a record publishes
 * (bench_publish). No GPU. */
#include <math.h>
#include <string.h>

#include "../../bench/bench.h"
#include "tpg_test.h"

#define EPS 0.02

static bench_variant fresh(void) { /* as bench/main.c's init_variant leaves it */
    bench_variant v;
    memset(&v, 0, sizeof v);
    v.check = -1;
    v.max_error = NAN;
    return v;
}

TPG_TEST(a_first_comparison_within_eps_passes_with_its_error) {
    bench_variant v = fresh();
    bench_merge_check(&v, 0.004, 1.0, 0, EPS, 1, "first call");
    TPG_EXPECT_EQ_INT(v.check, 1);
    TPG_EXPECT(v.max_error == 0.004);
    TPG_EXPECT_EQ_STR(v.check_note, "");
    TPG_EXPECT_EQ_STR(v.error, ""); /* never a variant error */
}

TPG_TEST(above_eps_or_non_finite_or_nothing_to_compare_fails_and_says_why) {
    bench_variant v = fresh();
    bench_merge_check(&v, 0.05, 1.0, 0, EPS, 1, "first call");
    TPG_EXPECT_EQ_INT(v.check, 0);
    TPG_EXPECT_EQ_STR(v.check_note, "first call: error 0.05 vs cuBLAS above eps 0.02");
    TPG_EXPECT_EQ_STR(v.error, "");
    v = fresh();
    bench_merge_check(&v, 0.0, 1.0, 7, EPS, 1, "first call");
    TPG_EXPECT(v.check == 0 && isinf(v.max_error));
    TPG_EXPECT_STR_CONTAINS(v.check_note, "first call: 7 non-finite outputs");
    v = fresh();
    bench_merge_check(&v, 0.0, 0.0, 0, EPS, 1, "first call"); /* cuBLAS's D all zeros: no error to measure */
    TPG_EXPECT(v.check == 0 && isnan(v.max_error));
    TPG_EXPECT_STR_CONTAINS(v.check_note, "holds no finite nonzero value");
}

TPG_TEST(a_recheck_can_only_fail_a_passed_check_and_raise_its_error) {
    bench_variant v = fresh();
    bench_merge_check(&v, 0.004, 1.0, 0, EPS, 1, "first call");
    bench_merge_check(&v, 0.001, 1.0, 0, EPS, 0, "after the sustained rounds");
    TPG_EXPECT(v.check == 1 && v.max_error == 0.004); /* the larger error stays */
    bench_merge_check(&v, 0.3, 1.0, 0, EPS, 0, "after the sustained rounds");
    TPG_EXPECT(v.check == 0 && v.max_error == 0.3);
    TPG_EXPECT_EQ_STR(v.check_note, "after the sustained rounds: error 0.3 vs cuBLAS above eps 0.02");
    bench_merge_check(&v, 0.001, 1.0, 0, EPS, 0, "later"); /* a failed check stays failed, its first note kept */
    TPG_EXPECT(v.check == 0 && v.max_error == 0.3);
    TPG_EXPECT_STR_CONTAINS(v.check_note, "after the sustained rounds");
    bench_merge_check(&v, 0.0, 1.0, 3, EPS, 0, "later"); /* non-finite: the error becomes infinite */
    TPG_EXPECT(isinf(v.max_error));
}

TPG_TEST(an_unchecked_variant_is_not_passed_by_a_recheck) {
    bench_variant v = fresh(); /* dropped before its first comparison */
    bench_merge_check(&v, 0.001, 1.0, 0, EPS, 0, "after the sustained rounds");
    TPG_EXPECT_EQ_INT(v.check, -1);
}

TPG_TEST(an_error_equal_to_eps_passes) { /* the bound is inclusive, as run.c's max_error <= eps */
    bench_variant v = fresh();
    bench_merge_check(&v, 0.02, 1.0, 0, 0.02, 1, "first call");
    TPG_EXPECT_EQ_INT(v.check, 1);
}

TPG_TEST(the_first_failures_note_survives_a_later_different_failure) {
    bench_variant v = fresh();
    bench_merge_check(&v, 0.004, 1.0, 0, 0.02, 1, "first call");
    bench_merge_check(&v, 0.3, 1.0, 0, 0.02, 0, "after the sustained rounds");
    bench_merge_check(&v, 0.0, 1.0, 3, 0.02, 0, "later"); /* a second, different failure */
    TPG_EXPECT_STR_CONTAINS(v.check_note, "after the sustained rounds: error 0.3");
}

/* var[0] cuBLASLt, then tpgemm variants: (config, kernel, burst, sustained, check) */
static void variant(bench_record *r, const char *config, const char *kernel, double burst, double sust, int check) {
    bench_variant *V = &r->var[r->nvar++];
    *V = fresh();
    snprintf(V->config, sizeof V->config, "%s", config);
    snprintf(V->kernel, sizeof V->kernel, "%s", kernel);
    V->burst_tflops = burst, V->sustained_tflops = sust, V->check = check;
}

static bench_record *record_of(const char *pick) {
    static bench_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.pick_kernel, sizeof r.pick_kernel, "%s", pick);
    variant(&r, "cublasLt", "", 800, 700, -1);
    return &r;
}

/* The runtime's pick is published even where another variant ran faster on these windows (a user runs the pick);
 * a --pdl-ab twin, the --aa control, a best-of-N cuBLASLt and an x_ experiment never are. */
TPG_TEST(the_pick_is_published_whatever_ran_faster) {
    bench_record *r = record_of("k_pick");
    variant(r, "fast", "k_fast", 900, 800, 1);
    variant(r, "x_pick", "k_pick", 950, 850, 1);
    variant(r, "pick_pdl", "k_pick", 950, 850, 1);
    r->var[r->nvar - 1].pdl = 1;
    variant(r, "pick", "k_pick", 700, 600, 1);
    bench_publish(r);
    TPG_EXPECT_EQ_STR(r->var[r->best].config, "pick");
}

/* Without the pick among the variants (--configs): sound ones first (passed, no failed window), then the highest
 * burst x sustained; a variant without figures never wins; with none timed, still a tpgemm config (not cuBLAS). */
TPG_TEST(without_the_pick_the_sound_fastest_by_burst_times_sustained) {
    bench_record *r = record_of("k_absent");
    variant(r, "untimed", "k5", NAN, NAN, 1); /* first: no figure may hold the place either */
    variant(r, "failed", "k1", 990, 990, 0);
    variant(r, "bursty", "k2", 900, 500, 1); /* 450000 */
    variant(r, "even", "k3", 700, 680, 1);   /* 476000 */
    variant(r, "dropped", "k4", 950, 950, 1);
    snprintf(r->var[r->nvar - 1].error, sizeof r->var[0].error, "a window failed");
    bench_publish(r);
    TPG_EXPECT_EQ_STR(r->var[r->best].config, "even");
    r = record_of("k_absent");
    variant(r, "lt", "", 900, 900, 1);
    r->var[r->nvar - 1].lt_best_of = 8;
    variant(r, "a", "k1", NAN, NAN, -1);
    bench_publish(r);
    TPG_EXPECT_EQ_STR(r->var[r->best].config, "a");
}

/* A record's failed checks and errors, and the exit status they give: a failed tpgemm check and cuBLAS off the fp32
 * reference fail (1); the cuBLASLt trial failing against the top algorithm does not; a stopped run or a dropped
 * published variant is an error (5), which outranks failures. */
TPG_TEST(the_exit_status_counts_tpgemm_failures_and_errors_not_the_cublaslt_trial) {
    int fails = 0, errors = 0;
    bench_record *r = record_of("k");
    variant(r, "a", "k", 900, 800, 1);
    r->best = 1, r->cublas_ref_check = 1;
    bench_tally(r, &fails, &errors);
    TPG_EXPECT_EQ_INT(fails, 0);
    TPG_EXPECT_EQ_INT(errors, 0);
    TPG_EXPECT_EQ_INT(bench_exit_status(errors, fails), 0);
    variant(r, "lt", "", 900, 900, 0);
    r->var[r->nvar - 1].lt_best_of = 8;
    bench_tally(r, &fails, &errors);
    TPG_EXPECT_EQ_INT(fails, 0);
    variant(r, "unchecked", "k3", NAN, NAN, -1); /* dropped before its check: an error if published, not a fail */
    bench_tally(r, &fails, &errors);
    TPG_EXPECT_EQ_INT(fails, 0);
    r->var[0].check = 0; /* cuBLAS itself (var[0]) is checked against the reference, not against itself */
    variant(r, "b", "k2", 900, 800, 0);
    bench_tally(r, &fails, &errors);
    TPG_EXPECT_EQ_INT(fails, 1);
    r->cublas_ref_check = 0;
    bench_tally(r, &fails, &errors); /* adds to the counts of earlier records */
    TPG_EXPECT_EQ_INT(fails, 3);
    TPG_EXPECT_EQ_INT(errors, 0);
    TPG_EXPECT_EQ_INT(bench_exit_status(errors, fails), 1);
    r->cublas_ref_check = -1; /* not compared: not a failure */
    fails = 0;
    bench_tally(r, &fails, &errors);
    TPG_EXPECT_EQ_INT(fails, 1);
    snprintf(r->var[4].error, sizeof r->var[4].error, "a window failed"); /* not the published one */
    bench_tally(r, &fails, &errors);
    TPG_EXPECT_EQ_INT(errors, 0);
    snprintf(r->var[1].error, sizeof r->var[1].error, "a window failed"); /* the published one */
    bench_tally(r, &fails, &errors);
    TPG_EXPECT_EQ_INT(errors, 1);
    TPG_EXPECT_EQ_INT(bench_exit_status(errors, fails), 5);
    r = record_of("k");
    r->best = -1, r->cublas_ref_check = 1;
    snprintf(r->error, sizeof r->error, "tpg_poison: out of memory"); /* the run stopped */
    errors = fails = 0;
    bench_tally(r, &fails, &errors);
    TPG_EXPECT_EQ_INT(errors, 1);
    TPG_EXPECT_EQ_INT(bench_exit_status(0, 2), 1);
}

TPG_TEST_MAIN(TPG_CASE(a_first_comparison_within_eps_passes_with_its_error),
              TPG_CASE(above_eps_or_non_finite_or_nothing_to_compare_fails_and_says_why),
              TPG_CASE(a_recheck_can_only_fail_a_passed_check_and_raise_its_error),
              TPG_CASE(an_unchecked_variant_is_not_passed_by_a_recheck),
              TPG_CASE(an_error_equal_to_eps_passes),
              TPG_CASE(the_first_failures_note_survives_a_later_different_failure),
              TPG_CASE(the_pick_is_published_whatever_ran_faster),
              TPG_CASE(without_the_pick_the_sound_fastest_by_burst_times_sustained),
              TPG_CASE(the_exit_status_counts_tpgemm_failures_and_errors_not_the_cublaslt_trial))
