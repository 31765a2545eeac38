/* The stream-K tail's arithmetic (templates/kernels/stream_k.h), which the kernel's producer and consumers
 * and the runtime share: the region policy, and for many (CTAs, tiles, k-blocks) that the CTAs' fragments
 * cover every k-block of the region exactly once, that each tile has one finisher which lists exactly
 * the CTAs that computed its other k-blocks, and that every CTA contributes to at most one tile, first.
 * No GPU needed. */
#include <stdlib.h>
#include <string.h>

#include "stream_k.h"
#include "tpg_test.h"

TPG_TEST(region_is_the_partial_round_plus_one) {
    /* 8192 x 4096 at 128x256 on 132 SMs: 1024 tiles of 32 k-blocks, 100 in the last round */
    TPG_EXPECT_EQ_INT(tpg_sk_tiles(1024, 132, 32), 232);
    /* fewer tiles than two rounds: all of them */
    TPG_EXPECT_EQ_INT(tpg_sk_tiles(200, 132, 32), 200);
    TPG_EXPECT_EQ_INT(tpg_sk_tiles(64, 132, 128), 64);
}

TPG_TEST(no_region_when_it_cannot_gain) {
    TPG_EXPECT_EQ_INT(tpg_sk_tiles(1056, 132, 32), 0); /* whole rounds */
    TPG_EXPECT_EQ_INT(tpg_sk_tiles(0, 132, 32), 0);
    TPG_EXPECT_EQ_INT(tpg_sk_tiles(100, 0, 32), 0);
    TPG_EXPECT_EQ_INT(tpg_sk_tiles(1023, 132, 1), 0);  /* one k-block per tile: nothing to split */
    TPG_EXPECT_EQ_INT(tpg_sk_tiles(10, 132, 16), 0);   /* ~1 k-block per CTA: all fixup */
    /* 131 of 132 in the last round: the even split saves < 1 k-block, the fixup costs 2 */
    TPG_EXPECT_EQ_INT(tpg_sk_tiles(131 + 132, 132, 32), 0);
    /* the edge: 123 in the last round (region 255, 62 k-blocks a CTA) gains exactly the fixup's 2 of the two rounds'
     * 64 - a tie takes the region; 124 (63 a CTA) gains 1 */
    TPG_EXPECT_EQ_INT(tpg_sk_tiles(1056 + 123, 132, 32), 255);
    TPG_EXPECT_EQ_INT(tpg_sk_tiles(1056 + 124, 132, 32), 0);
    /* the kernels' 32-bit split: 132 * 232 * 80000 k-blocks would overflow */
    TPG_EXPECT_EQ_INT(tpg_sk_tiles(1024, 132, 80000), 0);
    TPG_EXPECT_EQ_INT(tpg_sk_tiles(1024, 132, 7000), 232);
}

/* Only one-stage launches have a region: TP = 1, and the gathered and one-hop walks' one GEMM of all rows (70B-qkv
 * at 32 tokens, TP = 2: 40 tiles of 64x128 with 128 k-blocks on 132 SMs - every tile); a ring of two stages has
 * none, and neither has a k too long for the kernels' 32-bit split. */
TPG_TEST(only_one_stage_launches_have_a_region) {
    TPG_EXPECT_EQ_INT(tpg_sk_launch_tiles(40, 132, 128, 1), 40);
    TPG_EXPECT_EQ_INT(tpg_sk_launch_tiles(40, 132, 128, 2), 0);
    TPG_EXPECT_EQ_INT(tpg_sk_launch_tiles(1024, 132, 32, 1), tpg_sk_tiles(1024, 132, 32));
    TPG_EXPECT_EQ_INT(tpg_sk_launch_tiles(40, 132, 0x80000000LL, 1), 0);
}

/* Checks one configuration; returns 0 when every property holds. */
static int check_split(int ctas, int sk_tiles, int kb) {
    const int iters = sk_tiles * kb;
    int *seen = calloc((size_t)iters, sizeof *seen);
    int *finisher = malloc((size_t)sk_tiles * sizeof *finisher);
    /* per tile: its contributions, and the contributors its finisher waits for (the count it waits for) */
    int *counted = calloc((size_t)sk_tiles, sizeof *counted);
    int *awaited = calloc((size_t)sk_tiles, sizeof *awaited);
    int bad = !seen || !finisher || !counted || !awaited;
    for (int t = 0; !bad && t < sk_tiles; t++) finisher[t] = -1;
    for (int c = 0; !bad && c < ctas; c++) {
        tpg_sk_frag f[TPG_SK_MAX_FRAGS];
        const int n = tpg_sk_count(c, ctas, sk_tiles, kb);
        if (n > TPG_SK_MAX_FRAGS) bad = 1;
        for (int i = 0; !bad && i < n; i++) f[i] = tpg_sk_frag_at(c, ctas, sk_tiles, kb, i);
        int covered = 0;
        int contributions = 0;
        for (int i = 0; i < n; i++) {
            if (f[i].k0 < 0 || f[i].k1 > kb || f[i].k0 >= f[i].k1 || f[i].tile < 0 || f[i].tile >= sk_tiles) bad = 1;
            if (bad) break;
            for (int k = f[i].k0; k < f[i].k1; k++) seen[f[i].tile * kb + k]++;
            covered += f[i].k1 - f[i].k0;
            if (f[i].k1 < kb) {
                contributions++;
                counted[f[i].tile]++;
                if (i != 0) bad = 1; /* a contribution is computed first */
            } else {
                if (finisher[f[i].tile] >= 0) bad = 1;
                finisher[f[i].tile] = c;
                /* the listed contributors are exactly the owners of the tile's earlier k-blocks */
                const int lo = tpg_sk_first_contributor(c, ctas, sk_tiles, kb, f[i]);
                awaited[f[i].tile] = c - lo;
                for (int k = 0; k < f[i].k0; k++) {
                    const int o = tpg_sk_owner(f[i].tile * kb + k, ctas, iters);
                    if (o < lo || o >= c) bad = 1;
                }
                if (f[i].k0 == 0 && lo != c) bad = 1;
            }
        }
        if (contributions > 1) bad = 1;
        if (covered != tpg_sk_begin(c + 1, ctas, iters) - tpg_sk_begin(c, ctas, iters)) bad = 1;
    }
    for (int i = 0; !bad && i < iters; i++)
        if (seen[i] != 1) bad = 1;
    for (int t = 0; !bad && t < sk_tiles; t++)
        if (finisher[t] < 0 || counted[t] != awaited[t]) bad = 1; /* the finisher's count wait would not end */
    free(seen);
    free(finisher);
    free(counted);
    free(awaited);
    return bad;
}

TPG_TEST(fragments_cover_each_k_block_once_with_one_finisher_per_tile) {
    const int ctas[] = {1, 2, 7, 66, 131, 132};
    const int kbs[] = {4, 5, 32, 64, 127, 256};
    for (size_t a = 0; a < sizeof ctas / sizeof ctas[0]; a++)
        for (size_t b = 0; b < sizeof kbs / sizeof kbs[0]; b++)
            for (long long tiles = 1; tiles <= 3 * ctas[a] + 1; tiles += 1 + tiles / 7) {
                const int region = tpg_sk_tiles(tiles, ctas[a], kbs[b]);
                if (!region) continue;
                TPG_EXPECT(region < 2 * ctas[a]);
                TPG_EXPECT(check_split(ctas[a], region, kbs[b]) == 0);
            }
}

TPG_TEST(owner_inverts_begin) {
    const int iters = 232 * 32;
    for (int c = 0; c < 132; c++) {
        const int b = tpg_sk_begin(c, 132, iters), e = tpg_sk_begin(c + 1, 132, iters);
        TPG_EXPECT_EQ_INT(tpg_sk_owner(b, 132, iters), c);
        TPG_EXPECT_EQ_INT(tpg_sk_owner(e - 1, 132, iters), c);
    }
}

TPG_TEST_MAIN(TPG_CASE(region_is_the_partial_round_plus_one), TPG_CASE(no_region_when_it_cannot_gain),
              TPG_CASE(only_one_stage_launches_have_a_region),
              TPG_CASE(fragments_cover_each_k_block_once_with_one_finisher_per_tile), TPG_CASE(owner_inverts_begin))
