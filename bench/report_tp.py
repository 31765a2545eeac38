"""Renders bench/results/tp<N>.json as a markdown table into BENCHMARKS.md (between the
`<!-- tp<N>:begin -->` / `<!-- tp<N>:end -->` markers) and a PNG bar chart (when matplotlib exists).

    python3 bench/report_tp.py bench/results/tp2.json [--benchmarks BENCHMARKS.md] [--png out.png]
"""
import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchmarks_md  # noqa: E402
import tp_records as R  # noqa: E402
from tp_records import VARIANTS, geomean, ratio  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
def fmt(x, digits=0):
    return "–" if x is None else f"{x:.{digits}f}"


def shortest_window(records):
    """Seconds of the shortest sustained window any variant ran (the records' `windows`), or None."""
    spans = [w["seconds"] for r in records for ws in (r.get("windows") or {}).values() for w in ws
             if w.get("seconds") is not None]
    return min(spans) if spans else None


def modes_sentence(records) -> str:
    """What the local and async-TP columns are: the faster of two modes each since the benchmark timed both (records
    with `local_modes` / `torch_async_tp_modes`); a file from before says its one mode (an audit: re-rendered, an
    older file would have claimed modes it never ran)."""
    local = ("the faster of the fused config's family at TP = 1 and the TP = 1 default pick (where another; marked "
             "\"default\")" if any("local_modes" in r for r in records) else "the fused config's family at TP = 1")
    async_tp = ("the faster of eager calls and CUDA-graph replays (marked \"graph\")"
                if any("torch_async_tp_modes" in r for r in records) else "eager calls")
    modes = any("local_modes" in r or "torch_async_tp_modes" in r for r in records)
    return (f"tpgemm local: {local}; async TP: {async_tp}"
            + ("; each mode's figure in the JSON (`*_modes`)." if modes else " (a file from before the benchmark "
               "timed both modes of each)."))


def render(records, tp):
    missing = R.missing_shapes(records)
    asked = len(records) + len(missing)
    cols = ["shape", "op", "M", "N", "K", "tpgemm", "tpgemm local", "cuBLAS local", "async TP", "NCCL+cuBLAS",
            "tpgemm / async TP", "tpgemm / NCCL+cuBLAS", "J/call tpgemm", "J/call async TP", "check", "config"]
    shortest = shortest_window(records)
    span = f"windows of ≥ {shortest:.2f} s" if shortest is not None else "sustained windows"
    lines = [f"TP={tp}, per-GPU sustained TFLOP/s (2·M·N·K/tp over {span}, median of rounds; "
             "variants interleaved round-robin). Burst figures are in the JSON (`*_burst_tflops`). "
             + modes_sentence(records), "",
             *incomplete_lines(missing, asked),
             "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in records:
        row = [r["name"], r["op"], str(r["M"]), str(r["N"]), str(r["K"])]
        row += [fmt(r.get(f"{v}_tflops")) + mode_note(r, v) for v in VARIANTS]
        row += [fmt(ratio(r.get("tpgemm_tflops"), r.get("torch_async_tp_tflops")), 3),
                fmt(ratio(r.get("tpgemm_tflops"), r.get("nccl_cublas_tflops")), 3),
                fmt(r.get("tpgemm_joules"), 3) + energy_note(r, "tpgemm"),
                fmt(r.get("torch_async_tp_joules"), 3) + energy_note(r, "torch_async_tp"), r.get("check", "–"),
                r.get("config", "–") + (" (tuned)" if r.get("tuned") else "")]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Geomean " + "; ".join(geomean_over_passed(records, base, label, asked)
                                         for base, label in (("torch_async_tp", "async TP"),
                                                             ("nccl_cublas", "NCCL+cuBLAS"),
                                                             ("cublas_local", "cuBLAS local")))
              + f". Checks passed: {sum(r.get('check') == 'passed' for r in records)}/{len(records)}"
              + (f" ({len(missing)} of the {asked} shapes asked not run: {', '.join(missing)})." if missing else ".")]
    lines += acceptance_lines(records, tp)
    lines += experiment_lines(records)
    errors = [f"- {r['name']}: {k}: {v}" for r in records for k, v in (r.get("errors") or {}).items()]
    if errors:
        lines += ["", "Errors:", *errors]
    return "\n".join(lines) + "\n"


def mode_note(r, variant):
    """" (<mode>)" after a figure measured in another mode than the variant's first (tp_records.MODES), else ""."""
    mode = r.get(f"{variant}_mode") if variant in R.MODES else None
    return f" ({mode})" if mode and mode != R.MODES[variant][0] else ""


def energy_note(r, variant):
    """" (delta)" / " (mixed)" after joules not measured by the power fit in every window (tp_records.energy_method):
    the fit is the benchmark's method, the counter's delta carries up to a step at each end."""
    method = r.get(f"{variant}_energy_method")
    return f" ({method})" if method in ("delta", "mixed") else ""


def incomplete_lines(missing, asked):
    """The warning above the table of a run that lacks shapes it was asked for (tp_records.missing_shapes)."""
    if not missing:
        return []
    return [f"**Incomplete run: {len(missing)} of the {asked} shapes asked have no record** (the run stopped before "
            f"them, e.g. at its time bound): {', '.join(missing)}.", ""]


def geomean_over_passed(records, base, label, asked=None):
    """"tpgemm / <label>: <geomean>" over the shapes whose check passed and that have both figures, with how many
    of all the shapes asked (default: the records') that is: a shape with a wrong output (fast, often), without a
    baseline figure or not run must not move the figure, nor leave it silently."""
    ratios = [ratio(r.get("tpgemm_tflops"), r.get(f"{base}_tflops")) for r in records if r.get("check") == "passed"]
    ratios = [x for x in ratios if x is not None]
    asked = asked or len(records)
    over = "" if len(ratios) == asked else f" (over {len(ratios)} of {asked} shapes)"
    return f"tpgemm / {label}: {fmt(geomean(ratios), 3)}{over}"


def experiment_lines(records):
    """The run's extra variants (tp_bench.py --alt-*: other fused configs or modes on the same tensors, with their
    own check; --link-copies: diagnostics without an output) as one table, each against the shipped fused
    call of its shape."""
    rows = []
    for r in records:
        for kind, entries in (("alt", r.get("alt") or {}), ("diag", r.get("diag") or {})):
            for name, a in entries.items():
                rows.append([r["name"], f"{kind}:{name}", a.get("config") or "–", fmt(a.get("tflops")),
                             fmt(ratio(a.get("tflops"), r.get("tpgemm_tflops")), 3),
                             fmt(ratio(a.get("tflops"), r.get("local_tflops")), 3), fmt(a.get("sm_mhz")),
                             fmt(a.get("joules"), 3), a.get("check", "–")])
    if not rows:
        return []
    cols = ["shape", "variant", "config", "TFLOP/s", "/ tpgemm fused", "/ tpgemm local", "SM MHz", "J/call", "check"]
    return ["", "Experiments (same tensors, interleaved with the variants above):", "",
            "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)] + ["| " + " | ".join(x) + " |" for x in rows]


SEED_PROBLEM = (16384, 106496, 16384)  # the seed's default problem (= the 405B-fc1 anchor)
SEED_REPORTED = {4: "847 TFLOP/s per GPU (H100, TP = 4, fp16 accumulation)",
                 8: "780 TFLOP/s per GPU (H100, TP = 8, fp16 accumulation)"}


def acceptance_lines(records, tp):
    """The figures the TP issues judge beyond the geomeans: fused / tpgemm local on the M = 16384 shapes,
    and the seed's default problem against the cuBLAS local GEMM (next to the seed's own figure)."""
    out = []
    checked = lambda r: r.get("check") == "passed"  # noqa: E731 - the speed of a wrong output is no figure
    local_checked = lambda r: checked(r) and r.get("local_check", "passed") == "passed"  # noqa: E731 - its denominator
    big = [(r["name"], ratio(r.get("tpgemm_tflops"), r.get("local_tflops")) if local_checked(r) else None,
            local_checked(r)) for r in records if r["M"] == 16384]
    if big:
        shown = lambda v, ok: fmt(v, 3) if v is not None else "- (not timed)" if ok else "- (check not passed)"  # noqa
        out += ["", "tpgemm fused / tpgemm local on the M = 16384 shapes: "
                + ", ".join(f"{n} {shown(v, ok)}" for n, v, ok in big) + "."]
    seed = next((r for r in records if (r["M"], r["N"], r["K"]) == SEED_PROBLEM), None)
    if seed and not checked(seed):
        out += ["", f"Seed default problem {' x '.join(map(str, SEED_PROBLEM))}: no figure (its check: "
                f"{seed.get('check') or 'not run'})."]
    elif seed:
        line = (f"Seed default problem {' x '.join(map(str, SEED_PROBLEM))}: fused {fmt(seed.get('tpgemm_tflops'))} "
                f"TFLOP/s per GPU = {fmt(ratio(seed.get('tpgemm_tflops'), seed.get('cublas_local_tflops')), 3)} x "
                f"the cuBLAS local GEMM ({fmt(seed.get('cublas_local_tflops'))})")
        if tp in SEED_REPORTED:
            line += f"; the seed reported {SEED_REPORTED[tp]}"
        out += ["", line + "."]
    return out


def section_title(tp, dtype="bf16", tokens=0, tag=""):
    """The heading of a run's BENCHMARKS.md section (and its plot's title, without the first words)."""
    return (f"Tensor-parallel GEMM, TP={tp}" + ("" if dtype == "bf16" else f", {dtype}")
            + (f", {tokens} tokens" if tokens else "") + (f", {tag}" if tag else ""))


def replace_section(text, tp, body, dtype="bf16", tokens=0, tag=""):
    """BENCHMARKS.md text with the section of TP = tp (and dtype, tokens, tag: tp_records.result_stem) set to body."""
    return benchmarks_md.replace_section(text, R.result_stem(tp, dtype, tokens=tokens, tag=tag),
                                         section_title(tp, dtype, tokens, tag), body)


def plot(records, tp, path, dtype="bf16", tokens=0, tag=""):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(12, 5))
    width = 0.8 / len(VARIANTS)
    for i, (v, label) in enumerate(VARIANTS.items()):
        label = R.cublas_label(dtype) if v == "cublas_local" else label
        ys = [r.get(f"{v}_tflops") or 0 for r in records]
        ax.bar([x + i * width for x in range(len(records))], ys, width, label=label)
    names = [r["name"] + ("" if r.get("check") == "passed" else "\n(check " + (r.get("check") or "not run") + ")")
             for r in records]  # a shape whose output was wrong: its bars say nothing
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(records))], names)
    ax.set_ylabel("per-GPU TFLOP/s (sustained)")
    ax.set_title(f"TP={tp}, {dtype}" + (f", {tokens} tokens" if tokens else "") + (f", {tag}" if tag else ""))
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("json")
    p.add_argument("--benchmarks", default=str(ROOT / "BENCHMARKS.md"),
                   help="the file whose section of this run (tp<N>[_<dtype>][_m<M>][_<tag>]) is rewritten; default: "
                   "the repository's BENCHMARKS.md")
    p.add_argument("--png", default=None, help="default: next to the JSON, tp<N>.png")
    a = p.parse_args(argv)
    try:
        records = R.read_records(a.json)
    except R.RecordError as e:
        p.exit(2, f"report_tp.py: {e}\n")
    # both paths before either file is written: a section rewritten beside a plot that cannot be is half a report
    for flag, path in (("--benchmarks", a.benchmarks), ("--png", a.png)):
        if path is not None and (not path or os.path.isdir(path)):
            p.exit(2, f"report_tp.py: {flag} {path!r}: not a file's path (empty, or a folder)\n")
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            p.exit(2, f"report_tp.py: {flag} {path}: its folder does not exist\n")
    if not records:
        sys.exit(f"report_tp.py: {a.json} holds no records (a run whose --only named no shape?): nothing to render")
    tp, dtype = records[0]["tp"], records[0]["dtype"]
    tokens, tag = records[0].get("tokens") or 0, records[0].get("tag") or ""
    body = render(records, tp)
    # a smoke run (its records say so, and its file name: tp_records.result_stem): its times say nothing
    if any(r.get("shared_device") for r in records) or Path(a.json).stem.endswith("_shared"):
        print("Every rank ran on one GPU (--share-device): a check of the multi-process path, not a measurement; "
              "BENCHMARKS.md and the plot are left alone.\n\n" + body, end="")
        return
    bench = Path(a.benchmarks)
    try:
        text = bench.read_text() if bench.exists() else benchmarks_md.HEADER
        bench.write_text(replace_section(text, tp, body, dtype, tokens, tag))
    except benchmarks_md.SectionError as e:
        p.exit(2, f"report_tp.py: {e}\n")
    except (OSError, UnicodeDecodeError) as e:
        p.exit(2, f"report_tp.py: --benchmarks {bench}: {e}\n")
    print(f"{bench}: section {R.result_stem(tp, dtype, tokens=tokens, tag=tag)} rewritten", file=sys.stderr)
    png = Path(a.png) if a.png else Path(a.json).with_suffix(".png")
    if plot(records, tp, png, dtype, tokens, tag):
        print(f"plot: {png}", file=sys.stderr)  # stdout is the table (run_tp.sh writes it to <stem>_table.md)
    print(body, end="")


if __name__ == "__main__":
    main()
