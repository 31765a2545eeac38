/* Stream-K tail of the persistent tile walk (opt-in `stream_k: true`): plain C, shared by the kernels
 * (gemm_sm90_walk.cuh) and the runtime (runtime/src/stream_k.c decides the region and allocates the
 * workspace; tests/c/test_stream_k.c checks the arithmetic).
 *
 * Why: a persistent launch walks T tiles on P CTAs in ceil(T / P) rounds; when T mod P = r > 0 the last
 * round keeps only r CTAs busy. Every anchor problem but one of the local-GEMM benchmark loses ~3% that way
 * with 128x256 tiles on 132 SMs (8192x4096: 1024 tiles = 7.76 rounds run as 8).
 *
 * What: the last `sk_tiles` tiles of the walk (the partial round plus one full round, tpg_sk_tiles) form
 * the stream-K region. Its k-blocks, tile after tile, are cut into P contiguous ranges of equal length
 * (+-1), one per CTA, after the CTA's data-parallel tiles. A range covers pieces ("fragments") of at most
 * three tiles. The CTA that computes a tile's last k-block finishes the tile: it adds the fp32 partial
 * sums of the CTAs that computed the tile's earlier k-blocks (each left them in its own workspace slot and
 * added itself to the tile's count) and runs the epilogue. A CTA contributes to at most one tile - the last fragment of its
 * range, when that does not end its tile - and computes that fragment first, so the CTAs a finisher waits
 * for never wait themselves before publishing (no chains, no cycles; all CTAs are co-resident).
 *
 * Determinism: the ranges depend only on (P, sk_tiles, k-blocks), and a finisher adds its contributors in
 * increasing CTA order, so repeated calls give bitwise equal results.
 *
 * Measured (H200, 2026-12-01): 2-5% slower than without on the short-K local GEMMs - the fp32 slots
 * written and read by all CTAs at once, and 2-3 fragment starts per CTA, cost more than the even split
 * saves - hence opt-in (docs/PERF_NOTES.md). Where tiles are few and long (decode: at most 25% of the SMs with
 * 128+ k-blocks, or one row of them within a wave, too many to spread, with 192+), the shipped cooperative 64x128
 * with it (`*_sk64`) is the TP = 1 default through the split rule (runtime/src/config.c split_k): 1.22x the spread
 * ping-pong 64x128 there (docs/perf_notes/2026-12-03-d.md); its fix-up moves only the rows a tile has, through the
 * ring where they are at most 32 (gemm_sm90_fixup.cuh).
 */
#ifndef TPG_STREAM_K_H
#define TPG_STREAM_K_H

#ifdef __CUDACC__
#define TPG_SK_FN __host__ __device__ __forceinline__
#else
#define TPG_SK_FN static inline
#endif

/* A k-block of the region costs the same everywhere; a split tile costs its finisher about this many
 * k-blocks more (the contributors' partial sums written, read back and added). */
#define TPG_SK_FIXUP_KBLOCKS 2
/* A range shorter than this many k-blocks is not worth a split (mostly fixup). */
#define TPG_SK_MIN_KBLOCKS 4
/* Fragments per CTA: a range is shorter than two tiles' k-blocks (the region has fewer than 2P tiles). */
#define TPG_SK_MAX_FRAGS 3
/* The kernels split in 32-bit arithmetic (a 64-bit division is a call, whose saved registers spilled next
 * to the accumulators): a region is used only while ctas * sk_tiles * kb stays below this. */
#define TPG_SK_MAX_PRODUCT 2147483647LL

/* k-blocks [k0, k1) of region tile `tile` (0 = the region's first tile in walk order). */
typedef struct tpg_sk_frag {
    int tile, k0, k1;
} tpg_sk_frag;

/* Tiles of the stream-K region for `tiles` tiles of `kb` k-blocks on `ctas` CTAs; 0 = none. The region is
 * the partial last round plus one full round before it (all tiles when there are fewer), used only when
 * its even split beats the rounds it replaces by at least the fixup (a tie takes the region). */
TPG_SK_FN int tpg_sk_tiles(long long tiles, int ctas, int kb)
{
    if (tiles <= 0 || ctas <= 0 || kb <= 0) return 0;
    const long long r = tiles % ctas;
    if (r == 0) return 0;
    const long long region = tiles < ctas + r ? tiles : ctas + r;
    const long long rounds = (region + ctas - 1) / ctas;
    const long long per_cta = (region * kb + ctas - 1) / ctas;
    if (per_cta < TPG_SK_MIN_KBLOCKS || per_cta + TPG_SK_FIXUP_KBLOCKS > rounds * kb) return 0;
    if ((long long)ctas * region * kb > TPG_SK_MAX_PRODUCT) return 0;
    return (int)region;
}

/* The region of a launch of `stages` stages, `tiles` tiles of `kb` k-blocks on `ctas` CTAs: tpg_sk_tiles where the
 * launch has one stage (TP = 1, or the gathered and one-hop walks' one GEMM of all rows), 0 for any other - the
 * kernels split only one-stage launches (gemm_sm90_walk.cuh: tpg_sk_region), and in 32-bit k-blocks. */
TPG_SK_FN int tpg_sk_launch_tiles(long long tiles, int ctas, long long kb, int stages)
{
    if (stages != 1 || kb > 0x7fffffffLL) return 0;
    return tpg_sk_tiles(tiles, ctas, (int)kb);
}

/* First k-iteration (over the region's tiles, kb each) of CTA c's range: floor(c * iters / ctas). */
TPG_SK_FN int tpg_sk_begin(int c, int ctas, int iters) { return c * iters / ctas; }

/* The CTA whose range holds iteration x: the largest c with tpg_sk_begin(c) <= x. */
TPG_SK_FN int tpg_sk_owner(int x, int ctas, int iters) { return ((x + 1) * ctas - 1) / iters; }

/* How many fragments CTA c's range has (the tiles it touches), 0..TPG_SK_MAX_FRAGS. */
TPG_SK_FN int tpg_sk_count(int c, int ctas, int sk_tiles, int kb)
{
    const int iters = sk_tiles * kb;
    const int s = tpg_sk_begin(c, ctas, iters), e = tpg_sk_begin(c + 1, ctas, iters);
    return e > s ? (e - 1) / kb - s / kb + 1 : 0;
}

/* Fragment i (0 <= i < tpg_sk_count) of CTA c in processing order: a last fragment that does not end its
 * tile comes first (others wait for it), then the rest in k order. Computed, not tabulated, so kernels
 * keep no array of fragments (local memory next to 128 accumulators spilled). */
TPG_SK_FN tpg_sk_frag tpg_sk_frag_at(int c, int ctas, int sk_tiles, int kb, int i)
{
    const int iters = sk_tiles * kb;
    const int s = tpg_sk_begin(c, ctas, iters), e = tpg_sk_begin(c + 1, ctas, iters);
    const int n = tpg_sk_count(c, ctas, sk_tiles, kb);
    const int t0 = s / kb;
    const int contribution_last = n > 1 && e % kb != 0; /* the last fragment ends inside its tile */
    const int j = contribution_last ? (i == 0 ? n - 1 : i - 1) : i; /* index in k order */
    const int t = t0 + j;
    const int from = j == 0 ? s : t * kb;
    const int to = e < (t + 1) * kb ? e : (t + 1) * kb;
    tpg_sk_frag f;
    f.tile = t;
    f.k0 = from - t * kb;
    f.k1 = to - t * kb;
    return f;
}

/* The CTAs whose partial sums the finisher of fragment f (f.k1 == kb) adds: [*lo, c), empty when the
 * fragment starts its tile. */
TPG_SK_FN int tpg_sk_first_contributor(int c, int ctas, int sk_tiles, int kb, tpg_sk_frag f)
{
    if (f.k0 == 0) return c;
    return tpg_sk_owner(f.tile * kb, ctas, sk_tiles * kb);
}

#endif /* TPG_STREAM_K_H */
