"""build/libtpgemm.so through ctypes, without a GPU: the multi-process entry point fails cleanly."""
import ctypes
import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import tpgemm_lib  # noqa: E402

TPG_DTYPE_FP32 = tpgemm_lib.DTYPES["fp32"]


def has_gpu():
    return shutil.which("nvidia-smi") is not None and subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def lib():
    if not tpgemm_lib.LIB_PATH.exists():
        subprocess.run(["ninja", "build/libtpgemm.so"], cwd=ROOT, check=True, capture_output=True)
    return tpgemm_lib.Lib()


def functions_declared(text: str) -> set:
    """The tpg_ functions a C header's text declares: comments and macros (with their continued lines) stripped."""
    code = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    code = re.sub(r"//[^\n]*", " ", code)
    code = re.sub(r"#define(?:[^\n]*\\\n)*[^\n]*", " ", code)
    return set(re.findall(r"\b(tpg_\w+)\s*\(", code))


def header_functions() -> set:
    return functions_declared((ROOT / "runtime" / "include" / "tpgemm.h").read_text())


def test_functions_declared_skips_macros_and_comments():
    text = "#define A(x) \\\n  tpg_bad(x) \\\n  tpg_worse(x)\nint tpg_good(void); // tpg_comment(\n/* tpg_c( */"
    assert functions_declared(text) == {"tpg_good"}


def test_shared_library_exports_the_header_api_only(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", str(tpgemm_lib.LIB_PATH)], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("nm is not available")
    names = {line.split()[-1] for line in out.stdout.splitlines() if line.split()[-2:-1] != ["A"]}
    declared = header_functions()
    assert "tpg_ctx_create_rank" in declared and len(declared) > 20, sorted(declared)
    # cudart is linked statically and hidden, so a PyTorch process's libcudart cannot interpose it; the kernels'
    # extern "C" entry points and the runtime's internals stay inside too (runtime/libtpgemm.map)
    assert names == declared, (sorted(names - declared)[:10], sorted(declared - names))


def test_config_info_binding_matches_the_c_struct(lib):
    """tpg_config_get must not write past the ctypes ConfigInfo (a field added to tpg_config_info without
    the binding corrupted memory once), and the accumulator, fp8_promote, partials, wave_weight, stream_k and
    by_name fields read back."""
    size = ctypes.sizeof(tpgemm_lib.ConfigInfo)
    buf = (ctypes.c_ubyte * (size + 64))(*([0xA5] * (size + 64)))
    assert lib.lib.tpg_config_get(0, ctypes.cast(buf, ctypes.POINTER(tpgemm_lib.ConfigInfo))) == 0
    assert bytes(buf[size:]) == b"\xa5" * 64
    accs, promotes, f32p, weights, split, by_name = set(), {}, set(), {}, set(), set()
    for i in range(lib.lib.tpg_config_count()):
        info = tpgemm_lib.ConfigInfo()
        assert lib.lib.tpg_config_get(i, ctypes.byref(info)) == 0
        accs.add((info.name.decode().startswith("ag_rota_fp16acc"), info.acc))
        promotes[info.name.decode()] = info.fp8_promote
        weights[info.wave_weight] = weights.get(info.wave_weight, 0) + 1
        if info.partials == TPG_DTYPE_FP32:
            f32p.add(info.name.decode())
        if info.stream_k:
            split.add(info.name.decode())
        if info.by_name:
            by_name.add(info.name.decode())
    assert accs == {(False, TPG_DTYPE_FP32), (True, tpgemm_lib.DTYPES["fp16"])}
    fused = {f"{fam}_e4m3_promoted_tp{tp}" for fam in ("ag_rota", "ag_rotb", "rs_tila", "rs_tilb") for tp in (2, 4, 8)}
    local = {f"{fam}_e4m3_promoted_tp1" for fam in ("ag_rota", "rs_tila", "rs_tilb")} | {"gemm_e4m3_promoted_tp1"}
    assert {n for n, v in promotes.items() if v} == fused | local and {v for v in promotes.values() if v} == {8}
    assert f32p == {f"rs_til{s}_bf16{w}_f32p_tp{tp}" for s in "ab" for w in ("", "_wide") for tp in (2, 4, 8)}
    assert weights.keys() == {0, 80, 90} and weights[90] == 16 and weights[80] == 32  # *_w160, *_pp64 at 4 TPs
    assert split == {f"{fam}_{dt}_sk64_tp{tp}" for dt in ("bf16", "fp16") for fam, tps in
                     (("ag_rota", (1, 2, 4, 8)), ("rs_tila", (1, 2, 4, 8)), ("ag_rotb", (1,)), ("rs_tilb", (1,)))
                     for tp in tps}
    # the by_name twins: one a bf16 reduce-scatter family, TP >= 2 and route other than the family's own, named by it
    families = [f"rs_til{s}_bf16{w}" for s in "ab" for w in ("", "_wide")]
    own = {f: tpgemm_lib.partial_route(lib.config_info(lib.config(name=f"{f}_tp2", tp=0, dtype="bf16")))
           for f in families}
    assert by_name == {f"{f}_{route}_tp{tp}" for f in families for route in tpgemm_lib.ROUTES if route != own[f]
                       for tp in (2, 4, 8)}


def test_copy_chunks_binding_refuses_a_null_op(lib):
    """tpg_op_set_copy_chunks is exported and bound (bench/tp_bench.py --alt-copy-chunks calls it)."""
    assert lib.lib.tpg_op_set_copy_chunks(None, 4) == tpgemm_lib.TPG_ERR_INVALID_ARGUMENT


def test_overlap_barriers_binding_refuses_a_null_op(lib):
    """tpg_op_set_overlap_barriers is exported and bound (bench/tp_bench.py --alt-overlap-barriers calls it)."""
    assert lib.lib.tpg_op_set_overlap_barriers(None, 1) == tpgemm_lib.TPG_ERR_INVALID_ARGUMENT


def test_gather_copy_engine_binding_refuses_a_null_op(lib):
    """tpg_op_set_gather_copy_engine is exported and bound (bench/tp_bench.py --alt-gather-copy-engine calls it)."""
    assert lib.lib.tpg_op_set_gather_copy_engine(None, 1) == tpgemm_lib.TPG_ERR_INVALID_ARGUMENT


# How the header's C types reach ctypes: a value type by its width (enums are ints), any pointer as a pointer.
C_VALUE_TYPES = {"int": ctypes.c_int, "tpg_status": ctypes.c_int, "tpg_dtype": ctypes.c_int,
                 "tpg_transport": ctypes.c_int, "int64_t": ctypes.c_int64, "size_t": ctypes.c_size_t,
                 "float": ctypes.c_float}


def header_prototypes() -> dict[str, tuple[str, list[str]]]:
    """name -> (return type, parameter types) of every function tpgemm.h declares."""
    text = re.sub(r"/\*.*?\*/", "", (ROOT / "runtime/include/tpgemm.h").read_text(), flags=re.S)
    out = {}
    for ret, name, params in re.findall(r"^([A-Za-z_][\w ]*?\**)\s*(tpg_\w+)\(([^;{]*?)\);", text, re.M | re.S):
        types = [re.sub(r"\s*\b\w+$", "", p.strip()) if not p.strip().endswith("*") else p.strip()
                 for p in params.split(",") if p.strip() not in ("", "void")]
        out[name] = (ret.strip(), [" ".join(t.split()) for t in types])
    return out


OPAQUE = {"tpg_ctx", "tpg_op", "struct CUstream_st"}  # handles: bound as c_void_p


def ctypes_kind(c_type: str):
    """The ctypes class a C type must be bound as: a value type by its width, char * as c_char_p, a handle as c_void_p,
    a pointer to a handle as POINTER(c_void_p), any other pointer as a POINTER of its target's ctypes class (int * as
    POINTER(c_int), a struct as its mirror in tpgemm_lib: MIRRORS)."""
    words = c_type.replace("const", " ").replace("*", " * ").split()
    stars = words.count("*")
    target = " ".join(w for w in words if w != "*")
    if stars == 0:
        return C_VALUE_TYPES[target]
    if (target, stars) == ("char", 1):
        return ctypes.c_char_p
    if target in OPAQUE:
        return ctypes.c_void_p if stars == 1 else ctypes.POINTER(ctypes.c_void_p)
    assert stars == 1, c_type
    mirrors = {c: getattr(tpgemm_lib, py) for py, c in MIRRORS.items()}
    return ctypes.POINTER(mirrors[target] if target in mirrors else C_VALUE_TYPES[target])


def bound_kind(t):
    return getattr(t, "ctype", t)  # tpgemm_lib.checked's entry: its C type


def test_every_exported_function_is_declared_as_the_header_says(lib):
    """A tpg_ function called through ctypes without its argtypes / restype gets ctypes' guesses (an int result: a
    const char * cut to 32 bits; each argument as Python passes it): every function of the header is bound, its
    arguments and result as the prototype says - a pointer's target too (an int * bound as POINTER(c_int64) passed)."""
    protos = header_prototypes()
    assert len(protos) >= 32 and "tpg_op_run" in protos
    for name, (ret, params) in protos.items():
        fn = getattr(lib.lib, name)
        assert fn.argtypes is not None, f"{name} has no argtypes"
        assert [bound_kind(t) for t in fn.argtypes] == [ctypes_kind(p) for p in params], (name, params)
        assert fn.restype is ctypes_kind(ret), (name, ret)


def test_an_integer_argument_its_c_type_cannot_hold_is_refused(lib):
    """ctypes wraps an integer silently (config 2**32 read as 0): the binding's argtypes check the range first (a
    ctypes.ArgumentError naming the function and argument)."""
    info = tpgemm_lib.ConfigInfo()
    with pytest.raises(ctypes.ArgumentError, match=r"tpg_config_get's argument 1 = 4294967296 is outside"):
        lib.lib.tpg_config_get(2**32, ctypes.byref(info))
    with pytest.raises(ctypes.ArgumentError, match="tpg_op_set_pdl's argument 2"):
        lib.lib.tpg_op_set_pdl(None, -(2**31) - 1)
    assert lib.lib.tpg_config_get(0, ctypes.byref(info)) == 0 and info.name
    assert lib.lib.tpg_dtype_name(0) == b"bf16" and lib.lib.tpg_dtype_size(0) == 2


def test_dtypes_are_the_headers_tpg_dtype():
    """DTYPES (and local_config's reverse lookup, set_torch_tensors' types) covers every tpg_dtype, fp32 included."""
    enum = re.search(r"typedef enum tpg_dtype \{(.*?)\}", (ROOT / "runtime/include/tpgemm.h").read_text(), re.S)[1]
    enum = re.sub(r"/\*.*?\*/", "", enum, flags=re.S)
    assert re.findall(r"=\s*(\w+)", enum) == ["0"]  # the others count on from 0
    names = re.findall(r"TPG_DTYPE_(\w+)", enum)
    assert tpgemm_lib.DTYPES == {name.lower(): i for i, name in enumerate(names)}
    assert tpgemm_lib.TORCH_DTYPES.keys() == tpgemm_lib.DTYPES.keys()


def test_rs_ring_binding_refuses_a_null_op(lib):
    """tpg_op_set_rs_ring is exported and bound (bench/tp_bench.py --alt-rs-ring calls it)."""
    assert lib.lib.tpg_op_set_rs_ring(None, 1) == tpgemm_lib.TPG_ERR_INVALID_ARGUMENT


def test_create_rank_without_gpu_is_no_device(lib):
    if has_gpu():
        pytest.skip("a GPU is visible: the no-device path cannot be exercised here")
    calls = []

    def allgather(send):  # tp = 1: the all-gather is the identity
        calls.append(len(send))
        return send

    with pytest.raises(tpgemm_lib.TpgError) as e:
        lib.ctx_rank(tp=1, rank=0, device=0, allgather=allgather)
    assert e.value.status == tpgemm_lib.TPG_ERR_NO_DEVICE
    assert "rank 0" in str(e.value)
    assert len(calls) == 2  # the failure still went through both collective rounds (no rank is left waiting)


def test_create_rank_bootstrap_failure_is_reported(lib, capfd):
    """A callback that raises: the binding says which rank's all-gather failed and why, and the context is refused -
    without a GPU by the local failure (no device), which wins; with one, as a bootstrap failure."""
    def broken(send):
        raise RuntimeError("process group is gone")

    with pytest.raises(tpgemm_lib.TpgError) as e:
        lib.ctx_rank(tp=2, rank=1, device=0, allgather=broken)
    assert e.value.status == (tpgemm_lib.TPG_ERR_BOOTSTRAP if has_gpu() else tpgemm_lib.TPG_ERR_NO_DEVICE)
    assert "bootstrap allgather failed on rank 1: RuntimeError('process group is gone')" in capfd.readouterr().err


def test_create_rank_nccl_library_missing(lib, monkeypatch):
    """transport="nccl" loads NCCL first (no device needed): a library that is not there fails every rank with
    TPG_ERR_NCCL naming it and the variable to set, after the collective round (no rank is left waiting)."""
    monkeypatch.setenv("TPG_NCCL_LIBRARY", "/nonexistent/libnccl.so.2")
    calls = []

    def allgather(send):
        calls.append(len(send))
        return send

    with pytest.raises(tpgemm_lib.TpgError) as e:
        lib.ctx_rank(tp=1, rank=0, device=0, allgather=allgather, transport="nccl")
    assert e.value.status == tpgemm_lib.TPG_ERR_NCCL
    assert "/nonexistent/libnccl.so.2" in str(e.value) and "TPG_NCCL_LIBRARY" in str(e.value)
    assert len(calls) == 2


def test_create_rank_refuses_an_unknown_transport(lib):
    cfg = tpgemm_lib.RankConfig(1, 0, 0, 0, tpgemm_lib.ALLGATHER_FN(lambda *a: 0), None, 0, 7)
    ctx = ctypes.c_void_p()
    assert lib.lib.tpg_ctx_create_rank(ctypes.byref(cfg), ctypes.byref(ctx)) == tpgemm_lib.TPG_ERR_INVALID_ARGUMENT
    assert b"transport = 7" in lib.lib.tpg_last_error(None)


def test_create_rank_argument_errors(lib):
    with pytest.raises(tpgemm_lib.TpgError) as e:
        lib.ctx_rank(tp=2, rank=2, device=0, allgather=lambda s: s * 2)
    assert e.value.status == 1 and "rank = 2" in str(e.value)


def test_create_rank_names_a_negative_device_as_the_callers_argument(lib):
    """Whatever the machine holds (it once read as NO_DEVICE), before NCCL is loaded, and through the exchange."""
    with pytest.raises(tpgemm_lib.TpgError) as e:
        lib.ctx_rank(tp=1, rank=0, device=-1, allgather=lambda s: s, transport="nccl")
    assert e.value.status == tpgemm_lib.TPG_ERR_INVALID_ARGUMENT
    assert "rank 0: tpg_rank_config.device = -1 is not a device ordinal" in str(e.value)


def test_tuned_or_default_and_local_config(lib):
    """tp_bench's config choice: the tuned row of exactly this GEMM, else the default; local = the same config
    family at TP = 1 - for the reduce-scatter *_wide configs the local kernel (kernel_tp1), not the _rs
    kernel they run fused, nor the schedule's K-blind default (ping-pong)."""
    ag, rs = "AllGather1D_TilingCD_RotatingA", "ReduceScatter1D_TilingA_RotatingC"
    default = lib.config(schedule=ag, tp=2, dtype="bf16")
    idx, tuned = lib.tuned_or_default(ag, 2, "bf16", 8192, 6144, 4096)  # no tuned file covers 8B at TP = 2
    assert (idx, tuned) == (default, False)
    info = lib.config_info(default)
    local = lib.config_info(lib.local_config(default, 1))
    assert (local["tp"], local["kernel"], local["schedule"]) == (1, info["kernel"], ag)
    wide_rs = lib.config_pick(rs, 2, "bf16", 16384, 16384, 53248)  # 405B-fc2: per-stage K 26624
    assert lib.config_info(wide_rs)["name"] == "rs_tila_bf16_wide_tp2"
    local = lib.config_info(lib.local_config(wide_rs, 1))
    assert local["name"] == "rs_tila_bf16_wide_tp1" and local["kernel"] != lib.config_info(wide_rs)["kernel"]
    assert local["kernel"] == lib.config_info(lib.config(name="ag_rota_bf16_wide_tp1", tp=1, dtype="bf16"))["kernel"]


def test_every_configs_local_gemm_is_a_tp_1_config_of_its_schedule_and_dtype(lib):
    """Whatever the family (one without a _tp1 config falls back to a same-kernel config, then the default): the local
    GEMM the benchmark times is a TP = 1 config of the fused config's schedule and dtype."""
    fallbacks = 0
    for i in range(lib.lib.tpg_config_count()):
        want = lib.config_info(i)
        if want["tp"] == 1:
            continue
        try:
            got = lib.config_info(lib.local_config(i, 1))
        except tpgemm_lib.TpgError:  # no TP = 1 config of the schedule and dtype at all
            continue
        fallbacks += got["name"] != want["name"].rsplit("_tp", 1)[0] + "_tp1"
        assert (got["tp"], got["schedule"], got["dtype"]) == (1, want["schedule"], want["dtype"]), (want, got)
    # some families have no _tp1 config today, so the fallbacks ran; if every family gets one, this test needs a fake
    # table to reach them
    assert fallbacks > 0, "every family has a _tp1 config now: the fallbacks went untested"


class FakeTables:
    """The two C calls tuned_or_default makes, over a dispatch table of one row (m, n, k, config, tuned): no tuned
    file is committed, so the library's own table has no tuned row to find."""

    def __init__(self, row):
        self.row = row

    def tpg_dispatch_find(self, model, layer, m, n, k, dtype, schedule, tp, out):
        e = out._obj
        e.m, e.n, e.k, e.config, e.tuned = self.row
        return tpgemm_lib.TPG_OK

    def tpg_config_pick(self, schedule, tp, dtype, m, n, k, out):
        out._obj.value = 7
        return tpgemm_lib.TPG_OK


@pytest.mark.parametrize("row, want", [((16384, 10240, 8192, 42, 1), (42, True)),   # tuned for exactly this GEMM
                                       ((8192, 10240, 8192, 42, 1), (7, False)),   # the nearest M, not this one
                                       ((16384, 10240, 8192, 42, 0), (7, False))])  # an untuned row: the pick
def test_tuned_or_default_takes_a_tuned_row_only_for_exactly_its_gemm(row, want):
    lib = object.__new__(tpgemm_lib.Lib)
    lib.lib = FakeTables(row)
    assert lib.tuned_or_default("AllGather1D_TilingCD_RotatingA", 2, "bf16", 16384, 10240, 8192) == want


@pytest.mark.parametrize("route", list(tpgemm_lib.ROUTES))
def test_twin_runs_the_same_kernel_on_the_route_asked_for(lib, route):
    """tp_bench --alt-push-partials / --alt-pull-partials / --alt-copy-engine-partials: each bf16 reduce-scatter
    family at TP >= 2 has a by_name twin on every route but its own that differs only in the route; a config on the
    route already, and one without such a twin, are refused by name."""
    word = tpgemm_lib.ROUTES[route][1]
    for name in ("rs_tila_bf16_tp2", "rs_tilb_bf16_wide_tp4", "rs_tila_bf16_wide_tp8", "rs_tilb_bf16_tp8"):
        idx = lib.config(name=name, tp=0, dtype="bf16")
        info = lib.config_info(idx)
        if tpgemm_lib.partial_route(info) == route:
            with pytest.raises(ValueError, match=f"{name} has its partials {word} already"):
                lib.twin(idx, route)
            continue
        twin = lib.config_info(lib.twin(idx, route))
        assert route != "pull" or lib.pull_twin(idx) == lib.twin(idx, route)
        assert tpgemm_lib.partial_route(twin) == route and twin["by_name"]
        assert [twin[f] for f in ("schedule", "tp", "kernel")] == [info[f] for f in ("schedule", "tp", "kernel")]
    fp16 = lib.config(name="rs_tila_fp16_tp2", tp=0, dtype="fp16")  # pushes, and has no twin
    with pytest.raises(ValueError, match=f"rs_tila_fp16_tp2 has (no {word} twin|its partials pushed already)"):
        lib.twin(fp16, route)


def test_twin_lookup_prefers_the_family_and_refuses_a_tie():
    """tpgemm_lib.twin_index: among configs on the route with the same schedule, TP and kernel, the family's own twin
    wins over an experiment on the same kernel; two candidates neither of the family are refused, naming both."""
    row = lambda name, route: {"name": name, "schedule": "S", "tp": 2, "kernel": "k",  # noqa: E731
                               "pull_partials": route == "pull", "copy_engine_partials": route == "ce"}
    infos = [row("rs_tila_bf16_tp2", "push"), row("x_rs_tp2", "pull"), row("rs_tila_bf16_pull_tp2", "pull"),
             row("y_tp2", "ce"), row("z_tp2", "ce"), {**row("rs_tila_bf16_ce_tp2", "ce"), "tp": 4}]
    assert tpgemm_lib.twin_index(infos, 0, "pull") == 2 and tpgemm_lib.twin_index(infos, 2, "push") == 0
    with pytest.raises(ValueError, match=r"2 copy-engine twins \(y_tp2, z_tp2\)"):
        tpgemm_lib.twin_index(infos, 0, "ce")
    with pytest.raises(ValueError, match="rs_tila_bf16_tp2 has its partials pushed already"):
        tpgemm_lib.twin_index(infos, 0, "push")
    # from a twin to another route: its family is the name without the route (rs_tila_bf16), not rs_tila_bf16_pull
    infos = [row("rs_tila_bf16_pull_tp2", "pull"), row("w_tp2", "ce"), row("rs_tila_bf16_ce_tp2", "ce")]
    assert tpgemm_lib.twin_index(infos, 0, "ce") == 2


def test_untuned_reduce_scatter_default_follows_the_per_stage_k(lib):
    """Without a tuned row tp_bench runs tpg_config_pick's choice for the GEMM, not tpg_config_find's
    shape-blind one: reduce-scatter turns wide from K/tp = 10240 (schedules.yaml prefer_from_local_k)."""
    rs = "ReduceScatter1D_TilingA_RotatingC"

    def name(idx):
        return lib.config_info(idx)["name"]

    assert name(lib.config(schedule=rs, tp=2, dtype="bf16")) == "rs_tila_bf16_tp2"  # shape unknown
    assert name(lib.config_pick(rs, 2, "bf16", 8192, 4096, 28672)) == "rs_tila_bf16_wide_tp2"  # 14336 per stage
    assert name(lib.config_pick(rs, 2, "bf16", 8192, 4096, 8192)) == "rs_tila_bf16_tp2"  # 4096 per stage
    idx, tuned = lib.tuned_or_default(rs, 2, "bf16", 8192, 4096, 28672)  # no preset or tuned row has this shape
    assert (name(idx), tuned) == ("rs_tila_bf16_wide_tp2", False)
    with pytest.raises(tpgemm_lib.TpgError):
        lib.config_pick("NoSuchSchedule", 2, "bf16", 8192, 4096, 8192)


# The C struct each ctypes mirror of the binding stands for.
MIRRORS = {"RankConfig": "tpg_rank_config", "CtxConfig": "tpg_ctx_config", "OpDesc": "tpg_op_desc",
           "Tensors": "tpg_tensors", "ShardShape": "tpg_shard_shape", "ConfigInfo": "tpg_config_info",
           "DispatchEntry": "tpg_dispatch_entry"}


def test_struct_bindings_match_the_c_layout(tmp_path):
    """C reads or writes every ctypes mirror: each one's size and each field's offset and size must agree with the
    header's struct (a field added, moved or widened in C and not in the binding is read as garbage)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to read the C layout with")
    lines, want = [], []
    for py, c in MIRRORS.items():
        struct = getattr(tpgemm_lib, py)
        lines.append(f'  printf("{c} %zu\\n", sizeof({c}));')
        want.append(f"{c} {ctypes.sizeof(struct)}")
        for name, ctype in struct._fields_:
            lines.append(f'  printf("{c}.{name} %zu %zu\\n", offsetof({c}, {name}), sizeof((({c} *)0)->{name}));')
            want.append(f"{c}.{name} {getattr(struct, name).offset} {ctypes.sizeof(ctype)}")
    src = tmp_path / "layout.c"
    src.write_text('#include <stddef.h>\n#include <stdio.h>\n#include "tpgemm.h"\nint main(void) {\n'
                   + "\n".join(lines) + "\n  return 0;\n}\n")
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c11", "-I", str(ROOT / "runtime/include"), str(src), "-o", str(exe)], check=True)
    got = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split("\n")[:-1]
    assert got == want
    assert len(want) > 70


def test_lookups_pass_names_as_the_c_api_takes_them_and_name_a_wrong_enum(lib):
    """A user walkthrough: config("") returned the default pick (the binding turned "" into NULL), config_pick(None)
    raised AttributeError where C takes NULL as any schedule, and an unknown dtype or transport was a bare KeyError."""
    with pytest.raises(tpgemm_lib.TpgError) as e:
        lib.config("")
    assert "TPG_ERR_UNKNOWN_CONFIG" in str(e.value)
    ag = "AllGather1D_TilingCD_RotatingA"
    assert lib.config_info(lib.config_pick(None, 2, "bf16", 16384, 10240, 8192))["tp"] == 2  # NULL: any schedule
    with pytest.raises(ValueError, match="unknown dtype 'bf17': one of bf16, fp16"):
        lib.config_pick(ag, 2, "bf17", 16384, 10240, 8192)
    with pytest.raises(ValueError, match="unknown transport 'tcp': one of peer, nccl"):
        lib.ctx_rank(2, 0, 0, lambda send: send * 2, transport="tcp")


def test_an_integer_its_c_type_cannot_hold_is_refused_not_wrapped(lib):
    """ctypes wraps silently: m = 2**70 reached tpg_config_pick as 64, timeout_ns = -1 as 2**64 - 1 (a walkthrough)."""
    ag = "AllGather1D_TilingCD_RotatingA"
    with pytest.raises(ValueError, match=r"m = 1180591620717411303424 is outside the range of its C type"):
        lib.config_pick(ag, 2, "bf16", 2**70, 4096, 4096)
    with pytest.raises(ValueError, match=r"RankConfig.timeout_ns = -1 is outside"):
        lib.ctx_rank(2, 0, 0, lambda send: send * 2, timeout_ns=-1)
    with pytest.raises(ValueError, match=r"OpDesc.k = 9223372036854775808 is outside"):
        tpgemm_lib.fitted(tpgemm_lib.OpDesc, 0, 64, 64, 2**63, 1, 1.0, 0.0)
    assert tpgemm_lib.fitted(tpgemm_lib.OpDesc, 0, 64, 64, 2**63 - 1, 1, 1.0, 0.0).k == 2**63 - 1


def test_a_numpy_integer_its_c_type_cannot_hold_is_refused_not_wrapped(lib):
    """ctypes takes any integer with __index__ (numpy's, torch's) and wraps it as it wraps an int: tp = np.int64(2**32 +
    2) picked a TP = 2 config, m = np.uint64(2**64 - 1) became -1, config 2**32 read config 0 (a walkthrough)."""
    np = pytest.importorskip("numpy")
    ag = "AllGather1D_TilingCD_RotatingA"
    with pytest.raises(ValueError, match=r"^tp = 4294967298 is outside the range of its C type"):
        lib.config_pick(ag, np.int64(2**32 + 2), "bf16", 4096, 4096, 4096)
    with pytest.raises(ValueError, match=r"OpDesc.m = 18446744073709551615 is outside"):
        tpgemm_lib.fitted(tpgemm_lib.OpDesc, 0, np.uint64(2**64 - 1), 64, 64, 1, 1.0, 0.0)
    with pytest.raises(ctypes.ArgumentError, match=r"tpg_config_get's argument 1 = 4294967296 is outside"):
        lib.lib.tpg_config_get(np.int64(2**32), ctypes.byref(tpgemm_lib.ConfigInfo()))
    # in range they pass, as ints
    assert lib.config_pick(ag, np.int32(2), "bf16", np.int64(4096), 4096, 4096) == lib.config_pick(ag, 2, "bf16",
                                                                                                  4096, 4096, 4096)
    assert tpgemm_lib.fitted(tpgemm_lib.OpDesc, np.int16(3), np.uint64(64), 64, 64, 1, 1.0, 0.0).config == 3


@pytest.mark.parametrize("call, says", [
    (lambda L: L.config(schedule="AllGather1D_TilingCD_RotatingA", tp="2"),
     r"tpg_config_find's argument 3 = '2' \(str\) is not an int"),
    (lambda L: L.config_pick("AllGather1D_TilingCD_RotatingA", 2, "bf16", 4096.0, 4096, 4096),
     r"tpg_config_pick's argument 4 = 4096.0 \(float\) is not an int64_t"),
    (lambda L: L.lib.tpg_op_run_rank(None, 0, object()),
     r"tpg_op_run_rank's argument 3 = <object object at \w+> \(object\) is not a pointer \(an int address or None\)"),
    (lambda L: L.lib.tpg_op_set_scalars(None, "1", 0.0),
     r"tpg_op_set_scalars's argument 2 = '1' \(str\) is not a float"),
    (lambda L: L.lib.tpg_config_find("ag_rota_bf16_tp2", None, 0, 0, None),
     r"tpg_config_find's argument 1 = 'ag_rota_bf16_tp2' \(str\) is not a const char \* \(bytes or None\)"),
    (lambda L: L.lib.tpg_config_get(0, 64),
     r"tpg_config_get's argument 2 = 64 \(int\) is not a ConfigInfo \* \(ctypes.byref of one, or None\)"),
])
def test_an_argument_of_the_wrong_type_names_the_function_argument_and_value(lib, call, says):
    """ctypes said only "argument 3: TypeError: wrong type" (a walkthrough: tp="2", a torch stream object, a str name
    to the raw call): which function, which value, what C takes."""
    with pytest.raises(ctypes.ArgumentError, match=says):
        call(lib)


def test_the_wrappers_name_a_wrong_type_before_the_c_call(lib):
    """A name that is not a str (an AttributeError on .encode before), a RankConfig field that is not an integer (a bare
    "'str' object cannot be interpreted as an integer"), an allgather that is not callable (it failed inside the
    callback, reported as the context's local failure), a route that is not one (a bare KeyError)."""
    with pytest.raises(TypeError, match=r"^name = 123 must be a str or None, not int$"):
        lib.config(name=123)
    with pytest.raises(TypeError, match=r"^schedule = b'x' must be a str or None, not bytes$"):
        lib.config_pick(b"x", 2, "bf16", 4096, 4096, 4096)
    with pytest.raises(TypeError, match=r"^RankConfig.tp = '2': 'str' object cannot be interpreted as an integer$"):
        lib.ctx_rank("2", 0, 0, lambda send: send * 2)
    with pytest.raises(TypeError, match=r"^OpDesc.alpha = None: must be real number, not NoneType$"):
        tpgemm_lib.fitted(tpgemm_lib.OpDesc, 0, 64, 64, 64, 1, None, 0.0)
    for allgather in (None, 5):
        with pytest.raises(TypeError, match=r"^allgather must be a callable \(send: bytes\) -> bytes, not "):
            lib.ctx_rank(2, 0, 0, allgather)
    idx = lib.config(name="rs_tila_bf16_tp2", tp=0, dtype="bf16")
    with pytest.raises(ValueError, match="unknown route 'tcp': one of push, pull, ce"):
        lib.twin(idx, "tcp")


def test_an_error_text_that_is_not_utf_8_still_raises_the_tpg_error(lib, monkeypatch):
    """The C messages are bytes: a name cut at 128 bytes inside a character ('%.128s'), or a path in another encoding,
    made the binding's .decode() raise UnicodeDecodeError in place of the error (a walkthrough)."""
    with pytest.raises(tpgemm_lib.TpgError) as e:
        lib.config(name="x" + "é" * 100)
    assert e.value.status == 2 and "no config is named 'x" + "é" * 63 + "\\xc3' (tpgemm --list" in str(e.value)
    monkeypatch.setitem(os.environb, b"TPG_NCCL_LIBRARY", b"/nonexistent/\xe9/libnccl.so.2")
    with pytest.raises(tpgemm_lib.TpgError) as e:
        lib.ctx_rank(tp=1, rank=0, device=0, allgather=lambda send: send, transport="nccl")
    assert e.value.status == tpgemm_lib.TPG_ERR_NCCL and "/nonexistent/\\xe9/libnccl.so.2" in str(e.value)
