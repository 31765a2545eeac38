"""Pure parts of the TP benchmark (no torch, no GPU): shapes, variants, the run plan and its time
estimate, per-variant figures and the JSON record, and what a file of records must hold to be read back. Unit-tested
by tests/test_tp_bench.py and tests/test_report_tp_input.py."""
import json
import math
import re

# The eight shapes of /work/shared/reference/measured-anchors.md: name, op, global M, N, K.
# AG: A sharded along M and all-gathered, B sharded along N (column-parallel linear).
# RS: A and B sharded along K, the M x N partial sums reduce-scattered along M (row-parallel linear).
SHAPES = [
    ("405B-fc1", "AG", 16384, 106496, 16384),
    ("70B-fc1", "AG", 16384, 57344, 8192),
    ("70B-qkv", "AG", 16384, 10240, 8192),
    ("8B-qkv", "AG", 8192, 6144, 4096),
    ("405B-fc2", "RS", 16384, 16384, 53248),
    ("70B-fc2", "RS", 16384, 8192, 28672),
    ("70B-o", "RS", 16384, 8192, 8192),
    ("8B-o", "RS", 8192, 4096, 4096),
]
SCHEDULES = {"AG": "AllGather1D_TilingCD_RotatingA", "RS": "ReduceScatter1D_TilingA_RotatingC"}

# Variant key -> (record field prefix, label). One name for one thing: the key is also the JSON prefix.
VARIANTS = {
    "tpgemm": "tpgemm fused",
    "local": "tpgemm local GEMM (TP=1 kernel, no comm)",
    "cublas_local": "cuBLAS local GEMM (torch.mm)",
    "torch_async_tp": "PyTorch async TP (symm_mem)",
    "nccl_cublas": "NCCL collective + cuBLAS",
}
# Two variants are timed more than one way, each other way ("mode") as a variant of its own, <variant>_<mode>:
# PyTorch async TP eager (a script's calls, each several kernels launched from Python; the 8B shapes' calls left its
# GPUs idle at times, tp2.json 2026-12-01: their SM clocks 1734 / 1972 MHz against 1400-1500 for the rest) and captured
# once into a CUDA graph and replayed ("graph": what a framework's graphs run; tpgemm's fused call is one graph launch
# too); tpgemm's local GEMM as the fused config's family at TP = 1 and as the TP = 1 default pick for the same per-GPU
# GEMM ("default", timed where that is another config: 70B-o's family runs the ping-pong, the pick the wide kernel). A
# record's <variant>_* figures are its fastest timed mode's (<variant>_mode names it; a mode whose check failed is not
# timed): the strongest baseline, the strictest denominator of fused / local. <variant>_modes keeps every mode's.
MODES = {"torch_async_tp": ("eager", "graph"), "local": ("family", "default")}


def mode_variant(variant, mode):
    """The timed variant of a MODES variant's mode: the first mode is the variant itself."""
    return variant if mode == MODES[variant][0] else f"{variant}_{mode}"


MODE_VARIANTS = [mode_variant(v, m) for v, modes in MODES.items() for m in modes[1:]]


def fastest_modes(figures):
    """(figures with each MODES variant's entry replaced by its fastest timed mode's, {variant: that mode, or None
    where no mode has a sustained figure}). Equal times keep the first mode."""
    out, chosen = dict(figures), {}
    for v, modes in MODES.items():
        timed = [((figures.get(mode_variant(v, m)) or {}).get("sustained_s"), i, m) for i, m in enumerate(modes)]
        timed = [t for t in timed if t[0]]
        chosen[v] = min(timed)[2] if timed else None
        if chosen[v]:
            out[v] = figures[mode_variant(v, chosen[v])]
    return out, chosen
# The output check: ||d - ref|| / ||ref|| (Frobenius), max|d - ref| / max|ref| and the per-element error
# max_i |d_i - ref_i| / max(|ref_i|, rms(ref)) (the CLI's metric) against the same D from torch. The first is what
# the 16-bit partials' roundings move (2.5e-3 at TP = 2, 3.5e-3 at TP = 4 on reduce-scatter; all-gather matches
# torch exactly); the second catches a wrong or missing tile, which the norm dilutes (one 128 x 256 tile of
# 405B-fc1's D shard moves it by ~0.006); the third what both dilute, e.g. a k-block missing from one tile (a few
# percent of the rms on its elements, under max|ref|). Measured per element at TP = 2 on the eight anchor shapes
# (2026-12-05, experiments/elem_err_shared_1503Z): 0 on all-gather, 7.8e-3 - 1.1e-2 on reduce-scatter in bf16 (the
# partials' rounding), 1.2e-2 - 1.5e-2 in e4m3.
MAX_REL_ERR = 2e-2
MAX_ELEM_ERR = 5e-2
MAX_PER_ELEMENT_ERR = 5e-2


# --dtype e4m3_promoted: e4m3 operands whose sums are promoted to f32 every few k-blocks - tpgemm's fp8_promote
# configs (by name only, so each schedule's family is named here) against torch's fp8 GEMMs without fast
# accumulation (bench/tp_numerics.py). The library knows the operand type only: e4m3.
PROMOTED_FAMILIES = {"AllGather1D_TilingCD_RotatingA": "ag_rota_e4m3_promoted",
                     "AllGather1D_TilingCD_RotatingB": "ag_rotb_e4m3_promoted",
                     "ReduceScatter1D_TilingA_RotatingC": "rs_tila_e4m3_promoted",
                     "ReduceScatter1D_TilingB_RotatingC": "rs_tilb_e4m3_promoted"}
# --dtype's names (tp_numerics.for_dtype takes each): here, torch-free, so tp_bench parses its options without torch
DTYPES = ("bf16", "fp16", "e4m3", "e4m3_promoted")


def lib_dtype(dtype):
    """The operand type tpgemm's library looks configs up by, for the benchmark's --dtype."""
    return "e4m3" if dtype == "e4m3_promoted" else dtype


def default_family(dtype, schedule):
    """The config family a --dtype runs when no --ag-config / --rs-config names one: None (the schedule's default
    config, or the tuned one) but for e4m3_promoted, whose configs run by name only."""
    return PROMOTED_FAMILIES[schedule] if dtype == "e4m3_promoted" else None


def local_problem(op, m, n, k, tp):
    """The per-GPU GEMM (m, n, k) of one rank, which the local variants compute: all-gather the gathered A times this
    rank's N / tp columns, reduce-scatter the whole M x N over this rank's K / tp."""
    return (m, n // tp, k) if op == "AG" else (m, n, k // tp)


def cublas_label(dtype):
    """The cuBLAS baseline as the run's numerics call it (bench/tp_numerics.py)."""
    return "cuBLAS local GEMM (torch._scaled_mm)" if lib_dtype(dtype) == "e4m3" else VARIANTS["cublas_local"]


def flops_per_gpu(m, n, k, tp):
    return 2.0 * m * n * k / tp


def tflops(m, n, k, tp, seconds_per_call):
    if not seconds_per_call or seconds_per_call <= 0:
        return None
    return flops_per_gpu(m, n, k, tp) / seconds_per_call / 1e12


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else 0.5 * (xs[mid - 1] + xs[mid])


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def check_status(rel_err, max_err=None, call_failed=False, elem_err=None):
    """'passed' / 'failed' / 'not run' (no figure and no failure recorded). max_err and elem_err (when measured)
    must hold their own bounds too; a fused call that failed (call_failed: an error recorded for it, e.g. a timeout)
    fails."""
    if call_failed:
        return "failed"
    if rel_err is None or (isinstance(rel_err, float) and math.isnan(rel_err)):
        return "not run"
    if max_err is not None and not max_err <= MAX_ELEM_ERR:  # NaN fails
        return "failed"
    if elem_err is not None and not elem_err <= MAX_PER_ELEMENT_ERR:
        return "failed"
    return "passed" if rel_err <= MAX_REL_ERR else "failed"


def check_error(rel_err, max_err, why=None, elem_err=None):
    """The error text of a check that did not pass - why (the call failed) or the figures over their bounds - else
    None. The arguments are a check's tuple (tp_check.check_output's)."""
    if check_status(rel_err, max_err, call_failed=why is not None, elem_err=elem_err) == "passed":
        return None
    return why or (f"wrong output: rel err {rel_err}, max err {max_err}, per element {elem_err} (bounds "
                   f"{MAX_REL_ERR}, {MAX_ELEM_ERR}, {MAX_PER_ELEMENT_ERR})")


def with_recheck(check, recheck):
    """A check that passed on the first call stands only if the re-check after the timing rounds passed too: that
    one runs on new inputs, so a call that skipped a wait or read the previous call's shards or partials (its flags
    and epochs reused over calls on unchanged data, which the first call cannot show) gives a wrong output there. A
    re-check that did not run (the variant failed in a timed window, or the new inputs did) leaves nothing that
    shows the timed calls right: failed too."""
    return "failed" if check == "passed" and recheck != "passed" else check


def apply_checks(rec, local=None, rechecks=None, async_tp=None):
    """Adds to a record (make_record's) the local GEMM's check before the timing rounds (local: (rel_err, max_err,
    why, elem_err), or mode -> that tuple for each MODES mode checked; None when none ran) as local_check /
    local_rel_err / local_max_err / local_elem_err, PyTorch async TP's the same way (async_tp: torch_async_tp_check /
    _rel_err / _max_err / _elem_err; a failed one is not timed), and the re-checks after them (rechecks: variant -> the
    same tuple, tp_check.recheck's): recheck and recheck_elem_err (the fused call's), local_recheck (and _elem_err),
    and "recheck" (and "recheck_elem_err") in each alt entry; a failed re-check fails the check it repeats. The MODES
    variants' fields are their chosen mode's (<variant>_mode; the first where none was timed), and each mode's check
    goes into its <variant>_modes entry. PyTorch async TP's per-element error is recorded, not bounded: its check is
    there to show that the baseline computes the same GEMM (a layout, a missing rank's part), which the other two
    bounds catch, and its per-element error has not been measured (no async TP with ranks sharing a GPU). Returns
    rec."""
    def status(res, per_element=True):
        return check_status(res[0], res[1], call_failed=res[2] is not None,
                            elem_err=res[3] if per_element else None) if res else "not run"
    rechecks = rechecks or {}
    elem_of = lambda v: (rechecks.get(v) or (None,) * 4)[3]  # noqa: E731 - a re-check's per-element error

    def by_mode(variant, checks):  # mode -> check tuple; a tuple alone is the first mode's
        return dict(checks) if isinstance(checks, dict) else {MODES[variant][0]: checks} if checks else {}

    def mode_checks(variant, checks, per_element, rechecked):  # each mode's status; the chosen mode's fields
        checks = by_mode(variant, checks)
        modes = rec.setdefault(f"{variant}_modes", {})
        for md in checks:  # a mode checked but not timed (its check failed) too
            modes.setdefault(md, {"tflops": None})
        for md, entry in modes.items():
            entry["check"] = status(checks.get(md), per_element)
            if rechecked:
                entry["check"] = with_recheck(entry["check"], status(rechecks.get(mode_variant(variant, md))))
        mode = rec.get(f"{variant}_mode") or MODES[variant][0]
        return checks.get(mode), mode_variant(variant, mode)
    local, local_key = mode_checks("local", local, True, True)
    async_tp, _ = mode_checks("torch_async_tp", async_tp, False, False)
    rec["local_check"] = status(local)
    rec["local_rel_err"], rec["local_max_err"], _, rec["local_elem_err"] = local or (None,) * 4
    rec["torch_async_tp_check"] = status(async_tp, per_element=False)
    (rec["torch_async_tp_rel_err"], rec["torch_async_tp_max_err"], _,
     rec["torch_async_tp_elem_err"]) = async_tp or (None,) * 4
    rec["recheck"] = status(rechecks.get("tpgemm"))
    rec["recheck_elem_err"] = elem_of("tpgemm")
    rec["check"] = with_recheck(rec["check"], rec["recheck"])
    rec["local_recheck"] = status(rechecks.get(local_key))
    rec["local_recheck_elem_err"] = elem_of(local_key)
    rec["local_check"] = with_recheck(rec["local_check"], rec["local_recheck"])
    for name, entry in (rec.get("alt") or {}).items():
        entry["recheck"] = status(rechecks.get(f"alt:{name}"))
        entry["recheck_elem_err"] = elem_of(f"alt:{name}")
        entry["check"] = with_recheck(entry["check"], entry["recheck"])
    return rec


def estimate_seconds(n_shapes, n_variants, rounds, window_s, burst_idle_s, setup_s_per_shape):
    """Wall time of the plan: per shape, a burst (idle + short run) per variant, one heat window, then
    `rounds` sustained windows per variant (round-robin), plus setup (allocation, random data, graphs, checks)."""
    per_shape = (n_variants * (burst_idle_s + 0.1) + (1 + rounds * n_variants) * (window_s + 0.15)
                 + setup_s_per_shape)
    return n_shapes * per_shape


def median_or_none(values):
    """Median of the values that are not None (e.g. SM clocks of the sustained windows), else None."""
    got = [v for v in values if v is not None]
    return median(got) if got else None


def energy_method(windows):
    """How a variant's joules were measured over its sustained windows (tp_windows.window): "fit" (the power fitted
    over the energy counter's steps, on every rank, in every window), "delta" (the counter's difference in every
    window), "mixed", or None (no joules). Two variants' joules compare best under one method."""
    methods = {"fit" if w.get("joules_fit") is not None else "delta" for w in windows or []
               if w.get("joules") is not None}
    return None if not methods else methods.pop() if len(methods) == 1 else "mixed"


def summarize(samples):
    """samples: list of {'seconds': s, 'calls': c, 'joules': j} sustained windows (one per round).
    Returns (median seconds per call, median joules per call)."""
    per_call = [s["seconds"] / s["calls"] for s in samples if s.get("calls")]
    joules = [s["joules"] / s["calls"] for s in samples if s.get("calls") and s.get("joules") is not None]
    return median(per_call), median(joules)


def make_record(name, op, m, n, k, tp, dtype, figures, rel_err, errors=None, extra=None, max_err=None,
                elem_err=None):
    """figures: variant -> {'sustained_s': s/call, 'burst_s': s/call, 'joules': J/call/GPU, 'windows': [...]}
    (a missing variant or figure is None; the MODES variants' other modes under their own names). The required
    fields come first, the MODES variants' from their fastest mode (<variant>_mode, <variant>_modes); burst figures,
    energy of the other variants and seconds per call go under *_burst_tflops, *_joules, *_ms names."""
    rec = {"name": name, "op": op, "M": m, "N": n, "K": k, "tp": tp, "dtype": dtype}
    every_mode = figures
    figures, chosen = fastest_modes(figures)
    for v in VARIANTS:
        f = figures.get(v) or {}
        rec[f"{v}_tflops"] = tflops(m, n, k, tp, f.get("sustained_s"))
    rec["tpgemm_joules"] = (figures.get("tpgemm") or {}).get("joules")
    rec["torch_async_tp_joules"] = (figures.get("torch_async_tp") or {}).get("joules")
    rec["check"] = check_status(rel_err, max_err, call_failed=rel_err is None and "tpgemm" in (errors or {}),
                                elem_err=elem_err)
    rec["rel_err"] = rel_err
    rec["max_err"] = max_err
    rec["elem_err"] = elem_err
    for v, modes in MODES.items():
        rec[f"{v}_mode"] = chosen[v]
        rec[f"{v}_modes"] = {md: {"tflops": tflops(m, n, k, tp, (every_mode.get(mode_variant(v, md)) or {}).get(
            "sustained_s"))} for md in modes if mode_variant(v, md) in every_mode or md == modes[0]}
    for v in VARIANTS:
        f = figures.get(v) or {}
        rec[f"{v}_burst_tflops"] = tflops(m, n, k, tp, f.get("burst_s"))
        rec[f"{v}_ms"] = f["sustained_s"] * 1e3 if f.get("sustained_s") else None
        if v not in ("tpgemm", "torch_async_tp"):
            rec[f"{v}_joules"] = f.get("joules")
    rec["schedule"] = SCHEDULES[op]
    if errors:
        rec["errors"] = dict(errors)
    if extra:
        rec.update(extra)
    return rec


def echoes_another_rank(why):
    """A rank's error text that only says another rank failed (tp_bench's drop of a variant on every rank)."""
    return why == "failed on another rank" or why.startswith("RankFailure")


def merge_rank_errors(gathered):
    """One error dict from every rank's (gathered[r]: variant -> text): each variant's own texts named by rank
    ("rank 1: ..."), or "every rank: ..." when all ranks report the same one; a variant whose only texts echo
    another rank's failure keeps that echo."""
    merged = {}
    for v in dict.fromkeys(v for errs in gathered for v in (errs or {})):
        own = [(r, errs[v]) for r, errs in enumerate(gathered) if errs and v in errs and not echoes_another_rank(errs[v])]
        if own and len(own) == len(gathered) and len({why for _, why in own}) == 1:
            merged[v] = f"every rank: {own[0][1]}"
        elif own:
            merged[v] = "; ".join(f"rank {r}: {why}" for r, why in own)
        else:
            merged[v] = next(errs[v] for errs in gathered if errs and v in errs)
    return merged


def result_stem(tp, dtype, shared=False, tokens=0, tag=""):
    """Name of a run's files and BENCHMARKS.md section: tp<N> for bf16 (the issues' runs), tp<N>_<dtype> otherwise,
    so that an fp16 or e4m3 run does not replace the bf16 table; a --tokens run adds _m<M>, a --tag run (an
    experiment: run_tag) _<tag>, a --share-device smoke run _shared."""
    return ((f"tp{tp}" if dtype == "bf16" else f"tp{tp}_{dtype}") + (f"_m{tokens}" if tokens else "")
            + (f"_{tag}" if tag else "") + ("_shared" if shared else ""))


# Calls a heat or sustained window may hold. Those windows are sized from the burst window's per-call time (>= 50 ms
# of calls), so they may hold what lasts the whole window even for calls of microseconds (few tokens); capped at
# 2000 calls (until 2026-12-02), the 8B shapes' "1 s" windows had lasted 0.2-0.9 s (tp2.json, tp4.json).
MAX_WINDOW_CALLS = 500_000


def window_calls(seconds, per_call):
    """Calls that last `seconds` at `per_call` seconds each (the burst window's figure): at least one, at most
    MAX_WINDOW_CALLS."""
    return min(MAX_WINDOW_CALLS, max(1, math.ceil(seconds / max(per_call, 1e-9))))


TAG_PATTERN = r"[a-z0-9][a-z0-9_]{0,31}"  # a tag names files and a BENCHMARKS.md section: nothing that could break out
TAG_RULE = "lower-case letters, digits and _, at most 32, starting with a letter or digit"


def run_tag(tag, environ):
    """The run's tag: the one asked for, else "p2p_off" when NCCL_P2P_DISABLE is on (NCCL's bytes, the NCCL + cuBLAS
    baseline's and alt:nccl's, then cross host memory: such a run must not replace the NVLink table), else none."""
    if tag:
        return tag
    return "p2p_off" if environ.get("NCCL_P2P_DISABLE", "0").strip().lower() not in ("", "0", "false", "no") else ""


def nccl_environment(environ):
    """The NCCL_* variables of the run (they change what NCCL + cuBLAS and alt:nccl measure), for its records."""
    return {k: v for k, v in sorted(environ.items()) if k.startswith("NCCL_")}


def shapes_at_tokens(shapes, tokens):
    """The shapes with global M = tokens (the few-token regime of the same layers), named <name>-m<tokens>;
    tokens 0: the shapes as they are."""
    return [(f"{n}-m{tokens}", op, tokens, nn, k) for n, op, _, nn, k in shapes] if tokens else list(shapes)


def shapes_asked(records):
    """The names of the shapes a run was asked for: its records' shapes_asked (tp_bench.py writes the list, --only and
    --tokens applied, into each record), else (files from before it) every shape of SHAPES at the records' tokens when
    each record is one of them, else None (not a file of those shapes: nothing to compare with)."""
    for r in records:
        if r.get("shapes_asked"):
            return list(r["shapes_asked"])
    names = [s[0] for s in shapes_at_tokens(SHAPES, (records[0].get("tokens") or 0) if records else 0)]
    return names if records and all(r.get("name") in names for r in records) else None


def missing_shapes(records):
    """The shapes asked for that have no record: a run stopped at its time bound leaves a file of the shapes it
    finished (tp_bench.py saves after every shape), which must not read as the whole run."""
    have = {r.get("name") for r in records}
    return [name for name in shapes_asked(records) or [] if name not in have]


def alt_summary(figures, rel_errs, m, n, k, tp, max_errs=None, configs=None, errors=None, elem_errs=None):
    """The extra fused variants of an experiment (keys "alt:<family>"): family -> sustained and burst
    TFLOP/s, median SM clock, check (rel_errs / max_errs: variant -> error or None; errors: variant -> why its
    call failed; elem_errs the same) and the config it ran (configs: variant -> name), next to the shipped
    figures of the same record."""
    out = {}
    for v, err in rel_errs.items():
        f = figures.get(v) or {}
        mx = (max_errs or {}).get(v)
        out[v.split(":", 1)[1]] = {
            "tflops": tflops(m, n, k, tp, f.get("sustained_s")), "burst_tflops": tflops(m, n, k, tp, f.get("burst_s")),
            "sm_mhz": median_or_none([w.get("sm_mhz") for w in f.get("windows", [])]), "joules": f.get("joules"),
            "check": check_status(err, mx, call_failed=err is None and v in (errors or {}),
                                  elem_err=(elem_errs or {}).get(v)),
            "rel_err": err, "max_err": mx, "elem_err": (elem_errs or {}).get(v), "config": (configs or {}).get(v)}
    return out


def diag_summary(figures, m, n, k, tp):
    """The diagnostic variants (keys "diag:<name>", no output of their own to check): name -> sustained and
    burst TFLOP/s of the problem, median SM clock and joules per call per GPU."""
    out = alt_summary(figures, {v: None for v in figures if v.startswith("diag:")}, m, n, k, tp)
    for d in out.values():
        for key in ("check", "rel_err", "max_err", "elem_err", "config"):
            d.pop(key)
    return out


def ratio(a, b):
    return a / b if a and b else None


def fmt_or_dash(x):
    return "–" if x is None else f"{x:.0f}"


# What a record file (tp_bench.py's) must hold for report_tp.py and bench/x2/verdict.py to read it. A hand-edited or
# mixed file once rendered a TP = 2 table into the TP = 4 section (the first record names the section), wrote section
# markers through its tag, and printed "nan" figures: each such file is refused, by record and field.
MAX_TP = 8  # TPG_MAX_TP (templates/kernels/gemm_params.h, generator/config.py): the TP degrees are 1..MAX_TP
IDENTITY = ("name", "op", "M", "N", "K", "tp", "dtype")  # every record of tp_bench.py has them
RUN_FIELDS = ("tp", "dtype", "tag", "tokens")  # one run's, the same in each record: they name its section (result_stem)
FIGURE_SUFFIXES = ("tflops", "joules", "_ms", "mhz")  # a finite number or null (none measured)
ERROR_SUFFIX = "_err"  # a check's error: a number or null; NaN and inf stand (a NaN output's error is one)


class RecordError(ValueError):
    """A file of records that report_tp.py / verdict.py must not read: the message names the file and what is wrong."""


def _whole(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _one_line(v):
    return isinstance(v, str) and v != "" and "\n" not in v


def _strings(v, path):
    """(path, text) of every string in v, keys included."""
    if isinstance(v, str):
        yield path, v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield from _strings(k, f"a key of {path or 'the record'}")
            yield from _strings(x, f"{path}.{k}" if path else str(k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _strings(x, f"{path}[{i}]")


def _figure_problems(entry, prefix=""):
    for k, v in entry.items():
        if not isinstance(k, str) or v is None:
            continue
        if k.endswith(FIGURE_SUFFIXES) and not (_number(v) and math.isfinite(v)):
            yield f"{prefix}{k} = {v!r} is not {'finite' if _number(v) else 'a number'} (a figure or null)"
        elif k.endswith(ERROR_SUFFIX) and not _number(v):
            yield f"{prefix}{k} = {v!r} is not a number (an error or null)"


def _field_problems(r):
    """What is wrong with one record's fields, each naming the field, its value and what would do."""
    missing = [f for f in IDENTITY if f not in r]
    if missing:
        yield f"lacks {', '.join(missing)}"
        return
    if not _one_line(r["name"]):
        yield f"name = {r['name']!r} is not a one-line text"
    if not (isinstance(r["op"], str) and r["op"] in SCHEDULES):
        yield f"op = {r['op']!r} is not one of {', '.join(SCHEDULES)}"
    yield from (f"{f} = {r[f]!r} is not a positive whole number" for f in ("M", "N", "K")
                if not (_whole(r[f]) and r[f] > 0))
    if not (_whole(r["tp"]) and 1 <= r["tp"] <= MAX_TP):
        yield f"tp = {r['tp']!r} is not a TP degree (a whole number 1..{MAX_TP})"
    if r["dtype"] not in DTYPES:
        yield f"dtype = {r['dtype']!r} is not one of {', '.join(DTYPES)}"
    if r.get("tag", "") != "" and not (isinstance(r["tag"], str) and re.fullmatch(TAG_PATTERN, r["tag"])):
        yield f"tag = {r['tag']!r}: a tag is {TAG_RULE}"
    if "tokens" in r and not (_whole(r["tokens"]) and r["tokens"] > 0):
        yield f"tokens = {r['tokens']!r} is not a positive whole number (no field: the shapes' own M)"
    yield from (f"{k} = {r[k]!r} is not a one-line text" for k in ("check", "config") if k in r and not _one_line(r[k]))
    yield from _figure_problems(r)
    for group in ("alt", "diag", *(f"{v}_modes" for v in MODES)):
        entries = r.get(group)
        if entries is not None and not (isinstance(entries, dict)
                                        and all(isinstance(e, dict) for e in entries.values())):
            yield f"{group} = {entries!r:.60} is not an object of variants' objects"
            continue
        for name, e in (entries or {}).items():
            yield from (f"{group}.{name}.{k} = {e[k]!r} is not a one-line text" for k in ("check", "config")
                        if k in e and not _one_line(e[k]) and not (k == "config" and e[k] is None))  # none named
            yield from _figure_problems(e, f"{group}.{name}.")
    windows = r.get("windows")
    if windows is not None and not (isinstance(windows, dict) and all(
            isinstance(ws, list) and all(isinstance(w, dict) for w in ws) for ws in windows.values())):
        yield f"windows = {windows!r:.60} is not an object of variants' lists of windows"
    else:
        yield from (f"windows.{v}[{i}].seconds = {w['seconds']!r} is not a finite number or null"
                    for v, ws in (windows or {}).items() for i, w in enumerate(ws) if w.get("seconds") is not None
                    and not (_number(w["seconds"]) and math.isfinite(w["seconds"])))
    if r.get("errors") is not None and not isinstance(r["errors"], dict):
        yield f"errors = {r['errors']!r:.60} is not an object of variants' texts"
    asked = r.get("shapes_asked")
    if asked is not None and not (isinstance(asked, list) and all(isinstance(n, str) for n in asked)):
        yield f"shapes_asked = {asked!r:.60} is not a list of shape names"
    # a marker anywhere in the rendered text would open or end a section of BENCHMARKS.md (benchmarks_md)
    yield from (f"{path} = {text!r:.60} holds '<!--'" for path, text in _strings(r, "") if "<!--" in text)


def run_of(r):
    """A record's RUN_FIELDS, absent ones as tp_bench.py leaves them out: no tag, the shapes' own M."""
    return {"tp": r["tp"], "dtype": r["dtype"], "tag": r.get("tag") or "", "tokens": r.get("tokens") or 0}


def record_problems(records):
    """What makes records unfit to read, one line each naming the record and the field (empty: none): not a list of
    records, a field missing, of the wrong type or out of range, a figure that is not a finite number or null, a text
    that would write a section marker, or records of more than one run (the first record's RUN_FIELDS would name
    the section of them all)."""
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        return ["not a list of TP benchmark records"]
    out = []
    for i, r in enumerate(records):
        name = r.get("name") if _one_line(r.get("name")) else "?"
        out += [f"record {i} ({name:.40}){' ' if p.startswith('lacks') else ': '}{p}" for p in _field_problems(r)]
    if out or not records:
        return out
    first = run_of(records[0])
    for i, r in enumerate(records[1:], 1):
        diff = next((f for f in RUN_FIELDS if run_of(r)[f] != first[f]), None)
        if diff:
            return [f"record {i} ({r['name']}) has {diff} {run_of(r)[diff]!r} where record 0 has {first[diff]!r}: "
                    f"a file holds one run (one {', '.join(RUN_FIELDS)})"]
    return []


def read_records(path):
    """The records of the file at path; RecordError naming the file and its first problem (record_problems) where it
    cannot be read or is unfit. An empty list is returned: what it means is the reader's to say."""
    try:
        with open(path, encoding="utf-8") as f:
            records = json.load(f)
    except (OSError, ValueError, RecursionError) as e:  # a folder, no file, not UTF-8, not JSON, nested past Python
        raise RecordError(f"cannot read {path}: {e}") from None
    wrong = record_problems(records)
    if wrong:
        raise RecordError(f"{path}: {wrong[0]}" + (f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else "")
                          + " - not a TP benchmark file (bench/tp_bench.py writes them)?")
    return records
