/* cuBLASLt baseline of the local-GEMM benchmark: the same problem as tpgemm, D = A . B^T with
 *   A: M x K row-major (lda = K), B: N x K row-major (ldb = K, "K-major" like a Linear weight),
 *   D: M x N row-major (ldd = N), bf16/fp16 in and out (e4m3 in, bf16 out), fp32 compute and scale, alpha = 1,
 *   beta = 0.
 *
 * Layout derivation. cuBLASLt is column-major: a layout (rows, cols, ld) means element (i, j) sits at
 * i + j*ld. A row-major R x C matrix with ld = C is therefore, byte for byte, the column-major C x R matrix
 * with ld = C, i.e. its transpose. So our buffers, seen by cuBLASLt, are:
 *   buffer A  = col-major A^T   (K x M, ld K)
 *   buffer B  = col-major B^T   (K x N, ld K)
 *   buffer D  = col-major D^T   (N x M, ld N)
 * D = A . B^T  <=>  D^T = (A . B^T)^T = B . A^T.  In cuBLASLt's D = op(X) . op(Y) with m = N, n = M, k = K:
 *   X = buffer B, stored K x N (ld K), transa = T  -> op(X) = (B^T)^T = B     (N x K)
 *   Y = buffer A, stored K x M (ld K), transb = N  -> op(Y) = A^T             (K x M)
 *   D = buffer D, stored N x M (ld N)              -> D^T = B . A^T           (N x M)   as required.
 * This is cuBLAS's "TN" case, both operands K-contiguous: the layout Hopper's fastest kernels (and
 * PyTorch's F.linear) use, so the baseline is not handicapped. Checked on the device against the fp32
 * reference (cublas_ref_error in the JSON), which would catch a swapped operand or transpose.
 *
 * e4m3: "TN" is also the only layout cuBLASLt takes for fp8. The scales stay at their default 1 (tpgemm's
 * benchmark passes none either), and CUBLASLT_MATMUL_DESC_FAST_ACCUM is on: tpgemm's fp8 kernel sums in the
 * tensor pipe's own fp8 accumulation over the whole K, which is what fast accumulation is (without it
 * cuBLASLt moves partial sums into a separate f32 sum every few k steps: more precise, and slower), so
 * both sides compute with the same numerics - PyTorch's torch._scaled_mm(use_fast_accum=True). `local_gemm
 * --precise-fp8` turns it off, the baseline of tpgemm's `fp8_promote` kernels, which move the pipe's sums into f32
 * registers every few k-blocks too. e5m2 x e5m2 is not a cuBLASLt combination, hence no e5m2 baseline. */
#define _POSIX_C_SOURCE 200809L
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define LT_WORKSPACE ((size_t)32 << 20) /* 32 MiB, the brief's; what PyTorch gives cuBLASLt on Hopper */

struct lt_gemm {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulAlgo_t algo;
    const void *a, *b;
    void *d;
    const char *fp8_note; /* "", ", fast accum" or ", f32 promotion (no fast accum)" */
    int trial_n;          /* --lt-algos: the candidates' trial times, the heuristic's order (INFINITY: did not run) */
    double trial_us[LT_MAX_ALGOS];
    char desc[256];
};

static cublasLtHandle_t g_handle;
static void *g_workspace;

#define LT_TRY(what, expr)                                                                           \
    do {                                                                                             \
        cublasStatus_t s_ = (expr);                                                                  \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                           \
            snprintf(msg, cap, "%s: cublas status %d", (what), (int)s_);                             \
            lt_destroy(g);                                                                           \
            return (int)s_ ? (int)s_ : -1;                                                           \
        }                                                                                            \
    } while (0)

/* The problem's descriptors and layouts, no algorithm yet. */
static int lt_new(tpg_dtype dt, int64_t m, int64_t n, int64_t k, const void *a, const void *b, void *d, int precise_fp8,
                  lt_gemm **out, char *msg, size_t cap) {
    *out = NULL;
    if (dt != TPG_DTYPE_BF16 && dt != TPG_DTYPE_FP16 && dt != TPG_DTYPE_E4M3) {
        snprintf(msg, cap, "cuBLASLt baseline: dtype %s not supported here (bf16, fp16, e4m3)", tpg_dtype_name(dt));
        return -1;
    }
    lt_gemm *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(msg, cap, "cuBLASLt baseline: out of host memory");
        return -1;
    }
    if (!g_workspace && cudaMalloc(&g_workspace, LT_WORKSPACE) != cudaSuccess) {
        (void)cudaGetLastError();
        g_workspace = NULL;
        snprintf(msg, cap, "cudaMalloc(cuBLASLt workspace, 32 MiB) failed");
        free(g);
        return -1;
    }
    if (!g_handle) LT_TRY("cublasLtCreate", cublasLtCreate(&g_handle));
    const cudaDataType_t t = dt == TPG_DTYPE_BF16 ? CUDA_R_16BF : dt == TPG_DTYPE_FP16 ? CUDA_R_16F : CUDA_R_8F_E4M3;
    const cudaDataType_t td = dt == TPG_DTYPE_FP16 ? CUDA_R_16F : CUDA_R_16BF; /* D: bf16 for e4m3 */
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    LT_TRY("cublasLtMatmulDescCreate", cublasLtMatmulDescCreate(&g->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT_TRY("set TRANSA", cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT_TRY("set TRANSB", cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (dt == TPG_DTYPE_E4M3) { /* fast accumulation unless precise_fp8: the header says why */
        const int8_t fast = precise_fp8 ? 0 : 1;
        LT_TRY("set FAST_ACCUM", cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
    }
    /* See the derivation above: X = buffer B (K x N, ld K), Y = buffer A (K x M, ld K), D^T (N x M, ld N). */
    LT_TRY("layout of B", cublasLtMatrixLayoutCreate(&g->la, t, (uint64_t)k, (uint64_t)n, k));
    LT_TRY("layout of A", cublasLtMatrixLayoutCreate(&g->lb, t, (uint64_t)k, (uint64_t)m, k));
    LT_TRY("layout of D", cublasLtMatrixLayoutCreate(&g->ld, td, (uint64_t)n, (uint64_t)m, n));
    g->a = a, g->b = b, g->d = d;
    g->fp8_note = dt != TPG_DTYPE_E4M3 ? "" : precise_fp8 ? ", f32 promotion (no fast accum)" : ", fast accum";
    *out = g;
    return 0;
}

/* Up to `want` algorithms, in the heuristic's order (h[0] its top one), for a workspace of LT_WORKSPACE. */
static int lt_heuristics(lt_gemm *g, cublasLtMatmulHeuristicResult_t *h, int want, int *found, char *msg, size_t cap) {
    cublasLtMatmulPreference_t pref = NULL;
    const uint64_t ws = LT_WORKSPACE;
    LT_TRY("cublasLtMatmulPreferenceCreate", cublasLtMatmulPreferenceCreate(&pref));
    cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                                            sizeof ws);
    *found = 0;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulAlgoGetHeuristic(g_handle, g->op, g->la, g->lb, g->ld, g->ld, pref, want, h, found);
    cublasLtMatmulPreferenceDestroy(pref);
    LT_TRY("cublasLtMatmulAlgoGetHeuristic", s);
    int kept = 0; /* the results' other fields hold only where their state is success (cublasLt.h) */
    for (int i = 0; i < *found; i++)
        if (h[i].state == CUBLAS_STATUS_SUCCESS && h[i].workspaceSize <= LT_WORKSPACE) h[kept++] = h[i];
    *found = kept;
    if (*found < 1) LT_TRY("cublasLtMatmulAlgoGetHeuristic found no algorithm", CUBLAS_STATUS_NOT_SUPPORTED);
    return 0;
}

/* "algo 66, tile id 24, stages id 36, cluster id 2, waves 15.52, workspace 4 B" for the record (ids of cublasLt.h's
 * cublasLtMatmulTile_t, cublasLtMatmulStages_t and cublasLtClusterShape_t: whether cuBLAS's pick runs CTA pairs). */
static void algo_text(const cublasLtMatmulHeuristicResult_t *h, char *out, size_t cap) {
    int32_t id = -1;
    uint32_t tile = 0, stages = 0;
    uint16_t cluster = 0; /* 16 bits in cublasLt.h: a 32-bit read is refused (CUBLAS_STATUS_INVALID_VALUE) */
    size_t w;
    cublasLtMatmulAlgoConfigGetAttribute(&h->algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&h->algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&h->algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
    const cublasStatus_t cs = cublasLtMatmulAlgoConfigGetAttribute(&h->algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID,
                                                                   &cluster, sizeof cluster, &w);
    char cl[16] = "?";
    if (cs == CUBLAS_STATUS_SUCCESS) snprintf(cl, sizeof cl, "%u", (unsigned)cluster);
    snprintf(out, cap, "algo %d, tile id %u, stages id %u, cluster id %s, waves %.2f, workspace %zu B", (int)id,
             (unsigned)tile, (unsigned)stages, cl, (double)h->wavesCount, h->workspaceSize);
}

int lt_create(tpg_dtype dt, int64_t m, int64_t n, int64_t k, const void *a, const void *b, void *d, int precise_fp8,
              lt_gemm **out, char *msg, size_t cap) {
    cublasLtMatmulHeuristicResult_t h;
    int found, rc = lt_new(dt, m, n, k, a, b, d, precise_fp8, out, msg, cap);
    if (rc) return rc;
    lt_gemm *g = *out;
    if ((rc = lt_heuristics(g, &h, 1, &found, msg, cap))) return *out = NULL, rc; /* g destroyed by LT_TRY */
    char text[128];
    algo_text(&h, text, sizeof text);
    g->algo = h.algo;
    snprintf(g->desc, sizeof g->desc, "%s, cuBLASLt %zu%s", text, (size_t)cublasLtGetVersion(), g->fp8_note);
    return 0;
}

/* --lt-algos N's trial. Every candidate once a round, a window of `calls` back-to-back calls between two events, the
 * first behind a device-side delay (the host queues the calls meanwhile, so no window holds its launch latency), over
 * LT_TRIAL_ROUNDS rounds, each in its own shuffled order (a fixed seed): neither a candidate's place nor the one run
 * before it is the same every round, where the rotated orders of the first runs (2026-12-06 08:58Z and 09:11Z) always
 * put #0 right after #N-1 and picked another than #0 on every problem that had a choice. us[i] = candidate i's median
 * microseconds a call, fastest[i] its fastest window's; INFINITY where it failed to run. Short windows, so this picks
 * by speed on a card below its power cap - as a tuner run before a job picks (PyTorch's TunableOp times its candidates
 * so too); the benchmark's own windows then time the winner under both regimes. */
#define LT_TRIAL_ROUNDS 9
#define LT_TRIAL_WINDOW_S 5e-3
#define LT_TRIAL_DELAY_US 2000.0

static int cmp_f(const void *x, const void *y) {
    const float a = *(const float *)x, b = *(const float *)y;
    return (a > b) - (a < b);
}

/* `calls` back-to-back calls of g's algorithm between e[0] and e[1]: 0 and their milliseconds, 1 where a call did not
 * launch (the algorithm is out), -1 on a CUDA error (the trial stops). */
static int time_calls(lt_gemm *g, cudaStream_t s, cudaEvent_t *e, int calls, float *ms, cudaError_t *ce) {
    int bad = 0;
    if ((*ce = (cudaError_t)bench_device_delay(s, LT_TRIAL_DELAY_US)) != cudaSuccess) return -1;
    if ((*ce = cudaEventRecord(e[0], s)) != cudaSuccess) return -1;
    for (int c = 0; c < calls && !bad; c++) bad = lt_run(g, s) != 0;
    if ((*ce = cudaEventRecord(e[1], s)) != cudaSuccess || (*ce = cudaEventSynchronize(e[1])) != cudaSuccess) return -1;
    if (bad) return (void)cudaGetLastError(), 1;
    return (*ce = cudaEventElapsedTime(ms, e[0], e[1])) != cudaSuccess ? -1 : 0;
}

static int trial(lt_gemm *g, const cublasLtMatmulHeuristicResult_t *h, int nh, cudaStream_t s, double *us,
                 double *fastest, char *msg, size_t cap) {
    float ms[LT_MAX_ALGOS][LT_TRIAL_ROUNDS], one = 0;
    int order[LT_MAX_ALGOS];
    uint32_t seed = 0x9e3779b9u;
    cudaEvent_t e[2] = {NULL, NULL};
    cudaError_t ce = cudaEventCreate(&e[0]);
    if (ce == cudaSuccess) ce = cudaEventCreate(&e[1]);
    int rc = ce == cudaSuccess ? 0 : -1, calls = 1;
    for (int i = 0; i < nh && rc >= 0; i++) { /* warm-up (two calls each); a candidate that fails to launch is out */
        g->algo = h[i].algo;
        rc = time_calls(g, s, e, 2, &one, &ce);
        us[i] = rc ? INFINITY : 0.0;
    }
    g->algo = h[0].algo; /* a window's length, from one call of the top algorithm */
    if (rc >= 0 && isfinite(us[0]) && (rc = time_calls(g, s, e, 1, &one, &ce)) == 0) {
        calls = (int)ceil(LT_TRIAL_WINDOW_S * 1e3 / (one > 1e-3f ? one : 1e-3f));
        calls = calls < 3 ? 3 : calls > 200 ? 200 : calls;
    }
    if (rc > 0) us[0] = INFINITY;
    for (int w = 0; w < LT_TRIAL_ROUNDS && rc >= 0 && isfinite(us[0]); w++) {
        lt_shuffled(order, nh, &seed);
        for (int j = 0; j < nh && rc >= 0; j++) {
            const int i = order[j];
            if (!isfinite(us[i])) continue;
            g->algo = h[i].algo;
            if ((rc = time_calls(g, s, e, calls, &ms[i][w], &ce)) > 0) us[i] = INFINITY, rc = 0;
        }
    }
    const int top_out = rc >= 0 && !isfinite(us[0]); /* the heuristic's own top one: the benchmark's baseline */
    for (int i = 0; i < nh && rc >= 0 && !top_out; i++) { /* every round ran: each candidate still in has them all */
        fastest[i] = us[i];
        if (!isfinite(us[i])) continue;
        qsort(ms[i], LT_TRIAL_ROUNDS, sizeof ms[i][0], cmp_f);
        us[i] = 1e3 * ms[i][LT_TRIAL_ROUNDS / 2] / calls, fastest[i] = 1e3 * ms[i][0] / calls;
    }
    for (int i = 0; i < 2; i++)
        if (e[i]) cudaEventDestroy(e[i]);
    if (top_out) snprintf(msg, cap, "cuBLASLt trial: the heuristic's top algorithm did not launch");
    else if (rc < 0) snprintf(msg, cap, "cuBLASLt trial: %s: %s", cudaGetErrorName(ce), cudaGetErrorString(ce));
    return rc < 0 || top_out ? -1 : 0;
}

int lt_create_best_of(tpg_dtype dt, int64_t m, int64_t n, int64_t k, const void *a, const void *b, void *d,
                      int precise_fp8, int algos, void *stream, lt_gemm **out, char *msg, size_t cap) {
    cublasLtMatmulHeuristicResult_t h[LT_MAX_ALGOS];
    double us[LT_MAX_ALGOS], fastest[LT_MAX_ALGOS];
    int found, rc = lt_new(dt, m, n, k, a, b, d, precise_fp8, out, msg, cap);
    if (rc) return rc;
    lt_gemm *g = *out;
    algos = algos < 1 ? 1 : algos > LT_MAX_ALGOS ? LT_MAX_ALGOS : algos;
    if ((rc = lt_heuristics(g, h, algos, &found, msg, cap))) return *out = NULL, rc; /* g destroyed by LT_TRY */
    if (trial(g, h, found, (cudaStream_t)stream, us, fastest, msg, cap)) return lt_destroy(g), *out = NULL, -1;
    const int best = lt_trial_winner(us, fastest, found);
    for (int i = 0; i < found; i++) g->trial_us[i] = us[i];
    g->trial_n = found;
    char text[128];
    algo_text(&h[best], text, sizeof text);
    g->algo = h[best].algo;
    snprintf(g->desc, sizeof g->desc,
             "best of %d by a timed trial: #%d (%s), %.1f us vs %.1f us for #0, cuBLASLt %zu%s", found, best, text,
             us[best], us[0], (size_t)cublasLtGetVersion(), g->fp8_note);
    return 0;
}

int lt_run(lt_gemm *g, void *stream) {
    const float alpha = 1.0f, beta = 0.0f;
    /* beta = 0: C is not read; it is given D's pointer and layout as cuBLASLt requires a valid one. */
    return (int)cublasLtMatmul(g_handle, g->op, &alpha, g->b, g->la, g->a, g->lb, &beta, g->d, g->ld, g->d, g->ld,
                               &g->algo, g_workspace, LT_WORKSPACE, (cudaStream_t)stream);
}

const char *lt_describe(const lt_gemm *g) { return g ? g->desc : ""; }

int lt_trial_times(const lt_gemm *g, double *us, int cap) {
    const int n = g ? (g->trial_n < cap ? g->trial_n : cap) : 0;
    for (int i = 0; i < n; i++) us[i] = g->trial_us[i];
    return n;
}

void lt_destroy(lt_gemm *g) {
    if (!g) return;
    if (g->ld) cublasLtMatrixLayoutDestroy(g->ld);
    if (g->lb) cublasLtMatrixLayoutDestroy(g->lb);
    if (g->la) cublasLtMatrixLayoutDestroy(g->la);
    if (g->op) cublasLtMatmulDescDestroy(g->op);
    free(g);
}

void lt_shutdown(void) {
    if (g_handle) cublasLtDestroy(g_handle);
    if (g_workspace) cudaFree(g_workspace);
    g_handle = NULL, g_workspace = NULL;
}
