/* Reduce-scatter epilogue timing on one GPU (`kernel_selftest --rs-perf`): what a fused reduce-scatter
 * (TP = 2 or 4; TP = 8 too with --rs-few) costs a kernel beyond its local GEMM, without the other GPUs.
 *
 * Why: at TP = 2 the fused reduce-scatter ran 0.92-0.94 of its local GEMM on 405B-fc2, 70B-fc2 and 70B-o
 * (docs/PERF_NOTES.md), and part of that is the stage-1 epilogue, which reads the received partial: 13.4 us
 * a tile in the wide kernel against 1.85 locally (405B-fc2 trace). That part does not need the peer: here
 * each kernel runs the local ring of the per-GPU problem (ring_params: each stage but the last writes its
 * partial to a local buffer standing in for the next peer's slot and raises the tile flags, the next stage
 * waits on them and adds the partial - the fused walk's order and epilogues; TP stages) next to the plain one-stage
 * GEMM of the same M x N x K, interleaved. ring / plain time is the fused / local ratio minus everything
 * of the link (bytes on NVLink, the peer's pace, the clock the links cost). A tiny kernel raises the epoch
 * before every ring launch, so each launch waits for its own flags as a fused call does.
 *
 * Every stage reads the same B (N x K), as the fused TilingA walk does (runtime/src/params.c: only A's rows
 * follow the stage); until 2026-12-02 the ring read a second B per stage, unlike the product.
 *
 * `--rs-parts` splits the ring's cost on the first problems (NPARTS of them): "walk" is the ring's two stages
 * with neither flags nor partials (stage 0 writes the slot, stage 1 writes D), "flags" adds stage 0's tile
 * flags (the stores' completion and the release), and the ring adds stage 1's wait and partial read; "minor" is
 * the ring with the stages interleaved in the walk (p.stage_minor: the runtime's order for one-wave walks and
 * for few rows and much B a stage: runtime/src/params.c). With
 * `--rs-few` the parts are timed on the problems `--problem` names (e.g. `--problem 8B-o-m512`).
 *
 * `--rs-few` times the ring at 128 ... 8192 tokens instead (few_problems: where the wave check picks the 64x128
 * ping-pong, and the wide kernel's per-stage K rule): there a call lasts 10 us - 10 ms, so a window holds up to 4000
 * calls, and the plain GEMM gets the same epoch kernel before each launch as the ring (a launch gap as large
 * as the ring's cost otherwise).
 *
 * `--rs-far` puts the ring's pushes behind a slow link (g_far): each sending stage stores its partial into
 * host-mapped memory (PCIe, ~40-55 GB/s, standing in for NVLink) while the receiving stage still reads the local
 * slot (its values are then stale: timing only). Why: across two GPUs an SM's bulk loads wait behind its bulk
 * stores to the peer (bench/results/experiments/tma_hol.cu), a cost the plain ring cannot show on one GPU. The
 * problems scale 70B-o's K so that the pushes take about the share of the slower link that 70B-o's take of NVLink
 * on x2 (~40%), and twice and half that; a tile's push then drains in about the same fraction of its mainloop as on
 * x2. "far walk" pushes the same bytes without flags, waits or partials: what the stores cost by themselves. First
 * result (2026-12-04 03:03Z): the shipped ping-pong's ring 0.83 / 0.89 / 0.94 of itself with local pushes, as
 * 70B-o's on x2 ran 0.94 of its local GEMM. "far ce" is the ring with local pushes while the copy engine carries
 * the same bytes (every sending stage's partial) into host memory beside each call, from its launch on, the call's
 * time including the copy's: what the copy-engine route of the push (docs/PERF_NOTES.md "Next") would cost the GEMM
 * over the same link, before any flag or band of it is built.
 *
 * Not a check: the ring's values are checked by the ring cases of kernel_selftest.cu (same code path,
 * smaller shapes); here only the status word (no timeout) is.
 */
#include <unistd.h>

#include "selftest_ce_chain.h"
#include "selftest_util.cuh"

/* The reduce-scatter problems of BENCHMARKS.md per GPU at TP = tp: M x N x K / tp in tp stages of M / tp rows
 * (at TP = 4 the two middle stages both receive and send a partial). */
static const tp_problem g_rs[] = {{"405B-fc2", 16384, 16384, 26624, 2}, {"70B-fc2", 16384, 8192, 14336, 2},
                                  {"70B-o", 16384, 8192, 4096, 2},      {"8B-o", 8192, 4096, 2048, 2},
                                  {"405B-fc2", 16384, 16384, 13312, 4}, {"70B-fc2", 16384, 8192, 7168, 4},
                                  {"70B-o", 16384, 8192, 2048, 4}};
#define NRS ((int)(sizeof g_rs / sizeof g_rs[0]))
/* --rs-few: the reduce-scatter anchors' N and K (70B-o, 70B-fc2, 8B-o, 405B-fc2) at M = 128 ... 8192 tokens, TP = 2,
 * 4 and 8 (few_problems fills it): where the wave check and the wide kernel's per-stage K rule pick between tiles. */
enum { FEW_MS = 7, FEW_BASES = 4, FEW_TPS = 3, NFEW = FEW_MS * FEW_BASES * FEW_TPS };
static tp_problem g_few[NFEW];
static char g_few_names[NFEW][32];

static void few_problems()
{
    static const int ms[FEW_MS] = {128, 256, 512, 1024, 2048, 4096, 8192}, tps[FEW_TPS] = {2, 4, 8};
    static const tp_problem bases[FEW_BASES] = {{"70B-o", 0, 8192, 8192, 1}, {"70B-fc2", 0, 8192, 28672, 1},
                                                {"8B-o", 0, 4096, 4096, 1}, {"405B-fc2", 0, 16384, 53248, 1}};
    few_token_problems(g_few, g_few_names, bases, FEW_BASES, ms, FEW_MS, tps, FEW_TPS, 'k');
}
/* --rs-far: 70B-o at TP = 2 (M 16384, N 8192) with K a GPU scaled so that stage 0 pushes its 128 MiB at ~40, ~20 and
 * ~10 GB/s, ~80%, ~40% and ~20% of what bulk stores to host memory take (40-55 GB/s, tma_hol.cu); 70B-o on x2 pushes
 * ~160 GB/s, ~40% of NVLink, like the second */
static const tp_problem g_far[] = {{"far-k16k", 16384, 8192, 16384, 2}, {"far-k32k", 16384, 8192, 32768, 2},
                                   {"far-k64k", 16384, 8192, 65536, 2}};
#define NFAR ((int)(sizeof g_far / sizeof g_far[0]))
#define NMAX (NFEW > NRS ? NFEW : NRS)
static_assert(NFAR <= NMAX, "the selected problems' tables hold NMAX");
static const tp_problem *g_probs = g_rs; /* the run's table: g_rs, or g_few with --rs-few */
static int g_nprob = NRS, g_few_mode = 0;
static unsigned int *g_spare_word; /* --rs-few: what the plain GEMM's epoch kernel bumps */

static __global__ void bump_epoch(unsigned int *epoch) { *epoch += 1u; }

/* "far ce": the copy beside each call (set by rs_perf_problem for that variant's windows only; bytes 0: none). It
 * reads the slot while the call writes it: timing only, as the far variants' values are. */
static struct {
    const void *src;
    void *dst;
    size_t bytes;
    cudaStream_t stream;
    cudaEvent_t launched, copied;
    ce_chain chain;          /* "ce chain" (selftest_ce_chain.cu): its partial, flags and tiles */
    bool chain_on;           /* set for that variant's windows only */
    cudaGraphExec_t graph;   /* "ce graph": the call as one graph (ce_graph), set for that variant's windows only */
    cudaGraphExec_t graphs[SELFTEST_MAX_KERNELS]; /* this problem's, by kernel (built at first use) */
    unsigned int epoch;      /* the host's copy of the device epoch: the ring bumps it before each call */
} g_ce;

/* One window: `iters` launches of K with p (ring: each after an epoch bump); milliseconds. */
static double window_ms(const kern &K, const tpg_gemm_params *p, const ctl &c, bool ring, int iters)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0, 0));
    for (int it = 0; it < iters; ++it) {
        if (g_ce.graph) { /* "ce graph": the epoch's bump, the chain and the GEMM in one graph */
            CK(cudaGraphLaunch(g_ce.graph, 0));
            ++g_ce.epoch;
            continue;
        }
        if (ring || g_few_mode) bump_epoch<<<1, 1>>>(ring ? c.epoch : g_spare_word); /* plain: a word it never reads */
        if (ring) ++g_ce.epoch;
        const bool side = g_ce.bytes || g_ce.chain_on;
        if (side) CK(cudaEventRecord(g_ce.launched, 0)); /* the copies start with the call ... */
        launch(K, p, 0);
        if (side) { /* ... enqueued after it: waits queued ahead of the GEMM on a shared hardware queue
                     * (CUDA_DEVICE_MAX_CONNECTIONS=1) would never end */
            CK(cudaStreamWaitEvent(g_ce.stream, g_ce.launched, 0));
            if (g_ce.bytes) CK(cudaMemcpyAsync(g_ce.dst, g_ce.src, g_ce.bytes, cudaMemcpyDeviceToHost, g_ce.stream));
            if (g_ce.chain_on) ce_chain_enqueue(g_ce.chain, g_ce.epoch);
        }
        if (side) { /* the next call waits for this one's copies: a window holds both */
            CK(cudaEventRecord(g_ce.copied, g_ce.stream));
            CK(cudaStreamWaitEvent(0, g_ce.copied, 0));
        }
    }
    CK(cudaEventRecord(e1, 0));
    sync_watchdog(K.name);
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return ms;
}

/* The variants of one kernel on one problem: plain (one stage), the ring, and with --rs-parts the ring's
 * parts (header comment). The ring's variants share one B: every stage's map reads rows 0 .. n - 1. */
enum { V_PLAIN, V_RING, V_WALK, V_FLAGS, V_MINOR, V_FAR, V_FAR_WALK, V_FAR_CE, V_CE_CHAIN, V_CE_GRAPH, NV };
static const char *const kVariant[NV] = {"plain", "ring", "walk", "flags", "minor", "far", "far walk", "far ce",
                                         "ce chain", "ce graph"};
/* The variants a problem times, in window order: plain and ring; the parts; the pushes over the host link. "far
 * walk" clears the signal flags, so a spread-pushes kernel (TPG_SPREAD_PUSHES) holds nothing there: its pushes go
 * out at once, as the shipped kernels' do. */
static const int kRing[] = {V_PLAIN, V_RING}, kParts[] = {V_PLAIN, V_RING, V_WALK, V_FLAGS, V_MINOR},
                 kFar[] = {V_PLAIN, V_RING, V_FAR, V_FAR_WALK, V_FAR_CE, V_CE_CHAIN, V_CE_GRAPH};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
static char *g_far_sink; /* --rs-far: host-mapped (its device pointer), where the sending stages' pushes land */

static void variant_params(tpg_gemm_params *p, int v, const ctl &c, const kern &K, void *A, void *B, void *X, void *D,
                           unsigned int *F, const tp_problem &P, int tiles)
{
    const int S = P.tp, m = P.m / S;
    if (v == V_PLAIN) {
        base_params(p, c, P.m, P.n, P.k, 1, 1);
        map_a(&p->stage[0].a_map, K, A, P.m, P.k);
        map_b(&p->stage[0].b_map, K, B, P.n, P.k);
        p->stage[0].a_batch_rows = P.m;
        p->stage[0].b_batch_rows = P.n;
        set_dest(p, 0, K, D, P.n, (long long)P.m * P.n);
        return;
    }
    ring_params(p, c, K, A, B, X, D, F, m, P.n, P.k, S, tiles);
    if (v == V_CE_GRAPH) { /* the chain's waits are on the sending stages' tile-row counts (gemm_params.h) */
        p->row_count_flags = F;
        p->row_counts = g_ce.chain.counts;
        p->row_count_tiles_n = (P.n + K.s.bn - 1) / K.s.bn;
    }
    for (int s = 0; s < S; ++s) {
        tpg_stage_params *sp = &p->stage[s];
        map_b(&sp->b_map, K, B, P.n, P.k);
        sp->b_row0 = 0;
        sp->b_batch_rows = P.n;
        if (v == V_RING || v == V_FAR_CE || v == V_CE_GRAPH) continue; /* the ring's own pushes, copies beside */
        if (v == V_CE_CHAIN) { /* the receiver waits on the flags the chain writes after its copy */
            if (s > 0) sp->partial_flags = g_ce.chain.arrived + (size_t)(s - 1) * tiles;
            continue;
        }
        if (v == V_FAR || v == V_FAR_WALK) { /* the push crosses the host link; the next stage reads X (stale) */
            if (s < S - 1)
                set_dest(p, s, K, g_far_sink + partial_bytes(K) * s * (size_t)m * P.n, P.n, (long long)m * P.n, true);
            if (v == V_FAR) continue;
            sp->partial = nullptr; /* far walk: the same pushes without flags, waits or partials */
            sp->partial_flags = nullptr;
            sp->signal_flags = nullptr;
            continue;
        }
        if (v == V_MINOR) { /* the ring with its stages interleaved in the walk (gemm_params.h: stage_minor) */
            p->stage_minor = 1;
            continue;
        }
        sp->partial = nullptr; /* walk, flags: stage 1 neither waits nor reads */
        sp->partial_flags = nullptr;
        if (v == V_WALK) sp->signal_flags = nullptr;
    }
}

/* "ce graph": one call as a graph - the epoch's bump, then in two branches the GEMM and the chain in its graph form
 * (ce_chain_enqueue_counted: mem-op waits on the band counters, writes of 0, copies), joined; no receiver waits on
 * the chain (stage 1 waits on the sent flags, as the ring). Nothing CUDA can see orders the chain after the GEMM's
 * start: if the graph ever ran it ahead of the GEMM instead of beside it, its first wait would never end (the
 * window's watchdog then stops the run) - the hang the runtime's graph form must never meet (a launch-completion
 * edge from the kernel node, CUDA 12.3+, would rule it out). */
static cudaGraphExec_t ce_graph(const kern &K, const tpg_gemm_params *p, const ctl &c)
{
    cudaStream_t cs;
    cudaEvent_t fork, join;
    CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    CK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
    bump_epoch<<<1, 1, 0, cs>>>(c.epoch);
    CK(cudaEventRecord(fork, cs));
    launch(K, p, cs);
    CK(cudaStreamWaitEvent(g_ce.stream, fork, 0));
    ce_chain_enqueue_counted(g_ce.chain);
    CK(cudaEventRecord(join, g_ce.stream));
    CK(cudaStreamWaitEvent(cs, join, 0));
    cudaGraph_t g;
    CK(cudaStreamEndCapture(cs, &g));
    cudaGraphExec_t x;
    CK(cudaGraphInstantiate(&x, g, 0));
    CK(cudaGraphDestroy(g));
    CK(cudaEventDestroy(fork));
    CK(cudaEventDestroy(join));
    CK(cudaStreamDestroy(cs));
    return x;
}

/* The side stream's work for variant v's windows: "far ce" the copy of every sending stage's partial, "ce chain"
 * the chain of stage 0's (TP = 2: the --rs-far problems), "ce graph" the call as a graph; nothing for the
 * others. Kernel i of the problem's list, with its params p. */
static void side_for(int v, const kern &K, const tp_problem &P, int i, const tpg_gemm_params *p, const ctl &c)
{
    g_ce.bytes = v == V_FAR_CE ? (size_t)(P.tp - 1) * (P.m / P.tp) * P.n * partial_bytes(K) : 0;
    g_ce.chain_on = v == V_CE_CHAIN;
    g_ce.graph = nullptr;
    ce_chain &ch = g_ce.chain;
    ch.stream = g_ce.stream;
    ch.src = g_ce.src;
    ch.dst = g_ce.dst;
    ch.m = P.m / P.tp;
    ch.n = P.n;
    ch.bm = K.s.bm;
    ch.bn = K.s.bn;
    ch.elem_bytes = (int)partial_bytes(K);
    if (v != V_CE_GRAPH) return;
    /* from 0: a window its watchdog stopped may have left counts behind */
    CK(cudaMemset(ch.counts, 0, (size_t)((ch.m + ch.bm - 1) / ch.bm) * 4));
    if (!g_ce.graphs[i]) g_ce.graphs[i] = ce_graph(K, p, c);
    g_ce.graph = g_ce.graphs[i];
}

/* TPG_DIAG_PHASES instances (diag_phases.cuh): one two-call window of each variant after the timed rounds, and its
 * per-stage sums as table rows (the table's head: rs_perf) */
static void phase_rows(const kern *ks, int nk, const ctl &c, const tp_problem &P, const int *vl, int nv,
                       tpg_gemm_params (*prm)[NV])
{
    for (int i = 0; i < nk; ++i)
        for (int w = 0; ks[i].s.phases && w < nv; ++w) {
            char label[96];
            snprintf(label, sizeof label, "%s %dx%dx%d | %s | %s", P.name, P.m, P.n, P.k, ks[i].name, kVariant[vl[w]]);
            ks[i].s.phases(nullptr);
            side_for(vl[w], ks[i], P, i, &prm[i][vl[w]], c);
            window_ms(ks[i], &prm[i][vl[w]], c, vl[w] != V_PLAIN, 2);
            side_for(V_PLAIN, ks[i], P, i, &prm[i][vl[w]], c);
            ks[i].s.phases(label);
        }
}

/* Every variant of every kernel on problem P: a warm-up round, then 4 rounds of every (kernel, variant)
 * window, in order and reversed on alternate rounds (the card heats up during a round: a fixed order
 * favours whatever runs first). Fills ratio[i] = plain / ring time of kernel i and tf[i][v] = variant v's
 * TFLOP/s for the nv variants of vl (kRing, kParts or kFar). */
static void rs_perf_problem(const kern *ks, int nk, const ctl &c, const tp_problem &P, const int *vl, int nv,
                            double *ratio, double (*tf)[NV])
{
    const int S = P.tp, m = P.m / S, rounds = 4;
    const double flop = 2.0 * P.m * P.n * (double)P.k;
    int iters = perf_window_calls(flop);
    if (g_few_mode) iters = few_window_calls(flop); /* the calls are too short for perf_window_calls' 30 */
    /* operands per element type (0 bf16, 1 fp16, 2 e4m3, 3 e5m2), the same random values for every kernel of a type */
    void *A[4] = {nullptr, nullptr, nullptr, nullptr}, *B[4] = {nullptr, nullptr, nullptr, nullptr};
    for (int i = 0; i < nk; ++i) {
        const int dt = ks[i].s.dtype;
        if (A[dt]) continue;
        A[dt] = dalloc((size_t)P.m * P.k * 2);
        B[dt] = dalloc((size_t)P.n * P.k * 2);
        rand_fill(ks[i], A[dt], (size_t)P.m * P.k, 7001);
        rand_fill(ks[i], B[dt], (size_t)P.n * P.k, 7002);
    }
    void *X = dalloc((size_t)(S - 1) * m * P.n * 4), *D = dalloc((size_t)P.m * P.n * 2); /* fp32 partials fit too */
    const int tiles = ((m + 63) / 64) * ((P.n + 63) / 64); /* >= tiles of a stage for any tile shape */
    unsigned int *F = (unsigned int *)dalloc((size_t)(S - 1) * tiles * 4);
    CK(cudaMemset(F, 0, (size_t)(S - 1) * tiles * 4));
    set_epoch(c, 1);
    g_ce.epoch = 1;
    g_ce.src = X; /* "far ce", "ce chain": the sending stages' partials, as the ring wrote them */
    g_ce.chain.sent = F;
    g_ce.chain.arrived = (unsigned int *)dalloc((size_t)(S - 1) * tiles * 4); /* "ce chain": the receiver's flags */
    /* "ce graph": the sending stages' tile-row counts (tpg_gemm_params.row_counts), fewer than their flags */
    g_ce.chain.counts = (unsigned int *)dalloc((size_t)(S - 1) * tiles * 4);
    CK(cudaMemset(g_ce.chain.counts, 0, (size_t)(S - 1) * tiles * 4));
    CK(cudaMemset(g_ce.chain.arrived, 0, (size_t)(S - 1) * tiles * 4));
    static tpg_gemm_params prm[SELFTEST_MAX_KERNELS][NV];
    for (int i = 0; i < nk; ++i)
        for (int w = 0; w < nv; ++w)
            variant_params(&prm[i][vl[w]], vl[w], c, ks[i], A[ks[i].s.dtype], B[ks[i].s.dtype], X, D, F, P, tiles);
    double t[SELFTEST_MAX_KERNELS][NV] = {{0}};
    for (int r = -1; r < rounds; ++r) /* round -1: warm-up, not counted */
        for (int w = 0; w < nv * nk; ++w) {
            const int x = r % 2 ? nv * nk - 1 - w : w, i = x / nv, v = vl[x % nv];
            /* every variant but plain raises the epoch first: flags of earlier launches must not count */
            side_for(v, ks[i], P, i, &prm[i][v], c);
            const double ms = window_ms(ks[i], &prm[i][v], c, v != V_PLAIN, r < 0 ? 2 : iters);
            side_for(V_PLAIN, ks[i], P, i, &prm[i][v], c);
            if (r >= 0) t[i][v] += ms;
        }
    phase_rows(ks, nk, c, P, vl, nv, prm);
    const unsigned int st = get_status(c);
    for (int i = 0; i < nk; ++i) {
        ratio[i] = t[i][V_PLAIN] / t[i][V_RING];
        for (int w = 0; w < nv; ++w) tf[i][vl[w]] = flop * iters * rounds / (t[i][vl[w]] * 1e-3) / 1e12;
        char name[64], val[64];
        snprintf(name, 64, "rs-perf %s TP %d ring (status)", P.name, P.tp);
        snprintf(val, 64, "status=%u ring/plain %.3f", st, ratio[i]);
        record(name, ks[i], val, "status=0", st == TPG_DEVICE_OK);
    }
    for (int dt = 0; dt < 4; ++dt) {
        cudaFree(A[dt]);
        cudaFree(B[dt]);
    }
    cudaFree(X); cudaFree(D); cudaFree(F); cudaFree(g_ce.chain.arrived); cudaFree(g_ce.chain.counts);
    for (int i = 0; i < nk; ++i)
        if (g_ce.graphs[i]) {
            CK(cudaGraphExecDestroy(g_ce.graphs[i]));
            g_ce.graphs[i] = nullptr;
        }
}

/* --rs-parts: the parts on the TP = 2 problems with per-stage K >= 7168 (405B-fc2, 70B-fc2), where the wide
 * kernel's ring read 0.96-1.02 of its plain GEMM depending on the machine (docs/PERF_NOTES.md). */
#define NPARTS 2
static double g_ratio[NMAX][SELFTEST_MAX_KERNELS], g_tf[NMAX][SELFTEST_MAX_KERNELS][NV];
static const int *g_vl[NMAX]; /* a problem's variants (kRing, kParts, kFar) */
static int g_nv[NMAX];

/* The whole --rs-perf run: every listed kernel (any operand type) on every problem named in `problems` (all where
 * NULL: `--problem 70B-fc2-m128` times that one, at each TP it has, for a profiler's run). */
void rs_perf(const kern *ks, int nk, const ctl &c, bool parts, bool few, bool far, const char *problems)
{
    g_few_mode = few;
    if (few && !g_spare_word) {
        g_spare_word = (unsigned int *)dalloc(4);
        few_problems();
    }
    if (far && !g_far_sink) { /* every sending stage's partial of the largest problem, fp32 */
        size_t bytes = 0;
        for (int pi = 0; pi < NFAR; ++pi) {
            const size_t b = (size_t)(g_far[pi].tp - 1) * (g_far[pi].m / g_far[pi].tp) * g_far[pi].n * 4;
            bytes = b > bytes ? b : bytes;
        }
        char *host;
        CK(cudaHostAlloc((void **)&host, bytes, cudaHostAllocMapped));
        CK(cudaHostGetDevicePointer((void **)&g_far_sink, host, 0));
        g_ce.dst = host; /* "far ce" copies into the same host memory */
        CK(cudaStreamCreateWithFlags(&g_ce.stream, cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&g_ce.launched, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&g_ce.copied, cudaEventDisableTiming));
        if (!ce_chain_available()) { /* "ce chain" needs stream memory operations */
            fprintf(stderr, "--rs-far: cuStreamBatchMemOp is not available (the \"ce chain\" variant needs it)\n");
            exit(2);
        }
    }
    for (int i = 0; i < nk && i < SELFTEST_MAX_KERNELS; ++i)
        if (ks[i].s.phases) { /* TPG_DIAG_PHASES instances: phase_rows prints the rows problem by problem */
            printf("\n## where a ping-pong tile's time goes (TPG_DIAG_PHASES; kcycles a tile, the grid's mean over a "
                   "two-call window; stage 1 = every stage after 0)\n\n| problem | kernel | variant | stage | tiles | "
                   "turn wait | mainloop | epilogue | its start | buffer waits | producer's slot waits |\n"
                   "|---|---|---|---|---|---|---|---|---|---|---|\n");
            break;
        }
    const tp_problem *table = few ? g_few : far ? g_far : g_rs;
    static tp_problem selected[NMAX];
    g_nprob = 0;
    for (int pi = 0; pi < (few ? NFEW : far ? NFAR : NRS); ++pi) {
        if (!selftest_listed(problems, table[pi].name)) continue;
        case_guard(table[pi].name, 300);
        /* the parts: the anchors' long-K problems, or with --rs-few the problems named by --problem */
        const bool with_parts = parts && (few ? problems != NULL : pi < NPARTS);
        g_vl[g_nprob] = far ? kFar : with_parts ? kParts : kRing;
        g_nv[g_nprob] = far ? COUNT(kFar) : with_parts ? COUNT(kParts) : COUNT(kRing);
        rs_perf_problem(ks, nk < SELFTEST_MAX_KERNELS ? nk : SELFTEST_MAX_KERNELS, c, table[pi], g_vl[g_nprob],
                        g_nv[g_nprob], g_ratio[g_nprob], g_tf[g_nprob]);
        selected[g_nprob++] = table[pi];
    }
    g_probs = selected;
    if (g_nprob == 0 && nk > 0) /* a misspelt name must not pass as an empty table */
        record("rs-perf --problem (a problem of this mode's table)", ks[0], problems, "a problem's name", 0);
}

void print_rs_perf(const kern *ks, int nk)
{
    nk = nk < SELFTEST_MAX_KERNELS ? nk : SELFTEST_MAX_KERNELS;
    printf("\n## reduce-scatter on one GPU: plain GEMM vs the TP-stage local ring (TFLOP/s; ratio = ring "
           "speed / plain speed; 4 interleaved rounds, alternate ones reversed; vs first = ring speed / the first kernel's)\n\n| problem (per GPU) | TP |");
    for (int i = 0; i < nk; ++i) printf(" %s plain | %s ring (ratio, vs first) |", ks[i].name, ks[i].name);
    printf("\n|---|---|");
    for (int i = 0; i < nk; ++i) printf("---|---|");
    printf("\n");
    for (int pi = 0; pi < g_nprob; ++pi) {
        printf("| %s %dx%dx%d | %d |", g_probs[pi].name, g_probs[pi].m, g_probs[pi].n, g_probs[pi].k, g_probs[pi].tp);
        for (int i = 0; i < nk; ++i)
            printf(" %.1f | %.1f (%.3f, %.3f) |", g_tf[pi][i][V_PLAIN], g_tf[pi][i][V_RING], g_ratio[pi][i],
                   g_tf[pi][i][V_RING] / g_tf[pi][0][V_RING]);
        printf("\n");
    }
    if (g_nprob > 0 && g_vl[0] == kFar) {
        printf("\n## pushes over the host link (--rs-far; TFLOP/s): far = the ring with its sending stages' stores to "
               "host-mapped memory; far walk = the same pushes without flags, waits or partials; far / ring = what the "
               "link's drain costs the GEMM; far ce = the ring beside a copy-engine copy of the same bytes into host "
               "memory, the call's time including the copy's; ce chain = the push by the copy engine, band by band "
               "after the band's flags, the receiver waiting for the flags the chain writes after each copy "
               "(selftest_ce_chain.cu); ce graph = the chain's graph form beside the GEMM in one graph, on band "
               "counters (the tile-row counts of tpg_gemm_params.row_counts; no receiver waits on it: compare with "
               "far ce)"
               "\n\n| problem | kernel | plain | ring (/ plain) | "
               "far (/ plain) | far walk (/ plain) | far / ring | far ce (/ plain) | far ce / ring | ce chain "
               "(/ plain) | ce chain / ring | ce graph (/ plain) | ce graph / ring |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (int pi = 0; pi < g_nprob; ++pi)
            for (int i = 0; i < nk; ++i) {
                const double *t = g_tf[pi][i];
                printf("| %s %dx%dx%d | %s | %.1f | %.1f (%.3f) | %.1f (%.3f) | %.1f (%.3f) | %.3f | %.1f (%.3f) "
                       "| %.3f | %.1f (%.3f) | %.3f |",
                       g_probs[pi].name, g_probs[pi].m, g_probs[pi].n, g_probs[pi].k, ks[i].name, t[V_PLAIN],
                       t[V_RING], t[V_RING] / t[V_PLAIN], t[V_FAR], t[V_FAR] / t[V_PLAIN], t[V_FAR_WALK],
                       t[V_FAR_WALK] / t[V_PLAIN], t[V_FAR] / t[V_RING], t[V_FAR_CE], t[V_FAR_CE] / t[V_PLAIN],
                       t[V_FAR_CE] / t[V_RING], t[V_CE_CHAIN], t[V_CE_CHAIN] / t[V_PLAIN], t[V_CE_CHAIN] / t[V_RING]);
                printf(" %.1f (%.3f) | %.3f |\n", t[V_CE_GRAPH], t[V_CE_GRAPH] / t[V_PLAIN], t[V_CE_GRAPH] / t[V_RING]);
            }
        return;
    }
    if (g_nprob == 0 || g_vl[0] != kParts) return;
    printf("\n## the ring's parts (--rs-parts; TFLOP/s, in brackets / plain): walk = two stages, no flags or partials; "
           "flags = stage 0 raises its tile flags; ring = stage 1 also waits and adds the partial; "
           "minor = the ring, stages interleaved in the walk\n\n| problem | kernel |");
    for (int w = 0; w < COUNT(kParts); ++w) printf(" %s |", kVariant[kParts[w]]);
    printf("\n|---|---|");
    for (int w = 0; w < COUNT(kParts); ++w) printf("---|");
    printf("\n");
    for (int pi = 0; pi < g_nprob && g_vl[pi] == kParts; ++pi)
        for (int i = 0; i < nk; ++i) {
            printf("| %s TP %d | %s |", g_probs[pi].name, g_probs[pi].tp, ks[i].name);
            for (int w = 0; w < COUNT(kParts); ++w)
                printf(" %.1f (%.3f) |", g_tf[pi][i][kParts[w]], g_tf[pi][i][kParts[w]] / g_tf[pi][i][V_PLAIN]);
            printf("\n");
        }
}
