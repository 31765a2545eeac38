/* GPU self-test of the sm90 GEMM kernel family (templates/kernels/gemm_sm90.cuh), default config
 * 128x256x64, 4 stages, 2 consumers, bf16 and fp16. Built by tests/gpu/kernel_selftest.sh.
 *
 * Each case fills inputs with random values (never zeros), poisons D with NaN bytes, runs the kernel
 * with hand-built tensor maps and launch parameters, and compares with a simple fp32 SIMT reference:
 *   metric = max|d - ref| / max|ref| over the checked extent (NaN anywhere = failure).
 * Cases: plain GEMM (square and ragged), alpha/beta with C and L = 2 batches into a padded D (the padding
 * must keep its poison: TMA-store clipping), two-stage local reduce-scatter rings (signal_flags ->
 * partial_flags; stage 0 writes a second local buffer standing in for a peer's slot; the larger one gives
 * every CTA several tiles, so deferred flag flushes run), a stage wait flag already raised, a wait flag
 * never raised (must time out and report TPG_DEVICE_TIMEOUT), and timing against cuBLAS on 8192^3 and
 * local Llama GEMM shapes, bf16/fp16 interleaved.
 * C-style host code; the test (not the product) links cuBLAS.
 */
#include <cublas_v2.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gemm_params.h"

extern "C" const void *tpg_selftest_bf16_entry(void);
extern "C" const void *tpg_selftest_fp16_entry(void);

#define BM 128
#define BN 256
#define BK 64
#define THREADS 384
#define SMEM_BYTES (4 * (BM + BN) * BK * 2 + 2 * BM * 128 + 2048)

#include "selftest_helpers.cuh"

/* ---- cases ------------------------------------------------------------------------------------- */

static unsigned int g_seed = 1;

/* (1) one stage, plain: D = A . B^T */
static void test_plain(const kern &K, const ctl &c, int m, int n, int k)
{
    void *A = dalloc((size_t)m * k * 2), *B = dalloc((size_t)n * k * 2), *D = dalloc((size_t)m * n * 2);
    float *ref = (float *)dalloc((size_t)m * n * 4);
    rand_fill(K, A, (size_t)m * k, g_seed++);
    rand_fill(K, B, (size_t)n * k, g_seed++);
    CK(cudaMemset(D, 0xFF, (size_t)m * n * 2)); /* NaN poison */
    tpg_gemm_params p;
    base_params(&p, c, m, n, k, 1, 1);
    set_epoch(c, 3);
    make_map(&p.stage[0].a_map, K, A, m, k, BM);
    make_map(&p.stage[0].b_map, K, B, n, k, BN);
    p.stage[0].a_batch_rows = m;
    p.stage[0].b_batch_rows = n;
    set_dest(&p, 0, K, D, n, (long long)m * n);
    run_and_time_ms(K, &p);
    ref_dot_h(K, A, 0, B, 0, m, n, k, 1, 1.f, ref, 0);
    char name[64];
    snprintf(name, 64, "plain %dx%dx%d", m, n, k);
    record_metric(name, K, compare_h(K, D, n, (long long)m * n, ref, m, n, 1), get_status(c), TPG_DEVICE_OK);
    cudaFree(A); cudaFree(B); cudaFree(D); cudaFree(ref);
}

/* (2) alpha = 0.5, beta = 1, C, L = 2 batches, padded d_ld */
static void test_alpha_beta(const kern &K, const ctl &c)
{
    const int m = 1000, n = 776, k = 328, l = 2, dld = n + 16;
    void *A = dalloc((size_t)l * m * k * 2), *B = dalloc((size_t)l * n * k * 2);
    void *C = dalloc((size_t)l * m * n * 2), *D = dalloc((size_t)l * m * dld * 2);
    float *ref = (float *)dalloc((size_t)l * m * n * 4);
    rand_fill(K, A, (size_t)l * m * k, g_seed++);
    rand_fill(K, B, (size_t)l * n * k, g_seed++);
    rand_fill(K, C, (size_t)l * m * n, g_seed++);
    CK(cudaMemset(D, 0xFF, (size_t)l * m * dld * 2));
    tpg_gemm_params p;
    base_params(&p, c, m, n, k, l, 1);
    p.alpha = 0.5f;
    p.beta = 1.0f;
    set_epoch(c, 9);
    make_map(&p.stage[0].a_map, K, A, (unsigned long long)l * m, k, BM);
    make_map(&p.stage[0].b_map, K, B, (unsigned long long)l * n, k, BN);
    p.stage[0].a_batch_rows = m;
    p.stage[0].b_batch_rows = n;
    set_dest(&p, 0, K, D, dld, (long long)m * dld);
    p.stage[0].c = C;
    p.stage[0].c_ld = n;
    p.stage[0].c_batch = (long long)m * n;
    run_and_time_ms(K, &p);
    ref_dot_h(K, A, m, B, n, m, n, k, l, 0.5f, ref, 0);
    ref_axpy_h(K, C, n, (long long)m * n, 1.0f, ref, m, n, l);
    double metric = compare_h(K, D, dld, (long long)m * dld, ref, m, n, l);
    unsigned int *cnt = (unsigned int *)dalloc(4), hc = 0;
    CK(cudaMemset(cnt, 0, 4));
    count_unpoisoned<<<dim3(1, m, l), 32>>>((const unsigned short *)D, dld, n, m, l, cnt);
    CK(cudaMemcpy(&hc, cnt, 4, cudaMemcpyDeviceToHost));
    cudaFree(cnt);
    if (hc) printf("    %u elements written outside n (padding columns)\n", hc);
    record_metric("alpha.5 beta1 C L2 1000x776x328", K, hc ? INFINITY : metric, get_status(c), TPG_DEVICE_OK);
    cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(D); cudaFree(ref);
}

/* (3) two-stage local reduce-scatter ring: stage 0 writes X and raises signal_flags[t]; stage 1 waits
 * on partial_flags[t] (= the same flags), adds X, writes D. Flags start at epoch-1 (stale). */
static void test_ring(const kern &K, const ctl &c, int m, int n)
{
    const int k = 512, epoch = 5;
    const int tiles = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
    void *A = dalloc((size_t)2 * m * k * 2), *B = dalloc((size_t)2 * n * k * 2);
    void *X = dalloc((size_t)m * n * 2), *D = dalloc((size_t)m * n * 2);
    unsigned int *F = (unsigned int *)dalloc(tiles * 4);
    float *ref = (float *)dalloc((size_t)m * n * 4);
    rand_fill(K, A, (size_t)2 * m * k, g_seed++);
    rand_fill(K, B, (size_t)2 * n * k, g_seed++);
    CK(cudaMemset(X, 0xFF, (size_t)m * n * 2));
    CK(cudaMemset(D, 0xFF, (size_t)m * n * 2));
    unsigned int *hf = (unsigned int *)malloc(tiles * 4);
    for (int i = 0; i < tiles; ++i) hf[i] = epoch - 1;
    CK(cudaMemcpy(F, hf, tiles * 4, cudaMemcpyHostToDevice));
    tpg_gemm_params p;
    base_params(&p, c, m, n, k, 1, 2);
    set_epoch(c, epoch);
    for (int s = 0; s < 2; ++s) {
        tpg_stage_params *sp = &p.stage[s];
        make_map(&sp->a_map, K, A, 2ull * m, k, BM);
        make_map(&sp->b_map, K, B, 2ull * n, k, BN);
        sp->a_row0 = s * m;
        sp->b_row0 = s * n;
        sp->a_batch_rows = 2 * m;
        sp->b_batch_rows = 2 * n;
        set_dest(&p, s, K, s == 0 ? X : D, n, (long long)m * n); /* X: the "peer" slot */
    }
    p.stage[0].signal_flags = F;
    p.stage[1].partial = X;
    p.stage[1].partial_ld = n;
    p.stage[1].partial_batch = (long long)m * n;
    p.stage[1].partial_flags = F;
    run_and_time_ms(K, &p);
    ref_dot_h(K, A, 0, B, 0, m, n, k, 1, 1.f, ref, 0);
    ref_dot_h(K, (const char *)A + (size_t)m * k * 2, 0, (const char *)B + (size_t)n * k * 2, 0, m, n, k, 1, 1.f, ref,
              1);
    double metric = compare_h(K, D, n, (long long)m * n, ref, m, n, 1);
    CK(cudaMemcpy(hf, F, tiles * 4, cudaMemcpyDeviceToHost));
    int flags_ok = 1;
    for (int i = 0; i < tiles; ++i) flags_ok &= hf[i] == (unsigned int)epoch;
    if (!flags_ok) printf("    signal flags not all raised to the epoch\n");
    char name[64];
    snprintf(name, 64, "2-stage ring partial+flags %dx%d", m, n);
    record_metric(name, K, flags_ok ? metric : INFINITY, get_status(c), TPG_DEVICE_OK);
    free(hf);
    cudaFree(A); cudaFree(B); cudaFree(X); cudaFree(D); cudaFree(F); cudaFree(ref);
}

/* (4)/(5) two all-gather stages: stage s computes rows block s of D = A . B^T (A = two m-row blocks);
 * stage 1 waits on wait_flag. flag_value = epoch: passes; epoch - 1: must time out (20 ms). */
static void test_wait(const kern &K, const ctl &c, int raised)
{
    const int m = 1000, n = 1000, k = 520, epoch = 12;
    void *A = dalloc((size_t)2 * m * k * 2), *B = dalloc((size_t)n * k * 2), *D = dalloc((size_t)2 * m * n * 2);
    unsigned int *W = (unsigned int *)dalloc(4);
    float *ref = (float *)dalloc((size_t)2 * m * n * 4);
    rand_fill(K, A, (size_t)2 * m * k, g_seed++);
    rand_fill(K, B, (size_t)n * k, g_seed++);
    CK(cudaMemset(D, 0xFF, (size_t)2 * m * n * 2));
    unsigned int wv = raised ? epoch : epoch - 1;
    CK(cudaMemcpy(W, &wv, 4, cudaMemcpyHostToDevice));
    tpg_gemm_params p;
    base_params(&p, c, m, n, k, 1, 2);
    if (!raised) p.timeout_ns = 20000000ull; /* 20 ms */
    set_epoch(c, epoch);
    for (int s = 0; s < 2; ++s) {
        tpg_stage_params *sp = &p.stage[s];
        make_map(&sp->a_map, K, A, 2ull * m, k, BM);
        make_map(&sp->b_map, K, B, n, k, BN);
        sp->a_row0 = s * m;
        sp->a_batch_rows = 2 * m;
        sp->b_batch_rows = n;
        set_dest(&p, s, K, (char *)D + (size_t)s * m * n * 2, n, 2ll * m * n);
    }
    p.stage[1].wait_flag = W;
    double ms = run_and_time_ms(K, &p);
    unsigned int st = get_status(c);
    char v[48];
    if (raised) {
        ref_dot_h(K, A, 0, B, 0, 2 * m, n, k, 1, 1.f, ref, 0);
        record_metric("wait_flag raised (2 stages)", K, compare_h(K, D, n, 2ll * m * n, ref, 2 * m, n, 1), st,
                      TPG_DEVICE_OK);
    } else {
        snprintf(v, 48, "status=%u after %.1f ms", st, ms);
        record("wait_flag never raised, 20ms", K, v, "status=1", st == TPG_DEVICE_TIMEOUT);
    }
    cudaFree(A); cudaFree(B); cudaFree(D); cudaFree(W); cudaFree(ref);
}

/* (6) timing at 8192^3, interleaved with cuBLAS (same layouts: D^T = B . A^T in column-major terms) */
static void test_perf(const kern &K, const ctl &c, cublasHandle_t h, int m, int n, int k)
{
    const int warm = 20, iters = 50, chunk = 10;
    void *A = dalloc((size_t)m * k * 2), *B = dalloc((size_t)n * k * 2);
    void *D = dalloc((size_t)m * n * 2), *Dc = dalloc((size_t)m * n * 2);
    rand_fill(K, A, (size_t)m * k, g_seed++);
    rand_fill(K, B, (size_t)n * k, g_seed++);
    CK(cudaMemset(D, 0xFF, (size_t)m * n * 2));
    tpg_gemm_params p;
    base_params(&p, c, m, n, k, 1, 1);
    set_epoch(c, 1);
    make_map(&p.stage[0].a_map, K, A, m, k, BM);
    make_map(&p.stage[0].b_map, K, B, n, k, BN);
    p.stage[0].a_batch_rows = m;
    p.stage[0].b_batch_rows = n;
    set_dest(&p, 0, K, D, n, (long long)m * n);
    const float one = 1.f, zero = 0.f;
    const cudaDataType_t dt = K.dtype == 0 ? CUDA_R_16BF : CUDA_R_16F;
#define CUBLAS_CALL()                                                                                           \
    do {                                                                                                        \
        cublasStatus_t s_ = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, B, dt, k, A, dt, k, &zero, Dc, \
                                         dt, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);                         \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                      \
            fprintf(stderr, "cublasGemmEx failed: %d\n", (int)s_);                                              \
            exit(2);                                                                                            \
        }                                                                                                       \
    } while (0)
    for (int i = 0; i < warm; ++i) {
        launch(K, &p, 0);
        CUBLAS_CALL();
    }
    sync_watchdog(60.0);
    /* fresh random data for the timed runs */
    rand_fill(K, A, (size_t)m * k, g_seed++);
    rand_fill(K, B, (size_t)n * k, g_seed++);
    cudaEvent_t e[4];
    for (int i = 0; i < 4; ++i) CK(cudaEventCreate(&e[i]));
    double t_ours = 0, t_cublas = 0, t_128 = 0; /* t_128: the same kernel on a 128-CTA grid */
    for (int r = 0; r < iters / chunk; ++r) {
        float ms;
        CK(cudaEventRecord(e[0], 0));
        for (int i = 0; i < chunk; ++i) launch(K, &p, 0);
        CK(cudaEventRecord(e[1], 0));
        for (int i = 0; i < chunk; ++i) CUBLAS_CALL();
        CK(cudaEventRecord(e[2], 0));
        for (int i = 0; i < chunk; ++i) launch(K, &p, 0, 128);
        CK(cudaEventRecord(e[3], 0));
        sync_watchdog(60.0);
        CK(cudaEventElapsedTime(&ms, e[0], e[1]));
        t_ours += ms;
        CK(cudaEventElapsedTime(&ms, e[1], e[2]));
        t_cublas += ms;
        CK(cudaEventElapsedTime(&ms, e[2], e[3]));
        t_128 += ms;
    }
#undef CUBLAS_CALL
    const double flop = 2.0 * m * n * (double)k;
    const double tf_ours = flop * iters / (t_ours * 1e-3) / 1e12, tf_cublas = flop * iters / (t_cublas * 1e-3) / 1e12;
    unsigned int st = get_status(c);
    char v[48];
    snprintf(v, 48, "%.1f TFLOP/s vs cuBLAS %.1f = %.3f", tf_ours, tf_cublas, tf_ours / tf_cublas);
    char name[64];
    snprintf(name, 64, "perf %dx%dx%d", m, n, k);
    record(name, K, v, "info", st == TPG_DEVICE_OK);
    printf("    ours %.3f ms/iter, cuBLAS %.3f ms/iter, ours on 128 CTAs %.3f ms/iter (%.1f TFLOP/s)\n", t_ours / iters,
           t_cublas / iters, t_128 / iters, flop * iters / (t_128 * 1e-3) / 1e12);
    /* the timed output against cuBLAS's (expanded to fp32 with beta = 1 on a zeroed buffer) */
    float *refc = (float *)dalloc((size_t)m * n * 4);
    CK(cudaMemset(refc, 0, (size_t)m * n * 4));
    ref_axpy_h(K, Dc, n, 0, 1.f, refc, m, n, 1);
    snprintf(name, 64, "perf output vs cuBLAS %dx%dx%d", m, n, k);
    record_metric(name, K, compare_h(K, D, n, 0, refc, m, n, 1), st, TPG_DEVICE_OK);
    cudaFree(refc);
    for (int i = 0; i < 4; ++i) cudaEventDestroy(e[i]);
    cudaFree(A); cudaFree(B); cudaFree(D); cudaFree(Dc);
}

int main(int argc, char **argv)
{
    int skip_perf = argc > 1 && strcmp(argv[1], "--no-perf") == 0;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    g_num_sms = prop.multiProcessorCount;
    printf("device: %s (cc %d.%d, %d SMs)\n", prop.name, prop.major, prop.minor, g_num_sms);
    if (prop.major != 9) {
        printf("not a Hopper device; skipping\n");
        return 1;
    }
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&g_encode, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !g_encode) {
        fprintf(stderr, "cuTensorMapEncodeTiled not available\n");
        return 2;
    }
    kern ks[2] = {{"bf16", tpg_selftest_bf16_entry(), 0, 1e-2}, {"fp16", tpg_selftest_fp16_entry(), 1, 2e-3}};
    ctl c;
    c.epoch = (unsigned int *)dalloc(4);
    c.status = (unsigned int *)dalloc(4);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasCreate failed\n");
        return 2;
    }
    for (int i = 0; i < 2; ++i) {
        const kern &K = ks[i];
        CK(cudaFuncSetAttribute(K.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
        test_plain(K, c, 2048, 2048, 1024);
        test_plain(K, c, 1000, 1000, 520);
        test_alpha_beta(K, c);
        test_ring(K, c, 1000, 1000);
        test_ring(K, c, 4000, 2040); /* several tiles per CTA: deferred flag flushes */
        test_plain(K, c, 4000, 3000, 1000);
        test_wait(K, c, 1);
        test_wait(K, c, 0);
    }
    /* 8192^3 and local GEMMs of the Llama shapes at TP = 2 (AG: M x N/2 x K, RS: M x N x K/2), bf16 and
     * fp16 interleaved per shape (the card heats up: compare ratios, not absolute numbers) */
    static const int shapes[][3] = {{8192, 8192, 8192},  {16384, 5120, 8192}, {8192, 3072, 4096}, {16384, 8192, 4096},
                                    {8192, 4096, 2048},  {4096, 4096, 4096},  {16384, 28672, 8192}, {8192, 8192, 8192}};
    if (!skip_perf)
        for (int sh = 0; sh < (int)(sizeof shapes / sizeof shapes[0]); ++sh)
            for (int i = 0; i < 2; ++i) test_perf(ks[i], c, h, shapes[sh][0], shapes[sh][1], shapes[sh][2]);
    cublasDestroy(h);

    printf("\n| case | dtype | result | bound | ok |\n|---|---|---|---|---|\n");
    for (int i = 0; i < g_nrows; ++i)
        printf("| %s | %s | %s | %s | %s |\n", g_rows[i].name, g_rows[i].dtype, g_rows[i].value, g_rows[i].bound,
               g_rows[i].pass ? "PASS" : "FAIL");
    printf("\n%s: %d failure(s)\n", g_failures ? "FAILED" : "ALL PASSED", g_failures);
    return g_failures ? 1 : 0;
}
