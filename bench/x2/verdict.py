"""Issue 4's acceptance points and the copy-engine switch's rule, read from a TP benchmark record file (call 1's or call
4's tp2.json), so that the x2 session decides from the numbers at once (bench/x2/README.md):

    python3 bench/x2/verdict.py [--switched] bench/results/tp2.json

--switched (call 4): the tree's defaults carry the copy engine, so the twins are push twins even where a cut file
holds none yet.

Prints one line per point, PASS or FAIL with its figures (the fourth point, the missing peer's timeout, is call 1's
GPU pytest), the largest per-element error of each check, then the rule's answer for the copy engine. On call 1's file (pushing picks, copy-engine twins):
"switch" (every copy-engine twin checked; each at least even with its pick on the M = 16384 reduce-scatter shapes
and on the geomean of all), "switch the _wide families" (even only where the pick is a _wide family), or "keep the
push". On call 4's (the defaults switched: copy-engine picks, push twins) the same rule on the same ratio, copy
engine / push, over the shapes whose pick has a push twin: "keep the switch" where it still holds (a tie keeps it),
else "undo the switch". Exit 0; 2 for a file it cannot read (tp_records.read_records) or one not of a bf16 TP = 2
run.
"""
import argparse
import functools
import math
import re
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent)]
from ce_default import FAMILIES  # noqa: E402
from report_tp import SEED_PROBLEM  # noqa: E402
import tp_records as R  # noqa: E402
from tp_records import MAX_PER_ELEMENT_ERR, SHAPES, geomean, ratio  # noqa: E402

BIG_M = 16384  # issue 4: fused >= 0.97 x tpgemm local on the shapes with M = 16384
CE_TWIN = "copy_engine_partials"  # call 1's alt variant (tp_bench --alt-copy-engine-partials): picks push
PUSH_TWIN = "push_partials"  # call 4's (--alt-push-partials): the picks carry their partials by copy engine


def missing_anchors(records: list[dict]) -> list[str]:
    """The eight shapes of measured-anchors (tp_records.SHAPES) that the file has no bf16 TP = 2 record of: every point
    is over all eight, so a run cut short (or of another dtype or TP) passes none of them."""
    have = {(r.get("name"), r.get("op"), r.get("M"), r.get("N"), r.get("K")) for r in records
            if r.get("dtype", "bf16") == "bf16" and r.get("tp", 2) == 2}
    return [s[0] for s in SHAPES if s not in have]


def ratios_of(records: list[dict], names: list[str], num: str, den: str, usable=lambda r: True) -> dict:
    """name -> num / den (record fields) for each shape named, None where the shape has no record, its check did not
    pass (the speed of a wrong output counts nowhere), usable(record) is false or a figure is missing."""
    by_name = {r["name"]: r for r in records if r.get("check") == "passed" and usable(r)}
    return {n: ratio(by_name[n].get(num), by_name[n].get(den)) if n in by_name else None for n in names}


def covered(ratios: dict) -> str:
    """How many of the shapes a point is over have a figure: " (over n of N)"."""
    return f" (over {sum(v is not None for v in ratios.values())} of {len(ratios)})"


def down3(x: float) -> str:
    """x with three decimals, cut rather than rounded: a ratio just under a bound (0.99993 against 1.00) must not
    print as the bound beside its FAIL."""
    return f"{math.floor(x * 1000) / 1000:.3f}"


def acceptance(records: list[dict]) -> list[tuple[str, bool, str]]:
    """(point, holds, figures) for each acceptance point of issue 4 that a record file can show. Each point over
    shapes holds only with a figure of every one of its shapes (all eight, or the six with M = 16384): a shape that
    failed its check, or lacks a figure, fails it."""
    missing = missing_anchors(records)
    records = [r for r in records if r.get("name") not in missing]
    anchors = [s[0] for s in SHAPES]
    vs_async = ratios_of(records, anchors, "tpgemm_tflops", "torch_async_tp_tflops")
    whole = lambda ratios: all(v is not None for v in ratios.values())  # noqa: E731
    g = geomean(list(vs_async.values()))  # over the shapes with a figure; it holds only over all eight
    low = {n: v for n, v in vs_async.items() if v is None or v < 1.0}
    # the denominator must be right too: a local GEMM whose check failed (tp_bench's local_check) counts nowhere
    local = ratios_of(records, [s[0] for s in SHAPES if s[2] == BIG_M], "tpgemm_tflops", "local_tflops",
                      usable=lambda r: r.get("local_check", "passed") == "passed")
    under = {n: v for n, v in local.items() if v is None or v < 0.97}
    seed = next((r for r in records if (r["M"], r["N"], r["K"]) == SEED_PROBLEM), None)
    seed_ratio = ratio(seed.get("tpgemm_tflops"), seed.get("cublas_local_tflops")) if seed else None
    seed_ok = seed is not None and seed.get("check") == "passed" and seed_ratio is not None and seed_ratio >= 1.0
    # the local GEMM's check too (a record from before it existed has none): a wrong denominator is a failed check
    failed = [r["name"] for r in records if r.get("check") != "passed" or r.get("local_check", "passed") != "passed"]
    fmt = lambda d: ", ".join(f"{n} {down3(v)}" if v else f"{n} -" for n, v in d.items()) or "none"  # noqa: E731
    gap = f"; missing: {', '.join(missing)}" if missing else ""
    # a baseline whose own output check did not pass has no figure (tp_bench): say so where its ratio is missing
    unchecked = [r["name"] for r in records if r.get("torch_async_tp_check", "passed") != "passed"]
    gap_async = gap + (f"; async TP's check not passed: {', '.join(unchecked)}" if unchecked else "")
    full = not missing  # a file without a record of each anchor (cut short, another dtype or TP) passes no shape point
    return [("geomean >= 1.10 x PyTorch async TP", full and whole(vs_async) and g >= 1.10,
             (down3(g) if g else "-") + ("" if whole(vs_async) else covered(vs_async)) + gap_async),
            ("every shape >= 1.00 x async TP", full and not low, f"below: {fmt(low)}{covered(vs_async)}{gap_async}"),
            ("reference check on every shape", full and not failed, f"failed: {', '.join(failed) or 'none'}{gap}"),
            ("fused >= 0.97 x tpgemm local, M = 16384", full and not under,
             f"below: {fmt(under)}{covered(local)}{gap}"),
            ("seed problem >= 1.00 x cuBLAS local", seed_ok,
             (down3(seed_ratio) if seed_ratio else "no figure" if seed else "no record")
             + (f", check {seed.get('check', 'not run')}" if seed and seed.get("check") != "passed" else ""))]


def twin_of(records: list[dict], switched: bool = False) -> str:
    """The twin variant of the file: push twins once the defaults are switched (call 4: said, or seen in a record),
    else copy-engine ones. A cut call 4 file may hold no twin at all: only `switched` then says which it is."""
    return PUSH_TWIN if switched or any(PUSH_TWIN in (r.get("alt") or {}) for r in records) else CE_TWIN


def switched_family(config) -> bool:
    """A config of one of the families ce_default.py switches (`<family>_tp<N>`): after the switch its partials go
    by copy engine, so call 4 times a push twin beside it."""
    return bool(config) and any(re.fullmatch(rf"{re.escape(f)}_tp[0-9]+", config) for f in FAMILIES)


def switch_rule(records: list[dict], switched: bool = False) -> tuple[str, list[str]]:
    """The copy-engine switch's answer and one line per reduce-scatter shape (twin / pick, check)."""
    twin = twin_of(records, switched)
    switched = twin == PUSH_TWIN
    rs = [r for r in records if r.get("op") == "RS"]
    if switched:  # a switch of the _wide families alone leaves the other picks pushing: they have no push twin
        lost = [r["name"] for r in rs if switched_family(r.get("config")) and twin not in (r.get("alt") or {})]
        if lost and len(lost) < len(rs):  # none at all: a run without push twins, said below
            return (f"keep the switch (no push twin of {', '.join(lost)}, whose pick is of a switched family "
                    "(ce_default.py FAMILIES): the rule needs each)"), []
        rs = [r for r in rs if twin in (r.get("alt") or {})]
    rows = [(r, (r.get("alt") or {}).get(twin) or {}) for r in rs]
    lines = [f"{r['name']}: {r.get('config')} -> {t.get('config') or '-'}: twin / pick "
             f"{ratio(t.get('tflops'), r.get('tpgemm_tflops')) or 0:.3f}, pick check {r.get('check', 'not run')}, "
             f"twin check {t.get('check', 'not run')}" for r, t in rows]
    keep = f"keep the {'switch' if switched else 'push'}"
    # the rule is over every reduce-scatter shape: a run cut short decides nothing
    gone = [s[0] for s in SHAPES if s[1] == "RS" and s[0] in missing_anchors(records)]
    if gone:
        return f"{keep} (no record of {', '.join(gone)}: the rule needs every reduce-scatter shape)", lines
    if not rows or any(not t or t.get("check") != "passed" or r.get("check") != "passed" for r, t in rows):
        return (f"{keep} (a pick or its {'push' if switched else 'copy-engine'} twin is missing or failed its "
                "check: the speed of a wrong output decides nothing)"), lines
    # the rule is over every shape's ratio: a pick or twin without a figure must not leave the geomean to the rest
    unmeasured = [r["name"] for r, t in rows if ratio(t.get("tflops"), r.get("tpgemm_tflops")) is None]
    if unmeasured:
        return f"{keep} (no figure of the pick or its twin on {', '.join(unmeasured)}: the rule needs each)", lines

    def even(subset, copy_engine_over_push):
        """The switch's rule on copy engine / push: at least even on every M = 16384 shape and in geomean."""
        ratios = [copy_engine_over_push(ratio(t.get("tflops"), r.get("tpgemm_tflops"))) for r, t in subset]
        big = [x for (r, _), x in zip(subset, ratios) if r["M"] == BIG_M]
        return bool(subset) and all(x is not None and x >= 1.0 for x in big) and (geomean(ratios) or 0) >= 1.0

    if switched:  # the same rule on the same ratio (copy engine / push), so that a tie keeps what was decided
        inverse = lambda x: 1.0 / x if x else None  # noqa: E731
        return ("keep the switch (the copy engine still at least even with the push twins)" if even(rows, inverse)
                else "undo the switch (python3 bench/x2/ce_default.py --undo): a push twin is faster"), lines
    even = functools.partial(even, copy_engine_over_push=lambda x: x)
    if even(rows):
        return "switch (python3 bench/x2/ce_default.py; call 4)", lines
    wide = [(r, t) for r, t in rows if "_wide" in (r.get("config") or "")]
    if even(wide):
        return "switch the _wide families only (ce_default.py FAMILIES; call 4)", lines
    return "keep the push", lines


ELEM_FIELDS = {"elem_err": "tpgemm", "recheck_elem_err": "its re-check", "local_elem_err": "local GEMM",
               "local_recheck_elem_err": "local re-check", "torch_async_tp_elem_err": "async TP (recorded only)"}
ALT_ELEM_FIELDS = {"elem_err": "", "recheck_elem_err": " re-check"}


def per_element_errors(records: list[dict]) -> str:
    """The largest per-element error of each check over the file's records, with its shape (tp_check.relative_errors;
    files before 2026-12-05 have none): what a first run across GPUs says of the 5e-2 bound, async TP's included, and
    each alt variant's (the twins, whose checks decide the switch), named by the variant."""
    parts = []
    for field, label in ELEM_FIELDS.items():
        got = [(r[field], r["name"]) for r in records if isinstance(r.get(field), (int, float))]
        parts.append(f"{label} {max(got)[0]:.2e} ({max(got)[1]})" if got else f"{label} not recorded")
    variants = sorted({v for r in records for v in (r.get("alt") or {})})
    for v in variants:
        for field, suffix in ALT_ELEM_FIELDS.items():
            got = [(a[field], r["name"]) for r in records for a in [(r.get("alt") or {}).get(v) or {}]
                   if isinstance(a.get(field), (int, float))]
            parts.append(f"{v}{suffix} {max(got)[0]:.2e} ({max(got)[1]})" if got else f"{v}{suffix} not recorded")
    return f"per-element errors (bound {MAX_PER_ELEMENT_ERR:g}): " + ", ".join(parts)


def run_problem(records: list[dict]) -> str:
    """Why a file of one run (tp_records.read_records) is not one the points are over, else "": issue 4's points are
    over bf16 at TP = 2 on the shapes' own M, and any other run would read as "8 shapes missing"."""
    run = R.run_of(records[0])
    if run["tp"] != 2:
        return f"holds TP = {run['tp']} records, the verdict is for TP = 2"
    if run["dtype"] != "bf16":
        return f"holds {run['dtype']} records, the verdict is for bf16"
    if run["tokens"]:
        return f"holds a --tokens {run['tokens']} run, the verdict is for the shapes' own M"
    return ""


def main(argv: list[str]) -> int:
    what, _usage, _switched, prints = __doc__.split("\n\n", 3)
    p = argparse.ArgumentParser(prog="verdict.py", description=f"{what.rstrip(':')}.\n\n{prints}", allow_abbrev=False,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # --switch is a typo, not it
    p.add_argument("--switched", action="store_true", help="call 4's file: the tree's defaults carry the copy engine, "
                   "so the twins are push twins even where a cut file holds none yet")
    p.add_argument("json", nargs="?", default="bench/results/tp2.json",
                   help="the TP benchmark's record file (bench/tp_bench.py); default: bench/results/tp2.json")
    a = p.parse_args(argv)
    try:
        records = R.read_records(a.json)
    except R.RecordError as e:
        p.exit(2, f"verdict.py: {e}\n")
    why = "holds no records" if not records else run_problem(records)
    if why:
        p.exit(2, f"verdict.py: {a.json} {why}\n")
    for point, holds, figures in acceptance(records):
        print(f"{'PASS' if holds else 'FAIL'}  {point}: {figures}")
    print(per_element_errors(records))
    answer, lines = switch_rule(records, a.switched)
    call = "pushed partials (call 4" if twin_of(records, a.switched) == PUSH_TWIN else "copy-engine partials (call 1"
    print(f"\n{call}'s twins):")
    for line in lines:
        print(f"  {line}")
    print(f"rule: {answer}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
