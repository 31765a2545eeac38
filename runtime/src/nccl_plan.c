/* The NCCL transport's steps from a schedule table (nccl_plan.h). */
#include <stdio.h>

#include "epoch.h"
#include "gemm_params.h" /* TPG_MAX_TP, TPG_DEVICE_* */
#include "nccl_plan.h"
#include "tpgemm.h" /* TPG_NCCL_FREE_SMS */

static const tpg_stage_entry *entry(const tpg_schedule_table *t, int rank, int s) { return &t->stages[rank * t->tp + s]; }

/* The one rank other than `rank` whose stage s consumes rank's shard: its index, -1 if none, -2 if several. */
static int shard_consumer(const tpg_schedule_table *t, int rank, int s) {
    int found = -1;
    for (int q = 0; q < t->tp; q++) {
        if (q == rank || entry(t, q, s)->peer != rank) continue;
        if (found >= 0) return -2;
        found = q;
    }
    return found;
}

static int allgather_step(const tpg_schedule_table *t, int rank, int s, tpg_nccl_step *st, char *why, size_t n) {
    const tpg_stage_entry *e = entry(t, rank, s);
    const int to = shard_consumer(t, rank, s);
    if (e->src_slot < 0 || e->peer < 0 || e->peer == rank) {
        snprintf(why, n, "schedule %s: rank %d stage %d reads no peer's shard", t->name, rank, s);
        return -1;
    }
    if (to == -2) {
        snprintf(why, n, "schedule %s: several ranks read rank %d's shard at stage %d", t->name, rank, s);
        return -1;
    }
    *st = (tpg_nccl_step){s, to, -1, e->peer, e->src_slot};
    return 0;
}

static int reduce_scatter_step(const tpg_schedule_table *t, int rank, int s, tpg_nccl_step *st, char *why, size_t n) {
    const tpg_stage_entry *e = entry(t, rank, s), *f = entry(t, rank, s + 1);
    if (e->dst_peer < 0 || e->dst_slot < 0 || f->src_slot < 0 || f->peer < 0) {
        snprintf(why, n, "schedule %s: rank %d's stage %d partial does not feed stage %d of a neighbour", t->name, rank,
                 s, s + 1);
        return -1;
    }
    const tpg_stage_entry *g = entry(t, f->peer, s); /* the sender of what stage s + 1 adds */
    if (g->dst_peer != rank || g->dst_slot != f->src_slot) {
        snprintf(why, n, "schedule %s: rank %d stage %d adds slot %d from rank %d, whose stage %d sends slot %d to "
                 "rank %d", t->name, rank, s + 1, f->src_slot, f->peer, s, g->dst_slot, g->dst_peer);
        return -1;
    }
    *st = (tpg_nccl_step){s, e->dst_peer, e->dst_slot, f->peer, f->src_slot};
    return 0;
}

int tpg_nccl_plan(const tpg_schedule_table *t, int rank, tpg_nccl_step *steps, char *why, size_t why_size) {
    if (t->tp < 2) {
        snprintf(why, why_size, "schedule %s: TP = %d transfers nothing", t->name, t->tp);
        return -1;
    }
    for (int i = 0; i < t->tp - 1; i++) {
        const int rc = t->comm == TPG_COMM_ALLGATHER ? allgather_step(t, rank, i + 1, &steps[i], why, why_size)
                                                     : reduce_scatter_step(t, rank, i, &steps[i], why, why_size);
        if (rc) return -1;
        /* a slot written by two stages: the later stage's wait would pass on the earlier stage's tile flags */
        for (int j = 0; j < i && t->comm == TPG_COMM_REDUCE_SCATTER; j++)
            if (steps[j].send_slot == steps[i].send_slot) {
                snprintf(why, why_size, "schedule %s: rank %d's stages %d and %d both send slot %d", t->name, rank, j,
                         i, steps[i].send_slot);
                return -1;
            }
    }
    return t->tp - 1;
}

int tpg_nccl_plan_pairs(const tpg_schedule_table *t, char *why, size_t why_size) {
    tpg_nccl_step plan[TPG_MAX_TP][TPG_MAX_TP - 1];
    if (t->tp > TPG_MAX_TP) {
        snprintf(why, why_size, "schedule %s: tp = %d > %d", t->name, t->tp, TPG_MAX_TP);
        return -1;
    }
    for (int r = 0; r < t->tp; r++)
        if (tpg_nccl_plan(t, r, plan[r], why, why_size) < 0) return -1;
    for (int i = 0; i < t->tp - 1; i++)
        for (int r = 0; r < t->tp; r++) {
            const tpg_nccl_step *a = &plan[r][i];
            if (a->send_peer >= 0 && plan[a->send_peer][i].recv_peer != r) {
                snprintf(why, why_size, "schedule %s step %d: rank %d sends to rank %d, which receives from rank %d",
                         t->name, i, r, a->send_peer, plan[a->send_peer][i].recv_peer);
                return -1;
            }
            if (a->recv_peer >= 0 && plan[a->recv_peer][i].send_peer != r) {
                snprintf(why, why_size, "schedule %s step %d: rank %d receives from rank %d, which sends to rank %d",
                         t->name, i, r, a->recv_peer, plan[a->recv_peer][i].send_peer);
                return -1;
            }
        }
    return 0;
}

static int64_t tiles_m(const tpg_nccl_rows *r) { return (r->rows + r->tile_rows - 1) / r->tile_rows; }

/* First slot row of flattened tile row j (j = batches * tiles_m: the end of the slot). */
static int64_t row_of(const tpg_nccl_rows *r, int64_t j) {
    const int64_t tm = tiles_m(r);
    return j / tm * r->rows + j % tm * r->tile_rows;
}

int tpg_nccl_band_count_at_most(const tpg_nccl_rows *r, int most) {
    const int64_t tile_rows = r->batches * tiles_m(r);
    return tile_rows < most ? (int)tile_rows : most;
}

int tpg_ce_band_count(const tpg_nccl_rows *r, size_t slot_bytes) {
    const size_t by_bytes = slot_bytes / TPG_CE_RS_BAND_BYTES;
    const int most = by_bytes < 1 ? 1 : by_bytes < TPG_CE_RS_BANDS ? (int)by_bytes : TPG_CE_RS_BANDS;
    return tpg_nccl_band_count_at_most(r, most);
}

int tpg_nccl_band_count(const tpg_nccl_rows *r) { return tpg_nccl_band_count_at_most(r, TPG_NCCL_RS_BANDS); }

tpg_nccl_band tpg_nccl_band_of(const tpg_nccl_rows *r, int i, int bands) {
    const int64_t total = r->batches * tiles_m(r), j0 = total * i / bands, j1 = total * (i + 1) / bands;
    const int64_t row0 = row_of(r, j0), row1 = row_of(r, j1);
    return (tpg_nccl_band){(size_t)row0 * r->row_bytes, (size_t)(row1 - row0) * r->row_bytes, j0 * r->tiles_n,
                           (j1 - j0) * r->tiles_n};
}

int tpg_nccl_gemm_sms(int sm_count, int tp) {
    if (tp < 2) return sm_count;
    return sm_count > 2 * TPG_NCCL_FREE_SMS ? sm_count - TPG_NCCL_FREE_SMS : 0;
}

unsigned int tpg_nccl_launch_gave_up(unsigned int status, unsigned int gave_up, unsigned int epoch) {
    /* the give-up word at the epoch and a give-up's bit: a wait of the launch timed out (TPG_DEVICE_TIMEOUT), or the
     * flag kernel found a received partial incomplete (TPG_DEVICE_PEER_GAVE_UP alone). The word alone is not enough:
     * before an op's first launch starts both words are 0, and after a sync cleared the status bits of a launch that
     * gave up its words stay until the next launch starts. */
    if (!(status & (TPG_DEVICE_TIMEOUT | TPG_DEVICE_PEER_GAVE_UP)) || !tpg_epoch_gave_up(gave_up, epoch)) return 0;
    return status & TPG_DEVICE_TIMEOUT ? TPG_DEVICE_TIMEOUT : TPG_DEVICE_PEER_GAVE_UP;
}
