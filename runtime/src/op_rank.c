/* Multi-process parts of the op lifecycle (protocol in bootstrap.h): the peer table's entries of the
 * other ranks are filled here, from CUDA IPC handles (ipc.h) exchanged over the bootstrap. */
#include <string.h>

#include "bootstrap.h"
#include "checks.h"
#include "op_internal.h"

/* The shard kind that peers' COPY nodes read (all-gather schedules), or TPG_PEER_KIND_COUNT for none. */
static tpg_peer_kind copied_shard(const tpg_op *op) {
    if (op->sched->comm != TPG_COMM_ALLGATHER || op->sched->tp < 2) return TPG_PEER_KIND_COUNT;
    if (tpg__over_nccl(op->ctx)) return TPG_PEER_KIND_COUNT; /* NCCL sends it: no peer maps it */
    if (op->sched->rotating == TPG_OPERAND_A) return TPG_PEER_SHARD_A;
    if (op->sched->rotating == TPG_OPERAND_B) return TPG_PEER_SHARD_B;
    return TPG_PEER_KIND_COUNT;
}

/* Every rank must describe the same problem (the tables and shapes are derived from it alone). */
static tpg_status same_problem(tpg_ctx *ctx, const tpg_wire *recv) {
    const int me = ctx->local_begin;
    const tpg_wire *a = &recv[me];
    for (int q = 0; q < ctx->tp; q++) {
        const tpg_wire *b = &recv[q];
        if (b->config != a->config || b->m != a->m || b->n != a->n || b->k != a->k || b->l != a->l)
            TPG_FAIL(ctx, TPG_ERR_BOOTSTRAP, "tpg_op_create: rank %d has config %lld, m = %lld, n = %lld, k = %lld, "
                     "l = %lld but rank %d has config %lld, m = %lld, n = %lld, k = %lld, l = %lld; every rank must "
                     "create the same op", me, (long long)a->config, (long long)a->m, (long long)a->n,
                     (long long)a->k, (long long)a->l, q, (long long)b->config, (long long)b->m, (long long)b->n,
                     (long long)b->k, (long long)b->l);
    }
    return TPG_OK;
}

/* Opens every peer's ref[kind] and publishes it in the peer table. The op then holds these mappings for
 * `kind` instead of the ones it held before (a user replacing its tensors every step must not pile up
 * mappings of freed shards): the old ones are released after the op's last run on this device has
 * finished, since a launched graph may still read through them. */
static tpg_status import_peers(tpg_op *op, const tpg_wire *recv, tpg_peer_kind kind, const char *what) {
    tpg_ctx *ctx = op->ctx;
    tpg_ipc_held fresh = {0};
    void *before[TPG_MAX_TP];
    for (int q = 0; q < ctx->tp; q++) before[q] = tpg_peers_get(&op->peers, q, kind);
    tpg_status st = tpg__use_device(ctx, ctx->local_begin);
    for (int q = 0; st == TPG_OK && q < ctx->tp; q++) {
        if (tpg__is_local(ctx, q)) continue;
        if (!recv[q].ref[kind].present) {
            tpg__set_error(ctx, "rank %d sent no handle for its %s", q, what);
            st = TPG_ERR_BOOTSTRAP;
            break;
        }
        void *p = NULL;
        st = tpg_ipc_import(ctx, q, &recv[q].ref[kind], &fresh, &p);
        if (st == TPG_OK) tpg_peers_publish(&op->peers, q, kind, p);
    }
    if (st == TPG_OK && op->ipc_held[kind].count > 0) TPG_CHECK_GOTO(tpg__op_wait(op, ctx->local_begin), fail);
    if (st != TPG_OK) goto fail;
    tpg_ipc_release(ctx, &op->ipc_held[kind]); /* an allocation in both lists stays open (refs) */
    op->ipc_held[kind] = fresh;
    return TPG_OK;
fail: /* the table must not keep addresses of mappings released here */
    for (int q = 0; q < ctx->tp; q++)
        if (!tpg__is_local(ctx, q)) tpg_peers_publish(&op->peers, q, kind, before[q]);
    tpg_ipc_release(ctx, &fresh);
    return st;
}

tpg_status tpg__op_create_collective(tpg_ctx *ctx, const tpg_op_desc *desc, tpg_op **op, tpg_status local) {
    const int me = ctx->local_begin;
    const int saved = tpg__save_device();
    tpg_wire send, recv[TPG_MAX_TP];
    tpg_wire_init(&send, ctx, TPG_CALL_OP_CREATE, local);
    send.config = desc->config;
    send.m = desc->m;
    send.n = desc->n;
    send.k = desc->k;
    send.l = desc->l;
    const int ipc = !tpg__over_nccl(ctx); /* NCCL: every rank writes only its own buffer */
    if (local == TPG_OK && ipc) {
        local = tpg__use_device(ctx, me);
        if (local == TPG_OK)
            local = tpg_ipc_export(ctx, me, (*op)->buffer[me], "symmetric buffer", &send.ref[TPG_PEER_BUFFER]);
        send.status = local;
    }
    tpg_status st = tpg__exchange(ctx, &send, recv);
    if (st == TPG_OK) st = same_problem(ctx, recv);
    if (st == TPG_OK && ipc) st = import_peers(*op, recv, TPG_PEER_BUFFER, "symmetric buffer");
    st = tpg__agree(ctx, TPG_CALL_OP_READY, st);
    if (st != TPG_OK) {
        /* as tpg_op_destroy: every rank closes its mappings of the peers' buffers before any rank frees its own (a
         * buffer freed while a peer still maps it is undefined, CUDA IPC says). Every rank failed the agreement, so
         * every rank makes this exchange too, with an op or without (its own creation failed) */
        if (*op) tpg__op_quiesce(*op);
        /* a broken exchange: no peer makes this one, and a peer may still map the buffer - left allocated then;
         * over NCCL no peer maps it (each rank's NCCL calls touch only its own buffers) */
        const tpg_status closed = ctx->exchange_broken ? TPG_ERR_BOOTSTRAP
                                                       : tpg__agree(ctx, TPG_CALL_OP_DESTROY, TPG_OK);
        if (*op && (closed == TPG_OK || !ipc)) tpg__op_free(*op);
        else if (*op) tpg__append_error(ctx, "; the op's memory was left allocated: a peer may still map it");
        *op = NULL;
    }
    tpg__restore_device(saved);
    return st;
}

tpg_status tpg__op_tensors_collective(tpg_op *op, const tpg_tensors *t, tpg_status local) {
    tpg_ctx *ctx = op->ctx;
    const int me = ctx->local_begin;
    const tpg_peer_kind kind = copied_shard(op);
    const int saved = tpg__save_device();
    tpg_wire send, recv[TPG_MAX_TP];
    tpg_wire_init(&send, ctx, TPG_CALL_SET_TENSORS, local);
    if (local == TPG_OK && kind != TPG_PEER_KIND_COUNT) {
        local = tpg__use_device(ctx, me);
        if (local == TPG_OK)
            local = tpg_ipc_export(ctx, me, kind == TPG_PEER_SHARD_A ? t->a : t->b,
                                   kind == TPG_PEER_SHARD_A ? "tensor a" : "tensor b", &send.ref[kind]);
        send.status = local;
    }
    tpg_status st = tpg__exchange(ctx, &send, recv);
    if (st == TPG_OK) {
        op->tensors[me] = *t;
        tpg_peers_publish(&op->peers, me, TPG_PEER_SHARD_A, (void *)t->a);
        tpg_peers_publish(&op->peers, me, TPG_PEER_SHARD_B, (void *)t->b);
        if (kind != TPG_PEER_KIND_COUNT) st = import_peers(op, recv, kind, kind == TPG_PEER_SHARD_A ? "A" : "B");
    }
    if (st == TPG_OK) {
        for (int q = 0; q < ctx->tp; q++) op->has_tensors[q] = 1; /* every rank passed its checks */
        st = tpg__op_refresh(op);
    }
    st = tpg__agree(ctx, TPG_CALL_TENSORS_READY, st);
    /* A graph built here while a peer failed would wait for that peer: drop it (tpg_op_run then says
     * TPG_ERR_NOT_READY), and rebuild from scratch on the next successful call. */
    if (st != TPG_OK) tpg__op_unready(op);
    tpg__restore_device(saved);
    return st;
}

tpg_status tpg__op_copy_chunks_collective(tpg_op *op, int chunks, tpg_status local) {
    tpg_ctx *ctx = op->ctx;
    tpg_wire send, recv[TPG_MAX_TP];
    tpg_wire_init(&send, ctx, TPG_CALL_SET_COPY_CHUNKS, local);
    send.config = chunks;
    TPG_CHECK(tpg__exchange(ctx, &send, recv)); /* a rank's argument error fails every rank here */
    for (int r = 0; r < ctx->tp; r++)
        if (recv[r].config != recv[0].config)
            TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "tpg_op_set_copy_chunks over NCCL: rank 0 asked for %d pieces, "
                     "rank %d for %d; every rank must cut alike (nothing changed)", (int)recv[0].config, r,
                     (int)recv[r].config);
    const tpg_copy_plan before = op->copy, next = tpg_copy_plan_for(op->sched, op->kernel, &op->shapes, chunks);
    if (next.chunks == before.chunks && next.chunk_rows == before.chunk_rows) return TPG_OK; /* alike everywhere */
    const tpg_status st = tpg__op_cut_copies(op, next);
    /* a rank whose rebuild failed went back to the cut it had, so then every rank does, and all report it */
    const tpg_status agreed = tpg__agree(ctx, TPG_CALL_COPY_CHUNKS_READY, st);
    if (agreed != TPG_OK && st == TPG_OK && tpg__op_cut_copies(op, before) != TPG_OK) {
        /* the old cut does not build again either: no graphs, the old cut, as the peers have, and only a collective
         * tpg_op_set_tensors rebuilds (as after a failed tensor exchange) */
        op->copy = before;
        tpg__op_unready(op);
    }
    return agreed;
}

void tpg__op_unready(tpg_op *op) {
    const int saved = tpg__save_device();
    if (op->built) tpg__graphs_drop(op);
    /* and no local call (tpg_op_set_scalars) may rebuild them on a failed collective's state: only a successful
     * tpg_op_set_tensors sets every rank's tensors again */
    for (int q = 0; q < op->ctx->tp; q++) op->has_tensors[q] = 0;
    tpg__restore_device(saved);
}
