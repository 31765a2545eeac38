"""The tune report: what won, by how much against the default config (markdown, and a PNG when
matplotlib is installed). Pure apart from the optional plot file."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Row:
    label: str         # layer or MxNxK
    shape: str         # "M x N x K"
    schedule: str
    default: str       # default kernel (candidate name), "" if it did not run
    default_ms: float | None
    winner: str        # the candidate its tuned choice runs, "" if none (the default kept, or no choice)
    winner_ms: float | None  # the default's where it was kept
    tflops: float | None
    candidates: int    # candidates that ran
    note: str = ""     # why no tuned choice: "default kept", "default not timed", "DEFAULT FAILED ITS CHECK"

    @property
    def speedup(self) -> float | None:
        return self.default_ms / self.winner_ms if self.default_ms and self.winner_ms else None


def _f(v, fmt: str) -> str:
    return format(v, fmt) if v is not None else "-"


def markdown(title: str, rows: list[Row], failures: list[str] = ()) -> str:
    lines = [f"# {title}", "",
             "| GEMM | M x N x K | schedule | default | default ms | winner | winner ms | TFLOP/s per GPU "
             "| speedup | candidates |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        winner = r.winner or f"({r.note or 'none passed'})"
        lines.append(f"| {r.label} | {r.shape} | {r.schedule} | {r.default or '-'} | {_f(r.default_ms, '.4f')} "
                     f"| {winner} | {_f(r.winner_ms, '.4f')} "
                     f"| {_f(r.tflops, '.1f')} | {_f(r.speedup, '.3f')}{'x' if r.speedup else ''} | {r.candidates} |")
    if failures:
        lines += ["", "Failed runs (none of them can win):", ""] + [f"- {line}" for line in failures]
    return "\n".join(lines) + "\n"


def plot(title: str, rows: list[Row], path: Path) -> bool:
    """Default vs winner runtime per GEMM as a bar chart; False when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(max(4, 1.6 * len(rows)), 3.5))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r.default_ms or 0 for r in rows], 0.4, label="default")
    ax.bar([x + 0.2 for x in xs], [r.winner_ms or 0 for r in rows], 0.4, label="tuned")
    ax.set_xticks(list(xs), [r.label for r in rows])
    ax.set_ylabel("ms per call")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
