/* Shape arithmetic and validation; see shapes.h for the rules. */
#include <stdio.h>

#include "gemm_params.h" /* TPG_MAX_TP */
#include "shapes.h"

#define TPG_INT32_LIMIT ((int64_t)1 << 31)
/* The kernel rounds an extent up to whole tiles in int ((m + BM - 1) / BM, templates/kernels/scheduler.cuh; tiles
 * are at most 320 long on any side, bk included - the 128x320 cooperative_n, generator/kernels.py WIDE_BN): an extent
 * within a tile of 2^31 would wrap there. */
#define TPG_EXTENT_LIMIT (TPG_INT32_LIMIT - 512)
/* The kernel's walk over every stage's tiles (templates/kernels/scheduler.cuh `total`) is an int, and a CTA's share
 * of it adds the grid's stride before dividing (gemm_sm90_walk.cuh): total + stride must not pass 2^31 - 1. */
#define TPG_WALK_LIMIT (TPG_INT32_LIMIT - ((int64_t)1 << 16))

const char *tpg_dim_name(tpg_dim d) {
    switch (d) {
    case TPG_DIM_M: return "M";
    case TPG_DIM_N: return "N";
    case TPG_DIM_K: return "K";
    case TPG_DIM_NONE: break;
    }
    return "-";
}

static int64_t pick(tpg_dim d, int64_t m, int64_t n, int64_t k) {
    return d == TPG_DIM_M ? m : d == TPG_DIM_N ? n : d == TPG_DIM_K ? k : 0;
}
int64_t tpg_shapes_global(const tpg_shapes *s, tpg_dim d) { return pick(d, s->m, s->n, s->k); }
int64_t tpg_shapes_local(const tpg_shapes *s, tpg_dim d) { return pick(d, s->local_m, s->local_n, s->local_k); }
int64_t tpg_shapes_stage(const tpg_shapes *s, tpg_dim d) { return pick(d, s->stage_m, s->stage_n, s->stage_k); }

/* Is global dim d split across devices in the local problem? */
static int local_split(const tpg_schedule_table *t, tpg_dim d) {
    return (t->shard_a == d && t->rotating != TPG_OPERAND_A) || (t->shard_b == d && t->rotating != TPG_OPERAND_B);
}

void tpg_shapes_compute(const tpg_schedule_table *t, int tp, int64_t m, int64_t n, int64_t k, int64_t l,
                        tpg_shapes *s) {
    *s = (tpg_shapes){.m = m, .n = n, .k = k, .l = l, .tp = tp};
    s->local_m = local_split(t, TPG_DIM_M) ? m / tp : m;
    s->local_n = local_split(t, TPG_DIM_N) ? n / tp : n;
    s->local_k = local_split(t, TPG_DIM_K) ? k / tp : k;
    s->stage_m = s->local_m;
    s->stage_n = s->local_n;
    s->stage_k = s->local_k;
    if (t->stage_dim == TPG_DIM_M) s->stage_m /= tp;
    if (t->stage_dim == TPG_DIM_N) s->stage_n /= tp;

    /* Shards. Operands: rows split when sharded along their rows dim, columns (K) when along K. */
    s->a_rows = t->shard_a == TPG_DIM_M ? m / tp : m;
    s->a_cols = t->shard_a == TPG_DIM_K ? k / tp : k;
    s->b_rows = t->shard_b == TPG_DIM_N ? n / tp : n;
    s->b_cols = t->shard_b == TPG_DIM_K ? k / tp : k;
    /* D shard: the local output, divided along shard_d where the local output is still whole. */
    s->d_rows = s->local_m;
    s->d_cols = s->local_n;
    if (t->shard_d == TPG_DIM_M && s->local_m == m) s->d_rows = m / tp;
    if (t->shard_d == TPG_DIM_N && s->local_n == n) s->d_cols = n / tp;
}

/* Checks `value % tp == 0`, naming the dim, the schedule and why it needs the division. */
static int divisible(int64_t value, const char *name, int tp, const char *sched, char operand, char *msg,
                     size_t size) {
    if (value % tp == 0) return 1;
    if (msg && size)
        snprintf(msg, size, "%s = %lld must be divisible by tp = %d: %s shards %c along %s", name, (long long)value,
                 tp, sched, operand, name);
    return 0;
}

tpg_status tpg_shapes_init(const tpg_schedule_table *t, int tp, int64_t m, int64_t n, int64_t k, int64_t l,
                           size_t ab_size, tpg_shapes *s, char *msg, size_t msg_size) {
    if (msg && msg_size) msg[0] = '\0';
    const int64_t ext[4] = {m, n, k, l};
    const char *names[4] = {"M", "N", "K", "L"};
    for (int i = 0; i < 4; i++) {
        if (ext[i] < 1) {
            if (msg) snprintf(msg, msg_size, "%s = %lld must be >= 1", names[i], (long long)ext[i]);
            return TPG_ERR_SHAPE;
        }
    }
    if (l >= TPG_INT32_LIMIT) { /* the kernel's batch count is an int; also bounds the products below */
        if (msg) snprintf(msg, msg_size, "L = %lld must be < 2^31", (long long)l);
        return TPG_ERR_SHAPE;
    }
    if (tp < 1 || tp > TPG_MAX_TP) {
        if (msg) snprintf(msg, msg_size, "tp = %d must be in 1..%d", tp, TPG_MAX_TP);
        return TPG_ERR_SHAPE;
    }
    *s = (tpg_shapes){.m = m, .n = n, .k = k, .l = l, .tp = tp};

    /* Every division by tp first, each with the schedule's reason. */
    const tpg_dim dims[3] = {TPG_DIM_M, TPG_DIM_N, TPG_DIM_K};
    for (int i = 0; i < 3; i++) {
        tpg_dim d = dims[i];
        int64_t g = tpg_shapes_global(s, d);
        if (t->shard_a == d && !divisible(g, names[i], tp, t->name, 'A', msg, msg_size))
            return TPG_ERR_SHAPE;
        if (t->shard_b == d && !divisible(g, names[i], tp, t->name, 'B', msg, msg_size))
            return TPG_ERR_SHAPE;
        if (t->shard_d == d && !divisible(g, names[i], tp, t->name, 'D', msg, msg_size))
            return TPG_ERR_SHAPE;
    }
    tpg_shapes_compute(t, tp, m, n, k, l, s);
    int64_t local_stage = tpg_shapes_local(s, t->stage_dim);
    if (local_stage % tp != 0) {
        const char *dn = tpg_dim_name(t->stage_dim);
        if (msg)
            snprintf(msg, msg_size,
                     "local %s = %lld (global %s = %lld) must be divisible by tp = %d: %s splits each device's output "
                     "into tp blocks along %s",
                     dn, (long long)local_stage, dn, (long long)tpg_shapes_global(s, t->stage_dim), tp, t->name, dn);
        return TPG_ERR_SHAPE;
    }

    /* int32 ranges of the kernel parameters: per-stage extents (and their rounding up to tiles) and the rows of
     * each tensor map. */
    const int64_t stage[3] = {s->stage_m, s->stage_n, s->stage_k};
    for (int i = 0; i < 3; i++) {
        if (stage[i] > TPG_EXTENT_LIMIT) {
            if (msg)
                snprintf(msg, msg_size, "per-stage %s = %lld must be <= 2^31 - 512 (the kernel's tile counts are "
                         "32-bit; %s, tp = %d)", names[i], (long long)stage[i], t->name, tp);
            return TPG_ERR_SHAPE;
        }
    }
    /* Rows of each tensor map (batches stacked): < 2^31. Divide instead of multiplying: m, n and L can
     * each be up to 2^63 / 2^31, so the products could overflow int64 and wrap to "valid". */
    const int64_t rows_max = s->a_rows > s->b_rows ? s->a_rows : s->b_rows;
    const int64_t out_max = s->local_m > s->local_n ? s->local_m : s->local_n;
    const int64_t widest = rows_max > out_max ? rows_max : out_max;
    if (widest > (TPG_INT32_LIMIT - 1) / l) { /* widest * L >= 2^31 */
        if (msg)
            snprintf(msg, msg_size, "rows %lld x L %lld must be < 2^31 for the TMA maps (the longest of A's and B's "
                     "shard rows and the local M and N: M = %lld, N = %lld, tp = %d)", (long long)widest, (long long)l,
                     (long long)m, (long long)n, tp);
        return TPG_ERR_SHAPE;
    }

    /* Alignment: TMA needs a 16-byte row pitch on the K-major operands; outputs are written in
     * 8-element (16-byte for 16-bit types) chunks, so every stage's n is a multiple of 8. */
    if ((s->stage_k * (int64_t)ab_size) % 16 != 0) {
        if (msg)
            snprintf(msg, msg_size,
                     "%s = %lld (K-extent per device) x %zu bytes must be a multiple of 16 bytes for TMA (%s, tp = %d)",
                     s->stage_k == k ? "K" : "K/tp", (long long)s->stage_k, ab_size, t->name, tp);
        return TPG_ERR_ALIGNMENT;
    }
    if (s->stage_n % 8 != 0) {
        if (msg)
            snprintf(msg, msg_size, "per-stage n = %lld (N = %lld) must be a multiple of 8 (%s, tp = %d)",
                     (long long)s->stage_n, (long long)n, t->name, tp);
        return TPG_ERR_ALIGNMENT;
    }
    return TPG_OK;
}

int64_t tpg_shapes_operand_row0(const tpg_schedule_table *t, const tpg_shapes *s, tpg_operand x, int block) {
    const tpg_dim rows = x == TPG_OPERAND_A ? TPG_DIM_M : TPG_DIM_N;
    return t->rotating != x && t->stage_dim == rows ? (int64_t)block * tpg_shapes_stage(s, rows) : 0;
}

int64_t tpg_shapes_final_offset(const tpg_schedule_table *t, const tpg_shapes *s, int block) {
    if (t->shard_d == t->stage_dim) return 0;
    if (t->stage_dim == TPG_DIM_M) return (int64_t)block * s->stage_m * s->d_cols;
    if (t->stage_dim == TPG_DIM_N) return (int64_t)block * s->stage_n;
    return 0;
}

int64_t tpg_shapes_stage_tiles(const tpg_shapes *s, const tpg_kernel_desc *k) {
    return s->l * ((s->stage_m + k->bm - 1) / k->bm) * ((s->stage_n + k->bn - 1) / k->bn);
}

tpg_status tpg_shapes_init_for(const tpg_config_desc *c, int64_t m, int64_t n, int64_t k, int64_t l, tpg_shapes *s,
                               char *msg, size_t msg_size) {
    const int tp = c->schedule->tp;
    const tpg_status st = tpg_shapes_init(c->schedule, tp, m, n, k, l, tpg_dtype_size(c->kernel->dtype_ab), s, msg,
                                          msg_size);
    if (st != TPG_OK) return st;
    /* tile rows x L and tile columns each < 2^31 (rows x L above), so their product fits, and tp of them */
    const int64_t bm = c->kernel->bm, bn = c->kernel->bn, tiles = tpg_shapes_stage_tiles(s, c->kernel);
    if (tiles * tp > TPG_WALK_LIMIT) {
        if (msg)
            snprintf(msg, msg_size, "%d stages x %lld tiles (%lldx%lld, batches included) = %lld must be <= %lld "
                     "(2^31 - 2^16: the kernel's tile walk counts in 32-bit ints; %s)", tp, (long long)tiles,
                     (long long)bm, (long long)bn, (long long)(tiles * tp), (long long)TPG_WALK_LIMIT, c->name);
        return TPG_ERR_SHAPE;
    }
    return TPG_OK;
}

void tpg_shapes_shard(const tpg_schedule_table *t, const tpg_shapes *s, int rank, tpg_shard_shape *out) {
    *out = (tpg_shard_shape){
        .a_rows = s->a_rows, .a_cols = s->a_cols, .b_rows = s->b_rows, .b_cols = s->b_cols,
        .d_rows = s->d_rows, .d_cols = s->d_cols,
    };
    out->a_row0 = t->shard_a == TPG_DIM_M ? rank * s->a_rows : 0;
    out->a_col0 = t->shard_a == TPG_DIM_K ? rank * s->a_cols : 0;
    out->b_row0 = t->shard_b == TPG_DIM_N ? rank * s->b_rows : 0;
    out->b_col0 = t->shard_b == TPG_DIM_K ? rank * s->b_cols : 0;
    out->d_row0 = t->shard_d == TPG_DIM_M ? rank * s->d_rows : 0;
    out->d_col0 = t->shard_d == TPG_DIM_N ? rank * s->d_cols : 0;
}
