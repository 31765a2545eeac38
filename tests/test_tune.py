"""`python3 -m generator tune` without a GPU: candidate legality, resume state, winner selection, the
tuned YAML read back by the generator, and the report. Processes are faked at the boundary (runner)."""
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from generator import config, kernels, models, plan, tune, tune_cli, tune_env, tune_report

ROOT = Path(__file__).resolve().parents[1]


def test_candidates_are_legal_distinct_and_include_the_brief_tiles():
    cands = tune.enumerate_candidates("bf16", extra={})
    specs = [c.kernel for c in cands]
    assert len(specs) == len(set(specs))
    tiles = {(c.entry["tile"]["bm"], c.entry["tile"]["bn"]) for c in cands}
    assert tiles == {(128, 128), (128, 192), (128, 256), (256, 128)}
    for c in cands:
        assert tune.resolve(c.entry) == (c.kernel, [])
        assert (c.entry["cluster"]["m"], c.entry["cluster"]["n"]) in kernels.SUPPORTED_CLUSTERS
    # 128x256 with one consumer needs 256 accumulators per thread: illegal, so never a candidate
    assert not any(c.entry["tile"]["bn"] == 256 and c.entry["consumers"] == 1 for c in cands)
    bad, errors = tune.resolve(tune._entry("bf16", (128, 256, 64), 9, 2, (1, 1), ()))
    assert bad is None and "stages" in errors[0]


def test_fp8_candidates_keep_the_128_byte_row():
    """An e4m3 candidate of tile 128x256x64 (TILES spell bk for 16-bit types) gets bk = 128: the same 128-byte
    K-major row, the shipped fp8 geometry, not a 64-byte one."""
    cands = tune.enumerate_candidates("e4m3", extra={})
    assert cands and {c.entry["tile"]["bk"] for c in cands} == {128}
    assert all(c.entry["dtype"] == "e4m3" and tune.resolve(c.entry) == (c.kernel, []) for c in cands)
    assert {c.entry["tile"]["bk"] for c in tune.enumerate_candidates("bf16", extra={})} == {64}


def test_extra_knobs_come_from_the_kernel_schema():
    """The tuner's extra knobs are the kernel schema's enum fields beyond the base ones, each with the schema's values,
    the unverified ones (cooperative_n, fp32 partials) only when opted in; one value of each keeps the search's
    size."""
    extra, everything = tune.extra_knobs(), tune.extra_knobs(opt_in=True)
    assert {"raster", "raster_group", "consumer_mode", "partials"} <= set(extra)
    assert not set(extra) & set(tune.BASE_FIELDS)
    assert everything["consumer_mode"] == config.KERNEL.fields["consumer_mode"].enum
    assert "cooperative_n" not in extra["consumer_mode"] and extra["partials"] == ("out",)
    assert set(everything["partials"]) == {"out", "f32"} and extra["raster"] == everything["raster"]
    one = {f: vals[:1] for f, vals in extra.items()}
    assert len(tune.enumerate_candidates("bf16", extra=one)) == len(tune.enumerate_candidates("bf16", extra={}))


SHAPES = [tune.Shape("m", "qkv", 256, 512, 128, "AllGather1D_TilingCD_RotatingA", 2, "bf16"),
          tune.Shape("m", "down", 256, 128, 512, "ReduceScatter1D_TilingA_RotatingC", 2, "bf16")]


def test_resume_skips_finished_pairs_and_ignores_torn_lines():
    cands = tune.enumerate_candidates("bf16", extra={})[:3]
    lines = [json.dumps({"key": tune.job_key(SHAPES[0], cands[0]), "phase": "profile", "avg_ms": 1.0}),
             json.dumps({"key": tune.job_key(SHAPES[1], cands[2]), "phase": "verify", "check": "passed"}),
             '{"key": "torn']
    todo = tune.pending(SHAPES, cands, tune.load_state(lines))
    assert (SHAPES[0], cands[0]) not in todo and len(todo) == 5
    assert (SHAPES[1], cands[2]) in todo  # a verify record is not a profile


def test_winner_is_the_fastest_that_passes_its_check():
    cands = tune.enumerate_candidates("bf16", extra={})[:3]
    s = SHAPES[0]
    rec = lambda c, ms, rc=0: {("%s" % tune.job_key(s, c), "profile"): {"avg_ms": ms, "exit_code": rc}}
    state = {**rec(cands[0], 2.0), **rec(cands[1], 1.0), **rec(cands[2], 0.5, rc=5)}
    assert tune.pick_winner(s, cands, state) == (None, [cands[1]])  # fastest ran ok: verify it first
    state[tune.job_key(s, cands[1]), "verify"] = {"check": "failed", "exit_code": 1}
    assert tune.pick_winner(s, cands, state) == (None, [cands[0]])
    state[tune.job_key(s, cands[0]), "verify"] = {"check": "passed", "exit_code": 0}
    assert tune.pick_winner(s, cands, state) == (cands[0], [])


@pytest.mark.parametrize("verify", [{"check": "passed", "exit_code": 1}, {"check": "skipped", "exit_code": 0},
                                    {"check": None, "exit_code": 0}])
def test_a_checked_run_wins_only_where_its_check_passed_and_it_exited_0(verify):
    """A check that said passed and then failed the run (exit 1), or a run whose check did not run: no winner."""
    s, c = SHAPES[0], tune.enumerate_candidates("bf16", extra={})[0]
    state = {(tune.job_key(s, c), "profile"): {"avg_ms": 1.0, "exit_code": 0}, (tune.job_key(s, c), "verify"): verify}
    assert tune.pick_winner(s, [c], state) == (None, [])


class FakeRunner:
    """Stands in for subprocess.run: ninja succeeds; tpgemm answers JSON whose time depends on BN."""

    def __init__(self, fail_check=()):
        self.calls, self.fail_check = [], set(fail_check)

    def __call__(self, cmd, **kw):
        self.calls.append(cmd)
        if cmd[0] == "ninja":
            return subprocess.CompletedProcess(cmd, 0, "", "")
        if cmd[0] == "nvidia-smi":  # the tuner's check before building: eight GPUs
            return subprocess.CompletedProcess(cmd, 0, "".join(f"GPU {i}: NVIDIA H200\n" for i in range(8)), "")
        config = cmd[cmd.index("--config") + 1]
        bn = int(config.split("x")[1])
        ms = {128: 3.0, 192: 1.0, 256: 2.0}[bn] + (0.5 if "_s3_" in config else 0)
        check = "--check" in cmd
        passed = not (check and any(f in config for f in self.fail_check))
        out = {"avg_ms": ms, "tflops_per_gpu": 100.0 / ms, "check": ("passed" if passed else "failed")
               if check else "skipped", "error": None}
        return subprocess.CompletedProcess(cmd, 0 if passed else 1, json.dumps(out), "")


class PullFasterRunner(FakeRunner):
    """As FakeRunner, with pulled partials 0.25 ms faster than pushed ones (copy-engine ones: `faster`)."""
    faster = {"_pull_tp": 0.25}

    def __call__(self, cmd, **kw):
        r = super().__call__(cmd, **kw)
        config = cmd[cmd.index("--config") + 1] if "--config" in cmd else ""
        gain = next((ms for tag, ms in self.faster.items() if tag in config), 0.0)
        if gain:
            out = json.loads(r.stdout)
            out["avg_ms"] -= gain
            r = subprocess.CompletedProcess(cmd, r.returncode, json.dumps(out), "")
        return r


# the bf16 reduce-scatter families whose partials may go any route (schedules.yaml; their twins <family>_push etc.)
ROUTED_FAMILIES = [f"rs_til{s}_bf16{w}" for s in "ab" for w in ("", "_wide")]


def with_route(cfg, family, route):
    """cfg's config `family` with its partials moved by `route` (tune.ROUTES), whichever route schedules.yaml gives
    it: its line's route fields replaced."""
    text = cfg.read_text()
    line = next(x for x in text.splitlines() if x.startswith(f"  - {{name: {family}, "))
    knob = tune.ROUTES[route][0]
    bare = re.sub(r", (pull_partials|copy_engine_partials): true", "", line)
    cfg.write_text(text.replace(line, bare[:-1] + (f", {knob}: true}}" if knob else "}")))


def tuned_repo(tmp_path):
    """A copy of schedules.yaml in tmp_path (its include: tuned/*.yaml then points to tmp_path/tuned), its routed
    families pushing: the tests of the tuner's walk count candidates against pushing defaults, whatever ships."""
    shutil.copy(ROOT / "schedules.yaml", tmp_path / "schedules.yaml")
    for family in ROUTED_FAMILIES:
        with_route(tmp_path / "schedules.yaml", family, "push")
    return tmp_path / "schedules.yaml"


def run_tune(tmp_path, runner, *extra):
    cfg = tuned_repo(tmp_path)
    err = io.StringIO()
    rc = tune_cli.main(["--model", "llama3-70b", "--tp", "2", "--tokens", "16384", "--config", str(cfg),
                        "--work", str(tmp_path / "work"), "--knob", f"{next(iter(tune.extra_knobs()), 'x')}=8",
                        *extra] if tune.extra_knobs() else
                       ["--model", "llama3-70b", "--tp", "2", "--tokens", "16384", "--config", str(cfg),
                        "--work", str(tmp_path / "work"), *extra], runner=runner, stream=err,
                       clock=iter(range(0, 10**6)).__next__)
    return rc, err.getvalue(), cfg


def test_tune_end_to_end_with_faked_processes(tmp_path, monkeypatch):
    monkeypatch.setattr(tune_cli, "build_tree", lambda work, shapes, cands, runner, jobs: (
        runner(["ninja"]), work / "tpgemm")[1])
    runner = FakeRunner(fail_check=("128x192x64_s4",))
    rc, err, cfg = run_tune(tmp_path, runner)
    assert rc == 0, err
    assert "ETA" in err and "4/4 winners" in err
    profiled = [c for c in runner.calls if "--no-check" in c]
    checked = [c for c in runner.calls if "--check" in c]
    assert len(profiled) % 4 == 0 and len(checked) >= 4
    # a rerun profiles nothing and verifies nothing: everything is in the state file (nvidia-smi names the GPU: the
    # state's key)
    again = FakeRunner(fail_check=("128x192x64_s4",))
    rc, err, _ = run_tune(tmp_path, again)
    assert rc == 0 and [c for c in again.calls if c[0] not in ("ninja", "nvidia-smi")] == []
    # the tuned file goes back into the generator: each layer dispatches to its tuned config
    text = (tmp_path / "tuned" / "llama3-70b_tp2.yaml").read_text()
    assert "llama3_70b_tp2_c_bf16_128x192x64_s3_w2" in text  # s4 failed its check; s3 is next fastest
    p = plan.build(models.load(str(cfg)), "schedules.yaml")
    rows = [r for r in p.dispatch if r.model == "llama3-70b" and r.tp == 2]
    assert len(rows) == 4 and all(r.tuned for r in rows)
    assert {p.configs[r.config_index].kernel.bn for r in rows} == {192}
    report = (tmp_path / "work" / "report.md").read_text()
    assert "| qkv | 16384 x 10240 x 8192 | AllGather1D_TilingCD_RotatingA |" in report
    # default: the shipped ping-pong 128x128 (3.0 ms); winner 128x192 s3: 1.5 ms (s4 failed its check)
    assert "2.000x" in report


def test_no_gpu_stops_without_recording_or_writing_a_tuned_file(tmp_path, monkeypatch):
    monkeypatch.setattr(tune_cli, "build_tree", lambda work, shapes, cands, runner, jobs: work / "tpgemm")
    calls = []

    def no_gpu(cmd, **kw):  # nvidia-smi lists two, but build/tpgemm finds too few Hopper GPUs: exit 3
        calls.append(cmd)
        if cmd[0] == "nvidia-smi":
            return subprocess.CompletedProcess(cmd, 0, "GPU 0: x\nGPU 1: y\n", "")
        return subprocess.CompletedProcess(cmd, 3, "", "tpgemm: this run needs 2 Hopper (sm_90) GPUs")

    rc, err, _ = run_tune(tmp_path, no_gpu)
    assert rc == 3 and len(calls) == 2, err
    assert "needs 2 Hopper" in err
    state = tmp_path / "work" / "state.jsonl"
    assert not state.exists() or state.read_text() == ""  # the pair stays pending for the next run
    assert not (tmp_path / "tuned").exists()


def test_exit_3_after_the_build_is_what_the_help_says_of_it(tmp_path, monkeypatch):
    """nvidia-smi lists the GPUs, the tree is built, its first run finds too few Hopper GPUs: exit 3 with the tree
    built, which the help's "3 too few GPUs (nothing built)" denied; the pending pairs stay pending."""
    built = []
    monkeypatch.setattr(tune_cli, "build_tree", lambda work, shapes, cands, runner, jobs: (
        built.append(work), work / "tpgemm")[1])

    def too_few(cmd, **kw):
        if cmd[0] == "nvidia-smi":
            return subprocess.CompletedProcess(cmd, 0, "GPU 0: x\nGPU 1: y\n", "")
        return subprocess.CompletedProcess(cmd, 3, "", "tpgemm: this run needs 2 Hopper (sm_90) GPUs")

    rc, err, _ = run_tune(tmp_path, too_few)
    assert rc == 3 and built, err
    said = " ".join(tune_cli._parser().format_help().split())
    assert "3 too few GPUs (the runs still to do stay pending)" in said and "nothing built" not in said, said


def test_a_dry_run_writes_and_checks_the_candidates_and_runs_nothing(tmp_path, monkeypatch, capsys):
    def never(cmd, **kw):
        raise AssertionError(f"a dry run ran {cmd}")

    rc, err, _ = run_tune(tmp_path, never, "--dry-run")
    assert rc == 0, err
    text = capsys.readouterr().out
    doc = yaml.safe_load((tmp_path / "work" / "schedules.yaml").read_text())
    listed = re.findall(r"^(qkv|attn_out|gate_up|down): 16384 x \d+ x \d+, \w+, tp 2, bf16: (\d+) candidates$", text,
                        re.M)
    assert [layer for layer, _ in listed] == ["qkv", "attn_out", "gate_up", "down"]
    names = {line.strip() for line in text.splitlines() if line.startswith("  ")}
    assert names and names <= {k["name"] for k in doc["kernels"]}
    assert all(int(n) > 0 for _, n in listed)
    assert f"tune: --dry-run: {tmp_path / 'work' / 'schedules.yaml'} (" in text and "nothing built or run" in text
    assert not (tmp_path / "work" / "state.jsonl").exists() and not (tmp_path / "tuned").exists()
    # fp32 partials, searched when named: only where partials move (the reduce-scatter layers at TP 2), and the
    # candidate file with them generates (the generator refuses them in an all-gather or at TP = 1)
    rc, err, _ = run_tune(tmp_path, never, "--dry-run", "--knob", "partials=out,f32")
    assert rc == 0, err
    sections = re.split(r"^(\w+): 16384", capsys.readouterr().out, flags=re.M)[1:]
    f32 = {layer: sum("partialsf32" in line for line in body.splitlines()) for layer, body in zip(sections[::2],
                                                                                                 sections[1::2])}
    assert f32["qkv"] == f32["gate_up"] == 0 and f32["attn_out"] > 0 and f32["down"] > 0, f32
    # candidates that together break a generator rule: its errors, exit 2
    monkeypatch.setattr(tune_cli, "write_doc", lambda work, doc: (_ for _ in ()).throw(
        config.ConfigError(["schedules.yaml:3: kernels[0].stages: too many"])))
    rc, err, _ = run_tune(tmp_path, never, "--dry-run")
    assert rc == 2 and "kernels[0].stages: too many" in capsys.readouterr().err


def test_knobs_no_legal_kernel_has_together_are_refused(tmp_path, capsys):
    """Each value legal alone, none together (one consumer warpgroup holds 64 or 128 rows, not 256): the run once went
    on with the shipped picks alone, timing them against nothing the knobs asked for."""
    def never(cmd, **kw):
        raise AssertionError(f"nothing runs: {cmd}")

    with pytest.raises(SystemExit) as e:
        run_tune(tmp_path, never, "--dry-run", "--knob", "tile=256x128x64", "--knob", "consumers=1")
    assert e.value.code == 2
    assert "--knob tile=256x128x64 --knob consumers=1: no legal bf16 kernel has these values" in capsys.readouterr().err
    assert not (tmp_path / "work").exists()


def test_too_few_gpus_stop_the_run_before_anything_is_built(tmp_path, monkeypatch):
    built = []
    monkeypatch.setattr(tune_cli, "build_tree", lambda *a: built.append(a) or a[0] / "tpgemm")
    one = subprocess.CompletedProcess(["nvidia-smi"], 0, "GPU 0: x\n  MIG 1g.18gb Device 0: (UUID: y)\n", "")
    rc, err, _ = run_tune(tmp_path, lambda cmd, **kw: one)  # one GPU (its MIG line is no GPU) for a TP = 2 tune
    assert rc == 3 and "nvidia-smi lists 1: nothing built" in err and not built, err
    assert not (tmp_path / "work").exists()  # nor an empty work folder left behind


def test_without_nvidia_smi_the_driver_counts_or_the_runs_tell(tmp_path, monkeypatch):
    """No nvidia-smi: the CUDA driver's count decides before the build (none: exit 3, nothing built, in a second
    rather than after minutes of nvcc); where the driver cannot say either, the tuner builds and the runs tell."""
    built = []
    monkeypatch.setattr(tune_cli, "build_tree", lambda *a: built.append(a) or a[0] / "tpgemm")
    ok = FakeRunner()

    def no_smi(cmd, **kw):
        if cmd[0] == "nvidia-smi":
            raise FileNotFoundError(cmd[0])
        return ok(cmd, **kw)
    monkeypatch.setattr(tune_env, "driver_gpus", lambda: 0)
    rc, err, _ = run_tune(tmp_path, no_smi)
    assert rc == 3 and not built and "the CUDA driver counts 0: nothing built" in err, err
    monkeypatch.setattr(tune_env, "driver_gpus", lambda: None)
    rc, err, _ = run_tune(tmp_path, no_smi)
    assert rc == 0 and built and "neither nvidia-smi nor the CUDA driver can say" in err, err


def test_the_driver_count_on_this_machine_is_a_count(monkeypatch):
    """The real path (ctypes in a child process): an int (0 on a machine without the driver or a GPU) or None, never
    an exception; a child that prints no count, or cannot start, is None (the runs tell then)."""
    n = tune_env.driver_gpus()
    assert n is None or (isinstance(n, int) and n >= 0)
    monkeypatch.setattr(tune_env, "DRIVER_COUNT", "print('?')")
    assert tune_env.driver_gpus() is None
    monkeypatch.setattr(tune_env, "DRIVER_COUNT", "print(3)")
    assert tune_env.driver_gpus() == 3
    monkeypatch.setattr(tune_cli.sys, "executable", "/nonexistent/python3")
    assert tune_env.driver_gpus() is None


def test_verify_on_a_machine_without_gpus_keeps_the_candidate(tmp_path, monkeypatch):
    """The profile phase ran; the machine is gone when verifying: the winner must stay verifiable."""
    monkeypatch.setattr(tune_cli, "build_tree", lambda work, shapes, cands, runner, jobs: work / "tpgemm")
    ok = FakeRunner()

    def gone(cmd, **kw):
        if "--check" in cmd:
            return subprocess.CompletedProcess(cmd, 3, "", "tpgemm: this run needs 2 Hopper (sm_90) GPUs")
        return ok(cmd, **kw)

    rc, err, _ = run_tune(tmp_path, gone)
    assert rc == 3, err
    lines = (tmp_path / "work" / "state.jsonl").read_text().splitlines()
    assert lines and all(json.loads(line)["phase"] == "profile" for line in lines)  # no verify recorded
    rc, err, _ = run_tune(tmp_path, FakeRunner())  # the next run verifies and finishes
    assert rc == 0 and "4/4 winners" in err


def test_report_markdown_handles_missing_numbers():
    rows = [tune_report.Row("qkv", "1 x 2 x 3", "S", "d", 2.0, "w", 1.0, 50.0, 7),
            tune_report.Row("down", "1 x 2 x 3", "S", "", None, "", None, None, 0)]
    md = tune_report.markdown("t", rows)
    assert "| qkv | 1 x 2 x 3 | S | d | 2.0000 | w | 1.0000 | 50.0 | 2.000x | 7 |" in md
    assert "| down | 1 x 2 x 3 | S | - | - | (none passed) | - | - | - | 0 |" in md


def test_build_tree_writes_a_ninja_file_beside_the_main_build(tmp_path):
    runner = FakeRunner()
    cands = tune.enumerate_candidates("bf16", extra={})[:2]
    exe = tune_cli.build_tree(tmp_path / "w", SHAPES, cands, runner, 3)
    assert exe == tmp_path / "w" / "tpgemm"
    (cmd,) = runner.calls
    assert cmd[:3] == ["ninja", "-C", str(ROOT)] and cmd[-2:] == ["-j", "3"]
    top = (tmp_path / "w" / "build.ninja").read_text()
    assert "include build.ninja\n" in top and f"subninja {tmp_path}/w/generated/build.ninja" in top
    assert f"{tmp_path}/w/libtpgemm.a" in top and "build/cli/model.o" in top
    sub = (tmp_path / "w" / "generated" / "build.ninja").read_text()
    assert f"build {tmp_path}/w/libtpgemm.a: ar" in sub and f"{tmp_path}/w/obj/kernels/" in sub
    names = {c["name"] for c in tune.candidates_doc(SHAPES, cands)["configs"]}
    assert {tune.config_name(s, c) for s in SHAPES for c in cands} == names


def test_knobs_restrict_base_and_schema_fields_and_reject_unknown_values():
    space = tune.restrict(tune.knob_space(), ["tile=128x256x64", "cluster=1x1", "stages=4,auto", "consumers=2"])
    assert space["tile"] == ((128, 256, 64),) and space["cluster"] == ((1, 1),)
    assert space["stages"] == (4, None) and space["consumers"] == (2,)
    base = {f: space.pop(f) for f in ("tile", "stages", "consumers", "cluster")}
    cands = tune.enumerate_candidates("bf16", tiles=base["tile"], stages=base["stages"], extra={},
                                      consumers=base["consumers"], clusters=base["cluster"])
    assert cands and all(c.entry["tile"]["bn"] == 256 and c.entry["cluster"] == {"m": 1, "n": 1} for c in cands)
    for bad, words in (["tile=64x64x64"], "64x64x64"), (["cluster=4x1"], "4x1"), (["colour=red"], "not a tuner knob"):
        try:
            tune.restrict(tune.knob_space(), bad)
        except ValueError as e:
            assert words in str(e)
        else:
            raise AssertionError(f"{bad} accepted")


def test_a_knob_given_twice_keeps_the_values_of_both_and_one_without_values_says_so():
    """A review: `--knob tile=A --knob tile=B` kept B alone, silently; `--knob tile` said "no value not among..."."""
    twice = tune.restrict(tune.knob_space(), ["tile=128x128x64", "stages=4", "tile=128x256x64,128x128x64"])
    assert twice["tile"] == ((128, 128, 64), (128, 256, 64)) and twice["stages"] == (4,)
    assert twice == tune.restrict(tune.knob_space(), ["tile=128x128x64,128x256x64", "stages=4"])
    for bare in ("tile", "tile="):
        with pytest.raises(ValueError, match=r"--knob tile: no value given; tile takes one or more of: .*128x256x64"):
            tune.restrict(tune.knob_space(), [bare])


def test_default_entry_follows_kernel_tp1():
    """The tuner compares against the kernel a shape's default config runs at its K and TP (the rule of
    tpg_config_pick): the shipped reduce-scatter *_wide configs, preferred from per-stage K 10240, run the _rs
    kernel (TMA-loaded partials) at TP = 2 and the local one at TP = 1 (configs[].kernel_tp1); below 10240
    the ping-pong kernel."""
    doc = models.load(str(ROOT / "schedules.yaml"))
    rs = "ReduceScatter1D_TilingA_RotatingC"
    at2 = tune_cli._default_entry(doc, tune.Shape("", "", 16384, 8192, 28672, rs, 2, "bf16"))
    at1 = tune_cli._default_entry(doc, tune.Shape("", "", 16384, 8192, 14336, rs, 1, "bf16"))
    assert at2["name"] == "bf16_128x256x64_rs" and at2["tma_partials"] is True
    assert at1["name"] == "bf16_128x256x64" and not at1.get("tma_partials")
    short = tune_cli._default_entry(doc, tune.Shape("", "", 16384, 8192, 8192, rs, 2, "bf16"))
    assert short["name"] == "bf16_128x128x64_pp"


def test_default_search_leaves_out_opt_in_values_that_a_knob_can_name():
    """cooperative_n and f32 partials are not searched by default (docs/TUNING.md); --knob can still ask for them."""
    space = tune.knob_space()
    assert "cooperative_n" not in space["consumer_mode"] and "f32" not in space["partials"]
    assert "out" in space["partials"]
    picked = tune.restrict(space, ["consumer_mode=cooperative_n", "partials=out,f32"])
    assert picked["consumer_mode"] == ("cooperative_n",) and picked["partials"] == ("out", "f32")


def test_pull_partials_knob_profiles_reduce_scatter_both_ways(tmp_path, monkeypatch):
    """--knob pull_partials=false,true: every kernel also as a pulling config, on the reduce-scatter layers only;
    where pulling wins, the tuned choice says so and the generator's dispatch runs a pulling config."""
    monkeypatch.setattr(tune_cli, "build_tree", lambda work, shapes, cands, runner, jobs: (
        runner(["ninja"]), work / "tpgemm")[1])
    runner = PullFasterRunner()
    rc, err, cfg = run_tune(tmp_path, runner, "--knob", "pull_partials=false,true")
    assert rc == 0, err
    configs = [c[c.index("--config") + 1] for c in runner.calls if "--config" in c]
    pulled = [c for c in configs if "_pull_tp" in c]
    assert pulled and all(c.startswith("rs_") for c in pulled)
    profiled = [c[c.index("--config") + 1] for c in runner.calls if "--no-check" in c]
    ag = [c for c in profiled if c.startswith("ag_")]
    rs = [c for c in profiled if c.startswith("rs_")]
    assert len(rs) == 2 * len(ag)  # two reduce-scatter layers and two all-gather ones, each kernel twice for RS
    doc = yaml.safe_load((tmp_path / "tuned" / "llama3-70b_tp2.yaml").read_text())
    pulls = {t["layer"]: t.get("pull_partials", False) for t in doc["tuned"]}
    assert pulls == {"qkv": False, "attn_out": True, "gate_up": False, "down": True}
    p = plan.build(models.load(str(cfg)), "schedules.yaml")
    rows = {r.layer: p.configs[r.config_index] for r in p.dispatch if r.model == "llama3-70b" and r.tp == 2}
    assert {layer: c.pull_partials for layer, c in rows.items()} == pulls
    # the report compares each layer with its default (a pushing config), also where a pulling one won
    report = [line for line in (tmp_path / "work" / "report.md").read_text().splitlines()
              if line.startswith("| ") and not line.startswith("| GEMM ")]
    assert len(report) == 4 and all(line.split(" | ")[3] not in ("-", "") for line in report), report
    assert sum(line.split(" | ")[5].endswith("_pull") for line in report) == 2


def test_copy_engine_knob_with_the_pull_knob_makes_three_routes_and_the_fastest_wins(tmp_path, monkeypatch):
    """--knob copy_engine_partials=false,true with pull_partials=false,true: each kernel pushing, pulling and by copy
    engine on the reduce-scatter layers (all-gather ones push only); where the copy engine wins, the tuned choice and
    the dispatch's config carry copy_engine_partials and not pull_partials."""
    monkeypatch.setattr(tune_cli, "build_tree", lambda work, shapes, cands, runner, jobs: (
        runner(["ninja"]), work / "tpgemm")[1])
    runner = PullFasterRunner()
    runner.faster = {"_pull_tp": 0.25, "_ce_tp": 0.5}
    rc, err, cfg = run_tune(tmp_path, runner, "--knob", "pull_partials=false,true", "--knob",
                            "copy_engine_partials=false,true")
    assert rc == 0, err
    profiled = [c[c.index("--config") + 1] for c in runner.calls if "--no-check" in c]
    ag, rs = [c for c in profiled if c.startswith("ag_")], [c for c in profiled if c.startswith("rs_")]
    assert len(rs) == 3 * len(ag) and not any("_ce_tp" in c or "_pull_tp" in c for c in ag)
    assert sum("_ce_tp" in c for c in rs) == sum("_pull_tp" in c for c in rs) == len(ag)
    doc = yaml.safe_load((tmp_path / "tuned" / "llama3-70b_tp2.yaml").read_text())
    routes = {t["layer"]: (t.get("pull_partials", False), t.get("copy_engine_partials", False)) for t in doc["tuned"]}
    assert routes == {"qkv": (False, False), "attn_out": (False, True), "gate_up": (False, False),
                      "down": (False, True)}
    p = plan.build(models.load(str(cfg)), "schedules.yaml")
    rows = {r.layer: p.configs[r.config_index] for r in p.dispatch if r.model == "llama3-70b" and r.tp == 2}
    assert {layer: (c.pull_partials, c.copy_engine_partials) for layer, c in rows.items()} == routes


def test_a_copy_engine_default_is_compared_on_its_own_route(tmp_path, monkeypatch):
    """A family that carries copy_engine_partials without by_name is a default (schedules.yaml configs[].by_name):
    the tuner then profiles every candidate on that route too, and says so; the report's default for that layer is
    the default's kernel carried by copy engine, not the same kernel pushing."""
    monkeypatch.setattr(tune_cli, "build_tree", lambda work, shapes, cands, runner, jobs: (
        runner(["ninja"]), work / "tpgemm")[1])
    cfg = tuned_repo(tmp_path)
    with_route(cfg, "rs_tila_bf16_wide", "ce")
    doc = models.load(str(cfg))
    down = tune.Shape("llama3-70b", "down", 16384, 8192, 28672, "ReduceScatter1D_TilingA_RotatingC", 2, "bf16")
    assert models.default_config(doc, down.schedule, 2, "bf16", down.k, down.m, down.n) == "rs_tila_bf16_wide_tp2"
    assert tune_cli._default_route(doc, down) == "ce"
    args = ["--model", "llama3-70b", "--tp", "2", "--tokens", "16384", "--config", str(cfg), "--work",
            str(tmp_path / "work")]
    note = "the default config of down moves its partials by copy_engine_partials: every candidate is profiled"
    runs = {}
    for extra in ([], ["--knob", "copy_engine_partials=false,true"]):  # the same search, asked for or not
        runner, err = PullFasterRunner(), io.StringIO()
        runner.faster = {"_ce_tp": 0.5}
        assert tune_cli.main(args + extra, runner=runner, stream=err, clock=iter(range(10**6)).__next__) == 0
        assert (note in err.getvalue()) == (not extra), err.getvalue()
        report = {line.split(" | ")[0][2:]: line.split(" | ") for line in
                  (tmp_path / "work" / "report.md").read_text().splitlines() if line.startswith("| ")}
        assert report["down"][3].endswith("_ce") and not report["attn_out"][3].endswith("_ce"), report
        runs[bool(extra)] = sorted(c[c.index("--config") + 1] for c in runner.calls if "--no-check" in c)
        shutil.rmtree(tmp_path / "work")  # the second search profiles everything again
    assert runs[False] and runs[False] == runs[True]
    assert any("_ce_tp" in c for c in runs[True]) and not any(c.startswith("ag_") and "_ce_tp" in c for c in runs[True])


@pytest.mark.parametrize("extra, message", [
    ("schedule: AllGather1D_TilingCD_RotatingA, tp: 2, kernel: bf16_128x128x64_pp, copy_engine_partials: true",
     "copy_engine_partials for AllGather1D_TilingCD_RotatingA at tp 2, which moves no partials"),
    ("schedule: ReduceScatter1D_TilingA_RotatingC, tp: 1, kernel: bf16_128x128x64_pp, copy_engine_partials: true",
     "copy_engine_partials for ReduceScatter1D_TilingA_RotatingC at tp 1, which moves no partials"),
    ("schedule: ReduceScatter1D_TilingA_RotatingC, tp: 2, kernel: bf16_128x128x64_pp, copy_engine_partials: true, "
     "pull_partials: true", "copy_engine_partials with pull_partials"),
])
def test_copy_engine_partials_in_a_tuned_choice_that_moves_none_or_pulls_is_refused(tmp_path, extra, message):
    text = (ROOT / "schedules.yaml").read_text() + (
        f"tuned:\n  - {{shape: {{m: 4096, n: 4096, k: 4096}}, dtype: bf16, {extra}}}\n")
    (tmp_path / "schedules.yaml").write_text(text)
    with pytest.raises(config.ConfigError, match=message):
        models.load(str(tmp_path / "schedules.yaml"))


def test_copy_engine_knob_keeps_the_push_and_its_candidates_pass_the_checks():
    """copy_engine_partials=true alone is refused like the pull knob; with false,true each kernel is a pushing and a
    copy-engine candidate, job keys apart (a state of pushed runs leaves the copy-engine ones pending), and the
    candidate document - the copy-engine config without TP = 1 - passes the generator's checks."""
    with pytest.raises(ValueError, match="pushed partials \\(false\\) must stay"):
        tune.restrict(tune.knob_space(), ["copy_engine_partials=true"])
    space = tune.restrict(tune.knob_space(), ["copy_engine_partials=false,true"])
    assert space["copy_engine_partials"] == (False, True) and space["pull_partials"] == (False,)
    cands = tune.enumerate_candidates("bf16", tiles=((128, 256, 64),), stages=(4,), extra={}, consumers=(2,),
                                      clusters=((1, 1),), copy_engine=space["copy_engine_partials"])
    assert [(c.route, c.name.endswith("_ce")) for c in cands] == [("push", False), ("ce", True)]
    state = {(tune.job_key(s, cands[0]), "profile"): {"avg_ms": 1.0, "exit_code": 0} for s in SHAPES}
    assert tune.pending(SHAPES, cands, state) == [(SHAPES[1], cands[1])]
    # the keys of state files written before: a pushing job's has no route, a pulling one's ends in |pull
    pulling = tune.enumerate_candidates("bf16", tiles=((128, 256, 64),), stages=(4,), extra={}, consumers=(2,),
                                        clusters=((1, 1),), pulls=(False, True), copy_engine=(False, True))
    assert [tune.job_key(SHAPES[1], c)[len(SHAPES[1].key):] for c in pulling] == [
        f"|{cands[0].kernel}", f"|{cands[0].kernel}|pull", f"|{cands[0].kernel}|ce"]
    rs = "ReduceScatter1D_TilingA_RotatingC"
    doc = tune.candidates_doc([tune.Shape("", "", 256, 128, 512, rs, tp, "bf16") for tp in (1, 2)], cands)
    assert [(c["tp"], c.get("copy_engine_partials", False)) for c in doc["configs"]] == [([1, 2], False), ([2], True)]
    built = plan.build(config.validate(config.compose(yaml.safe_dump(doc), "c.yaml"), "c.yaml"), "c.yaml")
    assert [c.copy_engine_partials for c in built.configs] == [True, False, False]


def test_pull_partials_in_a_tuned_all_gather_choice_is_refused(tmp_path):
    text = (ROOT / "schedules.yaml").read_text() + (
        "tuned:\n  - {shape: {m: 4096, n: 4096, k: 4096}, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, "
        "tp: 2, kernel: bf16_128x128x64_pp, pull_partials: true}\n")
    (tmp_path / "schedules.yaml").write_text(text)
    with pytest.raises(config.ConfigError, match="pull_partials for AllGather1D_TilingCD_RotatingA at tp 2, which "
                                                   "moves no partials"):
        models.load(str(tmp_path / "schedules.yaml"))


def test_pull_partials_knob_keeps_the_push_first_and_each_value_once():
    """The pushing candidate is every layer's baseline (all-gather layers have nothing else): a knob without false
    is refused; true,false still puts each kernel's pushing twin first (a tie goes to the push); a repeated value
    is one candidate set, not a config listed twice."""
    with pytest.raises(ValueError, match="pushed partials \\(false\\) must stay"):
        tune.restrict(tune.knob_space(), ["pull_partials=true"])
    space = tune.restrict(tune.knob_space(), ["pull_partials=true,false,true", "tile=128x256x64,128x256x64"])
    assert space["pull_partials"] == (True, False) and space["tile"] == ((128, 256, 64),)
    cands = tune.enumerate_candidates("bf16", tiles=space["tile"], stages=(4,), extra={}, consumers=(2,),
                                      clusters=((1, 1),), pulls=space["pull_partials"])
    assert [c.pull for c in cands] == [False, True]
    s = SHAPES[1]  # reduce-scatter
    state = {(tune.job_key(s, c), "profile"): {"avg_ms": 1.0, "exit_code": 0} for c in cands}
    assert tune.ranked(s, cands, state)[0][1].pull is False
    doc = tune.candidates_doc(SHAPES, cands)
    assert len(doc["kernels"]) == 1 and [c.get("pull_partials", False) for c in doc["configs"]] == [False, False, True]


def test_state_from_before_the_pull_knob_counts_for_the_pushing_candidates():
    """A state file written before pull_partials existed keys a job by shape and kernel only: those records are
    the pushing candidates' (nothing is profiled again), the pulling ones stay pending."""
    cands = tune.enumerate_candidates("bf16", tiles=((128, 256, 64),), stages=(4,), extra={}, consumers=(2,),
                                      clusters=((1, 1),), pulls=(False, True))
    old = [json.dumps({"key": f"{s.key}|{cands[0].kernel}", "phase": "profile", "avg_ms": 1.0, "exit_code": 0})
           for s in SHAPES]
    todo = tune.pending(SHAPES, cands, tune.load_state(old))
    assert todo == [(SHAPES[1], cands[1])]  # the reduce-scatter shape's pulling twin; all-gather has none


def test_candidates_doc_merges_tps_for_pushing_and_pulling_configs():
    """One schedule at several TPs is one config entry per candidate (tp lists merged); a pulling config leaves out
    TP = 1, where nothing moves, and the document passes the generator's checks."""
    rs = "ReduceScatter1D_TilingA_RotatingC"
    shapes = [tune.Shape("", "", 256, 128, 512, rs, tp, "bf16") for tp in (1, 2, 4)]
    cands = tune.enumerate_candidates("bf16", tiles=((128, 256, 64),), stages=(4,), extra={}, consumers=(2,),
                                      clusters=((1, 1),), pulls=(False, True))
    doc = tune.candidates_doc(shapes, cands)
    assert [(c["tp"], c.get("pull_partials", False)) for c in doc["configs"]] == [([1, 2, 4], False), ([2, 4], True)]
    plan.build(config.validate(config.compose(yaml.safe_dump(doc), "c.yaml"), "c.yaml"), "c.yaml")


def test_the_few_token_tiles_are_searched_when_named_and_build(tmp_path):
    """64x128 and 128x160 (the pp64 and w160 families' tiles) only by `--knob tile=`: the default search keeps its
    four tiles; named, they make candidates whose schedules file the generator plans (128x160 with its 32-column
    store unit)."""
    assert (64, 128, 64) not in tune.knob_space()["tile"]
    space = tune.restrict(tune.knob_space(), ["tile=64x128x64,128x160x64"])
    cands = tune.enumerate_candidates("bf16", tiles=space["tile"], stages=(4,), extra={}, clusters=((1, 1),))
    tiles = {(c.entry["tile"]["bm"], c.entry["tile"]["bn"]) for c in cands}
    assert tiles == {(64, 128), (128, 160)}, tiles
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(tune.candidates_doc(SHAPES, cands), sort_keys=False))
    p = plan.build(models.load(str(tmp_path / "c.yaml")), "c.yaml")  # as the tuner's build_tree does
    assert {(k.bm, k.bn) for k in p.kernels} == {(64, 128), (128, 160)}
