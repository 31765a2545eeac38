/* Bulk-copy helpers shared by the TMA experiments (tma_hol.cu, tma_sync.cu): smem addresses, %globaltimer,
 * mbarrier init / expect / wait, and 1-D bulk loads and stores (cp.async.bulk, no tensor map); on the host, the
 * slow destination both store into and the L2-resident load source. */
#ifndef TPG_EXPERIMENT_TMA_BULK_CUH
#define TPG_EXPERIMENT_TMA_BULK_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_check.h"

/* Host-mapped pinned memory of `bytes` (reached over PCIe: the slow link standing in for NVLink): its device pointer
 * in *d; 1 if a call failed (CK printed which) */
static inline int host_mapped(size_t bytes, char **d)
{
    char *h;
    CK(cudaHostAlloc(&h, bytes, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer((void **)d, h, 0));
    return 0;
}

/* `bytes` of device memory filled with `byte` in *p (a load source: its values do not matter to the timing) */
static inline int filled(size_t bytes, int byte, char **p)
{
    CK(cudaMalloc(p, bytes));
    CK(cudaMemset(*p, byte, bytes));
    return 0;
}

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned long long gtime()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ void bar_init(uint32_t b)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
}
__device__ __forceinline__ void bar_expect(uint32_t b, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bar_wait(uint32_t b, uint32_t parity)
{
    asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%0], %1;\n"
                 " @!p bra W;\n}" ::"r"(b), "r"(parity) : "memory");
}
__device__ __forceinline__ void bulk_load(uint32_t dst, const void *src, uint32_t bytes, uint32_t b)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(b) : "memory");
}
__device__ __forceinline__ void bulk_store(void *dst, uint32_t src, uint32_t bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes)
                 : "memory");
}

#endif /* TPG_EXPERIMENT_TMA_BULK_CUH */
