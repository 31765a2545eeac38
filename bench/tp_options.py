"""tp_bench.py's option checks that need no GPU and no process group: every rank runs them before
init_process_group, so a typo ends the run at once with a usage error instead of costing every shape its variants
after the GPUs have started (a config lookup that raises inside a shape's setup drops the whole shape).

Pure: the library's config lookup comes in as a function, so the tests run without the library or torch. The options
themselves (parser) are defined here too, beside their checks."""
import argparse
import math
from typing import Callable, Optional

import tp_records as R

MAX_COPY_CHUNKS = 32  # TPG_MAX_COPY_CHUNKS (templates/kernels/copy_chunks.h)
# The schedules torch's baselines and the check shard D as (tp_records.SCHEDULES: columns for all-gather, rows for
# reduce-scatter): the RotatingB / TilingB layouts would fail tp_check.own_setup's layout check on every shape.
AG_SCHEDULE, RS_SCHEDULE = "AllGather1D_TilingCD_RotatingA", "ReduceScatter1D_TilingA_RotatingC"
# The TP degrees (WORLD_SIZE: torchrun's --nproc_per_node) the benchmark runs at: those schedules.yaml builds the two
# schedules' configs for (configs[].tp; tests/test_tp_options.py holds them equal). 2 is the target, 4 and 8 run on
# the larger machines, 1 is the smoke run. Another degree has no config to run, and a stray value (0, -2, "abc")
# failed as a Python traceback, not a usage error.
TP_DEGREES = (1, 2, 4, 8)


def parser(description: str, dtypes) -> argparse.ArgumentParser:
    """tp_bench.py's options (dtypes: tp_records.DTYPES, for_dtype of tp_numerics.py gives each its numerics)."""

    p = argparse.ArgumentParser(description=description)
    p.add_argument("--rounds", type=int, default=3, help="sustained windows of each variant, interleaved; the "
                   "record holds their median (3: a median that one odd window does not move)")
    p.add_argument("--window", type=float, default=1.0, help="seconds of continuous work per sustained window")
    p.add_argument("--burst-idle", type=float, default=0.3, help="idle seconds before each burst run")
    p.add_argument("--only", default="", help="comma-separated shape names")
    p.add_argument("--tokens", type=int, default=0, help="every shape with this global M instead of its own (few "
                   "tokens: the regime where the last wave of tiles decides), named <shape>-m<M>; results in "
                   "tp<N>_m<M>.json and their own BENCHMARKS.md section")
    p.add_argument("--dtype", default="bf16", choices=dtypes,
                   help="operand type; e4m3 against torch's fp8 GEMMs with fast accumulation, e4m3_promoted: tpgemm's "
                   "fp8_promote configs (<schedule family>_e4m3_promoted) against torch's without it")
    p.add_argument("--ag-schedule", default=AG_SCHEDULE, choices=[AG_SCHEDULE])
    p.add_argument("--rs-schedule", default=RS_SCHEDULE, choices=[RS_SCHEDULE])
    p.add_argument("--ag-config", default="", help="config family for the all-gather shapes, e.g. ag_rota_bf16_wide "
                   "(runs <family>_tp<N>); default: the tuned config of the shape, else the schedule's default")
    p.add_argument("--rs-config", default="", help="the same for the reduce-scatter shapes")
    p.add_argument("--alt-config", default="", help="experiments: comma-separated config families run as extra "
                   "fused variants on the shapes of their schedule, --ag-schedule's or --rs-schedule's (record field "
                   "'alt')")
    p.add_argument("--alt-copy-chunks", default="", help="experiments: comma-separated piece counts; on the all-gather "
                   "shapes each runs the shape's config with its copies in that many pieces (tpg_op_set_copy_chunks) "
                   "as an extra variant 'alt:copy_chunksN'")
    p.add_argument("--alt-overlap-barriers", action="store_true", help="experiments: on every shape, the shape's config "
                   "with its barriers beside the GEMM (tpg_op_set_overlap_barriers) as an extra variant "
                   "'alt:overlap_barriers'")
    p.add_argument("--alt-gather-copy-engine", action="store_true", help="experiments: on the all-gather shapes, the "
                   "shape's config with a gathered walk's shards brought by copy-engine nodes instead of its GEMM's pulls "
                   "(tpg_op_set_gather_copy_engine) as an extra variant 'alt:gather_copy_engine'")
    p.add_argument("--alt-rs-ring", action="store_true", help="experiments: on the reduce-scatter shapes, the "
                   "shape's config with a one-hop walk (few rows a stage) kept a ring (tpg_op_set_rs_ring) as an extra "
                   "variant 'alt:rs_ring'")
    p.add_argument("--alt-push-partials", action="store_true", help="experiments: on the reduce-scatter shapes, the "
                   "shape's config with its partials pushed by the sender's GEMM (the config's push twin, _push where "
                   "the config moves them another way) as an extra variant 'alt:push_partials'")
    p.add_argument("--alt-pull-partials", action="store_true", help="experiments: on the reduce-scatter shapes, the "
                   "shape's config with its partials pulled by the receiver's GEMM (the config's _pull twin) as an "
                   "extra variant 'alt:pull_partials'")
    p.add_argument("--alt-copy-engine-partials", action="store_true", help="experiments: on the reduce-scatter "
                   "shapes, the shape's config with its partials carried by copy-engine nodes of the op's graph (the "
                   "config's _ce twin) as an extra variant 'alt:copy_engine_partials'")
    p.add_argument("--alt-captured", action="store_true", help="experiments: on every shape, the shape's config with "
                   "its call captured once into a torch CUDA graph (torch.cuda.graph) and timed by replays, as an extra "
                   "variant 'alt:captured'")
    p.add_argument("--alt-nccl", action="store_true", help="experiments: on every shape, the shape's config on a second "
                   "context over the NCCL transport (tpg_rank_config.transport; stage-granular, no peer access needed) "
                   "as an extra variant 'alt:nccl'. NCCL_P2P_DISABLE=1 in the environment makes it (and the NCCL + "
                   "cuBLAS baseline) go through host memory, as between GPUs without peer access")
    p.add_argument("--energy-fit", action=argparse.BooleanOptionalAction, default=True,
                   help="each window's joules from the power fitted over NVML's energy counter steps (a sampler "
                   "thread) times the window's time (default; the delta where a fit does not hold on every rank), or "
                   "with --no-energy-fit the counter's delta over the window, which carries up to a step (tens of ms "
                   "of power) at each end: over 8 windows the fit spread 0.7-2.4%%, the delta 1.0-10.6%% "
                   "(experiments/bench_review_0435Z)")
    p.add_argument("--link-copies", action="store_true", help="diagnostic: one more variant 'diag:local_link', the "
                   "local GEMM with the fused call's NVLink bytes copied beside it (link_copy_variant)")
    p.add_argument("--tag", default="", help="an experiment's name (lower case, digits, _): results in "
                   "tp<N>[_<dtype>][_m<M>]_<tag>.json and their own BENCHMARKS.md section, so the run does not replace "
                   "the standard table; default p2p_off when NCCL_P2P_DISABLE is set")
    p.add_argument("--share-device", action="store_true", help="smoke run: every rank on GPU 0 (gloo for torch's "
                   "collectives, tpg_rank_config.share_devices), so the benchmark's multi-process path runs on one GPU; "
                   "the processes take turns on it, so times mean nothing; PyTorch async TP does not run; results go "
                   "to tp<N>[_<dtype>]_shared.json and BENCHMARKS.md is left alone")
    p.add_argument("--check-args", action="store_true", help="check the options (and the library configs they name) "
                   "and exit: 0 accepted, 2 a usage error; no GPU, process group or torch call (the 2-GPU calls' "
                   "rehearsal on the CPU, tests/test_x2_calls.py)")
    return p


def _families(text: str) -> list[str]:
    return [f for f in text.split(",") if f]


def tp_degree(world_size: str) -> tuple[Optional[int], Optional[str]]:
    """(TP, None) for a WORLD_SIZE the benchmark runs at (TP_DEGREES), else (None, the usage error)."""
    try:
        tp = int(world_size)
    except ValueError:
        tp = None
    if tp in TP_DEGREES:
        return tp, None
    return None, (f"WORLD_SIZE={world_size!r}: tp_bench runs at TP = {', '.join(map(str, TP_DEGREES))} (the degrees "
                  "schedules.yaml has configs for; torchrun --nproc_per_node, bench/run_tp.sh --tp)")


def _route(schedule: str) -> str:
    return "all-gather" if schedule.startswith("AllGather") else "reduce-scatter"


def config_errors(flag: str, fam: str, tp: int, dtype: str, schedules, info: Optional[dict]) -> list[str]:
    """The problem with config family `fam` given to `flag` at TP = tp: the config <fam>_tp<tp> must exist (info: the
    library's, or None) and be of the run's operand type and of one of `schedules` - the ones whose shapes the flag's
    configs run on. By name the library finds a config whatever its dtype, TP or schedule (tpg_config_find), so a
    config of another type or schedule passed here, then failed on every shape or ran on none once the GPUs had
    started."""
    name, want = f"{fam}_tp{tp}", R.lib_dtype(dtype)
    if info is None:
        return [f"{flag} {fam}: the library has no config {name} (build/tpgemm --list lists them)"]
    if info["dtype"] == want and info["tp"] == tp and info["schedule"] in schedules:
        return []
    need = " or ".join(f"{s} ({_route(s)})" for s in schedules)
    return [f"{flag} {fam}: config {name} is of schedule {info['schedule']} ({_route(info['schedule'])}), dtype "
            f"{info['dtype']}, TP = {info['tp']}; {flag} needs schedule {need}, dtype {want} (--dtype {dtype}), "
            f"TP = {tp}"]


def option_errors(args, tp: int, config_of: Callable[[str], Optional[dict]]) -> list[str]:
    """The problems with tp_bench's options at TP = tp (the world size); config_of(name) is the library's config of
    that name as {"schedule", "tp", "dtype": its tpgemm_lib.DTYPES name}, or None where it has none. Empty when the
    options are usable."""
    errors = []
    if args.rounds < 1:
        errors.append(f"--rounds {args.rounds}: at least 1 (each round times every variant once)")
    if not (math.isfinite(args.window) and args.window > 0):
        errors.append(f"--window {args.window}: a positive number of seconds")
    if not (math.isfinite(args.burst_idle) and args.burst_idle >= 0):
        errors.append(f"--burst-idle {args.burst_idle}: zero or a positive number of seconds")
    for flag, text in (("--only", args.only), ("--alt-config", args.alt_config),
                       ("--alt-copy-chunks", args.alt_copy_chunks)):
        if text and not _families(text):  # `--only ,` selected no shape and ran nothing, its exit 0
            errors.append(f"{flag} {text!r}: no value between its commas (leave the option out for none)")
    for c in _families(args.alt_copy_chunks):
        if not c.isdigit() or not 1 <= int(c) <= MAX_COPY_CHUNKS:
            errors.append(f"--alt-copy-chunks: {c!r} is not a whole number in 1..{MAX_COPY_CHUNKS}")
    # each flag's configs run on the shapes of its schedule(s): an --alt-config family of another schedule would run
    # on no shape (tp_bench.alt_variants skips it), one given to --ag-config / --rs-config on every shape of the kind
    flags = [("--ag-config", args.ag_config, (args.ag_schedule,)), ("--rs-config", args.rs_config, (args.rs_schedule,))]
    flags += [("--alt-config", fam, (args.ag_schedule, args.rs_schedule)) for fam in _families(args.alt_config)]
    for flag, fam, schedules in flags:
        if fam:
            errors += config_errors(flag, fam, tp, args.dtype, schedules, config_of(f"{fam}_tp{tp}"))
    return errors
