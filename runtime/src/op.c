/* Operation lifecycle: validate, allocate the symmetric buffers, take tensors, build / update the
 * graphs; running and syncing are in op_run.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "checks.h"
#include "op_internal.h"
#include "plan.h"
#include "transfer_flags.h"

/* Bytes of one slot: the rotating operand's whole shard (all-gather) or one stage's output block (over NCCL with
 * the verdict word after it: transfer_flags.h). */
static size_t slot_bytes(const tpg_op *op) {
    const tpg_shapes *s = &op->shapes;
    const size_t verdict = tpg__op_over_nccl(op) ? TPG_FLAGS_TRAILER_BYTES : 0;
    switch (op->sched->rotating) {
    case TPG_OPERAND_A: return (size_t)(s->a_rows * s->a_cols * s->l) * tpg_dtype_size(op->kernel->dtype_ab);
    case TPG_OPERAND_B: return (size_t)(s->b_rows * s->b_cols * s->l) * tpg_dtype_size(op->kernel->dtype_ab);
    case TPG_OPERAND_D:
        return (size_t)(s->stage_m * s->stage_n * s->l) * tpg_dtype_size(op->kernel->dtype_partial) + verdict;
    case TPG_OPERAND_NONE: break;
    }
    return 0;
}

/* The walk order of op unless it keeps its ring, for what holds on every rank: the gathered and one-hop arms of the
 * rule (plan.h) read no SM count. */
static tpg_walk_order walk_at_creation(const tpg_op *op) {
    const tpg_shapes *s = &op->shapes;
    const tpg_walk_facts w = tpg_walk_facts_for(op->sched, op->kernel, s->stage_m, s->stage_n, s->stage_k, s->l,
                                                TPG_PICK_SMS, tpg__op_over_nccl(op), 0);
    return tpg_plan_walk_order(&w);
}

static tpg_status validate(tpg_ctx *ctx, const tpg_op_desc *d, const tpg_config_desc **out) {
    if (d->config < 0 || d->config >= tpg_num_configs)
        TPG_FAIL(ctx, TPG_ERR_UNKNOWN_CONFIG, "config index %d is out of range (0..%d)", d->config, tpg_num_configs - 1);
    const tpg_config_desc *c = &tpg_configs[d->config];
    if (c->schedule->tp != ctx->tp)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "config %s is built for tp = %d but the context has tp = %d", c->name,
                 c->schedule->tp, ctx->tp);
    if (c->schedule->tp > TPG_MAX_TP || !c->schedule->stages || !c->schedule->nodes)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "config %s: schedule table %s is incomplete", c->name, c->schedule->name);
    *out = c;
    return TPG_OK;
}

/* Validates and allocates the local ranks' buffers; *out stays NULL on failure. */
static tpg_status create_local(tpg_ctx *ctx, const tpg_op_desc *desc, tpg_op **out) {
    const tpg_config_desc *c = NULL;
    TPG_CHECK(validate(ctx, desc, &c));

    tpg_op *op = calloc(1, sizeof *op);
    if (!op) TPG_FAIL(ctx, TPG_ERR_OUT_OF_MEMORY, "tpg_op_create: host allocation failed");
    op->ctx = ctx;
    op->config = c;
    op->sched = c->schedule;
    op->kernel = c->kernel;
    op->desc = *desc;
    tpg_status st = TPG_OK;
    const int saved = tpg__save_device();
    char msg[TPG_ERROR_BYTES];
    st = tpg_shapes_init_for(c, desc->m, desc->n, desc->k, desc->l, &op->shapes, msg, sizeof msg);
    if (st != TPG_OK) TPG_FAIL_GOTO(ctx, st, fail, "config %s: %s", c->name, msg);

    /* a reduce-scatter rank's second bank of slots and flags: over NCCL it receives into it (nccl_graph.c), with
     * copy-engine partials it sends from it (ce_partials.c) */
    const int second_bank = (tpg__over_nccl(ctx) || c->copy_engine_partials) && ctx->tp > 1;
    const int banks = second_bank && op->sched->comm == TPG_COMM_REDUCE_SCATTER ? 2 : 1;
    op->gathered = walk_at_creation(op) == TPG_WALK_GATHERED;
    op->one_hop = walk_at_creation(op) == TPG_WALK_ONE_HOP;
    TPG_CHECK_GOTO(tpg__ce_partials_check_queues(op), fail); /* once the walk is known: a one-hop walk has no chains */
    tpg_buffer_layout_init(&op->layout, ctx->tp, slot_bytes(op), tpg_shapes_stage_tiles(&op->shapes, op->kernel), banks,
                           op->gathered || op->one_hop);
    if (banks == 2 && c->copy_engine_partials && !tpg__over_nccl(ctx)) /* the copy chains' waits (ce_partials.c) */
        tpg_buffer_layout_add_row_counts(&op->layout, (op->shapes.stage_n + op->kernel->bn - 1) / op->kernel->bn);
    op->copy = tpg_copy_plan_for(op->sched, op->kernel, &op->shapes, c->copy_chunks);
    /* over NCCL or by copy engine a reduce-scatter stage's partial moves in row bands of the GEMM's tiles */
    op->nccl_rows = (tpg_nccl_rows){op->shapes.l, op->shapes.stage_m, op->kernel->bm,
                                    (op->shapes.stage_n + op->kernel->bn - 1) / op->kernel->bn,
                                    (size_t)op->shapes.stage_n * tpg_dtype_size(op->kernel->dtype_partial)};
    tpg_peers_init(&op->peers, ctx->tp);
    for (int r = ctx->local_begin; r < ctx->local_end; r++) {
        TPG_CHECK_GOTO(tpg_buffers_alloc(ctx, r, &op->layout, &op->buffer[r]), fail);
        tpg_peers_publish(&op->peers, r, TPG_PEER_BUFFER, op->buffer[r]);
    }
    TPG_CHECK_GOTO(tpg__tile_order_alloc(op), fail);
    TPG_CHECK_GOTO(tpg__stream_k_alloc(op), fail);
    TPG_CHECK_GOTO(tpg__ce_partials_alloc(op), fail);
    tpg__restore_device(saved);
    *out = op;
    return TPG_OK;
fail:
    tpg__tile_order_free(op);
    tpg__stream_k_free(op);
    tpg__ce_partials_free(op);
    for (int r = ctx->local_begin; r < ctx->local_end; r++) {
        if (!op->buffer[r]) continue;
        (void)cudaSetDevice(ctx->devices[r]);
        tpg_buffers_free(op->buffer[r]);
    }
    free(op);
    tpg__restore_device(saved);
    return st;
}

tpg_status tpg_op_create(tpg_ctx *ctx, const tpg_op_desc *desc, tpg_op **out) {
    if (out) *out = NULL;
    TPG_REQUIRE_HANDLE(ctx);
    tpg_op *op = NULL;
    tpg_status st;
    if (!desc || !out) {
        tpg__set_error(ctx, "tpg_op_create: %s is NULL", !desc ? "desc" : "out");
        st = TPG_ERR_INVALID_ARGUMENT;
    } else {
        st = create_local(ctx, desc, &op);
    }
    /* multi-process: a rank that failed its own checks still takes part in the exchange (with an empty
     * description), so its peers get the failure instead of waiting in the bootstrap forever */
    if (tpg__multi_process(ctx)) {
        const tpg_op_desc none = {0};
        st = tpg__op_create_collective(ctx, desc ? desc : &none, &op, st); /* frees op on failure */
    }
    if (st != TPG_OK) return st;
    ctx->num_ops++;
    op->next_in_ctx = ctx->ops;
    ctx->ops = op;
    *out = op;
    return TPG_OK;
}

/* Waits for the local graphs, destroys them and drops the op's peer mappings (nothing of op's runs
 * touches any memory afterwards, unless it returns 0: see tpg__op_wait_quiet); the caller restores the device. */
int tpg__op_quiesce(tpg_op *op) {
    tpg_ctx *ctx = op->ctx;
    int ended = 1;
    for (int r = ctx->local_begin; r < ctx->local_end; r++) ended &= tpg__op_wait_quiet(op, r); /* never free in use */
    tpg__graphs_destroy(op);
    if (ctx->local_begin < ctx->local_end) (void)cudaSetDevice(ctx->devices[ctx->local_begin]);
    for (int kind = 0; kind < TPG_PEER_KIND_COUNT; kind++) tpg_ipc_release(ctx, &op->ipc_held[kind]);
    return ended;
}

tpg_status tpg__op_still_busy(tpg_op *op, int r, int *busy) {
    cudaError_t e = op->has_run && op->launched[r] ? cudaEventQuery(op->launched[r]) : cudaSuccess;
    if (e == cudaSuccess && op->capture_done[r]) e = cudaEventQuery(op->capture_done[r]);
    *busy = e == cudaErrorNotReady;
    if (*busy) (void)cudaGetLastError();
    else TPG_CHECK_CUDA(op->ctx, e);
    return TPG_OK;
}

/* Both waits, whatever the first one says; returns the first error. */
static cudaError_t wait_raw(tpg_op *op, int r) {
    cudaError_t first = cudaSetDevice(op->ctx->devices[r]), e;
    if (op->has_run && (e = cudaEventSynchronize(op->launched[r])) != cudaSuccess && first == cudaSuccess) first = e;
    if (op->capture_done[r] && (e = cudaEventSynchronize(op->capture_done[r])) != cudaSuccess && first == cudaSuccess)
        first = e;
    return first;
}

tpg_status tpg__op_wait(tpg_op *op, int r) {
    if (tpg__op_over_nccl(op)) return tpg__nccl_op_wait(op, r);
    const cudaError_t e = wait_raw(op, r);
    return e == cudaSuccess ? TPG_OK : tpg__cuda_error(op->ctx, e, __FILE__, __LINE__, "waiting for the op's launches");
}

int tpg__op_wait_quiet(tpg_op *op, int r) {
    if (tpg__op_over_nccl(op)) { /* bounded: a transfer from a missing peer would never end; keep the message */
        char kept[TPG_ERROR_BYTES];
        memcpy(kept, op->ctx->error, sizeof kept);
        int busy = 0;
        if (tpg__nccl_op_wait(op, r) != TPG_OK) {
            (void)cudaGetLastError();
            if (tpg__op_still_busy(op, r, &busy) != TPG_OK) busy = 0; /* a device error: nothing runs on it any more */
        }
        memcpy(op->ctx->error, kept, sizeof kept);
        return !busy;
    }
    if (wait_raw(op, r) != cudaSuccess) (void)cudaGetLastError(); /* unbounded: ended, or the device failed */
    return 1;
}

void tpg__op_rebuild_keeping_error(tpg_op *op, tpg_status (*rebuild)(tpg_op *)) {
    char kept[TPG_ERROR_BYTES];
    memcpy(kept, op->ctx->error, sizeof kept);
    tpg__graphs_drop(op);
    if (rebuild(op) != TPG_OK) (void)cudaGetLastError();
    memcpy(op->ctx->error, kept, sizeof kept);
}

/* Frees the local buffers and op itself; the caller restores the device. */
void tpg__op_free(tpg_op *op) {
#ifdef TPG_TRACE
    tpg__trace_free(op);
#endif
    tpg__tile_order_free(op);
    tpg__stream_k_free(op);
    tpg__op_own_streams_free(op);
    tpg__ce_partials_free(op);
    for (int r = op->ctx->local_begin; r < op->ctx->local_end; r++) {
        (void)cudaSetDevice(op->ctx->devices[r]);
        if (op->capture_done[r]) (void)cudaEventDestroy(op->capture_done[r]);
        if (op->launched[r]) (void)cudaEventDestroy(op->launched[r]);
        if (op->buffer[r]) tpg_buffers_free(op->buffer[r]);
    }
    tpg_peers_clear(&op->peers);
    free(op);
    (void)cudaGetLastError(); /* an ignored failure above stays out of the caller's next cudaGetLastError */
}

tpg_status tpg_op_destroy(tpg_op *op) {
    if (!op) return TPG_OK;
    tpg_ctx *ctx = op->ctx;
    const int saved = tpg__save_device();
    const int ended = tpg__op_quiesce(op);
    /* multi-process: no rank frees its buffer before every peer has stopped using and unmapped it */
    tpg_status st = tpg__multi_process(ctx) ? tpg__agree(ctx, TPG_CALL_OP_DESTROY, TPG_OK) : TPG_OK;
    for (tpg_op **at = &ctx->ops; *at; at = &(*at)->next_in_ctx) /* gone from the context's list either way */
        if (*at == op) {
            *at = op->next_in_ctx;
            break;
        }
    if (ended && st != TPG_OK && tpg__multi_process(ctx) && !tpg__over_nccl(ctx)) {
        /* the agreement failed (an exchange out of step or a failed allgather): a peer may still map this rank's
         * buffer and write its closing notices into it, and CUDA IPC leaves a buffer freed while mapped undefined
         * (over NCCL no peer maps it: each rank's NCCL calls touch only its own buffers) */
        tpg__append_error(ctx, "; the op's memory was left allocated: a peer may still map it (destroy the context, "
                          "and end the process to get it back)");
    } else if (ended) {
        tpg__op_free(op);
    } else { /* a launch outlived the bounded wait: freeing would wait for it, or free what it still writes */
        if (st == TPG_OK) {
            tpg__set_error(ctx, "tpg_op_destroy: a launch of the op was still running when the op's bounded wait "
                           "ended (over NCCL: a transfer that neither the device's timeout nor an abort of the "
                           "communicator ended); the op's memory was left allocated (the op is gone all the same): "
                           "destroy the context");
            st = TPG_ERR_NCCL;
        } else {
            tpg__append_error(ctx, "; and a launch of the op was still running: its memory was left allocated");
        }
    }
    ctx->num_ops--;
    tpg__restore_device(saved);
    return st;
}

tpg_status tpg_op_shard_shape(const tpg_op *op, int rank, tpg_shard_shape *out) {
    TPG_REQUIRE_HANDLE(op);
    if (!out) TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "tpg_op_shard_shape: out is NULL");
    if (rank < 0 || rank >= op->ctx->tp)
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "rank = %d must be in 0..%d", rank, op->ctx->tp - 1);
    tpg_shapes_shard(op->sched, &op->shapes, rank, out);
    return TPG_OK;
}

static tpg_status check_ptr(tpg_ctx *ctx, int rank, const char *name, const void *p, int required) {
    if (!p && required) TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d: tensor %s must not be NULL", rank, name);
    if ((uintptr_t)p % 16 != 0)
        TPG_FAIL(ctx, TPG_ERR_ALIGNMENT, "rank %d: tensor %s = %p must be 16-byte aligned", rank, name, p);
    return TPG_OK;
}

/* Device memory of another GPU than the rank's: in a process per rank the kernel would fault (a sticky error that
 * ends the process's CUDA context), in one process run over NVLink. So would pageable host memory (malloc, numpy)
 * where the device cannot address it (no HMM / ATS). Pinned host, managed and unknown pointers pass; sizes are not
 * checked: the caller's allocations must hold the shard shapes (tpg_op_shard_shape). */
static tpg_status check_device(tpg_ctx *ctx, int rank, const char *name, const void *p) {
    struct cudaPointerAttributes at;
    if (!p) return TPG_OK;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return TPG_OK;
    }
    if (at.type == cudaMemoryTypeUnregistered) {
        int pageable = 0;
        TPG_CHECK_CUDA(ctx, cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, ctx->devices[rank]));
        if (!pageable)
            TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d: tensor %s = %p is pageable host memory, which device %d "
                     "cannot address; pass device memory (cudaMalloc) or pinned host memory (cudaHostRegister)", rank,
                     name, p, ctx->devices[rank]);
    }
    if (at.type == cudaMemoryTypeDevice && at.device != ctx->devices[rank])
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d: tensor %s = %p is memory of device %d; rank %d runs on "
                 "device %d (allocate each rank's tensors on its own device)", rank, name, p, at.device, rank,
                 ctx->devices[rank]);
    return TPG_OK;
}

static int all_set(const tpg_op *op) {
    for (int r = 0; r < op->ctx->tp; r++)
        if (!op->has_tensors[r]) return 0;
    return 1;
}

tpg_status tpg__op_refresh(tpg_op *op) {
    if (!all_set(op)) return TPG_OK;
    tpg_status st = TPG_OK;
    for (int r = op->ctx->local_begin; st == TPG_OK && r < op->ctx->local_end; r++) st = tpg__params_build(op, r);
    if (st != TPG_OK) { /* built graphs would keep running the old arguments: drop them */
        if (op->built) tpg__graphs_drop(op);
        return st;
    }
    if (op->built) return tpg__graphs_update(op); /* drops every graph itself on failure */
    st = tpg__graphs_build(op);
    if (st != TPG_OK) tpg__graphs_destroy(op); /* the next call retries from scratch */
    return st;
}

/* The argument checks of tpg_op_set_tensors. */
static tpg_status check_tensors(tpg_op *op, int rank, const tpg_tensors *t) {
    tpg_ctx *ctx = op->ctx;
    if (!t) TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "tpg_op_set_tensors: t must not be NULL");
    if (rank < 0 || rank >= ctx->tp)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "rank = %d must be in 0..%d", rank, ctx->tp - 1);
    if (!tpg__is_local(ctx, rank))
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d is not driven by this process (its rank is %d); each process "
                 "sets its own rank's tensors", rank, ctx->local_begin);
    TPG_CHECK(check_ptr(ctx, rank, "a", t->a, 1));
    TPG_CHECK(check_ptr(ctx, rank, "b", t->b, 1));
    TPG_CHECK(check_ptr(ctx, rank, "c", t->c, 0));
    TPG_CHECK(check_ptr(ctx, rank, "d", t->d, 1));
    TPG_CHECK(check_device(ctx, rank, "a", t->a));
    TPG_CHECK(check_device(ctx, rank, "b", t->b));
    TPG_CHECK(check_device(ctx, rank, "c", t->c));
    TPG_CHECK(check_device(ctx, rank, "d", t->d));
    if (!t->c && op->desc.beta != 0.0f)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d: c is NULL but beta = %g; pass C or set beta = 0", rank,
                 (double)op->desc.beta);
    if ((t->scale_a || t->scale_b) && tpg_dtype_size(op->kernel->dtype_ab) != 1)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d: scale_a / scale_b are the per-tensor scales of fp8 operands; "
                 "this op's are %s (pass NULL, or fold a scale into alpha)", rank, tpg_dtype_name(op->kernel->dtype_ab));
    if (t->scale_a && (uintptr_t)t->scale_a % 4 != 0)
        TPG_FAIL(ctx, TPG_ERR_ALIGNMENT, "rank %d: scale_a = %p must be 4-byte aligned", rank, (const void *)t->scale_a);
    if (t->scale_b && (uintptr_t)t->scale_b % 4 != 0)
        TPG_FAIL(ctx, TPG_ERR_ALIGNMENT, "rank %d: scale_b = %p must be 4-byte aligned", rank, (const void *)t->scale_b);
    TPG_CHECK(check_device(ctx, rank, "scale_a", t->scale_a)); /* the kernel reads them too */
    TPG_CHECK(check_device(ctx, rank, "scale_b", t->scale_b));
    return TPG_OK;
}

tpg_status tpg_op_set_tensors(tpg_op *op, int rank, const tpg_tensors *t) {
    TPG_REQUIRE_HANDLE(op);
    tpg_status st = check_tensors(op, rank, t);
    if (tpg__multi_process(op->ctx)) return tpg__op_tensors_collective(op, t, st);
    if (st != TPG_OK) return st;
    op->tensors[rank] = *t;
    op->has_tensors[rank] = 1;
    tpg_peers_publish(&op->peers, rank, TPG_PEER_SHARD_A, (void *)t->a);
    tpg_peers_publish(&op->peers, rank, TPG_PEER_SHARD_B, (void *)t->b);
    const int saved = tpg__save_device();
    st = tpg__op_refresh(op);
    tpg__restore_device(saved);
    if (st != TPG_OK) { /* dropped, as tpgemm.h says: no later call may rebuild the graphs on tensors refused here */
        op->has_tensors[rank] = 0;
        memset(&op->tensors[rank], 0, sizeof op->tensors[rank]);
    }
    return st;
}

tpg_status tpg_op_set_scalars(tpg_op *op, float alpha, float beta) {
    TPG_REQUIRE_HANDLE(op);
    for (int r = op->ctx->local_begin; r < op->ctx->local_end; r++)
        if (op->has_tensors[r] && !op->tensors[r].c && beta != 0.0f)
            TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "beta = %g needs C, but rank %d has c = NULL", (double)beta, r);
    const tpg_op_desc before = op->desc;
    op->desc.alpha = alpha;
    op->desc.beta = beta;
    const int saved = tpg__save_device();
    tpg_status st = tpg__op_refresh(op);
    if (st != TPG_OK) { /* back to the scalars the op had, with its graphs if they build (the error stays) */
        op->desc = before;
        tpg__op_rebuild_keeping_error(op, tpg__op_refresh);
    }
    tpg__restore_device(saved);
    return st;
}

static tpg_status check_copy_chunks(tpg_op *op, int chunks) {
    if (chunks < 1 || chunks > TPG_MAX_COPY_CHUNKS)
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "copy chunks = %d must be in 1..%d", chunks, TPG_MAX_COPY_CHUNKS);
    if (op->copy.chunks == 0 && chunks != 1)
        TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "config %s copies nothing (%s): copy chunks = %d has no copy to cut",
                 op->config->name, op->sched->tp < 2 ? "TP = 1" : "reduce-scatter pushes partials from the GEMM", chunks);
    return TPG_OK;
}

tpg_status tpg_op_set_copy_chunks(tpg_op *op, int chunks) {
    TPG_REQUIRE_HANDLE(op);
    const tpg_status st = check_copy_chunks(op, chunks);
    /* over NCCL each piece is a message that the peer's receive must match: every rank cuts alike or none does */
    if (op->copy.chunks != 0 && tpg__op_over_nccl(op)) return tpg__op_copy_chunks_collective(op, chunks, st);
    if (st != TPG_OK || op->copy.chunks == 0) return st;
    return tpg__op_cut_copies(op, tpg_copy_plan_for(op->sched, op->kernel, &op->shapes, chunks));
}

tpg_status tpg__op_cut_copies(tpg_op *op, tpg_copy_plan next) {
    if (next.chunks == op->copy.chunks && next.chunk_rows == op->copy.chunk_rows) return TPG_OK;
    const int saved = tpg__save_device();
    /* the graphs change shape (a node per piece): drop them (after their launches) and build anew */
    if (op->built) tpg__graphs_drop(op);
    const tpg_copy_plan before = op->copy;
    op->copy = next;
    tpg_status st = tpg__op_refresh(op);
    if (st != TPG_OK) { /* back to the cut the op had, with its graphs if they build (the error stays) */
        op->copy = before;
        tpg__op_rebuild_keeping_error(op, tpg__op_refresh);
    }
    tpg__restore_device(saved);
    return st;
}

/* Sets the op's mode word *mode (0 or 1) to `enable`, where the graphs change shape with it: drops them (after their
 * launches) and rebuilds them and what they launch with `rebuild`; on failure back to what the op had, with its graphs
 * if they build (the error stays). */
static tpg_status switch_graphs(tpg_op *op, int *mode, int enable, tpg_status (*rebuild)(tpg_op *)) {
    const int saved = tpg__save_device();
    if (op->built) tpg__graphs_drop(op);
    *mode = enable;
    tpg_status st = rebuild(op);
    if (st != TPG_OK) {
        *mode = !enable;
        tpg__op_rebuild_keeping_error(op, rebuild);
    }
    tpg__restore_device(saved);
    return st;
}

tpg_status tpg_op_set_gather_copy_engine(tpg_op *op, int enable) {
    TPG_REQUIRE_HANDLE(op);
    enable = enable != 0;
    if (enable == op->copy_engine) return TPG_OK;
    const int pulls_before = tpg__op_pulls(op);
    op->copy_engine = enable;
    /* not gathered, or copy nodes anyway (pieces, the barriers beside the GEMM): the graphs stay as they are */
    if (tpg__op_pulls(op) == pulls_before) return TPG_OK;
    op->copy_engine = !enable;
    /* the graphs change shape (copy nodes or none), and the GEMM's pulls */
    return switch_graphs(op, &op->copy_engine, enable, tpg__op_refresh);
}

/* Multi-process: every rank's choice, which must be the same (a rank's REDUCE reads what the others' GEMMs wrote);
 * the same error on every rank otherwise. */
static tpg_status agree_on_ring(tpg_op *op, int enable) {
    tpg_wire send, recv[TPG_MAX_TP];
    tpg_wire_init(&send, op->ctx, TPG_CALL_SET_RS_RING, TPG_OK);
    send.config = enable;
    TPG_CHECK(tpg__exchange(op->ctx, &send, recv));
    for (int r = 0; r < op->ctx->tp; r++)
        if (recv[r].config != recv[0].config)
            TPG_FAIL(op->ctx, TPG_ERR_INVALID_ARGUMENT, "tpg_op_set_rs_ring: rank 0 asked for %d, rank %d for %d; "
                     "every rank must choose alike (nothing changed)", (int)recv[0].config, r, (int)recv[r].config);
    return TPG_OK;
}

tpg_status tpg_op_set_rs_ring(tpg_op *op, int enable) {
    TPG_REQUIRE_HANDLE(op);
    enable = enable != 0;
    if (tpg__multi_process(op->ctx)) TPG_CHECK(agree_on_ring(op, enable));
    if (enable == op->rs_ring) return TPG_OK;
    if (enable && op->one_hop) { /* the ring may bring copy-engine chains, which ranks sharing a GPU need queues for */
        op->rs_ring = 1;
        const tpg_status q = tpg__ce_partials_check_queues(op);
        op->rs_ring = 0;
        if (q != TPG_OK) return q;
    }
    if (!op->one_hop) { /* the ring either way: only the choice is recorded */
        op->rs_ring = enable;
        return TPG_OK;
    }
    /* the graphs change shape (a REDUCE or none), and the GEMM's walk */
    const tpg_status st = switch_graphs(op, &op->rs_ring, enable, tpg__op_refresh);
    if (!tpg__multi_process(op->ctx)) return st;
    /* every rank must run the same walk (bootstrap.h: local work after an exchange ends with an agreement): a rank
     * whose rebuild failed went back to the walk it had, so then every rank does, and all report the failure */
    const tpg_status agreed = tpg__agree(op->ctx, TPG_CALL_RS_RING_READY, st);
    if (agreed != TPG_OK && st == TPG_OK && switch_graphs(op, &op->rs_ring, !enable, tpg__op_refresh) != TPG_OK) {
        /* the walk it had does not build again either (switch_graphs then rebuilt the new one): no graphs, the old
         * choice, as its peers have, and only a collective tpg_op_set_tensors rebuilds (as op_rank.c after a failed
         * exchange) - never a call on the other walk */
        op->rs_ring = !enable;
        tpg__op_unready(op);
    }
    return agreed;
}

tpg_status tpg_op_set_pdl(tpg_op *op, int enable) {
    TPG_REQUIRE_HANDLE(op);
    op->pdl = enable != 0;
    return TPG_OK;
}
