/* Cross-device flags: system-scope acquire loads, release stores, and the one bounded spin-wait that
 * every cross-device wait of the kernel goes through.
 *
 * Flags carry an epoch (tpg_gemm_params.epoch): a writer stores the epoch, a reader waits until the
 * flag has reached it (epoch.h), so flags never need resetting between launches. Flags may live in a peer GPU's
 * memory (UVA pointers), hence .sys scope everywhere.
 *
 * Never hang: every spin is bounded by p.timeout_ns (0 = forever), measured with %globaltimer. On
 * timeout the wait records TPG_DEVICE_TIMEOUT in *p.status and returns false; the caller carries on
 * (results are then garbage, the host reports TPG_ERR_TIMEOUT), and the waiting thread remembers the
 * timeout (`gave_up`) so later waits of the same thread do not each cost another full timeout. A cross-device
 * wait also gives up as soon as another wait of the same launch timed out (another thread, CTA, or the barrier
 * kernel before or beside this GEMM: p.gave_up_epoch holds this launch's epoch), so one missing peer costs a call
 * one timeout, not one per wait.
 */
#ifndef TPG_SYNC_CUH
#define TPG_SYNC_CUH

#include <stdint.h>
#include "epoch.h"
#include "gemm_params.h"

__device__ __forceinline__ unsigned int tpg_ld_acquire_sys(const unsigned int *p)
{
    unsigned int v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void tpg_st_release_sys(unsigned int *p, unsigned int v)
{
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* Add v to a count of this launch's own CTAs, releasing at GPU scope what this thread (and, after a barrier, its CTA)
 * wrote before (a stream-K contribution: tpg_wait_count acquires it). */
__device__ __forceinline__ void tpg_red_release_gpu_add(unsigned int *p, unsigned int v)
{
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ uint64_t tpg_globaltimer()
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Read the launch epoch once at kernel start, in thread 0 of the CTA, which hands it to the others through shared
 * memory across the CTA (or cluster) barrier that follows (gemm_sm90.cuh): the barrier orders their later reads
 * after this acquire. The load of last_epoch completes before that barrier (program order and the barrier), after
 * which tpg_keep_epoch counts the CTA in: no CTA can then read the value the last one stores. (A system-scope acquire
 * by every thread, as before 2026-12-03 23:00Z, cost a one-tile call ~0.4 us; docs/perf_notes/2026-12-03-e.md.) */
__device__ __forceinline__ unsigned int tpg_load_epoch(const tpg_gemm_params &p)
{
    if (p.epoch) return tpg_ld_acquire_sys(p.epoch);
    if (!p.last_epoch) return 0u;
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p.last_epoch) : "memory");
    return v + 1u;
}

/* One thread per CTA, after the CTA barrier that thread 0 passed after tpg_load_epoch: keep this launch's
 * epoch in last_epoch for the next launch. Beside the start barrier the CTAs of this launch read last_epoch,
 * so only the last CTA to count itself in writes it (the count is reset for the next launch, which starts
 * after this one ends); after the barrier nobody reads it in this launch and CTA 0 stores it (one store, not
 * one per CTA to the same word). */
__device__ __forceinline__ void tpg_keep_epoch(const tpg_gemm_params &p, unsigned int epoch)
{
    if (!p.last_epoch) return;
    if (p.epoch) {
        if (blockIdx.x == 0) *(volatile unsigned int *)p.last_epoch = epoch;
        return;
    }
    unsigned int before;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(p.epoch_readers) : "memory");
    if (before == gridDim.x - 1) {
        *(volatile unsigned int *)p.epoch_readers = 0u;
        *(volatile unsigned int *)p.last_epoch = epoch;
    }
}

__device__ __forceinline__ void tpg_record_status(const tpg_gemm_params &p, unsigned int bit)
{
    if (p.status) atomicOr(p.status, bit); /* a bit mask: the barrier kernel ORs its own bit into the same word */
}

/* Has another cross-device wait of this launch (epoch) timed out? */
__device__ __forceinline__ bool tpg_launch_gave_up(const tpg_gemm_params &p, unsigned int epoch)
{
    return p.gave_up_epoch && tpg_epoch_gave_up(*(volatile unsigned int *)p.gave_up_epoch, epoch);
}

/* The one bounded spin (one thread): until seen() holds. Returns true when it did; false after a timeout (recorded
 * in *p.status) or when this thread already gave up once. launch_wait: the wait is a cross-device one of the launch
 * `epoch`, so it gives up with its launch; false for a wait on this launch's own CTAs (stream-K, the GEMM's own shard
 * pulls), whose protocol must see every wait through, so it does not listen. Every timeout, of either kind, marks the
 * launch given up (its gave_up word): the launch's cross-device waits end, and its closing barrier tells the peers,
 * whose calls read what this launch wrote after it - a stream-K finisher that timed out still stores its incomplete
 * tile and raises its flag, which a one-hop REDUCE of a peer reads (a review, 2026-12-05: without the word, the peers'
 * calls reported success over it). Exponential
 * back-off capped at ~MAX_SLEEP_NS (1 us by default) keeps NVLink/L2 polling traffic low; a wait whose end a kernel
 * should see at once passes a lower cap. Force-inlined on purpose: consumers call it with 128+ live accumulator
 * registers, and a real call would have to preserve them across the ABI boundary (ptxas then fails register
 * allocation). */
template <unsigned int MAX_SLEEP_NS = 1024, class Seen>
__device__ __forceinline__ bool tpg_spin_until(const tpg_gemm_params &p, Seen seen, unsigned int epoch, bool &gave_up,
                                               bool launch_wait)
{
    if (seen()) return true;
    if (gave_up) return false;
    const uint64_t start = tpg_globaltimer();
    unsigned int sleep_ns = 32;
    for (;;) {
        __nanosleep(sleep_ns);
        if (sleep_ns < MAX_SLEEP_NS) sleep_ns <<= 1;
        if (seen()) return true;
        if (launch_wait && tpg_launch_gave_up(p, epoch)) {
            gave_up = true;
            return false;
        }
        if (p.timeout_ns != 0ull && tpg_globaltimer() - start > p.timeout_ns) {
            tpg_record_status(p, TPG_DEVICE_TIMEOUT);
            if (p.gave_up_epoch) atomicExch(p.gave_up_epoch, epoch); /* exact: epoch.h */
            gave_up = true;
            return false;
        }
    }
}

/* Spin until *flag has reached epoch (tpg_epoch_reached, epoch.h: at most a window ahead, so that neither the wrap at
 * the 2^32nd launch nor a word left unwritten since long ago passes early), with acquire semantics at system scope
 * (tpg_spin_until). */
__device__ __forceinline__ bool tpg_wait_flag(const tpg_gemm_params &p, const unsigned int *flag, unsigned int epoch,
                                           bool &gave_up, bool launch_wait = true)
{
    return tpg_spin_until(p, [&] { return tpg_epoch_reached(tpg_ld_acquire_sys(flag), epoch) != 0; }, epoch, gave_up,
                          launch_wait);
}

/* Spin until a count of this launch's own CTAs reaches `target`, compared as signed (acquire at GPU scope: the
 * counting CTAs run on this device); never gives up with the launch (tpg_spin_until, back-off capped at MAX_SLEEP_NS).
 */
template <unsigned int MAX_SLEEP_NS = 1024>
__device__ __forceinline__ bool tpg_wait_count(const tpg_gemm_params &p, const unsigned int *count, unsigned int target,
                                            unsigned int epoch, bool &gave_up)
{
    const auto seen = [&] {
        unsigned int v;
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(count) : "memory");
        return (int)v >= (int)target; /* a stream-K count may sit below 0 after a timeout (gemm_sm90_fixup.cuh) */
    };
    return tpg_spin_until<MAX_SLEEP_NS>(p, seen, epoch, gave_up, false);
}

#endif /* TPG_SYNC_CUH */
