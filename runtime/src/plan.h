/* The plan of one distributed GEMM: what `tpgemm --dry-run` prints. Pure C arithmetic over the generated
 * tables (tables.h); no CUDA call, so it works on a machine without a GPU.
 *
 * Shape arithmetic (which global dimension is split by tp for the device's local GEMM, its stages and
 * its shards) is derived from the schedule table fields, not from the schedule's name:
 *   local GEMM  = global (M, N, K) with K split by tp for reduce-scatter (shard_a == K), or with the
 *                 fixed (non-rotating) operand's shard dim split by tp for all-gather;
 *   stage GEMM  = local GEMM with stage_dim split by tp;
 *   shards      = A (M x K) split along shard_a, B (N x K) along shard_b, C/D (M x N) along shard_d.
 * These are the rules of runtime/src/shapes.c (tpg_shapes_init), repeated here because the plan must be
 * printable for any shape; divisions round down, so a shape that validation rejects still has a plan.
 * tests/c/test_plan.c checks that both agree on every generated config.
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
    int64_t num_slots;                  /* tp - 1 receive slots */
    int64_t slot_bytes;                 /* one slot: rotating shard (all-gather) or partial (RS), all L */
    int64_t slots_bytes;                /* num_slots * slot_bytes */
    int64_t flags_bytes;                /* all-gather: tp stage flags; RS: per-tile flags of every slot */
    int64_t moved_bytes;                /* per device per call: (tp-1) * slot_bytes */
    int copy_chunks;                    /* all-gather: pieces per copy (copy_plan.h); 0 = nothing copied */
    int64_t copy_chunk_rows;            /* flat rows of a piece (the last may have fewer) */
    int64_t copy_chunk_bytes;           /* bytes of a piece (the last may have fewer) */
    int overlap;                        /* the barriers beside the GEMM (tpg_op_set_overlap_barriers); tpg_plan_write's */
    double flops_per_device;            /* 2*M*N*K*L / tp */
} tpg_plan_shape;

/* Fills *out for config cfg and the global problem m x n x k, l batches, its copies cut into copy_chunks
 * pieces (0: the config's copy_chunks; tpg_op_set_copy_chunks). TPG_ERR_INVALID_ARGUMENT if a pointer is
 * NULL or an extent is < 1. Never validates divisibility (tpg_shapes_init does). */
tpg_status tpg_plan_compute(const tpg_config_desc *cfg, int64_t m, int64_t n, int64_t k, int64_t l, int copy_chunks,
                            tpg_plan_shape *out);

/* Writes the plan: schedule, tp, kernel, global problem, per-stage local GEMM, per-device stage table
 * (block, peer, slots, what each stage waits on), per-device buffer sizes, bytes moved per device per
 * call and how its copies are cut, graph nodes per device (copies and flags cut into pieces, copy_plan.h)
 * and FLOPs per device; overlap != 0: the graphs with the barriers beside the GEMM (copy_plan.h,
 * tpg_graph_items_overlap; one-device graphs have none). json != 0: one JSON object (and a newline).
 * Returns TPG_ERR_INVALID_ARGUMENT on NULL arguments or extents < 1, TPG_OK otherwise. */
tpg_status tpg_plan_write(FILE *f, const tpg_config_desc *cfg, int64_t m, int64_t n, int64_t k, int64_t l,
                          int copy_chunks, int overlap, int json);

/* Whether a walk interleaves its stages (gemm_params.h: stage_minor): a reduce-scatter ring of two or more
 * stages of a ping-pong kernel (1x1 clusters), one row of tiles a stage (tiles_m x tiles_n tiles of a stage and
 * batch), whose tiles - times l batches and the stages - all fit in one wave of `sms` SMs. The rule of the launch
 * parameters (params.c, with the rank's SMs) and of the plan (TPG_PICK_SMS); why: params.c. */
int tpg_plan_stage_minor(int reduce_scatter, int pingpong, int stages, int64_t tiles_m, int64_t tiles_n, int64_t l,
                         int cluster_m, int cluster_n, int sms);

/* Short names used in the plan: "BARRIER_START", ...; "M"/"N"/"K"/"-"; "A"/"B"/"D"/"-". */
const char *tpg_plan_node_kind_name(int kind);
const char *tpg_plan_dim_name(int dim);
const char *tpg_plan_operand_name(int operand);

#ifdef __cplusplus
}
#endif

#endif /* TPG_PLAN_H */
