/* Experiment (not shipped): does a slow TMA store hold up the TMA loads issued after it on the same SM?
 *
 * Why: across two GPUs the fused reduce-scatter's stage-0 tiles store their partials into the peer's memory with
 * bulk stores, and the 70B-o ring lost ~6% to its local GEMM at equal SM clock on x2 (tp2.json, 2026-12-01) where
 * the one-GPU proxy, whose "remote" stores land in local memory, loses nothing; deferring the flag flush by a whole
 * mainloop did not remove its wait (docs/perf_notes/2026-12-01-a.md). If an SM's bulk-copy unit serves its requests
 * in order, a store whose bytes drain slowly over a link would delay the next tile's operand loads behind it - a cost
 * no one-GPU run shows. Host-mapped memory (PCIe, slower than NVLink) stands in for the slow destination here.
 *
 * Each CTA (thread 0 issues): optionally NSTORE bulk stores of 32 KiB from smem to its own part of a destination
 * (device memory, host-mapped memory, or - mode "lsu" - plain 16-byte st.global by all 128 threads to host-mapped
 * memory; "4K": the same bytes to host memory in 4 KiB stores, one after each of the first loads, as deferred store
 * units go out; "tma<-host": bulk loads of the same bytes from host memory instead, a pulled partial; "w0": the
 * stores by warp 0 and the loads by warp 1, as the GEMM's consumers and producer split them; "1/8 burst" / "1/8
 * paced": only every eighth CTA stores, so that the total stays below the host link's rate, all at once before the
 * loads or 256 bytes after each load), then a pipelined stream of NLOAD bulk loads of 16 KiB (4 in flight) from an
 * L2-resident source, as a mainloop's producer would; it records the loads' time, the first load's latency, and how
 * long the stores took to finish reading smem (wait_group.read) and to complete (wait_group 0, or a system fence for
 * "lsu"). Printed: medians over CTAs in microseconds (clock64 scaled by the SM clock measured against %globaltimer in
 * the same kernel).
 *
 * Build (here): nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o build/bench/tma_hol \
 *   bench/results/experiments/tma_hol.cu
 * Run (device): build/bench/tma_hol   (one table, every row a mode x CTA count, three repeats each; then the piece
 * sweep: 512 B of stores a load on average in pieces of 512 B to 8 KiB, every 8th / 4th CTA storing - 2026-12-04
 * 02:57Z: below the link's rate the piece size does not matter, near it no piece helps)
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_check.h"
#include "tma_bulk.cuh"

enum { DEPTH = 4, LOAD_BYTES = 16384, STORE_BYTES = 32768, THREADS = 128, SRC_BYTES = 1 << 20 };
enum { SMEM = DEPTH * LOAD_BYTES + STORE_BYTES + 64 };
enum mode {
    NONE = 0, TMA_DEVICE = 1, TMA_HOST = 2, LSU_HOST = 3, TMA_HOST_PIECES = 4, TMA_FROM_HOST = 5, TMA_HOST_W0 = 6,
    SUB_BURST = 7, SUB_PACED = 8, W0_UNITS = 9, SUB_W0_BURST = 10, SUB_W0_UNITS = 11, W0_DONE = 12,
    SUB_W0_DONE = 13, SUB_PACED_1K = 14, SUB_PACED_N = 15, MODES = 16
};
/* The epilogue's own forms, stores by warp 0 and loads by warp 1: the same bytes as UNIT-byte store units, all at once
 * (TMA_HOST_W0, SUB_W0_BURST) or each after the one before has read its smem, wait_group.read 0 (W0_UNITS,
 * SUB_W0_UNITS: gemm_params.h pace_pushes) or each after the one before has completed, wait_group 0 (W0_DONE,
 * SUB_W0_DONE); SUB_* only every SUB-th CTA stores. */
enum { UNIT = 8192 };
/* SUB_*: only every SUB-th CTA stores (the others only load), so that the stores' total rate stays below what the
 * host link takes; SUB_BURST issues them before the loads, SUB_PACED one PACED_PIECE store after each load,
 * SUB_PACED_1K one 1 KiB store after every second load (a producer streaming a swizzled 8-row box of a 128-byte-row
 * store unit every other k-block: docs/PERF_NOTES.md, "Next"); SUB_PACED_N the same with the piece, its spacing
 * and the share of storing CTAs from the parameters (main's second table: which piece sizes still interleave) */
enum { SUB = 8, PACED_PIECE = 256 };
enum { PIECE = 4096 }; /* TMA_HOST_PIECES: the same bytes in 4 KiB stores, one after each of the first loads */

struct params {
    const char *src;      /* L2-resident load source, SRC_BYTES */
    char *dst;            /* store destination, STORE_BYTES * nstore per CTA */
    int mode, nstore, nload;
    int piece, every, sub; /* SUB_PACED_N: a `piece`-byte store after every `every`-th load, every `sub`-th CTA */
    long long *out;       /* per CTA: 6 values (below) */
};

/* out[6 * cta + i]: 0 loads' cycles, 1 first load's cycles, 2 stores' smem-read drain cycles after the loads,
 * 3 stores' completion cycles after that, 4 the whole CTA's cycles, 5 the whole CTA's globaltimer ns */
__global__ void __launch_bounds__(THREADS, 1) k_hol(const __grid_constant__ params p)
{
    extern __shared__ __align__(1024) char smem[];
    char *ring = smem, *sbuf = smem + DEPTH * LOAD_BYTES;
    uint64_t *bars = reinterpret_cast<uint64_t *>(sbuf + STORE_BYTES); /* DEPTH ring barriers, then TMA_FROM_HOST's */
    const long long c0 = clock64();
    const unsigned long long g0 = gtime();
    for (int i = threadIdx.x; i < STORE_BYTES / 4; i += THREADS) reinterpret_cast<int *>(sbuf)[i] = i ^ blockIdx.x;
    if (threadIdx.x == 0)
        for (int s = 0; s <= DEPTH; ++s) bar_init(smem_u32(&bars[s]));
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    __syncthreads();
    char *dst = p.dst + (size_t)blockIdx.x * STORE_BYTES * p.nstore;
    if (p.mode == LSU_HOST) { /* every thread, 16-byte stores, as a register epilogue would */
        const int4 *s4 = reinterpret_cast<const int4 *>(sbuf);
        for (int j = 0; j < p.nstore; ++j)
            for (int i = threadIdx.x; i < STORE_BYTES / 16; i += THREADS)
                reinterpret_cast<int4 *>(dst + (size_t)j * STORE_BYTES)[i] = s4[i];
    }
    volatile int *handoff = reinterpret_cast<volatile int *>(&bars[DEPTH + 1]); /* TMA_HOST_W0's two steps */
    if (threadIdx.x == 0) *handoff = 0;
    __syncthreads();
    const bool w0 = p.mode == TMA_HOST_W0 || (p.mode >= W0_UNITS && p.mode <= SUB_W0_DONE);
    if (w0) { /* the stores by warp 0, the loads by warp 1 (below), as producer and consumers */
        if (threadIdx.x == 0) {
            const bool stores = p.mode < SUB_W0_BURST || p.mode == W0_DONE || blockIdx.x % SUB == 0;
            const bool done = p.mode == W0_DONE || p.mode == SUB_W0_DONE;
            const bool paced = p.mode == W0_UNITS || p.mode == SUB_W0_UNITS || done;
            const int units = stores ? STORE_BYTES * p.nstore / UNIT : 0;
            for (int u = 0; u < units; ++u) {
                if (paced && u == 1) *handoff = 1; /* the loads start beside the paced units */
                if (done)
                    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
                else if (paced)
                    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
                bulk_store(dst + (size_t)u * UNIT, smem_u32(sbuf + (u * UNIT) % STORE_BYTES), UNIT);
                asm volatile("cp.async.bulk.commit_group;" ::: "memory");
            }
            if (!paced || units < 2) *handoff = 1; /* (paced: set above; the loads may already have ended, = 2) */
            while (*handoff != 2) {
            }
            const long long r0 = clock64();
            asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
            const long long r1 = clock64();
            asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
            p.out[6 * blockIdx.x + 2] = stores ? r1 - r0 : -1;
            p.out[6 * blockIdx.x + 3] = stores ? clock64() - r1 : -1;
            return;
        }
        if (threadIdx.x != 32) return;
        while (*handoff != 1) {
        }
    } else if (threadIdx.x != 0) {
        if (p.mode == LSU_HOST) asm volatile("fence.sc.sys;" ::: "memory");
        return;
    }
    if (p.mode == TMA_DEVICE || p.mode == TMA_HOST) {
        for (int j = 0; j < p.nstore; ++j) bulk_store(dst + (size_t)j * STORE_BYTES, smem_u32(sbuf), STORE_BYTES);
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    }
    if (p.mode == TMA_FROM_HOST) { /* a pulled partial: loads from the slow memory into the store buffer first */
        bar_expect(smem_u32(&bars[DEPTH]), STORE_BYTES * p.nstore);
        for (int j = 0; j < p.nstore; ++j)
            bulk_load(smem_u32(sbuf), dst + (size_t)j * STORE_BYTES, STORE_BYTES, smem_u32(&bars[DEPTH]));
    }
    const bool sub = p.mode == SUB_BURST || p.mode == SUB_PACED || p.mode == SUB_W0_BURST || p.mode == SUB_W0_UNITS ||
                     p.mode == SUB_W0_DONE || p.mode == SUB_PACED_1K || p.mode == SUB_PACED_N;
    const bool storer = !sub || blockIdx.x % (p.mode == SUB_PACED_N ? p.sub : SUB) == 0;
    if (p.mode == SUB_BURST && storer) {
        for (int j = 0; j < p.nstore; ++j) bulk_store(dst + (size_t)j * STORE_BYTES, smem_u32(sbuf), STORE_BYTES);
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    }
    const int piece = p.mode == SUB_PACED_N   ? p.piece
                      : p.mode == SUB_PACED   ? PACED_PIECE
                      : p.mode == SUB_PACED_1K ? 1024
                                              : PIECE;
    /* a piece after every `every`-th load */
    const int every = p.mode == SUB_PACED_N ? p.every : p.mode == SUB_PACED_1K ? 2 : 1;
    const bool pieced = p.mode == TMA_HOST_PIECES ||
                        ((p.mode == SUB_PACED || p.mode == SUB_PACED_1K || p.mode == SUB_PACED_N) && storer);
    const int pieces = pieced ? STORE_BYTES * p.nstore / piece : 0;
    const char *src = p.src + (size_t)(blockIdx.x % 16) * (SRC_BYTES / 16);
    const long long l0 = clock64();
    long long first = 0;
    for (int i = 0; i < DEPTH && i < p.nload; ++i) {
        bar_expect(smem_u32(&bars[i]), LOAD_BYTES);
        bulk_load(smem_u32(ring + i * LOAD_BYTES), src + (size_t)(i % 4) * LOAD_BYTES, LOAD_BYTES, smem_u32(&bars[i]));
    }
    for (int i = 0; i < p.nload; ++i) {
        const int s = i % DEPTH;
        bar_wait(smem_u32(&bars[s]), (uint32_t)((i / DEPTH) & 1));
        if (i == 0) first = clock64() - l0;
        if (i % every == 0 && i / every < pieces) {
            const int j = i / every;
            bulk_store(dst + (size_t)j * piece, smem_u32(sbuf + (j * piece) % STORE_BYTES), piece);
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
        const int n = i + DEPTH;
        if (n < p.nload) {
            bar_expect(smem_u32(&bars[s]), LOAD_BYTES);
            bulk_load(smem_u32(ring + s * LOAD_BYTES), src + (size_t)(n % 4) * LOAD_BYTES, LOAD_BYTES,
                      smem_u32(&bars[s]));
        }
    }
    const long long l1 = clock64();
    long long *o = p.out + 6 * blockIdx.x;
    if (w0) { /* warp 0 times its stores' drain from here */
        *handoff = 2;
        o[0] = storer ? l1 - l0 : -1;
        o[1] = storer ? first : -1;
        o[4] = l1 - c0;
        o[5] = (long long)(gtime() - g0);
        return;
    }
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    const long long r1 = clock64();
    if (p.mode == LSU_HOST)
        asm volatile("fence.sc.sys;" ::: "memory");
    else if (p.mode == TMA_FROM_HOST)
        bar_wait(smem_u32(&bars[DEPTH]), 0);
    else
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    const long long w1 = clock64();
    o[0] = l1 - l0;
    o[1] = first;
    o[2] = r1 - l1;
    o[3] = w1 - r1;
    o[4] = w1 - c0;
    o[5] = (long long)(gtime() - g0);
    if (!storer) o[0] = o[1] = o[2] = o[3] = -1; /* the medians are over the storing CTAs */
}

static int cmp_ll(const void *a, const void *b)
{
    const long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static long long median_of(const long long *out, int ctas, int field)
{
    long long v[1024];
    int n = 0;
    for (int c = 0; c < ctas; ++c)
        if (out[6 * c + field] >= 0) v[n++] = out[6 * c + field];
    qsort(v, n, sizeof v[0], cmp_ll);
    return n ? v[n / 2] : -1;
}

static int run_row(params p, int ctas, int rep, const char *name, long long *hout)
{
    k_hol<<<ctas, THREADS, SMEM>>>(p);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hout, p.out, sizeof(long long) * 6 * ctas, cudaMemcpyDeviceToHost));
    /* SM cycles a microsecond, from the CTA with the median wall time */
    const double mhz = (double)median_of(hout, ctas, 4) / ((double)median_of(hout, ctas, 5) / 1e3);
    printf("%-12s %5d %4d | %9.2f %9.2f %9.2f %9.2f %9.2f  (%.0f MHz)\n", name, ctas, rep,
           median_of(hout, ctas, 0) / mhz, median_of(hout, ctas, 1) / mhz, median_of(hout, ctas, 2) / mhz,
           median_of(hout, ctas, 3) / mhz, median_of(hout, ctas, 4) / mhz, mhz);
    return 0;
}

int main()
{
    const int max_ctas = 132, nstore = 2, nload = 256;
    char *src, *ddst, *hdst_dev;
    long long *out, hout[6 * max_ctas];
    const size_t dst_bytes = (size_t)max_ctas * STORE_BYTES * nstore;
    if (filled(SRC_BYTES, 1, &src) || host_mapped(dst_bytes, &hdst_dev)) return 1;
    CK(cudaMalloc(&ddst, dst_bytes));
    CK(cudaMalloc(&out, sizeof hout));
    CK(cudaFuncSetAttribute(k_hol, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    const char *names[] = {"none",      "tma->device",  "tma->host", "lsu->host", "tma->host 4K",
                           "tma<-host", "tma->host w0", "1/8 burst", "1/8 paced", "w0 units",
                           "1/8 w0 burst", "1/8 w0 units", "w0 done", "1/8 w0 done", "1/8 paced 1K", "paced N"};
    printf("%-12s %5s %4s | %9s %9s %9s %9s %9s  (us, median over CTAs; loads: %d x %d B, stores: %d x %d B a CTA)\n",
           "stores", "ctas", "rep", "loads", "1st load", "st read", "st done", "CTA", nload, LOAD_BYTES, nstore,
           STORE_BYTES);
    const int ctas_list[] = {1, 132};
    for (int ci = 0; ci < 2; ++ci)
        for (int rep = 0; rep < 3; ++rep)
            for (int m = 0; m < SUB_PACED_N; ++m) {
                /* TMA_FROM_HOST reads 2 x 32 KiB into one buffer: the second overwrites the first (timing only) */
                params p = {src, m == TMA_DEVICE ? ddst : hdst_dev, m, m == NONE ? 0 : nstore, nload, 0, 0, 0, out};
                if (run_row(p, ctas_list[ci], rep, names[m], hout)) return 1;
            }
    /* Which piece sizes still interleave with the loads: the same 512 bytes a load on average (a 128x128 tile's
     * 32 KiB over 64 k-blocks of 32 KiB, as in 70B-o's stage 0) in pieces of 512 B to 8 KiB, with every 8th and
     * every 4th CTA storing (~40% and ~80% of the host link), beside the burst and no stores */
    printf("\npiece sweep, 132 CTAs, 512 B a load on average\n");
    const int piece_list[] = {512, 1024, 2048, 4096, 8192}, sub_list[] = {8, 4};
    for (int rep = 0; rep < 3; ++rep)
        for (int si = 0; si < 2; ++si)
            for (int pi = 0; pi < 5; ++pi) {
                const int piece = piece_list[pi], sub = sub_list[si];
                char name[32];
                snprintf(name, sizeof name, "1/%d %dB/%d", sub, piece, piece / 512);
                params p = {src, hdst_dev, SUB_PACED_N, nstore, nload, piece, piece / 512, sub, out};
                if (run_row(p, 132, rep, name, hout)) return 1;
            }
    return 0;
}
