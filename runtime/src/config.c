/* Lookup over the generated config table (generated/registry.c, types in tables.h). */
#include <string.h>

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
    return TPG_OK;
}

/* name != NULL: exact name match. Otherwise the first config whose schedule (NULL = any), tp (<= 0 =
 * any) and operand dtype match. */
tpg_status tpg_config_find(const char *name, const char *schedule, int tp, tpg_dtype dtype, int *index) {
    if (!index) return TPG_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < tpg_num_configs; i++) {
        const tpg_config_desc *c = &tpg_configs[i];
        int match = name ? strcmp(c->name, name) == 0
                         : (!schedule || strcmp(c->schedule->name, schedule) == 0) &&
                               (tp <= 0 || c->schedule->tp == tp) && c->kernel->dtype_ab == dtype;
        if (match) {
            *index = i;
            return TPG_OK;
        }
    }
    return TPG_ERR_UNKNOWN_CONFIG;
}
