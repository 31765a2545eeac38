"""Validated config data -> frozen specs: deduplicated kernels, expanded configs, schedule tables."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from . import GENERATOR_VERSION, dispatch
from .config import ce_partials_at, config_kernel, prefer_at
from .kernels import KernelSpec, entry_args, make_kernel
from .schedules import ScheduleTable, build_table


@dataclass(frozen=True)
class ConfigSpec:
    """One `--config NAME`: a schedule at one TP degree running one kernel."""
    name: str
    schedule: ScheduleTable
    kernel: KernelSpec
    prefer_from_local_k: int = 0  # 0: never preferred (schedules.yaml configs[].prefer_from_local_k)
    copy_chunks: int = 1  # all-gather: pieces per shard copy (schedules.yaml configs[].copy_chunks)
    pull_partials: bool = False  # reduce-scatter: partials read from the sender's slot (configs[].pull_partials)
    wave_weight: int = 0  # 1..100: a default only by the wave check, its fill weighted so (configs[].wave_weight)
    tuned: bool = False  # a tuned choice's config: run through the dispatch table or by name, never a default pick
    copy_engine_partials: bool = False  # reduce-scatter: partials moved by copy-engine nodes (configs[] field)
    by_name: bool = False  # never a default pick: run by name only (configs[].by_name)


@dataclass(frozen=True)
class Plan:
    source: str                        # config file name as shown in headers ("schedules.yaml")
    configs: tuple[ConfigSpec, ...]    # sorted by name
    kernels: tuple[KernelSpec, ...]    # unique, sorted by name
    tables: tuple[ScheduleTable, ...]  # unique (schedule, tp) in use, sorted by C name
    config_hash: str                   # 16 hex digits of sha256 over the planned content
    version: str = GENERATOR_VERSION
    dispatch: tuple = ()               # models.DispatchEntry rows of generated/dispatch.c
    unused_kernels: tuple[str, ...] = ()  # kernel entries no config runs at any TP: not built (nothing could run them)


def build(doc: dict, source: str) -> Plan:
    """The plan of a validated document (config.validate or models.load). Pure."""
    doc = dispatch.with_tuned_configs(doc)
    by_name: dict[str, KernelSpec] = {}
    for k in doc["kernels"]:
        by_name[k["name"]] = make_kernel(**entry_args(k))
    tables: dict[tuple[str, int], ScheduleTable] = {}
    configs = []
    used: set[str] = set()
    for c in doc["configs"]:
        for tp in c["tp"]:
            used.add(config_kernel(c, tp))
            key = (c["schedule"], tp)
            if key not in tables:
                tables[key] = build_table(*key)
            configs.append(ConfigSpec(f"{c['name']}_tp{tp}", tables[key], by_name[config_kernel(c, tp)],
                                      prefer_at(c, tp) or 0, c.get("copy_chunks") or 1,
                                      bool(c.get("pull_partials")), c.get("wave_weight") or 0,
                                      bool(c.get("tuned")), ce_partials_at(c, tp), bool(c.get("by_name"))))
    configs.sort(key=lambda c: c.name)
    kernels = tuple(sorted({by_name[name] for name in used}, key=lambda k: k.name))
    ordered_tables = tuple(sorted(tables.values(), key=lambda t: t.c_name))
    content = {
        "generator": GENERATOR_VERSION,
        "kernels": [k.fields() for k in kernels],
        # the preference, the copy cut, pulled or copy-engine partials, the wave weight and by_name are hashed only
        # where set, so plans without them hash as before
        "configs": [[c.name, c.schedule.name, c.schedule.tp, c.kernel.name]
                    + ([c.prefer_from_local_k] if c.prefer_from_local_k else [])
                    + ([{"copy_chunks": c.copy_chunks}] if c.copy_chunks != 1 else [])
                    + ([{"pull_partials": True}] if c.pull_partials else [])
                    + ([{"copy_engine_partials": True}] if c.copy_engine_partials else [])
                    + ([{"wave_weight": c.wave_weight}] if c.wave_weight else [])
                    + ([{"by_name": True}] if c.by_name else []) for c in configs],
    }
    rows = dispatch.entries(doc, [c.name for c in configs])
    if rows:  # absent without presets, so that such a plan hashes as before
        content["dispatch"] = [asdict(r) for r in rows]
    digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:16]
    return Plan(source, tuple(configs), kernels, ordered_tables, digest, dispatch=rows,
                unused_kernels=tuple(sorted(set(by_name) - used)))
