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

double tpg__m_ratio(int64_t row_m, int64_t m) {
    if (m <= 0 || row_m <= 0) return 1.0;
    return row_m > m ? (double)row_m / (double)m : (double)m / (double)row_m;
}

tpg_status tpg_dispatch_find(const char *model, const char *layer, int64_t m, int64_t n, int64_t k, tpg_dtype dtype,
                             const char *schedule, int tp, tpg_dispatch_entry *out) {
    if (!out) TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "tpg_dispatch_find: out is NULL");
    if (!tpg__dtype_known(dtype)) /* as the config lookups answer it: no row could match a value that is no dtype */
        TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "tpg_dispatch_find: dtype %d is not a tpg_dtype (%d..%d)", (int)dtype,
                 (int)TPG_DTYPE_BF16, (int)TPG_DTYPE_FP32);
    int best = -1;
    double best_dist = 0;
    for (int i = 0; i < tpg_num_dispatch; i++) {
        const tpg_dispatch_entry *e = &tpg_dispatch[i];
        if (e->dtype != dtype || e->tp != tp || !str_matches(model, e->model) || !str_matches(layer, e->layer) ||
            !str_matches(schedule, e->schedule) || (n > 0 && e->n != n) || (k > 0 && e->k != k))
            continue;
        const double dist = tpg__m_ratio(e->m, m);
        if (best < 0 || dist < best_dist) best = i, best_dist = dist;
    }
    if (best < 0)
        TPG_FAIL(NULL, TPG_ERR_UNKNOWN_CONFIG, "no dispatch row for model %.64s, layer %.64s, dtype %s, tp %d",
                 model ? model : "(any)", layer ? layer : "(any)", tpg_dtype_name(dtype), tp);
    return tpg__dispatch_resolve(&tpg_dispatch[best], m, out);
}

int tpg__tuned_row_reaches(int64_t tuned_m, int64_t m) {
    return m <= 0 || (m <= tuned_m * TPG_TUNED_M_REACH && tuned_m <= m * TPG_TUNED_M_REACH);
}

/* A tuned row measured its kernel at its own M only: a token count past TPG_TUNED_M_REACH of it gets the schedule's
 * default pick for that M instead (the tuned 128x192 of a prefill M is no kernel for decode, nor the reverse). An
 * untuned row holds the generator's default pick for its own M: for another M, the pick for that one. */
tpg_status tpg__dispatch_resolve(const tpg_dispatch_entry *row, int64_t m, tpg_dispatch_entry *out) {
    *out = *row;
    if (m <= 0 || m == row->m || (row->tuned && tpg__tuned_row_reaches(row->m, m))) return TPG_OK;
    int pick = -1;
    const tpg_status st = tpg_config_pick(row->schedule, row->tp, row->dtype, m, row->n, row->k, &pick);
    if (st != TPG_OK) return st; /* its message set by tpg_config_pick */
    out->m = m, out->config = pick, out->tuned = 0;
    return TPG_OK;
}
