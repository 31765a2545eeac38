/* A tpgemm variant's check against cuBLAS's output as a verdict on the variant (bench.h, bench_merge_check). Pure C,
 * apart from local_gemm.c's CUDA, so that tests/c/test_bench_verdict.c can run it without a GPU. */
#include <math.h>
#include <stdio.h>

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
