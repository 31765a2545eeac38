/* Shape arithmetic of a distributed GEMM: shards, local problem, per-stage problem, validation.
 * Pure integer arithmetic (no CUDA, no context), unit-tested by tests/c/test_shapes.c.
 *
 * Everything follows from the schedule table's dims (shard_a, shard_b, shard_d, stage_dim, rotating):
 *  - A global dim X is split across devices for operand A (B) when shard_a (shard_b) == X.
 *  - The device's local problem keeps X whole when the operand sharded along X rotates (all-gather: the
 *    device sees every shard in turn), else X / tp.
 *  - The local output is split into tp blocks along stage_dim: the per-stage problem.
 *  - The D shard is the local output divided along shard_d when the local output is still whole there
 *    (reduce-scatter), else the local output itself (all-gather).
 */
#ifndef TPG_SHAPES_H
#define TPG_SHAPES_H

#include "tables.h"

typedef struct tpg_shapes {
    int64_t m, n, k, l;            /* global problem */
    int tp;
    int64_t local_m, local_n, local_k; /* device's local problem (output local_m x local_n) */
    int64_t stage_m, stage_n, stage_k; /* one stage's problem */
    int64_t a_rows, a_cols;        /* A shard per batch (rows x K-extent) */
    int64_t b_rows, b_cols;        /* B shard per batch */
    int64_t d_rows, d_cols;        /* D shard per batch (= C shard) */
} tpg_shapes;

/* Validates (m, n, k, l) against the schedule for tp devices with operands of ab_size bytes and fills
 * *out. TPG_ERR_SHAPE (extents, divisibility, int32 range) or TPG_ERR_ALIGNMENT (TMA row pitch,
 * 8-element output columns), with a message naming the value in msg (may be NULL). */
tpg_status tpg_shapes_init(const tpg_schedule_table *sched, int tp, int64_t m, int64_t n, int64_t k, int64_t l,
                           size_t ab_size, tpg_shapes *out, char *msg, size_t msg_size);

/* Output tiles of one stage, batches included, in kernel k's tiles: t = (batch * tiles_m + tile_m) * tiles_n + tile_n
 * indexes them (a stage's tile flags, ARCHITECTURE.md). */
int64_t tpg_shapes_stage_tiles(const tpg_shapes *s, const tpg_kernel_desc *k);

/* tpg_shapes_init for config c (its schedule's tp, its kernel's operand size), and the kernel's tile walk over every
 * stage within its 32-bit count (TPG_ERR_SHAPE): what an op of c must pass (tpg_op_create, the CLI). */
tpg_status tpg_shapes_init_for(const tpg_config_desc *c, int64_t m, int64_t n, int64_t k, int64_t l, tpg_shapes *s,
                               char *msg, size_t msg_size);

/* The arithmetic of tpg_shapes_init without validation (divisions round down): for describing a plan
 * even when the shape is invalid. tp >= 1. */
void tpg_shapes_compute(const tpg_schedule_table *sched, int tp, int64_t m, int64_t n, int64_t k, int64_t l,
                        tpg_shapes *out);

/* Shard shapes and offsets of rank (0 <= rank < tp). */
void tpg_shapes_shard(const tpg_schedule_table *sched, const tpg_shapes *s, int rank, tpg_shard_shape *out);

/* Extent of global dim d in the global / local / stage problem. */
int64_t tpg_shapes_global(const tpg_shapes *s, tpg_dim d);
int64_t tpg_shapes_local(const tpg_shapes *s, tpg_dim d);
int64_t tpg_shapes_stage(const tpg_shapes *s, tpg_dim d);

/* Where a stage of stage block `block` reads and writes inside the device's own tensors (params.c sets the kernel's
 * maps and pointers from these; tests/c/test_stage_offsets.c checks that a device's stages cover its tensors once):
 * operand x's (A or B) first row - block x the stage extent where x is fixed and the stages split its rows, else 0
 * (a rotating operand reads its slot, or its own shard at stage 0, from row 0); and the offset in elements of a final
 * stage's output inside the user's D (row-major, ld d_cols) - 0 where the D shard is exactly the block (shard_d ==
 * stage_dim), else the block's first row (stages split M) or column (N). */
int64_t tpg_shapes_operand_row0(const tpg_schedule_table *sched, const tpg_shapes *s, tpg_operand x, int block);
int64_t tpg_shapes_final_offset(const tpg_schedule_table *sched, const tpg_shapes *s, int block);

/* "M", "N", "K" or "-". */
const char *tpg_dim_name(tpg_dim d);

#endif /* TPG_SHAPES_H */
