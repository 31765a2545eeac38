"""bench/tp_numerics.py without torch or a GPU: a stand-in `torch` module records what each --dtype name asks of it,
so the choice of reference numerics (fast accumulation or promoted sums, the operand and output types) is pinned on
CI too. The torch-using paths themselves run in tests/test_tp_bench*.py on a machine with torch."""
import importlib.util
import sys
import types

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import tp_records as R  # noqa: E402


class _Tensor:
    def __init__(self, **kw):
        self.kw = kw

    def data_ptr(self):
        return id(self)


@pytest.fixture
def tp_numerics(monkeypatch):
    fake = types.SimpleNamespace(bfloat16="bf16", float16="fp16", float8_e4m3fn="e4m3", float32="f32",
                                 full=lambda shape, value, **kw: _Tensor(value=value, **kw))
    monkeypatch.setitem(sys.modules, "torch", fake)
    spec = importlib.util.spec_from_file_location("tp_numerics_under_test", ROOT / "bench" / "tp_numerics.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_dtype_name_gets_its_own_numerics(tp_numerics):
    assert R.DTYPES == ("bf16", "fp16", "e4m3", "e4m3_promoted")  # tp_bench's --dtype choices, each with numerics
    assert all(tp_numerics.for_dtype(name) for name in R.DTYPES)
    bf16, fp16 = tp_numerics.for_dtype("bf16"), tp_numerics.for_dtype("fp16")
    assert (bf16.dtype, bf16.out, fp16.dtype, fp16.out) == ("bf16", "bf16", "fp16", "fp16")
    assert bf16.scales == {} and fp16.scales == {}
    fast, promoted = tp_numerics.for_dtype("e4m3"), tp_numerics.for_dtype("e4m3_promoted")
    # the promoted configs' reference sums in f32 (no fast accumulation), as their kernels do
    assert fast.fast_accum is True and promoted.fast_accum is False
    for n in (fast, promoted):
        assert (n.dtype, n.out) == ("e4m3", "bf16")
        assert (n.scale_a.kw["value"], n.scale_b.kw["value"]) == (0.5, 2.0)
        assert set(n.scales) == {"scale_a", "scale_b"}


def test_an_unknown_dtype_name_is_refused(tp_numerics):
    with pytest.raises(KeyError):
        tp_numerics.for_dtype("e5m2")
