/* Persistent tile walk. One launch covers every stage. The walk is over *units*: a unit is the
 * CM x CN block of tiles that one cluster computes together (CM = TPG_CLUSTER_M along m, CN =
 * TPG_CLUSTER_N along n; a 1x1 cluster makes units = tiles). Global unit ids u = 0 .. num_stages *
 * units_per_stage - 1 in stage order; cluster c (of C = gridDim.x / (CM*CN)) takes u = c, c + C, ... (a short one-stage
 * walk instead spreads its units over the clusters, one each at most: spread.h)
 * in increasing order, and CTA rank r of the cluster computes tile (CM*um + r % CM, CN*un + r / CM) of
 * unit (um, un). Both CTAs of a cluster therefore walk the same units in the same order (same trip
 * count, same ring slots), which the shared-operand multicast needs. A tile past the edge of a ragged
 * grid (odd tiles_m with CM = 2, say) is still walked - its CTA loads and consumes like the partner,
 * so the partner gets its multicast half and its release arrivals - but has valid = false: no
 * epilogue, no stores, no flags.
 *
 * With p.stage_minor (ping-pong reduce-scatter rings whose stages split M into one tile row each, in one wave
 * or at few rows and much B; set by the runtime: params.c; the self-test sets it on all-gather walks too) the
 * stages are interleaved instead: u = unit * num_stages + stage, so the stages' tiles of one output position -
 * which read the same B tile - go to neighbouring CTAs and read it in step (gemm_params.h).
 *
 * Why increasing order matters (deadlock freedom): a stage-s tile may wait on a partial written by
 * the stage-(s-1) tile with the same canonical index (same device or a peer). That tile belongs to a
 * smaller unit id (in either order; the NCCL transport's waits on whole row bands of a stage hold only
 * stage after stage or in one wave, which is why the runtime interleaves longer walks only over NVLink), and
 * every cluster finishes its units in increasing id, so the smallest unfinished unit on a device
 * never waits on anything unfinished; all CTAs are co-resident (grid <= #SMs, 1 CTA/SM, every
 * cluster resident).
 *
 * Within a stage the raster is grouped: TPG_GROUP_M unit rows form a group walked column by column
 * (all um of the group for one un, then the next un), so a wave of clusters shares B tiles and a few
 * A tiles in L2. With TPG_RASTER 1 (`raster: hilbert`) the position inside a batch indexes a table
 * instead (p.tile_order, a Hilbert curve over the units built by the runtime): a wave is then a compact
 * patch in both directions. Either way the order only permutes units inside a stage, so the
 * deadlock argument above holds. Producer and consumers decode with the same function, so they always
 * agree. */
#ifndef TPG_SCHEDULER_CUH
#define TPG_SCHEDULER_CUH

#include "gemm_params.h"

#ifndef TPG_GROUP_M
#define TPG_GROUP_M 8
#endif
static_assert(TPG_GROUP_M > 0 && (TPG_GROUP_M & (TPG_GROUP_M - 1)) == 0,
              "TPG_GROUP_M: a power of two (the decode masks)");
/* 0: the grouped raster below; 1: the order table p.tile_order (a Hilbert curve, runtime/src/raster.c) */
#ifndef TPG_RASTER
#define TPG_RASTER 0
#endif

#include "spread.h"

struct tpg_tiling {
    int tiles_m, tiles_n;  /* ceil(m/BM), ceil(n/BN) */
    int units_m, units_n;  /* ceil(tiles_m/CM), ceil(tiles_n/CN) */
    int units_per_batch;   /* units_m * units_n */
    int units_per_stage;   /* l * units_per_batch */
    int total;             /* num_stages * units_per_stage: the walk's length */
    int k_blocks;          /* ceil(k/BK) */
    int interleave;        /* p.stage_minor with several stages: num_stages (the stride of a unit's stages); else 0 */
#if TPG_RASTER == 1
    const int *order;      /* p.tile_order */
#endif
};

struct tpg_tile {
    int stage, batch, tm, tn;
    int t;      /* canonical index inside the stage: (batch * tiles_m + tm) * tiles_n + tn */
    bool valid; /* tm < tiles_m && tn < tiles_n (always true for 1x1 clusters) */
};

/* __host__ too: tests/test_scheduler.py checks the walk on the CPU. */
template <int BM, int BN, int BK, int CM, int CN>
__host__ __device__ __forceinline__ tpg_tiling tpg_make_tiling(const tpg_gemm_params &p)
{
    tpg_tiling g;
    g.tiles_m = (p.m + BM - 1) / BM;
    g.tiles_n = (p.n + BN - 1) / BN;
    g.units_m = (g.tiles_m + CM - 1) / CM;
    g.units_n = (g.tiles_n + CN - 1) / CN;
    g.units_per_batch = g.units_m * g.units_n;
    g.units_per_stage = p.l * g.units_per_batch;
    g.total = p.num_stages * g.units_per_stage;
    g.k_blocks = (p.k + BK - 1) / BK;
    g.interleave = p.stage_minor && p.num_stages > 1 ? p.num_stages : 0;
#if TPG_RASTER == 1
    g.order = p.tile_order;
#endif
    return g;
}

/* Canonical tile index used by per-tile flags (docs/ARCHITECTURE.md). */
__host__ __device__ __forceinline__ int tpg_tile_index(const tpg_tiling &g, int batch, int tm, int tn)
{
    return (batch * g.tiles_m + tm) * g.tiles_n + tn;
}

/* The tile of unit `uid` that cluster rank `rank` computes. */
template <int CM, int CN>
__host__ __device__ __forceinline__ tpg_tile tpg_decode_tile(const tpg_tiling &g, int uid, int rank)
{
    tpg_tile t;
    /* stage and batch of the unit; a local GEMM (one stage, l = 1) never divides here - the integer
     * divisions of this decode sat on the path from a mainloop's end to its epilogue's stores */
    int r = uid;
    t.stage = 0;
    t.batch = 0;
    if (g.interleave) { /* uniform; the runtime's reduce-scatter rings (the self-test's all-gather walks too) */
        r = uid / g.interleave;
        t.stage = uid - r * g.interleave;
        t.batch = r / g.units_per_batch;
        r -= t.batch * g.units_per_batch;
    } else if (uid >= g.units_per_batch) { /* uniform */
        t.stage = uid / g.units_per_stage;
        r = uid - t.stage * g.units_per_stage;
        t.batch = r / g.units_per_batch;
        r -= t.batch * g.units_per_batch;
    }
#if TPG_RASTER == 1
    /* table order: the same entry for producer and consumers (read-only for the launch) */
#ifdef __CUDA_ARCH__
    const int unit = __ldg(g.order + r);
#else
    const int unit = g.order[r]; /* the host copy of the walk (tests/test_scheduler.py) */
#endif
    t.tm = (unit >> 16) * CM + (CM > 1 ? rank % CM : 0);
    t.tn = (unit & 0xffff) * CN + (CN > 1 ? rank / CM : 0);
#else
    /* grouped raster: group of TPG_GROUP_M unit rows (the last group may be shorter), column-wise */
    const int group_span = TPG_GROUP_M * g.units_n;
    const int group = r / group_span;
    const int first_m = group * TPG_GROUP_M;
    const int rows = min(TPG_GROUP_M, g.units_m - first_m);
    const int within = r - group * group_span;
    const bool full_group = rows == TPG_GROUP_M; /* every group but a short last one: shift and mask */
    const int wm = full_group ? (within & (TPG_GROUP_M - 1)) : within % rows;
    const int wn = full_group ? (within / TPG_GROUP_M) : within / rows;
    t.tm = (first_m + wm) * CM + (CM > 1 ? rank % CM : 0);
    t.tn = wn * CN + (CN > 1 ? rank / CM : 0);
#endif
    t.valid = (CM == 1 || t.tm < g.tiles_m) && (CN == 1 || t.tn < g.tiles_n);
    t.t = tpg_tile_index(g, t.batch, t.tm, t.tn);
    return t;
}

#endif /* TPG_SCHEDULER_CUH */
