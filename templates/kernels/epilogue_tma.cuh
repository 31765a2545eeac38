/* Reduce-scatter partials loaded by TMA (`tma_partials: true`, TPG_TMA_PARTIALS; 16-bit outputs). The
 * plain epilogue loads the received partial with 4-byte ld.global.cg per accumulator pair: 64 loads per
 * thread for a 128x128 tile, in dependent batches, so a stage-1 epilogue spent ~12 us of its ~15 us
 * waiting on L2 (70B-o trace, 2026-12-01) and the other warpgroup's mainloop could no longer hide it.
 * Here the warpgroup's thread 0 loads the whole tile's partial with one TMA box per store unit, straight
 * into the store buffers that unit will be stored from (the D map and the partial map share the box and
 * the swizzle), and each thread reads its part back with ldmatrix - the inverse of the stmatrix that
 * then writes the sum to the same addresses. Per unit: wait for its box, ldmatrix, add, stmatrix, TMA
 * store (tpg_epi_issue_unit). Ping-pong (tpg_epi_units_tma) and cooperative kernels, whose deferred
 * epilogue holds the tile's last units in registers instead (epilogue_deferred.cuh).
 *
 * Needs every unit of a tile to have its own buffer (epilogue_buffers >= units per tile: 4 for
 * ping-pong 128x128, the default; 5 for the cooperative "_wide" kernel), and one mbarrier per buffer
 * (TMA completion, count 1: thread 0's arrive.expect_tx). Phases: bit k of tpg_epi_state.src_phase is the
 * parity of buffer k's next load. Tiles with C (beta != 0) take the register path: C is the user's
 * tensor, not a slot with a map.
 */
#ifndef TPG_EPILOGUE_TMA_CUH
#define TPG_EPILOGUE_TMA_CUH

/* Included by epilogue.cuh after the store-unit helpers it uses (tpg_epi_geom, tpg_epi_matrix_addr,
 * tpg_epi_issue_unit) and before tpg_epilogue_tile, which calls it. */

/* Thread 0 of the warpgroup: one TMA box of the partial per stored unit, into the buffers the units
 * will take in order (st.buf onwards). The flag acquire before this was a generic-proxy load; the proxy
 * fence orders it before the async-proxy reads. Earlier stores must have read the buffers first. */
template <int CD, int BM, int BN, int SLABS, int MODE, int CHUNK, int UNITS>
__device__ __forceinline__ void tpg_epi_load_partials(const tpg_gemm_params &p, const tpg_stage_params &sp,
                                                      const tpg_tile &tile,
                                                      const tpg_epi_geom<CD, BM, BN, SLABS, MODE, CHUNK> &g,
                                                      uint32_t sD, uint32_t bars, const tpg_epi_state &st)
{
    typedef tpg_epi_geom<CD, BM, BN, SLABS, MODE, CHUNK> G;
    tpg_fence_proxy_async_global();
    tpg_bulk_wait_read<0>();
    uint32_t k = st.buf;
    for (int u = 0; u < SLABS * G::kChunks; ++u) {
        const int j = u / G::kChunks, c = u % G::kChunks;
        if (g.slab_row0(j) >= p.m || g.col0(c) >= p.n) continue; /* not stored: no buffer */
        tpg_mbar_arrive_expect_tx(bars + 8u * k, G::kUnitBytes);
        tpg_tma_load_3d(sD + ((uint32_t)g.wg * UNITS + k) * G::kUnitBytes, &sp.partial_map, bars + 8u * k, g.col0(c),
                        g.slab_row0(j), tile.batch);
        k = k + 1u == (uint32_t)UNITS ? 0u : k + 1u;
    }
}

/* Store unit (slab j, chunk c) with its partial from warpgroup wg's buffer k (bars: the warpgroup's
 * mbarriers): wait for the box, read it back, pk = pack(scale * acc + partial). */
template <int CD, int BN, int SLABS, int KCB, int CHUNK, int UNITS>
__device__ __forceinline__ void tpg_epi_unit_plus_partial(const float (&acc)[SLABS][BN / 2], int j, int c, float scale,
                                                          uint32_t sD, uint32_t bars, uint32_t k, int wg,
                                                          int wg_thread, tpg_epi_state &st, uint32_t (&pk)[2 * KCB])
{
    typedef tpg_cd_pair<CD> P;
    static_assert(CD != 4, "tma_partials: 16-bit outputs (ldmatrix reads b16 matrices)");
    tpg_mbar_wait(bars + 8u * k, (st.src_phase >> k) & 1u);
    st.src_phase ^= 1u << k;
    const uint32_t unit = sD + ((uint32_t)wg * UNITS + k) * (64u * CHUNK);
#pragma unroll
    for (int b = 0; b < KCB; b += 2)
        tpg_ldmatrix_x4(tpg_epi_matrix_addr<CHUNK>(unit, wg_thread, b), pk[2 * b], pk[2 * b + 1], pk[2 * b + 2],
                        pk[2 * b + 3]);
#pragma unroll
    for (int i = 0; i < 2 * KCB; ++i) { /* pair i: 8-column block i / 2, rows lo / hi (i % 2) */
        const float2 v = P::widen(pk[i]);
        const float *a = &acc[j][4 * c * KCB + 2 * i];
        pk[i] = P::pack(a[0] * scale + v.x, a[1] * scale + v.y);
    }
}

/* The tile's store units with the partial from smem (ping-pong and the cooperative plain epilogue).
 * Returns false (nothing done) for tiles without a partial and tiles with C. bars = this CTA's UNITS
 * mbarriers per consumer warpgroup. */
template <int CD, int BM, int BN, int SLABS, int MODE, int CHUNK, int UNITS>
__device__ __forceinline__ bool tpg_epi_units_tma(const tpg_gemm_params &p, const tpg_stage_params &sp,
                                                  const tpg_tile &tile, float (&acc)[SLABS][BN / 2], float scale,
                                                  const tpg_epi_geom<CD, BM, BN, SLABS, MODE, CHUNK> &g, uint32_t sD,
                                                  uint32_t src_bars, tpg_epi_state &st)
{
    typedef tpg_epi_geom<CD, BM, BN, SLABS, MODE, CHUNK> G;
    static_assert(UNITS >= SLABS * G::kChunks, "tma_partials: every unit of a tile needs its own store buffer");
    /* this test written out rather than in a helper function: the helper changed ptxas's register allocation
     * of the shipped ping-pong kernels, whose reduce-scatter speed only two GPUs can re-measure (their SASS is
     * kept byte-identical until then) */
    if (!sp.partial || (sp.c != nullptr && p.beta != 0.0f)) return false;
    const uint32_t bars = src_bars + 8u * (uint32_t)(g.wg * UNITS);
    if (g.wg_thread == 0) tpg_epi_load_partials<CD, BM, BN, SLABS, MODE, CHUNK, UNITS>(p, sp, tile, g, sD, bars, st);
#pragma unroll
    for (int u = 0; u < SLABS * G::kChunks; ++u) {
        const int j = u / G::kChunks, c = u % G::kChunks;
        if (g.slab_row0(j) >= p.m || g.col0(c) >= p.n) continue; /* uniform */
        const uint32_t k = st.buf; /* tpg_epi_load_partials put this unit's box there */
        uint32_t pk[2 * G::kCB];
        tpg_epi_unit_plus_partial<CD, BN, SLABS, G::kCB, CHUNK, UNITS>(acc, j, c, scale, sD, bars, k, g.wg, g.wg_thread,
                                                                       st, pk);
        tpg_epi_issue_unit<CHUNK, UNITS, G::kCB>(sp, pk, g.col0(c), g.slab_row0(j), tile.batch, g.wg, g.wg_thread,
                                                 sD, st);
    }
    return true;
}

#endif /* TPG_EPILOGUE_TMA_CUH */
