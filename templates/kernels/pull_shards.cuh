/* The gathered all-gather walk's shards, copied by the GEMM itself (tpg_gemm_params.pull_*; the runtime decides
 * when: runtime/src/params.c, gathered_pulls).
 *
 * Why: the gathered walk (few rows a stage) waits for every shard before its first tile. Brought by the graph, each
 * shard is a copy-engine node and a flag node, chained one after another (tp - 1 pairs, plus the own shard's copy),
 * and at these sizes - kilobytes to a few MiB a shard, microseconds of NVLink - each copy-engine operation costs as
 * much again (~2-3 us on an H200: docs/ARCHITECTURE.md, "Copies in pieces"). Here every thread of every CTA reads
 * one 16-byte piece of each shard at once (a peer's A through its mapped address, the own A locally) and stores them
 * into the slots, so all links work together and nothing stands between the start barrier and the tiles but the
 * pulls themselves.
 *
 * Protocol: the graph runs this GEMM after the start barrier, so every peer has entered the call and its shard is
 * this call's; the closing barrier follows this GEMM on every rank, so no peer overwrites its shard while it is read
 * here. The slots are read next by TMA (the async proxy) on every SM of this device: each thread orders its generic
 * stores before async-proxy reads, the CTA barrier gathers them, and one thread counts the CTA in with a release at
 * GPU scope (the usual grid-wide handoff). The producer waits for the whole grid's count (tpg_wait_pulls).
 * The count is per launch (reset by the last producer to read it), so a launch that pulls does not depend on what
 * earlier launches of the op did: they may have used the copy engine (copy_plan.h, tpg_gather_pulls).
 */
#ifndef TPG_PULL_SHARDS_CUH
#define TPG_PULL_SHARDS_CUH

#include <stdint.h>
#include "gemm_params.h"
#include "ptx.cuh"
#include "sync.cuh"

/* Every thread of the CTA: this CTA's share of each shard into its slot, then the CTA counted in. */
__device__ __forceinline__ void tpg_pull_shards(const tpg_gemm_params &p)
{
    const unsigned long long n16 = p.pull_bytes / 16u, step = (unsigned long long)gridDim.x * blockDim.x;
    char *const dst = (char *)p.pull_dst;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += step) {
        uint4 v[TPG_MAX_TP]; /* every shard's piece in flight before the first store */
#pragma unroll
        for (int b = 0; b < TPG_MAX_TP; ++b)
            if (b < p.pull_shards) v[b] = reinterpret_cast<const uint4 *>(p.pull_src[b])[i];
#pragma unroll
        for (int b = 0; b < TPG_MAX_TP; ++b)
            if (b < p.pull_shards) reinterpret_cast<uint4 *>(dst + (unsigned long long)b * p.pull_bytes)[i] = v[b];
    }
    tpg_fence_proxy_async_global();
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(p.pull_count, 1u);
    }
}

/* The producer, before its first load: every CTA of this launch has pulled its share, so the slots may be read by
 * TMA. Then this producer counts itself in pull_seen, and the last one resets both words for the next launch: no
 * thread of this launch reads them after that (tpg_gemm_params.pull_count). */
__device__ __forceinline__ void tpg_wait_pulls(const tpg_gemm_params &p, unsigned int epoch, bool &gave_up)
{
    tpg_wait_count(p, p.pull_count, gridDim.x, epoch, gave_up);
    tpg_fence_proxy_async_global();
    if (atomicAdd(p.pull_seen, 1u) == gridDim.x - 1u) {
        *(volatile unsigned int *)p.pull_count = 0u;
        *(volatile unsigned int *)p.pull_seen = 0u;
    }
}

#endif /* TPG_PULL_SHARDS_CUH */
