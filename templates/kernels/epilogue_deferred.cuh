/* Deferred epilogue stores for the cooperative kernel (16-bit outputs, stages without signal flags).
 *
 * Why: while a cooperative tile's epilogue runs, no warpgroup feeds the tensor cores - 1.5-2.2 us of every
 * tile (timelines of the 128x256 local GEMMs, 2026-11-30: 1.73 of 22.3 us at 8192x4096x2048, 2.17 of
 * 96 us at 16384x28672x8192), the gap to ping-pong's overlap; more store buffers (no wait for a store to
 * read its smem) removed only 0.2 us of it. Here the epilogue's arithmetic (scale, partial, beta * C)
 * still runs right after the mainloop, but ends with the tile packed in registers (two 16-bit outputs
 * per register: 64 for a 64x256 slab), and its store units (stmatrix -> smem -> TMA store, epilogue.cuh's
 * handoff) go out one per k-block during the next tile's mainloop, while that k-block's wgmmas run.
 *
 * Not for: fp32 outputs (nothing to pack), a stage with signal flags (its flag may be raised only after
 * the stores, and a raise that waits for the next mainloop could sit behind a cluster partner or a peer -
 * epilogue.cuh's deferral rule), ping-pong (already overlapped). Those tiles take tpg_epilogue_tile.
 */
#ifndef TPG_EPILOGUE_DEFERRED_CUH
#define TPG_EPILOGUE_DEFERRED_CUH

#include "epilogue.cuh"

/* Store units of a tile: slab j, chunk c is unit j * chunks + c. */
template <int CD, int BN, int SLABS, int CHUNK> __host__ __device__ constexpr int tpg_epi_tile_units()
{
    return SLABS * tpg_epi_geom<CD, 64, BN, SLABS, 0, CHUNK>::kChunks;
}

/* The last DEFER store units of a tile whose epilogue arithmetic is done, still to be issued. Only the
 * tail is held: all of a 64x256 slab (64 packed registers next to the next tile's 128 accumulators)
 * spilled at 240 registers per thread. */
template <int DEFER, int KCB> struct tpg_epi_packed {
    uint32_t v[DEFER][2 * KCB]; /* held unit d: this thread's packed pairs (tpg_epi_pack_chunk) */
    /* where the held units go: the warpgroup's first row and column in the output (tpg_epi_geom's
     * tile_row0 / col_base), and batch * 8 + stage - three registers instead of a whole tpg_tile, which
     * stays live through the next mainloop */
    int row0, col_base, batch_stage;
    bool pending;
};

/* May a tile of this stage defer its stores? (see the header) */
template <int CD> __device__ __forceinline__ bool tpg_epi_can_defer(const tpg_stage_params &sp)
{
    return CD != 4 && sp.signal_flags == nullptr;
}

/* Where the held units of a packed tile go (tpg_epi_packed's header); marks it pending. */
template <int DEFER, int KCB, class G>
__device__ __forceinline__ void tpg_epi_packed_set(tpg_epi_packed<DEFER, KCB> &out, const G &g, const tpg_tile &tile)
{
    out.row0 = g.tile_row0;
    out.col_base = g.col_base;
    out.batch_stage = tile.batch * TPG_MAX_TP + tile.stage;
    out.pending = true;
}

/* tpg_epi_pack_tile's units with the received partial loaded by TMA (`tma_partials`, epilogue_tma.cuh):
 * one bulk load per unit into the buffers the units take in order - the held ones too: held unit d is
 * issued next mainloop into the buffer st.buf then reaches, the one its partial was read from. Returns
 * false (nothing done) for tiles without a partial and tiles with C. */
template <int CD, int BM, int BN, int SLABS, int MODE, int CHUNK, int UNITS, int DEFER>
__device__ __forceinline__ bool tpg_epi_pack_tile_tma(
    const tpg_gemm_params &p, const tpg_stage_params &sp, const tpg_tile &tile, float (&acc)[SLABS][BN / 2],
    float scale, const tpg_epi_geom<CD, BM, BN, SLABS, MODE, CHUNK> &g, uint32_t sD, uint32_t src_bars,
    tpg_epi_state &st, tpg_epi_packed<DEFER, tpg_epi_geom<CD, BM, BN, SLABS, MODE, CHUNK>::kCB> &out)
{
    typedef tpg_epi_geom<CD, BM, BN, SLABS, MODE, CHUNK> G;
    constexpr int kFirstHeld = SLABS * G::kChunks - DEFER;
    static_assert(UNITS >= SLABS * G::kChunks, "tma_partials: every unit of a tile needs its own store buffer");
    if (!sp.partial || (sp.c != nullptr && p.beta != 0.0f)) return false; /* as tpg_epi_units_tma */
    const uint32_t bars = src_bars + 8u * (uint32_t)(g.wg * UNITS);
    if (g.wg_thread == 0) tpg_epi_load_partials<CD, BM, BN, SLABS, MODE, CHUNK, UNITS>(p, sp, tile, g, sD, bars, st);
    uint32_t k = st.buf; /* the buffer of the next stored unit: st.buf for issued ones, beyond it for held ones */
#pragma unroll
    for (int u = 0; u < SLABS * G::kChunks; ++u) {
        const int j = u / G::kChunks, c = u % G::kChunks;
        if (g.slab_row0(j) >= p.m || g.col0(c) >= p.n) continue; /* never stored (uniform) */
        uint32_t pk[2 * G::kCB];
        tpg_epi_unit_plus_partial<CD, BN, SLABS, G::kCB, CHUNK, UNITS>(acc, j, c, scale, sD, bars, k, g.wg, g.wg_thread,
                                                                       st, pk);
        if (u < kFirstHeld) {
            tpg_epi_issue_unit<CHUNK, UNITS, G::kCB>(sp, pk, g.col0(c), g.slab_row0(j), tile.batch, g.wg, g.wg_thread,
                                                     sD, st);
        } else {
#pragma unroll
            for (int i = 0; i < 2 * G::kCB; ++i) out.v[u - kFirstHeld][i] = pk[i];
        }
        k = k + 1u == (uint32_t)UNITS ? 0u : k + 1u;
    }
    tpg_epi_packed_set(out, g, tile);
    return true;
}

/* The epilogue of one tile with its last DEFER store units packed into `out` instead of issued. Every
 * consumer thread. BN = the warpgroup's columns, MODE = TPG_CONSUMER_MODE (0 or 2: cooperative);
 * TMA_PARTIALS: a received partial comes by TMA (tpg_epi_pack_tile_tma; src_bars its mbarriers). */
template <int CD, int BM, int BN, int CONSUMERS, int SLABS, int MODE, int CHUNK, int UNITS, int DEFER,
          bool TMA_PARTIALS = false>
__device__ __forceinline__ void tpg_epi_pack_tile(const tpg_gemm_params &p, const tpg_stage_params &sp,
                                                  const tpg_tile &tile, float (&acc)[SLABS][BN / 2], float scale,
                                                  unsigned int epoch, int ctid, bool &gave_up, tpg_epi_state &st,
                                                  uint32_t sD,
                                                  tpg_epi_packed<DEFER, tpg_epi_geom<CD, BM, BN, SLABS, MODE, CHUNK>::kCB> &out,
                                                  uint32_t src_bars = 0u)
{
    typedef tpg_epi_geom<CD, BM, BN, SLABS, MODE, CHUNK> G;
    constexpr int kFirstHeld = SLABS * G::kChunks - DEFER;
    const G g(tile, ctid);
    tpg_epi_begin<CONSUMERS, false>(p, sp, tile, epoch, ctid, gave_up, st);
    if constexpr (TMA_PARTIALS)
        if (tpg_epi_pack_tile_tma<CD, BM, BN, SLABS, MODE, CHUNK, UNITS, DEFER>(p, sp, tile, acc, scale, g, sD,
                                                                              src_bars, st, out))
            return;
#pragma unroll
    for (int j = 0; j < SLABS; ++j)
#pragma unroll
        for (int c = 0; c < G::kChunks; ++c) {
            const int u = j * G::kChunks + c;
            if (g.slab_row0(j) >= p.m || g.col0(c) >= p.n) continue; /* never stored (uniform) */
            tpg_epi_chunk_values<CD, BN, G::kCB>(p, sp, tile, acc[j], c, g.row_lo(j), g.col0(c), g.lane, scale);
            uint32_t pk[2 * G::kCB];
            tpg_epi_pack_chunk<CD, BN, G::kCB>(acc[j], c, pk);
            if (u < kFirstHeld) {
                tpg_epi_issue_unit<CHUNK, UNITS, G::kCB>(sp, pk, g.col0(c), g.slab_row0(j), tile.batch, g.wg,
                                                         g.wg_thread, sD, st);
            } else {
#pragma unroll
                for (int i = 0; i < 2 * G::kCB; ++i) out.v[u - kFirstHeld][i] = pk[i];
            }
        }
    tpg_epi_packed_set(out, g, tile);
}

/* Issue held unit d (warpgroup-uniform, maybe a run-time value) of a packed tile. The packed registers
 * are indexed by compile-time constants only (a run-time index would put them in local memory): the
 * unrolled loop below picks the one matching branch. */
template <int CD, int BM, int BN, int SLABS, int MODE, int CHUNK, int UNITS, int DEFER>
__device__ __forceinline__ void tpg_epi_issue_held(
    const tpg_gemm_params &p, const tpg_epi_packed<DEFER, tpg_epi_geom<CD, BM, BN, SLABS, MODE, CHUNK>::kCB> &pk,
    int d, int ctid, uint32_t sD, tpg_epi_state &st)
{
    typedef tpg_epi_geom<CD, BM, BN, SLABS, MODE, CHUNK> G;
    constexpr int kFirstHeld = SLABS * G::kChunks - DEFER;
    const int batch = pk.batch_stage / TPG_MAX_TP, stage = pk.batch_stage % TPG_MAX_TP;
#pragma unroll
    for (int dd = 0; dd < DEFER; ++dd) {
        const int j = (kFirstHeld + dd) / G::kChunks, c = (kFirstHeld + dd) % G::kChunks;
        const int row = pk.row0 + j * 64, col = pk.col_base + c * G::kSN; /* tpg_epi_geom's slab_row0 / col0 */
        if (dd != d || row >= p.m || col >= p.n) continue;
        tpg_epi_issue_unit<CHUNK, UNITS, G::kCB>(tpg_stage(p, stage), pk.v[dd], col, row, batch, ctid >> 7, ctid & 127,
                                                 sD, st);
    }
}

#endif /* TPG_EPILOGUE_DEFERRED_CUH */
