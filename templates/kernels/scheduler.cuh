/* Persistent tile walk. One launch covers every stage: global tile ids g = 0 .. num_stages *
 * tiles_per_stage - 1 in stage order; CTA b takes g = b, b + gridDim.x, ... in increasing order.
 *
 * Why increasing order matters (deadlock freedom): a stage-s tile may wait on a partial written by
 * the stage-(s-1) tile with the same canonical index (same device or a peer). That tile has a smaller
 * g, and every CTA finishes its tiles in increasing g, so the smallest unfinished tile on a device
 * never waits on anything unfinished; all CTAs are co-resident (grid = #SMs, 1 CTA/SM).
 *
 * Within a stage the raster is grouped: TPG_GROUP_M m-tiles form a group walked column by column
 * (all m of the group for one n, then the next n), so a wave of CTAs shares B tiles and a few A
 * tiles in L2. Producer and consumers decode tiles with the same function, so they always agree.
 */
#ifndef TPG_SCHEDULER_CUH
#define TPG_SCHEDULER_CUH

#include "gemm_params.h"

#ifndef TPG_GROUP_M
#define TPG_GROUP_M 8
#endif

struct tpg_tiling {
    int tiles_m, tiles_n;  /* ceil(m/BM), ceil(n/BN) */
    int tiles_per_batch;   /* tiles_m * tiles_n */
    int tiles_per_stage;   /* l * tiles_per_batch */
    int total;             /* num_stages * tiles_per_stage */
    int k_blocks;          /* ceil(k/BK) */
};

struct tpg_tile {
    int stage, batch, tm, tn;
    int t; /* canonical index inside the stage: (batch * tiles_m + tm) * tiles_n + tn */
};

template <int BM, int BN, int BK> __device__ __forceinline__ tpg_tiling tpg_make_tiling(const tpg_gemm_params &p)
{
    tpg_tiling g;
    g.tiles_m = (p.m + BM - 1) / BM;
    g.tiles_n = (p.n + BN - 1) / BN;
    g.tiles_per_batch = g.tiles_m * g.tiles_n;
    g.tiles_per_stage = p.l * g.tiles_per_batch;
    g.total = p.num_stages * g.tiles_per_stage;
    g.k_blocks = (p.k + BK - 1) / BK;
    return g;
}

/* Canonical tile index used by per-tile flags (docs/ARCHITECTURE.md). */
__device__ __forceinline__ int tpg_tile_index(const tpg_tiling &g, int batch, int tm, int tn)
{
    return (batch * g.tiles_m + tm) * g.tiles_n + tn;
}

__device__ __forceinline__ tpg_tile tpg_decode_tile(const tpg_tiling &g, int gid)
{
    tpg_tile t;
    t.stage = gid / g.tiles_per_stage;
    int r = gid - t.stage * g.tiles_per_stage;
    t.batch = r / g.tiles_per_batch;
    r -= t.batch * g.tiles_per_batch;
    /* grouped raster: group of TPG_GROUP_M m-tiles (the last group may be shorter), column-wise */
    const int group_span = TPG_GROUP_M * g.tiles_n;
    const int group = r / group_span;
    const int first_m = group * TPG_GROUP_M;
    const int rows = min(TPG_GROUP_M, g.tiles_m - first_m);
    const int within = r - group * group_span;
    t.tm = first_m + within % rows;
    t.tn = within / rows;
    t.t = tpg_tile_index(g, t.batch, t.tm, t.tn);
    return t;
}

#endif /* TPG_SCHEDULER_CUH */
