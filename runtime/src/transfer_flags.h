/* The NCCL transport's flag kernel (1 block): the device-side hand-offs between the persistent GEMM and the
 * NCCL transfers beside it, on the transfers' branch of the rank's graph (nccl_graph.c).
 *
 * raise: flags[0 .. count) = *epoch (release): after a receive, tells the GEMM's waits that the data is there
 *        (all-gather: stage flag s; reduce-scatter: every tile flag of the received slot; after the last step:
 *        transfers_done). The receive's kernel ran before this one in stream order, so its writes are visible to
 *        whoever acquires the flags. With a trailer (reduce-scatter), first its word: the sender's verdict on
 *        the partial. Not *epoch (the sender timed out or gave up before all its tiles were written): no flag is
 *        raised; TPG_DEVICE_PEER_GAVE_UP goes into *status and *gave_up_epoch is set to the epoch, so that the GEMM's
 *        waits on these flags give up at once and tpg_op_sync reports the call as failed.
 * wait:  until every flags[i] has reached *epoch (acquire): before a reduce-scatter send, every tile of the stage wrote
 *        its partial; after the GEMM, transfers_done (every transfer of the call completed, which NCCL itself
 *        never bounds). Bounded by timeout_ns like every device-side wait: on timeout it sets TPG_DEVICE_TIMEOUT
 *        in *status, sets *gave_up_epoch to the epoch and returns; it returns at once when *gave_up_epoch
 *        already holds the epoch (another wait of this launch timed out). With a trailer it then writes the
 *        verdict there: *epoch when every flag was seen and no wait of the launch gave up (a tile that gave up
 *        still raises its flag), else TPG_FLAGS_INCOMPLETE (the send moves it with the partial, whatever the
 *        partial holds, so that the peer's receive still matches).
 * A flag has reached the epoch when it is at it or at most TPG_EPOCH_WINDOW ahead (epoch.h: wrap-aware, and a stale
 * word is behind). */
#ifndef TPG_TRANSFER_FLAGS_H
#define TPG_TRANSFER_FLAGS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tpg_flags_mode { TPG_FLAGS_RAISE = 0, TPG_FLAGS_WAIT = 1 } tpg_flags_mode;

typedef struct tpg_flags_params {
    int mode;                    /* tpg_flags_mode */
    int count;
    unsigned int *flags;
    const unsigned int *epoch;   /* own epoch word (written by this launch's start node) */
    unsigned int *status;        /* own status word */
    unsigned int *gave_up_epoch; /* own word (tpg_gemm_params.gave_up_epoch) */
    unsigned long long timeout_ns; /* 0 = wait forever */
    unsigned int *trailer;       /* reduce-scatter: the band's verdict word in the slot's trailer (NULL: none) */
} tpg_flags_params;

enum { TPG_FLAGS_THREADS = 256 };
/* Bytes a reduce-scatter slot carries after its partial over NCCL: a verdict word per row band, 16-byte aligned. */
#define TPG_FLAGS_TRAILER_BYTES 16
/* The verdict of an incomplete partial: any word but the epoch (a constant would be some launch's epoch). */
#define TPG_FLAGS_INCOMPLETE(epoch) (~(unsigned int)(epoch))

/* The __global__ void(tpg_flags_params) function: launch <<<1, TPG_FLAGS_THREADS>>>. */
const void *tpg_flags_kernel_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* TPG_TRANSFER_FLAGS_H */
