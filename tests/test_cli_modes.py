"""Tier 1 (no GPU): build/tpgemm refuses a walk's mode where the config it runs has no such walk - the barriers beside
the GEMM without barriers, copies in pieces where nothing is copied, the copy engine's shards where nothing is
gathered, the kept ring where there is no reduce-scatter - instead of running without it, which its result would not
show. (--model's layers mix routes: there the modes change the layers that have the walk, tests/test_cli.py.)"""
import pytest

from tests.test_cli import run, tpgemm  # noqa: F401  (tpgemm: the module fixture that builds build/tpgemm)


def test_overlap_barriers_refused_without_barriers(tpgemm):
    r = run(tpgemm, "--dry-run", "--config", "ag_rota_bf16_tp1", "--overlap-barriers")
    assert r.returncode == 2 and "--overlap-barriers: config ag_rota_bf16_tp1 has no barriers (TP = 1)" in r.stderr


def test_copy_chunks_refused_where_nothing_is_copied(tpgemm):
    r = run(tpgemm, "--dry-run", "--config", "rs_tila_bf16_tp2", "--copy-chunks", "2")
    assert r.returncode == 2
    assert "--copy-chunks 2: config rs_tila_bf16_tp2 copies nothing" in r.stderr
    r = run(tpgemm, "--dry-run", "--config", "ag_rota_bf16_tp1", "--copy-chunks", "2")
    assert r.returncode == 2 and "copies nothing (TP = 1)" in r.stderr
    for bad in ("0", "33", "x"):
        r = run(tpgemm, "--dry-run", "--config", "ag_rota_bf16_tp2", "--copy-chunks", bad)
        assert r.returncode == 2 and f"--copy-chunks expects an integer in 1..32, got '{bad}'" in r.stderr
    # one piece is the table's own graph, allowed everywhere
    assert run(tpgemm, "--dry-run", "--config", "rs_tila_bf16_tp2", "--copy-chunks", "1").returncode == 0


@pytest.mark.parametrize("flag,config,why", [
    ("--gather-copy-engine", "rs_tila_bf16_tp2", "is a reduce-scatter: it gathers no shards"),
    ("--gather-copy-engine", "ag_rota_bf16_tp1", "gathers nothing (TP = 1)"),
    ("--rs-ring", "ag_rota_bf16_tp2", "is an all-gather: it has no reduce-scatter walk"),
    ("--rs-ring", "rs_tila_bf16_tp1", "has no ring (TP = 1)"),
])
def test_a_route_mode_refused_on_the_other_route(tpgemm, flag, config, why):
    r = run(tpgemm, "--dry-run", "--config", config, flag, "--m", "256", "--n", "1024", "--k", "512")
    assert r.returncode == 2 and f"tpgemm: {flag}: config {config} {why}; drop {flag}" in r.stderr


@pytest.mark.parametrize("flag,config", [("--gather-copy-engine", "ag_rota_bf16_tp2"),
                                         ("--rs-ring", "rs_tila_bf16_tp2")])
def test_a_route_mode_runs_on_its_route(tpgemm, flag, config):
    r = run(tpgemm, "--dry-run", "--config", config, flag, "--m", "256", "--n", "1024", "--k", "512")
    assert r.returncode == 0, r.stderr
