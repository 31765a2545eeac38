"""How a default config is picked (docs/CONFIG.md, "How a config is picked"): the per-stage K preference, the wave
check and its ratio rule, the row rule, the TP = 1 kernel, the stream-K region's bounds, and the picks against the
committed local-GEMM measurements. Split from tests/test_models.py, whose presets and helpers these use."""
import json
import re

from generator import config, models, plan
from tests.test_cli import run, tpgemm  # noqa: F401  (tpgemm: the module fixture that builds build/tpgemm)
from tests.test_models import AG, BASE, DEFAULT, RS, ROOT, write


def test_default_config_prefers_by_the_per_stage_k(tmp_path):
    """The first config by name whose prefer_from_local_k holds for the per-stage K wins; otherwise the
    first by name. The preferred configs sort after the plain ones here, so a pick by name alone fails."""
    doc = models.load(str(write(tmp_path, BASE + (
        "  - {name: rs_wide, schedule: ReduceScatter1D_TilingA_RotatingC, tp: [1, 2], kernel: k256,\n"
        "     prefer_from_local_k: 8192}\n"
        "  - {name: ag_wide, schedule: AllGather1D_TilingCD_RotatingA, tp: [2], kernel: k256,\n"
        "     prefer_from_local_k: 8192}\n"))))
    # reduce-scatter: K/tp against the bound, which itself holds
    assert models.default_config(doc, RS, 2, "bf16", 16384) == "rs_wide_tp2"  # 8192 per stage
    assert models.default_config(doc, RS, 2, "bf16", 8192) == "rs_tp2"  # 4096 per stage
    assert models.default_config(doc, RS, 1, "bf16", 8192) == "rs_wide_tp1"  # tp 1: all of K
    # an unknown shape (k = 0, the default) holds no bound but 1
    assert models.default_config(doc, RS, 2, "bf16", 0) == "rs_tp2"
    assert models.default_config(doc, RS, 2, "bf16") == "rs_tp2"
    # all-gather does not split K: the per-stage K is K
    assert models.default_config(doc, AG, 2, "bf16", 8192) == "ag_wide_tp2"
    assert models.default_config(doc, AG, 2, "bf16", 4096) == "ag_tp2"
    assert models.default_config(doc, AG, 1, "bf16", 8192) == "ag_tp1"  # ag_wide is not built at tp 1
    assert models.default_config(doc, RS, 2, "fp16", 16384) is None


def test_default_config_first_preferred_by_name_and_one_means_every_shape(tmp_path):
    """Among configs whose bound holds the first by name wins, not the largest bound; a bound of 1 holds
    for every shape, the unknown one (k = 0) included."""
    row = "  - {{name: {}, schedule: {}, tp: [2], kernel: k256, prefer_from_local_k: {}}}\n"
    doc = models.load(str(write(tmp_path, BASE + row.format("rs_a", RS, 4096) + row.format("rs_b", RS, 2048)
                                + row.format("ag_z", AG, 1))))
    assert models.default_config(doc, RS, 2, "bf16", 8192) == "rs_a_tp2"  # both hold
    assert models.default_config(doc, RS, 2, "bf16", 4096) == "rs_b_tp2"  # 2048 per stage: rs_b's only
    assert models.default_config(doc, RS, 2, "bf16", 2048) == "rs_a_tp2"  # none holds: the first by name
    assert models.default_config(doc, AG, 2, "bf16", 0) == "ag_z_tp2"
    assert models.default_config(doc, AG, 2, "bf16", 64) == "ag_z_tp2"


def test_default_config_takes_the_fallback_where_the_preferred_tiles_leave_the_last_wave_empty(tmp_path):
    """With the whole shape given, a config that is not preferred wins when its walk fills more than
    PICK_WAVE_MARGIN more of the SMs' tile slots (tpg_config_pick's rule, runtime/src/config.c)."""
    doc = models.load(str(write(tmp_path, BASE.replace(
        "configs:", "  - {name: k128, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, stages: 5}\nconfigs:")
        + "  - {name: ag_wide, schedule: AllGather1D_TilingCD_RotatingA, tp: [2], kernel: k256, prefer_from_local_k: 1}\n"
        + "  - {name: ag_z_small, schedule: AllGather1D_TilingCD_RotatingA, tp: [2], kernel: k128}\n")))
    # ag (k256) sorts first among the configs not preferred, but the wave check takes the fullest of them
    assert models.walk_tiles(AG, 2, 2048, 10240, {"bm": 128, "bn": 256}) == 320
    assert models.walk_tiles(AG, 2, 2048, 10240, {"bm": 128, "bn": 128}) == 640
    assert models.walk_tiles(RS, 4, 2048, 8192, {"bm": 128, "bn": 256}) == 512  # 4 stages of 512 x 8192
    assert abs(models.walk_fill(AG, 2, 2048, 10240, {"bm": 128, "bn": 256}, 132) - 320 / 396) < 1e-12
    assert models.walk_fill(AG, 2, 2048, 10240, {"bm": 128, "bn": 256}, 160) == 1.0  # two whole waves of 160
    # ag has the preferred config's 128x256 tiles (81%), ag_z_small's 128x128 fill 97%: ag_z_small
    assert models.default_config(doc, AG, 2, "bf16", 8192, 2048, 10240) == "ag_z_small_tp2"
    row = "  - {{name: {}, schedule: {}, tp: [2], kernel: {}{}}}\n"
    doc = models.load(str(write(tmp_path, BASE.replace(
        "configs:", "  - {name: k128, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, stages: 5}\nconfigs:")
        .replace("  - {name: ag, schedule: AllGather1D_TilingCD_RotatingA, tp: [1, 2], kernel: k256}\n", "")
        + row.format("ag_a_small", AG, "k128", "") + row.format("ag_b_wide", AG, "k256", ", prefer_from_local_k: 1"))))
    assert models.default_config(doc, AG, 2, "bf16", 8192, 2048, 10240) == "ag_a_small_tp2"  # 97% against 81%
    assert models.default_config(doc, AG, 2, "bf16", 8192, 2048, 10240, sms=160) == "ag_b_wide_tp2"  # 2 whole waves
    assert models.default_config(doc, AG, 2, "bf16", 8192) == "ag_b_wide_tp2"  # m, n unknown: the K rule alone
    assert models.default_config(doc, AG, 2, "bf16", 8192, 1 << 40, 10240) == "ag_b_wide_tp2"  # past int32: no shape
    assert models.default_config(doc, AG, 2, "bf16", 8192, 16384, 10240) == "ag_b_wide_tp2"  # 97.0% vs 99.5%


def test_default_config_takes_the_best_scored_fallback_by_more_than_the_margin(tmp_path):
    """Every config not preferred is a candidate of the wave check; its score is the share of the tile slots of whole
    waves its walk's output fills (partial tiles count what they hold) times its wave_weight percent (100 without).
    The best replaces the pick when it scores more than PICK_WAVE_MARGIN (0.10) more; of equals the first by name,
    those without a wave_weight first. A wave-weighted config is never the first-by-name fallback."""
    kernels = ("  - {name: k128, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, stages: 5}\n"
               "  - {name: k160, dtype: bf16, tile: {bm: 128, bn: 160, bk: 64}, epilogue_subtile: {n: 32}}\n"
               "  - {name: k64, dtype: bf16, tile: {bm: 64, bn: 128, bk: 64}, consumer_mode: pingpong}\nconfigs:")
    row = "  - {{name: {}, schedule: {}, tp: [2], kernel: {}{}}}\n"
    doc = models.load(str(write(tmp_path, BASE.replace("configs:", kernels)
        .replace("  - {name: ag, schedule: AllGather1D_TilingCD_RotatingA, tp: [1, 2], kernel: k256}\n", "")
        .replace("  - {name: rs, schedule: ReduceScatter1D_TilingA_RotatingC, tp: [1, 2], kernel: k256}\n", "")
        + row.format("ag_a_64", AG, "k64", ", wave_weight: 80") + row.format("ag_b_160", AG, "k160", ", wave_weight: 90")
        + row.format("ag_c_pp", AG, "k128", "") + row.format("ag_d_wide", AG, "k256", ", prefer_from_local_k: 1")
        + row.format("rs_a_64", RS, "k64", ", wave_weight: 80") + row.format("rs_b_pp", RS, "k128", ""))))
    assert models.PICK_WAVE_MARGIN == 0.10 and models.PICK_WAVE_RATIO == 2.0
    # 70B-qkv, M = 512: 80 wide tiles and 160 ping-pong ones fill 61% of the slots, 128 of 128x160 97% (x 0.9),
    # 320 of 64x128 81% (x 0.8)
    assert models.default_config(doc, AG, 2, "bf16", 8192, 512, 10240) == "ag_b_160_tp2"
    # M = 2048: ping-pong, 128x160 and 64x128 all fill 97%; the weights leave ping-pong ahead
    assert models.default_config(doc, AG, 2, "bf16", 8192, 2048, 10240) == "ag_c_pp_tp2"
    # 1024 x 14336: 64x128 fills 97% against the wide tiles' 85%, but scores 78%: the wide config stays
    assert abs(models.walk_fill(AG, 2, 1024, 14336, {"bm": 64, "bn": 128}, 132) - 7340032 / (7 * 132 * 8192)) < 1e-12
    assert models.default_config(doc, AG, 2, "bf16", 8192, 1024, 14336) == "ag_d_wide_tp2"
    # M = 128 at TP = 2: two stages of 64 rows, gathered into one GEMM of 128 rows (runtime/src/plan.c): 40 tiles of
    # 128x128, 80 of 64x128 - stage after stage 80 of either, the 128-row ones half empty; from 256 rows a stage
    # (M = 512) stage after stage: 2 stages x 2 tile rows x 40
    tile = {"bm": 128, "bn": 128}
    assert models.walk_tiles(AG, 2, 128, 10240, tile) == 40
    assert models.walk_tiles(AG, 2, 128, 10240, {"bm": 64, "bn": 128}) == 80
    assert models.walk_tiles(AG, 2, 512, 10240, tile) == 2 * 2 * 40
    assert abs(models.walk_fill(AG, 2, 128, 10240, tile, 132) - 2 * 64 * 5120 / (132 * 128 * 128)) < 1e-12
    assert models.default_config(doc, AG, 2, "bf16", 8192, 128, 10240) == "ag_a_64_tp2"
    # a tiny walk (M = 16, 512 columns a GPU, gathered): the wide pick fills 0.19% of a wave, 64x128 0.76% (x 0.8):
    # under the margin, over twice the pick's score; with the ratio rule's threshold raised, the wave check keeps the
    # wide pick, and the row rule takes the 64x128 (the 16 rows fit one row of its tiles); at M = 256 (one GEMM of
    # 256 rows) neither does
    assert models.default_config(doc, AG, 2, "bf16", 8192, 16, 1024) == "ag_a_64_tp2"
    ratio, models.PICK_WAVE_RATIO = models.PICK_WAVE_RATIO, 4.0
    try:
        assert models.default_config(doc, AG, 2, "bf16", 8192, 16, 1024) == "ag_a_64_tp2"
        assert models.default_config(doc, AG, 2, "bf16", 8192, 256, 1024) == "ag_d_wide_tp2"
    finally:
        models.PICK_WAVE_RATIO = ratio
    # without the shape, and where the wide tiles fill as well: the K rule's pick
    assert models.default_config(doc, AG, 2, "bf16", 8192) == "ag_d_wide_tp2"
    assert models.default_config(doc, AG, 2, "bf16", 8192, 16384, 10240) == "ag_d_wide_tp2"
    # reduce-scatter, nothing preferred: the first by name without a wave_weight, unless the wave check says otherwise
    assert models.default_config(doc, RS, 2, "bf16", 8192) == "rs_b_pp_tp2"
    assert models.default_config(doc, RS, 2, "bf16", 8192, 16384, 8192) == "rs_b_pp_tp2"
    assert models.default_config(doc, RS, 2, "bf16", 8192, 128, 8192) == "rs_a_64_tp2"  # 64-row stages: 78% / 48%
    # equal scores: a config without a wave_weight before a weighted one, whatever the names
    twin = {**doc, "configs": doc["configs"] + [{"name": "ag_0_twin", "schedule": AG, "tp": [2], "kernel": "k128",
                                                 "wave_weight": 100}]}
    assert models.default_config(twin, AG, 2, "bf16", 8192, 2048, 10240) == "ag_c_pp_tp2"
    twin["configs"] = [dict(c, name="ag_z_pp") if c["name"] == "ag_c_pp" else c for c in twin["configs"]]
    assert models.default_config(twin, AG, 2, "bf16", 8192, 2048, 10240) == "ag_z_pp_tp2"
    # a weight of 100 makes 64x128 an ordinary candidate again: at 1024 x 14336 its 97% beat the wide 85%
    heavy = {**doc, "configs": [dict(c, wave_weight=100) if c["name"] == "ag_a_64" else c for c in doc["configs"]]}
    assert models.default_config(heavy, AG, 2, "bf16", 8192, 1024, 14336) == "ag_a_64_tp2"
    # the shipped configs (tests/c/test_dispatch.c checks tpg_config_pick on the same)
    shipped = models.load(str(DEFAULT))
    assert models.default_config(shipped, AG, 2, "bf16", 8192, 512, 10240) == "ag_rota_bf16_w160_tp2"
    assert models.default_config(shipped, AG, 2, "bf16", 8192, 128, 10240) == "ag_rota_bf16_pp64_tp2"
    assert models.default_config(shipped, RS, 2, "bf16", 8192, 128, 8192) == "rs_tila_bf16_pp64_tp2"
    assert models.default_config(shipped, AG, 2, "bf16", 8192, 1024, 14336) == "ag_rota_bf16_wide_tp2"
    # the row rule (decode): one row of tiles either way, the 64x128 with half the rows a tile
    assert models.default_config(shipped, RS, 2, "bf16", 8192, 32, 8192) == "rs_tila_bf16_pp64_tp2"
    assert models.default_config(shipped, RS, 1, "fp16", 4096, 16, 8192) == "rs_tila_fp16_pp64_tp1"
    assert models.default_config(shipped, RS, 2, "bf16", 8192, 2048, 8192) == "rs_tila_bf16_tp2"
    # its one-row clause: 70B-fc1 at 16 tokens, TP = 2 (one GEMM of 16 rows: 224 tiles of 64x128, 1.7 waves, against
    # the wide kernel's 112 in one wave) - the wave check keeps the wide pick, the 16 rows fit one row of 64x128 tiles
    assert models.default_config(shipped, AG, 2, "bf16", 8192, 16, 57344) == "ag_rota_bf16_pp64_tp2"
    assert models.default_config(shipped, AG, 1, "bf16", 8192, 16, 28672) == "ag_rota_bf16_pp64_tp1"
    assert models.default_config(shipped, AG, 2, "bf16", 8192, 512, 57344) == "ag_rota_bf16_tp2"  # 256 rows a stage


MEASURED = ["small_m_0835Z", "small_tiles_1230Z", "w160_1244Z", "m128_tiles_1308Z", "pp64_1322Z",
            "verify_few_tokens_1444Z", "sk_m128_1451Z"]
# runs made for the wave check: every record holds the pick's kernel
MEASURED_FOR_THE_PICK = ("w160_1244Z", "pp64_1322Z", "verify_few_tokens_1444Z")


def measured_pick_rate():
    """A function of a local-GEMM record and a schedule: the shipped default pick at TP = 1 for the record's shape
    before the split rule, its sustained rate in the record (None where the record did not time its kernel), and the
    rates of every shipped kernel the record timed but the stream-K ones (cuBLASLt and x_ experiments left out too).
    The split rule is the decode grid's to judge (tests/test_split_rule.py): local_gemm reuses B call after call, so
    a B under the L2's 50 MB stays resident, where a decode step's weights come from memory."""
    doc = models.load(str(DEFAULT))
    built = plan.build(doc, "schedules.yaml")
    kernel_of = {c.name: c.kernel.name for c in built.configs}
    split = {k["name"] for k in doc["kernels"] if k.get("stream_k")}
    doc = {**doc, "configs": [c for c in doc["configs"] if c["kernel"] not in split]}
    shipped = {k.name for k in built.kernels if not k.splits_k}

    def pick_rate(r: dict, schedule: str):
        pick = models.default_config(doc, schedule, 1, r["dtype"], r["K"], r["M"], r["N"])
        rates = {v["kernel"]: v["sustained_tflops"] for v in r["variants"] if v["kernel"] in shipped}
        return pick, rates.get(kernel_of[pick]), rates
    return pick_rate


def test_the_default_pick_is_the_fastest_measured_shipped_kernel_or_close():
    """Against the local-GEMM runs on one H200 (bench/results/experiments/<run>/local_gemm_*.json, few tokens): each
    problem's default pick at TP = 1 ran within 4% of the fastest shipped kernel measured on it (sustained). Every
    record of the runs made for the wave check (MEASURED_FOR_THE_PICK) must hold the pick's kernel; the others
    count where they do (the older 64x128 was an experiment without TMA-loaded partials; sk_m128_1451Z timed only
    the 64x128 among shipped kernels)."""
    pick_rate = measured_pick_rate()
    checked = 0
    for run in MEASURED:
        for path in sorted((ROOT / "bench/results/experiments" / run).glob("local_gemm_*.json")):
            for r in json.loads(path.read_text()):
                pick, rate, rates = pick_rate(r, RS if r["op"] == "RS" else AG)
                if rate is None:
                    assert run not in MEASURED_FOR_THE_PICK, (run, r["name"], pick)
                    continue
                assert rate >= 0.96 * max(rates.values()), (run, r["name"], pick, rates)
                checked += 1
    assert checked >= 30


DECODE_RUNS = ["decode_local_1433Z/local_gemm_decode.json", "decode_sk_1532Z/local_gemm_decode_sk.json",
               "abox_1559Z/local_gemm_decode_abox.json", "decode_abox_1622Z/local_gemm_decode_rest.json"]


def test_decode_picks_are_the_fastest_measured_or_close():
    """Against the decode runs on one H200 (experiments/: local GEMMs of M = 16 and 64, shipped TP = 1 configs beside
    cuBLASLt and x_ experiments, which do not count): a TP = 1 GEMM is the same GEMM whatever the schedule, so the
    pick of both an all-gather and a reduce-scatter schedule must run within 4% of the fastest shipped kernel measured
    there. Before the row rule the reduce-scatter picks ran the 128x128 at 0.60-0.82 of the 64x128 (1433Z), and
    before its one-row clause the all-gather pick at 70B-fc1 M = 16 ran the wide kernel at 0.73 of it (1533Z)."""
    pick_rate = measured_pick_rate()
    checked = 0
    for run in DECODE_RUNS:
        for r in json.loads((ROOT / "bench/results/experiments" / run).read_text()):
            for schedule in (AG, RS):
                pick, rate, rates = pick_rate(r, schedule)
                if rate is not None:
                    assert rate >= 0.96 * max(rates.values()), (run, r["name"], schedule, pick, rates)
                    checked += 1
    assert checked >= 40


def test_walk_row_bounds_match_the_runtime():
    """The wave check's walk tiles (models.walk_tiles) read the runtime's row bounds of the one-GEMM walks; a bound
    changed in runtime/src/plan.h alone would make the C and Python default picks part ways at few tokens."""
    text = (ROOT / "runtime" / "src" / "plan.h").read_text()
    bound = {name: int(v) for name, v in re.findall(r"#define (TPG_\w+_MAX_ROWS) (\d+)", text)}
    assert bound["TPG_GATHER_MAX_ROWS"] == models.GATHER_MAX_ROWS
    assert bound["TPG_ONE_HOP_MAX_ROWS"] == models.ONE_HOP_MAX_ROWS
    rs, ag = "ReduceScatter1D_TilingA_RotatingC", "AllGather1D_TilingCD_RotatingA"
    tile = {"bm": 128, "bn": 128}
    # 64 rows a stage at TP = 8: one GEMM of 512 rows (4 tile rows), not 8 stages of one part-filled tile row each
    assert models.walk_tiles(rs, 8, 512, 8192, tile) == 4 * 64
    assert models.walk_tiles(rs, 8, 1024, 8192, tile) == 8 * 64  # 128 rows a stage: the ring
    assert models.walk_tiles(ag, 8, 512, 8192 * 8, tile) == 4 * 64  # gathered too
    assert not models.walk_one_gemm(rs, 1, 16)


SCHEDULES = ("AllGather1D_TilingCD_RotatingA", "AllGather1D_TilingCD_RotatingB", "ReduceScatter1D_TilingA_RotatingC",
             "ReduceScatter1D_TilingB_RotatingC")


def test_no_default_pick_trades_speed_for_precision_or_back():
    """The shipped configs that run by name only - fp8_promote (the *_e4m3_promoted families are not marked by_name:
    their kernels keep them out), acc: f16, partials: f32 - are never a default, at any schedule, TP, dtype and shape
    (few tokens and decode included, where the wave, row and split rules step in)."""
    doc = models.load(str(DEFAULT))
    kernels = {k["name"]: k for k in doc["kernels"]}
    by_name_only = {f"{c['name']}_tp{tp}" for c in doc["configs"] for tp in c["tp"]
                    if (lambda k: k.get("fp8_promote") or k.get("acc") == "f16" or k.get("partials") == "f32")(
                        kernels[(c.get("kernel_tp1") or c["kernel"]) if tp == 1 else c["kernel"]])}
    assert any("promoted" in n for n in by_name_only) and any("f32p" in n for n in by_name_only)
    picks = set()
    for sched in SCHEDULES:
        for tp in (1, 2, 4, 8):
            for dtype in ("bf16", "fp16", "e4m3", "e5m2"):
                for m, n, k in ((16384, 10240, 8192), (2048, 8192, 28672), (128, 57344, 8192), (16, 8192, 4096)):
                    pick = models.default_config(doc, sched, tp, dtype, k, m, n)
                    if pick:
                        picks.add(pick)
                        assert pick not in by_name_only, (sched, tp, dtype, m, n, k, pick)
    assert any("e4m3" in p for p in picks) and any("fp16" in p for p in picks)


def test_a_tp1_pick_is_judged_by_its_tp1_kernel():
    """kernel_tp1: at TP = 1 the config runs that kernel, so its pickability (and tile) decides there; at TP = 2 the
    main kernel's does."""
    text = """\
version: 1
kernels:
  - {name: kf32p, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, stages: 5, consumers: 2, consumer_mode: pingpong,
     partials: f32}
  - {name: kplain, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, stages: 5, consumers: 2, consumer_mode: pingpong}
configs:
  - {name: c, schedule: ReduceScatter1D_TilingA_RotatingC, tp: [1, 2], kernel: kf32p, kernel_tp1: kplain}
"""
    doc = config.validate(config.compose(text, "x.yaml"), "x.yaml")
    assert models.default_config(doc, "ReduceScatter1D_TilingA_RotatingC", 1, "bf16") == "c_tp1"
    assert models.default_config(doc, "ReduceScatter1D_TilingA_RotatingC", 2, "bf16") is None


def test_the_row_rule_takes_a_tile_that_holds_every_row_exactly():
    """Decode: the 64-row tile replaces the 128-row pick when the launch's rows fit in one row of its tiles - at
    M = 64 exactly (rows == bm), not at 65 (where the 64x128 walk has twice the tile rows)."""
    doc = _two_tiles_doc(", wave_weight: 50")
    pick = lambda m: models.default_config(doc, "AllGather1D_TilingCD_RotatingA", 1, "bf16", 8192, m, 57344)  # noqa
    assert pick(64) == "b_small_tp1"
    assert pick(65) == "a_wide_tp1"


def test_the_row_rule_keeps_the_pick_for_fewer_rows_of_other_columns():
    """As many tiles in the walk stand for the same walk only with the pick's columns: a 64x256 walking the 128x128
    pick's 264 tiles (M = 128, two whole waves each) cuts the output otherwise, and the launch's 128 rows do not fit
    one row of its tiles, so the pick stays (runtime/src/config.c fewest_rows)."""
    text = """\
version: 1
kernels:
  - {name: k128, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, stages: 5, consumer_mode: pingpong}
  - {name: k64x256, dtype: bf16, tile: {bm: 64, bn: 256, bk: 64}, consumers: 1}
configs:
  - {name: a_pp, schedule: AllGather1D_TilingCD_RotatingA, tp: 1, kernel: k128, prefer_from_local_k: 1}
  - {name: b_short_wide, schedule: AllGather1D_TilingCD_RotatingA, tp: 1, kernel: k64x256}
"""
    doc = config.validate(config.compose(text, "x.yaml"), "x.yaml")
    sched, tiles = "AllGather1D_TilingCD_RotatingA", ({"bm": 128, "bn": 128}, {"bm": 64, "bn": 256})
    assert [models.walk_tiles(sched, 1, 128, 33792, t) for t in tiles] == [264, 264]
    assert [models.walk_fill(sched, 1, 128, 33792, t, 132) for t in tiles] == [1.0, 1.0]
    assert models.default_config(doc, sched, 1, "bf16", 8192, 128, 33792) == "a_pp_tp1"


def test_the_row_rule_takes_the_fewest_rows_not_the_last_that_qualifies():
    """Of several shorter tiles that hold the launch's 64 rows in one row, the one with the fewest rows replaces the
    256-row pick, wherever it sorts (weights of 1 keep the wave check out of it)."""
    text = """\
version: 1
kernels:
  - {name: k256, dtype: bf16, tile: {bm: 256, bn: 128, bk: 64}}
  - {name: k128, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, stages: 5, consumer_mode: pingpong}
  - {name: k64, dtype: bf16, tile: {bm: 64, bn: 128, bk: 64}, stages: 8, consumer_mode: pingpong}
configs:
  - {name: a_tall, schedule: AllGather1D_TilingCD_RotatingA, tp: 1, kernel: k256, prefer_from_local_k: 1}
  - {name: b_64, schedule: AllGather1D_TilingCD_RotatingA, tp: 1, kernel: k64, wave_weight: 1}
  - {name: c_128, schedule: AllGather1D_TilingCD_RotatingA, tp: 1, kernel: k128, wave_weight: 1}
"""
    doc = config.validate(config.compose(text, "x.yaml"), "x.yaml")
    assert models.default_config(doc, "AllGather1D_TilingCD_RotatingA", 1, "bf16", 8192, 64, 57344) == "b_64_tp1"
    assert models.default_config(doc, "AllGather1D_TilingCD_RotatingA", 1, "bf16", 8192, 128, 57344) == "c_128_tp1"


def test_the_row_rule_counts_the_rows_of_a_gathered_launch():
    """At TP = 2 and M = 128 the all-gather's stages of 64 rows are gathered into one GEMM of all 128 rows
    (walk_one_gemm): that launch's rows do not fit one row of 64-row tiles, so the wide pick stays; at M = 64 they
    do."""
    doc = _two_tiles_doc(", wave_weight: 50")
    doc["configs"] = [dict(c, tp=[2]) for c in doc["configs"]]
    sched = "AllGather1D_TilingCD_RotatingA"
    assert models.walk_one_gemm(sched, 2, 64) and models.launch_rows(sched, 2, 128, 57344) == 128
    assert models.default_config(doc, sched, 2, "bf16", 8192, 128, 57344) == "a_wide_tp2"
    assert models.default_config(doc, sched, 2, "bf16", 8192, 64, 57344) == "b_small_tp2"


def _two_tiles_doc(weight: str = "") -> dict:
    text = f"""\
version: 1
kernels:
  - {{name: wide, dtype: bf16, tile: {{bm: 128, bn: 256, bk: 64}}, stages: 3, consumers: 2, epilogue_buffers: 5}}
  - {{name: small, dtype: bf16, tile: {{bm: 64, bn: 128, bk: 64}}, stages: 8, consumers: 1}}
configs:
  - {{name: a_wide, schedule: AllGather1D_TilingCD_RotatingA, tp: 1, kernel: wide, prefer_from_local_k: 1}}
  - {{name: b_small, schedule: AllGather1D_TilingCD_RotatingA, tp: 1, kernel: small{weight}}}
"""
    return config.validate(config.compose(text, "x.yaml"), "x.yaml")


def test_the_wave_check_switches_by_ratio_where_the_margin_does_not():
    """M = 65, N = 2048: the wide pick fills 3.1% of a wave, the 64x128 12.3% - 0.09 apart (under the 0.10 margin)
    but 4x (over PICK_WAVE_RATIO): the ratio decides. The row rule stays out (65 rows > 64)."""
    doc = _two_tiles_doc()
    sched = "AllGather1D_TilingCD_RotatingA"
    tiles = ({"bm": 128, "bn": 256}, {"bm": 64, "bn": 128})
    wide, small = (models.walk_fill(sched, 1, 65, 2048, t, 132) for t in tiles)
    assert small - wide < models.PICK_WAVE_MARGIN < small and small > models.PICK_WAVE_RATIO * wide
    assert models.default_config(doc, sched, 1, "bf16", 8192, 65, 2048) == "b_small_tp1"


def test_the_wave_check_switches_only_past_the_margin():
    """The best takes over when it scores more than 10 points above the pick (docs/CONFIG.md): at M = 1152, N = 16896
    the wide tiles fill 0.9 of their 5 waves, the 64x128 all 18 of its own - exactly PICK_WAVE_MARGIN more, not more
    than it, so the K rule's pick stays."""
    doc = _two_tiles_doc()
    sched = "AllGather1D_TilingCD_RotatingA"
    wide, small = (models.walk_fill(sched, 1, 1152, 16896, t, 132) for t in ({"bm": 128, "bn": 256},
                                                                             {"bm": 64, "bn": 128}))
    assert small == wide + models.PICK_WAVE_MARGIN and small <= models.PICK_WAVE_RATIO * wide
    assert models.default_config(doc, sched, 1, "bf16", 8192, 1152, 16896) == "a_wide_tp1"


def test_extents_past_the_limit_take_the_k_rule_alone():
    """An M, N or K of 2^31 or more (no GEMM a GPU holds) skips the wave, row and split rules: the K rule's pick
    stands."""
    doc = _two_tiles_doc(", wave_weight: 50")
    sched = "AllGather1D_TilingCD_RotatingA"
    assert models.default_config(doc, sched, 1, "bf16", 8192, 64, 57344) == "b_small_tp1"  # the row rule
    assert models.default_config(doc, sched, 1, "bf16", models.PICK_EXTENT_LIMIT, 64, 57344) == "a_wide_tp1"
    assert models.default_config(doc, sched, 1, "bf16", 8192, 64, models.PICK_EXTENT_LIMIT) == "a_wide_tp1"
    # an M of 2^31 too: N = 64 leaves the wide tiles' 256 columns a quarter full, which the wave check alone would fix
    plain = _two_tiles_doc()
    assert models.default_config(plain, sched, 1, "bf16", 8192, models.PICK_EXTENT_LIMIT - 128, 64) == "b_small_tp1"
    assert models.default_config(plain, sched, 1, "bf16", 8192, models.PICK_EXTENT_LIMIT, 64) == "a_wide_tp1"


def test_the_stream_k_region_at_its_bounds():
    """tpg_sk_tiles' region: the partial last round plus one full round (200 tiles on 132 CTAs: all 200), split only
    where each CTA gets at least SK_MIN_KBLOCKS and the split plus its fixup fits the rounds it replaces."""
    assert models.sk_tiles(200, 132, 64) == 200
    assert models.sk_tiles(300, 132, 64) == 132 + 300 % 132
    assert models.sk_tiles(133, 132, 3) == 133  # 4 k-blocks a CTA + 2 of fixup = the 2 rounds' 6: still a split
    assert models.sk_tiles(133, 132, 2) == 0  # 3 k-blocks a CTA: under SK_MIN_KBLOCKS
    assert models.sk_tiles(264, 132, 64) == 0  # whole rounds: nothing to split


def test_no_default_pick_says_why(tpgemm):
    """A TP or dtype no config is generated for is named as such, with the TPs that are (not a hint to run a config
    by name that does not exist)."""
    r = run(tpgemm, "--dry-run", "--tp", "3", "--m", "4096", "--n", "4096", "--k", "4096")
    assert r.returncode == 2
    assert ("no config of schedule 'AllGather1D_TilingCD_RotatingA', dtype bf16 is generated at tp 3 (the generated "
            "ones have tp 1, 2, 4, 8)") in r.stderr and "--config NAME" not in r.stderr
    r = run(tpgemm, "--dry-run", "--schedule", "ReduceScatter1D_TilingA_RotatingC", "--dtype", "e5m2", "--m", "4096",
            "--n", "4096", "--k", "4096")
    assert r.returncode == 2
    assert "no config of schedule 'ReduceScatter1D_TilingA_RotatingC', dtype e5m2 is generated" in r.stderr
