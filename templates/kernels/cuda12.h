/* What the kernels do differently when CUDA 12.4-12.8 builds them (the README's floor is 12.4). Their
 * NVVM and ptxas need help where 12.9 and 13 need none: without it, they serialized the wgmmas of 23 of
 * the 24 shipped kernels (ptxas C7515 / C7511) and kept the 128x128 ping-pong's accumulators in local
 * memory. tests/toolkit_floor.py checks every kernel instance with a release's NVRTC and ptxas
 * (docs/TESTING.md). 12.9 and 13 compile the source that was measured: nvcc 13's SASS of the library's
 * kernels is unchanged (the trace build's ping-pong kernels gained a branch at the slab loop's end). */
#ifndef TPG_CUDA12_H
#define TPG_CUDA12_H

#if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ < 9
#define TPG_CUDA12 1
#else
#define TPG_CUDA12 0
#endif

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
