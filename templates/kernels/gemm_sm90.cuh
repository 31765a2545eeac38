/* The sm90 communication-fused GEMM kernel (one instance per generated .cu; see docs/ARCHITECTURE.md
 * for the macros an instance defines before including this header).
 *
 * Roles (block = 128 * (1 + TPG_CONSUMERS) threads, persistent grid = #SMs in whole clusters):
 *   every thread first, in the gathered all-gather walk when the GEMM copies the shards itself: its CTA's share
 *                of each shard into the slots (pull_shards.cuh)
 *   warpgroup 0  producer: registers cut with setmaxnreg.dec; one thread walks the units, waits for
 *                the all-gather flag of each chunk of a stage's copy (copy_chunks.h) before the first
 *                tile that reads it (or once for the whole grid's pulls), and issues the A/B TMA loads into a
 *                TPG_STAGES-deep ring guarded by full/empty mbarriers (gemm_sm90_roles.cuh).
 *   warpgroups 1..C consumers, TPG_CONSUMER_MODE
 *                0 cooperative (default): all share each tile, warpgroup w computes rows
 *                  [w*BM/C, (w+1)*BM/C) as one or two m64 slabs with wgmma m64nBNk16 (k32 for fp8; f32
 *                  accumulators);
 *                1 ping-pong (C = 2): each warpgroup owns every other tile (BM = 64 or 128 rows), so one
 *                  warpgroup's epilogue overlaps the other's mainloop;
 *                2 cooperative_n (C = 2): all share each tile, warpgroup w computes all BM rows of columns
 *                  [w*BN/2, (w+1)*BN/2) (BM/64 slabs of m64n(BN/2)), e.g. 192x192;
 *                then the epilogue (epilogue.cuh: stmatrix -> smem -> TMA store) for its part.
 * Clusters (TPG_CLUSTER_M x TPG_CLUSTER_N = 2x1 or 1x2, 1-D along x): the CTA pair computes two tiles
 * that share an operand (2x1: adjacent m tiles share B; 1x2: adjacent n tiles share A); each CTA loads
 * half of the shared box and multicasts it to both, consumers release slots on both CTAs.
 * Semantics of one launch: gemm_params.h.
 *
 * Deferred signal flags (epilogue.cuh) in the 1x1 cooperative kernel, and in ping-pong with
 * TPG_PP_DEFER_FLAGS: deferring is safe when the warpgroup's next mainloop depends on nothing that can
 * wait on another device. In a cluster that mainloop also needs the partner CTA's consumers to release
 * slots, and the partner may sit in an epilogue waiting for a peer's partial: a cross-device wait behind
 * an unraised flag, so clusters flush at once. In ping-pong, warpgroup w raises unit i's flag at the
 * start of its epilogue of unit i + 2. Getting there takes mainloops, the producer and slot releases
 * (no peer waits in reduce-scatter) and the other warpgroup's order-barrier arrival in its mainloop of
 * unit i + 1, which it starts only after its own epilogue of unit i - 1, and that epilogue may wait for
 * a peer's partial. So a flag does depend on peers, but only through the partial waits of units before
 * it: those partials come from the previous stage, and every unit of stage s - 1 precedes every unit
 * of stage s in the walk, on every device. Each flag thus waits only on flags of earlier units, and no
 * cycle forms (TP = 2 or a longer ring, any raster). A flush comes before the wait in tpg_epi_begin,
 * also on the timeout path; the last tile flushes in tpg_epilogue_finish. The price: the neighbour
 * sees the flag up to two mainloops later. Ping-pong flushes at once unless `deferred_flags`.
 */
#ifndef TPG_GEMM_SM90_CUH
#define TPG_GEMM_SM90_CUH

#if !defined(TPG_KERNEL_NAME) || !defined(TPG_ENTRY_NAME) || !defined(TPG_AB_DTYPE) || !defined(TPG_CD_DTYPE) ||  \
    !defined(TPG_BM) || !defined(TPG_BN) || !defined(TPG_BK) || !defined(TPG_STAGES) || !defined(TPG_CONSUMERS) || \
    !defined(TPG_CLUSTER_M) || !defined(TPG_CLUSTER_N) || !defined(TPG_SMEM_BYTES)
#error "gemm_sm90.cuh: an instance must define every TPG_* macro listed in docs/ARCHITECTURE.md"
#endif
#if TPG_AB_DTYPE < 0 || TPG_AB_DTYPE > 3
#error "gemm_sm90.cuh: TPG_AB_DTYPE must be 0 (bf16), 1 (fp16), 2 (e4m3) or 3 (e5m2)"
#endif
#if (TPG_AB_DTYPE == 2 || TPG_AB_DTYPE == 3) && TPG_CD_DTYPE != 0
#error "gemm_sm90.cuh: fp8 operands write bf16 outputs (TPG_CD_DTYPE 0; tpgemm.h)"
#endif
#if TPG_CD_DTYPE != 0 && TPG_CD_DTYPE != 1 && TPG_CD_DTYPE != 4
#error "gemm_sm90.cuh: TPG_CD_DTYPE must be 0 (bf16), 1 (fp16) or 4 (fp32)"
#endif
#ifndef TPG_CONSUMER_MODE
#define TPG_CONSUMER_MODE 0 /* cooperative; generated cooperative instances omit the macro */
#endif
#if TPG_CONSUMER_MODE != 0 && TPG_CONSUMER_MODE != 1 && TPG_CONSUMER_MODE != 2
#error "gemm_sm90.cuh: TPG_CONSUMER_MODE must be 0 (cooperative), 1 (pingpong) or 2 (cooperative_n)"
#endif

#include <stdint.h>
#include "cuda12.h"
#include "gemm_params.h"
#include "ptx.cuh"
#include "wgmma.cuh"
#include "sync.cuh"
#include "cluster.cuh"
#include "scheduler.cuh"
#include "stream_k.h"
#include "copy_chunks.h"
#include "pull_shards.cuh"
#include "epilogue.cuh"
#include "epilogue_deferred.cuh"
#include "trace.cuh"

namespace {

constexpr int kBM = TPG_BM, kBN = TPG_BN, kBK = TPG_BK, kStages = TPG_STAGES, kConsumers = TPG_CONSUMERS;
constexpr bool kPingpong = TPG_CONSUMER_MODE == 1;
/* cooperative_n: the warpgroups share each tile split along N - warpgroup w computes all BM rows of
 * columns [w*BN/C, (w+1)*BN/C), so that tiles like 192x192 (3 m64 slabs of m64n96 each) are possible,
 * which a split along M (64-row slabs per warpgroup) cannot give */
constexpr bool kSplitN = TPG_CONSUMER_MODE == 2;
constexpr int kCM = TPG_CLUSTER_M, kCN = TPG_CLUSTER_N, kCluster = kCM * kCN;
constexpr int kElem = TPG_AB_DTYPE >= 2 ? 1 : 2; /* operand bytes: fp8 1, bf16 / fp16 2 */
/* one wgmma k step covers 32 bytes of a K-major row: k16 of 16-bit operands, k32 of fp8 */
constexpr int kMmaK = 32 / kElem;
/* epilogue subtile: bytes of one output row per store unit (the D map's box width): 128 or 64 */
#ifndef TPG_EPI_CHUNK_BYTES
#define TPG_EPI_CHUNK_BYTES 128
#endif
constexpr int kEpiChunk = TPG_EPI_CHUNK_BYTES;
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kWgRows = kPingpong || kSplitN ? kBM : kBM / kConsumers; /* tile rows a consumer warpgroup computes */
constexpr int kWgN = kSplitN ? kBN / kConsumers : kBN; /* tile columns a consumer warpgroup computes (wgmma N) */
constexpr int kSlabs = kWgRows / 64;                   /* m64 slabs per consumer warpgroup */
constexpr int kAccN = kWgN / 2;                        /* f32 accumulators per thread per slab */
/* `acc: f16` (TPG_ACC_F16 1): the mainloop accumulates in packed halves (kAccN / 2 registers per slab), which
 * the epilogue widens to the f32 layout it works on (tpg_tile_mainloop); fp16 operands only */
#ifndef TPG_ACC_F16
#define TPG_ACC_F16 0
#endif
constexpr bool kAccF16 = TPG_ACC_F16;
static_assert(!kAccF16 || TPG_AB_DTYPE == 1, "TPG_ACC_F16: wgmma accumulates in f16 for fp16 operands only");
/* `fp8_promote: N` (TPG_FP8_PROMOTE N): the tensor pipe sums fp8 products in an accumulator narrower than f32, so
 * its error grows with K; every N k-blocks its sums are added into a second, f32 set of registers and the pipe
 * starts over (tpg_tile_mainloop), as cuBLASLt does without fast accumulation. Twice the accumulator registers
 * (the generator allows 160 together: 128x128's 64 + 64, 128x160's 80 + 80) and a drained wgmma pipe every N k-blocks,
 * at different k-blocks in the two cooperative warpgroups (tpg_tile_mainloop) */
#ifndef TPG_FP8_PROMOTE
#define TPG_FP8_PROMOTE 0
#endif
constexpr int kPromote = TPG_FP8_PROMOTE;
static_assert(kPromote == 0 || (TPG_AB_DTYPE >= 2 && !kAccF16), "TPG_FP8_PROMOTE: fp8 operands, f32 accumulation");
constexpr uint32_t kRowBytes = kBK * kElem;      /* one K-major smem row: the swizzle's width (128 or 64 B) */
constexpr uint32_t kABytes = kBM * kBK * kElem; /* one ring slot of A */
constexpr uint32_t kBBytes = kBN * kBK * kElem; /* one ring slot of B */
constexpr uint32_t kSlotBytes = kABytes + kBBytes;
/* epilogue store buffers per consumer warpgroup, each 64 rows x kEpiChunk B (epilogue.cuh): by default
 * two per m64 slab; more (`epilogue_buffers`) let a whole tile's stores be in flight at once, so the
 * epilogue never waits for a TMA store to read its smem (the cooperative 128x256 otherwise waits once per
 * chunk: ~2.3 us of a 100 us tile, timeline_*_wide) */
#ifndef TPG_EPI_BUFFERS
#define TPG_EPI_BUFFERS (2 * kSlabs)
#endif
constexpr int kEpiBuffers = TPG_EPI_BUFFERS;
/* cooperative 16-bit outputs: store units go out during the next tile's mainloop (epilogue_deferred.cuh);
 * `deferred_stores: false` (TPG_DEFER_STORES 0) keeps every store inside its own tile's epilogue */
#ifndef TPG_DEFER_STORES
#define TPG_DEFER_STORES 1
#endif
/* f32 registers a consumer thread holds across its mainloop: the accumulators, and fp8_promote's second set */
constexpr int kAccRegs = kSlabs * kAccN * (kPromote > 0 ? 2 : 1);
/* packed registers held per thread: the tail of a tile that fits next to the next tile's accumulators
 * (64 spilled at 240 registers per thread, 32 at a cluster's 232 or next to cooperative_n's 144; 48 also
 * spilled, and so did 48 or 64 issued all in a peeled k-block 0, 2026-12-01) */
#ifndef TPG_DEFER_REGS
#define TPG_DEFER_REGS (kCluster > 1 || kAccRegs > 128 ? 16 : 32)
#endif
/* not with 3 consumers: their 160 registers per thread hold the accumulators and little else; nor next to
 * more than 144 accumulator registers: cooperative_n's 128x320 (160) spilled with 16 held registers; the promoting
 * 128x160 (80 + 80) spilled with 32 and compiles clean with 16, but only its form without deferred stores has been
 * timed (docs/perf_notes/2026-12-05-i.md). TPG_DIAG_DEFER_PAST_144 1 (experimental x_ kernels only,
 * bench/results/experiments/promote_tiles.patch): defer there too, with TPG_DEFER_REGS' 16 */
#ifndef TPG_DIAG_DEFER_PAST_144
#define TPG_DIAG_DEFER_PAST_144 0
#endif
constexpr bool kDeferStores = TPG_DEFER_STORES && !kPingpong && TPG_CD_DTYPE != 4 && kConsumers < 3 &&
                              (kAccRegs <= 144 || TPG_DIAG_DEFER_PAST_144);
/* `stream_k: true` (TPG_STREAM_K 1, opt-in): cooperative (split along M) 1x1 kernels split the last tiles of a
 * one-stage launch along k when the runtime asks (tpg_gemm_params.sk_tiles; stream_k.h). Off by default: it
 * measured slower (docs/PERF_NOTES.md, 2026-12-01). Not cooperative_n: next to its 144 accumulators the
 * tail's state spilled. */
#ifndef TPG_STREAM_K
#define TPG_STREAM_K 0
#endif
constexpr bool kStreamK = TPG_STREAM_K && !kPingpong && !kSplitN && kCluster == 1;
/* ping-pong `deferred_flags: true` (TPG_PP_DEFER_FLAGS 1): a tile's signal flag waits for the warpgroup's
 * next epilogue like the cooperative 1x1 kernel's (header comment). Opt-in until measured on a GPU. */
#ifndef TPG_PP_DEFER_FLAGS
#define TPG_PP_DEFER_FLAGS 0
#endif
static_assert(!TPG_PP_DEFER_FLAGS || kPingpong, "TPG_PP_DEFER_FLAGS is a ping-pong choice");
/* spread pushes (TPG_SPREAD_PUSHES 1, epilogue.cuh; self-test instances only): a pushing tile's stores go out during
 * its warpgroup's wait for the next turn, spread over it; its flag is deferred, so ping-pong with deferred flags */
static_assert(!TPG_SPREAD_PUSHES || (kPingpong && TPG_PP_DEFER_FLAGS && kCluster == 1),
              "TPG_SPREAD_PUSHES: a ping-pong 1x1 choice, with TPG_PP_DEFER_FLAGS");
/* TPG_DIAG_NO_DEFER_FLAGS (self-test instances only): every tile raises its signal flag at once, as clusters do
 * (TPG_DIAG_DEFER_FLAGS_ALWAYS, epilogue.cuh: the other way) */
#ifndef TPG_DIAG_NO_DEFER_FLAGS
#define TPG_DIAG_NO_DEFER_FLAGS 0
#endif
/* may a tile's signal flag wait for the next epilogue of its warpgroup (tpg_epi_init) */
constexpr bool kDeferFlags = !TPG_DIAG_NO_DEFER_FLAGS && kCluster == 1 && (!kPingpong || TPG_PP_DEFER_FLAGS);
/* ping-pong `prefetch_sources: true` (TPG_PREFETCH_SOURCES 1): the epilogue loads the next store unit's
 * partial while this unit is stored (tpg_epi_units_prefetched). Ping-pong only: next to the cooperative
 * kernels' held deferred-store registers it spilled. Opt-in until measured on a GPU. */
#ifndef TPG_PREFETCH_SOURCES
#define TPG_PREFETCH_SOURCES 0
#endif
static_assert(!TPG_PREFETCH_SOURCES || kPingpong, "TPG_PREFETCH_SOURCES is a ping-pong choice");
constexpr bool kPrefetchSources = TPG_PREFETCH_SOURCES;
/* `tma_partials: true` (TPG_TMA_PARTIALS 1): the epilogue TMA-loads a tile's received partial into its store
 * buffers and reads it back with ldmatrix (epilogue_tma.cuh), one mbarrier per buffer; ping-pong and
 * cooperative kernels (their deferred epilogue too) */
#ifndef TPG_TMA_PARTIALS
#define TPG_TMA_PARTIALS 0
#endif
constexpr bool kTmaPartials = TPG_TMA_PARTIALS;
static_assert(!kTmaPartials || (TPG_CD_DTYPE != 4 && !kPrefetchSources),
              "TPG_TMA_PARTIALS: 16-bit outputs, and not with TPG_PREFETCH_SOURCES (both load partials)");
constexpr int kSrcBars = kTmaPartials ? kConsumers * kEpiBuffers : 0; /* partial-load mbarriers */
/* `partials: f32` (TPG_PARTIAL_F32 1, epilogue_sources.cuh): partials move in fp32 and are read with plain
 * loads (the TMA-loaded and prefetched paths read them in the output type) */
static_assert(!TPG_PARTIAL_F32 || (TPG_CD_DTYPE != 4 && !kTmaPartials && !kPrefetchSources),
              "TPG_PARTIAL_F32: 16-bit outputs, and not with TPG_TMA_PARTIALS or TPG_PREFETCH_SOURCES");
/* Time decomposition, diagnostics only (`defines:` of an x_ kernel; docs/PERF_NOTES.md, 2026-12-01 11:20Z): a
 * build without one part of the work, timed against the full kernel, says what that part costs in place.
 * TPG_DIAG_NO_MMA: the consumers issue no wgmma (the outputs are garbage). TPG_DIAG_NO_LOAD: the producer
 * arrives on each full barrier without loading (the wgmmas read whatever the ring holds). TPG_DIAG_NO_EPI: no
 * epilogue (nothing is stored and no signal flag is raised - in a TP run every rank skips its waits on them
 * too; NO_MMA with it leaves the consumers only the ring waits). TPG_DIAG_NO_STORE: the whole epilogue but its
 * TMA store instructions (epilogue.cuh; flags are still raised, over data never written). Cooperative and
 * ping-pong alike; never in a shipped config. */
#ifndef TPG_DIAG_NO_MMA
#define TPG_DIAG_NO_MMA 0
#endif
#ifndef TPG_DIAG_NO_LOAD
#define TPG_DIAG_NO_LOAD 0
#endif
#ifndef TPG_DIAG_NO_EPI
#define TPG_DIAG_NO_EPI 0
#endif
constexpr bool kDiagNoMma = TPG_DIAG_NO_MMA, kDiagNoLoad = TPG_DIAG_NO_LOAD, kDiagNoEpi = TPG_DIAG_NO_EPI;
constexpr uint32_t kEpiBytes = (uint32_t)kConsumers * kEpiBuffers * 64u * (uint32_t)kEpiChunk;
/* 1023 B worst-case alignment loss of the dynamic smem base + the ring + the epilogue buffers +
 * 2 mbarriers per slot + the partial-load mbarriers + the epoch word (the fixed bytes come out of the generator's
 * SMEM_RESERVED, generator/kernels.py) */
constexpr int kSmemNeed = 1023 + kStages * (int)kSlotBytes + (int)kEpiBytes + kStages * 16 + kSrcBars * 8 + 4;
/* empty[s] arrivals per phase: one per consumer warp that reads the slot, in every CTA of the cluster */
constexpr int kEmptyArrivals = 4 * (kPingpong ? 1 : kConsumers) * kCluster;
/* Named barriers: 0 __syncthreads, 1 all consumers (cooperative flag flush), 2 + w warpgroup w's
 * epilogue, kOrderBar + w ping-pong "warpgroup w may start its mainloop". */
constexpr uint32_t kOrderBar = 4;
static_assert(!kPingpong || 2 + kConsumers <= (int)kOrderBar,
              "the epilogue barriers 2 + w would reach the ping-pong order barriers kOrderBar + w");

/* Register split (multiples of 8). setmaxnreg moves registers inside the CTA's allocation, which is
 * fixed at launch: __launch_bounds__(kThreads, 1) gives each thread floor(64K / kThreads) rounded down
 * to 8 (168 at 384 threads), so the split must fit kLaunchRegs * kThreads (64512 at 384, not 65536):
 * an increase past what the decreases freed blocks in setmaxnreg.inc forever. 2 consumers: 24/240
 * (the epilogue's partial/C loads in flight next to 128 accumulators want 240); a cluster producer
 * (rank, multicast offsets, clamped rows) spills at 24, so clusters take 40/232, which ptxas fits with
 * 0 spills thanks to the per-slab epilogue. One consumer (256 threads, up to 248 each at launch): 56/240 - the
 * stream-K 64x128's producer (fragment arithmetic, timestamps) spilled 4 bytes at 40 in the trace build. */
constexpr int kLaunchRegs = (65536 / kThreads > 255 ? 255 : 65536 / kThreads) & ~7;
constexpr int kProducerRegs = kConsumers == 3 ? 32 : kConsumers == 2 ? (kCluster > 1 ? 40 : 24) : 56;
constexpr int kConsumerRegs = kConsumers == 1 ? 240 : kConsumers == 2 ? (kCluster > 1 ? 232 : 240) : 160;
static_assert(128 * kProducerRegs + 128 * kConsumers * kConsumerRegs <= kLaunchRegs * kThreads,
              "register split over the launch allocation: setmaxnreg.inc would wait forever");

static_assert(kRowBytes == 128 || kRowBytes == 64,
              "BK * sizeof(operand) must be 128 bytes (128B swizzle) or 64 bytes (64B swizzle, twice the slots)");
static_assert(kPingpong || kSplitN || (kBM % (64 * kConsumers) == 0 && (kSlabs == 1 || kSlabs == 2)),
              "cooperative: each consumer warpgroup must own one or two m64 slabs: BM = 64 * consumers * {1,2}");
static_assert(!kSplitN || (kConsumers == 2 && kBM % 64 == 0 && kBM <= 256 && kBN % 16 == 0 &&
                           (kWgN == 64 || kWgN == 96 || kWgN == 128 || kWgN == 160)),
              "cooperative_n: 2 consumers, BM a multiple of 64 up to 256 (one TMA box), BN/2 in {64, 96, 128, 160}");
/* a TMA box has at most 256 rows: BN = 320 only as two 160-row halves, i.e. in a 2x1 cluster */
static_assert(kBN <= 256 || (kSplitN && kCM == 2 && kBN / kCM <= 256), "BN > 256: cooperative_n in a 2x1 cluster only");
static_assert(!kPingpong || (kConsumers == 2 && (kBM == 64 || kBM == 128)),
              "ping-pong: two consumer warpgroups, each owning whole tiles of BM = 64 or 128 rows");
static_assert(kBN == 64 || kBN == 128 || kBN == 160 || kBN == 192 || kBN == 256 || kBN == 320,
              "BN must be 64, 128, 160, 192, 256 or 320");
static_assert(kSlabs * kAccN <= (kSplitN ? 160 : 128), "accumulators exceed 128 (cooperative_n: 160) registers per thread");
static_assert(kConsumers >= 1 && kConsumers <= 3, "1..3 consumer warpgroups");
static_assert(kStages >= 2, "the ring needs at least two slots");
static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0, "ring slots must keep 1024-byte alignment");
static_assert(kEpiChunk == 128 || kEpiChunk == 64, "TPG_EPI_CHUNK_BYTES: 128 or 64");
static_assert(kEpiBuffers >= 2 && kEpiBuffers <= 16, "TPG_EPI_BUFFERS: 2..16 store buffers per consumer warpgroup");
static_assert((kCM == 1 && kCN == 1) || (kCM == 2 && kCN == 1) || (kCM == 1 && kCN == 2),
              "clusters: 1x1, 2x1 or 1x2");
static_assert(!(kPingpong && kCluster > 1), "ping-pong with clusters is not implemented");
/* a multicast half box starts on a 1024-byte (8-row swizzle atom) boundary of the slot, so the halves
 * together form exactly the swizzled layout one full box would */
static_assert((kABytes / kCN) % 1024 == 0 && (kBBytes / kCM) % 1024 == 0, "half boxes must be 1024-byte aligned");
static_assert(kSmemNeed <= TPG_SMEM_BYTES, "TPG_SMEM_BYTES is smaller than the ring this kernel needs");
static_assert(TPG_SMEM_BYTES <= 232448, "more dynamic shared memory than sm_90 allows per block");

#include "gemm_sm90_walk.cuh"
#include "gemm_sm90_roles.cuh"

} /* namespace */

__global__ void __launch_bounds__(kThreads, 1) TPG_KERNEL_NAME(const __grid_constant__ tpg_gemm_params p)
{
    extern __shared__ __align__(1024) uint8_t tpg_smem[];
    /* Programmatic dependent launch (TP = 1 ops after tpg_op_set_pdl(op, 1)): this grid's CTAs may be
     * resident while the previous kernel of the stream still runs its last tiles, so nothing here touches
     * global memory (trace records included) before that kernel's writes are visible. The next launch may
     * then start at once: its CTAs only take SMs this grid has left (one CTA fills an SM), and wait here
     * in turn. Without PDL both instructions are no-ops. */
    tpg_griddep_wait();
    tpg_griddep_launch_dependents();
    /* the gathered all-gather walk's shards, when this GEMM copies them (pull_shards.cuh): every thread, before the
     * roles split - nothing else keeps the SM busy until the producer's wait for them - and before anything else,
     * so that no value of the kernel's is live across them (in the trace build they spilled the 128x256's); the
     * claims pass through the ring's first two words, which no load has reached yet */
    if (!TPG_DIAG_NO_PULLS && p.pull_count)
        tpg_pull_shards(p, reinterpret_cast<volatile unsigned int *>(tpg_smem));
    /* the 128B swizzle pattern and the wgmma descriptors assume 1024-byte aligned slots; the offset is
     * the same in every CTA of a cluster, which multicast (same CTA-relative offsets) relies on */
    const uint32_t base = (tpg_smem_addr(tpg_smem) + 1023u) & ~1023u;
    const uint32_t sA = base;
    const uint32_t sB = sA + kStages * kABytes;
    const uint32_t sD = sB + kStages * kBBytes;   /* epilogue chunk buffers, 1024-aligned */
    const uint32_t full = sD + kEpiBytes;         /* kStages mbarriers of 8 bytes */
    const uint32_t empty = full + 8 * kStages;    /* kStages mbarriers of 8 bytes */
    const uint32_t src_bars = empty + 8 * kStages; /* kSrcBars mbarriers: warpgroup w's buffer k at w * UNITS + k */
    const uint32_t epoch_word = src_bars + 8 * kSrcBars; /* the launch's epoch, for every thread of the CTA */

    if (threadIdx.x == 0) tpg_st_shared_u32(epoch_word, tpg_load_epoch(p)); /* read after the barrier below */
    const tpg_tiling g = tpg_make_tiling<kBM, kBN, kBK, kCM, kCN>(p);
    /* clusters are consecutive blockIdx.x (1-D cluster dims): cluster id and count */
    const int rank = kCluster > 1 ? (int)tpg_cluster_rank() : 0;
    const int stride = (int)gridDim.x / kCluster;
    /* a short one-stage walk spreads its units over the clusters (spread.h); a stream-K region keeps blockIdx's */
    const int cluster = (int)blockIdx.x / kCluster;
    const int first = tpg_sk_region(p) ? cluster : tpg_first_unit(g.total, p.num_stages, cluster, stride);
    TPG_TR(tpg_tr_cta_start(p, g, kBM, kBN, kCluster, kPingpong ? 1 : 0);)

    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            tpg_mbar_init(full + 8 * s, 1);                 /* the producer's arrive.expect_tx */
            tpg_mbar_init(empty + 8 * s, kEmptyArrivals);   /* consumer warps of every CTA */
        }
        for (int b = 0; b < kSrcBars; ++b) tpg_mbar_init(src_bars + 8 * b, 1); /* thread 0's arrive.expect_tx */
        tpg_fence_mbar_init();
    }
    /* in a cluster the partner multicasts into this CTA's slots and arrives on its barriers: no CTA
     * may start before both have initialized theirs */
    if constexpr (kCluster > 1) tpg_cluster_sync();
    else __syncthreads();
    const unsigned int epoch = tpg_ld_shared_u32(epoch_word);

    const int wg = threadIdx.x >> 7;
    if (wg == 0) {
        tpg_setmaxnreg_dec<kProducerRegs>();
        /* an idle warp of the producer's warpgroup, so that the producer's first load waits for no atomic; the
         * barrier above is after thread 0's tpg_load_epoch. Before the producer's call, so that nothing of
         * it stays live across the producer's loop (which fills the warpgroup's registers). */
        if (threadIdx.x == 32) tpg_keep_epoch(p, epoch);
        if (threadIdx.x == 0) tpg_producer(p, g, epoch, sA, sB, full, empty, rank, first, stride);
    } else {
        tpg_setmaxnreg_inc<kConsumerRegs>();
        if constexpr (kPingpong)
            tpg_consumer_pingpong(p, g, epoch, sA, sB, sD, full, empty, src_bars, threadIdx.x - 128, first, stride);
        else
            tpg_consumer_coop(p, g, epoch, sA, sB, sD, full, empty, src_bars, threadIdx.x - 128, rank, first,
                              stride);
    }
    /* Teardown: every byte multicast into this CTA was consumed here (both CTAs walk the same units),
     * but the partner's consumers may still arrive on this CTA's empty barriers; no CTA leaves (and
     * frees its smem) before every thread of both has passed this point. */
    if constexpr (kCluster > 1) tpg_cluster_sync();
}

#ifdef TPG_TRACE
/* Link-time guard: a trace kernel (longer tpg_gemm_params) only links with the trace runtime (trace.c). */
extern "C" const int tpg_trace_build_abi;
extern "C" const void *TPG_ENTRY_NAME(void)
{
    return tpg_trace_build_abi == 1 ? reinterpret_cast<const void *>(&TPG_KERNEL_NAME) : nullptr;
}
#else
extern "C" const void *TPG_ENTRY_NAME(void) { return reinterpret_cast<const void *>(&TPG_KERNEL_NAME); }
#endif

#endif /* TPG_GEMM_SM90_CUH */
