"""The only module that writes: write-if-different, and deletion of stale generated files."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

# Go's convention (golang/go#13560), with '#' for ninja files.
MARKER_RE = re.compile(r"^(//|#|/\*) Code generated .* DO NOT EDIT\.$")


@dataclass(frozen=True)
class Changes:
    write: tuple[str, ...]    # relative paths that are missing or differ
    delete: tuple[str, ...]   # relative paths of marked files that the plan no longer produces
    same: tuple[str, ...]

    @property
    def stale(self) -> tuple[str, ...]:
        return tuple(sorted(self.write + self.delete))


def is_generated(path: Path) -> bool:
    """True if the file's first line carries the DO-NOT-EDIT marker."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return bool(MARKER_RE.match(fh.readline().rstrip("\n")))
    except OSError:
        return False


def diff(out_dir: Path, files: dict[str, str]) -> Changes:
    """What write_tree would do, without doing it."""
    write, same = [], []
    for rel, text in files.items():
        p = out_dir / rel
        try:
            current = p.read_bytes() if p.is_file() else None
        except OSError:
            current = None
        (same if current == text.encode() else write).append(rel)
    delete = []
    if out_dir.is_dir():
        for p in sorted(out_dir.rglob("*")):
            rel = p.relative_to(out_dir).as_posix()
            if p.is_file() and not p.is_symlink() and rel not in files and is_generated(p):
                delete.append(rel)
    return Changes(tuple(sorted(write)), tuple(delete), tuple(sorted(same)))


def write_tree(out_dir: Path, files: dict[str, str]) -> Changes:
    """Write changed files (atomically), delete stale marked ones, never touch unmarked files."""
    changes = diff(out_dir, files)
    for rel in changes.write:
        p = out_dir / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.tmp")
        tmp.write_bytes(files[rel].encode())
        os.replace(tmp, p)
    for rel in changes.delete:
        p = out_dir / rel
        p.unlink()
        parent = p.parent
        while parent != out_dir and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    return changes


def write_depfile(path: Path, target: str, deps: list[str]) -> None:
    """gcc-style depfile 'target: dep dep ...' for ninja's regenerate rule (write-if-different)."""
    esc = lambda s: s.replace("\\", "\\\\").replace(" ", "\\ ").replace("$", "$$").replace("#", "\\#")
    text = esc(target) + ":" + "".join(f" \\\n  {esc(d)}" for d in deps) + "\n"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
