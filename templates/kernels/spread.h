/* Where the CTAs of a short walk work (TPG_SPREAD_UNITS): plain C, shared by the kernels (gemm_sm90.cuh, each CTA's
 * first unit) and the tests (tests/c/test_spread.c checks that every unit gets exactly one CTA).
 *
 * Spread (TPG_SPREAD_UNITS 1, the default): where a one-stage launch walks at most 3/4 as many units as it has
 * clusters, unit u goes to cluster floor(u * clusters / units) instead of cluster u, so the busy CTAs spread over the
 * grid. Why: the block scheduler hands CTAs 0-7 to 8 SMs of one GPC, then pairs of consecutive CTAs to one TPC, GPC
 * after GPC (the traces of 2026-12-03, every run: CTAs 0-7 on SMs 124-131, 8-9 on 4-5, 10-11 on 20-21, ...), so a
 * walk of 32 tiles had 8 on one GPC and 3 on each other: the ping-pong 64x128 ran 1.2-1.5x faster spread at 32-64
 * tiles of decode GEMMs, the 128x128 1.0-1.2x, even at 16 tiles; at 128 of 132 slower (0.96-0.98x: hence the 3/4;
 * docs/perf_notes/2026-12-03-d.md). Not for several stages (their placement is the walk order's, gemm_params.h
 * stage_minor) nor a stream-K region (its CTAs' fragments are blockIdx's: the caller keeps those).
 */
#ifndef TPG_SPREAD_H
#define TPG_SPREAD_H

#ifdef __CUDACC__
#define TPG_SPREAD_FN __host__ __device__ __forceinline__
#else
#define TPG_SPREAD_FN static inline
#endif

#ifndef TPG_SPREAD_UNITS
#define TPG_SPREAD_UNITS 1
#endif

/* Does a launch of `stages` stages and `total` units on `clusters` spread them? (The split rule, runtime/src/config.c,
 * asks too: a spread ping-pong walk left the stream-K less to gain.) */
TPG_SPREAD_FN int tpg_spreads(long long total, int stages, int clusters)
{
    return TPG_SPREAD_UNITS && stages == 1 && 4 * total <= 3LL * clusters;
}

/* The first unit of cluster c (of `clusters`) in a launch of `stages` stages and `total` units: where it spreads, the
 * u with floor(u * clusters / total) = c - at most one, since clusters > total - or `total` (none: the cluster walks
 * nothing); else c. */
TPG_SPREAD_FN int tpg_first_unit(int total, int stages, int c, int clusters)
{
    if (!tpg_spreads(total, stages, clusters)) return c;
    const int u = (int)(((long long)c * total + clusters - 1) / clusters);
    return u < total && (int)((long long)u * clusters / total) == c ? u : total;
}

#endif /* TPG_SPREAD_H */
