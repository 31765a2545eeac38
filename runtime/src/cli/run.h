/* The GPU run path of build/tpgemm, shared by main.c (one GEMM) and model.c (each layer of a preset). */
#ifndef TPG_CLI_RUN_H
#define TPG_CLI_RUN_H

#include "../tables.h"
#include "args.h"
#include "outcome.h"
#include "report.h"

/* Number of visible CUDA devices (0 when the driver or runtime reports none). */
int tpg_cli_visible_devices(void);
/* GPUs a --share-device run needs visible: one past the highest ordinal of --devices (1 without it). */
int tpg_cli_shared_gpus(const tpg_cli_args *a);

/* 0, or -1 with a message: --scale-a / --scale-b given for a config whose operands are not fp8. */
int tpg_cli_check_scales(const tpg_cli_args *a, int cfg_index, char *msg, size_t cap);

/* Runs config cfg_index on a's problem (a->m, n, k, l, scalars, iterations, check, devices): context,
 * op, deterministic operands, warm-up, the check when a->check, timing. Fills *res (res->error points
 * to a static message that the next call overwrites) and returns the exit status. Needs the GPUs. */
int tpg_cli_run(const tpg_cli_args *a, int cfg_index, tpg_cli_result *res);

/* The op modes a's switches give config cfg (plan.h: TPG_PLAN_*), as tpg_cli_run applies them: the barriers beside
 * the GEMM where the config has barriers and no clusters, the gathered walk's copy engine. */
int tpg_cli_plan_modes(const tpg_cli_args *a, const tpg_config_desc *cfg);

/* `--model NAME`: each layer of the preset (runtime/src/cli/model.c). Returns the exit status. */
int tpg_cli_model(const tpg_cli_args *a);

#endif /* TPG_CLI_RUN_H */
