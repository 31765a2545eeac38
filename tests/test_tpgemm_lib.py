"""bench/tpgemm_lib.py's own Python over a stand-in library (no GPU, no torch, no build): what the bootstrap callback
raises or returns, an op used after destroy(), the text of an error, and Op.set_torch_tensors' checks on fake tensors
(tests/test_multiprocess.py drives the real build/libtpgemm.so)."""
import ctypes
import gc
import sys
import types
import weakref

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import tpgemm_lib  # noqa: E402

OK, BF16, E4M3 = tpgemm_lib.TPG_OK, tpgemm_lib.DTYPES["bf16"], tpgemm_lib.DTYPES["e4m3"]
TP, NBYTES = 2, 8  # the contexts' ranks, the bytes each rank sends in one bootstrap round
SHAPE = dict(a_rows=64, a_cols=32, b_rows=48, b_cols=32, d_rows=64, d_cols=48)  # every shard's (the offsets: 0)
DEVICES = (3, 5)  # rank r's CUDA ordinal


# name -> its arguments' argtypes entries, as load() sets them on the real library
ARGTYPES = {name: [tpgemm_lib.checked(t, f"{name}'s argument {j + 1}") for j, t in enumerate(args)]
            for name, (args, _) in tpgemm_lib.signatures().items()}


class FakeLib:
    """The C calls tpgemm_lib makes, each logged in `calls` as (name, its arguments). A multi-process context
    (ctx_rank) makes one bootstrap round through the ctypes callback in tpg_ctx_create_rank, tpg_op_create and
    tpg_op_set_tensors, as the library's collective calls do: a callback that fails fails the call
    (TPG_ERR_BOOTSTRAP). tpg_op_set_tensors refuses a NULL a, as tpg_op_set_tensors does. Each call's arguments pass
    the real argtypes first (ARGTYPES), as ctypes passes them: what ctypes refuses (ctypes.ArgumentError) never
    reaches the stand-in, as it never reaches C - a collective call so refused leaves the peers waiting."""

    def __getattribute__(self, name):
        fn = object.__getattribute__(self, name)
        if name not in ARGTYPES:
            return fn

        def through_argtypes(*args):
            assert len(args) == len(ARGTYPES[name]), (name, args)
            for j, (entry, arg) in enumerate(zip(ARGTYPES[name], args)):
                try:
                    entry.from_param(arg)
                except Exception as e:  # what ctypes raises
                    raise ctypes.ArgumentError(f"argument {j + 1}: {type(e).__name__}: {e}") from None
            return fn(*args)
        return through_argtypes

    def __init__(self, dtype=BF16):
        self.dtype, self.calls, self.rounds, self.callback, self.rank = dtype, [], [], None, -1
        self.last_error = b"an earlier, unrelated failure"

    def collective(self):
        if self.callback is None:
            return OK
        send = ctypes.create_string_buffer(bytes(range(NBYTES)), NBYTES)
        recv = ctypes.create_string_buffer(TP * NBYTES)
        rc = self.callback(ctypes.addressof(send), ctypes.addressof(recv), NBYTES, None)
        self.rounds.append((rc, recv.raw))
        return OK if rc == 0 else tpgemm_lib.TPG_ERR_BOOTSTRAP

    def tpg_ctx_create_rank(self, cfg, out):
        self.callback, self.rank = cfg._obj.allgather, cfg._obj.rank
        st = self.collective()
        out._obj.value = 0x1000 if st == OK else None
        return st

    def tpg_ctx_create(self, cfg, out):
        out._obj.value = 0x1000
        return OK

    def tpg_op_create(self, ctx, desc, out):
        self.calls.append(("tpg_op_create", None, None) if desc is None else
                          ("tpg_op_create", desc._obj.config, desc._obj.l))
        st = self.collective()  # a NULL desc takes part too (tpgemm.h), and fails every rank
        st = tpgemm_lib.TPG_ERR_INVALID_ARGUMENT if desc is None else st
        out._obj.value = 0x2000 if st == OK else None
        return st

    def tpg_op_set_tensors(self, op, rank, t):
        t = t._obj
        self.calls.append(("tpg_op_set_tensors", rank, t.a, t.b, t.c, t.d, t.scale_a, t.scale_b))
        st = self.collective()
        return tpgemm_lib.TPG_ERR_INVALID_ARGUMENT if t.a is None else st

    def tpg_op_shard_shape(self, op, rank, out):
        if rank not in range(TP):
            return tpgemm_lib.TPG_ERR_INVALID_ARGUMENT
        for name, value in SHAPE.items():
            setattr(out._obj, name, value)
        return OK

    def tpg_op_set_copy_chunks(self, op, chunks):  # collective, as over NCCL: a cut out of range takes part too
        self.calls.append(("tpg_op_set_copy_chunks", chunks))
        st = self.collective()
        return st if 1 <= chunks <= 32 else tpgemm_lib.TPG_ERR_INVALID_ARGUMENT

    def tpg_op_run_rank(self, op, rank, stream):
        self.calls.append(("tpg_op_run_rank", op, rank))
        self.stream = stream
        return tpgemm_lib.TPG_ERR_INVALID_ARGUMENT if op is None else OK

    def tpg_op_run(self, op, streams):  # streams: None (NULL) or the ctypes array, read as C reads its tp entries
        self.calls.append(("tpg_op_run", None if streams is None else [streams[r] for r in range(TP)]))
        return OK

    def tpg_op_set_scalars(self, op, alpha, beta):
        self.calls.append(("tpg_op_set_scalars", alpha, beta))
        return OK

    def tpg_op_set_pdl(self, op, enable):
        self.calls.append(("tpg_op_set_pdl", enable))
        return OK

    def tpg_ctx_tp(self, ctx):
        return TP

    def tpg_op_destroy(self, op):
        self.calls.append(("tpg_op_destroy", op))
        return OK

    def tpg_config_get(self, index, out):
        info = out._obj
        info.name, info.schedule, info.kernel, info.dtype = b"cfg_tp2", b"S", b"k", self.dtype
        return OK

    def tpg_output_dtype(self, t):
        return BF16 if t in (tpgemm_lib.DTYPES["e4m3"], tpgemm_lib.DTYPES["e5m2"]) else t

    def tpg_ctx_device(self, ctx, rank):
        return DEVICES[rank] if self.rank < 0 or rank == self.rank else -1

    def tpg_ctx_rank(self, ctx):
        return self.rank

    def tpg_status_string(self, status):
        return f"what status {status} means".encode()

    def tpg_last_error(self, ctx):
        return self.last_error


def make_lib(dtype=BF16):
    lib = object.__new__(tpgemm_lib.Lib)
    lib.lib = FakeLib(dtype)
    return lib


def identity_gather(send):  # the other rank sends the same bytes
    return send * TP


class FakeTensor:
    """What set_torch_tensors reads of a torch.Tensor: is_contiguous(), dtype (its str), device.index, numel() and
    data_ptr()."""

    def __init__(self, numel, dtype="torch.bfloat16", device=DEVICES[0], contiguous=True, ptr=0x7000):
        self.dtype, self.device = dtype, types.SimpleNamespace(index=device)
        self._numel, self._contiguous, self._ptr = numel, contiguous, ptr

    def is_contiguous(self):
        return self._contiguous

    def numel(self):
        return self._numel

    def data_ptr(self):
        return self._ptr


def operands(dtype="torch.bfloat16", out="torch.bfloat16", device=DEVICES[0], batches=1):
    """A, B and D of exactly their shards' sizes, at 0x10000, 0x20000 and 0x30000."""
    return tuple(FakeTensor(SHAPE[f"{s}_rows"] * SHAPE[f"{s}_cols"] * batches, t, device, ptr=0x10000 * (i + 1))
                 for i, (s, t) in enumerate((("a", dtype), ("b", dtype), ("d", out))))


# --- the bootstrap callback ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("interrupt", [KeyboardInterrupt(), SystemExit(3)])
def test_an_interrupt_in_the_callback_is_raised_again_as_itself(interrupt):
    """Ctrl-C inside a collective call must stop the run, not become a TpgError that the benchmark records."""
    def allgather(send):
        raise interrupt

    with pytest.raises(type(interrupt)) as e:
        make_lib().ctx_rank(TP, 1, 0, allgather)
    assert e.value is interrupt and e.value.__traceback__ is not None


def test_an_error_in_the_callback_is_the_cause_of_the_tpg_error(capfd):
    def allgather(send):
        raise RuntimeError("process group is gone")

    with pytest.raises(tpgemm_lib.TpgError) as e:
        make_lib().ctx_rank(TP, 1, 0, allgather)
    assert e.value.status == tpgemm_lib.TPG_ERR_BOOTSTRAP
    assert isinstance(e.value.__cause__, RuntimeError) and str(e.value.__cause__) == "process group is gone"
    assert e.value.__cause__.__traceback__ is not None  # where the callback failed
    assert "bootstrap allgather failed on rank 1: RuntimeError('process group is gone')" in capfd.readouterr().err


class TwoRoundLib(FakeLib):
    """A collective call of two bootstrap rounds, the second run even after the first failed (as a C call that
    gathers twice before it checks)."""

    def collective(self):
        first, second = FakeLib.collective(self), FakeLib.collective(self)
        return first if first != OK else second


def two_round_ctx(errors):
    def allgather(send):
        raise errors.pop(0)

    lib = object.__new__(tpgemm_lib.Lib)
    lib.lib = TwoRoundLib()
    return lib.ctx_rank(TP, 1, 0, allgather)


def test_the_first_callback_error_is_the_cause_not_the_one_it_caused():
    first = RuntimeError("first")
    with pytest.raises(tpgemm_lib.TpgError) as e:
        two_round_ctx([first, RuntimeError("second")])
    assert e.value.__cause__ is first


def test_an_interrupt_after_a_callback_error_is_raised_as_itself():
    interrupt = KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt) as e:
        two_round_ctx([RuntimeError("first"), interrupt])
    assert e.value is interrupt


def test_an_interrupt_in_a_later_collective_call_is_raised_from_that_call():
    """The callback runs in every collective call of the context (op create here), not only in its create."""
    seen = []

    def allgather(send):
        seen.append(send)
        if len(seen) > 1:
            raise KeyboardInterrupt
        return send * TP

    lib = make_lib()
    ctx = lib.ctx_rank(TP, 0, 0, allgather)
    with pytest.raises(KeyboardInterrupt):
        ctx.op(0, 128, 96, 64)
    assert ctx.failed is None  # consumed: the next call starts clean
    assert lib.lib.rounds[0] == (0, bytes(range(NBYTES)) * TP) and lib.lib.rounds[1][0] == 1


@pytest.mark.parametrize("reply", [bytearray, memoryview, lambda b: __import__("array").array("B", b)])
def test_the_callback_may_return_any_bytes_like_object(reply):
    lib = make_lib()
    lib.ctx_rank(TP, 0, 0, lambda send: reply(send * TP))
    assert lib.lib.rounds == [(0, bytes(range(NBYTES)) * TP)]


@pytest.mark.parametrize("copies", [1, TP + 1])
def test_a_reply_of_the_wrong_length_says_how_long_it_was_and_should_be(capfd, copies):
    """Too short or too long (which would be copied past the library's buffer): refused, nothing copied."""
    lib = make_lib()
    with pytest.raises(tpgemm_lib.TpgError) as e:
        lib.ctx_rank(TP, 1, 0, lambda send: send * copies)
    assert e.value.status == tpgemm_lib.TPG_ERR_BOOTSTRAP and lib.lib.rounds[0][0] == 2
    said = f"the callback returned {copies * NBYTES} bytes, expected {TP * NBYTES} (tp {TP} x {NBYTES})"
    assert f"allgather on rank 1: {said}" in capfd.readouterr().err
    # and in the exception itself, not on stderr only (C says only "the bootstrap allgather callback returned 2")
    assert isinstance(e.value.__cause__, ValueError) and str(e.value.__cause__) == f"allgather on rank 1: {said}"


# --- errors --------------------------------------------------------------------------------------------------------

def test_an_error_carries_the_status_text_and_the_last_error():
    lib = make_lib()
    lib.lib.last_error = b"rank = 2 must be in 0..1"
    with pytest.raises(tpgemm_lib.TpgError) as e:
        lib.check(1, "tpg_x(rank=2)")
    assert str(e.value) == "tpg_x(rank=2): status 1: rank = 2 must be in 0..1 (what status 1 means)"
    lib.lib.last_error = b""
    with pytest.raises(tpgemm_lib.TpgError, match=r"^tpg_x\(rank=2\): status 1: what status 1 means$"):
        lib.check(1, "tpg_x(rank=2)")


def test_an_op_used_after_destroy_says_so_without_calling_the_library():
    lib = make_lib()
    op = lib.ctx_local(list(DEVICES)).op(0, 128, 96, 64)
    op.destroy()
    op.destroy()  # a no-op
    for call, what in ((lambda: op.run_rank(0, 0), "tpg_op_run_rank(rank=0)"),
                       (lambda: op.shard_shape(0), "tpg_op_shard_shape"),
                       (lambda: op.set_tensors(0, 16, 32, 48), "tpg_op_set_tensors(rank=0)"),
                       (lambda: op.set_torch_tensors(0, *operands()), "tpg_op_shard_shape")):
        with pytest.raises(tpgemm_lib.TpgError) as e:
            call()
        assert str(e.value) == f"{what}: status 1: op destroyed (Op.destroy was called)"
    assert [c[0] for c in lib.lib.calls] == ["tpg_op_create", "tpg_op_destroy"]


# --- set_torch_tensors -------------------------------------------------------------------------------------------

def set_calls(lib):
    return [c[1:] for c in lib.lib.calls if c[0] == "tpg_op_set_tensors"]


def test_set_torch_tensors_passes_the_pointers_and_holds_the_tensors_until_the_next_set():
    lib = make_lib()
    op = lib.ctx_local(list(DEVICES)).op(0, 128, 96, 64)
    a, b, d = operands(device=DEVICES[1])
    held = weakref.ref(a)
    op.set_torch_tensors(1, a, b, d)
    assert set_calls(lib) == [(1, 0x10000, 0x20000, None, 0x30000, None, None)]
    del a, b, d
    gc.collect()
    assert held() is not None  # the op holds what its graphs read
    op.set_tensors(1, 16, 32, 48)  # bare pointers: the caller holds them
    gc.collect()
    assert held() is None and op.held == {}
    op.set_torch_tensors(0, *operands())
    assert list(op.held) == [0]
    op.destroy()
    assert op.held == {}


def test_set_torch_tensors_checks_fp8_types_scales_and_batches():
    lib = make_lib(E4M3)
    op = lib.ctx_local(list(DEVICES)).op(0, 128, 96, 64, l=2)
    scale = FakeTensor(1, "torch.float32", ptr=0x40)
    a, b, d = operands("torch.float8_e4m3fn", "torch.bfloat16", batches=2)  # D: bf16, tpg_output_dtype's
    c = FakeTensor(64 * 48 * 2, "torch.bfloat16", ptr=0x50000)
    op.set_torch_tensors(0, a, b, d, c=c, scale_a=scale, scale_b=scale)
    assert set_calls(lib) == [(0, 0x10000, 0x20000, 0x50000, 0x30000, 0x40, 0x40)]
    with pytest.raises(ValueError, match=r"tensor d has dtype torch.float8_e4m3fn, not torch.bfloat16 \(bf16\)"):
        op.set_torch_tensors(0, a, b, FakeTensor(64 * 48 * 2, "torch.float8_e4m3fn"))
    with pytest.raises(ValueError, match=r"tensor scale_b has dtype torch.bfloat16, not torch.float32"):
        op.set_torch_tensors(0, a, b, d, scale_a=scale, scale_b=FakeTensor(1))
    with pytest.raises(ValueError, match=f"tensor a has {64 * 32} elements, fewer than its shard's {64 * 32 * 2}"):
        op.set_torch_tensors(0, *operands("torch.float8_e4m3fn"))  # one batch's worth
    assert len(set_calls(lib)) == 1


@pytest.mark.parametrize("tensor, change, why", [
    (0, dict(contiguous=False), "tensor a is not contiguous"),  # a.t() or a slice: another layout
    (1, dict(dtype="torch.float32"), r"tensor b has dtype torch.float32, not torch.bfloat16 \(bf16\)"),
    (2, dict(device=DEVICES[1]), f"tensor d is on device {DEVICES[1]}, not on rank 0's device {DEVICES[0]}"),
    (2, dict(device=None), f"tensor d is on device None, not on rank 0's device {DEVICES[0]}"),  # a CPU tensor
    (2, dict(numel=64 * 48 - 1), f"tensor d has {64 * 48 - 1} elements, fewer than its shard's {64 * 48}"),
])
def test_set_torch_tensors_refuses_a_tensor_the_op_cannot_use(tensor, change, why):
    lib = make_lib()
    op = lib.ctx_local(list(DEVICES)).op(0, 128, 96, 64)
    good = operands()
    op.set_torch_tensors(0, *good)
    ts = list(operands())
    t = ts[tensor]
    ts[tensor] = FakeTensor(change.get("numel", t.numel()), change.get("dtype", t.dtype),
                            change.get("device", t.device.index), change.get("contiguous", True))
    with pytest.raises(ValueError, match=r"^set_torch_tensors\(rank=0\): " + why):
        op.set_torch_tensors(0, *ts)
    assert len(set_calls(lib)) == 1 and op.held[0] == good + (None, None, None)  # the op still reads the old ones


@pytest.mark.parametrize("rank", [0, 1])
def test_set_torch_tensors_refused_on_one_process_still_joins_the_collective_call(rank):
    """Multi-process: tpg_op_set_tensors is collective. A rank whose tensors fail the checks joins it with none, so
    its peers' calls fail too instead of waiting for it - rank 0 as any other."""
    lib = make_lib()
    op = lib.ctx_rank(TP, rank, DEVICES[rank], identity_gather).op(0, 128, 96, 64)
    with pytest.raises(ValueError, match="tensor a is on device"):
        op.set_torch_tensors(rank, *operands(device=DEVICES[1 - rank]))
    assert set_calls(lib) == [(rank, None, None, None, None, None, None)] and len(lib.lib.rounds) == 3
    op.set_torch_tensors(rank, *operands(device=DEVICES[rank]))
    assert set_calls(lib)[1] == (rank, 0x10000, 0x20000, None, 0x30000, None, None)


def test_set_torch_tensors_that_the_library_rejects_keeps_the_old_and_the_new_tensors():
    """After a failed collective set some peers may map the rank's new shard, others its old one, until a call
    succeeds (tpgemm.h): the op holds both, so that neither is freed under a peer's mapping."""
    lib, gather_fails = make_lib(), []

    def allgather(send):
        if gather_fails:
            raise RuntimeError("a peer failed")
        return send * TP

    op = lib.ctx_rank(TP, 1, DEVICES[1], allgather).op(0, 128, 96, 64)
    old, new = operands(device=DEVICES[1]), operands(device=DEVICES[1])
    op.set_torch_tensors(1, *old)
    gather_fails.append(1)
    with pytest.raises(tpgemm_lib.TpgError):
        op.set_torch_tensors(1, *new)
    assert op.held[1] == (old + (None, None, None), new + (None, None, None))
    gather_fails.clear()
    op.set_torch_tensors(1, *new)
    assert op.held[1] == new + (None, None, None)  # a call succeeded: the old ones go



# --- a collective call refused in Python still takes part -----------------------------------------------------------

NONE = (None,) * 6  # a tpg_tensors of NULLs


def rank_op(rank=1):
    lib = make_lib()
    return lib, lib.ctx_rank(TP, rank, DEVICES[rank], identity_gather).op(0, 128, 96, 64)


@pytest.mark.parametrize("call, error", [
    (lambda op: op.set_torch_tensors(TP, *operands()), tpgemm_lib.TpgError),  # shard_shape refuses rank 2
    (lambda op: op.set_torch_tensors(1, 0x10000, 0x20000, 0x30000), AttributeError),  # pointers, not tensors
    (lambda op: op.set_torch_tensors("1", *operands(device=DEVICES[1])), TypeError),
    (lambda op: op.set_tensors(1, "a", 0x20000, 0x30000), TypeError),
    (lambda op: op.set_tensors(2**40, 0x10000, 0x20000, 0x30000), ValueError),  # joins as -1: ctypes refuses 2**40
    (lambda op: op.set_torch_tensors(-2**40, *operands()), ValueError),
])
def test_tensors_refused_before_the_c_call_still_join_the_collective_call(call, error):
    """tpg_op_set_tensors is collective, and a rank whose own arguments are wrong takes part in it (tpgemm.h): a
    rank the binding refused before the C call - any exception, not only set_torch_tensors' ValueError - left its
    peers waiting in the all-gather."""
    lib, op = rank_op()
    rounds = len(lib.lib.rounds)
    with pytest.raises(error):
        call(op)
    assert [c[1:] for c in set_calls(lib)] == [NONE] and len(lib.lib.rounds) == rounds + 1


def test_an_op_refused_before_the_c_call_still_joins_its_creation():
    """tpg_op_create with a NULL desc takes part in the exchange and fails every rank (tpgemm.h): an m that int64_t
    cannot hold, or a config that is not an int, did not reach C at all."""
    lib = make_lib()
    ctx = lib.ctx_rank(TP, 1, DEVICES[1], identity_gather)
    with pytest.raises(ValueError, match="OpDesc.m = 1180591620717411303424 is outside"):
        ctx.op(0, 2**70, 96, 64)
    with pytest.raises(TypeError, match="OpDesc.config = 'ag_rota_bf16_tp2'"):
        ctx.op("ag_rota_bf16_tp2", 128, 96, 64)
    with pytest.raises(OverflowError):  # a float field: ctypes' own OverflowError, neither a TypeError nor a ValueError
        ctx.op(0, 128, 96, 64, alpha=10**400)
    assert lib.lib.calls == [("tpg_op_create", None, None)] * 3 and len(lib.lib.rounds) == 4
    local = make_lib()  # one process: nothing to join
    with pytest.raises(ValueError):
        local.ctx_local(list(DEVICES)).op(0, 2**70, 96, 64)
    assert local.lib.calls == []


@pytest.mark.parametrize("chunks", ["4", 2**40, 4.0])
def test_a_copy_cut_refused_before_the_c_call_still_joins(chunks):
    """Over NCCL tpg_op_set_copy_chunks is collective, and a cut out of range takes part (tpgemm.h)."""
    lib, op = rank_op()
    with pytest.raises((TypeError, ValueError), match=f"chunks = {chunks!r}"):
        op.set_copy_chunks(chunks)
    assert lib.lib.calls[-1] == ("tpg_op_set_copy_chunks", 0)


@pytest.mark.parametrize("stream, handle", [(types.SimpleNamespace(cuda_stream=0x5000), 0x5000),  # a torch.cuda.Stream
                                            (0x6000, 0x6000), (0, 0), (None, None)])
def test_run_rank_takes_a_torch_stream_or_a_handle(stream, handle):
    """A framework passes torch.cuda.current_stream() (ctypes refused it: "wrong type"); a cudaStream_t handle, 0 or
    None (both the legacy default stream) pass as given."""
    lib = make_lib()
    op = lib.ctx_local(list(DEVICES)).op(0, 128, 96, 64)
    op.run_rank(1, stream)
    assert lib.lib.calls[-1][2] == 1 and lib.lib.stream == handle


def local_op():
    lib = make_lib()
    return lib, lib.ctx_local(list(DEVICES)).op(0, 128, 96, 64)


@pytest.mark.parametrize("streams, handles", [
    (None, None),  # NULL: each rank on the context's stream
    ([types.SimpleNamespace(cuda_stream=0x5000), 0x6000], [0x5000, 0x6000]),  # a torch.cuda.Stream and a handle
    ((0, None), [None, None]),  # the legacy default stream, either way (a tuple is a sequence too)
])
def test_run_passes_one_stream_a_rank_or_null(streams, handles):
    lib, op = local_op()
    op.run(streams)
    assert lib.lib.calls[-1] == ("tpg_op_run", handles)


@pytest.mark.parametrize("streams, error, match", [
    ([0x5000], ValueError, "1 streams for a context of TP = 2"),  # C would read past the array's end
    ([0x5000, 0x6000, 0x7000], ValueError, "3 streams for a context of TP = 2"),
    ([0x5000, 2**64 + 0x6000], ValueError, r"streams\[1\] = 18446744073709576192 is outside"),  # ctypes wrapped it
    ([0x5000, "s"], TypeError, r"streams\[1\] = 's' \(str\) is not a pointer"),
])
def test_run_refuses_streams_it_cannot_pass_before_calling_the_library(streams, error, match):
    lib, op = local_op()
    with pytest.raises(error, match=match):
        op.run(streams)
    assert lib.lib.calls[-1][0] == "tpg_op_create"


def test_run_after_destroy_says_so_without_calling_the_library():
    lib, op = local_op()
    op.destroy()
    with pytest.raises(tpgemm_lib.TpgError, match="op destroyed"):
        op.run([0, 0])
    assert lib.lib.calls[-1][0] == "tpg_op_destroy"


def test_set_scalars_and_set_pdl_pass_their_values():
    lib, op = local_op()
    op.set_scalars(0.5, -2)
    op.set_pdl(7)
    op.set_pdl(0)
    assert lib.lib.calls[-3:] == [("tpg_op_set_scalars", 0.5, -2.0), ("tpg_op_set_pdl", 1), ("tpg_op_set_pdl", 0)]


@pytest.mark.parametrize("alpha, beta", [(1e39, 0.0), (1.0, -3.5e38)])
def test_a_scalar_no_c_float_holds_is_refused_not_made_inf(alpha, beta):
    lib, op = local_op()
    with pytest.raises(ctypes.ArgumentError, match="is outside the range of its C type"):
        op.set_scalars(alpha, beta)
    assert lib.lib.calls[-1][0] == "tpg_op_create"
    op.set_scalars(float("inf"), 3.4e38)  # inf is a value C can take, and 3.4e38 fits
    assert lib.lib.calls[-1] == ("tpg_op_set_scalars", float("inf"), 3.4e38)


def test_an_alpha_no_c_float_holds_still_joins_the_ops_creation():
    lib = make_lib()
    ctx = lib.ctx_rank(TP, 1, DEVICES[1], identity_gather)
    with pytest.raises(ValueError, match="OpDesc.alpha = 1e\\+39 is outside"):
        ctx.op(0, 128, 96, 64, alpha=1e39)
    assert lib.lib.calls == [("tpg_op_create", None, None)]


def test_a_pointer_past_64_bits_is_refused_and_still_joins():
    """ctypes wrapped a c_void_p silently: 2**64 + 0x10000 reached C as 0x10000, another tensor's address."""
    lib, op = rank_op()
    with pytest.raises(ValueError, match="Tensors.a = 18446744073709617152 is outside"):
        op.set_tensors(1, 2**64 + 0x10000, 0x20000, 0x30000)
    assert [c[1:] for c in set_calls(lib)] == [NONE]


@pytest.mark.parametrize("stream", ["0x5000", b"\x00\x50"])
def test_run_rank_refuses_text_for_a_stream(stream):
    """ctypes passes a str or bytes for a void * as the text's own address: C got a pointer into Python's heap for a
    cudaStream_t."""
    lib, op = local_op()
    with pytest.raises(ctypes.ArgumentError, match="is not a pointer"):
        op.run_rank(1, stream)
    assert lib.lib.calls[-1][0] == "tpg_op_create"
