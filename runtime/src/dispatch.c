/* Lookup over the generated dispatch table (generated/dispatch.c; contract in tpgemm.h). */
#include <stdio.h>
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

/* What a lookup asks: its filters (NULL strings, n and k <= 0 match any row). */
typedef struct {
    const char *model, *layer, *schedule;
    int64_t n, k;
    tpg_dtype dtype;
    int tp;
} lookup;

/* The filters of q that row e fails, one bit each, in the order of MISS_NAMES: 0 where e matches. The one rule of a
 * match, for the lookup and for its miss message alike. */
enum { MISS_FIELDS = 7 };
static const char *const MISS_NAMES[MISS_FIELDS] = {"model", "layer", "dtype", "tp", "schedule", "n", "k"};
static const int MISS_WEIGHTS[MISS_FIELDS] = {4, 2, 1, 1, 1, 1, 1}; /* the nearest row: model and layer weigh most */
static unsigned row_misses(const tpg_dispatch_entry *e, const lookup *q) {
    const int miss[MISS_FIELDS] = {!str_matches(q->model, e->model), !str_matches(q->layer, e->layer),
                                   e->dtype != q->dtype, e->tp != q->tp, !str_matches(q->schedule, e->schedule),
                                   q->n > 0 && e->n != q->n, q->k > 0 && e->k != q->k};
    unsigned bits = 0;
    for (unsigned f = 0; f < MISS_FIELDS; f++) bits |= (unsigned)miss[f] << f;
    return bits;
}

/* The failure of a lookup that matched no row: what was asked (every filter given, n, k and schedule included) and
 * the nearest row, with the fields it differs in - the key that did not match, not only the model and layer, which a
 * row may well have (a preset whose extents are not the n or k asked). Nearest: the fewest differing fields, model
 * and layer weighing most; the first of equals. */
static tpg_status fail_no_row(const lookup *q) {
    char asked[512];
    int len = snprintf(asked, sizeof asked, "model %.64s, layer %.64s, dtype %s, tp %d", q->model ? q->model : "(any)",
                       q->layer ? q->layer : "(any)", tpg_dtype_name(q->dtype), q->tp);
    if (q->schedule) len += snprintf(asked + len, sizeof asked - (size_t)len, ", schedule %.128s", q->schedule);
    if (q->n > 0) len += snprintf(asked + len, sizeof asked - (size_t)len, ", n %lld", (long long)q->n);
    if (q->k > 0) snprintf(asked + len, sizeof asked - (size_t)len, ", k %lld", (long long)q->k);
    int near = -1, near_score = 0;
    unsigned near_misses = 0;
    for (int i = 0; i < tpg_num_dispatch; i++) {
        const unsigned bits = row_misses(&tpg_dispatch[i], q);
        int score = 0;
        for (unsigned f = 0; f < MISS_FIELDS; f++) score += (int)(bits >> f & 1u) * MISS_WEIGHTS[f];
        if (near < 0 || score < near_score) near = i, near_score = score, near_misses = bits;
    }
    if (near < 0)
        TPG_FAIL(NULL, TPG_ERR_UNKNOWN_CONFIG, "no dispatch row for %s: the table is empty (the schedules file it was "
                 "generated from has no models: or tuned: entries)", asked);
    const tpg_dispatch_entry *e = &tpg_dispatch[near];
    char differs[96] = "";
    for (size_t f = 0, at = 0; f < MISS_FIELDS; f++)
        if (near_misses >> f & 1u)
            at += (size_t)snprintf(differs + at, sizeof differs - at, at ? ", %s" : "%s", MISS_NAMES[f]);
    TPG_FAIL(NULL, TPG_ERR_UNKNOWN_CONFIG,
             "no dispatch row for %s; the nearest row differs in %s: model %s, layer %s, dtype %s, tp %d, "
             "schedule %s, n %lld, k %lld (tpg_dispatch_count / tpg_dispatch_get list every row)", asked, differs,
             e->model[0] ? e->model : "(a tuned shape)", e->layer[0] ? e->layer : "-", tpg_dtype_name(e->dtype),
             e->tp, e->schedule, (long long)e->n, (long long)e->k);
}

tpg_status tpg_dispatch_find(const char *model, const char *layer, int64_t m, int64_t n, int64_t k, tpg_dtype dtype,
                             const char *schedule, int tp, tpg_dispatch_entry *out) {
    if (!out) TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "tpg_dispatch_find: out is NULL");
    if (!tpg__dtype_known(dtype)) /* as the config lookups answer it: no row could match a value that is no dtype */
        TPG_FAIL(NULL, TPG_ERR_INVALID_ARGUMENT, "tpg_dispatch_find: dtype %d is not a tpg_dtype (%d..%d)", (int)dtype,
                 (int)TPG_DTYPE_BF16, (int)TPG_DTYPE_FP32);
    const lookup q = {model, layer, schedule, n, k, dtype, tp};
    int best = -1;
    double best_dist = 0;
    for (int i = 0; i < tpg_num_dispatch; i++) {
        const tpg_dispatch_entry *e = &tpg_dispatch[i];
        if (row_misses(e, &q)) continue;
        const double dist = tpg__m_ratio(e->m, m);
        if (best < 0 || dist < best_dist) best = i, best_dist = dist;
    }
    if (best < 0) return fail_no_row(&q);
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
