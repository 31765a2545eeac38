/* Types of the tables that the generator emits (generated/registry.c, generated/schedules.c) and that
 * the hand-written runtime walks. Generated code holds data only; every behaviour lives in runtime/src.
 *
 * Vocabulary (one name for one thing, shared with generator/ and tests/):
 *   tp      number of devices (= number of stages)
 *   device  rank d in 0..tp-1;  stage s in 0..tp-1
 *   shard   the block of a global operand that a device owns (block d along shard_* dim)
 *   block   one of the tp blocks of the device's local output that a stage computes (along stage_dim)
 *   slot    one of the tp-1 receive buffers of a device (all-gather: rotating operand; reduce-scatter:
 *           partial sums); slot s-1 feeds stage s
 */
#ifndef TPG_TABLES_H
#define TPG_TABLES_H

#include "tpgemm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tpg_dim { TPG_DIM_NONE = 0, TPG_DIM_M, TPG_DIM_N, TPG_DIM_K } tpg_dim;
typedef enum tpg_comm { TPG_COMM_ALLGATHER = 0, TPG_COMM_REDUCE_SCATTER } tpg_comm;
typedef enum tpg_operand { TPG_OPERAND_NONE = 0, TPG_OPERAND_A, TPG_OPERAND_B, TPG_OPERAND_D } tpg_operand;

/* What device d does at stage s. -1 means "none" in every field. */
typedef struct tpg_stage_entry {
    signed char block;     /* block of the local output computed (index along stage_dim) */
    signed char peer;      /* all-gather: owner of the rotating shard consumed; reduce-scatter: left
                              neighbour whose partial is received (-1 at stage 0) */
    signed char src_slot;  /* slot read: rotating shard (all-gather) or received partial (RS); -1 local */
    signed char dst_slot;  /* reduce-scatter: slot of the right neighbour written; -1 = user's D */
    signed char dst_peer;  /* reduce-scatter: device receiving this stage's partial; -1 = self */
} tpg_stage_entry;

typedef enum tpg_node_kind {
    TPG_NODE_BARRIER_START = 0, /* cross-device start barrier; advances the epoch */
    TPG_NODE_COPY,              /* copy-engine copy: peer's rotating shard -> own slot */
    TPG_NODE_FLAG,              /* copy-engine 4-byte copy: the COPY source's epoch -> stage flag */
    TPG_NODE_GEMM,              /* the persistent fused GEMM kernel */
    TPG_NODE_BARRIER_END,       /* cross-device closing barrier: inputs are safe after it */
    TPG_NODE_REDUCE             /* never in a table: the one-hop walk's sum of every rank's partial (copy_plan.h,
                                   tpg_graph_items_one_hop; one_hop.h) */
} tpg_node_kind;

/* One node of a device's CUDA graph. Dependencies are indices of earlier nodes of the same device. */
typedef struct tpg_graph_node {
    signed char kind;   /* tpg_node_kind */
    signed char stage;  /* COPY/FLAG: stage whose data it brings; else -1 */
    signed char peer;   /* COPY: source device; FLAG: the same device (its epoch word); else -1 */
    signed char slot;   /* COPY: destination slot; FLAG: flag index (= stage); else -1 */
    signed char deps[2];/* up to two dependencies, -1 = none */
} tpg_graph_node;

typedef struct tpg_schedule_table {
    const char *name;           /* e.g. "AllGather1D_TilingCD_RotatingA" */
    int tp;
    tpg_comm comm;
    tpg_dim shard_a, shard_b;   /* global dim along which device d owns block d of A / B */
    tpg_dim shard_d;            /* global dim of D that device d ends up owning */
    tpg_dim stage_dim;          /* dim of the device's local output split into tp blocks */
    tpg_operand rotating;       /* all-gather: operand that moves (A or B); RS: D (partials) */
    const tpg_stage_entry *stages; /* [tp * tp], index device * tp + stage */
    const tpg_graph_node *nodes;   /* [tp * nodes_per_device], index device * nodes_per_device + i */
    int nodes_per_device;
} tpg_schedule_table;

/* A compiled kernel. Kernel code depends only on these fields, never on schedule or tp. */
typedef struct tpg_kernel_desc {
    const char *name;           /* canonical instance name, also the CUDA symbol */
    tpg_dtype dtype_ab;         /* operand type */
    tpg_dtype dtype_cd;         /* C / D type */
    tpg_dtype dtype_partial;    /* reduce-scatter partials between stages: dtype_cd, or fp32 (`partials: f32`) */
    tpg_dtype dtype_acc;        /* accumulator type */
    int bm, bn, bk, stages, consumers, cluster_m, cluster_n;
    int epi_chunk_bytes;        /* epilogue subtile: bytes of output row per store unit (the D map's box) */
    int raster;                 /* 0 grouped (computed in the kernel), 1 hilbert (tile_order.c builds a table) */
    int stream_k;               /* 1: splits a one-stage launch's last tiles along k when asked (stream_k.h) */
    int fp8_promote;            /* fp8: k-blocks between promotions of the pipe's sums into f32 (0: fast accumulation) */
    int pingpong;               /* consumer_mode pingpong: each consumer warpgroup owns whole tiles */
    int threads;                /* block size */
    int smem_bytes;             /* dynamic shared memory */
    const void *(*entry)(void); /* returns the __global__ function */
} tpg_kernel_desc;

/* A named config of schedules.yaml: what `--config NAME` selects. */
typedef struct tpg_config_desc {
    const char *name;
    const tpg_schedule_table *schedule;
    const tpg_kernel_desc *kernel;
    /* schedules.yaml prefer_from_local_k (prefer_from_local_k_tp1 for a TP = 1 config, where set): the schedule's
     * default for GEMMs whose per-stage K is at least this (1: every shape); 0: only when no config is preferred
     * (tpg_config_pick). */
    long long prefer_from_local_k;
    /* schedules.yaml copy_chunks: all-gather copies cut into this many pieces by default (copy_plan.h;
     * tpg_op_set_copy_chunks changes it per op); 1 = one copy per shard. */
    int copy_chunks;
    /* schedules.yaml pull_partials: reduce-scatter stage s writes its partial into its own slot s and raises its
     * own tile flags; the next rank reads them there over the link (runtime/src/params.c). 0: pushed into the
     * receiver's slot. Part of the config, so every rank of an op has the same one (op_rank.c checks the config). */
    int pull_partials;
    /* schedules.yaml wave_weight (1..100): a default only through tpg_config_pick's wave check or row rule (the
     * first-by-name fallback only where no unweighted config is a candidate); the wave check counts this config's
     * fill at wave_weight percent - its kernel's rate per tile slot against the others' (tiles for few tokens); 0: an
     * ordinary config, counted at 100. */
    int wave_weight;
    /* a tuned choice's config (schedules.yaml tuned:, named tuned_*): run through tpg_dispatch_find or by name,
     * never a default pick (generator/models.py default_config skips it too) */
    int tuned;
    /* schedules.yaml copy_engine_partials: reduce-scatter stage s writes its partial into its own send slot, raises
     * its tile flags there and counts them by tile row; copy-engine nodes of the op's graph carry each band of it
     * into the receiver's slot and flags - those a push writes, which the receiver waits on as on pushed ones
     * (runtime/src/ce_partials.c). Part of the config: every rank of an op has the same buffer layout. */
    int copy_engine_partials;
    /* schedules.yaml by_name: never a default pick (tpg__config_pickable), run by name only - the experiments and the
     * twins that time another way of moving partials against a default (<family>_push, _pull, _ce) */
    int by_name;
} tpg_config_desc;

extern const tpg_config_desc tpg_configs[];
/* May a default pick (tpg_config_pick) take c? Not when its kernel trades speed for precision or the reverse:
 * `acc: f16`, `fp8_promote` and `partials: f32` configs run by name only (runtime/src/config.c), and neither do
 * `by_name` ones (experiments, and the pulled- and copy-engine-partial twins of the defaults);
 * nor a `stream_k` config at TP >= 2 (untimed across GPUs); at TP = 1 one is a default only through the split rule;
 * nor a tuned choice's config (its dispatch row runs it). */
int tpg__config_pickable(const tpg_config_desc *c);
/* Whether a tuned dispatch row made at tuned_m holds for a GEMM of m rows (within TPG_TUNED_M_REACH; m <= 0: any),
 * and the row tpg_dispatch_find returns for m: *row where m is its M (or <= 0) or it is tuned and within that reach,
 * else the schedule's default pick for m, untuned. */
int tpg__tuned_row_reaches(int64_t tuned_m, int64_t m);
/* How far a dispatch row's M is from m, as a ratio (>= 1; 1 for m <= 0): token counts scale, so 9000 is nearer 16384
 * than 2048, and a row within TPG_TUNED_M_REACH of m is always nearer than one outside it. */
double tpg__m_ratio(int64_t row_m, int64_t m);
tpg_status tpg__dispatch_resolve(const tpg_dispatch_entry *row, int64_t m, tpg_dispatch_entry *out);
/* tpg_config_pick_sms's wave check (generator/models.py default_config mirrors it): the best-scored fallback must score
 * more than this above the pick (score: the share of the tile slots its walk fills x wave_weight), or more than
 * TPG_PICK_WAVE_RATIO times the pick's where the pick fills so little of one wave that no margin can be reached
 * (70B-qkv at TP = 8, M = 128: the wide tiles 0.04, the 64x128 0.12; 20.5 against 36.2 TFLOP/s on one GPU,
 * gathered); extents past int32 (never a valid shape: shapes.c) skip the check. After it, the row rule (config.c
 * fewest_rows): of tiles with the pick's columns and as many tiles in the walk, or one row of which holds all the
 * launch's rows, the fewest rows. */
#define TPG_PICK_WAVE_MARGIN 0.10
#define TPG_PICK_WAVE_RATIO 2.0
#define TPG_PICK_EXTENT_LIMIT ((int64_t)1 << 31)
/* The split rule (config.c split_k): a stream-K config replaces the pick of a one-stage launch (TP = 1) where its
 * tiles fill at most TPG_PICK_SPLIT_SHARE percent of the SMs and each has at least TPG_PICK_SPLIT_KBLOCKS k-blocks,
 * or where they fit one row of tiles, no more than one wave but more than a spread walk takes (templates/kernels/
 * spread.h), with at least TPG_PICK_SPLIT_LONG_KBLOCKS k-blocks each. From the decode grid on one H200 (weights cold
 * in L2) against the ping-pong 64x128 spread over the grid (docs/perf_notes/2026-12-03-d.md): at 16 tiles the split
 * ran 1.13-1.84x it from 128 k-blocks, at 32 tiles 0.93-1.08x at 128 and 1.08-1.30x from 256, at 48-80 tiles
 * 0.82-1.01x (40% of the SMs before the spread: docs/perf_notes/2026-12-03-c.md), one row of 112 tiles 1.02-1.08x
 * from 256; past one row of tiles (M = 128) 0.55-0.93x from 64 tiles (the two rows' tiles no longer read their B
 * columns together). */
#define TPG_PICK_SPLIT_SHARE 25
#define TPG_PICK_SPLIT_KBLOCKS 128
#define TPG_PICK_SPLIT_LONG_KBLOCKS 192
extern const int tpg_num_configs;
extern const char tpg_generator_version[];
extern const char tpg_config_hash[];
/* generated/dispatch.c: model preset layers and tuned shapes -> config (tpgemm.h). */
extern const tpg_dispatch_entry tpg_dispatch[];
extern const int tpg_num_dispatch;

#ifdef __cplusplus
}
#endif

#endif /* TPG_TABLES_H */
