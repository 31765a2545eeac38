/* Timing of every bf16 self-test kernel against cuBLAS (`kernel_selftest` without --no-perf): the ten local GEMMs
 * of BENCHMARKS.md, every kernel and cuBLAS interleaved in rounds, each timed output then checked against cuBLAS's.
 * Split from kernel_selftest.cu, whose cases it follows. */
#include <cublas_v2.h>
#include <math.h>

#include "selftest_util.cuh"

static unsigned int g_seed = 9001; /* the operands' random seeds (rand_fill) */

struct problem {
    const char *name;
    int m, n, k;
};
/* BENCHMARKS.md, local GEMM table: the per-GPU GEMM of each TP = 2 layer, and two square GEMMs */
static const problem g_problems[] = {
    {"405B-fc1", 16384, 53248, 16384}, {"70B-fc1", 16384, 28672, 8192}, {"70B-qkv", 16384, 5120, 8192},
    {"8B-qkv", 8192, 3072, 4096},      {"405B-fc2", 16384, 16384, 26624}, {"70B-fc2", 16384, 8192, 14336},
    {"70B-o", 16384, 8192, 4096},      {"8B-o", 8192, 4096, 2048},        {"gemm-8192", 8192, 8192, 8192},
    {"gemm-4096", 4096, 4096, 4096}};
#define NPROB ((int)(sizeof g_problems / sizeof g_problems[0]))
static double g_tf[NPROB][SELFTEST_MAX_KERNELS + 1]; /* TFLOP/s [problem][kernel]; index nk = cuBLAS; 0 = not run */

static void cublas_gemm(cublasHandle_t h, const void *A, const void *B, void *D, int m, int n, int k)
{
    /* same layouts: D^T = B . A^T in column-major terms */
    const float one = 1.f, zero = 0.f;
    cublasStatus_t s = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, B, CUDA_R_16BF, k, A, CUDA_R_16BF, k,
                                    &zero, D, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasGemmEx failed: %d\n", (int)s);
        exit(2);
    }
}

/* Every kernel of ks and cuBLAS on problem pi, interleaved: 3 rounds of (iters launches of each), so
 * clocks and heat hit all alike; then each kernel's output checked against cuBLAS's. */
static void test_perf(const kern *ks, int nk, const ctl &c, cublasHandle_t h, int pi)
{
    const problem &P = g_problems[pi];
    const int m = P.m, n = P.n, k = P.k, rounds = 3;
    const double flop = 2.0 * m * n * (double)k;
    int iters = (int)(0.25 / (flop / 7e14)); /* about 0.25 s per kernel and round */
    iters = iters < 3 ? 3 : iters > 30 ? 30 : iters;
    void *A = dalloc((size_t)m * k * 2), *B = dalloc((size_t)n * k * 2);
    void *D = dalloc((size_t)m * n * 2), *Dc = dalloc((size_t)m * n * 2);
    rand_fill(ks[0], A, (size_t)m * k, g_seed++);
    rand_fill(ks[0], B, (size_t)n * k, g_seed++);
    static tpg_gemm_params p[SELFTEST_MAX_KERNELS];
    set_epoch(c, 1);
    for (int i = 0; i < nk; ++i) {
        base_params(&p[i], c, m, n, k, 1, 1);
        map_a(&p[i].stage[0].a_map, ks[i], A, m, k);
        map_b(&p[i].stage[0].b_map, ks[i], B, n, k);
        p[i].stage[0].a_batch_rows = m;
        p[i].stage[0].b_batch_rows = n;
        set_dest(&p[i], 0, ks[i], D, n, (long long)m * n);
    }
    for (int i = 0; i <= nk; ++i)
        for (int w = 0; w < 2; ++w) {
            if (i < nk) launch(ks[i], &p[i], 0);
            else cublas_gemm(h, A, B, Dc, m, n, k);
            sync_watchdog(i < nk ? ks[i].name : "cuBLAS");
        }
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    double t[SELFTEST_MAX_KERNELS + 1] = {0};
    for (int r = 0; r < rounds; ++r)
        for (int i = 0; i <= nk; ++i) {
            CK(cudaEventRecord(e0, 0));
            for (int it = 0; it < iters; ++it) {
                if (i < nk) launch(ks[i], &p[i], 0);
                else cublas_gemm(h, A, B, Dc, m, n, k);
            }
            CK(cudaEventRecord(e1, 0));
            sync_watchdog(i < nk ? ks[i].name : "cuBLAS");
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            t[i] += ms;
        }
    CK(cudaEventDestroy(e0)); CK(cudaEventDestroy(e1));
    for (int i = 0; i <= nk; ++i) g_tf[pi][i] = flop * iters * rounds / (t[i] * 1e-3) / 1e12;
    /* each kernel's output (poisoned first) against cuBLAS's, expanded to fp32 */
    float *refc = (float *)dalloc((size_t)m * n * 4);
    CK(cudaMemset(refc, 0, (size_t)m * n * 4));
    ref_axpy_h(ks[0], Dc, n, 0, 1.f, refc, m, n, 1);
    for (int i = 0; i < nk; ++i) {
        CK(cudaMemset(D, 0xFF, (size_t)m * n * 2));
        launch(ks[i], &p[i], 0);
        sync_watchdog(ks[i].name);
        char name[64], v[48];
        snprintf(name, 64, "perf %s vs cuBLAS", P.name);
        const double metric = compare_h(ks[i], D, n, 0, refc, m, n, 1);
        const unsigned int st = get_status(c);
        snprintf(v, 48, "%.1f TF/s (%.3f) err=%.1e", g_tf[pi][i], g_tf[pi][i] / g_tf[pi][nk], metric);
        record(name, ks[i], v, "1e-02", metric <= ks[i].bound && st == TPG_DEVICE_OK);
    }
    cudaFree(refc);
    cudaFree(A); cudaFree(B); cudaFree(D); cudaFree(Dc);
}

void print_cublas_perf(const kern *ks, int nk)
{
    printf("\n## bf16 TFLOP/s vs cuBLAS (ratio = kernel / cuBLAS; 3 interleaved rounds)\n\n| problem | M x N x K | cuBLAS |");
    for (int i = 0; i < nk; ++i) printf(" %s |", ks[i].name);
    printf("\n|---|---|---|");
    for (int i = 0; i < nk; ++i) printf("---|");
    printf("\n");
    double lg[SELFTEST_MAX_KERNELS] = {0};
    int cnt = 0;
    for (int pi = 0; pi < NPROB; ++pi) {
        if (g_tf[pi][nk] <= 0) continue;
        const problem &P = g_problems[pi];
        printf("| %s | %dx%dx%d | %.1f |", P.name, P.m, P.n, P.k, g_tf[pi][nk]);
        for (int i = 0; i < nk; ++i) {
            printf(" %.1f (%.3f) |", g_tf[pi][i], g_tf[pi][i] / g_tf[pi][nk]);
            lg[i] += log(g_tf[pi][i] / g_tf[pi][nk]);
        }
        printf("\n");
        ++cnt;
    }
    if (!cnt) return;
    printf("| **geomean ratio** (%d) | | |", cnt);
    for (int i = 0; i < nk; ++i) printf(" **%.3f** |", exp(lg[i] / cnt));
    printf("\n");
}

/* Every problem in turn (each under its own alarm). */
void cublas_perf(const kern *bf, int nbf, const ctl &c, cublasHandle_t h)
{
    for (int pi = 0; pi < NPROB && nbf > 0; ++pi) {
        case_guard(g_problems[pi].name, 120);
        test_perf(bf, nbf, c, h, pi);
    }
}
