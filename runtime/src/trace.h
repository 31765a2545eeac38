/* Timeline trace of one op call (trace builds only: `ninja trace` compiles every object with -DTPG_TRACE;
 * build/trace/tpgemm --trace FILE.json drives it). Internal API, not part of tpgemm.h.
 *
 * tpg__trace_enable allocates one buffer per local rank (layout: templates/kernels/trace_format.h),
 * zeroes it, points the GEMM and barrier params at it and updates the executable graphs (the first enable rebuilds
 * them with the event nodes that time the nodes beside the GEMM: trace_events.c, tpg__trace_nodes); every launch
 * from then on records into it (counts accumulate: enable before exactly one call, or zero the records
 * with tpg__trace_rearm in stream order before the call to keep). tpg__trace_read copies
 * rank r's buffer to the host after tpg_op_sync. tpg__trace_disable clears the pointers, updates the
 * graphs and frees the buffers (tpg_op_destroy also frees them). */
#ifndef TPG_TRACE_H
#define TPG_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "tpgemm.h"
#include "trace_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cap = records per lane (0 = TPG_TRACE_DEFAULT_CAP). Trace build only: trace.c does not compile without TPG_TRACE. */
tpg_status tpg__trace_enable(tpg_op *op, uint32_t cap);
/* *bytes = the buffer size; host must hold that many bytes (host NULL: size query only). */
tpg_status tpg__trace_read(tpg_op *op, int rank, void *host, size_t *bytes);
/* Zeroes rank r's records (not the header's host fields) on `stream`, after the calls already queued there. */
tpg_status tpg__trace_rearm(tpg_op *op, int rank, cudaStream_t stream);
tpg_status tpg__trace_disable(tpg_op *op);
/* Rank's timed graph nodes of the last traced call (trace_events.c: copies, flag copies, REDUCE; times by CUDA events
 * since the start barrier's completion), after tpg_op_sync: info->count of them into out (cap >= TPG_TRACE_MAX_NODES
 * holds all), info->skipped those past TPG_TRACE_MAX_NODES (untimed), info->gemm_end_ns the GEMM's completion on the
 * same clock (-1: none). A rank whose graph has no start barrier has none. A CUDA error says which. */
typedef struct tpg_trace_nodes_info {
    int count, skipped;
    double gemm_end_ns;
} tpg_trace_nodes_info;
tpg_status tpg__trace_nodes(tpg_op *op, int rank, tpg_trace_node_time *out, int cap, tpg_trace_nodes_info *info);

#ifdef __cplusplus
}
#endif

#endif /* TPG_TRACE_H */
