/* What the kernels do differently when CUDA 12.4-12.8 builds them (the README's floor is 12.4). Their
 * NVVM and ptxas need help where 12.9 and 13 need none: without it, they serialized the wgmmas of 23 of
 * the 24 shipped kernels (ptxas C7515 / C7511) and kept the 128x128 ping-pong's accumulators in local
 * memory; and with 12.4 and 12.5 every kernel faulted (tpg_stage below). tests/toolkit_floor.py checks
 * every kernel instance with a release's NVRTC and ptxas (docs/TESTING.md). 12.9 and 13 compile the source
 * that was measured: nvcc 13's SASS of the library's kernels is unchanged (the trace build's ping-pong
 * kernels gained a branch at the slab loop's end). */
#ifndef TPG_CUDA12_H
#define TPG_CUDA12_H

#include <stdint.h>
#include "gemm_params.h"

/* Both switches below follow the compiler's release; a -D of either (0 or 1) overrides it, for a diagnostic build
 * that times one 12.x path under nvcc 13 (bench/results/experiments/call_cuda12_paths.sh). */
#ifndef TPG_CUDA12
#if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ < 9
#define TPG_CUDA12 1
#else
#define TPG_CUDA12 0
#endif
#endif

/* 1 where ptxas drops the parameter window's base from `cvta.param` of an address with a run-time offset
 * (12.4 and 12.5; 12.6 on add it): the generic address of p.stage[s].a_map for a variable s came out as its
 * bare offset in the parameter block, so the first TMA of every kernel faulted ("misaligned address"). A
 * constant offset is assembled right. */
#ifndef TPG_CUDA12_PARAM_BASE
#if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ < 6
#define TPG_CUDA12_PARAM_BASE 1
#else
#define TPG_CUDA12_PARAM_BASE 0
#endif
#endif

/* p.stage[s], for a run-time s. Where TPG_CUDA12_PARAM_BASE, the stage is reached from the generic address of
 * p.stage[0] (a constant offset), which the empty asm hides from NVVM - it would fold the index back into the
 * parameter address - so the tensor maps' addresses (&sp.a_map) are right; the stage's other fields are then
 * generic loads from the parameter window. The asm is volatile so that NVVM leaves it in the loops that use it
 * (the base it copies is a constant-bank load, which ptxas can redo there): a 64-bit address held across the
 * k-loop spilled in the trace build's 2x1 producer. Elsewhere it is plain p.stage[s]. */
__device__ __forceinline__ const tpg_stage_params &tpg_stage(const tpg_gemm_params &p, int s)
{
#if TPG_CUDA12_PARAM_BASE
    uint64_t first = reinterpret_cast<uint64_t>(&p.stage[0]);
    asm volatile("" : "+l"(first));
    return reinterpret_cast<const tpg_stage_params *>(first)[s];
#else
    return p.stage[s];
#endif
}

/* A loop whose index is a compile-time constant in every iteration, whatever the unroller decides:
 * f(tpg_index<I>()) for I = 0 .. N-1. A `#pragma unroll` is a request, which NVVM of 12.4-12.8 declined
 * for the epilogue's slab loop of the 128x128 ping-pong (acc[j] with a variable j lives in local memory). */
template <int I> struct tpg_index {
    static constexpr int value = I;
};

template <int N, int I = 0, class F> __device__ __forceinline__ void tpg_static_for(const F &f)
{
    if constexpr (I < N) {
        f(tpg_index<I>());
        tpg_static_for<N, I + 1>(f);
    }
}

#endif /* TPG_CUDA12_H */
