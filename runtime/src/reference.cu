// GPU-side check support for the CLI (see reference.h): hash-filled operands, a reference check that
// regenerates A, B and C from the hash (no gather), output poisoning and a device checksum.
#include "reference.h"

#include "checks.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

namespace {

// ---- the hash ----------------------------------------------------------------------------------------

__host__ __device__ inline uint64_t mix64(uint64_t x) { // splitmix64 finalizer
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

__host__ __device__ inline uint64_t batch_key(uint64_t seed, int64_t b) {
    return mix64(seed * 0x9e3779b97f4a7c15ull + (uint64_t)b * 0xd1b54a32d192ed03ull + 0x632be59bd9b4e019ull);
}
__host__ __device__ inline uint64_t row_key(uint64_t bkey, int64_t r) {
    return mix64(bkey ^ ((uint64_t)r * 0x9e3779b97f4a7c15ull));
}
// Uniform in [-1, 1): the top 24 bits, exact in fp32.
__host__ __device__ inline float col_value(uint64_t rkey, int64_t c) {
    uint64_t x = mix64(rkey + (uint64_t)c * 0xc2b2ae3d27d4eb4full + 0x165667b19e3779f9ull);
    return (float)(x >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

// ---- element types -------------------------------------------------------------------------------------

template <int DT> struct elem;
template <> struct elem<TPG_DTYPE_BF16> {
    typedef __nv_bfloat16 T;
    __device__ static T from(float x) { return __float2bfloat16_rn(x); }
    __device__ static float to(T x) { return __bfloat162float(x); }
};
template <> struct elem<TPG_DTYPE_FP16> {
    typedef __half T;
    __device__ static T from(float x) { return __float2half_rn(x); }
    __device__ static float to(T x) { return __half2float(x); }
};
template <> struct elem<TPG_DTYPE_E4M3> {
    typedef __nv_fp8_e4m3 T;
    __device__ static T from(float x) { return T(x); }
    __device__ static float to(T x) { return float(x); }
};
template <> struct elem<TPG_DTYPE_E5M2> {
    typedef __nv_fp8_e5m2 T;
    __device__ static T from(float x) { return T(x); }
    __device__ static float to(T x) { return float(x); }
};
template <> struct elem<TPG_DTYPE_FP32> {
    typedef float T;
    __device__ static T from(float x) { return x; }
    __device__ static float to(T x) { return x; }
};

template <int DT> __device__ inline float round_to(float x) { return elem<DT>::to(elem<DT>::from(x)); }

// ---- fill ------------------------------------------------------------------------------------------------

template <int DT>
__global__ void fill_kernel(typename elem<DT>::T *p, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                            int64_t batch_stride, int64_t row0, int64_t col0, uint64_t seed) {
    for (int64_t R = blockIdx.x; R < rows * batch; R += gridDim.x) {
        int64_t b = R / rows, r = R % rows;
        uint64_t rk = row_key(batch_key(seed, b), row0 + r);
        typename elem<DT>::T *row = p + b * batch_stride + r * ld;
        for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) row[c] = elem<DT>::from(col_value(rk, col0 + c));
    }
}

template <int DT>
cudaError_t launch_fill(void *ptr, int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t bstride,
                        int64_t row0, int64_t col0, uint64_t seed, cudaStream_t s) {
    int64_t total_rows = rows * batch;
    unsigned grid = (unsigned)(total_rows < 65536 * 8 ? total_rows : 65536 * 8);
    fill_kernel<DT><<<grid, 256, 0, s>>>((typename elem<DT>::T *)ptr, rows, cols, ld, batch, bstride, row0, col0,
                                         seed);
    return cudaGetLastError();
}

// ---- reference check ---------------------------------------------------------------------------------

struct accum {
    double sumsq;                 // sum of ref^2 (pass 0)
    unsigned long long nonfinite; // pass 1
    unsigned int max_bits;        // pass 1: max metric as float bits (non-negative floats order as uints)
};

struct ref_args {
    const void *d;
    int64_t ld, batch_stride, row0, col0;
    int64_t k;
    float alpha, beta;
    uint64_t key_a, key_b, key_c; // seeds
    const int *ri;                // local row indices, nr
    const int *ci;                // local col indices, nc
    int nr, nc;
    double count;                 // elements in the whole check (for the RMS), pass 1
    int64_t yblock0, batch0;      // first row block / batch of this launch (grids stop at 65535 in y, z)
};

constexpr int TM = 64, TN = 64, TK = 16;

// One 64x64 block of (ri x ci) outputs of batch batch0 + blockIdx.z; 256 threads, 4x4 outputs each.
// pass 0: accumulate sum of ref^2; pass 1: compare with D.
template <int AB, int CD>
__global__ void __launch_bounds__(256) ref_kernel(ref_args a, accum *acc, int pass) {
    __shared__ float As[TK][TM + 1];
    __shared__ float Bs[TK][TN + 1];
    __shared__ double red_d[256];
    __shared__ float red_f[256];
    __shared__ unsigned long long red_u[256];

    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int i0 = (int)((blockIdx.y + a.yblock0) * TM), j0 = blockIdx.x * TN;
    const int64_t b = blockIdx.z + a.batch0;
    const uint64_t bka = batch_key(a.key_a, b), bkb = batch_key(a.key_b, b);

    // Loader: thread loads row lr (0..63) and k offsets lk..lk+3 of both tiles.
    const int lr = tid / 4, lk = (tid % 4) * 4;
    const int ia = i0 + lr, jb = j0 + lr;
    const bool va = ia < a.nr, vb = jb < a.nc;
    const uint64_t rka = va ? row_key(bka, a.row0 + a.ri[ia]) : 0;
    const uint64_t rkb = vb ? row_key(bkb, a.col0 + a.ci[jb]) : 0;

    float c[4][4] = {};
    for (int64_t k0 = 0; k0 < a.k; k0 += TK) {
#pragma unroll
        for (int q = 0; q < 4; q++) {
            int64_t kk = k0 + lk + q;
            As[lk + q][lr] = (va && kk < a.k) ? round_to<AB>(col_value(rka, kk)) : 0.0f;
            Bs[lk + q][lr] = (vb && kk < a.k) ? round_to<AB>(col_value(rkb, kk)) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TK; kk++) {
            float av[4], bv[4];
#pragma unroll
            for (int x = 0; x < 4; x++) {
                av[x] = As[kk][ty + 16 * x];
                bv[x] = Bs[kk][tx + 16 * x];
            }
#pragma unroll
            for (int x = 0; x < 4; x++)
#pragma unroll
                for (int y = 0; y < 4; y++) c[x][y] = fmaf(av[x], bv[y], c[x][y]);
        }
        __syncthreads();
    }

    const uint64_t bkc = batch_key(a.key_c, b);
    double sumsq = 0.0;
    float maxm = 0.0f;
    unsigned long long nonfinite = 0;
    float rms = 0.0f;
    if (pass == 1) rms = (float)sqrt(acc->sumsq / (a.count > 0 ? a.count : 1.0));
#pragma unroll
    for (int x = 0; x < 4; x++) {
        int i = i0 + ty + 16 * x;
        if (i >= a.nr) continue;
        int64_t r = a.ri[i];
        uint64_t rkc = a.beta != 0.0f ? row_key(bkc, a.row0 + r) : 0;
#pragma unroll
        for (int y = 0; y < 4; y++) {
            int j = j0 + tx + 16 * y;
            if (j >= a.nc) continue;
            int64_t col = a.ci[j];
            float ref = a.alpha * c[x][y];
            if (a.beta != 0.0f) ref += a.beta * round_to<CD>(col_value(rkc, a.col0 + col));
            if (pass == 0) {
                sumsq += (double)ref * (double)ref;
            } else {
                const typename elem<CD>::T *d = (const typename elem<CD>::T *)a.d;
                float v = elem<CD>::to(d[b * a.batch_stride + r * a.ld + col]);
                if (!isfinite(v)) {
                    nonfinite++;
                } else {
                    float den = fmaxf(fmaxf(fabsf(ref), rms), 1e-30f);
                    float m = fabsf(v - ref) / den;
                    if (!(m <= maxm)) maxm = isfinite(m) ? m : 3.0e38f;
                }
            }
        }
    }
    // Block reductions.
    if (pass == 0) {
        red_d[tid] = sumsq;
        __syncthreads();
        for (int s = 128; s > 0; s >>= 1) {
            if (tid < s) red_d[tid] += red_d[tid + s];
            __syncthreads();
        }
        if (tid == 0) atomicAdd(&acc->sumsq, red_d[0]);
    } else {
        red_f[tid] = maxm;
        red_u[tid] = nonfinite;
        __syncthreads();
        for (int s = 128; s > 0; s >>= 1) {
            if (tid < s) {
                red_f[tid] = fmaxf(red_f[tid], red_f[tid + s]);
                red_u[tid] += red_u[tid + s];
            }
            __syncthreads();
        }
        if (tid == 0) {
            atomicMax(&acc->max_bits, __float_as_uint(red_f[0]));
            if (red_u[0]) atomicAdd(&acc->nonfinite, red_u[0]);
        }
    }
}

// Grid y (row blocks) and z (batches) stop at 65535: large shards or many batches take several launches.
template <int AB, int CD> cudaError_t launch_ref(const ref_args &a, int64_t l, accum *acc, int pass, cudaStream_t s) {
    if (a.nr == 0 || a.nc == 0) return cudaSuccess;
    const int64_t yblocks = (a.nr + TM - 1) / TM, kMaxYZ = 65535;
    for (int64_t b0 = 0; b0 < l; b0 += kMaxYZ)
        for (int64_t y0 = 0; y0 < yblocks; y0 += kMaxYZ) {
            ref_args part = a;
            part.batch0 = b0, part.yblock0 = y0;
            dim3 grid((unsigned)((a.nc + TN - 1) / TN), (unsigned)(yblocks - y0 < kMaxYZ ? yblocks - y0 : kMaxYZ),
                      (unsigned)(l - b0 < kMaxYZ ? l - b0 : kMaxYZ));
            ref_kernel<AB, CD><<<grid, 256, 0, s>>>(part, acc, pass);
            cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) return e;
        }
    return cudaSuccess;
}

template <int AB>
cudaError_t dispatch_cd(tpg_dtype cd, const ref_args &a, int64_t l, accum *acc, int pass, cudaStream_t s) {
    switch (cd) {
    case TPG_DTYPE_BF16: return launch_ref<AB, TPG_DTYPE_BF16>(a, l, acc, pass, s);
    case TPG_DTYPE_FP16: return launch_ref<AB, TPG_DTYPE_FP16>(a, l, acc, pass, s);
    case TPG_DTYPE_FP32: return launch_ref<AB, TPG_DTYPE_FP32>(a, l, acc, pass, s);
    default: return cudaErrorInvalidValue;
    }
}

cudaError_t dispatch_ref(tpg_dtype ab, tpg_dtype cd, const ref_args &a, int64_t l, accum *acc, int pass,
                         cudaStream_t s) {
    switch (ab) {
    case TPG_DTYPE_BF16: return dispatch_cd<TPG_DTYPE_BF16>(cd, a, l, acc, pass, s);
    case TPG_DTYPE_FP16: return dispatch_cd<TPG_DTYPE_FP16>(cd, a, l, acc, pass, s);
    case TPG_DTYPE_E4M3: return dispatch_cd<TPG_DTYPE_E4M3>(cd, a, l, acc, pass, s);
    case TPG_DTYPE_E5M2: return dispatch_cd<TPG_DTYPE_E5M2>(cd, a, l, acc, pass, s);
    case TPG_DTYPE_FP32: return dispatch_cd<TPG_DTYPE_FP32>(cd, a, l, acc, pass, s);
    default: return cudaErrorInvalidValue;
    }
}

// One index per band of `band` elements of [0, n), chosen by the hash; returns the count written.
int64_t band_samples(int64_t n, int64_t band, uint64_t seed, int *out) {
    int64_t i = 0;
    for (int64_t b0 = 0; b0 < n; b0 += band, i++) {
        int64_t w = n - b0 < band ? n - b0 : band;
        out[i] = (int)(b0 + (int64_t)(mix64(seed ^ mix64((uint64_t)i + 0x1234567ull)) % (uint64_t)w));
    }
    return i;
}

// ---- checksum ------------------------------------------------------------------------------------------

__global__ void checksum_kernel(const uint64_t *w, size_t words, const unsigned char *tail, size_t tail_bytes,
                                unsigned long long *out) {
    __shared__ unsigned long long red[256];
    unsigned long long s = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x)
        s += mix64(w[i] ^ ((uint64_t)i * 0x9e3779b97f4a7c15ull));
    if (blockIdx.x == 0 && threadIdx.x == 0 && tail_bytes) {
        uint64_t t = 0;
        for (size_t j = 0; j < tail_bytes; j++) t |= (uint64_t)tail[j] << (8 * j);
        s += mix64(t ^ ((uint64_t)words * 0x9e3779b97f4a7c15ull) ^ 0xabcdefull);
    }
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, red[0]);
}

} // namespace

extern "C" {

const char *tpg_reference_last_error(void) { return tpg_last_error(NULL); }

float tpg_ref_value(uint64_t seed, int64_t batch, int64_t row, int64_t col) {
    return col_value(row_key(batch_key(seed, batch), row), col);
}

/* The bound of one GEMM's numerics (tpg_reference_eps_for without partials). */
static double eps_one_gemm(tpg_dtype ab, tpg_dtype acc, int64_t k, int fp8_promote) {
    const double e = tpg_reference_default_eps(ab), rk = sqrt(k > 0 ? (double)k : 0.0);
    /* fp8: the tensor pipe sums fp8 products in a narrower-than-f32 accumulator (what cuBLASLt calls fast
     * accumulation; tpgemm's kernels sum that way over the whole K), so the error grows like sqrt(K).
     * Measured on H200 (2026-12-01 16:40Z, this metric): tpgemm e4m3 1.0e-2 at K = 4096, 3.3e-2 at K = 16384
     * (e5m2 0.9e-2, 1.7e-2); cuBLASLt e4m3 with fast accumulation 2.1e-2 at K = 8192, 2.5e-2 at 14336, 3.8e-2
     * at 26624: at most ~2.5e-4 sqrt(K); the bound is twice that, never below bf16's 2e-2. */
    if (ab == TPG_DTYPE_E4M3 || ab == TPG_DTYPE_E5M2) return fp8_promote ? e : fmax(e, 5e-4 * rk);
    /* f16 running sums: each addition rounds at the sum's own magnitude, so the error grows like sqrt(K).
     * Measured on H200 (2026-12-01, this check's metric): 3.5e-2 at K = 8192 (8192^3, fp16_128x256x64_a16),
     * 3.5e-3 or less at K <= 2048 (self-test); the bound is about twice that curve, and never below 2e-2. */
    if (acc != TPG_DTYPE_FP16) return e;
    return fmax(e, fmax(2e-2, 8e-4 * rk));
}

double tpg_reference_eps_for(tpg_dtype ab, tpg_dtype acc, int64_t k, int fp8_promote, int partials) {
    /* A reduce-scatter sums tp partial products through tp - 1 partials rounded to the output type on the way
     * (the stage tiles' pushes), as a ring reduce-scatter in that type does (NCCL's too); a partial of s + 1
     * shards can be larger than the final value, so its rounding counts at its own magnitude. Measured on
     * one H200 with every rank on it (tier 2 --share-device, 2026-12-01 18:00Z, this metric, max over the
     * anchor shapes): bf16 1.2e-2 / 1.9e-2 / 3.0e-2 at TP = 2 / 4 / 8 against all-gather's 4.0e-3 at each TP;
     * fp16 1.4e-3 / 2.6e-3 / 3.9e-3 against 6.0e-4. Each rounding adds up to the output type's own bound, in
     * quadrature with the GEMM's: sqrt(e^2 + partials * r^2), i.e. sqrt(tp) * e for 16-bit operands - at least
     * 1.8 times the largest error measured at every TP - and no more than the rounding's share for fp8, whose
     * sums' error (5e-4 sqrt(K)) does not repeat per partial. */
    const tpg_dtype out = ab == TPG_DTYPE_E4M3 || ab == TPG_DTYPE_E5M2 ? TPG_DTYPE_BF16 : ab;
    const double e = eps_one_gemm(ab, acc, k, fp8_promote), r = tpg_reference_default_eps(out);
    return sqrt(e * e + (partials > 0 ? (double)partials : 0.0) * r * r);
}

double tpg_reference_default_eps(tpg_dtype dtype) {
    switch (dtype) {
    case TPG_DTYPE_BF16: return 2e-2;
    case TPG_DTYPE_FP16: return 4e-3;
    /* fp8 operands are exact in the fp32 reference (it rounds its inputs the same way): what differs is the
     * bf16 rounding of the output and the tensor pipe's fp8 accumulation, hence bf16's bound */
    case TPG_DTYPE_E4M3:
    case TPG_DTYPE_E5M2: return 2e-2;
    default: return 1e-5;
    }
}

tpg_status tpg_fill(tpg_dtype dtype, void *ptr, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                    int64_t batch_stride, int64_t row0, int64_t col0, uint64_t seed, void *stream) {
    if (!ptr || rows < 0 || cols < 0 || ld < cols || batch < 1 || row0 < 0 || col0 < 0 ||
        (batch > 1 && batch_stride < rows * ld)) {
        tpg__set_error(NULL, "tpg_fill: invalid argument (rows %lld, cols %lld, ld %lld, batch %lld)",
                 (long long)rows, (long long)cols, (long long)ld, (long long)batch);
        return TPG_ERR_INVALID_ARGUMENT;
    }
    if (rows == 0 || cols == 0) return TPG_OK;
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t e;
    switch (dtype) {
    case TPG_DTYPE_BF16: e = launch_fill<TPG_DTYPE_BF16>(ptr, rows, cols, ld, batch, batch_stride, row0, col0, seed, s); break;
    case TPG_DTYPE_FP16: e = launch_fill<TPG_DTYPE_FP16>(ptr, rows, cols, ld, batch, batch_stride, row0, col0, seed, s); break;
    case TPG_DTYPE_E4M3: e = launch_fill<TPG_DTYPE_E4M3>(ptr, rows, cols, ld, batch, batch_stride, row0, col0, seed, s); break;
    case TPG_DTYPE_E5M2: e = launch_fill<TPG_DTYPE_E5M2>(ptr, rows, cols, ld, batch, batch_stride, row0, col0, seed, s); break;
    case TPG_DTYPE_FP32: e = launch_fill<TPG_DTYPE_FP32>(ptr, rows, cols, ld, batch, batch_stride, row0, col0, seed, s); break;
    default: tpg__set_error(NULL, "tpg_fill: unknown dtype %d", (int)dtype); return TPG_ERR_INVALID_ARGUMENT;
    }
    TPG_CHECK_CUDA(NULL, e);
    return TPG_OK;
}

tpg_status tpg_reference_check(const tpg_ref_problem *p, const tpg_ref_shard *sh, uint64_t sample_seed,
                               void *stream, tpg_ref_result *out) {
    if (!p || !sh || !out || !sh->d || sh->rows < 1 || sh->cols < 1 || sh->ld < sh->cols || p->k < 1 ||
        p->l < 1 || sh->rows > 0x7fffffff || sh->cols > 0x7fffffff) {
        tpg__set_error(NULL, "tpg_reference_check: invalid argument");
        return TPG_ERR_INVALID_ARGUMENT;
    }
    memset(out, 0, sizeof *out);
    cudaStream_t s = (cudaStream_t)stream;
    const int64_t rows = sh->rows, cols = sh->cols;
    const bool full = (double)rows * (double)cols * (double)p->k <= (double)TPG_REF_FULL_LIMIT;

    // Index lists on the host: [all rows | all cols | sampled rows | sampled cols].
    // Row bands of 32: any 64 consecutive rows (the smallest tile of any legal config, wherever a stage
    // block starts) hold a whole band, so every output tile gets at least one full row checked.
    const int64_t row_band = 32, col_band = 256;
    const int64_t max_rs = (rows + row_band - 1) / row_band, max_cs = (cols + col_band - 1) / col_band;
    const size_t nidx = (size_t)(rows + cols + max_rs + max_cs);
    int *idx = (int *)malloc(nidx * sizeof(int));
    if (!idx) {
        tpg__set_error(NULL, "tpg_reference_check: out of host memory for %zu indices", nidx);
        return TPG_ERR_OUT_OF_MEMORY;
    }
    for (int64_t i = 0; i < rows; i++) idx[i] = (int)i;
    for (int64_t j = 0; j < cols; j++) idx[rows + j] = (int)j;
    int64_t nrs = 0, ncs = 0;
    if (!full) {
        nrs = band_samples(rows, row_band, mix64(sample_seed ^ 0x51ull), idx + rows + cols);
        ncs = band_samples(cols, col_band, mix64(sample_seed ^ 0xc5ull), idx + rows + cols + nrs);
    }

    tpg_status st = TPG_OK;
    int *didx = nullptr;
    accum *dacc = nullptr;
    accum hacc;
    ref_args a[2];
    int nlaunch = 0;
    double count = 0.0;

    TPG_CHECK_CUDA_GOTO(NULL, cudaMalloc((void **)&didx, nidx * sizeof(int)), done);
    TPG_CHECK_CUDA_GOTO(NULL, cudaMalloc((void **)&dacc, sizeof(accum)), done);
    TPG_CHECK_CUDA_GOTO(NULL, cudaMemcpyAsync(didx, idx, nidx * sizeof(int), cudaMemcpyHostToDevice, s), done);
    TPG_CHECK_CUDA_GOTO(NULL, cudaMemsetAsync(dacc, 0, sizeof(accum), s), done);

    {
        ref_args base;
        memset(&base, 0, sizeof base);
        base.d = sh->d;
        base.ld = sh->ld;
        base.batch_stride = sh->batch_stride;
        base.row0 = sh->row0;
        base.col0 = sh->col0;
        base.k = p->k;
        base.alpha = p->alpha;
        base.beta = p->beta;
        base.key_a = p->seed;
        base.key_b = p->seed + 1;
        base.key_c = p->seed + 2;
        const int *all_r = didx, *all_c = didx + rows, *smp_r = didx + rows + cols,
                  *smp_c = didx + rows + cols + nrs;
        if (full) {
            a[0] = base;
            a[0].ri = all_r, a[0].nr = (int)rows, a[0].ci = all_c, a[0].nc = (int)cols;
            nlaunch = 1;
            count = (double)rows * cols * p->l;
            out->checked = rows * cols * p->l;
        } else {
            a[0] = base; // sampled rows x all columns
            a[0].ri = smp_r, a[0].nr = (int)nrs, a[0].ci = all_c, a[0].nc = (int)cols;
            a[1] = base; // all rows x sampled columns
            a[1].ri = all_r, a[1].nr = (int)rows, a[1].ci = smp_c, a[1].nc = (int)ncs;
            nlaunch = 2;
            count = ((double)nrs * cols + (double)rows * ncs) * p->l;
            out->checked = (nrs * cols + rows * ncs) * p->l; /* the nrs x ncs crossings count twice */
        }
        for (int i = 0; i < nlaunch; i++) a[i].count = count;
    }
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < nlaunch; i++)
            TPG_CHECK_CUDA_GOTO(NULL, dispatch_ref(p->dtype_ab, p->dtype_cd, a[i], p->l, dacc, pass, s), done);
    TPG_CHECK_CUDA_GOTO(NULL, cudaMemcpyAsync(&hacc, dacc, sizeof hacc, cudaMemcpyDeviceToHost, s), done);
    TPG_CHECK_CUDA_GOTO(NULL, cudaStreamSynchronize(s), done);

    {
        float maxm;
        memcpy(&maxm, &hacc.max_bits, sizeof maxm);
        out->max_error = hacc.nonfinite ? INFINITY : (double)maxm;
        out->rms_ref = sqrt(hacc.sumsq / (count > 0 ? count : 1.0));
        out->nonfinite = (int64_t)hacc.nonfinite;
        out->full = full ? 1 : 0;
    }
done:
    free(idx);
    if (didx) cudaFree(didx);
    if (dacc) cudaFree(dacc);
    return st;
}

tpg_status tpg_poison(void *ptr, size_t bytes, void *stream) {
    if (!ptr) {
        tpg__set_error(NULL, "tpg_poison: NULL pointer");
        return TPG_ERR_INVALID_ARGUMENT;
    }
    TPG_CHECK_CUDA(NULL, cudaMemsetAsync(ptr, 0xFF, bytes, (cudaStream_t)stream));
    return TPG_OK;
}

tpg_status tpg_checksum(const void *ptr, size_t bytes, void *stream, uint64_t *out) {
    if (!ptr || !out) {
        tpg__set_error(NULL, "tpg_checksum: NULL pointer");
        return TPG_ERR_INVALID_ARGUMENT;
    }
    cudaStream_t s = (cudaStream_t)stream;
    unsigned long long *dsum = nullptr, h = 0;
    tpg_status st = TPG_OK;
    size_t words = bytes / 8;
    TPG_CHECK_CUDA_GOTO(NULL, cudaMalloc((void **)&dsum, sizeof *dsum), done);
    TPG_CHECK_CUDA_GOTO(NULL, cudaMemsetAsync(dsum, 0, sizeof *dsum, s), done);
    {
        size_t blocks = (words + 255) / 256;
        unsigned grid = (unsigned)(blocks < 1 ? 1 : (blocks > 4096 ? 4096 : blocks));
        checksum_kernel<<<grid, 256, 0, s>>>((const uint64_t *)ptr, words, (const unsigned char *)ptr + words * 8,
                                              bytes - words * 8, dsum);
    }
    TPG_CHECK_CUDA_GOTO(NULL, cudaGetLastError(), done);
    TPG_CHECK_CUDA_GOTO(NULL, cudaMemcpyAsync(&h, dsum, sizeof h, cudaMemcpyDeviceToHost, s), done);
    TPG_CHECK_CUDA_GOTO(NULL, cudaStreamSynchronize(s), done);
    *out = (uint64_t)h;
done:
    if (dsum) cudaFree(dsum);
    return st;
}

} // extern "C"
