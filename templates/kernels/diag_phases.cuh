/* Self-test instances only (TPG_DIAG_PHASES 1; never in a generated kernel): where a ping-pong tile's time goes,
 * summed over the grid per stage (stage 0, and every later stage as 1) - the consumer warpgroup's wait for its turn,
 * its mainloop, its epilogue, the epilogue's start (the deferred flag's flush and the partial's wait), thread 0's
 * waits for earlier stores to read their smem before a store buffer is rewritten, and the producer's waits for a free
 * ring slot. Why: with its pushes over the host link the ring runs 0.86-0.93 of itself with local pushes
 * (`kernel_selftest --rs-far`) while bulk stores spread over bulk loads cost those loads nothing
 * (bench/results/experiments/tma_sync.cu) - this shows which part of a tile grows. kernel_selftest reads the sums
 * through the instance's shape (selftest_instance.cu) after its --rs-perf / --rs-far rounds. Cycles of clock64; one
 * atomic a tile and field, a few a tile in all. */
#ifndef TPG_DIAG_PHASES_CUH
#define TPG_DIAG_PHASES_CUH

#ifndef TPG_DIAG_PHASES
#define TPG_DIAG_PHASES 0
#endif

enum { TPG_PH_TILES, TPG_PH_TURN, TPG_PH_MAIN, TPG_PH_EPI, TPG_PH_BEGIN, TPG_PH_HANDOFF, TPG_PH_EMPTY, TPG_PH_N };

#if TPG_DIAG_PHASES
#define TPG_PH(...) __VA_ARGS__
__device__ unsigned long long tpg_diag_phase[2][TPG_PH_N];
__device__ __forceinline__ void tpg_ph_add(int stage, int field, long long cycles)
{
    atomicAdd(&tpg_diag_phase[stage > 0 ? 1 : 0][field], (unsigned long long)cycles);
}
#else
#define TPG_PH(...)
#endif

#endif /* TPG_DIAG_PHASES_CUH */
