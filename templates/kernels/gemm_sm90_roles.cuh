/* The producer and the two consumer schedules of the sm90 GEMM kernel. Included by gemm_sm90.cuh
 * inside its anonymous namespace, after the compile-time constants (kBM, kStages, kCluster, ...) that
 * every function here is specialized on; not a stand-alone header.
 *
 * Ring protocol (both schedules): full[s] completes when the producer's arrive.expect_tx(the slot's bytes)
 * and all of the slot's bytes have landed; empty[s] completes when every consumer warp that reads the
 * slot - of every CTA of the cluster - has arrived. Slot index and phase run on across tiles in every
 * role; the producer's first wait on a fresh empty barrier uses parity 1 and passes at once.
 */
#ifndef TPG_GEMM_SM90_ROLES_CUH
#define TPG_GEMM_SM90_ROLES_CUH

/* Ring position: slot index and the parity of the slot's current phase. */
struct tpg_ring {
    int slot;
    uint32_t phase;
    __device__ __forceinline__ void advance()
    {
        if (++slot == kStages) {
            slot = 0;
            phase ^= 1u;
        }
    }
    /* Jump n iterations ahead (ping-pong: past the other warpgroup's tile). */
    __device__ __forceinline__ void skip(int n)
    {
        const int s = slot + n;
        phase ^= (uint32_t)(s / kStages) & 1u;
        slot = s % kStages;
    }
};

/* alpha times the operands' per-tensor scales (fp8; NULL means 1). */
__device__ __forceinline__ float tpg_output_scale(const tpg_gemm_params &p)
{
    return p.alpha * (p.scale_a ? *p.scale_a : 1.0f) * (p.scale_b ? *p.scale_b : 1.0f);
}

/* Release a ring slot (one arrival per consumer warp). In a cluster the arrival goes to the slot's
 * empty barrier in every CTA: each CTA's slot is refilled by both producers' multicasts, and a
 * producer may issue its multicast only when the consumers of every receiving CTA are done. */
__device__ __forceinline__ void tpg_release(uint32_t empty_bar)
{
    if constexpr (kCluster == 1) {
        tpg_mbar_arrive(empty_bar);
    } else {
#pragma unroll
        for (int r = 0; r < kCluster; ++r) tpg_mbar_arrive_cluster(tpg_mapa(empty_bar, (uint32_t)r));
    }
}

#include "gemm_sm90_fixup.cuh"

/* One thread. Units uid = first, first + stride, ... (scheduler.cuh); this CTA is cluster rank `rank`. */
__device__ __forceinline__ void tpg_producer(const tpg_gemm_params &p, const tpg_tiling &g, unsigned int epoch,
                                             uint32_t sA, uint32_t sB, uint32_t full, uint32_t empty, int rank,
                                             int first, int stride)
{
    for (int s = 0; s < p.num_stages; ++s) {
        tpg_prefetch_tensormap(&tpg_stage(p, s).a_map);
        tpg_prefetch_tensormap(&tpg_stage(p, s).b_map);
    }
#ifdef TPG_DIAG_STAGGER_NS
    /* Diagnostic only (`defines: [TPG_DIAG_STAGGER_NS=N]`, docs/PERF_NOTES.md Next): odd clusters start
     * loading N ns late, so their tile boundaries fall between the others' (the call gets N ns longer). */
    if (first & 1) {
        const uint64_t t0 = tpg_globaltimer();
        while (tpg_globaltimer() - t0 < (uint64_t)(TPG_DIAG_STAGGER_NS)) __nanosleep(500);
    }
#endif
    const int rank_m = rank % kCM, rank_n = rank / kCM;
    constexpr uint16_t kMask = (uint16_t)((1u << kCluster) - 1u);
    tpg_ring ring = {0, 0};
    int cur_stage = -1;
    int ready = -1; /* all-gather: the current stage's chunks 0..ready are known to have landed */
    bool gave_up = false;
    if (!TPG_DIAG_NO_PULLS && p.pull_count) { /* the gathered walk's shards, pulled by the grid (pull_shards.cuh) */
        TPG_TR(const uint64_t tw0 = tpg_globaltimer();)
        const bool seen = tpg_wait_pulls(p, epoch, gave_up);
        TPG_TR(tpg_tr_stage_wait(p, 0, 0, tw0, !seen);)
        (void)seen;
    }
    const tpg_walk walk(p, g, first, stride);
    for (int i = 0; i < walk.n; ++i) {
        /* k-blocks [k0, k1) of a unit: all of them, or a stream-K fragment */
        const tpg_work w = walk.at(p, g, first, stride, i);
        const int k0 = w.k0, k1 = w.k1;
        const tpg_tile tile = tpg_decode_tile<kCM, kCN>(g, w.uid, rank);
        const tpg_stage_params &sp = p.stage[tile.stage];
        if (tile.stage != cur_stage) {
            cur_stage = tile.stage;
            ready = -1;
        }
        /* First row of this CTA's A and B boxes inside the stage's block. The operand the cluster
         * shares is loaded in halves (box = BM/CN or BN/CM rows, runtime/src/params.c), half r by rank
         * r, multicast to both CTAs. No box starts past the block's extent: an invalid partner tile
         * loads the last valid tile, and a half that would start past m (n) starts on the last row;
         * those rows only feed outputs that are never stored. */
        int a_row = tile.tm * kBM, b_row = tile.tn * kBN;
        if constexpr (kCN > 1) a_row = min(a_row + rank_n * (kBM / kCN), p.m - 1);
        else if constexpr (kCM > 1) a_row = min(tile.tm, g.tiles_m - 1) * kBM;
        if constexpr (kCM > 1) b_row = min(b_row + rank_m * (kBN / kCM), p.n - 1);
        else if constexpr (kCN > 1) b_row = min(tile.tn, g.tiles_n - 1) * kBN;
        /* all-gather: the stage's rotating operand arrives by copy engine, in chunks (copy_chunks.h);
         * acquire the flag of every chunk up to the one holding this box's rows, then order those
         * acquires before the async-proxy (TMA) reads of the data they guard. In a cluster both
         * producers wait: each guards the loads it issues, multicast halves included. */
        if (sp.wait_flag) {
            const int need = sp.wait_b ? tpg_copy_chunk_needed(tile.batch, sp.b_batch_rows, b_row, kBN / kCM,
                                                               sp.wait_chunk_rows)
                                       : tpg_copy_chunk_needed(tile.batch, sp.a_batch_rows, a_row, kBM / kCN,
                                                               sp.wait_chunk_rows);
            if (need > ready) {
                TPG_TR(const uint64_t tw0 = tpg_globaltimer();)
                TPG_TR(bool seen = true;) /* every flag seen (the trace marks a wait that gave up) */
                while (ready < need) {
                    const bool s = tpg_wait_flag(p, sp.wait_flag + ++ready, epoch, gave_up);
                    TPG_TR(seen = seen && s;)
                    (void)s;
                }
                tpg_fence_proxy_async_global();
                TPG_TR(tpg_tr_stage_wait(p, tile.stage, need, tw0, !seen);)
            }
        }
        const int ya = tile.batch * sp.a_batch_rows + sp.a_row0 + a_row;
        /* A's box: a tile's rows, or fewer where the launch has fewer (few tokens: sp.a_box_rows, gemm_params.h);
         * then the slot's rows past it keep older data, which feeds only accumulator rows that are never stored */
        const uint32_t slot_bytes = kCN > 1 || sp.a_box_rows == 0 ? kSlotBytes
                                                                   : (uint32_t)sp.a_box_rows * kRowBytes + kBBytes;
        const int yb = tile.batch * sp.b_batch_rows + sp.b_row0 + b_row;
        TPG_TR(tpg_tr_loads_begin(p, tile.stage, tile.t);)
        TPG_TR(uint32_t tr_full = 0;) /* ring-full cycles (a 32-bit sum: the 2x1 producer spilled a 64-bit one) */
        TPG_PH(long long ph_empty = 0;)
        for (int kb = k0; kb < k1; ++kb) {
            /* fresh barrier: passes at once. In a cluster the partner's consumers arrive here too; an
             * acquire at CTA scope is enough (tpg_mbar_arrive_cluster says why). */
            TPG_TR(const long long tr_w0 = clock64();)
            TPG_PH(const long long ph = clock64();)
            tpg_mbar_wait(empty + 8 * ring.slot, ring.phase ^ 1u);
            TPG_PH(if (kb > k0) ph_empty += clock64() - ph;)
            TPG_TR(if (kb > k0) tr_full += (uint32_t)(clock64() - tr_w0);)
            const uint32_t bar = full + 8 * ring.slot;
            if constexpr (kDiagNoLoad) {
                /* the arrival alone completes the phase: no bytes expected, and in a cluster the partner
                 * multicasts nothing either */
                tpg_mbar_arrive(bar);
            } else {
                /* every byte that lands in this CTA's slot: its own box of one operand and both halves of
                 * the shared one (own + partner's multicast); whole boxes, even where zero-filled. The
                 * partner's half may land before this expect_tx (the tx-count goes negative meanwhile);
                 * the phase cannot complete early since it also needs this thread's arrival. */
                tpg_mbar_arrive_expect_tx(bar, slot_bytes);
                const uint32_t a_dst = sA + ring.slot * kABytes, b_dst = sB + ring.slot * kBBytes;
                /* the maps through tpg_stage (cuda12.h) here, per k-block: under CUDA 12.4 / 12.5 a generic address
                 * kept across the loop spilled in the trace build's 2x1 producer */
                const tpg_stage_params &maps = tpg_stage(p, tile.stage);
                if constexpr (kCN > 1)
                    tpg_tma_load_2d_mc(a_dst + rank_n * (kABytes / kCN), &maps.a_map, bar, kb * kBK, ya, kMask);
                else tpg_tma_load_2d(a_dst, &maps.a_map, bar, kb * kBK, ya);
                if constexpr (kCM > 1)
                    tpg_tma_load_2d_mc(b_dst + rank_m * (kBBytes / kCM), &maps.b_map, bar, kb * kBK, yb, kMask);
                else tpg_tma_load_2d(b_dst, &maps.b_map, bar, kb * kBK, yb);
            }
            TPG_TR(if (kb == k0) tpg_tr_tile_mark(p, 0, 1); if (kb == k1 - 1) tpg_tr_tile_mark(p, 0, 2);)
            TPG_TR(if (kb == k1 - 1) tpg_tr_loads_ring(p, tr_full);)
            ring.advance();
        }
        TPG_PH(tpg_ph_add(tile.stage, TPG_PH_EMPTY, ph_empty);)
        if constexpr (kStreamK) /* a finisher's contributions may follow its fragment through the ring */
            if (tpg_sk_region(p) && i >= p.sk_rounds && !w.contribution && w.sk_lo < first)
                tpg_sk_load_contributions(p, tpg_sk_region_tile(p, g, w.uid), p.m - tile.tm * kBM, w.sk_lo, first, ring,
                                          sA, sB, full, empty, epoch, gave_up);
    }
    TPG_TR(tpg_tr_lane_end(p, 0);)
}

/* One tile's k loop for one consumer warpgroup (kSlabs m64 slabs, A rows from byte offset a_off of a
 * slot). Leaves every wgmma complete and every slot released. order_bar != 0 (ping-pong): after the
 * last full-barrier wait, let the other warpgroup start its mainloop (named barrier, 256 threads).
 * hook(kb) runs after k-block kb's wgmmas are issued, while they run (deferred stores). */
struct tpg_no_hook {
    __device__ __forceinline__ void operator()(int) const {}
};
template <class T, int R, class Hook>
__device__ __forceinline__ void tpg_mainloop(T (&acc)[kSlabs][R], int k_blocks, tpg_ring &ring, uint32_t sA,
                                             uint32_t sB, uint32_t a_off, uint32_t full, uint32_t empty,
                                             bool warp_leader, uint32_t order_bar, const Hook &hook)
{
    /* No zero-fill (but with CUDA 12.4-12.8, below): k_blocks >= 1 always (shapes.c rejects K < 1 for every op,
     * plan.c for every plan; a stream-K fragment is never empty), and the first wgmma of a tile runs with scale-d = 0.
     * A guarded fill
     * for k_blocks == 0 cost 128 FSELs per thread and tile (ptxas if-converts it), on the path into the first
     * wgmma: removing it with the cheaper tile decode (scheduler.cuh) gained ~1% (docs/PERF_NOTES.md,
     * 2026-12-01 14:07Z). */
    int prev_slot = -1;
    /* CUDA 12.4-12.8 (cuda12.h): their ptxas serializes every wgmma (C7515) when the registers that this loop's
     * first wgmma reads carry values from before it (the previous tile's epilogue works on them in place; an fp8
     * promotion group's registers were the previous group's); scale-d = 0 ignores those values, but that ptxas
     * does not see it. Zeros written first keep the wgmmas in flight, at one move per register and call (an
     * empty asm "defining" them does not do it, and the fp8 promotion kernels need it too). */
    if constexpr (TPG_CUDA12)
#pragma unroll
        for (int j = 0; j < kSlabs; ++j)
#pragma unroll
            for (int i = 0; i < R; ++i) acc[j][i] = T(0);
    for (int kb = 0; kb < k_blocks; ++kb) {
        tpg_mbar_wait(full + 8 * ring.slot, ring.phase);
        const uint64_t da = tpg_wgmma_desc<kRowBytes>(sA + ring.slot * kABytes + a_off);
        const uint64_t db = tpg_wgmma_desc<kRowBytes>(sB + ring.slot * kBBytes);
#pragma unroll
        for (int j = 0; j < kSlabs; ++j) tpg_acc_fence(acc[j]);
        tpg_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBK / kMmaK; ++kk) {
#pragma unroll
            for (int j = 0; j < kSlabs; ++j)
                /* +2 per k step = +32 bytes; per m64 slab 64 rows * kRowBytes >> 4 (512 for 128-byte rows) */
                if constexpr (!kDiagNoMma)
                    tpg_mma<kWgN, TPG_AB_DTYPE>(acc[j], da + 2 * kk + (64 * kRowBytes >> 4) * j, db + 2 * kk,
                                                (kb | kk) != 0);
        }
        tpg_wgmma_commit();
#pragma unroll
        for (int j = 0; j < kSlabs; ++j) tpg_acc_fence(acc[j]);
        hook(kb);
        /* keep this k-block's wgmmas in flight; the previous one is done -> release its slot */
        tpg_wgmma_wait<1>();
        if (prev_slot >= 0 && warp_leader) tpg_release(empty + 8 * prev_slot);
        prev_slot = ring.slot;
        ring.advance();
    }
    if (order_bar) tpg_named_arrive(order_bar, 256);
    tpg_wgmma_wait<0>();
#pragma unroll
    for (int j = 0; j < kSlabs; ++j) tpg_acc_fence(acc[j]);
    if (prev_slot >= 0 && warp_leader) tpg_release(empty + 8 * prev_slot);
}

/* One tile's mainloop into the f32 accumulators the epilogue works on. With f16 accumulation (kAccF16) the
 * wgmmas accumulate in packed halves, widened here once the tile is done: half the registers during
 * the mainloop (those of the deferred stores' held units included), the same epilogue after it. */
template <class Hook>
__device__ __forceinline__ void tpg_tile_mainloop(float (&acc)[kSlabs][kAccN], int k_blocks, tpg_ring &ring,
                                                  uint32_t sA, uint32_t sB, uint32_t a_off, uint32_t full,
                                                  uint32_t empty, bool warp_leader, uint32_t order_bar,
                                                  const Hook &hook)
{
    if constexpr (kAccF16) {
        /* zeroed although the first wgmma ignores it (scale-d = 0): read uninitialized through the wgmma's
         * "+r" operands, this fresh array made ptxas spill 530 bytes */
        uint32_t h[kSlabs][kAccN / 2] = {};
        tpg_mainloop(h, k_blocks, ring, sA, sB, a_off, full, empty, warp_leader, order_bar, hook);
#pragma unroll
        for (int j = 0; j < kSlabs; ++j)
#pragma unroll
            for (int i = 0; i < kAccN / 2; ++i) {
                const float2 v = __half22float2(*reinterpret_cast<const __half2 *>(&h[j][i]));
                acc[j][2 * i] = v.x;
                acc[j][2 * i + 1] = v.y;
            }
    } else if constexpr (kPromote > 0) {
        /* fp8 promotion (gemm_sm90.cuh: kPromote): each group of kPromote k-blocks is one mainloop into `part` (its
         * first wgmma overwriting, its end draining the pipe), then added into the f32 sums, which start at zero.
         * Cooperative: the second consumer warpgroup's first group is half as long, so the two drain at different
         * k-blocks and the other keeps the tensor pipe fed (+1.8%). Not "first group ? part : sum + part" (a select
         * in every group: 4-5% slower), nor the first group straight into the sums (ptxas then serializes the
         * wgmmas, C7515); a pipelined fold (the next group's first k-block issued before the add) is serialized
         * too, C7514 - PERF_NOTES 2026-12-02 05:07Z. The hook sees the tile's k-block numbers; the order barrier
         * (ping-pong) is passed once, after the last group. */
#pragma unroll
        for (int j = 0; j < kSlabs; ++j)
#pragma unroll
            for (int i = 0; i < kAccN; ++i) acc[j][i] = 0.0f;
        float part[kSlabs][kAccN];
        const bool staggered = !kPingpong && kConsumers == 2 && kPromote > 1 && threadIdx.x >= 256;
        const int n0 = staggered ? kPromote / 2 : kPromote;
        for (int g = 0; g < k_blocks;) {
            const int n = min(g == 0 ? n0 : kPromote, k_blocks - g);
            const auto group_hook = [&](int kb) { hook(g + kb); };
            tpg_mainloop(part, n, ring, sA, sB, a_off, full, empty, warp_leader, g + n >= k_blocks ? order_bar : 0u,
                         group_hook);
#pragma unroll
            for (int j = 0; j < kSlabs; ++j)
#pragma unroll
                for (int i = 0; i < kAccN; ++i) acc[j][i] += part[j][i];
            g += n;
        }
    } else {
        tpg_mainloop(acc, k_blocks, ring, sA, sB, a_off, full, empty, warp_leader, order_bar, hook);
    }
}

/* Epilogue state at the start of a consumer's walk (whether flags defer: tpg_epi_defers_flags<kDeferFlags>). */
__device__ __forceinline__ tpg_epi_state tpg_epi_init(const tpg_gemm_params &p, int ctid)
{
    tpg_epi_state est = {0u, nullptr, 0u, 0u, 0, 0, 0};
    for (int s = 0; s < p.num_stages; ++s) {
        if ((ctid & 127) == 0) tpg_prefetch_tensormap(&tpg_stage(p, s).d_map);
        if (kTmaPartials && p.stage[s].partial && (ctid & 127) == 0)
            tpg_prefetch_tensormap(&tpg_stage(p, s).partial_map);
    }
    return est;
}

/* Cooperative: all consumer warpgroups share each tile, warpgroup w computes rows [w*BM/C, (w+1)*BM/C)
 * (cooperative_n: all rows of columns [w*BN/C, (w+1)*BN/C)). */
__device__ __forceinline__ void tpg_consumer_coop(const tpg_gemm_params &p, const tpg_tiling &g, unsigned int epoch,
                                                  uint32_t sA, uint32_t sB, uint32_t sD, uint32_t full,
                                                  uint32_t empty, uint32_t src_bars, int ctid, int rank, int first,
                                                  int stride)
{
    const int wg = ctid >> 7;
    const bool warp_leader = (ctid & 31) == 0;
    const float scale = tpg_output_scale(p);
    float acc[kSlabs][kAccN];
    tpg_ring ring = {0, 0};
    bool gave_up = false;
    /* this warpgroup's first A row inside a slot: (wg * kSlabs + j) * 64 rows of kRowBytes */
    const uint32_t a_off = kSplitN ? 0u : (uint32_t)(wg * kSlabs) * 64u * kRowBytes;
    /* cooperative_n: this warpgroup's B rows (tile columns) start kWgN rows of kRowBytes into a slot */
    const uint32_t sBw = sB + (kSplitN ? (uint32_t)(wg * kWgN) * kRowBytes : 0u);
    tpg_epi_state est = tpg_epi_init(p, ctid);
    /* deferred stores: the last kDefer store units of each tile go out during the next mainloop */
    constexpr int kTileUnits = tpg_epi_tile_units<TPG_CD_DTYPE, kWgN, kSlabs, kEpiChunk>();
    constexpr int kCB = tpg_epi_geom<TPG_CD_DTYPE, kBM, kWgN, kSlabs, TPG_CONSUMER_MODE, kEpiChunk>::kCB;
    constexpr int kDefer = kTileUnits < TPG_DEFER_REGS / (2 * kCB) ? kTileUnits : TPG_DEFER_REGS / (2 * kCB);
    tpg_epi_packed<kDefer, kCB> held;
    held.pending = false;
    const auto issue = [&](int d) {
        if constexpr (kDeferStores)
            tpg_epi_issue_held<TPG_CD_DTYPE, kBM, kWgN, kSlabs, TPG_CONSUMER_MODE, kEpiChunk, kEpiBuffers, kDefer>(
                p, held, d, ctid, sD, est);
    };
    /* Work items i (tpg_walk): data-parallel units below the stream-K region, then this CTA's fragments
     * of it. A fragment is recomputed from i after the mainloop rather than kept live through it. */
    const tpg_walk walk(p, g, first, stride);
    for (int i = 0; i < walk.n; ++i) {
        const int k_count = walk.k_count(p, g, first, stride, i);
        TPG_TR(if ((ctid & 127) == 0) tpg_tr_tile_begin(p, 1 + wg, -1, -1, true);) /* labelled below */
        if constexpr (kDeferStores) {
            tpg_tile_mainloop(acc, k_count, ring, sA, sBw, a_off, full, empty, warp_leader, 0u, [&](int kb) {
                if (held.pending && kb < kDefer) issue(kb);
            });
            if (held.pending)
                for (int d = k_count; d < kDefer; ++d) issue(d); /* fewer k-blocks than held units */
            held.pending = false;
        } else {
            tpg_tile_mainloop(acc, k_count, ring, sA, sBw, a_off, full, empty, warp_leader, 0u, tpg_no_hook());
        }
        TPG_TR(if ((ctid & 127) == 0) tpg_tr_tile_mark(p, 1 + wg, 1);)
        /* decoded after the mainloop: nothing of it is live next to the accumulators and held units */
        const tpg_work w = walk.at(p, g, first, stride, i);
        const tpg_tile tile = tpg_decode_tile<kCM, kCN>(g, w.uid, rank);
        TPG_TR(if ((ctid & 127) == 0) tpg_tr_tile_label(p, 1 + wg, tile.stage, tile.t, tile.valid);)
        if constexpr (kStreamK) {
            if (tpg_sk_region(p) && i >= p.sk_rounds) {
                const int rows = p.m - tile.tm * kBM; /* rows past p.m: computed, never stored */
                const int region_tile = tpg_sk_region_tile(p, g, w.uid);
                if (w.contribution) {
                    TPG_TR(if ((ctid & 127) == 0) tpg_tr_tile_flag(p, 1 + wg, TPG_TRACE_F_SK_CONTRIB);)
                    tpg_sk_contribute<kConsumers, kSlabs, kAccN>(p, acc, rows, region_tile, ctid);
                    TPG_TR(if ((ctid & 127) == 0) tpg_tr_tile_mark(p, 1 + wg, 2);)
                    continue;
                }
                if (w.sk_lo < first) { /* a finisher: add the earlier k-blocks' sums */
                    TPG_TR(if ((ctid & 127) == 0) tpg_tr_tile_flag(p, 1 + wg, TPG_TRACE_F_SK_FINISH);)
                    tpg_sk_add_contributions<kConsumers, kSlabs, kAccN>(p, acc, rows, region_tile, w.sk_lo, first, ring,
                                                                        sA, sB, full, empty, ctid, warp_leader, epoch,
                                                                        gave_up);
                }
            }
        }
        /* an invalid partner tile only fed the partner's multicast. TPG_DIAG_NO_EPI skips the epilogue by a
         * test ptxas cannot fold (p.m >= 1 always: plan.c rejects m < 1): with the epilogue compiled out the
         * accumulators would be dead and ptxas would delete the wgmmas too */
        if (tile.valid && !(kDiagNoEpi && p.m > 0)) {
            const tpg_stage_params &sp = tpg_stage(p, tile.stage);
            bool packed = false; /* fp32 outputs and 3 consumers never instantiate the packing */
            if constexpr (kDeferStores) {
                if (tpg_epi_can_defer<TPG_CD_DTYPE>(sp)) {
                    tpg_epi_pack_tile<TPG_CD_DTYPE, kBM, kWgN, kConsumers, kSlabs, TPG_CONSUMER_MODE, kEpiChunk,
                                      kEpiBuffers, kDefer, kTmaPartials>(p, sp, tile, acc, scale, epoch, ctid, gave_up,
                                                                         est, sD, held, src_bars);
                    packed = true;
                }
            }
            if (!packed)
                tpg_epilogue_tile<TPG_CD_DTYPE, kBM, kWgN, kConsumers, kSlabs, TPG_CONSUMER_MODE, kEpiChunk,
                                  kEpiBuffers, kDeferFlags, kPrefetchSources, kTmaPartials>(
                    p, sp, tile, acc, scale, epoch, ctid, gave_up, est, sD, src_bars, g.units_per_stage);
        }
        TPG_TR(if ((ctid & 127) == 0) tpg_tr_tile_mark(p, 1 + wg, 2);)
    }
    if (kDeferStores && held.pending)
        for (int d = 0; d < kDefer; ++d) issue(d); /* the last tile: no next mainloop to hide behind */
    tpg_epilogue_finish<kConsumers, false>(p, est, epoch, ctid);
    TPG_TR(if ((ctid & 127) == 0) tpg_tr_lane_end(p, 1 + wg);)
}

#include "spread_pushes.cuh"

/* Ping-pong: the CTA's i-th unit (a whole BM x BN tile) belongs to warpgroup i % 2. Mainloops run in
 * unit order, handed over by named barriers kOrderBar + w ("warpgroup w may start"): warpgroup w waits
 * on its barrier before the mainloop of its unit i > 0, and arrives on the other's after its last
 * full wait if a unit i + 1 exists - one arrival per wait, so the counts always match. Besides
 * alternating the tensor cores, the order is what makes the full-barrier parity unambiguous: a
 * warpgroup never waits on a phase whose previous phase has not completed. The producer is unchanged:
 * it fills the ring in unit order, exactly the order the mainloops drain it. */
__device__ __forceinline__ void tpg_consumer_pingpong(const tpg_gemm_params &p, const tpg_tiling &g,
                                                      unsigned int epoch, uint32_t sA, uint32_t sB, uint32_t sD,
                                                      uint32_t full, uint32_t empty, uint32_t src_bars, int ctid,
                                                      int first, int stride)
{
    const int wg = ctid >> 7;
    const bool warp_leader = (ctid & 31) == 0;
    const float scale = tpg_output_scale(p);
    float acc[kSlabs][kAccN];
    tpg_ring ring = {0, 0};
    bool gave_up = false;
    tpg_epi_state est = tpg_epi_init(p, ctid);
    const int n_local = first < g.total ? (g.total - first + stride - 1) / stride : 0;
    if (wg == 1) ring.skip(g.k_blocks); /* unit 0 is warpgroup 0's */
    long long window = 0; /* spread pushes: the last wait for a turn, in cycles (tpg_pp_turn_spreading) */
#if TPG_DIAG_SPREAD_PRINT
    if (blockIdx.x == 0 && (ctid & 127) == 0) tpg_diag_print_on = atomicAdd(&tpg_diag_launches, 1u) / 2u == 5u;
#endif
    for (int i = wg; i < n_local; i += 2) {
        const tpg_tile tile = tpg_decode_tile<1, 1>(g, first + i * stride, 0);
        TPG_PH(const long long ph0 = clock64();)
        if (i > 0) {
            if constexpr (TPG_SPREAD_PUSHES) tpg_pp_turn_spreading(p, est, window, wg, ctid & 127, sD);
            else tpg_named_barrier(kOrderBar + wg, 256);
        }
        TPG_TR(if ((ctid & 127) == 0) tpg_tr_tile_begin(p, 1 + wg, tile.stage, tile.t, true);)
        TPG_PH(const long long ph1 = clock64();)
        tpg_tile_mainloop(acc, g.k_blocks, ring, sA, sB, 0u, full, empty, warp_leader,
                          i + 1 < n_local ? kOrderBar + (1 - wg) : 0u, tpg_no_hook());
        TPG_TR(if ((ctid & 127) == 0) tpg_tr_tile_mark(p, 1 + wg, 1);)
        TPG_PH(const long long ph2 = clock64();)
        if (!(kDiagNoEpi && p.m > 0)) /* a test ptxas cannot fold: see tpg_consumer_coop */
            tpg_epilogue_tile<TPG_CD_DTYPE, kBM, kWgN, kConsumers, kSlabs, 1, kEpiChunk, kEpiBuffers, kDeferFlags,
                              kPrefetchSources, kTmaPartials>(p, tpg_stage(p, tile.stage), tile, acc, scale, epoch,
                                                              ctid, gave_up, est, sD, src_bars, g.units_per_stage);
        TPG_TR(if ((ctid & 127) == 0) tpg_tr_tile_mark(p, 1 + wg, 2);)
        TPG_PH(if ((ctid & 127) == 0) {
            tpg_ph_add(tile.stage, TPG_PH_TILES, 1);
            tpg_ph_add(tile.stage, TPG_PH_TURN, ph1 - ph0);
            tpg_ph_add(tile.stage, TPG_PH_MAIN, ph2 - ph1);
            tpg_ph_add(tile.stage, TPG_PH_EPI, clock64() - ph2);
        })
        ring.skip(g.k_blocks); /* the other warpgroup's next unit */
    }
    if constexpr (TPG_SPREAD_PUSHES) /* the last tile's held units: no turn to wait for */
        tpg_epi_spread_issue<TPG_CD_DTYPE, kWgN, kEpiChunk, kEpiBuffers>(p, est, true, wg, ctid & 127, sD);
    tpg_epilogue_finish<kConsumers, true>(p, est, epoch, ctid);
    TPG_TR(if ((ctid & 127) == 0) tpg_tr_lane_end(p, 1 + wg);)
}

#endif /* TPG_GEMM_SM90_ROLES_CUH */
