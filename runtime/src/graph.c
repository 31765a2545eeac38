/* One CUDA graph per device, built by walking that device's generated node list (tables.h,
 * docs/ARCHITECTURE.md "Graph nodes per device") with its copies cut into op->copy.chunks pieces
 * (copy_plan.h: the expanded list). Generic: node kinds and dependencies come from the table; addresses
 * come from op->peers / op->buffer / op->gemm (params.c).
 * Built and instantiated once; later argument changes update the executable graphs in place, except
 * changed copies, which rebuild the device's graph (tpg__graphs_update says why). */
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "nccl.h"
#include "op_internal.h"

/* Everything a node needs, for both building and updating. */
typedef struct node_args {
    int is_kernel;
    struct cudaKernelNodeParams kernel;
    void *kernel_args[1];
    void *dst;
    const void *src;
    size_t bytes;
} node_args;

/* The item that stands for the gathered walk's copy of the own shard (copy_plan.h: TPG_ITEM_LOCAL_SHARD): a COPY of
 * stage 0, whose shard is the device's own. */
static const tpg_graph_node own_shard_node = {TPG_NODE_COPY, 0, -1, -1, {-1, -1}};
/* The item that stands for the one-hop walk's REDUCE kernel (copy_plan.h: TPG_ITEM_ONE_HOP_REDUCE). */
static const tpg_graph_node one_hop_reduce_node = {TPG_NODE_REDUCE, -1, -1, -1, {-1, -1}};

/* Node n of rank's table list, piece `piece` of it (copies and flags are cut; other nodes have piece 0). */
static tpg_status node_describe(tpg_op *op, int rank, const tpg_graph_node *n, int piece, node_args *a) {
    const tpg_kernel_desc *k = op->kernel;
    memset(a, 0, sizeof *a);
    switch ((tpg_node_kind)n->kind) {
    case TPG_NODE_BARRIER_START:
    case TPG_NODE_BARRIER_END: {
        int mode = n->kind == TPG_NODE_BARRIER_START ? TPG_BARRIER_START : TPG_BARRIER_END;
        a->is_kernel = 1;
        a->kernel_args[0] = &op->barrier[mode][rank];
        a->kernel.func = (void *)tpg_barrier_kernel_entry();
        a->kernel.gridDim = (dim3){1, 1, 1};
        a->kernel.blockDim = (dim3){1, 1, 1};
        return TPG_OK;
    }
    case TPG_NODE_GEMM: {
        /* Persistent: one CTA per SM, in whole clusters, all-gather included: its COPY and FLAG nodes are
         * peer-to-peer copies, which run on a copy engine (case TPG_NODE_FLAG says why the FLAG reads the
         * peer's epoch). A node that ran as a kernel could not start before the GEMM, which waits for it. */
        const int cluster = k->cluster_m * k->cluster_n;
        int grid = op->ctx->sm_count[rank] / cluster * cluster;
        if (op->gemm_grid[rank]) {
            grid = op->gemm_grid[rank]; /* depends on the kernel and the device only: computed once */
        } else if (cluster > 1) {
            /* Clusters of 2 need two free SMs of one GPC; the persistent walk needs every cluster resident
             * (scheduler.cuh: per-tile waits), so never launch more clusters than fit at once. */
            cudaLaunchAttribute attr;
            memset(&attr, 0, sizeof attr);
            attr.id = cudaLaunchAttributeClusterDimension;
            attr.val.clusterDim.x = (unsigned)cluster;
            attr.val.clusterDim.y = 1;
            attr.val.clusterDim.z = 1;
            cudaLaunchConfig_t cfg;
            memset(&cfg, 0, sizeof cfg);
            cfg.gridDim = (dim3){(unsigned)grid, 1, 1};
            cfg.blockDim = (dim3){(unsigned)k->threads, 1, 1};
            cfg.dynamicSmemBytes = (size_t)k->smem_bytes;
            cfg.attrs = &attr;
            cfg.numAttrs = 1;
            int fit = 0;
            TPG_CHECK_CUDA(op->ctx, cudaOccupancyMaxActiveClusters(&fit, k->entry(), &cfg));
            if (fit < 1)
                TPG_FAIL(op->ctx, TPG_ERR_UNSUPPORTED, "kernel %s: no cluster of %d CTAs fits on rank %d", k->name,
                         cluster, rank);
            if (fit * cluster < grid) grid = fit * cluster;
        }
        op->gemm_grid[rank] = grid;
        a->is_kernel = 1;
        a->kernel_args[0] = &op->gemm[rank];
        a->kernel.func = (void *)k->entry();
        a->kernel.gridDim = (dim3){(unsigned)grid, 1, 1};
        a->kernel.blockDim = (dim3){(unsigned)k->threads, 1, 1};
        a->kernel.sharedMemBytes = (unsigned)k->smem_bytes;
        return TPG_OK;
    }
    case TPG_NODE_COPY: {
        /* Piece `piece` of the rotating operand's shard (all batches) of the source rank into own slot: the same
         * byte range of both (copy_plan.h). Gathered (params.c: gathered_params): into the slot of the shard's block,
         * and the own shard too, whole (own_shard_node: a copy within the GPU, which runs as a kernel - so the GEMM
         * waits for it, never the other way round: copy_plan.h, tpg_graph_items_gather). */
        const int own = n == &own_shard_node, a_rotates = op->sched->rotating == TPG_OPERAND_A;
        const char *src = own         ? (const char *)(a_rotates ? op->tensors[rank].a : op->tensors[rank].b)
                          : a_rotates ? tpg_peers_get(&op->peers, n->peer, TPG_PEER_SHARD_A)
                                      : tpg_peers_get(&op->peers, n->peer, TPG_PEER_SHARD_B);
        if (!src)
            TPG_FAIL(op->ctx, TPG_ERR_NOT_READY, "rank %d copies from rank %d, whose tensors are not set", rank,
                     own ? rank : n->peer);
        size_t offset = 0;
        if (own)
            a->bytes = op->layout.slot_bytes_used;
        else
            tpg_copy_plan_piece(&op->copy, piece, &offset, &a->bytes);
        const int slot = op->gathered ? op->sched->stages[rank * op->sched->tp + n->stage].block : n->slot;
        a->src = src + offset;
        a->dst = (char *)tpg_buf_slot(op->buffer[rank], &op->layout, slot) + offset;
        return TPG_OK;
    }
    case TPG_NODE_REDUCE: {
        /* one CTA per item, at most two per SM of the rank (105 registers a thread: two fit); the rank's GEMM before it
         * has ended, and the CTAs claim the items round-robin */
        const tpg_one_hop_params *r = &op->one_hop_reduce[rank];
        const int items = tpg_one_hop_items(r), cap = 2 * op->ctx->sm_count[rank];
        a->is_kernel = 1;
        a->kernel_args[0] = &op->one_hop_reduce[rank];
        a->kernel.func = (void *)tpg_one_hop_kernel_entry();
        a->kernel.gridDim = (dim3){(unsigned)(items < 1 ? 1 : items < cap ? items : cap), 1, 1};
        a->kernel.blockDim = (dim3){TPG_ONE_HOP_THREADS, 1, 1};
        return TPG_OK;
    }
    case TPG_NODE_FLAG: {
        /* The copy source's epoch word, not this device's: a 4-byte copy within one device runs as a
         * kernel (it needed a free SM beside the persistent GEMM), a peer-to-peer one on a copy engine.
         * The values are equal: the peer bumped its epoch before arriving at the START barrier this node
         * follows, and bumps it again only after the END barrier, which waits for this flag (directly with
         * the barriers beside the GEMM, else through this device's GEMM, which waits for it). */
        void *peer_buffer = tpg_peers_get(&op->peers, n->peer, TPG_PEER_BUFFER);
        if (!peer_buffer)
            TPG_FAIL(op->ctx, TPG_ERR_NOT_READY, "rank %d raises a flag from rank %d's epoch, whose buffer is not mapped",
                     rank, n->peer);
        a->src = tpg_buf_word(peer_buffer, op->layout.epoch);
        a->dst = tpg_buf_stage_flags(op->buffer[rank], &op->layout, n->slot) + piece;
        a->bytes = sizeof(unsigned int);
        return TPG_OK;
    }
    }
    TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "schedule %s: rank %d has a node of unknown kind %d", op->sched->name,
             rank, n->kind);
}

int tpg__single_kernel(const tpg_op *op) {
    return op->sched->nodes_per_device == 1 && op->sched->nodes[0].kind == TPG_NODE_GEMM;
}

/* The single GEMM node as a kernel launch (same function, grid, block, smem, cluster and arguments as the
 * graph's node) with programmatic stream serialization (tpg_op_set_pdl): the kernel may begin while the
 * stream's previous kernel finishes its last tiles, and waits in griddepcontrol.wait (gemm_sm90.cuh)
 * until that kernel's writes are visible. */
tpg_status tpg__launch_single(tpg_op *op, int rank, cudaStream_t s) {
    const tpg_kernel_desc *k = op->kernel;
    node_args a;
    TPG_CHECK(node_describe(op, rank, &op->sched->nodes[rank * op->sched->nodes_per_device], 0, &a));
    cudaLaunchAttribute attr[2];
    memset(attr, 0, sizeof attr);
    unsigned n = 0;
    if (k->cluster_m * k->cluster_n > 1) {
        attr[n].id = cudaLaunchAttributeClusterDimension;
        attr[n].val.clusterDim.x = (unsigned)(k->cluster_m * k->cluster_n);
        attr[n].val.clusterDim.y = 1;
        attr[n++].val.clusterDim.z = 1;
    }
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n++].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = a.kernel.gridDim;
    cfg.blockDim = a.kernel.blockDim;
    cfg.dynamicSmemBytes = a.kernel.sharedMemBytes;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = n;
    TPG_CHECK_CUDA(op->ctx, cudaLaunchKernelExC(&cfg, a.kernel.func, a.kernel_args));
    return TPG_OK;
}

/* The TPG_TRANSPORT_NCCL graph's own nodes: the start node (a barrier of one: it advances the epoch) and the
 * GEMM after it; nccl_graph.c adds the transfers beside the GEMM. */
static const tpg_graph_node nccl_nodes[] = {{TPG_NODE_BARRIER_START, -1, -1, -1, {-1, -1}},
                                            {TPG_NODE_GEMM, -1, -1, -1, {0, -1}}};

/* Rank's node list: the schedule table's, or nccl_nodes over NCCL. */
static const tpg_graph_node *rank_nodes(const tpg_op *op, int rank, int *count) {
    if (tpg__op_over_nccl(op)) {
        *count = (int)(sizeof nccl_nodes / sizeof nccl_nodes[0]);
        return nccl_nodes;
    }
    *count = op->sched->nodes_per_device;
    return &op->sched->nodes[rank * op->sched->nodes_per_device];
}

/* Rank's node list expanded into op->items[rank] (copy_plan.h); the node handles array sized to match. */
static tpg_status expand_one(tpg_op *op, int rank) {
    tpg_ctx *ctx = op->ctx;
    const tpg_schedule_table *t = op->sched;
    int listed = 0;
    const tpg_graph_node *list = rank_nodes(op, rank, &listed);
    const int chunks = op->copy.chunks;
    const int count = tpg_graph_items_count(list, listed, chunks);
    /* + 1: the own shard's copy (gathered) or the REDUCE (one-hop) */
    op->items[rank] = calloc((size_t)count + 1, sizeof *op->items[rank]);
    op->nodes[rank] = calloc((size_t)count + 1, sizeof *op->nodes[rank]);
    if (!op->items[rank] || !op->nodes[rank])
        TPG_FAIL(ctx, TPG_ERR_OUT_OF_MEMORY, "graph of rank %d: host allocation failed", rank);
    op->num_items[rank] = count;
    if (tpg_graph_items_expand(list, listed, chunks, op->items[rank]) != 0)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "schedule %s: rank %d's node list has a dependency on a later node or "
                 "a FLAG that does not follow a COPY", t->name, rank);
    if (op->overlap && tpg_graph_items_overlap(list, t->comm, op->items[rank], count) != 0)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "schedule %s: rank %d's graph has no barriers to run beside its GEMM",
                 t->name, rank);
    if (tpg__op_pulls(op)) { /* the GEMM pulls every shard itself: no copy or flag node (params.c: gathered_pulls) */
        if ((op->num_items[rank] = tpg_graph_items_pulled(list, op->items[rank], count)) < 0)
            TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "schedule %s: rank %d's GEMM does not follow its start barrier, "
                     "so it cannot pull the gathered walk's shards itself", t->name, rank);
    } else if (tpg__op_one_hop(op)) { /* the REDUCE after the GEMM (params.c: one_hop_params) */
        if ((op->num_items[rank] = tpg_graph_items_one_hop(list, op->items[rank], count)) != count + 1)
            TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "schedule %s: rank %d's closing barrier does not follow its GEMM, "
                     "so the one-hop walk's REDUCE cannot go between them", t->name, rank);
    } else if (op->gathered &&
               (op->num_items[rank] = tpg_graph_items_gather(list, op->items[rank], count)) != count + 1) {
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "schedule %s: rank %d's GEMM node cannot also wait for the copy of "
                 "its own shard (the gathered walk)", t->name, rank);
    }
    return TPG_OK;
}

const tpg_graph_node *tpg__graph_item_node(const tpg_op *op, int rank, const tpg_graph_item *it) {
    int listed = 0;
    if (it->node == TPG_ITEM_ONE_HOP_REDUCE) return &one_hop_reduce_node;
    return it->node == TPG_ITEM_LOCAL_SHARD ? &own_shard_node : &rank_nodes(op, rank, &listed)[it->node];
}

/* The copy-engine partials' chains (ce_partials.c) between rank's start barrier, GEMM and closing barrier. */
static tpg_status ce_partials_add(tpg_op *op, int rank) {
    cudaGraphNode_t by_kind[3] = {NULL, NULL, NULL}; /* start, GEMM, end */
    for (int i = 0; i < op->num_items[rank]; i++) {
        const int kind = tpg__graph_item_node(op, rank, &op->items[rank][i])->kind;
        const int at = kind == TPG_NODE_BARRIER_START ? 0
                       : kind == TPG_NODE_GEMM        ? 1
                       : kind == TPG_NODE_BARRIER_END ? 2
                                                      : -1;
        if (at >= 0) by_kind[at] = op->nodes[rank][i];
    }
    if (!by_kind[0] || !by_kind[1] || !by_kind[2])
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "schedule %s: rank %d's graph lacks a start barrier, GEMM or "
                 "closing barrier for the copy-engine partials to run between", op->sched->name, rank);
    return tpg__ce_partials_add(op, rank, by_kind[0], by_kind[1], by_kind[2]);
}

static tpg_status build_one(tpg_op *op, int rank) {
    tpg_ctx *ctx = op->ctx;
    TPG_CHECK(expand_one(op, rank));
    TPG_CHECK(tpg__use_device(ctx, rank));
    TPG_CHECK_CUDA(ctx, cudaFuncSetAttribute(op->kernel->entry(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             op->kernel->smem_bytes));
    if (!op->capture_done[rank]) /* created here, not during a caller's capture */
        TPG_CHECK_CUDA(ctx, cudaEventCreateWithFlags(&op->capture_done[rank], cudaEventDisableTiming));
    if (!op->launched[rank])
        TPG_CHECK_CUDA(ctx, cudaEventCreateWithFlags(&op->launched[rank], cudaEventDisableTiming));
    TPG_CHECK_CUDA(ctx, cudaGraphCreate(&op->graph[rank], 0));
    cudaGraphNode_t *nodes = op->nodes[rank];
    for (int i = 0; i < op->num_items[rank]; i++) {
        const tpg_graph_item *it = &op->items[rank][i];
        const tpg_graph_node *n = tpg__graph_item_node(op, rank, it);
        cudaGraphNode_t deps[2];
        size_t ndeps = 0;
        for (int j = 0; j < 2; j++)
            if (it->deps[j] >= 0) deps[ndeps++] = nodes[it->deps[j]];
        node_args a;
        TPG_CHECK(node_describe(op, rank, n, it->piece, &a));
        if (a.is_kernel) {
            a.kernel.kernelParams = a.kernel_args;
            TPG_CHECK_CUDA(ctx, cudaGraphAddKernelNode(&nodes[i], op->graph[rank], deps, ndeps, &a.kernel));
            const tpg_kernel_desc *k = op->kernel;
            if (n->kind == TPG_NODE_GEMM && k->cluster_m * k->cluster_n > 1) {
                cudaLaunchAttributeValue v;
                memset(&v, 0, sizeof v);
                v.clusterDim.x = (unsigned)(k->cluster_m * k->cluster_n);
                v.clusterDim.y = 1;
                v.clusterDim.z = 1;
                TPG_CHECK_CUDA(ctx, cudaGraphKernelNodeSetAttribute(nodes[i], cudaLaunchAttributeClusterDimension, &v));
            }
        } else {
            TPG_CHECK_CUDA(ctx, cudaGraphAddMemcpyNode1D(&nodes[i], op->graph[rank], deps, ndeps, a.dst, a.src, a.bytes,
                                                         cudaMemcpyDefault));
        }
    }
    if (tpg__op_over_nccl(op)) TPG_CHECK(tpg__nccl_transfers_add(op, rank, nodes[0], nodes[1])); /* nccl_nodes */
#ifdef TPG_TRACE
    TPG_CHECK(tpg__trace_events_add(op, rank)); /* while a trace buffer is set: event nodes after the timed nodes */
#endif
    if (tpg__op_ce_partials(op)) TPG_CHECK(ce_partials_add(op, rank)); /* after: its chains' events follow those */
    TPG_CHECK_CUDA(ctx, cudaGraphInstantiate(&op->exec[rank], op->graph[rank], 0));
    return TPG_OK;
}

tpg_status tpg__graphs_build(tpg_op *op) { /* local ranks only: a process builds the graphs it launches */
    for (int r = op->ctx->local_begin; r < op->ctx->local_end; r++) TPG_CHECK(build_one(op, r));
    op->built = 1;
    return TPG_OK;
}

/* Whether a copy node's instantiated parameters (kept by the non-executable graph) still match. */
static tpg_status copy_unchanged(tpg_ctx *ctx, cudaGraphNode_t node, const node_args *a, int *same) {
    struct cudaMemcpy3DParms q;
    TPG_CHECK_CUDA(ctx, cudaGraphMemcpyNodeGetParams(node, &q));
    *same = q.dstPtr.ptr == a->dst && q.srcPtr.ptr == a->src && q.extent.width == a->bytes;
    return TPG_OK;
}

static void destroy_one(tpg_op *op, int r) {
    (void)cudaSetDevice(op->ctx->devices[r]);
    if (op->exec[r]) (void)cudaGraphExecDestroy(op->exec[r]);
    if (op->graph[r]) (void)cudaGraphDestroy(op->graph[r]);
#ifdef TPG_TRACE
    tpg__trace_events_destroy(op, r); /* after the graphs that record them */
#endif
    free(op->nodes[r]);
    free(op->items[r]);
    op->exec[r] = NULL;
    op->graph[r] = NULL;
    op->nodes[r] = NULL;
    op->items[r] = NULL;
    op->num_items[r] = 0;
    (void)cudaGetLastError(); /* an ignored failure above stays out of the caller's next cudaGetLastError */
}

/* Rebuilds rank r's graph. Launches of one executable graph run one after another, whatever the
 * streams, and the protocol relies on it (one START barrier at a time bumps the epoch); a new
 * executable graph is not ordered after the old one's launches, so those must finish first. */
static tpg_status rebuild_one(tpg_op *op, int r) {
    TPG_CHECK(tpg__op_wait(op, r));
    destroy_one(op, r);
    return build_one(op, r);
}

static tpg_status update_all(tpg_op *op) {
    tpg_ctx *ctx = op->ctx;
    for (int r = ctx->local_begin; r < ctx->local_end; r++) {
        TPG_CHECK(tpg__use_device(ctx, r));
        /* the captured transfers hold the address of the shard an all-gather sends */
        int rebuild = tpg__op_over_nccl(op) && tpg__nccl_needs_rebuild(op, r);
#ifdef TPG_TRACE
        rebuild |= tpg__trace_events_stale(op, r); /* a trace switched on or off adds or drops event nodes */
#endif
        for (int i = 0; i < op->num_items[r] && !rebuild; i++) {
            const tpg_graph_item *it = &op->items[r][i];
            node_args a;
            TPG_CHECK(node_describe(op, r, tpg__graph_item_node(op, r, it), it->piece, &a));
            int same = 1;
            if (!a.is_kernel) TPG_CHECK(copy_unchanged(ctx, op->nodes[r][i], &a, &same));
            rebuild = !same;
        }
        if (rebuild) {
            TPG_CHECK(rebuild_one(op, r));
            continue;
        }
        for (int i = 0; i < op->num_items[r]; i++) {
            const tpg_graph_item *it = &op->items[r][i];
            node_args a;
            TPG_CHECK(node_describe(op, r, tpg__graph_item_node(op, r, it), it->piece, &a));
            if (!a.is_kernel) continue;
            a.kernel.kernelParams = a.kernel_args;
            TPG_CHECK_CUDA(ctx, cudaGraphExecKernelNodeSetParams(op->exec[r], op->nodes[r][i], &a.kernel));
            /* and in the graph itself, which a captured call copies (tpg__graph_capture) */
            TPG_CHECK_CUDA(ctx, cudaGraphKernelNodeSetParams(op->nodes[r][i], &a.kernel));
        }
    }
    return TPG_OK;
}

tpg_status tpg__capture_end(tpg_ctx *ctx, cudaStream_t s, tpg_status steps, const char *what) {
    cudaGraph_t g = NULL;
    const cudaError_t e = cudaStreamEndCapture(s, &g); /* always ends the capture, also after a failed step */
    if (steps != TPG_OK) {
        (void)cudaGetLastError();
        return steps;
    }
    if (e != cudaSuccess) return tpg__cuda_error(ctx, e, __FILE__, __LINE__, what);
    return TPG_OK;
}

/* The rank's graph as a child node of the graph that stream s is capturing, after what s captured so far:
 * the caller's graph then holds a copy of this call (its nodes as they are now), replayed with the caller's
 * graph. The executable graph itself is not launched. */
tpg_status tpg__graph_capture(tpg_op *op, int rank, cudaStream_t s) {
    tpg_ctx *ctx = op->ctx;
    enum cudaStreamCaptureStatus status;
    cudaGraph_t into = NULL;
    const cudaGraphNode_t *deps = NULL;
    const cudaGraphEdgeData *edges = NULL; /* asked for, so that the query is not lossy; the child's edges are
                                              plain (full completion): never weaker than what s captured */
    size_t ndeps = 0;
    cudaGraphNode_t node;
#ifdef TPG_TRACE
    if (op->trace_ev_on[rank]) /* the copy would keep event nodes whose events a rebuild destroys */
        TPG_FAIL(ctx, TPG_ERR_UNSUPPORTED, "trace build: an op being traced (tpg__trace_enable) cannot be captured: its "
                 "graph's event nodes would go into the caller's graph, and tpg__trace_disable destroys their events");
#endif
#if CUDART_VERSION >= 13000
    TPG_CHECK_CUDA(ctx, cudaStreamGetCaptureInfo(s, &status, NULL, &into, &deps, &edges, &ndeps));
#else
    TPG_CHECK_CUDA(ctx, cudaStreamGetCaptureInfo_v3(s, &status, NULL, &into, &deps, &edges, &ndeps));
#endif
    (void)status; /* Active: the caller (op_run.c, stream_capturing) refused any other state before this call */
    TPG_CHECK_CUDA(ctx, cudaGraphAddChildGraphNode(&node, into, deps, ndeps, op->graph[rank]));
    /* then the op's event, so that its waits (tpg__op_wait) also wait for the caller's launches of this copy */
    cudaGraphNode_t done = NULL;
    tpg_status st = TPG_OK;
    TPG_CHECK_CUDA_GOTO(ctx, cudaGraphAddEventRecordNode(&done, into, &node, 1, op->capture_done[rank]), fail);
#if CUDART_VERSION >= 13000
    TPG_CHECK_CUDA_GOTO(ctx, cudaStreamUpdateCaptureDependencies(s, &done, NULL, 1, cudaStreamSetCaptureDependencies),
                        fail);
#else
    TPG_CHECK_CUDA_GOTO(ctx, cudaStreamUpdateCaptureDependencies(s, &done, 1, cudaStreamSetCaptureDependencies), fail);
#endif
    op->was_captured = 1;
    tpg_nccl_note_capture(ctx->nccl); /* the caller's graph now holds NCCL's plans (NULL: no NCCL transport) */
    return TPG_OK;
fail: /* the caller's graph must not keep a node of this call that its stream does not lead to */
    if (done) (void)cudaGraphDestroyNode(done);
    (void)cudaGraphDestroyNode(node);
    return st;
}

/* Kernel nodes take new parameters in place. A changed copy node makes the rank's graph be rebuilt
 * instead: cudaGraphExecMemcpyNodeSetParams1D may turn a peer copy that the instantiated graph ran on
 * a copy engine into a copy kernel, which then crawled on the one SM all-gather used to leave free (and
 * would now find none)
 * (measured on H200: a 128 MiB peer shard took 4.4 ms instead of being hidden behind a 1.9 ms call).
 * On failure every graph is dropped (built = 0: tpg_op_run says TPG_ERR_NOT_READY, the next
 * successful refresh builds from scratch), never a half-updated set. */
tpg_status tpg__graphs_update(tpg_op *op) {
    tpg_status st = update_all(op);
    if (st != TPG_OK) tpg__graphs_drop(op);
    return st;
}

void tpg__graphs_drop(tpg_op *op) {
    /* the next graphs are not ordered after these ones' launches (rebuild_one says why): wait for them */
    for (int r = op->ctx->local_begin; r < op->ctx->local_end; r++) tpg__op_wait_quiet(op, r);
    tpg__graphs_destroy(op);
}

void tpg__graphs_destroy(tpg_op *op) {
    for (int r = op->ctx->local_begin; r < op->ctx->local_end; r++)
        if (op->exec[r] || op->graph[r] || op->nodes[r] || op->items[r]) destroy_one(op, r);
    op->built = 0;
}
