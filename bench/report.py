#!/usr/bin/env python3
"""Turns build/bench/local_gemm's JSON into a markdown table, a PNG plot and the local-GEMM section of
BENCHMARKS.md.

    python3 bench/report.py bench/results/local_gemm.json [--markdown PATH] [--png PATH] [--benchmarks PATH]

Ratios are tpgemm / cuBLAS measured in the same run (burst, sustained), and tpgemm's joules per GEMM over
cuBLAS's (below 1 is better): under the power cap only same-run ratios compare (measured-anchors.md).
Geometric means are per dtype over the problems where the ratio exists and the kernel passed its check. The PNG
needs matplotlib; without it the table is still written and a note goes to stderr. Exit: 0, or 2 for an unreadable
/ malformed JSON.
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when imported, not run
import benchmarks_md  # noqa: E402

REQUIRED = ("name", "M", "N", "K", "dtype", "config", "tpgemm_tflops", "cublas_tflops", "tpgemm_sustained_tflops",
            "cublas_sustained_tflops", "tpgemm_joules", "cublas_joules")
RATIOS = (("burst", "tpgemm_tflops", "cublas_tflops"),
          ("sustained", "tpgemm_sustained_tflops", "cublas_sustained_tflops"),
          ("joules", "tpgemm_joules", "cublas_joules"))


def _number_or_null(v):
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))


# What each field the report reads must hold (a record from another tool, or edited by hand, fails with exit 2)
FIELD_TYPES = ([(k, "a string", lambda v: isinstance(v, str)) for k in ("name", "dtype", "config")]
               + [(k, "an integer", lambda v: isinstance(v, int) and not isinstance(v, bool)) for k in "MNK"]
               + [(k, "a number or null", _number_or_null) for k in REQUIRED[6:] + ("max_error",)]
               + [("method", "a mapping or null", lambda v: v is None or isinstance(v, dict))]
               + [(k, "a string or null", lambda v: v is None or isinstance(v, str))
                  for k in ("command", "error", "date", "gpu", "driver")])
# build/bench/local_gemm's check values (null or a missing check: not checked)
CHECKS = ("pass", "fail")


class ReportError(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            records = json.load(f)
    except (OSError, ValueError) as e:
        raise ReportError(f"report.py: cannot read {path}: {e}")
    if not isinstance(records, list):
        raise ReportError(f"report.py: {path}: expected a JSON list of records, got {type(records).__name__}")
    for i, r in enumerate(records):
        missing = [k for k in REQUIRED if not isinstance(r, dict) or k not in r]
        if missing:
            raise ReportError(f"report.py: {path}: record {i} ({r.get('name', '?') if isinstance(r, dict) else r!r})"
                              f" lacks field(s) {', '.join(missing)}")
        wrong = [f"{k} must be {what}, got {r[k]!r}" for k, what, ok in FIELD_TYPES if k in r and not ok(r[k])]
        if wrong:
            raise ReportError(f"report.py: {path}: record {i} ({r.get('name', '?')}): {'; '.join(wrong)}")
        if r.get("check") is not None and r["check"] not in CHECKS:
            raise ReportError(f"report.py: {path}: record {i} ({r['name']}): check {r['check']!r} is not one of "
                              f"{', '.join(CHECKS)}")
    return records


def measured(r) -> bool:
    """Whether a record holds a timed figure of either side (a --dry-run's records hold none)."""
    return any(isinstance(r.get(k), (int, float)) and r[k] > 0 for k in ("tpgemm_tflops", "cublas_tflops"))


def quotient(a, b):
    """a / b where both are positive numbers, else None (not measured)."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0 and b > 0:
        return a / b
    return None


def ratio(r, num, den):
    return quotient(r.get(num), r.get(den))


def geomean(values):
    values = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def shown_variant_error(r):
    """The error of the variant whose figures the record shows (its config), "" if none: a variant dropped after its
    first windows keeps figures of those only."""
    shown = [v for v in r.get("variants") or [] if v.get("config") == r.get("config")]
    return (shown[0].get("error") or "") if shown else ""


def counts(r):
    """Whether a record's ratios count in the geomeans: its kernel passed its check (the speed of a wrong output is
    not that of a GEMM), every window ran, and cuBLAS itself matched the fp32 reference (else no baseline)."""
    return r.get("check") == "pass" and r.get("cublas_ref_check") != "fail" and not shown_variant_error(r)


def summary(records):
    """{dtype: {ratio name: (geomean or None, count)}} in first-seen dtype order, over the records that count."""
    out = {}
    for dt in dict.fromkeys(r["dtype"] for r in records):
        rows = [r for r in records if r["dtype"] == dt and counts(r)]
        out[dt] = {}
        for name, num, den in RATIOS:
            vals = [ratio(r, num, den) for r in rows]
            vals = [v for v in vals if v is not None]
            out[dt][name] = (geomean(vals), len(vals))
    return out


def fmt(v, spec):
    return "–" if v is None else format(v, spec)


def check_cell(r):
    c = r.get("check")
    cell = {"pass": "pass", "fail": "**FAIL**"}.get(c, "–")
    if isinstance(r.get("max_error"), (int, float)):
        cell += f" ({r['max_error']:.1e})"
    if r.get("error"):
        cell += f" — {r['error']}"
    if shown_variant_error(r):
        cell += f" — tpgemm: {shown_variant_error(r)} (not in the geomeans)"
    if r.get("cublas_ref_check") == "fail":
        cell += " — cuBLAS vs the fp32 reference: **FAIL** (not in the geomeans)"
    return cell


def config_cell(r):
    """The config shown; "(best)" where the run published the best of its variants, not the runtime's pick."""
    return (r["config"] or "–") + (" (best)" if r.get("published") == "best" else "")


def table(records):
    head = ("| problem | op | local M×N×K | dtype | config | tpgemm burst | cuBLAS burst | ratio burst "
            "| tpgemm sust. | cuBLAS sust. | ratio sust. | tpgemm J | cuBLAS J | J ratio | check (max err) |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    order = list(dict.fromkeys(r["dtype"] for r in records))
    for r in sorted(records, key=lambda r: order.index(r["dtype"])):  # stable: one block per dtype
        rb, rs, rj = (ratio(r, num, den) for _, num, den in RATIOS)
        lines.append(
            f"| {r['name']} | {r.get('op', '')} | {r['M']}×{r['N']}×{r['K']} | {r['dtype']} | {config_cell(r)} "
            f"| {fmt(r['tpgemm_tflops'], '.1f')} | {fmt(r['cublas_tflops'], '.1f')} | {fmt(rb, '.3f')} "
            f"| {fmt(r['tpgemm_sustained_tflops'], '.1f')} | {fmt(r['cublas_sustained_tflops'], '.1f')} "
            f"| {fmt(rs, '.3f')} | {fmt(r['tpgemm_joules'], '.4g')} | {fmt(r['cublas_joules'], '.4g')} "
            f"| {fmt(rj, '.3f')} | {check_cell(r)} |")
    for dt, s in summary(records).items():
        (gb, nb), (gs, ns), (gj, nj) = s["burst"], s["sustained"], s["joules"]
        lines.append(f"| **geomean {dt}** | | | {dt} | | | | **{fmt(gb, '.3f')}** ({nb}) | | | **{fmt(gs, '.3f')}** "
                     f"({ns}) | | | **{fmt(gj, '.3f')}** ({nj}) | |")
    return "\n".join(lines) + "\n"


def tuned_cublas(r):
    """The record's --lt-algos variant (cuBLASLt's fastest of its first N heuristic algorithms), or None."""
    return next((v for v in r.get("variants") or [] if v.get("lt_best_of")), None)


def tuned_cublas_text(records):
    """Where the run timed cuBLASLt's best of N beside its top algorithm (`local_gemm --lt-algos N`): per dtype, the
    geomeans of tpgemm over it and of it over the top one, on the records that count whose variant passed its check
    against the top algorithm's D; "" for runs without it. The table's ratios stay against the top algorithm."""
    lines = []
    for dt in dict.fromkeys(r["dtype"] for r in records):
        rows = [(r, tuned_cublas(r)) for r in records if r["dtype"] == dt and counts(r)]
        rows = [(r, v) for r, v in rows if v and v.get("check") == "pass" and not v.get("error")]
        if not rows:
            continue
        tp_burst = geomean([quotient(r["tpgemm_tflops"], v.get("burst_tflops")) for r, v in rows])
        tp_sust = geomean([quotient(r["tpgemm_sustained_tflops"], v.get("sustained_tflops")) for r, v in rows])
        it_burst = geomean([quotient(v.get("burst_tflops"), r["cublas_tflops"]) for r, v in rows])
        it_sust = geomean([quotient(v.get("sustained_tflops"), r["cublas_sustained_tflops"]) for r, v in rows])
        n = "/".join(str(x) for x in sorted({v["lt_best_of"] for _, v in rows}))  # a joined JSON may mix runs
        count = sum(1 for r, v in rows if quotient(r["tpgemm_sustained_tflops"], v.get("sustained_tflops")))
        lines.append(f"cuBLASLt's fastest of its first {n} heuristic algorithms ({dt}, {count} problems; a short "
                     f"timed trial picks it, then it is timed as a variant of the same run): tpgemm / it "
                     f"{fmt(tp_burst, '.3f')} burst, {fmt(tp_sust, '.3f')} sustained; it / the top algorithm "
                     f"{fmt(it_burst, '.3f')} burst, {fmt(it_sust, '.3f')} sustained (geomeans).\n")
    return "\n" + "\n".join(lines) if lines else ""


def sustained_method(records):
    """How the sustained windows were run, from the records' `method` (older runs lack the newer fields);
    records of runs with different methods get one description each, in order."""
    texts = []
    for r in records or [{}]:
        m = r.get("method") or {}
        rounds, heat = m.get("rounds", 1), m.get("heat_windows", 1)
        order = (f"{rounds} rounds, the variants forward then in reverse" if "sustained_order" in m and rounds > 1
                 else f"{rounds} round{'s' if rounds > 1 else ''}, cuBLAS first")
        texts.append(f"≥ 1 s windows back to back ({order}) after an unmeasured heat window of {heat:g} "
                     f"window{'s' if heat != 1 else ''}")
    return " / ".join(dict.fromkeys(texts))


def _by_method(records, describe):
    """describe(method) of each record's `method`, one text per distinct one, in order, joined by " / "."""
    return " / ".join(dict.fromkeys(describe(r.get("method") or {}) for r in records or [{}]))


# What changed in the method 2026-12-05 (`method` key, a word its new text holds, the new description, the old one):
# the burst windows start after one unmeasured window, each one's first event behind a device-side delay (before,
# the first one, cuBLAS's, followed a longer idle, and every first event held the first call's host launch latency);
# the row shows the runtime's pick (the record's `published` says where no variant ran it), not the fastest config on
# the windows shown.
BURST = ("burst", "unmeasured",
         "median of 3 short windows per variant, after one unmeasured window a problem, each after ≥ 1 s idle, its "
         "first event behind a device-side delay while the host queues its calls",
         "median of 3 short windows per variant, each after ≥ 1 s idle")
PUBLISHED = ("best", "pick",
             "the one the runtime picks for the problem (tpg_config_pick at TP = 1), where a variant runs it, else "
             "the one with the highest burst × sustained rate, marked (best)",
             "the one with the highest burst × sustained rate")


def method_text(records, change):
    """The description of `change` (BURST, PUBLISHED) that each record's method calls for."""
    key, word, new, old = change
    return _by_method(records, lambda m: new if word in (m.get(key) or "") else old)


def check_method(records):
    """The check against cuBLAS's output, where the record's `method.check` names it (runs since 2026-12-05)."""
    def describe(m):
        c = m.get("check")
        return (f"{c} (≤ eps, the CLI's metric)" if c
                else "max |d − ref| / max |ref| against cuBLAS after the first call")
    return _by_method(records, describe)


FP8 = ("e4m3", "e5m2")


RESULT_STEMS = {"local_gemm": "local_gemm", "local_gemm_fp8": "local_gemm_e4m3",
                "local_gemm_fp8_promoted": "local_gemm_e4m3_promoted"}  # section -> default .md / .png name


def precise(records):
    """Was the run `local_gemm --precise-fp8` (promoting kernels against cuBLASLt without fast accumulation)?"""
    return any("--precise-fp8" in (r.get("command") or "").split() for r in records)


def section_of(records):
    """(BENCHMARKS.md section name, title): fp8 runs (`local_gemm --dtype e4m3`, with or without --precise-fp8)
    have sections of their own, so no kind of run replaces another's table."""
    if records and all(r["dtype"] in FP8 for r in records):
        if precise(records):
            return "local_gemm_fp8_promoted", "Local GEMM, fp8 with f32 promotion: tpgemm vs cuBLASLt, one GPU"
        return "local_gemm_fp8", "Local GEMM, fp8: tpgemm vs cuBLASLt, one GPU"
    return "local_gemm", "Local GEMM: tpgemm vs cuBLASLt, one GPU"


def fp8_note(records):
    """What the fp8 comparison holds equal (empty for 16-bit runs)."""
    if not any(r["dtype"] in FP8 for r in records):
        return ""
    if precise(records):
        return (" fp8: e4m3 operands, bf16 output, no scales; tpgemm's `fp8_promote` kernels, which add the tensor "
                "pipe's sums into f32 registers every few k-blocks, against cuBLASLt without fast accumulation "
                "(it promotes too).")
    return (" fp8: e4m3 operands, bf16 output, no scales; cuBLASLt with fast accumulation "
            "(CUBLASLT_MATMUL_DESC_FAST_ACCUM), the numerics of tpgemm's fp8 kernels, which sum in the tensor "
            "pipe's fp8 accumulator over the whole K.")


def markdown(records, png_rel=None):
    runs = list(dict.fromkeys((r.get("date", "?"), r.get("gpu", "?"), r.get("driver", "?"), r.get("command", "?"))
                              for r in records)) or [("?", "?", "?", "?")]
    text = ("TFLOP/s per GPU of the local GEMM (the per-GPU part of each TP = 2 layer of measured-anchors.md, "
            "and two square GEMMs) on one GPU: a shipped TP = 1 tpgemm config through the public API "
            f"against cuBLASLt, same data, same run. Burst: {method_text(records, BURST)}; "
            f"sustained: {sustained_method(records)}; J: joules per "
            "GEMM, the power fitted from NVML's energy counter while the window ran × seconds per call. The "
            f"config shown is {method_text(records, PUBLISHED)}. Check: {check_method(records)}. "
            "Ratios are tpgemm / cuBLAS; the geomean rows give (in brackets) how many problems they cover."
            + fp8_note(records)
            + "\n\n"
            + "".join(f"Run {d} on {g}, driver {v}: `{c}`\n\n" for d, g, v, c in runs))
    text += table(records) + tuned_cublas_text(records)
    if png_rel:
        text += f"\n![local GEMM ratios]({png_rel})\n"
    return text


def plot(records, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report.py: matplotlib is not importable; wrote the table only (no PNG)", file=sys.stderr)
        return False
    dtypes = list(dict.fromkeys(r["dtype"] for r in records))
    fig, axes = plt.subplots(len(dtypes), 1, figsize=(11, 3.6 * len(dtypes)), squeeze=False)
    for ax, dt in zip(axes[:, 0], dtypes):
        rows = [r for r in records if r["dtype"] == dt]
        x = range(len(rows))
        for i, (name, num, den) in enumerate(RATIOS):
            ys = [ratio(r, num, den) or 0.0 for r in rows]
            ax.bar([v + (i - 1) * 0.27 for v in x], ys, width=0.27, label=f"{name} ratio")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(list(x))
        ax.set_xticklabels([r["name"] for r in rows], rotation=20)
        ax.set_ylabel("tpgemm / cuBLAS")
        ax.set_title(f"local GEMM, {dt} (joules: below 1 is better)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json")
    ap.add_argument("--markdown", help="write the table here (default: beside the JSON, local_gemm.md; fp8: "
                                       "local_gemm_e4m3.md, local_gemm_e4m3_promoted.md with --precise-fp8)")
    ap.add_argument("--png", help="write the plot here (default: beside the JSON, named as the table)")
    ap.add_argument("--benchmarks", help="update the local_gemm section (local_gemm_fp8, local_gemm_fp8_promoted for "
                                         "fp8 records) of this BENCHMARKS.md")
    args = ap.parse_args(argv)
    try:
        records = load(args.json)
        base = os.path.dirname(os.path.abspath(args.json))
        stem = RESULT_STEMS[section_of(records)[0]]  # an fp8 run never overwrites the 16-bit report
        md_path = args.markdown or os.path.join(base, stem + ".md")
        png_path = args.png or os.path.join(base, stem + ".png")
        for out in (md_path, png_path, args.benchmarks):  # before anything is written, not at the plot's save
            if out and not os.path.isdir(os.path.dirname(os.path.abspath(out))):
                raise ReportError(f"report.py: {out}: its folder does not exist")
        if args.benchmarks and not any(measured(r) for r in records):  # refused before the table beside is written
            raise ReportError(f"report.py: {args.json} holds no measured figure (a --dry-run's JSON, or no record): "
                              f"{args.benchmarks} left alone, nothing written")
        have_png = plot(records, png_path) if records else False
        if not have_png and records and os.path.exists(png_path):  # e.g. made on the device, reported here
            print(f"report.py: linking the existing {png_path} (not redrawn)", file=sys.stderr)
            have_png = True
        try:
            with open(md_path, "w") as f:
                f.write(markdown(records, os.path.basename(png_path) if have_png else None))
        except OSError as e:
            raise ReportError(f"report.py: cannot write the table: {e}")
        if args.benchmarks:
            rel = os.path.relpath(png_path, os.path.dirname(os.path.abspath(args.benchmarks))) if have_png else None
            benchmarks_md.update(args.benchmarks, *section_of(records), markdown(records, rel))
    except (ReportError, benchmarks_md.SectionError) as e:
        print(e, file=sys.stderr)
        return 2
    print(table(records), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
