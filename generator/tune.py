"""`python3 -m generator tune`, the pure part: candidate kernels, the (shape, candidate) jobs, resume
state, winners and the tuned YAML. The process edge (ninja, build/tpgemm) is generator/tune_cli.py.

Legality is never re-implemented here: each candidate is a kernel entry checked by config.check, the
same walk schedules.yaml gets, and resolved to its KernelSpec by plan.build (so "auto" stages that
equal an explicit depth are one candidate). Knobs beyond tile/stages/consumers come from kernels.py
and the kernel schema at run time (clusters it supports, enum fields such as a raster order).
"""
from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import config as C
from . import kernels as K
from . import models, plan
from .schedules import SCHEDULES

# (bm, bn, bk) as 16-bit types spell them: bk is the 128-byte row, so an fp8 candidate gets twice the bk (_entry);
# --knob tile= takes this spelling for every dtype
TILES = ((128, 128, 64), (128, 192, 64), (128, 256, 64), (256, 128, 64))
# Tiles searched only when `--knob tile=` names them: the few-token picks' 64x128 and the 128x160 (schedules.yaml's
# pp64 and w160 families), which the default search of large-M layers would only slow down.
OPT_IN_TILES = ((64, 128, 64), (128, 160, 64))
STAGES = (3, 4, None)  # None: the deepest ring that fits ("auto"); explicit depths first, so they win a tie
BASE_FIELDS = ("name", "dtype", "acc", "tile", "stages", "consumers", "cluster")


@dataclass(frozen=True)
class Shape:
    """One GEMM to tune: a preset layer (model, layer) or a plain shape (model = layer = "")."""
    model: str
    layer: str
    m: int
    n: int
    k: int
    schedule: str
    tp: int
    dtype: str

    @property
    def key(self) -> str:
        return f"{self.schedule}|tp{self.tp}|{self.dtype}|{self.m}x{self.n}x{self.k}"

    @property
    def label(self) -> str:
        return self.layer or f"{self.m}x{self.n}x{self.k}"


# How a candidate's partials cross GPUs (reduce-scatter at TP >= 2): route -> (the configs[] field that says so, which
# is also the --knob that asks for the route; the suffix of its names). Pushed partials are every layer's baseline.
ROUTES = {"push": (None, ""), "pull": ("pull_partials", "_pull"), "ce": ("copy_engine_partials", "_ce")}
ROUTE_KNOBS = tuple(field for field, _ in ROUTES.values() if field)
assert ROUTE_KNOBS == C.PARTIAL_ROUTE_FIELDS, "a route of the tuner for every way config.py knows, and no other"


@dataclass(frozen=True)
class Candidate:
    entry: dict          # the kernel entry as schedules.yaml spells it
    kernel: str          # canonical KernelSpec name (includes the generator's hash)
    route: str = "push"  # how its partials move (ROUTES): pulled or by copy engine only on reduce-scatter at TP >= 2

    @property
    def name(self) -> str:
        return self.entry["name"] + ROUTES[self.route][1]

    @property
    def pull(self) -> bool:
        return self.route == "pull"

    def fields(self) -> dict:
        """The config / tuned-choice field of its route ({} for the push)."""
        field = ROUTES[self.route][0]
        return {field: True} if field else {}


def moves_partials(entry: dict) -> bool:
    """Is the kernel entry one only for where partials move (partials: f32, which the generator refuses elsewhere:
    generator/config_inert.py)?"""
    return entry.get("partials") == "f32"


def applies(shape: Shape, cand: Candidate) -> bool:
    """Can cand run shape? A pulling, copy-engine or fp32-partial candidate only where partials move: reduce-scatter
    at TP >= 2."""
    partials_move = SCHEDULES[shape.schedule]["comm"] == "reduce_scatter" and shape.tp > 1
    return partials_move or (cand.route == "push" and not moves_partials(cand.entry))


def model_shapes(doc: dict, model: str, tp: int, tokens: int | None = None) -> list[Shape]:
    p = next(x for x in doc["models"] if x["name"] == model)
    return [Shape(model, g.layer, g.m, g.n, g.k, g.schedule, tp, p["dtype"]) for g in models.gemms(p, tokens)]


# Values the default search leaves out; --knob FIELD=VALUE asks for them. cooperative_n has run on H200 only
# at 192x192 (self-test instance sn192) and at 128x320 in a 2x1 cluster (CLI checks and the local bench,
# 2026-12-01), not yet at the tuner's tiles; f32 partials are a numerics choice (docs/CONFIG.md: run by name only), not
# a speed knob, and measured 1.5-21% slower (docs/PERF_NOTES.md 17:43Z).
UNVERIFIED = {"consumer_mode": ("cooperative_n",), "partials": ("f32",)}
RASTER_GROUP_DEFAULT = C.KERNEL.fields["raster_group"].default


def extra_knobs(opt_in: bool = False) -> dict[str, tuple]:
    """Enum fields the kernel schema has beyond BASE_FIELDS (e.g. a raster order), with their values,
    less the UNVERIFIED ones unless opt_in."""
    return {f: tuple(v for v in s.enum if opt_in or v not in UNVERIFIED.get(f, ()))
            for f, s in C.KERNEL.fields.items() if f not in BASE_FIELDS and s.enum}


def _entry(dtype, tile, stages, consumers, cluster, extra) -> dict:
    bm, bn, bk = tile
    bk = bk * 2 // K.DTYPE_SIZE[dtype]  # the same row bytes in any operand type (TILES)
    name = (f"c_{dtype}_{bm}x{bn}x{bk}_s{stages or 'auto'}_w{consumers}_c{cluster[0]}x{cluster[1]}"
            + "".join(f"_{re.sub(r'[^A-Za-z0-9]', '', str(f))}{v}" for f, v in extra))
    e = {"name": name, "dtype": dtype, "tile": {"bm": bm, "bn": bn, "bk": bk}, "consumers": consumers,
         "cluster": {"m": cluster[0], "n": cluster[1]}, **dict(extra)}
    if stages is not None:
        e["stages"] = stages
    if bn % 64:  # a 64-column store unit must divide the columns (128x160: units of 32, as bf16_128x160x64's)
        e["epilogue_subtile"] = {"m": 64, "n": 32}
    return e


def resolve(entry: dict) -> tuple[str | None, list[str]]:
    """(canonical kernel name, []) for a legal entry, else (None, the validation errors): checked in a config that
    can run it (an all-gather at TP = 1, or a reduce-scatter at TP = 2 for a kernel only for moving partials)."""
    schedule, tp = ("ReduceScatter1D_TilingA_RotatingC", 2) if moves_partials(entry) else \
        ("AllGather1D_TilingCD_RotatingA", 1)
    doc = {"kernels": [entry], "configs": [{"name": "c", "schedule": schedule, "tp": tp, "kernel": entry["name"]}]}
    d, w = C.check(C.compose(yaml.safe_dump(doc, sort_keys=False), "candidate"), "candidate")
    if w.errors:
        return None, w.errors
    return plan.build(d, "candidate").kernels[0].name, []


def _spell(field: str, value) -> str:
    """How --knob writes a value: tile 128x256x64, cluster 2x1, stages auto, true / false, others as str()."""
    if field in ("tile", "cluster"):
        return "x".join(str(v) for v in value)
    if isinstance(value, bool):
        return str(value).lower()  # as YAML spells it
    return "auto" if value is None else str(value)


def knob_space(opt_in: bool = False) -> dict[str, tuple]:
    """Every knob the tuner walks and its values: the base ones, then the schema's extra enums (with the
    UNVERIFIED values too when opt_in), then the routes' knobs pull_partials and copy_engine_partials, config knobs
    (reduce-scatter shapes only): pushed partials by default; `--knob pull_partials=false,true` (or
    copy_engine_partials=false,true, or both) profiles each kernel those ways too, since which one wins depends on
    the link (neither yet measured across GPUs: docs/PERF_NOTES.md "Next")."""
    return {"tile": TILES + (OPT_IN_TILES if opt_in else ()), "stages": STAGES, "consumers": tuple(K.CONSUMERS),
            "cluster": tuple(sorted(K.SUPPORTED_CLUSTERS)), **extra_knobs(opt_in),
            **{knob: (False, True) if opt_in else (False,) for knob in ROUTE_KNOBS}}


def restrict(space: dict[str, tuple], knobs: list[str]) -> dict[str, tuple]:
    """space with each FIELD=V1,V2 of knobs keeping only the listed values (spelled as _spell does); a
    value the default search leaves out (UNVERIFIED) may be named; a field given twice keeps the values of both
    (`--knob tile=A --knob tile=B` is `--knob tile=A,B`). Raises ValueError naming the field or value that is not a
    knob's, and what is."""
    out, every = dict(space), knob_space(opt_in=True)
    asked: dict[str, list[str]] = {}
    for knob in knobs:
        field, _, vals = knob.partition("=")
        if field not in space:
            raise ValueError(f"--knob {field}: not a tuner knob; knobs: {', '.join(space)}")
        asked.setdefault(field, []).extend(v for v in vals.split(",") if v)
    for field, vals in asked.items():
        allowed = {_spell(field, v): v for v in dict.fromkeys(space[field] + every.get(field, ()))}
        wanted = list(dict.fromkeys(vals))  # a value named twice is one candidate set
        knob = f"{field}={','.join(wanted)}"
        if not wanted:
            raise ValueError(f"--knob {field}: no value given; {field} takes one or more of: {', '.join(allowed)}")
        unknown = [v for v in wanted if v not in allowed]
        if unknown:
            raise ValueError(f"--knob {knob}: {', '.join(unknown)} not among the values of {field}: "
                             f"{', '.join(allowed)}")
        if field in ROUTE_KNOBS and "false" not in wanted:
            raise ValueError(f"--knob {knob}: pushed partials (false) must stay: they are the baseline every layer "
                             "runs, the all-gather ones included; ask for false,true")
        out[field] = tuple(allowed[v] for v in wanted)
    if out.get("raster") == ("hilbert",) and RASTER_GROUP_DEFAULT not in out.get("raster_group", ()):
        raise ValueError(f"--knob raster=hilbert never reads raster_group (scheduler.cuh), so only its default "
                         f"({RASTER_GROUP_DEFAULT}) is searched there: add {RASTER_GROUP_DEFAULT} to --knob "
                         "raster_group, or leave it out")
    return out


def enumerate_candidates(dtype: str, tiles=TILES, stages=STAGES, extra: dict | None = None,
                         must: list[dict] = (), consumers=None, clusters=None, pulls=(False,),
                         copy_engine=(False,)) -> list[Candidate]:
    """Every legal, distinct kernel for dtype over the knobs, plus `must` (e.g. the default kernel), each pushing,
    then pulling where pulls holds True (pull_partials), then by copy engine where copy_engine does
    (copy_engine_partials): such candidates apply to reduce-scatter shapes only."""
    routes = ["push"] + (["pull"] if True in pulls else []) + (["ce"] if True in copy_engine else [])
    extra = extra_knobs() if extra is None else extra
    consumers = K.CONSUMERS if consumers is None else consumers
    clusters = sorted(K.SUPPORTED_CLUSTERS) if clusters is None else clusters
    combos = itertools.product(tiles, stages, consumers, clusters,
                               itertools.product(*[[(f, v) for v in vals] for f, vals in extra.items()]))
    out, seen = [], set()
    for entry in list(must) + [_entry(dtype, *c) for c in combos if not _idle_knob(c[4])]:
        kernel, errors = resolve(entry)
        if kernel and kernel not in seen:
            seen.add(kernel)
            out += [Candidate(entry, kernel, route) for route in routes]  # pushing first: it wins ties
    return out


def _idle_knob(extra: tuple) -> bool:
    """Whether a combination sets a knob its other knobs make idle: the Hilbert walk reads a table, never the
    grouped raster's TPG_GROUP_M (scheduler.cuh), so with raster: hilbert only raster_group's default is a candidate
    (the others would build and profile the same kernel under other names)."""
    knobs = dict(extra)
    return knobs.get("raster") == "hilbert" and knobs.get("raster_group", RASTER_GROUP_DEFAULT) != RASTER_GROUP_DEFAULT


def config_name(shape: Shape, cand: Candidate) -> str:
    """The config that runs cand for shape in the candidate build (without the _tp suffix)."""
    return f"{SCHEDULES[shape.schedule]['short']}_{cand.name}"


def candidates_doc(shapes: list[Shape], cands: list[Candidate]) -> dict:
    """The candidate schedules file: every candidate kernel at every (schedule, tp) of the shapes."""
    pairs = sorted({(s.schedule, s.tp) for s in shapes})
    configs = [{"name": config_name(Shape("", "", 0, 0, 0, sched, tp, ""), c), "schedule": sched, "tp": [tp],
                "kernel": c.entry["name"], **c.fields()}
               for sched, tp in pairs for c in cands if applies(Shape("", "", 0, 0, 0, sched, tp, ""), c)]
    names = [c["name"] for c in configs]
    if len(set(names)) != len(names):  # one schedule at several tp: one config entry per schedule
        merged: dict[str, dict] = {}
        for c in configs:
            merged.setdefault(c["name"], dict(c, tp=[]))["tp"] += c["tp"]
        configs = list(merged.values())
    kernels = list({c.entry["name"]: c.entry for c in cands}.values())  # a kernel once, however it moves partials
    return {"version": 1, "kernels": kernels, "configs": configs}


def job_key(shape: Shape, cand: Candidate) -> str:
    return f"{shape.key}|{cand.kernel}" + ("" if cand.route == "push" else f"|{cand.route}")


# The sources whose change makes every earlier measurement stale: the kernels, the runtime, the generator.
FINGERPRINTED = ("templates", "runtime/src", "runtime/include", "generator", "build.ninja")
# generator modules that change neither a kernel nor its build: editing them keeps earlier results
UNFINGERPRINTED = ("tune.py", "tune_cli.py", "tune_env.py", "tune_report.py", "vendor.py", "__main__.py")
# The exit status of a run that may have failed for a reason of the moment (build/tpgemm's "another CUDA or runtime
# failure": out of memory beside another process, say - or a fault of the candidate's own): such a run goes again in
# the next tuner runs, RETRIES times at most (the record's `attempts`), then it is final.
RETRIED_EXIT = 5
RETRIES = 3


def retry(rec: dict | None) -> bool:
    """Whether a run's record leaves it to run again (none yet, or a RETRIED_EXIT failure with attempts left)."""
    return rec is None or (rec.get("exit_code") == RETRIED_EXIT and rec.get("attempts", 1) < RETRIES)


def state_key(sources: str, gpu: str, settings: str) -> str:
    """The key of the state's records (their `sources` field): the sources' fingerprint (sources_fingerprint), the
    GPU the runs take (name and SM count: another GPU's timings and winners differ) and the run's settings
    (--iterations / --warmup); a record of another key is stale."""
    return hashlib.sha256("\0".join((sources, gpu, settings)).encode()).hexdigest()[:16]


def sources_fingerprint(root: Path, compiler: str = "") -> str:
    """A hash of FINGERPRINTED's files under root and the compiler's version text (compiler_version): part of the
    state records' key (state_key), so that a record of other sources or another compiler is stale, and named in the
    tuned file's header."""
    h = hashlib.sha256(compiler.encode() + b"\0")
    for top in FINGERPRINTED:
        path = root / top
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for f in files:
            if "__pycache__" in f.parts or (f.parent.name == "generator" and f.name in UNFINGERPRINTED):
                continue
            h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def load_state(lines: list[str], sources: str | None = None) -> dict[tuple[str, str], dict]:
    """(job key, phase) -> the last record of the JSON-lines state ('profile' or 'verify'); torn or
    foreign lines (an interrupted write) are skipped, and with `sources` the records of other sources
    (sources_fingerprint) too."""
    state = {}
    for line in lines:
        try:
            rec = json.loads(line)
            if sources is None or rec.get("sources") == sources:
                state[rec["key"], rec["phase"]] = rec
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
    return state


def pending(shapes: list[Shape], cands: list[Candidate], state: dict) -> list[tuple[Shape, Candidate]]:
    """The (shape, candidate) pairs not profiled yet, or whose last run may have failed for a reason of the moment
    (retry), in a stable order. Every other result is final: a check that failed, a shape the candidate cannot run,
    a timeout or a spill says something about the candidate."""
    return [(s, c) for s in shapes for c in cands if applies(s, c) and retry(state.get((job_key(s, c), "profile")))]


def ranked(shape: Shape, cands: list[Candidate], state: dict) -> list[tuple[float, Candidate]]:
    """Candidates that ran for shape, fastest first (ties: candidate order)."""
    out = []
    for i, c in enumerate(cands):
        if not applies(shape, c):
            continue
        rec = state.get((job_key(shape, c), "profile"))
        if rec and rec.get("exit_code") == 0 and isinstance(rec.get("avg_ms"), (int, float)):
            out.append((rec["avg_ms"], i, c))
    return [(ms, c) for ms, _, c in sorted(out, key=lambda t: (t[0], t[1]))]


# A candidate wins over the layer's default only this much faster (its time <= the default's x (1 - WIN_MARGIN)): one
# timed run a candidate, and runs of the same kernel differ by ~1% (BENCHMARKS.md recorded 1.000x-1.002x "winners" that
# lost to the defaults when timed again).
WIN_MARGIN = 0.02


def by_merit(shape: Shape, cands: list[Candidate], state: dict, default: Candidate | None = None) -> list[Candidate]:
    """The order in which candidates that ran for shape may win: those at least WIN_MARGIN faster than the default,
    fastest first, then the default, and none behind it: a slower candidate is no fix for a default that fails its
    check (default_failed_check). None at all where the default has no timing (default_untimed): nothing to weigh a
    candidate against. Only for a layer that no default config runs (default None), by time."""
    runs = ranked(shape, cands, state)
    if default is None:
        return [c for _, c in runs]
    base = next((ms for ms, c in runs if c == default), None)
    if base is None:
        return []
    return [c for ms, c in runs if c != default and ms <= base * (1 - WIN_MARGIN)] + [default]


def default_untimed(shape: Shape, default: Candidate | None, state: dict) -> str | None:
    """Why shape's default has no timing to weigh its candidates against (by_merit then ranks none), or None where it
    has one or there is no default: its timing run is to come, runs again after a runtime failure, or failed."""
    prof = state.get((job_key(shape, default), "profile")) if default else None
    if default is None or (prof and prof.get("exit_code") == 0 and isinstance(prof.get("avg_ms"), (int, float))):
        return None
    if prof is None:
        return f"its default {default.name} has not been timed yet"
    if retry(prof):
        return f"its default {default.name}'s timing run failed ({said(prof)}); it runs again in the next tuner run"
    return f"its default {default.name}'s timing run failed ({said(prof)}), so nothing can be weighed against it"


def default_failed_check(shape: Shape, default: Candidate | None, state: dict) -> dict | None:
    """The default's checked run where it failed for good (the layer may compute wrong numbers untuned), else None."""
    rec = state.get((job_key(shape, default), "verify")) if default else None
    return rec if rec and not retry(rec) and not _passed(rec) else None


def said(rec: dict) -> str:
    """A failed run in a few words: its exit status and the start of its message."""
    return f"exit {rec.get('exit_code')}" + (f": {str(rec['error'])[:160]}" if rec.get("error") else "")


def _passed(rec: dict | None) -> bool:
    return bool(rec) and rec.get("check") == "passed" and rec.get("exit_code") == 0


def pick_winner(shape: Shape, cands: list[Candidate], state: dict,
                default: Candidate | None = None) -> tuple[Candidate | None, list[Candidate]]:
    """(winner, still to verify): the first candidate by_merit whose checked run passed; candidates ahead of it
    without a verify record must be verified first (the edge runs them and asks again)."""
    for c in by_merit(shape, cands, state, default):
        rec = state.get((job_key(shape, c), "verify"))
        if retry(rec):
            return None, [c]
        if _passed(rec):
            return c, []
    return None, []


def checked_winner(shape: Shape, cands: list[Candidate], state: dict, default: Candidate | None,
                   skip: frozenset[str]) -> Candidate | None:
    """The first candidate by_merit, of those not named in skip, whose checked run passed already (no new run): what
    stands for a layer whose next check failed for a reason of the moment. Never one behind the default: where the
    default's own check failed so, nothing stands (a slower candidate, or one within WIN_MARGIN, is no winner)."""
    for c in by_merit(shape, cands, state, default):
        if c.name not in skip and _passed(state.get((job_key(shape, c), "verify"))):
            return c
        if c == default:
            return None
    return None


def tuned_choice(s: Shape) -> dict:
    """What a tuned choice for s decides for: the model layer at its M, or the shape."""
    if s.model:  # with the layer's N and K, so that a preset edited since is refused, not silently re-used
        return {"model": s.model, "layer": s.layer, "tokens": s.m, "n": s.n, "k": s.k}
    return {"shape": {"m": s.m, "n": s.n, "k": s.k}}


def choice_key(s: Shape) -> tuple:
    """models.tuned_key of s's tuned choice: what an earlier file's choice for the same layer or shape has too."""
    return models.tuned_key(dict(tuned_choice(s), dtype=s.dtype, schedule=s.schedule, tp=s.tp))


def tuned_doc(shapes: list[Shape], winners: dict[str, Candidate], prefix: str) -> dict:
    """The tuned file's document: the winners' kernels, renamed with prefix so files of other models or tp degrees
    never clash, and one tuned choice per shape that has a winner."""
    kernels, tuned = {}, []
    for s in shapes:
        c = winners.get(s.key)
        if c is None:
            continue
        name = f"{prefix}_{c.entry['name']}"
        kernels[name] = dict(c.entry, name=name)
        tuned.append(dict(tuned_choice(s), dtype=s.dtype, schedule=s.schedule, tp=s.tp, kernel=name, **c.fields()))
    return {"version": 1, "kernels": list(kernels.values()), "tuned": tuned}


def keep_earlier(doc: dict, earlier: dict, decided: set[tuple]) -> tuple[dict, list[dict], list[dict]]:
    """(doc with earlier's choices for what this run decided nothing about added - keys not in decided, as
    models.tuned_key spells them - with their kernels; those kept; those not kept because their kernel's name is one
    of doc's with another entry, which would change what they run). A partial run (every `down` run timed out, say)
    so keeps the layers it has no new result for."""
    mine = {k["name"]: k for k in doc["kernels"]}
    theirs = {k["name"]: k for k in earlier.get("kernels") or [] if isinstance(k, dict) and "name" in k}
    kept, clashing, kernels = [], [], dict(mine)
    for t in earlier.get("tuned") or []:
        if models.tuned_key(t) in decided:
            continue
        entry = theirs.get(t.get("kernel"))
        if entry is not None and mine.get(t["kernel"], entry) != entry:
            clashing.append(t)
            continue
        kept.append(t)
        if entry is not None:
            kernels[t["kernel"]] = entry
    return dict(doc, kernels=list(kernels.values()), tuned=doc["tuned"] + kept), kept, clashing


def tuned_text(doc: dict, provenance: list[str] = ()) -> str:
    """The tuned file (include:d by schedules.yaml): doc under a comment that says what wrote it and, one "key: value"
    line each, where its timings come from (header_fields reads them back): a comment, since the schema of an
    included file (config.INCLUDED) has no field for them."""
    head = ("# Written by `python3 -m generator tune`; schedules.yaml includes it (include: tuned/*.yaml).\n"
            "# Rerun the tuner rather than editing; delete this file to go back to the default configs.\n"
            + "".join(f"# {line}\n" for line in provenance))
    return head + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=110)


def header_fields(text: str) -> dict[str, str]:
    """The "# key: value" lines of a tuned file's leading comment (tuned_text's provenance)."""
    out = {}
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        key, sep, value = line[1:].strip().partition(": ")
        if sep and re.fullmatch(r"[a-z][a-z ]*", key):
            out.setdefault(key, value)
    return out
