"""Tuned choices -> configs, and model presets + tuned choices -> the dispatch table (pure).

Row order of tpg_dispatch[]: each preset in file order, its tp degrees ascending, its layers in
models.LAYERS order (a layer's tuned choice at the preset's M in its place); then tuned choices not covered
by a preset's tp list or tuned at another M, then tuned shapes, both in the order they were loaded.
tpg_dispatch_find (runtime/src/dispatch.c) relies on nothing but the rows.
"""
from __future__ import annotations

from .config import PARTIAL_ROUTE_FIELDS
from .models import DispatchEntry, default_config, gemms, tuned_config_name, tuned_key


def with_tuned_configs(doc: dict) -> dict:
    """doc with one config per tuned choice appended (marked tuned, so default_config skips it)."""
    extra = [{"name": tuned_config_name(t), "schedule": t["schedule"], "tp": [t["tp"]], "kernel": t["kernel"],
              "tuned": True, **{f: True for f in PARTIAL_ROUTE_FIELDS if t.get(f)}}
             for t in doc.get("tuned") or []]
    return dict(doc, configs=list(doc["configs"]) + extra) if extra else doc


def entries(doc: dict, config_names: list[str]) -> tuple[DispatchEntry, ...]:
    """The dispatch rows of a validated document (tuned configs already added)."""
    index = {name: i for i, name in enumerate(config_names)}
    presets = {p["name"]: p for p in doc.get("models") or []}
    tuned = {tuned_key(t): t for t in doc.get("tuned") or []}
    out = []

    def row(model, layer, m, n, k, dtype, schedule, tp, t):
        name = f"{tuned_config_name(t)}_tp{tp}" if t else default_config(doc, schedule, tp, dtype, k, m, n)
        out.append(DispatchEntry(model, layer, m, n, k, dtype, t["schedule"] if t else schedule, tp,
                                 name, index[name], bool(t)))

    for p in presets.values():
        for tp in sorted(p["tp"]):
            for g in gemms(p):
                t = tuned.pop((p["name"], g.layer, p["dtype"], tp, p["tokens"]), None)  # models.tuned_key
                m = (t or {}).get("tokens") or g.m
                row(p["name"], g.layer, m, g.n, g.k, p["dtype"], g.schedule, tp, t)
    for t in tuned.values():
        if t.get("model"):
            g = {x.layer: x for x in gemms(presets[t["model"]], t.get("tokens"))}[t["layer"]]
            row(t["model"], t["layer"], g.m, g.n, g.k, t["dtype"], g.schedule, t["tp"], t)
        else:
            s = t["shape"]
            row("", "", s["m"], s["n"], s["k"], t["dtype"], t["schedule"], t["tp"], t)
    return tuple(out)
