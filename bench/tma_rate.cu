/* The memory system's floor under a GEMM's tile walk: the TMA loads (and, optionally, the output stores)
 * of a persistent tile schedule with no arithmetic. One producer thread fills a ring of slots exactly as
 * the sm90 kernel's producer does (same boxes, same grouped raster from scheduler.cuh, the same cluster
 * halves and multicast); one consumer thread releases each slot as soon as it has landed, so the ring
 * runs as fast as the loads arrive; in the "+st" variants the consumer also issues the tile's output as
 * TMA stores of 64x64 units after its last k-block, as the epilogue does. A variant whose time here is close
 * to its GEMM's time is bound by data movement, not by the tensor cores.
 *
 * With --compute-cycles C the consumer also plays the kernel's timing without its arithmetic: a tensor pipe
 * that needs C clocks per 128x256x64 k-block (scaled by tile area; 1024 is the tensor cores' peak), one
 * k-block in flight behind the one issued, a slot released only when the k-block after it has started
 * (wgmma.wait_group 1), and --epilogue-cycles E of epilogue after each tile's last k-block before its
 * stores. The time against the stall-free time of that model shows what the ring protocol and the
 * memory system cost a kernel whose math takes C, without writing the kernel.
 *
 * Why a separate tool: the GEMM's boundary diagnostics (docs/PERF_NOTES.md, 2026-12-01) could not tell a
 * fabric-bound tile boundary from a latency-bound one; this measures the rate itself.
 *
 * Usage: build/bench/tma_rate [--problem MxNxK]... [--iterations N] [--rounds R] [--compute-cycles C]
 *                             [--epilogue-cycles E] [--list]
 * (--list prints the variants and their shared memory without touching a GPU)
 * Prints one line per (problem, variant): microseconds per call (median of R rounds, the variants
 * interleaved in every round), bytes into the SMs per call, TB/s, the SM clock the kernel ran at
 * (clock64 over globaltimer in CTA 0) and bytes per SM per clock. Exit 0, 2 on bad usage, 5 on a
 * CUDA or tpgemm error. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>

#include "cluster.cuh"
#include "ptx.cuh"
#include "scheduler.cuh"
#include "sync.cuh"
#include "tpgemm.h"
extern "C" {
#include "tensormap.h" /* the runtime's internal map encoders (C) */
}

struct rate_params {
    CUtensorMap a_map, b_map, d_map;
    int m, n, k, stores;
    long long compute_cycles, epilogue_cycles; /* 0: release on arrival (the load floor) */
    unsigned long long *clock_out; /* CTA 0: {clock64, globaltimer} at start and end */
};

/* BK = 64: the kernel's 128-byte rows (128B swizzle); BK = 32: 64-byte rows (64B swizzle), twice the slots in
 * the same shared memory - what a finer ring would give a kernel, tried here before in the kernel. */
template <int BM, int BN, int BK, int CM, int CN, int S> struct rate_shape {
    static constexpr uint32_t kA = BM * BK * 2u, kB = BN * BK * 2u, kSlot = kA + kB, kUnit = 64u * 128u;
    static constexpr uint32_t kSmem = S * kSlot + kUnit + 16u * S + 1024u; /* + alignment slack */
};

template <int BM, int BN, int BK, int CM, int CN, int S>
__global__ void __launch_bounds__(64, 1) tma_rate_kernel(const __grid_constant__ rate_params p)
{
    typedef rate_shape<BM, BN, BK, CM, CN, S> Sh;
    constexpr int kC = CM * CN;
    extern __shared__ uint8_t smem_raw[];
    const uint32_t base = (tpg_smem_addr(smem_raw) + 1023u) & ~1023u; /* 128B swizzle: 1 KiB aligned boxes */
    const uint32_t sA = base, sB = base + S * Sh::kA, sD = base + S * Sh::kSlot;
    const uint32_t full = sD + Sh::kUnit, empty = full + 8u * S;
    const int rank = kC > 1 ? (int)tpg_cluster_rank() : 0;
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; ++s) {
            tpg_mbar_init(full + 8u * s, 1u);
            tpg_mbar_init(empty + 8u * s, (uint32_t)kC); /* one consumer per CTA of the cluster */
        }
        tpg_fence_mbar_init();
    }
    if (kC > 1) tpg_cluster_sync();
    else __syncthreads();
    tpg_tiling g;
    g.tiles_m = (p.m + BM - 1) / BM;
    g.tiles_n = (p.n + BN - 1) / BN;
    g.units_m = (g.tiles_m + CM - 1) / CM;
    g.units_n = (g.tiles_n + CN - 1) / CN;
    g.units_per_batch = g.units_per_stage = g.total = g.units_m * g.units_n;
    g.k_blocks = (p.k + BK - 1) / BK;
    const int first = blockIdx.x / kC, stride = gridDim.x / kC;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        p.clock_out[0] = clock64();
        p.clock_out[1] = tpg_globaltimer();
    }
    int slot = 0;
    uint32_t phase = 0;
    const auto advance = [&] {
        if (++slot == S) { slot = 0; phase ^= 1u; }
    };
    if (threadIdx.x == 0) { /* producer: tpg_producer's boxes, without stages or flags */
        const int rank_m = rank % CM, rank_n = rank / CM;
        for (int u = first; u < g.total; u += stride) {
            const tpg_tile t = tpg_decode_tile<CM, CN>(g, u, rank);
            int a_row = t.tm * BM, b_row = t.tn * BN;
            if (CN > 1) a_row = min(a_row + rank_n * (BM / CN), p.m - 1);
            else if (CM > 1) a_row = min(t.tm, g.tiles_m - 1) * BM;
            if (CM > 1) b_row = min(b_row + rank_m * (BN / CM), p.n - 1);
            else if (CN > 1) b_row = min(t.tn, g.tiles_n - 1) * BN;
            for (int kb = 0; kb < g.k_blocks; ++kb) {
                tpg_mbar_wait(empty + 8u * slot, phase ^ 1u);
                const uint32_t bar = full + 8u * slot, a_dst = sA + slot * Sh::kA, b_dst = sB + slot * Sh::kB;
                tpg_mbar_arrive_expect_tx(bar, Sh::kSlot);
                const uint16_t mask = (uint16_t)((1u << kC) - 1u);
                if (CN > 1) tpg_tma_load_2d_mc(a_dst + rank_n * (Sh::kA / CN), &p.a_map, bar, kb * BK, a_row, mask);
                else tpg_tma_load_2d(a_dst, &p.a_map, bar, kb * BK, a_row);
                if (CM > 1) tpg_tma_load_2d_mc(b_dst + rank_m * (Sh::kB / CM), &p.b_map, bar, kb * BK, b_row, mask);
                else tpg_tma_load_2d(b_dst, &p.b_map, bar, kb * BK, b_row);
                advance();
            }
        }
    } else if (threadIdx.x == 32) { /* consumer: releases slots, then the tile's stores after its last k-block */
        const auto release = [&](int sl) {
            for (int r = 0; r < kC; ++r)
                if (kC == 1) tpg_mbar_arrive(empty + 8u * sl);
                else tpg_mbar_arrive_cluster(tpg_mapa(empty + 8u * sl, (uint32_t)r));
        };
        const auto spin_until = [](long long t) {
            while (clock64() < t) {
            }
        };
        long long busy_until = clock64(); /* when the emulated tensor pipe finishes its last k-block */
        for (int u = first; u < g.total; u += stride) {
            const tpg_tile t = tpg_decode_tile<CM, CN>(g, u, rank);
            int prev = -1;
            for (int kb = 0; kb < g.k_blocks; ++kb) {
                tpg_mbar_wait(full + 8u * slot, phase);
                if (p.compute_cycles > 0) { /* k-block kb starts when its data and the pipe are there */
                    const long long start = max((long long)clock64(), busy_until);
                    spin_until(start); /* = k-block kb - 1 is done: wait_group 1 returns */
                    if (prev >= 0) release(prev);
                    busy_until = start + p.compute_cycles;
                    prev = slot;
                } else {
                    release(slot);
                }
                advance();
            }
            if (prev >= 0) { /* wait_group 0, the last slot, the epilogue's arithmetic */
                spin_until(busy_until);
                release(prev);
                spin_until(clock64() + p.epilogue_cycles);
            }
            if (p.stores && t.valid) { /* the smem unit's content does not matter: only the traffic */
                for (int row = 0; row < BM; row += 64)
                    for (int col = 0; col < BN; col += 64) tpg_tma_store_3d(&p.d_map, sD, t.tn * BN + col, t.tm * BM + row, 0);
                tpg_bulk_commit();
            }
            busy_until = clock64();
        }
        tpg_bulk_wait_all();
    }
    if (kC > 1) tpg_cluster_sync(); /* no CTA leaves while a partner may still multicast into it */
    else __syncthreads();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        p.clock_out[2] = clock64();
        p.clock_out[3] = tpg_globaltimer();
    }
}

/* ---- host ------------------------------------------------------------------------------------- */

#define RATE_CHECK(call)                                                                                   \
    do {                                                                                                   \
        cudaError_t e_ = (call);                                                                           \
        if (e_ != cudaSuccess) {                                                                           \
            fprintf(stderr, "tma_rate: %s failed: %s\n", #call, cudaGetErrorString(e_));                     \
            exit(5);                                                                                       \
        }                                                                                                  \
    } while (0)

struct rate_variant {
    const char *name;
    int bm, bn, bk, cm, cn, stages, stores;
    int (*prepare)(int sms); /* sets the smem attribute; returns the grid: whole clusters that fit at once */
    void (*launch)(const rate_params &p, int grid);
    unsigned int smem;
};

template <int BM, int BN, int BK, int CM, int CN, int S> static cudaLaunchConfig_t rate_config(int grid, cudaLaunchAttribute *attr)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)grid);
    cfg.blockDim = dim3(64);
    cfg.dynamicSmemBytes = rate_shape<BM, BN, BK, CM, CN, S>::kSmem;
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = CM * CN;
    attr->val.clusterDim.y = attr->val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

/* As runtime/src/graph.c sizes the GEMM's grid: every SM, in whole clusters, no more clusters than fit at once. */
template <int BM, int BN, int BK, int CM, int CN, int S> static int prepare_rate(int sms)
{
    RATE_CHECK(cudaFuncSetAttribute(tma_rate_kernel<BM, BN, BK, CM, CN, S>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)rate_shape<BM, BN, BK, CM, CN, S>::kSmem));
    int grid = sms / (CM * CN) * (CM * CN), fit = 0;
    if (CM * CN > 1) {
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t cfg = rate_config<BM, BN, BK, CM, CN, S>(grid, &attr);
        RATE_CHECK(cudaOccupancyMaxActiveClusters(&fit, tma_rate_kernel<BM, BN, BK, CM, CN, S>, &cfg));
        if (fit < 1) {
            fprintf(stderr, "tma_rate: no cluster of %d CTAs fits\n", CM * CN);
            exit(5);
        }
        if (fit * CM * CN < grid) grid = fit * CM * CN;
    }
    return grid;
}

template <int BM, int BN, int BK, int CM, int CN, int S> static void launch_rate(const rate_params &p, int grid)
{
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = rate_config<BM, BN, BK, CM, CN, S>(grid, &attr);
    RATE_CHECK(cudaLaunchKernelEx(&cfg, tma_rate_kernel<BM, BN, BK, CM, CN, S>, p));
}

#define RATE_VARIANT(name, bm, bn, bk, cm, cn, s, stores)                                                     \
    {name, bm, bn, bk, cm, cn, s, stores, prepare_rate<bm, bn, bk, cm, cn, s>, launch_rate<bm, bn, bk, cm, cn, s>, \
     rate_shape<bm, bn, bk, cm, cn, s>::kSmem}

/* The shipped kernels' shapes (wide 1x1, 2x1) and a 128x128 ring (ping-pong's tile, but every variant here
 * is emulated as a cooperative kernel: a tile's epilogue stalls its CTA), cuBLAS's short-K shape (256x128 in
 * a 1x2 cluster), and the 2x1 with 64-byte slots (BK = 32: 8 slots in the space of 4), each with and
 * without the output stores; then, with stores only, the 2x1 with 3 slots and the 1x1 with 64-byte slots; the 64x128
 * of few tokens without stores. */
static const rate_variant kVariants[] = {
    RATE_VARIANT("128x256 1x1 s3", 128, 256, 64, 1, 1, 3, 0), RATE_VARIANT("128x256 1x1 s3 +st", 128, 256, 64, 1, 1, 3, 1),
    RATE_VARIANT("128x256 1x1 s4", 128, 256, 64, 1, 1, 4, 0), RATE_VARIANT("128x256 1x1 s4 +st", 128, 256, 64, 1, 1, 4, 1),
    RATE_VARIANT("128x256 2x1 s4", 128, 256, 64, 2, 1, 4, 0), RATE_VARIANT("128x256 2x1 s4 +st", 128, 256, 64, 2, 1, 4, 1),
    RATE_VARIANT("128x256 2x1 k32 s8", 128, 256, 32, 2, 1, 8, 0),
    RATE_VARIANT("128x256 2x1 k32 s8 +st", 128, 256, 32, 2, 1, 8, 1),
    RATE_VARIANT("128x256 2x1 s3 +st", 128, 256, 64, 2, 1, 3, 1),      /* ring depth in a pair: 3 vs 4 vs 8 */
    RATE_VARIANT("128x256 1x1 k32 s6 +st", 128, 256, 32, 1, 1, 6, 1),  /* the k32 self-test's wide shape */
    RATE_VARIANT("256x128 1x2 s4", 256, 128, 64, 1, 2, 4, 0), RATE_VARIANT("256x128 1x2 s4 +st", 256, 128, 64, 1, 2, 4, 1),
    RATE_VARIANT("128x128 1x1 s5", 128, 128, 64, 1, 1, 5, 0), RATE_VARIANT("128x128 1x1 s5 +st", 128, 128, 64, 1, 1, 5, 1),
    RATE_VARIANT("64x128 1x1 s8", 64, 128, 64, 1, 1, 8, 0), /* the few-token tile (ping-pong 64x128's ring) */
};
enum { kNumVariants = sizeof(kVariants) / sizeof(kVariants[0]) };

static __global__ void fill_bits(uint16_t *x, size_t n, uint32_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u ^ seed;
        h ^= h >> 15;
        x[i] = (uint16_t)(0x3c00u | (h & 0x03ffu)); /* bf16 bits of a value in [2^-7, 2): never zero */
    }
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void tpg_or_die(tpg_status st, tpg_ctx *ctx)
{
    if (st != TPG_OK) {
        fprintf(stderr, "tma_rate: %s\n", tpg_last_error(ctx));
        exit(5);
    }
}

struct rate_opts {
    int iters, rounds;
    long long compute_cycles, epilogue_cycles; /* per 128x256x64 k-block / per tile; 0 = the load floor */
};

/* Stall-free time of the emulated pipeline in clocks: the busiest cluster's units, each k_blocks
 * k-blocks of c clocks plus one epilogue (0 without --compute-cycles); grid = the launch's CTAs. */
static double model_clocks(const rate_variant &x, int m, int n, int k, int grid, long long c, long long e)
{
    if (c <= 0) return 0.0;
    const long long units = (long long)((m + x.bm * x.cm - 1) / (x.bm * x.cm)) * ((n + x.bn * x.cn - 1) / (x.bn * x.cn));
    const long long clusters = grid / (x.cm * x.cn), rounds = (units + clusters - 1) / clusters;
    return (double)rounds * ((double)((k + x.bk - 1) / x.bk) * c + (double)e);
}

/* One problem: maps per variant, R rounds of every variant interleaved, medians printed. */
static void run_problem(tpg_ctx *ctx, int m, int n, int k, const rate_opts &o, int sms)
{
    const int iters = o.iters, rounds = o.rounds;
    uint16_t *a, *b, *d;
    unsigned long long *clk;
    RATE_CHECK(cudaMalloc(&a, (size_t)m * k * 2));
    RATE_CHECK(cudaMalloc(&b, (size_t)n * k * 2));
    RATE_CHECK(cudaMalloc(&d, (size_t)m * n * 2));
    RATE_CHECK(cudaMalloc(&clk, 4 * sizeof(unsigned long long)));
    fill_bits<<<1024, 256>>>(a, (size_t)m * k, 1u);
    fill_bits<<<1024, 256>>>(b, (size_t)n * k, 2u);
    RATE_CHECK(cudaGetLastError());
    cudaEvent_t e0, e1;
    RATE_CHECK(cudaEventCreate(&e0));
    RATE_CHECK(cudaEventCreate(&e1));
    double us[kNumVariants][16], mhz[kNumVariants][16];
    int grid[kNumVariants];
    rate_params prm[kNumVariants];
    for (int v = 0; v < kNumVariants; ++v) {
        const rate_variant &x = kVariants[v];
        memset(&prm[v], 0, sizeof prm[v]);
        tpg_or_die(tpg_tensormap_encode(ctx, &prm[v].a_map, a, TPG_DTYPE_BF16, k, m, x.bk, x.bm / x.cn, "A"), ctx);
        tpg_or_die(tpg_tensormap_encode(ctx, &prm[v].b_map, b, TPG_DTYPE_BF16, k, n, x.bk, x.bn / x.cm, "B"), ctx);
        tpg_or_die(tpg_tensormap_encode_d(ctx, &prm[v].d_map, d, TPG_DTYPE_BF16, n, m, 1, n, (int64_t)m * n, 128, "D"), ctx);
        prm[v].m = m, prm[v].n = n, prm[v].k = k, prm[v].stores = x.stores, prm[v].clock_out = clk;
        /* the tensor pipe's time per k-block scales with its volume */
        prm[v].compute_cycles = o.compute_cycles * x.bm * x.bn * x.bk / (128 * 256 * 64);
        prm[v].epilogue_cycles = o.epilogue_cycles;
        grid[v] = x.prepare(sms);
    }
    for (int r = 0; r < rounds; ++r)
        for (int v = 0; v < kNumVariants; ++v) {
            for (int i = 0; i < 3; ++i) kVariants[v].launch(prm[v], grid[v]); /* warm-up */
            RATE_CHECK(cudaEventRecord(e0, 0));
            for (int i = 0; i < iters; ++i) kVariants[v].launch(prm[v], grid[v]);
            RATE_CHECK(cudaEventRecord(e1, 0));
            RATE_CHECK(cudaEventSynchronize(e1));
            float ms = 0.f;
            unsigned long long c[4];
            RATE_CHECK(cudaEventElapsedTime(&ms, e0, e1));
            RATE_CHECK(cudaMemcpy(c, clk, sizeof c, cudaMemcpyDeviceToHost));
            us[v][r] = 1e3 * ms / iters;
            mhz[v][r] = c[3] > c[1] ? 1e3 * (double)(c[2] - c[0]) / (double)(c[3] - c[1]) : 0.0;
        }
    printf("\n%d x %d x %d (bf16), %d calls per window, median of %d rounds; emulated math: %lld clocks per "
           "128x256x64 k-block, %lld per epilogue%s\n", m, n, k, iters, rounds, o.compute_cycles, o.epilogue_cycles,
           o.compute_cycles > 0 ? "" : " (off: loads released on arrival)");
    printf("%-24s %5s %9s %9s %8s %7s %8s %8s %9s %6s\n", "variant", "CTAs", "us/call", "GB in", "TB/s", "MHz", "B/clk/SM", "GB out",
           "model us", "model/t");
    for (int v = 0; v < kNumVariants; ++v) {
        const rate_variant &x = kVariants[v];
        const int kc = x.cm * x.cn, ctas = grid[v];
        /* tiles walked: whole units, so a ragged cluster grid's invalid partner tiles (which load) count */
        const double tiles = (double)kc * ((m + x.bm * x.cm - 1) / (x.bm * x.cm)) * ((n + x.bn * x.cn - 1) / (x.bn * x.cn));
        const double gb_in = tiles * ((k + x.bk - 1) / x.bk) * (x.bm + x.bn) * x.bk * 2.0 / 1e9; /* into every receiving SM */
        const double gb_out = x.stores ? (double)m * n * 2 / 1e9 : 0.0;
        qsort(us[v], rounds, sizeof(double), cmp_double);
        qsort(mhz[v], rounds, sizeof(double), cmp_double);
        const double t = 0.5 * (us[v][(rounds - 1) / 2] + us[v][rounds / 2]), /* medians (even R: the middle two) */
            f = 0.5 * (mhz[v][(rounds - 1) / 2] + mhz[v][rounds / 2]);
        const double model_us = f > 0 ? model_clocks(x, m, n, k, ctas, prm[v].compute_cycles, o.epilogue_cycles) / f : 0.0;
        printf("%-24s %5d %9.1f %9.3f %8.2f %7.0f %8.1f %8.3f %9.1f %6.3f\n", x.name, ctas, t, gb_in, gb_in / t * 1e3, f,
               f > 0 ? gb_in * 1e9 / (t * 1e-6) / (f * 1e6) / ctas : 0.0, gb_out, model_us, model_us / t);
    }
    RATE_CHECK(cudaEventDestroy(e0));
    RATE_CHECK(cudaEventDestroy(e1));
    RATE_CHECK(cudaFree(a));
    RATE_CHECK(cudaFree(b));
    RATE_CHECK(cudaFree(d));
    RATE_CHECK(cudaFree(clk));
}

/* Whole-string integer in [lo, hi] (no trailing characters), or 0. */
static int int_arg(const char *s, long long lo, long long hi, long long *out)
{
    char *end = NULL;
    const long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

/* "MxNxK" with M, N, K > 0 and N, K multiples of 8 (16-byte rows of D and of A / B), nothing after it. */
static int problem_arg(const char *s, int (&p)[3])
{
    int used = 0;
    return sscanf(s, "%dx%dx%d%n", &p[0], &p[1], &p[2], &used) == 3 && s[used] == '\0' && p[0] > 0 && p[1] > 0 &&
           p[2] > 0 && p[1] % 8 == 0 && p[2] % 8 == 0;
}

int main(int argc, char **argv)
{
    int probs[8][3], np = 0;
    rate_opts o = {50, 5, 0, 0};
    for (int i = 1; i < argc; ++i) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        long long x = 0;
        if (!strcmp(f, "--list")) { /* the variants and their shared memory; no GPU needed */
            for (int j = 0; j < kNumVariants; ++j)
                printf("%-24s tile %dx%dx%d cluster %dx%d stages %d stores %d smem %u\n", kVariants[j].name,
                       kVariants[j].bm, kVariants[j].bn, kVariants[j].bk, kVariants[j].cm, kVariants[j].cn,
                       kVariants[j].stages, kVariants[j].stores, kVariants[j].smem);
            return 0;
        }
        int ok = 1;
        if (!strcmp(f, "--problem")) ok = np < 8 && problem_arg(v, probs[np]) && ++np;
        else if (!strcmp(f, "--iterations")) ok = int_arg(v, 1, 100000, &x) && (o.iters = (int)x);
        else if (!strcmp(f, "--rounds")) ok = int_arg(v, 1, 16, &x) && (o.rounds = (int)x);
        else if (!strcmp(f, "--compute-cycles")) ok = int_arg(v, 1, 1000000, &o.compute_cycles);
        else if (!strcmp(f, "--epilogue-cycles")) ok = int_arg(v, 0, 1000000, &o.epilogue_cycles);
        else ok = 0;
        if (!ok) {
            fprintf(stderr, "usage: tma_rate [--problem MxNxK (N, K multiples of 8; up to 8)]... [--iterations 1..100000] "
                            "[--rounds 1..16]\n                [--compute-cycles 1..1000000] [--epilogue-cycles 0..1000000] "
                            "[--list]\n  bad or incomplete argument: %s %s\n", f, v);
            return 2;
        }
        ++i;
    }
    if (np == 0) { /* the short-K problems of the issue-3 gap, and a long-K one */
        const int def[3][3] = {{8192, 4096, 2048}, {4096, 4096, 4096}, {16384, 5120, 8192}};
        memcpy(probs, def, sizeof def);
        np = 3;
    }
    if (o.epilogue_cycles > 0 && o.compute_cycles == 0) {
        fprintf(stderr, "tma_rate: --epilogue-cycles needs --compute-cycles (the epilogue follows emulated math)\n");
        return 2;
    }
    tpg_ctx *ctx = NULL;
    tpg_ctx_config cfg = TPG_CTX_CONFIG_INIT;
    cfg.tp = 1;
    tpg_or_die(tpg_ctx_create(&cfg, &ctx), NULL);
    cudaDeviceProp prop;
    RATE_CHECK(cudaGetDeviceProperties(&prop, tpg_ctx_device(ctx, 0)));
    printf("tma_rate: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    for (int i = 0; i < np; ++i) run_problem(ctx, probs[i][0], probs[i][1], probs[i][2], o, prop.multiProcessorCount);
    tpg_ctx_destroy(ctx);
    return 0;
}
