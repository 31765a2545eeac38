/* All-gather walk timing on one GPU (`kernel_selftest --ag-perf`): what a fused all-gather (TP = 2, 4 or 8)
 * costs a kernel beyond its local GEMM, without the other GPUs.
 *
 * Why: at TP = 2 the fused all-gather ran 0.975 / 0.978 / 0.965 of its local GEMM on 405B-fc1, 70B-fc1 and
 * 70B-qkv (bench/results/tp2.json), and the seed problem (405B-fc1) 0.993 of cuBLAS's local GEMM. Part of
 * that is the clock the links cost (docs/PERF_NOTES.md, 2026-12-01 00:00Z). This separates the rest:
 *   plain  the one-stage GEMM of the per-GPU problem M x N x K;
 *   walk   the fused walk: TP stages of M / TP rows of A, stage s >= 1 waiting on its flag, which a
 *          copy-engine write raises at the start of each call (the graph's FLAG node, without data);
 *   copy   the walk with the shards moved as a fused call moves them: before each flag, a copy-engine
 *          copy of that stage's M / TP x K rows of A, started with the call (copy4 / copy8: each shard in 4
 *          / 8 pieces, copy_chunks.h, each followed by its own flag). The source is pinned host
 *          memory holding the same values: a copy within one GPU runs as a kernel, which would queue
 *          behind the persistent GEMM waiting for it (even cudaMemcpyBatchAsync's overlap hint did, 16:45Z),
 *          so the copy crosses PCIe (~50 GB/s, an eighth of NVLink's rate): hidden behind stage 0 on
 *          405B-fc1 and 70B-fc1 at TP = 2, not on the small problems, where copy / walk is the PCIe wait.
 *   nvN    the walk with copies that take as long as NVLink's (kNvlinkGBs, the copy engine's rate between
 *          two H200s): each piece of a shard cut into N (N = 1: whole shards) copies only the fraction of its
 *          bytes that PCIe moves in the time NVLink would take for all of them (the rest of A already holds
 *          the same values), then raises its own flag.
 *   walk8  the walk with 8 flags per stage and no copies: the cut's cost to the kernel and to the flags.
 *   minor, nv1m, copym  walk, nv1 and copy with the stages interleaved in the walk (p.stage_minor: uid = unit *
 *          tp + stage, so the stages' tiles of one B tile run on neighbouring CTAs and read it in step): at few
 *          tokens a stage's reads of B decide its time, and stage after stage reads all of B once a stage.
 *   nv1g, copyg  nv1m and copym gated: every stage, the local one too, waits on the last stage's flags, so a
 *          unit's stages start together and stay in step (with copies in flight nv1m's do not).
 *   nv1x, copyx  gathered: plain's one GEMM of all M rows, waiting on the last stage's flags, with nv1's and copy's
 *          copies in flight - a walk that gathers every shard into one buffer first (A here is that buffer), so
 *          stages of fewer rows than a tile share tiles; without the copy of the local shard into it.
 * With `--ag-few` the problems are the all-gather anchors at M = 128 ... 512 tokens, TP = 2, 4 and 8 (named
 * like 70B-fc1-m128; `--problem` picks some - a name must be in the table of every mode run), with plain, walk,
 * minor, nv1, nv1g and copyg only (printed in that order); `--variants NAME,...` runs plain and the named ones.
 * copy against copyN is what cutting the copies does over a slow link (PCIe: Hopper cards without
 * NVLink), nv1 against nv8 over NVLink.
 * Every call first raises the epoch by a copy-engine write (the same in every variant).
 * Check: copy's, copy8's, copym's, copyg's and copyx's outputs must equal plain's bit for bit (same tiles, same k
 * order), and no call times out; for the check the shards' rows are first overwritten with NaNs and copied whole,
 * so a tile that read its rows before their piece's flag would differ.
 */
#include <string.h>

#include "copy_chunks.h"
#include "selftest_util.cuh"

/* The all-gather problems of BENCHMARKS.md per GPU at TP = tp: the gathered M x N / tp x K. */
static const tp_problem g_ag[] = {{"405B-fc1", 16384, 53248, 16384, 2}, {"70B-fc1", 16384, 28672, 8192, 2},
                                  {"70B-qkv", 16384, 5120, 8192, 2},    {"8B-qkv", 8192, 3072, 4096, 2},
                                  {"405B-fc1", 16384, 26624, 16384, 4}, {"70B-fc1", 16384, 14336, 8192, 4},
                                  {"70B-qkv", 16384, 2560, 8192, 4},    {"8B-qkv", 8192, 1536, 4096, 4},
                                  {"70B-fc1", 16384, 7168, 8192, 8},    {"70B-qkv", 16384, 1280, 8192, 8},
                                  {"8B-qkv", 8192, 768, 4096, 8}};
#define NAG ((int)(sizeof g_ag / sizeof g_ag[0]))
/* --ag-few: the all-gather anchors' N (per GPU: N / tp) and K at M = 128, 256 and 512, TP = 2, 4 and 8 */
enum { AG_FEW_MS = 3, AG_FEW_BASES = 4, AG_FEW_TPS = 3, NAG_FEW = AG_FEW_MS * AG_FEW_BASES * AG_FEW_TPS };
static tp_problem g_ag_few[NAG_FEW];
static char g_ag_few_names[NAG_FEW][32];
#define NAG_MAX (NAG_FEW > NAG ? NAG_FEW : NAG)

static void ag_few_problems()
{
    static const int ms[AG_FEW_MS] = {128, 256, 512}, tps[AG_FEW_TPS] = {2, 4, 8};
    static const tp_problem bases[AG_FEW_BASES] = {{"405B-fc1", 0, 106496, 16384, 1}, {"70B-fc1", 0, 57344, 8192, 1},
                                                   {"70B-qkv", 0, 10240, 8192, 1}, {"8B-qkv", 0, 6144, 4096, 1}};
    few_token_problems(g_ag_few, g_ag_few_names, bases, AG_FEW_BASES, ms, AG_FEW_MS, tps, AG_FEW_TPS, 'n');
}

enum { V_PLAIN, V_WALK, V_WALK8, V_COPY, V_COPY4, V_COPY8, V_NV1, V_NV8, V_MINOR, V_NV1M, V_COPYM, V_NV1G, V_COPYG,
       V_NV1X, V_COPYX, NV };
static const char *const kVariant[NV] = {"plain", "walk",  "walk8", "copy", "copy4", "copy8", "nv1",  "nv8",
                                         "minor", "nv1m", "copym", "nv1g", "copyg", "nv1x", "copyx"};
/* pieces a stage's copy is cut into (0: no copy) and flags it raises; walk8 (8 flags, no copies) is the
 * kernel's side of the cut alone */
static const int kPieces[NV] = {0, 0, 0, 1, 4, 8, 1, 8, 0, 1, 1, 1, 1, 1, 1};
static const int kFlags[NV] = {0, 1, 8, 1, 4, 8, 1, 8, 1, 1, 1, 1, 1, 1, 1};
/* nv1x, copyx: one stage of all M rows (as plain) behind the last stage's flag */
static bool gathered(int v) { return v == V_NV1X || v == V_COPYX; }
static bool interleaved(int v) { return v >= V_MINOR && !gathered(v); }
/* nv1g, copyg (and the gathered ones): every stage (0 too) waiting on the last stage's flag - the copies run one
 * after another on one stream, as a device's copies do in its graph (copy_plan.h), so the last flag means all
 * shards */
static bool gated(int v) { return v >= V_NV1G; }
static bool nvlink_timed(int v) { return v == V_NV1 || v == V_NV8 || v == V_NV1M || v == V_NV1G || v == V_NV1X; }
/* the variants run: all on the anchors, these at few tokens; --variants: plain and the named ones */
static const int kFewVariants[] = {V_PLAIN, V_MINOR, V_NV1, V_NV1G, V_COPYG};
static bool g_ag_few_mode = false;
static const char *g_ag_variants = NULL;
static bool runs(int v)
{
    if (g_ag_variants) return v == V_PLAIN || selftest_listed(g_ag_variants, kVariant[v]);
    if (!g_ag_few_mode) return true;
    for (int f : kFewVariants)
        if (f == v) return true;
    return false;
}
/* GB/s of a copy-engine copy between two H200s over NVLink (docs/PERF_NOTES.md: ~395) */
static const double kNvlinkGBs = 395.0;

/* Buffers of one problem: A (gathered), its shards 1.. as a peer would hold them, B, D, flags. */
struct ag_bufs {
    void *A, *B, *D;
    void *peer;            /* pinned host memory: see the header */
    unsigned int *F;       /* F[s * TPG_MAX_COPY_CHUNKS + c]: stage s's flag of piece c */
    size_t shard;          /* bytes of one shard (M / TP rows of A) in the operand type being run */
    size_t row;            /* bytes of one row of A */
    int tile_rows;         /* BM of the kernel being run: pieces are whole tiles of rows */
    double nv_fraction;    /* nvN: the part of a piece's bytes that PCIe moves in NVLink's time for all */
    bool whole;            /* copy whole pieces (the check) instead of nv_fraction of them */
    unsigned int *host_ep; /* pinned: the epoch of each call of a window, read by copy-engine writes */
    cudaStream_t copy;     /* the copy engine's stream, as the graph's COPY / FLAG nodes */
    cudaEvent_t start;
};

/* Rows of a piece of a stage's M / TP rows when cut into n (0: whole). */
static int piece_rows(const ag_bufs &b, const tp_problem &P, int n)
{
    return n > 1 ? tpg_copy_chunk_rows(P.m / P.tp, b.tile_rows, n) : 0;
}

/* One call of variant v: raise the epoch; on the copy stream, from then on, each stage's shard (copy
 * variant) or its pieces (nvN), each followed by its flag; then the kernel. */
static void ag_call(const kern &K, const tpg_gemm_params *p, const ctl &c, const ag_bufs &b, const tp_problem &P,
                    int v, unsigned int *ep)
{
    CK(cudaMemcpyAsync(c.epoch, ep, 4, cudaMemcpyHostToDevice, 0));
    if (v != V_PLAIN) {
        CK(cudaEventRecord(b.start, 0));
        CK(cudaStreamWaitEvent(b.copy, b.start, 0));
        const size_t shard = b.shard;
        const int n = kPieces[v] > kFlags[v] ? kPieces[v] : kFlags[v];
        const int rows = P.m / P.tp, cut = piece_rows(b, P, n);
        const int pieces = cut ? tpg_copy_chunk_count(rows, cut) : 1;
        for (int s = 1; s < P.tp; ++s)
            for (int c = 0; c < pieces; ++c) {
                const int r0 = c * (cut ? cut : rows), nr = (cut && r0 + cut < rows ? cut : rows - r0);
                const size_t off = (size_t)s * shard + (size_t)r0 * b.row;
                size_t bytes = (size_t)nr * b.row;
                if (nvlink_timed(v) && !b.whole) bytes = ((size_t)(bytes * b.nv_fraction) + 15) / 16 * 16;
                if (kPieces[v])
                    CK(cudaMemcpyAsync((char *)b.A + off, (char *)b.peer + off - shard, bytes, cudaMemcpyHostToDevice,
                                       b.copy));
                if (kFlags[v] > 1 || c == pieces - 1) /* one flag per piece, or one after the last */
                    CK(cudaMemcpyAsync(b.F + s * TPG_MAX_COPY_CHUNKS + (kFlags[v] > 1 ? c : 0), ep, 4,
                                       cudaMemcpyHostToDevice, b.copy));
            }
    }
    launch(K, p, 0);
}

static unsigned int g_next_epoch = 1;

/* One window of `iters` calls; milliseconds on the kernel's stream. */
static double ag_window_ms(const kern &K, const tpg_gemm_params *p, const ctl &c, const ag_bufs &b,
                           const tp_problem &P, int v, int iters)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0, 0));
    for (int it = 0; it < iters; ++it) {
        b.host_ep[it] = g_next_epoch++;
        ag_call(K, p, c, b, P, v, b.host_ep + it);
    }
    CK(cudaEventRecord(e1, 0));
    sync_watchdog(K.name);
    CK(cudaStreamSynchronize(b.copy)); /* the pinned epochs are reused by the next window */
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return ms;
}

/* plain: one stage of M rows; the others: TP stages of M / TP rows (test_wait's layout, TP blocks), stage
 * s > 0 waiting on its flags, one per piece of variant v's cut. */
static void ag_params(tpg_gemm_params *p, const ctl &c, const kern &K, const ag_bufs &b, const tp_problem &P, int v)
{
    const bool walk = v != V_PLAIN && !gathered(v);
    const int S = walk ? P.tp : 1, m = P.m / S;
    base_params(p, c, m, P.n, P.k, 1, S);
    p->stage_minor = interleaved(v);
    for (int s = 0; s < S; ++s) {
        tpg_stage_params *sp = &p->stage[s];
        map_a(&sp->a_map, K, b.A, P.m, P.k);
        map_b(&sp->b_map, K, b.B, P.n, P.k);
        sp->a_row0 = s * m;
        sp->a_batch_rows = P.m;
        sp->b_batch_rows = P.n;
        set_dest(p, s, K, (char *)b.D + (size_t)s * m * P.n * 2, P.n, (long long)P.m * P.n);
        if (s > 0) sp->wait_flag = b.F + s * TPG_MAX_COPY_CHUNKS;
        if (gated(v)) sp->wait_flag = b.F + (P.tp - 1) * TPG_MAX_COPY_CHUNKS;
        sp->wait_chunk_rows = piece_rows(b, P, kFlags[v]);
    }
}

static __global__ void count_diff(const unsigned short *x, const unsigned short *y, size_t n, unsigned int *diff)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (x[i] != y[i]) atomicAdd(diff, 1u);
}

/* Variant v's output against plain's, bit for bit, with the shards' rows NaN until copied (whole); the
 * number of differing elements. */
static unsigned int ag_check(const kern &K, const tpg_gemm_params *plain, const tpg_gemm_params *walk, const ctl &c,
                             ag_bufs &b, const tp_problem &P, int v, void *Dref, unsigned int *diff)
{
    const size_t mn = (size_t)P.m * P.n;
    CK(cudaMemset(b.D, 0xFF, mn * 2));
    ag_window_ms(K, plain, c, b, P, V_PLAIN, 1);
    CK(cudaMemcpy(Dref, b.D, mn * 2, cudaMemcpyDeviceToDevice));
    CK(cudaMemset(b.D, 0xFF, mn * 2));
    CK(cudaMemset((char *)b.A + b.shard, 0xFF, (P.tp - 1) * b.shard));
    b.whole = true;
    ag_window_ms(K, walk, c, b, P, v, 1);
    b.whole = false;
    CK(cudaMemset(diff, 0, 4));
    count_diff<<<1024, 256>>>((const unsigned short *)b.D, (const unsigned short *)Dref, mn, diff);
    unsigned int h;
    CK(cudaMemcpy(&h, diff, 4, cudaMemcpyDeviceToHost));
    return h;
}

static double g_ag_tf[NAG_MAX][SELFTEST_MAX_KERNELS][NV];
static tp_problem g_ag_run[NAG_MAX]; /* the problems run, in order (print_ag_perf) */
static int g_ag_nrun = 0;

/* Bytes per second of a pinned-host -> device copy of `bytes` on the copy stream (the PCIe the nvN
 * variants scale by). */
static double pcie_rate(const ag_bufs &b, size_t bytes)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float ms = 0.f;
    for (int rep = 0; rep < 2; ++rep) { /* the second one counts */
        CK(cudaEventRecord(e0, b.copy));
        CK(cudaMemcpyAsync((char *)b.A + b.shard, b.peer, bytes, cudaMemcpyHostToDevice, b.copy));
        CK(cudaEventRecord(e1, b.copy));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return bytes / (ms * 1e-3);
}

/* Every variant of every kernel on problem P: a warm-up round, then 4 rounds of every (kernel, variant)
 * window, reversed on alternate rounds (selftest_rs_perf.cu says why). */
static void ag_perf_problem(const kern *ks, int nk, const ctl &c, const tp_problem &P, double (*tf)[NV])
{
    const int rounds = 4, nw = NV * nk;
    const double flop = 2.0 * P.m * P.n * (double)P.k;
    const int iters = g_ag_few_mode ? few_window_calls(flop) : perf_window_calls(flop);
    const size_t shard = (size_t)(P.m / P.tp) * P.k * 2; /* the largest operand type's: buffers fit them all */
    ag_bufs b;
    b.A = dalloc((size_t)P.m * P.k * 2);
    CK(cudaMallocHost(&b.peer, (P.tp - 1) * shard));
    b.B = dalloc((size_t)P.n * P.k * 2);
    b.D = dalloc((size_t)P.m * P.n * 2);
    b.F = (unsigned int *)dalloc(4 * 8 * TPG_MAX_COPY_CHUNKS);
    CK(cudaMemset(b.F, 0, 4 * 8 * TPG_MAX_COPY_CHUNKS));
    b.whole = false;
    CK(cudaMallocHost(&b.host_ep, (size_t)(iters > 32 ? iters : 32) * 4));
    CK(cudaStreamCreateWithFlags(&b.copy, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&b.start, cudaEventDisableTiming));
    void *Dref = dalloc((size_t)P.m * P.n * 2);
    unsigned int *diff = (unsigned int *)dalloc(4);
    set_epoch(c, g_next_epoch);
    double t[SELFTEST_MAX_KERNELS][NV] = {{0}};
    for (int dt = 0; dt < 4; ++dt) { /* the kernels of each operand type (bf16, fp16, e4m3, e5m2) on their operands */
        static tpg_gemm_params prm[SELFTEST_MAX_KERNELS][NV];
        int any = 0;
        for (int i = 0; i < nk; ++i) {
            if (ks[i].s.dtype != dt) continue;
            if (!any++) {
                b.shard = (size_t)(P.m / P.tp) * P.k * ab_bytes(ks[i]);
                b.row = (size_t)P.k * ab_bytes(ks[i]);
                rand_fill(ks[i], b.A, (size_t)P.m * P.k, 7101);
                rand_fill(ks[i], b.B, (size_t)P.n * P.k, 7102);
                CK(cudaMemcpy(b.peer, (char *)b.A + b.shard, (P.tp - 1) * b.shard, cudaMemcpyDeviceToHost));
                const double pcie = pcie_rate(b, b.shard);
                b.nv_fraction = fmin(1.0, pcie / (kNvlinkGBs * 1e9));
                printf("ag-perf %s TP %d: PCIe %.1f GB/s, nvN copies %.3f of each piece\n", P.name, P.tp, pcie / 1e9,
                       b.nv_fraction);
            }
            b.tile_rows = ks[i].s.bm;
            for (int v = 0; v < NV; ++v) ag_params(&prm[i][v], c, ks[i], b, P, v);
        }
        if (!any) continue;
        int failed = 0;
        for (int r = -1; r < rounds && !failed; ++r) /* round -1: warm-up, not counted */
            for (int w = 0; w < nw && !failed; ++w) {
                const int x = r % 2 ? nw - 1 - w : w, i = x / NV, v = x % NV;
                if (ks[i].s.dtype != dt || !runs(v)) continue;
                b.tile_rows = ks[i].s.bm;
                const double ms = ag_window_ms(ks[i], &prm[i][v], c, b, P, v, r < 0 ? 2 : iters);
                if (r >= 0) t[i][v] += ms;
                if (r < 0 && (failed = get_status(c) != TPG_DEVICE_OK)) { /* a timeout: name it, skip the problem */
                    char name[64], val[64];
                    snprintf(name, 64, "ag-perf %s TP %d %s (warm-up)", P.name, P.tp, kVariant[v]);
                    snprintf(val, 64, "status=%u", get_status(c));
                    record(name, ks[i], val, "status=0", 0);
                }
            }
        if (failed) {
            set_epoch(c, g_next_epoch); /* clears the status */
            continue;
        }
        for (int i = 0; i < nk; ++i)
            for (int v : {V_COPY, V_COPY8, V_COPYM, V_COPYG, V_COPYX}) {
                if (ks[i].s.dtype != dt || !runs(v)) continue;
                b.tile_rows = ks[i].s.bm;
                const unsigned int nd = ag_check(ks[i], &prm[i][V_PLAIN], &prm[i][v], c, b, P, v, Dref, diff);
                const unsigned int st = get_status(c);
                char name[64], val[64];
                snprintf(name, 64, "ag-perf %s TP %d %s = plain (status)", P.name, P.tp, kVariant[v]);
                snprintf(val, 64, "status=%u diff=%u", st, nd);
                record(name, ks[i], val, "status=0 diff=0", st == TPG_DEVICE_OK && nd == 0);
            }
    }
    for (int i = 0; i < nk; ++i)
        for (int v = 0; v < NV; ++v) tf[i][v] = t[i][v] > 0 ? flop * iters * rounds / (t[i][v] * 1e-3) / 1e12 : 0;
    CK(cudaFreeHost(b.host_ep));
    CK(cudaStreamDestroy(b.copy));
    CK(cudaEventDestroy(b.start));
    CK(cudaFreeHost(b.peer));
    cudaFree(b.A); cudaFree(b.B); cudaFree(b.D); cudaFree(b.F); cudaFree(Dref); cudaFree(diff);
}

/* Whether every comma-separated name of `names` is one of kVariant. */
static bool variants_known(const char *names)
{
    for (const char *at = names; *at;) {
        const size_t n = strcspn(at, ",");
        bool known = false;
        for (int v = 0; v < NV; ++v) known |= strlen(kVariant[v]) == n && strncmp(at, kVariant[v], n) == 0;
        if (!known) return false;
        at += n + (at[n] == ',');
    }
    return true;
}

/* The whole --ag-perf run: every listed kernel (any operand type) on every problem of the anchors' table, or with
 * few the few-token table's; `problems` (NULL: all) names some. */
void ag_perf(const kern *ks, int nk, const ctl &c, bool few, const char *problems, const char *variants)
{
    g_ag_few_mode = few;
    g_ag_variants = variants;
    if (variants && !variants_known(variants)) { /* a misspelt name must not leave plain running alone as if asked */
        if (nk > 0) record("ag-perf --variants (names of this file's variants)", ks[0], variants, "known names", 0);
        return;
    }
    if (few) ag_few_problems();
    const tp_problem *table = few ? g_ag_few : g_ag;
    g_ag_nrun = 0;
    for (int pi = 0; pi < (few ? NAG_FEW : NAG); ++pi) {
        if (!selftest_listed(problems, table[pi].name)) continue;
        case_guard(table[pi].name, 300);
        ag_perf_problem(ks, nk < SELFTEST_MAX_KERNELS ? nk : SELFTEST_MAX_KERNELS, c, table[pi], g_ag_tf[g_ag_nrun]);
        g_ag_run[g_ag_nrun++] = table[pi];
    }
    if (g_ag_nrun == 0 && nk > 0) /* a misspelt name must not pass as an empty table */
        record("ag-perf --problem (a problem of this mode's table)", ks[0], problems, "a problem's name", 0);
}

void print_ag_perf(const kern *ks, int nk)
{
    nk = nk < SELFTEST_MAX_KERNELS ? nk : SELFTEST_MAX_KERNELS;
    printf("\n## all-gather on one GPU: plain GEMM vs the fused walk, without and with the shard copies (TFLOP/s; "
           "ratio = variant speed / plain speed; copyN: PCIe copies in N pieces; nvN: NVLink-timed; walk8: 8 flags, "
           "no copies; minor, nv1m, copym: walk, nv1, copy with the stages interleaved; nv1g, copyg: nv1m, copym "
           "with every stage waiting on the last shard; nv1x, copyx: plain behind the last shard; 4 interleaved "
           "rounds, alternate ones reversed)\n\n| problem (per GPU) | TP |");
    for (int i = 0; i < nk; ++i)
        for (int v = 0; v < NV; ++v)
            if (runs(v)) printf(" %s %s |", ks[i].name, kVariant[v]);
    printf("\n|---|---|");
    for (int i = 0; i < nk; ++i)
        for (int v = 0; v < NV; ++v)
            if (runs(v)) printf("---|");
    printf("\n");
    for (int pi = 0; pi < g_ag_nrun; ++pi) {
        const tp_problem &P = g_ag_run[pi];
        printf("| %s %dx%dx%d | %d |", P.name, P.m, P.n, P.k, P.tp);
        for (int i = 0; i < nk; ++i) {
            const double *tf = g_ag_tf[pi][i];
            printf(" %.1f |", tf[V_PLAIN]);
            for (int v = V_WALK; v < NV; ++v)
                if (runs(v)) printf(" %.1f (%.3f) |", tf[v], tf[v] / tf[V_PLAIN]);
        }
        printf("\n");
    }
}
