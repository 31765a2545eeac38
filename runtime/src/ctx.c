/* Context: device checks (count, Hopper, P2P), peer access, one stream per local rank. Single-process
 * creation lives here; multi-process creation (tpg_ctx_create_rank) in ctx_rank.c. */
#include <cudaTypedefs.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "ctx_internal.h"
#include "nccl.h"
#include "tensormap.h"

/* Driver entry points this file calls directly (NULL where the driver lacks one), looked up once per process. */
static struct {
    PFN_cuCtxGetCurrent_v4000 get_current;
    PFN_cuStreamGetCtx_v9020 stream_ctx;
    PFN_cuCtxPushCurrent_v4000 push;
    PFN_cuCtxPopCurrent_v4000 pop;
    PFN_cuCtxGetDevice_v2000 ctx_device;
    PFN_cuPointerGetAttribute_v4000 pointer_attribute;
    PFN_cuMemGetAccess_v10020 mem_get_access;
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

static void load_driver_fns(void) {
    drv.get_current = (PFN_cuCtxGetCurrent_v4000)tpg__driver_symbol("cuCtxGetCurrent");
    drv.stream_ctx = (PFN_cuStreamGetCtx_v9020)tpg__driver_symbol("cuStreamGetCtx");
    drv.push = (PFN_cuCtxPushCurrent_v4000)tpg__driver_symbol("cuCtxPushCurrent");
    drv.pop = (PFN_cuCtxPopCurrent_v4000)tpg__driver_symbol("cuCtxPopCurrent");
    drv.ctx_device = (PFN_cuCtxGetDevice_v2000)tpg__driver_symbol("cuCtxGetDevice");
    drv.pointer_attribute = (PFN_cuPointerGetAttribute_v4000)tpg__driver_symbol("cuPointerGetAttribute");
    drv.mem_get_access = (PFN_cuMemGetAccess_v10020)tpg__driver_symbol("cuMemGetAccess");
}

/* A thread that never chose a device reads 0 from cudaGetDevice without any context there; "restoring" 0 would
 * then create one (since CUDA 12 cudaSetDevice initializes the primary context): a stray context of every rank's
 * process on GPU 0. So a thread without a current context has nothing to restore (-1). */
int tpg__save_device(void) {
    (void)pthread_once(&drv_once, load_driver_fns);
    CUcontext current = NULL;
    if (drv.get_current && (drv.get_current(&current) != CUDA_SUCCESS || !current)) return -1;
    int dev = -1;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return dev;
}

void tpg__restore_device(int saved) {
    if (saved >= 0 && cudaSetDevice(saved) != cudaSuccess) (void)cudaGetLastError(); /* the call's own status stands */
}

void tpg__free_rank_buffers(const tpg_ctx *ctx, void **bufs) {
    const int saved = tpg__save_device();
    for (int r = ctx->local_begin; r < ctx->local_end; r++) {
        if (!bufs[r]) continue;
        (void)cudaSetDevice(ctx->devices[r]);
        (void)cudaFree(bufs[r]); /* teardown: nothing useful to do with an error here */
        bufs[r] = NULL;
    }
    (void)cudaGetLastError(); /* an ignored failure above stays out of the caller's next cudaGetLastError */
    tpg__restore_device(saved);
}

tpg_status tpg__use_device(tpg_ctx *ctx, int rank) {
    TPG_CHECK_CUDA(ctx, cudaSetDevice(ctx->devices[rank]));
    return TPG_OK;
}

/* Whether rank's device may load from p with its SMs (1 where the driver cannot say: the kernel's own fault then
 * stands). cudaMalloc memory (suitable for legacy CUDA IPC) is covered by the peer access the context enabled; memory
 * of a pool (cudaMallocAsync) or of cuMemCreate (PyTorch's expandable segments), on a device or the host, is readable
 * from another GPU only where its owner granted that GPU access, which the pool (cudaMemPoolGetAccess) or the mapping
 * (cuMemGetAccess) reports; managed memory passes, and so does other host memory (neither query answers for it). */
int tpg__device_reads(tpg_ctx *ctx, int rank, const void *p) {
    (void)pthread_once(&drv_once, load_driver_fns);
    struct cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 1;
    }
    const CUdeviceptr ptr = (CUdeviceptr)p;
    unsigned long long legacy = 0; /* wider than the driver's bool, zeroed: either size reads right */
    CUmemoryPool pool = NULL;
    if (at.type == cudaMemoryTypeManaged || at.type == cudaMemoryTypeUnregistered || !drv.pointer_attribute) return 1;
    if (drv.pointer_attribute(&legacy, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, ptr) == CUDA_SUCCESS && legacy)
        return 1;
    if (drv.pointer_attribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, ptr) == CUDA_SUCCESS && pool) {
        enum cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
        struct cudaMemLocation where;
        memset(&where, 0, sizeof where);
        where.type = cudaMemLocationTypeDevice;
        where.id = ctx->devices[rank];
        if (cudaMemPoolGetAccess(&flags, (cudaMemPool_t)pool, &where) != cudaSuccess) {
            (void)cudaGetLastError();
            return 1;
        }
        return flags != cudaMemAccessFlagsProtNone;
    }
    unsigned long long flags = 0;
    CUmemLocation where;
    memset(&where, 0, sizeof where);
    where.type = CU_MEM_LOCATION_TYPE_DEVICE;
    where.id = ctx->devices[rank];
    if (drv.mem_get_access && drv.mem_get_access(&flags, &where, ptr) == CUDA_SUCCESS)
        return flags != CU_MEM_ACCESS_FLAGS_PROT_NONE;
    return 1;
}

/* The device stream s belongs to, or -1 where the driver cannot say (the launch's own error then stands). The
 * driver gives a stream's context, not its device (cuStreamGetDevice needs CUDA 12.8; the README's minimum is 12.4):
 * a stream of the current context (the rank's, made current by the caller) is the current device's, with no further
 * call; only another context is made current for a moment to read its device. */
static int stream_device(cudaStream_t s, int current_device) {
    (void)pthread_once(&drv_once, load_driver_fns);
    CUcontext owner = NULL, current = NULL, popped = NULL;
    if (!drv.stream_ctx || drv.stream_ctx((CUstream)s, &owner) != CUDA_SUCCESS || !owner) return -1;
    if (drv.get_current && drv.get_current(&current) == CUDA_SUCCESS && current == owner) return current_device;
    CUdevice_v1 dev = -1;
    if (!drv.push || !drv.pop || !drv.ctx_device || drv.push(owner) != CUDA_SUCCESS) return -1;
    if (drv.ctx_device(&dev) != CUDA_SUCCESS) dev = -1;
    (void)drv.pop(&popped);
    return (int)dev;
}

tpg_status tpg__check_stream_device(tpg_ctx *ctx, int rank, cudaStream_t s) {
    /* 0, the legacy and the per-thread handles name the current device's stream: rank's, made current by the caller */
    if (s == 0 || s == cudaStreamLegacy || s == cudaStreamPerThread) return TPG_OK;
    const int dev = stream_device(s, ctx->devices[rank]);
    if (dev >= 0 && dev != ctx->devices[rank])
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d runs on device %d but was given a stream of device %d; pass "
                 "a stream created on the rank's device", rank, ctx->devices[rank], dev);
    return TPG_OK;
}

const char *tpg__streams_ordered(const tpg_rank_stream *a, const tpg_rank_stream *b) {
    if (a->device != b->device) return NULL; /* 0 and the per-thread handle name each device's own stream */
    if (a->handle == b->handle && a->kind == b->kind) return "the same stream";
    const int legacy = (a->kind == TPG_STREAM_LEGACY) + (b->kind == TPG_STREAM_LEGACY);
    if (legacy == 2) return "the same stream (the legacy default stream)"; /* 0 and cudaStreamLegacy */
    const tpg_stream_kind other = a->kind == TPG_STREAM_LEGACY ? b->kind : a->kind;
    if (legacy == 1 && other != TPG_STREAM_NON_BLOCKING)
        return "the legacy default stream beside a stream it holds back (the per-thread default stream or a blocking "
               "stream)";
    return NULL;
}

tpg_status tpg__device_count(tpg_ctx *ctx, int *count, const char **why_none) {
    cudaError_t err = cudaGetDeviceCount(count);
    *why_none = "";
    if (err == cudaSuccess) return TPG_OK;
    *count = 0;
    if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver || err == cudaErrorStubLibrary ||
        err == cudaErrorInitializationError || err == cudaErrorSystemDriverMismatch ||
        err == cudaErrorCompatNotSupportedOnDevice) {
        (void)cudaGetLastError();
        /* Said in the message: a driver older than the runtime, or one upgraded without a reboot, is not "no GPU". */
        *why_none = cudaGetErrorName(err);
        return TPG_OK;
    }
    return tpg__cuda_error(ctx, err, __FILE__, __LINE__, "cudaGetDeviceCount(&count)");
}

/* Ranks of this context on device dev (1 unless share_devices). */
static int ranks_on_device(const tpg_ctx *ctx, int dev) {
    int n = 0;
    for (int r = 0; r < ctx->tp; r++) n += ctx->devices[r] == dev;
    return n;
}

/* A rank's persistent grid: the device's SMs, or with shared devices its even share of them less the SMs
 * kept free for same-device copies (tpg_ctx_config.share_devices): TPG_SHARED_DEVICE_FREE_SMS, plus one per
 * rank on the device, because a copy within one GPU runs as a kernel that needs SMs the persistent GEMMs
 * leave, and each rank may have a barrier kernel spinning at any moment (with the barriers beside the GEMM,
 * while other ranks still copy), which can sit on one of those SMs. */
tpg_status tpg__set_sm_count(tpg_ctx *ctx, int r, int sms) {
    const int sharing = ranks_on_device(ctx, ctx->devices[r]);
    if (sharing == 1) {
        ctx->sm_count[r] = sms;
        return TPG_OK;
    }
    const int kept = TPG_SHARED_DEVICE_FREE_SMS + sharing;
    ctx->sm_count[r] = (sms - kept) / sharing;
    if (ctx->sm_count[r] < 2)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "device %d has %d SMs: too few for %d ranks sharing it (%d SMs kept "
                 "free, at least 2 a rank)", ctx->devices[r], sms, sharing, kept);
    return TPG_OK;
}

static tpg_status check_devices(tpg_ctx *ctx, int share_devices) {
    /* the list's own faults first: a bad ordinal is the caller's argument whatever the machine holds */
    for (int r = 0; r < ctx->tp; r++) {
        int dev = ctx->devices[r];
        if (dev < 0)
            TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "tpg_ctx_create: devices[%d] = %d is not a device ordinal (>= 0)",
                     r, dev);
        for (int q = 0; q < r && !share_devices; q++)
            if (ctx->devices[q] == dev)
                TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "devices[%d] = devices[%d] = %d; each rank needs its own device "
                         "(tpg_ctx_config.share_devices = 1 lets ranks share one, for correctness runs only)",
                         q, r, dev);
    }
    int count = 0;
    const char *why_none;
    TPG_CHECK(tpg__device_count(ctx, &count, &why_none));
    const int need = share_devices ? 1 : ctx->tp;
    if (count < need)
        TPG_FAIL(ctx, TPG_ERR_NO_DEVICE, "TP = %d needs %d CUDA device%s; %d %s visible%s%s%s", ctx->tp, need,
                 need == 1 ? "" : "s", count, count == 1 ? "is" : "are", *why_none ? " (cudaGetDeviceCount: " : "",
                 why_none, *why_none ? ")" : "");
    for (int r = 0; r < ctx->tp; r++)
        if (ctx->devices[r] >= count)
            TPG_FAIL(ctx, TPG_ERR_NO_DEVICE, "devices[%d] = %d is not a visible CUDA device (%d visible: 0..%d)", r,
                     ctx->devices[r], count, count - 1);
    for (int r = 0; r < ctx->tp; r++) {
        struct cudaDeviceProp prop;
        TPG_CHECK_CUDA(ctx, cudaGetDeviceProperties(&prop, ctx->devices[r]));
        if (prop.major != 9 || prop.minor != 0)
            TPG_FAIL(ctx, TPG_ERR_NOT_HOPPER, "device %d (%s) has compute capability %d.%d; tpgemm kernels need 9.0 (sm_90a)",
                     ctx->devices[r], prop.name, prop.major, prop.minor);
        TPG_CHECK(tpg__set_sm_count(ctx, r, prop.multiProcessorCount));
    }
    return TPG_OK;
}

tpg_status tpg__peer_link(tpg_ctx *ctx, int a, int b, tpg_peer_link *link) {
    int access = 0, atomics = 0;
    TPG_CHECK_CUDA(ctx, cudaDeviceCanAccessPeer(&access, a, b));
    if (access) TPG_CHECK_CUDA(ctx, cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, a, b));
    *link = !access ? TPG_PEER_NONE : atomics ? TPG_PEER_OK : TPG_PEER_NO_ATOMICS;
    return TPG_OK;
}

static tpg_status enable_peers(tpg_ctx *ctx) {
    for (int r = 0; r < ctx->tp; r++) {
        for (int q = 0; q < ctx->tp; q++) {
            if (ctx->devices[q] == ctx->devices[r]) continue; /* itself, or a shared device */
            tpg_peer_link link;
            TPG_CHECK(tpg__peer_link(ctx, ctx->devices[r], ctx->devices[q], &link));
            if (link == TPG_PEER_NONE)
                TPG_FAIL(ctx, TPG_ERR_NO_P2P, "device %d cannot access device %d's memory (peer-to-peer); every pair "
                         "of the %d devices needs P2P (NVLink)", ctx->devices[r], ctx->devices[q], ctx->tp);
            if (link == TPG_PEER_NO_ATOMICS)
                TPG_FAIL(ctx, TPG_ERR_NO_P2P, "device %d reaches device %d peer-to-peer without native atomics (PCIe "
                         "P2P?): the barriers add to a peer's counters atomically, which needs NVLink; over such links "
                         "use the NCCL transport (tpg_ctx_create_rank, tpg_rank_config.transport = TPG_TRANSPORT_NCCL)",
                         ctx->devices[r], ctx->devices[q]);
        }
    }
    for (int r = 0; r < ctx->tp; r++) {
        TPG_CHECK(tpg__use_device(ctx, r));
        for (int q = 0; q < ctx->tp; q++) {
            if (ctx->devices[q] == ctx->devices[r]) continue;
            cudaError_t err = cudaDeviceEnablePeerAccess(ctx->devices[q], 0);
            if (err == cudaErrorPeerAccessAlreadyEnabled) {
                (void)cudaGetLastError();
            } else if (err != cudaSuccess) {
                return tpg__cuda_error(ctx, err, __FILE__, __LINE__, "cudaDeviceEnablePeerAccess(peer, 0)");
            }
        }
    }
    return TPG_OK;
}

tpg_status tpg__create_streams(tpg_ctx *ctx) {
    for (int r = ctx->local_begin; r < ctx->local_end; r++) {
        TPG_CHECK(tpg__use_device(ctx, r));
        TPG_CHECK_CUDA(ctx, cudaStreamCreateWithFlags(&ctx->streams[r], cudaStreamNonBlocking));
    }
    return TPG_OK;
}

void tpg__ctx_release(tpg_ctx *ctx) {
    for (int r = ctx->local_begin; r < ctx->local_end; r++) {
        if (ctx->streams[r]) {
            (void)cudaSetDevice(ctx->devices[r]);
            (void)cudaStreamDestroy(ctx->streams[r]);
        }
    }
    tpg_ipc_cache_free(&ctx->ipc);
    tpg_nccl_release(ctx->nccl);
    free(ctx);
    /* a failure ignored above must not stay pending in the caller's thread (a framework's next cudaGetLastError would
     * report it); no device is made current here for that: a failed creation may never have touched one */
    (void)cudaGetLastError();
}

tpg_status tpg_ctx_create(const tpg_ctx_config *cfg, tpg_ctx **out) {
    if (out) *out = NULL;
    if (!cfg || !out) TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "tpg_ctx_create: %s is NULL", !cfg ? "cfg" : "out");
    if (cfg->tp < 1 || cfg->tp > TPG_MAX_TP)
        TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "tpg_ctx_create: tp = %d must be in 1..%d", cfg->tp, TPG_MAX_TP);
    tpg_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) TPG_FAIL(NULL, TPG_ERR_OUT_OF_MEMORY, "tpg_ctx_create: host allocation failed");
    ctx->tp = cfg->tp;
    ctx->timeout_ns = cfg->timeout_ns ? cfg->timeout_ns : TPG_DEFAULT_TIMEOUT_NS;
    ctx->local_begin = 0; /* one process drives every rank */
    ctx->local_end = cfg->tp;
    for (int r = 0; r < cfg->tp; r++) ctx->devices[r] = cfg->devices ? cfg->devices[r] : cfg->share_devices ? 0 : r;

    const int saved = tpg__save_device();
    tpg_status st = TPG_OK;
    TPG_CHECK_GOTO(check_devices(ctx, cfg->share_devices), fail);
    TPG_CHECK_GOTO(enable_peers(ctx), fail);
    TPG_CHECK_GOTO(tpg__create_streams(ctx), fail);
    tpg__restore_device(saved);
    *out = ctx;
    return TPG_OK;
fail:
    tpg__set_error(NULL, "%s", ctx->error);
    tpg__ctx_release(ctx);
    tpg__restore_device(saved);
    return st;
}

tpg_status tpg_ctx_destroy(tpg_ctx *ctx) {
    if (!ctx) return TPG_OK;
    if (ctx->num_ops > 0)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "tpg_ctx_destroy: %d op(s) created on this context are still alive; "
                 "destroy them first", ctx->num_ops);
    const int saved = tpg__save_device();
    tpg__ctx_release(ctx);
    tpg__restore_device(saved);
    return TPG_OK;
}

int tpg_ctx_tp(const tpg_ctx *ctx) { return ctx ? ctx->tp : 0; }

int tpg_ctx_device(const tpg_ctx *ctx, int rank) {
    return ctx && rank >= 0 && rank < ctx->tp ? ctx->devices[rank] : -1;
}
