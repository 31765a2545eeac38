/* The context's internals, shared by ctx.c, op.c and graph.c. */
#ifndef TPG_CTX_INTERNAL_H
#define TPG_CTX_INTERNAL_H

#include <cuda_runtime_api.h>

#include "gemm_params.h" /* TPG_MAX_TP */
#include "tpgemm.h"

#define TPG_ERROR_BYTES 1024

struct tpg_ctx {
    int tp;
    int devices[TPG_MAX_TP];       /* CUDA ordinal of each rank */
    int sm_count[TPG_MAX_TP];      /* multiprocessors of each rank's device (persistent grid) */
    cudaStream_t streams[TPG_MAX_TP]; /* one non-blocking stream per rank */
    uint64_t timeout_ns;           /* bound on every device-side wait */
    int num_ops;                   /* live ops; tpg_ctx_destroy refuses while > 0 */
    char error[TPG_ERROR_BYTES];   /* tpg_last_error(ctx) */
};

/* Makes rank's device current; the caller's device is restored by tpg__restore_device. */
tpg_status tpg__use_device(tpg_ctx *ctx, int rank);
/* Returns the current device (or -1) so that API calls leave the caller's current device alone. */
int tpg__save_device(void);
void tpg__restore_device(int saved);

#endif /* TPG_CTX_INTERNAL_H */
