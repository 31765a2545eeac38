/* The one error-check macro file of the runtime. A message is written once, at the origin, into the
 * context's error buffer (tpg_last_error); callers above only propagate the status.
 *
 *   TPG_CHECK_CUDA(ctx, expr)        CUDA runtime call; on failure records
 *                                    "file:line: expr: cudaErrorName: message", clears the sticky
 *                                    error and returns TPG_ERR_CUDA (TPG_ERR_OUT_OF_MEMORY for
 *                                    cudaErrorMemoryAllocation).
 *   TPG_CHECK_NCCL(ctx, n, expr)     NCCL call through the loaded library n (nccl.h); on a result other
 *                                    than ncclSuccess records "expr (library) returned r: NCCL's
 *                                    message" and returns TPG_ERR_NCCL.
 *   TPG_CHECK(expr)                  propagates a non-OK tpg_status.
 *   TPG_FAIL(ctx, status, fmt, ...)  records a formatted message naming the offending value, returns.
 *   TPG_REQUIRE_HANDLE(handle)       TPG_ERR_INVALID_ARGUMENT, "function: handle is NULL", if handle is NULL.
 *   *_GOTO(..., label)               same, but stores the status in a local `st` and jumps to label.
 */
#ifndef TPG_CHECKS_H
#define TPG_CHECKS_H

#include <cuda_runtime_api.h>

#include "tpgemm.h"

#ifdef __cplusplus /* reference.cu */
extern "C" {
#endif

/* Formats into ctx's error buffer (ctx NULL: this thread's create-error buffer). Defined in status.c. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void tpg__set_error(tpg_ctx *ctx, const char *fmt, ...);
/* Adds to the end of that message (what a failure means beyond its own cause), cut at the buffer's end. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void tpg__append_error(tpg_ctx *ctx, const char *fmt, ...);

/* 1 if t is one of tpg_dtype's values, s one of tpg_status's (a caller's enum, a peer's record, may hold
 * anything). Defined in status.c. */
int tpg__dtype_known(tpg_dtype t);
int tpg__status_known(int s);

/* Records a failed CUDA call and maps it to a status (clears the sticky error). Defined in status.c. */
tpg_status tpg__cuda_error(tpg_ctx *ctx, cudaError_t err, const char *file, int line, const char *expr);
/* Records a failed NCCL call (result r of `call`, through the loaded library n) and returns TPG_ERR_NCCL. Defined in
 * nccl.c. */
struct tpg_nccl;
tpg_status tpg__nccl_error(tpg_ctx *ctx, const struct tpg_nccl *n, int r, const char *call);

#ifdef __cplusplus
}
#endif

#define TPG_CHECK_CUDA(ctx, expr)                                                                    \
    do {                                                                                             \
        cudaError_t tpg_err_ = (expr);                                                               \
        if (tpg_err_ != cudaSuccess) return tpg__cuda_error((ctx), tpg_err_, __FILE__, __LINE__, #expr); \
    } while (0)

#define TPG_CHECK_CUDA_GOTO(ctx, expr, label)                                                        \
    do {                                                                                             \
        cudaError_t tpg_err_ = (expr);                                                               \
        if (tpg_err_ != cudaSuccess) {                                                               \
            st = tpg__cuda_error((ctx), tpg_err_, __FILE__, __LINE__, #expr);                        \
            goto label;                                                                              \
        }                                                                                            \
    } while (0)

#define TPG_CHECK_NCCL(ctx, n, expr)                                                                 \
    do {                                                                                             \
        const int tpg_nccl_r_ = (expr);                                                              \
        if (tpg_nccl_r_ != 0) return tpg__nccl_error((ctx), (n), tpg_nccl_r_, #expr);               \
    } while (0)

#define TPG_CHECK(expr)                                                                              \
    do {                                                                                             \
        tpg_status tpg_st_ = (expr);                                                                 \
        if (tpg_st_ != TPG_OK) return tpg_st_;                                                       \
    } while (0)

#define TPG_CHECK_GOTO(expr, label)                                                                  \
    do {                                                                                             \
        st = (expr);                                                                                 \
        if (st != TPG_OK) goto label;                                                                \
    } while (0)

/* A NULL handle has no context to hold the message: it goes to this thread's (tpg_last_error(NULL)). */
#define TPG_REQUIRE_HANDLE(handle)                                                                   \
    do {                                                                                             \
        if (!(handle)) TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "%s: %s is NULL", __func__, #handle);     \
    } while (0)

#define TPG_FAIL(ctx, status, ...)                                                                   \
    do {                                                                                             \
        tpg__set_error((ctx), __VA_ARGS__);                                                          \
        return (status);                                                                             \
    } while (0)

#define TPG_FAIL_GOTO(ctx, status, label, ...)                                                       \
    do {                                                                                             \
        tpg__set_error((ctx), __VA_ARGS__);                                                          \
        st = (status);                                                                               \
        goto label;                                                                                  \
    } while (0)

#endif /* TPG_CHECKS_H */
