"""Model presets and tuned choices -> the dispatch table (generated/dispatch.c).

A preset (schedules.yaml `models:`) names a transformer's sizes; each tensor-parallel layer of it runs
four GEMMs (LAYERS): column-parallel ones (all-gather before the GEMM) and row-parallel ones
(reduce-scatter after it). A dispatch entry maps (model, layer, dtype, tp) -- or a plain tuned shape --
to one config. Tuned choices (`tuned:`, usually in tuned/*.yaml files pulled in by `include:`) name a
kernel; each gets its own config, named by tuned_config_name, so `--config` can run it too.
"""
from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass
from pathlib import Path

from . import config as C
from .kernels import DTYPE_SIZE
from .schedules import SCHEDULES

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")

# layer: (parallel style, N of the GEMM, K of the GEMM) as functions of the preset.
LAYERS = {
    "qkv": ("column", lambda p: (p["heads"] + 2 * p["kv_heads"]) * p["head_dim"], lambda p: p["hidden"]),
    "attn_out": ("row", lambda p: p["hidden"], lambda p: p["heads"] * p["head_dim"]),
    "gate_up": ("column", lambda p: 2 * p["ffn"], lambda p: p["hidden"]),
    "down": ("row", lambda p: p["hidden"], lambda p: p["ffn"]),
}
# The preset fields each layer's N and K come from (as LAYERS computes them; M is `tokens`): where a layer's GEMM
# cannot run, the error names the field its failing extent comes from, first of them for its line.
LAYER_FIELDS = {
    "qkv": {"N": ("heads", "kv_heads", "head_dim"), "K": ("hidden",)},
    "attn_out": {"N": ("hidden",), "K": ("heads", "head_dim")},
    "gate_up": {"N": ("ffn",), "K": ("hidden",)},
    "down": {"N": ("hidden",), "K": ("ffn",)},
}


@dataclass(frozen=True)
class Gemm:
    """One GEMM of a preset's layer: D (M x N) = A (M x K) . B^T, M = tokens."""
    layer: str
    schedule: str
    m: int
    n: int
    k: int


@dataclass(frozen=True)
class DispatchEntry:
    """One row of tpg_dispatch[] (tpg_dispatch_entry in tpgemm.h). model/layer are "" for a shape."""
    model: str
    layer: str
    m: int
    n: int
    k: int
    dtype: str
    schedule: str
    tp: int
    config: str        # config name
    config_index: int  # its index in tpg_configs[] (configs are sorted by name)
    tuned: bool


def gemms(preset: dict, tokens: int | None = None) -> list[Gemm]:
    """The GEMMs of one layer of the preset, in LAYERS order."""
    m = tokens or preset["tokens"]
    sched = {"column": preset["column_parallel"], "row": preset["row_parallel"]}
    return [Gemm(name, sched[par], m, n(preset), k(preset)) for name, (par, n, k) in LAYERS.items()]


def shape_problems(schedule: str, tp: int, m: int, n: int, k: int, dtype: str = "bf16") -> list[str]:
    """Why (m, n, k) cannot run with the schedule at tp (the divisibility and alignment rules of
    runtime/src/shapes.c, so that a preset fails here, with its line, instead of at run time)."""
    s = SCHEDULES[schedule]
    ext = {"M": m, "N": n, "K": k}
    split = {s["shard_a"] if s["rotating"] != "A" else None, s["shard_b"] if s["rotating"] != "B" else None}
    local = {d: v // tp if d in split else v for d, v in ext.items()}
    out = [f"{d} = {ext[d]} is not divisible by tp = {tp}" for d in "MNK"
           if d in split | {s["shard_d"]} and ext[d] % tp]
    if not out and local[s["stage_dim"]] % tp:
        out.append(f"local {s['stage_dim']} = {local[s['stage_dim']]} is not divisible by tp = {tp}")
    stage = dict(local, **{s["stage_dim"]: local[s["stage_dim"]] // tp})
    for d in "MNK" if not out else ():  # the kernel's tile counts are 32-bit (shapes.c TPG_EXTENT_LIMIT)
        if stage[d] > EXTENT_LIMIT:
            out.append(f"per-stage {d} = {stage[d]} must be <= 2^31 - 512 (the kernel's tile counts are 32-bit)")
    widest = max(m // tp if s["shard_a"] == "M" else m, n // tp if s["shard_b"] == "N" else n, local["M"], local["N"])
    if not out and widest >= 1 << 31:  # shapes.c: the rows of each tensor map (L = 1 here)
        out.append(f"rows {widest} must be < 2^31 for the TMA maps (the longest of A's and B's shard rows and the "
                   "local M and N)")
    if not out and stage["N"] % 8:
        out.append(f"per-stage N = {stage['N']} is not a multiple of 8")
    if not out and stage["K"] * DTYPE_SIZE[dtype] % 16:
        out.append(f"per-device K = {stage['K']} ({stage['K'] * DTYPE_SIZE[dtype]} bytes of {dtype} a row) is not a "
                   "multiple of 16 bytes")
    return out


def local_k(schedule: str, tp: int, k: int) -> int:
    """K of the per-stage GEMM: reduce-scatter splits K over the ranks, all-gather does not."""
    return k // tp if SCHEDULES[schedule]["shard_a"] == "K" else k


PICK_WAVE_MARGIN = 0.10  # TPG_PICK_WAVE_MARGIN (runtime/src/tables.h)
PICK_WAVE_RATIO = 2.0  # TPG_PICK_WAVE_RATIO: or more than this times the pick's score (a pick filling little of a wave)
PICK_SMS = 132  # TPG_PICK_SMS (tpgemm.h): H100 / H200 SXM
EXTENT_LIMIT = (1 << 31) - 512  # TPG_EXTENT_LIMIT (runtime/src/shapes.c): a per-stage extent, whole tiles in int
PICK_EXTENT_LIMIT = 1 << 31  # TPG_PICK_EXTENT_LIMIT: an M, N or K past it (no GEMM a GPU holds) takes the K rule alone
PICK_SPLIT_SHARE = 25  # TPG_PICK_SPLIT_SHARE: the split rule's few tiles, percent of the SMs
PICK_SPLIT_KBLOCKS = 128  # TPG_PICK_SPLIT_KBLOCKS: ... of at least this many k-blocks each
PICK_SPLIT_LONG_KBLOCKS = 192  # TPG_PICK_SPLIT_LONG_KBLOCKS: or one row of tiles, at most a wave, this long
SK_FIXUP_KBLOCKS, SK_MIN_KBLOCKS, SK_MAX_PRODUCT = 2, 4, 2147483647  # templates/kernels/stream_k.h


def stage_extents(schedule: str, tp: int, m: int, n: int) -> tuple[int, int]:
    """The per-stage output (rows, columns) of one GPU's walk for a GEMM of global m x n (runtime/src/shapes.c)."""
    s = SCHEDULES[schedule]

    def split(d: str) -> bool:  # is global dim d divided over the ranks in the local problem?
        return (s["shard_a"] == d and s["rotating"] != "A") or (s["shard_b"] == d and s["rotating"] != "B")

    stage_m = (m // tp if split("M") else m) // (tp if s["stage_dim"] == "M" else 1)
    stage_n = (n // tp if split("N") else n) // (tp if s["stage_dim"] == "N" else 1)
    return stage_m, stage_n


GATHER_MAX_ROWS = 128  # TPG_GATHER_MAX_ROWS (runtime/src/plan.h)
ONE_HOP_MAX_ROWS = 64  # TPG_ONE_HOP_MAX_ROWS (runtime/src/plan.h)


def walk_one_gemm(schedule: str, tp: int, stage_m: int) -> bool:
    """Is one GPU's walk one GEMM of all its stages' rows over NVLink (runtime/src/plan.c tpg_plan_walk_order, one
    batch): gathered - an all-gather whose stages split M into at most GATHER_MAX_ROWS rows (every shipped table
    chains its copies) - or one-hop - a reduce-scatter whose stages split M into at most ONE_HOP_MAX_ROWS rows?"""
    s = SCHEDULES[schedule]
    if s["stage_dim"] != "M" or tp < 2:
        return False
    return stage_m <= (GATHER_MAX_ROWS if s["comm"] == "allgather" else ONE_HOP_MAX_ROWS)


def walk_tiles(schedule: str, tp: int, m: int, n: int, tile: dict) -> int:
    """Tiles of one GPU's persistent walk for a GEMM of global m x n (runtime/src/config.c walk_tiles: tp stages
    of the per-stage output, each cut into bm x bn tiles - or, gathered or one-hop, one GEMM of all their rows)."""
    stage_m, stage_n = stage_extents(schedule, tp, m, n)
    tiles_n = -(-stage_n // tile["bn"])
    if walk_one_gemm(schedule, tp, stage_m):
        return -(-(tp * stage_m) // tile["bm"]) * tiles_n
    return tp * -(-stage_m // tile["bm"]) * tiles_n


def walk_fill(schedule: str, tp: int, m: int, n: int, tile: dict, sms: int) -> float:
    """What the wave check compares (runtime/src/config.c walk_fill): the share of the tile slots of the walk's whole
    waves that output fills, a partial tile counting the elements it holds (M = 128 at TP = 2: 64-row stages)."""
    stage_m, stage_n = stage_extents(schedule, tp, m, n)
    waves = -(-walk_tiles(schedule, tp, m, n, tile) // sms)
    return tp * stage_m * stage_n / (waves * sms * tile["bm"] * tile["bn"]) if waves > 0 else 0.0


def default_config(doc: dict, schedule: str, tp: int, dtype: str, k: int = 0, m: int = 0, n: int = 0,
                   sms: int = PICK_SMS) -> str | None:
    """The config a GEMM with this schedule, tp, dtype and K runs untuned (the rule of tpg_config_pick):
    the first by name whose prefer_from_local_k holds for its per-stage K (k <= 0: only a preference
    of 1, i.e. for every shape, holds), else the first by name without a wave_weight (a weighted one only where there
    is no other); never a tuned one, and never one whose kernel trades speed for precision or the reverse (acc: f16,
    fp8_promote, partials: f32: run by name only), nor one marked by_name (experiments, and the twins that pull
    their partials or have the copy engine carry them against the push). With m, n and k given, the wave check: of the
    configs not preferred, the one with the best score - the share of the tile slots of `sms` SMs its walk fills, times
    its wave_weight percent (100 without one) - replaces that pick when
    its score is more than PICK_WAVE_MARGIN above the pick's (few tokens: the last wave of the wide tiles nearly
    empty) or more than PICK_WAVE_RATIO times it (a pick filling a few percent of one wave); of equals the first by
    name, those without a wave_weight first. Then the row rule (_fewest_rows), and the split rule (_split_k): a
    stream_k config is a candidate of that last step only."""
    dt = _kernel_dtypes(doc["kernels"])
    by_name = {k.get("name"): k for k in doc["kernels"] or [] if k}
    cands = sorted((f"{c['name']}_tp{tp}", C.prefer_at(c, tp), C.config_kernel(c, tp), c.get("wave_weight") or 0)
                   for c in doc["configs"]
                   if not c.get("tuned") and not c.get("by_name") and c["schedule"] == schedule and tp in c["tp"]
                   and dt.get(C.config_kernel(c, tp)) == dtype and _pickable(by_name.get(C.config_kernel(c, tp))))
    lk = local_k(schedule, tp, k) if k > 0 else 1
    is_preferred = [least is not None and (least <= 1 or (k > 0 and lk >= least)) for _, least, _, _ in cands]
    preferred = [c for c, p in zip(cands, is_preferred) if p]
    fallback = [c for c, p in zip(cands, is_preferred) if not p]
    fallback = [c for c in fallback if not c[3]] + [c for c in fallback if c[3]]  # wave-weighted ones last
    pick = (preferred or fallback or [None])[0]
    if pick and 0 < m < PICK_EXTENT_LIMIT and 0 < n < PICK_EXTENT_LIMIT and 0 < k < PICK_EXTENT_LIMIT and sms > 0:
        def score(c: tuple) -> float:  # the same arithmetic as runtime/src/config.c wave_score
            return walk_fill(schedule, tp, m, n, by_name[c[2]]["tile"], sms) * (c[3] or 100) / 100
        best = max((c for c in fallback if c != pick), key=score, default=None)  # max keeps the first of equals
        if best and (score(best) > score(pick) + PICK_WAVE_MARGIN or score(best) > score(pick) * PICK_WAVE_RATIO):
            pick = best
        pick = _fewest_rows(schedule, tp, m, n, fallback, by_name, pick)
        pick = _split_k(doc["configs"], by_name, schedule, tp, dtype, m, n, k, sms, pick)
    return pick[0] if pick else None


def spreads(total: int, stages: int, clusters: int) -> bool:
    """Does a launch spread its units over the grid (templates/kernels/spread.h tpg_spreads): one stage, at most 3/4
    as many units as clusters."""
    return stages == 1 and 4 * total <= 3 * clusters


def sk_tiles(tiles: int, ctas: int, kb: int) -> int:
    """The stream-K region of `tiles` tiles of `kb` k-blocks on `ctas` CTAs, 0 = none (templates/kernels/stream_k.h
    tpg_sk_tiles): the partial last round plus one full round, where its even split beats the rounds it replaces by
    more than the fixup."""
    if tiles <= 0 or ctas <= 0 or kb <= 0 or tiles % ctas == 0:
        return 0
    region = min(tiles, ctas + tiles % ctas)
    rounds, per_cta = -(-region // ctas), -(-(region * kb) // ctas)
    if per_cta < SK_MIN_KBLOCKS or per_cta + SK_FIXUP_KBLOCKS > rounds * kb or ctas * region * kb > SK_MAX_PRODUCT:
        return 0
    return region


def _split_k(configs: list, by_name: dict, schedule: str, tp: int, dtype: str, m: int, n: int, k: int, sms: int,
             pick: tuple) -> tuple:
    """The split rule, last (runtime/src/config.c split_k): at TP = 1 the first stream-K config by name replaces the
    pick where its tiles are few (at most PICK_SPLIT_SHARE percent of the SMs) of at least PICK_SPLIT_KBLOCKS k-blocks,
    or one row of them, at most a wave but too many to spread (spreads), of at least PICK_SPLIT_LONG_KBLOCKS, and the
    kernel would split them."""
    if tp != 1:
        return pick
    for c in sorted(configs, key=lambda c: f"{c['name']}_tp1"):  # the table's order: names with their _tp
        kern = by_name.get(C.config_kernel(c, 1)) or {}
        if (c.get("tuned") or c.get("by_name") or c["schedule"] != schedule or 1 not in c["tp"]
                or kern.get("dtype") != dtype or not _pickable(kern, split=True)):
            continue
        t = kern["tile"]
        tiles, kb = walk_tiles(schedule, 1, m, n, t), -(-local_k(schedule, 1, k) // t["bk"])
        few = tiles * 100 <= sms * PICK_SPLIT_SHARE and kb >= PICK_SPLIT_KBLOCKS
        long_row = (stage_extents(schedule, 1, m, n)[0] <= t["bm"] and tiles <= sms and not spreads(tiles, 1, sms)
                    and kb >= PICK_SPLIT_LONG_KBLOCKS)
        if (few or long_row) and sk_tiles(tiles, sms, kb) > 0:
            return (f"{c['name']}_tp1", None, kern["name"], 0)
    return pick


def launch_rows(schedule: str, tp: int, m: int, n: int) -> int:
    """Rows a stage of one GPU's launch (runtime/src/plan.h tpg_walk_launch_rows): all M rows of a gathered or one-hop
    walk, else the stage's."""
    stage_m, _ = stage_extents(schedule, tp, m, n)
    return tp * stage_m if walk_one_gemm(schedule, tp, stage_m) else stage_m


def _fewest_rows(schedule: str, tp: int, m: int, n: int, fallback: list, by_name: dict, pick: tuple) -> tuple:
    """The row rule after the wave check (runtime/src/config.c fewest_rows): of the configs not preferred (fallback,
    in wave order: unweighted ones first, then by name) whose tiles have fewer rows than the pick's and either the
    pick's columns and as many tiles in the walk (the same walk with less work a tile) or room for all the launch's
    rows in one row of tiles (the pick's taller tiles compute rows that do not exist), the one with the fewest rows
    (the first of equals) - decode: the 64x128 against the 128-row kernels at M = 16-64."""
    tile = by_name[pick[2]]["tile"]
    tiles = walk_tiles(schedule, tp, m, n, tile)
    rows = launch_rows(schedule, tp, m, n)
    best = pick
    for c in fallback:
        t = by_name[c[2]]["tile"]
        same_walk = t["bn"] == tile["bn"] and walk_tiles(schedule, tp, m, n, t) == tiles
        if c != pick and t["bm"] < by_name[best[2]]["tile"]["bm"] and (same_walk or rows <= t["bm"]):
            best = c
    return best


def _pickable(kernel: dict | None, split: bool = False) -> bool:
    """May a default pick take this kernel entry (tpg_config_pick's candidates, runtime/src/config.c)? A stream_k one
    only in the split rule (split=True), every other one only in the steps before it."""
    k = kernel or {}
    return ((k.get("acc") or "f32") == "f32" and not k.get("fp8_promote") and (k.get("partials") or "out") == "out"
            and bool(k.get("stream_k")) == split)


def _kernel_dtypes(kernels: list | None) -> dict:
    """name -> dtype of the kernel entries that have both (the schema walk reports the others); of a duplicated name
    the first's (config.kernels_by_name)."""
    return {name: k["dtype"] for name, k in C.kernels_by_name(kernels).items() if k.get("dtype")}


def tuned_config_name(t: dict) -> str:
    """tuned_<model>_<layer>_<dtype>_m<tokens> or tuned_<m>x<n>x<k>_<schedule short>_<dtype> (without _tp<tp>)."""
    if t.get("model") is not None:  # '' too: reported as an unknown model, and not a shape
        return f"tuned_{re.sub(r'[^A-Za-z0-9_]', '_', t['model'])}_{t['layer']}_{t['dtype']}_m{t.get('tokens')}"
    s = t["shape"]
    return f"tuned_{s['m']}x{s['n']}x{s['k']}_{SCHEDULES[t['schedule']]['short']}_{t['dtype']}"


def _config_complete(c: dict | None) -> bool:
    """A config whose required fields survived the schema walk (optional ones may be None)."""
    return bool(c) and all(c.get(f) is not None for f in ("name", "schedule", "tp", "kernel"))


def check(doc: dict, w, main: dict, kernels: dict | None = None, seen: dict | None = None) -> None:
    """Errors of doc's models and tuned entries into walker w. main: the document holding the
    models and configs (doc itself for schedules.yaml); kernels: name -> dtype visible to doc;
    seen: tuned key -> "file:line" across the files loaded so far."""
    seen = {} if seen is None else seen
    kernels = kernels if kernels is not None else _kernel_dtypes(doc["kernels"])
    if any(v is None for v in (doc.get("models", []), doc.get("tuned"), main.get("configs"), main.get("kernels"))):
        return  # the schema walk reported it
    names: dict[str, int] = {}
    configs_broken = any(e.startswith(("kernels", "configs")) for e in w.error_paths)
    for i, p in enumerate(doc.get("models") or []):
        if p and None not in p.values() and all(_config_complete(c) for c in main["configs"]):
            _check_model(p, f"models[{i}]", w, main, names, configs_broken)
    presets = {p["name"]: p for p in main.get("models") or [] if p and p.get("name")}
    complete = {n for n, p in presets.items() if None not in p.values()}  # the schema walk reported the others
    configs = {f"{c['name']}_tp{tp}" for c in main["configs"] if c and c.get("name")
               for tp in (c["tp"] if isinstance(c.get("tp"), list) else [c.get("tp")])}
    for i, t in enumerate(doc["tuned"]):
        shape = list(((t or {}).get("shape") or {}).values())
        if t and all(t.get(f) is not None for f in ("dtype", "schedule", "tp", "kernel")) \
                and (None not in shape or not any(shape)):  # a shape with a field missing was reported
            _check_tuned(t, f"tuned[{i}]", w, presets, kernels, seen, complete)
            _check_tuned_name(t, f"tuned[{i}]", w, configs, seen)
            _check_tuned_pulls(t, f"tuned[{i}]", w, main)


def _check_tuned_pulls(t: dict, path: str, w, main: dict) -> None:
    """A tuned all-gather choice at TP >= 2 may not run a kernel built without the pull prologue (config.py
    _check_no_pulls says why)."""
    entry = next((k for k in main.get("kernels") or [] if k and k.get("name") == t["kernel"]), None)
    if (entry and t["tp"] >= 2 and SCHEDULES[t["schedule"]]["comm"] == "allgather"
            and any(C.no_pulls(d) for d in entry.get("defines") or [])):
        _err(w, f"{path}.kernel", *C.no_pulls_error(t["kernel"]))


def _check_tuned_name(t: dict, path: str, w, configs: set, seen: dict) -> None:
    """The config a tuned choice adds must have a name of its own: model names that differ only in
    characters the name sanitises ('a-b', 'a_b') or a user config of that name would alias it."""
    if (t.get("model") is None) == (t.get("shape") is None):
        return  # _check_tuned reported it
    name = f"{tuned_config_name(t)}_tp{t['tp']}"
    where = f"{w.filename}:{w.lines[path]}"
    if name in configs:
        _err(w, path, f"its config {name!r} is also the name of a config in configs", "rename that config")
    first_key, first_where = seen.setdefault(("config name", name), (tuned_key(t), where))
    if first_key != tuned_key(t):
        _err(w, path, f"its config {name!r} is also the config of another tuned choice (at {first_where})",
             "model names that stay distinct with '-' and '.' read as '_'")


def _err(w, path: str, problem: str, allowed: str) -> None:
    line = w.lines.get(path) or w.lines[path.rsplit(".", 1)[0]]
    w.error(line, path, problem, allowed)


def _check_model(p: dict, path: str, w, main: dict, names: dict, configs_broken: bool) -> None:
    """A preset's own fields and its layers' GEMMs; whether a config runs each layer only where the kernels and configs
    had no error (one bad kernel dtype would otherwise add a line per layer and tp)."""
    if not NAME.match(p["name"]):
        _err(w, f"{path}.name", f"{p['name']!r} is not a model name", "letters, digits, '.', '-', '_'")
    elif p["name"] in names:
        _err(w, f"{path}.name", f"duplicate model name {p['name']!r} (first at line {names[p['name']]})",
             "a model name not used above")
    names.setdefault(p["name"], w.lines[f"{path}.name"])
    if p["heads"] % p["kv_heads"]:
        _err(w, f"{path}.kv_heads", f"{p['heads']} heads are not a multiple of {p['kv_heads']} kv_heads",
             "a divisor of heads (grouped-query attention)")
    for field, comm in (("column_parallel", "allgather"), ("row_parallel", "reduce_scatter")):
        if SCHEDULES[p[field]]["comm"] != comm:
            ok = ", ".join(n for n, s in sorted(SCHEDULES.items()) if s["comm"] == comm)
            _err(w, f"{path}.{field}", f"{field} needs a schedule with comm {comm}, {p[field]} has "
                 f"{SCHEDULES[p[field]]['comm']}", ok)
            return
    for tp in p["tp"]:
        for g in gemms(p):
            if not configs_broken and default_config(main, g.schedule, tp, p["dtype"]) is None:
                _err(w, f"{path}.tp", f"layer {g.layer}: no config runs {g.schedule} at tp {tp} with "
                     f"dtype {p['dtype']}", _no_default_fix(main, g.schedule, tp, p["dtype"]))
            for problem in shape_problems(g.schedule, tp, g.m, g.n, g.k, p["dtype"]):
                field, allowed = layer_blame(g.layer, problem)
                _err(w, f"{path}.{field}", f"layer {g.layer} ({g.m} x {g.n} x {g.k}) at tp {tp}: {problem}", allowed)


def _no_default_fix(doc: dict, schedule: str, tp: int, dtype: str) -> str:
    """What a preset at a tp without a default config of a layer's schedule and dtype may do instead: the tps that
    have one, or none; and add a config there. A config of that schedule and dtype that default_config passes over
    (by_name, tuned, or a kernel no default pick takes: acc f16, fp8_promote, partials f32, stream_k) is named, not
    denied: the file has it, run by name only."""
    tps = [t for t in range(1, C.MAX_TP + 1) if default_config(doc, schedule, t, dtype)]
    dt = _kernel_dtypes(doc["kernels"])
    named = {t: sorted(f"{c['name']}_tp{t}" for c in doc["configs"] if c["schedule"] == schedule and t in c["tp"]
                       and dt.get(C.config_kernel(c, t)) == dtype) for t in range(1, C.MAX_TP + 1)}
    where = (f"tp {', '.join(map(str, tps))}, where configs has one" if tps else
             "no tp: configs has none of that schedule and dtype" if not any(named.values()) else
             "no tp: configs has none of that schedule and dtype that a default pick takes")
    by_name = f"; {', '.join(named[tp])} {'is' if len(named[tp]) == 1 else 'are'} run by name only" if named[tp] else ""
    return f"{where} (or add a config of {schedule} with a {dtype} kernel at tp {tp}{by_name})"


def layer_blame(layer: str, problem: str) -> tuple[str, str]:
    """The preset field a shape_problems() line of one layer comes from, and what would be allowed: M is tokens, N and
    K the fields of LAYER_FIELDS (the TMA maps' rows, which are M or N, count as tokens)."""
    dim = re.search(r"\b([MNK]) = ", problem)
    fields = LAYER_FIELDS[layer].get(dim.group(1), ("tokens",)) if dim else ("tokens",)
    extent = f"the {layer} layer's {dim.group(1)}" if dim else "the extents"
    if "multiple of 16 bytes" in problem:
        need = f"{' and '.join(fields)} giving K rows of a multiple of 16 bytes (the TMA maps' row pitch)"
    elif "multiple of 8" in problem:
        need = f"{' and '.join(fields)} giving a per-stage N that is a multiple of 8"
    else:
        need = f"{' and '.join(fields)} such that {extent} meets every tp of the preset"
    return fields[0], need


def tuned_key(t: dict) -> tuple:
    """What a tuned choice decides for: (model, layer, dtype, tp, tokens) or (shape, dtype, schedule, tp). A choice
    holds for the M it was tuned at (tpg_dispatch_find takes the row of the nearest M, and within TPG_TUNED_M_REACH
    of it only), not for every M of the layer: a model layer tuned at 128 tokens keeps its default pick at 16384."""
    if t.get("model") is not None:
        return (t["model"], t["layer"], t["dtype"], t["tp"], t.get("tokens"))
    return (tuple(t["shape"].get(f) for f in "mnk"), t["dtype"], t["schedule"], t["tp"])


def _check_tuned(t: dict, path: str, w, presets: dict, kernels: dict, seen: dict, complete: set) -> None:
    if not any((t.get("shape") or {}).values()):
        t["shape"] = None  # the schema walk fills an absent map with its defaults
    if (t.get("model") is None) == (t.get("shape") is None) or (t.get("model") is None) != (t.get("layer") is None):
        _err(w, path, "a tuned choice names either model and layer, or shape", "{model, layer, ...} or {shape, ...}")
        return
    if t.get("model") is not None:
        if t["model"] not in presets:
            _err(w, f"{path}.model", f"unknown model {t['model']!r}", ", ".join(presets) or "(no models)")
        if t["layer"] not in LAYERS:
            _err(w, f"{path}.layer", f"unknown layer {t['layer']!r}", ", ".join(LAYERS))
        if t["model"] in complete:
            t["tokens"] = t.get("tokens") or presets[t["model"]]["tokens"]  # one key for "the preset's M"
    else:
        for field in ("tokens", "n", "k"):
            if t.get(field) is not None:
                _err(w, f"{path}.{field}", f"{field} in a tuned shape, whose sizes are shape's", "no " + field)
    _check_tuned_problem(t, path, w, {n: presets[n] for n in complete})
    where = f"{w.filename}:{w.lines[path]}"
    if seen.setdefault(tuned_key(t), where) != where:
        _err(w, path, f"a second tuned choice for the same {'layer' if t.get('model') else 'shape'} "
             f"(first at {seen[tuned_key(t)]})", "one tuned choice per key")
    for route in C.PARTIAL_ROUTE_FIELDS:
        if t.get(route) and (SCHEDULES[t["schedule"]]["comm"] != "reduce_scatter" or t["tp"] < 2):
            _err(w, f"{path}.{route}", f"{route} for {t['schedule']} at tp {t['tp']}, which moves no partials",
                 "false, or a ReduceScatter schedule at tp >= 2")
    if t.get("pull_partials") and t.get("copy_engine_partials"):
        _err(w, f"{path}.copy_engine_partials", "copy_engine_partials with pull_partials: a partial is either carried "
             "into the receiver's slot or read from the sender's, not both", "one of the two")
    if t["kernel"] not in kernels:
        _err(w, f"{path}.kernel", f"unknown kernel {t['kernel']!r}", ", ".join(kernels) or "(no kernels)")
    elif kernels[t["kernel"]] != t["dtype"]:
        _err(w, f"{path}.kernel", f"kernel {t['kernel']!r} has dtype {kernels[t['kernel']]}, not {t['dtype']}",
             f"a {t['dtype']} kernel")


def _check_tuned_problem(t: dict, path: str, w, presets: dict) -> None:
    """A tuned choice must run its layer's collective and fit its GEMM (as a preset's layers must: shape_problems),
    so that it fails here, with its line, and not when the runtime first meets it."""
    if t.get("model") is not None:
        if t["model"] not in presets or t["layer"] not in LAYERS:
            return  # reported (an incomplete preset too, by the schema walk)
        g = {x.layer: x for x in gemms(presets[t["model"]], t["tokens"])}[t["layer"]]
        comm = SCHEDULES[g.schedule]["comm"]
        if SCHEDULES[t["schedule"]]["comm"] != comm:
            ok = ", ".join(n for n, s in sorted(SCHEDULES.items()) if s["comm"] == comm)
            _err(w, f"{path}.schedule", f"{t['schedule']} for layer {t['layer']}, whose GEMM is {comm}", ok)
            return
        m, n, k = g.m, g.n, g.k
        for field, now in (("n", n), ("k", k)):
            if t.get(field) is not None and t[field] != now:
                _err(w, f"{path}.{field}", f"layer {t['layer']} of model {t['model']} was tuned at {field} = "
                     f"{t[field]}, and the preset now gives {now}: its timings say nothing about this GEMM",
                     f"no such choice: delete it (or its file, {w.filename}), then tune again (python3 -m "
                     "generator tune reads the schedules file first, so it stops here too)")
    else:
        m, n, k = (t["shape"][f] for f in "mnk")
    for problem in shape_problems(t["schedule"], t["tp"], m, n, k, t["dtype"]):
        _err(w, path, f"{m} x {n} x {k} at tp {t['tp']}: {problem}", "a GEMM that the schedule can run at this tp")


def _read(p: str, schema: C.Field = C.TOP):
    """The YAML node tree of file p; ConfigError (with a line) if it cannot be read, is not UTF-8 or not YAML (an empty
    one's message lists schema's keys: C.INCLUDED for an included file)."""
    try:
        raw = Path(p).read_bytes()
    except OSError as e:
        raise C.ConfigError([f"{p}:1: (file): cannot read: {e.strerror}; allowed: a readable YAML file"])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise C.ConfigError([f"{p}:{line}: (file): byte 0x{raw[e.start]:02x} is not UTF-8; allowed: a UTF-8 file"])
    return C.compose(text, p, schema)


def _included_files(doc: dict, w, path: str) -> list[str]:
    """The files doc's include: names, in order, each once (a glob and an explicit name, or two globs, may match the
    same file): only regular files, never schedules.yaml itself. A pattern the schema walk refused is skipped."""
    files, seen = [], {os.path.realpath(path)}
    for i, pattern in enumerate(doc["include"] or []):
        if not pattern:
            if pattern == "":
                w.error(w.lines[f"include[{i}]"], f"include[{i}]", "an empty pattern", "a file or a glob")
            continue
        found = sorted(glob.glob(os.path.join(os.path.dirname(path), pattern)))
        regular = [f for f in found if os.path.isfile(f)]
        if not regular and not glob.has_magic(pattern):
            what = "is not a file" if found else "does not exist"
            w.error(w.lines[f"include[{i}]"], f"include[{i}]", f"{pattern!r} {what}",
                    "an existing file, or a glob (tuned/*.yaml) that may match nothing")
        for f in regular:
            if os.path.realpath(f) not in seen:
                seen.add(os.path.realpath(f))
                files.append(f)
    return files


def load(path: str) -> dict:
    """schedules.yaml plus the files of its `include:` (globs, sorted), validated together: every
    error of every file is raised at once (ConfigError). Returns the merged document."""
    doc, w = C.check(_read(path), path)
    walkers, seen = [w], {}
    if doc is not None:
        included = []  # (document, walker) of each included file the schema walk could read
        for f in _included_files(doc, w, path):
            try:
                node = _read(f, C.INCLUDED)
            except C.ConfigError as e:  # reported with the rest: one unreadable file hides no other error
                walkers.append(C.error_walker(f, e.errors))
                continue
            inc, iw = C.check(node, f, C.INCLUDED)
            walkers.append(iw)
            if inc is not None:
                _merge_kernels(doc, inc, iw)
                included.append((inc, iw))
        # the tuned choices, once every file's kernels are known: a choice may name a kernel of any file
        check(doc, w, doc, seen=seen)
        kernels = _kernel_dtypes(doc["kernels"])
        for inc, iw in included:
            check(inc, iw, doc, kernels, seen)
            doc["tuned"] = (doc["tuned"] or []) + (inc["tuned"] or [])
    C.raise_errors(walkers)
    return doc


def _merge_kernels(doc: dict, inc: dict, w) -> None:
    """Appends an included file's kernels to doc's, each name new across the files."""
    mine = _kernel_dtypes(doc["kernels"])
    for i, k in enumerate(inc["kernels"] or []):
        if k and k.get("name") in mine:
            _err(w, f"kernels[{i}].name", f"kernel {k['name']!r} is already defined", "a new kernel name")
    doc["kernels"] = (doc["kernels"] or []) + (inc["kernels"] or [])
