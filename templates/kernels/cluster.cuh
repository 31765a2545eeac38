/* Inline-PTX wrappers for CTA clusters (pairs): the CTA's rank, distributed-shared-memory addresses,
 * remote mbarrier arrivals, the cluster-wide barrier and the multicast TMA load. Used by gemm_sm90.cuh
 * only when TPG_CLUSTER_M * TPG_CLUSTER_N > 1; same conventions as ptx.cuh (one instruction each,
 * memory clobbers, 32-bit shared-window addresses).
 */
#ifndef TPG_CLUSTER_CUH
#define TPG_CLUSTER_CUH

#include <stdint.h>
#include <cuda.h>

/* Rank of this CTA inside its cluster. The kernel's clusters are 1-D along x (runtime/src/graph.c sets
 * clusterDim = {cluster_m * cluster_n, 1, 1}), so this equals blockIdx.x % cluster size. */
__device__ __forceinline__ uint32_t tpg_cluster_rank()
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

/* The shared::cluster address of the same offset `addr` (a shared::cta address) in CTA `rank`. */
__device__ __forceinline__ uint32_t tpg_mapa(uint32_t addr, uint32_t rank)
{
    uint32_t d;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"(addr), "r"(rank));
    return d;
}

/* Arrive on an mbarrier of any CTA of the cluster (address from tpg_mapa). Release at CTA scope, as
 * for a local arrival: the only hazard this arrival guards is write-after-read (the partner's producer
 * multicasts new data into the slot this warp read), and those reads completed at wgmma.wait_group,
 * before the arrive issues; nothing is published through this barrier, so a cluster-scope release
 * (a cluster-wide fence per k-block and warp) would order nothing more. */
__device__ __forceinline__ void tpg_mbar_arrive_cluster(uint32_t cluster_addr)
{
    asm volatile("mbarrier.arrive.release.cta.shared::cluster.b64 _, [%0];" ::"r"(cluster_addr) : "memory");
}

/* Every thread of every CTA of the cluster, once: arrive (release) then wait (acquire). Not the
 * .aligned form, so that warps that diverged (the producer warp) may execute it. */
__device__ __forceinline__ void tpg_cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release;\n"
                 "barrier.cluster.wait.acquire;" ::: "memory");
}

/* Multicast form of tpg_tma_load_2d: the box lands at the same CTA-relative smem offset `dst` in every
 * CTA whose bit is set in `mask`, and each of those CTAs' mbarrier at offset `bar` gets the box's bytes
 * as complete_tx (so every receiving CTA's expect_tx must count it). */
__device__ __forceinline__ void tpg_tma_load_2d_mc(uint32_t dst, const CUtensorMap *map, uint32_t bar, int x, int y,
                                                   uint16_t mask)
{
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(x), "r"(y), "h"(mask)
        : "memory");
}

#endif /* TPG_CLUSTER_CUH */
