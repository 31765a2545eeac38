/* The walk of a persistent CTA and the stream-K fixup of the sm90 GEMM kernel. Included by gemm_sm90.cuh
 * inside its anonymous namespace, after the compile-time constants (kStreamK, kBM, kBN, ...), before
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

/* Does this consumer thread's slab j (cooperative: warpgroup w owns rows w*SLABS*64.. of the tile, its warps 16
 * rows each, a thread rows lane/4 and 8 below) hold a row of the `rows` the tile has (p.m - its first row)? A
 * split tile's sums move only where it does: at M = 16 one warp of four - rows past M are clipped by the stores
 * anyway - so a decode tile's fix-up moves 8 KB, not 32 (3-9% of the GEMM at M = 16, perf_notes/2026-12-03-c). */
template <int SLABS>
__device__ __forceinline__ bool tpg_sk_slab_live(int ctid, int j, int rows)
{
    return (ctid >> 7) * SLABS * 64 + j * 64 + 16 * ((ctid & 127) >> 5) + ((ctid & 31) >> 2) < rows;
}

/* A stream-K contribution: every consumer thread stores its accumulators of the tile's `rows` rows to this
 * CTA's slot as float4s in register order (slot float4 q * THREADS + ctid), so the finisher's threads read back
 * exactly the values of their own registers; then, after a barrier over all consumers, one release raises the
 * flag (cumulative: it covers every thread's stores ordered before it by the barrier). */
template <int CONSUMERS, int SLABS, int ACCN>
__device__ __forceinline__ void tpg_sk_contribute(const tpg_gemm_params &p, const float (&acc)[SLABS][ACCN], int rows,
                                                  int ctid)
{
    constexpr int kThreadsC = 128 * CONSUMERS;
    float4 *slot = reinterpret_cast<float4 *>(p.sk_partials + (size_t)blockIdx.x * (kBM * kBN));
#pragma unroll
    for (int j = 0; j < SLABS; ++j)
        if (tpg_sk_slab_live<SLABS>(ctid, j, rows))
#pragma unroll
            for (int q = 0; q < ACCN / 4; ++q)
                __stcg(slot + (j * (ACCN / 4) + q) * kThreadsC + ctid,
                       make_float4(acc[j][4 * q], acc[j][4 * q + 1], acc[j][4 * q + 2], acc[j][4 * q + 3]));
    tpg_named_barrier(1, kThreadsC);
    if (ctid == 0) tpg_st_release_sys(p.sk_flags + blockIdx.x, 1u);
}

/* The finisher of a split tile adds the contributions of CTAs [lo, hi), in that order (deterministic):
 * a consumer thread per flag waits for it (bounded: a timeout leaves the sums wrong and is reported) and
 * resets it for the next launch - nothing of this launch raises it again - then a barrier, then every
 * thread reads its own values of the tile's `rows` rows from L2 (.cg: the slots were written by other SMs). */
template <int CONSUMERS, int SLABS, int ACCN>
__device__ __forceinline__ void tpg_sk_add_contributions(const tpg_gemm_params &p, float (&acc)[SLABS][ACCN], int rows,
                                                         int lo, int hi, int ctid, bool &gave_up)
{
    constexpr int kThreadsC = 128 * CONSUMERS;
    /* one contributor's flag a thread, all at once: one thread's acquires in a row cost up to 13% of a decode GEMM
     * with 7 contributors a tile (docs/perf_notes/2026-12-03-c.md); this launch's own CTAs: no epoch to give up on */
    for (int c = lo + ctid; c < hi; c += kThreadsC) {
        tpg_wait_flag(p, p.sk_flags + c, 1u, gave_up, false);
        p.sk_flags[c] = 0u;
    }
    tpg_named_barrier(1, kThreadsC);
    for (int c = lo; c < hi; ++c) {
        const float4 *slot = reinterpret_cast<const float4 *>(p.sk_partials + (size_t)c * (kBM * kBN));
#pragma unroll
        for (int j = 0; j < SLABS; ++j)
            if (tpg_sk_slab_live<SLABS>(ctid, j, rows))
#pragma unroll
                for (int q = 0; q < ACCN / 4; ++q) {
                    const float4 v = __ldcg(slot + (j * (ACCN / 4) + q) * kThreadsC + ctid);
                    acc[j][4 * q] += v.x;
                    acc[j][4 * q + 1] += v.y;
                    acc[j][4 * q + 2] += v.z;
                    acc[j][4 * q + 3] += v.w;
                }
    }
}

#endif /* TPG_GEMM_SM90_WALK_CUH */
