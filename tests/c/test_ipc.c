/* Multi-process pieces that need no device: IPC reference packing, the IPC cache lookup, the
 * bootstrap wire checks (through a fake all-gather that plays the other rank), local-rank iteration
 * and tpg_ctx_create_rank's argument errors (which return before any CUDA call). */
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "ctx_internal.h"
#include "tpg_test.h"

TPG_TEST(ref_packs_handle_and_offset) {
    unsigned char h[TPG_IPC_HANDLE_BYTES];
    for (int i = 0; i < TPG_IPC_HANDLE_BYTES; i++) h[i] = (unsigned char)(i * 7 + 1);
    tpg_ipc_ref r;
    tpg_ipc_ref_make(&r, h, 0x7f0000200000u, 0x7f0000200000u + 4096 * 3 + 256);
    TPG_EXPECT(memcmp(r.handle, h, sizeof h) == 0);
    TPG_EXPECT(r.offset == 4096 * 3 + 256);
    TPG_EXPECT(r.present == 1);
    tpg_ipc_ref_make(&r, h, 0x1000, 0x1000);
    TPG_EXPECT(r.offset == 0);
}

TPG_TEST(cache_finds_open_entries_by_rank_and_handle) {
    tpg_ipc_entry e[3];
    memset(e, 0, sizeof e);
    e[0].rank = 1, e[0].refs = 1, e[0].handle[0] = 'a';
    e[1].rank = 2, e[1].refs = 2, e[1].handle[0] = 'a'; /* same handle bytes, other rank */
    e[2].rank = 1, e[2].refs = 0, e[2].handle[0] = 'b'; /* closed: never found */
    tpg_ipc_cache c = {e, 3, 3};
    unsigned char ha[TPG_IPC_HANDLE_BYTES] = {'a'}, hb[TPG_IPC_HANDLE_BYTES] = {'b'};
    TPG_EXPECT_EQ_INT(tpg_ipc_cache_find(&c, 1, ha), 0);
    TPG_EXPECT_EQ_INT(tpg_ipc_cache_find(&c, 2, ha), 1);
    TPG_EXPECT_EQ_INT(tpg_ipc_cache_find(&c, 1, hb), -1);
    TPG_EXPECT_EQ_INT(tpg_ipc_cache_find(&c, 3, ha), -1);
}

TPG_TEST(local_ranks) {
    tpg_ctx *c = calloc(1, sizeof *c);
    TPG_ASSERT(c);
    c->tp = 4, c->local_begin = 2, c->local_end = 3;
    int n = 0;
    for (int r = 0; r < c->tp; r++) n += tpg__is_local(c, r);
    TPG_EXPECT_EQ_INT(n, 1);
    TPG_EXPECT(tpg__is_local(c, 2) && !tpg__is_local(c, 1) && !tpg__is_local(c, 3));
    TPG_EXPECT(!tpg__multi_process(c));
    free(c);
}

/* The fake all-gather plays rank 1 of tp = 2: it copies rank 0's record and applies `scenario`. */
static int scenario;
static int fake_allgather(const void *send, void *recv, size_t bytes, void *user) {
    (void)user;
    tpg_wire *out = recv;
    memcpy(&out[0], send, bytes);
    memcpy(&out[1], send, bytes);
    out[1].rank = 1;
    switch (scenario) {
    case 1: out[1].call = TPG_CALL_OP_DESTROY; break;     /* rank 1 is in another call */
    case 2: out[1].serial += 1; break;                    /* rank 1 is one call ahead */
    case 3: out[1].status = TPG_ERR_SHAPE; break;         /* rank 1 failed locally */
    case 4: out[1].magic = 0; break;                      /* not our bytes */
    case 5: return 3;                                     /* the framework failed */
    case 6: out[1].rank = 0; break;                       /* not in rank order */
    case 7: out[1].magic = (TPG_WIRE_MAGIC & 0xffffff00u) | 5u; break; /* another build of tpgemm */
    case 8: if (bytes != TPG_WIRE_BYTES) return 4; break; /* a record's size is the same in every version */
    }
    return 0;
}

static tpg_ctx *two_rank_ctx(void) {
    tpg_ctx *c = calloc(1, sizeof *c);
    c->tp = 2, c->local_begin = 0, c->local_end = 1;
    c->allgather = fake_allgather;
    return c;
}

TPG_TEST(wire_exchange_agrees_and_counts_calls) {
    tpg_ctx *c = two_rank_ctx();
    TPG_ASSERT(c && tpg__multi_process(c));
    scenario = 0;
    TPG_EXPECT_EQ_INT(tpg__agree(c, TPG_CALL_OP_READY, TPG_OK), TPG_OK);
    TPG_EXPECT_EQ_INT(tpg__agree(c, TPG_CALL_OP_READY, TPG_OK), TPG_OK);
    TPG_EXPECT(c->collective_serial == 2);
    free(c);
}

TPG_TEST(wire_mismatches_name_the_rank) {
    static const struct { int scenario; tpg_status st; const char *text; } cases[] = {
        {1, TPG_ERR_BOOTSTRAP, "rank 1 is in tpg_op_destroy"},
        {2, TPG_ERR_BOOTSTRAP, "same collective calls in the same order"},
        {3, TPG_ERR_SHAPE, "rank 1 failed in tpg_op_create"},
        {4, TPG_ERR_BOOTSTRAP, "record 1 of the all-gather is not a tpgemm record"},
        {5, TPG_ERR_BOOTSTRAP, "allgather callback returned 3"},
        {6, TPG_ERR_BOOTSTRAP, "record 1 comes from rank 0"},
        {7, TPG_ERR_BOOTSTRAP, "rank 1's tpgemm speaks wire version 5, this rank's 7"},
        {8, TPG_OK, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tpg_ctx *c = two_rank_ctx();
        TPG_ASSERT(c);
        scenario = cases[i].scenario;
        TPG_EXPECT_EQ_INT(tpg__agree(c, TPG_CALL_OP_READY, TPG_OK), cases[i].st);
        TPG_EXPECT_STR_CONTAINS(tpg_last_error(c), cases[i].text);
        free(c);
    }
}

TPG_TEST(ctx_settings_must_match_on_every_rank) {
    tpg_ctx *c = two_rank_ctx();
    TPG_ASSERT(c);
    tpg_wire w[2];
    memset(w, 0, sizeof w);
    w[0].timeout_ns = w[1].timeout_ns = 1000, w[0].share_devices = w[1].share_devices = 1;
    TPG_EXPECT_EQ_INT(tpg_wire_check_settings(c, w), TPG_OK);
    w[1].share_devices = 0;
    TPG_EXPECT_EQ_INT(tpg_wire_check_settings(c, w), TPG_ERR_BOOTSTRAP);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(c), "rank 1 has share_devices = 0 but rank 0 has 1");
    w[1].share_devices = 1, w[1].timeout_ns = 2000;
    TPG_EXPECT_EQ_INT(tpg_wire_check_settings(c, w), TPG_ERR_BOOTSTRAP);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(c), "rank 1 has timeout_ns = 2000 but rank 0 has 1000");
    free(c);
}

TPG_TEST(local_failure_wins_over_peers) {
    tpg_ctx *c = two_rank_ctx();
    TPG_ASSERT(c);
    scenario = 3;
    strcpy(c->error, "own message");
    TPG_EXPECT_EQ_INT(tpg__agree(c, TPG_CALL_TENSORS_READY, TPG_ERR_ALIGNMENT), TPG_ERR_ALIGNMENT);
    TPG_EXPECT_EQ_STR(tpg_last_error(c), "own message");
    free(c);
}

static int never_called(const void *s, void *r, size_t b, void *u) {
    (void)s, (void)r, (void)b, (void)u;
    abort();
}

/* Ranks in different calls (or a failed callback) stop every later exchange of the context: the peers made their
 * own number of exchanges since, so a next one would pair with a leftover call or wait for ever. A peer's failed
 * status is a failure in step: the next exchange is made. */
TPG_TEST(an_exchange_out_of_step_breaks_the_context) {
    static const struct { int scenario; int broken; } cases[] = {{1, 1}, {2, 1}, {5, 1}, {4, 1}, {3, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tpg_ctx *c = two_rank_ctx();
        TPG_ASSERT(c);
        scenario = cases[i].scenario;
        TPG_EXPECT(tpg__agree(c, TPG_CALL_OP_CREATE, TPG_OK) != TPG_OK);
        TPG_EXPECT_EQ_INT(c->exchange_broken, cases[i].broken);
        scenario = 0;
        if (!cases[i].broken) {
            TPG_EXPECT_EQ_INT(tpg__agree(c, TPG_CALL_OP_READY, TPG_OK), TPG_OK);
            free(c);
            continue;
        }
        c->allgather = never_called;
        const uint64_t serial = c->collective_serial;
        TPG_EXPECT_EQ_INT(tpg__agree(c, TPG_CALL_OP_READY, TPG_OK), TPG_ERR_BOOTSTRAP);
        TPG_EXPECT_STR_CONTAINS(tpg_last_error(c), "rank 0, tpg_op_create: an earlier collective call");
        strcpy(c->error, "own message"); /* a local failure keeps its message */
        TPG_EXPECT_EQ_INT(tpg__agree(c, TPG_CALL_OP_DESTROY, TPG_ERR_SHAPE), TPG_ERR_SHAPE);
        TPG_EXPECT_EQ_STR(tpg_last_error(c), "own message");
        TPG_EXPECT(c->collective_serial == serial);
        free(c);
    }
}

TPG_TEST(create_rank_argument_errors_return_without_exchange) {
    tpg_ctx *ctx = (tpg_ctx *)1;
    TPG_EXPECT_EQ_INT(tpg_ctx_create_rank(NULL, &ctx), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT(ctx == NULL);
    tpg_rank_config cfg = TPG_RANK_CONFIG_INIT;
    cfg.tp = 2, cfg.rank = 0;
    TPG_EXPECT_EQ_INT(tpg_ctx_create_rank(&cfg, &ctx), TPG_ERR_INVALID_ARGUMENT); /* no allgather */
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "allgather");
    cfg.allgather = never_called;
    cfg.rank = 2;
    TPG_EXPECT_EQ_INT(tpg_ctx_create_rank(&cfg, &ctx), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "rank = 2");
    cfg.rank = 0, cfg.tp = TPG_MAX_TP + 1;
    TPG_EXPECT_EQ_INT(tpg_ctx_create_rank(&cfg, &ctx), TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_EQ_INT(tpg_ctx_rank(NULL), -1);
}

TPG_TEST_MAIN(TPG_CASE(ref_packs_handle_and_offset), TPG_CASE(cache_finds_open_entries_by_rank_and_handle),
              TPG_CASE(local_ranks), TPG_CASE(wire_exchange_agrees_and_counts_calls),
              TPG_CASE(wire_mismatches_name_the_rank), TPG_CASE(local_failure_wins_over_peers),
              TPG_CASE(ctx_settings_must_match_on_every_rank), TPG_CASE(an_exchange_out_of_step_breaks_the_context),
              TPG_CASE(create_rank_argument_errors_return_without_exchange))
