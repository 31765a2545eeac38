/* The GPU tests' configs by route of reduce-scatter partials: the config of a schedule's default family on a given
 * route, found through the public config table (tpg_config_get), so that a test covers every route whichever one
 * the shipped defaults take (schedules.yaml: a family and its by_name twins <family>_push / _pull / _ce). */
#ifndef TPG_TESTS_ROUTE_CONFIG_H
#define TPG_TESTS_ROUTE_CONFIG_H

#include <string.h>

#include "tpgemm.h"

typedef enum { ROUTE_PUSH, ROUTE_PULL, ROUTE_CE } partial_route; /* bench/tpgemm_lib.py ROUTES: push, pull, ce */

static inline partial_route route_of(const tpg_config_info *c) {
    return c->pull_partials ? ROUTE_PULL : c->copy_engine_partials ? ROUTE_CE : ROUTE_PUSH;
}

/* *index: the config that runs the bf16 default of `schedule` at tp (tpg_config_find without a name)'s kernel with its
 * partials moved by `route` - the default itself where it takes that route, else its family's twin (a name that
 * begins with the family's, <family>_<route>_tp<N>) before any other on the same kernel. TPG_ERR_UNKNOWN_CONFIG if
 * none. */
static inline tpg_status route_config(const char *schedule, int tp, partial_route route, int *index) {
    int def;
    tpg_config_info want, c;
    tpg_status st = tpg_config_find(NULL, schedule, tp, TPG_DTYPE_BF16, &def);
    if (st == TPG_OK) st = tpg_config_get(def, &want);
    if (st != TPG_OK) return st;
    if (route_of(&want) == route) {
        *index = def;
        return TPG_OK;
    }
    const char *cut = strrchr(want.name, '_'); /* <family>_tp<N> */
    const size_t family = cut ? (size_t)(cut - want.name) : strlen(want.name);
    for (int pass = 0; pass < 2; pass++) /* the family's twin first */
        for (int i = 0; i < tpg_config_count(); i++) {
            if (tpg_config_get(i, &c) != TPG_OK || route_of(&c) != route || c.tp != tp) continue;
            if (strcmp(c.schedule, want.schedule) || strcmp(c.kernel, want.kernel)) continue;
            if (pass == 0 && strncmp(c.name, want.name, family)) continue;
            *index = i;
            return TPG_OK;
        }
    return TPG_ERR_UNKNOWN_CONFIG;
}

#endif
