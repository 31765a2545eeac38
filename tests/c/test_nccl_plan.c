/* The NCCL transport's steps (runtime/src/nccl_plan.c): every generated schedule at every TP becomes steps whose
 * sends and receives pair up across ranks, each received slot feeds the stage the step names, and every shard
 * (all-gather) or partial (reduce-scatter) a stage needs arrives exactly once. Broken tables are refused. No GPU. */
#include <string.h>

#include "gemm_params.h"
#include "nccl_plan.h"
#include "tpg_test.h"

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
    /* reduce-scatter: one slot sent by two stages of a rank (and received twice by its neighbour) */
    TPG_EXPECT(copy_table(TPG_COMM_REDUCE_SCATTER, 4, &t, st));
    for (int r = 0; r < 4; r++) st[r * 4 + 1].dst_slot = st[r * 4 + 0].dst_slot;
    for (int r = 0; r < 4; r++) st[r * 4 + 2].src_slot = st[r * 4 + 1].src_slot;
    TPG_EXPECT(tpg_nccl_plan(&t, 0, steps, why, sizeof why) < 0);
    TPG_EXPECT_STR_CONTAINS(why, "both send slot");
}

TPG_TEST_MAIN(TPG_CASE(every_generated_schedule_pairs_up), TPG_CASE(broken_tables_are_refused))
