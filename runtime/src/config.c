/* Lookup over the generated config table (generated/registry.c, types in tables.h). */
#include <string.h>

#include "shapes.h"
#include "tables.h"

int tpg_config_count(void) { return tpg_num_configs; }

tpg_status tpg_config_get(int i, tpg_config_info *out) {
    if (!out || i < 0 || i >= tpg_num_configs) return TPG_ERR_INVALID_ARGUMENT;
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
    return TPG_OK;
}

/* Candidates of a default pick. f16-accumulating configs (`acc: f16`) trade precision for the seed's
 * numerics, fp8 configs with `fp8_promote` and configs with fp32 partials speed for precision, and pulled
 * partials (`pull_partials`) are the experiment against the pushed ones: all four are only ever run by name. */
int tpg__config_pickable(const tpg_config_desc *c) {
    return c->kernel->dtype_acc == TPG_DTYPE_FP32 && c->kernel->fp8_promote == 0 &&
           c->kernel->dtype_partial == c->kernel->dtype_cd && !c->pull_partials;
}

static int config_matches(const tpg_config_desc *c, const char *schedule, int tp, tpg_dtype dtype) {
    return (!schedule || strcmp(c->schedule->name, schedule) == 0) && (tp <= 0 || c->schedule->tp == tp) &&
           c->kernel->dtype_ab == dtype && tpg__config_pickable(c);
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

/* Tiles of c's persistent walk on one GPU for a GEMM of global m x n x k: tp stages of the per-stage output
 * (shapes.c), each cut into BM x BN tiles. */
static int64_t walk_tiles(const tpg_config_desc *c, int64_t m, int64_t n, int64_t k) {
    tpg_shapes s;
    tpg_shapes_compute(c->schedule, c->schedule->tp, m, n, k, 1, &s);
    const int64_t bm = c->kernel->bm, bn = c->kernel->bn;
    return (int64_t)c->schedule->tp * ((s.stage_m + bm - 1) / bm) * ((s.stage_n + bn - 1) / bn);
}

/* The share of the SMs' tile slots a walk of `tiles` fills: tiles over whole waves of sms tiles. */
static double wave_use(int64_t tiles, int sms) {
    const int64_t waves = (tiles + sms - 1) / sms;
    return waves > 0 ? (double)tiles / (double)(waves * sms) : 0.0;
}

tpg_status tpg_config_pick_sms(const char *schedule, int tp, tpg_dtype dtype, int64_t m, int64_t n, int64_t k,
                               int sms, int *index) {
    if (!index) return TPG_ERR_INVALID_ARGUMENT;
    int preferred = -1, fallback = -1;
    for (int i = 0; i < tpg_num_configs; i++) {
        const tpg_config_desc *c = &tpg_configs[i];
        if (!config_matches(c, schedule, tp, dtype)) continue;
        if (preferred < 0 && config_preferred(c, k)) preferred = i;
        else if (fallback < 0 && !config_preferred(c, k)) fallback = i;
    }
    if (preferred < 0 && fallback < 0) return TPG_ERR_UNKNOWN_CONFIG;
    *index = preferred >= 0 ? preferred : fallback;
    /* A preferred config's last wave may be nearly empty where the fallback's smaller tiles fill theirs (few
     * tokens: 70B-qkv at M = 2048 walks 2.42 waves of 128x256 tiles, 4.85 of 128x128). */
    if (preferred >= 0 && fallback >= 0 && m > 0 && n > 0 && k > 0 && m < TPG_PICK_EXTENT_LIMIT &&
        n < TPG_PICK_EXTENT_LIMIT && sms > 0) {
        const double p = wave_use(walk_tiles(&tpg_configs[preferred], m, n, k), sms);
        const double f = wave_use(walk_tiles(&tpg_configs[fallback], m, n, k), sms);
        if (f > p + TPG_PICK_WAVE_MARGIN) *index = fallback;
    }
    return TPG_OK;
}

/* No CUDA call: a pick is pure (a dry run, a process that forks later), the same on every host. */
tpg_status tpg_config_pick(const char *schedule, int tp, tpg_dtype dtype, int64_t m, int64_t n, int64_t k,
                           int *index) {
    return tpg_config_pick_sms(schedule, tp, dtype, m, n, k, TPG_PICK_SMS, index);
}

tpg_status tpg_config_find(const char *name, const char *schedule, int tp, tpg_dtype dtype, int *index) {
    if (!index) return TPG_ERR_INVALID_ARGUMENT;
    if (!name) return tpg_config_pick(schedule, tp, dtype, 0, 0, 0, index);
    for (int i = 0; i < tpg_num_configs; i++) {
        if (strcmp(tpg_configs[i].name, name) == 0) {
            *index = i;
            return TPG_OK;
        }
    }
    return TPG_ERR_UNKNOWN_CONFIG;
}
