"""GPU tests (tier 2 pieces that fit pytest). They skip, with the reason shown by `pytest -rs`, where
fewer GPUs are visible than they need: CI has none; the device machine runs them.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import routes
from tests.gpu_cases import (EPOCH_RUNS, EPOCH_RUNS_NCCL, built, needs_gpus, run_passing,  # noqa: F401
                              shared_env, skip_unless_required)  # built: the cases' fixture

ROOT = Path(__file__).resolve().parent.parent


@needs_gpus(2)
def test_missing_peer_times_out_then_fresh_context_works(built):
    out = run_passing(["gpu_timeout", "200"], timeout=120)
    assert "rank 1 given device 0's memory -> TPG_ERR_INVALID_ARGUMENT" in out  # a tensor on another GPU, refused
    assert "rank 0 given device 1's stream -> TPG_ERR_INVALID_ARGUMENT" in out  # a stream of another GPU, refused
    assert "TPG_ERR_TIMEOUT" in out
    assert "late peer: TPG_ERR_TIMEOUT" in out and "gave up" in out, out  # the late rank's call fails too
    assert out.count("fresh context, rank") == 2, out  # the fresh context's D checked on both ranks


@needs_gpus(1)
def test_missing_peer_times_out_on_a_shared_device(built):
    """The same with both ranks on one GPU (tpg_ctx_config.share_devices); and the fresh context's last call on
    streams the caller destroys once the call is enqueued syncs cleanly (the op keeps no stream)."""
    out = run_passing(["gpu_timeout", "200", "--share-device"], timeout=120)
    assert "TPG_ERR_TIMEOUT" in out
    assert "late peer: TPG_ERR_TIMEOUT" in out and "gave up" in out, out
    assert "streams destroyed after the launch: sync TPG_OK" in out, out
    assert out.count("fresh context, rank") == 2, out


@pytest.mark.parametrize("devices", [pytest.param([], marks=needs_gpus(2), id="across-gpus"),
                                     pytest.param(["--share-device"], marks=needs_gpus(1), id="shared-device")])
def test_a_call_after_a_late_one_waits_for_its_own_copies(built, devices):
    """All-gather: rank 0 gave up on a call and started its next before rank 1 ran the late one, whose flag copies
    then read rank 0's next epoch; rank 1's next call (rank 0's A changed in between) must still wait for its own
    copies and match the reference on both ranks (runtime/src/barrier.h: the closing barrier sets the flags back)."""
    out = run_passing(["gpu_timeout", "200", "--allgather", "--peer-ahead", *devices], timeout=120)
    assert "late peer: TPG_ERR_TIMEOUT" in out and "gave up" in out, out  # the late call itself fails
    assert "late rank 1 after its call: epoch" in out, out  # its stage flags at its epoch, not past (checked there)
    assert out.count("the call after the late one, rank 0's A changed, rank") == 2, out
    assert out.count("fresh context, rank") == 2, out


@needs_gpus(1)
@pytest.mark.parametrize("schedule", ["--allgather", "--reduce-scatter"])
def test_a_timed_out_call_on_a_shared_device_is_traced_with_the_waits_that_gave_up(built, tmp_path, schedule):
    """The trace build's gpu_timeout traces rank 0's lone call (rank 1 never comes; both ranks on one GPU, the GEMM
    beside the start barrier so that its own waits run): the timeline JSON is whole, and it marks the start barrier
    and the GEMM's waits - the stage waits of all-gather, the partial waits of reduce-scatter - as given up."""
    sys.path.insert(0, str(ROOT / "bench"))
    import timeline
    path = tmp_path / "t.json"
    args = ["gpu_timeout", "200", "--share-device", "--overlap-barriers", "--trace", str(path)]
    out = run_passing(args + ([schedule] if schedule == "--allgather" else []), timeout=120, where="build/trace/tests")
    assert re.search(r"trace of rank 0's call: .*, [1-9][0-9]* waits and barriers gave up", out), out
    doc = timeline.load(str(path))
    s = timeline.summarize(doc)[0]  # by rank (timeline.load: pid = rank + 1 in the file)
    assert any(name == "start barrier (gave up)" for name, _, _ in s["barriers"]), s["barriers"]
    waits = s["flag_wait"] if schedule == "--allgather" else s["partial_wait"]
    assert waits["count"] > 0 and waits["gave_up"] == waits["count"], waits
    assert "gave up (timed out)" in timeline.format_summary(doc, timeline.summarize(doc))


def parse_missing_peer_wait(out: str) -> float:
    """The call's total wait from gpu_timeout's line; the line ends with the barrier's own bound ("timed out after
    0.300 s"), so the match must stop at the first "after"."""
    assert "TPG_ERR_TIMEOUT" in out
    return float(re.search(r"missing peer: .*? after ([0-9.]+) s", out).group(1))


def test_parse_missing_peer_wait_reads_the_call_total_not_the_barrier_bound():
    line = ("missing peer: TPG_ERR_TIMEOUT: a device waited longer than the timeout for a peer; check all ranks run "
            "after 0.900 s (bound 0.300 s): rank 0 (device 0): a cross-device barrier timed out after 0.300 s")
    assert parse_missing_peer_wait(line) == 0.9


def missing_peer_wait_s(args: list[str]) -> float:
    """Seconds gpu_timeout's missing-peer call took to end in TPG_ERR_TIMEOUT."""
    return parse_missing_peer_wait(run_passing(args, timeout=120))


def check_one_timeout_per_call(extra: list[str], schedule: str):
    """Rank 1 never launched, timeout t = 0.3 s: the table's graph has three waits in turn (start barrier, the
    GEMM's stage wait, closing barrier), the graph with the barriers beside the GEMM two at once. Before the waits
    gave up together (2026-12-01 22:40Z) these calls took 0.9 s and 0.6 s; now each ends about t after it began
    (gpu_timeout also fails past t + 0.25 s), in either graph and either comm. All-gather also shows the mode took
    effect: with the barriers beside the GEMM, stage 0 (own shard) has written D halfway through the wait; in the
    table's graph the GEMM has not started."""
    base = ["gpu_timeout", "300", *extra] + ([schedule] if schedule == "--allgather" else [])
    for overlap in (False, True):
        out = run_passing(base + (["--overlap-barriers"] if overlap else []), timeout=120)
        waited = parse_missing_peer_wait(out)
        assert 0.3 <= waited < 0.5, (overlap, waited)
        assert "late peer: TPG_ERR_TIMEOUT" in out, out  # rank 1 late for the call rank 0 gave up on: fails too
        if schedule == "--allgather":  # the mode took effect: only beside the barrier does stage 0 run at once
            assert f"stage 0 before the start barrier passed: {'yes' if overlap else 'no'}" in out, out


@needs_gpus(2)
@pytest.mark.parametrize("schedule", ["--allgather", "--reduce-scatter"])
def test_missing_peer_costs_one_timeout(built, schedule):
    check_one_timeout_per_call([], schedule)


@needs_gpus(1)
@pytest.mark.parametrize("schedule", ["--allgather", "--reduce-scatter"])
def test_missing_peer_costs_one_timeout_on_a_shared_device(built, schedule):
    check_one_timeout_per_call(["--share-device"], schedule)


@pytest.mark.parametrize("devices", [pytest.param([], marks=needs_gpus(2), id="across-gpus"),
                                     pytest.param(["--share-device"], marks=needs_gpus(1), id="shared-device")])
def test_missing_peer_costs_one_timeout_with_copy_engine_partials(built, devices):
    """The rs_tila_bf16 family with copy-engine partials (tests/gpu/route_config.h): the copy chains' mem-op waits
    on rank 0's own tile flags have no timeout; they end because
    its GEMM raises every flag even after its waits gave up, so the call still ends about t after it began."""
    check_one_timeout_per_call(devices + ["--copy-engine-partials"], "--reduce-scatter")


@pytest.mark.parametrize("devices", [pytest.param([], marks=needs_gpus(2), id="across-gpus"),
                                     pytest.param(["--share-device"], marks=needs_gpus(1), id="shared-device")])
@pytest.mark.parametrize("schedule", ["--allgather", "--reduce-scatter"])
def test_missing_peer_costs_one_timeout_in_the_few_token_walks(built, devices, schedule):
    """M = 128 at TP = 2 (64 rows a stage). Reduce-scatter walks one hop, so the wait inside a kernel is the REDUCE's,
    on the peer's tile flags, after the GEMM: it gives up with the rest (runtime/src/one_hop.h). All-gather walks
    gathered, its GEMM pulling the peers' shards after the start barrier (copy_plan.h): it gives up with it. Not the
    D probe of check_one_timeout_per_call: the pulling GEMM never starts ahead of the start barrier. Across GPUs the
    pulls refuse a shard in pool memory, which the peer's GPU may not read (tests/gpu/test_timeout.c)."""
    base = ["gpu_timeout", "300", "--few-tokens", *devices] + ([schedule] if schedule == "--allgather" else [])
    for overlap in (False, True):
        out = run_passing(base + (["--overlap-barriers"] if overlap else []), timeout=120)
        assert 0.3 <= parse_missing_peer_wait(out) < 0.5, (overlap, out)
        assert "late peer: TPG_ERR_TIMEOUT" in out, out
        if schedule == "--allgather" and not devices and not overlap:  # the GEMM pulls across GPUs: a pooled shard
            assert "rank 0's A in pool memory -> TPG_ERR_INVALID_ARGUMENT" in out, out  # refused, not a fault


# TP degrees across GPUs: each case needs that many (the 4- and 8-GPU machines run theirs, issues 6 and 7)
ACROSS_GPUS = [pytest.param(tp, marks=needs_gpus(tp), id=f"tp{tp}") for tp in (2, 4, 8)]


@pytest.mark.parametrize("tp", ACROSS_GPUS)
def test_every_call_with_new_operands_matches_the_reference(built, tp):
    """Back-to-back calls of every schedule, new A and B each call, each D checked; between calls the barriers
    beside the GEMM go on and off, the all-gather copies are cut into pieces and the gathered walk's GEMM stops and
    starts pulling its shards itself (tests/gpu/test_epochs.c)."""
    assert f"{EPOCH_RUNS} passed, 0 failed" in run_passing(["gpu_epochs", str(tp)], timeout=180)


@needs_gpus(1)
@pytest.mark.parametrize("tp", [2, 4])
def test_every_call_with_new_operands_matches_the_reference_on_a_shared_device(built, tp):
    out = run_passing(["gpu_epochs", str(tp), "--share-device"], timeout=180)
    assert f"{EPOCH_RUNS} passed, 0 failed" in out
    # ranks on one device given one stream (or the legacy one beside a blocking one) refused, every schedule
    assert out.count("one stream for ranks on one device: TPG_ERR_INVALID_ARGUMENT") == EPOCH_RUNS, out


@pytest.mark.parametrize("tp", ACROSS_GPUS)
def test_captured_calls_match_the_reference(built, tp):
    """gpu_epochs --capture: each call recorded by stream capture and launched from the caller's graph, then every
    captured graph launched again on new operands after the op changed mode (the epochs come from the device)."""
    out = run_passing(["gpu_epochs", str(tp), "--capture"], timeout=180)
    assert f"{EPOCH_RUNS} passed, 0 failed" in out and "(captured, launched again): max error" in out


@needs_gpus(1)
@pytest.mark.parametrize("tp", [2, 4])
def test_captured_calls_match_the_reference_on_a_shared_device(built, tp):
    out = run_passing(["gpu_epochs", str(tp), "--share-device", "--capture"], timeout=180)
    assert f"{EPOCH_RUNS} passed, 0 failed" in out and "(captured, launched again): max error" in out


def run_torch_script(name: str, calls: int):
    """tests/gpu/<name> (torch and the binding, ranks sharing GPU 0): exit 0 and every one of its `calls` passed."""
    import importlib.util
    if importlib.util.find_spec("torch") is None:
        skip_unless_required("torch is not installed (the GPU machine has it)")
    out = subprocess.run(["python3", str(ROOT / "tests/gpu" / name)], cwd=ROOT, capture_output=True, text=True,
                         timeout=240, env=shared_env())
    print(out.stdout, out.stderr)
    assert out.returncode == 0 and f"{calls} passed, 0 failed" in out.stdout, out.stdout + out.stderr


@needs_gpus(1)
def test_ops_inside_torch_cuda_graphs_on_a_shared_device(built):
    """tests/gpu/torch_capture.py (every rank on GPU 0, so run_all.sh leaves it to its one-GPU rehearsal): ops
    captured by torch.cuda.graph (torch's own CUDA runtime and capture mode),
    both modes, replays and direct calls in turn on fresh operands, each checked against torch's product."""
    run_torch_script("torch_capture.py", calls=14)


@needs_gpus(1)
def test_binding_runs_whole_ops_with_scalars_and_pdl_on_a_shared_device(built):
    """tests/gpu/binding_calls.py: Op.run with torch streams and with the context's, Op.set_scalars with C and back,
    Op.set_pdl at TP = 1; TP = 2 with both ranks on GPU 0; every call against torch's alpha * A @ B.T + beta * C."""
    run_torch_script("binding_calls.py", calls=20)


def check_every_rank_passed(stdout: str, tp: int, runs: int = EPOCH_RUNS):
    """runs: gpu_epochs' schedules, EPOCH_RUNS_NCCL over NCCL."""
    for r in range(tp):
        assert f"rank {r}: {runs} passed, 0 failed" in stdout


@pytest.mark.parametrize("tp", ACROSS_GPUS)
def test_every_call_with_new_operands_matches_the_reference_one_process_per_rank(built, tp):
    """gpu_epochs in multi-process mode: odd ranks make each change a call later, so the ranks' modes differ."""
    check_every_rank_passed(run_passing(["gpu_epochs", str(tp), "--processes"], timeout=300), tp)


@needs_gpus(1)
@pytest.mark.parametrize("tp", [2, 4])
def test_every_call_with_new_operands_matches_the_reference_one_process_per_rank_on_a_shared_device(built, tp):
    check_every_rank_passed(run_passing(["gpu_epochs", str(tp), "--share-device", "--processes"], timeout=300), tp)


@needs_gpus(1)
def test_captured_calls_one_process_per_rank_on_a_shared_device(built):
    """Each process captures its own rank's calls, as a framework's CUDA graph would."""
    check_every_rank_passed(run_passing(["gpu_epochs", "2", "--share-device", "--processes", "--capture"],
                                        timeout=300), 2)


@needs_gpus(1)
def test_back_to_back_pdl_calls_match_synchronized_chain(built):
    """tests/gpu/test_pdl_chain.c: each call reads the previous call's D as its A."""
    stdout = run_passing(["gpu_pdl_chain"], timeout=300)
    assert "PASSED" in stdout and " 0 of " in stdout


def late_ranks(tp):
    return range(1, tp)


def check_multiprocess_run(stdout, tp):
    assert stdout.count("a NULL desc on rank 1 ->") == tp and "PASSED" in stdout
    assert stdout.count("tpg_op_set_rs_ring with rank 1 asking otherwise -> TPG_ERR_INVALID_ARGUMENT") == tp
    # over the peer transport a rank's copy cut is its own: ranks cutting differently then check step 3's output
    assert stdout.count("tpg_op_set_copy_chunks with rank 1 cutting otherwise -> TPG_OK") == tp
    assert stdout.count("seed 1001: max error") == tp  # every rank checked the replaced tensors
    assert "rank 0: missing peer -> TPG_ERR_TIMEOUT" in stdout
    for r in late_ranks(tp):
        assert f"rank {r}: late peer -> TPG_ERR_TIMEOUT" in stdout, stdout
    assert stdout.count("gave up") >= tp - 1
    assert "rank 0: second op queued behind a timed-out one -> TPG_ERR_TIMEOUT" in stdout, stdout
    assert stdout.count("bootstrap all-gather failed in tpg_op_create -> TPG_ERR_BOOTSTRAP") == tp, stdout
    assert stdout.count("seed 2002: max error") == tp  # the fresh context after the timeout


@pytest.mark.parametrize("tp", ACROSS_GPUS)
def test_processes_bad_args_fail_every_rank_new_tensors_replace_old_and_a_missing_peer_times_out(built, tp):
    """tests/gpu/test_multiprocess.c: forked ranks with a shared-memory all-gather, a process per GPU."""
    check_multiprocess_run(run_passing(["gpu_multiprocess", "--tp", str(tp)], timeout=120), tp)


@needs_gpus(1)
@pytest.mark.parametrize("tp", [2, 4])
def test_processes_on_a_shared_device(built, tp):
    """The same steps with every process on device 0 (tpg_rank_config.share_devices): IPC handles,
    cross-process flags, barriers and the late peers' notice, on one GPU."""
    stdout = run_passing(["gpu_multiprocess", "--tp", str(tp), "--share-device"], timeout=120)
    check_multiprocess_run(stdout, tp)
    assert stdout.count("one GPU without share_devices -> TPG_ERR_") == tp and "its own device" in stdout


@needs_gpus(2)
@pytest.mark.parametrize("schedule", ["AllGather1D_TilingCD_RotatingA", "ReduceScatter1D_TilingB_RotatingC"])
def test_cli_small_problem_passes_check(built, schedule):
    out = subprocess.run([str(ROOT / "build/tpgemm"), "--schedule", schedule, "--tp", "2", "--m", "1024",
                          "--n", "2048", "--k", "512", "--iterations", "3", "--warmup-iterations", "1"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Disposition: Passed" in out.stdout


SCHEDULES = ["AllGather1D_TilingCD_RotatingA", "AllGather1D_TilingCD_RotatingB", "ReduceScatter1D_TilingA_RotatingC",
             "ReduceScatter1D_TilingB_RotatingC"]


@needs_gpus(1)
@pytest.mark.parametrize("tp", [2, 4])
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_fused_schedule_on_a_shared_device_passes_check(built, schedule, tp):
    """Every rank on device 0 (--share-device): the fused walk, its copies and flags, checked on one GPU."""
    out = subprocess.run([str(ROOT / "build/tpgemm"), "--share-device", "--schedule", schedule, "--tp", str(tp),
                          "--m", "2048", "--n", "3072", "--k", "1024", "--iterations", "3", "--warmup-iterations",
                          "1", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300, env=shared_env())
    assert out.returncode == 0, out.stdout + out.stderr
    rec = json.loads(out.stdout)
    assert rec["check"] == "passed" and rec["shared_device"] is True and rec["devices"] == [0] * tp
    assert rec["host_launch_ms"] > 0 and rec["avg_ms"] > 0  # the host's cost of a call's launches is reported


def check_fails_only_when_d_is_corrupted(problem, full_check, timeout):
    """build/tpgemm on `problem` at TP = 2 on one GPU, twice: as it is, the check passes (checking the whole output
    or a sample, as `full_check` says); with TPG_CLI_DIAG_CORRUPT_D=1 (run.c: rank 1's D partly overwritten after the
    checked call) it fails with exit 1."""
    args = [str(ROOT / "build/tpgemm"), "--share-device", "--tp", "2", *problem, "--iterations", "1",
            "--warmup-iterations", "1", "--json"]
    good = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=shared_env())
    assert good.returncode == 0, good.stdout + good.stderr
    rec = json.loads(good.stdout)
    assert rec["check"] == "passed" and rec["full_check"] is full_check and rec["checked_elements"] > 0, rec
    bad = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                         env=shared_env({**os.environ, "TPG_CLI_DIAG_CORRUPT_D": "1"}))
    assert bad.returncode == 1 and "rank 1's D is overwritten" in bad.stderr, bad.stdout + bad.stderr
    rec = json.loads(bad.stdout)
    assert rec["check"] == "failed" and rec["full_check"] is full_check and rec["max_error"] > rec["eps"], rec


@needs_gpus(1)
def test_the_reference_check_fails_a_wrong_d(built):
    """The check's negative control (every tier-2 and GPU pytest verdict rests on it): TPG_CLI_DIAG_CORRUPT_D=1
    overwrites 8 elements (and rows 32..63) of rank 1's D after the checked call, on a problem small enough to be
    checked whole; the same run without it passes, with a negative alpha and beta (whose signs the op and the
    reference share)."""
    check_fails_only_when_d_is_corrupted(["--m", "256", "--n", "512", "--k", "256", "--alpha", "-0.75", "--beta",
                                          "-0.5"], full_check=True, timeout=120)


@needs_gpus(1)
def test_the_sampled_reference_check_fails_a_wrong_band_of_d(built):
    """The negative control of the sampled check (one row of every 32-row band: the anchors' size): the hook also
    overwrites rows 32..63 of rank 1's D whole, which a row of the band's sample must read; the same run without it
    passes a sampled check."""
    check_fails_only_when_d_is_corrupted(["--m", "16384", "--n", "8192", "--k", "1024"], full_check=False, timeout=300)


SHARED_CONFIG_CASES = [  # (config, or family_tp<N>:route - tests/routes.py; extra args; largest error expected)
    # fp32 partials: one rounding whatever the TP; batches, alpha, beta with C, and a last chunk of 24 columns
    # (its second fp32 half is skipped: N % 64 = 24 for TilingA, stage N % 64 = 24 for TilingB at TP = 8)
    ("rs_tila_bf16_f32p_tp4", ["--m", "2048", "--n", "2776", "--k", "1024", "--l", "2", "--alpha", "0.5", "--beta",
                               "-0.75"], 6e-3),
    ("rs_tilb_bf16_f32p_tp8", ["--m", "2048", "--n", "2752", "--k", "2048", "--l", "2", "--alpha", "0.5", "--beta",
                               "-0.75"], 6e-3),
    ("rs_tila_bf16_wide_f32p_tp2", ["--m", "2048", "--n", "2776", "--k", "4096", "--l", "2", "--alpha", "0.5", "--beta",
                                    "-0.75"], 6e-3),
    ("rs_tilb_bf16_wide_f32p_tp4", ["--m", "4096", "--n", "8192", "--k", "8192"], 6e-3),
    # fused e4m3 with per-tensor scales whose product is not 1 (0.5 x 2 would pass a route that drops them):
    # reduce-scatter at TP = 8, all-gather with batches and C at TP = 4
    ("rs_tila_e4m3_tp8", ["--m", "2048", "--n", "3072", "--k", "2048", "--scale-a", "0.75", "--scale-b", "3"], None),
    ("ag_rotb_e4m3_wide_tp4", ["--m", "2048", "--n", "3072", "--k", "8192", "--l", "2", "--beta", "-0.75", "--scale-a",
                               "1.5", "--scale-b", "0.25"], None),
    # all-gather copies in pieces (--copy-chunks; equal whole-tile pieces, so possibly fewer than asked): shards
    # of 1000 rows (not whole tiles) in two batches, 4 and 6 pieces; 32 pieces of 128 rows (flag word 31) at TP = 8
    ("ag_rota_bf16_wide_tp4", ["--m", "4000", "--n", "4000", "--k", "1024", "--l", "2", "--beta", "-0.75",
                               "--copy-chunks", "5"], None),
    ("ag_rotb_bf16_tp2", ["--m", "2000", "--n", "2000", "--k", "1024", "--l", "2", "--copy-chunks", "7"], None),
    ("ag_rota_bf16_tp8", ["--m", "32768", "--n", "6144", "--k", "2048", "--copy-chunks", "32"], None),
    # the barriers beside the GEMM (--overlap-barriers): the GEMM's epoch from each launch, all-gather's closing
    # barrier after the copies only; both comms, the cooperative and ping-pong kernels, pieces too
    ("ag_rota_bf16_wide_tp4", ["--m", "4096", "--n", "6144", "--k", "2048", "--copy-chunks", "3", "--overlap-barriers"],
     None),
    ("ag_rotb_bf16_tp2", ["--m", "2048", "--n", "4096", "--k", "1024", "--l", "2", "--overlap-barriers"], None),
    ("rs_tila_bf16_tp8:push", ["--m", "4096", "--n", "2048", "--k", "4096", "--beta", "-0.75", "--overlap-barriers"],
     None),
    ("rs_tilb_bf16_wide_tp2:push", ["--m", "2048", "--n", "4096", "--k", "8192", "--overlap-barriers"], None),
    # copy-engine partials (copy_engine_partials): the chains' bands across two batches with a ragged last chunk,
    # both kernels, TP = 2 / 4 / 8, the barriers beside the GEMM (the chain then waits for the start barrier itself)
    ("rs_tila_bf16_tp2:ce", ["--m", "2048", "--n", "2776", "--k", "4096", "--l", "2", "--alpha", "0.5", "--beta",
                             "-0.75"], None),
    ("rs_tilb_bf16_wide_tp4:ce", ["--m", "4096", "--n", "8192", "--k", "8192"], None),
    ("rs_tila_bf16_wide_tp2:ce", ["--m", "3072", "--n", "4096", "--k", "8192", "--l", "2", "--overlap-barriers"], None),
    ("rs_tilb_bf16_tp8:ce", ["--m", "4096", "--n", "2048", "--k", "4096", "--beta", "-0.75", "--overlap-barriers"],
     None),
]


@needs_gpus(1)
@pytest.mark.parametrize("config,args,max_err", SHARED_CONFIG_CASES,
                         ids=[c[0] + ("-overlap" if "--overlap-barriers" in c[1] else "") for c in SHARED_CONFIG_CASES])
def test_fused_config_on_a_shared_device_passes_check(built, config, args, max_err):
    """Configs no default pick runs (fp32 partials, fused e4m3) and the reduce-scatter routes of partials (pushed,
    by copy engine: whichever the defaults take) through the whole runtime, ranks on one GPU."""
    name, _, route = config.partition(":")
    out = subprocess.run([str(ROOT / "build/tpgemm"), "--share-device", "--config",
                          routes.on_route(name, route) if route else name, *args, "--iterations", "3",
                          "--warmup-iterations", "1", "--json"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env=shared_env())
    assert out.returncode == 0, out.stdout + out.stderr
    rec = json.loads(out.stdout)
    assert rec["check"] == "passed" and rec["deterministic"] is True, rec
    if max_err is not None:
        assert rec["max_error"] <= max_err, rec


@needs_gpus(1)
def test_copy_engine_partials_on_a_shared_device_need_32_queues(built):
    """With fewer than 32 hardware queues ranks sharing a GPU could queue a GEMM behind another rank's copy-chain wait
    (runtime/src/ce_partials.c): the op is refused with the reason, exit 2, instead of hanging to a timeout. The CLI's
    --share-device asks for 32 itself where the environment leaves CUDA_DEVICE_MAX_CONNECTIONS unset: that run
    passes."""
    base = {k: v for k, v in os.environ.items() if k != "CUDA_DEVICE_MAX_CONNECTIONS"}
    cmd = [str(ROOT / "build/tpgemm"), "--share-device", "--config", routes.on_route("rs_tila_bf16_tp2", "ce"), "--m",
           "2048", "--n", "2048", "--k", "1024", "--iterations", "1", "--warmup-iterations", "0"]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**base, "CUDA_DEVICE_MAX_CONNECTIONS": "8"})
    said = out.stdout + out.stderr
    assert out.returncode == 2 and "need CUDA_DEVICE_MAX_CONNECTIONS=32" in said and "(it is 8)" in said, said
    # the check was asked for and never ran: not "skipped (--no-check)"
    assert "Disposition: not checked (the run stopped before its check ended" in said, said
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, env=base)
    assert out.returncode == 0, out.stdout + out.stderr
    # 64 rows a stage take the one-hop walk, which builds no chain: run with 8 queues and checked; keeping the ring
    # there (--rs-ring) brings the chains back, and with them the refusal
    few = cmd[:cmd.index("--m") + 1] + ["128"] + cmd[cmd.index("--m") + 2:]
    out = subprocess.run(few, cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**base, "CUDA_DEVICE_MAX_CONNECTIONS": "8"})
    assert out.returncode == 0 and "Disposition: Passed" in out.stdout, out.stdout + out.stderr
    out = subprocess.run(few + ["--rs-ring"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**base, "CUDA_DEVICE_MAX_CONNECTIONS": "8"})
    said = out.stdout + out.stderr
    assert out.returncode == 2 and "tpg_op_set_rs_ring" in said and "(it is 8)" in said, said


@needs_gpus(1)
def test_back_to_back_calls_on_a_shared_device_skip_the_copy_engine_runs_without_32_queues(built):
    """gpu_epochs --share-device in an environment without 32 queues (a user's, or Megatron-LM's one queue): the three
    copy-engine runs are skipped with the reason, every other run passes and the exit status is 0."""
    env = {**{k: v for k, v in os.environ.items() if k != "CUDA_DEVICE_MAX_CONNECTIONS"},
           "CUDA_DEVICE_MAX_CONNECTIONS": "1"}
    out = subprocess.run([str(ROOT / "build/tests/gpu_epochs"), "2", "--share-device"], cwd=ROOT, capture_output=True,
                         text=True, timeout=180, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"{EPOCH_RUNS - 3} passed, 0 failed, 3 skipped" in out.stdout, out.stdout
    assert out.stderr.count("skipped: copy-engine partials with every rank on one GPU need") == 3, out.stderr


# ---- the NCCL transport (tpg_rank_config.transport = TPG_TRANSPORT_NCCL) ------------------------------------------


def nccl_library():
    """The libnccl.so.2 the NCCL transport's tests load: TPG_NCCL_LIBRARY, else the one PyTorch installs (the
    nvidia-nccl package), else a system libnccl; None without any."""
    if os.environ.get("TPG_NCCL_LIBRARY"):
        return os.environ["TPG_NCCL_LIBRARY"]
    import ctypes.util
    import importlib.util
    try:
        spec = importlib.util.find_spec("nvidia.nccl")
    except ImportError:
        spec = None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        if (Path(folder) / "lib" / "libnccl.so.2").exists():
            return str(Path(folder) / "lib" / "libnccl.so.2")
    return "libnccl.so.2" if ctypes.util.find_library("nccl") else None


def nccl_env():
    lib = nccl_library()
    if lib is None:
        skip_unless_required("NCCL is not installed: no TPG_NCCL_LIBRARY, no nvidia-nccl package, no libnccl.so.2")
    return {**os.environ, "TPG_NCCL_LIBRARY": lib}


@needs_gpus(1)
def test_transfer_flag_kernel(built):
    """tests/gpu/test_transfer_flags.c: the NCCL transport's waits and raises, the verdict a sender writes after its
    partial and what a receiver does with an incomplete one, and the epoch's wrap."""
    out = run_passing(["gpu_transfer_flags"], timeout=60)
    assert "PASSED" in out and out.count(" ok (") == 8


@needs_gpus(1)
def test_closing_barrier_notice_across_the_epoch_range(built):
    """tests/gpu/test_barrier_epochs.c: a notice no give-up raised is not "ahead" at epoch 2^31 + 1 (every call failed
    from there), nor at the wrap; a give-up is heard, also when the peer's notice sits just before the wrap; the start
    barrier moves a give-up word 2^31 launches old up and keeps a fresh one."""
    out = run_passing(["gpu_barrier_epochs"], timeout=60)
    assert "PASSED" in out and out.count(" ok (") == 8


@needs_gpus(1)
@pytest.mark.parametrize("tp,extra", [(2, []), (4, []), (2, ["--capture"]), (8, [])])
def test_nccl_transport_every_call_matches_the_reference_on_a_shared_device(built, tp, extra):
    """gpu_epochs over the NCCL transport, a process per rank on one GPU, each its own NCCL host (loopback sockets):
    every schedule, new operands every call, each rank's D checked; captured into the caller's graphs too."""
    out = run_passing(["gpu_epochs", str(tp), "--share-device", "--processes", "--nccl", *extra], timeout=300,
                      env=nccl_env())
    check_every_rank_passed(out, tp, runs=EPOCH_RUNS_NCCL)
    # captured: one graph outlived the context, whose destroy returned all the same (NCCL's own waits for the graph)
    assert out.count("tpg_ctx_destroy returned in") == (tp if "--capture" in extra else 0), out


def check_nccl_multiprocess_run(stdout, tp):
    assert stdout.count("a NULL desc on rank 1 ->") == tp and "PASSED" in stdout
    # one rank refusing NCCL before joining fails every rank's context (none waits in ncclCommInitRank)
    assert stdout.count("NCCL_MIN_CTAS=64 on rank 1 -> TPG_ERR_NCCL") == tp, stdout
    assert stdout.count("tpg_op_set_rs_ring with rank 1 asking otherwise -> TPG_ERR_INVALID_ARGUMENT") == tp
    # over NCCL each piece is a message: the cut is collective, different cuts fail every rank (then alike, 2 pieces)
    assert stdout.count("tpg_op_set_copy_chunks with rank 1 cutting otherwise -> TPG_ERR_INVALID_ARGUMENT") == tp
    assert stdout.count("seed 1001: max error") == tp
    assert "rank 0: missing peer -> TPG_ERR_TIMEOUT" in stdout and "communicator was aborted" in stdout
    # a late rank either received rank 0's (complete) partial, then its D was checked, or it timed out too
    for r in late_ranks(tp):
        assert (f"rank {r}: late peer -> TPG_OK" in stdout and f"rank {r} seed 4242: max error" in stdout) or \
            f"rank {r}: late peer -> TPG_ERR_TIMEOUT" in stdout, stdout
    # the second of two ops on one stream, synced alone behind the first's missing peer: bounded, the cause named
    assert "rank 0: second op queued behind a timed-out one -> TPG_ERR_TIMEOUT" in stdout, stdout
    assert stdout.count("bootstrap all-gather failed in tpg_op_create -> TPG_ERR_BOOTSTRAP") == tp, stdout
    assert stdout.count("seed 2002: max error") == tp  # a fresh context after the abort


@needs_gpus(1)
def test_nccl_transport_missing_peer_on_a_shared_device(built):
    """gpu_multiprocess --nccl: a missing peer ends in TPG_ERR_TIMEOUT within the bound plus the abort's grace (the
    communicator is aborted: NCCL never times out), and a fresh context works."""
    check_nccl_multiprocess_run(run_passing(["gpu_multiprocess", "--share-device", "--nccl"], timeout=120,
                                            env=nccl_env()), 2)


@needs_gpus(2)
@pytest.mark.parametrize("extra,env", [([], {}), (["--capture"], {}), ([], {"NCCL_P2P_DISABLE": "1"})],
                         ids=["nvlink", "captured", "p2p-disabled"])
def test_nccl_transport_every_call_matches_the_reference(built, extra, env):
    """Across GPUs NCCL gives a peer over NVLink 4-8 channels (over loopback, as on one GPU, 2): its kernels must find
    SMs beside the persistent GEMM, unclustered (nccl.c), in the calls captured into the caller's graphs too; with
    NCCL_P2P_DISABLE=1 NCCL goes through host memory, as between GPUs without peer access."""
    out = run_passing(["gpu_epochs", "2", "--processes", "--nccl", *extra], timeout=300, env={**nccl_env(), **env})
    check_every_rank_passed(out, 2, runs=EPOCH_RUNS_NCCL)
    assert out.count("tpg_ctx_destroy returned in") == (2 if "--capture" in extra else 0), out


@pytest.mark.parametrize("tp", ACROSS_GPUS)
def test_nccl_transport_missing_peer(built, tp):
    check_nccl_multiprocess_run(run_passing(["gpu_multiprocess", "--tp", str(tp), "--nccl"], timeout=120,
                                            env=nccl_env()), tp)
