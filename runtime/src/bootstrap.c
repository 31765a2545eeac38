/* Multi-process collectives over the framework's all-gather (protocol in bootstrap.h). */
#include <string.h>

#include "bootstrap.h"
#include "checks.h"
#include "ctx_internal.h"

const char *tpg_wire_call_name(tpg_wire_call call) {
    switch (call) {
    case TPG_CALL_CTX_CREATE:
    case TPG_CALL_CTX_READY:
    case TPG_CALL_NCCL_JOIN:
    case TPG_CALL_NCCL_CONNECT: return "tpg_ctx_create_rank";
    case TPG_CALL_OP_CREATE:
    case TPG_CALL_OP_READY: return "tpg_op_create";
    case TPG_CALL_SET_TENSORS:
    case TPG_CALL_TENSORS_READY: return "tpg_op_set_tensors";
    case TPG_CALL_OP_DESTROY: return "tpg_op_destroy";
    case TPG_CALL_SET_RS_RING:
    case TPG_CALL_RS_RING_READY: return "tpg_op_set_rs_ring";
    case TPG_CALL_SET_COPY_CHUNKS:
    case TPG_CALL_COPY_CHUNKS_READY: return "tpg_op_set_copy_chunks";
    }
    return "an unknown call";
}

void tpg_wire_init(tpg_wire *w, const tpg_ctx *ctx, tpg_wire_call call, tpg_status status) {
    memset(w, 0, sizeof *w);
    w->magic = TPG_WIRE_MAGIC;
    w->call = (int32_t)call;
    w->serial = ctx->collective_serial;
    w->tp = ctx->tp;
    w->rank = ctx->local_begin;
    w->status = (int32_t)status;
}

tpg_status tpg_wire_check_step(tpg_ctx *ctx, const tpg_wire *send, const tpg_wire *recv) {
    const int me = ctx->local_begin;
    const char *name = tpg_wire_call_name((tpg_wire_call)send->call); /* the call this rank makes, not what came back */
    for (int q = 0; q < ctx->tp; q++) {
        const tpg_wire *w = &recv[q];
        if (w->magic != TPG_WIRE_MAGIC && (w->magic & 0xffffff00u) == (TPG_WIRE_MAGIC & 0xffffff00u))
            TPG_FAIL(ctx, TPG_ERR_BOOTSTRAP, "rank %d, %s: rank %d's tpgemm speaks wire version %u, this rank's %u; "
                     "every rank needs the same tpgemm build", me, name, q, (unsigned)(w->magic & 0xffu),
                     (unsigned)(TPG_WIRE_MAGIC & 0xffu));
        if (w->magic != TPG_WIRE_MAGIC)
            TPG_FAIL(ctx, TPG_ERR_BOOTSTRAP, "rank %d, %s: record %d of the all-gather is not a tpgemm record "
                     "(magic 0x%08x); does the allgather callback return tp * bytes in rank order?", me, name, q,
                     (unsigned)w->magic);
        if (w->tp != ctx->tp || w->rank != q)
            TPG_FAIL(ctx, TPG_ERR_BOOTSTRAP, "rank %d, %s: record %d comes from rank %d of tp = %d (this context: "
                     "tp = %d); the allgather must return the records in rank order", me, name, q, (int)w->rank,
                     (int)w->tp, ctx->tp);
        if (w->call != send->call || w->serial != send->serial)
            TPG_FAIL(ctx, TPG_ERR_BOOTSTRAP, "rank %d is in %s (collective call #%llu) but rank %d is in %s (call "
                     "#%llu); every rank must make the same collective calls in the same order", me, name,
                     (unsigned long long)send->serial, q, tpg_wire_call_name((tpg_wire_call)w->call),
                     (unsigned long long)w->serial);
        if (!tpg__status_known(w->status))
            TPG_FAIL(ctx, TPG_ERR_BOOTSTRAP, "rank %d, %s: rank %d reports status %d, which no tpgemm returns; every "
                     "rank needs the same tpgemm build", me, name, q, (int)w->status);
    }
    return TPG_OK;
}

tpg_status tpg_wire_check(tpg_ctx *ctx, const tpg_wire *send, const tpg_wire *recv) {
    TPG_CHECK(tpg_wire_check_step(ctx, send, recv));
    const char *name = tpg_wire_call_name((tpg_wire_call)send->call);
    if (send->status != TPG_OK) return (tpg_status)send->status; /* the message was set where it failed */
    for (int q = 0; q < ctx->tp; q++)
        if (recv[q].status != TPG_OK)
            TPG_FAIL(ctx, (tpg_status)recv[q].status, "rank %d failed in %s: %s (that rank's tpg_last_error has the "
                     "details)", q, name, tpg_status_string((tpg_status)recv[q].status));
    return TPG_OK;
}

tpg_status tpg_wire_check_settings(tpg_ctx *ctx, const tpg_wire *recv) {
    const int me = ctx->local_begin;
    for (int q = 0; q < ctx->tp; q++) {
        if (recv[q].timeout_ns != recv[me].timeout_ns)
            TPG_FAIL(ctx, TPG_ERR_BOOTSTRAP, "rank %d has timeout_ns = %llu but rank %d has %llu; every rank needs "
                     "the same timeout", q, (unsigned long long)recv[q].timeout_ns, me,
                     (unsigned long long)recv[me].timeout_ns);
        if (recv[q].transport != recv[me].transport)
            TPG_FAIL(ctx, TPG_ERR_BOOTSTRAP, "rank %d has transport = %d but rank %d has %d; every rank needs the "
                     "same", q, (int)recv[q].transport, me, (int)recv[me].transport);
        if (recv[q].share_devices != recv[me].share_devices)
            TPG_FAIL(ctx, TPG_ERR_BOOTSTRAP, "rank %d has share_devices = %d but rank %d has %d; every rank needs the "
                     "same", q, (int)recv[q].share_devices, me, (int)recv[me].share_devices);
    }
    return TPG_OK;
}

tpg_status tpg__exchange(tpg_ctx *ctx, const tpg_wire *send, tpg_wire *recv) {
    memset(recv, 0, (size_t)ctx->tp * sizeof *recv);
    const char *name = tpg_wire_call_name((tpg_wire_call)send->call);
    if (ctx->exchange_broken) {
        /* the peers may be in any call now: an exchange would pair with one of theirs, or wait for ever */
        if (send->status != TPG_OK) return (tpg_status)send->status; /* keep the first failure's message */
        TPG_FAIL(ctx, TPG_ERR_BOOTSTRAP, "rank %d, %s: an earlier collective call of this context failed out of step "
                 "with its peers (the error it returned says how), so the ranks' collective calls no longer pair up; "
                 "destroy the ops and the context, and create new ones on every rank", ctx->local_begin, name);
    }
    ctx->collective_serial++;
    const int rc = ctx->allgather(send, recv, sizeof *send, ctx->allgather_user);
    if (rc != 0) {
        ctx->exchange_broken = 1; /* whether each peer's call completed, failed or still waits is unknown */
        /* keep a local failure's message: it says more than "the exchange failed too" */
        if (send->status != TPG_OK) return (tpg_status)send->status;
        TPG_FAIL(ctx, TPG_ERR_BOOTSTRAP, "rank %d, %s: the bootstrap allgather callback returned %d", ctx->local_begin,
                 name, rc);
    }
    const tpg_status st = tpg_wire_check_step(ctx, send, recv);
    if (st != TPG_OK) {
        /* the peers saw the same records and stop too, but each after its own number of exchanges: no later exchange
         * of this context can be trusted to pair up */
        ctx->exchange_broken = 1;
        return st;
    }
    return tpg_wire_check(ctx, send, recv);
}

tpg_status tpg__agree(tpg_ctx *ctx, tpg_wire_call call, tpg_status local) {
    tpg_wire send, recv[TPG_MAX_TP];
    tpg_wire_init(&send, ctx, call, local);
    return tpg__exchange(ctx, &send, recv);
}
