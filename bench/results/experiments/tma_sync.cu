/* Experiment (not shipped): when do bulk stores to a slow destination stay off an SM's bulk loads?
 *
 * Why: tma_hol.cu showed that a burst of bulk stores into host memory holds up the loads issued after it on the same
 * SM, and that the same bytes cost nothing below the link's rate when the producer issues them in pieces between its
 * loads (every 8th CTA storing) - yet the GEMM's spread pushes, issued by a consumer warp on a clock during the wait
 * for its turn, gained nothing (docs/perf_notes/2026-12-04-b.md), and neither did tma_hol's warp-0 units. Three
 * things differ between those forms: who issues (the producer between its loads, or another warp), the piece size,
 * and whether the storing CTAs issue at the same moments (the GEMM's CTAs start together and run equal tiles; in the
 * piece sweep only every 8th CTA stored). Here every one of 132 CTAs stores `total` bytes over its loads, in pieces,
 * issued either by the producer after every `every`-th load or by warp 0 on its clock at the same spacing (the
 * spacing converted to cycles with the load time measured without stores), with every CTA on the same phase ("sync")
 * or with CTA b's first piece b % 16 sixteenths of a spacing later ("stag"); "burst" issues the whole total at once
 * (at the start, or at the staggered phase's load).
 *
 * Build (here): nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o build/bench/tma_sync \
 *   bench/results/experiments/tma_sync.cu
 * Run (device): build/bench/tma_sync   (rows: total x issuer x piece x phase, three repeats; us, median and
 * slowest CTA's loads; a second, shorter table with the loads streamed from HBM instead of L2, as a GEMM's are)
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cuda_check.h"
#include "tma_bulk.cuh"

enum { DEPTH = 4, LOAD_BYTES = 16384, NLOAD = 256, MAX_TOTAL = 16384, THREADS = 64, SRC_BYTES = 1 << 20 };
enum { SMEM = DEPTH * LOAD_BYTES + MAX_TOTAL + 64, CTAS = 132 };
enum issuer { NONE = 0, PRODUCER = 1, WARP0 = 2, BURST = 3 };

struct sync_params {
    const char *src;        /* L2-resident load source */
    char *dst;              /* host-mapped destination, MAX_TOTAL a CTA */
    int issuer, total, piece, stagger;
    int stream;             /* 1: the loads stream a CTA's own 4 MiB from a large source (HBM), not L2 */
    long long load_cycles;  /* one load's cycles without stores (warp 0's clock spacing) */
    long long *out;         /* per CTA: loads' cycles, CTA cycles, CTA ns */
};

/* The load index after which piece j goes (the producer), or whose time it is issued at (warp 0) */
__device__ __forceinline__ int piece_slot(const sync_params &p, int j)
{
    const int pieces = p.total / p.piece, every = NLOAD / pieces;
    const int phase = p.stagger ? (int)(blockIdx.x % 16) * every / 16 : 0;
    return phase + j * every;
}

__device__ __forceinline__ void store_piece(const sync_params &p, char *dst, uint32_t sbuf, int j)
{
    bulk_store(dst + (size_t)j * p.piece, sbuf + (uint32_t)(j * p.piece), (uint32_t)p.piece);
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/* Warp 0's clocked pieces, from the moment the producer has issued its first loads */
__device__ void warp0_pieces(const sync_params &p, char *dst, uint32_t sbuf, volatile int *started)
{
    while (*started == 0) {
    }
    const long long t0 = clock64();
    const int pieces = p.total / p.piece;
    for (int j = 0; j < pieces; ++j) {
        const long long at = (long long)piece_slot(p, j) * p.load_cycles;
        while (clock64() - t0 < at) __nanosleep(32);
        store_piece(p, dst, sbuf, j);
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

__global__ void __launch_bounds__(THREADS, 1) k_sync(const __grid_constant__ sync_params p)
{
    extern __shared__ __align__(1024) char smem[];
    char *ring = smem, *sbuf = smem + DEPTH * LOAD_BYTES;
    uint64_t *bars = reinterpret_cast<uint64_t *>(sbuf + MAX_TOTAL);
    volatile int *started = reinterpret_cast<volatile int *>(&bars[DEPTH]);
    const long long c0 = clock64();
    const unsigned long long g0 = gtime();
    for (int i = threadIdx.x; i < MAX_TOTAL / 4; i += THREADS) reinterpret_cast<int *>(sbuf)[i] = i ^ blockIdx.x;
    if (threadIdx.x == 0) {
        for (int s = 0; s < DEPTH; ++s) bar_init(smem_u32(&bars[s]));
        *started = 0;
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    __syncthreads();
    char *dst = p.dst + (size_t)blockIdx.x * MAX_TOTAL;
    const uint32_t s_u32 = smem_u32(sbuf);
    if (threadIdx.x == 0 && p.issuer == WARP0) warp0_pieces(p, dst, s_u32, started);
    if (threadIdx.x != 32) return;

    const int pieces = p.issuer == NONE ? 0 : p.total / p.piece;
    const char *src = p.stream ? p.src + (size_t)blockIdx.x * NLOAD * LOAD_BYTES
                               : p.src + (size_t)(blockIdx.x % 16) * (SRC_BYTES / 16);
    const int wrap = p.stream ? NLOAD : 4; /* loads before the source's addresses repeat */
    const long long l0 = clock64();
    for (int i = 0; i < DEPTH; ++i) {
        bar_expect(smem_u32(&bars[i]), LOAD_BYTES);
        bulk_load(smem_u32(ring + i * LOAD_BYTES), src + (size_t)(i % wrap) * LOAD_BYTES, LOAD_BYTES,
                  smem_u32(&bars[i]));
    }
    *started = 1;
    int next = 0; /* the producer's next piece (PRODUCER, BURST) */
    for (int i = 0; i < NLOAD; ++i) {
        const int s = i % DEPTH;
        bar_wait(smem_u32(&bars[s]), (uint32_t)((i / DEPTH) & 1));
        if (p.issuer == PRODUCER && next < pieces && piece_slot(p, next) == i) store_piece(p, dst, s_u32, next++);
        if (p.issuer == BURST && next == 0 && piece_slot(p, 0) == i)
            for (; next < pieces; ++next) store_piece(p, dst, s_u32, next);
        const int n = i + DEPTH;
        if (n < NLOAD) {
            bar_expect(smem_u32(&bars[s]), LOAD_BYTES);
            bulk_load(smem_u32(ring + s * LOAD_BYTES), src + (size_t)(n % wrap) * LOAD_BYTES, LOAD_BYTES,
                      smem_u32(&bars[s]));
        }
    }
    const long long l1 = clock64();
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    long long *o = p.out + 3 * blockIdx.x;
    o[0] = l1 - l0;
    o[1] = clock64() - c0;
    o[2] = (long long)(gtime() - g0);
}

static int cmp_ll(const void *a, const void *b)
{
    const long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* field f over the CTAs: sorted into v; returns the median, *max the largest */
static long long median_max(const long long *out, int f, long long *max)
{
    long long v[CTAS];
    for (int c = 0; c < CTAS; ++c) v[c] = out[3 * c + f];
    qsort(v, CTAS, sizeof v[0], cmp_ll);
    *max = v[CTAS - 1];
    return v[CTAS / 2];
}

/* One launch; prints the row and returns the median loads' cycles */
static long long run_row(sync_params p, const char *name, int rep, long long *hout)
{
    k_sync<<<CTAS, THREADS, SMEM>>>(p);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hout, p.out, sizeof(long long) * 3 * CTAS, cudaMemcpyDeviceToHost));
    long long lmax, cmax, nmax;
    const long long lmed = median_max(hout, 0, &lmax), cmed = median_max(hout, 1, &cmax);
    const double mhz = (double)cmed / ((double)median_max(hout, 2, &nmax) / 1e3);
    const double gbs = p.issuer == NONE ? 0.0 : (double)p.total * CTAS / ((double)lmed / mhz * 1e3);
    printf("%-22s %3d | %8.2f %8.2f | %6.1f GB/s  (%.0f MHz)\n", name, rep, lmed / mhz, lmax / mhz, gbs, mhz);
    return lmed;
}

/* One table: none three times (its load time spaces warp 0's pieces), then total x issuer x piece x phase; `full`
 * all of them, else the 8 / 16 KiB totals by warp 0 and in a burst, in 512 B and 8 KiB pieces */
static void run_table(char *src, char *dst, long long *out, long long *hout, int stream, int full)
{
    sync_params none = {src, dst, NONE, 0, 1, 0, stream, 0, out};
    long long load_cycles = 0;
    printf("\n%s\n", stream ? "loads streamed from HBM (4 MiB a CTA)" : "loads from an L2-resident 1 MiB");
    for (int rep = 0; rep < 3; ++rep) load_cycles = run_row(none, "none", rep, hout) / NLOAD;
    const int totals[] = {4096, 8192, 16384}, piece_list[] = {512, 1024, 2048, 4096, 8192};
    const char *issuers[] = {"", "prod", "w0", "burst"};
    for (int rep = 0; rep < 3; ++rep)
        for (int t = full ? 0 : 1; t < 3; ++t)
            for (int is = full ? PRODUCER : WARP0; is <= BURST; ++is)
                for (int pi = 0; pi < 5; ++pi)
                    for (int stag = 0; stag < 2; ++stag) {
                        const int piece = piece_list[pi];
                        if (piece > totals[t] || (is == BURST && piece != 8192 && piece != totals[t])) continue;
                        if (!full && piece != 512 && piece != 8192) continue;
                        char name[40];
                        snprintf(name, sizeof name, "%2dK %-5s %4dB %s", totals[t] / 1024, issuers[is], piece,
                                 stag ? "stag" : "sync");
                        sync_params p = {src, dst, is, totals[t], piece, stag, stream, load_cycles, out};
                        run_row(p, name, rep, hout);
                    }
    run_row(none, "none (again)", 0, hout);
}

int main()
{
    char *src, *big, *hdst_dev;
    long long *out, hout[3 * CTAS];
    if (filled(SRC_BYTES, 1, &src) || filled((size_t)CTAS * NLOAD * LOAD_BYTES, 0x5a, &big) ||
        host_mapped((size_t)CTAS * MAX_TOTAL, &hdst_dev))
        return 1;
    CK(cudaMalloc(&out, sizeof hout));
    CK(cudaFuncSetAttribute(k_sync, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    printf("%-22s %3s | %8s %8s | %s\n", "total issuer piece phase", "rep", "loads", "slowest",
           "stores / loads' time (us; loads: 256 x 16 KiB a CTA, 132 CTAs)");
    run_table(src, hdst_dev, out, hout, 0, 1);
    run_table(big, hdst_dev, out, hout, 1, 0);
    return 0;
}
