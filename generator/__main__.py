"""CLI: python3 -m generator [generate|list|tune|vendor] [--config schedules.yaml] [--out generated] ...

`tune` (generator/tune_cli.py) and `vendor` (generator/vendor.py) have their own --help.

Exit status: 0 ok; 1 --check found stale files; 2 invalid config (every error on stderr, nothing
written).
"""
from __future__ import annotations

import argparse
import difflib
import glob
import os
import shlex
import sys
from pathlib import Path

from . import GENERATOR_VERSION, config, models, path_option, plan, render, write

COMMANDS = ("generate", "list", "tune", "vendor")
PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = render.TEMPLATE_DIR.parent  # where ninja runs: build.ninja and the depfile name paths from here


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m generator",
                                description="Generate tpgemm kernels and tables from schedules.yaml.",
                                epilog="Without a command, generate runs, and takes its options here too: "
                                       "--config, --out, --check, --depfile, -q (generate --help).")
    p.add_argument("--version", action="version", version=f"tpgemm generator {GENERATOR_VERSION}")
    sub = p.add_subparsers(dest="command", metavar="{generate,list,tune,vendor}")
    sub.add_parser("tune", help="profile kernel candidates for model/shape GEMMs on GPUs (see tune --help)")
    sub.add_parser("vendor", help="write a self-contained source tree with a Makefile (see vendor --help)")
    gen = sub.add_parser("generate", help="render and write generated/ (the default command)")
    lst = sub.add_parser("list", help="print one line per config that would be generated, with its kernel")
    lst.add_argument("--dispatch", action="store_true",
                     help="print the dispatch table instead: one line per model preset's layer (or tuned shape) and "
                          "TP, with the config tpg_dispatch_find returns for it at the row's M")
    for s in (gen, lst):
        s.add_argument("--config", default="schedules.yaml", type=path_option, help="input (default: schedules.yaml)")
    gen.add_argument("--out", default="generated", type=path_option, help="output directory (default: generated)")
    gen.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 listing the files that are stale")
    gen.add_argument("--depfile", metavar="PATH",
                     help="also write a gcc-style depfile for <out>/build.ninja (for ninja)")
    gen.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    return p


def _config_lines(configs) -> list[str]:
    return [f"{c.name:28} {c.schedule.name:36} tp={c.schedule.tp} {c.kernel.name}" for c in configs]


def _dispatch_lines(rows) -> list[str]:
    """`list --dispatch`: a row's model and layer ("shape -" for a tuned plain shape's), TP, the global GEMM M x N x K
    (M: the token count the row was made or tuned for; tpg_dispatch_find takes the row nearest the caller's M), dtype,
    schedule and config, as tpg_dispatch_get returns them."""
    if not rows:
        return ["no dispatch rows: the schedules file has no models: presets and no tuned: choices"]
    return [f"{(r.model or 'shape') + ' ' + (r.layer or '-'):28} tp={r.tp} {f'{r.m}x{r.n}x{r.k}':20} {r.dtype:5} "
            f"{r.schedule:36} {r.config}{' (tuned)' if r.tuned else ''}" for r in rows]


def _rel(p: Path) -> str:
    """p as ninja, run from the repository's top, names it: relative to that top when below it, else absolute (not
    relative to the working directory: run from tests/, it named the tree by its absolute path, so --check called
    the committed tree stale)."""
    try:
        return p.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return p.resolve().as_posix()


def _inputs(config_path: str, doc: dict) -> list[str]:
    """Everything generated/build.ninja depends on: also each `include:` glob's files and its folder (a folder's
    mtime changes when a tuned file is added, so ninja regenerates; the repository ships tuned/ for that - a folder
    that does not exist cannot be watched: watching the one above it, the repository's top, would regenerate on
    every ninja, whose own files change that folder)."""
    tdir = render.TEMPLATE_DIR
    inc = [f for pat in _include_patterns(config_path, doc) for f in
           [_fixed_folder(pat)] + sorted(Path(g) for g in glob.glob(pat)) if f.exists()]
    files = [Path(config_path)] + inc + sorted(PACKAGE_DIR.glob("*.py")) + sorted(tdir.glob("*.j2"))
    files += sorted(p for p in (tdir / "kernels").glob("*") if p.is_file())
    return [_rel(f) for f in files]


def _include_patterns(config_path: str, doc: dict) -> list[str]:
    """The include: globs as paths from here: os.path.join keeps an absolute pattern as it is (as models.load reads
    it), and glob.glob takes either kind."""
    base = os.path.dirname(config_path)
    return [os.path.join(base, pat) for pat in doc.get("include") or []]


def _fixed_folder(pattern: str) -> Path:
    """The deepest folder of an include: glob without wildcards ("tuned/*/k.yaml": tuned): the one whose mtime
    changes when a matching file or folder is added."""
    parts = Path(pattern).parent.parts
    fixed = next((i for i, part in enumerate(parts) if glob.has_magic(part)), len(parts))
    return Path(*parts[:fixed]) if fixed else Path(".")


def _missing_folders(config_path: str, doc: dict) -> list[str]:
    """The folders of include: globs that do not exist (ninja's depfile cannot name them)."""
    folders = dict.fromkeys(_fixed_folder(pat) for pat in _include_patterns(config_path, doc))
    return [_rel(f) for f in folders if not f.exists()]


def _check(out: Path, files: dict[str, str], regenerate: str = "python3 -m generator") -> int:
    """--check: 1 naming each stale file (and each that the generator would refuse to replace), else 0; `regenerate`
    is the command that writes this tree (its --config and --out where not the defaults)."""
    changes = write.diff(out, files)
    for rel in changes.conflict:
        print(f"conflict: {out / rel} has no DO-NOT-EDIT marker, so the generator would refuse to replace it; move it "
              "away first", file=sys.stderr)
    stale = [rel for rel in changes.stale if rel not in changes.conflict]
    for rel in stale:
        print(f"stale: {out / rel}", file=sys.stderr)
    if stale or changes.conflict:
        print(f"{out}: {len(stale)} stale file(s), {len(changes.conflict)} conflict(s)"
              + (f"; run `{regenerate}`" if not changes.conflict else ""), file=sys.stderr)
        return 1
    return 0


def _depfile_error(depfile: str | None) -> str:
    """Why --depfile cannot be written ("" when it can, as far as can be told before writing the tree)."""
    if not depfile:
        return ""
    path = Path(depfile)
    if path.is_dir():
        return "--depfile names a folder"
    folder = next((p for p in path.parents if p.exists()), Path("."))
    if not folder.is_dir():
        return f"--depfile's folder {folder} is a file"
    if not os.access(folder, os.W_OK):
        return f"--depfile's folder {folder} is not writable"
    return ""


def _same_file(a, b) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist: not the same
        return False


def _foreign_config_error(config_path: str, out: Path) -> str:
    """Why this config may not write the repository build's own tree ("" where it may): the top-level build.ninja
    regenerates generated/ from schedules.yaml whenever the generator, its templates or schedules.yaml change, so
    another config's tree there would be replaced at a later `ninja` without a word. Files compared as files (either
    may be a symlink: a schedules.yaml linked from elsewhere is still the repository's)."""
    if out.resolve() != (REPO_ROOT / "generated").resolve() or _same_file(config_path, REPO_ROOT / "schedules.yaml"):
        return ""
    return (f"{out} is the tree the repository's build regenerates from schedules.yaml (at the next `ninja` "
            f"after a change to the generator, its templates or schedules.yaml): {config_path}'s kernels would be "
            "replaced there unasked. Build them in their own tree: `python3 -m generator vendor --config "
            f"{config_path} --out DIR` (its own Makefile), or bring them into this build through schedules.yaml "
            "(`include:`, docs/CONFIG.md)")


def _load(path: str) -> tuple[plan.Plan, dict]:
    doc = models.load(path)
    return plan.build(doc, os.path.basename(path)), doc


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:  # `lst`: not an argument of generate
        # a command's first letters ('gen') are too short a part of it for difflib's ratio
        near = [c for c in COMMANDS if argv[0] and c.startswith(argv[0])] or difflib.get_close_matches(argv[0],
                                                                                                      COMMANDS, n=1)
        print(f"python3 -m generator: unknown command {argv[0]!r}" + (f" (did you mean {near[0]!r}?)" if near else "")
              + f"; commands: {', '.join(COMMANDS)} (none: generate)", file=sys.stderr)
        return 2
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "generate")
    if argv[0] in ("tune", "vendor"):
        import importlib  # only these commands need their modules
        return importlib.import_module(f".{'tune_cli' if argv[0] == 'tune' else 'vendor'}", __package__).main(argv[1:])
    args = _parser().parse_args(argv)
    try:
        p, doc = _load(args.config)
    except config.ConfigError as e:
        for line in e.errors:
            print(line, file=sys.stderr)
        print(f"{args.config}: {len(e.errors)} error(s); nothing written", file=sys.stderr)
        return 2
    for name in () if getattr(args, "quiet", False) else p.unused_kernels:  # each costs minutes of nvcc: say why
        print(f"note: kernel {name!r} is run by no config (configs[].kernel / kernel_tp1 at a TP it lists, or a tuned "
              "choice), so it is not built", file=sys.stderr)
    if args.command == "list":
        try:
            for line in _dispatch_lines(p.dispatch) if args.dispatch else _config_lines(p.configs):
                print(line)
            sys.stdout.flush()
        except BrokenPipeError:  # `list | head`: the reader has what it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    out = Path(args.out)
    # build.ninja names the sources where they are written, and the config they are written from
    files = render.render(p, gen_dir=_rel(out), config=_rel(Path(args.config)))
    if args.check:
        given = [f"--{k} {shlex.quote(v)}" for k, v, default in (("config", args.config, "schedules.yaml"),
                                                                   ("out", args.out, "generated")) if v != default]
        return _check(out, files, " ".join(["python3 -m generator", *given]))
    depfile_error = _depfile_error(args.depfile)
    if depfile_error:
        print(f"{args.depfile}: {depfile_error}; nothing written", file=sys.stderr)
        return 2
    foreign = _foreign_config_error(args.config, out)
    if foreign:
        print(f"{foreign}; nothing written", file=sys.stderr)
        return 2
    try:
        changes = write.write_tree(out, files)
    except write.PartialWrite as e:
        print(f"{out}: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{out}: {e}; nothing written", file=sys.stderr)
        return 2
    except write.WriteConflict as e:
        for rel in e.paths:
            print(f"{out / rel}: exists and was not written by this generator (no DO-NOT-EDIT marker); "
                  "refusing to replace it", file=sys.stderr)
        print(f"{out}: nothing written; choose an output directory that only the generator owns", file=sys.stderr)
        return 2
    if args.depfile:
        try:
            write.write_depfile(Path(args.depfile), _rel(out / "build.ninja"), _inputs(args.config, doc))
        except OSError as e:
            print(f"{args.depfile}: {e} (the depfile; {out} was written)", file=sys.stderr)
            return 2
        for folder in _missing_folders(args.config, doc):
            print(f"note: {folder} (of include:) does not exist, so ninja cannot see a file added there; create it "
                  "before the first one (mkdir), or run `python3 -m generator` after", file=sys.stderr)
    if not args.quiet:
        print(f"{out}: {len(changes.write)} written, {len(changes.delete)} deleted, "
              f"{len(changes.same)} unchanged ({len(p.configs)} configs, {len(p.kernels)} kernels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
