/* All-gather copies in chunks, host side (templates/kernels/copy_chunks.h says why and what): how one
 * slot's copy is cut, and the graph that the schedule table's node list becomes once every COPY / FLAG
 * node is cut the same way. Pure arithmetic (no CUDA), shared by graph.c, params.c and the plan
 * (`tpgemm --dry-run`); tests/c/test_copy_plan.c checks it.
 *
 * The expanded graph of a device, for C chunks per copy (C = 1 gives the table's graph exactly):
 *   COPY node i (stage s)  -> C copies, chunk c depending on chunk c - 1 (chunk 0: on what node i
 *                             depends on), so a device's copies still run one after another;
 *   FLAG node j (of COPY i) -> C flags, flag c depending on copy c and on flag c - 1, so the last flag
 *                             follows every flag of the stage (the next COPY and BARRIER_END wait on it:
 *                             no flag write of a launch may land after the closing barrier, where it
 *                             could read a peer's next epoch; graph.c, case TPG_NODE_FLAG);
 *   every other node        -> itself, its dependencies mapped to the last piece of each.
 * A flag does not hold up the next chunk's copy: the copy engine moves chunk c + 1 while flag c lands.
 */
#ifndef TPG_COPY_PLAN_H
#define TPG_COPY_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "copy_chunks.h"
#include "shapes.h"
#include "tables.h"

typedef struct tpg_copy_plan {
    int chunks;        /* pieces per copy: 1 = the whole slot; 0 = the op copies nothing */
    int64_t chunk_rows; /* flat rows per piece (the last may have fewer); the kernels' wait_chunk_rows */
    int64_t rows;      /* flat rows of a slot: rotating operand rows per batch x batches */
    int64_t row_bytes; /* bytes of one row */
} tpg_copy_plan;

/* The cut of every copy of an op: `requested` pieces of a slot of rows x row_bytes, each a whole number
 * of tile_rows (the rotating operand's tile extent: BM for A, BN for B), so the plan may have fewer
 * pieces than requested (never more). rows = 0 (nothing rotates by copy) gives chunks = 0. */
tpg_copy_plan tpg_copy_plan_make(int64_t rows, int64_t row_bytes, int tile_rows, int requested);

/* Whether ops of this schedule copy shards (all-gather at TP >= 2); the others have nothing to cut. */
int tpg_schedule_copies(const tpg_schedule_table *sched);

/* The cut of the copies of an op of (sched, kernel, shapes) for `chunks` pieces per copy: the rotating
 * operand's rows, tiles of BM (A) or BN (B) rows. chunks = 0 in the plan when the op copies nothing
 * (reduce-scatter, TP = 1). */
tpg_copy_plan tpg_copy_plan_for(const tpg_schedule_table *sched, const tpg_kernel_desc *kernel,
                                const tpg_shapes *shapes, int chunks);

/* Byte offset (inside the slot and the source shard) and length of piece c. */
void tpg_copy_plan_piece(const tpg_copy_plan *p, int c, size_t *offset, size_t *bytes);

/* One node of a device's expanded graph: table node `node` (index in the device's list), piece `piece`
 * of it (0 for nodes that are not cut), and up to two dependencies as indices of earlier items. */
typedef struct tpg_graph_item {
    int node;
    int piece;
    int deps[2];
} tpg_graph_item;

/* Items of the expanded graph of a device's node list for `chunks` pieces per copy (chunks <= 1: the
 * list itself). */
int tpg_graph_items_count(const tpg_graph_node *list, int n, int chunks);

/* Writes the expanded graph (tpg_graph_items_count items) to out. Returns 0, or -1 when the list is not
 * one the expansion knows: a dependency on a later node, or a FLAG that does not follow a COPY. */
int tpg_graph_items_expand(const tpg_graph_node *list, int n, int chunks, tpg_graph_item *out);

/* The expanded graph with the barriers beside the GEMM (tpg_op_set_overlap_barriers): the GEMM depends on
 * nothing (its epoch comes with the launch, not from BARRIER_START); all-gather's BARRIER_END waits for the
 * last flag only (peers done reading this device's shard; its GEMM may still run), reduce-scatter's for the
 * GEMM (pushes into the peers' slots of the next call) and for BARRIER_START (whose epoch it reads).
 * Rewrites the dependencies of items[0..n) in place. Returns 0, or -1 for a list without exactly one GEMM,
 * one BARRIER_START and one BARRIER_END (a one-device graph: nothing to overlap), or an all-gather list whose
 * copies and flags do not all come before its last flag. */
int tpg_graph_items_overlap(const tpg_graph_node *list, tpg_comm comm, tpg_graph_item *items, int n);

/* The node index of the item tpg_graph_items_gather adds: it stands for no node of the table's list. */
#define TPG_ITEM_LOCAL_SHARD (-1)

/* The gathered all-gather walk (params.c: gathered_params) also copies the device's own shard into its block's
 * slot: puts that copy first, before items[0..n) (node TPG_ITEM_LOCAL_SHARD, piece 0, no dependency: the shard is
 * the caller's input, and the slot is read only by this device's GEMM, which the previous call's graph finished),
 * moving the others one on - every dependency still points to an earlier item - and makes the GEMM depend on it.
 * items must have room for n + 1. Returns n + 1, or -1 (items unchanged) for a list without exactly one GEMM or
 * whose GEMM has no free dependency. */
int tpg_graph_items_gather(const tpg_graph_node *list, tpg_graph_item *items, int n);

/* Whether the gathered walk's GEMM copies the shards itself (tpg_gemm_params.pull_*, templates/kernels/
 * pull_shards.cuh) rather than the graph's copy-engine nodes: always, unless the copies are cut into pieces (a
 * piece is a copy-engine node's), the barriers run beside the GEMM (a pull needs the start barrier before the GEMM:
 * a peer's shard is this call's once the peer entered the call), or the op asks for the copy engine
 * (tpg_op_set_gather_copy_engine). */
static inline int tpg_gather_pulls(int gathered, int chunks, int overlap, int copy_engine) {
    return gathered && chunks <= 1 && !overlap && !copy_engine;
}

/* The expanded graph when the GEMM pulls the shards (tpg_gather_pulls): items[0..n) without their COPY and FLAG
 * items - nothing is copied by a node - and a dependency on one of them moved to the GEMM, which now does what they
 * did (the GEMM itself drops it: it keeps BARRIER_START, which it must follow). Compacts items in place. Returns the
 * new count, or -1 (items unchanged) for a list without exactly one GEMM, whose GEMM does not depend on
 * BARRIER_START, or where an item before the GEMM depends on a copy or flag. */
int tpg_graph_items_pulled(const tpg_graph_node *list, tpg_graph_item *items, int n);

/* The node index of the item tpg_graph_items_one_hop adds: the one-hop walk's REDUCE kernel (one_hop.h). */
#define TPG_ITEM_ONE_HOP_REDUCE (-2)

/* The one-hop reduce-scatter walk (params.c: one_hop_params): after the GEMM, which writes the rank's whole partial
 * into its own slots, a REDUCE item (node TPG_ITEM_ONE_HOP_REDUCE, piece 0) sums the rank's block from every rank's
 * slots. It depends on the GEMM and on BARRIER_START (whose epoch it reads; with the barriers beside the GEMM nothing
 * else orders it after that barrier), and takes the GEMM's place among BARRIER_END's dependencies: a peer's slots
 * are read until the REDUCE ends, and the closing barrier tells the peers that their slots are free. Inserted right
 * after the GEMM, moving the later items one on. items must have room for n + 1. Returns n + 1, or -1 (items
 * unchanged) for a list without exactly one GEMM, one BARRIER_START and one BARRIER_END or whose BARRIER_END does
 * not depend on the GEMM. */
int tpg_graph_items_one_hop(const tpg_graph_node *list, tpg_graph_item *items, int n);

/* The stage of device's FLAG node that comes after every COPY and FLAG node of its list - the tables chain a
 * device's copies one after another, so when that flag reads the epoch every shard of the call has landed (and
 * with copies in pieces, its piece c follows every earlier stage and its own pieces 0..c) - or -1 if the list
 * has no such flag (no copies, or copies beside each other). The gated all-gather walk waits on it alone
 * (params.c). */
int tpg_copy_last_flag_stage(const tpg_schedule_table *sched, int device);

/* 1 if every device of an all-gather schedule has such a last flag (tpg_copy_last_flag_stage >= 0), else 0. */
int tpg_copy_flags_chained(const tpg_schedule_table *sched);

#endif /* TPG_COPY_PLAN_H */
