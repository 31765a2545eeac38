"""Which `cvta.param` instructions of a PTX text take a kernel parameter's address plus an offset known only at run
time. The ptxas of CUDA 12.4 and 12.5 assemble those without the parameter window's base (every kernel faulted at its
first TMA before templates/kernels/cuda12.h's tpg_stage); a constant offset they get right. tests/toolkit_floor.py
counts them in every kernel instance's PTX.

Each function (`.entry` / `.func`) is read on its own, since PTX registers are local to one. Statements are split on
`;`, so several on a line and one-line braces count; a register written more than once, or as part of a vector
(`ld.v2.u64 {%rd1, %rd2}`), has no single value. A `cvta.param` operand passes when its definitions lead back, through
`mov`, `add`, `sub`, `mul`, `mad` and `shl` of compile-time integers, to a parameter's symbol (or `symbol+offset`)."""
import re

_FUNCTION = re.compile(r"\.(?:entry|func)\b")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STATEMENT = re.compile(r"^(?:\$?\w+:\s*)?(?:@!?%?\w+\s+)?([a-z][\w.:]*)\s+(.*)$", re.S)
_PARAM = re.compile(r"\w+_param_\d+(?:\s*\+\s*(?:-?\d+|0[xX][0-9a-fA-F]+))?")
_INT = re.compile(r"-?(?:\d+|0[xX][0-9a-fA-F]+)")
_ARITH = ("add.", "sub.", "mul.", "mad.", "shl.")

ADDRESS, INTEGER = "address", "integer"  # a parameter's address plus a constant; a compile-time integer


def _operands(text):
    """A statement's operands, split on the commas outside braces: ['{%rd1, %rd2}', '[%rd3+8]']."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + [cur.strip()] if cur.strip() else out


def _statements(function):
    """(opcode, [operands]) of each instruction of one function's text."""
    for raw in _COMMENT.sub(" ", function).split(";"):
        m = _STATEMENT.match(raw.strip().lstrip("{}").strip())
        if m:
            yield m.group(1), _operands(m.group(2))


def _value(operand, defs, depth=0):
    """ADDRESS, INTEGER or None (known only at run time) for one operand of a function with definitions defs."""
    if _PARAM.fullmatch(operand):
        return ADDRESS
    if _INT.fullmatch(operand):
        return INTEGER
    found = defs.get(operand, [])
    if depth > 64 or len(found) != 1 or found[0] is None:
        return None
    op, args = found[0]
    values = [_value(a, defs, depth + 1) for a in args]
    if op.startswith("mov.") and len(values) == 1:
        return values[0]
    if op.startswith(("add.", "sub.")) and values == [INTEGER, INTEGER]:
        return INTEGER
    if op.startswith("add.") and values in ([ADDRESS, INTEGER], [INTEGER, ADDRESS]):
        return ADDRESS
    if op.startswith("sub.") and values == [ADDRESS, INTEGER]:  # never an integer minus an address
        return ADDRESS
    if op.startswith(_ARITH) and values and all(v == INTEGER for v in values):
        return INTEGER
    return None


def _function_count(function):
    """indexed_param_cvtas of one function's text (from its name on; its body starts at the first brace)."""
    defs, cvtas = {}, []
    for op, args in _statements(function.partition("{")[2]):
        if not args:
            continue
        dest = args[0]
        if dest.startswith("{"):  # a vector: each of its registers gets a value this walk does not follow
            for reg in re.findall(r"%\w+", dest):
                defs.setdefault(reg, []).append(None)
        elif dest.startswith("%"):
            defs.setdefault(dest, []).append((op, args[1:]))
        if op.startswith("cvta.param") and len(args) == 2:
            cvtas.append(args[1])
    return sum(_value(a, defs) != ADDRESS for a in cvtas)


def indexed_param_cvtas(ptx):
    """How many `cvta.param` instructions of a PTX text take a parameter's address plus a run-time offset."""
    return sum(_function_count(f) for f in _FUNCTION.split(ptx)[1:])
