/* tpg_first_unit (templates/kernels/spread.h): in a spread walk every unit has exactly one CTA, so no tile is
 * skipped or computed twice; launches it must not spread keep CTA c on unit c. */
#include "tpg_test.h"
#include "spread.h"

#include <stdlib.h>

/* Units taken by the clusters of one launch, each counted (a first unit >= total: the cluster walks nothing); returns
 * 0 when each of 0 .. total-1 is taken exactly once. */
static int check_cover(int total, int stages, int clusters) {
    int *taken = calloc((size_t)total + 1, sizeof *taken);
    int bad = !taken;
    for (int c = 0; !bad && c < clusters; c++) {
        const int u = tpg_first_unit(total, stages, c, clusters);
        if (u < 0) bad = 1;
        else if (u < total) taken[u]++;
    }
    for (int u = 0; !bad && u < total; u++)
        if (taken[u] != 1) bad = 1;
    free(taken);
    return bad;
}

TPG_TEST(every_unit_has_one_cta) {
    const int clusters[] = {1, 2, 7, 66, 128, 131, 132};
    for (size_t a = 0; a < sizeof clusters / sizeof clusters[0]; a++)
        for (int total = 1; total <= clusters[a]; total++) TPG_EXPECT(check_cover(total, 1, clusters[a]) == 0);
}

TPG_TEST(spreads_short_one_stage_walks_only) {
    /* 32 tiles on 132 CTAs: unit u on CTA floor(u * 132 / 32), CTA 1 idle */
    TPG_EXPECT_EQ_INT(tpg_first_unit(32, 1, 0, 132), 0);
    TPG_EXPECT_EQ_INT(tpg_first_unit(32, 1, 4, 132), 1);
    TPG_EXPECT_EQ_INT(tpg_first_unit(32, 1, 1, 132), 32);
    TPG_EXPECT_EQ_INT(tpg_first_unit(32, 1, 127, 132), 31);
    TPG_EXPECT_EQ_INT(tpg_first_unit(32, 1, 128, 132), 32);
    /* 3/4 of the grid and more, several stages, more units than CTAs: CTA c on unit c */
    TPG_EXPECT_EQ_INT(tpg_first_unit(100, 1, 5, 132), 5);
    TPG_EXPECT_EQ_INT(tpg_first_unit(99, 1, 4, 132), 3);
    TPG_EXPECT_EQ_INT(tpg_first_unit(32, 2, 4, 132), 4);
    TPG_EXPECT_EQ_INT(tpg_first_unit(1000, 1, 4, 132), 4);
}

TPG_TEST_MAIN(TPG_CASE(every_unit_has_one_cta), TPG_CASE(spreads_short_one_stage_walks_only))
