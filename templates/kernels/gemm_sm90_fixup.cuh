/* The stream-K fix-up of the sm90 GEMM kernel (stream_k.h says what the region is): a contribution's sums, and how
 * the finisher of a split tile adds them. Included by gemm_sm90_roles.cuh (its producer and cooperative consumers
 * call these) after the ring's helpers; not a stand-alone header.
 *
 * Contributors announce themselves on one count a tile, which the finisher waits for once. Where a tile has at most 32
 * rows, the finisher's producer - right after the fragment's own loads - waits for that count and bulk-copies the
 * contributions into the next ring slots, where they land while the consumers still run the fragment's mainloop; the
 * consumers add them from shared memory and release the slots like any k-block's. Why: read into registers, each
 * contributor cost the finisher one L2 round trip (the next one's loads cannot be issued while this one's hold the
 * registers beside the accumulators), ~6 us of a 17 us decode GEMM with 7 contributors a tile
 * (docs/perf_notes/2026-12-03-c.md); through the ring up to 1.07x at 16 tiles of 16-32 rows, 1.029 / 1.014x at M = 16
 * / 32 in geometric mean (docs/perf_notes/2026-12-03-d.md). With more rows the consumers still load them themselves
 * (TPG_SK_RING_UNITS says why).
 */
#ifndef TPG_GEMM_SM90_FIXUP_CUH
#define TPG_GEMM_SM90_FIXUP_CUH

/* A split tile's sums move in units of 16 rows x BN fp32 columns - one warp's rows of one m64 slab (cooperative:
 * warpgroup w owns rows w*SLABS*64.., its warps 16 rows each, a thread rows lane/4 and 8 below) - unit u holding the
 * tile's rows 16u..16u+15. Only units with a row of the tile's `rows` (p.m - its first row) move: at M = 16 one of
 * four (rows past M are computed, never stored; 3-9% of a decode GEMM, docs/perf_notes/2026-12-03-c.md). */
constexpr uint32_t kSkUnitBytes = 16u * kBN * 4u;
/* units one ring slot holds: its A part first, then its B part */
constexpr int kSkUnitsA = (int)(kABytes / kSkUnitBytes);
constexpr int kSkUnitsSlot = kSkUnitsA + (int)(kBBytes / kSkUnitBytes);
static_assert(!kStreamK || kSkUnitsSlot >= 1, "stream-K: a ring slot must hold one unit of a contribution");

/* A finisher's wait for its tile's count (the producer's starts right after its fragment's loads, usually before the
 * last contributor has counted in) backs off to at most this: the default 1 us cap left the copies up to ~1 us late
 * (1.015-1.023x at M = 16-64, docs/perf_notes/2026-12-03-d.md). */
#ifndef TPG_SK_COUNT_SLEEP_NS
#define TPG_SK_COUNT_SLEEP_NS 64
#endif

/* Units of a tile with `rows` rows that move. */
__device__ __forceinline__ int tpg_sk_live_units(int rows) { return min((rows + 15) >> 4, kBM / 16); }

/* Through the ring only where a contribution has at most this many live units (32 rows): with 4 (64 rows) the ring
 * ran 0.98-1.00x the consumers' own loads, with 1 or 2 1.01-1.08x (the 64x128; docs/perf_notes/2026-12-03-d.md). */
#ifndef TPG_SK_RING_UNITS
#define TPG_SK_RING_UNITS 2
#endif
__device__ __forceinline__ bool tpg_sk_through_ring(int rows) { return tpg_sk_live_units(rows) <= TPG_SK_RING_UNITS; }

/* The unit of consumer thread ctid's slab j. */
template <int SLABS> __device__ __forceinline__ int tpg_sk_unit(int ctid, int j)
{
    return ((ctid >> 7) * SLABS + j) * 4 + ((ctid & 127) >> 5);
}

/* Shared-memory address of unit position r (< kSkUnitsSlot) of ring slot `slot`. */
__device__ __forceinline__ uint32_t tpg_sk_piece(uint32_t sA, uint32_t sB, int slot, int r)
{
    return r < kSkUnitsA ? sA + (uint32_t)slot * kABytes + (uint32_t)r * kSkUnitBytes
                         : sB + (uint32_t)slot * kBBytes + (uint32_t)(r - kSkUnitsA) * kSkUnitBytes;
}

/* A stream-K contribution to region tile `region_tile`: every consumer thread of a live unit stores its accumulators
 * to this CTA's workspace slot, unit after unit, each unit as float4s in register order (float4 q of lane l at q * 32
 * + l), so a unit is one contiguous block and its finisher's lane reads back exactly its own registers' values; then,
 * after a barrier over all consumers, one release adds this CTA to the tile's count (cumulative: it covers every
 * thread's stores ordered before it by the barrier). */
template <int CONSUMERS, int SLABS, int ACCN>
__device__ __forceinline__ void tpg_sk_contribute(const tpg_gemm_params &p, const float (&acc)[SLABS][ACCN], int rows,
                                                  int region_tile, int ctid)
{
    static_assert(ACCN * 128 == (int)kSkUnitBytes, "a unit is one warp's accumulators of one slab");
    constexpr int kThreadsC = 128 * CONSUMERS;
    float4 *slot = reinterpret_cast<float4 *>(p.sk_partials + (size_t)blockIdx.x * (kBM * kBN)) + (ctid & 31);
    const int live = tpg_sk_live_units(rows);
#pragma unroll
    for (int j = 0; j < SLABS; ++j) {
        const int u = tpg_sk_unit<SLABS>(ctid, j);
        if (u < live)
#pragma unroll
            for (int q = 0; q < ACCN / 4; ++q)
                __stcg(slot + (u * (ACCN / 4) + q) * 32,
                       make_float4(acc[j][4 * q], acc[j][4 * q + 1], acc[j][4 * q + 2], acc[j][4 * q + 3]));
    }
    tpg_named_barrier(1, kThreadsC);
    if (ctid == 0) tpg_red_release_gpu_add(p.sk_counts + region_tile, 1u);
}

/* The finisher's wait for its tile's `n` contributions, then their count taken back for the next launch: subtracted,
 * not reset, so that after a timeout (the wait gave up, later contributions still add) the count heals instead of
 * keeping the late adds for the next launch, whose wait would then pass before its own contributions (signed compare:
 * tpg_wait_count). */
__device__ __forceinline__ void tpg_sk_take_count(const tpg_gemm_params &p, int region_tile, int n, unsigned int epoch,
                                                  bool &gave_up)
{
    /* seen through even where this thread gave up on a peer (tpg_spin_until returns at once then): the contributors
     * are this launch's own CTAs, which always count in (a cross-device wait of theirs gives up with the launch), and
     * the copy after it must not read contributions not yet written; bounded by the timeout all the same */
    bool own_gave_up = false;
    tpg_wait_count<TPG_SK_COUNT_SLEEP_NS>(p, p.sk_counts + region_tile, (unsigned int)n, epoch, own_gave_up);
    gave_up = gave_up || own_gave_up;
    tpg_red_release_gpu_add(p.sk_counts + region_tile, 0u - (unsigned int)n);
}

/* The finisher's producer, after its fragment's loads: waits until the tile's contributors - CTAs [lo, hi), which
 * never wait before they publish (stream_k.h) - have all counted in (bounded: a timeout leaves the sums wrong and
 * is reported), takes the count back (tpg_sk_take_count), and brings their
 * live units into the next ring slots, kSkUnitsSlot a slot, in (contributor, unit) order. */
__device__ __forceinline__ void tpg_sk_load_contributions(const tpg_gemm_params &p, int region_tile, int rows, int lo,
                                                          int hi, tpg_ring &ring, uint32_t sA, uint32_t sB,
                                                          uint32_t full, uint32_t empty, unsigned int epoch,
                                                          bool &gave_up)
{
    if (!tpg_sk_through_ring(rows)) return;
    const int live = tpg_sk_live_units(rows), n = (hi - lo) * live;
    tpg_sk_take_count(p, region_tile, hi - lo, epoch, gave_up);
    tpg_fence_proxy_async_global(); /* the count's acquire (generic proxy) before the bulk copies' reads */
    for (int s0 = 0; s0 < n; s0 += kSkUnitsSlot) {
        tpg_mbar_wait(empty + 8 * ring.slot, ring.phase ^ 1u);
        const uint32_t bar = full + 8 * ring.slot;
        const int count = min(kSkUnitsSlot, n - s0);
        tpg_mbar_arrive_expect_tx(bar, (uint32_t)count * kSkUnitBytes);
        for (int r = 0; r < count; ++r) {
            const int c = (s0 + r) / live, u = s0 + r - c * live;
            const float *src = p.sk_partials + (size_t)(lo + c) * (kBM * kBN) + (size_t)u * (kSkUnitBytes / 4);
            tpg_bulk_load(tpg_sk_piece(sA, sB, ring.slot, r), src, kSkUnitBytes, bar);
        }
        ring.advance();
    }
}

/* Adds the `v`alues of float4 q of one unit to slab j's sums. */
template <int SLABS, int ACCN>
__device__ __forceinline__ void tpg_sk_add4(float (&acc)[SLABS][ACCN], int j, int q, float4 v)
{
    acc[j][4 * q] += v.x;
    acc[j][4 * q + 1] += v.y;
    acc[j][4 * q + 2] += v.z;
    acc[j][4 * q + 3] += v.w;
}

/* The finisher's consumers, after the fragment's mainloop, through the ring: add the units tpg_sk_load_contributions
 * brought, slot after slot, each thread its own unit's values, and release each slot like a k-block's. */
template <int SLABS, int ACCN>
__device__ __forceinline__ void tpg_sk_add_from_ring(float (&acc)[SLABS][ACCN], int live, int n, tpg_ring &ring,
                                                     uint32_t sA, uint32_t sB, uint32_t full, uint32_t empty, int ctid,
                                                     bool warp_leader)
{
    for (int s0 = 0; s0 < n; s0 += kSkUnitsSlot) {
        tpg_mbar_wait(full + 8 * ring.slot, ring.phase);
#pragma unroll
        for (int r = 0; r < kSkUnitsSlot; ++r) {
            const int s = s0 + r, u = s % live;
            const uint32_t piece = tpg_sk_piece(sA, sB, ring.slot, r) + 16u * (uint32_t)(ctid & 31);
#pragma unroll
            for (int j = 0; j < SLABS; ++j)
                if (s < n && u == tpg_sk_unit<SLABS>(ctid, j))
#pragma unroll
                    for (int q = 0; q < ACCN / 4; ++q) tpg_sk_add4(acc, j, q, tpg_ld_shared_v4(piece + 512u * q));
        }
        tpg_fence_proxy_async_smem(); /* these generic reads before the async proxy's next write of the slot */
        __syncwarp();                 /* the warp's reads before its leader hands the slot back */
        if (warp_leader) tpg_release(empty + 8 * ring.slot);
        ring.advance();
    }
}

/* The finisher's consumers add contributions [lo, hi) in increasing order (deterministic: repeated calls are bitwise
 * equal): from the ring (tpg_sk_through_ring), or else each thread loads its own units from L2 (.cg: other SMs wrote
 * them) after one thread took the tile's count (tpg_sk_take_count) and a barrier over the consumers. */
template <int CONSUMERS, int SLABS, int ACCN>
__device__ __forceinline__ void tpg_sk_add_contributions(const tpg_gemm_params &p, float (&acc)[SLABS][ACCN], int rows,
                                                         int region_tile, int lo, int hi, tpg_ring &ring, uint32_t sA,
                                                         uint32_t sB, uint32_t full, uint32_t empty, int ctid,
                                                         bool warp_leader, unsigned int epoch, bool &gave_up)
{
    const int live = tpg_sk_live_units(rows);
    if (tpg_sk_through_ring(rows)) {
        tpg_sk_add_from_ring(acc, live, (hi - lo) * live, ring, sA, sB, full, empty, ctid, warp_leader);
        return;
    }
    if (ctid == 0) tpg_sk_take_count(p, region_tile, hi - lo, epoch, gave_up);
    tpg_named_barrier(1, 128 * CONSUMERS);
    /* slab by slab, contributor by contributor: with the contributors outermost the 128x256's trace build spilled */
#pragma unroll
    for (int j = 0; j < SLABS; ++j) {
        const int u = tpg_sk_unit<SLABS>(ctid, j);
        if (u >= live) continue;
        const float4 *unit = reinterpret_cast<const float4 *>(p.sk_partials + (size_t)lo * (kBM * kBN)) +
                             u * (ACCN / 4) * 32 + (ctid & 31);
        for (int c = lo; c < hi; ++c, unit += kBM * kBN / 4)
#pragma unroll
            for (int q = 0; q < ACCN / 4; ++q) tpg_sk_add4(acc, j, q, __ldcg(unit + q * 32));
    }
}

#endif /* TPG_GEMM_SM90_FIXUP_CUH */
