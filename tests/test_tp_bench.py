"""Pure parts of the TP benchmark (bench/tp_records.py, bench/report_tp.py): no torch, no GPU."""
import importlib.util
import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import report_tp  # noqa: E402
import tp_records as R  # noqa: E402

REQUIRED = ["name", "op", "M", "N", "K", "tp", "dtype", "tpgemm_tflops", "local_tflops", "cublas_local_tflops",
            "torch_async_tp_tflops", "nccl_cublas_tflops", "tpgemm_joules", "torch_async_tp_joules", "check"]


def figures(scale=1.0):
    return {v: {"sustained_s": 0.01 * scale * (i + 1), "burst_s": 0.008 * scale, "joules": 5.0 + i}
            for i, v in enumerate(R.VARIANTS)}


def test_tflops_geomean_median():
    assert R.tflops(1000, 1000, 1000, 2, 1e-3) == pytest.approx(1.0)
    assert R.tflops(1, 1, 1, 1, None) is None
    assert R.geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert R.geomean([None, 0.0]) is None
    assert R.median([3, 1, 2]) == 2 and R.median([1, 2, 3, 4]) == 2.5 and R.median([]) is None


def test_summarize_takes_medians_per_call():
    s = [{"seconds": 1.0, "calls": 10, "joules": 100.0}, {"seconds": 1.2, "calls": 10, "joules": 120.0},
         {"seconds": 3.0, "calls": 10, "joules": None}]
    per_call, joules = R.summarize(s)
    assert per_call == pytest.approx(0.12) and joules == pytest.approx(11.0)


def test_energy_method_names_how_every_window_measured_its_joules():
    fit, delta = {"joules": 1.0, "joules_fit": 1.0}, {"joules": 1.0, "joules_fit": None}
    assert R.energy_method([fit, fit]) == "fit" and R.energy_method([delta]) == "delta"
    assert R.energy_method([fit, delta]) == "mixed"
    assert R.energy_method([{"joules": None}]) is None and R.energy_method([]) is None and R.energy_method(None) is None


def test_record_has_the_required_fields_in_order():
    rec = R.make_record("8B-qkv", "AG", 8192, 6144, 4096, 2, "bf16", figures(), 3e-3)
    assert list(rec)[:len(REQUIRED)] == REQUIRED
    assert rec["check"] == "passed" and rec["schedule"] == R.SCHEDULES["AG"]
    assert rec["tpgemm_tflops"] == pytest.approx(2.0 * 8192 * 6144 * 4096 / 2 / 0.01 / 1e12)
    assert rec["tpgemm_joules"] == 5.0 and rec["local_joules"] == 6.0 and "tpgemm_burst_tflops" in rec
    json.dumps(rec)  # serializable


def test_check_and_missing_variants():
    assert R.check_status(0.05) == "failed" and R.check_status(None) == "not run"
    # a fused call that failed (a timeout, say) fails the check; without an error there is nothing to judge
    rec = R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", {"tpgemm": None}, None, {"tpgemm": "boom"})
    assert rec["tpgemm_tflops"] is None and rec["check"] == "failed" and rec["errors"] == {"tpgemm": "boom"}
    rec = R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", {}, None, {"nccl_cublas": "boom"})
    assert rec["check"] == "not run"


def test_check_holds_the_elementwise_bound_too():
    """One wrong tile hardly moves the norm-wise error (0.006 for one 128 x 256 tile of 405B-fc1's D shard) but
    moves max|d - ref| / max|ref| to O(1): that bound fails it; a NaN fails as well."""
    assert R.check_status(6e-3, 0.8) == "failed"
    assert R.check_status(6e-3, 1e-2) == "passed" and R.check_status(6e-3, None) == "passed"
    assert R.check_status(1e-3, float("nan")) == "failed"
    rec = R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", figures(), 3e-3, max_err=0.9)
    assert rec["check"] == "failed" and rec["max_err"] == 0.9 and rec["rel_err"] == 3e-3



def test_an_error_at_each_bound_passes_and_just_over_it_fails():
    at = (R.MAX_REL_ERR, R.MAX_ELEM_ERR)
    assert R.check_status(*at, elem_err=R.MAX_PER_ELEMENT_ERR) == "passed"
    over = lambda x: x * 1.000001  # noqa: E731
    assert R.check_status(over(at[0]), at[1], elem_err=R.MAX_PER_ELEMENT_ERR) == "failed"
    assert R.check_status(at[0], over(at[1]), elem_err=R.MAX_PER_ELEMENT_ERR) == "failed"
    assert R.check_status(*at, elem_err=over(R.MAX_PER_ELEMENT_ERR)) == "failed"

def test_estimate_fits_the_budget():
    est = R.estimate_seconds(len(R.SHAPES), len(R.VARIANTS), 2, 1.0, 0.3, 6.0)
    assert 80 < est < 8 * 60 - 60  # leaves a minute for process start, NCCL and symmetric memory setup


def test_estimate_counts_the_heat_window_and_every_round_of_every_variant():
    """Per shape: a burst per variant (its idle plus 0.1 s), one heat window and rounds x variants sustained windows
    (window plus 0.15 s each), plus the setup; the heat window is what tp_windows.time_variants runs before round 0."""
    assert R.estimate_seconds(1, 1, 1, 1.0, 0.0, 0.0) == pytest.approx(0.1 + 2 * 1.15)
    assert R.estimate_seconds(2, 3, 2, 1.0, 0.5, 4.0) == pytest.approx(2 * (3 * 0.6 + 7 * 1.15 + 4.0))


def test_render_and_section_replacement(tmp_path):
    recs = [R.make_record(n, op, m, nn, k, 2, "bf16", figures(), 1e-3) for n, op, m, nn, k in R.SHAPES[:2]]
    body = report_tp.render(recs, 2)
    assert body.count("\n| ") == 3 and "Geomean tpgemm / async TP" in body and "2/2" in body
    text = report_tp.replace_section(report_tp.benchmarks_md.HEADER, 2, body)
    assert text.startswith("# Benchmarks") and "<!-- tp2:begin -->" in text
    again = report_tp.replace_section(text + "\ntail\n", 2, "new\n")
    assert "new\n<!-- tp2:end -->" in again and body not in again and again.endswith("tail\n")
    src = tmp_path / "tp2.json"
    src.write_text(json.dumps(recs))
    bench = tmp_path / "BENCHMARKS.md"
    report_tp.main([str(src), "--benchmarks", str(bench)])
    assert "<!-- tp2:end -->" in bench.read_text()


@pytest.mark.parametrize("change, said", [
    (lambda r: r.pop("tp"), "record 0 (405B-fc1) lacks tp"),  # a local-GEMM file, say: it was a KeyError
    (lambda r: r.update(tpgemm_tflops="681"), "tpgemm_tflops = '681' is not a number"),  # it was a ValueError
])
def test_records_report_tp_cannot_render_are_refused_by_name(tmp_path, capsys, change, said):
    recs = json.loads((ROOT / "bench" / "results" / "tp2.json").read_text())
    change(recs[0])
    src = tmp_path / "tp2.json"
    src.write_text(json.dumps(recs))
    with pytest.raises(SystemExit) as e:
        report_tp.main([str(src), "--benchmarks", str(tmp_path / "BENCHMARKS.md")])
    assert e.value.code == 2 and said in capsys.readouterr().err
    assert not (tmp_path / "BENCHMARKS.md").exists()


def test_a_checked_record_without_a_figure_is_not_called_unchecked():
    recs = json.loads((ROOT / "bench" / "results" / "tp2.json").read_text())
    recs[0]["tpgemm_tflops"] = None
    text = "\n".join(report_tp.acceptance_lines(recs, 2))
    assert "405B-fc1 - (not timed)" in text and "(check not passed)" not in text


def test_bench_script_imports():
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed here; bench/tp_bench.py runs on the GPU machine (bench/run_tp.sh)")
    import tp_bench
    tp_bench.load_torch()  # torch and the modules that use it load only once the options are accepted


def test_bench_turns_expandable_segments_off_under_both_names(tmp_path):
    """tpgemm exports its tensors' allocations by legacy CUDA IPC, which cuMemCreate (expandable) segments and the
    cudaMallocAsync backend cannot: the script turns them off before torch loads, under either name of the allocator's
    settings, keeping both names' other options (by key, the newer name's last).
    Run in a subprocess with a stand-in torch (nothing of it is used at import)."""
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "distributed.py").write_text("")
    code = ("import os, sys; sys.path.insert(0, sys.argv[1]); import tp_bench; "
            "print(os.environ['PYTORCH_CUDA_ALLOC_CONF']); print(os.environ['PYTORCH_ALLOC_CONF'])")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{tmp_path}:{ROOT / 'bench'}",
           "PYTORCH_CUDA_ALLOC_CONF": "garbage_collection_threshold:0.8, max_split_size_mb:32,backend:cudaMallocAsync",
           "PYTORCH_ALLOC_CONF": "expandable_segments:True,max_split_size_mb:64"}
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "bench")], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    merged = "garbage_collection_threshold:0.8,max_split_size_mb:64,expandable_segments:False"  # newer name's last
    assert out.stdout.split() == [merged, merged]  # whichever name torch reads; no pool backend (no legacy IPC)


def test_acceptance_lines_name_the_seed_problem_and_the_local_ratios():
    recs = [R.make_record(n, op, m, nn, k, 4, "bf16", figures(), 1e-3) for n, op, m, nn, k in R.SHAPES]
    body = report_tp.render(recs, 4)
    seed = recs[0]  # 405B-fc1 is the seed's default problem
    want = seed["tpgemm_tflops"] / seed["cublas_local_tflops"]
    assert f"= {want:.3f} x the cuBLAS local GEMM" in body and "the seed reported 847" in body
    big = [r for r in recs if r["M"] == 16384]
    assert body.count(" 2.000,") + body.count(" 2.000.") == len(big)  # fused 0.01 s, local 0.02 s a call
    small = report_tp.render(recs[3:4], 2)  # 8B-qkv only: neither line
    assert "Seed default problem" not in small and "M = 16384 shapes" not in small
    for r in (recs[0], recs[4]):  # the seed problem and 405B-fc2 failed their checks: no figure of either
        r["check"] = "failed"
    body = report_tp.render(recs, 4)
    assert "Seed default problem 16384 x 106496 x 16384: no figure (its check: failed)." in body
    assert "405B-fc1 - (check not passed)" in body and "405B-fc2 - (check not passed)" in body
    assert body.count(" 2.000,") + body.count(" 2.000.") == len(big) - 2


def test_median_or_none_skips_missing_clocks():
    """Windows without an NVML clock (no NVML, or a window too short to sample) do not count."""
    assert R.median_or_none([1500.0, None, 1400.0, 1600.0]) == 1500.0
    assert R.median_or_none([None, None]) is None
    assert R.median_or_none([]) is None


def test_alt_summary_names_families_and_checks_each():
    """--alt-config variants: one entry per family with its own TFLOP/s, clock median and check."""
    w = [{"seconds": 1.0, "calls": 10, "joules": 7.0, "sm_mhz": 1400.0},
         {"seconds": 1.2, "calls": 10, "joules": 7.0, "sm_mhz": 1300.0}]
    figures = {"alt:x_a": {"sustained_s": 0.1, "burst_s": 0.05, "windows": w}}
    out = R.alt_summary(figures, {"alt:x_a": 1e-3, "alt:x_b": 0.5}, 1000, 1000, 1000, 2)
    assert set(out) == {"x_a", "x_b"}
    assert out["x_a"]["tflops"] == pytest.approx(1e9 / 0.1 / 1e12) and out["x_a"]["sm_mhz"] == 1350.0
    assert out["x_a"]["check"] == "passed" and out["x_b"]["check"] == "failed" and out["x_b"]["tflops"] is None
    # the elementwise bound, the config each ran, and a call that failed (no error figure, an error recorded)
    out = R.alt_summary(figures, {"alt:x_a": 1e-3, "alt:x_c": None}, 1000, 1000, 1000, 2,
                        max_errs={"alt:x_a": 0.5}, configs={"alt:x_a": "x_a_tp2"}, errors={"alt:x_c": "timeout"},
                        elem_errs={"alt:x_a": 0.7})
    assert out["x_a"]["check"] == "failed" and out["x_a"]["config"] == "x_a_tp2" and out["x_a"]["max_err"] == 0.5
    assert out["x_a"]["elem_err"] == 0.7 and out["x_c"]["elem_err"] is None
    assert out["x_c"]["check"] == "failed" and out["x_c"]["config"] is None
    out = R.alt_summary(figures, {"alt:x_a": 1e-3}, 1000, 1000, 1000, 2, max_errs={"alt:x_a": 1e-3},
                        elem_errs={"alt:x_a": 0.06})
    assert out["x_a"]["check"] == "failed"


def test_diag_summary_has_energy_and_no_check():
    """--link-copies: the diagnostic variant reports TFLOP/s, clock and joules, and no check (it has no output
    of its own); variants that are not diagnostics are left out."""
    w = [{"seconds": 1.0, "calls": 10, "joules": 7.0, "sm_mhz": 1400.0}]
    figures = {"diag:local_link": {"sustained_s": 0.1, "burst_s": 0.05, "joules": 0.7, "windows": w},
               "local": {"sustained_s": 0.09, "burst_s": 0.05, "joules": 0.6, "windows": w}}
    out = R.diag_summary(figures, 1000, 1000, 1000, 2)
    assert set(out) == {"local_link"}
    assert out["local_link"]["joules"] == 0.7 and out["local_link"]["sm_mhz"] == 1400.0
    assert out["local_link"]["tflops"] == pytest.approx(1e9 / 0.1 / 1e12) and "check" not in out["local_link"]


def report_beside_the_bf16_table(tmp_path, name, recs):
    """BENCHMARKS.md after report_tp renders recs (as <name>.json) into a file that holds the bf16 TP = 2 table."""
    src = tmp_path / f"{name}.json"
    src.write_text(json.dumps(recs))
    bench = tmp_path / "BENCHMARKS.md"
    bench.write_text("# Benchmarks\n\n<!-- tp2:begin -->\nthe bf16 table\n<!-- tp2:end -->\n")
    report_tp.main([str(src), "--benchmarks", str(bench)])
    return bench.read_text()


def test_non_bf16_runs_keep_their_own_files_and_section(tmp_path):
    """An fp16 or e4m3 run writes tp<N>_<dtype>.json and its own BENCHMARKS.md section: the bf16 table stays."""
    assert R.result_stem(2, "bf16") == "tp2" and R.result_stem(8, "e4m3") == "tp8_e4m3"
    recs = [R.make_record(n, op, m, nn, k, 2, "e4m3", figures(), 1e-3) for n, op, m, nn, k in R.SHAPES]
    text = report_beside_the_bf16_table(tmp_path, "tp2_e4m3", recs)
    assert "the bf16 table" in text and "<!-- tp2_e4m3:begin -->" in text and "TP=2, e4m3" in text


def test_token_runs_rename_the_shapes_and_keep_their_own_files_and_section(tmp_path):
    """--tokens M: every shape at global M = tokens, named <shape>-m<M>, in tp<N>_m<M>.json and a section of its
    own (the issues' tp<N> table stays)."""
    shapes = R.shapes_at_tokens(R.SHAPES, 2048)
    assert [s[0] for s in shapes][:2] == ["405B-fc1-m2048", "70B-fc1-m2048"]
    assert all(s[2] == 2048 for s in shapes) and [s[3:] for s in shapes] == [s[3:] for s in R.SHAPES]
    assert R.shapes_at_tokens(R.SHAPES, 0) == R.SHAPES
    assert R.result_stem(2, "bf16", tokens=2048) == "tp2_m2048"
    assert R.result_stem(4, "e4m3", True, 512) == "tp4_e4m3_m512_shared"
    recs = [dict(R.make_record(n, op, m, nn, k, 2, "bf16", figures(), 1e-3), tokens=2048) for n, op, m, nn, k in shapes]
    text = report_beside_the_bf16_table(tmp_path, "tp2_m2048", recs)
    assert "the bf16 table" in text and "<!-- tp2_m2048:begin -->" in text and "TP=2, 2048 tokens" in text
    assert "M = 16384 shapes" not in text.split("<!-- tp2_m2048:begin -->")[1]


def test_e4m3_promoted_runs_each_schedules_promoted_family():
    """--dtype e4m3_promoted: the library looks configs up as e4m3, and each schedule runs its fp8_promote family by
    name (tpg_config_pick never picks one), which schedules.yaml must ship at TP = 2 / 4 / 8 and, for the
    benchmark's default schedules, at TP = 1 (the local GEMM), on promoting e4m3 kernels; the other dtypes keep the
    schedule's default."""
    import yaml
    assert R.lib_dtype("e4m3_promoted") == "e4m3" and R.lib_dtype("bf16") == "bf16" and R.lib_dtype("e4m3") == "e4m3"
    assert R.default_family("bf16", R.SCHEDULES["AG"]) is None and R.default_family("e4m3", R.SCHEDULES["RS"]) is None
    assert R.cublas_label("e4m3_promoted") == R.cublas_label("e4m3") != R.cublas_label("bf16")
    assert R.result_stem(2, "e4m3_promoted") == "tp2_e4m3_promoted"
    doc = yaml.safe_load((ROOT / "schedules.yaml").read_text())
    kernels = {k["name"]: k for k in doc["kernels"]}
    configs = {c["name"]: c for c in doc["configs"]}
    assert set(R.SCHEDULES.values()) <= set(R.PROMOTED_FAMILIES)
    for schedule, family in R.PROMOTED_FAMILIES.items():
        assert R.default_family("e4m3_promoted", schedule) == family
        c = configs[family]
        assert c["schedule"] == schedule and {2, 4, 8} <= set(c["tp"])
        assert 1 in c["tp"] or schedule not in R.SCHEDULES.values(), family
        for kernel in (c["kernel"], c.get("kernel_tp1", c["kernel"])):
            assert kernels[kernel]["dtype"] == "e4m3" and kernels[kernel].get("fp8_promote", 0) > 0, (family, kernel)
        # fused fp8 reduce-scatter loads its partials by TMA (its epilogue is twice the share of a 16-bit one)
        assert kernels[c["kernel"]].get("tma_partials", False) == schedule.startswith("ReduceScatter"), family


def test_experiments_reach_the_table():
    """--alt-* and --link-copies variants get their own table (variant, config, TFLOP/s, ratios to the shipped
    fused call and to the local GEMM, clock, joules, check) below the main one."""
    recs = [R.make_record(n, op, m, nn, k, 2, "bf16", figures(), 1e-3) for n, op, m, nn, k in R.SHAPES[4:6]]
    fused = recs[0]["tpgemm_tflops"]
    recs[0]["alt"] = {"pull_partials": {"tflops": 1.1 * fused, "burst_tflops": None, "sm_mhz": 1400.0,
                                        "joules": 5.5, "check": "passed", "config": "rs_tila_bf16_wide_pull_tp2"}}
    recs[1]["diag"] = {"local_link": {"tflops": 1.0, "burst_tflops": None, "sm_mhz": None, "joules": None}}
    body = report_tp.render(recs, 2)
    assert "Experiments" in body
    row = next(line for line in body.splitlines() if "alt:pull_partials" in line)
    assert "rs_tila_bf16_wide_pull_tp2" in row and "| 1.100 |" in row and "| passed |" in row
    assert any("diag:local_link" in line and line.endswith("| – |") for line in body.splitlines())
    plain = R.make_record("405B-fc1", "AG", 16384, 106496, 16384, 2, "bf16", figures(), 1e-3)
    assert "Experiments" not in report_tp.render([plain], 2)


def test_report_refuses_a_run_without_records(tmp_path):
    """A run whose --only named no known shape has no records: no "tp0" section is written."""
    src = tmp_path / "tp2.json"
    src.write_text("[]")
    bench = tmp_path / "BENCHMARKS.md"
    with pytest.raises(SystemExit, match="no records"):
        report_tp.main([str(src), "--benchmarks", str(bench)])
    assert not bench.exists()


def test_shared_device_smoke_runs_keep_out_of_the_results(tmp_path, capsys):
    """A --share-device run (every rank on one GPU) has its own files and leaves BENCHMARKS.md and the plot alone."""
    assert R.result_stem(2, "bf16", shared=True) == "tp2_shared" and R.result_stem(4, "e4m3", True) == "tp4_e4m3_shared"
    recs = [R.make_record(n, op, m, nn, k, 2, "bf16", figures(), 1e-3) for n, op, m, nn, k in R.SHAPES[:2]]
    for r in recs:
        r["shared_device"] = True
    src = tmp_path / "tp2_shared.json"
    src.write_text(json.dumps(recs))
    bench = tmp_path / "BENCHMARKS.md"
    bench.write_text("# Benchmarks\n")
    report_tp.main([str(src), "--benchmarks", str(bench)])
    assert bench.read_text() == "# Benchmarks\n" and not src.with_suffix(".png").exists()
    assert "not a measurement" in capsys.readouterr().out


def test_rank_errors_are_named_and_a_shared_text_is_said_once():
    same = "not run with --share-device"
    merged = R.merge_rank_errors([{"torch_async_tp": same, "tpgemm": "failed on another rank"},
                                  {"torch_async_tp": same, "tpgemm": "RuntimeError('timeout')"},
                                  {"torch_async_tp": same}])
    assert merged == {"torch_async_tp": f"every rank: {same}", "tpgemm": "rank 1: RuntimeError('timeout')"}
    assert R.merge_rank_errors([{"x": "a"}, {"x": "b"}]) == {"x": "rank 0: a; rank 1: b"}
    assert R.merge_rank_errors([{"x": "failed on another rank"}, None]) == {"x": "failed on another rank"}
    # a RankFailure's text (tp_windows: the ranks whose own calls ran) is an echo too, not that rank's own failure
    echo = "RankFailure('failed on another rank')"
    merged = R.merge_rank_errors([{"x": echo}, {"x": "RuntimeError('timeout')"}])
    assert merged == {"x": "rank 1: RuntimeError('timeout')"}


def test_a_shared_run_of_failed_setups_keeps_out_of_the_results_by_its_name(tmp_path):
    """A --share-device file whose records lack the flag (older runs) is still recognised by its name."""
    recs = [R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", {}, None, {"setup": "RuntimeError('x')"})]
    src = tmp_path / "tp2_shared.json"
    src.write_text(json.dumps(recs))
    bench = tmp_path / "BENCHMARKS.md"
    bench.write_text("# Benchmarks\n")
    report_tp.main([str(src), "--benchmarks", str(bench)])
    assert bench.read_text() == "# Benchmarks\n"


def test_tagged_runs_keep_their_own_files_and_section(tmp_path):
    """--tag (and NCCL_P2P_DISABLE=1 without one: NCCL's bytes through host memory) names an experiment's files and
    section, so it never replaces the standard table; its records say which NCCL_* variables it ran under."""
    assert R.result_stem(2, "bf16", tag="p2p_off") == "tp2_p2p_off"
    assert R.result_stem(2, "e4m3", True, 512, "x") == "tp2_e4m3_m512_x_shared"
    assert R.run_tag("", {"NCCL_P2P_DISABLE": "1"}) == "p2p_off"
    assert R.run_tag("", {"NCCL_P2P_DISABLE": "0"}) == R.run_tag("", {}) == ""
    for off in ("false", " No ", ""):  # NCCL's own spellings of off keep the NVLink table's name
        assert R.run_tag("", {"NCCL_P2P_DISABLE": off}) == "", off
    assert R.run_tag("", {"NCCL_P2P_DISABLE": "true"}) == "p2p_off"
    assert R.run_tag("mine", {"NCCL_P2P_DISABLE": "1"}) == "mine"
    assert R.nccl_environment({"NCCL_P2P_DISABLE": "1", "PATH": "/bin", "NCCL_NVLS_ENABLE": "0"}) == {
        "NCCL_NVLS_ENABLE": "0", "NCCL_P2P_DISABLE": "1"}
    recs = [dict(R.make_record(n, op, m, nn, k, 2, "bf16", figures(), 1e-3), tag="p2p_off")
            for n, op, m, nn, k in R.SHAPES]
    text = report_beside_the_bf16_table(tmp_path, "tp2_p2p_off", recs)
    assert "the bf16 table" in text and "<!-- tp2_p2p_off:begin -->" in text and "TP=2, p2p_off" in text


def test_sustained_windows_last_their_seconds_for_short_calls():
    """A window holds the calls that last it at the burst figure (no 2000-call cap: short calls ran 0.2-0.9 s
    "1 s" windows), bounded for a bogus figure; the table's header gives the shortest window measured."""
    assert R.window_calls(1.0, 20e-6) == 50_000 and R.window_calls(1.0, 0.3) == 4
    assert R.window_calls(1.0, 0.0) == R.MAX_WINDOW_CALLS and R.window_calls(0.0, 1.0) == 1
    recs = [R.make_record(n, op, m, nn, k, 2, "bf16", figures(), 1e-3) for n, op, m, nn, k in R.SHAPES[:2]]
    recs[0]["windows"] = {"tpgemm": [{"seconds": 1.02, "calls": 10}], "local": [{"seconds": 0.97, "calls": 9}]}
    recs[1]["windows"] = {"tpgemm": [{"seconds": 1.5, "calls": 4}]}
    assert report_tp.shortest_window(recs) == 0.97
    assert "over windows of ≥ 0.97 s" in report_tp.render(recs, 2)
    assert "over sustained windows" in report_tp.render([dict(recs[1], windows={})], 2)


def test_report_tp_refuses_unreadable_input_without_touching_benchmarks(tmp_path):
    bench = tmp_path / "BENCHMARKS.md"
    bench.write_text("# Benchmarks\n")
    for content in (None, "{not json", '{"a": 1}'):
        path = tmp_path / "tp2.json"
        if content is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(content)
        with pytest.raises(SystemExit) as e:
            report_tp.main([str(path), "--benchmarks", str(bench)])
        assert e.value.code == 2, content
    assert bench.read_text() == "# Benchmarks\n"


def test_the_geomeans_leave_out_failed_checks_and_say_how_many_shapes_they_cover():
    """A shape whose output failed its check (fast, often: skipped work) or that lacks a baseline figure must not
    move a geomean, nor leave it silently."""
    def rec(name, tpgemm_s, async_s, rel_err):
        figs = {v: {"sustained_s": 0.01, "burst_s": 0.01, "joules": 1.0} for v in R.VARIANTS}
        figs["tpgemm"]["sustained_s"] = tpgemm_s
        figs["torch_async_tp"] = {"sustained_s": async_s} if async_s else None
        return R.make_record(name, "AG", 8192, 6144, 4096, 2, "bf16", figs, rel_err)
    recs = [rec("a", 0.01, 0.01, 1e-3), rec("b", 0.0025, 0.01, 0.5), rec("c", 0.02, None, 1e-3)]
    text = report_tp.render(recs, 2)
    assert "tpgemm / async TP: 1.000 (over 1 of 3 shapes)" in text, text
    assert "tpgemm / NCCL+cuBLAS: 0.707 (over 2 of 3 shapes)" in text and "Checks passed: 2/3" in text, text



def test_a_failed_recheck_fails_the_check_it_repeats():
    """tp_bench.py checks the first call, times calls on unchanged inputs, then re-checks on new inputs: a call that
    skipped a wait or read the previous call's data passes the first and fails the second, and the record says so."""
    rec = R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", figures(), 1e-3,
                        extra={"alt": R.alt_summary(figures(), {"alt:pull_partials": 1e-3}, 8192, 4096, 4096, 2)})
    assert rec["check"] == "passed" and rec["alt"]["pull_partials"]["check"] == "passed"
    wrong, fine = (1e-3, 1e-3, None, 0.3), (1e-3, 1e-3, None, 4e-3)  # wrong: per element only
    failed_call = (None, None, "RuntimeError('timeout')", None)
    R.apply_checks(rec, local=fine, rechecks={"tpgemm": wrong, "local": fine, "alt:pull_partials": failed_call})
    assert (rec["check"], rec["recheck"], rec["recheck_elem_err"]) == ("failed", "failed", 0.3)
    assert (rec["local_check"], rec["local_recheck"], rec["local_rel_err"], rec["local_elem_err"]) == (
        "passed", "passed", 1e-3, 4e-3)
    assert rec["alt"]["pull_partials"]["check"] == rec["alt"]["pull_partials"]["recheck"] == "failed"
    assert rec["local_recheck_elem_err"] == 4e-3 and rec["alt"]["pull_partials"]["recheck_elem_err"] is None
    assert list(rec)[:len(REQUIRED)] == REQUIRED  # the record's fields keep their place; the new ones come after
    json.dumps(rec)


def test_a_check_not_rerun_fails_and_a_wrong_local_gemm_says_so():
    """Without the re-check (the variant failed in a timed window, or the new inputs did) nothing shows the timed
    calls right: the check fails."""
    rec = R.apply_checks(R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", figures(), 1e-3), (0.4, 1.0, None, 2.0))
    assert (rec["check"], rec["recheck"], rec["local_check"], rec["local_recheck"]) == (
        "failed", "not run", "failed", "not run")
    rec = R.apply_checks(R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", figures(), 1e-3),
                         (1e-3, 1e-3, None, 0.01),
                         {"tpgemm": (1e-3, 1e-3, None, 0.01), "local": (1e-3, 1e-3, None, 0.01)})
    assert (rec["check"], rec["recheck"], rec["local_check"], rec["local_recheck"]) == (
        "passed", "passed", "passed", "passed")
    rec = R.apply_checks(R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", {}, None, {"setup": "x"}))
    assert (rec["check"], rec["local_check"], rec["local_rel_err"], rec["local_elem_err"]) == (
        "not run", "not run", None, None)
    assert rec["torch_async_tp_elem_err"] is None and rec["recheck_elem_err"] is None
    # PyTorch async TP's per-element error is recorded, not bounded (unmeasured; its check shows the same GEMM)
    rec = R.apply_checks(R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", figures(), 1e-3), None, None,
                         (1e-3, 1e-3, None, 0.2))
    assert rec["torch_async_tp_check"] == "passed" and rec["torch_async_tp_elem_err"] == 0.2
    ok_first = R.apply_checks(R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", figures(), 1e-3),
                              (1e-3, 1e-3, None, 0), {"tpgemm": (1e-3, 1e-3, None, 0), "local": (0.5, 0.5, None, 0)})
    assert ok_first["local_check"] == "failed" and ok_first["check"] == "passed"


def test_the_record_takes_each_variants_fastest_timed_mode():
    """tp_records.MODES: async TP eager or from a CUDA graph, the local GEMM's family or the TP = 1 pick; the record's
    figures (and joules) are the fastest timed mode's, named; a mode without a sustained figure is never taken."""
    figs = figures()
    figs["torch_async_tp_graph"] = {"sustained_s": figs["torch_async_tp"]["sustained_s"] / 2, "burst_s": 1e-3,
                                    "joules": 1.5}
    figs["local_default"] = {"sustained_s": None, "burst_s": 1e-4, "joules": 0.1}  # not timed (failed a window)
    rec = R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", figs, 1e-3)
    assert list(rec)[:len(REQUIRED)] == REQUIRED
    assert rec["torch_async_tp_mode"] == "graph" and rec["torch_async_tp_joules"] == 1.5
    assert rec["torch_async_tp_tflops"] == pytest.approx(R.tflops(8192, 4096, 4096, 2, figs["torch_async_tp"][
        "sustained_s"] / 2))
    assert rec["torch_async_tp_modes"]["eager"]["tflops"] == pytest.approx(rec["torch_async_tp_tflops"] / 2)
    assert rec["local_mode"] == "family" and rec["local_modes"]["default"]["tflops"] is None
    assert rec["local_tflops"] == rec["local_modes"]["family"]["tflops"] is not None
    # equal times keep the first mode; nothing timed: no mode, no figure
    figs["torch_async_tp_graph"]["sustained_s"] = figs["torch_async_tp"]["sustained_s"]
    assert R.fastest_modes(figs)[1]["torch_async_tp"] == "eager"
    assert R.fastest_modes({})[1] == {"torch_async_tp": None, "local": None}
    assert R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", {}, None)["local_tflops"] is None


def test_the_checks_of_a_record_are_its_chosen_modes():
    """apply_checks with a check per mode: the record's local_check / local_recheck and torch_async_tp_check are the
    chosen mode's; each mode's check (re-check included for the local GEMM) stands in its *_modes entry."""
    figs = figures()
    figs["local_default"] = {"sustained_s": figs["local"]["sustained_s"] / 2, "burst_s": 1e-3, "joules": 1.0}
    rec = R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", figs, 1e-3)
    ok, wrong = (1e-3, 1e-3, None, 1e-3), (0.5, 0.5, None, 0.5)
    rec = R.apply_checks(rec, {"family": ok, "default": ok},
                         {"tpgemm": ok, "local": wrong, "local_default": ok},
                         {"eager": ok, "graph": (None, None, "RuntimeError('capture')", None)})
    assert rec["local_mode"] == "default" and rec["local_check"] == rec["local_recheck"] == "passed"
    assert rec["local_modes"]["family"]["check"] == "failed" and rec["local_modes"]["default"]["check"] == "passed"
    assert rec["torch_async_tp_mode"] == "eager" and rec["torch_async_tp_check"] == "passed"
    assert rec["torch_async_tp_modes"]["graph"] == {"tflops": None, "check": "failed"}  # its call failed: not timed
    # the chosen mode's re-check failing fails the record's local check
    rec = R.apply_checks(R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", figs, 1e-3),
                         {"family": ok, "default": ok}, {"tpgemm": ok, "local": ok, "local_default": wrong})
    assert rec["local_check"] == "failed" and rec["local_modes"]["family"]["check"] == "passed"


def test_check_error_says_why_a_check_did_not_pass():
    assert R.check_error(1e-3, 1e-3) is None and R.check_error(1e-3, None, None) is None
    assert R.check_error(None, None, "RuntimeError('x')") == "RuntimeError('x')"
    assert R.check_error(0.5, 0.9).startswith("wrong output: rel err 0.5, max err 0.9")
    assert R.check_error(1e-3, float("nan")).startswith("wrong output")
    # the per-element error has its own bound: under the other two, a k-block missing from one tile shows there
    assert R.check_error(1e-3, 1e-3, None, 0.049) is None
    assert "per element 0.06" in R.check_error(1e-3, 1e-3, None, 0.06)
    assert R.check_status(1e-3, 1e-3, elem_err=float("nan")) == "failed"
    rec = R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", figures(), 1e-3, max_err=1e-3, elem_err=0.2)
    assert rec["check"] == "failed" and rec["elem_err"] == 0.2


def test_a_run_cut_short_names_the_shapes_it_lacks():
    """A run stopped at its time bound leaves the shapes it finished; before 2026-12-06 its table read as complete
    ("Checks passed: 5/5")."""
    asked = [s[0] for s in R.SHAPES]
    recs = [dict(R.make_record(n, op, m, nn, k, 2, "bf16", figures(), 1e-3), shapes_asked=asked)
            for n, op, m, nn, k in R.SHAPES[:5]]
    assert R.missing_shapes(recs) == ["70B-fc2", "70B-o", "8B-o"]
    body = report_tp.render(recs, 2)
    assert "**Incomplete run: 3 of the 8 shapes asked have no record**" in body, body
    assert "Checks passed: 5/5 (3 of the 8 shapes asked not run: 70B-fc2, 70B-o, 8B-o)." in body, body
    assert body.count("(over 5 of 8 shapes)") == 3, body  # each geomean
    complete = [dict(R.make_record(n, op, m, nn, k, 2, "bf16", figures(), 1e-3), shapes_asked=asked)
                for n, op, m, nn, k in R.SHAPES]
    assert R.missing_shapes(complete) == [] and "Incomplete" not in report_tp.render(complete, 2)


def test_the_shapes_asked_come_from_the_records_else_the_anchor_shapes():
    """An --only run records its list (nothing missing when it ran them all); a file from before the field is
    compared with the eight shapes at its tokens, unless one of its records is not among them."""
    only = [dict(R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", figures(), 1e-3), shapes_asked=["8B-o"])]
    assert R.missing_shapes(only) == [] and "Incomplete" not in report_tp.render(only, 2)
    old = [R.make_record("8B-o", "RS", 8192, 4096, 4096, 2, "bf16", figures(), 1e-3)]
    assert R.missing_shapes(old) == [s[0] for s in R.SHAPES if s[0] != "8B-o"]
    tokens = [dict(R.make_record("8B-o-m512", "RS", 512, 4096, 4096, 2, "bf16", figures(), 1e-3), tokens=512)]
    assert len(R.missing_shapes(tokens)) == 7 and R.missing_shapes(tokens)[0] == "405B-fc1-m512"
    assert R.missing_shapes([dict(old[0], name="probe")]) == [] and R.missing_shapes([]) == []
    assert R.missing_shapes([old[0], dict(old[0], name="probe")]) == []  # one record not an anchor: not compared


def test_the_report_of_a_file_written_to_benchmarks_names_the_missing_shapes(tmp_path):
    asked = [s[0] for s in R.SHAPES]
    recs = [dict(R.make_record(n, op, m, nn, k, 2, "bf16", figures(), 1e-3), shapes_asked=asked)
            for n, op, m, nn, k in R.SHAPES[:6]]
    text = report_beside_the_bf16_table(tmp_path, "tp2", recs)
    section = text.split("<!-- tp2:begin -->")[1]
    assert "have no record** (the run stopped before them, e.g. at its time bound): 70B-o, 8B-o." in section


def test_the_table_marks_a_mode_other_than_the_first_and_joules_not_fitted():
    figs = figures()
    figs["torch_async_tp_graph"] = {"sustained_s": figs["torch_async_tp"]["sustained_s"] / 2, "burst_s": 1e-3,
                                    "joules": 1.5}
    rec = R.make_record("8B-qkv", "AG", 8192, 6144, 4096, 2, "bf16", figs, 1e-3,
                        extra={"tpgemm_energy_method": "delta", "torch_async_tp_energy_method": "fit"})
    row = next(line for line in report_tp.render([rec], 2).splitlines() if line.startswith("| 8B-qkv"))
    assert " (graph) |" in row and " (delta) |" in row and "(fit)" not in row, row
    assert " (default)" not in row  # the local GEMM's first mode: no mark


def test_the_header_says_which_modes_the_file_timed():
    """A file from before the benchmark timed both modes of each baseline says its one mode; a newer one the faster of
    two (an audit: re-rendered, tp2.json of 2026-12-01 would have claimed CUDA-graph replays it never ran)."""
    recs = json.loads((ROOT / "bench" / "results" / "tp2.json").read_text())
    old = report_tp.render(recs, 2).splitlines()[0]
    assert "async TP: eager calls" in old and "CUDA-graph" not in old
    recs[0]["torch_async_tp_modes"] = {"eager": 600.0, "graph": 610.0}
    new = report_tp.render(recs, 2).splitlines()[0]
    assert "the faster of eager calls and CUDA-graph replays" in new and "`*_modes`" in new


def row_record(name, m, check="passed", **kw):
    r = {"name": name, "op": "AG", "M": m, "N": 1, "K": 1, "tp": 2, "dtype": "bf16", "tpgemm_tflops": 500.0,
         "torch_async_tp_tflops": 400.0, "nccl_cublas_tflops": 250.0, "local_tflops": 500.0,
         "cublas_local_tflops": 500.0, "check": check, "config": "c"}
    r.update(kw)
    return r


def table_row(text, name):
    return next(line for line in text.splitlines() if line.startswith(f"| {name} |"))


def test_the_table_shows_ratios_the_right_way_up_and_only_passed_checks():
    """tpgemm over async TP 1.25 and over NCCL + cuBLAS 2.0; a check not run is not counted passed nor shown so; a
    fused / local ratio over a local GEMM whose check failed is not given."""
    out = report_tp.render([row_record("a", 8192), row_record("b", 8192, check="not run")], 2)
    assert "| 1.250 | 2.000 |" in table_row(out, "a")
    assert "Checks passed: 1/2" in out
    unchecked = row_record("c", 8192)
    del unchecked["check"]
    assert "passed" not in table_row(report_tp.render([unchecked], 2), "c")
    assert "a - (check not passed)" in report_tp.render([row_record("a", 16384, local_check="failed")], 2)


def test_a_shared_device_run_leaves_benchmarks_md_alone(tmp_path):
    """Every rank on one GPU times nothing a TP run does: its file (whatever its name) is not published."""
    j = tmp_path / "tp2.json"
    j.write_text(json.dumps([row_record("a", 8192, shared_device=True)]))
    bm = tmp_path / "B.md"
    bm.write_text("# B\n")
    report_tp.main([str(j), "--benchmarks", str(bm), "--png", str(tmp_path / "x.png")])
    assert bm.read_text() == "# B\n"


def test_a_failed_async_tp_check_is_recorded():
    rec = R.make_record("a", "AG", 8, 8, 8, 2, "bf16", {}, 1e-3)
    assert R.apply_checks(rec, async_tp=(0.5, 0.5, None, None))["torch_async_tp_check"] == "failed"
