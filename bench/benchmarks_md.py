"""BENCHMARKS.md: one header, and one section per benchmark that its script rewrites between markers.

Every report script (report.py for the local GEMM, report_tp.py for TP = N) goes through here, so the
file has one header and one marker convention: <!-- NAME:begin --> ... <!-- NAME:end -->.
"""
from pathlib import Path

HEADER = ("# Benchmarks\n\nMeasured on the lent GPU machine by the scripts in `bench/`. A section between "
          "`<!-- NAME:begin -->` / `<!-- NAME:end -->` markers is rewritten by its script, with the date, GPU, driver "
          "and exact command of the run: edit the scripts, not those tables. The sections without markers (tier 2, "
          "few tokens, decode, timeline, kernel variants, autotuning) are hand-kept records, each naming the "
          "command and the record file it reports.\n")


class SectionError(ValueError):
    """The file has one marker of a section without the other: fixing it needs a person."""


def replace_section(text: str, name: str, title: str, body: str) -> str:
    """text with section `name` replaced by `## title` + body, or appended when it is not there yet."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    block = f"{begin}\n## {title}\n\n{body}{end}"
    has_begin, has_end = begin in text, end in text
    if has_begin and has_end and text.index(begin) < text.index(end):
        return text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    if has_begin or has_end:
        how = "only one of the markers" if has_begin != has_end else "the markers out of order:"
        raise SectionError(f"BENCHMARKS.md has {how} {begin} / {end}; fix it by hand")
    return text.rstrip("\n") + "\n\n" + block + "\n"


def update(path, name: str, title: str, body: str) -> None:
    """Rewrites section `name` of the file at path (created with HEADER when missing)."""
    p = Path(path)
    text = p.read_text() if p.exists() else HEADER
    p.write_text(replace_section(text, name, title, body))
