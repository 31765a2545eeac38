/* Launch epochs compared with the words that carry them (flags, the give-up words): plain C, shared by the GEMM
 * kernels (sync.cuh), the runtime's own kernels (spin.cuh, barrier.cu, transfer_flags.cu, one_hop.cu), the host
 * (nccl_wait.c) and tests/c/test_epoch.c.
 *
 * An epoch is a 32-bit launch count: after 2^32 launches of an op it wraps. A flag raised every call sits at most a
 * launch or two off the waiter's epoch, but a word that no one wrote for half of 2^32 launches (a notice that never
 * saw a give-up, a flag of a mode the op left) is as far as it gets from the epoch both ways: a signed difference then
 * calls it "ahead", and a wait on it passes at once. A word counts as reached only within TPG_EPOCH_WINDOW launches
 * ahead of the epoch, so a stale word is "behind" until it falls 2^32 - TPG_EPOCH_WINDOW launches back; the closing
 * barrier refreshes its notice word before that (barrier.cu). What remains: a flag word left unwritten for more than
 * 2^32 - TPG_EPOCH_WINDOW launches and then waited on (a mode switch in the last million launches before a wrap) still
 * passes early. */
#ifndef TPG_EPOCH_H
#define TPG_EPOCH_H

#if defined(__CUDACC__)
#define TPG_EPOCH_FN static __host__ __device__ __forceinline__
#else
#define TPG_EPOCH_FN static inline
#endif

/* How far ahead of a waiter's epoch a word may be and still count as reached: peers are a call or two apart (every
 * call begins with a barrier, over NCCL with the transfers' own order), so anything past this is a stale word, not a
 * peer ahead. */
#define TPG_EPOCH_WINDOW (1u << 20)

/* Has `word` (a flag, a notice) reached `epoch`: at it, or at most TPG_EPOCH_WINDOW - 1 launches ahead? */
TPG_EPOCH_FN int tpg_epoch_reached(unsigned int word, unsigned int epoch) { return word - epoch < TPG_EPOCH_WINDOW; }

/* Is `word` (a notice that only give-ups raise) so far behind `epoch` that it must be moved up before it wraps into
 * the window: half a window behind or more. */
TPG_EPOCH_FN int tpg_epoch_stale(unsigned int word, unsigned int epoch) {
    return !tpg_epoch_reached(word, epoch) && epoch - word >= TPG_EPOCH_WINDOW / 2;
}

/* Did a wait of the launch `epoch` give up, by the give-up word (tpg_gemm_params.gave_up_epoch) that a timed-out wait
 * sets to its epoch? Exact, and never an old give-up: every launch's start barrier leaves the word less than 2^31
 * launches behind its epoch unless it already holds it (tpg_epoch_give_up_aged), so each launch begins with the word
 * 1 .. 2^31 launches behind, never at its own epoch, the one after the wrap included. The initial 0 is no launch's:
 * epochs start at 1. */
TPG_EPOCH_FN int tpg_epoch_gave_up(unsigned int word, unsigned int epoch) { return word == epoch; }

/* Must the start barrier of the launch `epoch` move the give-up word up (to epoch - 1): is it 2^31 launches behind or
 * more, half way to reading as a later launch's give-up? A load a call, a CAS every 2^31 calls. */
TPG_EPOCH_FN int tpg_epoch_give_up_aged(unsigned int word, unsigned int epoch) { return epoch - word >= 0x80000000u; }

/* The give-up word the start barrier of the launch `epoch` leaves (barrier.cu age_give_up, by CAS). */
TPG_EPOCH_FN unsigned int tpg_epoch_give_up_refresh(unsigned int word, unsigned int epoch) {
    return tpg_epoch_give_up_aged(word, epoch) ? epoch - 1u : word;
}

#endif /* TPG_EPOCH_H */
