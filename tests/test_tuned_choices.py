"""Tuned choices by the M they were tuned at, their checks against the layer and the shape rules, and the tuner's
refusals of bad arguments before anything is built (no GPU: processes faked as in test_tune.py)."""
import io

import pytest
import yaml

from generator import models, plan, tune_cli
from test_models import BASE, TINY, errors, write
from test_tune import FakeRunner, tuned_repo

TUNED_QKV = ("  - {{model: tiny, layer: qkv, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2, "
             "kernel: k128{tokens}}}\n")
K128 = "  - {name: k128, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, stages: 4}\n"


def tiny_with(tuned: str) -> str:
    return BASE.replace("kernels:\n", "kernels:\n" + K128) + "models:\n" + TINY + "tuned:\n" + tuned


def qkv_rows(text: str, tmp_path) -> list:
    p = plan.build(models.load(str(write(tmp_path, text))), "schedules.yaml")
    return [(r.m, r.config, r.tuned) for r in p.dispatch if r.model == "tiny" and r.layer == "qkv"]


def test_a_choice_tuned_at_another_m_keeps_the_default_row_of_the_preset_m(tmp_path):
    """Tuned at 128 tokens, a layer has its tuned row at M = 128 beside the default row at the preset's 2048
    (tpg_dispatch_find takes the nearest M), not the tuned choice at every M."""
    rows = qkv_rows(tiny_with(TUNED_QKV.format(tokens=", tokens: 128")), tmp_path)
    assert rows == [(2048, "ag_tp2", False), (128, "tuned_tiny_qkv_bf16_m128_tp2", True)], rows


@pytest.mark.parametrize("tokens", ["", ", tokens: 2048"])
def test_a_choice_at_the_preset_m_replaces_its_default_row(tmp_path, tokens):
    rows = qkv_rows(tiny_with(TUNED_QKV.format(tokens=tokens)), tmp_path)
    assert rows == [(2048, "tuned_tiny_qkv_bf16_m2048_tp2", True)], rows


def test_a_choice_with_the_layers_n_and_k_is_taken(tmp_path):
    rows = qkv_rows(tiny_with(TUNED_QKV.format(tokens=", n: 1536, k: 1024")), tmp_path)
    assert rows == [(2048, "tuned_tiny_qkv_bf16_m2048_tp2", True)], rows


def test_choices_at_two_m_coexist_and_the_preset_m_twice_is_refused(tmp_path):
    both = TUNED_QKV.format(tokens=", tokens: 128") + TUNED_QKV.format(tokens="")
    assert len(qkv_rows(tiny_with(both), tmp_path)) == 2
    errs = errors(write(tmp_path, tiny_with(TUNED_QKV.format(tokens="") + TUNED_QKV.format(tokens=", tokens: 2048"))))
    assert any("tuned[1]: a second tuned choice for the same layer" in e for e in errs), errs


@pytest.mark.parametrize("entry, message", [
    ("{model: tiny, layer: qkv, dtype: bf16, schedule: ReduceScatter1D_TilingA_RotatingC, tp: 2, kernel: k128}",
     "tuned[0].schedule: ReduceScatter1D_TilingA_RotatingC for layer qkv, whose GEMM is allgather"),
    ("{model: tiny, layer: down, dtype: bf16, schedule: ReduceScatter1D_TilingA_RotatingC, tp: 3, kernel: k128}",
     "tuned[0]: 2048 x 1024 x 4096 at tp 3: M = 2048 is not divisible by tp = 3"),
    ("{shape: {m: 1000, n: 1001, k: 1003}, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 7, "
     "kernel: k128}", "tuned[0]: 1000 x 1001 x 1003 at tp 7: local M = 1000 is not divisible by tp = 7"),
    ("{shape: {m: 256, n: 256, k: 256}, tokens: 64, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2, "
     "kernel: k128}", "tuned[0].tokens: tokens in a tuned shape"),
    ("{shape: {m: 256, n: 256, k: 256}, n: 256, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2, "
     "kernel: k128}", "tuned[0].n: n in a tuned shape"),
    # the preset edited after tuning (qkv's N is (8 + 2 x 2) x 128 = 1536 now): the choice's timings are of another GEMM
    ("{model: tiny, layer: qkv, n: 2048, k: 1024, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2, "
     "kernel: k128}", "tuned[0].n: layer qkv of model tiny was tuned at n = 2048, and the preset now gives 1536"),
    ("{model: tiny, layer: qkv, n: 1536, k: 512, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2, "
     "kernel: k128}", "tuned[0].k: layer qkv of model tiny was tuned at k = 512, and the preset now gives 1024"),
    # and what to do: the tuner reads the file first, so "tune again" alone cannot work (a user walkthrough)
    ("{model: tiny, layer: qkv, n: 1536, k: 512, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2, "
     "kernel: k128}", "allowed: no such choice: delete it (or its file, "),
])
def test_a_tuned_choice_is_checked_like_a_preset_layer(tmp_path, entry, message):
    errs = errors(write(tmp_path, tiny_with(f"  - {entry}\n")))
    assert any(message in e for e in errs), errs


def tune(tmp_path, *args):
    """tune_cli.main on a copy of schedules.yaml with faked processes: (exit status, what it printed)."""
    cfg = tuned_repo(tmp_path)
    err = io.StringIO()
    try:
        rc = tune_cli.main([*args, "--config", str(cfg), "--work", str(tmp_path / "work")], runner=FakeRunner(),
                           stream=err, clock=iter(range(10**6)).__next__)
    except SystemExit as e:
        rc = e.code
    return rc, err.getvalue()


@pytest.mark.parametrize("args, said", [
    (["--shape", "1,2", "--schedule", "AllGather1D_TilingCD_RotatingA", "--tp", "2"], "give M,N,K, three positive"),
    (["--shape", "64,64,x", "--schedule", "AllGather1D_TilingCD_RotatingA", "--tp", "2"], "give M,N,K"),
    (["--shape", "0,64,64", "--schedule", "AllGather1D_TilingCD_RotatingA", "--tp", "2"], "three positive integers"),
    (["--shape", "\u00b2,64,64", "--schedule", "AllGather1D_TilingCD_RotatingA", "--tp", "2"], "give M,N,K"),
    (["--shape", "2147483584,8,16", "--schedule", "AllGather1D_TilingCD_RotatingA", "--tp", "1"],
     "per-stage M = 2147483584 must be <= 2^31 - 512"),
    (["--model", "llama3-70b", "--tp", "3"], "N = 10240 is not divisible by tp = 3"),
])
def test_tune_refuses_bad_shapes_before_building(tmp_path, monkeypatch, args, said):
    monkeypatch.setattr(tune_cli, "build_tree", lambda *a: pytest.fail("built despite a bad argument"))
    rc, _ = tune(tmp_path, *args)
    assert isinstance(rc, str) and said in rc, rc


@pytest.mark.parametrize("args", [["--model", "llama3-70b", "--tp", "0"], ["--model", "llama3-70b", "--tp", "9"],
                                  ["--shape", "64,64,64", "--schedule", "AllGather1D_TilingCD_RotatingA", "--tp", "2",
                                   "--dtype", "fp32"], ["--model", "llama3-70b", "--tp", "2", "--tokens", "0"]])
def test_tune_argument_errors_exit_2(tmp_path, args):
    assert tune(tmp_path, *args)[0] == 2


def test_tune_reports_an_invalid_config_with_its_line(tmp_path):
    cfg = tuned_repo(tmp_path)
    cfg.write_text(cfg.read_text().replace("\nkernels:", "\nkernel:", 1))
    err = io.StringIO()
    rc = tune_cli.main(["--model", "llama3-70b", "--tp", "2", "--config", str(cfg)], runner=FakeRunner(), stream=err)
    assert rc == 2 and "kernel: unknown field, did you mean 'kernels'?" in err.getvalue(), err.getvalue()


def test_a_tuned_shape_file_loads_back(tmp_path, monkeypatch):
    """--shape: the kernels' name prefix starts with a letter (a tag of digits made names that are no identifiers,
    and the tuned file then stopped the generator)."""
    monkeypatch.setattr(tune_cli, "build_tree", lambda work, shapes, cands, runner, jobs: work / "tpgemm")
    rc, err = tune(tmp_path, "--shape", "4096,4096,4096", "--schedule", "AllGather1D_TilingCD_RotatingA", "--tp", "2",
                   "--knob", "tile=128x192x64", "--knob", "stages=4", "--knob", "cluster=1x1")
    out = tmp_path / "tuned" / "shape_4096x4096x4096_ag_rota_bf16_tp2.yaml"
    assert rc == 0 and out.exists(), err
    assert all(k["name"].startswith("shape_4096x4096x4096_ag_rota_bf16_tp2_") for k in yaml.safe_load(out.read_text())[
        "kernels"])
    doc = models.load(str(tmp_path / "schedules.yaml"))
    assert any(t["shape"] == {"m": 4096, "n": 4096, "k": 4096} for t in doc["tuned"])


def test_tuning_at_another_m_writes_a_file_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setattr(tune_cli, "build_tree", lambda work, shapes, cands, runner, jobs: work / "tpgemm")
    knobs = ["--knob", "tile=128x192x64", "--knob", "stages=4", "--knob", "cluster=1x1"]  # faster than the defaults
    assert tune(tmp_path, "--model", "llama3-8b", "--tp", "2", *knobs)[0] == 0
    assert tune(tmp_path, "--model", "llama3-8b", "--tp", "2", "--tokens", "1024", *knobs)[0] == 0
    assert sorted(p.name for p in (tmp_path / "tuned").iterdir()) == ["llama3-8b_tp2.yaml", "llama3-8b_tp2_m1024.yaml"]
    choices = yaml.safe_load((tmp_path / "tuned" / "llama3-8b_tp2.yaml").read_text())["tuned"]
    assert {(t["layer"], t["n"], t["k"]) for t in choices} >= {("qkv", 6144, 4096), ("down", 4096, 14336)}, choices
    p = plan.build(models.load(str(tmp_path / "schedules.yaml")), "schedules.yaml")
    qkv = sorted((r.m, r.tuned) for r in p.dispatch if r.model == "llama3-8b" and r.layer == "qkv" and r.tp == 2)
    assert qkv == [(1024, True), (8192, True)], qkv
