/* tpgemm: communication-fused tensor-parallel GEMM for NVIDIA Hopper. The only public header.
 *
 * Model: a context (tpg_ctx) owns tp Hopper devices and the peer table between them (single process),
 * or one rank's device in a multi-process job (tpg_ctx_create_rank, one process per GPU). An operation
 * (tpg_op) is one configured distributed GEMM  D = alpha * A . B^T + beta * C  over tp devices, with
 * A: M x K, B: N x K (K-major, like a Linear weight), C, D: M x N, all row-major, L batches. Each device
 * passes its own shards (tpg_op_set_tensors) and the op runs one CUDA graph per device.
 *
 * Conventions: every fallible call returns tpg_status and writes results through out-parameters;
 * handles are opaque; create/destroy come in pairs; the library never prints and never exits.
 * Thread-safety: a context and its ops may be used by one host thread at a time (calls on one context,
 * tpg_op_run_rank included, must not overlap; a host with a thread per device serializes them, and launches every
 * local rank of a call before any thread makes a waiting call - tpg_op_sync, tpg_op_set_tensors' rebuild, a destroy:
 * holding the lock in a wait while another rank is still to be launched stalls until the timeout, as the first
 * rank's start barrier waits on the GPU for that rank). tpg_last_error(ctx) counts as a call on ctx (its text is
 * rewritten in place by the next failure); copy it before letting another thread in. The lookups (config, dispatch,
 * status strings) and tpg_last_error(NULL) may be called from any thread; the latter's text lives in the calling
 * thread's storage until its next failure there or its exit.
 */
#ifndef TPGEMM_H
#define TPGEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A CUDA stream: cudaStream_t and the driver's CUstream are pointers to this struct, so a caller passes its own
 * without a cast, and this header needs no CUDA header. */
struct CUstream_st;

/* X(name, value, what to do next). One table drives the enum and tpg_status_string. */
#define TPG_STATUS_TABLE(X)                                                                          \
    X(TPG_OK, 0, "success")                                                                          \
    X(TPG_ERR_INVALID_ARGUMENT, 1, "an argument is invalid; tpg_last_error names it")                \
    X(TPG_ERR_UNKNOWN_CONFIG, 2, "no generated config matches; list them with `tpgemm --list`")      \
    X(TPG_ERR_SHAPE, 3, "the problem shape does not fit the schedule or kernel; see tpg_last_error")  \
    X(TPG_ERR_ALIGNMENT, 4, "a pointer, row or stage size breaks an alignment rule; see tpg_last_error")\
    X(TPG_ERR_NO_DEVICE, 5, "fewer CUDA devices are visible than the TP degree needs")               \
    X(TPG_ERR_NOT_HOPPER, 6, "a device is not compute capability 9.0 (Hopper, sm_90a)")              \
    X(TPG_ERR_NO_P2P, 7, "two devices cannot access each other's memory (peer-to-peer)")             \
    X(TPG_ERR_OUT_OF_MEMORY, 8, "a device allocation failed; free memory or shrink the problem")     \
    X(TPG_ERR_CUDA, 9, "a CUDA call failed; tpg_last_error has the call and its message")            \
    X(TPG_ERR_TIMEOUT, 10, "a device waited longer than the timeout for a peer; check all ranks run") \
    X(TPG_ERR_NOT_READY, 11, "op not ready: no tensors or graphs, or a call left it out of step")    \
    X(TPG_ERR_UNSUPPORTED, 12, "this combination is not supported yet; see tpg_last_error")          \
    X(TPG_ERR_BOOTSTRAP, 13, "ranks disagree or the bootstrap all-gather failed; check every rank's error")\
    X(TPG_ERR_NCCL, 14, "NCCL could not be loaded or an NCCL call failed; tpg_last_error has the call")

typedef enum tpg_status {
#define TPG_STATUS_ENUM_(name, value, text) name = value,
    TPG_STATUS_TABLE(TPG_STATUS_ENUM_)
#undef TPG_STATUS_ENUM_
} tpg_status;

typedef enum tpg_dtype {
    TPG_DTYPE_BF16 = 0,
    TPG_DTYPE_FP16,
    TPG_DTYPE_E4M3, /* fp8, per-tensor scale */
    TPG_DTYPE_E5M2, /* fp8, per-tensor scale */
    TPG_DTYPE_FP32
} tpg_dtype;

typedef struct tpg_ctx tpg_ctx;
typedef struct tpg_op tpg_op;

/* A static string: what the status means and what to do next. Never NULL. */
const char *tpg_status_string(tpg_status s);

/* The detailed message of the last failure on ctx (names the offending value), or "" if none.
 * ctx may be NULL: then the message of the last failure on this thread of a call that had no context to hold it -
 * tpg_ctx_create / tpg_ctx_create_rank, the config and dispatch lookups, or a call given a NULL handle. */
const char *tpg_last_error(const tpg_ctx *ctx);

/* Size in bytes of one element of t (1, 2 or 4). */
size_t tpg_dtype_size(tpg_dtype t);
/* "bf16", "fp16", "e4m3", "e5m2", "fp32"; "unknown" for any other value. */
const char *tpg_dtype_name(tpg_dtype t);
/* The type of D and C, and of partials unless the config has partials: f32, for operands of type t: t itself for
 * 16-bit operands, bf16 for fp8. An unknown t comes back unchanged (tpg_dtype_size of it is 0: check that). */
tpg_dtype tpg_output_dtype(tpg_dtype t);

/* ---- Generated configs --------------------------------------------------------------------- */

typedef struct tpg_config_info {
    const char *name;      /* as in schedules.yaml */
    const char *schedule;  /* e.g. "AllGather1D_TilingCD_RotatingA" */
    const char *kernel;    /* kernel instance name */
    int tp;
    tpg_dtype dtype;       /* operand type; outputs are the same type for 16-bit, bf16 for fp8 */
    int bm, bn, bk, stages;
    tpg_dtype acc;         /* accumulator: TPG_DTYPE_FP32, or TPG_DTYPE_FP16 (`acc: f16`, fp16 operands) */
    int fp8_promote;       /* fp8: k-blocks between promotions of the tensor pipe's sums into f32 registers
                              (`fp8_promote`); 0: summed in the pipe over the whole K (fast accumulation) */
    tpg_dtype partials;    /* reduce-scatter partials between stages: the output type, or TPG_DTYPE_FP32
                              (`partials: f32`: no rounding of a partial on the way) */
    int pull_partials;     /* reduce-scatter: 1 = each rank reads the partial it adds from the sender's own slot over
                              the link (`pull_partials`); 0 = the sender pushes it into the receiver's slot */
    int wave_weight;       /* 1..100: a default only through tpg_config_pick's wave check, its fill counted at this
                              percent (`wave_weight`, tiles for few tokens); 0: an ordinary config */
    int stream_k;          /* 1: a one-stage launch (TP = 1, or the gathered / one-hop walks' one GEMM) splits its
                              tiles along k over the CTAs (`stream_k`); a default only through the split rule */
    int copy_engine_partials; /* reduce-scatter: 1 = the sender's partial stays in its own slot and copy-engine nodes
                              of the op's graph carry it to the receiver band by band (`copy_engine_partials`) */
    int by_name;           /* 1: never a default pick (tpg_config_pick), run by name only (`by_name`: experiments and
                              the defaults' twins on another route of partials: pushed, pulled, by copy engine) */
} tpg_config_info;

/* Number of generated configs. */
int tpg_config_count(void);
/* Info of config i (0 <= i < tpg_config_count()); TPG_ERR_INVALID_ARGUMENT if out of range or out is NULL. */
tpg_status tpg_config_get(int i, tpg_config_info *out);
/* Index of the config named `name`, or, when name is NULL, the default config of schedule/tp/dtype for
 * a GEMM of unknown shape (tpg_config_pick with k = 0). TPG_ERR_UNKNOWN_CONFIG if none; TPG_ERR_INVALID_ARGUMENT for a
 * NULL index, or (name NULL) a dtype that is not a tpg_dtype. With a name, schedule, tp and dtype are not read: the
 * name says them all (tpg_config_get's info), and the tensors a caller passes must be of its dtype (tpg_op_create
 * refuses its tp on another context's; a tensor's type it cannot see). */
tpg_status tpg_config_find(const char *name, const char *schedule, int tp, tpg_dtype dtype, int *index);
/* The default config of schedule (NULL = any) / tp (<= 0 = any) / dtype for one GEMM (global extents):
 * the first config by name whose schedules.yaml `prefer_from_local_k` (`prefer_from_local_k_tp1` at TP = 1, where
 * set) holds for the GEMM's per-stage K
 * (K / tp for reduce-scatter, K for all-gather; k <= 0: only a preference of 1, for every shape, holds),
 * else the first config by name without a `wave_weight` (a weighted one only where no other is a candidate). Only
 * f32-accumulating configs are candidates (nor a tuned choice's, which tpg_dispatch_find returns): an `acc: f16`
 * config runs only when named, and so do an fp8 config with `fp8_promote` and a config with fp32
 * partials (`partials: f32`): more precise, slower; and every config schedules.yaml marks `by_name` (the pulled- and
 * copy-engine-partial twins of the defaults, until measured on a link against the push). With the whole
 * shape given (m, n, k > 0), the wave check: each config not preferred scores the share of the tile slots of
 * whole waves of TPG_PICK_SMS SMs that one GPU's persistent walk (tp stages, one batch) fills with output, times
 * its wave_weight percent (100 without one); the best - the first by name of equals, unweighted first - replaces
 * the pick when it scores more than 10 points higher, or more than twice as high. Then the row rule: a config
 * not preferred whose tiles have fewer rows than the pick's, and either the pick's columns and as many tiles in its
 * walk or room for all the launch's rows in one row of tiles, replaces it (the fewest rows): at M = 16-64 the
 * ping-pong 64x128 (reduce-scatter, and all-gather at 70B-fc1 with 16 tokens). That is few tokens: at TP = 2,
 * 70B-qkv at M = 2048 or 70B-fc1 at M = 512 run the ping-pong 128x128 config, 4-5% faster there than the 128x256
 * on one H200, 70B-qkv at M = 512 or 1024 the cooperative 128x160 (`*_w160`), 22-27% faster, and at M = 128 qkv,
 * attn_out and down the ping-pong 64x128 (`*_pp64`), while gate_up keeps the 128x256: its walk is one gathered GEMM
 * of 128 x 28672 a rank, whose 112 wide tiles fill 85% of a wave (docs/PERF_NOTES.md, 2026-12-02; `tpgemm --model
 * llama3-70b --tp 2 --tokens 128 --dry-run` prints the picks). Last, the split rule (TP = 1): a `stream_k` config
 * (only ever a candidate here; at TP >= 2 by name only) replaces the pick where its tiles fill at most 25% of the SMs
 * with at least 128 k-blocks each, or one row of tiles, at most a wave but more than 3/4 of one, with at least 192:
 * decode GEMMs of few, long tiles (`*_sk64`, 1.22x the spread ping-pong 64x128 there in geometric mean on one H200).
 * Pure: no CUDA call. Tuned choices are not consulted: see tpg_dispatch_find. TPG_ERR_INVALID_ARGUMENT for a dtype
 * that is not a tpg_dtype or a NULL index, TPG_ERR_UNKNOWN_CONFIG where no config is a default pick (tpg_last_error
 * (NULL) says why: none of the schedule and dtype at that tp - the TPs that have some named - or each runs by name
 * only, one named with its reason). The pick does
 * not validate the shape: tpg_op_create does (TPG_ERR_SHAPE / TPG_ERR_ALIGNMENT, the rule named), and those rules
 * hold for every config of a schedule alike - M, N or K divisible by tp where the schedule shards it (a decode
 * token count too: M = 17 runs at TP = 1 only), K x element size (K / tp for reduce-scatter) a multiple of 16
 * bytes, each stage's N a multiple of 8, extents at most 2^31 - 512 - save the tile walk's 32-bit count (about 2^31
 * tiles over all stages: ~2^45 output elements of whole tiles, sooner for tiny batched stages), which one tile size
 * can pass and another not. tpgemm --dry-run prints the verdict. */
tpg_status tpg_config_pick(const char *schedule, int tp, tpg_dtype dtype, int64_t m, int64_t n, int64_t k,
                           int *index);
/* The SMs tpg_config_pick assumes a GEMM's grid has: an H100 or H200 SXM's. */
#define TPG_PICK_SMS 132
/* The most SMs tpg_config_pick_sms takes (more is refused: no GPU has them). */
#define TPG_PICK_SMS_LIMIT 1024
/* tpg_config_pick for a grid of `sms` SMs (0: the K rule alone; 0..TPG_PICK_SMS_LIMIT): another GPU's count, or
 * fewer where the GEMM leaves some - TPG_NCCL_FREE_SMS under the NCCL transport, a share of the device with
 * share_devices. TPG_ERR_INVALID_ARGUMENT for a dtype that is not a tpg_dtype or sms out of range,
 * TPG_ERR_UNKNOWN_CONFIG where no config of the schedule / tp / dtype is a default pick. */
tpg_status tpg_config_pick_sms(const char *schedule, int tp, tpg_dtype dtype, int64_t m, int64_t n, int64_t k,
                               int sms, int *index);

/* ---- Dispatch: model presets and tuned choices ----------------------------------------------- */

/* One row of the generated dispatch table (schedules.yaml `models:` and `tuned:`). */
typedef struct tpg_dispatch_entry {
    const char *model;     /* preset name, e.g. "llama3-70b"; "" for a tuned plain shape */
    const char *layer;     /* "qkv", "attn_out", "gate_up" or "down"; "" for a tuned plain shape */
    int64_t m, n, k;       /* global GEMM; m = the token count the row was made or tuned for */
    tpg_dtype dtype;       /* operand type */
    const char *schedule;  /* e.g. "AllGather1D_TilingCD_RotatingA" */
    int tp;
    int config;            /* config index (tpg_config_get, tpg_op_desc.config) */
    int tuned;             /* 1: chosen by `python3 -m generator tune`; 0: the preset's default config */
} tpg_dispatch_entry;

/* Number of rows, and row i (0 <= i < tpg_dispatch_count(); else TPG_ERR_INVALID_ARGUMENT). */
int tpg_dispatch_count(void);
tpg_status tpg_dispatch_get(int i, tpg_dispatch_entry *out);
/* A tuned row holds for token counts within this factor of the M it was tuned at (both ways). */
#define TPG_TUNED_M_REACH 2
/* The row to run one GEMM with. A row matches when dtype and tp are equal and each of model, layer,
 * schedule (NULL = any), n and k (<= 0 = any) is equal; among matching rows the one whose m is
 * nearest to m by ratio wins (the first on ties; m <= 0 = the first), since a preset's N and K are fixed while
 * its token count varies. The row comes back as it is where m is its m (or m <= 0) or it is a tuned row within
 * TPG_TUNED_M_REACH of m; else untuned, with m and the schedule's default pick for m (tpg_config_pick): an untuned
 * row holds the default pick for its own m, and a tuned kernel was measured at its own M only. Writes the row to
 * *out; TPG_ERR_UNKNOWN_CONFIG if no row matches (tpg_last_error(NULL) names the nearest row and the fields it differs
 * in, or says the table has no rows), TPG_ERR_INVALID_ARGUMENT if out is NULL or dtype is not a tpg_dtype;
 * tpg_config_pick's status if that pick fails. */
tpg_status tpg_dispatch_find(const char *model, const char *layer, int64_t m, int64_t n, int64_t k, tpg_dtype dtype,
                             const char *schedule, int tp, tpg_dispatch_entry *out);

/* ---- Context ------------------------------------------------------------------------------- */

typedef struct tpg_ctx_config {
    int tp;                     /* number of devices */
    const int *devices;         /* tp CUDA device ordinals; NULL = 0..tp-1 */
    uint64_t timeout_ns;        /* bound on every device-side wait; 0 = default (TPG_DEFAULT_TIMEOUT_NS) */
    int share_devices;          /* 0: every rank needs its own device. 1: ranks may name the same device (devices
                                   NULL = all on device 0), for running the fused schedules' correctness checks
                                   on fewer GPUs than tp: a device's SMs, less TPG_SHARED_DEVICE_FREE_SMS and
                                   one more per rank sharing it, are split evenly between its ranks so that
                                   their persistent kernels run side by side, and their "peer" copies and flags
                                   stay inside one GPU. Times measured
                                   so say nothing about a real TP run. A config with copy-engine partials
                                   needs CUDA_DEVICE_MAX_CONNECTIONS >= 32 in the environment then (before CUDA
                                   starts), else tpg_op_create returns TPG_ERR_UNSUPPORTED. */
} tpg_ctx_config;

#define TPG_DEFAULT_TIMEOUT_NS 10000000000ull /* 10 s */
/* SMs of a shared device that no rank's persistent grid takes: a copy between two allocations of one GPU
 * runs as a kernel, which needs a free SM while the ranks' GEMMs occupy theirs */
#define TPG_SHARED_DEVICE_FREE_SMS 4
/* SMs of each device that the persistent GEMM leaves to NCCL's kernels (TPG_TRANSPORT_NCCL): a transfer the
 * GEMM waits for must find an SM while the GEMM's CTAs occupy theirs. NCCL's point-to-point kernels take one
 * block per channel; with NCCL 2.17 or newer the context's communicator is created with maxCTAs = this and no
 * clusters (ncclConfig_t); before 2.17 the environment must cap it (NCCL_MAX_NCHANNELS at or below this, and from
 * 2.16 NCCL_CGA_CLUSTER_SIZE 0 or 1), else TPG_ERR_NCCL. An NCCL variable in the environment or in NCCL's config files
 * (NCCL_CONF_FILE, else ~/.nccl.conf; /etc/nccl.conf) that would give NCCL more CTAs than this, clusters, or a
 * non-blocking communicator is refused (TPG_ERR_NCCL; the list: docs/C_API.md). At
 * TP = 1 nothing is left (nothing is transferred); at TP >= 2 a device of at most twice this many SMs (a small MIG
 * slice) is refused (TPG_ERR_INVALID_ARGUMENT). */
#define TPG_NCCL_FREE_SMS 8
#define TPG_CTX_CONFIG_INIT {0, NULL, 0, 0}

/* Every call leaves the calling thread's current CUDA device as it found it (the device's primary context, which
 * the CUDA runtime uses: a context of the caller's own made current with the driver API is not restored). A thread
 * with no CUDA context yet gets none on a device it did not ask for: it keeps the device the call used last (a
 * process per rank thus opens no context on GPU 0 unless its rank runs there).
 *
 * Single process, one host thread driving all tp devices. Checks that each device exists and is
 * Hopper, and enables peer access between every pair of distinct devices; each pair needs access with
 * native peer atomics (NVLink: the barriers add to a peer's counters), TPG_ERR_NO_P2P names the pair otherwise.
 * Peer access is the process's state, not the context's: it stays enabled after tpg_ctx_destroy (and after a
 * failed create), since other contexts or the caller's own code may use it.
 * There is no transport to choose here (tpg_ctx_config has none): GPUs without such access run only as a
 * multi-process context, tpg_ctx_create_rank with transport = TPG_TRANSPORT_NCCL.
 * On failure *out is NULL and tpg_last_error(NULL) says why. */
tpg_status tpg_ctx_create(const tpg_ctx_config *cfg, tpg_ctx **out);
/* ---- Multi-process mode: one rank per process (the framework model) ------------------------- */

/* Bootstrap all-gather supplied by the framework (e.g. torch.distributed over the TP group): every rank
 * passes `bytes` bytes in send; recv (tp * bytes) receives them in rank order. Returns 0 on success.
 * It is called from the collective calls below, on their calling thread, the same number of times on
 * every rank (bytes is 1024 from wire version 6 on, so that ranks of different builds since then get a clear
 * TPG_ERR_BOOTSTRAP); it must not call back into tpgemm. tpgemm never waits for a peer outside it and NCCL's init,
 * so a job whose rank died is ended by this callback's own deadline (torch.distributed's timeout, for one). */
typedef int (*tpg_allgather_fn)(const void *send, void *recv, size_t bytes, void *user);

/* How a multi-process context's ranks reach each other (tpg_rank_config.transport). */
typedef enum tpg_transport {
    TPG_TRANSPORT_PEER = 0, /* CUDA peer access with native peer atomics (NVLink; PCIe P2P lacks the atomics the
                               barriers need): copy engines, remote stores and flags, one persistent kernel per
                               call that waits per stage / tile (the fast path) */
    TPG_TRANSPORT_NCCL = 1  /* NCCL send / recv, for ranks without such access (other nodes, PCIe with or without
                               P2P): stage-granular, see tpg_ctx_create_rank */
} tpg_transport;

typedef struct tpg_rank_config {
    int tp;                     /* number of ranks (processes), one device each */
    int rank;                   /* this process's rank, 0..tp-1 (the allgather's order) */
    int device;                 /* this rank's CUDA ordinal in this process */
    uint64_t timeout_ns;        /* bound on every device-side wait; 0 = default; must match on all ranks */
    tpg_allgather_fn allgather; /* must not be NULL */
    void *user;                 /* passed to allgather */
    int share_devices;          /* 0: every rank needs its own device. 1: ranks may be on the same device (as
                                   tpg_ctx_config.share_devices; each rank's grid takes its share of the SMs),
                                   for checking multi-process runs on fewer GPUs than tp. Processes on one GPU
                                   take turns on it (time slices; no MPS needed), so calls are slow and their
                                   times mean nothing. Must match on all ranks. */
    int transport;              /* tpg_transport; must match on all ranks */
} tpg_rank_config;

#define TPG_RANK_CONFIG_INIT {0, 0, 0, 0, NULL, NULL, 0, TPG_TRANSPORT_PEER}

/* Collective (every rank calls it). A context that owns ONE local rank; the other ranks' memory is
 * reached through CUDA IPC handles exchanged with cfg->allgather. Each rank sends its device's PCI bus
 * id; every process must see every rank's GPU (do not restrict CUDA_VISIBLE_DEVICES per process), the
 * bus id maps a peer to this process's ordinal, and peer access with native atomics (NVLink) must hold from
 * this rank's device to every peer on another device (TPG_ERR_NO_P2P names the ranks); two ranks on one device are
 * refused unless every rank sets share_devices. A failure on any rank fails every rank: the
 * failing rank returns its own status, the others return that rank's status with a message naming it.
 * Argument errors (NULL cfg / out / allgather, tp or rank out of range, an unknown transport) return at once,
 * without calling allgather. Over the peer transport the shard an all-gather op's peers copy from (A, or B for
 * RotatingB; TP >= 2) must live in cudaMalloc memory: they map it through CUDA IPC, which cannot export cuMemCreate,
 * cudaMallocAsync, pinned host or managed memory (in PyTorch leave expandable_segments off and the allocator backend
 * native; else tpg_op_set_tensors fails naming the tensor, TPG_ERR_INVALID_ARGUMENT or TPG_ERR_CUDA). Other tensors,
 * and every tensor over NCCL, are as tpg_op_set_tensors says.
 * In this mode: tpg_op_create, tpg_op_set_tensors (local rank only), tpg_op_set_rs_ring, tpg_op_destroy and, over
 * the NCCL transport, tpg_op_set_copy_chunks of an all-gather op are collective, called by every rank in the same
 * order (a mismatch is TPG_ERR_BOOTSTRAP, not a hang, as long as the allgather itself returns; after calls that do
 * not match or a failed allgather every later collective call on the context fails at once: destroy it; the same
 * call with different arguments fails that call on every rank and leaves the context usable). A rank whose own
 * arguments are wrong (a NULL desc or out, bad tensors, a copy cut out of range) still takes part and fails every
 * rank; only a NULL op or ctx returns at once (there is nothing to exchange
 * through), which leaves its peers waiting in allgather. New tensors (tpg_op_set_tensors again) replace
 * the peers' old shards: each rank drops its mappings of them once its own last run has finished, before
 * the call's closing agreement, so a rank may free its old shard as soon as its call has returned. tpg_op_run,
 * tpg_op_run_rank, tpg_op_sync and tpg_op_set_scalars act on the local rank only; tpg_op_shard_shape works for any
 * rank.
 *
 * transport = TPG_TRANSPORT_NCCL: the ranks need no peer access and need not see each other's GPUs (other nodes,
 * PCIe boxes with or without P2P). NCCL is loaded at run time (TPG_NCCL_LIBRARY, a path or soname, else libnccl.so.2;
 * TPG_ERR_NCCL when it cannot be) and the context makes its own communicator (rank 0's id goes through
 * allgather); every rank enters ncclCommInitRank, and makes its first transfers, only after all agreed that they
 * would, so a rank that fails before (a device error; an NCCL environment refused, TPG_NCCL_FREE_SMS says which)
 * fails every rank's call instead of leaving them waiting in NCCL. A rank that fails or dies inside
 * ncclCommInitRank leaves its peers waiting there (NCCL has no bound on it: the framework's watchdog has to end such
 * a job); the first transfers after it are bounded by the context's timeout, at least 60 s (TPG_ERR_TIMEOUT, the
 * communicator aborted). Each call's graph sends and receives whole stages with ncclSend / ncclRecv beside the
 * persistent GEMM, which leaves TPG_NCCL_FREE_SMS SMs to NCCL's kernels: all-gather receives stage s's shard while the GEMM
 * computes earlier stages (each stage's tiles wait for its shard); reduce-scatter sends stage s's partial block
 * once all its tiles are written, and stage s + 1's tiles wait for the partial received. No IPC, no barriers
 * (every buffer a transfer writes is the receiving rank's own, ordered by its stream). An all-gather shard moves
 * in the op's copy pieces (tpg_op_set_copy_chunks: each piece a message, so every rank must make the same change
 * before the same call), a reduce-scatter partial in up to 4 row bands, each sent once its tiles wrote it. Not
 * available: the barriers beside the GEMM (TPG_ERR_UNSUPPORTED); pull_partials and copy_engine_partials configs run as
 * their push twins (NCCL moves every partial); share_devices does not split the SMs
 * (nothing compares bus ids across nodes) and tpg_ctx_device is -1 for the other ranks. The calls of all ops
 * of one context must be ordered (one stream, or events): their transfers share the context's communicator.
 * A peer that never arrives: the device's waits time out as on the peer transport, and since NCCL's own
 * receive never does, the op's waits then abort the communicator (a second after the timeout) and return
 * TPG_ERR_TIMEOUT; the context is unusable afterwards (TPG_ERR_NCCL): destroy it. So does a rank that received an
 * incomplete partial (its sender gave up) and then waits for good for a transfer of that stopped sender. Graphs that
 * captured calls of its ops may outlive the context: NCCL frees the communicator once they are destroyed (its destroy
 * waits for them, on a thread of the library's after a capture, so tpg_ctx_destroy returns). Do not run a
 * framework's collectives beside a call on another stream: they compete for the SMs the GEMM leaves NCCL, and ranks
 * can then wait on each other until the timeout.
 * tpg_rank_config gained `transport` after share_devices: callers built against an older header
 * must be rebuilt (TPG_RANK_CONFIG_INIT zeroes it). */
tpg_status tpg_ctx_create_rank(const tpg_rank_config *cfg, tpg_ctx **out);
/* The local rank of a multi-process context, or -1 for a single-process context (all ranks local) and for NULL
 * (these three queries set no error: a NULL handle is told apart by tpg_ctx_tp's 0). */
int tpg_ctx_rank(const tpg_ctx *ctx);

/* Destroys the context. Ops created on it must be destroyed first: while any is alive this returns
 * TPG_ERR_INVALID_ARGUMENT and frees nothing. NULL is a no-op. Over NCCL after a captured call, where no thread can
 * start to destroy the communicator (pthread_create failed), it is left alive - a leak, not a wait for the caller's
 * graphs - and the calling thread's tpg_last_error(NULL) says so; the context is freed and TPG_OK returned all the
 * same. */
tpg_status tpg_ctx_destroy(tpg_ctx *ctx);
/* Number of ranks (0 for NULL) and the CUDA ordinal of rank r (in this process's numbering; -1 for NULL or a rank
 * out of range). */
int tpg_ctx_tp(const tpg_ctx *ctx);
int tpg_ctx_device(const tpg_ctx *ctx, int rank);

/* ---- Operation ----------------------------------------------------------------------------- */

typedef struct tpg_op_desc {
    int config;                 /* index from tpg_config_find */
    int64_t m, n, k, l;         /* global problem; l = batch count (>= 1) */
    float alpha, beta;          /* beta = 0: C is not read; alpha = 0 still computes A . B^T (unlike BLAS): with
                                   f16 sums (kernels[].acc f16) an overflowed sum makes D NaN, so skip such a call */
} tpg_op_desc;

/* Per-device tensors. Shapes are the device's shards (see tpg_op_shard_shape). Row-major, packed
 * (leading dimension = columns), batches packed. c may be NULL when beta == 0. */
typedef struct tpg_tensors {
    const void *a, *b, *c;
    void *d;
    const float *scale_a, *scale_b; /* fp8 only (else TPG_ERR_INVALID_ARGUMENT): device floats multiplying alpha;
                                       NULL = 1; the same values on every rank (tpg_op_set_scalars says why) */
} tpg_tensors;

typedef struct tpg_shard_shape {
    int64_t a_rows, a_cols;     /* A shard: rows x K-extent (per batch) */
    int64_t b_rows, b_cols;     /* B shard (N x K storage) */
    int64_t d_rows, d_cols;     /* D shard (and C) */
    int64_t d_row0, d_col0;     /* where the D shard of this rank sits in the global D */
    int64_t a_row0, a_col0, b_row0, b_col0; /* where the A / B shards sit in the global A / B */
} tpg_shard_shape;

/* Validates the problem against the config's schedule and kernel (divisibility, alignment, tp
 * matching the context), allocates the receive slots and flags on every local device.
 * TPG_ERR_SHAPE names the dimension and the divisor it needs. A config with copy-engine partials whose local ranks
 * share a GPU needs CUDA_DEVICE_MAX_CONNECTIONS >= 32 in the environment (TPG_ERR_UNSUPPORTED otherwise; for a
 * one-hop walk, which has no copy chains, only when tpg_op_set_rs_ring turns the ring on). The variable is read
 * when the op is created: it must have been set before CUDA started, which is when CUDA read it.
 * Multi-process: collective; every rank passes the same config, m, n, k, l (else TPG_ERR_BOOTSTRAP). */
tpg_status tpg_op_create(tpg_ctx *ctx, const tpg_op_desc *desc, tpg_op **out);
/* Waits for the op's last run on the local devices and frees it. Multi-process: collective (no rank
 * frees its buffer while a peer may still map it). NULL is a no-op. The op is gone whatever the status; over NCCL,
 * where a launch still runs when the bounded wait ends (10 s after the communicator's abort), its memory is left
 * allocated, never freed under a running kernel, and TPG_ERR_NCCL says so: destroy the context then. So is it where
 * the collective agreement fails (a failed allgather, calls out of step) over the peer transport: a peer may still map
 * it (over NCCL none does: freed). A tpg_op_create that fails that way leaves the same and says so. */
tpg_status tpg_op_destroy(tpg_op *op);
/* Shard shapes of rank r (pure arithmetic; valid after tpg_op_create). */
tpg_status tpg_op_shard_shape(const tpg_op *op, int rank, tpg_shard_shape *out);
/* Sets rank r's tensors: 16-byte aligned (fp8 scale_a / scale_b 4-byte; else TPG_ERR_ALIGNMENT), and device
 * memory of rank r's own device (memory of another GPU is refused, TPG_ERR_INVALID_ARGUMENT, and so is pageable
 * host memory where the device cannot address it; pinned host and managed memory pass). Sizes are not checked: each
 * allocation must hold its tpg_op_shard_shape. With ranks of one process on several GPUs, the gathered all-gather
 * walk (few rows a stage), where its GEMM pulls the shards (its default: not with copies in pieces, the barriers
 * beside the GEMM or tpg_op_set_gather_copy_engine), has each GEMM load its peers' A shards itself: a shard in pool
 * (cudaMallocAsync) or cuMemCreate memory (PyTorch's expandable segments) that the peers' GPUs were not granted
 * access to is refused (TPG_ERR_INVALID_ARGUMENT, when the graphs are built); cudaMalloc memory is always readable.
 * The first time after all ranks are set,
 * builds and instantiates each device's CUDA graph; later calls update the executable graphs in place (a device
 * whose peer-copy source changed gets its graph rebuilt, after the op's last launch there has finished). A call
 * whose arguments are rejected changes nothing; one that fails later (building or updating the graphs) drops
 * them: tpg_op_run returns TPG_ERR_NOT_READY until a call succeeds.
 * Multi-process: collective, r = the local rank; the A or B shard that peers copy from (all-gather
 * schedules) is exported as (IPC handle of its cudaMalloc allocation, offset) and opened by the peers;
 * after a failed call every rank must set its tensors again, and keep both its previous and its rejected A and B
 * allocated until a call succeeds or the op is destroyed: some peers may still map the one, some the other. */
tpg_status tpg_op_set_tensors(tpg_op *op, int rank, const tpg_tensors *t);
/* Changes alpha / beta; updates the executable graphs. beta != 0 needs every local rank's C (tensors set with c =
 * NULL: TPG_ERR_INVALID_ARGUMENT, nothing changed). A call that fails later keeps the op's previous alpha / beta.
 * Multi-process: this rank's only, and nothing compares ranks: alpha (and fp8's scale_a / scale_b) must be the same on
 * every rank for a call, or D is not alpha·A·Bᵀ (a reduce-scatter adds every rank's alpha-scaled partial; an
 * all-gather scales the peers' shards by this rank's scale_a). */
tpg_status tpg_op_set_scalars(tpg_op *op, float alpha, float beta);
/* All-gather ops: cut each shard's copy into `chunks` pieces (1..32; equal pieces rounded up to whole tiles
 * of the rotating operand's rows, so possibly fewer than asked), each announced by its own flag: a tile waits only
 * for the piece that holds its rows, so tiles start while later pieces are in flight. The default is the
 * config's `copy_chunks` (schedules.yaml, usually 1). Rebuilds the local ranks' graphs after their last
 * launches when the cut changes. Ranks may differ (a rank's cut concerns its own copies and flags only), except
 * over the NCCL transport, where each piece is a message: there the call is collective, every rank passes the same
 * chunks (else TPG_ERR_INVALID_ARGUMENT on every rank, nothing changed), and every rank's rebuild holds or none does.
 * TPG_ERR_INVALID_ARGUMENT outside 1..32, or for chunks > 1 on an op that copies nothing
 * (reduce-scatter, TP = 1). */
tpg_status tpg_op_set_copy_chunks(tpg_op *op, int chunks);
/* All-gather ops whose walk is gathered (few rows a stage: `tpgemm --dry-run` prints "walk order gathered"): by
 * default their GEMM copies every shard into its slot itself, each CTA pulling its share of all shards at the start
 * of the call (no copy or flag nodes in the graph). enable != 0 brings the shards by copy-engine nodes instead, one
 * copy and one flag per peer plus a copy of the own shard, as every other all-gather does. Copies in pieces
 * (tpg_op_set_copy_chunks > 1) and the barriers beside the GEMM (tpg_op_set_overlap_barriers) also mean copy-engine
 * nodes: the pulls need whole shards and the start barrier before the GEMM. Rebuilds the local ranks' graphs after
 * their last launches when the mode changes. Ranks may differ. Other ops' shards, if any, come by copy engine either
 * way: for them the call only records the choice. */
tpg_status tpg_op_set_gather_copy_engine(tpg_op *op, int enable);
/* Reduce-scatter ops whose walk is one-hop (few rows a stage: `tpgemm --dry-run` prints "walk order one-hop"): by
 * default each rank runs one GEMM of all M rows into its own buffer, and then a REDUCE kernel sums its block of every
 * rank's partial, read over NVLink. enable != 0 keeps the ring instead (stage after stage, each partial pushed to the
 * next rank), as every other reduce-scatter does. Every rank must choose alike before the same call (a rank's REDUCE
 * reads what the others' GEMMs wrote). Rebuilds the local ranks' graphs after their last launches when the walk
 * changes. Other ops run their ring either way: for them the call only records the choice. Multi-process: collective
 * (every rank calls it, with the same choice: else TPG_ERR_INVALID_ARGUMENT on every rank, and nothing changes);
 * when a rank's rebuild fails, every rank goes back to the walk it had and reports the failure. The ring of a config
 * with copy-engine partials on local ranks that share a GPU needs CUDA_DEVICE_MAX_CONNECTIONS (tpg_op_create). */
tpg_status tpg_op_set_rs_ring(tpg_op *op, int enable);
/* Opt-in programmatic dependent launch (PDL) for TP = 1 ops (one GEMM kernel, no communication):
 * enable != 0 makes tpg_op_run launch that kernel directly with programmatic stream serialization, so
 * it may start while the stream's previous kernel finishes and waits on the device until that
 * kernel's writes are visible (griddepcontrol.wait). Off by default: on H200, back to back calls of the
 * same GEMM ran 1.2-1.5x faster with it where a call takes under ~20 us (at most 32 tiles), but
 * 0.85-0.96x from ~24 us up and 1-2% slower on the big GEMMs (docs/perf_notes/2026-12-03-e.md); between
 * other kernels that do not trigger it early, it gains nothing. No effect at TP > 1 (those ops always
 * launch their CUDA graphs). */
tpg_status tpg_op_set_pdl(tpg_op *op, int enable);
/* Opt-in (TP >= 2): enable != 0 lets the GEMM start without waiting for the start barrier, and an all-gather
 * op's closing barrier wait for the shard copies only, not for the GEMM (reduce-scatter's still follows the
 * GEMM: its pushes land in the peers' slots). The start barrier then runs beside the GEMM, on an SM one of the
 * GEMM's CTAs also holds, and the GEMM counts its epoch on from its own previous launch's (a word on the
 * device: nothing is written per launch by the host). Saves the start barrier's cross-GPU round
 * trip before the first tile, and lets a faster GPU start its next all-gather call while a slower one
 * finishes (docs/PERF_NOTES.md, 2026-12-01 20:24Z). Rebuilds the local ranks' graphs after their last
 * launches. TPG_ERR_INVALID_ARGUMENT for a TP = 1 op (no barriers), for a kernel in clusters (a barrier
 * kernel does not get an SM beside a cluster launch, so a start barrier queued behind such a GEMM could
 * never admit the copies it waits for), and when the two kernels' registers, shared memory or threads do
 * not fit one SM together (the message gives the numbers); a failed call leaves the op in its previous mode. Ranks
 * may differ, and may switch between calls. */
tpg_status tpg_op_set_overlap_barriers(tpg_op *op, int enable);
/* Launches every local device's graph on its stream (streams[r] for rank r, or, when streams is NULL, the
 * context's stream of each rank, which every op of the context shares: their calls then run one after another;
 * multi-process: only streams[local rank] is read). Asynchronous.
 * CUDA graph capture (a framework's graphs): on a stream that is being captured nothing runs; the device's
 * graph is added to the capture as a child graph node, a copy of the op as it is then (tensors, scalars,
 * modes). Each launch of the caller's graph is one call of the op. Every epoch comes from the device, so
 * captured and direct calls mix in any order, provided the calls of one op on a device are ordered (one stream,
 * or events) and every rank makes every call; every local rank's stream of a call is captured or none is
 * (tpg_op_run: TPG_ERR_INVALID_ARGUMENT for a mix; with tpg_op_run_rank, which sees one rank, the caller's
 * duty). A stream of another device than its rank's: TPG_ERR_INVALID_ARGUMENT naming both, before any launch.
 * Ranks on one device (share_devices) must run a call at once, each rank's start barrier waiting for the others: one
 * stream for two of them, or the legacy default stream (0) beside a stream it holds back (the per-thread default
 * stream, a blocking stream), would run their graphs one after the other until the timeout, so tpg_op_run refuses
 * it (TPG_ERR_INVALID_ARGUMENT, before any launch); with tpg_op_run_rank the caller gives each rank its own stream.
 * The op keeps no stream: it records an event of its own after each launch and its waits wait for that, so a stream
 * may be destroyed once the call is enqueued.
 * Launch a captured call only while the op and the tensors it was captured with exist; after
 * tpg_op_set_tensors / tpg_op_set_scalars, capture again. The op's own waits (tpg_op_sync, tpg_op_destroy, the
 * rebuilds of set_tensors / set_copy_chunks / set_overlap_barriers / set_gather_copy_engine / set_rs_ring) also
 * wait for the last launch of any graph a call of it was captured into (an event the op records there after its
 * node). A TP = 1 op with PDL
 * (tpg_op_set_pdl) is captured without it. Same for tpg_op_run_rank.
 * A launch that fails on a local rank after earlier local ranks launched the call leaves the ranks out of step: the
 * message says so, and every later tpg_op_run / tpg_op_run_rank of the op returns TPG_ERR_NOT_READY (destroy it). A
 * capture that fails part-way leaves the op in step, but the caller's graph holds the earlier ranks' nodes only: the
 * message says so; do not launch that graph. */
tpg_status tpg_op_run(tpg_op *op, struct CUstream_st *const *streams /* cudaStream_t[tp] or NULL */);
/* Launches rank r's graph only, on stream (a cudaStream_t of rank r's device, used as given: 0 is the
 * legacy default stream, as in every CUDA API, so a framework's default stream just works),
 * for hosts that launch each device's work separately (from one thread at a time: see Thread-safety).
 * Every rank must be launched once per call:
 * a rank that is not makes the others fail with TPG_ERR_TIMEOUT after the context's timeout. */
tpg_status tpg_op_run_rank(tpg_op *op, int rank, struct CUstream_st *stream /* a cudaStream_t */);
/* Waits for the op's last launch on every local device (and the last launch of any graph a call of it was
 * captured into) and reports TPG_ERR_TIMEOUT if any device-side wait timed out. A call whose peer
 * never comes ends about one timeout after its first wait began: once one wait of a rank's launch times out, that
 * launch's other waits give up at once. A rank that was late for a call on which a peer gave up reports
 * TPG_ERR_TIMEOUT for that call too, when it gets there: the peer's closing barrier no longer held the inputs the
 * late rank read, so its output of the call is not valid.
 * It also checks that each local rank's GEMM took the start barrier's epoch and that no GEMM launch is still
 * counted in (TPG_ERR_NOT_READY if not: two calls of the op ran at once, or a launch failed).
 * After a timeout, or after any rank missed a launch, the ranks' launch epochs are out of step for good:
 * later calls of this op are undefined (the rank ahead times out, the rank behind may pass its waits on
 * stale flags and return TPG_OK with a wrong D). Destroy the op and create a new one. */
tpg_status tpg_op_sync(tpg_op *op);

#ifdef __cplusplus
}
#endif

#endif /* TPGEMM_H */
