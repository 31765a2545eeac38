"""What the tuner writes for a layer once its runs are in (no GPU: processes faked as in test_tune.py): nothing where
the default has no timing or fails its check, nothing where the default wins, the earlier file's choices for layers
with no new result, and the GPU, sources and compiler the timings come from - a state of another GPU is stale."""
import json
import subprocess

import pytest
import yaml
from test_tune import FakeRunner, run_tune
from test_tune_runs import fake_build

from generator import models, plan, tune, tune_cli, tune_env

H100 = [("NVIDIA H100 80GB HBM3", 132)] * 8
H200 = [("NVIDIA H200", 132)] * 8
QKV_N, DOWN_K = 10240, 28672  # llama3-70b at tp 2 (test_tune.run_tune): qkv's N, down's K


def _arg(cmd, flag):
    return cmd[cmd.index(flag) + 1]


def is_default(cmd) -> bool:
    """A run of a layer's default kernel: it keeps its schedules.yaml name; the tuner's own candidates are c_..."""
    return "_c_" not in _arg(cmd, "--config")


def answer(cmd, rc=0, ms=None, check=None, error=None):
    out = {"avg_ms": ms, "tflops_per_gpu": 100.0 / ms if ms else None, "error": error,
           "check": check or ("passed" if "--check" in cmd else "skipped")}
    return subprocess.CompletedProcess(cmd, rc, json.dumps(out), error or "")


class DefaultRunner(FakeRunner):
    """FakeRunner, but a default kernel's runs on the layers `where` picks (cmd -> bool; every layer by default) are
    answered by `default` (cmd -> CompletedProcess)."""

    def __init__(self, default, where=lambda cmd: True):
        super().__init__()
        self.default, self.where = default, where

    def __call__(self, cmd, **kw):
        if cmd[0] not in ("ninja", "nvidia-smi") and is_default(cmd) and self.where(cmd):
            self.calls.append(cmd)
            return self.default(cmd)
        return super().__call__(cmd, **kw)


def on_qkv(cmd) -> bool:
    return int(_arg(cmd, "--n")) == QKV_N


def tuned_layers(tmp_path) -> dict:
    doc = yaml.safe_load((tmp_path / "tuned" / "llama3-70b_tp2.yaml").read_text())
    return {t["layer"]: t["kernel"] for t in doc["tuned"]}


def report(tmp_path) -> dict:
    """report.md's rows by layer: the cells of each."""
    return {line.split(" | ")[0][2:]: line.split(" | ") for line in
            (tmp_path / "work" / "report.md").read_text().splitlines() if line.startswith("| ") and "GEMM" not in line}


@pytest.mark.parametrize("rc, said", [(5, "runs again in the next tuner run"), (1, "nothing can be weighed")])
def test_no_choice_where_the_default_has_no_timing(tmp_path, monkeypatch, rc, said):
    """qkv's default fails its timing run (out of memory, retried later; or for good): the candidates have nothing to
    be weighed against, so qkv gets no choice (the fastest by time alone was written before), and the exit says the
    sweep is incomplete; the other layers still get theirs."""
    fake_build(monkeypatch)
    runner = DefaultRunner(lambda cmd: answer(cmd, rc, error="tpgemm: cudaMalloc: out of memory") if "--no-check" in cmd
                           else answer(cmd, ms=0.5), where=on_qkv)
    code, err, _ = run_tune(tmp_path, runner)
    assert code == 1 and "qkv: no tuned choice: its default bf16_128x256x64's timing run failed" in err, err
    assert said in err and set(tuned_layers(tmp_path)) == {"attn_out", "gate_up", "down"}
    assert report(tmp_path)["qkv"][5] == "(default not timed)"


def test_a_default_that_fails_its_check_is_said_loudly_and_no_slower_kernel_is_pinned(tmp_path, monkeypatch):
    """qkv's default is the fastest (0.5 ms; the candidates 1.0 ms and more) but fails its check: a slower candidate
    was pinned before (speedup 0.5x); now no choice, a warning with the command that shows it, and exit 1."""
    fake_build(monkeypatch)
    runner = DefaultRunner(lambda cmd: answer(cmd, 1, ms=0.5, check="failed", error="max error 3.1 > eps 0.02")
                           if "--check" in cmd
                           else answer(cmd, ms=0.5), where=on_qkv)
    code, err, _ = run_tune(tmp_path, runner)
    assert code == 1 and "qkv: WARNING: THE DEFAULT bf16_128x256x64 FAILED ITS CHECK (exit 1: max error 3.1" in err, err
    assert "--config ag_rota_bf16_128x256x64_tp2 --m 16384 --n 10240 --k 8192 --check" in err
    assert "qkv" not in tuned_layers(tmp_path) and report(tmp_path)["qkv"][5] == "(DEFAULT FAILED ITS CHECK)"


def test_a_default_whose_check_failed_for_the_moment_is_not_said_to_have_failed(tmp_path, monkeypatch):
    """qkv's default is the fastest, and its check runs out of memory (exit 5, checked again in the next run): no
    choice for now, but no warning that the default computes wrong numbers - that is for a check that failed for
    good."""
    fake_build(monkeypatch)
    runner = DefaultRunner(lambda cmd: answer(cmd, 5, error="tpgemm: cudaMalloc: out of memory") if "--check" in cmd
                           else answer(cmd, ms=0.5), where=on_qkv)
    code, err, _ = run_tune(tmp_path, runner)
    assert code == 1 and "qkv: checking bf16_128x256x64 failed" in err and "FAILED ITS CHECK" not in err, err
    assert "qkv" not in tuned_layers(tmp_path)


def test_a_layer_whose_default_wins_gets_no_choice(tmp_path, monkeypatch):
    """The default wins qkv (0.5 ms, its check passed): a choice pinning it would also hold at nearby token counts,
    where it changed the picks of tpg_dispatch_find; so none is written, the report says "default kept", and the
    sweep is complete (exit 0)."""
    fake_build(monkeypatch)
    code, err, cfg = run_tune(tmp_path, DefaultRunner(lambda cmd: answer(cmd, ms=0.5), where=on_qkv))
    assert code == 0 and "3/4 winners, 1 kept the default ->" in err, err
    assert set(tuned_layers(tmp_path)) == {"attn_out", "gate_up", "down"}
    row = report(tmp_path)["qkv"]
    assert row[5] == "(default kept)" and row[8] == "1.000x", row
    p = plan.build(models.load(str(cfg)), "schedules.yaml")
    assert {r.layer: r.tuned for r in p.dispatch if r.model == "llama3-70b" and r.tp == 2}["qkv"] is False


def test_where_every_default_wins_no_file_is_written(tmp_path, monkeypatch):
    fake_build(monkeypatch)
    code, err, _ = run_tune(tmp_path, DefaultRunner(lambda cmd: answer(cmd, ms=0.5)))
    assert code == 0 and "0/4 winners, 4 kept the default -> (no tuned file written)" in err, err
    assert not (tmp_path / "tuned").exists()


def test_the_tuned_file_names_the_gpu_sources_and_compiler(tmp_path, monkeypatch):
    fake_build(monkeypatch)
    monkeypatch.setattr(tune_env, "driver_devices", lambda: H100)
    code, err, _ = run_tune(tmp_path, FakeRunner())
    text = (tmp_path / "tuned" / "llama3-70b_tp2.yaml").read_text()
    fields = tune.header_fields(text)
    assert code == 0 and fields["gpu"] == "2x NVIDIA H100 80GB HBM3 (132 SMs)", text
    assert fields["sources"].split()[0] == tune.sources_fingerprint(tune_cli.ROOT, tune_env.compiler_version(
        tune_cli.ROOT))
    assert fields["nvcc"] and fields["timed"] == "--iterations 50 --warmup 10"
    assert yaml.safe_load(text)["tuned"]  # the header is a comment: the schema of a tuned file is unchanged


def test_results_of_another_gpu_are_stale(tmp_path, monkeypatch):
    """The same sources, compiler and settings on another GPU: every pair runs again (they were all reused before),
    and the tuned file names the new GPU."""
    fake_build(monkeypatch)
    monkeypatch.setattr(tune_env, "driver_devices", lambda: H100)
    assert run_tune(tmp_path, FakeRunner())[0] == 0
    monkeypatch.setattr(tune_env, "driver_devices", lambda: H200)
    runner = FakeRunner()
    code, err, _ = run_tune(tmp_path, runner)
    assert code == 0 and "another GPU (2x NVIDIA H100 80GB HBM3 (132 SMs); this run: 2x NVIDIA H200 (132 SMs))" in err
    assert "profiling anew" in err and any("--no-check" in c for c in runner.calls), err
    text = (tmp_path / "tuned" / "llama3-70b_tp2.yaml").read_text()
    assert tune.header_fields(text)["gpu"] == "2x NVIDIA H200 (132 SMs)"
    recs = [json.loads(x) for x in (tmp_path / "work" / "state.jsonl").read_text().splitlines()]
    assert {r["gpu"] for r in recs} == {"2x NVIDIA H100 80GB HBM3 (132 SMs)", "2x NVIDIA H200 (132 SMs)"}


def test_the_gpu_is_named_by_the_driver_else_by_nvidia_smi(monkeypatch):
    smi = FakeRunner()
    assert tune_env.smi_gpus(smi) == ["NVIDIA H200"] * 8
    uuid = subprocess.CompletedProcess([], 0, "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1f)\n  MIG 1g.10gb Device 0: "
                                              "(UUID: MIG-2)\nGPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-3a)\n", "")
    assert tune_env.smi_gpus(lambda cmd, **kw: uuid) == ["NVIDIA H100 80GB HBM3"] * 2
    assert tune_env.gpu_identity(H100, ["other"], 2) == "2x NVIDIA H100 80GB HBM3 (132 SMs)"
    assert tune_env.gpu_identity([("A", 132), ("B", 114)], None, 2) == "A (132 SMs), B (114 SMs)"
    assert tune_env.gpu_identity([], ["NVIDIA H200"] * 8, 4) == "4x NVIDIA H200"
    assert tune_env.gpu_identity([], None, 2) == "unknown GPU"
    monkeypatch.setattr(tune_env, "DRIVER_DEVICES", "print('132 NVIDIA H200'); print('114 NVIDIA H100 PCIe')")
    assert tune_env.driver_devices() == [("NVIDIA H200", 132), ("NVIDIA H100 PCIe", 114)]
    monkeypatch.setattr(tune_env, "DRIVER_DEVICES", "raise SystemExit(3)")
    assert tune_env.driver_devices() == []


def test_the_driver_query_on_this_machine_is_a_list():
    assert all(isinstance(name, str) and sms > 0 for name, sms in tune_env.driver_devices())


def times_out_on_down(cmd, **kw):
    """FakeRunner, but every run of the down layer (its K) past --run-timeout-s."""
    if cmd[0] not in ("ninja", "nvidia-smi") and int(_arg(cmd, "--k")) == DOWN_K:
        raise subprocess.TimeoutExpired(cmd, kw["timeout"])
    return FakeRunner()(cmd, **kw)


def test_a_partial_sweep_keeps_the_earlier_choices_of_layers_without_a_result(tmp_path, monkeypatch):
    """A second sweep (other --iterations: nothing reused) whose every down run times out: down's earlier choice stays
    in the file, said on stderr and in the header; the sweep is incomplete (exit 1). It was dropped before."""
    fake_build(monkeypatch)
    assert run_tune(tmp_path, FakeRunner())[0] == 0
    first = tuned_layers(tmp_path)
    code, err, cfg = run_tune(tmp_path, times_out_on_down, "--iterations", "7")
    assert code == 1 and "no new result for llama3-70b down at M = 16384 in this run" in err, err
    assert tuned_layers(tmp_path) == first
    text = (tmp_path / "tuned" / "llama3-70b_tp2.yaml").read_text()
    assert tune.header_fields(text)["kept"].startswith("llama3-70b down at M = 16384, from an earlier run")
    assert tune.header_fields(text)["timed"] == "--iterations 7 --warmup 10"
    first_timed = "--iterations 50 --warmup 10"  # run_tune's default, which the kept choice was timed with
    assert f"; timed {first_timed}) with no result in this one" in tune.header_fields(text)["kept"], text
    p = plan.build(models.load(str(cfg)), "schedules.yaml")
    assert all(r.tuned for r in p.dispatch if r.model == "llama3-70b" and r.tp == 2)


def test_a_choice_kept_twice_still_names_the_run_that_decided_it(tmp_path, monkeypatch):
    """Two partial sweeps in a row (each with other --iterations, every down run timing out): down's choice, decided
    by the first run, keeps that run's timing in the header - the second partial run's file said the first's, the
    third took the second's own timed: line (a review: a choice kept twice lost its provenance)."""
    fake_build(monkeypatch)
    assert run_tune(tmp_path, FakeRunner())[0] == 0
    for iterations in ("7", "9"):
        assert run_tune(tmp_path, times_out_on_down, "--iterations", iterations)[0] == 1
    text = (tmp_path / "tuned" / "llama3-70b_tp2.yaml").read_text()
    kept = [line for line in text.splitlines() if line.startswith("# kept: ")]
    assert len(kept) == 1 and kept[0].startswith("# kept: llama3-70b down at M = 16384, from an earlier run"), text
    assert "; timed --iterations 50 --warmup 10) with no result in this one" in kept[0], text
    assert tune.header_fields(text)["timed"] == "--iterations 9 --warmup 10"
    assert tune_cli.kept_provenance("# kept: a, b, from an earlier run (sources s; timed t) with no result in this "
                                    "one\n") == {"a": "sources s; timed t", "b": "sources s; timed t"}


def test_a_partial_sweep_on_another_gpu_keeps_nothing_of_the_earlier_file(tmp_path, monkeypatch):
    fake_build(monkeypatch)
    monkeypatch.setattr(tune_env, "driver_devices", lambda: H100)
    assert run_tune(tmp_path, FakeRunner())[0] == 0
    monkeypatch.setattr(tune_env, "driver_devices", lambda: H200)
    code, err, _ = run_tune(tmp_path, times_out_on_down)
    assert code == 1 and "had choices for llama3-70b down at M = 16384, with no new result in this run: dropped, " \
                         "since they were measured on 2x NVIDIA H100 80GB HBM3 (132 SMs)" in err, err
    assert set(tuned_layers(tmp_path)) == {"qkv", "attn_out", "gate_up"}


def test_a_sweep_where_every_default_wins_removes_the_earlier_file(tmp_path, monkeypatch):
    fake_build(monkeypatch)
    assert run_tune(tmp_path, FakeRunner())[0] == 0
    code, err, _ = run_tune(tmp_path, DefaultRunner(lambda cmd: answer(cmd, ms=0.5)), "--iterations", "7")
    out = tmp_path / "tuned" / "llama3-70b_tp2.yaml"
    assert code == 0 and f"no tuned choice is left (the defaults hold), so {out} (an earlier run's) is removed" in err
    assert not out.exists()


def test_an_earlier_choice_whose_kernel_name_now_means_another_kernel_is_not_kept():
    k = {"name": "p_k", "dtype": "bf16", "tile": {"bm": 128, "bn": 128, "bk": 64}}
    choice = {"model": "m", "layer": "down", "tokens": 8, "dtype": "bf16", "schedule": "S", "tp": 2, "kernel": "p_k"}
    earlier = {"kernels": [k], "tuned": [choice, dict(choice, layer="qkv")]}
    doc = {"version": 1, "kernels": [dict(k, stages=4)], "tuned": []}
    merged, kept, clashing = tune.keep_earlier(doc, earlier, {models.tuned_key(dict(choice, layer="qkv"))})
    assert kept == [] and clashing == [choice] and merged["kernels"] == doc["kernels"]
    merged, kept, _ = tune.keep_earlier(dict(doc, kernels=[]), earlier, set())
    assert kept == earlier["tuned"] and merged["kernels"] == [k]
