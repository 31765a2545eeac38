/* Helpers of tests/gpu/kernel_selftest.cu (included by it alone): CUDA checks, random fill, the fp32
 * SIMT reference, comparison, tensor maps and launch parameters, timing with a watchdog, the result
 * table. Kept apart so that the test file reads as its list of cases. */
#ifndef TPG_SELFTEST_HELPERS_CUH
#define TPG_SELFTEST_HELPERS_CUH

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

#endif /* TPG_SELFTEST_HELPERS_CUH */
