"""bench/tp_bench.py keeps its ranks in step when a variant fails on one rank only (two processes, gloo on the
CPU, fake CUDA and tpgemm: tests/tp_bench_sim.py). Before 2026-12-02 a fused call that failed its check on one
rank sent that rank to the ops' (collective) destroy while the other ran the reference's NCCL collective, and a
failure inside a timed window skipped that window's collectives on one rank: the run hung or aborted, and the
2-GPU machine's half hour with it. Needs torch (the GPU machine has it; CI skips)."""
import importlib.util
import json
import os
import socket
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                reason="torch is not installed here; tp_bench.py runs on the GPU machine")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(fault, **env):
    """Both ranks' results (parsed RESULT lines) with FAULT=fault (and env)."""
    port = str(free_port())
    procs = [subprocess.Popen([sys.executable, str(ROOT / "tests" / "tp_bench_sim.py")], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              env={**os.environ, "RANK": str(r), "PORT": port, "FAULT": fault, **env})
             for r in (0, 1)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    results = []
    for out in outs:
        line = next((x for x in out.splitlines() if x.startswith("RESULT ")), None)
        assert line, out[-2000:]
        results.append(json.loads(line[len("RESULT "):]))
    return results


def test_no_fault_passes_with_its_pulled_twin():
    for res in run_ranks(""):
        assert res["check"] == "passed" and res["errors"] == {}, res
        assert res["alt"]["pull_partials"]["check"] == "passed"
        assert res["alt"]["pull_partials"]["config"] == "rs_tila_bf16_pull_tp2"


@pytest.mark.parametrize("fault, variant, check, alt_check", [
    ("sync:tpgemm:1", "tpgemm", "failed", "passed"),           # the fused check times out on rank 1 only
    ("sync:pull:1", "alt:pull_partials", "passed", "failed"),  # the pulled twin's check, rank 1 only
    ("sync:pull:9", "alt:pull_partials", "passed", "failed"),  # ... on both ranks: only the twin is dropped
    ("run:tpgemm:0", "tpgemm", "failed", "passed"),            # the first call raises on rank 0
    # a call inside a timed window, or a sync after a sustained window, rank 1: dropped from the timing, so not
    # re-checked on new inputs, and nothing shows its timed calls right (tp_records.with_recheck)
    ("runlate:tpgemm:1", "tpgemm", "failed", "passed"),
    ("synclate:tpgemm:1", "tpgemm", "failed", "passed"),
])
def test_a_failure_on_one_rank_keeps_the_ranks_in_step(fault, variant, check, alt_check):
    results = run_ranks(fault)
    for res in results:
        assert "raised" not in res, res
        assert res["check"] == check and res["alt"]["pull_partials"]["check"] == alt_check, res
        # the failing rank's own message reaches the record, named by rank
        fault_rank = fault.rsplit(":", 1)[1]
        named = {"0": "rank 0", "1": "rank 1", "9": "every rank"}[fault_rank]
        assert named + ": RuntimeError('injected" in res["errors"][variant], res["errors"]
    # both ranks made the same collective calls in the same order, and both reached the next shape's first
    assert results[0]["trace"] == results[1]["trace"] and results[0]["trace"][-1] == "tpg:next_shape"


def test_share_device_collectives_match_nccls():
    """--share-device runs torch's all-gather and reduce-scatter as gloo all-reduces (tp_bench.SumCollectives):
    the gather must be exact, the scatter the fp32 sum."""
    for res in run_ranks("", SUM_COLLECTIVES="1"):
        assert res["gather"] is True and res["scatter"] < 1e-6, res


def test_share_device_drops_async_tp_alike_on_every_rank_and_marks_the_record():
    """--share-device: PyTorch async TP does not run (said once for every rank), the record says it is a smoke
    run (report_tp leaves BENCHMARKS.md alone), and the ranks stay in step."""
    results = run_ranks("", SHARE_DEVICE="1")
    for res in results:
        assert res["check"] == "passed" and res["shared_device"] is True and res["async_tp"] is None, res
        assert res["async_check"] == "not run", res
        assert res["errors"]["torch_async_tp"].startswith("every rank: not run with --share-device"), res["errors"]
    assert results[0]["trace"] == results[1]["trace"]


def test_alt_captured_replays_the_captured_call():
    """--alt-captured: the shape's op captured once into a (fake) torch CUDA graph; its check and its timed calls
    are replays of what was captured, and the ranks stay in step."""
    results = run_ranks("", CAPTURED="1")
    for res in results:
        assert "raised" not in res and res["check"] == "passed", res
        assert res["alt"]["captured"]["check"] == "passed" and res["alt"]["captured"]["config"] == "rs_tila_bf16_tp2"
    assert results[0]["trace"] == results[1]["trace"]


def test_alt_nccl_runs_the_shapes_config_on_the_nccl_context():
    """--alt-nccl: the shape's own config made on the second context (the NCCL transport), checked and timed as
    alt:nccl beside the others; the peer context's op is still the tpgemm variant."""
    results = run_ranks("", NCCL="1")
    for res in results:
        assert "raised" not in res and res["check"] == "passed", res
        assert res["alt"]["nccl"]["check"] == "passed" and res["alt"]["nccl"]["config"] == "rs_tila_bf16_tp2", res
        assert res["trace"].count("tpg:op_create_nccl") == 1 and res["trace"].count("tpg:op_create") == 2, res["trace"]
    assert results[0]["trace"] == results[1]["trace"]


def test_a_capture_failing_on_one_rank_drops_alt_captured_on_every_rank():
    results = run_ranks("capture:tpgemm:1", CAPTURED="1")
    for res in results:
        assert "raised" not in res and res["check"] == "passed", res
        assert "captured" not in res["alt"] or res["alt"]["captured"]["check"] != "passed", res
        assert "rank 1: RuntimeError('injected capture failure" in res["errors"]["alt:captured"], res["errors"]
    assert results[0]["trace"] == results[1]["trace"] and results[0]["trace"][-1] == "tpg:next_shape"


@pytest.mark.parametrize("fault", ["", "linkbuf:diag:1", "link:diag:0", "link:diag:1"])
def test_link_copies_failing_drops_the_diagnostic_not_the_shape(fault):
    """--link-copies (symmetric memory, first run across GPUs in the x2 session): a failure of the diagnostic's
    setup on one rank - its buffer, or after the rendezvous's collective - drops diag:local_link on every rank, with
    that rank's message; the shape's variants still run and check, and the ranks stay in step. Without a fault the
    diagnostic is timed like the others."""
    results = run_ranks(fault, LINK_COPIES="1")
    for res in results:
        assert "raised" not in res and res["check"] == "passed", res
        if fault:
            said = f"rank {fault[-1]}: RuntimeError('injected link-copies failure"
            assert said in res["errors"]["diag:local_link"], res
        else:
            assert res["errors"] == {} and "diag:local_link" in res["timed"], res
    assert results[0]["trace"] == results[1]["trace"] and results[0]["trace"][-1] == "tpg:next_shape"


def test_e4m3_promoted_asks_for_the_promoted_family_as_e4m3():
    """--dtype e4m3_promoted: bench_shape asks the library for the schedule's promoted family by name, as the
    library's operand type (e4m3), and the torch side for the e4m3_promoted numerics (no fast accumulation);
    bf16 asks for the schedule's default pick."""
    for res in run_ranks("", DTYPE="e4m3_promoted"):
        assert "raised" not in res and res["check"] == "passed", res
        assert res["lookups"] == [["config", "rs_tila_e4m3_promoted_tp2", 2, "e4m3"]], res["lookups"]
        assert res["numerics"] == ["e4m3_promoted"], res["numerics"]
    for res in run_ranks(""):  # and the TP = 1 pick for the rank's GEMM (256 x 128 x 128 / 2): the local "default"
        assert res["lookups"] == [["pick", "ReduceScatter1D_TilingA_RotatingC", 2, "bf16"],
                                  ["local_pick", 1, 256, 128, 64]], res["lookups"]
        assert res["numerics"] == ["bf16"], res["numerics"]


def test_the_local_gemm_and_a_recheck_on_new_inputs_pass_without_a_fault():
    """The local GEMM (the fused / local point's denominator) is checked before the timing rounds, and after them the
    fused call, the local GEMM and each alt variant once more on new inputs."""
    for res in run_ranks(""):
        assert res["local_check"] == res["recheck"] == res["local_recheck"] == res["async_check"] == "passed", res
        assert res["alt"]["pull_partials"]["recheck"] == "passed" and "local" in res["timed"], res
        # the per-element error: f32 sums in another order against the reference, on every check
        assert all(0 <= e < 1e-4 for e in res["elem_errs"].values()), res["elem_errs"]
        assert 0 <= res["alt"]["pull_partials"]["elem_err"] < 1e-4, res["alt"]


@pytest.mark.parametrize("fault_rank", ["1", "9"])
def test_a_fused_call_that_reuses_the_previous_calls_data_fails_the_recheck(fault_rank):
    """A fused call that returns what the first call computed (a skipped wait, a stale shard or partial: the timed
    calls ran on unchanged inputs) passes the first check; the re-check on new inputs fails it, on every rank."""
    results = run_ranks(f"stale:tpgemm:{fault_rank}")
    for res in results:
        assert "raised" not in res and res["check"] == "failed" and res["recheck"] == "failed", res
        assert "wrong output" in res["errors"]["recheck:tpgemm"], res["errors"]
        assert res["alt"]["pull_partials"]["check"] == "passed" and res["local_recheck"] == "passed", res
        assert res["elem_errs"]["elem_err"] < 1e-4 < 0.5 < res["elem_errs"]["recheck_elem_err"], res["elem_errs"]
    assert results[0]["trace"] == results[1]["trace"] and results[0]["trace"][-1] == "tpg:next_shape"


def test_a_wrong_local_gemm_fails_its_check_and_is_not_timed():
    results = run_ranks("wrong:local:0")
    for res in results:
        assert "raised" not in res and res["check"] == "passed", res
        assert res["local_check"] == "failed" and res["local_recheck"] == "not run", res
        assert "local" not in res["timed"] and "wrong output" in res["errors"]["local"], res
        # D twice what it should be: |2x - x| / max(|x|, rms) is 1 wherever |x| >= rms
        assert res["elem_errs"]["local_elem_err"] == pytest.approx(1.0, rel=1e-5), res["elem_errs"]
    assert results[0]["trace"] == results[1]["trace"] and results[0]["trace"][-1] == "tpg:next_shape"


@pytest.mark.parametrize("fault_rank", ["1", "9"])
@pytest.mark.parametrize("fault", ["wrong", "run"])
def test_a_wrong_or_failing_async_tp_call_fails_its_check_and_is_not_timed(fault_rank, fault):
    """The baseline is checked as the local GEMM is: a ratio to an async TP call that computes another product (a
    wrong layout, one rank's part missing) would mean nothing, so it gets no figure, on every rank alike; a call that
    raises on one rank is agreed the same way."""
    results = run_ranks(f"{fault}:async:{fault_rank}")
    for res in results:
        assert "raised" not in res and res["check"] == "passed" and res["async_check"] == "failed", res
        assert res["async_tp"] is None and "torch_async_tp" not in res["timed"], res
        why = res["errors"]["torch_async_tp"]
        assert ("wrong output" in why if fault == "wrong" else "injected async TP failure" in why), why
        assert "local" in res["timed"], res
    assert results[0]["trace"] == results[1]["trace"] and results[0]["trace"][-1] == "tpg:next_shape"


def test_async_tp_runs_eager_and_from_a_graph_and_the_record_takes_the_faster():
    """PyTorch async TP's two modes (tp_records.MODES): each checked and timed; the record's figure is one of them,
    named, with both modes' figures and checks beside it."""
    results = run_ranks("")
    for res in results:
        assert "raised" not in res and res["errors"] == {}, res
        assert {"torch_async_tp", "torch_async_tp_graph"} <= set(res["timed"]), res["timed"]
        assert res["async_mode"] in ("eager", "graph") and res["async_tp"] is not None, res
        modes = res["async_modes"]
        assert set(modes) == {"eager", "graph"} and all(m["check"] == "passed" for m in modes.values()), modes
        assert res["async_tp"] == max(m["tflops"] for m in modes.values()), res
        assert res["local_mode"] == "family" and set(res["local_modes"]) == {"family"}, res  # the pick is the family
    assert results[0]["async_mode"] == results[1]["async_mode"]


@pytest.mark.parametrize("fault_rank", ["1", "9"])
def test_an_async_tp_capture_failing_keeps_the_eager_figure_on_every_rank(fault_rank):
    results = run_ranks(f"capture:async:{fault_rank}")
    for res in results:
        assert "raised" not in res and res["check"] == "passed" and res["async_check"] == "passed", res
        assert "injected async TP capture failure" in res["errors"]["torch_async_tp_graph"], res["errors"]
        assert "torch_async_tp_graph" not in res["timed"] and res["async_mode"] == "eager", res
        assert res["async_tp"] == res["async_modes"]["eager"]["tflops"] is not None, res
    assert results[0]["trace"] == results[1]["trace"] and results[0]["trace"][-1] == "tpg:next_shape"


def test_the_local_gemm_counts_its_faster_mode_and_names_its_config():
    """Where the TP = 1 pick differs from the family's local config, both run on the same tensors, each checked and
    re-checked; the record's local figure and local_config are the faster's (here the default's: the family's calls
    sleep)."""
    for res in run_ranks("", LOCAL_DEFAULT="1", LOCAL_DEFAULT_FASTER="1"):
        assert "raised" not in res and res["errors"] == {}, res
        assert {"local", "local_default"} <= set(res["timed"]), res["timed"]
        assert res["local_mode"] == "default" and res["local_config"] == "rs_tila_bf16_wide_tp1", (
            res["local_mode"], res["local_config"], res["local_modes"], res["timed"])
        modes = res["local_modes"]
        assert all(m["check"] == "passed" for m in modes.values()), modes
        assert modes["default"]["tflops"] > modes["family"]["tflops"], modes
        assert res["local_check"] == res["local_recheck"] == "passed", res


def test_a_wrong_local_default_mode_is_not_timed_and_the_family_counts():
    results = run_ranks("wrong:local_default:1", LOCAL_DEFAULT="1", LOCAL_DEFAULT_FASTER="1")
    for res in results:
        assert "raised" not in res and res["check"] == "passed" and res["local_check"] == "passed", res
        assert "wrong output" in res["errors"]["local_default"] and "local_default" not in res["timed"], res
        assert res["local_mode"] == "family" and res["local_config"] == "rs_tila_bf16_tp1", res
        assert res["local_modes"]["default"]["check"] == "failed", res["local_modes"]
    assert results[0]["trace"] == results[1]["trace"] and results[0]["trace"][-1] == "tpg:next_shape"


def test_a_setup_step_failing_on_one_rank_fails_the_shape_on_every_rank_in_step():
    """A rank's own setup step (its tensors, its rank-dependent shard layout, its local op) failing on one rank
    raises on every rank before the next collective tpgemm call (tp_check.agree): the shape's record names that
    rank's cause, the op is destroyed on both ranks together, and both reach the next shape."""
    results = run_ranks("setup:tpgemm:1")
    for res in results:
        assert "raised" not in res and res["check"] == "not run" and res["timed"] == [], res
        assert res["errors"]["setup"] == "rank 1: RuntimeError('injected setup failure (layout)')", res["errors"]
        assert res["trace"] == ["tpg:op_create", "tpg:destroy", "tpg:next_shape"], res["trace"]


def test_the_async_tp_ops_return_what_tp_numerics_takes_d_from():
    """tp_numerics' async_ag takes D as result[1][0] and async_rs the result itself (its check compares that with the
    reference): the ops' schemas in this torch must still say (gathered A, [D]) and D."""
    import torch
    import torch.distributed._symmetric_memory  # noqa: F401 - registers torch.ops.symm_mem
    returns = {name: [str(r.type) for r in getattr(torch.ops.symm_mem, name).default._schema.returns]
               for name in ("fused_all_gather_matmul", "fused_all_gather_scaled_matmul", "fused_matmul_reduce_scatter",
                            "fused_scaled_matmul_reduce_scatter")}
    assert returns["fused_all_gather_matmul"] in (["Optional[Tensor]", "List[Tensor]"], ["Tensor", "List[Tensor]"])
    assert returns["fused_all_gather_scaled_matmul"] == ["Tensor", "List[Tensor]"]
    assert returns["fused_matmul_reduce_scatter"] == returns["fused_scaled_matmul_reduce_scatter"] == ["Tensor"]


def test_the_per_element_error_weighs_each_element_by_its_own_size(monkeypatch):
    """tp_check.relative_errors' third figure (the records' *elem_err, tp_records.MAX_PER_ELEMENT_ERR) is the CLI's
    metric: an element's error against max(|ref_i|, rms(ref)), so an error on a small element is not diluted by the
    largest one as max|d - ref| / max|ref| dilutes it. One process: the all-reduce over ranks is the identity here."""
    import torch
    sys.path.insert(0, str(ROOT / "bench"))
    import tp_check
    monkeypatch.setattr(tp_check.W, "allreduce", lambda x, op: x)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    ref = torch.tensor([[4.0, 1.0], [1.0, 1.0]])
    rms = (19.0 / 4) ** 0.5
    d = ref.clone()
    d[1, 1] += 0.5  # a small element off: diluted by max|ref| = 4, not by rms
    rel, mx, elem = tp_check.relative_errors(d, ref)
    assert mx == pytest.approx(0.5 / 4) and elem == pytest.approx(0.5 / rms) and rel == pytest.approx(0.5 / 19 ** 0.5)
    assert torch.equal(ref, torch.tensor([[4.0, 1.0], [1.0, 1.0]]))  # ref.float() is ref itself: left as it was
    d = ref.clone()
    d[0, 0] -= 0.5  # the large element off: its own size
    assert tp_check.relative_errors(d, ref)[2] == pytest.approx(0.5 / 4)
    d[0, 1] = float("nan")
    assert tp_check.relative_errors(d, ref) == (float("inf"),) * 3
