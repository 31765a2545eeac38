/* The Hilbert tile order (runtime/src/raster.c): a permutation of the grid whose steps are always to a
 * neighbour (diagonal only when exactly one size is odd), for many grid shapes including the anchors'. */
#include <stdlib.h>
#include <string.h>

#include "raster.h"
#include "tpg_test.h"

/* 0 when out is a permutation of the grid with only neighbour steps; counts diagonal steps. */
static int check_order(int m, int n, int *diagonals) {
    int32_t *out = malloc(sizeof(int32_t) * (size_t)m * n);
    unsigned char *seen = calloc((size_t)m * n, 1);
    int bad = !out || !seen || tpg_raster_hilbert(m, n, out) != (int64_t)m * n;
    *diagonals = 0;
    for (int64_t r = 0; !bad && r < (int64_t)m * n; r++) {
        const int um = out[r] >> 16, un = out[r] & 0xffff;
        if (um >= m || un >= n || seen[(size_t)um * n + un]++) bad = 1;
        if (r > 0) {
            const int dm = abs(um - (out[r - 1] >> 16)), dn = abs(un - (out[r - 1] & 0xffff));
            if (dm > 1 || dn > 1 || dm + dn == 0) bad = 1;
            *diagonals += dm + dn == 2;
        }
    }
    free(out);
    free(seen);
    return bad;
}

TPG_TEST(every_grid_up_to_40_is_a_walk_over_neighbours) {
    for (int m = 1; m <= 40; m++)
        for (int n = 1; n <= 40; n++) {
            int diag = 0;
            TPG_ASSERT_EQ_INT(check_order(m, n, &diag), 0);
            if (m % 2 == n % 2) TPG_EXPECT_EQ_INT(diag, 0); /* diagonals need exactly one odd size */
        }
}

TPG_TEST(anchor_grids) {
    /* units of the default ping-pong 128x128 at TP = 2: 405B-fc1 (8192 x 53248 per stage), 8B-o (4096 x 4096) */
    const int grids[][2] = {{64, 416}, {32, 32}, {64, 40}, {1, 1000}, {1000, 1}, {3, 5}};
    for (size_t i = 0; i < sizeof grids / sizeof grids[0]; i++) {
        int diag = 0;
        TPG_EXPECT_EQ_INT(check_order(grids[i][0], grids[i][1], &diag), 0);
    }
    int32_t one;
    TPG_EXPECT_EQ_INT(tpg_raster_hilbert(0, 4, &one), -1);
    TPG_EXPECT_EQ_INT(tpg_raster_hilbert(1, 40000, &one), -1);
}

TPG_TEST(starts_at_the_origin_and_stays_local) {
    /* a run of 64 consecutive units (a wave of clusters) spans few rows and columns */
    const int m = 64, n = 416;
    int32_t *out = malloc(sizeof(int32_t) * m * n);
    TPG_ASSERT(out != NULL);
    TPG_ASSERT_EQ_INT(tpg_raster_hilbert(m, n, out), (int64_t)m * n);
    TPG_EXPECT_EQ_INT(out[0], 0);
    int worst = 0;
    for (int r0 = 0; r0 + 64 <= m * n; r0 += 64) {
        int lo_m = 1 << 30, hi_m = -1, lo_n = 1 << 30, hi_n = -1;
        for (int r = r0; r < r0 + 64; r++) {
            const int um = out[r] >> 16, un = out[r] & 0xffff;
            lo_m = um < lo_m ? um : lo_m, hi_m = um > hi_m ? um : hi_m;
            lo_n = un < lo_n ? un : lo_n, hi_n = un > hi_n ? un : hi_n;
        }
        const int span = (hi_m - lo_m + 1) + (hi_n - lo_n + 1);
        worst = span > worst ? span : worst;
    }
    TPG_EXPECT(worst <= 40); /* a row-major walk would span 1 + 64 rows and columns at best */
    free(out);
}

/* Units are packed as y << 16 | x in 32 bits: up to 0x7fff a side, and nothing written past it. */
TPG_TEST(sides_past_0x7fff_are_refused) {
    int32_t out[1] = {-7};
    TPG_EXPECT_EQ_INT(tpg_raster_hilbert(0x8000, 1, out), -1);
    TPG_EXPECT_EQ_INT(tpg_raster_hilbert(1, 0x8000, out), -1);
    TPG_EXPECT_EQ_INT(tpg_raster_hilbert(0, 1, out), -1);
    TPG_EXPECT_EQ_INT(tpg_raster_hilbert(1, 1, NULL), -1);
    TPG_EXPECT_EQ_INT(out[0], -7);
    int32_t *row = malloc(0x7fff * sizeof *row);
    TPG_ASSERT(row != NULL);
    TPG_EXPECT_EQ_INT(tpg_raster_hilbert(0x7fff, 1, row), 0x7fff);
    TPG_EXPECT_EQ_INT(row[0x7ffe], (0x7ffe << 16) | 0); /* the last unit of the one column: y = 0x7ffe */
    free(row);
}

/* The table's grid is the kernel's (scheduler.cuh: ceil(tiles / cluster) of ceil(outputs / tile)): a ragged edge
 * and an odd tile count under a cluster of 2 each still get their unit, and exact sizes get no extra one. */
TPG_TEST(the_grid_is_the_kernels_units_ragged_edges_rounded_up) {
    int64_t um = 0, un = 0;
    tpg_raster_grid(8192, 4096, 128, 256, 1, 1, &um, &un);
    TPG_EXPECT_EQ_INT(um, 64); TPG_EXPECT_EQ_INT(un, 16);
    tpg_raster_grid(2900, 5000, 128, 256, 2, 1, &um, &un); /* 23 x 20 tiles */
    TPG_EXPECT_EQ_INT(um, 12); TPG_EXPECT_EQ_INT(un, 20);
    tpg_raster_grid(2900, 5000, 128, 256, 1, 2, &um, &un);
    TPG_EXPECT_EQ_INT(um, 23); TPG_EXPECT_EQ_INT(un, 10);
    tpg_raster_grid(3072, 4864, 128, 256, 2, 2, &um, &un); /* 24 x 19 tiles */
    TPG_EXPECT_EQ_INT(um, 12); TPG_EXPECT_EQ_INT(un, 10);
    tpg_raster_grid(1, 1, 128, 160, 1, 1, &um, &un);
    TPG_EXPECT_EQ_INT(um, 1); TPG_EXPECT_EQ_INT(un, 1);
}

TPG_TEST_MAIN(TPG_CASE(every_grid_up_to_40_is_a_walk_over_neighbours), TPG_CASE(anchor_grids),
              TPG_CASE(starts_at_the_origin_and_stays_local), TPG_CASE(sides_past_0x7fff_are_refused),
              TPG_CASE(the_grid_is_the_kernels_units_ragged_edges_rounded_up))
