/* Kernel and barrier launch parameters of (op, rank), derived from the schedule table alone: the
 * table's dims and the stage entries decide every offset, buffer and flag (no schedule names here).
 *
 *   operand X (A or B), stage s:  X rotates   -> own slot src_slot (or own shard at src_slot < 0), row 0
 *                                  X is fixed -> own shard; if stage_dim is X's rows dim, row block*extent
 *   output:  dst_peer >= 0 (reduce-scatter hop) -> dst_peer's slot dst_slot, ld = stage n, signal its
 *                                                  tile flags [dst_slot]
 *                                                  (pull_partials: own slot dst_slot, own tile flags)
 *            dst_peer <  0 (final)  -> user D (+ block offset when the D shard is the whole local output,
 *                                      i.e. shard_d != stage_dim), user C at the same offset
 *   input:   rotating D and src_slot >= 0 -> partial = own slot, wait on own tile flags [src_slot]
 *                                            (pull_partials: the sender's - stage entry `peer` - slot and flags)
 *            rotating A/B and src_slot >= 0 -> wait on own stage flags [s][piece] (raised by the FLAG nodes)
 *
 * Push and pull use the same slot and flag words, indexed by the sending stage; they differ only in whose
 * memory holds them, which is why pull_partials belongs to the config (one for every rank of an op).
 *
 * TPG_TRANSPORT_NCCL (nccl_graph.c moves the data): everything is the rank's own memory. Reduce-scatter writes
 * as pull_partials does (own slot dst_slot, own tile flags) and reads the receive bank's slot paired with
 * src_slot (tpg_buf_recv_slot, its own tile flags); all-gather is unchanged (own slot, own stage flags). The
 * start "barrier" has no peers: it only advances the epoch.
 *
 * Copy-engine partials (tpg__op_ce_partials): a sending stage writes its own send-bank slot and flags
 * (tpg_buf_send_slot), which ce_partials.c carries into the receiver's slot and flags of the push; the receiver reads
 * them as pushed ones, with the peer transport's barriers. */
#include <stdint.h>
#include <string.h>

#include "checks.h"
#include "op_internal.h"
#include "plan.h"
#include "tensormap.h"

/* Fills one operand's map and row offsets for stage entry e of rank. */
static tpg_status operand_map(tpg_op *op, int rank, const tpg_stage_entry *e, tpg_operand x, int a_box,
                              CUtensorMap *map, int *row0, int *batch_rows) {
    const tpg_schedule_table *t = op->sched;
    const tpg_shapes *sh = &op->shapes;
    const int is_a = x == TPG_OPERAND_A;
    const int64_t rows = is_a ? sh->a_rows : sh->b_rows;
    const int64_t cols = is_a ? sh->a_cols : sh->b_cols;
    const void *src = is_a ? op->tensors[rank].a : op->tensors[rank].b;
    *row0 = (int)tpg_shapes_operand_row0(t, sh, x, e->block); /* < 2^31: tpg_shapes_init */
    if (t->rotating == x && e->src_slot >= 0) src = tpg_buf_slot(op->buffer[rank], &op->layout, e->src_slot);
    *batch_rows = (int)rows;
    /* In a 2-CTA cluster the operand the pair shares (B for 2x1, A for 1x2) is loaded in halves, each
     * CTA multicasting its half to both (templates/kernels/gemm_sm90_roles.cuh): box = tile / 2 rows. */
    const tpg_kernel_desc *k = op->kernel;
    const int box_rows = is_a ? a_box : k->bn / k->cluster_m;
    return tpg_tensormap_encode(op->ctx, map, src, k->dtype_ab, cols, rows * sh->l, k->bk, box_rows,
                                is_a ? "A" : "B");
}

static tpg_status stage_params(tpg_op *op, int rank, int s, int a_box, tpg_stage_params *p) {
    const tpg_schedule_table *t = op->sched;
    const tpg_stage_entry *e = &t->stages[rank * t->tp + s];
    const tpg_shapes *sh = &op->shapes;
    const tpg_tensors *u = &op->tensors[rank];
    const size_t out_size = tpg_dtype_size(op->kernel->dtype_cd);
    void *own = op->buffer[rank];

    memset(p, 0, sizeof *p);
    TPG_CHECK(operand_map(op, rank, e, TPG_OPERAND_A, a_box, &p->a_map, &p->a_row0, &p->a_batch_rows));
    TPG_CHECK(operand_map(op, rank, e, TPG_OPERAND_B, 0, &p->b_map, &p->b_row0, &p->b_batch_rows));
    p->a_box_rows = a_box;

    const int rotating_output = t->rotating == TPG_OPERAND_D;
    const int nccl = tpg__over_nccl(op->ctx);
    const int pull = op->config->pull_partials && !nccl;
    const int ce = tpg__op_ce_partials(op); /* written into the own send bank, received as pushed */
    if (e->src_slot >= 0 && rotating_output) {
        void *holder = pull ? tpg_peers_get(&op->peers, e->peer, TPG_PEER_BUFFER) : own;
        const int slot = nccl ? tpg_buf_recv_slot(&op->layout, e->src_slot) : e->src_slot;
        if (!holder)
            TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "schedule %s: rank %d stage %d pulls its partial from rank %d, "
                     "which has no buffer", t->name, rank, s, e->peer);
        p->partial = tpg_buf_slot(holder, &op->layout, slot);
        p->partial_ld = sh->stage_n;
        p->partial_batch = sh->stage_m * sh->stage_n;
        p->partial_flags = tpg_buf_tile_flags(holder, &op->layout, slot);
    } else if (e->src_slot >= 0) {
        /* the FLAG nodes' words of this stage, one per piece of its copy (copy_plan.h) */
        p->wait_flag = tpg_buf_stage_flags(own, &op->layout, s);
        p->wait_chunk_rows = op->copy.chunks > 1 ? (int)op->copy.chunk_rows : 0; /* < 2^31: tpg_shapes_init */
        p->wait_b = t->rotating == TPG_OPERAND_B;
    }

    if (e->dst_peer >= 0) {
        void *dest = pull || nccl || ce ? own : tpg_peers_get(&op->peers, e->dst_peer, TPG_PEER_BUFFER); /* whose */
        if (!dest || e->dst_slot < 0)
            TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "schedule %s: rank %d stage %d sends to rank %d slot %d, which "
                     "has no buffer", t->name, rank, s, e->dst_peer, e->dst_slot);
        const int slot = ce ? tpg_buf_send_slot(&op->layout, e->dst_slot) : e->dst_slot;
        p->d = tpg_buf_slot(dest, &op->layout, slot);
        p->d_ld = sh->stage_n;
        p->d_batch = sh->stage_m * sh->stage_n;
        p->signal_flags = tpg_buf_tile_flags(dest, &op->layout, slot);
    } else {
        const int64_t off = tpg_shapes_final_offset(t, sh, e->block) * (int64_t)out_size;
        p->d = (char *)u->d + off;
        p->d_ld = sh->d_cols;
        p->d_batch = sh->d_rows * sh->d_cols;
        if (u->c) {
            p->c = (const char *)u->c + off;
            p->c_ld = sh->d_cols;
            p->c_batch = sh->d_rows * sh->d_cols;
        }
    }
    /* the received partial as a TMA-load map (tma_partials kernels): the same extent and box as d_map */
    if (p->partial)
        TPG_CHECK(tpg_tensormap_encode_d(op->ctx, &p->partial_map, (void *)p->partial, op->kernel->dtype_partial,
                                         sh->stage_n, sh->stage_m, sh->l, p->partial_ld, p->partial_batch,
                                         op->kernel->epi_chunk_bytes, pull ? "partial (sender's slot)" : "partial (own slot)"));
    /* the epilogue's TMA-store map: this stage's m x n extent per batch over d (a partial slot: the partial's type;
     * fp32 partials keep the chunk's bytes, so their box holds half the columns: epilogue.cuh) */
    const tpg_dtype d_type = e->dst_peer >= 0 ? op->kernel->dtype_partial : op->kernel->dtype_cd;
    return tpg_tensormap_encode_d(op->ctx, &p->d_map, p->d, d_type, sh->stage_n, sh->stage_m, sh->l,
                                  p->d_ld, p->d_batch, op->kernel->epi_chunk_bytes,
                                  e->dst_peer < 0 ? "D" : pull || nccl || ce ? "D (own slot)" : "D (peer slot)");
}

static void barrier_params(tpg_op *op, int rank, tpg_barrier_mode mode, tpg_barrier_params *b) {
    const size_t counter = mode == TPG_BARRIER_START ? op->layout.start_counter : op->layout.end_counter;
    memset(b, 0, sizeof *b);
    b->mode = mode;
    b->tp = op->sched->tp;
    b->rank = rank;
    if (tpg__over_nccl(op->ctx)) { /* no peers: a barrier of one, which only advances (or reads) the epoch */
        b->tp = 1;
        b->rank = 0;
        b->epoch = tpg_buf_word(op->buffer[rank], op->layout.epoch);
        b->counter = tpg_buf_word(op->buffer[rank], counter);
        b->peer_counter[0] = b->counter;
        b->status = tpg_buf_word(op->buffer[rank], op->layout.status);
        b->gave_up_epoch = tpg_buf_word(op->buffer[rank], op->layout.gave_up);
        b->timeout_ns = op->ctx->timeout_ns;
        return;
    }
    b->epoch = tpg_buf_word(op->buffer[rank], op->layout.epoch);
    b->counter = tpg_buf_word(op->buffer[rank], counter);
    for (int r = 0; r < b->tp; r++) b->peer_counter[r] = tpg_buf_word(tpg_peers_get(&op->peers, r, TPG_PEER_BUFFER), counter);
    b->status = tpg_buf_word(op->buffer[rank], op->layout.status);
    b->gave_up_epoch = tpg_buf_word(op->buffer[rank], op->layout.gave_up);
    for (int r = 0; r < b->tp; r++)
        b->gave_up_notice[r] = tpg_buf_word(tpg_peers_get(&op->peers, r, TPG_PEER_BUFFER), op->layout.gave_up_notice);
    b->timeout_ns = op->ctx->timeout_ns;
    if (mode == TPG_BARRIER_END && op->sched->comm == TPG_COMM_ALLGATHER && !tpg__op_pulls(op)) {
        b->stage_flags = tpg_buf_stage_flags(op->buffer[rank], &op->layout, 0); /* barrier.h: flags a peer's epoch */
        b->flag_rows = b->tp;                                                    /* raised; the slots' rows */
        b->flag_pieces = op->copy.chunks > 1 ? op->copy.chunks : 1;
    }
}

/* How rank's walk orders its stages (gemm_params.h: stage_minor; the rule: plan.c). Stage after stage, the stages'
 * tiles of one output position, which read the same B tile, sit a stage's worth of units apart; interleaved they
 * sit on neighbouring CTAs and read it in step. Measured on one GPU (kernel_selftest --rs-parts --rs-few, ring /
 * plain GEMM; the tables: BENCHMARKS.md "Few tokens: the reduce-scatter ring on one GPU"):
 * - one wave: the order only places tiles, and placed a stage apart the tiles ran 30-45% slower with the same DRAM
 *   bytes (TP = 2 M = 128: 0.67-0.74 -> 0.81-0.97).
 * - more waves, at most 64 rows and at least 32 MiB of B a stage: reading B is then the cost, and stage after stage
 *   reads it from DRAM once a stage, interleaved once (the 64x128 picks at TP = 2 / 4: 0.28-0.55 -> 0.43-0.98).
 *   With less B the re-reads hit L2 and interleaving only adds waits (TP = 8 70B-o, 16 MiB: -25%); with more rows
 *   a tile's wait for the partial of the tile computed beside it (not a wave earlier) costs more than B saves
 *   (-0.4 to -35% from 128 rows on, 405B-fc2 excepted).
 * Only where the stages split M (TilingA, RotatingA): TilingB's stages read different B tiles. An all-gather's
 * later stages wait for their shards: interleaved alone, their stage-0 neighbours ran ahead and the pairs never
 * read in step again (no faster than stage after stage where B is 224 MiB a stage or more); so its interleaved
 * walk is gated (gate_on_last_shard). Past one wave not over the NCCL transport, whose stage waits for whole row
 * bands of the previous stage, nor with copy-engine partials (ce_partials.c), whose copies go band by band too: a
 * tile could wait for units queued behind it on its own CTA. One wave is sure: the
 * kernels are 1x1, so graph.c launches exactly the rank's SMs. Not timed under the rule: the fp32-partial,
 * pulled-partial and e4m3 ping-pong configs (tier 2 checked them). */
static tpg_walk_order walk_order(const tpg_op *op, int rank, const tpg_gemm_params *g) {
    tpg_walk_facts w = tpg_walk_facts_for(op->sched, op->kernel, g->m, g->n, g->k, g->l, op->ctx->sm_count[rank],
                                          tpg__op_over_nccl(op), op->rs_ring);
    w.ce_bands = op->config->copy_engine_partials && !tpg__op_over_nccl(op);
    return tpg_plan_walk_order(&w);
}

/* A walk of one GEMM of all M rows (gathered, one-hop) runs on stage 0's A box, chosen for its rows before the
 * stages were built (tpg__params_build): a box of fewer rows would leave rows unloaded that the walk stores. */
static tpg_status check_a_box(tpg_op *op, const tpg_stage_params *st, int64_t rows) {
    if (st->a_box_rows != tpg_plan_a_box_rows(op->kernel, rows))
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "config %s: A's box has %d rows where a launch of %lld rows needs "
                 "%d", op->config->name, st->a_box_rows, (long long)rows, tpg_plan_a_box_rows(op->kernel, rows));
    return TPG_OK;
}

/* The gated all-gather walk: every stage, the local one too, waits on the flags of the stage whose copy rank's
 * graph runs last (tpg_copy_last_flag_stage), so a unit's stages start together - after all the shards, a few
 * microseconds at the few rows this walk is chosen for - and read each B tile in step. (A prefetch of the first
 * unit's B into L2 during that wait gained nothing measurable: docs/perf_notes/2026-12-03.md.) */
static void gate_on_last_shard(const tpg_op *op, int rank, tpg_gemm_params *g) {
    const tpg_stage_params *last = &g->stage[tpg_copy_last_flag_stage(op->sched, rank)];
    for (int s = 0; s < g->num_stages; s++) {
        g->stage[s].wait_flag = last->wait_flag;
        g->stage[s].wait_chunk_rows = last->wait_chunk_rows;
        g->stage[s].wait_b = last->wait_b;
    }
}

/* The gathered walk's shards pulled by the GEMM itself (copy_plan.h: tpg_gather_pulls; templates/kernels/
 * pull_shards.cuh): block b of A comes from the rank whose stage entry holds it (the own rank's at stage 0) and goes
 * to slot b, the slots end to end. The graph then has no copy or flag node (graph.c), and the GEMM follows the start
 * barrier, after which every peer's shard is this call's. */
static tpg_status gathered_pulls(tpg_op *op, int rank, tpg_gemm_params *g) {
    const tpg_schedule_table *t = op->sched;
    const size_t bytes = op->layout.slot_bytes_used;
    if (bytes % 16 != 0 || op->layout.slot_bytes != bytes)
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "config %s: a shard of %zu B in slots of %zu B cannot be pulled in "
                 "16-byte pieces end to end", op->config->name, bytes, op->layout.slot_bytes);
    for (int s = 0; s < t->tp; s++) {
        const tpg_stage_entry *e = &t->stages[rank * t->tp + s];
        const void *src = e->peer == rank ? op->tensors[rank].a : tpg_peers_get(&op->peers, e->peer, TPG_PEER_SHARD_A);
        if (!src || e->block < 0 || e->block >= t->tp)
            TPG_FAIL(op->ctx, TPG_ERR_NOT_READY, "rank %d pulls block %d from rank %d, whose tensors are not set", rank,
                     (int)e->block, (int)e->peer);
        if (e->peer != rank && tpg__is_local(op->ctx, e->peer) &&
            op->ctx->devices[e->peer] != op->ctx->devices[rank] && !tpg__device_reads(op->ctx, rank, src))
            TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d's GEMM pulls rank %d's A shard (%p; the gathered "
                     "walk, few rows a stage) and device %d may not read it: pool (cudaMallocAsync) and cuMemCreate "
                     "memory, PyTorch's expandable segments among them, is readable from another GPU only where its "
                     "owner granted access (cudaMemPoolSetAccess, cuMemSetAccess); grant device %d read access or "
                     "allocate the shard with cudaMalloc", rank, (int)e->peer, src, op->ctx->devices[rank],
                     op->ctx->devices[rank]);
        g->pull_src[e->block] = src;
    }
    g->pull_dst = tpg_buf_slot(op->buffer[rank], &op->layout, 0);
    g->pull_bytes = (unsigned long long)bytes;
    g->pull_next = tpg_buf_word(op->buffer[rank], op->layout.pull_next);
    g->pull_count = tpg_buf_word(op->buffer[rank], op->layout.pull_count);
    g->pull_seen = tpg_buf_word(op->buffer[rank], op->layout.pull_seen);
    g->pull_shards = t->tp;
    return TPG_OK;
}

/* The gathered all-gather walk (plan.h: TPG_WALK_GATHERED): shard b lands in slot b - pulled by the GEMM itself
 * (gathered_pulls, the default), or brought by the copy nodes with the own shard's copy beside them (graph.c) - and
 * one stage computes all M rows from the slots end to end - A's blocks in order, so its output is the user's whole D
 * shard - behind its own pulls or the flag of the device's last copy, which follows every copy
 * (tpg_copy_last_flag_stage; in pieces, its last piece's). Stage after stage at few rows, each
 * stage reads all of B and fills its tiles part-way below a tile's rows; gathered, the walk is the plain GEMM of the
 * rank's problem once every shard is there. Measured on one GPU (kernel_selftest --ag-few, nv1x: the plain GEMM
 * behind NVLink-timed copies, without the own shard's copy; BENCHMARKS.md, "the gathered all-gather walk"), of the
 * plain GEMM on the picks: 405B-fc1 at 32 / 16 rows a stage (TP = 4 / 8, M = 128) 0.90 / 0.68 where stage after
 * stage ran 0.26 / 0.11 and the gated interleaved walk 0.36 / 0.15; the fc1 layers at 64 and 128 rows (TP = 2,
 * M = 128 and 256) 0.92-0.98 against 0.50-0.84; at 256 rows stage after stage kept pace (0.94-1.07) and the gate lost
 * up to 20%: the wait for every shard then costs more than B's re-reads (TPG_GATHER_MAX_ROWS). */
static tpg_status gathered_params(tpg_op *op, int rank, tpg_gemm_params *g) {
    const tpg_shapes *sh = &op->shapes;
    const tpg_kernel_desc *k = op->kernel;
    const int p = op->sched->tp, last = tpg_copy_last_flag_stage(op->sched, rank);
    if (last < 0 || sh->l != 1 || op->layout.num_slots != p || op->sched->rotating != TPG_OPERAND_A)
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "config %s: rank %d's walk is gathered but its copies are not "
                 "chained, it has %lld batches, its buffer %d slots or B rotates", op->config->name, rank,
                 (long long)sh->l, op->layout.num_slots);
    const int64_t rows = (int64_t)p * sh->a_rows; /* M */
    tpg_stage_params *st = &g->stage[0];          /* stage 0's B, D and C, their extents grown to M rows */
    TPG_CHECK(check_a_box(op, st, rows));
    TPG_CHECK(tpg_tensormap_encode(op->ctx, &st->a_map, tpg_buf_slot(op->buffer[rank], &op->layout, 0), k->dtype_ab,
                                   sh->a_cols, rows, k->bk, st->a_box_rows, "A (gathered slots)"));
    st->a_row0 = 0;
    st->a_batch_rows = (int)rows;
    st->d = op->tensors[rank].d;
    st->c = op->tensors[rank].c;
    TPG_CHECK(tpg_tensormap_encode_d(op->ctx, &st->d_map, st->d, k->dtype_cd, sh->stage_n, rows, 1, st->d_ld,
                                     st->d_batch, k->epi_chunk_bytes, "D"));
    const int last_piece = op->copy.chunks > 1 ? op->copy.chunks - 1 : 0; /* its flag follows every piece */
    const int pulls = tpg__op_pulls(op);
    st->wait_flag = pulls ? NULL : tpg_buf_stage_flags(op->buffer[rank], &op->layout, last) + last_piece;
    st->wait_chunk_rows = 0;
    st->wait_b = 0;
    g->num_stages = 1;
    g->m = (int)rows;
    g->stage_minor = 0;
    return pulls ? gathered_pulls(op, rank, g) : TPG_OK;
}

/* The one-hop reduce-scatter walk's REDUCE kernel of rank (one_hop.h): block `rank` of every rank's partial, each
 * in its owner's slot `rank` (slots end to end: one_hop_params), summed into the rank's D shard with beta * C. */
static tpg_status one_hop_reduce_params(tpg_op *op, int rank, tpg_one_hop_params *r) {
    const tpg_shapes *sh = &op->shapes;
    const tpg_kernel_desc *k = op->kernel;
    const tpg_tensors *u = &op->tensors[rank];
    memset(r, 0, sizeof *r);
    r->tp = op->sched->tp;
    r->rank = rank;
    r->rows = (int)sh->stage_m;
    r->cols = (int)sh->stage_n;
    r->row0 = rank * r->rows;
    r->bm = k->bm;
    r->bn = k->bn;
    r->tiles_n = (int)((sh->stage_n + k->bn - 1) / k->bn);
    r->partial_f32 = k->dtype_partial == TPG_DTYPE_FP32;
    r->out_fp16 = k->dtype_cd == TPG_DTYPE_FP16;
    if ((k->dtype_cd != TPG_DTYPE_BF16 && !r->out_fp16) || (!r->partial_f32 && k->dtype_partial != k->dtype_cd) ||
        sh->stage_n % 8 != 0 || sh->d_cols % 8 != 0 || ((uintptr_t)u->d | (uintptr_t)u->c) % 16 != 0)
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "config %s: the one-hop reduce sums 8 elements at a time of fp32 or "
                 "output-type partials into a bf16 / fp16 D (and C) on 16-byte boundaries; here %s partials, %s out, "
                 "N %lld, D %p, C %p", op->config->name, tpg_dtype_name(k->dtype_partial), tpg_dtype_name(k->dtype_cd),
                 (long long)sh->stage_n, u->d, (const void *)u->c);
    for (int p = 0; p < r->tp; p++) {
        void *holder = tpg_peers_get(&op->peers, p, TPG_PEER_BUFFER);
        if (!holder)
            TPG_FAIL(op->ctx, TPG_ERR_NOT_READY, "rank %d sums its block from rank %d, whose buffer is not mapped", rank, p);
        r->src[p] = tpg_buf_slot(holder, &op->layout, rank);
        r->src_flags[p] = tpg_buf_tile_flags(holder, &op->layout, 0);
    }
    r->d = u->d;
    r->d_ld = sh->d_cols;
    r->c = u->c;
    r->c_ld = sh->d_cols;
    r->beta = op->desc.beta;
    r->epoch = tpg_buf_word(op->buffer[rank], op->layout.epoch);
    r->status = tpg_buf_word(op->buffer[rank], op->layout.status);
    r->gave_up_epoch = tpg_buf_word(op->buffer[rank], op->layout.gave_up);
    r->timeout_ns = op->ctx->timeout_ns;
    return TPG_OK;
}

/* The one-hop reduce-scatter walk (plan.h: TPG_WALK_ONE_HOP): one stage of all M rows - A's whole shard, rows 0 on -
 * writes the rank's partial (alpha and the scales applied, no C) into its own slots end to end, slot b holding block
 * b, raising tile t's flag (word t of slot 0's) as a ring stage does; then the REDUCE kernel (one_hop.h, after it in
 * the graph: copy_plan.h) sums the rank's block of every rank's partial. Stage after stage at few rows, each ring
 * stage reads all of B, fills its tiles part-way below a tile's rows and waits for the previous stage's partial;
 * one-hop the GEMM is the plain GEMM of the rank's problem and every partial moves once. */
static tpg_status one_hop_params(tpg_op *op, int rank, tpg_gemm_params *g) {
    const tpg_shapes *sh = &op->shapes;
    const tpg_kernel_desc *k = op->kernel;
    const int p = op->sched->tp;
    const int64_t rows = (int64_t)p * sh->stage_m; /* M */
    const tpg_stage_entry *last = &op->sched->stages[rank * p + p - 1]; /* the rank's D shard is block `rank` */
    if (sh->l != 1 || op->layout.num_slots != p || op->sched->rotating != TPG_OPERAND_D || sh->a_rows != rows ||
        op->layout.slot_bytes != op->layout.slot_bytes_used || last->dst_peer >= 0 || last->block != rank)
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "config %s: rank %d's walk is one-hop but it has %lld batches, its "
                 "buffer %d slots not end to end, A %lld rows, not %lld, or its last stage does not end block %d",
                 op->config->name, rank, (long long)sh->l, op->layout.num_slots, (long long)sh->a_rows,
                 (long long)rows, rank);
    tpg_stage_params *st = &g->stage[0]; /* stage 0's A and B maps (A's over all its rows), its D a slot of M rows */
    TPG_CHECK(check_a_box(op, st, rows));
    void *own = op->buffer[rank];
    st->a_row0 = 0;
    st->d = tpg_buf_slot(own, &op->layout, 0);
    st->d_ld = sh->stage_n;
    st->d_batch = rows * sh->stage_n;
    st->c = NULL;
    st->c_ld = st->c_batch = 0;
    st->partial = NULL;
    st->partial_flags = NULL;
    st->wait_flag = NULL;
    st->signal_flags = tpg_buf_tile_flags(own, &op->layout, 0);
    TPG_CHECK(tpg_tensormap_encode_d(op->ctx, &st->d_map, st->d, k->dtype_partial, sh->stage_n, rows, 1, st->d_ld,
                                     st->d_batch, k->epi_chunk_bytes, "D (own slots, one-hop)"));
    g->num_stages = 1;
    g->m = (int)rows;
    g->stage_minor = 0;
    return one_hop_reduce_params(op, rank, &op->one_hop_reduce[rank]);
}

tpg_status tpg__params_build(tpg_op *op, int rank) {
    tpg_gemm_params *g = &op->gemm[rank];
    const tpg_shapes *sh = &op->shapes;
    memset(g, 0, sizeof *g);
    g->m = (int)sh->stage_m;
    g->n = (int)sh->stage_n;
    g->k = (int)sh->stage_k;
    g->l = (int)sh->l;
    const tpg_walk_order order = walk_order(op, rank, g);
    /* A's box (plan.h: tpg_plan_a_box_rows), from the rows of the launch this walk makes (gathered_params and
     * one_hop_params grow stage 0 to all M rows) */
    const int a_box = tpg_plan_a_box_rows(op->kernel, tpg_walk_launch_rows(order, op->sched->tp, sh->stage_m));
    for (int s = 0; s < op->sched->tp; s++) TPG_CHECK(stage_params(op, rank, s, a_box, &g->stage[s]));
    g->num_stages = op->sched->tp;
    g->alpha = op->desc.alpha;
    g->beta = op->desc.beta;
    g->scale_a = op->tensors[rank].scale_a;
    g->scale_b = op->tensors[rank].scale_b;
    /* TP = 1 has no barrier and no flags: no epoch word, so the kernel reads none (its epoch is 0; the load cost a
     * decode-size call ~0.4 us, docs/perf_notes/2026-12-03-e.md). Overlap: START may not have run yet, so the GEMM
     * counts on from its own previous epoch (gemm_params.h). */
    if (op->sched->tp > 1) {
        g->epoch = op->overlap ? NULL : tpg_buf_word(op->buffer[rank], op->layout.epoch);
        g->last_epoch = tpg_buf_word(op->buffer[rank], op->layout.last_epoch);
        g->epoch_readers = tpg_buf_word(op->buffer[rank], op->layout.epoch_readers);
    }
    g->status = tpg_buf_word(op->buffer[rank], op->layout.status);
    /* TP = 1 has no cross-device wait to give up, and no start barrier to age the word (epoch.h): its epoch 0 would
     * read the initial 0 as a give-up */
    g->gave_up_epoch = op->sched->tp > 1 ? tpg_buf_word(op->buffer[rank], op->layout.gave_up) : NULL;
    g->timeout_ns = op->ctx->timeout_ns;
    g->tile_order = (const int *)(tpg__op_one_hop(op) ? op->tile_order_one_hop : op->tile_order)[rank];
    if ((order == TPG_WALK_GATHERED) != op->gathered || (order == TPG_WALK_ONE_HOP) != tpg__op_one_hop(op))
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "config %s: rank %d's walk order (%d) and its op's buffers "
                 "(gathered %d, one-hop %d) disagree", op->config->name, rank, (int)order, op->gathered,
                 tpg__op_one_hop(op));
    g->stage_minor = order != TPG_WALK_STAGE_AFTER_STAGE;
    if (order == TPG_WALK_INTERLEAVED_GATED) gate_on_last_shard(op, rank, g);
    if (order == TPG_WALK_GATHERED) TPG_CHECK(gathered_params(op, rank, g));
    if (order == TPG_WALK_ONE_HOP) TPG_CHECK(one_hop_params(op, rank, g));
    tpg__stream_k_params(op, rank, g);
    if (tpg__op_ce_partials(op)) { /* the sending stages' flags counted by tile row, for the copy chains' waits */
        g->row_counts = tpg_buf_row_count(op->buffer[rank], &op->layout, 0);
        g->row_count_flags = tpg_buf_tile_flags(op->buffer[rank], &op->layout, 0);
        g->row_count_tiles_n = (int)op->nccl_rows.tiles_n;
    }
    barrier_params(op, rank, TPG_BARRIER_START, &op->barrier[TPG_BARRIER_START][rank]);
    barrier_params(op, rank, TPG_BARRIER_END, &op->barrier[TPG_BARRIER_END][rank]);
#ifdef TPG_TRACE
    tpg__trace_apply(op, rank); /* the memsets above cleared the trace pointers */
#endif
    return TPG_OK;
}
