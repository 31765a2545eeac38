/* The epilogue's inputs besides the accumulators: the output element pairs (load, widen, pack) and the
 * per-unit loads of the sources - the reduce-scatter partial and C (beta != 0) - with the arithmetic
 * that folds them into the accumulators. Used by epilogue.cuh and epilogue_deferred.cuh.
 *
 * Sources may live in peer memory and are written by other agents during the launch, so they are read
 * with ld.global.cg (L2, never a stale L1 line), in fp32 before rounding, after the flag acquire.
 */
#ifndef TPG_EPILOGUE_SOURCES_CUH
#define TPG_EPILOGUE_SOURCES_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include "gemm_params.h"
#include "scheduler.cuh"

/* Output element types by tpg_dtype value: a pair of adjacent columns is the unit of load/pack. A
 * source pair is fetched raw (fetch: one ld.global.cg) and widened to fp32 later (widen), so that a
 * chunk's loads can all be in flight before the first one is used. */
/* One 4-byte load through L2 only (.cg: a line another agent rewrote is never read stale from L1). */
__device__ __forceinline__ uint32_t tpg_ld_cg_b32(const void *ptr)
{
    uint32_t b;
    asm volatile("ld.global.cg.b32 %0, [%1];" : "=r"(b) : "l"(ptr));
    return b;
}

template <int CD> struct tpg_cd_pair;
template <> struct tpg_cd_pair<0> { /* bf16 */
    typedef __nv_bfloat16 T;
    typedef uint32_t raw;
    static __device__ __forceinline__ raw zero() { return 0u; }
    static __device__ __forceinline__ raw fetch(const T *ptr) { return tpg_ld_cg_b32(ptr); }
    static __device__ __forceinline__ float2 widen(raw b)
    {
        return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162 *>(&b));
    }
    static __device__ __forceinline__ uint32_t pack(float x, float y)
    {
        __nv_bfloat162 v = __floats2bfloat162_rn(x, y);
        return *reinterpret_cast<uint32_t *>(&v);
    }
};
template <> struct tpg_cd_pair<1> { /* fp16 */
    typedef __half T;
    typedef uint32_t raw;
    static __device__ __forceinline__ raw zero() { return 0u; }
    static __device__ __forceinline__ raw fetch(const T *ptr) { return tpg_ld_cg_b32(ptr); }
    static __device__ __forceinline__ float2 widen(raw b) { return __half22float2(*reinterpret_cast<__half2 *>(&b)); }
    static __device__ __forceinline__ uint32_t pack(float x, float y)
    {
        __half2 v = __floats2half2_rn(x, y);
        return *reinterpret_cast<uint32_t *>(&v);
    }
};
template <> struct tpg_cd_pair<4> { /* fp32: stored with st.shared.v2, no pack */
    typedef float T;
    typedef float2 raw;
    static __device__ __forceinline__ raw zero() { return make_float2(0.0f, 0.0f); }
    static __device__ __forceinline__ raw fetch(const T *ptr)
    {
        float2 v;
        asm volatile("ld.global.cg.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "l"(ptr));
        return v;
    }
    static __device__ __forceinline__ float2 widen(raw v) { return v; }
};

/* `partials: f32` (TPG_PARTIAL_F32 1): the reduce-scatter partials that move between stages are fp32, so the
 * tp - 1 roundings of a 16-bit partial (the error of a ring reduce-scatter in the output type: reference.cu's
 * bound grows with them) go away; the last stage still writes the output type. A received partial's element
 * type: */
#ifndef TPG_PARTIAL_F32
#define TPG_PARTIAL_F32 0
#endif
template <int CD> struct tpg_part_dtype {
    static constexpr int value = TPG_PARTIAL_F32 ? 4 : CD;
};

/* The partial and C pairs of one chunk of one m64 slab for this thread: [8-column block][row lo/hi].
 * Fetched all at once (kCB * 2 loads per source in flight) before tpg_epi_values uses any of them:
 * loading next to each use made every pair a full L2/HBM round trip in sequence, which left the
 * reduce-scatter epilogue longer than the other warpgroup's mainloop (timeline_rs: stage 1 ~20%
 * slower than stage 0). Rows >= m and columns >= n read as zero (n is a multiple of 8, the pair even). */
template <int CD, int KCB> struct tpg_epi_sources {
    typename tpg_cd_pair<tpg_part_dtype<CD>::value>::raw part[KCB][2];
    typename tpg_cd_pair<CD>::raw c[KCB][2];
};

template <int CD, int KCB>
__device__ __forceinline__ void tpg_epi_fetch(tpg_epi_sources<CD, KCB> &src, int r_lo, int col0, int m, int n,
                                              const typename tpg_cd_pair<tpg_part_dtype<CD>::value>::T *prow,
                                              const typename tpg_cd_pair<CD>::T *crow, long long p_ld, long long c_ld)
{
    typedef tpg_cd_pair<CD> P;
    typedef tpg_cd_pair<tpg_part_dtype<CD>::value> PP;
#pragma unroll
    for (int b = 0; b < KCB; ++b)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int col = col0 + 8 * b;
            const bool in = r_lo + 8 * h < m && col < n;
            src.part[b][h] = prow && in ? PP::fetch(prow + 8 * h * p_ld + col) : PP::zero();
            src.c[b][h] = crow && in ? P::fetch(crow + 8 * h * c_ld + col) : P::zero();
        }
}

/* Apply scale, partial and beta*C in place to the 8-column block `jb` of one m64 slab (chunk block b).
 * In place because the next tile's wgmma reads these registers ("+f"): a copy would keep both alive. */
template <int CD, int BN, int KCB>
__device__ __forceinline__ void tpg_epi_values(float (&acc)[BN / 2], int jb, int b, const tpg_epi_sources<CD, KCB> &src,
                                               bool has_part, bool has_c, float scale, float beta)
{
    typedef tpg_cd_pair<CD> P;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float &x = acc[4 * jb + 2 * h], &y = acc[4 * jb + 2 * h + 1];
        x *= scale;
        y *= scale;
        if (has_part) {
            const float2 v = tpg_cd_pair<tpg_part_dtype<CD>::value>::widen(src.part[b][h]);
            x += v.x;
            y += v.y;
        }
        if (has_c) {
            const float2 v = P::widen(src.c[b][h]);
            x += beta * v.x;
            y += beta * v.y;
        }
    }
}

/* The tile's epilogue sources (NULL: none): the reduce-scatter partial, and C when beta != 0. */
template <int CD> struct tpg_epi_bases {
    const typename tpg_cd_pair<tpg_part_dtype<CD>::value>::T *part;
    const typename tpg_cd_pair<CD>::T *c;
};

template <int CD>
__device__ __forceinline__ tpg_epi_bases<CD> tpg_epi_source_bases(const tpg_gemm_params &p, const tpg_stage_params &sp,
                                                                  const tpg_tile &tile)
{
    typedef typename tpg_cd_pair<CD>::T T;
    typedef typename tpg_cd_pair<tpg_part_dtype<CD>::value>::T PT;
    tpg_epi_bases<CD> b;
    b.part = sp.partial ? static_cast<const PT *>(sp.partial) + (long long)tile.batch * sp.partial_batch : nullptr;
    b.c = sp.c != nullptr && p.beta != 0.0f ? static_cast<const T *>(sp.c) + (long long)tile.batch * sp.c_batch
                                            : nullptr;
    return b;
}

/* out = scale * acc (+ partial) (+ beta * C) in place, for the columns of chunk c of slab j. */
template <int CD, int BN, int KCB>
__device__ __forceinline__ void tpg_epi_chunk_values(const tpg_gemm_params &p, const tpg_stage_params &sp,
                                                     const tpg_tile &tile, float (&acc)[BN / 2], int c, int r_lo,
                                                     int col0, int lane, float scale)
{
    typedef typename tpg_cd_pair<CD>::T T;
    typedef typename tpg_cd_pair<tpg_part_dtype<CD>::value>::T PT;
    const PT *part = sp.partial ? static_cast<const PT *>(sp.partial) + (long long)tile.batch * sp.partial_batch : nullptr;
    const T *cs = sp.c != nullptr && p.beta != 0.0f ? static_cast<const T *>(sp.c) + (long long)tile.batch * sp.c_batch
                                                     : nullptr;
    if (part || cs) {
        const PT *prow = part ? part + (long long)r_lo * sp.partial_ld : nullptr;
        const T *crow = cs ? cs + (long long)r_lo * sp.c_ld : nullptr;
        /* fp32 partials take twice the registers: loaded and added half a chunk at a time (all at once, the
         * wide kernel spilled next to its held deferred stores) */
        constexpr int kPass = tpg_part_dtype<CD>::value == 4 && CD != 4 && KCB % 2 == 0 ? KCB / 2 : KCB;
#pragma unroll
        for (int h = 0; h < KCB / kPass; ++h) {
            tpg_epi_sources<CD, kPass> src;
            tpg_epi_fetch<CD, kPass>(src, r_lo, col0 + 8 * kPass * h + 2 * (lane & 3), p.m, p.n, prow, crow,
                                     sp.partial_ld, sp.c_ld);
#pragma unroll
            for (int b = 0; b < kPass; ++b)
                tpg_epi_values<CD, BN, kPass>(acc, c * KCB + h * kPass + b, b, src, prow != nullptr, crow != nullptr,
                                              scale, p.beta);
        }
    } else if (scale != 1.0f) { /* uniform; alpha = 1 (the common case) skips 4 * KCB multiplies per chunk */
#pragma unroll
        for (int i = 0; i < 4 * KCB; ++i) acc[4 * c * KCB + i] *= scale;
    }
}

#endif /* TPG_EPILOGUE_SOURCES_CUH */
