/* Lookup over the generated dispatch table (generated/dispatch.c; contract in tpgemm.h). */
#include <string.h>

#include "checks.h"
#include "tables.h"

int tpg_dispatch_count(void) { return tpg_num_dispatch; }

tpg_status tpg_dispatch_get(int i, tpg_dispatch_entry *out) {
    if (!out) TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "tpg_dispatch_get: out is NULL");
    if (i < 0 || i >= tpg_num_dispatch)
        TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "tpg_dispatch_get: index %d is outside 0..%d", i,
                 tpg_num_dispatch - 1);
    *out = tpg_dispatch[i];
    return TPG_OK;
}

static int str_matches(const char *want, const char *have) { return !want || strcmp(want, have) == 0; }

tpg_status tpg_dispatch_find(const char *model, const char *layer, int64_t m, int64_t n, int64_t k, tpg_dtype dtype,
                             const char *schedule, int tp, tpg_dispatch_entry *out) {
    if (!out) TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "tpg_dispatch_find: out is NULL");
    int best = -1;
    int64_t best_dist = 0;
    for (int i = 0; i < tpg_num_dispatch; i++) {
        const tpg_dispatch_entry *e = &tpg_dispatch[i];
        if (e->dtype != dtype || e->tp != tp || !str_matches(model, e->model) || !str_matches(layer, e->layer) ||
            !str_matches(schedule, e->schedule) || (n > 0 && e->n != n) || (k > 0 && e->k != k))
            continue;
        int64_t dist = m > 0 ? (e->m > m ? e->m - m : m - e->m) : 0;
        if (best < 0 || dist < best_dist) best = i, best_dist = dist;
    }
    if (best < 0)
        TPG_FAIL(NULL, TPG_ERR_UNKNOWN_CONFIG, "no dispatch row for model %.64s, layer %.64s, dtype %s, tp %d",
                 model ? model : "(any)", layer ? layer : "(any)", tpg_dtype_name(dtype), tp);
    *out = tpg_dispatch[best];
    return TPG_OK;
}
