"""schedules.yaml's config fields that reach the generated registry (registry.c's rows) and the config hash: each
valid value is kept for the instances it applies to, is its row's initializer, and changes the hash only where set,
so plans without it hash as before."""
import re

import pytest

from generator import config, models, plan, render
from tests.test_config import BASE, SECOND_KERNEL


def test_prefer_from_local_k_is_accepted_and_reaches_the_registry():
    """A valid bound is kept for every TP of its config, changes the config hash (it changes which config
    runs) and becomes the 4th initializer of the registry rows; configs without one get 0 (never preferred)."""
    plain = plan.build(config.validate(config.compose(BASE, "x.yaml"), "x.yaml"), "x.yaml")
    text = BASE.replace("kernel: k}", "kernel: k, prefer_from_local_k: 10240}")
    p = plan.build(config.validate(config.compose(text, "x.yaml"), "x.yaml"), "x.yaml")
    assert [(c.name, c.prefer_from_local_k) for c in p.configs] == [("c_tp1", 10240), ("c_tp2", 10240)]
    assert [c.prefer_from_local_k for c in plain.configs] == [0, 0]
    assert p.config_hash != plain.config_hash
    row = re.compile(r'^    \{"(c_tp\d)", &\w+, &\w+_desc, (\d+), 1, 0, 0, 0, 0, 0\},$', re.M)
    assert row.findall(render.render(p)["registry.c"]) == [("c_tp1", "10240"), ("c_tp2", "10240")]
    assert row.findall(render.render(plain)["registry.c"]) == [("c_tp1", "0"), ("c_tp2", "0")]


def test_copy_chunks_reach_the_registry_and_the_hash():
    """configs[].copy_chunks is the registry rows' 5th initializer (1 when left out) and changes the hash only
    where set, so plans without it hash as before."""
    plain = plan.build(config.validate(config.compose(BASE, "x.yaml"), "x.yaml"), "x.yaml")
    text = BASE.replace("kernel: k}", "kernel: k, copy_chunks: 4}")
    p = plan.build(config.validate(config.compose(text, "x.yaml"), "x.yaml"), "x.yaml")
    assert [c.copy_chunks for c in p.configs] == [4, 4] and [c.copy_chunks for c in plain.configs] == [1, 1]
    assert p.config_hash != plain.config_hash
    one = plan.build(config.validate(config.compose(BASE.replace("kernel: k}", "kernel: k, copy_chunks: 1}"),
                                                    "x.yaml"), "x.yaml"), "x.yaml")
    assert one.config_hash == plain.config_hash
    row = re.compile(r'^    \{"(c_tp\d)", &\w+, &\w+_desc, 0, (\d+), 0, 0, 0, 0, 0\},$', re.M)
    assert row.findall(render.render(p)["registry.c"]) == [("c_tp1", "4"), ("c_tp2", "4")]


def test_pull_partials_reach_the_registry_and_the_hash():
    """configs[].pull_partials is the registry rows' 6th initializer (0 when left out or false) and changes the hash
    only where set."""
    rs = BASE.replace("AllGather1D_TilingCD_RotatingA, tp: [1, 2]", "ReduceScatter1D_TilingA_RotatingC, tp: [2, 4]")
    build = lambda text: plan.build(config.validate(config.compose(text, "x.yaml"), "x.yaml"), "x.yaml")
    plain, pulled = build(rs), build(rs.replace("kernel: k}", "kernel: k, pull_partials: true}"))
    off = build(rs.replace("kernel: k}", "kernel: k, pull_partials: false}"))
    assert [c.pull_partials for c in pulled.configs] == [True, True] and not any(c.pull_partials for c in plain.configs)
    assert pulled.config_hash != plain.config_hash and off.config_hash == plain.config_hash
    row = re.compile(r'^    \{"(c_tp\d)", &\w+, &\w+_desc, 0, 1, (\d), 0, 0, 0, 0\},$', re.M)
    assert row.findall(render.render(pulled)["registry.c"]) == [("c_tp2", "1"), ("c_tp4", "1")]
    assert row.findall(render.render(plain)["registry.c"]) == [("c_tp2", "0"), ("c_tp4", "0")]


def test_copy_engine_partials_reach_the_registry_and_the_hash():
    """configs[].copy_engine_partials is the registry rows' 9th initializer (0 when left out or false) and changes the
    hash only where set."""
    rs = BASE.replace("AllGather1D_TilingCD_RotatingA, tp: [1, 2]", "ReduceScatter1D_TilingA_RotatingC, tp: [2, 4]")
    build = lambda text: plan.build(config.validate(config.compose(text, "x.yaml"), "x.yaml"), "x.yaml")
    plain, carried = build(rs), build(rs.replace("kernel: k}", "kernel: k, copy_engine_partials: true}"))
    off = build(rs.replace("kernel: k}", "kernel: k, copy_engine_partials: false}"))
    assert [c.copy_engine_partials for c in carried.configs] == [True, True]
    assert not any(c.copy_engine_partials for c in plain.configs)
    assert carried.config_hash != plain.config_hash and off.config_hash == plain.config_hash
    row = re.compile(r'^    \{"(c_tp\d)", &\w+, &\w+_desc, 0, 1, 0, 0, 0, (\d), 0\},$', re.M)
    assert row.findall(render.render(carried)["registry.c"]) == [("c_tp2", "1"), ("c_tp4", "1")]
    assert row.findall(render.render(plain)["registry.c"]) == [("c_tp2", "0"), ("c_tp4", "0")]


def test_prefer_from_local_k_tp1_is_the_tp_1_instance_preference():
    """prefer_from_local_k_tp1 replaces prefer_from_local_k for the TP = 1 instance only (registry, default pick): a
    reduce-scatter family preferred from K/tp 10240 for its ring, and at TP = 1, where it is the local GEMM, always."""
    rs = BASE.replace("AllGather1D_TilingCD_RotatingA, tp: [1, 2]", "ReduceScatter1D_TilingA_RotatingC, tp: [1, 2]")
    rs = rs.replace("kernel: k}", "kernel: k, prefer_from_local_k: 10240, prefer_from_local_k_tp1: 1}")
    rs += "  - {name: b, schedule: ReduceScatter1D_TilingA_RotatingC, tp: [1, 2], kernel: k}\n"
    doc = config.validate(config.compose(rs, "x.yaml"), "x.yaml")
    p = plan.build(doc, "x.yaml")
    assert [(c.name, c.prefer_from_local_k) for c in p.configs] == [("b_tp1", 0), ("b_tp2", 0), ("c_tp1", 1),
                                                                      ("c_tp2", 10240)]
    pick = lambda tp, k: models.default_config(doc, "ReduceScatter1D_TilingA_RotatingC", tp, "bf16", k=k)
    assert (pick(1, 4096), pick(2, 8192), pick(2, 20480)) == ("c_tp1", "b_tp2", "c_tp2")


def test_copy_engine_partials_apply_to_the_tp_2_and_up_instances():
    """A config that lists TP = 1 beside TP >= 2 may carry copy_engine_partials: its TP = 1 instance moves nothing and
    runs without them (registry 0), the others carry them; every instance is a default pick's candidate (how partials
    move is no reason by itself to leave a config out: by_name is), so a family that carries the field is the copy
    engine's default at TP >= 2."""
    rs = BASE.replace("AllGather1D_TilingCD_RotatingA, tp: [1, 2]", "ReduceScatter1D_TilingA_RotatingC, tp: [1, 2, 4]")
    doc = config.validate(config.compose(rs.replace("kernel: k}", "kernel: k, copy_engine_partials: true}"), "x.yaml"),
                          "x.yaml")
    carried = plan.build(doc, "x.yaml")
    assert [(c.name, c.copy_engine_partials) for c in carried.configs] == [("c_tp1", False), ("c_tp2", True),
                                                                           ("c_tp4", True)]
    row = re.compile(r'^    \{"(c_tp\d)", &\w+, &\w+_desc, 0, 1, 0, 0, 0, (\d), 0\},$', re.M)
    assert row.findall(render.render(carried)["registry.c"]) == [("c_tp1", "0"), ("c_tp2", "1"), ("c_tp4", "1")]
    rs_dtype = doc["kernels"][0]["dtype"]
    assert models.default_config(doc, "ReduceScatter1D_TilingA_RotatingC", 1, rs_dtype, k=4096) == "c_tp1"
    assert models.default_config(doc, "ReduceScatter1D_TilingA_RotatingC", 2, rs_dtype, k=4096) == "c_tp2"


def test_by_name_reaches_the_registry_and_keeps_a_config_out_of_the_picks():
    """configs[].by_name is the registry rows' 10th initializer (0 when left out or false), changes the hash only where
    set, and keeps every instance of the config out of the default picks (models.default_config, as
    tpg__config_pickable), a copy-engine family's push twin too."""
    rs = BASE.replace("AllGather1D_TilingCD_RotatingA, tp: [1, 2]", "ReduceScatter1D_TilingA_RotatingC, tp: [1, 2]")
    build = lambda text: config.validate(config.compose(text, "x.yaml"), "x.yaml")
    plain, named = build(rs), build(rs.replace("kernel: k}", "kernel: k, by_name: true}"))
    off = build(rs.replace("kernel: k}", "kernel: k, by_name: false}"))
    hashes = [plan.build(d, "x.yaml").config_hash for d in (plain, named, off)]
    assert hashes[1] != hashes[0] and hashes[2] == hashes[0]
    row = re.compile(r'^    \{"(c_tp\d)", &\w+, &\w+_desc, 0, 1, 0, 0, 0, 0, (\d)\},$', re.M)
    assert row.findall(render.render(plan.build(named, "x.yaml"))["registry.c"]) == [("c_tp1", "1"), ("c_tp2", "1")]
    assert row.findall(render.render(plan.build(plain, "x.yaml"))["registry.c"]) == [("c_tp1", "0"), ("c_tp2", "0")]
    dtype = plain["kernels"][0]["dtype"]
    pick = lambda doc, tp: models.default_config(doc, "ReduceScatter1D_TilingA_RotatingC", tp, dtype, k=4096, m=4096,
                                                 n=4096)
    assert (pick(plain, 1), pick(plain, 2)) == ("c_tp1", "c_tp2") and (pick(named, 1), pick(named, 2)) == (None, None)
    # a copy-engine family beside its push twin marked by_name: the family is the pick at TP >= 2, the twin never
    twins = rs.replace("tp: [1, 2], kernel: k}", "tp: [1, 2], kernel: k, copy_engine_partials: true}")
    twins += "  - {name: a_push, schedule: ReduceScatter1D_TilingA_RotatingC, tp: [2], kernel: k, by_name: true}\n"
    assert (pick(build(twins), 1), pick(build(twins), 2)) == ("c_tp1", "c_tp2")
    with pytest.raises(config.ConfigError, match="by_name"):
        build(rs.replace("kernel: k}", "kernel: k, by_name: 1}"))


def test_wave_weight_reaches_the_registry_and_the_hash():
    """configs[].wave_weight is the registry rows' 7th initializer (0 when left out) and changes the hash only where
    set."""
    build = lambda text: plan.build(config.validate(config.compose(text, "x.yaml"), "x.yaml"), "x.yaml")
    plain, weighted = build(BASE), build(BASE.replace("kernel: k}", "kernel: k, wave_weight: 85}"))
    assert [c.wave_weight for c in weighted.configs] == [85, 85] and not any(c.wave_weight for c in plain.configs)
    assert weighted.config_hash != plain.config_hash
    row = re.compile(r'^    \{"(c_tp\d)", &\w+, &\w+_desc, 0, 1, 0, (\d+), 0, 0, 0\},$', re.M)
    assert row.findall(render.render(weighted)["registry.c"]) == [("c_tp1", "85"), ("c_tp2", "85")]
    assert row.findall(render.render(plain)["registry.c"]) == [("c_tp1", "0"), ("c_tp2", "0")]
