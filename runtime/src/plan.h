/* The plan of one distributed GEMM: what `tpgemm --dry-run` prints. Pure C arithmetic over the generated
 * tables (tables.h); no CUDA call, so it works on a machine without a GPU.
 *
 * Shape arithmetic (which global dimension is split by tp for the device's local GEMM, its stages and
 * its shards) is derived from the schedule table fields, not from the schedule's name:
 *   local GEMM  = global (M, N, K) with K split by tp for reduce-scatter (shard_a == K), or with the
 *                 fixed (non-rotating) operand's shard dim split by tp for all-gather;
 *   stage GEMM  = local GEMM with stage_dim split by tp;
 *   shards      = A (M x K) split along shard_a, B (N x K) along shard_b, C/D (M x N) along shard_d.
 * The plan takes them from runtime/src/shapes.c's tpg_shapes_compute, the arithmetic that tpg_shapes_init
 * validates and the ops run, without its checks: the plan must be printable for any shape (divisions round down,
 * so a shape that validation rejects still has a plan).
 */
#ifndef TPG_PLAN_H
#define TPG_PLAN_H

#include <stdint.h>
#include <stdio.h>

#include "tables.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tpg_plan_shape {
    int64_t local_m, local_n, local_k;  /* the device's whole local GEMM (all stages) */
    int64_t stage_m, stage_n, stage_k;  /* the GEMM of one stage */
    int64_t a_rows, a_cols;             /* A shard of a device, per batch */
    int64_t b_rows, b_cols;             /* B shard (N x K storage), per batch */
    int64_t d_rows, d_cols;             /* C/D shard, per batch */
    int64_t tiles_per_stage;            /* L * ceil(stage_m / BM) * ceil(stage_n / BN) */
    int64_t num_slots;                  /* tp - 1 receive slots; tp where the walk is gathered or one-hop (one per
                                           block, end to end) */
    int64_t slot_bytes;                 /* one slot: rotating shard (all-gather) or partial (RS), all L */
    int64_t slots_bytes;                /* num_slots * slot_bytes (x 2 with ce_partials: both banks) */
    int64_t flags_bytes;                /* all-gather: tp stage flags; RS: per-tile flags of every slot (both banks) */
    int64_t moved_bytes;                /* per device per call: (tp-1) * slot_bytes */
    int gathered;                       /* the walk order is TPG_WALK_GATHERED (its slots hold every block) */
    int one_hop;                        /* the walk order is TPG_WALK_ONE_HOP (its slots hold the rank's whole partial),
                                           unless the op keeps its ring (TPG_PLAN_RS_RING) */
    int keep_ring;                      /* computed for an op that keeps its ring (tpg__plan_compute_ring) */
    int ce_partials;                    /* the ring's partials move by copy engine (copy_engine_partials, the peer
                                           transport): its slots come twice, a send bank and a receive bank */
    int copy_chunks;                    /* all-gather: pieces per copy (copy_plan.h); 0 = nothing copied */
    int copy_chunks_asked;              /* the pieces asked for (the argument, else the config's): more than
                                           copy_chunks where a piece would hold less than a row of tiles */
    int64_t copy_chunk_rows;            /* flat rows of a piece (the last may have fewer) */
    int64_t copy_chunk_bytes;           /* bytes of a piece (the last may have fewer) */
    int overlap;                        /* the barriers beside the GEMM (tpg_op_set_overlap_barriers); tpg_plan_write's */
    int pulls;                          /* the gathered walk's GEMM pulls the shards (copy_plan.h: tpg_gather_pulls);
                                           tpg_plan_write's */
    double flops_per_device;            /* 2*M*N*K*L / tp */
} tpg_plan_shape;

/* Fills *out for config cfg and the global problem m x n x k, l batches, its copies cut into copy_chunks
 * pieces (0: the config's copy_chunks; tpg_op_set_copy_chunks). TPG_ERR_INVALID_ARGUMENT if a pointer is
 * NULL or an extent is < 1. Never validates divisibility (tpg_shapes_init does). */
tpg_status tpg_plan_compute(const tpg_config_desc *cfg, int64_t m, int64_t n, int64_t k, int64_t l, int copy_chunks,
                            tpg_plan_shape *out);

/* tpg_plan_compute for an op that keeps its reduce-scatter ring where the walk would be one-hop (keep_ring != 0:
 * tpg_op_set_rs_ring); its buffers stay those of the one-hop walk, which the ring uses too. */
tpg_status tpg__plan_compute_ring(const tpg_config_desc *cfg, int64_t m, int64_t n, int64_t k, int64_t l,
                                  int copy_chunks, int keep_ring, tpg_plan_shape *out);

/* The op's modes a plan is written for (tpg_plan_write's `modes`, bits). */
#define TPG_PLAN_OVERLAP 1     /* the barriers beside the GEMM (tpg_op_set_overlap_barriers) */
#define TPG_PLAN_COPY_ENGINE 2 /* the gathered walk's shards by copy engine (tpg_op_set_gather_copy_engine) */
#define TPG_PLAN_RS_RING 4     /* a few-row reduce-scatter keeps its ring (tpg_op_set_rs_ring) */

/* Writes the plan: schedule, tp, kernel, global problem, per-stage local GEMM, per-device stage table
 * (block, peer, slots, what each stage waits on), per-device buffer sizes, bytes moved per device per
 * call and how its copies are cut, graph nodes per device (copies and flags cut into pieces, copy_plan.h)
 * and FLOPs per device; modes TPG_PLAN_OVERLAP: the graphs with the barriers beside the GEMM (copy_plan.h,
 * tpg_graph_items_overlap; one-device graphs have none); TPG_PLAN_COPY_ENGINE: a gathered walk's copy nodes where
 * its GEMM would pull the shards; TPG_PLAN_RS_RING: the ring where the walk would be one-hop. json != 0: one JSON object (and a newline).
 * Returns TPG_ERR_INVALID_ARGUMENT on NULL arguments or extents < 1, TPG_OK otherwise. */
tpg_status tpg_plan_write(FILE *f, const tpg_config_desc *cfg, int64_t m, int64_t n, int64_t k, int64_t l,
                          int copy_chunks, int modes, int json);

/* What decides a launch's walk order (tpg_plan_walk_order): its ring, its kernel and its tiling. */
typedef struct tpg_walk_facts {
    int reduce_scatter;          /* the stages form a ring: each waits for the previous stage's partials */
    int stages_split_m;          /* stage_dim M: the stages are blocks of the output's rows, all reading all of B */
    int pingpong, cluster_m, cluster_n; /* the kernel's (tables.h: tpg_kernel_desc) */
    int stages;                  /* tp */
    int64_t stage_rows;          /* the output rows of a stage (its m) */
    int64_t tiles_m, tiles_n, l; /* tiles of a stage and batch, and batches */
    int64_t b_bytes;             /* the B a stage reads: n x k x l operands */
    int sms;                     /* the launch's grid: the rank's SMs */
    int band_waits;              /* the NCCL transport: a stage waits for whole row bands of the previous stage */
    int ce_bands;                /* copy-engine partials (copy_engine_partials, not over NCCL): a ring stage waits
                                    for whole row bands too, but the one-hop walk, which moves nothing by copy, stays
                                    (set by the caller: tpg_walk_facts_for leaves it 0) */
    int copies_chained;          /* all-gather: one flag of each device follows all its copies (copy_plan.h) */
    int keep_ring;               /* reduce-scatter: the op keeps its ring where the walk would be one-hop
                                    (tpg_op_set_rs_ring) */
} tpg_walk_facts;

/* Why a walk interleaves its stages (gemm_params.h: stage_minor), or does not. */
typedef enum tpg_walk_order {
    TPG_WALK_STAGE_AFTER_STAGE = 0,
    TPG_WALK_INTERLEAVED_ONE_WAVE,  /* every unit resident at once: the order only places tiles */
    TPG_WALK_INTERLEAVED_FEW_ROWS,  /* at most TPG_INTERLEAVE_MAX_ROWS rows a stage: B is the cost, read once */
    TPG_WALK_INTERLEAVED_GATED,     /* all-gather, as FEW_ROWS, every stage waiting for the last shard (params.c) */
    TPG_WALK_GATHERED,              /* all-gather of few rows: every shard gathered into the slots, then one GEMM of
                                       all M rows (params.c: gathered_params) */
    TPG_WALK_ONE_HOP                /* reduce-scatter of few rows: one GEMM of all M rows into the rank's own slots,
                                       then every rank sums its block from all of them (one_hop.h) */
} tpg_walk_order;

/* A stage of at most this many output rows does at most 2 x rows FLOPs per element of B it reads - far below what
 * the tensor cores need from DRAM - so the walk's reads of B are its cost ... */
#define TPG_INTERLEAVE_MAX_ROWS 64
/* ... where a stage's B is at least this large: stage after stage then reads it from DRAM once a stage (the L2 of
 * every Hopper part is 50 MB, and the walk streams A, partials and D through it too); smaller, the re-reads hit
 * L2 and interleaving only adds waits (measured: params.c). */
#define TPG_INTERLEAVE_MIN_B_BYTES ((int64_t)32 << 20)
/* An all-gather stage of at most this many rows is gathered (TPG_WALK_GATHERED): there the wait for every shard
 * costs less than stage after stage loses to part-filled tiles and to reading B once a stage (params.c). */
#define TPG_GATHER_MAX_ROWS 128
/* A reduce-scatter stage of at most this many rows is one-hop (TPG_WALK_ONE_HOP): there the ring's stages each read
 * all of B, fill their tiles part-way and wait epilogue after epilogue for their partials (params.c: one_hop_params). */
#define TPG_ONE_HOP_MAX_ROWS 64

/* The walk order of two or more stages that split M (so every stage reads all of B). An all-gather of at most
 * TPG_GATHER_MAX_ROWS rows a stage and one batch, whose copies are chained and not over NCCL: gathered, on any
 * kernel; a reduce-scatter of at most TPG_ONE_HOP_MAX_ROWS rows a stage and one batch, not over NCCL and not kept a
 * ring: one-hop, on any kernel. Else, of a ping-pong kernel (1x1
 * clusters) with one row of tiles a stage. A reduce-scatter ring: interleaved if all its tiles (times batches and
 * stages) fit in one wave of `sms` SMs, or if a stage has at most TPG_INTERLEAVE_MAX_ROWS rows, reads at least
 * TPG_INTERLEAVE_MIN_B_BYTES of B and neither the transport nor copy-engine partials wait for bands. An
 * all-gather: interleaved and gated under
 * the same row and B bounds, where the transport has no band waits and its copies are chained. Else - and for
 * every other walk - stage after stage. The rule of the launch parameters (params.c, with the rank's SMs and
 * transport) and of the plan (TPG_PICK_SMS, NVLink); why: params.c. */
tpg_walk_order tpg_plan_walk_order(const tpg_walk_facts *w);

/* The facts of a walk of schedule s with kernel kd: stages of stage_m x stage_n x stage_k, l batches, on `sms` SMs;
 * band_waits: over the NCCL transport; keep_ring: tpg_op_set_rs_ring. */
tpg_walk_facts tpg_walk_facts_for(const tpg_schedule_table *s, const tpg_kernel_desc *kd, int64_t stage_m,
                                  int64_t stage_n, int64_t stage_k, int64_t l, int sms, int band_waits, int keep_ring);

/* Tiles of a walk of `stages` stages of stage_m x stage_n output, l batches, in kd's tiles: stages x their tiles, or
 * where `one_gemm` (TPG_WALK_GATHERED, TPG_WALK_ONE_HOP) the tiles of one GEMM of all the stages' rows. What the wave check of the default pick
 * (config.c) and the plan's tile waves line count. */
int64_t tpg_walk_tile_count(const tpg_kernel_desc *kd, int stages, int64_t stage_m, int64_t stage_n, int64_t l,
                            int one_gemm);

/* Whether the walk order is one GEMM of all the stages' rows (gathered or one-hop). */
static inline int tpg_walk_is_one_gemm(tpg_walk_order o) { return o == TPG_WALK_GATHERED || o == TPG_WALK_ONE_HOP; }

/* Rows of each stage of a launch walking in order o: all `stages` stages' rows where the walk is one GEMM of them
 * (gathered, one-hop), else stage_m. */
static inline int64_t tpg_walk_launch_rows(tpg_walk_order o, int stages, int64_t stage_m) {
    return tpg_walk_is_one_gemm(o) ? stages * stage_m : stage_m;
}

/* Rows of A's TMA box for a launch of `launch_rows` rows a stage with kernel kd: the kernel's tile rows (BM / CN:
 * a 1x2 cluster multicasts halves), or where the launch has fewer rows than a tile (few tokens) those rows rounded
 * up to the swizzle's 8-row atom, so that they sit in shared memory where a whole box would put them. A box reaching
 * past the tensor's rows is zero-filled by the TMA unit, slowly: the 64x128 ring's load floor at 16 x 8192 x 4096
 * took 15.8 us a call against 10.5 at 64 rows, the same bytes (docs/perf_notes/2026-12-03-b.md). The slot's rows
 * past the box keep what an earlier load left; they feed only accumulator rows >= the launch's rows, which no map
 * stores (the D and partial maps clip there). */
int tpg_plan_a_box_rows(const tpg_kernel_desc *kd, int64_t launch_rows);

/* Short names used in the plan: "BARRIER_START", ...; "M"/"N"/"K"/"-"; "A"/"B"/"D"/"-". */
const char *tpg_plan_node_kind_name(int kind);
const char *tpg_plan_dim_name(int dim);
const char *tpg_plan_operand_name(int operand);

#ifdef __cplusplus
}
#endif

#endif /* TPG_PLAN_H */
