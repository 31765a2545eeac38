/* GPU self-test of the sm90 GEMM kernel family (templates/kernels/gemm_sm90.cuh). Built by
 * tests/gpu/kernel_selftest.sh: the cooperative 128x256x64 (4 stages, 2 consumers) in bf16 and fp16,
 * and bf16 instances of the optional features - clusters 2x1 and 1x2 (TMA multicast), ping-pong
 * 128x128 and 64x256, ping-pong 128x128 with the 64x32 epilogue subtile (pp128s32), the cluster 2x1 with
 * the Hilbert walk (c2x1h), the shipped "_wide" kernel (wide3: 3 stages, 5 store buffers, deferred
 * stores), cooperative_n 192x192 (sn192), ping-pong with deferred signal flags (pp128df), with pipelined
 * partial loads (pp128ps), with both (pp128both) and with TMA-loaded partials (pp128tma), and fp16 with
 * f16 accumulation (fp16h: the "_wide" kernel, pp128h: ping-pong with TMA-loaded partials; tolerance
 * 1e-2 for the f16 running sums: ~5e-5 * sqrt(K) of max|ref| expected), and the shipped "_rs" kernels:
 * the wide kernel with TMA-loaded partials in bf16 and fp16 (wide3tma, fp16tma), and the shipped fp16
 * "_wide" kernel (fp16w) - each built from -D macros (selftest_instance.cu).
 *
 * Each case fills inputs with random values (never zeros), poisons D with NaN bytes, runs the kernel
 * with hand-built tensor maps and launch parameters, and compares with a simple fp32 SIMT reference:
 *   metric = max|d - ref| / max|ref| over the checked extent (NaN anywhere = failure).
 * Cases (every kernel): plain GEMM (square, ragged, and odd tile counts with K shorter than the ring,
 * so cluster pairs get a masked partner tile and ping-pong an unpaired last tile), alpha/beta with C and
 * L = 2 batches into a padded D (the padding must keep its poison: TMA-store clipping), local
 * reduce-scatter rings (signal_flags -> partial_flags; stage 0 writes a second local buffer standing in
 * for a peer's slot; the larger one gives every CTA several tiles; a 3-stage one has a middle stage that
 * receives and sends, as at TP >= 3), a stage wait flag already raised, a
 * wait flag never raised (must time out and report TPG_DEVICE_TIMEOUT), the same with the stage's copy in
 * pieces (copy_chunks.h), and pieces landing during the launch into a NaN-filled slot. Then timing of every bf16
 * kernel against cuBLAS on the ten local GEMMs of BENCHMARKS.md (selftest_cublas_perf.cu); its table is printed
 * last.
 * Hangs: every wait on a tested kernel is bounded (WATCHDOG_S = 10 s, then the process exits with 3),
 * and every case runs under an alarm as well. `--no-perf` skips the timing, `--only NAME` keeps one kernel,
 * `--rs-perf` adds the reduce-scatter ring timing of selftest_rs_perf.cu (every listed kernel; `--rs-parts` with
 * the ring's cost split into parts; `--rs-few` on few-token problems instead; `--rs-far` with the pushes over the
 * host link), `--ag-perf` the
 * all-gather walk timing of selftest_ag_perf.cu (`--ag-few` on few-token problems instead; `--problem NAME,...`
 * picks problems of either by name, `--variants NAME,...` the walk variants), `--coresident` whether the barrier
 * kernel runs beside each listed GEMM (selftest_coresident.cu), `--pulls` the gathered walk's shards pulled by each
 * listed kernel, also with half the SMs held by another kernel (selftest_pulls.cu), `--no-cases` skips the correctness
 * cases (with `--no-perf`: only the requested measurements), `--pieces-control` inverts the pieces case (test_pieces
 * says how).
 */
#include <cublas_v2.h>
#include <unistd.h>

#include "copy_chunks.h"
#include "selftest_util.cuh"

#define KERNELS(X)                                                                                    \
    X(bf16, 1e-2) X(fp16, 2e-3) X(c2x1, 1e-2) X(c1x2, 1e-2) X(pp128, 1e-2) X(pp64, 1e-2) X(pp128s32, 1e-2)  \
        X(c2x1h, 1e-2) X(wide3, 1e-2) X(sn192, 1e-2) X(w320, 1e-2) X(pp128df, 1e-2) X(pp128ps, 1e-2) \
        X(pp128both, 1e-2) X(pp128tma, 1e-2) X(fp16h, 1e-2) X(pp128h, 1e-2) X(k32, 1e-2) X(c2x1k32, 1e-2)   \
        X(wide3tma, 1e-2) X(fp16tma, 2e-3) X(fp16w, 2e-3) X(e4m3w, 1e-2) X(e4m3pp, 1e-2) X(e5m2w, 1e-2)            \
        X(e4m3tma, 1e-2) X(e4m3pptma, 1e-2) X(e4m3p8, 1e-2) X(e4m3p8tma, 1e-2) X(e4m3p1, 1e-2) X(pp128p32, 1e-2) X(wide3p32, 1e-2)   \
        X(w160, 1e-2) X(pp64tma, 1e-2) X(wide3nd, 1e-2) X(wide3old, 1e-2) X(pp64g1, 1e-2) \
        X(wide3fx, 1e-2) X(pp128tdf, 1e-2) X(pp128sp, 1e-2) X(pp64sp, 1e-2) X(pp128spd, 1e-2) \
        X(pp128tdq, 1e-2) X(pp128spq, 1e-2) X(pp128tdr, 1e-2)
#define DECLARE(n, b)                                                                                 \
    extern "C" const void *tpg_selftest_##n##_entry(void);                                           \
    extern "C" const tpg_selftest_shape tpg_selftest_##n##_shape;
KERNELS(DECLARE)
#undef DECLARE
extern "C" void tpg_selftest_spread_dump(void) __attribute__((weak)); /* pp128spd's (selftest_instance.cu) */
#define COUNT(n, b) +1
static_assert(0 KERNELS(COUNT) <= SELFTEST_MAX_KERNELS, "more instances than a run holds: raise SELFTEST_MAX_KERNELS");
#undef COUNT
void rs_perf(const kern *ks, int nk, const ctl &c, bool parts, bool few, bool far, const char *problems);
void print_rs_perf(const kern *ks, int nk);
void ag_perf(const kern *ks, int nk, const ctl &c, bool few, const char *problems, const char *variants);
void print_ag_perf(const kern *ks, int nk);
void coresident(const kern *ks, int nk, const ctl &c);
void pulls_selftest(const kern *ks, int nk, const ctl &c); /* selftest_pulls.cu */
void cublas_perf(const kern *bf, int nbf, const ctl &c, cublasHandle_t h); /* selftest_cublas_perf.cu */
void print_cublas_perf(const kern *bf, int nbf);
void print_coresident(const kern *ks, int nk);

/* ---- cases ------------------------------------------------------------------------------------- */

static unsigned int g_seed = 1;

/* (1) one stage, plain: D = A . B^T */
static void test_plain(const kern &K, const ctl &c, int m, int n, int k)
{
    k = legal_k(K, k);
    void *A = dalloc((size_t)m * k * 2), *B = dalloc((size_t)n * k * 2), *D = dalloc((size_t)m * n * 2);
    float *ref = (float *)dalloc((size_t)m * n * 4);
    rand_fill(K, A, (size_t)m * k, g_seed++);
    rand_fill(K, B, (size_t)n * k, g_seed++);
    CK(cudaMemset(D, 0xFF, (size_t)m * n * 2)); /* NaN poison */
    tpg_gemm_params p;
    base_params(&p, c, m, n, k, 1, 1);
    set_epoch(c, 3);
    map_a(&p.stage[0].a_map, K, A, m, k);
    map_b(&p.stage[0].b_map, K, B, n, k);
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

/* (2) alpha = 0.5, beta = -0.75 (a beta of 1 would pass an epilogue that adds C unscaled), C, L = 2 batches,
 * padded d_ld */
static void test_alpha_beta(const kern &K, const ctl &c)
{
    const int m = 1000, n = 776, k = legal_k(K, 328), l = 2, dld = n + 16;
    void *A = dalloc((size_t)l * m * k * 2), *B = dalloc((size_t)l * n * k * 2);
    void *C = dalloc((size_t)l * m * n * 2), *D = dalloc((size_t)l * m * dld * 2);
    float *ref = (float *)dalloc((size_t)l * m * n * 4);
    rand_fill(K, A, (size_t)l * m * k, g_seed++);
    rand_fill(K, B, (size_t)l * n * k, g_seed++);
    rand_fill_out(K, C, (size_t)l * m * n, g_seed++);
    CK(cudaMemset(D, 0xFF, (size_t)l * m * dld * 2));
    tpg_gemm_params p;
    base_params(&p, c, m, n, k, l, 1);
    p.alpha = 0.5f;
    p.beta = -0.75f;
    set_epoch(c, 9);
    map_a(&p.stage[0].a_map, K, A, (unsigned long long)l * m, k);
    map_b(&p.stage[0].b_map, K, B, (unsigned long long)l * n, k);
    p.stage[0].a_batch_rows = m;
    p.stage[0].b_batch_rows = n;
    set_dest(&p, 0, K, D, dld, (long long)m * dld);
    p.stage[0].c = C;
    p.stage[0].c_ld = n;
    p.stage[0].c_batch = (long long)m * n;
    run_and_time_ms(K, &p);
    ref_dot_h(K, A, m, B, n, m, n, k, l, 0.5f, ref, 0);
    ref_axpy_h(K, C, n, (long long)m * n, -0.75f, ref, m, n, l);
    double metric = compare_h(K, D, dld, (long long)m * dld, ref, m, n, l);
    unsigned int *cnt = (unsigned int *)dalloc(4), hc = 0;
    CK(cudaMemset(cnt, 0, 4));
    count_unpoisoned<<<dim3(1, m, l), 32>>>((const unsigned short *)D, dld, n, m, l, cnt);
    CK(cudaMemcpy(&hc, cnt, 4, cudaMemcpyDeviceToHost));
    cudaFree(cnt);
    if (hc) printf("    %u elements written outside n (padding columns)\n", hc);
    char name[64];
    snprintf(name, 64, "alpha.5 beta-.75 C L2 %dx%dx%d", m, n, k); /* k: 336 for fp8 (legal_k) */
    record_metric(name, K, hc ? INFINITY : metric, get_status(c), TPG_DEVICE_OK);
    cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(D); cudaFree(ref);
}

/* (3) local reduce-scatter ring of S stages (ring_params): stage s < S-1 writes X_s and raises its flags;
 * stage s > 0 waits on them, adds X_{s-1}. S = 3 has a middle stage that receives and sends a partial
 * (the non-deferred epilogue with a partial and signal flags, as at TP >= 3). l > 1: batches; with_c:
 * alpha 0.5, and beta -0.75 with C on the last stage (the partial and C together take the register path of a
 * tma_partials kernel). Flags start at epoch-1 (stale). */
static void test_ring(const kern &K, const ctl &c, int m, int n, int S, int l = 1, bool with_c = false,
                      bool minor = false)
{
    const int k = 512, epoch = 5;
    const int tiles = l * ((m + K.s.bm - 1) / K.s.bm) * ((n + K.s.bn - 1) / K.s.bn), nf = (S - 1) * tiles;
    const size_t mn = (size_t)m * n;
    void *A = dalloc((size_t)l * S * m * k * 2), *B = dalloc((size_t)l * S * n * k * 2);
    void *X = dalloc((S - 1) * l * mn * partial_bytes(K)), *D = dalloc(l * mn * 2);
    void *C = with_c ? dalloc(l * mn * 2) : nullptr;
    unsigned int *F = (unsigned int *)dalloc(nf * 4);
    float *ref = (float *)dalloc(l * mn * 4);
    rand_fill(K, A, (size_t)l * S * m * k, g_seed++);
    rand_fill(K, B, (size_t)l * S * n * k, g_seed++);
    if (with_c) rand_fill_out(K, C, l * mn, g_seed++);
    CK(cudaMemset(X, 0xFF, (S - 1) * l * mn * partial_bytes(K)));
    CK(cudaMemset(D, 0xFF, l * mn * 2));
    unsigned int *hf = (unsigned int *)malloc(nf * 4);
    for (int i = 0; i < nf; ++i) hf[i] = epoch - 1;
    CK(cudaMemcpy(F, hf, nf * 4, cudaMemcpyHostToDevice));
    tpg_gemm_params p;
    ring_params(&p, c, K, A, B, X, D, F, m, n, k, S, tiles, l);
    p.stage_minor = minor; /* the interleaved walk (scheduler.cuh): the same sums and flags */
    const float alpha = with_c ? 0.5f : 1.0f;
    if (with_c) {
        p.alpha = alpha;
        p.beta = -0.75f;
        p.stage[S - 1].c = C;
        p.stage[S - 1].c_ld = n;
        p.stage[S - 1].c_batch = (long long)mn;
    }
    set_epoch(c, epoch);
    run_and_time_ms(K, &p);
    for (int s = 0; s < S; ++s)
        ref_dot_h(K, (const char *)A + (size_t)s * m * k * ab_bytes(K), (long long)S * m,
                  (const char *)B + (size_t)s * n * k * ab_bytes(K),
                  (long long)S * n, m, n, k, l, alpha, ref, s > 0);
    if (with_c) ref_axpy_h(K, C, n, (long long)mn, -0.75f, ref, m, n, l);
    double metric = compare_h(K, D, n, (long long)mn, ref, m, n, l);
    CK(cudaMemcpy(hf, F, nf * 4, cudaMemcpyDeviceToHost));
    int flags_ok = 1;
    for (int i = 0; i < nf; ++i) flags_ok &= hf[i] == (unsigned int)epoch;
    if (!flags_ok) printf("    signal flags not all raised to the epoch\n");
    char name[64];
    char ctas[24] = "";
    if (K.grid < g_num_sms / (K.s.cluster_m * K.s.cluster_n) * (K.s.cluster_m * K.s.cluster_n))
        snprintf(ctas, sizeof ctas, " %d CTAs", K.grid);
    snprintf(name, 64, "%d-stage ring partial+flags %dx%d%s%s%s%s", S, m, n, l > 1 ? " L2" : "",
             with_c ? " a.5 b-.75 C" : "", minor ? " stage-minor" : "", ctas);
    record_metric(name, K, flags_ok ? metric : INFINITY, get_status(c), TPG_DEVICE_OK);
    free(hf);
    cudaFree(A); cudaFree(B); cudaFree(X); cudaFree(D); cudaFree(C); cudaFree(F); cudaFree(ref);
}

/* (4)/(5) two all-gather stages: stage s computes block s of D = A . B^T - rows of A (along_b 0) or rows
 * of B, i.e. columns of D (along_b 1) - and stage 1 waits on its flags, one per piece of a copy cut into
 * `pieces` (copy_chunks.h; 1: one flag). raised: every flag = epoch, must pass; else the last piece's flag
 * stays at epoch - 1 and the launch must time out (20 ms). raised -1: the same unraised flag with the 2 s bound,
 * but another wait of this launch has timed out (gave_up_epoch = epoch), so the wait must give up at once and add
 * no status bit (a call with a missing peer costs one timeout, not one per wait: gemm_params.h); raised -2: the
 * word holds an earlier launch's epoch, which must not cut this one short (20 ms bound: status 1, and the word
 * then holds this epoch). */
static void test_wait(const kern &K, const ctl &c, int raised, int pieces, int along_b)
{
    const int m = 1000, n = 1000, k = legal_k(K, 520), epoch = 12;
    const int rows_a = along_b ? m : 2 * m, rows_b = along_b ? 2 * n : n, dn = along_b ? 2 * n : n;
    void *A = dalloc((size_t)rows_a * k * 2), *B = dalloc((size_t)rows_b * k * 2), *D = dalloc((size_t)2 * m * n * 2);
    unsigned int *W = (unsigned int *)dalloc(4 * TPG_MAX_COPY_CHUNKS);
    float *ref = (float *)dalloc((size_t)2 * m * n * 4);
    rand_fill(K, A, (size_t)rows_a * k, g_seed++);
    rand_fill(K, B, (size_t)rows_b * k, g_seed++);
    CK(cudaMemset(D, 0xFF, (size_t)2 * m * n * 2));
    const int cut = pieces > 1 ? tpg_copy_chunk_rows(along_b ? n : m, along_b ? K.s.bn : K.s.bm, pieces) : 0;
    const int count = cut ? tpg_copy_chunk_count(along_b ? n : m, cut) : 1;
    unsigned int wv[TPG_MAX_COPY_CHUNKS];
    for (int i = 0; i < count; ++i) wv[i] = raised > 0 || i + 1 < count ? epoch : epoch - 1;
    CK(cudaMemcpy(W, wv, 4 * count, cudaMemcpyHostToDevice));
    tpg_gemm_params p;
    base_params(&p, c, m, n, k, 1, 2);
    if (raised == 0 || raised == -2) p.timeout_ns = 20000000ull; /* 20 ms */
    set_epoch(c, epoch);
    const unsigned int gave_up = raised == -1 ? epoch : epoch - 1;
    if (raised < 0) CK(cudaMemcpy(c.gave_up, &gave_up, 4, cudaMemcpyHostToDevice));
    for (int s = 0; s < 2; ++s) {
        tpg_stage_params *sp = &p.stage[s];
        map_a(&sp->a_map, K, A, rows_a, k);
        map_b(&sp->b_map, K, B, rows_b, k);
        sp->a_row0 = along_b ? 0 : s * m;
        sp->b_row0 = along_b ? s * n : 0;
        sp->a_batch_rows = rows_a;
        sp->b_batch_rows = rows_b;
        const size_t off = along_b ? (size_t)s * n : (size_t)s * m * n;
        set_dest(&p, s, K, (char *)D + off * 2, dn, 2ll * m * n);
    }
    p.stage[1].wait_flag = W;
    p.stage[1].wait_chunk_rows = cut;
    p.stage[1].wait_b = along_b;
    double ms = run_and_time_ms(K, &p);
    unsigned int st = get_status(c);
    char name[64], v[48];
    if (raised < 0) snprintf(name, 64, raised == -1 ? "wait gives up with its launch" : "earlier launch's give-up ignored");
    else if (pieces == 1) snprintf(name, 64, raised ? "wait_flag raised (2 stages)" : "wait_flag never raised, 20ms");
    else snprintf(name, 64, raised ? "wait in %d pieces of %c rows" : "wait in %d pieces of %c, last never raised",
                  count, along_b ? 'B' : 'A');
    if (raised < 0) {
        unsigned int word;
        CK(cudaMemcpy(&word, c.gave_up, 4, cudaMemcpyDeviceToHost));
        snprintf(v, 48, "status=%u word=%u after %.1f ms", st, word, ms);
        /* < 1 s against the 2 s bound: a wait that did not give up takes >= 2 s; a launch under compute-sanitizer
         * (tests/gpu/run_sanitizers.sh) takes ~0.4 s without any wait */
        record(name, K, v, raised == -1 ? "status=0, < 1000 ms" : "status=1, word=epoch, >= 20 ms",
               raised == -1 ? st == TPG_DEVICE_OK && ms < 1000.0 : st == TPG_DEVICE_TIMEOUT && word == (unsigned)epoch && ms >= 20.0);
    } else if (raised) {
        ref_dot_h(K, A, 0, B, 0, along_b ? m : 2 * m, dn, k, 1, 1.f, ref, 0);
        record_metric(name, K, compare_h(K, D, dn, 2ll * m * n, ref, along_b ? m : 2 * m, dn, 1), st, TPG_DEVICE_OK);
    } else {
        snprintf(v, 48, "status=%u after %.1f ms", st, ms);
        record(name, K, v, "status=1", st == TPG_DEVICE_TIMEOUT);
    }
    cudaFree(A); cudaFree(B); cudaFree(D); cudaFree(W); cudaFree(ref);
}

/* (6) an all-gather stage whose rotating operand lands in pieces while the kernel runs, as the runtime's copy
 * nodes bring it (copy_chunks.h): stage 0 reads its own shard, stage 1 a slot of L = 2 batches of 1000 rows
 * (not whole tiles) that holds NaNs until each of 5 requested pieces is copied in from host memory and its
 * flag raised behind it, on another stream, after the launch. A tile that read rows before their piece
 * landed - a wrong piece for its box, a cluster half, a batch boundary - would turn its outputs non-finite.
 * Rotating A (along_b 0: stage s computes rows block s) or B (columns block s). */
/* --pieces-control: the test's own check, with the kernel told pieces twice their size (so its tiles wait for
 * earlier pieces than they read): the pieces case must then fail (it is recorded as passing when it does). A
 * control, not a guarantee: a tile may still find its rows landed by chance. */
static int g_pieces_control = 0;

static void test_pieces(const kern &K, const ctl &c, int along_b)
{
    const int m = 1000, n = 1000, k = legal_k(K, 520), L = 2, epoch = 21;
    const int rows = along_b ? n : m, fixed_rows = along_b ? m : n;
    const size_t row_bytes = (size_t)k * ab_bytes(K), slot = (size_t)L * rows * row_bytes;
    void *own = dalloc(slot), *truth = dalloc(slot), *S = dalloc(slot), *host = nullptr;
    void *F = dalloc((size_t)L * fixed_rows * row_bytes), *D = dalloc((size_t)L * 2 * m * n * 2);
    unsigned int *W = (unsigned int *)dalloc(4 * TPG_MAX_COPY_CHUNKS), *ep = nullptr;
    float *ref = (float *)dalloc((size_t)L * m * n * 4);
    rand_fill(K, own, (size_t)L * rows * k, g_seed++);
    rand_fill(K, truth, (size_t)L * rows * k, g_seed++);
    rand_fill(K, F, (size_t)L * fixed_rows * k, g_seed++);
    CK(cudaMallocHost(&host, slot));
    CK(cudaMallocHost((void **)&ep, 4));
    *ep = epoch;
    CK(cudaMemcpy(host, truth, slot, cudaMemcpyDeviceToHost));
    CK(cudaMemset(S, 0xFF, slot)); /* NaN in every operand type until its piece lands */
    CK(cudaMemset(W, 0, 4 * TPG_MAX_COPY_CHUNKS));
    CK(cudaMemset(D, 0xFF, (size_t)L * 2 * m * n * 2));
    const long long cut = tpg_copy_chunk_rows((long long)L * rows, along_b ? K.s.bn : K.s.bm, 5);
    const int pieces = tpg_copy_chunk_count((long long)L * rows, cut);
    tpg_gemm_params p;
    base_params(&p, c, m, n, k, L, 2);
    const long long dn = along_b ? 2 * n : n, d_batch = 2ll * m * n;
    for (int s = 0; s < 2; ++s) {
        tpg_stage_params *sp = &p.stage[s];
        const void *rot = s ? S : own;
        map_a(&sp->a_map, K, along_b ? F : rot, (unsigned long long)L * (along_b ? fixed_rows : rows), k);
        map_b(&sp->b_map, K, along_b ? rot : F, (unsigned long long)L * (along_b ? rows : fixed_rows), k);
        sp->a_batch_rows = along_b ? fixed_rows : rows;
        sp->b_batch_rows = along_b ? rows : fixed_rows;
        const size_t off = along_b ? (size_t)s * n : (size_t)s * m * n;
        set_dest(&p, s, K, (char *)D + off * 2, dn, d_batch);
    }
    p.stage[1].wait_flag = W;
    p.stage[1].wait_chunk_rows = pieces > 1 ? (int)cut * (g_pieces_control ? 2 : 1) : 0;
    p.stage[1].wait_b = along_b;
    set_epoch(c, epoch);
    cudaStream_t cs;
    CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    CK(cudaDeviceSynchronize()); /* the memsets above (legacy stream) before the pieces' copies on cs */
    launch(K, &p, 0);
    for (int i = 0; i < pieces; ++i) {
        const size_t off = (size_t)i * cut * row_bytes, end = (size_t)(i + 1) * cut * row_bytes;
        CK(cudaMemcpyAsync((char *)S + off, (char *)host + off, (end < slot ? end : slot) - off, cudaMemcpyHostToDevice,
                           cs));
        CK(cudaMemcpyAsync(W + i, ep, 4, cudaMemcpyHostToDevice, cs));
    }
    sync_watchdog("pieces");
    CK(cudaStreamSynchronize(cs));
    CK(cudaStreamDestroy(cs));
    double worst = 0.0;
    for (int s = 0; s < 2; ++s) {
        const void *rot = s ? truth : own;
        const long long rot_bs = rows, fixed_bs = fixed_rows; /* batch strides in rows (ref_dot) */
        if (along_b) ref_dot_h(K, F, fixed_bs, rot, rot_bs, m, n, k, L, 1.f, ref, 0);
        else ref_dot_h(K, rot, rot_bs, F, fixed_bs, m, n, k, L, 1.f, ref, 0);
        const size_t off = along_b ? (size_t)s * n : (size_t)s * m * n;
        worst = fmax(worst, compare_h(K, (char *)D + off * 2, dn, d_batch, ref, m, n, L));
    }
    char name[64];
    snprintf(name, 64, "%d pieces of %c landing during the launch, L2%s", pieces, along_b ? 'B' : 'A',
             g_pieces_control ? " (control)" : "");
    if (g_pieces_control) {
        char v[48];
        snprintf(v, 48, "rel_err=%.3e", worst);
        record(name, K, v, "above the bound", !(worst <= K.bound));
    } else {
        record_metric(name, K, worst, get_status(c), TPG_DEVICE_OK);
    }
    CK(cudaFreeHost(host));
    CK(cudaFreeHost(ep));
    cudaFree(own); cudaFree(truth); cudaFree(S); cudaFree(F); cudaFree(D); cudaFree(W); cudaFree(ref);
}

/* Whether every name of --only is a kernel of this build (a name of a kernel since renamed matched none, and a run of
 * no case printed "ALL PASSED"); says which is not. */
static bool only_names_known(const char *only)
{
#define NAME(nm, b) #nm,
    static const char *const names[] = {KERNELS(NAME)};
#undef NAME
    for (const char *p = only; p && *p;) {
        const char *end = strchr(p, ',');
        const size_t n = end ? (size_t)(end - p) : strlen(p);
        bool known = false;
        for (const char *name : names) known |= strlen(name) == n && strncmp(name, p, n) == 0;
        if (!known) {
            fprintf(stderr, "--only: no kernel named '%.*s' in this self-test; its kernels:", (int)n, p);
            for (const char *name : names) fprintf(stderr, " %s", name);
            fputc('\n', stderr);
            return false;
        }
        p += n + (end != NULL);
    }
    return true;
}

/* --only takes one name or a comma-separated list ("bf16,pp128"); NULL keeps every kernel. */
/* name is one of the comma-separated names of `only` (every name where only is NULL) */
bool selftest_listed(const char *only, const char *name)
{
    if (!only) return true;
    const size_t n = strlen(name);
    for (const char *p = only; (p = strstr(p, name)) != NULL; p += n)
        if ((p == only || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return true;
    return false;
}

int main(int argc, char **argv)
{
    int skip_perf = 0, rs = 0, rs_parts = 0, rs_few = 0, rs_far = 0, ag = 0, ag_few = 0, cores = 0, cases = 1;
    int pulls = 0;
    const char *only = NULL, *problems = NULL, *variants = NULL;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--no-perf") == 0) skip_perf = 1;
        else if (strcmp(argv[i], "--rs-perf") == 0) rs = 1;
        else if (strcmp(argv[i], "--rs-parts") == 0) rs = rs_parts = 1;
        else if (strcmp(argv[i], "--rs-few") == 0) rs = rs_few = 1;
        else if (strcmp(argv[i], "--rs-far") == 0) rs = rs_far = 1;
        else if (strcmp(argv[i], "--ag-perf") == 0) ag = 1;
        else if (strcmp(argv[i], "--ag-few") == 0) ag = ag_few = 1;
        else if (strcmp(argv[i], "--coresident") == 0) cores = 1;
        else if (strcmp(argv[i], "--pulls") == 0) pulls = 1;
        else if (strcmp(argv[i], "--no-cases") == 0) cases = 0;
        else if (strcmp(argv[i], "--pieces-control") == 0) g_pieces_control = 1;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else if (strcmp(argv[i], "--problem") == 0 && i + 1 < argc) problems = argv[++i];
        else if (strcmp(argv[i], "--variants") == 0 && i + 1 < argc) variants = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--no-perf] [--no-cases] [--rs-perf] [--rs-parts] [--rs-few] [--rs-far] "
                            "[--ag-perf] [--ag-few] [--coresident] [--pulls] [--pieces-control] "
                            "[--only KERNEL[,KERNEL...]] [--problem NAME[,NAME...]] [--variants NAME[,NAME...]]\n",
                    argv[0]);
            return 2;
        }
    }
    if (rs_few && rs_far) {
        fprintf(stderr, "--rs-few and --rs-far are different problem tables: give one of them\n");
        return 2;
    }
    if (rs_parts && rs_far) {
        fprintf(stderr, "--rs-far times its own variants (plain, ring, far, far walk), not --rs-parts' parts\n");
        return 2;
    }
    if (variants && !ag) {
        fprintf(stderr, "--variants selects the variants of --ag-perf / --ag-few: give one of them\n");
        return 2;
    }
    if (problems && !rs && !ag) {
        fprintf(stderr, "--problem selects the problems of --rs-perf / --rs-parts / --rs-few / --rs-far / --ag-perf / "
                        "--ag-few: give one of them\n");
        return 2;
    }
    if (!only_names_known(only)) return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    const int setup = selftest_device_init(); /* selftest_util.cu: names the GPU, checks it, finds the TMA encoder */
    if (setup != 0) return setup;
    kern ks[SELFTEST_MAX_KERNELS], bf[SELFTEST_MAX_KERNELS];
    int nk = 0, nbf = 0;
    /* a timing-only instance (selftest_shape.h) runs only where --only names it, and then only in the --rs-* timings */
#define INIT(nm, b) /* every instance fits: the static_assert above */                                           \
    if (selftest_listed(only, #nm) && (only || !tpg_selftest_##nm##_shape.timing_only))                            \
        kern_init(&ks[nk++], #nm, tpg_selftest_##nm##_entry(), tpg_selftest_##nm##_shape, b);
    KERNELS(INIT)
#undef INIT
    ctl c;
    c.epoch = (unsigned int *)dalloc(4);
    c.status = (unsigned int *)dalloc(4);
    c.gave_up = (unsigned int *)dalloc(4);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasCreate failed\n");
        return 2;
    }
    for (int i = 0; i < nk; ++i) {
        const kern &K = ks[i];
        if (K.s.timing_only) {
            printf("[skip] %s: timing only (--rs-perf / --rs-far; selftest_shape.h says why)\n", K.name);
            continue;
        }
        if (K.s.dtype == 0) bf[nbf++] = K;
        if (!cases) continue;
        case_guard(K.name, 120); /* all correctness cases of one kernel take a few seconds */
        test_plain(K, c, 2048, 2048, 1024);
        test_plain(K, c, 1000, 1000, 520);
        test_plain(K, c, 1100, 1200, 136); /* odd tile counts, K shorter than the ring */
        test_plain(K, c, 1100, 1200, 40);  /* one k-block: fewer than a tile's deferred store units */
        test_alpha_beta(K, c);
        test_ring(K, c, 1000, 1000, 2);
        test_ring(K, c, 1100, 1200, 2);
        test_ring(K, c, 4000, 2040, 2); /* several tiles per CTA, < 2 x grid a stage at 128x256: flags at once */
        test_ring(K, c, 1100, 1200, 3); /* a middle stage: partial in, partial out */
        /* on 16 CTAs a stage of 1100 x 1200 has >= 2 x grid tiles (3 x for ping-pong with deferred_flags) at every
         * instance's tile, so the cooperative flags are deferred (epilogue.cuh) - without the 8192 x 4096 rings
         * that took racecheck minutes (tests/gpu/run_sanitizers.sh) */
        kern few_ctas = K;
        few_ctas.grid = 16 / (K.s.cluster_m * K.s.cluster_n) * (K.s.cluster_m * K.s.cluster_n);
        test_ring(few_ctas, c, 1100, 1200, 2);
        test_ring(few_ctas, c, 1100, 1200, 3); /* a middle stage with deferred flags */
        test_ring(K, c, 1000, 776, 2, 2);       /* batches: a TMA-loaded partial's batch coordinate */
        test_ring(K, c, 1000, 776, 2, 2, true); /* batches, alpha, beta * C next to the partial */
        test_ring(K, c, 64, 2048, 2, 1, false, true);   /* the interleaved walk's decode as the runtime's rule */
        test_ring(K, c, 48, 24576, 4, 1, false, true);  /* uses it: one row, one wave or (<= 64 rows) several; */
        test_ring(K, c, 1000, 1000, 2, 1, false, true); /* and on longer walks */
        test_ring(K, c, 1100, 1200, 3, 1, false, true);
        test_ring(K, c, 1000, 776, 3, 2, true, true); /* ... with batches: stage = uid % 3, then the batch */
        test_plain(K, c, 4000, 3000, 1000);
        test_wait(K, c, 1, 1, 0);
        test_wait(K, c, 0, 1, 0);
        test_wait(K, c, -1, 1, 0);
        test_wait(K, c, -2, 1, 0);
        test_wait(K, c, 1, 4, 0);
        test_wait(K, c, 0, 4, 0);
        test_wait(K, c, 1, 3, 1);
        test_wait(K, c, 0, 3, 1);
        test_pieces(K, c, 0);
        test_pieces(K, c, 1);
    }
    if (!skip_perf) cublas_perf(bf, nbf, c, h); /* selftest_cublas_perf.cu */
    if (rs && nk > 0) rs_perf(ks, nk, c, rs_parts, rs_few, rs_far, problems); /* selftest_rs_perf.cu */
    kern checked[SELFTEST_MAX_KERNELS]; /* the --ag-* / --coresident / --pulls kernels: no timing-only one */
    int nc = 0;
    for (int i = 0; i < nk; ++i)
        if (!ks[i].s.timing_only) checked[nc++] = ks[i];
    if (ag && nc > 0) ag_perf(checked, nc, c, ag_few, problems, variants); /* selftest_ag_perf.cu */
    if (cores && nc > 0) coresident(checked, nc, c); /* selftest_coresident.cu */
    if (pulls && nc > 0) pulls_selftest(checked, nc, c);
    alarm(0);
    cublasDestroy(h);
    print_results();
    if (!skip_perf) print_cublas_perf(bf, nbf);
    if (rs && nk > 0) print_rs_perf(ks, nk);
    if (ag && nc > 0) print_ag_perf(checked, nc);
    if (cores && nc > 0) print_coresident(checked, nc);
    if (tpg_selftest_spread_dump) tpg_selftest_spread_dump();
    printf("\n%s: %d failure(s)\n", g_failures ? "FAILED" : "ALL PASSED", g_failures);
    return g_failures ? 1 : 0;
}
