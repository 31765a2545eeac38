/* Multi-process context (tpg_ctx_create_rank): one local rank, peers found through the bootstrap.
 *
 * Each rank sends its CUDA ordinal and PCI bus id. Ordinals differ between processes when
 * CUDA_VISIBLE_DEVICES differs, so a peer's device is found in this process by its bus id
 * (cudaDeviceGetByPCIBusId); it must be visible here, since cudaDeviceCanAccessPeer needs both
 * ordinals. Peer access itself is not enabled here: cudaIpcOpenMemHandle(.., LazyEnablePeerAccess)
 * maps each peer allocation with access from the local device, and enabling it explicitly would
 * create a context on every peer GPU in every process. With share_devices, ranks whose bus ids are equal
 * share that GPU: their memory is reached through IPC on the same device, which needs no peer access.
 *
 * TPG_TRANSPORT_NCCL: no peer is mapped and no peer device need be visible (other nodes); each rank loads NCCL
 * (nccl.h), rank 0's ncclUniqueId goes out with the first exchange, and every rank then joins the context's
 * communicator. The persistent grid leaves TPG_NCCL_FREE_SMS SMs to NCCL's kernels. */
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "checks.h"
#include "ctx_internal.h"
#include "nccl.h"
#include "nccl_plan.h"

/* What this rank can check alone: NCCL loads (TPG_TRANSPORT_NCCL; first, as it needs no device), its device
 * exists and is Hopper. Fills the wire's device fields, and on rank 0 over NCCL the communicator's id. */
static tpg_status local_checks(tpg_ctx *ctx, tpg_wire *w) {
    const int me = ctx->local_begin, dev = ctx->devices[me];
    /* the caller's argument, whatever the machine holds; here, not before the exchange, so the peers hear of it */
    if (dev < 0)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d: tpg_rank_config.device = %d is not a device ordinal (>= 0)",
                 me, dev);
    if (tpg__over_nccl(ctx)) TPG_CHECK(tpg_nccl_load(ctx, &ctx->nccl));
    int count = 0;
    const char *why_none;
    TPG_CHECK(tpg__device_count(ctx, &count, &why_none));
    if (count == 0)
        TPG_FAIL(ctx, TPG_ERR_NO_DEVICE, "rank %d: no CUDA device is visible in this process%s%s%s", me,
                 *why_none ? " (cudaGetDeviceCount: " : "", why_none, *why_none ? ")" : "");
    if (dev >= count)
        TPG_FAIL(ctx, TPG_ERR_NO_DEVICE, "rank %d: device = %d is not a visible CUDA device (%d visible: 0..%d)", me,
                 dev, count, count - 1);
    struct cudaDeviceProp prop;
    TPG_CHECK_CUDA(ctx, cudaGetDeviceProperties(&prop, dev));
    if (prop.major != 9 || prop.minor != 0)
        TPG_FAIL(ctx, TPG_ERR_NOT_HOPPER, "rank %d: device %d (%s) has compute capability %d.%d; tpgemm kernels need "
                 "9.0 (sm_90a)", me, dev, prop.name, prop.major, prop.minor);
    ctx->sm_count[me] = prop.multiProcessorCount;
    TPG_CHECK_CUDA(ctx, cudaDeviceGetPCIBusId(w->pci_bus_id, (int)sizeof w->pci_bus_id, dev));
    w->device = dev;
    if (!tpg__over_nccl(ctx)) return TPG_OK;
    if (!tpg_nccl_gemm_sms(prop.multiProcessorCount, ctx->tp))
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d: device %d has %d SMs, too few to leave %d to NCCL at TP = %d "
                 "and keep as many for the GEMM", me, dev, prop.multiProcessorCount, TPG_NCCL_FREE_SMS, ctx->tp);
    if (me == 0) {
        TPG_CHECK(tpg__use_device(ctx, me));
        TPG_CHECK(tpg_nccl_unique_id(ctx, ctx->nccl, w->nccl_id));
    }
    return TPG_OK;
}

static tpg_status agree_to_connect(tpg_ctx *ctx, tpg_status local) {
    return tpg__agree(ctx, TPG_CALL_NCCL_CONNECT, local);
}

/* TPG_TRANSPORT_NCCL after the first exchange: the shared settings, then the communicator (collective: every
 * rank got here, since the exchange failed everywhere if any rank failed before it). ncclCommInitRank and the
 * first transfers wait for every peer without a bound, so each is entered only after every rank agreed that it
 * will enter it too (a rank that failed before would leave its peers waiting forever); every rank makes the same
 * exchanges (JOIN, CONNECT, then the caller's CTX_READY) whatever failed where, so their counts stay matched. */
static tpg_status join_nccl(tpg_ctx *ctx, const tpg_wire *recv) {
    const int me = ctx->local_begin;
    tpg_status st = tpg_wire_check_settings(ctx, recv);
    if (st == TPG_OK) st = tpg__use_device(ctx, me);
    if (st == TPG_OK) st = tpg_nccl_env_check(ctx, ctx->nccl);
    st = tpg__agree(ctx, TPG_CALL_NCCL_JOIN, st);
    if (st == TPG_OK) st = tpg_nccl_comm_init(ctx, ctx->nccl, ctx->tp, me, recv[0].nccl_id);
    if (st == TPG_OK) st = tpg_nccl_connect_all(ctx, ctx->nccl, ctx->tp, me, ctx->timeout_ns, agree_to_connect);
    else if (ctx->tp > 1) (void)agree_to_connect(ctx, st); /* the exchange the peers make in connect_all */
    if (st == TPG_OK) /* a TP = 1 op transfers nothing: it keeps every SM */
        ctx->sm_count[me] = tpg_nccl_gemm_sms(ctx->sm_count[me], ctx->tp);
    return st;
}

/* Maps every peer's bus id to an ordinal of this process and checks access from the local device. */
static tpg_status map_peers(tpg_ctx *ctx, const tpg_wire *recv) {
    const int me = ctx->local_begin;
    TPG_CHECK(tpg_wire_check_settings(ctx, recv));
    for (int q = 0; q < ctx->tp; q++) {
        if (q == me) continue;
        char bus[sizeof recv[q].pci_bus_id + 1];
        memcpy(bus, recv[q].pci_bus_id, sizeof recv[q].pci_bus_id);
        bus[sizeof recv[q].pci_bus_id] = '\0';
        int dev = -1;
        if (cudaDeviceGetByPCIBusId(&dev, bus) != cudaSuccess) {
            (void)cudaGetLastError();
            TPG_FAIL(ctx, TPG_ERR_NO_DEVICE, "rank %d: the device of rank %d (PCI bus id %s, its ordinal %d) is not "
                     "visible in this process; every rank's process must see all GPUs of the job (do not restrict "
                     "CUDA_VISIBLE_DEVICES per process)", me, q, bus, (int)recv[q].device);
        }
        ctx->devices[q] = dev;
    }
    for (int q = 0; q < ctx->tp; q++) {
        for (int p = 0; p < q && !recv[me].share_devices; p++)
            if (ctx->devices[p] == ctx->devices[q])
                TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "ranks %d and %d use the same GPU (PCI bus id %s); each rank "
                         "needs its own device (tpg_rank_config.share_devices = 1 on every rank lets ranks share one, "
                         "for correctness runs only)", p, q, recv[q].pci_bus_id);
        if (ctx->devices[q] == ctx->devices[me]) continue; /* itself, or a shared device */
        tpg_peer_link link;
        TPG_CHECK(tpg__peer_link(ctx, ctx->devices[me], ctx->devices[q], &link));
        if (link == TPG_PEER_NONE)
            TPG_FAIL(ctx, TPG_ERR_NO_P2P, "rank %d (device %d, %s) cannot access the memory of rank %d (device %d, %s) "
                     "peer-to-peer; every pair of ranks needs P2P (NVLink), or the NCCL transport "
                     "(tpg_rank_config.transport = TPG_TRANSPORT_NCCL)", me, ctx->devices[me], recv[me].pci_bus_id,
                     q, ctx->devices[q], recv[q].pci_bus_id);
        if (link == TPG_PEER_NO_ATOMICS)
            TPG_FAIL(ctx, TPG_ERR_NO_P2P, "rank %d (device %d, %s) reaches rank %d (device %d, %s) peer-to-peer "
                     "without native atomics (PCIe P2P?): the barriers add to a peer's counters atomically, which "
                     "needs NVLink; use the NCCL transport (tpg_rank_config.transport = TPG_TRANSPORT_NCCL)", me,
                     ctx->devices[me], recv[me].pci_bus_id, q, ctx->devices[q], recv[q].pci_bus_id);
    }
    return TPG_OK;
}

tpg_status tpg_ctx_create_rank(const tpg_rank_config *cfg, tpg_ctx **out) {
    if (out) *out = NULL;
    if (!cfg || !out || !cfg->allgather)
        TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "tpg_ctx_create_rank: %s is NULL",
                 !cfg ? "cfg" : !out ? "out" : "cfg->allgather (the bootstrap all-gather)");
    if (cfg->tp < 1 || cfg->tp > TPG_MAX_TP)
        TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "tpg_ctx_create_rank: tp = %d must be in 1..%d", cfg->tp, TPG_MAX_TP);
    if (cfg->rank < 0 || cfg->rank >= cfg->tp)
        TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "rank = %d must be in 0..%d", cfg->rank, cfg->tp - 1);
    if (cfg->transport != TPG_TRANSPORT_PEER && cfg->transport != TPG_TRANSPORT_NCCL)
        TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "transport = %d must be TPG_TRANSPORT_PEER (0) or TPG_TRANSPORT_NCCL "
                 "(1)", cfg->transport);
    tpg_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) TPG_FAIL(NULL, TPG_ERR_OUT_OF_MEMORY, "tpg_ctx_create_rank: host allocation failed");
    ctx->tp = cfg->tp;
    ctx->timeout_ns = cfg->timeout_ns ? cfg->timeout_ns : TPG_DEFAULT_TIMEOUT_NS;
    ctx->local_begin = cfg->rank;
    ctx->local_end = cfg->rank + 1;
    ctx->allgather = cfg->allgather;
    ctx->allgather_user = cfg->user;
    ctx->transport = cfg->transport;
    for (int r = 0; r < cfg->tp; r++) ctx->devices[r] = -1;
    ctx->devices[cfg->rank] = cfg->device;

    const int saved = tpg__save_device();
    tpg_wire send, recv[TPG_MAX_TP];
    tpg_wire_init(&send, ctx, TPG_CALL_CTX_CREATE, TPG_OK);
    send.timeout_ns = ctx->timeout_ns;
    send.share_devices = cfg->share_devices != 0;
    send.transport = cfg->transport;
    send.status = local_checks(ctx, &send);
    tpg_status st = tpg__exchange(ctx, &send, recv);
    if (st == TPG_OK && tpg__over_nccl(ctx)) {
        st = join_nccl(ctx, recv);
    } else if (st == TPG_OK) {
        st = map_peers(ctx, recv);
        if (st == TPG_OK) st = tpg__set_sm_count(ctx, cfg->rank, ctx->sm_count[cfg->rank]); /* its share if shared */
    }
    if (st == TPG_OK) st = tpg__create_streams(ctx);
    st = tpg__agree(ctx, TPG_CALL_CTX_READY, st); /* only reached when every rank passed the first exchange
                                                      or failed the same way, so the call counts match */
    if (st != TPG_OK) {
        tpg__set_error(NULL, "%s", ctx->error);
        tpg__ctx_release(ctx);
        tpg__restore_device(saved);
        return st;
    }
    tpg__restore_device(saved);
    *out = ctx;
    return TPG_OK;
}

int tpg_ctx_rank(const tpg_ctx *ctx) { return ctx && tpg__multi_process(ctx) ? ctx->local_begin : -1; }
