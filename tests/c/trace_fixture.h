/* The synthetic trace buffers of the trace-to-JSON writer's unit tests (tests/c/test_trace.c, test_trace_clocks.c),
 * laid out as the kernels write them (templates/kernels/trace_format.h), and the conversion helpers. No GPU. */
#ifndef TPG_TESTS_TRACE_FIXTURE_H
#define TPG_TESTS_TRACE_FIXTURE_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/src/cli/trace_json.h"
#include "trace_format.h"
#include "tpg_test.h"

#define CAP 4
#define CTAS 3
#define T0 1000000000000ull /* an arbitrary %globaltimer origin, ns */

static inline tpg_trace_header *hdr(void *buf) { return (tpg_trace_header *)buf; }
static inline tpg_trace_cta *cta(void *buf, uint32_t c) {
    return (tpg_trace_cta *)((char *)buf + TPG_TRACE_HEADER_BYTES + c * tpg_trace_cta_bytes(hdr(buf)->cap));
}
static inline tpg_trace_rec *rec(void *buf, uint32_t c, int lane, uint32_t i) {
    return (tpg_trace_rec *)((char *)cta(buf, c) + TPG_TRACE_CTA_BYTES) + lane * hdr(buf)->cap + i;
}

/* Appends a record as the kernel does: count always grows, the record lands only below the cap. */
static inline tpg_trace_rec *append(void *buf, uint32_t c, int lane) {
    tpg_trace_cta *x = cta(buf, c);
    uint32_t n = x->count[lane]++;
    return n < hdr(buf)->cap ? rec(buf, c, lane, n) : NULL;
}

static inline void tile(void *buf, uint32_t c, int lane, int stage, int t, uint64_t b, uint64_t e, uint64_t end) {
    tpg_trace_rec *r = append(buf, c, lane);
    if (!r) return;
    r->kind = TPG_TRACE_REC_TILE;
    r->stage = stage;
    r->tile = t;
    r->t[0] = b, r->t[1] = e, r->t[2] = end;
}

static inline void stage_wait(void *buf, uint32_t c, int stage, int piece, uint64_t b, uint64_t e) {
    tpg_trace_rec *r = append(buf, c, 0);
    if (!r) return;
    r->kind = TPG_TRACE_REC_STAGE_WAIT;
    r->stage = stage;
    r->tile = piece; /* the last piece of the stage's copy the wait saw */
    r->t[0] = b, r->t[1] = e;
}

static inline void loads(void *buf, uint32_t c, int stage, int t, uint64_t b, uint64_t first, uint64_t last) {
    tpg_trace_rec *r = append(buf, c, 0);
    if (!r) return;
    r->kind = TPG_TRACE_REC_LOADS;
    r->stage = stage;
    r->tile = t;
    r->t[0] = b, r->t[1] = first, r->t[2] = last;
    r->t[3] = 1200, r->t[4] = 4800; /* ring-full and issue cycles */
}

/* One device of an all-gather tp = 2 launch: CTAs 0 and 1 written, CTA 2 never started. All times in us
 * after T0 + skew_ns. CTA 0's wg0 appends 6 tiles into a cap of 4: 2 dropped. */
static inline void *make_device(size_t *bytes, uint64_t skew_ns) {
    *bytes = (size_t)tpg_trace_bytes(CTAS, CAP);
    void *buf = calloc(1, *bytes);
    tpg_trace_header *h = hdr(buf);
    const uint64_t o = T0 + skew_ns;
#define US(x) (o + (uint64_t)((x) * 1000.0))
    h->magic = TPG_TRACE_MAGIC, h->version = TPG_TRACE_VERSION, h->ctas = CTAS, h->cap = CAP;
    h->barrier[0][0] = US(0), h->barrier[0][1] = US(1), h->barrier[0][2] = US(5);
    h->barrier[1][0] = US(200), h->barrier[1][1] = US(201), h->barrier[1][2] = US(210);
    h->grid = 2, h->tiles_m = 4, h->tiles_n = 3, h->k_blocks = 8, h->num_stages = 2, h->bm = 128, h->bn = 256;
    h->cluster = 1, h->kernel_written = TPG_TRACE_MAGIC;
    for (uint32_t c = 0; c < 2; c++) {
        tpg_trace_cta *x = cta(buf, c);
        x->written = TPG_TRACE_MAGIC, x->smid = 10 + c, x->t_start = US(6);
        x->lane_end[0] = US(100), x->lane_end[1] = x->lane_end[2] = US(190);
    }
    stage_wait(buf, 0, 1, 0, US(60), US(80)); /* CTA 0 waits 20 us for flag 1 */
    stage_wait(buf, 1, 1, 0, US(70), US(75)); /* CTA 1 sees it first, at 75 us */
    for (int i = 0; i < 6; i++) tile(buf, 0, 1, i < 3 ? 0 : 1, 7 - i, US(10 + 30 * i), US(30 + 30 * i), US(35 + 30 * i));
    tile(buf, 0, 2, 0, 7, US(10), US(30), US(36));
    loads(buf, 1, 0, 5, US(7), US(9), US(29)); /* CTA 1's producer: k-block 0 of tile 5 out at 9 us */
    tile(buf, 1, 1, 0, 5, US(10), US(30), US(35));
    tpg_trace_rec *r = rec(buf, 1, 1, 0); /* a reduce-scatter style partial wait inside the epilogue */
    r->flags = TPG_TRACE_F_PARTIAL, r->t[3] = US(31), r->t[4] = US(33);
    r->t[5] = US(34.5); /* last store issued 1.5 us after the wait (33 us), then 0.5 us of flag flush */
    tile(buf, 1, 2, 1, 11, US(40), 0, 0); /* never finished: incomplete */
#undef US
    return buf;
}

static inline char *to_json(const tpg_trace_device *d, int n, tpg_trace_summary *sum, int *rc, char *msg, size_t cap) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tpg_trace_meta meta = {"ag_rota_bf16_tp2", "AllGather1D_TilingCD_RotatingA", "k\"q", 2, 512, 768, 256, 1};
    *rc = tpg_trace_write_json(f, &meta, d, n, sum, msg, cap);
    fclose(f);
    return text;
}

/* to_json for a conversion that must succeed: the JSON, or NULL (with the writer's message printed). */
static inline char *converted(const tpg_trace_device *d, int n, tpg_trace_summary *sum) {
    char msg[256] = "";
    int rc;
    char *j = to_json(d, n, sum, &rc, msg, sizeof msg);
    if (rc == 0) return j;
    fprintf(stderr, "conversion failed: %s\n", msg);
    free(j);
    return NULL;
}

/* converted() of one device: rank 0 on CUDA device 0; its summary in *sum (NULL: not wanted). */
static inline char *converted_one_into(void *buf, size_t bytes, tpg_trace_summary *sum) {
    tpg_trace_device d[1] = {{0, 0, buf, bytes, NULL, 0, 0, -1.0}};
    tpg_trace_summary local;
    return converted(d, 1, sum ? sum : &local);
}

static inline char *converted_one(void *buf, size_t bytes) { return converted_one_into(buf, bytes, NULL); }

static inline int count(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

#endif /* TPG_TESTS_TRACE_FIXTURE_H */
