/* The plan of a distributed GEMM (`tpgemm --dry-run`): arithmetic over the generated tables, no CUDA. */
#include "plan.h"
#include "copy_plan.h"
#include "json.h"
#include "nccl_plan.h"
#include "shapes.h"
#include "stream_k.h"

#include <inttypes.h>
#include <string.h>

static const char *const node_kind_names[] = {"BARRIER_START", "COPY", "FLAG", "GEMM", "BARRIER_END", "REDUCE"};

const char *tpg_plan_node_kind_name(int kind) {
    return kind >= 0 && kind < (int)(sizeof node_kind_names / sizeof node_kind_names[0]) ? node_kind_names[kind]
                                                                                          : "UNKNOWN";
}

const char *tpg_plan_dim_name(int dim) { return tpg_dim_name((tpg_dim)dim); }

const char *tpg_plan_operand_name(int operand) {
    switch (operand) {
    case TPG_OPERAND_A: return "A";
    case TPG_OPERAND_B: return "B";
    case TPG_OPERAND_D: return "D";
    default: return "-";
    }
}

static int64_t ceil_div(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

static tpg_walk_order plan_walk_order(const tpg_config_desc *cfg, const tpg_plan_shape *ps, int64_t l, int keep_ring);

static int valid_cfg(const tpg_config_desc *cfg) {
    return cfg && cfg->schedule && cfg->kernel && cfg->schedule->tp >= 1 && cfg->schedule->stages;
}

tpg_status tpg_plan_compute(const tpg_config_desc *cfg, int64_t m, int64_t n, int64_t k, int64_t l, int copy_chunks,
                            tpg_plan_shape *out) {
    return tpg__plan_compute_ring(cfg, m, n, k, l, copy_chunks, 0, out);
}

tpg_status tpg__plan_compute_ring(const tpg_config_desc *cfg, int64_t m, int64_t n, int64_t k, int64_t l,
                                  int copy_chunks, int keep_ring, tpg_plan_shape *out) {
    if (!valid_cfg(cfg) || !out || m < 1 || n < 1 || k < 1 || l < 1) return TPG_ERR_INVALID_ARGUMENT;
    const tpg_schedule_table *s = cfg->schedule;
    const tpg_kernel_desc *kd = cfg->kernel;
    const int64_t p = s->tp;
    memset(out, 0, sizeof *out);

    tpg_shapes sh; /* the runtime's own arithmetic, without its validation */
    tpg_shapes_compute(s, (int)p, m, n, k, l, &sh);
    out->local_m = sh.local_m;
    out->local_n = sh.local_n;
    out->local_k = sh.local_k;
    out->stage_m = sh.stage_m;
    out->stage_n = sh.stage_n;
    out->stage_k = sh.stage_k;
    out->a_rows = sh.a_rows;
    out->a_cols = sh.a_cols;
    out->b_rows = sh.b_rows;
    out->b_cols = sh.b_cols;
    out->d_rows = sh.d_rows;
    out->d_cols = sh.d_cols;

    out->tiles_per_stage = l * ceil_div(out->stage_m, kd->bm) * ceil_div(out->stage_n, kd->bn);
    out->keep_ring = keep_ring != 0;
    const tpg_walk_order order = plan_walk_order(cfg, out, l, keep_ring);
    out->gathered = order == TPG_WALK_GATHERED;
    out->one_hop = order == TPG_WALK_ONE_HOP;
    /* gathered: the own shard's block too; one-hop (or eligible and kept a ring: the op's buffers serve both) the
     * partial's every block */
    out->num_slots = p - 1 + (out->gathered || plan_walk_order(cfg, out, l, 0) == TPG_WALK_ONE_HOP);
    if (s->comm == TPG_COMM_ALLGATHER) {
        int64_t rows = s->rotating == TPG_OPERAND_B ? out->b_rows : out->a_rows;
        int64_t cols = s->rotating == TPG_OPERAND_B ? out->b_cols : out->a_cols;
        out->slot_bytes = rows * cols * l * (int64_t)tpg_dtype_size(kd->dtype_ab);
        out->flags_bytes = p > 1 ? p * TPG_MAX_COPY_CHUNKS * 4 : 0;
    } else {
        out->slot_bytes = out->stage_m * out->stage_n * l * (int64_t)tpg_dtype_size(kd->dtype_partial);
        out->flags_bytes = out->num_slots * out->tiles_per_stage * 4; /* buffers.c: tile flags of every slot */
    }
    if (p == 1) out->slot_bytes = 0;
    /* the layout's second bank (op.c) comes with the config, whichever walk runs; the chains with the ring only */
    const int banks = cfg->copy_engine_partials && s->comm == TPG_COMM_REDUCE_SCATTER && p > 1 ? 2 : 1;
    out->ce_partials = banks == 2 && !out->one_hop;
    out->flags_bytes *= banks;
    out->slots_bytes = out->num_slots * out->slot_bytes * banks;
    out->moved_bytes = (p - 1) * out->slot_bytes;
    out->copy_chunks_asked = copy_chunks > 0 ? copy_chunks : cfg->copy_chunks;
    const tpg_copy_plan cp = tpg_copy_plan_for(s, kd, &sh, out->copy_chunks_asked);
    out->copy_chunks = cp.chunks;
    out->copy_chunk_rows = cp.chunks ? cp.chunk_rows : 0;
    out->copy_chunk_bytes = cp.chunks ? cp.chunk_rows * cp.row_bytes : 0;
    out->flops_per_device = 2.0 * (double)m * (double)n * (double)k * (double)l / (double)p;
    return TPG_OK;
}

tpg_walk_order tpg_plan_walk_order(const tpg_walk_facts *w) {
    if (w->stages < 2 || !w->stages_split_m) return TPG_WALK_STAGE_AFTER_STAGE;
    /* one GEMM of all M rows: its gather buffer holds one batch of blocks (params.c: gathered_params) */
    if (!w->reduce_scatter && w->stage_rows <= TPG_GATHER_MAX_ROWS && w->l == 1 && w->copies_chained && !w->band_waits)
        return TPG_WALK_GATHERED;
    /* one GEMM of all M rows into the rank's own slots, one batch of blocks (params.c: one_hop_params) */
    if (w->reduce_scatter && w->stage_rows <= TPG_ONE_HOP_MAX_ROWS && w->l == 1 && !w->band_waits && !w->keep_ring)
        return TPG_WALK_ONE_HOP;
    const int b_bound = w->stage_rows <= TPG_INTERLEAVE_MAX_ROWS && w->b_bytes >= TPG_INTERLEAVE_MIN_B_BYTES;
    /* 1x1 clusters (every ping-pong kernel): the launch's grid is then the rank's SMs (graph.c), so a walk that
     * fits is sure to be one wave */
    if (!w->pingpong || w->cluster_m != 1 || w->cluster_n != 1 || w->tiles_m != 1) return TPG_WALK_STAGE_AFTER_STAGE;
    if (!w->reduce_scatter) /* its later stages wait for their shards: gated, or their tiles never read in step */
        return b_bound && w->copies_chained && !w->band_waits ? TPG_WALK_INTERLEAVED_GATED : TPG_WALK_STAGE_AFTER_STAGE;
    if (w->tiles_n * w->l * w->stages <= w->sms) return TPG_WALK_INTERLEAVED_ONE_WAVE;
    /* more waves: a tile may wait for a unit queued behind it on its own CTA if its stage waits for whole bands */
    return b_bound && !w->band_waits && !w->ce_bands ? TPG_WALK_INTERLEAVED_FEW_ROWS : TPG_WALK_STAGE_AFTER_STAGE;
}

int64_t tpg_walk_tile_count(const tpg_kernel_desc *kd, int stages, int64_t stage_m, int64_t stage_n, int64_t l,
                            int one_gemm) {
    const int64_t tiles_n = ceil_div(stage_n, kd->bn);
    if (one_gemm) return l * ceil_div(stages * stage_m, kd->bm) * tiles_n;
    return stages * l * ceil_div(stage_m, kd->bm) * tiles_n;
}

int tpg_plan_a_box_rows(const tpg_kernel_desc *kd, int64_t launch_rows) {
    if (kd->cluster_n > 1 || launch_rows >= kd->bm) return kd->bm / kd->cluster_n;
    return (int)((launch_rows + 7) / 8 * 8);
}

tpg_walk_facts tpg_walk_facts_for(const tpg_schedule_table *s, const tpg_kernel_desc *kd, int64_t stage_m,
                                  int64_t stage_n, int64_t stage_k, int64_t l, int sms, int band_waits, int keep_ring) {
    const tpg_walk_facts w = {.reduce_scatter = s->comm != TPG_COMM_ALLGATHER,
                              .stages_split_m = s->stage_dim == TPG_DIM_M,
                              .pingpong = kd->pingpong,
                              .cluster_m = kd->cluster_m,
                              .cluster_n = kd->cluster_n,
                              .stages = s->tp,
                              .stage_rows = stage_m,
                              .tiles_m = (stage_m + kd->bm - 1) / kd->bm,
                              .tiles_n = (stage_n + kd->bn - 1) / kd->bn,
                              .l = l,
                              .b_bytes = stage_n * stage_k * l * (int64_t)tpg_dtype_size(kd->dtype_ab),
                              .sms = sms,
                              .band_waits = band_waits,
                              .copies_chained = tpg_copy_flags_chained(s),
                              .keep_ring = keep_ring};
    return w;
}

/* The plan's walk order at TPG_PICK_SMS SMs over NVLink (a launch decides with the rank's own: params.c). */
static tpg_walk_order plan_walk_order(const tpg_config_desc *cfg, const tpg_plan_shape *ps, int64_t l, int keep_ring) {
    tpg_walk_facts w = tpg_walk_facts_for(cfg->schedule, cfg->kernel, ps->stage_m, ps->stage_n, ps->stage_k, l,
                                          TPG_PICK_SMS, 0, keep_ring);
    w.ce_bands = cfg->copy_engine_partials;
    return tpg_plan_walk_order(&w);
}

/* The plan's "walk order" line: the order and why, at TPG_PICK_SMS SMs. */
static void write_walk_order(FILE *f, tpg_walk_order o) {
    fprintf(f, "  walk order        ");
    if (o == TPG_WALK_INTERLEAVED_ONE_WAVE)
        fprintf(f, "stages interleaved (a ping-pong reduce-scatter ring of one wave: the stages' tiles of one output "
                   "position on neighbouring SMs)");
    else if (o == TPG_WALK_INTERLEAVED_FEW_ROWS)
        fprintf(f, "stages interleaved (a ping-pong reduce-scatter ring of at most %d rows and at least %d MiB of B a "
                   "stage: the stages read each B tile together, once; over the NCCL transport stage after stage)",
                TPG_INTERLEAVE_MAX_ROWS, (int)(TPG_INTERLEAVE_MIN_B_BYTES >> 20));
    else if (o == TPG_WALK_GATHERED)
        fprintf(f, "gathered (an all-gather of at most %d rows a stage and one batch: every shard, the own too, "
                   "lands in the slot of its block - pulled by the GEMM's CTAs, or by copy-engine nodes when cut in "
                   "pieces, beside the barriers or asked for - then one GEMM of all M rows; over the NCCL transport "
                   "stage after stage)",
                TPG_GATHER_MAX_ROWS);
    else if (o == TPG_WALK_ONE_HOP)
        fprintf(f, "one-hop (a reduce-scatter of at most %d rows a stage and one batch: one GEMM of all M rows into the "
                   "rank's own slots, then a REDUCE kernel sums its block from every rank's slots; over the NCCL "
                   "transport or kept a ring, the ring)",
                TPG_ONE_HOP_MAX_ROWS);
    else if (o == TPG_WALK_INTERLEAVED_GATED)
        fprintf(f, "stages interleaved and gated (a ping-pong all-gather of at most %d rows and at least %d MiB of B a "
                   "stage: every stage waits for the last shard, then the stages read each B tile together, once; over "
                   "the NCCL transport stage after stage)",
                TPG_INTERLEAVE_MAX_ROWS, (int)(TPG_INTERLEAVE_MIN_B_BYTES >> 20));
    else
        fprintf(f, "stage after stage");
    fprintf(f, " at %d SMs (a launch decides with its rank's SMs: fewer with NCCL or a shared GPU)\n", TPG_PICK_SMS);
}

/* ---- writing ----------------------------------------------------------------------------------- */

static const tpg_stage_entry *entry(const tpg_schedule_table *s, int d, int st) {
    return &s->stages[d * s->tp + st];
}

/* How a ring's partials move (the dry run's words): pushed by the GEMM, pulled by the receiver's GEMM, or carried by
 * copy-engine nodes (ce_partials.c). */
enum { MOVE_PUSH, MOVE_PULL, MOVE_COPY_ENGINE };
static int partials_move(const tpg_config_desc *cfg, const tpg_plan_shape *ps) {
    return ps->ce_partials ? MOVE_COPY_ENGINE : cfg->pull_partials ? MOVE_PULL : MOVE_PUSH;
}

/* What stage st of device d waits on before computing, as a short phrase (move: partials_move; the walk orders
 * TPG_WALK_INTERLEAVED_GATED and TPG_WALK_GATHERED wait on the flag of the device's last copy). */
static void waits_on(const tpg_schedule_table *s, int move, tpg_walk_order order, int pulls, int d, int st,
                     char *buf, size_t cap) {
    const tpg_stage_entry *e = entry(s, d, st);
    if (s->comm == TPG_COMM_ALLGATHER) {
        if (order == TPG_WALK_GATHERED && pulls)
            snprintf(buf, cap, "its own CTAs' pulls of every shard (gathered: one GEMM of all rows)");
        else if (order == TPG_WALK_GATHERED)
            snprintf(buf, cap, "flag %d: the last copy, and the own shard's copy (gathered: one GEMM of all rows)",
                     tpg_copy_last_flag_stage(s, d));
        else if (order == TPG_WALK_INTERLEAVED_GATED)
            snprintf(buf, cap, "flag %d: the last copy (gated: every shard)", tpg_copy_last_flag_stage(s, d));
        else if (e->src_slot < 0)
            snprintf(buf, cap, "nothing (own %s shard)", tpg_plan_operand_name(s->rotating));
        else
            snprintf(buf, cap, "flag %d: copy of %s shard %d from dev %d into slot %d", st,
                     tpg_plan_operand_name(s->rotating), e->peer, e->peer, e->src_slot);
    } else if (order == TPG_WALK_ONE_HOP) {
        snprintf(buf, cap, st ? "- (one-hop: stage 0 is the whole GEMM)" : "nothing (one-hop: the REDUCE after it waits "
                 "for every rank's tile flags)");
    } else {
        if (e->src_slot < 0)
            snprintf(buf, cap, "nothing (first partial)");
        else if (move == MOVE_PULL)
            snprintf(buf, cap, "per-tile flags of dev %d's slot %d: partial pulled from it", e->peer, e->src_slot);
        else if (move == MOVE_COPY_ENGINE)
            snprintf(buf, cap, "per-tile flags of slot %d: partial of dev %d, carried by its copy engine", e->src_slot,
                     e->peer);
        else
            snprintf(buf, cap, "per-tile flags of slot %d: partial pushed by dev %d", e->src_slot, e->peer);
    }
}

/* Where stage st of device d writes its output (move: partials_move). */
static void writes_to(const tpg_schedule_table *s, int move, tpg_walk_order order, int d, int st, char *buf,
                      size_t cap) {
    const tpg_stage_entry *e = entry(s, d, st);
    if (order == TPG_WALK_ONE_HOP)
        snprintf(buf, cap, st ? "-" : "own slots 0..%d (+flags)", s->tp - 1);
    else if (e->dst_peer < 0 || e->dst_slot < 0)
        snprintf(buf, cap, "own D block %d", e->block);
    else if (move == MOVE_COPY_ENGINE)
        snprintf(buf, cap, "send slot %d (+flags) -> dev %d", e->dst_slot, e->dst_peer);
    else if (move == MOVE_PULL)
        snprintf(buf, cap, "own slot %d (+flags) for dev %d", e->dst_slot, e->dst_peer);
    else
        snprintf(buf, cap, "dev %d slot %d (+flags)", e->dst_peer, e->dst_slot);
}

static void human_bytes(int64_t b, char *buf, size_t cap) {
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%" PRId64 " B", b);
    else
        snprintf(buf, cap, "%.1f %s", v, unit[u]);
}

/* The most graph nodes a device can have: every table node cut into the most pieces. */
#define TPG_PLAN_MAX_ITEMS (64 * TPG_MAX_COPY_CHUNKS)

/* Device d's graph as the runtime builds it (copy_plan.h; graph.c) into items; the item count, or -1 when the
 * table's list is not one the expansion knows (or too long). */
static int expand_device(const tpg_schedule_table *s, int d, const tpg_plan_shape *ps, tpg_graph_item *items) {
    const tpg_graph_node *list = &s->nodes[d * s->nodes_per_device];
    const int chunks = ps->copy_chunks;
    const int count = tpg_graph_items_count(list, s->nodes_per_device, chunks);
    if (count + 1 > TPG_PLAN_MAX_ITEMS || tpg_graph_items_expand(list, s->nodes_per_device, chunks, items) != 0)
        return -1;
    if (ps->overlap && s->tp > 1 && tpg_graph_items_overlap(list, s->comm, items, count) != 0) return -1;
    if (ps->pulls) return tpg_graph_items_pulled(list, items, count);
    if (ps->one_hop) return tpg_graph_items_one_hop(list, items, count);
    return ps->gathered ? tpg_graph_items_gather(list, items, count) : count;
}

/* The table node of item it of device d, or the local shard's copy (kind COPY, stage 0, from and into d). */
static tpg_graph_node item_node(const tpg_schedule_table *s, int d, const tpg_graph_item *it) {
    if (it->node == TPG_ITEM_LOCAL_SHARD) return (tpg_graph_node){TPG_NODE_COPY, 0, (signed char)d, (signed char)d,
                                                                  {-1, -1}};
    if (it->node == TPG_ITEM_ONE_HOP_REDUCE) return (tpg_graph_node){TPG_NODE_REDUCE, -1, -1, -1, {-1, -1}};
    return s->nodes[d * s->nodes_per_device + it->node];
}

/* Where the copies were asked in more pieces than the plan cuts (copy_chunks, --copy-chunks), says why: a piece
 * holds whole rows of tiles (copy_plan.h), and the gathered walk's GEMM pulls the shards without any copy. */
static void write_pieces_note(FILE *f, const tpg_plan_shape *ps) {
    const int asked = ps->copy_chunks_asked, cut = ps->pulls ? 0 : ps->copy_chunks;
    if (asked <= 1 || cut >= asked || (!ps->pulls && !ps->copy_chunks)) return; /* TP = 1: nothing moves at all */
    if (ps->pulls)
        fprintf(f, "Copy pieces: %d asked: nothing is copied (the GEMM's CTAs pull the shards)\n", asked);
    else
        fprintf(f, "Copy pieces: %d asked, %d cut: a piece holds whole rows of tiles (%" PRId64 " rows here)\n", asked,
                cut, ps->copy_chunk_rows);
}

static void write_text(FILE *f, const tpg_config_desc *cfg, int64_t m, int64_t n, int64_t k, int64_t l,
                       const tpg_plan_shape *ps) {
    const tpg_schedule_table *s = cfg->schedule;
    const tpg_kernel_desc *kd = cfg->kernel;
    const int p = s->tp, ag = s->comm == TPG_COMM_ALLGATHER;
    const tpg_walk_order order = plan_walk_order(cfg, ps, l, ps->keep_ring);
    char b1[64], b2[64], b3[64], w[160], o[80];

    fprintf(f, "Plan: %s\n", cfg->name);
    fprintf(f, "  schedule          %s (%s, rotating %s; A sharded along %s, B along %s, D along %s; stages split %s)\n",
            s->name, ag ? "all-gather" : "reduce-scatter", tpg_plan_operand_name(s->rotating),
            tpg_plan_dim_name(s->shard_a), tpg_plan_dim_name(s->shard_b), tpg_plan_dim_name(s->shard_d),
            tpg_plan_dim_name(s->stage_dim));
    fprintf(f, "  tp                %d\n", p);
    char partials[32] = "";
    if (kd->dtype_partial != kd->dtype_cd)
        snprintf(partials, sizeof partials, ", %s partials", tpg_dtype_name(kd->dtype_partial));
    fprintf(f, "  kernel            %s: %s in, %s out%s, tile %dx%dx%d, %d stages, %d consumers, cluster %dx%d, "
               "%d threads, %d B smem\n",
            kd->name, tpg_dtype_name(kd->dtype_ab), tpg_dtype_name(kd->dtype_cd),
            partials, kd->bm, kd->bn, kd->bk, kd->stages,
            kd->consumers, kd->cluster_m, kd->cluster_n, kd->threads, kd->smem_bytes);
    fprintf(f, "  problem           M=%" PRId64 " N=%" PRId64 " K=%" PRId64 " L=%" PRId64
               "  (D = alpha*A*B^T + beta*C; A MxK, B NxK)\n",
            m, n, k, l);
    fprintf(f, "  shards per device A %" PRId64 " x %" PRId64 ", B %" PRId64 " x %" PRId64 ", C/D %" PRId64
               " x %" PRId64 " (per batch)\n",
            ps->a_rows, ps->a_cols, ps->b_rows, ps->b_cols, ps->d_rows, ps->d_cols);
    fprintf(f, "  local GEMM        %" PRId64 " x %" PRId64 " x %" PRId64 " per device\n", ps->local_m,
            ps->local_n, ps->local_k);
    fprintf(f, "  Local GEMM Problem Size (per stage): %" PRId64 " x %" PRId64 " x %" PRId64
               " (%" PRId64 " tiles of %dx%d per stage)\n",
            ps->stage_m, ps->stage_n, ps->stage_k, ps->tiles_per_stage, kd->bm, kd->bn);
    /* what tpg_config_pick's wave check reads (for one batch; here the walk's L batches): the share of the tile slots
     * of whole waves of TPG_PICK_SMS that the walk's output fills (a partial tile counts what it holds) */
    const int one_gemm = tpg_walk_is_one_gemm(order);
    const int64_t walk = tpg_walk_tile_count(kd, p, ps->stage_m, ps->stage_n, l, one_gemm);
    const int64_t waves = (walk + TPG_PICK_SMS - 1) / TPG_PICK_SMS;
    const double slots = (double)waves * TPG_PICK_SMS * kd->bm * kd->bn;
    fprintf(f, "  tile waves        %.2f of %d SMs (%" PRId64 " tiles %s %d stages%s; the output fills %.0f%% of "
               "%" PRId64 " whole wave%s of tiles)\n",
            (double)walk / TPG_PICK_SMS, TPG_PICK_SMS, walk, one_gemm ? "of" : "over", p,
            ps->gathered ? " gathered" : ps->one_hop ? " in one GEMM" : "",
            waves ? 100.0 * (double)p * (double)l * (double)ps->stage_m * (double)ps->stage_n / slots : 0.0, waves,
            waves == 1 ? "" : "s");
    write_walk_order(f, order);
    const int64_t launch_rows = tpg_walk_launch_rows(order, p, ps->stage_m);
    const int a_box = tpg_plan_a_box_rows(kd, launch_rows);
    if (a_box * kd->cluster_n < kd->bm)
        fprintf(f, "  A box             %d of the tile's %d rows (the launch has %" PRId64
                   " rows a stage: no rows past A for the TMA unit to zero-fill)\n", a_box, kd->bm, launch_rows);
    if (kd->stream_k) {
        /* what runtime/src/stream_k.c gives the launch at TPG_PICK_SMS CTAs: only a one-stage launch splits */
        const int64_t kb = (ps->stage_k + kd->bk - 1) / kd->bk;
        const int region = tpg_sk_launch_tiles(walk, TPG_PICK_SMS, kb, p == 1 || one_gemm ? 1 : p);
        fprintf(f, "  stream-K          %d of the %" PRId64 " tiles (%" PRId64 " k-blocks each) split along k at %d SMs%s"
                   " (a launch decides with its rank's SMs: fewer with NCCL or a shared GPU)\n",
                region, walk, kb, TPG_PICK_SMS, region ? "" : ": none, the walk is data-parallel");
    }
    fprintf(f, "  FLOPs per device  %.4g (2*M*N*K*L / tp)\n", ps->flops_per_device);

    fprintf(f, "\nStages (device d, stage s):\n");
    fprintf(f, "  %-4s %-6s %-6s %-5s %-9s %-9s %-9s %-30s %s\n", "dev", "stage", "block", "peer", "src_slot",
            "dst_peer", "dst_slot", "writes", "waits on");
    for (int d = 0; d < p; d++)
        for (int st = 0; st < p; st++) {
            const tpg_stage_entry *e = entry(s, d, st);
            waits_on(s, partials_move(cfg, ps), order, ps->pulls, d, st, w, sizeof w);
            writes_to(s, partials_move(cfg, ps), order, d, st, o, sizeof o);
            fprintf(f, "  %-4d %-6d %-6d %-5d %-9d %-9d %-9d %-30s %s\n", d, st, e->block, e->peer, e->src_slot,
                    e->dst_peer, e->dst_slot, o, w);
        }

    human_bytes(ps->slot_bytes, b1, sizeof b1);
    human_bytes(ps->slots_bytes, b2, sizeof b2);
    fprintf(f, "\nBuffers per device: slots %" PRId64 " x %" PRId64 " B (%s)%s = %" PRId64 " B (%s) of %s; "
               "flags %" PRId64 " B (%s)\n",
            ps->num_slots, ps->slot_bytes, b1,
            ps->slots_bytes > ps->num_slots * ps->slot_bytes ? " x 2 banks (receive, send)" : "",
            ps->slots_bytes, b2,
            !ag && ps->one_hop               ? "partials, slot b holding block b of the rank's own (one-hop)"
            : !ag && ps->num_slots == p      ? "partials (a slot per block, as the one-hop walk would use them)"
            : !ag                            ? "partials"
            : s->rotating == TPG_OPERAND_B   ? "B shards"
            : ps->gathered                   ? "A shards, slot b holding block b (gathered)"
                                             : "A shards",
            ps->flags_bytes, ag ? "32 per stage: one per piece of its copy" : "one per tile per slot");
    human_bytes(ps->moved_bytes, b3, sizeof b3);
    if (ag) {
        fprintf(f, "Bytes moved per device per call: %" PRId64 " B (%s) = (tp-1) x %s shard, pulled by %s\n",
                ps->moved_bytes, b3, tpg_plan_operand_name(s->rotating),
                ps->pulls ? "the GEMM's CTAs before their tiles, the own shard too (no copy or flag nodes)"
                          : "the copy engine");
        if (ps->copy_chunks && !ps->pulls) {
            human_bytes(ps->copy_chunk_bytes, b3, sizeof b3);
            fprintf(f, "Copies cut into %d piece%s of %" PRId64 " rows (%s), each with its own flag (copy_chunks)\n",
                    ps->copy_chunks, ps->copy_chunks == 1 ? "" : "s", ps->copy_chunk_rows, b3);
        }
        write_pieces_note(f, ps);
    } else if (ps->one_hop)
        fprintf(f, "Bytes moved per device per call: %" PRId64 " B (%s) = (tp-1) x partial block, pulled over NVLink by "
                   "the REDUCE kernel of the block's owner from this rank's slots\n", ps->moved_bytes, b3);
    else
        fprintf(f, "Bytes moved per device per call: %" PRId64 " B (%s) = (tp-1) x partial, %s\n", ps->moved_bytes, b3,
                ps->ce_partials      ? "carried by copy-engine nodes band by band from the sender's send slot into "
                                       "the receiver's slot (copy_engine_partials)"
                : cfg->pull_partials ? "pulled over NVLink by the next rank's GEMM epilogue from the sender's slot "
                                       "(pull_partials)"
                                     : "pushed over NVLink by the GEMM epilogue");

    fprintf(f, "\nGraph nodes per device (index kind [stage, peer, slot, piece] <- deps):\n");
    if (ps->ce_partials) {
        const int64_t tiles_n = ceil_div(ps->stage_n, cfg->kernel->bn);
        const int64_t batches = ps->tiles_per_stage / (ceil_div(ps->stage_m, cfg->kernel->bm) * tiles_n);
        const tpg_nccl_rows rows = {batches, ps->stage_m, cfg->kernel->bm, tiles_n,
                                    (size_t)ps->stage_n * tpg_dtype_size(cfg->kernel->dtype_partial)};
        const int bands = tpg_ce_band_count(&rows, (size_t)ps->slot_bytes);
        fprintf(f, "  (copy_engine_partials: after the GEMM's launch and the start barrier, per sending stage %d "
                   "band%s of [wait for the band's tile-row counts | copy into the receiver's slot | its flags], then "
                   "zeros over the %" PRId64 " B of send-bank counts; the closing barrier after them)\n",
                bands, bands == 1 ? "" : "s", ps->num_slots * ps->tiles_per_stage / tiles_n * 4);
    }
    if (ps->overlap && p > 1)
        fprintf(f, "  (barriers beside the GEMM: it counts its epoch on from its previous launch and waits for no node; %s)\n",
                ag ? "the closing barrier waits for the copies, not for the GEMM" : "the closing barrier still follows it");
    if (!s->nodes || s->nodes_per_device <= 0) {
        fprintf(f, "  (no graph nodes in the generated table)\n");
        return;
    }
    for (int d = 0; d < p; d++) {
        tpg_graph_item items[TPG_PLAN_MAX_ITEMS];
        const int count = expand_device(s, d, ps, items);
        fprintf(f, "  dev %d:", d);
        for (int i = 0; i < count; i++) {
            const tpg_graph_node node = item_node(s, d, &items[i]), *nd = &node;
            fprintf(f, "%s %d %s", i ? " |" : "", i, tpg_plan_node_kind_name(nd->kind));
            if (nd->kind == TPG_NODE_COPY)
                fprintf(f, "[s=%d peer=%d slot=%d", nd->stage, nd->peer, ps->gathered ? entry(s, d, nd->stage)->block
                                                                                      : nd->slot);
            else if (nd->kind == TPG_NODE_FLAG)
                fprintf(f, "[s=%d", nd->stage);
            if (items[i].node == TPG_ITEM_LOCAL_SHARD)
                fprintf(f, " own shard]");
            else if (nd->kind == TPG_NODE_COPY || nd->kind == TPG_NODE_FLAG)
                fprintf(f, ps->copy_chunks > 1 ? " piece=%d]" : "]", items[i].piece);
            int first = 1;
            for (int j = 0; j < 2; j++)
                if (items[i].deps[j] >= 0) {
                    fprintf(f, "%s%d", first ? " <-" : ",", items[i].deps[j]);
                    first = 0;
                }
        }
        if (count < 0) fprintf(f, " (the node list cannot be expanded)");
        fputc('\n', f);
    }
}

static void write_json(FILE *f, const tpg_config_desc *cfg, int64_t m, int64_t n, int64_t k, int64_t l,
                       const tpg_plan_shape *ps) {
    const tpg_schedule_table *s = cfg->schedule;
    const tpg_kernel_desc *kd = cfg->kernel;
    const int p = s->tp, ag = s->comm == TPG_COMM_ALLGATHER;
    const tpg_walk_order order = plan_walk_order(cfg, ps, l, ps->keep_ring);
    char w[160];

    fprintf(f, "{\"config\": ");
    tpg__json_string(f, cfg->name);
    fprintf(f, ", \"schedule\": ");
    tpg__json_string(f, s->name);
    fprintf(f, ", \"comm\": \"%s\", \"rotating\": \"%s\", \"shard_a\": \"%s\", \"shard_b\": \"%s\", "
               "\"shard_d\": \"%s\", \"stage_dim\": \"%s\", \"tp\": %d",
            ag ? "all-gather" : "reduce-scatter", tpg_plan_operand_name(s->rotating), tpg_plan_dim_name(s->shard_a),
            tpg_plan_dim_name(s->shard_b), tpg_plan_dim_name(s->shard_d), tpg_plan_dim_name(s->stage_dim), p);
    fprintf(f, ", \"kernel\": {\"name\": ");
    tpg__json_string(f, kd->name);
    fprintf(f, ", \"dtype_ab\": \"%s\", \"dtype_cd\": \"%s\", \"dtype_partial\": \"%s\", \"bm\": %d, \"bn\": %d, \"bk\": %d, \"stages\": %d, "
               "\"consumers\": %d, \"cluster_m\": %d, \"cluster_n\": %d, \"threads\": %d, \"smem_bytes\": %d}",
            tpg_dtype_name(kd->dtype_ab), tpg_dtype_name(kd->dtype_cd), tpg_dtype_name(kd->dtype_partial), kd->bm, kd->bn,
            kd->bk, kd->stages, kd->consumers,
            kd->cluster_m, kd->cluster_n, kd->threads, kd->smem_bytes);
    fprintf(f, ", \"problem\": {\"m\": %" PRId64 ", \"n\": %" PRId64 ", \"k\": %" PRId64 ", \"l\": %" PRId64 "}", m,
            n, k, l);
    fprintf(f, ", \"shards\": {\"a\": [%" PRId64 ", %" PRId64 "], \"b\": [%" PRId64 ", %" PRId64 "], \"d\": [%" PRId64
               ", %" PRId64 "]}",
            ps->a_rows, ps->a_cols, ps->b_rows, ps->b_cols, ps->d_rows, ps->d_cols);
    fprintf(f, ", \"local_gemm\": {\"m\": %" PRId64 ", \"n\": %" PRId64 ", \"k\": %" PRId64 "}", ps->local_m,
            ps->local_n, ps->local_k);
    fprintf(f, ", \"stage_gemm\": {\"m\": %" PRId64 ", \"n\": %" PRId64 ", \"k\": %" PRId64 "}", ps->stage_m,
            ps->stage_n, ps->stage_k);
    fprintf(f, ", \"tiles_per_stage\": %" PRId64 ", \"stage_minor\": %s", ps->tiles_per_stage,
            order != TPG_WALK_STAGE_AFTER_STAGE && !tpg_walk_is_one_gemm(order) ? "true" : "false");
    fprintf(f, ", \"stages_gated\": %s, \"stages_gathered\": %s, \"gemm_pulls\": %s, \"one_hop\": %s",
            order == TPG_WALK_INTERLEAVED_GATED ? "true" : "false", ps->gathered ? "true" : "false",
            ps->pulls ? "true" : "false", ps->one_hop ? "true" : "false");

    fprintf(f, ", \"stages\": [");
    for (int d = 0; d < p; d++)
        for (int st = 0; st < p; st++) {
            const tpg_stage_entry *e = entry(s, d, st);
            waits_on(s, partials_move(cfg, ps), order, ps->pulls, d, st, w, sizeof w);
            fprintf(f, "%s{\"device\": %d, \"stage\": %d, \"block\": %d, \"peer\": %d, \"src_slot\": %d, "
                       "\"dst_peer\": %d, \"dst_slot\": %d, \"waits_on\": ",
                    d || st ? ", " : "", d, st, e->block, e->peer, e->src_slot, e->dst_peer, e->dst_slot);
            tpg__json_string(f, w);
            fputc('}', f);
        }
    fprintf(f, "]");

    fprintf(f, ", \"buffers_per_device\": {\"slots\": %" PRId64 ", \"slot_bytes\": %" PRId64
               ", \"slots_bytes\": %" PRId64 ", \"flags_bytes\": %" PRId64 "}",
            ps->num_slots, ps->slot_bytes, ps->slots_bytes, ps->flags_bytes);
    fprintf(f, ", \"bytes_moved_per_device\": %" PRId64 ", \"transport\": \"%s\"", ps->moved_bytes,
            ag && ps->pulls     ? "NVLink loads by the GEMM's CTAs (pull)"
            : ag                ? "copy engine (pull)"
            : ps->one_hop        ? "NVLink loads by the block owner's REDUCE kernel (pull)"
            : ps->ce_partials    ? "copy engine, band by band (copy_engine_partials)"
            : cfg->pull_partials ? "NVLink loads by the next rank's GEMM epilogue (pull)"
                                 : "NVLink stores from the GEMM epilogue (push)");
    if (!ag)
        fprintf(f, ", \"pull_partials\": %d, \"copy_engine_partials\": %d", cfg->pull_partials && p > 1 && !ps->one_hop,
                ps->ce_partials);

    if (ag)
        fprintf(f, ", \"copy\": {\"chunks\": %d, \"chunk_rows\": %" PRId64 ", \"chunk_bytes\": %" PRId64
                   ", \"chunks_asked\": %d}",
                ps->copy_chunks, ps->copy_chunk_rows, ps->copy_chunk_bytes, ps->copy_chunks_asked);
    fprintf(f, ", \"overlap_barriers\": %d, \"graph\": [", ps->overlap && p > 1);
    for (int d = 0; d < p && s->nodes && s->nodes_per_device > 0; d++) {
        tpg_graph_item items[TPG_PLAN_MAX_ITEMS];
        const int count = expand_device(s, d, ps, items);
        fprintf(f, "%s{\"device\": %d, \"nodes\": [", d ? ", " : "", d);
        for (int i = 0; i < count; i++) {
            const tpg_graph_node nd = item_node(s, d, &items[i]);
            const int slot = nd.kind == TPG_NODE_COPY && ps->gathered ? entry(s, d, nd.stage)->block : nd.slot;
            fprintf(f, "%s{\"index\": %d, \"kind\": \"%s\", \"stage\": %d, \"peer\": %d, \"slot\": %d, "
                       "\"piece\": %d, \"own_shard\": %s, \"deps\": [",
                    i ? ", " : "", i, tpg_plan_node_kind_name(nd.kind), nd.stage, nd.peer, slot, items[i].piece,
                    items[i].node == TPG_ITEM_LOCAL_SHARD ? "true" : "false");
            int first = 1;
            for (int j = 0; j < 2; j++)
                if (items[i].deps[j] >= 0) {
                    fprintf(f, "%s%d", first ? "" : ", ", items[i].deps[j]);
                    first = 0;
                }
            fprintf(f, "]}");
        }
        fprintf(f, count < 0 ? "], \"error\": \"the node list cannot be expanded\"}" : "]}");
    }
    fprintf(f, "]");
    fprintf(f, ", \"flops_per_device\": %.17g}\n", ps->flops_per_device);
}

tpg_status tpg_plan_write(FILE *f, const tpg_config_desc *cfg, int64_t m, int64_t n, int64_t k, int64_t l,
                          int copy_chunks, int modes, int json) {
    tpg_plan_shape ps;
    if (!f) return TPG_ERR_INVALID_ARGUMENT;
    tpg_status st = tpg__plan_compute_ring(cfg, m, n, k, l, copy_chunks, (modes & TPG_PLAN_RS_RING) != 0, &ps);
    if (st != TPG_OK) return st;
    ps.overlap = (modes & TPG_PLAN_OVERLAP) != 0;
    ps.pulls = tpg_gather_pulls(ps.gathered, ps.copy_chunks, ps.overlap && cfg->schedule->tp > 1,
                                (modes & TPG_PLAN_COPY_ENGINE) != 0);
    if (json)
        write_json(f, cfg, m, n, k, l, &ps);
    else
        write_text(f, cfg, m, n, k, l, &ps);
    return TPG_OK;
}
