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

#define CK(x)                                                                                       \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));     \
            exit(2);                                                                                \
        }                                                                                           \
    } while (0)

static PFN_cuTensorMapEncodeTiled_v12000 g_encode;
static int g_num_sms;

/* ---- device helpers: random fill, reference, comparison --------------------------------------- */

__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
template <class T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16(v); }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half(v); }

template <class T> __global__ void fill_rand(T *p, size_t n, unsigned int seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned int h = (unsigned int)i * 2654435761u ^ (seed * 0x9E3779B9u);
        h ^= h >> 16; h *= 0x7feb352du; h ^= h >> 15; h *= 0x846ca68bu; h ^= h >> 16;
        float u = (float)(h >> 8) * (1.0f / 16777216.0f); /* [0,1) */
        p[i] = from_f<T>(2.0f * u - 1.0f);
    }
}

/* out[b][i][j] (ld n) = (accumulate ? out : 0) + coef * sum_k A[b*a_bs + i][k] * B[b*b_bs + j][k] */
template <class T>
__global__ void ref_dot(const T *A, long long a_bs, const T *B, long long b_bs, int m, int n, int k, int l, float coef,
                        float *out, int accumulate)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y, b = blockIdx.z;
    if (j >= n || i >= m || b >= l) return;
    const T *a = A + (b * a_bs + i) * (long long)k;
    const T *bb = B + (b * b_bs + j) * (long long)k;
    float s = 0.f;
    for (int q = 0; q < k; ++q) s += to_f(a[q]) * to_f(bb[q]);
    float *o = out + ((long long)b * m + i) * n + j;
    *o = (accumulate ? *o : 0.f) + coef * s;
}

/* out[b][i][j] += beta * C[b*c_batch + i*c_ld + j] */
template <class T>
__global__ void ref_axpy(const T *C, long long c_ld, long long c_batch, float beta, float *out, int m, int n, int l)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y, b = blockIdx.z;
    if (j >= n || i >= m || b >= l) return;
    out[((long long)b * m + i) * n + j] += beta * to_f(C[b * c_batch + i * c_ld + j]);
}

/* stats[0] = max|d - ref| (bits), stats[1] = max|ref| (bits), stats[2] = #NaN/inf in d */
template <class T>
__global__ void compare(const T *D, long long d_ld, long long d_batch, const float *ref, int m, int n, int l,
                        unsigned int *stats)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y, b = blockIdx.z;
    if (j >= n || i >= m || b >= l) return;
    float d = to_f(D[b * d_batch + i * d_ld + j]);
    float r = ref[((long long)b * m + i) * n + j];
    if (!isfinite(d)) {
        atomicAdd(&stats[2], 1u);
        return;
    }
    atomicMax(&stats[0], __float_as_uint(fabsf(d - r)));
    atomicMax(&stats[1], __float_as_uint(fabsf(r)));
}

/* counts elements of the padding columns [n, ld) that lost their 0xFFFF poison (TMA-store clipping) */
__global__ void count_unpoisoned(const unsigned short *D, long long ld, int n, int m, int l, unsigned int *count)
{
    int j = n + blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y, b = blockIdx.z;
    if (j >= ld || i >= m || b >= l) return;
    if (D[((long long)b * m + i) * ld + j] != 0xFFFFu) atomicAdd(count, 1u);
}

/* ---- host helpers ------------------------------------------------------------------------------ */

struct kern {
    const char *name;
    const void *fn;
    int dtype;          /* 0 bf16, 1 fp16 (operands and outputs) */
    double bound;       /* relative error bound */
};

static void *dalloc(size_t bytes)
{
    void *p;
    CK(cudaMalloc(&p, bytes));
    return p;
}

static void rand_fill(const kern &K, void *p, size_t n, unsigned int seed)
{
    if (K.dtype == 0) fill_rand<<<1024, 256>>>((__nv_bfloat16 *)p, n, seed);
    else fill_rand<<<1024, 256>>>((__half *)p, n, seed);
    CK(cudaGetLastError());
}

/* K-major operand map: {k, rows}, 128B swizzle, box {BK, box_rows}; OOB reads are zero-filled. */
static void make_map(CUtensorMap *map, const kern &K, const void *base, unsigned long long rows, unsigned long long k,
                     unsigned int box_rows)
{
    cuuint64_t dims[2] = {k, rows};
    cuuint64_t strides[1] = {k * 2};
    cuuint32_t box[2] = {BK, box_rows};
    cuuint32_t estr[2] = {1, 1};
    CUresult r = g_encode(map, K.dtype == 0 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
                          (void *)base, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                          CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "cuTensorMapEncodeTiled failed (%d) rows=%llu k=%llu\n", (int)r, rows, k);
        exit(2);
    }
}

/* Destination map as runtime/src/tensormap.c builds it: 3-D {n, m, l}, row stride ld, batch stride batch
 * (elements), 128B swizzle, box {64, 64, 1}; the extent clips ragged tiles. */
static void make_dmap(CUtensorMap *map, const kern &K, void *base, int n, int m, int l, long long ld, long long batch)
{
    if (l <= 1) batch = ld * m;
    cuuint64_t dims[3] = {(cuuint64_t)n, (cuuint64_t)m, (cuuint64_t)l};
    cuuint64_t strides[2] = {(cuuint64_t)ld * 2, (cuuint64_t)batch * 2};
    cuuint32_t box[3] = {64, 64, 1};
    cuuint32_t estr[3] = {1, 1, 1};
    CUresult r = g_encode(map, K.dtype == 0 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3,
                          base, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                          CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "cuTensorMapEncodeTiled (D) failed (%d) n=%d m=%d l=%d ld=%lld\n", (int)r, n, m, l, ld);
        exit(2);
    }
}

/* Fills stage s's destination (pointer, strides and the TMA-store map) for extent m x n x l. */
static void set_dest(tpg_gemm_params *p, int s, const kern &K, void *d, long long ld, long long batch)
{
    p->stage[s].d = d;
    p->stage[s].d_ld = ld;
    p->stage[s].d_batch = batch;
    make_dmap(&p->stage[s].d_map, K, d, p->n, p->m, p->l, ld, batch);
}

/* Common parameters: one device-resident epoch word and status word. */
struct ctl {
    unsigned int *epoch, *status;
};

static void base_params(tpg_gemm_params *p, const ctl &c, int m, int n, int k, int l, int stages)
{
    memset(p, 0, sizeof(*p));
    p->num_stages = stages;
    p->m = m; p->n = n; p->k = k; p->l = l;
    p->alpha = 1.f; p->beta = 0.f;
    p->epoch = c.epoch;
    p->status = c.status;
    p->timeout_ns = 2000000000ull; /* 2 s: a bug must not hang the test */
}

static void set_epoch(const ctl &c, unsigned int e)
{
    CK(cudaMemcpy(c.epoch, &e, 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(c.status, 0, 4));
}

static unsigned int get_status(const ctl &c)
{
    unsigned int s;
    CK(cudaMemcpy(&s, c.status, 4, cudaMemcpyDeviceToHost));
    return s;
}

static void launch(const kern &K, const tpg_gemm_params *p, cudaStream_t st, int grid = 0)
{
    void *args[1] = {(void *)p};
    CK(cudaLaunchKernel(K.fn, dim3(grid ? grid : g_num_sms), dim3(THREADS), args, SMEM_BYTES, st));
}

/* Wait with a host-side watchdog so that a hung kernel is reported, not waited on forever. */
static int sync_watchdog(double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        cudaError_t e = cudaStreamQuery(0);
        if (e == cudaSuccess) return 0;
        if (e != cudaErrorNotReady) {
            fprintf(stderr, "kernel failed: %s\n", cudaGetErrorString(e));
            exit(2);
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) + 1e-9 * (t.tv_nsec - t0.tv_nsec) > seconds) {
            fprintf(stderr, "HANG: kernel did not finish within %.0f s\n", seconds);
            fflush(stdout);
            exit(3);
        }
    }
}

static double run_and_time_ms(const kern &K, const tpg_gemm_params *p)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    CK(cudaEventRecord(a, 0));
    launch(K, p, 0);
    CK(cudaEventRecord(b, 0));
    sync_watchdog(20.0);
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
    return ms;
}

/* Reference helpers dispatching on dtype. */
static void ref_dot_h(const kern &K, const void *A, long long a_bs, const void *B, long long b_bs, int m, int n, int k,
                      int l, float coef, float *out, int acc)
{
    dim3 g((n + 127) / 128, m, l);
    if (K.dtype == 0)
        ref_dot<<<g, 128>>>((const __nv_bfloat16 *)A, a_bs, (const __nv_bfloat16 *)B, b_bs, m, n, k, l, coef, out, acc);
    else ref_dot<<<g, 128>>>((const __half *)A, a_bs, (const __half *)B, b_bs, m, n, k, l, coef, out, acc);
    CK(cudaGetLastError());
}

static void ref_axpy_h(const kern &K, const void *C, long long c_ld, long long c_batch, float beta, float *out, int m,
                       int n, int l)
{
    dim3 g((n + 127) / 128, m, l);
    if (K.dtype == 0) ref_axpy<<<g, 128>>>((const __nv_bfloat16 *)C, c_ld, c_batch, beta, out, m, n, l);
    else ref_axpy<<<g, 128>>>((const __half *)C, c_ld, c_batch, beta, out, m, n, l);
    CK(cudaGetLastError());
}

/* Returns the metric; NaN/inf in D (e.g. an unwritten poisoned element) gives +inf. */
static double compare_h(const kern &K, const void *D, long long d_ld, long long d_batch, const float *ref, int m, int n,
                        int l)
{
    unsigned int *st = (unsigned int *)dalloc(12), h[3];
    CK(cudaMemset(st, 0, 12));
    dim3 g((n + 127) / 128, m, l);
    if (K.dtype == 0) compare<<<g, 128>>>((const __nv_bfloat16 *)D, d_ld, d_batch, ref, m, n, l, st);
    else compare<<<g, 128>>>((const __half *)D, d_ld, d_batch, ref, m, n, l, st);
    CK(cudaGetLastError());
    CK(cudaMemcpy(h, st, 12, cudaMemcpyDeviceToHost));
    CK(cudaFree(st));
    if (h[2]) {
        printf("    %u non-finite outputs\n", h[2]);
        return INFINITY;
    }
    float dmax, rmax;
    memcpy(&dmax, &h[0], 4); memcpy(&rmax, &h[1], 4);
    return rmax > 0 ? dmax / rmax : INFINITY;
}

/* ---- result table ------------------------------------------------------------------------------ */

#define MAX_ROWS 64
static struct {
    char name[64], dtype[8], value[48], bound[24];
    int pass;
} g_rows[MAX_ROWS];
static int g_nrows, g_failures;

static void record(const char *name, const kern &K, const char *value, const char *bound, int pass)
{
    if (g_nrows < MAX_ROWS) {
        snprintf(g_rows[g_nrows].name, 64, "%s", name);
        snprintf(g_rows[g_nrows].dtype, 8, "%s", K.name);
        snprintf(g_rows[g_nrows].value, 48, "%s", value);
        snprintf(g_rows[g_nrows].bound, 24, "%s", bound);
        g_rows[g_nrows].pass = pass;
        ++g_nrows;
    }
    if (!pass) ++g_failures;
    printf("[%s] %-34s %-5s %s (bound %s)\n", pass ? "PASS" : "FAIL", name, K.name, value, bound);
    fflush(stdout);
}

static void record_metric(const char *name, const kern &K, double metric, unsigned int status, unsigned int want)
{
    char v[48], b[24];
    snprintf(v, 48, "rel_err=%.3e status=%u", metric, status);
    snprintf(b, 24, "%.0e", K.bound);
    record(name, K, v, b, metric <= K.bound && status == want);
}

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
