/* The traced call's nodes beside the GEMM, timed by CUDA events (trace builds only; trace.h, trace_format.h's
 * tpg_trace_node_time). The kernels time themselves with %globaltimer; the copies and flags run on a copy engine and
 * the REDUCE is a kernel of its own, so nothing of theirs writes a timestamp. While a trace buffer is set, a rank's
 * graph is built with an event record node after its start barrier (the origin), after its GEMM, and after each
 * copy, flag copy and REDUCE; the copy-engine partials' chains (ce_partials.c), captured after those, add theirs after
 * each band's wait, copy and flags (tpg__trace_chain_event). The events are read after the call as times since the
 * origin. An event node waits for its node and for the event node before it (one chain: tpg__trace_events_add says
 * why). Only the next event waits for it - and, in a copy-engine chain captured inline, the chain's next node, held up
 * by one event record - and it records when the node completed as the GPU's front end saw it, or later, behind the
 * event before it (a kernel's completion some microseconds after its last %globaltimer read; CUDA's event resolution
 * ~0.5 us). */
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

static int item_of_kind(const tpg_op *op, int rank, int kind) {
    for (int i = 0; i < op->num_items[rank]; i++)
        if (tpg__graph_item_node(op, rank, &op->items[rank][i])->kind == kind) return i;
    return -1;
}

/* Event e (timing on), recorded by a node after `after` and after the event node `prev` (NULL: none), returned in
 * *node; trace_ev_count counts the events made, for destroy. */
static tpg_status add_event(tpg_op *op, int rank, int e, cudaGraphNode_t after, cudaGraphNode_t prev,
                            cudaGraphNode_t *node) {
    const cudaGraphNode_t deps[2] = {after, prev};
    TPG_CHECK_CUDA(op->ctx, cudaEventCreate(&op->trace_ev[rank][e]));
    if (op->trace_ev_count[rank] <= e) op->trace_ev_count[rank] = e + 1;
    TPG_CHECK_CUDA(op->ctx, cudaGraphAddEventRecordNode(node, op->graph[rank], deps, prev ? 2 : 1,
                                                        op->trace_ev[rank][e]));
    return TPG_OK;
}

/* Whether item i waits for item `dep` directly. */
static int depends_on(const tpg_op *op, int rank, int i, int dep) {
    return op->items[rank][i].deps[0] == dep || op->items[rank][i].deps[1] == dep;
}

tpg_status tpg__trace_events_add(tpg_op *op, int rank) {
    tpg__trace_events_destroy(op, rank);
    op->trace_ev_on[rank] = op->trace_buf[rank] != NULL;
    const int start = item_of_kind(op, rank, TPG_NODE_BARRIER_START), gemm = item_of_kind(op, rank, TPG_NODE_GEMM);
    if (!op->trace_ev_on[rank] || start < 0 || gemm < 0) return TPG_OK; /* one kernel, nothing beside it */
    /* Every event node in one chain, each also after the one before, so that timing adds one branch to the graph: as
     * leaves, 24 a rank beside 4 ranks' persistent GEMMs on one GPU made enough branches for a copy to queue behind
     * another rank's waiting GEMM until the barrier timed out (2026-12-05, TP = 4, copies in 4 pieces). In the chain:
     * the origin after the start barrier, the copies and flags (each done before the GEMM can end: it waits for
     * them), the GEMM's end, then what comes after the GEMM (the REDUCE). The origin and the GEMM's end are the two
     * anchors, each a kernel whose last %globaltimer time the trace holds (trace_json.c places the nodes by the one
     * whose event came soonest after it: a GEMM event held up by the chain only loses its say). */
    cudaGraphNode_t prev;
    TPG_CHECK(add_event(op, rank, 0, op->nodes[rank][start], NULL, &prev));
    int j = 0, gemm_timed = 0;
    for (int i = 0; i < op->num_items[rank]; i++) {
        const uint32_t kind = timed_kind(op, rank, i);
        if (!kind) continue;
        if (!gemm_timed && depends_on(op, rank, i, gemm)) {
            TPG_CHECK(add_event(op, rank, 1, op->nodes[rank][gemm], prev, &prev));
            gemm_timed = 1;
        }
        if (j == TPG_TRACE_MAX_NODES) {
            op->trace_ev_skipped[rank]++;
            continue;
        }
        const tpg_graph_item *it = &op->items[rank][i];
        const tpg_graph_node *node = tpg__graph_item_node(op, rank, it);
        op->trace_ev_node[rank][j] = (tpg_trace_ev_node){i, kind, node->stage, node->peer, it->piece, -1};
        TPG_CHECK(add_event(op, rank, 2 + j++, op->nodes[rank][i], prev, &prev));
    }
    if (!gemm_timed) TPG_CHECK(add_event(op, rank, 1, op->nodes[rank][gemm], prev, &prev));
    return TPG_OK;
}

tpg_status tpg__trace_chain_event(tpg_op *op, int rank, cudaStream_t s, uint32_t kind, int stage, int peer, int piece,
                                  int begin_ev, int *ev) {
    *ev = -1;
    const int e = op->trace_ev_count[rank];
    if (!op->trace_ev_on[rank] || e < 2) return TPG_OK; /* untimed: no trace buffer, or no origin */
    if (e - 2 == TPG_TRACE_MAX_NODES) {
        op->trace_ev_skipped[rank] += kind != 0;
        return TPG_OK;
    }
    TPG_CHECK_CUDA(op->ctx, cudaEventCreate(&op->trace_ev[rank][e]));
    op->trace_ev_count[rank] = e + 1;
    op->trace_ev_node[rank][e - 2] = (tpg_trace_ev_node){-1, kind, stage, peer, piece, begin_ev};
    /* external: a node of the captured graph, not only an ordering between the capture's streams */
    TPG_CHECK_CUDA(op->ctx, cudaEventRecordWithFlags(op->trace_ev[rank][e], s, cudaEventRecordExternal));
    *ev = e;
    return TPG_OK;
}

void tpg__trace_events_destroy(tpg_op *op, int rank) {
    for (int e = 0; e < op->trace_ev_count[rank]; e++)
        if (op->trace_ev[rank][e]) (void)cudaEventDestroy(op->trace_ev[rank][e]);
    memset(op->trace_ev[rank], 0, sizeof op->trace_ev[rank]);
    op->trace_ev_count[rank] = op->trace_ev_skipped[rank] = op->trace_ev_on[rank] = 0;
}

int tpg__trace_events_stale(const tpg_op *op, int rank) {
    return op->trace_ev_on[rank] != (op->trace_buf[rank] != NULL);
}

/* Event e's time in ns after the origin's (event 0). */
static tpg_status since_origin(tpg_op *op, int rank, int e, double *ns) {
    float ms = 0.0f;
    const cudaError_t err = cudaEventElapsedTime(&ms, op->trace_ev[rank][0], op->trace_ev[rank][e]);
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        TPG_FAIL(op->ctx, TPG_ERR_NOT_READY, "trace: rank %d's node events are not all recorded (read them after "
                 "tpg_op_sync of the traced call)", rank);
    }
    TPG_CHECK_CUDA(op->ctx, err);
    *ns = (double)ms * 1e6;
    return TPG_OK;
}

/* The timed node j whose item is `item`, or -1. */
static int timed_item(const tpg_op *op, int rank, int item, int n) {
    for (int k = 0; k < n; k++)
        if (op->trace_ev_node[rank][k].item == item) return k;
    return -1;
}

/* The latest end of item i's dependencies among the timed nodes (at[j]: node j's end): 0 for the start barrier (the
 * origin), -1 where one is untimed (the GEMM) or where i is a root (it may start before the barrier). *from_start:
 * every dependency is the start barrier. */
static double dependencies_done(const tpg_op *op, int rank, int i, const double *at, int n, uint32_t *from_start) {
    const tpg_graph_item *it = &op->items[rank][i];
    *from_start = 0;
    if (it->deps[0] < 0 && it->deps[1] < 0) return -1.0;
    double done = 0.0;
    *from_start = 1;
    for (int d = 0; d < 2; d++) {
        const int dep = it->deps[d];
        if (dep < 0) continue;
        if (tpg__graph_item_node(op, rank, &op->items[rank][dep])->kind == TPG_NODE_BARRIER_START) continue;
        *from_start = 0;
        const int found = timed_item(op, rank, dep, n);
        if (found < 0) return *from_start = 0, -1.0;
        if (at[found] > done) done = at[found];
    }
    return done;
}

/* Node j's begin: its dependencies' end (an item), or the event it begins at (a chain's node). */
static double begin_of(const tpg_op *op, int rank, int j, const double *at, int n, uint32_t *from_start) {
    const tpg_trace_ev_node *m = &op->trace_ev_node[rank][j];
    if (m->item >= 0) return dependencies_done(op, rank, m->item, at, n, from_start);
    *from_start = 0;
    return m->begin_ev >= 2 && m->begin_ev - 2 < n ? at[m->begin_ev - 2] : -1.0;
}

static int listed_nodes(const tpg_op *op, int rank, int n) {
    int listed = 0;
    for (int j = 0; j < n; j++) listed += op->trace_ev_node[rank][j].kind != 0;
    return listed;
}

tpg_status tpg__trace_nodes(tpg_op *op, int rank, tpg_trace_node_time *out, int cap, tpg_trace_nodes_info *info) {
    TPG_REQUIRE_HANDLE(op);
    tpg_ctx *ctx = op->ctx;
    if (!out || !info || cap < 0) TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "trace: out and info must be given, cap >= 0");
    if (rank < ctx->local_begin || rank >= ctx->local_end)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "trace: rank %d is not local to this process", rank);
    *info = (tpg_trace_nodes_info){0, op->trace_ev_skipped[rank], -1.0};
    const int n = op->trace_ev_count[rank] >= 2 ? op->trace_ev_count[rank] - 2 : 0;
    const int listed = listed_nodes(op, rank, n);
    if (listed > cap) TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "trace: %d timed nodes, room for %d", listed, cap);
    if (op->trace_ev_count[rank] < 2) return TPG_OK;
    double at[TPG_TRACE_MAX_NODES]; /* each event's time after the origin */
    const int saved = tpg__save_device();
    tpg_status st = TPG_OK;
    TPG_CHECK_GOTO(tpg__use_device(ctx, rank), out);
    TPG_CHECK_GOTO(since_origin(op, rank, 1, &info->gemm_end_ns), out);
    for (int j = 0; j < n; j++) TPG_CHECK_GOTO(since_origin(op, rank, 2 + j, &at[j]), out);
    int o = 0;
    for (int j = 0; j < n; j++) {
        const tpg_trace_ev_node *m = &op->trace_ev_node[rank][j];
        if (!m->kind) continue;
        tpg_trace_node_time *t = &out[o++];
        t->kind = m->kind, t->stage = m->stage, t->peer = m->peer, t->piece = m->piece;
        t->end_ns = at[j];
        t->begin_ns = begin_of(op, rank, j, at, n, &t->from_start);
    }
    info->count = o;
out:
    tpg__restore_device(saved);
    return st;
}
