/* Epilogue of one output tile, run by all consumer threads (cooperative: consumer warpgroup w owns
 * rows [w * BM/C, (w+1) * BM/C) of the tile, as SLABS m64 slabs).
 *
 *   out = scale * acc (+ partial, after its per-tile flag) (+ beta * C) -> stage.d, bounds-predicated
 *   then, if stage.signal_flags: fence, barrier over the tile's consumers, one release store.
 *
 * This version stores straight from registers (2 elements = 4 or 8 bytes per store) using the wgmma
 * accumulator fragment layout: thread (warp w, lane l) of a warpgroup holds, for column block j of
 * 8 columns, rows 16w + l/4 (values 4j, 4j+1) and 16w + l/4 + 8 (values 4j+2, 4j+3) at columns
 * 8j + 2(l%4) + {0,1}. The only layout-specific part is tpg_store_fragment(); a stmatrix -> smem ->
 * TMA store path replaces that one function (the flag wait/signal around it stays).
 *
 * Sources (partial, C) may live in peer memory and are written by other agents during the launch,
 * so they are read with ld.global.cg (L2, never a stale L1 line) and only after the flag acquire.
 */
#ifndef TPG_EPILOGUE_CUH
#define TPG_EPILOGUE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include "gemm_params.h"
#include "ptx.cuh"
#include "scheduler.cuh"
#include "sync.cuh"

/* Output element types by tpg_dtype value: a pair of adjacent columns is the unit of load/store. */
template <int CD> struct tpg_cd_pair;
template <> struct tpg_cd_pair<0> { /* bf16 */
    typedef __nv_bfloat16 T;
    static __device__ __forceinline__ float2 load(const T *ptr)
    {
        uint32_t b;
        asm volatile("ld.global.cg.b32 %0, [%1];" : "=r"(b) : "l"(ptr));
        __nv_bfloat162 v = *reinterpret_cast<__nv_bfloat162 *>(&b);
        return __bfloat1622float2(v);
    }
    static __device__ __forceinline__ void store(T *ptr, float x, float y)
    {
        *reinterpret_cast<__nv_bfloat162 *>(ptr) = __floats2bfloat162_rn(x, y);
    }
};
template <> struct tpg_cd_pair<1> { /* fp16 */
    typedef __half T;
    static __device__ __forceinline__ float2 load(const T *ptr)
    {
        uint32_t b;
        asm volatile("ld.global.cg.b32 %0, [%1];" : "=r"(b) : "l"(ptr));
        __half2 v = *reinterpret_cast<__half2 *>(&b);
        return __half22float2(v);
    }
    static __device__ __forceinline__ void store(T *ptr, float x, float y)
    {
        *reinterpret_cast<__half2 *>(ptr) = __floats2half2_rn(x, y);
    }
};
template <> struct tpg_cd_pair<4> { /* fp32 */
    typedef float T;
    static __device__ __forceinline__ float2 load(const T *ptr)
    {
        float2 v;
        asm volatile("ld.global.cg.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "l"(ptr));
        return v;
    }
    static __device__ __forceinline__ void store(T *ptr, float x, float y)
    {
        *reinterpret_cast<float2 *>(ptr) = make_float2(x, y);
    }
};

/* Per-tile epilogue sources, resolved once per tile from the stage parameters. */
template <int CD> struct tpg_epi_srcs {
    typedef typename tpg_cd_pair<CD>::T T;
    T *d;
    const T *partial;
    const T *c;
    long long d_ld, p_ld, c_ld;
    float scale, beta;
};

/* Store (with sources) one m64 x BN accumulator slab whose first row is `row0` (tile-global row of
 * the slab) and first column `col0`; rows >= m and columns >= n are dropped (n is a multiple of 8, the
 * column pair is even, so one check covers both columns). */
template <int CD, int BN>
__device__ __forceinline__ void tpg_store_fragment(const tpg_epi_srcs<CD> &s, float (&acc)[BN / 2], int row0,
                                                   int col0, int m, int n, int wg_thread)
{
    typedef tpg_cd_pair<CD> P;
    const int warp = wg_thread >> 5, lane = wg_thread & 31;
    const int r_lo = row0 + 16 * warp + (lane >> 2);
    const int c_base = col0 + 2 * (lane & 3);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int r = r_lo + 8 * h;
        if (r >= m) continue;
        typename P::T *drow = s.d + (long long)r * s.d_ld;
        const typename P::T *prow = s.partial ? s.partial + (long long)r * s.p_ld : nullptr;
        const typename P::T *crow = s.c ? s.c + (long long)r * s.c_ld : nullptr;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
            const int col = c_base + 8 * j;
            if (col >= n) continue;
            /* in place: the next tile's wgmma reads these registers ("+f"), so a copy would
             * keep both alive (256 registers) */
            float &x = acc[4 * j + 2 * h], &y = acc[4 * j + 2 * h + 1];
            x *= s.scale;
            y *= s.scale;
            if (prow) {
                const float2 v = P::load(prow + col);
                x += v.x;
                y += v.y;
            }
            if (crow) {
                const float2 v = P::load(crow + col);
                x += s.beta * v.x;
                y += s.beta * v.y;
            }
            P::store(drow + col, x, y);
        }
    }
}

/* The whole epilogue of one tile, executed by every consumer thread (ctid = 0 .. 128*CONSUMERS-1).
 * Named barrier 1 spans exactly the consumer threads; the producer warpgroup never joins it. */
template <int CD, int BM, int BN, int CONSUMERS, int SLABS>
__device__ __forceinline__ void tpg_epilogue_tile(const tpg_gemm_params &p, const tpg_stage_params &sp,
                                                  const tpg_tile &tile, float (&acc)[SLABS][BN / 2], float scale,
                                                  unsigned int epoch, int ctid, bool &gave_up)
{
    constexpr uint32_t kThreads = 128 * CONSUMERS;
    typedef typename tpg_cd_pair<CD>::T T;

    /* reduce-scatter: the partial of this tile must have fully arrived */
    if (sp.partial && sp.partial_flags) {
        if (ctid == 0) tpg_wait_flag(p, sp.partial_flags + tile.t, epoch, gave_up);
        tpg_named_barrier(1, kThreads);
    }

    tpg_epi_srcs<CD> s;
    s.d = static_cast<T *>(sp.d) + (long long)tile.batch * sp.d_batch;
    s.d_ld = sp.d_ld;
    s.partial = sp.partial ? static_cast<const T *>(sp.partial) + (long long)tile.batch * sp.partial_batch : nullptr;
    s.p_ld = sp.partial_ld;
    const bool use_c = sp.c != nullptr && p.beta != 0.0f;
    s.c = use_c ? static_cast<const T *>(sp.c) + (long long)tile.batch * sp.c_batch : nullptr;
    s.c_ld = sp.c_ld;
    s.scale = scale;
    s.beta = p.beta;

    const int wg = ctid >> 7, wg_thread = ctid & 127;
#pragma unroll
    for (int j = 0; j < SLABS; ++j) {
        const int row0 = tile.tm * BM + (wg * SLABS + j) * 64;
        tpg_store_fragment<CD, BN>(s, acc[j], row0, tile.tn * BN, p.m, p.n, wg_thread);
    }

    /* publish: every storing thread orders its stores system-wide, the barrier collects all of them,
     * then one release store raises the reader's flag (which may sit in a peer's memory) */
    if (sp.signal_flags) {
        __threadfence_system();
        tpg_named_barrier(1, kThreads);
        if (ctid == 0) tpg_st_release_sys(sp.signal_flags + tile.t, epoch);
    }
}

#endif /* TPG_EPILOGUE_CUH */
