"""tests/ptx_params.py: the `cvta.param` of a parameter's address plus a run-time offset, which the ptxas of CUDA 12.4
and 12.5 assemble without the parameter window's base, are counted in the PTX forms NVRTC writes, and nothing else is
(the toolkit-floor check fails on any count above 0)."""
import pytest

from tests.ptx_params import indexed_param_cvtas

ENTRY = ".visible .entry k(.param .align 128 .b8 k_param_0[1024])\n{\n%s\n}\n"
BASE = "mov.b64 \t%rd1, k_param_0;\n"

CASES = [  # (name, body after BASE, count)
    ("a constant offset", "add.s64 \t%rd2, %rd1, 256;\ncvta.param.u64 \t%rd3, %rd2;", 0),
    ("the stage index (the old templates)",
     "mul.wide.s32 \t%rd4, %r1, 768;\nadd.s64 \t%rd5, %rd1, %rd4;\nadd.s64 \t%rd6, %rd5, 256;\n"
     "cvta.param.u64 \t%rd7, %rd6;", 1),
    ("a negative constant", "add.s64 \t%rd2, %rd1, 6328;\nadd.s64 \t%rd3, %rd2, -152;\ncvta.param.u64 \t%rd4, %rd3;",
     0),
    ("the symbol itself, predicated", "@%p1 cvta.param.u64 \t%rd7, k_param_0;", 0),
    ("symbol plus offset", "cvta.param.u64 \t%rd3, k_param_0+256;", 0),
    ("a constant in a register", "mov.u64 \t%rd4, 768;\nadd.s64 \t%rd5, %rd1, %rd4;\ncvta.param.u64 \t%rd6, %rd5;", 0),
    ("constants folded by mad and sub", "mad.lo.s64 \t%rd4, 3, 256, 8;\nadd.s64 \t%rd5, %rd4, %rd1;\n"
     "sub.s64 \t%rd6, %rd5, 8;\ncvta.param.u64 \t%rd7, %rd6;", 0),
    ("an integer minus an address", "sub.s64 \t%rd5, 4096, %rd1;\ncvta.param.u64 \t%rd6, %rd5;", 1),
    ("a register written twice (a loop's copy)",
     "mov.u64 \t%rd10, %rd1;\nadd.s64 \t%rd5, %rd1, %rd9;\nmov.u64 \t%rd10, %rd5;\ncvta.param.u64 \t%rd11, %rd10;", 1),
    ("two statements on a line", "add.s64 %rd5, %rd1, %rd9; cvta.param.u64 %rd6, %rd5;", 1),
    ("inside one-line braces", "add.s64 \t%rd5, %rd1, %rd9;\n{ cvta.param.u64 %rd6, %rd5; }", 1),
    ("a predicate of any name", "add.s64 \t%rd5, %rd1, %rd9;\n@p cvta.param.u64 \t%rd6, %rd5;", 1),
    ("after a label", "$L__BB0_1:\n@%p1 add.s64 \t%rd5, %rd1, %rd3;\ncvta.param.u64 \t%rd6, %rd5;", 1),
    ("written again as part of a vector", "ld.v2.u64 \t{%rd1, %rd9}, [%rd2];\ncvta.param.u64 \t%rd6, %rd1;", 1),
    ("written again in braces", "{ add.s64 %rd1, %rd1, %rd7; }\ncvta.param.u64 \t%rd6, %rd1;", 1),
    ("a comment is not code", "// cvta.param.u64 %rd6, %rd9;\n/* add.s64 %rd1, %rd1, %rd7; */\n"
     "cvta.param.u64 \t%rd6, %rd1;", 0),
    ("code after a comment", "/* the stage's map */ cvta.param.u64 \t%rd6, %rd9;", 1),
]


@pytest.mark.parametrize("body,count", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_an_indexed_param_cvta_is_counted(body, count):
    assert indexed_param_cvtas(ENTRY % (BASE + body)) == count


def test_registers_are_read_per_function():
    """PTX registers are local to a function: two entries that each define %rd1 once are each constant."""
    one = ENTRY % (BASE + "cvta.param.u64 \t%rd2, %rd1;")
    two = one.replace("entry k(", "entry k2(").replace("k_param_0", "k2_param_0")
    assert indexed_param_cvtas(one + two) == 0
    assert indexed_param_cvtas(one + two.replace("cvta.param.u64 \t%rd2, %rd1;", "add.s64 %rd3, %rd1, %rd8;\n"
                                                  "cvta.param.u64 \t%rd2, %rd3;")) == 1


def test_the_old_templates_pattern_is_counted_in_every_cvta():
    """Three maps of a stage indexed at run time: three counts; the same through p.stage[0]'s generic address (the
    tpg_stage form: the cvta is of the bare symbol, the index added after it) none."""
    old = "".join(f"add.s64 %rd{10 + i}, %rd5, {128 * i};\ncvta.param.u64 %rd{20 + i}, %rd{10 + i};\n"
                  for i in range(3))
    new = "cvta.param.u64 %rd30, %rd1;\nmov.u64 %rd31, %rd30;\nadd.s64 %rd32, %rd31, %rd4;\n"
    pre = "mul.wide.s32 %rd4, %r1, 768;\nadd.s64 %rd5, %rd1, %rd4;\n"
    assert indexed_param_cvtas(ENTRY % (BASE + pre + old)) == 3
    assert indexed_param_cvtas(ENTRY % (BASE + pre + new)) == 0
