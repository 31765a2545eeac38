/* The sm90 communication-fused GEMM kernel (one instance per generated .cu; see docs/ARCHITECTURE.md
 * for the macros an instance defines before including this header).
 *
 * Roles (block = 128 * (1 + TPG_CONSUMERS) threads, persistent grid = #SMs):
 *   warpgroup 0  producer: registers cut with setmaxnreg.dec; one thread walks the tiles, waits for
 *                a stage's all-gather flag once per stage change, and issues the A/B TMA loads into a
 *                TPG_STAGES-deep ring guarded by full/empty mbarriers.
 *   warpgroups 1..C consumers (cooperative): all share each tile, warpgroup w computes rows
 *                [w*BM/C, (w+1)*BM/C) as one or two m64 slabs with wgmma m64nBNk16 (f32 accumulators),
 *                then runs the epilogue (epilogue.cuh: stmatrix -> smem -> TMA store) for its rows.
 * The ring's slot index and phase run on across tiles in both roles (never reset per tile).
 * Semantics of one launch: gemm_params.h.
 */
#ifndef TPG_GEMM_SM90_CUH
#define TPG_GEMM_SM90_CUH

#if !defined(TPG_KERNEL_NAME) || !defined(TPG_ENTRY_NAME) || !defined(TPG_AB_DTYPE) || !defined(TPG_CD_DTYPE) ||  \
    !defined(TPG_BM) || !defined(TPG_BN) || !defined(TPG_BK) || !defined(TPG_STAGES) || !defined(TPG_CONSUMERS) || \
    !defined(TPG_CLUSTER_M) || !defined(TPG_CLUSTER_N) || !defined(TPG_SMEM_BYTES)
#error "gemm_sm90.cuh: an instance must define every TPG_* macro listed in docs/ARCHITECTURE.md"
#endif
#if TPG_AB_DTYPE == 2 || TPG_AB_DTYPE == 3
#error "gemm_sm90.cuh: fp8 operands (e4m3/e5m2) are not implemented yet (needs wgmma k32 and BK = 128)"
#elif TPG_AB_DTYPE != 0 && TPG_AB_DTYPE != 1
#error "gemm_sm90.cuh: TPG_AB_DTYPE must be 0 (bf16) or 1 (fp16)"
#endif
#if TPG_CD_DTYPE != 0 && TPG_CD_DTYPE != 1 && TPG_CD_DTYPE != 4
#error "gemm_sm90.cuh: TPG_CD_DTYPE must be 0 (bf16), 1 (fp16) or 4 (fp32)"
#endif
#if TPG_CLUSTER_M != 1 || TPG_CLUSTER_N != 1
#error "gemm_sm90.cuh: clusters (TMA multicast) are not implemented yet; TPG_CLUSTER_M/N must be 1"
#endif

#include <stdint.h>
#include "gemm_params.h"
#include "ptx.cuh"
#include "wgmma.cuh"
#include "sync.cuh"
#include "scheduler.cuh"
#include "epilogue.cuh"

namespace {

constexpr int kBM = TPG_BM, kBN = TPG_BN, kBK = TPG_BK, kStages = TPG_STAGES, kConsumers = TPG_CONSUMERS;
constexpr int kElem = 2; /* bf16 / fp16 operands */
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kSlabs = kBM / (64 * kConsumers); /* m64 slabs per consumer warpgroup */
constexpr int kAccN = kBN / 2;                  /* f32 accumulators per thread per slab */
constexpr uint32_t kABytes = kBM * kBK * kElem; /* one ring slot of A */
constexpr uint32_t kBBytes = kBN * kBK * kElem; /* one ring slot of B */
constexpr uint32_t kSlotBytes = kABytes + kBBytes;
/* epilogue chunk buffers: 2 per consumer warpgroup, each (BM / consumers) rows x 128 B (epilogue.cuh) */
constexpr uint32_t kEpiBytes = 2u * kBM * 128u;
/* 1023 B worst-case alignment loss of the dynamic smem base + the ring + the epilogue buffers +
 * 2 mbarriers per slot */
constexpr int kSmemNeed = 1023 + kStages * (int)kSlotBytes + (int)kEpiBytes + kStages * 16;

/* Register split (multiples of 8; total over the block within 64K registers). 2 consumers: 24/240,
 * because the epilogue's partial/C loads in flight next to 128 accumulators spill at 232. */
constexpr int kProducerRegs = kConsumers == 3 ? 32 : kConsumers == 2 ? 24 : 40;
constexpr int kConsumerRegs = kConsumers == 1 ? 240 : kConsumers == 2 ? 240 : 160;

static_assert(kBK * kElem == 128, "BK * sizeof(operand) must be 128 bytes (one 128B-swizzle atom per row)");
static_assert(kBM % (64 * kConsumers) == 0 && (kSlabs == 1 || kSlabs == 2),
              "each consumer warpgroup must own one or two m64 slabs: BM = 64 * consumers * {1,2}");
static_assert(kBN == 64 || kBN == 128 || kBN == 192 || kBN == 256, "BN must be 64, 128, 192 or 256");
static_assert(kSlabs * kAccN <= 128, "accumulators exceed 128 registers per thread");
static_assert(kConsumers >= 1 && kConsumers <= 3, "1..3 consumer warpgroups");
static_assert(kStages >= 2, "the ring needs at least two slots");
static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0, "ring slots must keep 1024-byte alignment");
static_assert(kSmemNeed <= TPG_SMEM_BYTES, "TPG_SMEM_BYTES is smaller than the ring this kernel needs");
static_assert(TPG_SMEM_BYTES <= 232448, "more dynamic shared memory than sm_90 allows per block");

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
};

__device__ __forceinline__ void tpg_producer(const tpg_gemm_params &p, const tpg_tiling &g, unsigned int epoch,
                                             uint32_t sA, uint32_t sB, uint32_t full, uint32_t empty)
{
    for (int s = 0; s < p.num_stages; ++s) {
        tpg_prefetch_tensormap(&p.stage[s].a_map);
        tpg_prefetch_tensormap(&p.stage[s].b_map);
    }
    tpg_ring ring = {0, 0};
    int cur_stage = -1;
    bool gave_up = false;
    for (int gid = blockIdx.x; gid < g.total; gid += gridDim.x) {
        const tpg_tile tile = tpg_decode_tile(g, gid);
        const tpg_stage_params &sp = p.stage[tile.stage];
        if (tile.stage != cur_stage) {
            cur_stage = tile.stage;
            /* all-gather: the stage's operands arrive by copy engine; acquire the flag, then order
             * that acquire before the async-proxy (TMA) reads of the data it guards */
            if (sp.wait_flag) {
                tpg_wait_flag(p, sp.wait_flag, epoch, gave_up);
                tpg_fence_proxy_async_global();
            }
        }
        const int ya = tile.batch * sp.a_batch_rows + sp.a_row0 + tile.tm * kBM;
        const int yb = tile.batch * sp.b_batch_rows + sp.b_row0 + tile.tn * kBN;
        for (int kb = 0; kb < g.k_blocks; ++kb) {
            tpg_mbar_wait(empty + 8 * ring.slot, ring.phase ^ 1u); /* fresh barrier: passes at once */
            const uint32_t bar = full + 8 * ring.slot;
            tpg_mbar_arrive_expect_tx(bar, kSlotBytes); /* full boxes, even where zero-filled */
            tpg_tma_load_2d(sA + ring.slot * kABytes, &sp.a_map, bar, kb * kBK, ya);
            tpg_tma_load_2d(sB + ring.slot * kBBytes, &sp.b_map, bar, kb * kBK, yb);
            ring.advance();
        }
    }
}

__device__ __forceinline__ void tpg_consumer(const tpg_gemm_params &p, const tpg_tiling &g, unsigned int epoch,
                                             uint32_t sA, uint32_t sB, uint32_t sD, uint32_t full, uint32_t empty,
                                             int ctid)
{
    const int wg = ctid >> 7;
    const bool warp_leader = (ctid & 31) == 0;
    const float scale = p.alpha * (p.scale_a ? *p.scale_a : 1.0f) * (p.scale_b ? *p.scale_b : 1.0f);
    float acc[kSlabs][kAccN];
    tpg_ring ring = {0, 0};
    bool gave_up = false;
    /* this warpgroup's first A row inside a slot: (wg * kSlabs + j) * 64 rows of 128 bytes */
    const uint32_t a_off = (uint32_t)(wg * kSlabs) * 64u * 128u;
    tpg_epi_state est = {0u, nullptr, true};
    for (int s = 0; s < p.num_stages; ++s) {
        if (p.stage[s].wait_flag) est.defer = false; /* see epilogue.cuh: never defer across a wait */
        if ((ctid & 127) == 0) tpg_prefetch_tensormap(&p.stage[s].d_map);
    }

    for (int gid = blockIdx.x; gid < g.total; gid += gridDim.x) {
        const tpg_tile tile = tpg_decode_tile(g, gid);
        if (g.k_blocks == 0) {
#pragma unroll
            for (int j = 0; j < kSlabs; ++j)
#pragma unroll
                for (int i = 0; i < kAccN; ++i) acc[j][i] = 0.0f;
        }
        int prev_slot = -1;
        for (int kb = 0; kb < g.k_blocks; ++kb) {
            tpg_mbar_wait(full + 8 * ring.slot, ring.phase);
            const uint64_t da = tpg_wgmma_desc(sA + ring.slot * kABytes + a_off);
            const uint64_t db = tpg_wgmma_desc(sB + ring.slot * kBBytes);
#pragma unroll
            for (int j = 0; j < kSlabs; ++j) tpg_acc_fence(acc[j]);
            tpg_wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < kBK / 16; ++kk) {
#pragma unroll
                for (int j = 0; j < kSlabs; ++j)
                    /* +2 per k16 step = +32 bytes; +512 per m64 slab = 64 rows * 128 B >> 4 */
                    tpg_wgmma<kBN, TPG_AB_DTYPE>::mma(acc[j], da + 2 * kk + 512 * j, db + 2 * kk,
                                                      (kb | kk) != 0);
            }
            tpg_wgmma_commit();
#pragma unroll
            for (int j = 0; j < kSlabs; ++j) tpg_acc_fence(acc[j]);
            /* keep this k-block's wgmmas in flight; the previous one is done -> release its slot */
            tpg_wgmma_wait<1>();
            if (prev_slot >= 0 && warp_leader) tpg_mbar_arrive(empty + 8 * prev_slot);
            prev_slot = ring.slot;
            ring.advance();
        }
        tpg_wgmma_wait<0>();
#pragma unroll
        for (int j = 0; j < kSlabs; ++j) tpg_acc_fence(acc[j]);
        if (prev_slot >= 0 && warp_leader) tpg_mbar_arrive(empty + 8 * prev_slot);

        tpg_epilogue_tile<TPG_CD_DTYPE, kBM, kBN, kConsumers, kSlabs>(p, p.stage[tile.stage], tile, acc, scale,
                                                                       epoch, ctid, gave_up, est, sD);
    }
    tpg_epilogue_finish<kConsumers>(est, epoch, ctid);
}

} /* namespace */

__global__ void __launch_bounds__(kThreads, 1) TPG_KERNEL_NAME(const __grid_constant__ tpg_gemm_params p)
{
    extern __shared__ __align__(1024) uint8_t tpg_smem[];
    /* the 128B swizzle pattern and the wgmma descriptors assume 1024-byte aligned slots */
    const uint32_t base = (tpg_smem_addr(tpg_smem) + 1023u) & ~1023u;
    const uint32_t sA = base;
    const uint32_t sB = sA + kStages * kABytes;
    const uint32_t sD = sB + kStages * kBBytes;   /* epilogue chunk buffers, 1024-aligned */
    const uint32_t full = sD + kEpiBytes;         /* kStages mbarriers of 8 bytes */
    const uint32_t empty = full + 8 * kStages;    /* kStages mbarriers of 8 bytes */

    const unsigned int epoch = tpg_load_epoch(p); /* every thread, once */
    const tpg_tiling g = tpg_make_tiling<kBM, kBN, kBK>(p);

    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            tpg_mbar_init(full + 8 * s, 1);                  /* the producer's arrive.expect_tx */
            tpg_mbar_init(empty + 8 * s, 4 * kConsumers);    /* one arrival per consumer warp */
        }
        tpg_fence_mbar_init();
    }
    __syncthreads();

    const int wg = threadIdx.x >> 7;
    if (wg == 0) {
        tpg_setmaxnreg_dec<kProducerRegs>();
        if (threadIdx.x == 0) tpg_producer(p, g, epoch, sA, sB, full, empty);
    } else {
        tpg_setmaxnreg_inc<kConsumerRegs>();
        tpg_consumer(p, g, epoch, sA, sB, sD, full, empty, threadIdx.x - 128);
    }
}

extern "C" const void *TPG_ENTRY_NAME(void) { return reinterpret_cast<const void *>(&TPG_KERNEL_NAME); }

#endif /* TPG_GEMM_SM90_CUH */
