"""The tuner's runs that go wrong (no GPU needed; processes faked): failed runs are final except a runtime failure,
which runs again; a hung run is stopped; a spilling candidate never runs; results of other sources are stale; the
tuned file is replaced in one rename and an old one is named when nothing wins; arguments that cannot work are
refused before anything is built."""
import io
import json
import subprocess

import pytest
import yaml
from test_tune import SHAPES, FakeRunner, run_tune

from generator import tune, tune_cli, tune_env


def fake_build(monkeypatch, reports=None):
    """build_tree replaced: ninja 'runs' through the runner, and `reports` (kernel -> ptxas text) lands in the tree."""
    def build(work, shapes, cands, runner, jobs):
        runner(["ninja"])
        for kernel, text in (reports or {}).items():
            path = work / "obj" / "kernels" / f"{kernel}.o.ptxas.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return work / "tpgemm"
    monkeypatch.setattr(tune_cli, "build_tree", build)


def records(tmp_path):
    return [json.loads(line) for line in (tmp_path / "work" / "state.jsonl").read_text().splitlines()]


def test_only_a_runtime_failure_runs_again_and_only_a_few_times():
    cands = tune.enumerate_candidates("bf16", extra={})[:5]
    s = SHAPES[0]
    recs = ({"exit_code": 0}, {"exit_code": 1}, {"exit_code": 5}, {"exit_code": 124},
            {"exit_code": 5, "attempts": tune.RETRIES})
    state = {(tune.job_key(s, c), "profile"): rec for c, rec in zip(cands, recs)}
    assert [c for _, c in tune.pending([s], cands, state)] == [cands[2]]


def profiled(s, times):
    """A state of profile runs: [(candidate, avg_ms), ...]."""
    return {(tune.job_key(s, c), "profile"): {"exit_code": 0, "avg_ms": ms} for c, ms in times}


def test_a_candidate_beats_the_default_by_the_margin_or_not_at_all():
    s, (c0, c1, c2) = SHAPES[0], tune.enumerate_candidates("bf16", extra={})[:3]
    state = profiled(s, [(c0, 2.0 * (1 - tune.WIN_MARGIN / 2)), (c1, 1.5), (c2, 2.0)])
    assert tune.by_merit(s, [c0, c1, c2], state, default=c2) == [c1, c2]  # c0, within the margin, never wins
    assert tune.by_merit(s, [c0, c1, c2], state) == [c1, c0, c2]
    tie = profiled(s, [(c0, 1.0), (c1, 1.0), (c2, 1.0)])  # a tie goes to the layer's own default, not the list's first
    assert tune.by_merit(s, [c0, c1, c2], tie, default=c2)[0] == c2
    for c in (c0, c1, c2):
        tie[tune.job_key(s, c), "verify"] = {"exit_code": 0, "check": "passed"}
    assert tune.pick_winner(s, [c0, c1, c2], tie, default=c2) == (c2, [])


def test_a_candidate_exactly_the_margin_faster_than_the_default_wins():
    """WIN_MARGIN: a candidate wins where its time is <= the default's x (1 - WIN_MARGIN), the bound included."""
    s, (c0, c1) = SHAPES[0], tune.enumerate_candidates("bf16", extra={})[:2]
    state = profiled(s, [(c0, 2.0 * (1 - tune.WIN_MARGIN)), (c1, 2.0)])
    assert tune.by_merit(s, [c0, c1], state, default=c1) == [c0, c1]


def test_a_check_failed_for_the_moment_leaves_the_best_candidate_checked_before():
    s, (c0, c1, c2) = SHAPES[0], tune.enumerate_candidates("bf16", extra={})[:3]
    state = profiled(s, [(c0, 1.0), (c1, 1.2), (c2, 2.0)])
    state[tune.job_key(s, c0), "verify"] = {"exit_code": 5, "check": None}
    state[tune.job_key(s, c1), "verify"] = {"exit_code": 0, "check": "passed"}
    assert tune.pick_winner(s, [c0, c1, c2], state, default=c2) == (None, [c0])  # retried first
    assert tune.checked_winner(s, [c0, c1, c2], state, c2, frozenset([c0.name])) == c1
    state[tune.job_key(s, c1), "verify"] = {"exit_code": 1, "check": "failed"}
    assert tune.checked_winner(s, [c0, c1, c2], state, c2, frozenset([c0.name])) is None
    # the default's own check failed so: a slower candidate that passed before is no winner
    slower = profiled(s, [(c0, 1.0), (c1, 1.3)])
    slower[tune.job_key(s, c1), "verify"] = {"exit_code": 0, "check": "passed"}
    assert tune.checked_winner(s, [c0, c1], slower, c0, frozenset([c0.name])) is None
    assert tune.checked_winner(s, [c0, c1], slower, None, frozenset([c0.name])) == c1  # no default: by time


def test_a_check_that_failed_for_the_moment_is_checked_again_next_run(tmp_path, monkeypatch):
    fake_build(monkeypatch)
    ok, checks = FakeRunner(), []

    def oom_on_check(cmd, **kw):
        if "--check" in cmd:
            checks.append(cmd)
            return subprocess.CompletedProcess(cmd, 5, "", "tpgemm: cudaMalloc: out of memory")
        return ok(cmd, **kw)
    rc, err, _ = run_tune(tmp_path, oom_on_check)
    assert rc == 1 and len(checks) == 4 and "for now no winner" in err, err  # one check a layer
    assert "checked run(s) exit 5" in err
    rc, err, _ = run_tune(tmp_path, FakeRunner())  # the machine is well again: the same candidates pass
    assert rc == 0 and "4/4 winners" in err, err
    attempts = [r.get("attempts") for r in records(tmp_path) if r["phase"] == "verify" and r["exit_code"] == 5]
    assert attempts == [1] * 4


def test_a_runtime_failure_runs_three_times_in_all_then_is_final(tmp_path, monkeypatch):
    """A timing run that fails with exit 5 in every tuner run: its record counts the attempts (1, 2, 3), and after the
    third (tune.RETRIES) a fourth tuner run leaves it alone."""
    fake_build(monkeypatch)
    ok, runs = FakeRunner(), []

    def oom_on_192(cmd, **kw):
        if "_c_" in " ".join(cmd) and "x192x" in " ".join(cmd) and "--no-check" in cmd:
            runs.append(cmd)
            return subprocess.CompletedProcess(cmd, 5, "", "tpgemm: cudaMalloc: out of memory")
        return ok(cmd, **kw)
    counts = []
    for _ in range(tune.RETRIES + 1):
        run_tune(tmp_path, oom_on_192)
        counts.append(len(runs))
    per_run = counts[0]
    assert per_run and counts == [per_run * min(i + 1, tune.RETRIES) for i in range(tune.RETRIES + 1)], counts
    assert sorted({r.get("attempts") for r in records(tmp_path) if r["exit_code"] == 5}) == [1, 2, 3]


def test_the_work_path_check_reads_the_path_ninja_sees(tmp_path, monkeypatch):
    repo = tmp_path / "my repo"  # a space in the repository's own path is fine: ninja sees paths relative to it
    monkeypatch.setattr(tune_cli, "ROOT", repo)
    args = type("A", (), {"work": None})()
    assert tune_cli._work_dir(args, "t") == (repo / "build" / "tune" / "t").resolve()
    args.work = str(tmp_path / "out side")
    with pytest.raises(SystemExit, match="a path without spaces"):
        tune_cli._work_dir(args, "t")


def test_records_of_other_sources_are_stale(tmp_path):
    line = json.dumps({"key": "k", "phase": "profile", "exit_code": 0, "sources": "aaaa"})
    assert tune.load_state([line], "aaaa") and not tune.load_state([line], "bbbb") and tune.load_state([line])
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "k.cuh").write_text("one")
    first = tune.sources_fingerprint(tmp_path)
    (tmp_path / "templates" / "k.cuh").write_text("two")
    assert tune.sources_fingerprint(tmp_path) != first
    assert tune.sources_fingerprint(tmp_path, "release 12.4") != tune.sources_fingerprint(tmp_path, "release 12.8")


def test_the_compiler_named_is_build_ninjas_nvcc(tmp_path):
    nvcc = tmp_path / "nvcc"
    nvcc.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n")
    nvcc.chmod(0o755)
    (tmp_path / "build.ninja").write_text(f"ninja_required_version = 1.10\nnvcc = {nvcc}\n")
    assert tune_env.compiler_version(tmp_path) == "Cuda compilation tools, release 12.4, V12.4.131"
    nvcc.write_text("#!/bin/sh\nexit 7\n")
    assert tune_env.compiler_version(tmp_path) == f"{nvcc}: exit 7"
    nvcc.unlink()
    assert tune_env.compiler_version(tmp_path).startswith(f"{nvcc}: ")
    (tmp_path / "build.ninja").write_text("cc = gcc\n")
    assert tune_env.compiler_version(tmp_path) == "no nvcc line in build.ninja"


def test_a_hung_run_is_stopped_and_recorded_as_final(tmp_path, monkeypatch):
    fake_build(monkeypatch)
    ok = FakeRunner()

    def hangs(cmd, **kw):
        if "_c_" in " ".join(cmd) and "x192x" in " ".join(cmd):
            raise subprocess.TimeoutExpired(cmd, kw["timeout"])
        return ok(cmd, **kw)
    rc, err, _ = run_tune(tmp_path, hangs, "--run-timeout-s", "7")
    stopped = [r for r in records(tmp_path) if r["exit_code"] == tune_cli.RUN_TIMEOUT_EXIT]
    assert stopped and all("stopped after --run-timeout-s 7 s" in r["error"] for r in stopped), err
    assert f"exit {tune_cli.RUN_TIMEOUT_EXIT}" in err and rc == 0
    calls = len(ok.calls)
    run_tune(tmp_path, hangs, "--run-timeout-s", "7")  # nothing left to profile: the stopped runs are final
    assert len(ok.calls) - calls <= 2 + 4  # ninja, nvidia-smi (the GPU's name: the state's key); at most the verifies


def test_a_spilling_candidate_never_runs(tmp_path, monkeypatch):
    cands = tune.enumerate_candidates("bf16", extra={})
    spilling = next(c for c in cands if c.entry["tile"]["bn"] == 192)
    fake_build(monkeypatch, {spilling.kernel: "ptxas info : 0 bytes stack frame, 16 bytes spill stores, 20 bytes "
                                              "spill loads\n"})
    runner = FakeRunner()
    rc, err, _ = run_tune(tmp_path, runner)
    recs = records(tmp_path)
    spilled = [r for r in recs if r["exit_code"] == tune_cli.SPILL_EXIT]
    assert spilled and all(spilling.kernel in r["key"] and "16 bytes spill stores" in r["error"] for r in spilled)
    ran = {r["candidate"] for r in recs if r["exit_code"] != tune_cli.SPILL_EXIT}
    assert not ran & {r["candidate"] for r in spilled}, "a spilling kernel ran"
    assert not any(any(r["candidate"] in x for x in c) for c in runner.calls for r in spilled)


def test_the_tuned_file_is_replaced_whole_and_an_old_one_named_when_nothing_wins(tmp_path, monkeypatch):
    fake_build(monkeypatch)
    rc, err, cfg = run_tune(tmp_path, FakeRunner())
    out = tmp_path / "tuned" / "llama3-70b_tp2.yaml"
    assert rc == 0 and yaml.safe_load(out.read_text())["tuned"] and not list(out.parent.glob(".*.tmp"))
    (tmp_path / "work" / "state.jsonl").unlink()

    def all_fail(cmd, **kw):
        return FakeRunner()(cmd, **kw) if cmd[0] in ("ninja", "nvidia-smi") else \
            subprocess.CompletedProcess(cmd, 2, "", "tpgemm: shape not supported")
    rc, err, _ = run_tune(tmp_path, all_fail)
    assert rc == 1 and f"no winner, so {out}" in err and "exit 2, e.g." in err and out.exists(), err
    assert "tpgemm: shape not supported" in (tmp_path / "work" / "report.md").read_text()


@pytest.mark.parametrize("args, needle", [
    (["--iterations", "0"], "--iterations 0 (>= 1)"),
    (["--warmup", "-1"], "--warmup -1 (>= 0)"),
    (["--run-timeout-s", "0"], "--run-timeout-s 0 (> 0)"),
    (["-j", "-3"], "-j -3: give a positive number of parallel jobs"),  # ninja failed on it after the search began
    (["-j", "0"], "-j 0: give a positive number"),
    (["--dtype", "fp16"], "--dtype fp16: llama3-70b's layers are bf16"),
    (["--shape", "4096,4096,4096"], "--shape is for one GEMM instead: give one or the other"),
    (["--schedule", "AllGather1D_TilingCD_RotatingA"], "--schedule is for one GEMM instead"),
])
def test_arguments_that_cannot_work_are_refused_before_building(tmp_path, monkeypatch, args, needle, capsys):
    monkeypatch.setattr(tune_cli, "build_tree", lambda *a: pytest.fail("built"))
    with pytest.raises(SystemExit) as e:
        run_tune(tmp_path, FakeRunner(), *args)
    assert e.value.code not in (0, None) and needle in (str(e.value.code) + capsys.readouterr().err)


def test_shape_runs_name_their_dtype_and_refuse_tokens(tmp_path, monkeypatch):
    monkeypatch.setattr(tune_cli, "build_tree", lambda *a: pytest.fail("built"))
    with pytest.raises(SystemExit, match="--tokens sets a preset's M"):
        tune_cli.main(["--shape", "4096,4096,4096", "--schedule", "AllGather1D_TilingCD_RotatingA", "--tp", "2",
                       "--tokens", "128"], runner=FakeRunner(), stream=io.StringIO())
    for bad in ("with space", "dollar$sign"):
        with pytest.raises(SystemExit, match="a path without spaces"):
            run_tune(tmp_path, FakeRunner(), "--work", str(tmp_path / bad))


def test_hilbert_walks_are_one_candidate_whatever_the_group():
    cands = tune.enumerate_candidates("bf16")
    hilbert = [c for c in cands if c.entry.get("raster") == "hilbert"]
    assert hilbert and all(c.entry.get("raster_group", tune.RASTER_GROUP_DEFAULT) == tune.RASTER_GROUP_DEFAULT
                           for c in hilbert)
    assert any(c.entry.get("raster_group") not in (None, tune.RASTER_GROUP_DEFAULT) for c in cands)


def test_a_hilbert_search_without_the_default_group_is_refused():
    with pytest.raises(ValueError, match="never reads raster_group"):
        tune.restrict(tune.knob_space(), ["raster=hilbert", "raster_group=4"])
    assert tune.restrict(tune.knob_space(), ["raster=hilbert", "raster_group=4,8"])["raster_group"] == (4, 8)


def test_a_tuned_file_that_would_break_the_config_is_not_kept(tmp_path, monkeypatch):
    """Another tuned file already chooses for the same layers at the same M (an earlier run's, renamed): the new file
    would make the config fail (ninja would then stop), so it is taken back, the errors printed, the exit status 1."""
    fake_build(monkeypatch)
    rc, err, _ = run_tune(tmp_path, FakeRunner())
    assert rc == 0, err
    tuned = tmp_path / "tuned"
    (tuned / "llama3-70b_tp2.yaml").rename(tuned / "earlier.yaml")
    rc, err, cfg = run_tune(tmp_path, FakeRunner())
    assert rc == 1 and "a second tuned choice for the same layer" in err and "so it was not written" in err, err
    assert sorted(p.name for p in tuned.iterdir()) == ["earlier.yaml"]


def test_a_tuned_file_the_config_does_not_include_is_kept_with_a_warning(tmp_path, monkeypatch):
    fake_build(monkeypatch)
    out = tmp_path / "elsewhere" / "mine.yaml"
    rc, err, cfg = run_tune(tmp_path, FakeRunner(), "--out", str(out))
    assert rc == 0 and out.is_file() and f"does not include {out}" in err, err


@pytest.mark.parametrize("flag, under_a_file, said", [
    ("--out", False, "is a directory: name the tuned file"),
    ("--out", True, "is a file, not a directory"),
    ("--work", True, "is a file, not a directory"),
])
def test_a_tuned_file_or_work_path_that_cannot_be_written_is_refused_before_any_run(tmp_path, flag, under_a_file,
                                                                                   said):
    if under_a_file:
        (tmp_path / "file").write_text("")
        target = tmp_path / "file" / "x"
    else:
        target = tmp_path / "somedir"
        target.mkdir()
    runner = FakeRunner()
    with pytest.raises(SystemExit, match=said):
        run_tune(tmp_path, runner, flag, str(target))
    assert runner.calls == []


def test_no_ninja_or_no_cli_is_a_message_not_a_traceback(tmp_path, monkeypatch):
    def no_ninja(cmd, **kw):
        if cmd[0] == "ninja":
            raise FileNotFoundError(2, "No such file or directory", "ninja")
        return FakeRunner()(cmd, **kw)
    with pytest.raises(SystemExit, match="cannot run ninja"):
        run_tune(tmp_path, no_ninja)
    fake_build(monkeypatch)

    def no_cli(cmd, **kw):
        if cmd[0] in ("ninja", "nvidia-smi"):
            return FakeRunner()(cmd, **kw)
        raise PermissionError(13, "Permission denied", cmd[0])
    with pytest.raises(SystemExit, match="cannot run .*tpgemm: .*Permission denied"):
        run_tune(tmp_path, no_cli)


def test_results_of_other_iterations_are_not_reused(tmp_path, monkeypatch):
    fake_build(monkeypatch)
    rc, err, _ = run_tune(tmp_path, FakeRunner())
    assert rc == 0 and "profiling anew" not in err
    rc, err, _ = run_tune(tmp_path, FakeRunner(), "--iterations", "7")
    assert rc == 0 and "other --iterations / --warmup: profiling anew" in err, err


def test_each_run_times_the_iterations_and_warmup_asked_for(tmp_path, monkeypatch):
    fake_build(monkeypatch)
    runner = FakeRunner()
    assert run_tune(tmp_path, runner, "--iterations", "7", "--warmup", "3")[0] == 0
    runs = [c for c in runner.calls if c[0] not in ("ninja", "nvidia-smi")]
    assert runs and all(c[c.index("--iterations") + 1] == "7" and c[c.index("--warmup-iterations") + 1] == "3"
                        for c in runs), runs[0]


def test_a_tuned_file_whose_check_is_interrupted_is_taken_back(tmp_path, monkeypatch):
    out = tmp_path / "tuned" / "x.yaml"
    out.parent.mkdir()
    out.write_text("earlier\n")

    def interrupted(path):
        raise KeyboardInterrupt
    monkeypatch.setattr(tune_cli.models, "load", interrupted)
    with pytest.raises(KeyboardInterrupt):
        tune_cli._write_tuned(out, "version: 1\nkernels: []\ntuned: []\n", str(tmp_path / "s.yaml"), io.StringIO())
    assert out.read_text() == "earlier\n" and sorted(p.name for p in out.parent.iterdir()) == ["x.yaml"]


def test_the_help_speaks_to_a_user_not_to_the_tests():
    """`tune --help` showed the module's first paragraph: "the process edge", "tests pass a fake" and no word of the
    GPUs, the exit statuses or the defaults of --config, --iterations and --warmup (docs/TUNING.md has them)."""
    text = " ".join(tune_cli._parser().format_help().split())
    assert "process edge" not in text and "fake" not in text, text
    assert "as many as --tp; --dry-run needs none" in text and "3 too few GPUs" in text
    assert f"by {tune.WIN_MARGIN:.0%}" in text  # tune.WIN_MARGIN
    assert "the repository's, wherever tune runs" in text and "default 50" in text and "default 10" in text
