/* Status strings, the per-context / per-thread error message, and dtype helpers. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "checks.h"
#include "ctx_internal.h"

/* tpg_last_error(NULL): the last failure on this thread of a call with no context to hold its message (context
 * creation, the config and dispatch lookups, a NULL handle). */
static _Thread_local char create_error[TPG_ERROR_BYTES];

const char *tpg_status_string(tpg_status s) {
    switch (s) {
#define TPG_STATUS_CASE_(name, value, text) \
    case name: return #name ": " text;
        TPG_STATUS_TABLE(TPG_STATUS_CASE_)
#undef TPG_STATUS_CASE_
    }
    return "unknown tpg_status value; this library did not return it";
}

int tpg__status_known(int s) {
    switch (s) {
#define TPG_STATUS_KNOWN_(name, value, text) \
    case name: return 1;
        TPG_STATUS_TABLE(TPG_STATUS_KNOWN_)
#undef TPG_STATUS_KNOWN_
    }
    return 0;
}

const char *tpg_last_error(const tpg_ctx *ctx) { return ctx ? ctx->error : create_error; }

void tpg__set_error(tpg_ctx *ctx, const char *fmt, ...) {
    char *buf = ctx ? ctx->error : create_error;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, TPG_ERROR_BYTES, fmt, ap);
    va_end(ap);
}

void tpg__append_error(tpg_ctx *ctx, const char *fmt, ...) {
    char *buf = ctx ? ctx->error : create_error;
    buf[TPG_ERROR_BYTES - 1] = '\0';
    const size_t used = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, TPG_ERROR_BYTES - used, fmt, ap);
    va_end(ap);
}

tpg_status tpg__cuda_error(tpg_ctx *ctx, cudaError_t err, const char *file, int line, const char *expr) {
    (void)cudaGetLastError(); /* clear the sticky (non-fatal) error so later calls do not see it */
    tpg__set_error(ctx, "%s:%d: %s: %s: %s", file, line, expr, cudaGetErrorName(err), cudaGetErrorString(err));
    return err == cudaErrorMemoryAllocation ? TPG_ERR_OUT_OF_MEMORY : TPG_ERR_CUDA;
}

int tpg__dtype_known(tpg_dtype t) { return tpg_dtype_size(t) != 0; }

size_t tpg_dtype_size(tpg_dtype t) {
    switch (t) {
    case TPG_DTYPE_BF16:
    case TPG_DTYPE_FP16: return 2;
    case TPG_DTYPE_E4M3:
    case TPG_DTYPE_E5M2: return 1;
    case TPG_DTYPE_FP32: return 4;
    }
    return 0;
}

tpg_dtype tpg_output_dtype(tpg_dtype t) { return t == TPG_DTYPE_E4M3 || t == TPG_DTYPE_E5M2 ? TPG_DTYPE_BF16 : t; }

const char *tpg_dtype_name(tpg_dtype t) {
    switch (t) {
    case TPG_DTYPE_BF16: return "bf16";
    case TPG_DTYPE_FP16: return "fp16";
    case TPG_DTYPE_E4M3: return "e4m3";
    case TPG_DTYPE_E5M2: return "e5m2";
    case TPG_DTYPE_FP32: return "fp32";
    }
    return "unknown";
}
