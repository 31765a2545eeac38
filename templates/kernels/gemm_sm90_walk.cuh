/* The walk of a persistent CTA of the sm90 GEMM kernel (its stream-K fix-up: gemm_sm90_fixup.cuh). Included by
 * gemm_sm90.cuh inside its anonymous namespace, after the compile-time constants (kStreamK, kBM, kBN, ...), before
 * gemm_sm90_roles.cuh, whose producer and cooperative consumers walk the same items in the same order;
 * not a stand-alone header.
 *
 * Items of cluster `first` (of `stride` clusters): its data-parallel units uid = first, first + stride, ...
 * (scheduler.cuh), then - when the launch has a stream-K region (stream_k.h; opt-in `stream_k: true`, one-stage
 * launches) - its fragments of the region's last tiles. Ping-pong keeps its own walk (it alternates units).
 */
#ifndef TPG_GEMM_SM90_WALK_CUH
#define TPG_GEMM_SM90_WALK_CUH

/* Stream-K tiles of this launch (stream_k.h): only one-stage launches (TP = 1, the gathered and one-hop walks' one
 * GEMM of all rows, whose tile flags the finisher's epilogue raises) of kernels built for it; 0 for every other
 * launch, whatever the runtime wrote. */
__device__ __forceinline__ int tpg_sk_region(const tpg_gemm_params &p)
{
    return kStreamK && p.num_stages == 1 ? p.sk_tiles : 0;
}

/* The index in the stream-K region of the tile of unit `uid` (the region is the walk's last tpg_sk_region tiles):
 * the count its contributors add to (gemm_sm90_fixup.cuh). */
__device__ __forceinline__ int tpg_sk_region_tile(const tpg_gemm_params &p, const tpg_tiling &g, int uid)
{
    return uid - (g.total - tpg_sk_region(p));
}

/* The i-th work item of cluster `first` (of `stride`): its data-parallel units uid = first + i * stride
 * below the stream-K region, then its fragments of the region (stream_k.h), in the order producer and
 * consumers both walk. */
struct tpg_work {
    int uid, k0, k1;
    bool contribution; /* a stream-K fragment that does not end its tile: left for the tile's finisher */
    int sk_lo;         /* a finishing fragment adds the sums of CTAs [sk_lo, first); sk_lo == first: none */
};
struct tpg_walk {
    int n; /* items of this CTA; the rest is read from the kernel parameters (no registers) where needed:
              with a region, the data-parallel items are p.sk_rounds for every CTA (stream_k.h) */
    __device__ __forceinline__ tpg_walk(const tpg_gemm_params &p, const tpg_tiling &g, int first, int stride)
    {
        const int sk = tpg_sk_region(p);
        n = sk ? p.sk_rounds + tpg_sk_count(first, stride, sk, g.k_blocks)
               : (first < g.total ? (g.total - first + stride - 1) / stride : 0);
    }
    __device__ __forceinline__ int k_count(const tpg_gemm_params &p, const tpg_tiling &g, int first, int stride,
                                           int i) const
    {
        const int sk = tpg_sk_region(p);
        if (!sk || i < p.sk_rounds) return g.k_blocks;
        const tpg_sk_frag f = tpg_sk_frag_at(first, stride, sk, g.k_blocks, i - p.sk_rounds);
        return f.k1 - f.k0;
    }
    __device__ __forceinline__ tpg_work at(const tpg_gemm_params &p, const tpg_tiling &g, int first, int stride,
                                           int i) const
    {
        tpg_work w = {first + i * stride, 0, g.k_blocks, false, first};
        const int sk = tpg_sk_region(p);
        if (sk && i >= p.sk_rounds) {
            const tpg_sk_frag f = tpg_sk_frag_at(first, stride, sk, g.k_blocks, i - p.sk_rounds);
            w.uid = g.total - sk + f.tile;
            w.k0 = f.k0;
            w.k1 = f.k1;
            w.contribution = f.k1 < g.k_blocks;
            if (!w.contribution) w.sk_lo = tpg_sk_first_contributor(first, stride, sk, g.k_blocks, f);
        }
        return w;
    }
};

#endif /* TPG_GEMM_SM90_WALK_CUH */
