"""Tier 1 (no GPU): build/tpgemm's plan and list for the ways a reduce-scatter config moves its partials (pushed,
pulled, carried by the copy engine), and which configs run by name only. Each route's config is found through the
routes (tests/routes.py), so the checks hold whichever route the shipped defaults take (bench/x2/ce_default.py)."""
import json

import pytest

from tests import routes
from tests.routes import ROUTES, partial_route
from tests.test_cli import run, tpgemm  # noqa: F401  (tpgemm: the module fixture that builds build/tpgemm)


def dry_plan(tpgemm, family, tp, *extra, m=8192, n=4096, k=8192):
    """The JSON plan (--dry-run) of config <family>_tp<tp> on m x n x k, with extra CLI arguments."""
    r = run(tpgemm, "--dry-run", "--json", "--config", f"{family}_tp{tp}", f"--m={m}", f"--n={n}", f"--k={k}", *extra)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def on_route(tpgemm, family, tp, route):
    """The family (a name without _tp) whose config at tp runs <family>_tp<tp>'s kernel with its partials moved by
    `route` (tests/routes.py: the family itself, or its by_name twin)."""
    return routes.on_route(f"{family}_tp{tp}", route).rsplit("_tp", 1)[0]


def assert_twin_walk(pushed, twin, receives):
    """A twin's plan (pulled or copy-engine partials) is the push's but for how partials move: the same graph nodes,
    bytes and stage table; each receiving stage's waits_on holds receives(stage)."""
    assert pushed["graph"] == twin["graph"] and pushed["bytes_moved_per_device"] == twin["bytes_moved_per_device"]
    for a, b in zip(pushed["stages"], twin["stages"]):
        assert {f: a[f] for f in a if f != "waits_on"} == {f: b[f] for f in b if f != "waits_on"}
        if b["src_slot"] >= 0:
            assert receives(b) in b["waits_on"]


@pytest.mark.parametrize("tp", [2, 4])
def test_pulled_partials_in_the_plan_and_the_list(tpgemm, tp):
    """A pull_partials config's plan: each sending stage writes its own slot, each receiving stage waits on the
    sender's flags; the same stage table and graph as its pushing twin otherwise. --list names it as by name only."""
    pushed = dry_plan(tpgemm, on_route(tpgemm, "rs_tila_bf16", tp, "push"), tp)
    pulled = dry_plan(tpgemm, "rs_tila_bf16_pull", tp)
    assert (pushed["pull_partials"], pulled["pull_partials"]) == (0, 1)
    assert "(push)" in pushed["transport"] and "(pull)" in pulled["transport"]
    assert_twin_walk(pushed, pulled, lambda b: f"dev {b['peer']}'s slot {b['src_slot']}: partial pulled")
    text = run(tpgemm, "--dry-run", "--config", f"rs_tila_bf16_pull_tp{tp}", "--m=8192", "--n=4096", "--k=8192").stdout
    assert "own slot 0 (+flags) for dev 1" in text and "pulled over NVLink by the next rank's GEMM epilogue" in text
    listed = json.loads(run(tpgemm, "--list", "--json").stdout)["configs"]
    row = next(c for c in listed if c["name"] == f"rs_tila_bf16_pull_tp{tp}")
    assert row["pull_partials"] == 1 and row["default_pick"] is False


@pytest.mark.parametrize("tp", [2, 4])
def test_copy_engine_partials_in_the_plan_and_the_list(tpgemm, tp):
    """A copy_engine_partials config's plan: the push twin's stage table and graph nodes, each sending stage writing
    its own send slot (a second bank of slots and flags) that copy-engine chains carry into the receiver's slot; no
    interleaved few-row walk, whose tiles could wait on a band queued behind them (runtime/src/plan.c). --list names
    it as by name only."""
    plan = lambda config, *extra, **mnk: dry_plan(tpgemm, config, tp, *extra, **mnk)  # noqa: E731
    push, ce = on_route(tpgemm, "rs_tila_bf16", tp, "push"), on_route(tpgemm, "rs_tila_bf16", tp, "ce")
    pushed, carried = plan(push), plan(ce)
    assert (pushed["copy_engine_partials"], carried["copy_engine_partials"]) == (0, 1)
    assert "(push)" in pushed["transport"] and "copy engine" in carried["transport"]
    assert_twin_walk(pushed, carried, lambda b: f"partial of dev {b['peer']}, carried by its copy engine")
    bufs = pushed["buffers_per_device"], carried["buffers_per_device"]
    assert bufs[1]["slots_bytes"] == 2 * bufs[0]["slots_bytes"] and bufs[1]["flags_bytes"] == 2 * bufs[0]["flags_bytes"]
    text = run(tpgemm, "--dry-run", "--config", f"{ce}_tp{tp}", "--m=8192", "--n=4096", "--k=8192").stdout
    assert "send slot 0 (+flags) -> dev 1" in text and "x 2 banks (receive, send)" in text
    # bands of at least 4 MiB, at most 16 (ce_partials.c): a stage of 8192 / tp rows x 4096 bf16 holds 64 / tp MiB
    assert f"per sending stage {min(16, 64 // tp // 4)} bands of [wait for the band's tile-row counts" in text
    big = run(tpgemm, "--dry-run", "--config", f"{ce}_tp{tp}", "--m=65536", "--n=8192", "--k=8192").stdout
    small = run(tpgemm, "--dry-run", "--config", f"{ce}_tp{tp}", "--m=1024", "--n=1024", "--k=8192").stdout
    assert "per sending stage 16 bands of" in big and "per sending stage 1 band of" in small
    few = dict(m=64 * tp, n=16384, k=14336 * tp)  # 64 rows and 448 MiB of B a stage, more tiles than one wave
    assert plan(push, "--rs-ring", **few)["stage_minor"] is True
    assert plan(ce, "--rs-ring", **few)["stage_minor"] is False
    assert plan(ce, **few)["copy_engine_partials"] == 0  # the one-hop walk: no chains
    listed = {c["name"]: c for c in json.loads(run(tpgemm, "--list", "--json").stdout)["configs"]}
    wide = f"{on_route(tpgemm, 'rs_tilb_bf16_wide', tp, 'ce')}_tp{tp}"
    assert listed[wide]["copy_engine_partials"] == 1
    assert listed[wide]["default_pick"] is (wide == f"rs_tilb_bf16_wide_tp{tp}")  # a twin runs by name only


def test_list_marks_the_configs_only_run_by_name(tpgemm):
    """--list says which configs a default pick never takes, and why; the pick agrees (no such config is ever
    the plan of --schedule/--tp/--dtype, whatever K)."""
    listed = {c["name"]: c for c in json.loads(run(tpgemm, "--list", "--json").stdout)["configs"]}
    by_name = {n for n, c in listed.items() if not c["default_pick"]}
    assert by_name == {n for n, c in listed.items()
                       if c["acc"] == "fp16" or c["fp8_promote"] or c["partials"] == "fp32" or c["by_name"]
                       or (c["stream_k"] and c["tp"] > 1) or c["tuned"]}
    assert {"gemm_e4m3_promoted_tp1", "ag_rota_fp16acc_tp8", "rs_tila_bf16_f32p_tp8",
            "rs_tilb_bf16_pull_tp2"} <= by_name
    # the route twins (<family>_push / _pull / _ce, schedules.yaml) run by name only, each on its suffix's route
    suffix = lambda n: n.rsplit("_tp", 1)[0].rsplit("_", 1)[-1]  # noqa: E731
    twins = {n: c for n, c in listed.items() if suffix(n) in ROUTES}
    assert len(twins) >= 12 and all(c["by_name"] and partial_route(c) == suffix(n) for n, c in twins.items())
    text = {line.split()[0]: line for line in run(tpgemm, "--list").stdout.splitlines()[1:-1]}
    assert text["rs_tila_bf16_wide_f32p_tp4"].endswith("fp32 partials")
    assert text["gemm_e4m3_promoted_tp1"].endswith("fp8 promoted every 8")
    assert text["rs_tila_bf16_wide_pull_tp8"].endswith("pulled partials, by name")
    ce = on_route(tpgemm, "rs_tila_bf16_wide", 8, "ce") + "_tp8"
    assert text[ce].endswith("copy-engine partials" + (", by name" if ce in twins else ""))
    push = on_route(tpgemm, "rs_tila_bf16", 4, "push") + "_tp4"
    assert text[push].endswith("by name" if push in twins else " -")
    assert text["rs_tila_bf16_tp1"].endswith(" -")  # a TP = 1 instance moves nothing
    assert text["ag_rota_bf16_sk64_tp2"].endswith("stream-K at TP >= 2")
    assert text["ag_rota_bf16_sk64_tp1"].endswith(" -")
    # the wave-weighted configs are default picks, through the wave check only
    # (docs/CONFIG.md, "How a config is picked")
    assert {n: c["wave_weight"] for n, c in listed.items() if c["wave_weight"] and c["tp"] == 2} == {
        **{f"{f}_w160_tp2": 90 for f in ("ag_rota_bf16", "ag_rotb_bf16", "ag_rota_fp16", "ag_rotb_fp16")},
        **{f"{f}_pp64_tp2": 80 for f in ("ag_rota_bf16", "ag_rotb_bf16", "rs_tila_bf16", "rs_tilb_bf16",
                                         "ag_rota_fp16", "ag_rotb_fp16", "rs_tila_fp16", "rs_tilb_fp16")}}
    assert all(c["default_pick"] for c in listed.values() if c["wave_weight"])
    for c in listed.values():
        if c["default_pick"]:
            continue
        for k in (1024, 8192, 65536):
            r = run(tpgemm, "--schedule", c["schedule"], "--tp", str(c["tp"]), "--dtype", c["dtype"], "--m", "4096",
                    "--n", "4096", "--k", str(k), "--dry-run")
            assert r.returncode == 0 and r.stdout.startswith("Plan: ") and f"Plan: {c['name']}\n" not in r.stdout


def test_a_pulling_config_on_the_one_hop_walk_pulls_nothing(tpgemm):
    """At 64 rows a stage the one-hop walk runs (one GEMM, then a REDUCE of every rank's partial): nothing is pulled
    there, whatever the config's route."""
    d = dry_plan(tpgemm, on_route(tpgemm, "rs_tila_bf16", 2, "pull"), 2, m=128, n=4096, k=8192)
    assert d["one_hop"] is True and d["pull_partials"] == 0 and "REDUCE" in d["transport"], d
