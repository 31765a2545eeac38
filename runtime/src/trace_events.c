/* The traced call's nodes beside the GEMM, timed by CUDA events (trace builds only; trace.h, trace_format.h's
 * tpg_trace_node_time). The kernels time themselves with %globaltimer; the copies and flags run on a copy engine and
 * the REDUCE is a kernel of its own, so nothing of theirs writes a timestamp. While a trace buffer is set, a rank's
 * graph is built with an event record node after its start barrier (the origin) and one after each copy, flag copy
 * and REDUCE; the events are read after the call as times since the origin. An event node waits for its node only:
 * it holds nothing up, and it records when the node completed as the GPU's front end saw it (about a microsecond
 * late, by CUDA's event resolution of ~0.5 us). */
#include <string.h>

#include "checks.h"
#include "op_internal.h"
#include "trace.h"

#ifndef TPG_TRACE
#error "runtime/src/trace_events.c belongs to the trace build (ninja trace: -DTPG_TRACE)"
#endif

/* The timed kind of rank's item i: a TPG_TRACE_NODE_* code, or 0 for a node that is not timed (the GEMM and the
 * barriers time themselves). */
static uint32_t timed_kind(const tpg_op *op, int rank, int i) {
    const tpg_graph_item *it = &op->items[rank][i];
    switch ((tpg_node_kind)tpg__graph_item_node(op, rank, it)->kind) {
    case TPG_NODE_COPY: return it->node == TPG_ITEM_LOCAL_SHARD ? TPG_TRACE_NODE_OWN : TPG_TRACE_NODE_COPY;
    case TPG_NODE_FLAG: return TPG_TRACE_NODE_FLAG;
    case TPG_NODE_REDUCE: return TPG_TRACE_NODE_REDUCE;
    default: return 0;
    }
}

static int start_item(const tpg_op *op, int rank) {
    for (int i = 0; i < op->num_items[rank]; i++)
        if (tpg__graph_item_node(op, rank, &op->items[rank][i])->kind == TPG_NODE_BARRIER_START) return i;
    return -1;
}

/* One event (timing on) recorded by a node after `after`. */
static tpg_status add_event(tpg_op *op, int rank, int e, cudaGraphNode_t after) {
    cudaGraphNode_t node;
    TPG_CHECK_CUDA(op->ctx, cudaEventCreate(&op->trace_ev[rank][e]));
    op->trace_ev_count[rank] = e; /* events 1..e-1 are item events; destroy counts from here */
    TPG_CHECK_CUDA(op->ctx, cudaGraphAddEventRecordNode(&node, op->graph[rank], &after, 1, op->trace_ev[rank][e]));
    return TPG_OK;
}

tpg_status tpg__trace_events_add(tpg_op *op, int rank) {
    tpg__trace_events_destroy(op, rank);
    op->trace_ev_on[rank] = op->trace_buf[rank] != NULL;
    const int start = start_item(op, rank);
    if (!op->trace_ev_on[rank] || start < 0) return TPG_OK; /* one kernel, nothing beside it */
    TPG_CHECK(add_event(op, rank, 0, op->nodes[rank][start]));
    int e = 0;
    for (int i = 0; i < op->num_items[rank]; i++) {
        if (!timed_kind(op, rank, i)) continue;
        if (e == TPG_TRACE_MAX_NODES) {
            op->trace_ev_skipped[rank]++;
            continue;
        }
        op->trace_ev_item[rank][e] = (short)i;
        TPG_CHECK(add_event(op, rank, ++e, op->nodes[rank][i]));
    }
    return TPG_OK;
}

void tpg__trace_events_destroy(tpg_op *op, int rank) {
    const int made = op->trace_ev[rank][0] ? 1 + op->trace_ev_count[rank] : 0;
    for (int e = 0; e < made; e++)
        if (op->trace_ev[rank][e]) (void)cudaEventDestroy(op->trace_ev[rank][e]);
    memset(op->trace_ev[rank], 0, sizeof op->trace_ev[rank]);
    op->trace_ev_count[rank] = op->trace_ev_skipped[rank] = op->trace_ev_on[rank] = 0;
}

int tpg__trace_events_stale(const tpg_op *op, int rank) {
    return op->trace_ev_on[rank] != (op->trace_buf[rank] != NULL);
}

/* Event e's time in ns after the origin's; *ok = 0 when CUDA cannot say (never recorded, or an error). */
static double since_origin(const tpg_op *op, int rank, int e, int *ok) {
    float ms = 0.0f;
    const cudaError_t err = cudaEventElapsedTime(&ms, op->trace_ev[rank][0], op->trace_ev[rank][e]);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        *ok = 0;
        return -1.0;
    }
    return (double)ms * 1e6;
}

tpg_status tpg__trace_nodes(tpg_op *op, int rank, tpg_trace_node_time *out, int cap, int *count, int *skipped) {
    TPG_REQUIRE_HANDLE(op);
    tpg_ctx *ctx = op->ctx;
    if (!out || !count || !skipped || cap < 0)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "trace: out, count and skipped must be given, cap >= 0");
    if (rank < ctx->local_begin || rank >= ctx->local_end)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "trace: rank %d is not local to this process", rank);
    *count = 0;
    *skipped = op->trace_ev_skipped[rank];
    const int n = op->trace_ev[rank][0] ? op->trace_ev_count[rank] : 0;
    if (n > cap) TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "trace: %d timed nodes, room for %d", n, cap);
    const int saved = tpg__save_device();
    tpg_status st = TPG_OK;
    TPG_CHECK_GOTO(tpg__use_device(ctx, rank), out);
    int ok = 1;
    for (int j = 0; j < n; j++) {
        const int i = op->trace_ev_item[rank][j];
        const tpg_graph_item *it = &op->items[rank][i];
        const tpg_graph_node *node = tpg__graph_item_node(op, rank, it);
        tpg_trace_node_time *t = &out[j];
        t->kind = timed_kind(op, rank, i);
        t->stage = node->stage, t->peer = node->peer, t->piece = it->piece;
        t->end_ns = since_origin(op, rank, 1 + j, &ok);
        /* begin: the latest of its dependencies' ends - the start barrier's is the origin, 0 */
        t->begin_ns = 0.0;
        for (int d = 0; d < 2; d++) {
            const int dep = it->deps[d];
            if (dep < 0) continue;
            int found = -1;
            for (int k = 0; k < j && found < 0; k++) found = op->trace_ev_item[rank][k] == dep ? k : -1;
            const int is_start = tpg__graph_item_node(op, rank, &op->items[rank][dep])->kind == TPG_NODE_BARRIER_START;
            const double at = is_start ? 0.0 : found >= 0 ? out[found].end_ns : -1.0;
            t->begin_ns = at < 0 || t->begin_ns < 0 ? -1.0 : at > t->begin_ns ? at : t->begin_ns;
        }
        if (it->deps[0] < 0 && it->deps[1] < 0) t->begin_ns = -1.0; /* a root: it may start before the barrier */
    }
    if (!ok)
        TPG_FAIL_GOTO(ctx, TPG_ERR_NOT_READY, out, "trace: rank %d's node events are not all recorded (read them after "
                      "tpg_op_sync of the traced call)", rank);
    *count = n;
out:
    tpg__restore_device(saved);
    return st;
}
