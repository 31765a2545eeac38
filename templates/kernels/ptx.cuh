/* Inline-PTX wrappers for the sm90 GEMM family: mbarriers, TMA loads/stores, stmatrix, proxy fences,
 * setmaxnreg.
 * (wgmma lives in wgmma.cuh, cross-device flags in sync.cuh.)
 *
 * Every wrapper is one PTX instruction (or a tiny loop around one) with the memory clobber that keeps
 * the compiler from moving shared/global accesses across it. Shared-memory operands are passed as
 * 32-bit shared-window addresses (tpg_smem_addr), which is what the .shared::cta forms expect.
 * Requires sm_90a (wgmma, setmaxnreg exist only on the arch-specific target).
 */
#ifndef TPG_PTX_CUH
#define TPG_PTX_CUH

#include <stdint.h>
#include <cuda.h>

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ != 900 || !defined(__CUDA_ARCH_FEAT_SM90_ALL))
#error "tpgemm sm90 kernels must be compiled for sm_90a only: -gencode arch=compute_90a,code=sm_90a"
#endif

__device__ __forceinline__ uint32_t tpg_smem_addr(const void *p)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/* ---- programmatic dependent launch ------------------------------------------------------------ */

/* Wait until the grids this launch depends on (the previous kernel in the stream, when launched with
 * programmatic stream serialization) have completed and their memory is visible; a no-op otherwise. */
__device__ __forceinline__ void tpg_griddep_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

/* Let the next programmatically dependent launch start scheduling its CTAs (on SMs this grid frees). */
__device__ __forceinline__ void tpg_griddep_launch_dependents() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

/* ---- mbarrier ---------------------------------------------------------------------------------- */

__device__ __forceinline__ void tpg_mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

/* Make the mbarrier inits visible to the async proxy (TMA complete_tx) and to the other threads;
 * followed by a CTA-wide barrier in the kernel. */
__device__ __forceinline__ void tpg_fence_mbar_init()
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/* Producer: one arrival that also announces `bytes` of transaction that the TMA loads will complete. */
__device__ __forceinline__ void tpg_mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
}

/* Consumer: plain arrival (releases a ring slot to the producer). */
__device__ __forceinline__ void tpg_mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

/* Block until the phase with parity `parity` of the barrier has completed. try_wait has a
 * hardware-bounded suspend, so the loop does not burn issue slots. Barrier waits are not bounded by
 * p.timeout_ns: every arrival they need is issued by this CTA itself (cross-device waits are the
 * bounded ones, sync.cuh), so they always finish. */
__device__ __forceinline__ void tpg_mbar_wait(uint32_t bar, uint32_t parity)
{
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "TPG_WAIT_%=:\n"
        "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra TPG_WAIT_%=;\n"
        "}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}

/* ---- TMA --------------------------------------------------------------------------------------- */

/* Pull the tensor map (a __grid_constant__ kernel parameter) into the descriptor cache early. */
__device__ __forceinline__ void tpg_prefetch_tensormap(const CUtensorMap *map)
{
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

/* 2-D tiled TMA load of the box at (x = inner/K coordinate, y = row) into smem `dst`; completion is
 * counted in bytes on mbarrier `bar`. Out-of-bounds parts of the box are zero-filled and still count
 * as full-box bytes. */
__device__ __forceinline__ void tpg_tma_load_2d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int x, int y)
{
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(x), "r"(y)
        : "memory");
}

/* 3-D tiled TMA load of the box at (x = column, y = row, z = batch) of `map` into smem `dst`, counted in
 * bytes on mbarrier `bar` (the epilogue's reduce-scatter partials, epilogue_tma.cuh). Out-of-bounds
 * parts of the box are zero-filled and still count as full-box bytes. */
__device__ __forceinline__ void tpg_tma_load_3d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int x, int y, int z)
{
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(x), "r"(y), "r"(z)
        : "memory");
}

/* 3-D tiled TMA store of the smem box at `src` to (x = column, y = row, z = batch) of `map`
 * (cp.async.bulk.tensor, bulk-group completion). Parts of the box outside the map's extent are not
 * written, which is how ragged tiles are clipped. */
__device__ __forceinline__ void tpg_tma_store_3d(const CUtensorMap *map, uint32_t src, int x, int y, int z)
{
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                     reinterpret_cast<uint64_t>(map)),
                 "r"(src), "r"(x), "r"(y), "r"(z)
                 : "memory");
}

/* 1-D bulk copy of `bytes` (a multiple of 16; both addresses 16-byte aligned) from global `src` into smem `dst`,
 * counted in bytes on mbarrier `bar` (a stream-K finisher's contributions, gemm_sm90_fixup.cuh). */
__device__ __forceinline__ void tpg_bulk_load(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(src)), "r"(bytes), "r"(bar)
                 : "memory");
}

/* 1-D bulk copy of `bytes` (a multiple of 16; both addresses 16-byte aligned) from smem `src` to global `dst`, in
 * the thread's current bulk group (self-test diagnostics only: TPG_DIAG_ROW_STORES, epilogue.cuh). */
__device__ __forceinline__ void tpg_bulk_store(void *dst, uint32_t src, uint32_t bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(reinterpret_cast<uint64_t>(dst)),
                 "r"(src), "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void tpg_bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

/* Wait until at most N of this thread's bulk groups are pending *reading* smem (the smem may then be
 * reused; the global writes may still be in flight). */
template <int N> __device__ __forceinline__ void tpg_bulk_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

/* Wait until all of this thread's bulk groups are complete, global writes included (before a flag
 * that publishes them, and before the CTA exits). */
__device__ __forceinline__ void tpg_bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

/* Four 8x8 b16 matrices to smem: lane i gives the row address of matrix i/8, row i%8; register q
 * of every lane holds its two elements of matrix q (the wgmma accumulator fragment layout). */
__device__ __forceinline__ void tpg_stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1),
                 "r"(r2), "r"(r3)
                 : "memory");
}

/* The inverse of tpg_stmatrix_x4: lane i gives the row address of matrix i/8, row i%8, and register q of
 * every lane receives its two elements of matrix q (the accumulator fragment layout). */
__device__ __forceinline__ void tpg_ldmatrix_x4(uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr)
                 : "memory");
}

__device__ __forceinline__ void tpg_st_shared_v2(uint32_t addr, float x, float y)
{
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

__device__ __forceinline__ void tpg_st_shared_u32(uint32_t addr, unsigned int v)
{
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned int tpg_ld_shared_u32(uint32_t addr)
{
    unsigned int v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

__device__ __forceinline__ float4 tpg_ld_shared_v4(uint32_t addr)
{
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr)
                 : "memory");
    return v;
}

/* ---- fences ------------------------------------------------------------------------------------ */

/* Order earlier generic-proxy global accesses (e.g. the acquire of a ready flag) before later
 * async-proxy (TMA) accesses of global memory. */
__device__ __forceinline__ void tpg_fence_proxy_async_global()
{
    asm volatile("fence.proxy.async.global;" ::: "memory");
}

/* Same between generic smem writes and async-proxy smem reads (TMA store, wgmma from smem). */
__device__ __forceinline__ void tpg_fence_proxy_async_smem()
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/* ---- warpgroup register budget ------------------------------------------------------------------ */

/* Must be executed by all four warps of a warpgroup, convergently; N multiple of 8 in [24, 256]. */
template <int N> __device__ __forceinline__ void tpg_setmaxnreg_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}
template <int N> __device__ __forceinline__ void tpg_setmaxnreg_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

/* Named barrier among `count` threads (multiple of 32); id 0 is __syncthreads, so use id >= 1. */
__device__ __forceinline__ void tpg_named_barrier(uint32_t id, uint32_t count)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

/* Arrive on named barrier `id` without waiting (the producer side of an ordering handshake whose other
 * side is a tpg_named_barrier with the same total count). */
__device__ __forceinline__ void tpg_named_arrive(uint32_t id, uint32_t count)
{
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

#endif /* TPG_PTX_CUH */
