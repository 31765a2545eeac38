/* One self-test kernel instance, configured entirely by -D macros (tests/gpu/kernel_selftest.sh passes
 * the same TPG_* set a generated instance defines, docs/ARCHITECTURE.md), plus its shape for the host. */
#include "gemm_sm90.cuh"
#include "selftest_shape.h"

#define TPG_ST_CAT2(a, b) a##b
#define TPG_ST_CAT(a, b) TPG_ST_CAT2(a, b)

/* host code only where nvcc builds the file (tests/gpu/nvcc_cuda12.sh takes its device code from NVRTC, which has
 * no C library: __CUDACC_RTC__) */
#if TPG_DIAG_PHASES && !defined(__CUDACC_RTC__)
#include <stdio.h>
/* the shape's `phases` (selftest_shape.h): the grid's per-stage sums of diag_phases.cuh, per tile in kcycles */
static void phases(const char *label)
{
    unsigned long long v[2][TPG_PH_N] = {};
    if (!label) {
        if (cudaMemcpyToSymbol(tpg_diag_phase, v, sizeof v) != cudaSuccess) printf("phases: clear failed\n");
        return;
    }
    if (cudaMemcpyFromSymbol(v, tpg_diag_phase, sizeof v) != cudaSuccess) {
        printf("phases: copy failed\n");
        return;
    }
    for (int s = 0; s < 2; ++s) {
        const double n = (double)v[s][TPG_PH_TILES];
        if (n == 0) continue;
        printf("| %s | %d | %.0f |", label, s, n);
        for (int f = TPG_PH_TURN; f < TPG_PH_N; ++f) printf(" %.1f |", (double)v[s][f] / n / 1e3);
        printf("\n");
    }
}
#define TPG_ST_PHASES phases
#else
#define TPG_ST_PHASES nullptr
#endif

extern "C" const tpg_selftest_shape TPG_ST_CAT(TPG_KERNEL_NAME, _shape) = {
    TPG_BM, TPG_BN, TPG_CLUSTER_M, TPG_CLUSTER_N, TPG_CONSUMER_MODE, kThreads, TPG_SMEM_BYTES, TPG_AB_DTYPE,
    kEpiChunk, TPG_RASTER, TPG_BK, TPG_PARTIAL_F32, TPG_ST_PHASES, TPG_DIAG_ROW_STORES != 0};

#if TPG_DIAG_SPREAD_PRINT && !defined(__CUDACC_RTC__)
#include <stdio.h>
/* the spread timing CTA 0 recorded (spread_pushes.cuh, TPG_DIAG_SPREAD_PRINT): kernel_selftest prints it at exit */
extern "C" void tpg_selftest_spread_dump(void)
{
    long long rec[128][8];
    unsigned int n = 0;
    if (cudaMemcpyFromSymbol(&n, tpg_diag_count, sizeof n) != cudaSuccess ||
        cudaMemcpyFromSymbol(rec, tpg_diag_rec, sizeof rec) != cudaSuccess) {
        printf("spread dump: copy failed\n");
        return;
    }
    printf("\n## spread timing, CTA 0 (cycles after the wait's start): wg n window issued0..3 turn\n");
    for (unsigned int k = 0; k < n && k < 128; ++k)
        printf("spread %lld %lld %lld %lld %lld %lld %lld %lld\n", rec[k][0], rec[k][1], rec[k][2], rec[k][3],
               rec[k][4], rec[k][5], rec[k][6], rec[k][7]);
}
#endif
