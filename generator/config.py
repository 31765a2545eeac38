"""schedules.yaml -> validated plain data, every error with file, line, field and what is allowed.

The schema is data (TOP below); one walker checks shapes, types and enums, then semantic checks (kernel
legality from kernels.py, references, duplicates) run on the result. All errors are collected, never
just the first. yaml.compose keeps the node marks, so every value knows its line.
"""
from __future__ import annotations

import copy
import difflib
import re
from dataclasses import dataclass, field as dc_field

import yaml

from . import config_inert
from . import kernels as K
from .schedules import SCHEDULES

MAX_TP = 8  # TPG_MAX_TP in templates/kernels/gemm_params.h
MAX_COPY_CHUNKS = 32  # TPG_MAX_COPY_CHUNKS in templates/kernels/copy_chunks.h
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)\Z")  # integers as written in schedules.yaml (fullmatch)


class ConfigError(Exception):
    """Invalid schedules.yaml; .errors holds one 'file:line: path: problem; allowed: ...' per error."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Field:
    kind: str                    # "int" | "str" | "bool" | "ident" | "map" | "list" | "int_list"
    required: bool = False
    default: object = None
    enum: tuple = ()             # allowed values (scalars)
    range: tuple | None = None   # (lo, hi) inclusive, ints
    fields: dict = dc_field(default_factory=dict)  # map: name -> Field
    item: "Field | None" = None  # list: schema of each item
    doc: str = ""                # for 'allowed:' when there is no enum


KERNEL = Field("map", fields={
    "name": Field("ident", required=True, doc="an identifier, unique among kernels"),
    "dtype": Field("str", required=True, enum=tuple(K.DTYPE_SIZE)),
    "acc": Field("str", default="f32", enum=K.ACC_DTYPES),
    "tile": Field("map", required=True, fields={
        "bm": Field("int", required=True, doc="64·consumers·{1,2}"),
        "bn": Field("int", required=True,
                    doc="64, 128, 160, 192 or 256 (the wgmma N shapes); 320 with cooperative_n in a 2x1 cluster"),
        "bk": Field("int", required=True, doc="128 / sizeof(dtype), or 64 / sizeof(dtype) (64B swizzle)"),
    }),
    "stages": Field("int", doc="an integer >= 2, or omit for the largest that fits"),
    "consumers": Field("int", default=2, enum=K.CONSUMERS),
    "cluster": Field("map", default={"m": 1, "n": 1}, fields={
        "m": Field("int", default=1, enum=K.CLUSTER_SIZES),
        "n": Field("int", default=1, enum=K.CLUSTER_SIZES),
    }),
    "raster_group": Field("int", default=8, enum=K.RASTER_GROUPS,
                          doc="m-tiles per raster group of the persistent tile walk (raster: grouped)"),
    "raster": Field("str", default="grouped", enum=K.RASTERS,
                    doc="tile walk: grouped (computed in the kernel) or hilbert (a table the runtime builds)"),
    "consumer_mode": Field("str", default="cooperative", enum=K.CONSUMER_MODES,
                           doc="cooperative (warpgroups share a tile, split along M), pingpong (they alternate "
                               "tiles) or cooperative_n (they share a tile, split along N)"),
    "epilogue_buffers": Field("int", range=K.EPI_BUFFERS,
                              doc="store buffers (epilogue subtiles) per consumer warpgroup; default 2 per m64 slab"),
    "deferred_stores": Field("bool", default=True,
                             doc="cooperative, 16-bit outputs: a tile's last store units go out during the next "
                                 "tile's mainloop (templates/kernels/epilogue_deferred.cuh); false: all in its epilogue"),
    "stream_k": Field("bool", default=False,
                      doc="cooperative (split along M) 1x1-cluster kernels: a one-stage launch (TP = 1, the gathered "
                          "and one-hop walks) splits its last tiles along k over all CTAs "
                          "(templates/kernels/stream_k.h); opt-in"),
    "defines": Field("list", default=[], item=Field("str", doc="NAME=INTEGER, NAME a TPG_ macro without a knob"),
                     doc="extra TPG_ macros of an experimental kernel (A/B runs of x_ configs)"),
    "deferred_flags": Field("bool", default=False,
                            doc="ping-pong, reduce-scatter: a tile's signal flag is raised at the start of the "
                                "warpgroup's next epilogue (its stores overlap the next mainloop) instead of at once"),
    "prefetch_sources": Field("bool", default=False,
                              doc="ping-pong, reduce-scatter: load the next store unit's partial while this unit "
                                  "is stored, instead of before its arithmetic"),
    "tma_partials": Field("bool", default=False,
                          doc="reduce-scatter: TMA-load a tile's received partial into its store buffers and read "
                              "it back with ldmatrix (templates/kernels/epilogue_tma.cuh); needs epilogue_buffers >= "
                              "the store units of a warpgroup's tile"),
    "partials": Field("str", default="out", enum=("out", "f32"),
                      doc="reduce-scatter: the type of the partials that move between stages: out (the output "
                          "type; tp - 1 roundings of it, as a ring reduce-scatter in that type) or f32 (twice the "
                          "bytes; read with plain loads, so not with tma_partials or prefetch_sources)"),
    "fp8_promote": Field("int", default=0, range=(0, 64),
                         doc="fp8: add the tensor pipe's sums into f32 registers every this many k-blocks (0: "
                             "never, fast accumulation); needs <= 80 accumulators per consumer thread (both sets "
                             "<= 160)"),
    "epilogue_subtile": Field("map", default={"m": 64, "n": 64}, fields={
        "m": Field("int", default=64, enum=K.EPI_SUBTILE_M, doc="rows of one store unit (a warpgroup's slab)"),
        "n": Field("int", default=64, enum=K.EPI_SUBTILE_N,
                   doc="columns of one store unit: 64 (128-byte rows) or 32 (64-byte rows, half the staging smem)"),
    }),
})
CONFIG = Field("map", fields={
    "name": Field("ident", required=True,
                  doc="an identifier; each <name>_tp<tp> it expands to is unique among configs"),
    "schedule": Field("str", required=True, enum=tuple(sorted(SCHEDULES))),
    "tp": Field("int_list", required=True, range=(1, MAX_TP)),
    "kernel": Field("ident", required=True, doc="the name of an entry of kernels"),
    "kernel_tp1": Field("ident", doc="the kernel of the TP = 1 config (default: kernel): at TP = 1 every schedule is "
                                     "a local GEMM, so a kernel built for what moves between GPUs (tma_partials) "
                                     "can leave it to the local one; same dtype and acc as kernel"),
    "prefer_from_local_k": Field("int", range=(1, 1 << 31),
                                 doc="the schedule's default for GEMMs whose per-stage K (K/tp for reduce-scatter, "
                                     "K for all-gather) is at least this; 1 = every shape"),
    "prefer_from_local_k_tp1": Field("int", range=(1, 1 << 31),
                                     doc="prefer_from_local_k of the TP = 1 config (default: prefer_from_local_k): at "
                                         "TP = 1 every schedule is the same local GEMM, so a preference set for what "
                                         "moves between GPUs (a reduce-scatter ring's) can leave it to the local "
                                         "kernel's"),
    "copy_chunks": Field("int", default=1, range=(1, MAX_COPY_CHUNKS),
                         doc="all-gather: cut each shard's copy into this many pieces (whole tiles of rows each), "
                             "each with its own flag, so a tile waits only for the piece holding its rows "
                             "(templates/kernels/copy_chunks.h); 1 = one copy per shard"),
    "pull_partials": Field("bool", default=False,
                           doc="reduce-scatter at TP >= 2: a stage's partial stays in the sender's own slot and the "
                               "next rank's epilogue reads it over the link (polling the sender's tile flags), instead "
                               "of being pushed into the receiver's slot (the shipped <family>_pull twins are "
                               "by_name)"),
    "copy_engine_partials": Field("bool", default=False,
                                  doc="reduce-scatter at TP >= 2 over the peer transport: a stage's partial goes into "
                                      "the sender's own slot, and copy-engine nodes of the op's graph carry it band "
                                      "by band into the receiver's slot and raise its tile flags, so the GEMM's SMs "
                                      "issue no store across GPUs (runtime/src/ce_partials.c; a family's twin on "
                                      "another route is by_name: <family>_ce while the family pushes, "
                                      "<family>_push where it carries the field, bench/x2/ce_default.py). It "
                                      "applies to the config's TP >= 2 instances: a TP = 1 one moves nothing"),
    "wave_weight": Field("int", range=(1, 100),
                         doc="percent: a default only through the wave check (or the row rule) of "
                             "tpg_config_pick, which counts the share of the tile slots this config's walk fills at "
                             "this weight (its kernel's rate per slot against the other configs'), the first-by-name "
                             "fallback only where no unweighted config is a candidate; for tiles that pay only at few "
                             "tokens"),
    "by_name": Field("bool", default=False,
                     doc="never a default pick (tpg_config_pick, the presets' dispatch rows): run by name only "
                         "(--config, tpg_config_find, the benchmarks' --alt-config); for experiments, and for the "
                         "twins that time another way of moving partials against a default"),
})
_SCHEDULE = Field("str", enum=tuple(sorted(SCHEDULES)))
_EXTENT = dict(range=(1, 1 << 31))
# Model presets (generator/models.py turns each into its layers' GEMMs and the dispatch table).
MODEL = Field("map", fields={
    "name": Field("str", required=True, doc="a name like llama3-70b (letters, digits, '.', '-', '_')"),
    **{f: Field("int", required=True, **_EXTENT) for f in
       ("hidden", "ffn", "heads", "kv_heads", "head_dim", "tokens")},
    "tp": Field("int_list", required=True, range=(1, MAX_TP)),
    "dtype": Field("str", default="bf16", enum=tuple(K.DTYPE_SIZE)),
    "column_parallel": Field("str", default="AllGather1D_TilingCD_RotatingA", enum=_SCHEDULE.enum),
    "row_parallel": Field("str", default="ReduceScatter1D_TilingA_RotatingC", enum=_SCHEDULE.enum),
})
# A tuned choice (written by `python3 -m generator tune`): a model layer or a plain shape -> kernel.
TUNED = Field("map", fields={
    "model": Field("str", doc="the name of an entry of models"),
    "layer": Field("str", doc="qkv, attn_out, gate_up, down"),
    "shape": Field("map", fields={f: Field("int", required=True, **_EXTENT) for f in "mnk"}),
    "tokens": Field("int", doc="the M it was tuned at (a model layer; default: the preset's)", **_EXTENT),
    "n": Field("int", doc="a model layer's N when it was tuned (the tuner writes it): a preset edited since is "
                          "refused", **_EXTENT),
    "k": Field("int", doc="a model layer's K when it was tuned (as n)", **_EXTENT),
    "dtype": Field("str", required=True, enum=tuple(K.DTYPE_SIZE)),
    "schedule": Field("str", required=True, enum=_SCHEDULE.enum),
    "tp": Field("int", required=True, range=(1, MAX_TP)),
    "kernel": Field("ident", required=True, doc="the name of an entry of kernels"),
    "pull_partials": Field("bool", default=False, doc="reduce-scatter at TP >= 2: the tuned config pulls its "
                                                      "partials (configs[].pull_partials)"),
    "copy_engine_partials": Field("bool", default=False,
                                  doc="reduce-scatter at TP >= 2: the copy engine carries the tuned config's partials "
                                      "(configs[].copy_engine_partials)"),
})
TOP = Field("map", fields={
    "version": Field("int", default=1, enum=(1,)),
    "kernels": Field("list", required=True, item=KERNEL),
    "configs": Field("list", required=True, item=CONFIG),
    "models": Field("list", default=[], item=MODEL),
    "include": Field("list", default=[], item=Field("str", doc="a file or glob, relative to this file")),
    "tuned": Field("list", default=[], item=TUNED),
})
# A file named by `include:` (tuned/*.yaml): kernels and tuned choices only.
INCLUDED = Field("map", fields={
    "version": TOP.fields["version"],
    "kernels": Field("list", default=[], item=KERNEL),
    "tuned": TOP.fields["tuned"],
})
_TAGS = {"int": "tag:yaml.org,2002:int", "str": "tag:yaml.org,2002:str", "bool": "tag:yaml.org,2002:bool"}


def _near(given: str, choices: list[str]) -> list[str]:
    """The "did you mean" of an unknown key or value: the choice it spells in other case (BF16, pingPong: difflib
    rates 'BF16' against 'bf16' at 0.5, below its cutoff), else the closest by difflib."""
    return [c for c in choices if c.lower() == given.lower()][:1] or \
        difflib.get_close_matches(given, choices, n=1, cutoff=0.6)


def _allowed(f: Field) -> str:
    if f.enum:
        return ", ".join(map(str, f.enum))
    if f.range:
        return f"{f.range[0]}..{f.range[1]}"
    if f.kind == "map":
        return "a mapping with " + ", ".join(f.fields)
    if f.kind == "list":
        return "a list"
    return f.doc or f.kind


class _Walker:
    def __init__(self, filename: str):
        self.filename = filename
        self.errors: list[str] = []
        self.lines: dict[str, int] = {}   # path -> line of its value
        self.error_paths: list[str] = []  # the path of each error, for checks that one error makes moot
        self.unknown_paths: set[str] = set()  # those of unknown keys: no value of the schema's was refused

    def error(self, line: int, path: str, problem: str, allowed: str) -> None:
        self.error_paths.append(path)
        self.errors.append(f"{self.filename}:{line}: {path or '(document)'}: {problem}; allowed: {allowed}")

    def walk(self, node: yaml.Node, f: Field, path: str):
        """Plain value of node checked against f, or None after recording errors."""
        line = node.start_mark.line + 1
        self.lines[path] = line
        if f.kind == "map":
            return self._map(node, f, path, line)
        if f.kind == "list":
            if not isinstance(node, yaml.SequenceNode):
                return self.error(line, path, "expected a list", _allowed(f))
            return [self.walk(n, f.item, f"{path}[{i}]") for i, n in enumerate(node.value)]
        if f.kind == "int_list" and isinstance(node, yaml.SequenceNode):
            vals = [self._scalar(n, f, f"{path}[{i}]") for i, n in enumerate(node.value)]
            if not vals:
                return self.error(line, path, "empty list", _allowed(f))
            dup = sorted({v for v in vals if v is not None and vals.count(v) > 1})
            if dup:
                return self.error(line, path, f"{dup[0]} is listed twice", _allowed(f))
            return None if None in vals else vals  # a bad item was reported: the list is unusable
        value = self._scalar(node, f, path)
        return [value] if f.kind == "int_list" and value is not None else value

    def _map(self, node, f: Field, path: str, line: int):
        if not isinstance(node, yaml.MappingNode):
            return self.error(line, path, "expected a mapping", _allowed(f))
        try:
            pairs = _merged(node)
        except yaml.constructor.ConstructorError as e:
            return self.error(line, path, f"merge key (<<): {e.problem}", "a mapping, or a list of mappings, to merge")
        out, seen = {}, {}
        for knode, vnode in pairs:
            kline = knode.start_mark.line + 1
            if not isinstance(knode, yaml.ScalarNode):
                self.error(kline, f"{path}.(key)" if path else "(key)", "a key must be a plain name",
                           ", ".join(f.fields))
                continue
            key = knode.value
            kpath = f"{path}.{key}" if path else key
            if key in seen:
                self.error(kline, kpath, f"duplicate key (first at line {seen[key]})",
                           ", ".join(f.fields))
                continue
            seen[key] = kline
            if f is INCLUDED and key in TOP.fields and key not in f.fields:  # models:, configs:, include:
                self.error(kline, kpath, "only in the schedules file itself, not in a file it includes (move it "
                           "there)", ", ".join(f.fields))
                self.unknown_paths.add(kpath)
                continue
            if key not in f.fields:
                near = _near(str(key), list(f.fields))
                hint = f", did you mean {near[0]!r}?" if near else ""
                self.error(kline, kpath, f"unknown field{hint}", ", ".join(f.fields))
                self.unknown_paths.add(kpath)
                continue
            out[key] = self.walk(vnode, f.fields[key], kpath)
        for key, sub in f.fields.items():
            if key in out:
                continue
            kpath = f"{path}.{key}" if path else key
            if sub.required:
                self.error(line, kpath, "missing required field", _allowed(sub))
                out[key] = None  # reported: later checks see a value they skip, not a missing key
            elif sub.kind == "map":
                out[key] = {k: s.default for k, s in sub.fields.items()}
            else:
                out[key] = sub.default
        return out

    def _scalar(self, node, f: Field, path: str):
        line = node.start_mark.line + 1
        self.lines[path] = line
        want = "int" if f.kind in ("int", "int_list") else "bool" if f.kind == "bool" else "str"
        if not isinstance(node, yaml.ScalarNode) or node.tag != _TAGS[want]:
            got = type(node).__name__[:-4].lower() if not isinstance(node, yaml.ScalarNode) \
                else node.tag.rsplit(":", 1)[-1]
            shown = f" {node.value!r}" if isinstance(node, yaml.ScalarNode) else ""
            article = {"int": "an integer", "bool": "true or false"}.get(want, "a string")
            return self.error(line, path, f"expected {article}, got {got}{shown}", _allowed(f))
        if want == "int" and not DECIMAL.fullmatch(node.value):  # YAML 1.1 reads 0256 as octal, 2:08 as 128
            return self.error(line, path, f"{node.value!r} is not a plain decimal integer", _allowed(f) +
                              " (written in decimal: no leading 0, sign +, 0x, 0b, _ or :)")
        ctor = yaml.constructor.SafeConstructor()
        value = ctor.construct_yaml_int(node) if want == "int" else \
            ctor.construct_yaml_bool(node) if want == "bool" else node.value
        if f.kind == "ident" and not IDENT.match(value):
            return self.error(line, path, f"{value!r} is not an identifier", _allowed(f))
        if f.enum and value not in f.enum:
            near = _near(str(value), list(map(str, f.enum)))
            hint = f", did you mean {near[0]!r}?" if near else ""
            return self.error(line, path, f"unknown value {value!r}{hint}", _allowed(f))
        if f.range and not f.range[0] <= value <= f.range[1]:
            return self.error(line, path, f"{value} is out of range", _allowed(f) +
                              (f" (TPG_MAX_TP = {MAX_TP})" if f.range[1] == MAX_TP else ""))
        return value


def _merged(node: yaml.MappingNode) -> list:
    """The (key, value) pairs of a mapping with YAML merge keys (`<<: *anchor`) resolved as PyYAML's loader
    resolves them: a merged mapping's fields first, each unless the mapping itself names it."""
    merge = "tag:yaml.org,2002:merge"
    if not any(k.tag == merge for k, _ in node.value):
        return node.value
    # flatten_mapping flattens the merged mappings in place too, and an anchor's node is shared by its aliases
    flat = yaml.MappingNode(node.tag, copy.deepcopy(node.value), node.start_mark, node.end_mark)
    yaml.constructor.SafeConstructor().flatten_mapping(flat)  # ConstructorError: not a mapping to merge
    own = [(k, v) for k, v in node.value if k.tag != merge]
    named = {k.value for k, _ in own if isinstance(k, yaml.ScalarNode)}
    inherited, seen = [], set()
    for k, v in reversed(flat.value[:len(flat.value) - len(own)]):  # the last of a key wins, as in the loader
        if isinstance(k, yaml.ScalarNode) and k.value not in named and k.value not in seen:
            seen.add(k.value)
            inherited.append((k, v))
    return inherited[::-1] + own


def compose(text: str, filename: str, schema: Field = TOP) -> yaml.Node:
    """The YAML node tree of text; ConfigError on syntax errors or an empty document (its message lists schema's
    keys: INCLUDED for an included file)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        raise ConfigError([f"{filename}:1: (document): nested too deeply to read; allowed: {_allowed(schema)}"])
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        raise ConfigError([f"{filename}:{line}: YAML syntax error: {getattr(e, 'problem', e)}"])
    if node is None:
        raise ConfigError([f"{filename}:1: (document): empty; allowed: {_allowed(schema)}"])
    return node


def validate(node: yaml.Node, filename: str) -> dict:
    """The checked document as plain data (defaults filled), or ConfigError listing every problem.
    Models and tuned choices are checked against this file alone (models.load adds include:)."""
    from . import models  # models imports this module
    doc, w = check(node, filename)
    if doc is not None:
        models.check(doc, w, doc)
    raise_errors([w])
    return doc


def check(node: yaml.Node, filename: str, top: Field = TOP) -> "tuple[dict | None, _Walker]":
    """Schema and kernel/config checks without raising: (document or None, walker with .errors)."""
    w = _Walker(filename)
    doc = w.walk(node, top, "")
    if doc is not None:
        _semantic(doc, w)
    return doc, w


def error_walker(filename: str, errors: list[str]) -> "_Walker":
    """A walker holding errors found before any walk (a file that cannot be read or parsed), for raise_errors."""
    w = _Walker(filename)
    w.errors.extend(errors)
    return w


def raise_errors(walkers: list) -> None:
    """ConfigError with the errors of every walker, each file's sorted by line, if there are any."""
    errors = []
    for w in walkers:
        line_of = lambda e, n=len(w.filename) + 1: int(e[n:].split(":", 1)[0])
        errors += sorted(w.errors, key=line_of)
    if errors:
        raise ConfigError(errors)


def _rejected_field(w: _Walker, path: str) -> bool:
    """Whether the schema walk refused the value of one of the kernel's fields (an unknown key refuses none: the
    kernel's own fields keep their values, so the checks across them still hold)."""
    return any(e.startswith(f"{path}.") and e not in w.unknown_paths
               and re.split(r"[.\[]", e[len(path) + 1:])[0] in KERNEL.fields for e in w.error_paths)


def _semantic(doc: dict, w: _Walker) -> None:
    """Checks across fields: kernel legality, names, references."""
    kernel_names: dict[str, int] = {}
    for i, k in enumerate(doc.get("kernels") or []):
        if not k:
            continue
        path = f"kernels[{i}]"
        rejected = _rejected_field(w, path)  # before _unique's error: a duplicate name refuses no value of the kernel's
        if k.get("name") is not None:
            _unique(w, kernel_names, k["name"], f"{path}.name", "kernel")
        args = K.entry_args(k)
        if K.required_missing(args) or rejected:
            # reported by the schema walk: a rejected field reads as its default here, and checks across fields
            # would then report rules about a value the file does not hold (consumer_mode: pinpong as cooperative)
            continue
        inert = config_inert.kernel_errors(k, KERNEL.fields["raster_group"].default)
        for sub, problem, allowed in K.check_kernel(**K.checked_args(args)) + inert:
            w.error(w.lines.get(f"{path}.{sub}", w.lines[path]), f"{path}.{sub}", problem, allowed)
    configs = doc.get("configs")
    if configs == []:
        w.error(w.lines["configs"], "configs", "no configs: nothing would be built",
                "a list of {name, schedule, tp, kernel}")
    config_names: dict[str, int] = {}
    for i, c in enumerate(configs or []):
        if not c:
            continue
        path = f"configs[{i}]"
        # where kernels itself was reported, naming every config's kernel unknown would bury that
        if doc.get("kernels") is not None and c.get("kernel") is not None and c["kernel"] not in kernel_names:
            w.error(w.lines[f"{path}.kernel"], f"{path}.kernel", f"unknown kernel {c['kernel']!r}",
                    ", ".join(kernel_names) or "(no kernels defined)")
        if doc.get("kernels") is not None:
            _check_kernel_tp1(w, c, path, kernels_by_name(doc.get("kernels")))
        if (c.get("copy_chunks") or 1) > 1 and SCHEDULES.get(c.get("schedule"), {}).get("comm") != "allgather":
            w.error(w.lines.get(f"{path}.copy_chunks", w.lines[path]), f"{path}.copy_chunks",
                    f"copy_chunks {c['copy_chunks']} in a config of {c.get('schedule')}, which copies nothing (its "
                    "partials move from the GEMM's epilogue)", "1, or an AllGather schedule")
        if c.get("pull_partials") and SCHEDULES.get(c.get("schedule"), {}).get("comm") != "reduce_scatter":
            w.error(w.lines.get(f"{path}.pull_partials", w.lines[path]), f"{path}.pull_partials",
                    f"pull_partials in a config of {c.get('schedule')}, which has no partials (its GEMM reads "
                    "copied shards)", "false, or a ReduceScatter schedule")
        elif c.get("pull_partials") and 1 in (c.get("tp") or []):
            w.error(w.lines.get(f"{path}.pull_partials", w.lines[path]), f"{path}.pull_partials",
                    "pull_partials in a config with tp 1, where nothing moves between GPUs",
                    "tp values >= 2 (a separate config for TP = 1)")
        _check_copy_engine_partials(w, c, path)
        _check_no_pulls(w, c, path, kernels_by_name(doc.get("kernels")))
        prefs = [f for f in ("prefer_from_local_k", "prefer_from_local_k_tp1") if c.get(f) is not None]
        if c.get("wave_weight") is not None and prefs:
            w.error(w.lines.get(f"{path}.wave_weight", w.lines[path]), f"{path}.wave_weight",
                    f"wave_weight with {' and '.join(prefs)}: a config is a default either by its per-stage K or by "
                    "the wave check", "one of the two")
        if c.get("prefer_from_local_k_tp1") is not None and c.get("tp") is not None and 1 not in c["tp"]:
            w.error(w.lines.get(f"{path}.prefer_from_local_k_tp1", w.lines[path]), f"{path}.prefer_from_local_k_tp1",
                    "prefer_from_local_k_tp1 in a config without tp 1, which has no TP = 1 instance",
                    "a tp list with 1, or no prefer_from_local_k_tp1")
        _check_split_only(w, c, path, kernels_by_name(doc.get("kernels")))
        known = kernels_by_name(doc.get("kernels"))
        kernel_at = {tp: known.get(config_kernel(c, tp)) for tp in c.get("tp") or []
                     if isinstance(tp, int) and c.get("kernel") is not None}
        for sub, problem, allowed in config_inert.config_errors(c, kernel_at):
            w.error(w.lines.get(f"{path}.{sub}", w.lines[path]), f"{path}.{sub}", problem, allowed)
        if c.get("name") is not None and c.get("tp") is not None:
            for tp in c["tp"]:
                if tp is not None:
                    _unique(w, config_names, f"{c['name']}_tp{tp}", f"{path}.name", "config")


def _check_split_only(w: _Walker, c: dict, path: str, kernels: dict) -> None:
    """A config whose TP = 1 kernel (kernel_tp1, else kernel; kernel without TP = 1) is a stream_k one is a default only
    through the split rule (runtime/src/config.c split_k), so neither prefer_from_local_k nor wave_weight, which would
    say otherwise, may be set on it (at TP >= 2 a stream_k config is never a default pick)."""
    name = (c.get("kernel_tp1") or c.get("kernel")) if 1 in (c.get("tp") or []) else c.get("kernel")
    kernel = kernels.get(name) or {}
    if not kernel.get("stream_k"):
        return
    for field in ("prefer_from_local_k", "prefer_from_local_k_tp1", "wave_weight"):
        if c.get(field) is not None:
            w.error(w.lines.get(f"{path}.{field}", w.lines[path]), f"{path}.{field}",
                    f"{field} in a config of stream_k kernel {name!r}, a default only through the split rule "
                    "(docs/CONFIG.md, \"How a config is picked\")", f"no {field}")


def _check_kernel_tp1(w: _Walker, c: dict, path: str, kernels: dict) -> None:
    """configs[].kernel_tp1: a known kernel with the dtype and acc of `kernel`, in a config built for TP = 1."""
    name = c.get("kernel_tp1")
    if name is None:
        return
    line, field = w.lines[f"{path}.kernel_tp1"], f"{path}.kernel_tp1"
    if name not in kernels:
        w.error(line, field, f"unknown kernel {name!r}", ", ".join(kernels) or "(no kernels defined)")
    elif c.get("tp") is not None and 1 not in c["tp"]:  # None: tp was refused, and what it lists is unknown
        w.error(line, field, f"kernel_tp1 in a config without TP = 1 (tp: {c.get('tp')})", "tp including 1, or no "
                "kernel_tp1")
    elif c.get("kernel") in kernels:
        main, local = kernels[c["kernel"]], kernels[name]
        for f in ("dtype", "acc"):
            if main.get(f) != local.get(f) and None not in (main.get(f), local.get(f)):  # None: reported
                w.error(line, field, f"kernel {name!r} has {f} {local.get(f)}, kernel {c['kernel']!r} has {f} "
                        f"{main.get(f)}", f"a kernel with {f} {main.get(f)}")


def no_pulls(define) -> bool:
    """Is this `defines` entry TPG_DIAG_NO_PULLS with a value that compiles the pull prologue out (any but 0)?"""
    m = re.fullmatch(r"TPG_DIAG_NO_PULLS=(-?[0-9]+)", str(define))
    return bool(m) and int(m.group(1)) != 0


def no_pulls_error(kernel: str) -> tuple[str, str]:
    """The (problem, allowed) of a kernel without the pull prologue where an all-gather at TP >= 2 may run it."""
    return (f"kernel {kernel!r} is built without the pull prologue (TPG_DIAG_NO_PULLS), which an all-gather at "
            "TP >= 2 may need", "tp: 1, or a kernel without that define")


def _check_copy_engine_partials(w, c: dict, path: str) -> None:
    """copy_engine_partials moves a reduce-scatter's partials between GPUs: no all-gather, at least one tp >= 2 (a
    TP = 1 instance of the config moves nothing and runs without it: plan.build), and not with pull_partials (the
    partial is carried into the receiver's slot, not read from the sender's)."""
    if not c.get("copy_engine_partials"):
        return
    at = w.lines.get(f"{path}.copy_engine_partials", w.lines[path])
    if SCHEDULES.get(c.get("schedule"), {}).get("comm") != "reduce_scatter":
        w.error(at, f"{path}.copy_engine_partials", f"copy_engine_partials in a config of {c.get('schedule')}, which "
                "has no partials (its shards already move by copy nodes)", "false, or a ReduceScatter schedule")
    elif c.get("tp") is not None and not any(isinstance(t, int) and t > 1 for t in c["tp"]):  # None: tp refused
        w.error(at, f"{path}.copy_engine_partials", "copy_engine_partials in a config with no tp above 1, where "
                "nothing moves between GPUs", "a tp list with a value >= 2 (the TP = 1 instance runs without it)")
    elif c.get("pull_partials"):
        w.error(at, f"{path}.copy_engine_partials", "copy_engine_partials with pull_partials: a partial is either "
                "carried into the receiver's slot or read from the sender's, not both", "one of the two")


def _check_no_pulls(w: _Walker, c: dict, path: str, kernels: dict) -> None:
    """A kernel built without the pull prologue (defines: TPG_DIAG_NO_PULLS=1, a local-GEMM A/B twin) would ignore
    the gathered walk's shards and read slots nothing filled: no all-gather config may run it at TP >= 2."""
    k = kernels.get(c.get("kernel"))
    if not k or SCHEDULES.get(c.get("schedule"), {}).get("comm") != "allgather":
        return
    if not any(tp and tp >= 2 for tp in c.get("tp") or []):
        return
    if any(no_pulls(d) for d in k.get("defines") or []):
        w.error(w.lines[f"{path}.kernel"], f"{path}.kernel", *no_pulls_error(c["kernel"]))


def config_kernel(c: dict, tp: int) -> str:
    """The kernel entry name that config c runs at this TP degree (kernel_tp1 at TP = 1 when given)."""
    return (c.get("kernel_tp1") or c["kernel"]) if tp == 1 else c["kernel"]


# The fields by which a reduce-scatter config (or tuned choice) moves its partials another way than the push.
PARTIAL_ROUTE_FIELDS = ("pull_partials", "copy_engine_partials")


def prefer_at(c: dict, tp: int) -> int | None:
    """The prefer_from_local_k of config c's instance at this TP degree (prefer_from_local_k_tp1 at TP = 1 when
    given); None: never preferred."""
    return c["prefer_from_local_k_tp1"] if tp == 1 and c.get("prefer_from_local_k_tp1") is not None else \
        c.get("prefer_from_local_k")


def ce_partials_at(c: dict, tp: int) -> bool:
    """Whether config c's instance at this TP degree moves its partials by copy engine: copy_engine_partials applies
    to the TP >= 2 instances only (a TP = 1 one moves nothing)."""
    return bool(c.get("copy_engine_partials")) and tp > 1


def kernels_by_name(kernels: list | None) -> dict:
    """name -> kernel entry; of a duplicated name the first (the later one is reported as the duplicate, and checking
    configs against it as well would only add errors that follow from that one)."""
    out: dict = {}
    for k in kernels or []:
        if k and k.get("name"):
            out.setdefault(k["name"], k)
    return out


def _unique(w: _Walker, seen: dict[str, int], name: str, path: str, what: str) -> None:
    line = w.lines[path]
    if name in seen:
        w.error(line, path, f"duplicate {what} name {name!r} (first at line {seen[name]})",
                f"a {what} name not used above")
    else:
        seen[name] = line

