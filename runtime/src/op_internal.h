/* The op's internals, shared by op.c, op_run.c, op_rank.c, params.c, overlap.c and graph.c. */
#ifndef TPG_OP_INTERNAL_H
#define TPG_OP_INTERNAL_H

#include <cuda_runtime_api.h>

#include "barrier.h"
#include "buffers.h"
#include "copy_plan.h"
#include "ctx_internal.h"
#include "gemm_params.h"
#include "nccl_plan.h"
#include "one_hop.h"
#include "peers.h"
#include "shapes.h"
#include "tables.h"
#include "trace_format.h" /* TPG_TRACE_NODE_*: ce_partials.c names its timed nodes in every build */
#ifdef TPG_TRACE
/* trace build: what event 2 + j of a rank's timed graph times (trace_events.c) */
typedef struct tpg_trace_ev_node {
    int item;      /* the expanded graph item it follows, or -1: a node of a chain captured beside the graph */
    uint32_t kind; /* TPG_TRACE_NODE_*; 0: not listed (a chain's point that a later node begins at) */
    int stage, peer, piece;
    int begin_ev; /* a chain node's begin: the event of that number, or -1 (unknown) */
} tpg_trace_ev_node;
#endif

struct tpg_op {
    tpg_ctx *ctx;
    const tpg_config_desc *config;
    const tpg_schedule_table *sched;
    const tpg_kernel_desc *kernel;
    tpg_op_desc desc;
    tpg_shapes shapes;
    tpg_buffer_layout layout;
    tpg_peers peers;                       /* symmetric buffers + shard pointers of every rank */
    void *buffer[TPG_MAX_TP];              /* own symmetric allocation of each local rank */
    void *tile_order[TPG_MAX_TP];           /* raster: hilbert kernels: each local rank's walk order (tile_order.c) */
    void *tile_order_one_hop[TPG_MAX_TP];   /* ... of the one-hop walk's GEMM, where the op may run it (one_hop) */
    void *sk_work[TPG_MAX_TP];             /* stream-K workspace of each local rank, NULL if none (stream_k.c) */
    /* multi-process: peers' allocations this op maps (ipc.h), per peer kind, so that new shards from
     * tpg_op_set_tensors release the mappings of the shards they replace */
    tpg_ipc_held ipc_held[TPG_PEER_KIND_COUNT];
    tpg_tensors tensors[TPG_MAX_TP];
    int has_tensors[TPG_MAX_TP];

    /* Launch arguments; graph kernel nodes point at these (copied by CUDA at build / update). */
    tpg_gemm_params gemm[TPG_MAX_TP];
    tpg_barrier_params barrier[2][TPG_MAX_TP]; /* [tpg_barrier_mode][rank] */
    tpg_one_hop_params one_hop_reduce[TPG_MAX_TP]; /* the one-hop walk's REDUCE kernel (one_hop.h) */

    int pdl;                               /* tpg_op_set_pdl: single-kernel ops launch their kernel with PDL */
    int overlap;                           /* tpg_op_set_overlap_barriers: the GEMM beside the start barrier */
    int gathered;                          /* the walk order is TPG_WALK_GATHERED (plan.h), decided at creation: the
                                              layout holds its slots, graph.c copies the own shard, params.c */
    tpg_copy_plan copy;                    /* how the all-gather copies are cut (copy_plan.h; tpg_op_set_copy_chunks) */
    int copy_engine;                       /* tpg_op_set_gather_copy_engine: the gathered walk's shards by copy nodes */
    int one_hop;                           /* the walk order would be TPG_WALK_ONE_HOP (plan.h), decided at creation: the
                                              layout holds every block's slot, whichever walk runs */
    int rs_ring;                           /* tpg_op_set_rs_ring: the ring where the walk would be one-hop */
    int gemm_grid[TPG_MAX_TP];             /* the persistent GEMM grid of each local rank, 0 until computed */
    /* Recorded on the caller's stream after each direct launch (op_run.c): what the op's waits wait for, so that the
     * caller's stream may be destroyed after its call and the op never touches it again (the NCCL transport's
     * bounded wait polls it). Created with the rank's graph. */
    cudaEvent_t launched[TPG_MAX_TP];
    int has_run;                           /* tpg_op_run launched at least once */
    int out_of_step;                       /* a tpg_op_run launched some local ranks only (op_run.c) */
    /* Recorded by every graph a call of the op was captured into, after the rank's child node (its launches run
     * on streams the op does not know): tpg__op_wait waits for it. Created with the rank's graph. */
    cudaEvent_t capture_done[TPG_MAX_TP];
    int was_captured;                      /* a call of the op was captured into a caller's graph (graph.c) */
    struct tpg_op *next_in_ctx;            /* the context's live ops (ctx->ops; op.c): the NCCL wait reads theirs */
    int built;                             /* graphs built and instantiated */
    cudaGraph_t graph[TPG_MAX_TP];
    cudaGraphExec_t exec[TPG_MAX_TP];
    tpg_graph_item *items[TPG_MAX_TP];     /* each local rank's expanded node list (copy_plan.h) */
    int num_items[TPG_MAX_TP];
    cudaGraphNode_t *nodes[TPG_MAX_TP];    /* [num_items], index as in items */
    /* Each local rank's own non-blocking stream, made at first use (tpg__op_own_stream): reading and clearing the
     * op's words (status, epochs, counts) beside or after a launch without waiting for the caller's other work, and,
     * over NCCL, capturing the transfers. Then the shard the all-gather's NCCL transfers send (a new one rebuilds
     * the graph). */
    cudaStream_t own_stream[TPG_MAX_TP];
    const void *nccl_shard[TPG_MAX_TP];
    tpg_nccl_rows nccl_rows;               /* reduce-scatter: the partial's rows, for its bands (nccl_plan.h) */
    unsigned int *ce_zeros;                /* copy-engine partials: pinned zeros for the row counts (ce_partials.c) */
#ifdef TPG_TRACE
    void *trace_buf[TPG_MAX_TP];           /* trace builds: timeline buffer per local rank (trace.h), or NULL */
    size_t trace_bytes[TPG_MAX_TP];        /* trace build: each rank's buffer (its SM count sizes it) */
    /* trace build, the graph's timed nodes (trace_events.c): built with event nodes while a trace buffer is set;
     * event 0 follows the start barrier, event 1 the GEMM, event 2 + j the node trace_ev_node[r][j] */
    int trace_ev_on[TPG_MAX_TP], trace_ev_count[TPG_MAX_TP], trace_ev_skipped[TPG_MAX_TP];
    cudaEvent_t trace_ev[TPG_MAX_TP][2 + TPG_TRACE_MAX_NODES];
    tpg_trace_ev_node trace_ev_node[TPG_MAX_TP][TPG_TRACE_MAX_NODES];
#endif
};

/* op.c: builds every local rank's params and builds or updates the graphs once all ranks have
 * tensors; quiesce waits for the local graphs, destroys them and drops the op's IPC mappings; free
 * releases the local buffers and op (both leave the current device changed). */
tpg_status tpg__op_refresh(tpg_op *op);
int tpg__op_quiesce(tpg_op *op);
void tpg__op_free(tpg_op *op);

/* op_rank.c, multi-process mode. create: exchanges the problem and the buffer handles (local = the
 * status of the local part, *op NULL when it failed); on failure frees *op and sets it NULL.
 * tensors: exchanges the shard handles and refreshes (local = the argument checks' status). */
tpg_status tpg__op_create_collective(tpg_ctx *ctx, const tpg_op_desc *desc, tpg_op **op, tpg_status local);
tpg_status tpg__op_tensors_collective(tpg_op *op, const tpg_tensors *t, tpg_status local);
/* copy_chunks over NCCL (local = the argument checks' status): every rank's cut, which must be the same, then the
 * rebuild on every rank or on none (as tpg_op_set_rs_ring). cut_copies (op.c): one process's rebuild for the cut
 * `next`; on failure back to the cut the op had, with its graphs if they build (the error stays). */
tpg_status tpg__op_copy_chunks_collective(tpg_op *op, int chunks, tpg_status local);
/* After a failed collective whose ranks may now disagree: drops the graphs (tpg_op_run says TPG_ERR_NOT_READY, and a
 * graph built while a peer failed would wait for that peer) and every rank's tensors, so that only a collective
 * tpg_op_set_tensors rebuilds. */
void tpg__op_unready(tpg_op *op);
tpg_status tpg__op_cut_copies(tpg_op *op, tpg_copy_plan next);

/* params.c: fills op->gemm[rank] and op->barrier[*][rank] from the tables, shapes, peers and tensors. */
tpg_status tpg__params_build(tpg_op *op, int rank);

/* graph.c: builds + instantiates every rank's graph (first time), or updates the executable graphs. */
tpg_status tpg__graphs_build(tpg_op *op);
/* raster: hilbert kernels: builds the walk order of the op's units on every local device (no-op for
 * grouped kernels); tpg__tile_order_free releases it (NULL entries are skipped). */
tpg_status tpg__tile_order_alloc(tpg_op *op);
void tpg__tile_order_free(tpg_op *op);
/* Ops of stream-K kernels with a one-stage launch (TP = 1, a gathered or one-hop walk): the workspace of the
 * stream-K tail (stream_k.c) on every local device whose shape has a region; its part of the launch parameters; release (NULL entries are skipped). */
tpg_status tpg__stream_k_alloc(tpg_op *op);
/* The rows of the op's one-stage launch, which tpg__stream_k_alloc sizes the workspace for; 0 if it has none: TP = 1,
 * or a walk of one GEMM of all M rows (op.c decides it at creation; a one-hop op that keeps its ring then launches its
 * stages, and tpg__stream_k_params finds no region). */
int64_t tpg__stream_k_rows(const tpg_op *op);
void tpg__stream_k_params(const tpg_op *op, int rank, tpg_gemm_params *g);
void tpg__stream_k_free(tpg_op *op);
tpg_status tpg__graphs_update(tpg_op *op);
/* Ops whose graph is one GEMM kernel node (TP = 1): with op->pdl, tpg_op_run launches that kernel itself,
 * so that it can carry programmatic dependent launch (a graph launch cannot overlap the kernel before it). */
int tpg__single_kernel(const tpg_op *op);
tpg_status tpg__launch_single(tpg_op *op, int rank, cudaStream_t s);
/* op.c: waits until nothing of op runs on rank r's device (its last direct launch: the `launched` event, and the last
 * launch of a graph a call of it was captured into: capture_done), which it makes current. _quiet: for cleanup
 * paths, which ignore a failure and must not overwrite the message of the error they clean up after. */
tpg_status tpg__op_wait(tpg_op *op, int r);
/* _quiet returns 0 where a launch still runs after it gave up (over NCCL: TPG_NCCL_ABORT_DRAIN_S after the abort),
 * else 1. still_busy: *busy = whether rank r's last launch (direct or in a captured graph) still runs. */
int tpg__op_wait_quiet(tpg_op *op, int r);
tpg_status tpg__op_still_busy(tpg_op *op, int r, int *busy);
/* graph.c: ends the capture on s into a graph under construction (nccl_graph.c, ce_partials.c), whatever `steps` -
 * the status of what was captured - says: that status if it failed (the capture's own error dropped), else the
 * capture's (`what` names it). */
tpg_status tpg__capture_end(tpg_ctx *ctx, cudaStream_t s, tpg_status steps, const char *what);
/* graph.c: rank's graph added to what stream s is capturing (a child graph node after s's capture dependencies),
 * instead of a launch. */
tpg_status tpg__graph_capture(tpg_op *op, int rank, cudaStream_t s);
/* overlap.c: what one CTA of a GEMM kernel (gemm_regs a thread, gemm_threads, gemm_smem static + dynamic bytes) and
 * one barrier CTA (one thread) take of an SM together - registers in whole warps of 256-register units, shared memory
 * in 128-byte units with the driver's reserve (reserved bytes) per CTA, threads in whole warps - for the check that the
 * barrier fits
 * beside the GEMM (tpg_op_set_overlap_barriers). Pure. */
typedef struct tpg_sm_share {
    int regs, threads;
    long smem;
} tpg_sm_share;
tpg_sm_share tpg__barrier_beside(int gemm_regs, int gemm_threads, long gemm_smem, int barrier_regs, long barrier_smem,
                                 int reserved);
/* overlap.c (rank's device idle, TP >= 2): the start barrier's epoch word must equal the GEMM's last_epoch,
 * else the GEMM's epochs are out of step with the barrier's, and the shard pulls' words must be 0
 * (TPG_ERR_NOT_READY, with the numbers). */
tpg_status tpg__check_epochs(tpg_op *op, int rank);
/* op_run.c: rank r's own stream (made current: r's device), created at first use; a copy of `bytes` of the op's
 * device words at src to host memory, and a clear of one word, each on that stream and waited for, so that neither
 * queues behind the caller's work nor runs on the legacy stream (which a non-blocking stream does not order against
 * the next launch); the streams, released. */
tpg_status tpg__op_own_stream(tpg_op *op, int r, cudaStream_t *s);
tpg_status tpg__op_read(tpg_op *op, int r, const void *src, void *dst, size_t bytes);
tpg_status tpg__op_clear_word(tpg_op *op, int r, unsigned int *word);
void tpg__op_own_streams_free(tpg_op *op);
/* Rank r's control words, epoch through pull_seen (buffers.c lays them out in that order), in one tpg__op_read;
 * tpg__op_word picks one by its layout offset. */
typedef struct {
    unsigned int at[1024];
} tpg_op_words;
tpg_status tpg__op_read_words(tpg_op *op, int r, tpg_op_words *w);
static inline unsigned int tpg__op_word(const tpg_op_words *w, const tpg_buffer_layout *b, size_t offset) {
    return w->at[(offset - b->epoch) / sizeof(unsigned int)];
}
/* Whether the op's GEMM pulls the gathered walk's shards itself (copy_plan.h: tpg_gather_pulls), as things stand. */
static inline int tpg__op_pulls(const tpg_op *op) {
    return tpg_gather_pulls(op->gathered, op->copy.chunks, op->overlap, op->copy_engine);
}
/* Whether the op's walk is one-hop (plan.h: TPG_WALK_ONE_HOP), as things stand: eligible and not kept a ring. */
static inline int tpg__op_one_hop(const tpg_op *op) { return op->one_hop && !op->rs_ring; }
/* Whether the op's graphs move data over NCCL (a TP = 1 op moves nothing: its graph is the table's GEMM alone). */
static inline int tpg__op_over_nccl(const tpg_op *op) { return tpg__over_nccl(op->ctx) && op->sched->tp > 1; }
/* Whether the op's ring moves its partials by copy engine (schedules.yaml copy_engine_partials; ce_partials.c): a
 * reduce-scatter ring at TP >= 2 over the peer transport (over NCCL the transfers are NCCL's anyway; the one-hop walk
 * reads the peers' slots itself). */
static inline int tpg__op_ce_partials(const tpg_op *op) {
    return op->config->copy_engine_partials && op->sched->comm == TPG_COMM_REDUCE_SCATTER && op->sched->tp > 1 &&
           !tpg__over_nccl(op->ctx) && !tpg__op_one_hop(op);
}
/* ce_partials.c: rank's copy-engine chains added to its graph (under construction) after node `start` and the
 * launch completion of node `gemm`, with node `end` after them; the queue check. */
tpg_status tpg__ce_partials_add(tpg_op *op, int rank, cudaGraphNode_t start, cudaGraphNode_t gemm, cudaGraphNode_t end);
/* TPG_ERR_UNSUPPORTED for an op whose ring has copy-engine chains (tpg__op_ce_partials: not a one-hop walk) and whose
 * local ranks share a GPU without CUDA_DEVICE_MAX_CONNECTIONS=32 (ce_partials.c says why); TPG_OK otherwise. */
tpg_status tpg__ce_partials_check_queues(tpg_op *op);
/* ce_partials.c: the pinned zeros the chains copy over the send bank's row counts (none without row counts); the
 * check that rank's counts are back to 0 between calls (tpg__check_epochs). */
tpg_status tpg__ce_partials_check_idle(tpg_op *op, int rank);
tpg_status tpg__ce_partials_alloc(tpg_op *op);
void tpg__ce_partials_free(tpg_op *op);
/* nccl_graph.c (TPG_TRANSPORT_NCCL): rank's transfers added to its graph (under construction) as a branch after
 * node `after` (the start node), and their bounded wait after node `gemm`; whether rank r's graph must be built
 * anew for its current tensors (its all-gather sends another shard). */
tpg_status tpg__nccl_transfers_add(tpg_op *op, int rank, cudaGraphNode_t after, cudaGraphNode_t gemm);
int tpg__nccl_needs_rebuild(const tpg_op *op, int r);
/* The row bands of a reduce-scatter op's partials over NCCL (tpg_nccl_band_count of op->nccl_rows). */
int tpg__nccl_rs_bands(const tpg_op *op);
/* nccl_wait.c: tpg__op_wait over NCCL, bounded (the file's header says how); makes r's device current. */
tpg_status tpg__nccl_op_wait(tpg_op *op, int r);
/* op.c: after a failed rebuild, back to what the op had (the caller has put its settings back): drops the graphs
 * and rebuilds them with `rebuild`, keeping the first failure's message (tpg_last_error) whatever this one says. */
void tpg__op_rebuild_keeping_error(tpg_op *op, tpg_status (*rebuild)(tpg_op *));
/* Waits for the op's last launches on the local devices, then destroys every graph (built = 0). */
void tpg__graphs_drop(tpg_op *op);
void tpg__graphs_destroy(tpg_op *op);

#ifdef TPG_TRACE
/* trace.c (trace builds): point rank r's params at its trace buffer (NULL when off); free every buffer. */
void tpg__trace_apply(tpg_op *op, int r);
void tpg__trace_free(tpg_op *op);
/* trace_events.c: event nodes after rank's timed nodes (build_one, before instantiation), their events destroyed
 * with the graph (destroy_one), and whether the graph must be rebuilt to add or drop them (update_all). */
tpg_status tpg__trace_events_add(tpg_op *op, int rank);
void tpg__trace_events_destroy(tpg_op *op, int rank);
int tpg__trace_events_stale(const tpg_op *op, int rank);
#endif
/* trace_events.c: while rank's graph is timed, an event node at this point of the capture on s - a node of a chain
 * captured beside the graph (ce_partials.c) of TPG_TRACE_NODE_* kind (0: not listed, only a later node's begin), that
 * begins at event begin_ev (-1: unknown); *ev = its event's number, -1 where none was made (untimed graph, the node
 * cap, or a normal build, where this does nothing). */
#ifdef TPG_TRACE
tpg_status tpg__trace_chain_event(tpg_op *op, int rank, cudaStream_t s, uint32_t kind, int stage, int peer, int piece,
                                  int begin_ev, int *ev);
#else
static inline tpg_status tpg__trace_chain_event(tpg_op *op, int rank, cudaStream_t s, uint32_t kind, int stage,
                                                int peer, int piece, int begin_ev, int *ev) {
    (void)op, (void)rank, (void)s, (void)kind, (void)stage, (void)peer, (void)piece, (void)begin_ev;
    *ev = -1;
    return TPG_OK;
}
#endif
/* graph.c: the table node of one of rank's expanded items */
const tpg_graph_node *tpg__graph_item_node(const tpg_op *op, int rank, const tpg_graph_item *it);

#endif /* TPG_OP_INTERNAL_H */
