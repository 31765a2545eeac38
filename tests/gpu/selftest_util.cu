/* Host helpers of the GPU self-test (declared in selftest_util.cuh). */
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "selftest_util.cuh"
#include "raster.h"

PFN_cuTensorMapEncodeTiled_v12000 g_encode;
int g_num_sms;
int g_failures;

void kern_init(kern *K, const char *name, const void *fn, const tpg_selftest_shape &s, double bound)
{
    K->name = name;
    K->fn = fn;
    K->s = s;
    K->bound = bound;
    CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, s.smem_bytes));
    const int cluster = s.cluster_m * s.cluster_n;
    K->grid = g_num_sms / cluster * cluster;
    if (cluster > 1) {
        /* the persistent walk needs every cluster resident (per-tile waits): cap at what fits at once */
        cudaLaunchAttribute attr;
        memset(&attr, 0, sizeof attr);
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = (unsigned)cluster;
        attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
        cudaLaunchConfig_t cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDim = dim3(K->grid);
        cfg.blockDim = dim3(s.threads);
        cfg.dynamicSmemBytes = s.smem_bytes;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        int fit = 0;
        CK(cudaOccupancyMaxActiveClusters(&fit, fn, &cfg));
        if (fit * cluster < K->grid) K->grid = fit * cluster;
        printf("%s: cluster %dx%d, %d clusters fit, grid %d\n", name, s.cluster_m, s.cluster_n, fit, K->grid);
        if (fit < 1) {
            fprintf(stderr, "%s: no cluster fits\n", name);
            exit(2);
        }
    }
}

void *dalloc(size_t bytes)
{
    void *p;
    CK(cudaMalloc(&p, bytes));
    return p;
}

size_t ab_bytes(const kern &K) { return K.s.dtype >= 2 ? 1 : 2; }
size_t partial_bytes(const kern &K) { return K.s.partial_f32 ? 4 : 2; }

int legal_k(const kern &K, int k)
{
    const int step = 16 / (int)ab_bytes(K);
    return (k + step - 1) / step * step;
}

void rand_fill(const kern &K, void *p, size_t n, unsigned int seed)
{
    switch (K.s.dtype) {
    case 0: fill_rand<<<1024, 256>>>((__nv_bfloat16 *)p, n, seed); break;
    case 1: fill_rand<<<1024, 256>>>((__half *)p, n, seed); break;
    case 2: fill_rand<<<1024, 256>>>((__nv_fp8_e4m3 *)p, n, seed); break;
    default: fill_rand<<<1024, 256>>>((__nv_fp8_e5m2 *)p, n, seed); break;
    }
    CK(cudaGetLastError());
}

void rand_fill_out(const kern &K, void *p, size_t n, unsigned int seed)
{
    if (K.s.dtype == 1) fill_rand<<<1024, 256>>>((__half *)p, n, seed);
    else fill_rand<<<1024, 256>>>((__nv_bfloat16 *)p, n, seed);
    CK(cudaGetLastError());
}

/* operands: bf16 / fp16, or raw bytes for fp8 (runtime/src/tensormap.c) */
static CUtensorMapDataType map_type(const kern &K)
{
    return K.s.dtype == 0 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
           : K.s.dtype == 1 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

/* outputs, partials and C: fp16 for fp16 operands, else bf16 */
static CUtensorMapDataType out_map_type(const kern &K)
{
    return K.s.dtype == 1 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
}

/* K-major operand map: {k, rows}, box {bk, box_rows} swizzled over its row (128B for 128-byte rows, 64B for
 * 64-byte ones, as runtime/src/tensormap.c); OOB reads are zero-filled. */
static void make_map(CUtensorMap *map, const kern &K, const void *base, unsigned long long rows, unsigned long long k,
                     unsigned int box_rows)
{
    cuuint64_t dims[2] = {k, rows};
    cuuint64_t strides[1] = {k * ab_bytes(K)};
    cuuint32_t box[2] = {(cuuint32_t)K.s.bk, box_rows};
    cuuint32_t estr[2] = {1, 1};
    const CUtensorMapSwizzle swizzle =
        K.s.bk * ab_bytes(K) == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
    CUresult r = g_encode(map, map_type(K), 2, (void *)base, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                          swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "cuTensorMapEncodeTiled failed (%d) rows=%llu k=%llu box=%u\n", (int)r, rows, k, box_rows);
        exit(2);
    }
}

void map_a(CUtensorMap *map, const kern &K, const void *base, unsigned long long rows, unsigned long long k)
{
    make_map(map, K, base, rows, k, K.s.bm / K.s.cluster_n);
}

void map_b(CUtensorMap *map, const kern &K, const void *base, unsigned long long rows, unsigned long long k)
{
    make_map(map, K, base, rows, k, K.s.bn / K.s.cluster_m);
}

/* Destination map as runtime/src/tensormap.c builds it: 3-D {n, m, l}, row stride ld, batch stride batch
 * (elements), 128B swizzle, box {64, 64, 1}; the extent clips ragged tiles. */
static void make_dmap(CUtensorMap *map, const kern &K, void *base, int n, int m, int l, long long ld, long long batch,
                      bool partial = false)
{
    if (l <= 1) batch = ld * m;
    /* a partial of a `partials: f32` kernel is fp32: the chunk keeps its bytes, the box half the columns */
    const bool f32 = partial && K.s.partial_f32;
    const int esize = f32 ? 4 : 2;
    cuuint64_t dims[3] = {(cuuint64_t)n, (cuuint64_t)m, (cuuint64_t)l};
    cuuint64_t strides[2] = {(cuuint64_t)ld * esize, (cuuint64_t)batch * esize};
    /* as runtime/src/tensormap.c: box = one epilogue store unit, swizzle matching its row bytes */
    const int chunk = K.s.epi_chunk_bytes;
    cuuint32_t box[3] = {(cuuint32_t)(chunk / esize), 64, 1};
    cuuint32_t estr[3] = {1, 1, 1};
    CUresult r = g_encode(map, f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : out_map_type(K), 3, base, dims, strides, box,
                          estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                          chunk == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B,
                          CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "cuTensorMapEncodeTiled (D) failed (%d) n=%d m=%d l=%d ld=%lld\n", (int)r, n, m, l, ld);
        exit(2);
    }
}

/* Fills stage s's destination (pointer, strides and the TMA-store map) for extent m x n x l; partial: it is a
 * partial for the next stage (fp32 for `partials: f32` kernels). */
void set_dest(tpg_gemm_params *p, int s, const kern &K, void *d, long long ld, long long batch, bool partial)
{
    p->stage[s].d = d;
    p->stage[s].d_ld = ld;
    p->stage[s].d_batch = batch;
    make_dmap(&p->stage[s].d_map, K, d, p->n, p->m, p->l, ld, batch, partial);
}

/* Stage s reads partial x (ld, batch in elements) after flags[t]: pointer, strides, flags and the TMA-load
 * map that tma_partials kernels use (encoded as runtime/src/params.c does: like the D map). */
void set_partial(tpg_gemm_params *p, int s, const kern &K, const void *x, long long ld, long long batch,
                 const unsigned int *flags)
{
    p->stage[s].partial = x;
    p->stage[s].partial_ld = ld;
    p->stage[s].partial_batch = batch;
    p->stage[s].partial_flags = flags;
    make_dmap(&p->stage[s].partial_map, K, const_cast<void *>(x), p->n, p->m, p->l, ld, batch, true);
}

/* A local reduce-scatter ring of S stages of m x n x k (l batches; tiles = flags per stage, batches
 * included): stage s multiplies rows block s of A (S*m x k per batch) and B (S*n x k per batch); stage s < S-1 writes X + s*m*n (standing in for the next peer's slot) and raises F[s*tiles + t];
 * stage s > 0 waits on F[(s-1)*tiles + t] and adds X + (s-1)*m*n; stage S-1 writes D. With S = 2 that is
 * a TP = 2 reduce-scatter's walk; S = 3 has a middle stage that both receives and sends (TP >= 3). */
void ring_params(tpg_gemm_params *p, const ctl &c, const kern &K, void *A, void *B, void *X, void *D, unsigned int *F,
                 int m, int n, int k, int S, int tiles, int l)
{
    base_params(p, c, m, n, k, l, S);
    const long long mn = (long long)m * n, slot = mn * l; /* X: one slot of l batches per sending stage */
    for (int s = 0; s < S; ++s) {
        tpg_stage_params *sp = &p->stage[s];
        map_a(&sp->a_map, K, A, (unsigned long long)l * S * m, k);
        map_b(&sp->b_map, K, B, (unsigned long long)l * S * n, k);
        sp->a_row0 = s * m;
        sp->b_row0 = s * n;
        sp->a_batch_rows = S * m;
        sp->b_batch_rows = S * n;
        set_dest(p, s, K, s == S - 1 ? D : (char *)X + partial_bytes(K) * s * slot, n, mn, s < S - 1);
        if (s < S - 1) sp->signal_flags = F + (size_t)s * tiles;
        if (s > 0)
            set_partial(p, s, K, (char *)X + partial_bytes(K) * (s - 1) * slot, n, mn, F + (size_t)(s - 1) * tiles);
    }
}

void base_params(tpg_gemm_params *p, const ctl &c, int m, int n, int k, int l, int stages)
{
    memset(p, 0, sizeof(*p));
    p->num_stages = stages;
    p->m = m; p->n = n; p->k = k; p->l = l;
    p->alpha = 1.f; p->beta = 0.f;
    p->epoch = c.epoch;
    p->status = c.status;
    p->gave_up_epoch = c.gave_up;
    p->timeout_ns = 2000000000ull; /* 2 s: a bug must not hang the test */
}

void set_epoch(const ctl &c, unsigned int e)
{
    CK(cudaMemcpy(c.epoch, &e, 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(c.status, 0, 4));
    CK(cudaMemset(c.gave_up, 0, 4));
}

unsigned int get_status(const ctl &c)
{
    unsigned int s;
    CK(cudaMemcpy(&s, c.status, 4, cudaMemcpyDeviceToHost));
    return s;
}

/* The graph's launch (runtime/src/graph.c): persistent grid, clusters 1-D along x. */
/* raster: hilbert instances read the walk order from p.tile_order (runtime/src/tile_order.c does this
 * for real ops): built here once per (m, n, tile, cluster) with the runtime's raster.c and kept. */
static const int *hilbert_order(const kern &K, int m, int n)
{
    struct entry { int m, n, bm, bn, cm, cn; int *order; };
    enum { CACHED = 256 }; /* shapes of one run: cases, perf, --rs-few and --ag-few all together need ~160 */
    static entry cache[CACHED];
    static int used = 0;
    for (int i = 0; i < used; ++i)
        if (cache[i].m == m && cache[i].n == n && cache[i].bm == K.s.bm && cache[i].bn == K.s.bn &&
            cache[i].cm == K.s.cluster_m && cache[i].cn == K.s.cluster_n)
            return cache[i].order;
    const int um = ((m + K.s.bm - 1) / K.s.bm + K.s.cluster_m - 1) / K.s.cluster_m;
    const int un = ((n + K.s.bn - 1) / K.s.bn + K.s.cluster_n - 1) / K.s.cluster_n;
    int32_t *host = (int32_t *)malloc(sizeof(int32_t) * (size_t)um * un);
    if (!host || used == CACHED || tpg_raster_hilbert(um, un, host) != (int64_t)um * un) {
        fprintf(stderr, "hilbert order for %d x %d units failed (%s)\n", um, un,
                used == CACHED ? "more shapes in one run than the cache holds: raise CACHED"
                               : "no memory, or the raster's count");
        exit(2);
    }
    int *dev = (int *)dalloc(sizeof(int32_t) * (size_t)um * un);
    CK(cudaMemcpy(dev, host, sizeof(int32_t) * (size_t)um * un, cudaMemcpyHostToDevice));
    free(host);
    cache[used++] = {m, n, K.s.bm, K.s.bn, K.s.cluster_m, K.s.cluster_n, dev};
    return dev;
}

void launch(const kern &K, const tpg_gemm_params *p, cudaStream_t st)
{
    tpg_gemm_params with_order;
    if (K.s.raster) { /* the caller's params are shared by its cases: set the table on a copy */
        with_order = *p;
        with_order.tile_order = hilbert_order(K, p->m, p->n);
        p = &with_order;
    }
    void *args[1] = {(void *)p};
    cudaLaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = (unsigned)(K.s.cluster_m * K.s.cluster_n);
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = dim3(K.grid);
    cfg.blockDim = dim3(K.s.threads);
    cfg.dynamicSmemBytes = K.s.smem_bytes;
    cfg.stream = st;
    cfg.attrs = &attr;
    cfg.numAttrs = attr.val.clusterDim.x > 1 ? 1 : 0;
    CK(cudaLaunchKernelExC(&cfg, K.fn, args));
}

/* Wait for the default stream with a host-side watchdog: a kernel that does not finish within
 * WATCHDOG_S is reported and the process ends at once (_exit: no CUDA teardown that could block on
 * the hung kernel; the driver reclaims the context). */
void sync_watchdog(const char *what)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        cudaError_t e = cudaStreamQuery(0);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady) {
            fprintf(stderr, "kernel failed (%s): %s\n", what, cudaGetErrorString(e));
            exit(2);
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) + 1e-9 * (t.tv_nsec - t0.tv_nsec) > WATCHDOG_S) {
            printf("HANG: %s did not finish within %.0f s; aborting\n", what, WATCHDOG_S);
            fflush(stdout);
            fflush(stderr);
            _exit(3);
        }
        usleep(200);
    }
}

static const char *g_case = "";
static void on_alarm(int)
{
    static const char msg[] = "HANG: case guard expired (a blocking CUDA call did not return); aborting: ";
    ssize_t r = write(1, msg, sizeof msg - 1);
    r = write(1, g_case, strlen(g_case));
    r = write(1, "\n", 1);
    (void)r;
    _exit(3);
}

int perf_window_calls(double flop)
{
    const int n = (int)(0.25 / (flop / 6.5e14)); /* at ~650 TFLOP/s */
    return n < 3 ? 3 : n > 30 ? 30 : n;
}

int few_window_calls(double flop)
{
    const int n = (int)(0.05 / (flop / 4e14));
    return n < 30 ? 30 : n > 4000 ? 4000 : n;
}

void few_token_problems(tp_problem *out, char (*names)[32], const tp_problem *bases, int nb, const int *ms, int nm,
                        const int *tps, int nt, char split)
{
    int i = 0;
    for (int t = 0; t < nt; ++t)
        for (int b = 0; b < nb; ++b)
            for (int j = 0; j < nm; ++j, ++i) {
                snprintf(names[i], 32, "%s-m%d", bases[b].name, ms[j]);
                const int n = split == 'n' ? bases[b].n / tps[t] : bases[b].n;
                const int k = split == 'k' ? bases[b].k / tps[t] : bases[b].k;
                out[i] = {names[i], ms[j], n, k, tps[t]};
            }
}

void case_guard(const char *what, unsigned int seconds)
{
    g_case = what;
    signal(SIGALRM, on_alarm);
    alarm(seconds);
}

double run_and_time_ms(const kern &K, const tpg_gemm_params *p)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    CK(cudaEventRecord(a, 0));
    launch(K, p, 0);
    CK(cudaEventRecord(b, 0));
    sync_watchdog(K.name);
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
    return ms;
}

/* Reference helpers dispatching on dtype. */
void ref_dot_h(const kern &K, const void *A, long long a_bs, const void *B, long long b_bs, int m, int n, int k,
                      int l, float coef, float *out, int acc)
{
    dim3 g((n + 127) / 128, m, l);
    switch (K.s.dtype) {
    case 0: ref_dot<<<g, 128>>>((const __nv_bfloat16 *)A, a_bs, (const __nv_bfloat16 *)B, b_bs, m, n, k, l, coef, out, acc); break;
    case 1: ref_dot<<<g, 128>>>((const __half *)A, a_bs, (const __half *)B, b_bs, m, n, k, l, coef, out, acc); break;
    case 2: ref_dot<<<g, 128>>>((const __nv_fp8_e4m3 *)A, a_bs, (const __nv_fp8_e4m3 *)B, b_bs, m, n, k, l, coef, out, acc); break;
    default: ref_dot<<<g, 128>>>((const __nv_fp8_e5m2 *)A, a_bs, (const __nv_fp8_e5m2 *)B, b_bs, m, n, k, l, coef, out, acc);
    }
    CK(cudaGetLastError());
}

void ref_axpy_h(const kern &K, const void *C, long long c_ld, long long c_batch, float beta, float *out, int m,
                       int n, int l)
{
    dim3 g((n + 127) / 128, m, l);
    if (K.s.dtype != 1) ref_axpy<<<g, 128>>>((const __nv_bfloat16 *)C, c_ld, c_batch, beta, out, m, n, l);
    else ref_axpy<<<g, 128>>>((const __half *)C, c_ld, c_batch, beta, out, m, n, l);
    CK(cudaGetLastError());
}

/* Returns the metric; NaN/inf in D (e.g. an unwritten poisoned element) gives +inf. */
double compare_h(const kern &K, const void *D, long long d_ld, long long d_batch, const float *ref, int m, int n,
                        int l)
{
    unsigned int *st = (unsigned int *)dalloc(12), h[3];
    CK(cudaMemset(st, 0, 12));
    dim3 g((n + 127) / 128, m, l);
    if (K.s.dtype != 1) compare<<<g, 128>>>((const __nv_bfloat16 *)D, d_ld, d_batch, ref, m, n, l, st);
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

#define MAX_ROWS 2048 /* result rows: ~46 instances x ~28 cases, plus the perf rows (each also printed as it runs) */
static struct {
    char name[64], dtype[16], value[48], bound[24];
    int pass;
} g_rows[MAX_ROWS];
static int g_nrows, g_rows_left_out;

void record(const char *name, const kern &K, const char *value, const char *bound, int pass)
{
    if (g_nrows < MAX_ROWS) {
        snprintf(g_rows[g_nrows].name, 64, "%s", name);
        snprintf(g_rows[g_nrows].dtype, 16, "%s", K.name);
        snprintf(g_rows[g_nrows].value, 48, "%s", value);
        snprintf(g_rows[g_nrows].bound, 24, "%s", bound);
        g_rows[g_nrows].pass = pass;
        ++g_nrows;
    } else {
        ++g_rows_left_out;
    }
    if (!pass) ++g_failures;
    printf("[%s] %-34s %-8s %s (bound %s)\n", pass ? "PASS" : "FAIL", name, K.name, value, bound);
    fflush(stdout);
}

void record_metric(const char *name, const kern &K, double metric, unsigned int status, unsigned int want)
{
    char v[48], b[24];
    snprintf(v, 48, "rel_err=%.3e status=%u", metric, status);
    snprintf(b, 24, "%.0e", K.bound);
    record(name, K, v, b, metric <= K.bound && status == want);
}

void print_results(void)
{
    printf("\n| case | kernel | result | bound | ok |\n|---|---|---|---|---|\n");
    for (int i = 0; i < g_nrows; ++i)
        printf("| %s | %s | %s | %s | %s |\n", g_rows[i].name, g_rows[i].dtype, g_rows[i].value, g_rows[i].bound,
               g_rows[i].pass ? "PASS" : "FAIL");
    if (g_rows_left_out) /* each was printed as it ran; the failure count holds them all */
        printf("(%d more rows than the table holds: their lines above)\n", g_rows_left_out);
}

/* As runtime/src/tensormap.c looks them up: ByVersion comes with CUDA 12.5 and CUDA 13 drops the older call, so
 * the self-test builds with every toolkit from the README's minimum (12.4) on. */
void *driver_symbol(const char *name)
{
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    void *fn = NULL;
#if CUDART_VERSION >= 12050
    const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q);
#else
    const cudaError_t e = cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &q);
#endif
    if (e != cudaSuccess) (void)cudaGetLastError();
    return e == cudaSuccess && q == cudaDriverEntryPointSuccess ? fn : NULL;
}

/* The run's GPU (device 0): prints its name and UUID - the UUID names the physical GPU: each device call may get
 * another H200, and the perf tables of two runs differ by a few percent between machines (docs/PERF_NOTES.md,
 * 2026-12-02 section) - sets g_num_sms and g_encode. 0, or the exit status: 1 not a Hopper device, 2 no
 * cuTensorMapEncodeTiled. */
int selftest_device_init()
{
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    g_num_sms = prop.multiProcessorCount;
    char uuid[48]; /* "GPU-" + 32 hex digits + 4 dashes + NUL = 41 */
    int at = snprintf(uuid, sizeof uuid, "GPU-");
    for (int i = 0; i < 16; ++i)
        at += snprintf(uuid + at, sizeof uuid - (size_t)at, "%s%02x", (i == 4 || i == 6 || i == 8 || i == 10) ? "-" : "",
                       (unsigned char)prop.uuid.bytes[i]);
    printf("device: %s (cc %d.%d, %d SMs) %s\n", prop.name, prop.major, prop.minor, g_num_sms, uuid);
    if (prop.major != 9) {
        printf("not a Hopper device; skipping\n");
        return 1;
    }
    g_encode = (PFN_cuTensorMapEncodeTiled_v12000)driver_symbol("cuTensorMapEncodeTiled");
    if (!g_encode) {
        fprintf(stderr, "cuTensorMapEncodeTiled not available\n");
        return 2;
    }
    return 0;
}
