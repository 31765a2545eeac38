"""Tier 1 (no GPU): behaviour of build/tpgemm without a GPU: the plan (--dry-run, text and JSON), strict
argument errors (exit 2), unknown configs (exit 2), shape errors (exit 2), the "needs N Hopper GPUs"
message after the plan (exit 3) and --list."""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import TPGEMM

ROOT = Path(__file__).resolve().parents[1]

SCHEDULES = {
    "AllGather1D_TilingCD_RotatingA": "ag_rota",
    "AllGather1D_TilingCD_RotatingB": "ag_rotb",
    "ReduceScatter1D_TilingA_RotatingC": "rs_tila",
    "ReduceScatter1D_TilingB_RotatingC": "rs_tilb",
}


@pytest.fixture(scope="module")
def tpgemm():
    if not TPGEMM.exists() and shutil.which("ninja"):
        subprocess.run(["ninja", "-C", str(ROOT), "build/tpgemm"], capture_output=True, text=True)
    if not TPGEMM.exists():
        pytest.skip("build/tpgemm is missing and `ninja build/tpgemm` did not produce it "
                    "(tests/test_build.py reports why)")
    return TPGEMM


def run(exe, *args, gpus_hidden=True):
    env = dict(os.environ)
    if gpus_hidden:  # behave like the GPU-less CI machine even where a GPU exists
        env["CUDA_VISIBLE_DEVICES"] = ""
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=60)


def default_config(schedule, dtype, tp, k):
    """The config --schedule without --config runs (tpg_config_pick): schedules.yaml prefers the wide
    (128x256) config for every all-gather GEMM (prefer_from_local_k 1) and for reduce-scatter from a
    per-stage K (K/tp) of 10240 up, and at TP = 1 (the local GEMM) for every K (prefer_from_local_k_tp1 1); below
    that the first config by name, the ping-pong one."""
    wide = schedule.startswith("AllGather") or tp == 1 or k // tp >= 10240
    return f"{SCHEDULES[schedule]}_{dtype}{'_wide' if wide else ''}_tp{tp}"


def expected_entry(schedule, tp, d, s):
    """(block, peer, src_slot, dst_peer, dst_slot) from docs/ARCHITECTURE.md's table."""
    if schedule.startswith("AllGather"):
        return (d + s) % tp, (d + s) % tp, s - 1, -1, -1
    last = s == tp - 1
    return ((d - 1 - s) % tp, -1 if s == 0 else (d - 1) % tp, s - 1,
            -1 if last else (d + 1) % tp, -1 if last else s)


@pytest.mark.parametrize("tp", [2, 4])
@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
def test_dry_run_text_lists_stages_and_peers(tpgemm, schedule, tp):
    r = run(tpgemm, "--dry-run", "--schedule", schedule, "--tp", str(tp), "--m", "4096", "--n", "8192",
            "--k", "2048")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert f"Plan: {default_config(schedule, 'bf16', tp, 2048)}\n" in out
    assert schedule in out
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 7 and all(x.lstrip("-").isdigit() for x in f[:7]):
            rows[int(f[0]), int(f[1])] = tuple(int(x) for x in f[2:7])
    assert len(rows) == tp * tp
    for d in range(tp):
        for s in range(tp):
            block, peer, src, dst_peer, dst_slot = expected_entry(schedule, tp, d, s)
            assert rows[d, s] == (block, peer, src, dst_peer, dst_slot), (d, s)
    assert "Local GEMM Problem Size (per stage):" in out
    assert "Bytes moved per device per call" in out
    assert "Graph nodes per device" in out


@pytest.mark.parametrize("tp", [2, 4])
@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
def test_dry_run_json_parses(tpgemm, schedule, tp):
    m, n, k = 4096, 8192, 2048
    r = run(tpgemm, "--dry-run", "--json", "--schedule", schedule, "--tp", str(tp), "--dtype", "fp16",
            f"--m={m}", f"--n={n}", f"--k={k}")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert plan["schedule"] == schedule and plan["tp"] == tp
    assert plan["config"] == default_config(schedule, "fp16", tp, k)
    assert plan["problem"] == {"m": m, "n": n, "k": k, "l": 1}
    for e in plan["stages"]:
        assert (e["block"], e["peer"], e["src_slot"], e["dst_peer"], e["dst_slot"]) == \
            expected_entry(schedule, tp, e["device"], e["stage"])
    ag = schedule.startswith("AllGather")
    stage = plan["stage_gemm"]
    if ag:
        assert stage["k"] == k and stage["m"] * stage["n"] * tp * tp == m * n
        rotating = plan["shards"]["a" if schedule.endswith("RotatingA") else "b"]
        assert plan["bytes_moved_per_device"] == (tp - 1) * rotating[0] * rotating[1] * 2
        assert len(plan["graph"][0]["nodes"]) == 2 * tp + 1
    else:
        assert stage["k"] == k // tp and stage["m"] * stage["n"] * tp == m * n
        assert plan["bytes_moved_per_device"] == (tp - 1) * stage["m"] * stage["n"] * 2
        assert [x["kind"] for x in plan["graph"][0]["nodes"]] == ["BARRIER_START", "GEMM", "BARRIER_END"]
    assert plan["flops_per_device"] == pytest.approx(2 * m * n * k / tp)


@pytest.mark.parametrize("tp", [2, 8])
def test_few_rows_of_reduce_scatter_are_one_hop_unless_kept_a_ring(tpgemm, tp):
    """64 rows a stage or fewer: one GEMM of every row and a REDUCE before the closing barrier, tp slots; --rs-ring
    the ring with the same buffers; 65 rows a stage the ring."""
    base = ("--dry-run", "--json", "--schedule", "ReduceScatter1D_TilingA_RotatingC", "--tp", str(tp), "--n", "4096",
            "--k", "4096")
    hop = json.loads(run(tpgemm, *base, "--m", str(64 * tp)).stdout)
    ring = json.loads(run(tpgemm, *base, "--m", str(64 * tp), "--rs-ring").stdout)
    wider = json.loads(run(tpgemm, *base, "--m", str(65 * tp + 7 * tp)).stdout)
    assert hop["one_hop"] and not ring["one_hop"] and not wider["one_hop"]
    assert [x["kind"] for x in hop["graph"][0]["nodes"]] == ["BARRIER_START", "GEMM", "REDUCE", "BARRIER_END"]
    assert [x["kind"] for x in ring["graph"][0]["nodes"]] == ["BARRIER_START", "GEMM", "BARRIER_END"]
    assert hop["buffers_per_device"] == ring["buffers_per_device"] and hop["buffers_per_device"]["slots"] == tp
    assert wider["buffers_per_device"]["slots"] == tp - 1
    assert hop["bytes_moved_per_device"] == ring["bytes_moved_per_device"]
    assert "--rs-ring" in run(tpgemm, "--help").stdout


@pytest.mark.parametrize("schedule", ["AllGather1D_TilingCD_RotatingA", "AllGather1D_TilingCD_RotatingB"])
def test_copy_chunks_cut_the_copies_in_the_plan(tpgemm, schedule):
    """--copy-chunks N: every COPY and FLAG node becomes N pieces (whole tiles of the rotating operand's rows),
    the copies one after another, flag c after piece c and after flag c - 1, and the closing barrier after
    the last flag (runtime/src/copy_plan.h)."""
    tp, m, n, k = 4, 8192, 6144, 4096
    r = run(tpgemm, "--dry-run", "--json", "--schedule", schedule, "--tp", str(tp), "--copy-chunks", "3",
            f"--m={m}", f"--n={n}", f"--k={k}")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    rotating = plan["shards"]["a" if schedule.endswith("RotatingA") else "b"]
    tile = plan["kernel"]["bm" if schedule.endswith("RotatingA") else "bn"]
    cut = plan["copy"]
    assert cut["chunks"] == 3 and cut["chunk_rows"] % tile == 0
    assert cut["chunk_rows"] * (cut["chunks"] - 1) < rotating[0] <= cut["chunk_rows"] * cut["chunks"]
    assert cut["chunk_bytes"] == cut["chunk_rows"] * rotating[1] * 2
    for dev in plan["graph"]:
        nodes = dev["nodes"]
        assert len(nodes) == 3 + 2 * 3 * (tp - 1)
        copies = [x for x in nodes if x["kind"] == "COPY"]
        flags = [x for x in nodes if x["kind"] == "FLAG"]
        assert [(x["stage"], x["piece"]) for x in copies] == [(s, c) for s in range(1, tp) for c in range(3)]
        for x in copies[1:]:
            assert x["deps"] == [x["index"] - 1] or nodes[x["deps"][0]]["kind"] == "FLAG"
        for x in flags:
            piece = next(c for c in copies if (c["stage"], c["piece"]) == (x["stage"], x["piece"]))
            assert x["deps"][0] == piece["index"]
            assert x["piece"] == 0 or nodes[x["deps"][1]]["kind"] == "FLAG"
        end = nodes[-1]
        assert end["kind"] == "BARRIER_END" and end["deps"][1] == flags[-1]["index"]
    text = run(tpgemm, "--dry-run", "--schedule", schedule, "--tp", str(tp), "--copy-chunks", "3",
               f"--m={m}", f"--n={n}", f"--k={k}")
    assert f"Copies cut into 3 pieces of {cut['chunk_rows']} rows" in text.stdout


def test_the_plan_says_where_fewer_copy_pieces_are_cut_than_asked(tpgemm):
    """A piece holds whole rows of tiles, and the gathered walk's GEMM pulls its shards: --copy-chunks then asks for
    pieces the plan does not cut, and the text says so (it printed the plan as if the flag were absent)."""
    few = run(tpgemm, "--dry-run", "--tp", "2", "--copy-chunks", "16", "--m", "512", "--n", "10240", "--k", "8192")
    assert few.returncode == 0 and "Copies cut into 2 pieces of 128 rows" in few.stdout, few.stderr
    assert "Copy pieces: 16 asked, 2 cut: a piece holds whole rows of tiles (128 rows here)" in few.stdout
    pulled = run(tpgemm, "--dry-run", "--tp", "2", "--copy-chunks", "4", "--m", "128", "--n", "10240", "--k", "8192")
    assert "Copy pieces: 4 asked: nothing is copied (the GEMM's CTAs pull the shards)" in pulled.stdout
    js = json.loads(run(tpgemm, "--dry-run", "--json", "--tp", "2", "--copy-chunks", "16", "--m", "512", "--n",
                        "10240", "--k", "8192").stdout)
    assert (js["copy"]["chunks"], js["copy"]["chunks_asked"]) == (2, 16)
    whole = run(tpgemm, "--dry-run", "--tp", "2", "--copy-chunks", "4", "--m", "16384", "--n", "10240", "--k", "8192")
    assert "Copies cut into 4 pieces" in whole.stdout and "Copy pieces:" not in whole.stdout


@pytest.mark.parametrize("config", ["ag_rota_bf16_tp4", "ag_rotb_bf16_wide_tp2", "rs_tila_bf16_tp2", "rs_tilb_bf16_tp8"])
def test_overlap_barriers_in_the_plan(tpgemm, config):
    """--overlap-barriers: the GEMM waits for no node; all-gather's closing barrier waits for the last flag (not
    the GEMM), reduce-scatter's for the GEMM and the start barrier; without the flag, the table's graph."""
    base = ["--dry-run", "--json", "--config", config, "--m", "8192", "--n", "8192", "--k", "8192"]
    plain = json.loads(run(tpgemm, *base).stdout)
    r = run(tpgemm, *base, "--overlap-barriers")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert plain["overlap_barriers"] == 0 and plan["overlap_barriers"] == 1
    for dev in plan["graph"]:
        nodes = dev["nodes"]
        kind = {n["kind"]: n for n in nodes}
        assert kind["GEMM"]["deps"] == []
        if config.startswith("ag"):
            last_flag = max(n["index"] for n in nodes if n["kind"] == "FLAG")
            assert kind["BARRIER_END"]["deps"] == [last_flag]
        else:
            assert sorted(kind["BARRIER_END"]["deps"]) == [kind["BARRIER_START"]["index"], kind["GEMM"]["index"]]
    for dev in plain["graph"]:
        assert {n["kind"]: n for n in dev["nodes"]}["GEMM"]["deps"] == [0]
    text = run(tpgemm, *[a for a in base if a != "--json"], "--overlap-barriers").stdout
    assert "barriers beside the GEMM" in text


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
@pytest.mark.parametrize("tp,k", [(2, 28672), (2, 20480), (2, 8192), (4, 28672), (1, 4096)])
def test_schedule_default_depends_on_the_problem_k(tpgemm, schedule, tp, k):
    """--schedule picks with the problem's K: reduce-scatter turns wide at K/tp >= 10240 (20480 at TP = 2
    is the bound itself; 28672 at TP = 4 is 7168 per stage, so ping-pong), all-gather is wide for any K, and so is
    reduce-scatter at TP = 1, the local GEMM."""
    r = run(tpgemm, "--dry-run", "--json", "--schedule", schedule, "--tp", str(tp), "--m", "4096", "--n", "8192",
            "--k", str(k))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["config"] == default_config(schedule, "bf16", tp, k)


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
@pytest.mark.parametrize("tp,m,n,k", [(2, 2048, 10240, 8192), (2, 512, 57344, 8192), (2, 512, 10240, 8192),
                                      (2, 16384, 10240, 8192), (4, 2048, 8192, 28672), (8, 8192, 6144, 4096),
                                      (1, 2048, 5120, 8192), (2, 1024, 8192, 4096), (2, 128, 10240, 8192),
                                      (2, 128, 8192, 8192), (2, 2048, 7168, 4096), (1, 1024, 9216, 16384),
                                      (2, 32, 8192, 8192), (1, 16, 8192, 4096), (8, 16, 8192, 28672),
                                      (4, 64, 4096, 4096)])
def test_schedule_default_with_the_whole_shape_is_the_generators(tpgemm, schedule, tp, m, n, k):
    """tpg_config_pick (C) and generator/models.py default_config (the dispatch rows, tune's baseline) pick
    alike with the shape's tile counts, on the 132 SMs assumed where no GPU is visible."""
    from generator import models
    doc = models.load(str(ROOT / "schedules.yaml"))
    r = run(tpgemm, "--dry-run", "--json", "--schedule", schedule, "--tp", str(tp), "--m", str(m), "--n", str(n),
            "--k", str(k))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["config"] == models.default_config(doc, schedule, tp, "bf16", k, m, n)


def test_the_pick_agrees_with_the_generator_on_a_seeded_sweep(tpgemm):
    """The wave check's arithmetic (fill x wave_weight, ties, the margin) in C and Python, on 120 shapes of few and
    many tokens over every schedule, TP 1..8 and both 16-bit dtypes, drawn with a fixed seed."""
    import random
    from generator import models
    doc = models.load(str(ROOT / "schedules.yaml"))
    rng = random.Random(20261202)
    schedules = ["AllGather1D_TilingCD_RotatingA", "AllGather1D_TilingCD_RotatingB",
                 "ReduceScatter1D_TilingA_RotatingC", "ReduceScatter1D_TilingB_RotatingC"]
    picked = set()
    for _ in range(120):
        tp, dtype, schedule = rng.choice([1, 2, 4, 8]), rng.choice(["bf16", "fp16"]), rng.choice(schedules)
        m = tp * rng.choice([16, 32, 64, 128, 256, 512, 1024, 2048, 4096]) * rng.choice([1, 3])
        n = 64 * tp * rng.choice([16, 40, 64, 96, 128, 224, 448])
        k = 64 * tp * rng.choice([16, 64, 128, 224])
        r = run(tpgemm, "--dry-run", "--json", "--schedule", schedule, "--tp", str(tp), "--dtype", dtype,
                "--m", str(m), "--n", str(n), "--k", str(k))
        assert r.returncode == 0, (schedule, tp, m, n, k, r.stderr)
        got = json.loads(r.stdout)["config"]
        assert got == models.default_config(doc, schedule, tp, dtype, k, m, n), (schedule, tp, dtype, m, n, k)
        picked.add(got.rsplit("_tp", 1)[0].split("_", 3)[-1])
    assert {"w160", "pp64", "wide"} <= picked  # the sweep reaches the wave-weighted tiles and the K rule's pick


def test_the_plan_shows_the_tile_waves_the_pick_reads(tpgemm):
    """70B-qkv at M = 2048, TP = 2: 320 wide tiles fill 81% of 3 waves of 132 SMs, the ping-pong pick's 640 97% of 5;
    the fill is the output's share of the tiles' slots, so half-empty tiles count half."""
    args = ["--dry-run", "--m", "2048", "--n", "10240", "--k", "8192"]
    wide = run(tpgemm, *args, "--config", "ag_rota_bf16_wide_tp2")
    pick = run(tpgemm, *args, "--schedule", "AllGather1D_TilingCD_RotatingA", "--tp", "2")
    assert "tile waves        2.42 of 132 SMs (320 tiles over 2 stages; the output fills 81% of 3 whole waves of tiles)" in wide.stdout
    assert "Plan: ag_rota_bf16_tp2\n" in pick.stdout
    assert "tile waves        4.85 of 132 SMs (640 tiles over 2 stages; the output fills 97% of 5 whole waves of tiles)" in pick.stdout
    # M = 512: 80 wide tiles (61% of one wave), the 128x160 pick's 128 97%
    small = run(tpgemm, "--dry-run", "--m", "512", "--n", "10240", "--k", "8192", "--tp", "2")
    assert "Plan: ag_rota_bf16_w160_tp2\n" in small.stdout
    assert "tile waves        0.97 of 132 SMs (128 tiles over 2 stages; the output fills 97% of 1 whole wave of tiles)" \
        in small.stdout
    # M = 128: two stages of 64 rows, gathered into one GEMM of 128 rows, which the ping-pong 64x128 tiles cut into
    # 80 (61% of a wave), the 128x128 into 40 (30%)
    tiny = ["--dry-run", "--m", "128", "--n", "10240", "--k", "8192", "--tp", "2"]
    assert "Plan: ag_rota_bf16_pp64_tp2\n" in run(tpgemm, *tiny).stdout
    half = run(tpgemm, *tiny, "--config", "ag_rota_bf16_tp2").stdout
    assert "(40 tiles of 2 stages gathered; the output fills 30% of 1 whole wave of tiles)" in half
    # M = 128 at TP = 8: stages of 16 rows, gathered: the 128x128 tiles fill 79% of a wave (stage after stage, 8 stages
    # of 52 wide tiles would fill 10% of 4 waves, and the wide tiles were the pick)
    eight = run(tpgemm, "--dry-run", "--m", "128", "--n", "106496", "--k", "16384", "--tp", "8").stdout
    assert "Plan: ag_rota_bf16_tp8\n" in eight
    assert "(104 tiles of 8 stages gathered; the output fills 79% of 1 whole wave of tiles)" in eight
    # L = 2 batches: twice the tiles and twice the output
    two = run(tpgemm, *args, "--l", "2", "--config", "ag_rota_bf16_tp2").stdout
    assert "tile waves        9.70 of 132 SMs (1280 tiles over 2 stages; the output fills 97% of 10 whole waves" in two


def test_default_dry_run_is_the_seed_problem(tpgemm):
    r = run(tpgemm, "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert plan["problem"] == {"m": 16384, "n": 106496, "k": 16384, "l": 1}
    assert plan["schedule"] == "AllGather1D_TilingCD_RotatingA"
    assert plan["tp"] == 2  # no GPU visible: TP = 2 for the plan
    assert plan["kernel"]["dtype_ab"] == "bf16"


def test_non_numeric_value_exits_2_naming_flag_and_value(tpgemm):
    r = run(tpgemm, "--m=abc")
    assert r.returncode == 2
    assert "tpgemm: --m expects a positive integer, got 'abc'" in r.stderr
    r = run(tpgemm, "--k", "12x", "--dry-run")
    assert r.returncode == 2 and "--k" in r.stderr and "'12x'" in r.stderr
    r = run(tpgemm, "--dtype", "fp32", "--dry-run")  # an output / partial type, not an operand type
    assert r.returncode == 2 and "--dtype expects bf16 or fp16 (or e4m3, e5m2), got 'fp32'" in r.stderr


def test_a_tile_walk_past_32_bits_is_refused(tpgemm):
    # rows x L < 2^31 holds, but the kernel's walk over 8 stages of these tiles would pass its int count (and its
    # per-CTA share would go negative: those CTAs would compute nothing); one batch fewer per 2^16 fits
    tiny = ("--dry-run", "--config", "ag_rota_bf16_tp8", "--m", "8", "--n", "64", "--k", "8")
    r = run(tpgemm, *tiny, "--l", "268435455")
    assert r.returncode == 2
    assert "8 stages x 268435455 tiles (128x128, batches included) = 2147483640 must be <= 2147418112" in r.stderr
    r = run(tpgemm, *tiny, "--l", "268427264")
    assert r.returncode == 0, r.stderr  # 8 x 268427264 = 2147418112, the limit itself


def test_unknown_flag_exits_2(tpgemm):
    r = run(tpgemm, "--frobnicate")
    assert r.returncode == 2 and "--frobnicate" in r.stderr


def test_unknown_config_exits_2_and_points_to_list(tpgemm):
    r = run(tpgemm, "--config", "no_such_config", "--dry-run")
    assert r.returncode == 2
    assert "no_such_config" in r.stderr and "--list" in r.stderr
    r = run(tpgemm, "--schedule", "Bogus", "--tp", "2", "--dry-run")
    assert r.returncode == 2 and "Bogus" in r.stderr and "--list" in r.stderr


def test_more_gpus_than_visible_prints_plan_then_exits_3(tpgemm):
    r = run(tpgemm, "--tp", "4", "--m", "4096", "--n", "4096", "--k", "1024")
    assert r.returncode == 3
    assert "Plan: ag_rota_bf16_wide_tp4\n" in r.stdout  # the default schedule is all-gather: wide
    assert "needs 4 Hopper (sm_90) GPUs" in r.stderr
    assert "0 CUDA devices are visible" in r.stderr and "--dry-run" in r.stderr


def test_default_run_without_gpu_exits_3(tpgemm):
    r = run(tpgemm)
    assert r.returncode == 3
    assert "needs 2 Hopper (sm_90) GPUs; 0 CUDA devices are visible" in r.stderr


def test_share_device_needs_one_gpu_not_tp(tpgemm):
    r = run(tpgemm, "--share-device", "--tp", "4", "--m", "4096", "--n", "4096", "--k", "1024")
    assert r.returncode == 3
    assert "Plan: ag_rota_bf16_wide_tp4\n" in r.stdout
    assert "needs 1 Hopper (sm_90) GPU; 0 CUDA devices are visible" in r.stderr


def test_repeated_device_needs_share_device(tpgemm):
    r = run(tpgemm, "--devices", "0,0", "--m", "4096", "--n", "4096", "--k", "1024", "--dry-run")
    assert r.returncode == 2 and "names device 0 twice" in r.stderr and "--share-device" in r.stderr
    r = run(tpgemm, "--devices", "0,0", "--share-device", "--m", "4096", "--n", "4096", "--k", "1024", "--dry-run")
    assert r.returncode == 0 and "Plan: ag_rota_bf16_wide_tp2\n" in r.stdout


def test_share_device_without_a_tp_degree_exits_2(tpgemm):
    r = run(tpgemm, "--share-device", "--m", "4096", "--n", "4096", "--k", "1024")
    assert r.returncode == 2 and "--share-device needs the TP degree" in r.stderr
    r = run(tpgemm, "--share-device", "--devices", "0,3", "--m", "4096", "--n", "4096", "--k", "1024")
    assert r.returncode == 3 and "needs 4 Hopper (sm_90) GPUs" in r.stderr  # ordinal 3 must be visible


def test_m_not_divisible_by_tp_exits_2(tpgemm):
    r = run(tpgemm, "--tp", "2", "--m", "1001", "--n", "1024", "--k", "256", "--dry-run")
    assert r.returncode == 2
    assert "M = 1001" in r.stderr and "tp = 2" in r.stderr
    assert r.stdout == ""


def test_fp8_configs_plan_and_scales(tpgemm):
    """fp8 configs: e4m3 / e5m2 in, bf16 out (the plan says so); --scale-a / --scale-b only for them; e4m3 at
    TP >= 2 picks by per-stage K as bf16 does; no e5m2 config at TP >= 2, which the pick says with the dtype
    named."""
    for dt in ("e4m3", "e5m2"):
        r = run(tpgemm, "--config", f"gemm_{dt}_wide_tp1", "--scale-a", "0.5", "--scale-b", "4", "--m", "4096",
                "--n", "4096", "--k", "4096", "--dry-run", "--json")
        assert r.returncode == 0, r.stderr
        kernel = json.loads(r.stdout)["kernel"]
        assert (kernel["dtype_ab"], kernel["dtype_cd"]) == (dt, "bf16")
    for k, picked in ((4096, "gemm_e4m3_tp1"), (8192, "gemm_e4m3_wide_tp1")):  # ping-pong below K 8192
        r = run(tpgemm, "--schedule", "AllGather1D_TilingCD_RotatingA", "--dtype", "e4m3", "--tp", "1", "--m", "4096",
                "--n", "4096", "--k", str(k), "--dry-run")
        assert r.returncode == 0 and f"Plan: {picked}\n" in r.stdout
    r = run(tpgemm, "--config", "ag_rota_bf16_tp1", "--scale-a", "2", "--dry-run")
    assert r.returncode == 2 and r.stdout == ""
    assert "--scale-a / --scale-b apply to fp8 configs only; ag_rota_bf16_tp1 has bf16 operands" in r.stderr
    r = run(tpgemm, "--scale-b", "x")
    assert r.returncode == 2 and f"--scale-b {FINITE}, got 'x'" in r.stderr
    r = run(tpgemm, "--config", "gemm_e4m3_tp1", "--scale-a", "1e30", "--scale-b", "1e30", "--dry-run")
    assert r.returncode == 2 and "overflows a float" in r.stderr
    r = run(tpgemm, "--model", "llama3-8b", "--scale-a", "2", "--dry-run")
    assert r.returncode == 2 and "not to a --model preset's layers" in r.stderr
    for sched, k, picked in (("AllGather1D_TilingCD_RotatingA", 4096, "ag_rota_e4m3_tp2"),
                             ("AllGather1D_TilingCD_RotatingA", 8192, "ag_rota_e4m3_wide_tp2"),
                             ("ReduceScatter1D_TilingA_RotatingC", 16384, "rs_tila_e4m3_tp2"),  # 8192 per stage
                             ("ReduceScatter1D_TilingA_RotatingC", 20480, "rs_tila_e4m3_wide_tp2")):
        r = run(tpgemm, "--schedule", sched, "--dtype", "e4m3", "--tp", "2", "--m", "4096", "--n", "4096", "--k",
                str(k), "--dry-run")
        assert r.returncode == 0 and f"Plan: {picked}\n" in r.stdout, (sched, k, r.stdout[:80], r.stderr)
    r = run(tpgemm, "--dtype", "e5m2", "--tp", "2", "--dry-run")
    assert r.returncode == 2 and "dtype e5m2 is generated at tp 2 (the generated ones have tp 1)" in r.stderr
    r = run(tpgemm, "--dtype", "e5m2", "--dry-run")  # no --tp: the largest generated that fits, TP 1 for e5m2
    assert r.returncode == 0 and "Plan: gemm_e5m2_wide_tp1\n" in r.stdout, r.stderr


def test_fp32_partial_configs_run_by_name_only(tpgemm):
    """partials: f32 is never a default pick; named, its plan says so and its slots hold fp32 partials."""
    r = run(tpgemm, "--schedule", "ReduceScatter1D_TilingA_RotatingC", "--tp", "8", "--m", "16384", "--n", "8192",
            "--k", "8192", "--dry-run")
    assert r.returncode == 0 and "Plan: rs_tila_bf16_tp8\n" in r.stdout
    plans = {}
    for cfg in ("rs_tila_bf16_tp8", "rs_tila_bf16_f32p_tp8"):
        r = run(tpgemm, "--config", cfg, "--m", "16384", "--n", "8192", "--k", "8192", "--dry-run", "--json")
        assert r.returncode == 0, r.stderr
        plans[cfg] = json.loads(r.stdout)
    assert plans["rs_tila_bf16_f32p_tp8"]["kernel"]["dtype_partial"] == "fp32"
    assert plans["rs_tila_bf16_tp8"]["kernel"]["dtype_partial"] == "bf16"
    assert plans["rs_tila_bf16_f32p_tp8"]["bytes_moved_per_device"] == 2 * plans["rs_tila_bf16_tp8"]["bytes_moved_per_device"]
    text = run(tpgemm, "--config", "rs_tila_bf16_f32p_tp8", "--m", "16384", "--n", "8192", "--k", "8192",
               "--dry-run").stdout
    assert "bf16 in, bf16 out, fp32 partials" in text


def test_list_shows_every_config(tpgemm):
    r = run(tpgemm, "--list")
    assert r.returncode == 0
    names = [f"{short}_{dt}_tp{tp}" for short in SCHEDULES.values() for dt in ("bf16", "fp16")
             for tp in (1, 2, 4, 8)]
    for name in names:
        assert name in r.stdout
    listed = json.loads(run(tpgemm, "--list", "--json").stdout)["configs"]
    assert {c["name"] for c in listed} >= set(names)
    assert all(c["schedule"] in SCHEDULES for c in listed)
    assert all(c["tuned"] == int(c["name"].startswith("tuned_")) for c in listed)
    rows = r.stdout.splitlines()[:-1]  # the columns line up: every schedule starts where the header's does
    assert {line.index(" " + line.split()[1] + " ") for line in rows[1:]} == {rows[0].index(" schedule ")}, rows[0]


def test_help_exits_0(tpgemm):
    r = run(tpgemm, "--help")
    assert r.returncode == 0 and "--dry-run" in r.stdout and "Exit status" in r.stdout


def test_trace_needs_the_trace_build(tpgemm, tmp_path):
    out = tmp_path / "t.json"
    r = run(tpgemm, "--tp", "2", "--m", "4096", "--n", "4096", "--k", "1024", "--trace", str(out))
    assert r.returncode == 2
    assert "--trace needs the trace build" in r.stderr and "ninja trace" in r.stderr
    assert not out.exists() and r.stdout == ""
    r = run(tpgemm, "--model", "llama3-8b", "--trace", str(out))
    assert r.returncode == 2 and "--trace records one GEMM" in r.stderr


def test_trace_build_accepts_trace_then_needs_gpus(tmp_path):
    """build/trace/tpgemm (ninja trace, part of `tests`): --trace parses and the run stops at the GPU check."""
    exe = ROOT / "build" / "trace" / "tpgemm"
    if not exe.exists():
        pytest.skip("build/trace/tpgemm is missing (`ninja trace`; tests/test_build.py builds it)")
    out = tmp_path / "t.json"
    shape = ("--tp", "2", "--m", "4096", "--n", "4096", "--k", "1024")
    out.write_text("an older run's trace")
    r = run(exe, *shape, "--dry-run", "--trace", str(out))  # nothing runs: the file stays, and that is said
    assert r.returncode == 0 and "no trace is written" in r.stderr and out.exists()
    r = run(exe, *shape, "--trace", str(out))
    assert r.returncode == 3 and "needs 2 Hopper (sm_90) GPUs" in r.stderr
    assert not out.exists()  # a run that stops early leaves no older file in its place
    r = run(exe, *shape, "--trace", str(tmp_path))  # a directory: refused before the run (fopen would fail at its end)
    assert r.returncode == 2 and "is a directory" in r.stderr and tmp_path.is_dir(), r.stderr
    if Path("/dev/null").exists():  # a device is not a regular file: left alone, written at the end
        r = run(exe, *shape, "--trace", "/dev/null")
        assert r.returncode == 3 and "needs 2 Hopper (sm_90) GPUs" in r.stderr
    r = run(exe, *shape, "--trace", str(tmp_path / "none" / "t.json"))  # refused before the run, not after it
    assert r.returncode == 2 and "its folder does not exist or is not writable" in r.stderr, r.stderr
    assert "--trace" in run(exe, "--help").stdout
    r = run(exe, *shape, "--trace", str(out), "--trace-cap", "2048")  # a cap parses, and the run needs its GPUs
    assert r.returncode == 3 and "needs 2 Hopper (sm_90) GPUs" in r.stderr
    r = run(exe, *shape, "--trace-cap", "2048")  # a cap of no trace
    assert r.returncode == 2 and "--trace-cap 2048 sizes the trace buffer; it needs --trace" in r.stderr


AB = ROOT / "bench" / "run_cli_ab.sh"


def test_cli_ab_interleaves_reps_problems_configs(tpgemm):
    """bench/run_cli_ab.sh --dry-run: rep-major order (every problem and config once per rep), the CLI flags."""
    res = subprocess.run(["bash", str(AB), "--reps", "2", "--iterations", "50", "--dry-run",
                          "ag_rota_bf16_wide_tp1,ag_rota_bf16_tp1", "8192x4096x2048,64x64x64"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    heads = [line.split(":")[0] for line in res.stdout.splitlines()]
    assert heads == [f"{r} {p} {c}" for r in (1, 2) for p in ("8192x4096x2048", "64x64x64")
                     for c in ("ag_rota_bf16_wide_tp1", "ag_rota_bf16_tp1")]
    assert all("--tp 1" in line and "--no-check --iterations 50 --json" in line for line in res.stdout.splitlines())
    assert "--m 64 --n 64 --k 64" in res.stdout


@pytest.mark.parametrize("args, needle", [(["ag_rota_bf16_tp1", "12x3"], "is not MxNxK"),
                                          (["--reps", "0", "ag_rota_bf16_tp1", "1x1x1"], "--reps takes"),
                                          (["ag_rota_bf16_tp2", "64x64x64"], "no TP = 1 config"),
                                          (["nope", "64x64x64"], "'nope' is no TP = 1 config"),
                                          (["--bogus", "a", "1x1x1"], "unknown flag"),
                                          (["ag_rota_bf16_tp1"], "CONFIG,CONFIG")])
def test_cli_ab_usage_errors_exit_2(tpgemm, args, needle):
    res = subprocess.run(["bash", str(AB), "--dry-run", *args], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and needle in res.stderr, res.stderr


def test_cli_ab_without_a_gpu_reports_the_failed_runs(tpgemm, tmp_path):
    """Runs that produce no time (here: no GPU, exit 3) show as nan and make the script exit 1, never a table of 0s."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", OUT=str(tmp_path))
    res = subprocess.run(["bash", str(AB), "--reps", "1", "--iterations", "1", "ag_rota_bf16_wide_tp1", "64x64x64"],
                         capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "ag_rota_bf16_wide_tp1" in res.stdout and "nan" in res.stdout
    assert (tmp_path / "cli_ab.log").read_text().split() == ["1", "64x64x64", "ag_rota_bf16_wide_tp1", "nan"]


FINITE = "expects a finite number (decimal, |x| <= 3.40282e+38: a float)"  # args.c: F_F32's message


@pytest.mark.parametrize("args, needle", [(["--alpha=0x10"], f"--alpha {FINITE}, got '0x10'"),
                                          (["--alpha", " 1"], f"--alpha {FINITE}, got ' 1'"),
                                          (["--alpha", "\n1"], f"--alpha {FINITE}"),
                                          (["--alpha", "1e-60"], "below a float's smallest normal value"),
                                          (["--alpha", "4e38"], f"--alpha {FINITE}, got '4e38'"),
                                          (["--config", "--json"], "--config expects a value, got the option '--json'"),
                                          (["--iterations", "2000000000"], "of at most 1000000000")])
def test_values_the_cli_refuses(tpgemm, args, needle):
    r = run(tpgemm, *args, "--dry-run")
    assert r.returncode == 2 and needle in r.stderr and r.stdout == "", (r.returncode, r.stderr)


def test_values_the_cli_takes(tpgemm):
    """A float's whole range, negatives after a space (one dash: not an option), and 0."""
    for args in (["--alpha", "3.3e38"], ["--alpha", "-2.5"], ["--beta", "-1"], ["--beta", "0"], ["--alpha=1e-30"]):
        r = run(tpgemm, *args, "--dry-run", "--json")
        assert r.returncode == 0, (args, r.stderr)


def test_a_model_plan_says_per_layer_what_overlap_and_copy_pieces_changed(tpgemm):
    """--overlap-barriers and --copy-chunks apply to the layers whose kernel and schedule have barriers / copies; the
    text plan names them per layer (the JSON has them in each layer's plan)."""
    r = run(tpgemm, "--model", "llama3-70b", "--tp", "2", "--overlap-barriers", "--copy-chunks", "2", "--dry-run")
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line for line in r.stdout.splitlines()[2:]}
    assert rows["qkv"].endswith("barriers beside, copies in 2 pieces") and rows["down"].endswith("barriers beside")
    plain = run(tpgemm, "--model", "llama3-70b", "--tp", "2", "--dry-run").stdout.splitlines()
    assert plain[1].endswith("modes") and all(line.endswith(" -") for line in plain[2:]), plain
    # the pieces the plan cuts, not the count asked (an audit: "4 pieces" where the GEMM pulled the shards, no copy)
    for tokens, qkv in ((128, " -"), (512, "copies in 2 pieces"), (16384, "copies in 4 pieces")):
        r = run(tpgemm, "--model", "llama3-70b", "--tp", "2", "--tokens", str(tokens), "--copy-chunks", "4", "--dry-run")
        rows = {line.split()[0]: line for line in r.stdout.splitlines()[2:]}
        assert r.returncode == 0 and rows["qkv"].endswith(qkv), (tokens, rows["qkv"])


def test_a_model_plan_names_the_copy_engine_and_the_ring_where_they_change_a_layer(tpgemm):
    """--gather-copy-engine changes a gathered all-gather walk only (few tokens: the GEMM would pull the shards), and
    --rs-ring a one-hop reduce-scatter only; the modes column names them on those layers and on no other."""
    few = run(tpgemm, "--model", "llama3-70b", "--tp", "2", "--tokens", "128", "--gather-copy-engine", "--rs-ring",
              "--dry-run")
    assert few.returncode == 0, few.stderr
    rows = {line.split()[0]: line for line in few.stdout.splitlines()[2:]}
    assert rows["qkv"].endswith("shards by copy engine") and rows["gate_up"].endswith("shards by copy engine"), rows
    assert rows["attn_out"].endswith("ring kept") and rows["down"].endswith("ring kept"), rows
    many = run(tpgemm, "--model", "llama3-70b", "--tp", "2", "--tokens", "16384", "--gather-copy-engine", "--rs-ring",
               "--dry-run")
    assert many.returncode == 0 and all(line.endswith(" -") for line in many.stdout.splitlines()[2:]), many.stdout


def test_every_environment_variable_the_runtime_reads_is_documented():
    """A getenv of the runtime or the CLI that no page names is a switch a user cannot find (TPG_CLI_DIAG_CORRUPT_D was
    one until 2026-12-06): each name read must appear in README.md or docs/*.md."""
    read = {name for src in (ROOT / "runtime" / "src").rglob("*.c")
            for name in re.findall(r'getenv\("([A-Z_0-9]+)"\)', src.read_text())}
    assert "TPG_NCCL_LIBRARY" in read  # the scan reads what it should
    docs = (ROOT / "README.md").read_text() + "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    assert sorted(name for name in read if name not in docs) == []
