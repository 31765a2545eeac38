/* Spread pushes (TPG_SPREAD_PUSHES, an experiment: self-test instances only; what and why: epilogue.cuh, where a
 * pushing tile's units are held): the issue of the held units during the ping-pong warpgroup's wait for its turn, and
 * the self-test diagnostics around it. Included by gemm_sm90_roles.cuh inside gemm_sm90.cuh's anonymous namespace,
 * after the compile-time constants (kWgN, kEpiChunk, kEpiBuffers, kOrderBar); not a stand-alone header. */
#ifndef TPG_SPREAD_PUSHES_CUH
#define TPG_SPREAD_PUSHES_CUH

/* Spread pushes: issue the next held unit (thread 0; other threads only count), or with `all` every held unit left.
 * The units were written in order into the buffers from the first one's on; those of a tile that are stored are
 * the first `chunks` chunks of each slab (tpg_epilogue_tile stops at m and n). */
template <int CD, int BN, int CHUNK, int UNITS>
__device__ __forceinline__ void tpg_epi_spread_issue(const tpg_gemm_params &p, tpg_epi_state &st, bool all, int wg,
                                                     int wg_thread, uint32_t sD)
{
    constexpr int kSN = CHUNK / (int)sizeof(typename tpg_cd_pair<CD>::T), kChunks = BN / kSN;
    for (;;) {
        const uint32_t n = st.held & 0xffu, d = (st.held >> 8) & 0xffu;
        if (d >= n) return;
        if (wg_thread == 0) {
            const int left = (p.n - st.held_col0 + kSN - 1) / kSN, chunks = left < kChunks ? left : kChunks;
            const uint32_t k = (((st.held >> 16) & 0xffu) + d) % (uint32_t)UNITS;
            const int batch = st.held_bs / TPG_MAX_TP, stage = st.held_bs % TPG_MAX_TP;
            if constexpr (!TPG_DIAG_NO_STORE)
                tpg_tma_store_3d(&tpg_stage(p, stage).d_map, sD + ((uint32_t)wg * UNITS + k) * (64u * CHUNK),
                                 st.held_col0 + (int)(d % (uint32_t)chunks) * kSN,
                                 st.held_row0 + 64 * (int)(d / (uint32_t)chunks), batch);
            tpg_bulk_commit();
        }
        st.held = d + 1u == n ? 0u : st.held + (1u << 8);
        if (!all) return;
    }
}

/* Self-test instances only: CTA 0 records its spread pushes' timing in the instance's sixth launch (with
 * --no-cases --rs-far: the far variant's second warm-up launch); tests/gpu/selftest_instance.cu prints it */
#ifndef TPG_DIAG_SPREAD_PRINT
#define TPG_DIAG_SPREAD_PRINT 0
#endif
#if TPG_DIAG_SPREAD_PRINT
__device__ unsigned int tpg_diag_launches, tpg_diag_count;
__device__ bool tpg_diag_print_on; /* (one CTA; both warpgroups write the same value) */
__device__ long long tpg_diag_rec[128][8];
#endif

/* Spread pushes (epilogue.cuh): warpgroup w's wait for its turn (named barrier kOrderBar + w), during which its
 * warp 0 first issues the held units of w's last tile, one every gap = 3/4 x window / units cycles (lane 0), the
 * first after a phase of (CTA % 16) / 16 gaps, and only then joins the barrier; window = how long w's previous wait
 * lasted (the other warpgroup's mainloop after w's epilogue; at most twice the window before; 0 at first: at once).
 * The phase because the CTAs run equal tiles in step: units on the same clock in every CTA reach the link together,
 * and bulk stores in step hold up bulk loads where staggered ones do not (bench/results/experiments/tma_sync.cu,
 * 2026-12-04 06:00Z) - though in the GEMM the phase changed nothing measurable (0604Z: far / ring 0.86-0.91 staggered
 * or not; docs/perf_notes/2026-12-04-c.md says what does). The 3/4 keeps warp 0 ahead of the turn (the last unit goes
 * before 3/4 x window): a late warp 0 would hold up the warpgroup's mainloop, and its own lateness then shortens the
 * next window. Units left (none unless the walk ends) go at the end. The turn stays a named barrier: as mbarriers
 * (try_wait, arrivals a warp) it cost the plain GEMM 1-4% at short K (2026-12-04 03:26Z). */
__device__ __forceinline__ void tpg_pp_turn_spreading(const tpg_gemm_params &p, tpg_epi_state &est, long long &window,
                                                      int wg, int wg_thread, uint32_t sD)
{
    const auto issue = [&](bool all) {
        tpg_epi_spread_issue<TPG_CD_DTYPE, kWgN, kEpiChunk, kEpiBuffers>(p, est, all, wg, wg_thread, sD);
    };
    const long long t0 = clock64();
#if TPG_DIAG_SPREAD_PRINT
    long long ti[4] = {-1, -1, -1, -1};
    const uint32_t n0 = est.held & 0xffu;
#endif
    if (wg_thread < 32) {
        const uint32_t n = est.held & 0xffu;
        const long long gap = n ? 3 * window / (4 * (long long)n) : 0;
        const long long phase = gap * (long long)(blockIdx.x % 16u) / 16;
        for (uint32_t d = 0; d < n; ++d) {
            while (clock64() - t0 < phase + (long long)d * gap) __nanosleep(64);
#if TPG_DIAG_SPREAD_PRINT
            if (d < 4) ti[d] = clock64() - t0;
#endif
            issue(false);
        }
    }
    tpg_named_barrier(kOrderBar + wg, 256);
    const long long waited = clock64() - t0;
#if TPG_DIAG_SPREAD_PRINT
    if (wg_thread == 0 && blockIdx.x == 0 && tpg_diag_print_on) {
        const unsigned int k = atomicAdd(&tpg_diag_count, 1u);
        const long long r[8] = {wg, (long long)n0, window, ti[0], ti[1], ti[2], ti[3], waited};
        if (k < 128)
            for (int j = 0; j < 8; ++j) tpg_diag_rec[k][j] = r[j];
    }
#endif
    /* at most twice the last: a wait that grew by the other warpgroup's wait for a peer's partial (TP >= 3: middle
     * stages both receive and push) must not set warp 0 to sleep through the next turn */
    window = window > 0 && waited > 2 * window ? 2 * window : waited;
    issue(true); /* warps 1-3 count the units warp 0 issued */
}

#endif /* TPG_SPREAD_PUSHES_CUH */
