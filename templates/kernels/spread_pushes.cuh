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
                tpg_tma_store_3d(&p.stage[stage].d_map, sD + ((uint32_t)wg * UNITS + k) * (64u * CHUNK),
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
/* Self-test instances only: TPG_DIAG_SPREAD_STL keeps the record's local stores (one before each issue) without
 * the record. Measured (2026-12-04 03:46Z, 03:52Z, `kernel_selftest --rs-far`): with them the spread helps the far
 * ring (pp128spx, pp128spd: 0.97-0.99 of the ring), without them it does not (pp128sp: 0.90-0.93, as deferred flags
 * alone); a membar.cta in their place does not help either, nor spreading over the whole window. Not understood;
 * the lead (docs/PERF_NOTES.md, Next): a TMA store may move only once its warp issues a later memory instruction -
 * the two other forms that helped issued theirs from warps busy with mbarrier waits or wgmmas. */
#ifndef TPG_DIAG_SPREAD_STL
#define TPG_DIAG_SPREAD_STL 0
#endif
#if TPG_DIAG_SPREAD_PRINT
__device__ unsigned int tpg_diag_launches, tpg_diag_count;
__device__ bool tpg_diag_print_on; /* (one CTA; both warpgroups write the same value) */
__device__ long long tpg_diag_rec[128][8];
#endif

/* Self-test instances only: which instruction next to an issue makes the spread work (after 03:52Z; prepared,
 * not yet run: experiments/call_spread_kick.sh) - TPG_DIAG_SPREAD_KICK 2 an ld.volatile.shared before each issue,
 * 3 an ld.volatile.global (the epoch word), 4 a local store after each issue instead of before, 5 a clock read
 * alone, 6 fence.proxy.async.shared::cta before each issue (0: none) */
#ifndef TPG_DIAG_SPREAD_KICK
#define TPG_DIAG_SPREAD_KICK 0
#endif
template <int KICK> __device__ __forceinline__ void tpg_pp_spread_kick(const tpg_gemm_params &p, uint32_t sD)
{
    if constexpr (KICK == 2) {
        uint32_t v;
        asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v) : "r"(sD) : "memory");
    } else if constexpr (KICK == 3) {
        uint32_t v;
        asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"(p.epoch) : "memory");
    } else if constexpr (KICK == 4) {
        volatile long long sink[1];
        sink[0] = clock64();
    } else if constexpr (KICK == 5) {
        const long long c = clock64();
        if (c == -1 && p.m < 0) *p.status = 1u; /* never (plan.c): keeps the read */
    } else if constexpr (KICK == 6) {
        tpg_fence_proxy_async_smem();
    }
}

/* Spread pushes (epilogue.cuh): warpgroup w's wait for its turn (named barrier kOrderBar + w), during which its
 * warp 0 first issues the held units of w's last tile, one every 3/4 x window / units cycles (lane 0), and only
 * then joins the barrier; window = how long w's previous wait lasted (the other warpgroup's mainloop after w's
 * epilogue; at most twice the window before; 0 at first: at once). The 3/4 keeps warp 0 ahead of the turn: a late
 * warp 0 would hold up the warpgroup's mainloop, and its own lateness then shortens the next window. Units left
 * (none unless the walk ends) go at the end. The turn stays a named barrier: as mbarriers (try_wait, arrivals a
 * warp) it cost the plain GEMM 1-4% at short K (2026-12-04 03:26Z). */
__device__ __forceinline__ void tpg_pp_turn_spreading(const tpg_gemm_params &p, tpg_epi_state &est, long long &window,
                                                      int wg, int wg_thread, uint32_t sD)
{
    const auto issue = [&](bool all) {
        tpg_epi_spread_issue<TPG_CD_DTYPE, kWgN, kEpiChunk, kEpiBuffers>(p, est, all, wg, wg_thread, sD);
    };
    const long long t0 = clock64();
#if TPG_DIAG_SPREAD_PRINT || TPG_DIAG_SPREAD_STL
    long long ti[4] = {-1, -1, -1, -1};
    const uint32_t n0 = est.held & 0xffu;
#endif
    if (wg_thread < 32) {
        const uint32_t n = est.held & 0xffu;
        const long long gap = n ? 3 * window / (4 * (long long)n) : 0;
        for (uint32_t d = 0; d < n; ++d) {
            while (clock64() - t0 < (long long)d * gap) __nanosleep(64);
#if TPG_DIAG_SPREAD_PRINT || TPG_DIAG_SPREAD_STL
            if (d < 4) ti[d] = clock64() - t0;
#endif
            if constexpr (TPG_DIAG_SPREAD_KICK != 4) tpg_pp_spread_kick<TPG_DIAG_SPREAD_KICK>(p, sD);
            issue(false);
            if constexpr (TPG_DIAG_SPREAD_KICK == 4) tpg_pp_spread_kick<4>(p, sD);
        }
    }
    tpg_named_barrier(kOrderBar + wg, 256);
    const long long waited = clock64() - t0;
#if TPG_DIAG_SPREAD_STL
    if (p.m < 0) /* never (plan.c): keeps the record's local stores of TPG_DIAG_SPREAD_PRINT without its output */
        for (int j = 0; j < 4; ++j) p.status[j] = (unsigned int)(ti[j] + n0);
#endif
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
