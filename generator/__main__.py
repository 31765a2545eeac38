"""CLI: python3 -m generator [generate|list] [--config schedules.yaml] [--out generated] ...

Exit status: 0 ok; 1 --check found stale files; 2 invalid config (every error on stderr, nothing
written).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import GENERATOR_VERSION, config, plan, render, write

COMMANDS = ("generate", "list")
PACKAGE_DIR = Path(__file__).resolve().parent


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m generator",
                                description="Generate tpgemm kernels and tables from schedules.yaml.")
    p.add_argument("--version", action="version", version=f"tpgemm generator {GENERATOR_VERSION}")
    sub = p.add_subparsers(dest="command", metavar="{generate,list}")
    gen = sub.add_parser("generate", help="render and write generated/ (the default command)")
    lst = sub.add_parser("list", help="print the configs and kernels that would be generated")
    for s in (gen, lst):
        s.add_argument("--config", default="schedules.yaml", help="input (default: schedules.yaml)")
    gen.add_argument("--out", default="generated", help="output directory (default: generated)")
    gen.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 listing the files that are stale")
    gen.add_argument("--depfile", metavar="PATH",
                     help="also write a gcc-style depfile for <out>/build.ninja (for ninja)")
    gen.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    return p


def _rel(p: Path) -> str:
    """p relative to the working directory when below it (ninja runs from the repo root)."""
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return p.resolve().as_posix()


def _inputs(config_path: str) -> list[str]:
    """Everything generated/build.ninja depends on."""
    tdir = render.TEMPLATE_DIR
    files = [Path(config_path)] + sorted(PACKAGE_DIR.glob("*.py")) + sorted(tdir.glob("*.j2"))
    files += sorted(p for p in (tdir / "kernels").glob("*") if p.is_file())
    return [_rel(f) for f in files]


def _load(path: str) -> plan.Plan:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise config.ConfigError([f"{path}:1: (file): cannot read: {e.strerror}; "
                                   "allowed: a readable YAML file"])
    doc = config.validate(config.compose(text, path), path)
    return plan.build(doc, os.path.basename(path))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "generate")
    args = _parser().parse_args(argv)
    try:
        p = _load(args.config)
    except config.ConfigError as e:
        for line in e.errors:
            print(line, file=sys.stderr)
        print(f"{args.config}: {len(e.errors)} error(s); nothing written", file=sys.stderr)
        return 2
    if args.command == "list":
        for c in p.configs:
            print(f"{c.name:28} {c.schedule.name:36} tp={c.schedule.tp} {c.kernel.name}")
        return 0
    files = render.render(p)
    out = Path(args.out)
    if args.check:
        stale = write.diff(out, files).stale
        for rel in stale:
            print(f"stale: {out / rel}", file=sys.stderr)
        if stale:
            print(f"{out}: {len(stale)} stale file(s); run `python3 -m generator`", file=sys.stderr)
            return 1
        return 0
    changes = write.write_tree(out, files)
    if args.depfile:
        write.write_depfile(Path(args.depfile), (out / "build.ninja").as_posix(), _inputs(args.config))
    if not args.quiet:
        print(f"{out}: {len(changes.write)} written, {len(changes.delete)} deleted, "
              f"{len(changes.same)} unchanged ({len(p.configs)} configs, {len(p.kernels)} kernels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
