/* Trace buffers -> Chrome / Perfetto trace-event JSON (see trace_json.h). */
#include "trace_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "json.h"
#include "trace_format.h"

#define MAX_CTAS 4096u
#define MAX_CAP (1u << 20)

static int fail(char *msg, size_t cap, const char *fmt, ...) {
    if (msg && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static const tpg_trace_header *header_of(const void *buf) { return (const tpg_trace_header *)buf; }

static const tpg_trace_cta *cta_of(const tpg_trace_header *h, uint32_t c) {
    return (const tpg_trace_cta *)((const char *)h + TPG_TRACE_HEADER_BYTES + (uint64_t)c * tpg_trace_cta_bytes(h->cap));
}

static const tpg_trace_rec *rec_of(const tpg_trace_header *h, const tpg_trace_cta *c, int lane, uint32_t i) {
    return (const tpg_trace_rec *)((const char *)c + TPG_TRACE_CTA_BYTES) + (uint64_t)lane * h->cap + i;
}

/* Records actually present in a lane (count clamped to the cap). */
static uint32_t lane_records(const tpg_trace_header *h, const tpg_trace_cta *c, int lane) {
    return c->count[lane] < h->cap ? c->count[lane] : h->cap;
}

int tpg_trace_check(const void *buf, size_t bytes, char *msg, size_t msg_bytes) {
    if (!buf || bytes < TPG_TRACE_HEADER_BYTES)
        return fail(msg, msg_bytes, "trace buffer of %zu bytes is smaller than its %d-byte header", bytes,
                    TPG_TRACE_HEADER_BYTES);
    const tpg_trace_header *h = header_of(buf);
    if (h->magic != TPG_TRACE_MAGIC)
        return fail(msg, msg_bytes, "trace buffer has magic 0x%08x, expected 0x%08x", h->magic, TPG_TRACE_MAGIC);
    if (h->version != TPG_TRACE_VERSION)
        return fail(msg, msg_bytes, "trace buffer version %u, this writer reads %u", h->version, TPG_TRACE_VERSION);
    if (h->ctas > MAX_CTAS || h->cap == 0 || h->cap > MAX_CAP)
        return fail(msg, msg_bytes, "trace buffer claims %u CTAs x %u records per lane (limits %u, 1..%u)", h->ctas,
                    h->cap, MAX_CTAS, MAX_CAP);
    const uint64_t need = tpg_trace_bytes(h->ctas, h->cap);
    if (need > bytes)
        return fail(msg, msg_bytes, "trace buffer of %zu bytes is shorter than its %u CTAs x %u records need (%" PRIu64
                    ")", bytes, h->ctas, h->cap, need);
    return 0;
}

/* The largest of every written CTA lane's record count (ends 0) or end time (ends 1). */
static uint64_t lanes_max(const tpg_trace_header *h, int ends) {
    uint64_t top = 0;
    for (uint32_t c = 0; c < h->ctas; c++) {
        const tpg_trace_cta *cta = cta_of(h, c);
        if (cta->written != TPG_TRACE_MAGIC) continue;
        for (int l = 0; l < TPG_TRACE_LANES; l++) {
            const uint64_t v = ends ? cta->lane_end[l] : cta->count[l];
            if (v > top) top = v;
        }
    }
    return top;
}

uint32_t tpg_trace_lane_peak(const void *buf, size_t bytes) {
    if (tpg_trace_check(buf, bytes, NULL, 0)) return 0;
    return (uint32_t)lanes_max(header_of(buf), 0);
}

uint32_t tpg_trace_cap_for(const tpg_trace_device *devs, int n, uint32_t cap, uint32_t max_cap) {
    uint32_t peak = 0;
    for (int i = 0; devs && i < n; i++) {
        const uint32_t p = tpg_trace_lane_peak(devs[i].buf, devs[i].bytes);
        if (p > peak) peak = p;
    }
    if (peak <= cap) return 0;
    const uint64_t room = (uint64_t)peak + peak / 8 + 64, need = (room + 63) / 64 * 64;
    const uint32_t c = need < max_cap ? (uint32_t)need : max_cap;
    return c > cap ? c : 0; /* a cap already at the most: nothing to gain */
}

/* ---- output helpers ------------------------------------------------------------------------------ */

typedef struct out {
    FILE *f;
    int first;     /* no event written yet */
    uint64_t t0;   /* time zero (ns), on the aligned axis */
    int64_t shift; /* the device being written: its start-barrier exit minus rank 0's (ns), taken off its times */
} out;

/* A device time (its %globaltimer, ns) on the common axis, in us from time zero. */
static double us(const out *o, uint64_t t) { return (double)((int64_t)(t - o->t0) - o->shift) * 1e-3; }

static void sep(out *o) {
    fputs(o->first ? "\n" : ",\n", o->f);
    o->first = 0;
}

/* The id of a device's track (trace_json.h: tid = TPG_TRACE_TID_STRIDE * pid + track). */
static int tid_of(int pid, int track) { return TPG_TRACE_TID_STRIDE * pid + track; }

/* A metadata event: name = process_name / thread_name / *_sort_index. */
static void meta_name(out *o, const char *what, int pid, int track, const char *name) {
    sep(o);
    fprintf(o->f, "{\"name\": \"%s\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": ", what, pid,
            tid_of(pid, track));
    tpg__json_string(o->f, name);
    fputs("}}", o->f);
}
static void meta_sort(out *o, const char *what, int pid, int track, int index) {
    sep(o);
    fprintf(o->f, "{\"name\": \"%s\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"args\": {\"sort_index\": %d}}", what,
            pid, tid_of(pid, track), index);
}

/* A complete event [t_begin, t_end] on a track; args: a JSON object body without braces (may be ""). */
static void span(out *o, const char *name, const char *cat, int pid, int track, uint64_t tb, uint64_t te,
                 const char *args) {
    const double b = us(o, tb), d = te > tb ? (double)(te - tb) * 1e-3 : 0.0;
    sep(o);
    fputs("{\"name\": ", o->f);
    tpg__json_string(o->f, name);
    fprintf(o->f, ", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, "
            "\"args\": {%s}}", cat, pid, tid_of(pid, track), b, d, args ? args : "");
}

/* The timestamps of one device: earliest, latest (0 if none), and the greatest common divisor of their differences,
 * the step its %globaltimer advanced by (32 ns to 1 us by GPU and driver; 0 with fewer than two distinct times). */
typedef struct time_span {
    uint64_t lo, hi, step;
} time_span;

static uint64_t gcd_u64(uint64_t a, uint64_t b) {
    while (b) {
        const uint64_t t = a % b;
        a = b, b = t;
    }
    return a;
}

static void consider(time_span *s, uint64_t t) {
    if (!t) return;
    if (s->lo) s->step = gcd_u64(s->step, t > s->lo ? t - s->lo : s->lo - t);
    if (!s->lo || t < s->lo) s->lo = t;
    if (t > s->hi) s->hi = t;
}

static time_span device_times(const tpg_trace_header *h) {
    time_span s = {0, 0, 0};
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < 3; i++) consider(&s, h->barrier[m][i]);
    for (uint32_t c = 0; c < h->ctas; c++) {
        const tpg_trace_cta *cta = cta_of(h, c);
        if (cta->written != TPG_TRACE_MAGIC) continue;
        consider(&s, cta->t_start);
        for (int l = 0; l < TPG_TRACE_LANES; l++) {
            consider(&s, cta->lane_end[l]);
            for (uint32_t i = 0; i < lane_records(h, cta, l); i++) {
                const tpg_trace_rec *r = rec_of(h, cta, l, i);
                /* a load record's t[3], t[4] are cycle counts, not times (trace_format.h) */
                const int times = r->kind == TPG_TRACE_REC_LOADS ? 3 : 5;
                for (int j = 0; j < times; j++) consider(&s, r->t[j]);
            }
        }
    }
    return s;
}

#define MAX_STAGES 8

/* Per-stage flag-wait aggregate of one device. */
typedef struct stage_waits {
    int waits;                                  /* records: one per producer and run of pieces waited for */
    int last_piece;                             /* the highest piece of the stage's copy a wait saw */
    uint64_t first_begin, last_end, first_seen; /* first_seen = earliest end of a wait that saw last_piece */
    uint64_t seen_wait_ns;                      /* how long the first observer had waited */
    uint32_t seen_cta;
    double total_ns, max_ns;
} stage_waits;

/* %globaltimer time of a node time (ns on the events' clock after the start barrier's completion) from base, in
 * integers: base passes 2^53, where a double steps by 256 ns. */
static uint64_t at_ns(uint64_t base, double ns) {
    const int64_t d = (int64_t)llround(ns);
    return d < 0 && (uint64_t)(-d) > base ? 0 : (uint64_t)((int64_t)base + d);
}

/* Where the events' clock starts on this device's %globaltimer. Each anchor is a kernel whose last timestamp the
 * trace holds and whose completion an event recorded: the start barrier's exit time, the events' zero, and the
 * GEMM's last lane end (at nodes_gemm_end_ns). An event comes after its kernel's last timestamp by the kernel's
 * completion latency, which places every node that much early: the anchor whose event came soonest - the later
 * base - is the better. */
static uint64_t events_base(const tpg_trace_device *d, uint64_t start_exit, uint64_t gemm_end) {
    if (d->nodes_gemm_end_ns < 0.0 || !gemm_end) return start_exit;
    const int64_t g = (int64_t)llround(d->nodes_gemm_end_ns);
    if (g < 0 || (uint64_t)g > gemm_end) return start_exit;
    const uint64_t by_gemm = gemm_end - (uint64_t)g;
    return by_gemm > start_exit ? by_gemm : start_exit;
}

/* The nodes beside the GEMM that CUDA events timed (trace_format.h), as spans on track 1 from events_base: cat "copy"
 * for the copies and flag copies (the copy-engine partials' bands and their flags among them), "reduce" for the
 * REDUCE. A node after the start barrier alone starts at its exit; one
 * whose begin is unknown starts at the GEMM's end where that is its dependency (REDUCE), else it is a point; one placed
 * before its dependency's end is a point there, and past 1 us (the anchors' latency, not the events' resolution) says
 * so (args.before_dependency). */
static void write_timed_nodes(out *o, const tpg_trace_device *d, int pid, uint64_t start_exit, uint64_t gemm_end) {
    static const char *kinds[] = {"?", "copy", "flag", "own shard copy", "REDUCE", "partial copy", "partial flags"};
    char name[160], args[384];
    const uint64_t base = events_base(d, start_exit, gemm_end);
    meta_name(o, "thread_name", pid, 1, "copies, flags and REDUCE (CUDA events)");
    meta_sort(o, "thread_sort_index", pid, 1, 1);
    for (int i = 0; i < d->num_nodes; i++) {
        const tpg_trace_node_time *t = &d->nodes[i];
        const uint32_t k = t->kind <= TPG_TRACE_NODE_CE_FLAGS ? t->kind : 0;
        if (isnan(t->end_ns) || isnan(t->begin_ns)) continue; /* nothing to place */
        const uint64_t end = at_ns(base, t->end_ns);
        /* after the start barrier alone: its own exit, which the trace has on this clock */
        uint64_t begin = t->from_start ? start_exit : t->begin_ns >= 0.0 ? at_ns(base, t->begin_ns) : end;
        if (k == TPG_TRACE_NODE_REDUCE && t->begin_ns < 0.0 && gemm_end) begin = gemm_end;
        /* past two events' resolution (~0.5 us each) an inversion is the anchors', not noise: said */
        const int early = begin > end + 1000;
        if (k == TPG_TRACE_NODE_REDUCE) snprintf(name, sizeof name, "REDUCE");
        else if (k == TPG_TRACE_NODE_COPY)
            snprintf(name, sizeof name, "copy stage %d piece %d from rank %d", t->stage, t->piece, t->peer);
        else if (k == TPG_TRACE_NODE_CE_COPY || k == TPG_TRACE_NODE_CE_FLAGS)
            snprintf(name, sizeof name, "%s stage %d band %d to rank %d", kinds[k], t->stage, t->piece, t->peer);
        else snprintf(name, sizeof name, "%s stage %d", kinds[k], t->stage);
        snprintf(args, sizeof args, "\"measured\": \"cuda_events\", \"node\": \"%s\", \"stage\": %d, \"piece\": %d, "
                 "\"peer\": %d, \"begin_known\": %s, \"before_dependency\": %s, \"skipped_nodes\": %d", kinds[k],
                 (int)t->stage, (int)t->piece, (int)t->peer, t->begin_ns >= 0.0 ? "true" : "false",
                 early ? "true" : "false", d->nodes_skipped);
        span(o, name, k == TPG_TRACE_NODE_REDUCE ? "reduce" : "copy", pid, 1, begin > end ? end : begin, end, args);
    }
}

static void write_device(out *o, const tpg_trace_device *d, tpg_trace_summary *sum) {
    const tpg_trace_header *h = header_of(d->buf);
    const int pid = d->rank + 1; /* trace_json.h: no id is 0 */
    char name[160], args[512];
    snprintf(name, sizeof name, "rank %d (cuda %d)", d->rank, d->device);
    meta_name(o, "process_name", pid, 0, name);
    meta_sort(o, "process_sort_index", pid, 0, d->rank);
    meta_name(o, "thread_name", pid, 0, "barriers");
    meta_sort(o, "thread_sort_index", pid, 0, 0);

    /* barriers */
    static const char *bname[2] = {"start barrier", "end barrier"};
    for (int m = 0; m < 2; m++) {
        const uint64_t *b = h->barrier[m];
        if (!b[0] || !b[2]) continue;
        const int gave_up = h->barrier_gave_up[m] != 0;
        snprintf(args, sizeof args, "\"arrived_us\": %.3f, \"gave_up\": %s", b[1] ? us(o, b[1]) : -1.0,
                 gave_up ? "true" : "false");
        snprintf(name, sizeof name, "%s%s", bname[m], gave_up ? " (gave up)" : "");
        span(o, name, "barrier", pid, 0, b[0], b[2], args);
        sum->gave_up += gave_up;
    }

    /* flag waits and tiles */
    stage_waits sw[MAX_STAGES];
    memset(sw, 0, sizeof sw);
    for (uint32_t c = 0; c < h->ctas; c++) {
        const tpg_trace_cta *cta = cta_of(h, c);
        if (cta->written != TPG_TRACE_MAGIC) continue;
        for (int l = 0; l < TPG_TRACE_LANES; l++) {
            const uint32_t n = lane_records(h, cta, l);
            if (cta->count[l] > h->cap) sum->dropped += cta->count[l] - h->cap;
            if (!n) continue;
            const int track = 100 + (int)c * TPG_TRACE_LANES + l;
            if (l == 0) snprintf(name, sizeof name, "cta %u (sm %u) producer", c, cta->smid);
            else snprintf(name, sizeof name, "cta %u (sm %u) wg%d", c, cta->smid, l - 1);
            meta_name(o, "thread_name", pid, track, name);
            meta_sort(o, "thread_sort_index", pid, track, track);
            for (uint32_t i = 0; i < n; i++) {
                const tpg_trace_rec *r = rec_of(h, cta, l, i);
                if (r->kind == TPG_TRACE_REC_STAGE_WAIT) {
                    if (!r->t[0] || !r->t[1]) {
                        sum->incomplete++;
                        continue;
                    }
                    /* the gathered walk whose GEMM pulls the shards: its one stage wait is for the grid's pulls */
                    const int gave_up = (r->flags & TPG_TRACE_F_GAVE_UP) != 0;
                    if (h->pulls && r->stage == 0) snprintf(name, sizeof name, "pull wait (every shard)%s",
                                                            gave_up ? " (gave up)" : "");
                    else snprintf(name, sizeof name, "flag wait stage %d%s", r->stage, gave_up ? " (gave up)" : "");
                    snprintf(args, sizeof args, "\"stage\": %d, \"piece\": %d, \"gave_up\": %s", r->stage, r->tile,
                             gave_up ? "true" : "false");
                    span(o, name, "flag_wait", pid, track, r->t[0], r->t[1], args);
                    sum->records++;
                    sum->gave_up += gave_up;
                    if (r->stage >= 0 && r->stage < MAX_STAGES) {
                        stage_waits *s = &sw[r->stage];
                        const double w = (double)(r->t[1] - r->t[0]);
                        if (!s->waits++) s->last_piece = gave_up ? -1 : r->tile;
                        s->total_ns += w;
                        if (w > s->max_ns) s->max_ns = w;
                        if (!s->first_begin || r->t[0] < s->first_begin) s->first_begin = r->t[0];
                        if (r->t[1] > s->last_end) s->last_end = r->t[1];
                        /* the copy ends when its last piece landed: the earliest wait that saw that piece (one
                         * that gave up saw nothing) */
                        if (!gave_up && r->tile > s->last_piece) s->last_piece = r->tile, s->first_seen = 0;
                        if (!gave_up && r->tile == s->last_piece && (!s->first_seen || r->t[1] < s->first_seen)) {
                            s->first_seen = r->t[1];
                            s->seen_wait_ns = r->t[1] - r->t[0];
                            s->seen_cta = c;
                        }
                    }
                } else if (r->kind == TPG_TRACE_REC_LOADS) {
                    if (!r->t[0] || !r->t[1] || !r->t[2]) {
                        sum->incomplete++;
                        continue;
                    }
                    /* the span starts at the first k-block's empty-slot wait; ts + slot_wait_us = k-block 0 issued */
                    snprintf(name, sizeof name, "loads stage %d", r->stage);
                    snprintf(args, sizeof args, "\"stage\": %d, \"tile\": %d, \"slot_wait_us\": %.3f, \"ring_full_cycles\": %llu, "
                             "\"issue_cycles\": %llu", r->stage, r->tile,
                             (double)(r->t[1] - r->t[0]) * 1e-3, (unsigned long long)r->t[3], (unsigned long long)r->t[4]);
                    span(o, name, "loads", pid, track, r->t[0], r->t[2], args);
                    sum->records++;
                } else if (r->kind == TPG_TRACE_REC_TILE) {
                    if (!r->t[0] || !r->t[1] || !r->t[2]) {
                        sum->incomplete++;
                        continue;
                    }
                    int tm = -1, tn = -1, batch = -1;
                    /* a cluster partner tile past the edge has no place in the tiling: -1 */
                    if (h->tiles_n && h->tiles_m && r->tile >= 0 && !(r->flags & TPG_TRACE_F_NOT_STORED)) {
                        /* 64-bit: the product may pass 2^32 */
                        const int64_t t = r->tile, per_batch = (int64_t)h->tiles_n * h->tiles_m;
                        tn = (int)(t % h->tiles_n);
                        tm = (int)(t / h->tiles_n % h->tiles_m);
                        batch = (int)(t / per_batch);
                    }
                    const int part = (r->flags & TPG_TRACE_F_PARTIAL) && r->t[3] && r->t[4];
                    /* a stream-K contribution computes some k-blocks of a tile that its finisher stores */
                    const int contrib = (r->flags & TPG_TRACE_F_SK_CONTRIB) != 0;
                    const int stored = !(r->flags & TPG_TRACE_F_NOT_STORED) && !contrib;
                    snprintf(name, sizeof name, contrib ? "stage %d stream-K part" : "stage %d", r->stage);
                    snprintf(args, sizeof args,
                             "\"stage\": %d, \"tile\": %d, \"tm\": %d, \"tn\": %d, \"batch\": %d, \"stored\": %s, "
                             "%s\"mainloop_us\": %.3f, \"epilogue_us\": %.3f, \"partial_wait_us\": %.3f",
                             r->stage, r->tile, tm, tn, batch, stored ? "true" : "false",
                             contrib ? "\"stream_k\": \"contribution\", "
                                     : (r->flags & TPG_TRACE_F_SK_FINISH) ? "\"stream_k\": \"finisher\", " : "",
                             r->t[1] > r->t[0] ? (double)(r->t[1] - r->t[0]) * 1e-3 : 0.0,
                             r->t[2] > r->t[1] ? (double)(r->t[2] - r->t[1]) * 1e-3 : 0.0,
                             part && r->t[4] > r->t[3] ? (double)(r->t[4] - r->t[3]) * 1e-3 : 0.0);
                    /* ping-pong: from the epilogue's start (or its partial-flag wait's end) to the last store
                     * issued, then a signal flag's flush */
                    const uint64_t from = part && r->t[4] > r->t[1] ? r->t[4] : r->t[1];
                    if (r->t[5] >= from && r->t[5] <= r->t[2]) {
                        const size_t used = strlen(args);
                        snprintf(args + used, sizeof args - used, ", \"issue_us\": %.3f, \"flush_us\": %.3f",
                                 (double)(r->t[5] - from) * 1e-3, (double)(r->t[2] - r->t[5]) * 1e-3);
                    }
                    span(o, name, "tile", pid, track, r->t[0], r->t[2], args);
                    span(o, "epilogue", "epilogue", pid, track, r->t[1], r->t[2], "");
                    if (part) {
                        const int gave_up = (r->flags & TPG_TRACE_F_GAVE_UP) != 0;
                        snprintf(args, sizeof args, "\"stage\": %d, \"tile\": %d, \"gave_up\": %s", r->stage,
                                 r->tile, gave_up ? "true" : "false");
                        span(o, gave_up ? "partial wait (gave up)" : "partial wait", "partial_wait", pid, track,
                             r->t[3], r->t[4], args);
                        sum->gave_up += gave_up;
                    }
                    sum->records++;
                }
            }
        }
    }

    /* stage flag waits, all CTAs: one span per stage on its own track (stages may overlap) */
    for (int s = 0; s < MAX_STAGES; s++) {
        if (!sw[s].waits) continue;
        snprintf(name, sizeof name, "flag waits stage %d (all CTAs)", s);
        meta_name(o, "thread_name", pid, 10 + s, name);
        meta_sort(o, "thread_sort_index", pid, 10 + s, 10 + s);
        snprintf(name, sizeof name, "stage %d flag waits", s);
        snprintf(args, sizeof args, "\"stage\": %d, \"waits\": %d, \"mean_us\": %.3f, \"max_us\": %.3f", s,
                 sw[s].waits, sw[s].total_ns / sw[s].waits * 1e-3, sw[s].max_ns * 1e-3);
        span(o, name, "flag_wait_all", pid, 10 + s, sw[s].first_begin, sw[s].last_end, args);
    }

    if (d->num_nodes > 0 && h->barrier[0][2]) {
        /* the latest lane end: where the GEMM's walk ended (the REDUCE after it starts there) */
        write_timed_nodes(o, d, pid, h->barrier[0][2], lanes_max(h, 1));
        return;
    }
    /* copies without node events: inferred from the graph order (COPY s starts when the start barrier, or FLAG
     * s-1, is done) and the first CTA that saw flag s - of the copy's last piece when it is cut (an upper bound on
     * COPY + FLAG) */
    uint64_t prev = h->barrier[0][2];
    int any = 0;
    for (int s = 0; s < MAX_STAGES; s++) {
        if (!sw[s].waits) continue;
        if (!sw[s].first_seen) { /* every wait of the stage gave up (a timed-out call): no copy was seen to land */
            prev = 0;
            continue;
        }
        if (!any) {
            meta_name(o, "thread_name", pid, 1, "copies (inferred from flag waits)");
            meta_sort(o, "thread_sort_index", pid, 1, 1);
            any = 1;
        }
        const uint64_t begin = prev ? prev : sw[s].first_begin;
        /* one stage that waits: the gathered all-gather walk (runtime/src/params.c), behind the last copy's flag, or
         * behind its own CTAs' pulls of every shard (pull_shards.cuh: the first producer to see the grid's count) */
        if (h->num_stages == 1 && h->pulls)
            snprintf(name, sizeof name, "pulls by the GEMM's CTAs (gathered: every shard)");
        else if (h->num_stages == 1)
            snprintf(name, sizeof name, "copies+flags (gathered: every shard)");
        else
            snprintf(name, sizeof name, "copy+flag stage %d", s);
        snprintf(args, sizeof args,
                 "\"stage\": %d, \"inferred\": \"begin = predecessor done (graph order), end = first flag observation "
                 "(upper bound)\", \"first_seen_by_cta\": %u, \"observer_waited_us\": %.3f",
                 s, sw[s].seen_cta, (double)sw[s].seen_wait_ns * 1e-3);
        span(o, name, "copy", pid, 1, begin, sw[s].first_seen > begin ? sw[s].first_seen : begin, args);
        prev = sw[s].first_seen;
    }
}

static void device_info(out *o, const tpg_trace_device *d, int first) {
    const tpg_trace_header *h = header_of(d->buf);
    uint64_t written = 0, records = 0, dropped = 0;
    time_span starts = {0, 0, 0}, ends = {0, 0, 0}; /* the kernel's window: first CTA start, last lane end */
    for (uint32_t c = 0; c < h->ctas; c++) {
        const tpg_trace_cta *cta = cta_of(h, c);
        if (cta->written != TPG_TRACE_MAGIC) continue;
        written++;
        consider(&starts, cta->t_start);
        for (int l = 0; l < TPG_TRACE_LANES; l++) {
            consider(&ends, cta->lane_end[l]);
            records += lane_records(h, cta, l);
            if (cta->count[l] > h->cap) dropped += cta->count[l] - h->cap;
        }
    }
    fprintf(o->f,
            "%s{\"rank\": %d, \"device\": %d, \"grid\": %u, \"ctas_written\": %" PRIu64 ", \"cap\": %u, "
            "\"tiles_m\": %u, \"tiles_n\": %u, \"k_blocks\": %u, \"stages\": %u, \"bm\": %u, \"bn\": %u, "
            "\"cluster\": %u, \"pingpong\": %u, \"records\": %" PRIu64 ", \"dropped\": %" PRIu64
            ", \"ctas_dropped\": %u, ",
            first ? "" : ", ", d->rank, d->device, h->grid, written, h->cap, h->tiles_m, h->tiles_n, h->k_blocks,
            h->num_stages, h->bm, h->bn, h->cluster, h->pingpong, records, dropped, h->ctas_dropped);
    const uint64_t kb = starts.lo, ke = ends.hi;
    fprintf(o->f, "\"kernel_begin_us\": %.3f, \"kernel_end_us\": %.3f, \"start_barrier_exit_us\": %.3f, "
            "\"timer_step_ns\": %" PRIu64 "}", kb ? us(o, kb) : -1.0, ke ? us(o, ke) : -1.0,
            h->barrier[0][2] ? us(o, h->barrier[0][2]) : -1.0, device_times(h).step);
}

int tpg_trace_write_json(FILE *f, const tpg_trace_meta *meta, const tpg_trace_device *devs, int n,
                         tpg_trace_summary *sum, char *msg, size_t msg_bytes) {
    tpg_trace_summary local;
    if (!sum) sum = &local;
    memset(sum, 0, sizeof *sum);
    if (!f || !devs || n < 1 || n > TPG_TRACE_MAX_DEVICES)
        return fail(msg, msg_bytes, "trace: %d devices (1..%d) and a file are needed", n, TPG_TRACE_MAX_DEVICES);
    for (int i = 0; i < n; i++) {
        char m[256];
        if (tpg_trace_check(devs[i].buf, devs[i].bytes, m, sizeof m))
            return fail(msg, msg_bytes, "rank %d: %s", devs[i].rank, m);
    }
    /* One axis for every device: the start barrier ends on every device at the same moment (each leaves when the
     * last one arrived), so each GPU's times are taken back by its exit's offset to rank 0's; the GPUs' timers
     * disagree by up to hundreds of us (bench/results/timeline_ag.txt), far more than the barrier's polling.
     * Ranks that share a GPU share its timer: they take the shift of its first rank (rank 0's GPU none), not their
     * own polling latency. A start barrier that gave up left at its timeout, not when the last rank arrived: then
     * nothing is shifted. */
    int64_t shift[TPG_TRACE_MAX_DEVICES] = {0};
    const uint64_t exit0 = header_of(devs[0].buf)->barrier[0][2];
    int one_gpu = 1, aligned = 0, gave_up = 0;
    for (int i = 1; i < n; i++) one_gpu &= devs[i].device == devs[0].device;
    for (int i = 0; i < n; i++) gave_up |= header_of(devs[i].buf)->barrier_gave_up[0] != 0;
    int64_t lo = 0, hi = 0;
    int any = 0;
    for (int i = 0; i < n; i++) {
        const tpg_trace_header *h = header_of(devs[i].buf);
        const uint64_t e = h->barrier[0][2];
        sum->has_offset[i] = e && exit0;
        const int64_t offset = sum->has_offset[i] ? (int64_t)(e - exit0) : 0;
        int first = i; /* the first rank on this rank's GPU */
        for (int j = 0; j < i; j++)
            if (devs[j].device == devs[i].device) {
                first = j;
                break;
            }
        shift[i] = gave_up || devs[i].device == devs[0].device ? 0 : first < i ? shift[first] : offset;
        sum->shift_us[i] = (double)shift[i] * 1e-3;
        aligned |= !gave_up && devs[i].device != devs[0].device && sum->has_offset[first];
        sum->start_exit_offset_us[i] = (double)offset * 1e-3; /* reported as measured, shifted or not */
        sum->ctas_dropped += h->ctas_dropped;
        sum->silent_kernels += h->kernel_written != TPG_TRACE_MAGIC;
        const time_span t = device_times(h);
        if (!t.lo) continue;
        const int64_t a = (int64_t)(t.lo - exit0) - shift[i], b = (int64_t)(t.hi - exit0) - shift[i];
        if (!any || a < lo) lo = a;
        if (!any || b > hi) hi = b;
        any = 1;
    }
    out o = {f, 1, exit0 + (uint64_t)lo, 0};
    sum->devices = n;
    sum->span_us = hi > lo ? (double)(hi - lo) * 1e-3 : 0.0;

    fputs("{\"traceEvents\": [", f);
    for (int i = 0; i < n; i++) {
        o.shift = shift[i];
        write_device(&o, &devs[i], sum);
    }
    fputs("\n],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"config\": ", f);
    tpg__json_string(f, meta && meta->config ? meta->config : "");
    fputs(", \"clock\": \"%globaltimer per GPU; each device's times taken back by its start-barrier exit offset to "
          "rank 0 (tpgemm.start_exit_offset_us, raw), so that the start barriers end together\"},\n", f);
    fprintf(f, "\"tpgemm\": {\"version\": 5, \"ids\": {\"pid\": \"rank + 1\", \"tid_stride\": %d}, \"config\": ",
            TPG_TRACE_TID_STRIDE);
    tpg__json_string(f, meta && meta->config ? meta->config : "");
    fputs(", \"schedule\": ", f);
    tpg__json_string(f, meta && meta->schedule ? meta->schedule : "");
    fputs(", \"kernel\": ", f);
    tpg__json_string(f, meta && meta->kernel ? meta->kernel : "");
    fprintf(f, ", \"tp\": %d, \"m\": %" PRId64 ", \"n\": %" PRId64 ", \"k\": %" PRId64 ", \"l\": %" PRId64,
            meta ? meta->tp : n, meta ? meta->m : 0, meta ? meta->n : 0, meta ? meta->k : 0, meta ? meta->l : 0);
    fprintf(f, ", \"time_zero_ns\": \"%" PRIu64 "\", \"aligned\": \"%s\", \"span_us\": %.3f, "
            "\"start_exit_offset_us\": [",
            o.t0, aligned ? "start_barrier"
                  : gave_up ? "none (a start barrier gave up: its exit is no shared moment)"
                  : one_gpu && n > 1 ? "none (one GPU, one timer)" : "none", sum->span_us);
    for (int i = 0; i < n; i++) {
        if (sum->has_offset[i]) fprintf(f, "%s%.3f", i ? ", " : "", sum->start_exit_offset_us[i]);
        else fprintf(f, "%snull", i ? ", " : "");
    }
    fputs("], \"shift_us\": [", f); /* what was taken back from each rank's times */
    for (int i = 0; i < n; i++) fprintf(f, "%s%.3f", i ? ", " : "", sum->shift_us[i]);
    fputs("], \"devices\": [", f);
    for (int i = 0; i < n; i++) {
        o.shift = shift[i];
        device_info(&o, &devs[i], i == 0);
    }
    fputs("]}}\n", f);
    if (ferror(f)) return fail(msg, msg_bytes, "trace: writing the JSON failed");
    return 0;
}
