/* Shared parts of the GPU self-test (tests/gpu/kernel_selftest.cu): error checks, the kernel
 * descriptor, device helpers (random fill, fp32 SIMT reference, comparison) and the host helpers of
 * selftest_util.cu (tensor maps, launch parameters, cluster-aware launch, the hang watchdog, the
 * result table). C-style host code; the test (not the product) links cuBLAS.
 */
#ifndef TPG_SELFTEST_UTIL_CUH
#define TPG_SELFTEST_UTIL_CUH

#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_params.h"
#include "selftest_shape.h"

#define CK(x)                                                                                       \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));     \
            exit(2);                                                                                \
        }                                                                                           \
    } while (0)

/* Every wait on the tested kernel is bounded by this (seconds): a hang costs seconds, not the run. */
#define WATCHDOG_S 10.0

/* Kernels one run holds: every instance of kernel_selftest.sh (kernel_selftest.cu checks the KERNELS list
 * against it at compile time) and the tables of the --rs-* / --ag-perf / --coresident runs. */
#define SELFTEST_MAX_KERNELS 56

/* One kernel under test. */
struct kern {
    const char *name;          /* short label in the tables */
    const void *fn;            /* the __global__ function */
    tpg_selftest_shape s;      /* exported by the instance */
    int grid;                  /* persistent grid: SMs in whole clusters, capped at the co-resident clusters */
    double bound;              /* relative error bound */
};

/* Common parameters: one device-resident epoch word and status word. */
struct ctl {
    unsigned int *epoch, *status, *gave_up; /* gave_up: tpg_gemm_params.gave_up_epoch */
};

extern PFN_cuTensorMapEncodeTiled_v12000 g_encode;
extern int g_num_sms;
extern int g_failures;

/* ---- device helpers: random fill, reference, comparison --------------------------------------- */

__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_fp8_e4m3 v) { return (float)v; }
__device__ __forceinline__ float to_f(__nv_fp8_e5m2 v) { return (float)v; }
template <class T> __device__ __forceinline__ T from_f(float v) { return T(v); } /* fp8: saturating conversion */
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
static __global__ void count_unpoisoned(const unsigned short *D, long long ld, int n, int m, int l, unsigned int *count)
{
    int j = n + blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y, b = blockIdx.z;
    if (j >= ld || i >= m || b >= l) return;
    if (D[((long long)b * m + i) * ld + j] != 0xFFFFu) atomicAdd(count, 1u);
}

/* ---- host helpers (selftest_util.cu) ------------------------------------------------------------ */

void kern_init(kern *K, const char *name, const void *fn, const tpg_selftest_shape &s, double bound);
int selftest_device_init(); /* selftest_util.cu */
void *driver_symbol(const char *name); /* a driver entry point (CUDA 12.0 ABI), or NULL */
void *dalloc(size_t bytes);
void rand_fill(const kern &K, void *p, size_t n, unsigned int seed);     /* operands (A, B) */
void rand_fill_out(const kern &K, void *p, size_t n, unsigned int seed); /* outputs' type (C) */
size_t ab_bytes(const kern &K); /* bytes of an operand element: 1 for fp8, else 2 (outputs are always 2) */
size_t partial_bytes(const kern &K); /* bytes of a reduce-scatter partial element: 4 with `partials: f32`, else 2 */
/* k rounded up so that a K-major row is a multiple of 16 bytes, as TMA needs (fp8: 520 -> 528; 16-bit: k) */
int legal_k(const kern &K, int k);
/* operand maps as runtime/src/params.c encodes them where a launch has a tile's rows or more: A box BM / cluster_n
 * rows (params' a_box_rows left 0 says so), B box BN / cluster_m */
void map_a(CUtensorMap *map, const kern &K, const void *base, unsigned long long rows, unsigned long long k);
void map_b(CUtensorMap *map, const kern &K, const void *base, unsigned long long rows, unsigned long long k);
void set_dest(tpg_gemm_params *p, int s, const kern &K, void *d, long long ld, long long batch, bool partial = false);
void set_partial(tpg_gemm_params *p, int s, const kern &K, const void *x, long long ld, long long batch,
                 const unsigned int *flags);
void ring_params(tpg_gemm_params *p, const ctl &c, const kern &K, void *A, void *B, void *X, void *D, unsigned int *F,
                 int m, int n, int k, int S, int tiles, int l = 1);
void base_params(tpg_gemm_params *p, const ctl &c, int m, int n, int k, int l, int stages);
void set_epoch(const ctl &c, unsigned int e);
unsigned int get_status(const ctl &c);
void launch(const kern &K, const tpg_gemm_params *p, cudaStream_t st);
void sync_watchdog(const char *what);
double run_and_time_ms(const kern &K, const tpg_gemm_params *p);
void ref_dot_h(const kern &K, const void *A, long long a_bs, const void *B, long long b_bs, int m, int n, int k,
               int l, float coef, float *out, int acc);
void ref_axpy_h(const kern &K, const void *C, long long c_ld, long long c_batch, float beta, float *out, int m,
                int n, int l);
double compare_h(const kern &K, const void *D, long long d_ld, long long d_batch, const float *ref, int m, int n,
                 int l);
void record(const char *name, const kern &K, const char *value, const char *bound, int pass);
void record_metric(const char *name, const kern &K, double metric, unsigned int status, unsigned int want);
void print_results(void);
/* per-case guard on top of the launch watchdog: SIGALRM after `seconds` reports `what` and exits */
void case_guard(const char *what, unsigned int seconds);

/* ---- the one-GPU proxies of the fused schedules (selftest_rs_perf.cu, selftest_ag_perf.cu) ------------ */

/* A per-GPU problem of BENCHMARKS.md at TP = tp. */
struct tp_problem {
    const char *name;
    int m, n, k, tp;
};
/* Whether `name` is in the comma-separated list `only` (NULL: every name); kernel_selftest.cu. */
bool selftest_listed(const char *only, const char *name);
/* Calls in one timed window of a GEMM of `flop`: about 0.25 s, 3 to 30 calls. */
int perf_window_calls(double flop);
/* The same for the few-token tables, whose calls last 10 us - 10 ms: ~50 ms at ~400 TFLOP/s, 30 to 4000 calls. */
int few_window_calls(double flop);
/* A few-token table (--rs-few, --ag-few): every base (global N and K) at each M of ms[nm] and TP of tps[nt], per
 * GPU - N divided by tp where split is 'n' (all-gather), K where 'k' (reduce-scatter) - named like 70B-o-m128 in
 * names (32 bytes each). out and names hold nb * nm * nt entries. */
void few_token_problems(tp_problem *out, char (*names)[32], const tp_problem *bases, int nb, const int *ms, int nm,
                        const int *tps, int nt, char split);

#endif /* TPG_SELFTEST_UTIL_CUH */
