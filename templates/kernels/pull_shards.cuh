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
 * here. The pieces are cut into gridDim.x slices that CTAs claim from a queue (pull_next), not one slice per CTA:
 * the producer waits until every slice is done, and with fixed slices a CTA that is not resident - an SM held by
 * another kernel, say a framework's NCCL kernel that waits on a peer, which waits on this call - would hold up the
 * CTAs that are, forever; with the queue the resident CTAs pull the absent ones' slices and a late CTA finds none
 * left. The slots are read next by TMA (the async proxy) on every SM of this device: each thread orders its generic
 * stores before async-proxy reads, the CTA barrier gathers them, and one thread counts the slice done with a release
 * at GPU scope (the usual grid-wide handoff). The words are per launch: every CTA's producer counts itself in
 * pull_seen once it saw every slice done (after its own last claim), and the last one resets the three words, so a
 * launch that pulls does not depend on what earlier launches of the op did: they may have used the copy engine
 * (copy_plan.h, tpg_gather_pulls).
 */
#ifndef TPG_PULL_SHARDS_CUH
#define TPG_PULL_SHARDS_CUH

#include <stdint.h>
#include "gemm_params.h"
#include "ptx.cuh"
#include "sync.cuh"

/* TPG_DIAG_PULL_FIXED_SLICES (self-test instance wide3fx only): CTA c pulls slice c and no other, the layout before
 * the queue - the control of `kernel_selftest --pulls`, which must see it wait for a CTA kept off its SM. */
#ifndef TPG_DIAG_PULL_FIXED_SLICES
#define TPG_DIAG_PULL_FIXED_SLICES 0
#endif

/* TPG_DIAG_NO_PULLS (experimental x_ kernels of TP = 1 local-GEMM A/B runs only, which never gather): the kernel is
 * built without the prologue below and the producer's wait for it - what every kernel was before the gathered walk
 * pulled its shards - so that a run can time what the prologue costs a local GEMM. */
#ifndef TPG_DIAG_NO_PULLS
#define TPG_DIAG_NO_PULLS 0
#endif

/* Every thread of the CTA: claims slices of the shards' 16-byte pieces until none is left, copying each into the
 * slots and counting it done. `claim` is two words of the CTA's shared memory that nothing else uses yet (the ring's
 * first slot: the kernel calls this before any load), through which thread 0 hands each claim to the CTA, the two in
 * turn so that one CTA barrier an iteration is enough: it publishes claim k and closes slice k - 1's stores, which
 * thread 0 then counts done. */
__device__ __forceinline__ void tpg_pull_shards(const tpg_gemm_params &p, volatile unsigned int *claim)
{
    const unsigned long long n16 = p.pull_bytes / 16u;
    const unsigned int slices = gridDim.x;
    const unsigned long long per = (n16 + slices - 1u) / slices;
    char *const dst = (char *)p.pull_dst;
#pragma unroll 1
    for (unsigned int k = 0;; ++k) {
        if (threadIdx.x == 0)
            claim[k & 1u] = TPG_DIAG_PULL_FIXED_SLICES ? (k ? slices : blockIdx.x) : atomicAdd(p.pull_next, 1u);
        __syncthreads();
        if (threadIdx.x == 0 && k > 0) {
            __threadfence();
            atomicAdd(p.pull_count, 1u);
        }
        const unsigned int s = claim[k & 1u];
        if (s >= slices) return;
        const unsigned long long end = min(n16, (s + 1ull) * per);
#pragma unroll 1
        for (unsigned long long i = s * per + threadIdx.x; i < end; i += blockDim.x) {
            uint4 v[TPG_MAX_TP]; /* every shard's piece in flight before the first store */
#pragma unroll
            for (int b = 0; b < TPG_MAX_TP; ++b)
                if (b < p.pull_shards) v[b] = reinterpret_cast<const uint4 *>(p.pull_src[b])[i];
#pragma unroll
            for (int b = 0; b < TPG_MAX_TP; ++b)
                if (b < p.pull_shards) reinterpret_cast<uint4 *>(dst + (unsigned long long)b * p.pull_bytes)[i] = v[b];
        }
        tpg_fence_proxy_async_global(); /* this thread's stores before the async proxy's reads (TMA) */
    }
}

/* The producer (thread 0, which made its CTA's claims), before its first load: every slice is done, so the slots may
 * be read by TMA. Then it counts its CTA in pull_seen with acquire-release, so the last CTA's reset comes after
 * every other CTA's claims and adds (a release sequence on pull_seen), and no thread of this launch touches the
 * words after it. Returns whether the wait saw every pull (false: it gave up; the trace marks it). */
__device__ __forceinline__ bool tpg_wait_pulls(const tpg_gemm_params &p, unsigned int epoch, bool &gave_up)
{
    const bool seen = tpg_wait_count(p, p.pull_count, gridDim.x, epoch, gave_up);
    tpg_fence_proxy_async_global();
    unsigned int before;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(p.pull_seen) : "memory");
    if (before == gridDim.x - 1u) {
        *(volatile unsigned int *)p.pull_next = 0u;
        *(volatile unsigned int *)p.pull_count = 0u;
        *(volatile unsigned int *)p.pull_seen = 0u;
    }
    return seen;
}

#endif /* TPG_PULL_SHARDS_CUH */
