/* The NCCL transport's steps (runtime/src/nccl_plan.c): every generated schedule at every TP becomes steps whose
 * sends and receives pair up across ranks, each received slot feeds the stage the step names, and every shard
 * (all-gather) or partial (reduce-scatter) a stage needs arrives exactly once. Broken tables are refused. No GPU. */
#include <string.h>

#include "gemm_params.h"
#include "nccl_plan.h"
#include "tpg_test.h"
#include "tpgemm.h"

static const tpg_stage_entry *entry(const tpg_schedule_table *t, int r, int s) { return &t->stages[r * t->tp + s]; }

/* What the steps must mean for rank r of t (beyond pairing): 0 when it holds. */
static int check_meaning(const tpg_schedule_table *t, int r, const tpg_nccl_step *st) {
    int bad = 0, seen[TPG_MAX_TP] = {0};
    for (int i = 0; i < t->tp - 1; i++) {
        if (t->comm == TPG_COMM_ALLGATHER) {
            const tpg_stage_entry *e = entry(t, r, st[i].stage);
            bad |= st[i].stage != i + 1 || st[i].recv_peer != e->peer || st[i].recv_slot != e->src_slot;
            bad |= st[i].recv_peer == r || st[i].send_peer == r;
            if (st[i].recv_peer >= 0) seen[st[i].recv_peer]++;
        } else {
            const tpg_stage_entry *e = entry(t, r, i), *f = entry(t, r, i + 1);
            bad |= st[i].stage != i || st[i].send_slot != e->dst_slot || st[i].send_peer != e->dst_peer;
            bad |= st[i].recv_slot != f->src_slot || st[i].recv_peer != f->peer;
        }
    }
    /* all-gather: every other rank's shard arrives once */
    for (int q = 0; t->comm == TPG_COMM_ALLGATHER && q < t->tp; q++) bad |= seen[q] != (q != r);
    if (bad) fprintf(stderr, "%s tp %d rank %d: steps do not match the table\n", t->name, t->tp, r);
    return bad;
}

TPG_TEST(every_generated_schedule_pairs_up) {
    int checked = 0;
    for (int c = 0; c < tpg_num_configs; c++) {
        const tpg_schedule_table *t = tpg_configs[c].schedule;
        if (t->tp < 2) continue;
        char why[256] = "";
        const int pairs = tpg_nccl_plan_pairs(t, why, sizeof why);
        if (pairs != 0) fprintf(stderr, "%s: %s\n", tpg_configs[c].name, why);
        TPG_EXPECT(pairs == 0);
        for (int r = 0; r < t->tp; r++) {
            tpg_nccl_step st[TPG_MAX_TP - 1];
            TPG_EXPECT_EQ_INT(tpg_nccl_plan(t, r, st, why, sizeof why), t->tp - 1);
            TPG_EXPECT(check_meaning(t, r, st) == 0);
        }
        checked++;
    }
    TPG_EXPECT(checked >= 8); /* both comms at TP = 2, 4 and 8 at least */
}

/* A copy of the first generated table of (comm, tp) with its stage entries in `stages` (to break). */
static int copy_table(tpg_comm comm, int tp, tpg_schedule_table *out, tpg_stage_entry *stages) {
    for (int c = 0; c < tpg_num_configs; c++) {
        const tpg_schedule_table *t = tpg_configs[c].schedule;
        if (t->comm != comm || t->tp != tp) continue;
        *out = *t;
        memcpy(stages, t->stages, sizeof *stages * (size_t)(tp * tp));
        out->stages = stages;
        return 1;
    }
    return 0;
}

TPG_TEST(broken_tables_are_refused) {
    tpg_schedule_table t;
    tpg_stage_entry st[TPG_MAX_TP * TPG_MAX_TP];
    char why[256] = "";
    tpg_nccl_step steps[TPG_MAX_TP - 1];
    /* reduce-scatter: rank 1's stage 0 partial goes to the wrong rank (its receiver adds someone else's) */
    TPG_EXPECT(copy_table(TPG_COMM_REDUCE_SCATTER, 4, &t, st));
    st[1 * 4 + 0].dst_peer = (signed char)((st[1 * 4 + 0].dst_peer + 1) % 4);
    TPG_EXPECT(tpg_nccl_plan_pairs(&t, why, sizeof why) != 0);
    TPG_EXPECT(strlen(why) > 0);
    /* all-gather: two ranks read rank 0's shard at stage 1 */
    TPG_EXPECT(copy_table(TPG_COMM_ALLGATHER, 4, &t, st));
    for (int r = 1; r < 4; r++)
        if (st[r * 4 + 1].peer != 0 && r != 0) {
            st[r * 4 + 1].peer = 0;
            break;
        }
    TPG_EXPECT(tpg_nccl_plan_pairs(&t, why, sizeof why) != 0);
    TPG_EXPECT_STR_CONTAINS(why, "several ranks");
    /* all-gather: a stage without a peer's shard */
    TPG_EXPECT(copy_table(TPG_COMM_ALLGATHER, 2, &t, st));
    st[0 * 2 + 1].src_slot = -1;
    TPG_EXPECT(tpg_nccl_plan(&t, 0, steps, why, sizeof why) < 0);
    TPG_EXPECT_STR_CONTAINS(why, "reads no peer's shard");
    /* ... or one that reads the rank's own shard as a peer's */
    TPG_EXPECT(copy_table(TPG_COMM_ALLGATHER, 2, &t, st));
    st[0 * 2 + 1].peer = 0;
    TPG_EXPECT(tpg_nccl_plan(&t, 0, steps, why, sizeof why) < 0);
    TPG_EXPECT_STR_CONTAINS(why, "rank 0 stage 1 reads no peer's shard");
    /* reduce-scatter: rank 1 sends its stage 0 partial into another slot than its receiver adds */
    TPG_EXPECT(copy_table(TPG_COMM_REDUCE_SCATTER, 4, &t, st));
    st[1 * 4 + 0].dst_slot = 5;
    TPG_EXPECT(tpg_nccl_plan_pairs(&t, why, sizeof why) != 0);
    TPG_EXPECT_STR_CONTAINS(why, "from rank 1, whose stage 0 sends slot 5");
    /* reduce-scatter: one slot sent by two stages of a rank (and received twice by its neighbour) */
    TPG_EXPECT(copy_table(TPG_COMM_REDUCE_SCATTER, 4, &t, st));
    for (int r = 0; r < 4; r++) st[r * 4 + 1].dst_slot = st[r * 4 + 0].dst_slot;
    for (int r = 0; r < 4; r++) st[r * 4 + 2].src_slot = st[r * 4 + 1].src_slot;
    TPG_EXPECT(tpg_nccl_plan(&t, 0, steps, why, sizeof why) < 0);
    TPG_EXPECT_STR_CONTAINS(why, "both send slot");
}

/* 0 when r's bands, at most `most` (the NCCL transport's or copy-engine partials' cap), cover the slot's bytes and
 * the tile flags once, in order, in whole tile rows. */
static int check_bands(tpg_nccl_rows r, int most) {
    const int64_t tm = (r.rows + r.tile_rows - 1) / r.tile_rows, flags = r.batches * tm * r.tiles_n;
    const int bands = most == TPG_NCCL_RS_BANDS ? tpg_nccl_band_count(&r) : tpg_nccl_band_count_at_most(&r, most);
    size_t next = 0;
    int64_t tile = 0;
    int bad = bands < 1 || bands > most || (bands < most && bands != r.batches * tm);
    for (int i = 0; i < bands; i++) {
        const tpg_nccl_band b = tpg_nccl_band_of(&r, i, bands);
        bad |= b.offset != next || b.tile0 != tile || b.bytes == 0 || b.tiles % r.tiles_n != 0 || b.tiles == 0;
        next = b.offset + b.bytes, tile = b.tile0 + b.tiles;
    }
    bad |= next != (size_t)(r.batches * r.rows) * r.row_bytes || tile != flags;
    if (bad) fprintf(stderr, "bands of %lld x %lld rows (tile %lld, %lld per row) wrong\n", (long long)r.batches,
                     (long long)r.rows, (long long)r.tile_rows, (long long)r.tiles_n);
    return bad;
}

TPG_TEST(bands_cover_the_partial_and_its_flags_once) {
    const int64_t rows[] = {128, 1000, 4096, 8192, 64, 129};
    const int64_t tiles[] = {64, 128};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        for (size_t j = 0; j < sizeof tiles / sizeof tiles[0]; j++)
            for (int64_t batches = 1; batches <= 3; batches++)
                for (int most = TPG_NCCL_RS_BANDS; most <= TPG_CE_RS_BANDS; most += TPG_CE_RS_BANDS - TPG_NCCL_RS_BANDS)
                    TPG_EXPECT(check_bands((tpg_nccl_rows){batches, rows[i], tiles[j], 5, 6 * 2}, most) == 0);
    /* 70B-o's stage at TP = 2 (8192 rows of 128-row tiles, 64 tiles a row): the copy chains' 16 bands of 4 tile rows */
    const tpg_nccl_rows o70 = {1, 8192, 128, 64, 8192 * 2};
    TPG_EXPECT(tpg_nccl_band_count_at_most(&o70, TPG_CE_RS_BANDS) == 16 && tpg_nccl_band_count(&o70) == 4);
    TPG_EXPECT(tpg_nccl_band_of(&o70, 1, 16).tile0 == 4 * 64 && tpg_nccl_band_of(&o70, 1, 16).bytes == 512u * 8192 * 2);
    /* a band boundary inside a batch's ragged last tile row is not a row boundary of the slot: none is made */
    const tpg_nccl_rows ragged = {2, 1000, 128, 3, 8};
    const tpg_nccl_band b = tpg_nccl_band_of(&ragged, 2, 4); /* tile rows 8..11: batch 1 from its first row */
    TPG_EXPECT(b.offset == 1000 * 8 && b.tile0 == 8 * 3);
}

/* Over NCCL a TP >= 2 GEMM leaves TPG_NCCL_FREE_SMS SMs to NCCL's kernels and needs as many left for itself; a TP = 1
 * context transfers nothing, so a small device (a MIG slice of 16 SMs) is not refused there. */
TPG_TEST(nccl_leaves_its_sms_only_at_tp_2_and_more) {
    const int f = TPG_NCCL_FREE_SMS;
    TPG_EXPECT(tpg_nccl_gemm_sms(132, 2) == 132 - f && tpg_nccl_gemm_sms(132, 8) == 132 - f);
    TPG_EXPECT(tpg_nccl_gemm_sms(2 * f + 1, 2) == f + 1);
    TPG_EXPECT(tpg_nccl_gemm_sms(2 * f, 2) == 0 && tpg_nccl_gemm_sms(f, 4) == 0);
    TPG_EXPECT(tpg_nccl_gemm_sms(132, 1) == 132 && tpg_nccl_gemm_sms(2 * f, 1) == 2 * f);
    TPG_EXPECT(tpg_nccl_gemm_sms(1, 1) == 1);
}

/* nccl_wait.c aborts a launch still busy a second after it gave up: by its own timeout, and also by a partial it
 * received incomplete, which sets no timeout bit (a launch whose peer stopped after giving up would hang otherwise);
 * never by an earlier launch's give-up. */
TPG_TEST(a_launch_gave_up_by_timeout_or_by_an_incomplete_partial) {
    TPG_EXPECT(tpg_nccl_launch_gave_up(TPG_DEVICE_TIMEOUT, 7, 7) == TPG_DEVICE_TIMEOUT);
    TPG_EXPECT(tpg_nccl_launch_gave_up(TPG_DEVICE_TIMEOUT | TPG_DEVICE_PEER_GAVE_UP, 7, 7) == TPG_DEVICE_TIMEOUT);
    TPG_EXPECT(tpg_nccl_launch_gave_up(TPG_DEVICE_PEER_GAVE_UP, 7, 7) == TPG_DEVICE_PEER_GAVE_UP);
    TPG_EXPECT(tpg_nccl_launch_gave_up(TPG_DEVICE_TIMEOUT, 6, 7) == 0);      /* the previous launch's, unsynced */
    TPG_EXPECT(tpg_nccl_launch_gave_up(TPG_DEVICE_PEER_GAVE_UP, 6, 7) == 0);
    TPG_EXPECT(tpg_nccl_launch_gave_up(0, 0, 1) == 0); /* no give-up yet: the word starts at 0 */
    TPG_EXPECT(tpg_nccl_launch_gave_up(0, 0, 0) == 0); /* a new op before its first launch: both words 0 */
    TPG_EXPECT(tpg_nccl_launch_gave_up(0, 7, 7) == 0); /* a sync cleared the bits; the next launch not started */
}

TPG_TEST_MAIN(TPG_CASE(every_generated_schedule_pairs_up), TPG_CASE(broken_tables_are_refused),
              TPG_CASE(bands_cover_the_partial_and_its_flags_once), TPG_CASE(nccl_leaves_its_sms_only_at_tp_2_and_more),
              TPG_CASE(a_launch_gave_up_by_timeout_or_by_an_incomplete_partial))
