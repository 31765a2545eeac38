/* Epilogue of one output tile: registers -> swizzled smem (stmatrix) -> TMA store, per consumer
 * warpgroup (cooperative: warpgroup w owns rows [w * BM/C, (w+1) * BM/C) of the tile, as SLABS m64 slabs;
 * ping-pong: whole tiles; cooperative_n: all rows of its half of the columns - tpg_epi_geom).
 *
 *   out = scale * acc (+ partial, after its per-tile flag) (+ beta * C) -> stage.d_map
 *
 * The tile is cut into column chunks of CHUNK bytes - the epilogue subtile: 128 (64 bf16/fp16 columns,
 * one 128B-swizzle row, the widest box a SWIZZLE_128B map allows; the default) or 64 (half the staging
 * smem, 64B swizzle) - each chunk of each m64 slab one 64-row store unit.
 * Each warpgroup owns UNITS buffers of 64 rows x CHUNK B (2 * SLABS unless `epilogue_buffers` says
 * more) and rotates through them with a counter that runs on across tiles, so the TMA stores of earlier units (and of the previous tile's last ones)
 * overlap the writing of the next unit and the next tile's mainloop. The smem layout is the 128B swizzle (16-byte unit u of row r at u ^ (r % 8)), which makes
 * both stmatrix and the TMA read conflict-free.
 *
 * Unit protocol (one named barrier per unit, warpgroup-local): all threads write unit u; fence.proxy
 * .async (generic smem writes -> async-proxy reads); the issuing thread (warpgroup thread 0) waits until
 * its earlier stores have *read* their smem (all but the newest UNITS - 2, so the next buffer is free);
 * barrier; thread 0 issues the unit's store and commits it as a group. Slabs wholly below m are skipped.
 * Out-of-range rows/columns inside a box are clipped by the map's extent (the runtime encodes the
 * stage's true m x n); whole chunks right of n are skipped.
 *
 * Flags: a tile with signal_flags is published only after its stores completed (bulk wait_group 0, not
 * .read), fence.proxy.async.global, __threadfence_system, a barrier over all consumers, then one
 * st.release.sys. That flush is deferred to the start of the next tile's epilogue (or the end of the
 * kernel), so the stores overlap the next mainloop, where a stage has enough tiles for the flag not to be
 * needed before then (tpg_epi_defers_flags). Deferring is safe only because a mainloop never
 * waits on another device while a signal is pending; a launch with stage wait flags (all-gather)
 * flushes at once (tpg_epi_defers_flags), and so do cluster kernels and ping-pong kernels without
 * `deferred_flags` (gemm_sm90.cuh says why).
 *
 * PINGPONG (consumer_mode pingpong): each warpgroup owns whole tiles (rows [0, BM) of its tile, SLABS =
 * BM / 64) and runs its epilogue while the other warpgroup is in its mainloop, so nothing here may
 * synchronize the two warpgroups: the flag is raised by the warpgroup's thread 0 alone (it issued all
 * of the tile's stores) instead of after barrier 1.
 *
 * Sources (partial, C) and the output element types: epilogue_sources.cuh.
 */
#ifndef TPG_EPILOGUE_CUH
#define TPG_EPILOGUE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "diag_phases.cuh"
#include "gemm_params.h"
#include "ptx.cuh"
#include "cuda12.h"
#include "scheduler.cuh"
#include "sync.cuh"
#include "trace.cuh"
#include "epilogue_sources.cuh"

/* diagnostic only: the epilogue without its TMA store instructions (the time decomposition, gemm_sm90.cuh) */
#ifndef TPG_DIAG_NO_STORE
#define TPG_DIAG_NO_STORE 0
#endif

/* Self-test instances only (timing: the values land swizzled; pp128tdr): every store unit as 64 one-dimensional
 * bulk stores of a 128-byte row, issued by thread 0, instead of one tensor store. Measured (2026-12-04 06:22Z-06:41Z,
 * docs/perf_notes/2026-12-04-c.md): with the pushes over the host link this keeps the pushing tiles' mainloops from
 * growing (far / ring 0.95-0.98 against 0.85-0.96), at ~170 cycles an issue - 45-55 kcycles of epilogue a tile,
 * 0.58-0.88 of the plain GEMM at short K. 8 KiB or 1 KiB bulk stores, the rows issued by 4 lanes, or 1 KiB pieces
 * paced over the turn wait did not help: only a slow trickle of one-request stores did. */
#ifndef TPG_DIAG_ROW_STORES
#define TPG_DIAG_ROW_STORES 0
#endif

/* The diagnostic computes addresses as the --rs-far problems allow (one batch, rows a multiple of 64, 16-bit partials
 * in 128-byte rows); refuse the builds it would get wrong */
#if TPG_DIAG_ROW_STORES && ((defined(TPG_EPI_CHUNK_BYTES) && TPG_EPI_CHUNK_BYTES != 128) || TPG_CD_DTYPE == 4 ||     \
                             (defined(TPG_PARTIAL_F32) && TPG_PARTIAL_F32))
#error "TPG_DIAG_ROW_STORES: 128-byte rows of 16-bit values only"
#endif

/* Spread pushes (TPG_SPREAD_PUSHES 1; ping-pong with deferred flags; an experiment: self-test instances only, no
 * config selects it yet): a tile that pushes its partial into a peer's slot writes its store units to smem as usual
 * but holds back their TMA stores; its warpgroup's warp 0 issues them while the warpgroup waits for its next turn
 * (tpg_pp_turn_spreading, spread_pushes.cuh), spread over that wait, instead of all at once. Why: an SM's bulk
 * loads wait behind its bulk stores, so a tile's burst of 32 KiB into NVLink holds up the producer's next operand
 * loads while it crosses the link: with its pushes over the host link (`kernel_selftest --rs-far`) the ring ran
 * 0.90-0.94 of itself with local ones at 70B-o's M and N, as 70B-o ran 0.94 of its local GEMM on x2 - while the
 * same bytes spread over the loads cost nothing below the link's rate (bench/results/experiments/tma_hol.cu).
 * Measured forms (docs/perf_notes/2026-12-04-b.md): issued inside the warpgroup's own next mainloop they recover the
 * far ring (0.98-0.99) but cost that mainloop 2-5% at short K (the issue holds up the warpgroup's wgmmas); in the
 * wait (this form) no better than deferred flags alone, staggered per CTA or not, once a race was fixed
 * (docs/perf_notes/2026-12-04-c.md: only a single thread's trickle of 128-byte row stores kept the loads going,
 * TPG_DIAG_ROW_STORES below, at an issue cost no kernel can ship). The
 * tile's flag waits for the next epilogue as deferred flags do (the same safety argument, gemm_sm90.cuh: the units
 * go out before the warpgroup's next mainloop), so a tile holds its units only where tpg_epi_defers_flags allows. */
#ifndef TPG_SPREAD_PUSHES
#define TPG_SPREAD_PUSHES 0
#endif

/* Per-consumer-thread epilogue state that lives across tiles. */
struct tpg_epi_state {
    uint32_t buf;            /* which of the warpgroup's UNITS store buffers is next */
    unsigned int *pending;   /* signal flag of the last tile, not yet raised (NULL: none) */
    uint32_t src_phase;      /* tma_partials: bit k = parity of store buffer k's next partial load */
    /* spread pushes: bits 0-7 units held, 8-15 of them issued, 16-23 the first one's buffer, 31 this epilogue
     * holds the units it hands off; then where they go - the tile's first row and column (tpg_epi_geom's
     * tile_row0 / col_base) and batch * TPG_MAX_TP + stage. Never read without TPG_SPREAD_PUSHES. */
    uint32_t held;
    int held_row0, held_col0, held_bs;
#if TPG_DIAG_PHASES
    int diag_stage; /* the tile's stage, for its handoffs' sums (diag_phases.cuh) */
#endif
};

/* Self-test instances only: defer however few tiles a stage has (the rule before 2026-12-02). */
#ifndef TPG_DIAG_DEFER_FLAGS_ALWAYS
#define TPG_DIAG_DEFER_FLAGS_ALWAYS 0
#endif

/* Experiment builds only (not timed, not checked across GPUs yet): 1 leaves out tpg_epi_flush's system-scope full
 * fence. A review (2026-12-05) read it as redundant in the PTX model - the stores' full completion, the proxy fence
 * and the flag's release at system scope (cumulative over the warpgroups' stores through the named barrier) order
 * the tile's stores before the flag for a peer or a copy engine - and as the heaviest fence, once a tile, which an
 * NVLink peer may make dearer than one GPU does. To time and check on two GPUs before any shipped kernel drops it. */
#ifndef TPG_DIAG_EPI_NO_SYSTEM_FENCE
#define TPG_DIAG_EPI_NO_SYSTEM_FENCE 0
#endif

/* May a tile's signal flag wait for the warpgroup's next epilogue? DEFER_FLAGS: the kernel allows it
 * (gemm_sm90.cuh: kDeferFlags); never in a launch with stage wait flags (the header comment); and only where a
 * stage spans at least two rounds of the grid (stage_units: the walk's units per stage, tpg_tiling). The tile that
 * needs the flag - the same tile of the next stage, on the next rank - is U units later in the walk: with U >= 2 x
 * grid it reaches its epilogue two mainloops after this one, by when this warpgroup's next epilogue has raised the
 * flag (ping-pong with `deferred_flags`: a warpgroup's next unit is 2 x grid later, so 3 x grid); with fewer it
 * runs beside this tile or one round after it, and a deferred flag would hold it up to a whole mainloop
 * (the wide ring at few tokens, TP = 4, ran 0.53-0.64 of its plain GEMM deferred, 0.79-0.98 with this rule,
 * docs/PERF_NOTES.md 2026-12-02). The wait flags are read from the kernel parameters at each use rather than kept
 * in a register for the whole walk. */
template <bool DEFER_FLAGS, bool PINGPONG>
__device__ __forceinline__ bool tpg_epi_defers_flags(const tpg_gemm_params &p, int stage_units)
{
    if constexpr (!DEFER_FLAGS) { /* constexpr: a loop after a constant return is "not reachable" to nvcc (#128-D) */
        return false;
    } else {
        if (p.stage_minor) return false; /* interleaved: the tile that needs the flag is the next unit */
        for (int s = 0; s < p.num_stages; ++s)
            if (p.stage[s].wait_flag) return false;
        /* the caller's tiling count, already live for the walk: computing it here from p spilled next to the held
         * deferred-store registers (trace builds, stream-K) */
        return TPG_DIAG_DEFER_FLAGS_ALWAYS || stage_units >= (PINGPONG ? 3 : 2) * (int)gridDim.x;
    }
}

/* Copy-engine partials: count a raised flag in its tile row (tpg_gemm_params.row_counts). Computed from the flag's
 * address when it is raised, so nothing more is held across a deferral (a held counter pointer spilled in the
 * cooperative kernel); the release orders the flag and the tile's stores before the count. */
__device__ __forceinline__ void tpg_epi_count_row(const tpg_gemm_params &p, const unsigned int *flag)
{
    if (!p.row_counts) return;
    const unsigned int row = (unsigned int)(flag - p.row_count_flags) / (unsigned int)p.row_count_tiles_n;
    asm volatile("red.release.sys.global.add.u32 [%0], 1;" ::"l"(p.row_counts + row) : "memory");
}

/* Raise the pending signal flag once this tile's stores are complete (all consumer threads call it). */
template <int CONSUMERS, bool PINGPONG>
__device__ __forceinline__ void tpg_epi_flush(const tpg_gemm_params &p, tpg_epi_state &st, unsigned int epoch,
                                              int ctid)
{
    if (!st.pending) return;
    if ((ctid & 127) == 0) {
        tpg_bulk_wait_all();            /* this warpgroup's stores are written, not just read */
        tpg_fence_proxy_async_global(); /* async-proxy writes before the generic release below */
        if (!TPG_DIAG_EPI_NO_SYSTEM_FENCE) __threadfence_system();
        if (PINGPONG) { /* the tile is this warpgroup's alone */
            tpg_st_release_sys(st.pending, epoch);
            tpg_epi_count_row(p, st.pending);
        }
    }
    if (!PINGPONG) {
        tpg_named_barrier(1, 128 * CONSUMERS);
        if (ctid == 0) {
            tpg_st_release_sys(st.pending, epoch);
            tpg_epi_count_row(p, st.pending);
        }
    }
    st.pending = nullptr;
}

/* The swizzle of a store unit of CHUNK-byte rows, as the D map's TMA reads it: 16-byte unit u of row r
 * sits at r * CHUNK + ((u ^ key(r)) << 4), with key = r % 8 for 128-byte rows (128B swizzle,
 * Swizzle<3,4,3>) and (r / 2) % 4 for 64-byte rows (64B swizzle, Swizzle<2,4,3>). Both keep stmatrix
 * conflict-free. */
template <int CHUNK> __device__ __forceinline__ uint32_t tpg_epi_key(int row)
{
    static_assert(CHUNK == 128 || CHUNK == 64, "epilogue subtile rows are 64 or 128 bytes");
    return CHUNK == 128 ? (uint32_t)(row & 7) : (uint32_t)((row >> 1) & 3);
}

/* Geometry of the epilogue of one tile for one consumer warpgroup (ctid = 0 .. 128*CONSUMERS-1): store
 * unit (j, c) = m64 slab j, column chunk c; the unit's rows and columns; stmatrix lane addressing.
 * BN = the columns this warpgroup computes (the wgmma N); MODE = TPG_CONSUMER_MODE: 0 cooperative
 * (warpgroup w owns rows w*SLABS*64.. of the tile), 1 ping-pong (whole tiles), 2 cooperative_n (all
 * rows, columns w*BN.. of a tile two warpgroups wide). */
template <int CD, int BM, int BN, int SLABS, int MODE, int CHUNK> struct tpg_epi_geom {
    typedef typename tpg_cd_pair<CD>::T T;
    static constexpr int kSN = CHUNK / (int)sizeof(T); /* columns per chunk */
    static constexpr int kCB = kSN / 8;                /* 8-column blocks per chunk */
    static constexpr int kChunks = BN / kSN;           /* chunks per slab */
    static constexpr uint32_t kUnitBytes = 64 * CHUNK; /* one m64 slab of one chunk */
    static_assert(BN % kSN == 0, "BN must be a multiple of the store chunk");
    static_assert(CD == 4 || kCB % 2 == 0, "stmatrix.x4 stores two 8-column blocks at a time");
    int wg, wg_thread, warp, lane, tile_row0, col_base;
    __device__ __forceinline__ tpg_epi_geom(const tpg_tile &tile, int ctid)
        : wg(ctid >> 7), wg_thread(ctid & 127), warp((ctid & 127) >> 5), lane(ctid & 31),
          tile_row0(tile.tm * BM + (MODE == 0 ? (ctid >> 7) * SLABS * 64 : 0)),
          col_base(MODE == 2 ? (2 * tile.tn + (ctid >> 7)) * BN : tile.tn * BN)
    {
    }
    __device__ __forceinline__ int slab_row0(int j) const { return tile_row0 + j * 64; }
    __device__ __forceinline__ int col0(int c) const { return col_base + c * kSN; }
    /* the first of this thread's two rows in slab j (the other is 8 below) */
    __device__ __forceinline__ int row_lo(int j) const { return slab_row0(j) + 16 * warp + (lane >> 2); }
};

/* Start of a tile's epilogue: raise the previous tile's deferred flag, and for reduce-scatter wait until
 * this tile's partial fully arrived (each warpgroup checks). Returns whether a source (partial, C) is read. */
template <int CONSUMERS, bool PINGPONG>
__device__ __forceinline__ void tpg_epi_begin(const tpg_gemm_params &p, const tpg_stage_params &sp, const tpg_tile &tile,
                                              unsigned int epoch, int ctid, bool &gave_up, tpg_epi_state &st)
{
    tpg_epi_flush<CONSUMERS, PINGPONG>(p, st, epoch, ctid); /* the previous tile's flag (deferred) */
    if (sp.partial && sp.partial_flags) {
        if ((ctid & 127) == 0) {
            TPG_TR(const uint64_t tw0 = tpg_globaltimer();)
            const bool seen = tpg_wait_flag(p, sp.partial_flags + tile.t, epoch, gave_up);
            TPG_TR(tpg_tr_partial_wait(p, 1 + (ctid >> 7), tw0, !seen);)
            (void)seen;
        }
        tpg_named_barrier(2 + (ctid >> 7), 128);
    }
}

/* The warpgroup wrote store unit `unit` (generic smem writes): make them visible to the async proxy; the
 * issuing thread (warpgroup thread 0) waits until its earlier stores have *read* their smem (all but the
 * newest UNITS - 2, so the buffer written next is free); barrier; thread 0 issues the unit's store and
 * commits it as a group; the warpgroup moves on to its next buffer. */
template <int UNITS>
__device__ __forceinline__ void tpg_epi_handoff(const tpg_stage_params &sp, uint32_t unit, int col0, int slab_row0,
                                                int batch, int wg, int wg_thread, tpg_epi_state &st)
{
    tpg_fence_proxy_async_smem();
    if (wg_thread == 0) { /* a held unit commits no group, so wait_read's count would not move: wait for all */
        TPG_PH(const long long ph = clock64();)
        if (TPG_SPREAD_PUSHES && (st.held >> 31)) tpg_bulk_wait_read<0>();
        else tpg_bulk_wait_read<UNITS - 2>();
        TPG_PH(tpg_ph_add(st.diag_stage, TPG_PH_HANDOFF, clock64() - ph);)
    }
    tpg_named_barrier(2 + wg, 128);
    if (TPG_SPREAD_PUSHES && (st.held >> 31)) { /* held: stored before the next mainloop (tpg_epi_spread_issue) */
        st.held += 1u;
    } else if (wg_thread == 0) {
        if constexpr (TPG_DIAG_ROW_STORES) /* 64 rows of 128 bytes, as they lie in smem (swizzled: timing only) */
            for (int r = 0; r < 64; ++r)
                tpg_bulk_store(static_cast<char *>(sp.d) +
                                   2 * ((long long)batch * sp.d_batch + (long long)(slab_row0 + r) * sp.d_ld + col0),
                               unit + 128u * (uint32_t)r, 128u);
        else if constexpr (!TPG_DIAG_NO_STORE) tpg_tma_store_3d(&sp.d_map, unit, col0, slab_row0, batch);
        tpg_bulk_commit(); /* without the store an empty group: wait_group.read counts the same groups */
    }
    st.buf = st.buf + 1u == (uint32_t)UNITS ? 0u : st.buf + 1u;
}

/* The row address this lane gives stmatrix.x4 / ldmatrix.x4 for 8-column blocks b, b + 1 of a store
 * unit: matrices (rows lo, blk b), (hi, b), (lo, b + 1), (hi, b + 1), lane i addressing row i % 8 of
 * matrix i / 8, in the unit's swizzle. */
template <int CHUNK> __device__ __forceinline__ uint32_t tpg_epi_matrix_addr(uint32_t unit, int wg_thread, int b)
{
    const int warp = wg_thread >> 5, lane = wg_thread & 31;
    const int q = lane >> 3, rr = lane & 7;
    const int row = 16 * warp + rr + 8 * (q & 1);
    const uint32_t key = CHUNK == 128 ? (uint32_t)rr : tpg_epi_key<CHUNK>(row); /* row % 8 == rr */
    return unit + row * CHUNK + ((uint32_t)((b + (q >> 1)) ^ key) << 4);
}

/* Hand one store unit to the TMA: this thread's part of it (pk: 2 * KCB packed 16-bit pairs, pair i =
 * columns 2i, 2i + 1 of its 8-column blocks) goes by stmatrix into the warpgroup's next buffer, then
 * tpg_epi_handoff. With UNITS > the units of a tile, the store the handoff waits for belongs to an
 * earlier tile and has long been read: no wait. */
template <int CHUNK, int UNITS, int KCB>
__device__ __forceinline__ void tpg_epi_issue_unit(const tpg_stage_params &sp, const uint32_t (&pk)[2 * KCB],
                                                   int col0, int slab_row0, int batch, int wg, int wg_thread,
                                                   uint32_t sD, tpg_epi_state &st)
{
    const uint32_t unit = sD + ((uint32_t)wg * (uint32_t)UNITS + st.buf) * (64u * CHUNK);
#pragma unroll
    for (int b = 0; b < KCB; b += 2)
        tpg_stmatrix_x4(tpg_epi_matrix_addr<CHUNK>(unit, wg_thread, b), pk[2 * b], pk[2 * b + 1], pk[2 * b + 2],
                        pk[2 * b + 3]);
    tpg_epi_handoff<UNITS>(sp, unit, col0, slab_row0, batch, wg, wg_thread, st);
}

/* fp32 output: no stmatrix (8 bytes per row and block, st.shared.v2); otherwise tpg_epi_issue_unit. */
template <int CHUNK, int UNITS, int KCB, int BN>
__device__ __forceinline__ void tpg_epi_issue_unit_f32(const tpg_stage_params &sp, const float (&acc)[BN / 2], int c,
                                                       int col0, int slab_row0, int batch, int wg, int wg_thread,
                                                       uint32_t sD, tpg_epi_state &st)
{
    const int warp = wg_thread >> 5, lane = wg_thread & 31;
    const uint32_t unit = sD + ((uint32_t)wg * (uint32_t)UNITS + st.buf) * (64u * CHUNK);
    /* unit = 2b + (lane%4)/2, half = lane%2 */
#pragma unroll
    for (int b = 0; b < KCB; ++b)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = 16 * warp + (lane >> 2) + 8 * h;
            const uint32_t u = (uint32_t)(2 * b + ((lane & 3) >> 1)) ^ tpg_epi_key<CHUNK>(row);
            const float *a = &acc[4 * (c * KCB + b) + 2 * h];
            tpg_st_shared_v2(unit + row * CHUNK + (u << 4) + ((lane & 1) << 3), a[0], a[1]);
        }
    tpg_epi_handoff<UNITS>(sp, unit, col0, slab_row0, batch, wg, wg_thread, st);
}

/* `partials: f32`: a chunk of 16-bit geometry (KCB 8-column blocks) pushed to a peer's slot in fp32 - twice
 * the bytes, so two store units of KCB / 2 blocks each, the fp32 map's box (params.c) half the columns.
 * Unit h holds blocks h * KCB / 2 .. of chunk c, i.e. chunk 2c + h of a KCB / 2 geometry. */
template <int CHUNK, int UNITS, int KCB, int BN>
__device__ __forceinline__ void tpg_epi_issue_partial_f32(const tpg_gemm_params &p, const tpg_stage_params &sp,
                                                          const float (&acc)[BN / 2], int c, int col0, int slab_row0,
                                                          int batch, int wg, int wg_thread, uint32_t sD,
                                                          tpg_epi_state &st)
{
    static_assert(KCB % 2 == 0, "a 16-bit chunk splits into two fp32 units");
    tpg_epi_issue_unit_f32<CHUNK, UNITS, KCB / 2, BN>(sp, acc, 2 * c, col0, slab_row0, batch, wg, wg_thread, sD, st);
    if (col0 + 4 * KCB < p.n) /* uniform: the second half starts inside the stage */
        tpg_epi_issue_unit_f32<CHUNK, UNITS, KCB / 2, BN>(sp, acc, 2 * c + 1, col0 + 4 * KCB, slab_row0, batch, wg,
                                                          wg_thread, sD, st);
}

/* Pack pair i of chunk c (16-bit outputs): columns 2i, 2i + 1 of the chunk's 8-column blocks. */
template <int CD, int BN, int KCB>
__device__ __forceinline__ void tpg_epi_pack_chunk(const float (&acc)[BN / 2], int c, uint32_t (&pk)[2 * KCB])
{
#pragma unroll
    for (int i = 0; i < 2 * KCB; ++i) pk[i] = tpg_cd_pair<CD>::pack(acc[4 * c * KCB + 2 * i], acc[4 * c * KCB + 2 * i + 1]);
}

/* Reduce-scatter store units, software-pipelined (`prefetch_sources`, TPG_PREFETCH_SOURCES): each unit's
 * partial is loaded while the previous unit is packed and stored (stmatrix, proxy fence, barrier, TMA
 * issue), instead of one dependent L2 round trip per unit before its arithmetic (four per ping-pong
 * tile, ~3 us each under load: most of a stage-1 epilogue that ran 17 us against 3.6 us locally). Only
 * the partial: with C as well the two source sets next to ping-pong's 128 accumulators spilled, so a
 * tile with C (beta != 0) takes the plain loop. Returns false (nothing done) for such tiles and for
 * tiles without a partial. */
template <int CD, int BM, int BN, int SLABS, int MODE, int CHUNK, int UNITS>
__device__ __forceinline__ bool tpg_epi_units_prefetched(const tpg_gemm_params &p, const tpg_stage_params &sp,
                                                         const tpg_tile &tile, float (&acc)[SLABS][BN / 2],
                                                         float scale, const tpg_epi_geom<CD, BM, BN, SLABS, MODE, CHUNK> &g,
                                                         uint32_t sD, tpg_epi_state &st)
{
    typedef tpg_epi_geom<CD, BM, BN, SLABS, MODE, CHUNK> G;
    typedef typename tpg_cd_pair<CD>::T T;
    constexpr int kUnits = SLABS * G::kChunks;
    const tpg_epi_bases<CD> b = tpg_epi_source_bases<CD>(p, sp, tile);
    if (!b.part || b.c) return false;
    const int pair = 2 * (g.lane & 3);
    const auto fetch = [&](tpg_epi_sources<CD, G::kCB> &src, int u) { /* a unit past m or n reads zeros */
        const int r_lo = g.row_lo(u / G::kChunks);
        const auto *prow = b.part + (long long)r_lo * sp.partial_ld;
        tpg_epi_fetch<CD, G::kCB>(src, r_lo, g.col0(u % G::kChunks) + pair, p.m, p.n, prow, nullptr, sp.partial_ld, 0);
    };
    tpg_epi_sources<CD, G::kCB> src;
    fetch(src, 0);
#pragma unroll
    for (int u = 0; u < kUnits; ++u) {
        const int j = u / G::kChunks, c = u % G::kChunks;
        const bool stored = g.slab_row0(j) < p.m && g.col0(c) < p.n; /* uniform */
        if (stored) {
#pragma unroll
            for (int k = 0; k < G::kCB; ++k)
                tpg_epi_values<CD, BN, G::kCB>(acc[j], c * G::kCB + k, k, src, true, false, scale, 0.0f);
        }
        if constexpr (CD == 4) {
            if (u + 1 < kUnits) fetch(src, u + 1);
            if (stored)
                tpg_epi_issue_unit_f32<CHUNK, UNITS, G::kCB, BN>(sp, acc[j], c, g.col0(c), g.slab_row0(j), tile.batch,
                                                                 g.wg, g.wg_thread, sD, st);
        } else {
            uint32_t pk[2 * G::kCB];
            if (stored) tpg_epi_pack_chunk<CD, BN, G::kCB>(acc[j], c, pk);
            if (u + 1 < kUnits) fetch(src, u + 1);
            if (stored)
                tpg_epi_issue_unit<CHUNK, UNITS, G::kCB>(sp, pk, g.col0(c), g.slab_row0(j), tile.batch, g.wg,
                                                         g.wg_thread, sD, st);
        }
    }
    return true;
}

#include "epilogue_tma.cuh"

/* The whole epilogue of one tile, executed by every consumer thread (ctid = 0 .. 128*CONSUMERS-1).
 * sD = the 1024-aligned smem of all warpgroups' store buffers (UNITS * 64 * CHUNK bytes per warpgroup;
 * CHUNK = the epilogue subtile's row bytes, the D map's box width; UNITS >= 2, by default 2 * SLABS).
 * Named barrier 1 spans all consumer threads, 2 + w the threads of warpgroup w.
 * Slab by slab, chunk by chunk: one 64 x CHUNK B store unit at a time, so only one slab's source row
 * pointers are live next to the accumulators (two slabs at once spilled). */
template <int CD, int BM, int BN, int CONSUMERS, int SLABS, int MODE, int CHUNK, int UNITS, bool DEFER_FLAGS,
          bool PREFETCH = false, bool TMA_PARTIALS = false>
__device__ __forceinline__ void tpg_epilogue_tile(const tpg_gemm_params &p, const tpg_stage_params &sp,
                                                  const tpg_tile &tile, float (&acc)[SLABS][BN / 2], float scale,
                                                  unsigned int epoch, int ctid, bool &gave_up, tpg_epi_state &st,
                                                  uint32_t sD, uint32_t src_bars, int stage_units)
{
    typedef tpg_epi_geom<CD, BM, BN, SLABS, MODE, CHUNK> G;
    constexpr bool PINGPONG = MODE == 1; /* the tile is one warpgroup's: its flag needs no barrier */
    const G g(tile, ctid);
    const bool flushes = st.pending != nullptr; /* (warpgroup-uniform) */
    TPG_PH(const long long ph = clock64();)
    tpg_epi_begin<CONSUMERS, PINGPONG>(p, sp, tile, epoch, ctid, gave_up, st);
    TPG_PH(if ((ctid & 127) == 0) tpg_ph_add(tile.stage, TPG_PH_BEGIN, clock64() - ph); st.diag_stage = tile.stage;)
    if constexpr (TPG_SPREAD_PUSHES && PINGPONG) { /* hold this tile's units where its flag may wait (see above) */
        /* the last tile's held units went out after its last handoff, which therefore did not free their buffers:
         * only thread 0's wait in the flush did - the warpgroup waits for it before writing them again */
        if (flushes) tpg_named_barrier(2 + (ctid >> 7), 128);
        static_assert(DEFER_FLAGS && CD != 4 && !TPG_PARTIAL_F32 && UNITS >= SLABS * G::kChunks,
                      "spread pushes: deferred flags, 16-bit partials, a store buffer per unit of a tile");
        if (sp.signal_flags && tpg_epi_defers_flags<DEFER_FLAGS, PINGPONG>(p, stage_units)) {
            st.held = (1u << 31) | (st.buf << 16);
            st.held_row0 = g.tile_row0;
            st.held_col0 = g.col_base;
            st.held_bs = tile.batch * TPG_MAX_TP + tile.stage;
        }
    }
    bool done = false; /* every unit stored by the pipelined loop or from TMA-loaded partials */
    if constexpr (TMA_PARTIALS)
        done = tpg_epi_units_tma<CD, BM, BN, SLABS, MODE, CHUNK, UNITS>(p, sp, tile, acc, scale, g, sD, src_bars, st);
    if constexpr (PREFETCH)
        done = done || tpg_epi_units_prefetched<CD, BM, BN, SLABS, MODE, CHUNK, UNITS>(p, sp, tile, acc, scale, g, sD, st);
    /* slab j's store units; j must be a compile-time constant where this runs (else acc[j] goes to local memory) */
    const auto store_slab = [&](const int j) {
#pragma unroll
        for (int c = 0; c < G::kChunks; ++c) {
            if (g.col0(c) >= p.n) break; /* uniform over the warpgroup */
            tpg_epi_chunk_values<CD, BN, G::kCB>(p, sp, tile, acc[j], c, g.row_lo(j), g.col0(c), g.lane, scale);
            if constexpr (CD == 4) {
                tpg_epi_issue_unit_f32<CHUNK, UNITS, G::kCB, BN>(sp, acc[j], c, g.col0(c), g.slab_row0(j), tile.batch,
                                                                 g.wg, g.wg_thread, sD, st);
            } else if (TPG_PARTIAL_F32 && sp.signal_flags) { /* uniform */
                tpg_epi_issue_partial_f32<CHUNK, UNITS, G::kCB, BN>(p, sp, acc[j], c, g.col0(c), g.slab_row0(j),
                                                                    tile.batch, g.wg, g.wg_thread, sD, st);
            } else {
                uint32_t pk[2 * G::kCB];
                tpg_epi_pack_chunk<CD, BN, G::kCB>(acc[j], c, pk);
                tpg_epi_issue_unit<CHUNK, UNITS, G::kCB>(sp, pk, g.col0(c), g.slab_row0(j), tile.batch, g.wg,
                                                         g.wg_thread, sD, st);
            }
        }
    };
    /* a slab past m stores nothing (uniform), nor do the ones after it */
#if TPG_CUDA12 /* cuda12.h */
    tpg_static_for<SLABS>([&](auto slab) {
        if (!done && g.slab_row0(decltype(slab)::value) < p.m) store_slab(decltype(slab)::value);
    });
#else /* the loop nvcc 13 unrolls, as measured */
#pragma unroll
    for (int j = 0; j < SLABS && !done; ++j) {
        if (g.slab_row0(j) >= p.m) break;
        store_slab(j);
    }
#endif

    /* every store issued; a flag's flush next (ping-pong only: in the cooperative trace build this hook
     * spilled next to the held deferred-store registers). With deferred flags the flush moves to the next
     * tile's tpg_epi_begin, before t[3]: the split then shows no flush here */
    TPG_TR(if (PINGPONG && (ctid & 127) == 0) tpg_tr_tile_mark(p, 1 + (ctid >> 7), 5);)
    if constexpr (TPG_SPREAD_PUSHES) st.held &= ~(1u << 31); /* the units handed off from here on go out at once */
    if (sp.signal_flags) {
        st.pending = sp.signal_flags + tile.t;
        if (!tpg_epi_defers_flags<DEFER_FLAGS, PINGPONG>(p, stage_units))
            tpg_epi_flush<CONSUMERS, PINGPONG>(p, st, epoch, ctid);
    }
}

/* End of the consumer's tile walk: raise a deferred flag, then let every store finish before the CTA
 * (and its smem) goes away. */
template <int CONSUMERS, bool PINGPONG>
__device__ __forceinline__ void tpg_epilogue_finish(const tpg_gemm_params &p, tpg_epi_state &st, unsigned int epoch,
                                                    int ctid)
{
    tpg_epi_flush<CONSUMERS, PINGPONG>(p, st, epoch, ctid);
    if ((ctid & 127) == 0) tpg_bulk_wait_all();
}

#endif /* TPG_EPILOGUE_CUH */
