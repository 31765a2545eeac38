"""bench/tp_check.py without torch or a GPU (as tests/test_tp_numerics.py does for tp_numerics): stand-in `torch`,
`torch.distributed` and `tp_windows` modules, numpy-backed tensors, and one log (EVENTS) of what the checks queued in
order: zeroes and writes of tensors, the odd ranks' idle, calls, the reference and the agreements. The other ranks are
a setting of the fake tp_windows (FakeWindows): whether they failed, what they bring to an all-reduce."""
import importlib.util
import math
import sys
import types

import numpy as np
import pytest

from tests.conftest import ROOT

EVENTS = []  # strings such as "zero d", "write a", "sleep 2000000", "run tpgemm", "all_ok True", "reference"
M, N, K, TP = 128, 64, 40, 4  # every shard extent differs, so a swapped or mis-divided field shows


def values(x):
    return x.v if isinstance(x, Tensor) else x


class Tensor:
    """The torch.Tensor methods tp_check calls, on a float32 numpy array; zero_ / copy_ log their target's name."""

    def __init__(self, v, name=None):
        self.v, self.name = np.array(v, dtype=np.float32), name

    shape = property(lambda self: self.v.shape)

    def float(self):
        return self  # as torch's for a float32 tensor: relative_errors must not write into ref through it

    def numel(self):
        return self.v.size

    def item(self):
        return float(self.v)

    def data_ptr(self):
        return id(self)

    def __sub__(self, other):
        return Tensor(self.v - other.v)

    def __truediv__(self, other):
        return Tensor(self.v / values(other))

    def norm(self):
        return Tensor(np.sqrt(np.sum(self.v.astype(np.float64) ** 2)))

    def abs(self):
        return Tensor(np.abs(self.v))

    def max(self):
        return Tensor(self.v.max())

    def clamp_min(self, x):
        return Tensor(np.maximum(self.v, values(x)))

    def abs_(self):
        np.abs(self.v, out=self.v)
        return self

    def div_(self, other):
        self.v /= values(other)
        return self

    def clamp_min_(self, x):
        np.maximum(self.v, values(x), out=self.v)
        return self

    def zero_(self):
        EVENTS.append(f"zero {self.name}")
        self.v[...] = 0
        return self

    def copy_(self, src):
        EVENTS.append(f"write {self.name}")
        self.v[...] = src.v
        return self


class Numerics:  # tp_numerics' interface: random operands, NaN-filled outputs (torch.empty's garbage)
    scales = {}

    def operand(self, g, *shape):
        return Tensor(g.rng.standard_normal(shape))

    def output(self, *shape):
        return Tensor(np.full(shape, np.nan))

    operand_empty = output


class Op:  # a tpgemm op: what it was created for and given; sync() is where a device-side failure would surface
    def __init__(self, *mnk):
        self.mnk, self.tensors = mnk, None

    def set_torch_tensors(self, rank, a, b, d, **scales):
        self.tensors = (rank, a, b, d)

    def sync(self):
        EVENTS.append("sync")


class FakeWindows:
    """tp_windows' collectives as one rank sees them. peers_ok: whether every other rank's step succeeded;
    peer_value: what the other ranks bring to an all-reduce (None: nothing larger or smaller than this rank's)."""

    def __init__(self):
        self.peers_ok, self.peer_value = True, None

    def all_ok(self, ok):
        EVENTS.append(f"all_ok {ok}")
        return ok and self.peers_ok

    def allreduce(self, x, op):
        EVENTS.append(f"allreduce {op}")
        return x if self.peer_value is None else (max if op == "MAX" else min)(x, self.peer_value)

    @staticmethod
    def guarded(fn):  # tp_windows.guarded as it is
        try:
            fn()
            return None
        except Exception as e:
            return repr(e)[:300]


@pytest.fixture
def env(monkeypatch):
    EVENTS.clear()
    W = FakeWindows()
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(synchronize=lambda: None, _sleep=lambda cycles: EVENTS.append(f"sleep {cycles}"))
    seeds = []  # every Generator's seed, in order
    torch.Generator = lambda device: types.SimpleNamespace(  # .manual_seed(seed): a seeded numpy generator
        manual_seed=lambda seed: seeds.append(seed) or types.SimpleNamespace(rng=np.random.default_rng(seed)))
    torch.distributed = types.SimpleNamespace(ReduceOp=types.SimpleNamespace(MAX="MAX", MIN="MIN"))
    for name, module in (("torch", torch), ("torch.distributed", torch.distributed), ("tp_windows", W)):
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.syspath_prepend(str(ROOT / "bench"))  # tp_check imports tp_records (the real one) from there
    spec = importlib.util.spec_from_file_location("tp_check_under_test", ROOT / "bench" / "tp_check.py")
    C = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(C)
    return types.SimpleNamespace(C=C, W=W, seeds=seeds)


def torch_layout(op_kind, rank):
    """tpgemm's ShardShape for the shards torch makes (runtime/src/shapes.c: offsets of the sharded dims only)."""
    if op_kind == "AG":  # A and B split by rows, D by columns
        return dict(a_rows=M // TP, a_cols=K, b_rows=N // TP, b_cols=K, d_rows=M, d_cols=N // TP, d_row0=0,
                    d_col0=rank * N // TP, a_row0=rank * M // TP, a_col0=0, b_row0=rank * N // TP, b_col0=0)
    return dict(a_rows=M, a_cols=K // TP, b_rows=N, b_cols=K // TP, d_rows=M // TP, d_cols=N, d_row0=rank * M // TP,
                d_col0=0, a_row0=0, a_col0=rank * K // TP, b_row0=0, b_col0=rank * K // TP)


# own_setup compares every field: the extents and every offset (a gathered A in another rank order is refused by
# name, not found later as wrong numbers)
CHECKED = {kind: list(torch_layout(kind, 0)) for kind in ("AG", "RS")}


def own_setup(C, op_kind, rank, sh=None, held=None):
    ctx1 = types.SimpleNamespace(op=lambda cfg, *mnk: Op(*mnk))
    return C.own_setup(op_kind, M, N, K, TP, rank, Numerics(), sh or torch_layout(op_kind, rank), ctx1, "cfg1",
                       [] if held is None else held)


@pytest.mark.parametrize("op_kind", ["AG", "RS"])
def test_a_shard_layout_unlike_torchs_is_refused_naming_the_field(env, op_kind):
    own_setup(env.C, op_kind, rank=3)  # torch's own layout passes, at a rank whose offsets are not 0
    for field in CHECKED[op_kind]:
        sh = torch_layout(op_kind, 3)
        want, sh[field] = sh[field], sh[field] + 1
        with pytest.raises(RuntimeError, match="shard layout differs") as e:
            own_setup(env.C, op_kind, 3, sh)
        assert f"'{field}': ({want + 1}, {want})" in str(e.value)  # the field, tpgemm's value, torch's


@pytest.mark.parametrize("op_kind", ["AG", "RS"])
def test_torchs_tensors_have_the_checked_layout_and_the_local_op_reads_them(env, op_kind):
    held, sh = [], torch_layout(op_kind, 1)
    t = own_setup(env.C, op_kind, 1, held=held)
    assert (t.a.shape, t.b.shape) == ((sh["a_rows"], sh["a_cols"]), (sh["b_rows"], sh["b_cols"]))
    assert t.d.shape == t.ref.shape == (sh["d_rows"], sh["d_cols"])
    assert held == [t.op1]  # destroyed with the fused ops, also when a later step fails
    # the local GEMM: AG the whole product's columns of this rank over the gathered A, RS this rank's m x n partial
    local_a, mnk, local_ref = ((t.a_full, (M, N // TP, K), t.ref) if op_kind == "AG" else
                               (t.a, (M, N, K // TP), t.part))
    assert t.op1.mnk == mnk and t.local_ref is local_ref and t.d_loc.shape == local_ref.shape
    assert t.op1.tensors == (0, local_a, t.b, t.d_loc)


@pytest.mark.parametrize("rank, late", [(0, False), (1, True), (2, False), (3, True)])
def test_odd_ranks_write_their_new_inputs_late(env, rank, late):
    t = own_setup(env.C, "AG", rank)
    t.a.name, t.b.name = "a", "b"
    a, old = t.a, t.a.v.copy()
    EVENTS.clear()
    t.new_inputs()
    # the idle goes on the stream ahead of the writes: a fused call that reads a peer's shard without waiting reads
    # the old one; the even ranks write at once, so both orders of writer and reader occur
    assert EVENTS == [f"sleep {env.C.LATE_INPUT_CYCLES}"] * late + ["write a", "write b"]
    assert t.a is a and not np.array_equal(t.a.v, old)  # other values, in the buffers the ops were given


@pytest.mark.parametrize("op_kind", ["AG", "RS"])
def test_new_inputs_come_from_the_setup_seed_plus_104729_and_differ_between_ranks(env, op_kind):
    """The re-check's operands have their own seed (the setup's + 104729): other values than the timed calls' (which
    a call that skipped a wait would still read), different on each rank as the setup's are (a call that reads
    another rank's shard gets other numbers), and reproducible from the seed when a re-check fails."""
    new_a = []
    for rank in (0, 1):
        env.seeds.clear()
        t = own_setup(env.C, op_kind, rank)
        t.new_inputs()
        setup_seed, seed = env.seeds  # one generator each: not the setup's continued
        assert seed == setup_seed + 104729
        g = types.SimpleNamespace(rng=np.random.default_rng(seed))
        for x in (t.a, t.b):  # drawn from it in this order
            np.testing.assert_array_equal(x.v, Numerics().operand(g, *x.shape).v)
        new_a.append(t.a.v)
    assert not np.array_equal(*new_a)


@pytest.mark.parametrize("raises, peers_ok, what, expected", [
    (False, True, "the reference", None),
    (True, True, "the reference", "the reference: RuntimeError('boom')"),
    (True, True, "", "RuntimeError('boom')"),
    (False, False, "the reference", "failed on another rank"),  # left to the failing rank's text
    (True, False, "the reference", "the reference: RuntimeError('boom')"),  # this rank's own cause first
])
def test_agreed_names_this_ranks_cause_or_another_rank(env, raises, peers_ok, what, expected):
    env.W.peers_ok = peers_ok

    def fn():
        if raises:
            raise RuntimeError("boom")
    assert env.C.agreed(fn, what) == expected
    assert EVENTS == [f"all_ok {not raises}"]  # every rank joins the agreement, failed or not


def test_relative_errors_figures_and_ref_left_alone(env):
    ref = Tensor([[4.0, 1.0], [1.0, 1.0]])
    d = Tensor(ref.v)
    d.v[1, 1] += 0.5  # a small element off: the per-element figure weighs it by rms(ref), not by max|ref|
    rel, mx, elem = env.C.relative_errors(d, ref)
    assert (rel, mx, elem) == pytest.approx((0.5 / 19 ** 0.5, 0.5 / 4, 0.5 / (19 / 4) ** 0.5))
    assert ref.v.tolist() == [[4.0, 1.0], [1.0, 1.0]]  # ref.float() is ref: the in-place steps must not reach it
    assert EVENTS == ["allreduce MAX"] * 3


class Unreadable(Tensor):
    def float(self):
        raise RuntimeError("CUDA out of memory")


@pytest.mark.parametrize("failure", ["nan", "raises"])
def test_a_nan_or_a_failed_comparison_reads_inf_and_still_joins_the_all_reduces(env, failure):
    ref = Tensor([[1.0, 2.0]])
    d = Tensor([[1.0, np.nan]]) if failure == "nan" else Unreadable([[1.0, 2.0]])
    assert env.C.relative_errors(d, ref) == (math.inf,) * 3  # fails the check; NaN would read as "not run"
    assert EVENTS == ["allreduce MAX"] * 3  # the peers are in these all-reduces: skipping one hangs them


def test_each_figure_is_the_largest_over_the_ranks(env):
    env.W.peer_value = 0.25  # another rank's errors; this rank's are 0
    assert env.C.relative_errors(Tensor([[1.0, 2.0]]), Tensor([[1.0, 2.0]])) == (0.25,) * 3


def make_keep():
    """own_setup's tensors for the check functions: D's hold NaN until written; the references differ."""
    unwritten = np.full((2, 2), np.nan)
    return types.SimpleNamespace(d=Tensor(unwritten, "d"), d_loc=Tensor(unwritten, "d_loc"),
                                 ref=Tensor([[1.0, -2.0], [3.0, 4.0]]), local_ref=Tensor([[5.0, 6.0], [7.0, -8.0]]),
                                 new_inputs=lambda: EVENTS.append("new inputs"))


def call(name, dst=None, src=None):
    """A variant's call: logs itself and (dst, src given) stores src's values in dst, as a correct call would."""
    def run():
        EVENTS.append(f"run {name}")
        if dst is not None:
            dst.v[...] = src.v
    return run


def reference():
    EVENTS.append("reference")


def between(first, last):
    return EVENTS[EVENTS.index(first) + 1:EVENTS.index(last)]


def test_check_output_zeroes_d_so_a_call_that_stores_nothing_fails(env):
    keep = make_keep()
    keep.d.v[...] = keep.ref.v  # the previous call's correct product, still in D
    res = env.C.check_output(Op(), call("tpgemm"), reference, keep, before=keep.new_inputs)
    assert res == pytest.approx((1.0, 1.0, None, 1.0))  # not (0, 0): it did not pass on what it found in D
    assert "zero d" in between("new inputs", "run tpgemm")  # the inputs, then the zeroed D, then the call ...
    assert not [e for e in between("new inputs", "run tpgemm") if e.startswith("all")]  # ... with no collective
    assert between("run tpgemm", "reference") == ["sync", "all_ok True"]  # the call agreed before the reference


@pytest.mark.parametrize("fails, expected", [("call", "RuntimeError('timeout')"), ("peer", "failed on another rank"),
                                             ("reference", "the reference: RuntimeError('timeout')")])
def test_a_failed_call_or_reference_gives_no_figures(env, fails, expected):
    def broken(name):
        def run():
            EVENTS.append(name)
            raise RuntimeError("timeout")
        return run
    env.W.peers_ok = fails != "peer"
    keep = make_keep()
    res = env.C.check_output(Op(), broken("run tpgemm") if fails == "call" else call("tpgemm", keep.d, keep.ref),
                             broken("reference") if fails == "reference" else reference, keep)
    assert res == (None, None, expected, None)
    assert ("reference" in EVENTS) == (fails == "reference")  # a call failed on any rank: no rank's collective runs
    assert not [e for e in EVENTS if e.startswith("allreduce")]


def test_check_local_runs_the_reference_first_and_checks_a_zeroed_d_loc_against_local_ref(env):
    keep = make_keep()
    keep.d_loc.v[...] = keep.local_ref.v  # the timed calls' product, still in d_loc
    assert env.C.check_local(Op(), call("local"), reference, keep) == pytest.approx((1.0, 1.0, None, 1.0))
    # the reference gathers a_full, which the all-gather's local GEMM reads: it goes first
    assert EVENTS.index("reference") < EVENTS.index("zero d_loc") < EVENTS.index("run local")
    assert env.C.check_local(Op(), call("local", keep.d_loc, keep.local_ref), reference, keep) == (0, 0, None, 0)


def test_check_returned_compares_the_returned_tensor_with_ref(env):
    keep = make_keep()  # keep.d is left NaN: the variant does not write it

    def returns(src):
        def run():
            EVENTS.append("run async")
            return Tensor(src.v)
        return run
    assert env.C.check_returned(returns(keep.ref), reference, keep) == (0, 0, None, 0)
    assert EVENTS.index("reference") < EVENTS.index("run async")  # the collective reference first, on every rank
    rel, _, why, _ = env.C.check_returned(returns(keep.local_ref), reference, keep)
    assert why is None and rel > 1  # another product (the local part) fails against ref


def test_recheck_runs_fused_targets_first_with_the_new_inputs_right_before_the_first(env):
    keep = make_keep()
    targets = [("local", Op(), call("local", keep.d_loc, keep.local_ref)),
               ("tpgemm", Op(), call("tpgemm", keep.d, keep.ref)), ("nccl", Op(), call("nccl", keep.d, keep.ref))]
    out, why = env.C.recheck(keep, reference, targets)
    assert why is None and out == {v: (0, 0, None, 0) for v in ("tpgemm", "nccl", "local")}
    assert [e for e in EVENTS if e.startswith("run")] == ["run tpgemm", "run nccl", "run local"]
    # queued once, ahead of the first fused call with nothing but D's zeroing between: an agreement there would
    # finish every rank's (late) writes before any call read a peer's shard
    assert EVENTS.count("new inputs") == 1 and EVENTS[:3] == ["new inputs", "zero d", "run tpgemm"]


def test_recheck_checks_every_local_mode_as_the_local_gemm_it_is(env):
    """local_default (the default config's local GEMM) writes d_loc like local: checked against local_ref after a
    zeroed d_loc, not against the fused output's ref."""
    keep = make_keep()
    targets = [("tpgemm", Op(), call("tpgemm", keep.d, keep.ref)),
               ("local_default", Op(), call("local_default", keep.d_loc, keep.local_ref))]
    out, why = env.C.recheck(keep, reference, targets)
    assert why is None and out == {"tpgemm": (0, 0, None, 0), "local_default": (0, 0, None, 0)}
    assert EVENTS.index("run tpgemm") < EVENTS.index("zero d_loc") < EVENTS.index("run local_default")


@pytest.mark.parametrize("inputs_fail", [False, True])
def test_recheck_of_the_local_gemm_alone_agrees_on_the_new_inputs(env, inputs_fail):
    def no_memory():
        raise RuntimeError("no memory")
    keep = make_keep()
    if inputs_fail:
        keep.new_inputs = no_memory
    out, why = env.C.recheck(keep, reference, [("local", Op(), call("local", keep.d_loc, keep.local_ref))])
    if inputs_fail:  # no call, no reference: the failure stands for the target
        assert out == {"local": (None, None, "new inputs for the re-check: RuntimeError('no memory')", None)}
        assert EVENTS == ["all_ok False"]
    else:
        assert out == {"local": (0, 0, None, 0)} and EVENTS[:3] == ["new inputs", "all_ok True", "reference"]


@pytest.mark.parametrize("where", ["here", "peer"])
def test_recheck_names_new_inputs_that_failed_ahead_of_a_fused_call_and_rechecks_nothing_more(env, where):
    def no_memory():
        EVENTS.append("new inputs")
        raise RuntimeError("no memory")
    keep = make_keep()
    if where == "here":
        keep.new_inputs = no_memory
    else:  # the inputs failed on another rank (its first call too): every rank agrees on it after the first call
        env.W.all_ok = lambda ok: EVENTS.append(f"all_ok {ok}") or False
    targets = [("tpgemm", Op(), call("tpgemm", keep.d, keep.ref)), ("local", Op(), call("local", keep.d_loc,
                                                                                        keep.local_ref))]
    out, why = env.C.recheck(keep, reference, targets)
    expected = "new inputs for the re-check: RuntimeError('no memory')" if where == "here" else \
        "failed on another rank"
    # not blamed on the fused call, and no target re-checked on old (or half-written) inputs
    assert why is None and out == {v: (None, None, expected, None) for v in ("tpgemm", "local")}
    assert "run local" not in EVENTS
