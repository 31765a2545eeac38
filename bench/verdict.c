/* The local-GEMM benchmark's verdicts: a tpgemm variant's check against cuBLAS's output (bench_merge_check), which
 * variant a record publishes (bench_publish), and the exit status (bench_tally, bench_exit_status). Pure C, apart
 * from local_gemm.c's CUDA, so that tests/c/test_bench_verdict.c can run them without a GPU. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

void bench_merge_check(bench_variant *V, double err, double rms, unsigned long long bad, double eps, int first,
                       const char *when) {
    const double e = bad ? INFINITY : rms > 0 ? err : NAN;
    const int ok = !bad && rms > 0 && e <= eps;
    if (first || isnan(e) || (!isnan(V->max_error) && e > V->max_error)) V->max_error = e; /* NAN, INFINITY stick */
    if (first || V->check == 1) V->check = ok; /* a later comparison can only fail a passed check */
    if (ok || V->check_note[0]) return;       /* the first failure's note stays */
    if (bad)
        snprintf(V->check_note, sizeof V->check_note, "%s: %llu non-finite outputs (unwritten, or NaN/Inf) vs cuBLAS",
                 when, bad);
    else if (!(rms > 0))
        snprintf(V->check_note, sizeof V->check_note, "%s: cuBLAS's D holds no finite nonzero value to compare with",
                 when);
    else
        snprintf(V->check_note, sizeof V->check_note, "%s: error %.3g vs cuBLAS above eps %.3g", when, e, eps);
}

/* The config published: the one the runtime picks for the problem (r->pick_kernel; not a --pdl-ab twin, the --aa
 * control, the --lt-algos variant or an x_ experiment), as a user gets it - choosing the fastest on the very windows
 * shown would favour tpgemm
 * by its noise. Where no variant runs the pick (--configs), the best one, sound ones (passed, no failed window)
 * first: the highest burst x sustained rate (the geometric mean of the two regimes a GEMM runs in: a cool card, and a
 * card at its power cap), so that neither figure alone picks a config that loses the other. */
static double score(const bench_variant *V) { return V->burst_tflops * V->sustained_tflops; }
/* checked, passed, and no window failed: a variant dropped after its first windows keeps figures of those only */
static int sound(const bench_variant *V) { return V->check == 1 && !V->error[0]; }

static int is_cublas(const bench_variant *V) { return V->control || V->lt_best_of; } /* beside var[0] */
static int eligible(const bench_variant *V) { return !V->pdl && !is_cublas(V) && strncmp(V->config, "x_", 2); }

void bench_publish(bench_record *r) {
    r->best = -1;
    for (int v = 1; v < r->nvar && r->pick_kernel[0]; v++)
        if (eligible(&r->var[v]) && !strcmp(r->var[v].kernel, r->pick_kernel)) {
            r->best = v;
            return;
        }
    for (int v = 1; v < r->nvar; v++) {
        const bench_variant *V = &r->var[v], *B = r->best >= 0 ? &r->var[r->best] : NULL;
        if (!isfinite(score(V)) || !eligible(V)) continue; /* never best */
        if (!B || (sound(V) && !sound(B)) || (sound(V) == sound(B) && score(V) > score(B))) r->best = v;
    }
    for (int v = 1; v < r->nvar && r->best < 0; v++) /* still name a tpgemm config, with null numbers */
        if (!is_cublas(&r->var[v])) r->best = v;
}

void bench_tally(const bench_record *r, int *fails, int *errors) {
    for (int v = 1; v < r->nvar; v++)
        *fails += r->var[v].check == 0 && !r->var[v].lt_best_of;
    *fails += r->cublas_ref_check == 0;
    *errors += r->error[0] != '\0' || (r->best >= 0 && r->var[r->best].error[0] != '\0');
}

int bench_exit_status(int errors, int fails) { return errors ? BENCH_RUNTIME : fails ? BENCH_CHECK_FAILED : BENCH_OK; }
