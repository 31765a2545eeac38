"""The rules the TP benchmark applies before and after it measures (bench/tp_records.py, bench/benchmarks_md.py,
bench/tp_bench.py's option checks): the check's bounds, which runs take the issues' files, BENCHMARKS.md's section
markers, usage errors refused before the library loads. No torch, no GPU."""
import subprocess
import sys

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import report_tp  # noqa: E402
import tp_records as R  # noqa: E402


def test_check_bounds_sit_where_the_measured_errors_leave_room():
    """The norm-wise bound 2e-2 (the 16-bit partials' rounding measures 2.5e-3 - 3.5e-3 on reduce-scatter) and the
    max-error and per-element bounds 5e-2 (7.8e-3 - 1.5e-2 measured per element, bf16 and e4m3 reduce-scatter; see
    tp_records.py): just past any fails, just inside passes."""
    assert R.check_status(0.019) == "passed" and R.check_status(0.021) == "failed"
    assert R.check_status(1e-3, 0.049) == "passed" and R.check_status(1e-3, 0.051) == "failed"
    assert R.check_status(1e-3, 1e-3, elem_err=0.049) == "passed"
    assert R.check_status(1e-3, 1e-3, elem_err=0.051) == "failed"


def test_only_bf16_runs_take_the_issues_files_and_section():
    """tp2.json and BENCHMARKS.md's tp2 section are the bf16 runs': every other dtype the benchmark runs keeps its
    own."""
    assert "bf16" in R.DTYPES and len(R.DTYPES) > 1  # --dtype's names (tp_numerics re-exports them)
    for dtype in R.DTYPES:
        assert (R.result_stem(2, dtype) == "tp2") == (dtype == "bf16"), dtype
    assert R.result_stem(2, "fp16") == "tp2_fp16"


@pytest.mark.parametrize("text, said", [
    ("x\n<!-- tp2:begin -->\nold\n", "only one of"),
    ("x\nold\n<!-- tp2:end -->\n", "only one of"),
    ("x\n<!-- tp2:end -->\nold\n<!-- tp2:begin -->\n", "out of order"),
])
def test_a_section_with_a_missing_or_misplaced_marker_is_refused_not_rewritten(text, said):
    with pytest.raises(report_tp.benchmarks_md.SectionError, match=said):
        report_tp.benchmarks_md.replace_section(text, "tp2", "t", "b\n")


def no_torch(tmp_path):
    """A PYTHONPATH entry whose `torch` raises ImportError (also where torch is installed): a run that imports it
    fails."""
    fake = tmp_path / "no_torch" / "torch"
    fake.mkdir(parents=True, exist_ok=True)
    (fake / "__init__.py").write_text("raise ImportError('torch is not importable in this test')\n")
    return str(fake.parent)


@pytest.mark.parametrize("args, said", [(["--tokens", "3"], "--tokens 3: a positive multiple of tp = 2"),
                                        (["--tokens", "-2"], "--tokens -2"),
                                        (["--tag", "Bad-Tag"], "--tag 'Bad-Tag'"),
                                        (["--only", "70B-o,8B-oo"], "--only names unknown shapes ['8B-oo']"),
                                        (["--share-device", "--link-copies"],
                                         "--link-copies needs PyTorch's symmetric memory"),
                                        (["--tokens", "4", "--tag", "ok_1"], None)])
def test_usage_errors_are_refused_before_the_library_loads(tmp_path, args, said):
    """At WORLD_SIZE = 2 a token count that does not split over the ranks, a tag that would name odd files, a shape
    --only does not know (the run would time none of it) or --link-copies on a shared device exits 2 with the flag
    named, before the library or the process group (torch not importable: none of it is used)."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": no_torch(tmp_path), "WORLD_SIZE": "2",
           "TPGEMM_LIB": str(tmp_path / "no_library.so")}  # an accepted run stops at the library, not at its flags
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "tp_bench.py"), "--check-args", *args], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    if said:
        assert out.returncode == 2 and said in out.stderr, out.stderr
    else:
        assert "no_library.so" in out.stderr and "--tokens" not in out.stderr and "--tag" not in out.stderr, out.stderr


def check_args(tmp_path, args, world="2", flag="--check-args"):
    """tp_bench.py --check-args (or `flag`) at WORLD_SIZE = world with the built library, torch not importable."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": no_torch(tmp_path), "WORLD_SIZE": world}
    return subprocess.run([sys.executable, str(ROOT / "bench" / "tp_bench.py"), flag, *args], env=env,
                          capture_output=True, text=True, timeout=60)


def test_help_and_check_args_run_where_torch_cannot_be_imported(tmp_path):
    """The options are parsed and checked before torch loads (tp_bench.load_torch): --help and --check-args died with
    ModuleNotFoundError on a machine without torch, where the 2-GPU calls are rehearsed (docs/TESTING.md)."""
    out = check_args(tmp_path, [], flag="--help")
    assert out.returncode == 0 and "--check-args" in out.stdout and "--energy-fit" in out.stdout, out.stderr
    if not (ROOT / "build" / "libtpgemm.so").exists():
        pytest.skip("build/libtpgemm.so is missing (tests/test_build.py says why): tp_bench checks configs with it")
    out = check_args(tmp_path, ["--rounds", "1", "--ag-config", "ag_rota_bf16_wide", "--alt-config", "rs_tila_bf16",
                                "--alt-captured", "--alt-nccl", "--link-copies", "--tokens", "512"])
    assert out.returncode == 0 and "options accepted at tp = 2" in out.stdout, out.stderr


@pytest.mark.parametrize("args, said", [
    (["--ag-config", "ag_rota_fp16"], "config ag_rota_fp16_tp2 is of schedule AllGather1D_TilingCD_RotatingA "
     "(all-gather), dtype fp16"),
    (["--ag-config", "rs_tila_bf16"], "--ag-config needs schedule AllGather1D_TilingCD_RotatingA (all-gather)"),
    (["--ag-config", "ag_rotb_bf16"], "config ag_rotb_bf16_tp2 is of schedule AllGather1D_TilingCD_RotatingB"),
    (["--rs-config", "ag_rota_bf16"], "--rs-config needs schedule ReduceScatter1D_TilingA_RotatingC"),
    (["--rs-config", "rs_tilb_bf16"], "config rs_tilb_bf16_tp2 is of schedule ReduceScatter1D_TilingB_RotatingC"),
    (["--dtype", "fp16", "--rs-config", "rs_tila_bf16"], "dtype fp16 (--dtype fp16)"),
    (["--alt-config", "ag_rota_bf16_wide,ag_rotb_bf16"], "--alt-config ag_rotb_bf16: config ag_rotb_bf16_tp2"),
    (["--ag-config", "ag_rota_bf16_wide", "--rs-config", "rs_tila_bf16", "--alt-config", "ag_rota_bf16,rs_tila_bf16"],
     None),
    (["--dtype", "e4m3_promoted", "--ag-config", "ag_rota_e4m3_promoted"], None),
])
def test_a_named_config_must_be_of_the_runs_dtype_and_the_flags_schedule(tmp_path, args, said):
    """By name the library finds a config whatever its dtype or schedule (tpg_config_find): --check-args refused
    none of these, and the GPUs then ran a config of another dtype or route on every shape (or on none)."""
    if not (ROOT / "build" / "libtpgemm.so").exists():
        pytest.skip("build/libtpgemm.so is missing (tests/test_build.py says why): tp_bench checks configs with it")
    out = check_args(tmp_path, args)
    if said:
        assert out.returncode == 2 and said in out.stderr, out.stderr
    else:
        assert out.returncode == 0 and "options accepted at tp = 2" in out.stdout, out.stderr


@pytest.mark.parametrize("world", ["3", "16", "-2", "0", "abc"])
def test_a_world_size_the_benchmark_does_not_run_at_is_refused_with_a_usage_error(tmp_path, world):
    """3, 16 and -2 were "accepted at tp = ...", 0 and abc ended in a traceback (ZeroDivisionError, ValueError)."""
    out = check_args(tmp_path, [], world)
    assert out.returncode == 2 and f"WORLD_SIZE={world!r}: tp_bench runs at TP = 1, 2, 4, 8" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("world", ["1", "2", "4", "8"])
def test_the_tp_degrees_the_benchmark_runs_at_are_accepted(tmp_path, world):
    if not (ROOT / "build" / "libtpgemm.so").exists():
        pytest.skip("build/libtpgemm.so is missing (tests/test_build.py says why): tp_bench checks configs with it")
    out = check_args(tmp_path, ["--ag-config", "ag_rota_bf16_wide"], world)
    assert out.returncode == 0 and f"options accepted at tp = {world}:" in out.stdout, out.stderr
