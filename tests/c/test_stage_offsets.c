/* Where each stage of a device reads its fixed operand and writes the user's D (shapes.c: tpg_shapes_operand_row0,
 * tpg_shapes_final_offset; params.c sets the kernels' maps and pointers from them), for every generated schedule: a
 * device's final stages write every element of its D once and nothing outside it, and where the stages split a fixed
 * operand's rows they read each of its rows once. A wrong offset here corrupts D on the GPU (or reads rows twice)
 * while every launch succeeds; pure arithmetic, no GPU. */
#include <stdlib.h>
#include <string.h>

#include "shapes.h"
#include "tables.h"
#include "tpg_test.h"

/* 0 when rank's final stages of t cover its D (d_rows x d_cols) once, each a stage_m x stage_n block. */
static int check_d(const tpg_schedule_table *t, const tpg_shapes *s, int rank) {
    unsigned char *hit = calloc((size_t)(s->d_rows * s->d_cols), 1);
    int bad = !hit, finals = 0;
    for (int st = 0; !bad && st < t->tp; st++) {
        const tpg_stage_entry *e = &t->stages[rank * t->tp + st];
        if (e->dst_peer >= 0) continue; /* a partial for a neighbour: its slot, not D */
        finals++;
        const int64_t off = tpg_shapes_final_offset(t, s, e->block), r0 = off / s->d_cols, c0 = off % s->d_cols;
        bad |= r0 + s->stage_m > s->d_rows || c0 + s->stage_n > s->d_cols;
        for (int64_t r = r0; !bad && r < r0 + s->stage_m; r++)
            for (int64_t c = c0; c < c0 + s->stage_n; c++) bad |= hit[r * s->d_cols + c]++ != 0;
    }
    for (int64_t i = 0; !bad && i < s->d_rows * s->d_cols; i++) bad |= hit[i] != 1;
    free(hit);
    bad |= finals != (t->comm == TPG_COMM_ALLGATHER ? t->tp : 1);
    if (bad) fprintf(stderr, "%s: rank %d's final stages do not write its D once\n", t->name, rank);
    return bad;
}

/* 0 when rank's stages read operand x's shard rows once (stages splitting them) or all from row 0. */
static int check_rows(const tpg_schedule_table *t, const tpg_shapes *s, int rank, tpg_operand x) {
    const int64_t rows = x == TPG_OPERAND_A ? s->a_rows : s->b_rows;
    const tpg_dim dim = x == TPG_OPERAND_A ? TPG_DIM_M : TPG_DIM_N;
    const int split = t->rotating != x && t->stage_dim == dim;
    const int64_t extent = split ? tpg_shapes_stage(s, dim) : rows;
    unsigned char *hit = calloc((size_t)rows, 1);
    int bad = !hit;
    for (int st = 0; !bad && st < t->tp; st++) {
        const int64_t r0 = tpg_shapes_operand_row0(t, s, x, t->stages[rank * t->tp + st].block);
        bad |= r0 < 0 || r0 + extent > rows || (!split && r0 != 0);
        for (int64_t r = r0; split && !bad && r < r0 + extent; r++) bad |= hit[r]++ != 0;
    }
    for (int64_t r = 0; split && !bad && r < rows; r++) bad |= hit[r] != 1;
    free(hit);
    if (bad)
        fprintf(stderr, "%s: rank %d's stages read %s's rows wrongly\n", t->name, rank, x == TPG_OPERAND_A ? "A" : "B");
    return bad;
}

TPG_TEST(every_schedule_writes_d_once_and_reads_split_rows_once) {
    int checked = 0;
    for (int c = 0; c < tpg_num_configs; c++) {
        const tpg_schedule_table *t = tpg_configs[c].schedule;
        const int64_t side = 128 * t->tp; /* M = 1024, N = 640, K = 384 at TP = 8: distinct, every split whole */
        tpg_shapes s;
        char msg[256];
        TPG_ASSERT_EQ_INT(tpg_shapes_init(t, t->tp, side, side * 5 / 8, side * 3 / 8, 1, 2, &s, msg, sizeof msg),
                          TPG_OK);
        for (int r = 0; r < t->tp; r++) {
            TPG_EXPECT_EQ_INT(check_d(t, &s, r), 0);
            TPG_EXPECT_EQ_INT(check_rows(t, &s, r, TPG_OPERAND_A), 0);
            TPG_EXPECT_EQ_INT(check_rows(t, &s, r, TPG_OPERAND_B), 0);
        }
        checked++;
    }
    TPG_EXPECT(checked > 0);
}

TPG_TEST_MAIN(TPG_CASE(every_schedule_writes_d_once_and_reads_split_rows_once))
