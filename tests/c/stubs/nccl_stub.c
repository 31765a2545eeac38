/* A stand-in libnccl.so.2 for tests/c/test_nccl_loader.c (no GPU, no NCCL): the NCCL 2.x entry points the runtime
 * binds (runtime/src/nccl.c), with the same C signatures, recording what they were called with in a text log that
 * the test reads through stub_log(). ncclCommAbort blocks STUB_ABORT_MS (a reclaim waiting for graphs, as NCCL's
 * does) so that the test sees whether the runtime waits for it, ncclCommDestroy as long as stub_hold_destroy
 * says. Built in variants: -DSTUB_VERSION=<code> sets what
 * ncclGetVersion reports, -DSTUB_NO_SEND leaves ncclSend out (a library that is not NCCL 2.x). ncclCommInitRankConfig
 * reads its config as NCCL 2.17 laid it out (NCCL itself checks magic and version and copies `size` bytes). */
#define _POSIX_C_SOURCE 199309L
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#ifndef STUB_VERSION
#define STUB_VERSION 22809
#endif
#define STUB_ABORT_MS 1500

typedef struct stub_id {
    char internal[128];
} stub_id;

static char g_log[8192];
static int g_comm_token = 42;

/* Appends a log line: fmt takes up to three %ld. */
static void note(const char *fmt, long a, long b, long c) {
    char line[128];
    snprintf(line, sizeof line, fmt, a, b, c);
    strncat(g_log, line, sizeof g_log - strlen(g_log) - 1);
}

const char *stub_log(void) { return g_log; }

int ncclGetVersion(int *v) { *v = STUB_VERSION; return 0; }
int ncclGetUniqueId(stub_id *id) { memset(id->internal, 0x5a, sizeof id->internal); return 0; }
int ncclCommInitRank(void **comm, int n, stub_id id, int rank) {
    note("init n=%ld rank=%ld id0=%ld\n", n, rank, (unsigned char)id.internal[0]);
    *comm = &g_comm_token;
    return 0;
}
typedef struct stub_config { /* NCCL 2.17's fields; a later NCCL reads more only as far as `size` says */
    size_t size;
    unsigned int magic, version;
    int blocking, cga_cluster_size, min_ctas, max_ctas;
    const char *net_name;
} stub_config;
int ncclCommInitRankConfig(void **comm, int n, stub_id id, int rank, stub_config *c) {
    note("init_config n=%ld rank=%ld id0=%ld", n, rank, (unsigned char)id.internal[0]);
    note(" size=%ld magic=%lx version=%ld", (long)c->size, (long)c->magic, (long)c->version);
    note(" max_ctas=%ld cga=%ld min_ctas_undef=%ld", c->max_ctas, c->cga_cluster_size, c->min_ctas == (-2147483647 - 1));
    note(" rest_undef=%ld\n", c->blocking == c->min_ctas && c->net_name == NULL, 0, 0);
    *comm = &g_comm_token;
    return c->magic == 0xcafebeefu && n != 3 ? 0 : 4; /* n = 3: an NCCL that refuses the config */
}
/* The test sets how long ncclCommDestroy blocks: NCCL's (2.26 on) waits for every graph holding one of its plans. */
static int g_destroy_ms;
void stub_hold_destroy(int ms) { g_destroy_ms = ms; }
int ncclCommDestroy(void *comm) {
    const struct timespec t = {g_destroy_ms / 1000, (g_destroy_ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
    note("destroy ok=%ld\n", comm == &g_comm_token, 0, 0);
    return 0;
}
int ncclCommAbort(void *comm) {
    const struct timespec t = {STUB_ABORT_MS / 1000, (STUB_ABORT_MS % 1000) * 1000000L};
    nanosleep(&t, NULL);
    note("abort ok=%ld\n", comm == &g_comm_token, 0, 0);
    return 0;
}
#ifndef STUB_NO_SEND
int ncclSend(const void *buf, size_t count, int type, int peer, void *comm, void *stream) {
    (void)buf, (void)stream, (void)comm;
    note("send peer=%ld bytes=%ld type=%ld\n", peer, (long)count, type);
    return peer == 99 ? 4 /* ncclInvalidArgument */ : 0;
}
#endif
int ncclRecv(void *buf, size_t count, int type, int peer, void *comm, void *stream) {
    (void)buf, (void)stream, (void)comm;
    note("recv peer=%ld bytes=%ld type=%ld\n", peer, (long)count, type);
    return 0;
}
int ncclGroupStart(void) { note("group{\n", 0, 0, 0); return 0; }
int ncclGroupEnd(void) { note("}group\n", 0, 0, 0); return 0; }
const char *ncclGetErrorString(int r) { return r == 4 ? "invalid argument (stub)" : "stub error"; }
