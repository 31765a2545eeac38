"""Kernel knobs of schedules.yaml as the plan turns them into kernels: tile shapes, clusters, consumer modes, the
epilogue's and the partials' options, stream-K, defines - their names, shared memory, macros and hashes (split from
tests/test_config.py, which checks validation and the configs' fields)."""
import re

import pytest

from generator import config, kernels, plan, render
from tests.test_config import BASE, ROOT


def _kernel(text: str):
    (k,) = plan.build(config.validate(config.compose(text, "x.yaml"), "x.yaml"), "x.yaml").kernels
    return k


def test_cluster_pairs_are_legal_and_named():
    for m, n in ((2, 1), (1, 2)):
        k = _kernel(BASE.replace("{m: 1, n: 1}", f"{{m: {m}, n: {n}}}"))
        assert (k.cluster_m, k.cluster_n) == (m, n) and f"_c{m}x{n}_" in k.name
        assert k.smem_bytes == kernels.smem_bytes(4, 128, 256, 64, "bf16")  # multicast needs no extra smem


def test_pingpong_tiles_smem_and_names():
    """Each warpgroup owns a whole tile: BM = 64·{1,2}, two epilogue buffer pairs (4·BM·128 bytes)."""
    pp = BASE.replace("consumers: 2", "consumers: 2\n    consumer_mode: pingpong")
    k = _kernel(pp.replace("bn: 256", "bn: 128").replace("    stages: 4\n", ""))
    assert (k.bm, k.bn, k.consumer_mode, k.stages) == (128, 128, "pingpong", 5)
    assert k.smem_bytes == 5 * 256 * 128 + 4 * 128 * 128 + 2048 == 231424
    assert "_w2pp_" in k.name
    k64 = _kernel(pp.replace("bm: 128", "bm: 64"))
    assert (k64.bm, k64.bn, k64.stages, k64.smem_bytes) == (64, 256, 4, 4 * 320 * 128 + 4 * 64 * 128 + 2048)
    assert kernels.check_kernel("bf16", "f32", 64, 256, 64, 5, 2, 1, 1, "pingpong")  # 5 stages: over the limit
    assert kernels.check_kernel("bf16", "f32", 256, 128, 64, 3, 2, 1, 1, "pingpong")  # bm 256: not 64·{1,2}


def test_cooperative_names_do_not_depend_on_the_consumer_mode_knob():
    """Adding the knob kept every existing kernel name (and so generated/) unchanged."""
    coop = _kernel(BASE)
    explicit = _kernel(BASE.replace("consumers: 2", "consumers: 2\n    consumer_mode: cooperative"))
    assert coop == explicit and coop.name == explicit.name
    assert "consumer_mode" not in coop.fields()
    pp = kernels.KernelSpec(**dict(coop.fields(), consumer_mode="pingpong"))
    assert pp.hash8 != coop.hash8


def test_epilogue_subtile_halves_the_staging_and_keeps_default_names():
    """n = 32 (64-byte store rows) halves the epilogue smem, so a ping-pong 128x128 fits 6 stages; the
    default (n = 64) is not hashed, so existing kernel names stay."""
    pp = BASE.replace("consumers: 2", "consumers: 2\n    consumer_mode: pingpong").replace("bn: 256", "bn: 128")
    auto = pp.replace("    stages: 4\n", "")
    k = _kernel(auto.replace("consumer_mode: pingpong", "consumer_mode: pingpong\n    epilogue_subtile: {m: 64, n: 32}"))
    assert (k.epilogue_n, k.epi_chunk_bytes, k.stages) == (32, 64, 6)
    assert k.smem_bytes == 6 * 256 * 128 + 4 * 128 * 64 + 2048 == 231424
    default = _kernel(auto)
    explicit = _kernel(auto.replace("consumer_mode: pingpong", "consumer_mode: pingpong\n    epilogue_subtile: {m: 64, n: 64}"))
    assert default == explicit and default.epi_chunk_bytes == 128 and "epilogue_n" not in default.fields()
    assert kernels.KernelSpec(**dict(default.fields(), epilogue_n=32)).hash8 != default.hash8
    # the kernel file says so (only when not the default) and the registry carries the D map's box
    text = auto.replace("consumer_mode: pingpong", "consumer_mode: pingpong\n    epilogue_subtile: {m: 64, n: 32}")
    files = render.render(plan.build(config.validate(config.compose(text, "x.yaml"), "x.yaml"), "x.yaml"))
    assert "#define TPG_EPI_CHUNK_BYTES 64" in files[f"kernels/{k.name}.cu"]
    assert ".epi_chunk_bytes = 64," in files["registry.c"]
    files = render.render(plan.build(config.validate(config.compose(auto, "x.yaml"), "x.yaml"), "x.yaml"))
    assert "TPG_EPI_CHUNK_BYTES" not in files[f"kernels/{default.name}.cu"]
    assert kernels.check_kernel("bf16", "f32", 128, 128, 64, 6, 2, 1, 1, "pingpong", 64)  # 6 stages: too big at n 64
    assert not kernels.check_kernel("bf16", "f32", 128, 128, 64, 6, 2, 1, 1, "pingpong", 32)


def test_hilbert_raster_is_a_hashed_knob_with_a_define_and_a_registry_flag():
    text = BASE.replace("consumers: 2", "consumers: 2\n    raster: hilbert")
    k, default = _kernel(text), _kernel(BASE)
    assert k.raster == "hilbert" and "raster" in k.fields() and "raster" not in default.fields()
    assert k.hash8 != default.hash8 and k.smem_bytes == default.smem_bytes
    files = render.render(plan.build(config.validate(config.compose(text, "x.yaml"), "x.yaml"), "x.yaml"))
    assert "#define TPG_RASTER 1" in files[f"kernels/{k.name}.cu"] and ".raster = 1," in files["registry.c"]
    files = render.render(plan.build(config.validate(config.compose(BASE, "x.yaml"), "x.yaml"), "x.yaml"))
    assert "TPG_RASTER" not in files[f"kernels/{default.name}.cu"] and ".raster = 0," in files["registry.c"]


def test_epilogue_buffers_and_deferred_stores_are_hashed_only_off_default():
    """epilogue_buffers sizes the store staging (consumers x buffers x 64 rows x 128 B) and so the stages
    that fit; spelling out the default count (2 per m64 slab) or deferred_stores: true changes no name;
    each non-default value is one #define in the kernel file."""
    auto = BASE.replace("    stages: 4\n", "")
    five = _kernel(auto.replace("consumers: 2", "consumers: 2\n    epilogue_buffers: 5"))
    assert (five.epi_buffer_count, five.stages) == (5, 3)
    assert five.smem_bytes == 3 * 384 * 128 + 2 * 5 * 64 * 128 + 2048 == 231424
    default = _kernel(auto)
    assert (default.epi_buffer_count, default.stages) == (2, 4)
    spelled = _kernel(auto.replace("consumers: 2", "consumers: 2\n    epilogue_buffers: 2\n    deferred_stores: true"))
    assert spelled == default and "epi_buffers" not in default.fields() and "deferred_stores" not in default.fields()
    off = _kernel(auto.replace("consumers: 2", "consumers: 2\n    deferred_stores: false"))
    assert off.hash8 != default.hash8 and off.fields()["deferred_stores"] is False
    for k, define, present in ((five, "#define TPG_EPI_BUFFERS 5", True), (off, "#define TPG_DEFER_STORES 0", True),
                               (default, "TPG_EPI_BUFFERS", False), (default, "TPG_DEFER_STORES", False)):
        text = auto.replace("consumers: 2", "consumers: 2\n    epilogue_buffers: 5") if k is five else \
            auto.replace("consumers: 2", "consumers: 2\n    deferred_stores: false") if k is off else auto
        files = render.render(plan.build(config.validate(config.compose(text, "x.yaml"), "x.yaml"), "x.yaml"))
        assert (define in files[f"kernels/{k.name}.cu"]) is present, (k.name, define)


def test_deferred_flags_is_a_pingpong_choice_hashed_only_when_on():
    """deferred_flags: true (ping-pong only) defines TPG_PP_DEFER_FLAGS 1 and renames the kernel; false
    (the default) changes nothing, so the shipped ping-pong kernels keep their names."""
    pp = BASE.replace("tile: {bm: 128, bn: 256, bk: 64}", "tile: {bm: 128, bn: 128, bk: 64}").replace(
        "consumers: 2", "consumers: 2\n    consumer_mode: pingpong")
    on_text = pp.replace("consumer_mode: pingpong", "consumer_mode: pingpong\n    deferred_flags: true")
    default, spelled, on = _kernel(pp), _kernel(pp.replace("consumer_mode: pingpong",
                                                           "consumer_mode: pingpong\n    deferred_flags: false")), _kernel(on_text)
    assert spelled == default and "deferred_flags" not in default.fields()
    assert on.deferred_flags and on.fields()["deferred_flags"] is True and on.hash8 != default.hash8
    for k, text, present in ((on, on_text, True), (default, pp, False)):
        files = render.render(plan.build(config.validate(config.compose(text, "x.yaml"), "x.yaml"), "x.yaml"))
        assert ("#define TPG_PP_DEFER_FLAGS 1" in files[f"kernels/{k.name}.cu"]) is present


@pytest.mark.parametrize("knob,define", [("prefetch_sources", "TPG_PREFETCH_SOURCES"),
                                          ("tma_partials", "TPG_TMA_PARTIALS")])
def test_pingpong_partial_knob_is_hashed_only_when_on(knob, define):
    """prefetch_sources / tma_partials: true renames the kernel and defines its macro; the default changes
    neither the name nor the shared memory."""
    pp = BASE.replace("tile: {bm: 128, bn: 256, bk: 64}", "tile: {bm: 128, bn: 128, bk: 64}").replace(
        "consumers: 2", "consumers: 2\n    consumer_mode: pingpong")
    on_text = pp.replace("consumer_mode: pingpong", f"consumer_mode: pingpong\n    {knob}: true")
    default, on = _kernel(pp), _kernel(on_text)
    assert knob not in default.fields() and on.fields()[knob] is True
    assert on.hash8 != default.hash8 and on.smem_bytes == default.smem_bytes
    for k, text, present in ((on, on_text, True), (default, pp, False)):
        files = render.render(plan.build(config.validate(config.compose(text, "x.yaml"), "x.yaml"), "x.yaml"))
        assert (f"#define {define} 1" in files[f"kernels/{k.name}.cu"]) is present


def test_cooperative_tma_partials_renders_its_macro():
    """tma_partials: true on a cooperative kernel with a buffer per store unit (the "_wide" kernel's 5 for
    its 4 units) is accepted, renames the kernel and defines TPG_TMA_PARTIALS 1 (epilogue_deferred.cuh
    then loads received partials by TMA)."""
    wide = BASE.replace("stages: 4", "stages: 3").replace("consumers: 2", "consumers: 2\n    epilogue_buffers: 5")
    on_text = wide.replace("epilogue_buffers: 5", "epilogue_buffers: 5\n    tma_partials: true")
    default, on = _kernel(wide), _kernel(on_text)
    assert on.fields()["tma_partials"] is True and on.hash8 != default.hash8
    assert on.smem_bytes == default.smem_bytes
    files = render.render(plan.build(config.validate(config.compose(on_text, "x.yaml"), "x.yaml"), "x.yaml"))
    assert "#define TPG_TMA_PARTIALS 1" in files[f"kernels/{on.name}.cu"]


def test_stream_k_is_opt_in_and_hashed_only_when_on():
    """stream_k: true (cooperative 1x1 kernels) renames the kernel, defines TPG_STREAM_K 1 and sets the
    registry flag the runtime reads; the default (false) changes nothing. Ping-pong kernels never split."""
    on_text = BASE.replace("consumers: 2", "consumers: 2\n    stream_k: true")
    default, on = _kernel(BASE), _kernel(on_text)
    assert not default.splits_k and "stream_k" not in default.fields()
    assert on.splits_k and on.fields()["stream_k"] is True and on.hash8 != default.hash8
    pp = _kernel(BASE.replace("tile: {bm: 128, bn: 256, bk: 64}", "tile: {bm: 128, bn: 128, bk: 64}").replace(
        "consumers: 2", "consumers: 2\n    consumer_mode: pingpong"))
    assert not pp.splits_k
    for k, text, flag in ((on, on_text, 1), (default, BASE, 0)):
        files = render.render(plan.build(config.validate(config.compose(text, "x.yaml"), "x.yaml"), "x.yaml"))
        assert ("#define TPG_STREAM_K 1" in files[f"kernels/{k.name}.cu"]) is (flag == 1)
        assert f".stream_k = {flag}," in files["registry.c"]


def test_defines_reach_the_instance_and_its_name():
    """defines: the macros are written into the instance, and they make it a different kernel."""
    text = BASE.replace("consumers: 2", "consumers: 2\n    defines: [TPG_SK_COUNT_SLEEP_NS=4]")
    k, default = _kernel(text), _kernel(BASE)
    assert k.hash8 != default.hash8
    files = render.render(plan.build(config.validate(config.compose(text, "x.yaml"), "x.yaml"), "x.yaml"))
    assert "#define TPG_SK_COUNT_SLEEP_NS 4" in files[f"kernels/{k.name}.cu"]


def test_defines_may_not_set_a_macro_the_template_writes():
    """Every macro templates/gemm_sm90.cu.j2 defines from a knob is refused in `defines` (one left out,
    TPG_FP8_PROMOTE, once let a config change an fp8 kernel's numerics behind the runtime's back)."""
    written = set(re.findall(r"^#define (TPG_[A-Z0-9_]+)", (ROOT / "templates/gemm_sm90.cu.j2").read_text(), re.M))
    assert written and not written - set(kernels.KNOB_MACROS), sorted(written - set(kernels.KNOB_MACROS))
    text = BASE.replace("consumers: 2", "consumers: 2\n    defines: [TPG_FP8_PROMOTE=4]")
    with pytest.raises(config.ConfigError, match="TPG_FP8_PROMOTE"):
        config.validate(config.compose(text, "x.yaml"), "x.yaml")


def test_cooperative_n_tiles_split_along_n():
    """cooperative_n: both warpgroups cover all BM rows, BN/2 columns each (m64n96 for 192x192), so the
    epilogue subtile must divide BN/2 and the accumulators ((BM/64)·(BN/2)/2) may reach 160."""
    sn = BASE.replace("tile: {bm: 128, bn: 256, bk: 64}", "tile: {bm: 192, bn: 192, bk: 64}").replace(
        "consumers: 2", "consumers: 2\n    consumer_mode: cooperative_n\n    epilogue_subtile: {m: 64, n: 32}\n"
        "    epilogue_buffers: 3")
    k = _kernel(sn)
    assert k.mode_value == 2 and "_w2n_" in k.name and kernels.acc_per_thread(192, 192, 2, "cooperative_n") == 144
    assert k.smem_bytes == 4 * 384 * 128 + 2 * 3 * 64 * 64 + 2048 <= kernels.SMEM_LIMIT
    files = render.render(plan.build(config.validate(config.compose(sn, "x.yaml"), "x.yaml"), "x.yaml"))
    assert "#define TPG_CONSUMER_MODE 2" in files[f"kernels/{k.name}.cu"]
    check = kernels.check_kernel
    # 64-column subtiles do not divide the 96 columns of a warpgroup
    assert "epilogue_subtile.n" in [f for f, _, _ in check("bf16", "f32", 192, 192, 64, 3, 2, 1, 1, "cooperative_n", 64)]
    # 256x192: 4 slabs x 48 = 192 accumulators
    assert any("exceed 160" in p for _, p, _ in check("bf16", "f32", 256, 192, 64, 2, 2, 1, 1, "cooperative_n", 32))
    # 128x320: two m64n160 per warpgroup (160 accumulators); B (320 rows) only as two 160-row TMA boxes, so in a
    # 2x1 cluster only, and never outside cooperative_n
    assert not check("bf16", "f32", 128, 320, 64, 3, 2, 2, 1, "cooperative_n", 32)
    assert any("2x1 cluster" in p for _, p, _ in check("bf16", "f32", 128, 320, 64, 3, 2, 1, 1, "cooperative_n", 32))
    assert "tile.bn" in [f for f, _, _ in check("bf16", "f32", 128, 320, 64, 3, 2, 2, 1, "cooperative", 64)]
    assert [f for f, _, _ in check("bf16", "f32", 320, 128, 64, 2, 2, 1, 1, "cooperative_n")] == ["tile.bm"]
    assert "tile.bn" in [f for f, _, _ in check("bf16", "f32", 192, 64, 64, 2, 2, 1, 1, "cooperative_n")]
    assert any("needs 2 consumer" in p for _, p, _ in check("bf16", "f32", 128, 128, 64, 2, 1, 1, 1, "cooperative_n"))
    assert not check("bf16", "f32", 192, 192, 64, 3, 2, 2, 1, "cooperative_n", 32)  # clusters are fine


def test_splits_k_is_the_kernels_own_condition():
    """splits_k (the registry's .stream_k) mirrors gemm_sm90.cuh's kStreamK: stream_k on a cooperative 1x1 kernel
    only - a cluster or another consumer mode carries the field and still walks no stream-K tail."""
    def wide(cluster_m=1, cluster_n=1):
        return kernels.make_kernel("bf16", "f32", 128, 256, 64, 3, 2, cluster_m, cluster_n, epi_buffers=5,
                                   stream_k=True)
    assert wide().splits_k
    assert not wide(cluster_m=2).splits_k and not wide(cluster_n=2).splits_k
    assert not kernels.make_kernel("bf16", "f32", 128, 128, 64, 5, 2, 1, 1, consumer_mode="pingpong",
                                   stream_k=True).splits_k
    assert not kernels.make_kernel("bf16", "f32", 128, 256, 64, 3, 2, 1, 1, epi_buffers=5).splits_k


def test_deferred_stores_beside_epilogues_that_spilled_are_refused():
    """Kernels the validator took and ptxas then spilled (a review, 2026-12-06; tests/test_build.py would fail
    later): cooperative deferred stores beside 128 accumulators with fp32 partials in a 1x1 kernel, or with
    TMA-loaded partials and one consumer warpgroup. deferred_stores: false builds clean, so does a 2x1 cluster's f32."""
    check = kernels.check_kernel
    for args in (dict(bm=128, bn=256, consumers=2, cluster_m=1, partials="f32", epi_buffers=5),
                 dict(bm=256, bn=128, consumers=2, cluster_m=1, partials="f32"),
                 dict(bm=128, bn=128, consumers=1, cluster_m=1, partials="f32"),
                 dict(bm=128, bn=128, consumers=1, cluster_m=1, tma_partials=True)):
        base = dict(dtype="bf16", acc="f32", bk=64, stages=3, cluster_n=1, **args)
        (field, problem, allowed), = check(**base)
        assert field == "deferred_stores" and "128 accumulators per consumer thread" in problem, problem
        assert allowed == "deferred_stores: false"
        assert check(**base, deferred_stores=False) == []
    assert check("bf16", "f32", 128, 256, 64, 3, 2, 2, 1, partials="f32", epi_buffers=5) == []  # 2x1: clean
    assert check("bf16", "f32", 128, 192, 64, 3, 2, 1, 1, partials="f32") == []  # 96 accumulators: clean
    assert check("bf16", "f32", 128, 256, 64, 3, 2, 1, 1, tma_partials=True, epi_buffers=4) == []  # 2 consumers


def test_a_mode_that_needs_two_consumers_judges_its_tile_with_two():
    """cooperative_n with consumers 1: the consumers error alone, not a second one calling 128x256 too big."""
    (field, problem, _), = kernels.check_kernel("bf16", "f32", 128, 256, 64, 3, 1, 1, 1, consumer_mode="cooperative_n")
    assert field == "consumer_mode" and "needs 2 consumer warpgroups" in problem
    (field, problem, _), = kernels.check_kernel("bf16", "f32", 128, 320, 64, 3, 2, 2, 1)  # cooperative 128x320
    assert field == "tile.bn" and "320 only with consumer_mode: cooperative_n" in problem
