/* Lookup over the generated config table (generated/registry.c, types in tables.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "checks.h"
#include "plan.h"
#include "shapes.h"
#include "spread.h"
#include "stream_k.h"
#include "tables.h"

int tpg_config_count(void) { return tpg_num_configs; }

tpg_status tpg_config_get(int i, tpg_config_info *out) {
    if (!out) TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "tpg_config_get: out is NULL");
    if (i < 0 || i >= tpg_num_configs)
        TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "tpg_config_get: index %d is outside 0..%d", i, tpg_num_configs - 1);
    const tpg_config_desc *c = &tpg_configs[i];
    out->name = c->name;
    out->schedule = c->schedule->name;
    out->kernel = c->kernel->name;
    out->tp = c->schedule->tp;
    out->dtype = c->kernel->dtype_ab;
    out->bm = c->kernel->bm;
    out->bn = c->kernel->bn;
    out->bk = c->kernel->bk;
    out->stages = c->kernel->stages;
    out->acc = c->kernel->dtype_acc;
    out->fp8_promote = c->kernel->fp8_promote;
    out->partials = c->kernel->dtype_partial;
    out->pull_partials = c->pull_partials;
    out->copy_engine_partials = c->copy_engine_partials;
    out->wave_weight = c->wave_weight;
    out->stream_k = c->kernel->stream_k;
    out->by_name = c->by_name;
    return TPG_OK;
}

/* Candidates of a default pick. f16-accumulating configs (`acc: f16`) trade precision for the seed's
 * numerics, fp8 configs with `fp8_promote` and configs with fp32 partials speed for precision: those three are only
 * ever run by name, and so are the configs schedules.yaml marks `by_name` (experiments, and the twins that move
 * partials another way - pulled, by copy engine - against the defaults). How a config moves its partials is not a
 * reason by itself: a family of pulled or copy-engine partials without `by_name` is a candidate like any other. A tuned
 * choice's config runs through its dispatch row (tpg_dispatch_find) or by name, never as a default. */
int tpg__config_pickable(const tpg_config_desc *c) {
    return c->kernel->dtype_acc == TPG_DTYPE_FP32 && c->kernel->fp8_promote == 0 &&
           c->kernel->dtype_partial == c->kernel->dtype_cd && !c->by_name && !c->tuned &&
           (!c->kernel->stream_k || c->schedule->tp == 1);
}

/* A candidate of the schedule / tp / dtype: a stream-K one (split_k's) or one of every other step. */
static int candidate(const tpg_config_desc *c, const char *schedule, int tp, tpg_dtype dtype, int stream_k) {
    return (!schedule || strcmp(c->schedule->name, schedule) == 0) && (tp <= 0 || c->schedule->tp == tp) &&
           c->kernel->dtype_ab == dtype && tpg__config_pickable(c) && !c->kernel->stream_k == !stream_k;
}

static int config_matches(const tpg_config_desc *c, const char *schedule, int tp, tpg_dtype dtype) {
    return candidate(c, schedule, tp, dtype, 0);
}

/* Does c's preference hold for a GEMM with this K (k <= 0: shape unknown, so only a preference for
 * every shape holds)? Reduce-scatter splits K over the ranks; the per-stage K is what the kernel sees. */
static int config_preferred(const tpg_config_desc *c, int64_t k) {
    long long least = c->prefer_from_local_k;
    if (least <= 0) return 0;
    if (least == 1) return 1;
    if (k <= 0) return 0;
    int64_t local_k = c->schedule->comm == TPG_COMM_REDUCE_SCATTER ? k / c->schedule->tp : k;
    return local_k >= least;
}

/* The walk order of c's launch on one GPU over NVLink for the per-stage output in s (plan.c). */
static tpg_walk_order config_walk_order(const tpg_config_desc *c, const tpg_shapes *s, int sms) {
    const tpg_walk_facts w =
        tpg_walk_facts_for(c->schedule, c->kernel, s->stage_m, s->stage_n, s->stage_k, 1, sms, 0, 0);
    return tpg_plan_walk_order(&w);
}

/* Tiles of c's persistent walk on one GPU over NVLink (plan.h: tpg_walk_tile_count): tp stages of the per-stage
 * output in s (shapes.c), each cut into BM x BN tiles - or, where the walk is gathered or one-hop, one GEMM of all
 * their rows. */
static int64_t walk_tiles(const tpg_config_desc *c, const tpg_shapes *s, int sms) {
    return tpg_walk_tile_count(c->kernel, c->schedule->tp, s->stage_m, s->stage_n, 1,
                               tpg_walk_is_one_gemm(config_walk_order(c, s, sms)));
}

/* What the wave check compares: the share of the tile slots of the walk's whole waves of sms tiles that the output
 * fills, a partial tile counting the elements it holds (M = 256 at TP = 4: four stages of 64 rows, gathered). */
static double walk_fill(const tpg_config_desc *c, int64_t m, int64_t n, int64_t k, int sms) {
    tpg_shapes s;
    tpg_shapes_compute(c->schedule, c->schedule->tp, m, n, k, 1, &s);
    const int64_t waves = (walk_tiles(c, &s, sms) + sms - 1) / sms;
    const double slots = (double)waves * sms * c->kernel->bm * c->kernel->bn;
    return waves > 0 ? (double)c->schedule->tp * (double)s.stage_m * (double)s.stage_n / slots : 0.0;
}

/* What the wave check compares: walk_fill weighted by the config's wave_weight percent (100 without one). */
static double wave_score(const tpg_config_desc *c, int64_t m, int64_t n, int64_t k, int sms) {
    return walk_fill(c, m, n, k, sms) * (c->wave_weight ? c->wave_weight : 100) / 100;
}

/* The wave check's order of equals and of the first-by-name fallback: configs without a wave_weight by name (the
 * table's order), then the wave-weighted ones by name. */
static int wave_order_before(const tpg_config_desc *a, int ia, const tpg_config_desc *b, int ib) {
    if ((a->wave_weight != 0) != (b->wave_weight != 0)) return a->wave_weight == 0;
    return ia < ib;
}

/* The config not preferred (other than `base`) with the best wave score, the first in wave order of equals; -1 if
 * none. */
static int best_fallback(const char *schedule, int tp, tpg_dtype dtype, int64_t m, int64_t n, int64_t k, int sms,
                         int base, double *score) {
    int best = -1;
    for (int i = 0; i < tpg_num_configs; i++) {
        const tpg_config_desc *c = &tpg_configs[i];
        if (i == base || !config_matches(c, schedule, tp, dtype) || config_preferred(c, k)) continue;
        const double s = wave_score(c, m, n, k, sms);
        if (best < 0 || s > *score || (s == *score && wave_order_before(c, i, &tpg_configs[best], best))) {
            best = i;
            *score = s;
        }
    }
    return best;
}

/* Tiles of c's walk for a GEMM of global m x n x k on sms SMs. */
static int64_t config_walk_tiles(const tpg_config_desc *c, int64_t m, int64_t n, int64_t k, int sms) {
    tpg_shapes s;
    tpg_shapes_compute(c->schedule, c->schedule->tp, m, n, k, 1, &s);
    return walk_tiles(c, &s, sms);
}

/* Rows a stage of c's launch (plan.h: tpg_walk_launch_rows) for a GEMM of global m x n x k on sms SMs. */
static int64_t config_launch_rows(const tpg_config_desc *c, int64_t m, int64_t n, int64_t k, int sms) {
    tpg_shapes s;
    tpg_shapes_compute(c->schedule, c->schedule->tp, m, n, k, 1, &s);
    return tpg_walk_launch_rows(config_walk_order(c, &s, sms), c->schedule->tp, s.stage_m);
}

/* The row rule, after the wave check: a config not preferred whose tiles have fewer rows than the pick's, and either
 * the pick's columns and as many tiles in its walk - the rows a stage (or a one-GEMM walk's rows) fit its tiles as
 * well as the pick's: the same walk with less work a tile - or tiles that hold all the launch's rows in one row of
 * tiles, where the pick's taller tiles compute rows that do not exist; the one with the fewest rows (of equals the
 * first in wave order: those without a wave_weight first, then by name) replaces the pick. Decode: at M = 16-64 the
 * ping-pong 64x128 ran 1.04-2.4x every 128-row kernel on every local GEMM measured (BENCHMARKS.md, "Decode";
 * docs/perf_notes/2026-12-03-b.md), which the wave check missed where both fill one thin row of tiles (its weight
 * and margin) and where the 64x128 walks more than a wave (70B-fc1 at 16 rows: 224 tiles against the wide kernel's
 * 112 in one wave, 1.37x it). */
static int fewest_rows(const char *schedule, int tp, tpg_dtype dtype, int64_t m, int64_t n, int64_t k, int sms,
                       int pick) {
    const tpg_kernel_desc *pk = tpg_configs[pick].kernel;
    const int64_t tiles = config_walk_tiles(&tpg_configs[pick], m, n, k, sms);
    int best = pick;
    for (int i = 0; i < tpg_num_configs; i++) {
        const tpg_config_desc *c = &tpg_configs[i];
        if (i == pick || !config_matches(c, schedule, tp, dtype) || config_preferred(c, k) || c->kernel->bm >= pk->bm)
            continue;
        const int same_walk = c->kernel->bn == pk->bn && config_walk_tiles(c, m, n, k, sms) == tiles;
        if (!same_walk && config_launch_rows(c, m, n, k, sms) > c->kernel->bm) continue;
        const int bm = tpg_configs[best].kernel->bm;
        const int before = c->kernel->bm == bm && wave_order_before(c, i, &tpg_configs[best], best);
        if (best == pick || c->kernel->bm < bm || before) best = i;
    }
    return best;
}

/* The split rule, last (TPG_PICK_SPLIT_*): the first stream-K config by name replaces the pick where its one-stage
 * launch (TP = 1) has few tiles with long K - at most TPG_PICK_SPLIT_SHARE percent of the SMs, of at least
 * TPG_PICK_SPLIT_KBLOCKS k-blocks each - or one row of tiles, at most a wave but too many to spread (spread.h), of at
 * least TPG_PICK_SPLIT_LONG_KBLOCKS, and the kernel would split it (stream_k.h). Decode: the ping-pong 64x128 leaves
 * most SMs idle there, each CTA streaming its tile's B alone. */
static int split_k(const char *schedule, int tp, tpg_dtype dtype, int64_t m, int64_t n, int64_t k, int sms, int pick) {
    const tpg_schedule_table *sched = tpg_configs[pick].schedule; /* the pick's: not another of a NULL (any) schedule */
    if (sched->tp != 1) return pick;                                /* nor a TP = 1 config for a tp <= 0 (any) pick */
    for (int i = 0; i < tpg_num_configs; i++) {
        const tpg_config_desc *c = &tpg_configs[i];
        if (c->schedule != sched || !candidate(c, schedule, tp, dtype, 1)) continue;
        tpg_shapes s;
        tpg_shapes_compute(c->schedule, 1, m, n, k, 1, &s);
        const int64_t tiles = walk_tiles(c, &s, sms), kb = (s.stage_k + c->kernel->bk - 1) / c->kernel->bk;
        const int few = tiles * 100 <= (int64_t)sms * TPG_PICK_SPLIT_SHARE && kb >= TPG_PICK_SPLIT_KBLOCKS;
        const int long_row = s.stage_m <= c->kernel->bm && tiles <= sms && !tpg_spreads(tiles, 1, sms) &&
                             kb >= TPG_PICK_SPLIT_LONG_KBLOCKS;
        if ((few || long_row) && tpg_sk_launch_tiles(tiles, sms, kb, 1) > 0) return i;
    }
    return pick;
}

/* Why c is never a default pick (tpg__config_pickable), as schedules.yaml spells it. */
static const char *unpickable_reason(const tpg_config_desc *c) {
    if (c->kernel->dtype_acc != TPG_DTYPE_FP32) return "acc: f16";
    if (c->kernel->fp8_promote) return "fp8_promote";
    if (c->kernel->dtype_partial != c->kernel->dtype_cd) return "partials: f32";
    if (c->by_name) return "by_name";
    if (c->tuned) return "a tuned choice's config, run through its dispatch row";
    if (c->schedule->tp == 1) return "stream_k: at tp 1 it only replaces a pick (the split rule)";
    return "stream_k: at tp >= 2 run by name only";
}

/* The failure of a pick that found no candidate, saying why: no config of the schedule / tp / dtype is generated
 * (the TPs that are, where the schedule and dtype have some), or each that is runs by name only (one named). */
static tpg_status fail_no_pick(const char *schedule, int tp, tpg_dtype dtype) {
    const char *sched = schedule ? schedule : "(any)"; /* printed '%.128s': a caller's string of any length */
    char at[32] = "any tp";
    if (tp > 0) snprintf(at, sizeof at, "tp %d", tp);
    uint64_t other_tps = 0; /* bit t: a config of tp t (the generator's tp are 1..8) */
    int named = -1;
    for (int i = 0; i < tpg_num_configs; i++) {
        const tpg_config_desc *c = &tpg_configs[i];
        if ((schedule && strcmp(c->schedule->name, schedule) != 0) || c->kernel->dtype_ab != dtype) continue;
        if (tp <= 0 || c->schedule->tp == tp) {
            if (named < 0) named = i;
        } else if (c->schedule->tp < 64) {
            other_tps |= 1ull << c->schedule->tp;
        }
    }
    char tps[128] = "";
    for (int t = 1, len = 0; t < 64 && len < (int)sizeof tps - 8; t++) /* room for ", 63" and its NUL */
        if (other_tps >> t & 1) len += snprintf(tps + len, sizeof tps - (size_t)len, len ? ", %d" : "%d", t);
    if (named >= 0)
        TPG_FAIL(NULL, TPG_ERR_UNKNOWN_CONFIG,
                 "no config of schedule '%.128s', %s, dtype %s is a default pick: each runs by name only "
                 "(e.g. '%s': %s)",
                 sched, at, tpg_dtype_name(dtype), tpg_configs[named].name, unpickable_reason(&tpg_configs[named]));
    if (other_tps)
        TPG_FAIL(NULL, TPG_ERR_UNKNOWN_CONFIG,
                 "no config of schedule '%.128s', dtype %s is generated at %s (the generated ones have tp %s)", sched,
                 tpg_dtype_name(dtype), at, tps);
    TPG_FAIL(NULL, TPG_ERR_UNKNOWN_CONFIG, "no config of schedule '%.128s', dtype %s is generated", sched,
             tpg_dtype_name(dtype));
}

/* What a pick's arguments must be before any arithmetic on them (the wave check's products stay in 64 bits below
 * these extents and SM counts). */
static tpg_status check_pick_args(tpg_dtype dtype, int sms, const int *index) {
    if (!index) TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "the default pick: index is NULL");
    if (!tpg__dtype_known(dtype))
        TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "the default pick: dtype %d is not a tpg_dtype (%d..%d)", (int)dtype,
                 (int)TPG_DTYPE_BF16, (int)TPG_DTYPE_FP32);
    if (sms < 0 || sms > TPG_PICK_SMS_LIMIT)
        TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "the default pick: sms %d is outside 0..%d (0: the K rule alone)",
                 sms, TPG_PICK_SMS_LIMIT);
    return TPG_OK;
}

tpg_status tpg_config_pick_sms(const char *schedule, int tp, tpg_dtype dtype, int64_t m, int64_t n, int64_t k,
                               int sms, int *index) {
    TPG_CHECK(check_pick_args(dtype, sms, index));
    int preferred = -1, fallback = -1;
    for (int i = 0; i < tpg_num_configs; i++) {
        const tpg_config_desc *c = &tpg_configs[i];
        if (!config_matches(c, schedule, tp, dtype)) continue;
        if (config_preferred(c, k)) {
            if (preferred < 0) preferred = i;
        } else if (fallback < 0 || wave_order_before(c, i, &tpg_configs[fallback], fallback)) {
            fallback = i; /* the first by name without a wave_weight, if there is one */
        }
    }
    if (preferred < 0 && fallback < 0) return fail_no_pick(schedule, tp, dtype);
    *index = preferred >= 0 ? preferred : fallback;
    /* The pick's last wave may be nearly empty where another config's tiles fill theirs (few tokens: 70B-qkv at
     * M = 2048 walks 2.42 waves of 128x256 tiles, 4.85 of 128x128; at M = 512 0.61 waves of 128x256 or 128x128,
     * 0.97 of 128x160; at M = 128, TP = 2, 128-row tiles hold 64 rows). Past the extent limit (no GEMM a GPU holds)
     * the K rule alone decides. */
    if (m > 0 && n > 0 && k > 0 && m < TPG_PICK_EXTENT_LIMIT && n < TPG_PICK_EXTENT_LIMIT &&
        k < TPG_PICK_EXTENT_LIMIT && sms > 0) {
        double s = 0.0;
        const int best = best_fallback(schedule, tp, dtype, m, n, k, sms, *index, &s);
        const double pick = wave_score(&tpg_configs[*index], m, n, k, sms);
        if (best >= 0 && (s > pick + TPG_PICK_WAVE_MARGIN || s > pick * TPG_PICK_WAVE_RATIO)) *index = best;
        *index = fewest_rows(schedule, tp, dtype, m, n, k, sms, *index);
        *index = split_k(schedule, tp, dtype, m, n, k, sms, *index);
    }
    return TPG_OK;
}

/* No CUDA call: a pick is pure (a dry run, a process that forks later), the same on every host. */
tpg_status tpg_config_pick(const char *schedule, int tp, tpg_dtype dtype, int64_t m, int64_t n, int64_t k,
                           int *index) {
    return tpg_config_pick_sms(schedule, tp, dtype, m, n, k, TPG_PICK_SMS, index);
}

tpg_status tpg_config_find(const char *name, const char *schedule, int tp, tpg_dtype dtype, int *index) {
    if (!index) TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "tpg_config_find: index is NULL");
    if (!name) return tpg_config_pick(schedule, tp, dtype, 0, 0, 0, index);
    for (int i = 0; i < tpg_num_configs; i++) {
        if (strcmp(tpg_configs[i].name, name) == 0) {
            *index = i;
            return TPG_OK;
        }
    }
    TPG_FAIL(NULL, TPG_ERR_UNKNOWN_CONFIG, "no config is named '%.128s' (tpgemm --list prints them)", name);
}
