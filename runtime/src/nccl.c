/* NCCL loaded at run time (nccl.h says why). */
#define _GNU_SOURCE /* dlopen flags, nanosleep and clock_gettime under -std=c11 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buffers.h"
#include "checks.h"
#include "fn_ptr.h"
#include "nccl.h"

/* NCCL 2.x ABI: ncclResult_t is an int enum (0 = ncclSuccess), ncclComm_t a pointer, ncclUniqueId 128 bytes
 * passed by value, ncclDataType_t an int enum (ncclUint8 = 1). */
typedef struct nccl_id {
    char internal[TPG_NCCL_ID_BYTES];
} nccl_id;
enum { NCCL_SUCCESS = 0, NCCL_UINT8 = 1, NCCL_INVALID_ARGUMENT = 4 };

/* ncclConfig_t as NCCL 2.17 declared it (NCCL_CONFIG_INITIALIZER: size, magic, version, then every attribute
 * "undefined" = INT_MIN / NULL; 40 bytes, no padding). Later releases only append fields (splitShare from 2.18, ...):
 * NCCL copies min(size, its own sizeof) bytes of a config, so the fields past ours keep their initializer's
 * "undefined", and it resets the fields newer than the config's `version` to their defaults. */
typedef struct nccl_config_v21700 {
    size_t size;
    unsigned int magic;
    unsigned int version;
    int blocking;
    int cga_cluster_size;
    int min_ctas;
    int max_ctas;
    const char *net_name;
} nccl_config_v21700;
#define NCCL_CONFIG_MAGIC 0xcafebeefu
#define NCCL_CONFIG_VERSION 21700

struct tpg_nccl {
    void *lib;
    char name[256];
    void *comm;
    int version;
    int aborted;
    int started; /* ncclGetUniqueId or an init ran: NCCL's threads (the id's root, a communicator's) may outlive us */
    int failed;  /* the first transfers failed: tpg_nccl_release aborts the communicator instead of destroying it */
    int captured; /* a call went into a caller's graph (tpg_nccl_note_capture): the destroy runs on a thread */
    int device; /* the communicator's (current at tpg_nccl_comm_init): the abort thread runs on it */
    int (*get_version)(int *);
    int (*get_unique_id)(nccl_id *);
    int (*comm_init_rank)(void **, int, nccl_id, int);
    int (*comm_init_rank_config)(void **, int, nccl_id, int, nccl_config_v21700 *); /* NULL before 2.17 */
    int (*comm_destroy)(void *);
    int (*comm_abort)(void *);
    int (*send)(const void *, size_t, int, int, void *, cudaStream_t);
    int (*recv)(void *, size_t, int, int, void *, cudaStream_t);
    int (*group_start)(void);
    int (*group_end)(void);
    const char *(*error_string)(int);
};

tpg_status tpg__nccl_error(tpg_ctx *ctx, const tpg_nccl *n, int r, const char *call) {
    tpg__set_error(ctx, "%s (%s) returned %d: %s", call, n->name, r, n->error_string ? n->error_string(r) : "?");
    return TPG_ERR_NCCL;
}

/* dlsym of `name` as a function (fn_ptr.h: never stored through a void * lvalue); the message names the symbol and
 * the library. */
static tpg_status bind(tpg_ctx *ctx, const tpg_nccl *n, const char *name, tpg_fn *fn) {
    void *p = dlsym(n->lib, name);
    if (!p) TPG_FAIL(ctx, TPG_ERR_NCCL, "NCCL library %s has no symbol %s (is it NCCL 2.x?)", n->name, name);
    *fn = tpg__fn(p);
    return TPG_OK;
}

/* bind into n->FIELD, converted to the field's own function type */
#define BIND(field, name)                                                                                        \
    do {                                                                                                         \
        tpg_fn fn_ = NULL;                                                                                       \
        TPG_CHECK(bind(ctx, n, name, &fn_));                                                                     \
        n->field = (__typeof__(n->field))fn_;                                                                    \
    } while (0)

static tpg_status bind_all(tpg_ctx *ctx, tpg_nccl *n) {
    BIND(get_version, "ncclGetVersion");
    BIND(get_unique_id, "ncclGetUniqueId");
    BIND(comm_init_rank, "ncclCommInitRank");
    BIND(comm_destroy, "ncclCommDestroy");
    BIND(comm_abort, "ncclCommAbort");
    BIND(send, "ncclSend");
    BIND(recv, "ncclRecv");
    BIND(group_start, "ncclGroupStart");
    BIND(group_end, "ncclGroupEnd");
    BIND(error_string, "ncclGetErrorString");
    TPG_CHECK_NCCL(ctx, n, n->get_version(&n->version));
    if (n->version < 20906) /* graph capture of send / recv: before 2.9.6 a captured graph may hang when replayed */
        TPG_FAIL(ctx, TPG_ERR_NCCL, "NCCL library %s is version %d; the NCCL transport needs 2.9.6 or newer (its "
                 "sends and receives are captured into graphs)", n->name, n->version);
    void *config = n->version >= NCCL_CONFIG_VERSION ? dlsym(n->lib, "ncclCommInitRankConfig") : NULL;
    if (config) /* optional: without it NCCL's CTA count is not capped (nccl.h) */
        n->comm_init_rank_config = (__typeof__(n->comm_init_rank_config))tpg__fn(config);
    return TPG_OK;
}

tpg_status tpg_nccl_load(tpg_ctx *ctx, tpg_nccl **out) {
    *out = NULL;
    tpg_nccl *n = calloc(1, sizeof *n);
    if (!n) TPG_FAIL(ctx, TPG_ERR_OUT_OF_MEMORY, "NCCL transport: host allocation failed");
    const char *env = getenv("TPG_NCCL_LIBRARY");
    snprintf(n->name, sizeof n->name, "%s", env && *env ? env : "libnccl.so.2");
    n->lib = dlopen(n->name, RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        const char *why = dlerror();
        tpg__set_error(ctx, "the NCCL transport could not load %s (%s); install NCCL 2.9.6+ or point TPG_NCCL_LIBRARY "
                       "at its libnccl.so.2 (e.g. PyTorch's nvidia/nccl/lib/libnccl.so.2)", n->name, why ? why : "?");
        free(n);
        return TPG_ERR_NCCL;
    }
    const tpg_status st = bind_all(ctx, n);
    if (st != TPG_OK) {
        tpg_nccl_release(n);
        return st;
    }
    *out = n;
    return TPG_OK;
}

tpg_status tpg_nccl_unique_id(tpg_ctx *ctx, tpg_nccl *n, unsigned char id[TPG_NCCL_ID_BYTES]) {
    nccl_id u;
    n->started = 1;
    TPG_CHECK_NCCL(ctx, n, n->get_unique_id(&u));
    memcpy(id, u.internal, TPG_NCCL_ID_BYTES);
    return TPG_OK;
}

/* An NCCL integer setting as NCCL reads it (tpg_nccl_setting: the environment, else NCCL's config files; strtoll,
 * base 0: "0x10" is 16, "false" is 0): 1 and its value, text and source in *s where it is set (non-empty) and reads
 * without a range error, else 0 (NCCL keeps its default then). */
typedef struct nccl_var {
    long long v;
    char text[256];
    char where[1100];
} nccl_var;
static int nccl_env(const char *name, nccl_var *s) {
    if (!tpg_nccl_setting(name, s->text, sizeof s->text, s->where, sizeof s->where) || !s->text[0]) return 0;
    errno = 0;
    s->v = strtoll(s->text, NULL, 0);
    return errno == 0;
}

/* The setting NCCL reads of a name and its older alias (NCCL_MIN_NCHANNELS before NCCL_MIN_NRINGS): its name, or
 * NULL where neither is set; *s its value. */
static const char *nccl_env_of(const char *name, const char *alias, nccl_var *s) {
    return nccl_env(name, s) ? name : nccl_env(alias, s) ? alias : NULL;
}

static tpg_status too_many_channels(tpg_ctx *ctx, const char *name, const nccl_var *s) {
    TPG_FAIL(ctx, TPG_ERR_NCCL, "%s=%s in %s would run NCCL's sends and receives on more CTAs than the %d SMs the "
             "persistent GEMM leaves free (TPG_NCCL_FREE_SMS); unset it or set at most %d", name, s->text, s->where,
             TPG_NCCL_FREE_SMS, TPG_NCCL_FREE_SMS);
}

/* What the settings may not ask for: more channels (a CTA each) than the SMs the GEMM leaves free, or clusters. */
static tpg_status check_channels_and_clusters(tpg_ctx *ctx, const tpg_nccl *n) {
    nccl_var s;
    if (nccl_env("NCCL_MIN_P2P_NCHANNELS", &s) && s.v > TPG_NCCL_FREE_SMS)
        return too_many_channels(ctx, "NCCL_MIN_P2P_NCHANNELS", &s);
    const char *min = nccl_env_of("NCCL_MIN_NCHANNELS", "NCCL_MIN_NRINGS", &s);
    if (min && s.v > TPG_NCCL_FREE_SMS) return too_many_channels(ctx, min, &s);
    if (n->version >= 21600 && nccl_env("NCCL_CGA_CLUSTER_SIZE", &s) && s.v > 1) /* the variable came with 2.16 */
        TPG_FAIL(ctx, TPG_ERR_NCCL, "NCCL_CGA_CLUSTER_SIZE=%s in %s would launch NCCL's kernels in clusters, which "
                 "need that many free SMs of one GPC at once beside the persistent GEMM; unset it or set 0", s.text,
                 s.where);
    if (n->comm_init_rank_config) return TPG_OK;
    /* before 2.17 no config caps NCCL's channels (nor, in 2.16, its clusters): the settings must */
    const int capped = nccl_env_of("NCCL_MAX_NCHANNELS", "NCCL_MAX_NRINGS", &s) && s.v <= TPG_NCCL_FREE_SMS;
    const int unclustered = n->version < 21600 || (nccl_env("NCCL_CGA_CLUSTER_SIZE", &s) && s.v <= 1);
    if (!capped || !unclustered)
        TPG_FAIL(ctx, TPG_ERR_NCCL, "NCCL %d (%s) has no communicator config (2.17 added it) to keep its kernels "
                 "within the %d SMs the persistent GEMM leaves free: set NCCL_MAX_NCHANNELS=%d%s in the environment, "
                 "or use NCCL 2.17 or newer", n->version, n->name, TPG_NCCL_FREE_SMS, TPG_NCCL_FREE_SMS,
                 n->version >= 21600 ? " and NCCL_CGA_CLUSTER_SIZE=0" : "");
    return TPG_OK;
}

tpg_status tpg_nccl_env_check(tpg_ctx *ctx, const tpg_nccl *n) {
    nccl_var max_ctas, s;
    const int has_max = nccl_env("NCCL_MAX_CTAS", &max_ctas);
    /* more CTAs than the SMs the persistent GEMM leaves free would queue GEMM CTAs behind NCCL's kernels */
    if (has_max && max_ctas.v > TPG_NCCL_FREE_SMS)
        TPG_FAIL(ctx, TPG_ERR_NCCL, "NCCL_MAX_CTAS=%s in %s is above the %d SMs the persistent GEMM leaves free for "
                 "NCCL (TPG_NCCL_FREE_SMS); unset it or set at most %d", max_ctas.text, max_ctas.where,
                 TPG_NCCL_FREE_SMS, TPG_NCCL_FREE_SMS);
    TPG_CHECK(check_channels_and_clusters(ctx, n));
    if (nccl_env("NCCL_COMM_BLOCKING", &s) && s.v == 0)
        TPG_FAIL(ctx, TPG_ERR_NCCL, "NCCL_COMM_BLOCKING=%s in %s makes the communicator non-blocking, which the "
                 "transport does not drive (its NCCL calls must complete before they return); unset it", s.text,
                 s.where);
    /* the cap: the config's maxCTAs, which an NCCL_MAX_CTAS setting overrides (as NCCL documents) */
    const int by_env = has_max && max_ctas.v > 0;
    const long long cap = by_env ? max_ctas.v : TPG_NCCL_FREE_SMS;
    if (n->comm_init_rank_config && nccl_env("NCCL_MIN_CTAS", &s) && s.v > cap)
        TPG_FAIL(ctx, TPG_ERR_NCCL, "NCCL_MIN_CTAS=%s in %s is above NCCL's CTA cap, %lld (%s), which NCCL refuses; "
                 "unset it or set at most %lld", s.text, s.where, cap, by_env ?
                 "NCCL_MAX_CTAS" : "the SMs the persistent GEMM leaves free, TPG_NCCL_FREE_SMS", cap);
    return TPG_OK;
}

tpg_status tpg_nccl_comm_init(tpg_ctx *ctx, tpg_nccl *n, int tp, int rank, const unsigned char id[TPG_NCCL_ID_BYTES]) {
    nccl_id u;
    memcpy(u.internal, id, TPG_NCCL_ID_BYTES);
    n->started = 1;
    if (cudaGetDevice(&n->device) != cudaSuccess) { /* NCCL's own init then says what is wrong with the device */
        (void)cudaGetLastError();
        n->device = -1;
    }
    if (!n->comm_init_rank_config) {
        TPG_CHECK_NCCL(ctx, n, n->comm_init_rank(&n->comm, tp, u, rank));
        return TPG_OK;
    }
    /* NCCL's kernels get at most the SMs the persistent GEMM leaves free (NCCL_MAX_CTAS in the environment
     * still overrides, as NCCL documents), and no clusters: left undefined, NCCL launches a kernel of 4 or 8 CTAs (a
     * peer over NVLink gets 4-8 channels) in clusters of 4 on sm_90, which need 4 free SMs of one GPC at once - the
     * persistent GEMM's CTAs leave 8 SMs free wherever the hardware placed them, and the GEMM waits for NCCL (a
     * review, 2026-12-05; a peer over loopback or a network gets 2 channels: no cluster, as in every run so far) */
    nccl_config_v21700 cfg = {sizeof cfg, NCCL_CONFIG_MAGIC, NCCL_CONFIG_VERSION, INT_MIN, 0, INT_MIN,
                              TPG_NCCL_FREE_SMS, NULL};
    const int r = n->comm_init_rank_config(&n->comm, tp, u, rank, &cfg);
    if (r == NCCL_INVALID_ARGUMENT) { /* the one config value an environment can contradict */
        tpg__set_error(ctx, "ncclCommInitRankConfig (%s) returned %d: %s; the transport caps NCCL at %d CTAs "
                       "(maxCTAs): an NCCL_MIN_CTAS above that in the environment is refused by some NCCL versions",
                       n->name, r, n->error_string ? n->error_string(r) : "?", TPG_NCCL_FREE_SMS);
        return TPG_ERR_NCCL;
    }
    if (r != NCCL_SUCCESS) return tpg__nccl_error(ctx, n, r, "ncclCommInitRankConfig");
    return TPG_OK;
}

double tpg_nccl_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The first transfers wait for every peer's, and NCCL bounds neither: a peer that died after the agreement to
 * connect would hold this rank here for good. So the wait polls, for the context's timeout but at least
 * TPG_NCCL_CONNECT_MIN_S (a first connection may set up transports for seconds), then aborts the communicator. */
static tpg_status connect_wait(tpg_ctx *ctx, tpg_nccl *n, int rank, cudaStream_t s, uint64_t timeout_ns) {
    const double bound = (double)timeout_ns * 1e-9 > TPG_NCCL_CONNECT_MIN_S ? (double)timeout_ns * 1e-9
                                                                           : TPG_NCCL_CONNECT_MIN_S;
    const struct timespec pause = {0, 200000}; /* 0.2 ms */
    const double start = tpg_nccl_now_s();
    cudaError_t e;
    while ((e = cudaStreamQuery(s)) == cudaErrorNotReady) {
        if (tpg_nccl_now_s() - start > bound) {
            (void)tpg_nccl_abort(ctx, n);
            TPG_FAIL(ctx, TPG_ERR_TIMEOUT, "rank %d: the first NCCL transfers to and from the peers did not end "
                     "within %.0f s (did a peer fail or die inside ncclCommInitRank or its first transfers?); the "
                     "communicator was aborted", rank, bound);
        }
        nanosleep(&pause, NULL);
    }
    TPG_CHECK_CUDA(ctx, e);
    return TPG_OK;
}

/* After an abort: whether NCCL's kernels on s have returned within TPG_NCCL_ABORT_DRAIN_S (they poll the abort). */
static int drained(cudaStream_t s) {
    const struct timespec pause = {0, 1000000}; /* 1 ms */
    const double start = tpg_nccl_now_s();
    cudaError_t e;
    while ((e = cudaStreamQuery(s)) == cudaErrorNotReady && tpg_nccl_now_s() - start < TPG_NCCL_ABORT_DRAIN_S)
        nanosleep(&pause, NULL);
    if (e != cudaSuccess) (void)cudaGetLastError();
    return e != cudaErrorNotReady;
}

static tpg_status connect_group(tpg_ctx *ctx, tpg_nccl *n, int tp, int rank, unsigned char *buf, cudaStream_t s,
                                uint64_t timeout_ns) {
    TPG_CHECK_NCCL(ctx, n, n->group_start());
    int r = NCCL_SUCCESS;
    for (int q = 0; q < tp && r == NCCL_SUCCESS; q++) {
        if (q == rank) continue;
        r = n->send(buf + q, 1, NCCL_UINT8, q, n->comm, s);
        if (r == NCCL_SUCCESS) r = n->recv(buf + tp + q, 1, NCCL_UINT8, q, n->comm, s);
    }
    const int end = n->group_end();
    if (r != NCCL_SUCCESS) return tpg__nccl_error(ctx, n, r, "ncclSend / ncclRecv (connecting the peers)");
    if (end != NCCL_SUCCESS) return tpg__nccl_error(ctx, n, end, "ncclGroupEnd (connecting the peers)");
    return connect_wait(ctx, n, rank, s, timeout_ns);
}

tpg_status tpg_nccl_connect_all(tpg_ctx *ctx, tpg_nccl *n, int tp, int rank, uint64_t timeout_ns,
                                tpg_status (*ready)(tpg_ctx *ctx, tpg_status local)) {
    if (tp < 2) return TPG_OK;
    unsigned char *buf = NULL;
    cudaStream_t s = NULL;
    tpg_status st = TPG_OK;
    TPG_CHECK_CUDA_GOTO(ctx, cudaMalloc((void **)&buf, 2 * (size_t)tp), agree);
    TPG_CHECK_GOTO(tpg__device_fill(ctx, buf, NULL, 2 * (size_t)tp), agree);
    TPG_CHECK_CUDA_GOTO(ctx, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), agree);
agree:
    st = ready(ctx, st);
    if (st == TPG_OK) st = connect_group(ctx, n, tp, rank, buf, s, timeout_ns);
    if (st != TPG_OK && n->comm) n->failed = 1; /* a peer's transfers may still be posted: release aborts it */
    if (n->aborted && !drained(s)) return st; /* cudaFree would wait for NCCL's kernels: leave 2 tp bytes behind */
    if (s) (void)cudaStreamDestroy(s);
    if (buf) (void)cudaFree(buf);
    (void)cudaGetLastError(); /* an ignored failure above stays out of the caller's next cudaGetLastError */
    return st;
}

tpg_status tpg_nccl_exchange(tpg_ctx *ctx, tpg_nccl *n, const tpg_nccl_msg *msgs, int count, cudaStream_t s) {
    if (n->aborted)
        TPG_FAIL(ctx, TPG_ERR_NCCL, "the context's NCCL communicator was aborted after a timeout; destroy the context "
                 "and create a new one");
    TPG_CHECK_NCCL(ctx, n, n->group_start());
    int r = NCCL_SUCCESS, i = 0;
    for (; i < count && r == NCCL_SUCCESS; i++) {
        const tpg_nccl_msg *m = &msgs[i];
        if (m->peer < 0) continue;
        r = m->send ? n->send(m->buf, m->bytes, NCCL_UINT8, m->peer, n->comm, s)
                    : n->recv(m->buf, m->bytes, NCCL_UINT8, m->peer, n->comm, s);
    }
    const int end = n->group_end(); /* always closes the group, also after a failed call inside it */
    if (r != NCCL_SUCCESS) return tpg__nccl_error(ctx, n, r, msgs[i - 1].send ? "ncclSend" : "ncclRecv");
    if (end != NCCL_SUCCESS) return tpg__nccl_error(ctx, n, end, "ncclGroupEnd");
    return TPG_OK;
}

typedef struct comm_job {
    int (*end)(void *); /* ncclCommAbort or ncclCommDestroy */
    void *comm;
    int device; /* the communicator's: a new thread's current device is 0, another rank's GPU maybe */
} comm_job;

static void *comm_job_thread(void *arg) {
    comm_job *j = arg;
    if (j->device >= 0 && cudaSetDevice(j->device) != cudaSuccess) (void)cudaGetLastError(); /* end it anyway */
    (void)j->end(j->comm);
    free(j);
    return NULL;
}

/* end(n->comm) on a detached thread: ncclCommAbort's and ncclCommDestroy's reclaim waits until every CUDA graph
 * holding a captured NCCL plan of the communicator is destroyed (its persistent-plan references) - the op's own
 * graphs, or a caller's that captured a call and may outlive the context. The thread ends when they are gone; the
 * library then stays loaded for good (tpg_nccl_release: n->started), since that thread may still run inside it. A
 * process that exits right after destroying the last such graph may end while that thread still tears NCCL down.
 * Returns a status for messages (TPG_OK, or why no thread could start). */
static tpg_status end_detached(tpg_ctx *ctx, tpg_nccl *n, int (*end)(void *), const char *what) {
    comm_job *j = malloc(sizeof *j);
    if (!j) TPG_FAIL(ctx, TPG_ERR_OUT_OF_MEMORY, "%s the NCCL communicator: host allocation failed", what);
    *j = (comm_job){end, n->comm, n->device};
    pthread_t t;
    const int e = pthread_create(&t, NULL, comm_job_thread, j);
    if (e != 0) {
        free(j);
        TPG_FAIL(ctx, TPG_ERR_NCCL, "%s the NCCL communicator: pthread_create failed (%d)", what, e);
    }
    pthread_detach(t);
    return TPG_OK;
}

/* ncclCommAbort raises the abort flags that NCCL's kernels poll first, then reclaims the communicator: on a
 * detached thread (end_detached), so the flags are up at once and the caller does not wait for its graphs. */
tpg_status tpg_nccl_abort(tpg_ctx *ctx, tpg_nccl *n) {
    if (n->aborted || !n->comm) return TPG_OK;
    TPG_CHECK(end_detached(ctx, n, n->comm_abort, "aborting"));
    n->aborted = 1;
    n->comm = NULL; /* the abort releases it */
    return TPG_OK;
}

void tpg_nccl_note_capture(tpg_nccl *n) {
    if (n) n->captured = 1;
}

int tpg_nccl_aborted(const tpg_nccl *n) { return n && n->aborted; }

void tpg_nccl_version(const tpg_nccl *n, char *buf, size_t size) {
    const int v = n ? n->version : 0;
    snprintf(buf, size, "NCCL %d.%d.%d", v / 10000, v / 100 % 100, v % 100);
}

void tpg_nccl_release(tpg_nccl *n) {
    if (!n) return;
    /* after a failed connect NCCL's advice is the abort: a destroy may wait for transfers no peer will match (no
     * graph holds a plan of the communicator yet, so the abort's reclaim does not wait either) */
    if (n->comm && n->failed && n->comm_abort) (void)n->comm_abort(n->comm);
    /* a caller's graph that captured a call may outlive the context, and NCCL's destroy waits for it: on a thread.
     * If none starts, the communicator is left alive (a leak) rather than the caller blocked for good. */
    else if (n->comm && n->comm_destroy && n->captured) (void)end_detached(NULL, n, n->comm_destroy, "destroying");
    else if (n->comm && n->comm_destroy) (void)n->comm_destroy(n->comm);
    /* not once NCCL may have threads of its own: an abort's, the unique id's root (it waits for ranks that a failed
     * creation never sent to NCCL), a communicator's proxies; the library stays loaded then */
    if (n->lib && !n->started) dlclose(n->lib);
    free(n);
}
