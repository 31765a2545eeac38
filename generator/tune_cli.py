"""`python3 -m generator tune`: finds the fastest kernel for each GEMM of a preset (--model) or for one GEMM (--shape),
timed on the GPUs it runs on (as many as --tp; --dry-run needs none, lists the candidates and builds nothing). A
winner must beat the layer's default config by 2% with its check passed; the winners go to tuned/<tag>.yaml beside
--config, a report to build/tune/<tag>/. Exit status: 0 every layer has a verdict, 1 some has none or an argument,
path or build was refused, 2 usage or config errors, 3 too few GPUs (the runs still to do stay pending).
docs/TUNING.md has the rest.

The process edge. Writes the candidate schedules file and its build
tree under build/tune/<tag>/, builds it with ninja (one subprocess, parallel), profiles every pending
(shape, candidate) pair through <tree>/tpgemm --json --no-check, verifies the fastest with the check on,
and writes tuned/<tag>.yaml plus a report. Every result goes to a JSON-lines state file first, so an
interrupted run resumes where it stopped. All processes go through `runner` (tests pass a fake).
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml

from . import models, path_option, plan, ptxas, render, tune, tune_env, tune_report, write
from .config import MAX_TP, ConfigError, ce_partials_at, config_kernel
from .kernels import DTYPE_SIZE
from .schedules import SCHEDULES

ROOT = Path(__file__).resolve().parent.parent


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m generator tune", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", help="a preset of schedules.yaml models: (tunes its four layer GEMMs)")
    p.add_argument("--tokens", type=int, help="M of the preset's GEMMs (default: the preset's)")
    p.add_argument("--shape", help="M,N,K of one GEMM (with --schedule) instead of --model")
    p.add_argument("--schedule", choices=sorted(SCHEDULES), help="schedule of --shape")
    p.add_argument("--dtype", choices=sorted(DTYPE_SIZE),
                   help="operand type of --shape (default bf16); with --model only the preset's own")
    p.add_argument("--tp", type=int, required=True, choices=range(1, MAX_TP + 1), metavar=f"1..{MAX_TP}",
                   help="TP degree")
    p.add_argument("--config", default=str(ROOT / "schedules.yaml"), type=path_option,
                   help="schedules.yaml with the presets (default: the repository's, wherever tune runs)")
    p.add_argument("--out", type=path_option, help="tuned YAML (default tuned/<tag>.yaml beside --config)")
    p.add_argument("--work", type=path_option, help="build tree and state (default build/tune/<tag>)")
    p.add_argument("--iterations", type=int, default=50, help="timed calls per candidate run (>= 1; default 50)")
    p.add_argument("--warmup", type=int, default=10, help="untimed calls before them (>= 0; default 10)")
    p.add_argument("--run-timeout-s", type=float, default=300.0,
                   help="wall-clock bound on one candidate run (default 300): past it the run counts as failed")
    p.add_argument("--knob", action="append", default=[], metavar="FIELD=V1,V2",
                   help="keep only these values of a knob: tile (128x256x64), stages (3, 4, auto), consumers, "
                        "cluster (1x1, 2x1, 1x2), a schema enum (raster_group=4,8; consumer_mode) or "
                        "pull_partials=false,true / copy_engine_partials=false,true (reduce-scatter layers also with "
                        "pulled partials / partials carried by the copy engine); repeatable (a knob given twice keeps both lists)")
    p.add_argument("-j", "--jobs", type=int, help="ninja parallelism (>= 1; default: ninja's)")
    p.add_argument("--dry-run", action="store_true",
                   help="write the candidate schedules file (<work>/schedules.yaml), check it as the build reads it "
                        "and list each GEMM's candidates; build and run nothing (needs no GPU)")
    return p


def _shapes(args, doc: dict) -> tuple[list[tune.Shape], str]:
    """The GEMMs to tune and the run's tag (tuned/<tag>.yaml, build/tune/<tag>/, the kernels' name prefix)."""
    if args.model and (args.shape or args.schedule):
        raise SystemExit(f"tune: --model tunes a preset's layers; --{'shape' if args.shape else 'schedule'} is for "
                         "one GEMM instead: give one or the other")
    if args.model:
        preset = next((p for p in doc["models"] if p["name"] == args.model), None)
        if preset is None:
            raise SystemExit(f"tune: unknown model {args.model!r}; presets: "
                             + ", ".join(p["name"] for p in doc["models"]))
        if args.dtype and args.dtype != preset["dtype"]:
            raise SystemExit(f"tune: --dtype {args.dtype}: {args.model}'s layers are {preset['dtype']} (its preset's "
                             "dtype); tune another dtype's GEMMs with --shape")
        # a run at another M writes a file of its own: its choices hold for that M (models.tuned_key)
        at = f"_m{args.tokens}" if args.tokens and args.tokens != preset["tokens"] else ""
        return tune.model_shapes(doc, args.model, args.tp, args.tokens), f"{args.model}_tp{args.tp}{at}"
    if not (args.shape and args.schedule):
        raise SystemExit("tune: give --model NAME, or --shape M,N,K with --schedule")
    if args.tokens is not None:
        raise SystemExit("tune: --tokens sets a preset's M; with --shape, M is its first extent")
    m, n, k = _extents(args.shape)
    short, dtype = SCHEDULES[args.schedule]["short"], args.dtype or "bf16"
    # a letter first: the tag prefixes kernel names, which must be identifiers; the dtype in it, so that tuning
    # one shape in two dtypes writes two files
    return ([tune.Shape("", "", m, n, k, args.schedule, args.tp, dtype)],
            f"shape_{m}x{n}x{k}_{short}_{dtype}_tp{args.tp}")


def _extents(text: str) -> tuple[int, int, int]:
    """M,N,K of --shape: three positive integers."""
    parts = text.split(",")
    if len(parts) != 3 or not all(re.fullmatch(r"\s*[0-9]+\s*", x) and int(x) > 0 for x in parts):
        raise SystemExit(f"tune: --shape {text!r}: give M,N,K, three positive integers (e.g. 16384,8192,8192)")
    m, n, k = (int(x) for x in parts)
    return m, n, k


def _check_shapes(shapes: list[tune.Shape]) -> None:
    """Refuse GEMMs that the schedule cannot run at the TP (models.shape_problems) before anything is built."""
    bad = [f"{s.label} ({s.m} x {s.n} x {s.k}) at tp {s.tp}: {problem}" for s in shapes
           for problem in models.shape_problems(s.schedule, s.tp, s.m, s.n, s.k, s.dtype)]
    if bad:
        raise SystemExit("tune: nothing to tune:\n  " + "\n  ".join(bad))


def _default_conf(doc: dict, s: tune.Shape) -> dict | None:
    """The configs[] entry whose instance tpg_config_pick takes for the shape at the shape's TP."""
    name = models.default_config(doc, s.schedule, s.tp, s.dtype, s.k, s.m, s.n)
    return next((c for c in doc["configs"] if name and name == f"{c['name']}_tp{s.tp}"), None)


def _default_entry(doc: dict, s: tune.Shape) -> dict | None:
    """The kernel entry that the shape's default config runs (compared against in the report)."""
    conf = _default_conf(doc, s)
    entry = next((k for k in doc["kernels"] if conf and k["name"] == config_kernel(conf, s.tp)), None)
    return {f: v for f, v in entry.items() if v is not None} if entry else None


def _default_route(doc: dict, s: tune.Shape) -> str:
    """How the shape's default config moves its partials (a key of tune.ROUTES): the report compares against the
    default's kernel on that route, so the search must profile it."""
    conf = _default_conf(doc, s) or {}
    if conf.get("pull_partials") and s.tp > 1:
        return "pull"
    return "ce" if ce_partials_at(conf, s.tp) else "push"


def _with_default_routes(routes: dict[tune.Shape, str], base: dict, stream) -> dict:
    """base with the knob of every route some shape's default takes (routes) asked for, and a note on stream for
    each one added: the tuned choices and the report weigh each layer against its default on its own route, so the
    search profiles that route too."""
    out = dict(base)
    for route in sorted(set(routes.values()) - {"push"}):
        knob = tune.ROUTES[route][0]
        if True not in out[knob]:
            out[knob] = (False, True)
            layers = ", ".join(sorted(s.label for s, r in routes.items() if r == route))
            print(f"tune: the default config of {layers} moves its partials by {knob}: every candidate is profiled "
                  f"that way too (--knob {knob}=false,true)", file=stream)
    return out


def build_tree(work: Path, shapes, cands, runner, jobs: int | None) -> Path:
    """Candidate schedules file -> work/generated + work/build.ninja -> ninja. Returns the CLI path."""
    return build_doc(work, tune.candidates_doc(shapes, cands), runner, jobs)


def write_doc(work: Path, doc: dict) -> plan.Plan:
    """A schedules document -> work/schedules.yaml, read back and planned as the build reads it (a ConfigError says
    what the generator would refuse)."""
    (work / "schedules.yaml").parent.mkdir(parents=True, exist_ok=True)
    (work / "schedules.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return plan.build(models.load(str(work / "schedules.yaml")), "schedules.yaml")


def dry_run(work: Path, shapes, cands, out=None) -> int:
    """--dry-run: the candidate schedules file written and checked, each GEMM's candidates listed (on out, default
    stdout); nothing built."""
    out = out or sys.stdout
    try:
        p = write_doc(work, tune.candidates_doc(shapes, cands))
    except ConfigError as e:  # the candidates' knobs together break a rule of the generator's
        print("\n".join(e.errors) + f"\ntune: --dry-run: {work / 'schedules.yaml'}: {len(e.errors)} error(s)",
              file=sys.stderr)
        return 2
    for s in shapes:
        names = [c.name for c in cands if tune.applies(s, c)]
        print(f"{s.label}: {s.m} x {s.n} x {s.k}, {s.schedule}, tp {s.tp}, {s.dtype}: {len(names)} candidates",
              file=out)
        out.writelines(f"  {name}\n" for name in names)
    print(f"tune: --dry-run: {work / 'schedules.yaml'} ({len(p.configs)} configs, {len(p.kernels)} kernels); nothing "
          "built or run", file=out)
    return 0


def build_doc(work: Path, doc: dict, runner, jobs: int | None) -> Path:
    """A schedules document -> work/generated + work/build.ninja -> ninja: work/tpgemm, the repository's CLI and
    runtime built with the document's configs alone. Returns the CLI path."""
    p = write_doc(work, doc)
    rel = work.resolve().relative_to(ROOT).as_posix() if work.resolve().is_relative_to(ROOT) else str(work)
    write.write_tree(work / "generated", render.render(p, gen_dir=f"{rel}/generated", obj_dir=f"{rel}/obj",
                                                       lib=f"{rel}/libtpgemm.a", config=None))
    top = (ROOT / "build.ninja").read_text().replace("$\n", "")
    link = re.search(r"^build build/tpgemm: link (.*)$", top, re.M).group(1).split()
    link = [f"{rel}/libtpgemm.a" if x == "build/libtpgemm.a" else x for x in link]
    (work / "build.ninja").write_text(
        "# Written by python3 -m generator tune: the repository's rules and runtime, plus the candidates.\n"
        f"include build.ninja\nsubninja {rel}/generated/build.ninja\n"
        f"build {rel}/tpgemm: link {' '.join(link)}\n")
    cmd = ["ninja", "-C", str(ROOT), "-f", f"{rel}/build.ninja", f"{rel}/tpgemm"] + (["-j", str(jobs)] if jobs else [])
    try:
        r = runner(cmd, capture_output=True, text=True)
    except OSError as e:
        raise SystemExit(f"tune: cannot run ninja ({e}): the tuner builds its candidates with it (pip install ninja)")
    if r.returncode != 0:
        raise SystemExit(f"tune: building the candidates failed:\n{r.stdout[-4000:]}{r.stderr[-2000:]}")
    return ROOT / rel / "tpgemm"


# build/tpgemm's exit status for "not enough Hopper GPUs / no peer access" (docs/CLI.md): the machine, not the
# candidate, failed, so the run is neither recorded nor counted as done.
ENVIRONMENT_EXIT = 3
# The exit status recorded for a candidate whose kernel spills registers or serializes wgmma (never run).
SPILL_EXIT = 6


def _spilling(work: Path, shapes, todo) -> list[tuple]:
    """(shape, candidate, why) for each pending pair whose kernel's ptxas report (the candidate build's) shows a spill
    or serialized wgmma; a kernel without a report is left to run."""
    out, seen = [], {}
    for s, c in todo:
        if c.kernel not in seen:
            report = work / "obj" / "kernels" / f"{c.kernel}.o.ptxas.txt"
            lines = ptxas.problems(report.read_text()) if report.exists() else []
            seen[c.kernel] = f"ptxas: {lines[0]}" if lines else None
        if seen[c.kernel]:
            out.append((s, c, seen[c.kernel]))
    return out


# The exit status a run past --run-timeout-s is recorded with (timeout(1)'s).
RUN_TIMEOUT_EXIT = 124


def profile(runner, exe: Path, s: tune.Shape, c: tune.Candidate, args, check: bool) -> dict:
    """One run of build/tpgemm as a state record (phase 'verify' when checked); a run past args.run_timeout_s is
    stopped and recorded with RUN_TIMEOUT_EXIT."""
    cmd = [str(exe), "--config", f"{tune.config_name(s, c)}_tp{s.tp}", "--m", str(s.m), "--n", str(s.n),
           "--k", str(s.k), "--json", "--check" if check else "--no-check",
           "--iterations", str(args.iterations), "--warmup-iterations", str(args.warmup)]
    try:
        r = runner(cmd, capture_output=True, text=True, timeout=args.run_timeout_s)
        rc, stdout, stderr = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        rc, stdout, stderr = RUN_TIMEOUT_EXIT, "", f"stopped after --run-timeout-s {args.run_timeout_s:g} s"
    except OSError as e:  # the CLI gone or not executable: no candidate's fault, and no run goes
        raise SystemExit(f"tune: cannot run {exe}: {e}")
    try:
        out = json.loads(stdout)
    except ValueError:
        out = {}
    error = out.get("error") or (None if rc == 0 else (stderr or stdout or "").strip()[-500:] or None)
    return {"key": tune.job_key(s, c), "phase": "verify" if check else "profile", "shape": s.key,
            "candidate": c.name, "exit_code": rc, "avg_ms": out.get("avg_ms"),
            "tflops_per_gpu": out.get("tflops_per_gpu"), "check": out.get("check"), "error": error}


class Progress:
    """`[#####.....] 12/48  25%  ETA 1m05s  label` on one stderr line."""

    def __init__(self, total: int, stream=sys.stderr, clock=time.monotonic):
        self.total, self.done, self.stream, self.clock, self.t0 = total, 0, stream, clock, clock()

    def step(self, label: str) -> None:
        self.done += 1
        frac = self.done / max(self.total, 1)
        eta = (self.clock() - self.t0) / self.done * (self.total - self.done)
        bar = "#" * int(frac * 30) + "." * (30 - int(frac * 30))
        self.stream.write(f"\r[{bar}] {self.done}/{self.total} {frac:4.0%} ETA {int(eta) // 60}m{int(eta) % 60:02d}s "
                          f"{label[:40]:40}" + ("\n" if self.done == self.total else ""))
        self.stream.flush()


def _work_dir(args, tag: str) -> Path:
    """The build tree and state: absolute (ninja runs in the repository's root), and a path ninja can spell - the
    one build_tree writes into ninja's files: relative to the repository where the tree is inside it."""
    work = (Path(args.work) if args.work else ROOT / "build" / "tune" / tag).resolve()
    seen = work.relative_to(ROOT) if work.is_relative_to(ROOT) else work
    if re.search(r"[\s$:#]", str(seen)):
        raise SystemExit(f"tune: --work {work}: a path without spaces, '$', ':' or '#' (ninja's build files name "
                         f"{seen})")
    blocked = next((p for p in [work, *work.parents] if p.exists() and not p.is_dir()), None)
    if blocked:
        raise SystemExit(f"tune: --work {work}: {blocked} is a file, not a directory")
    return work


def _tuned_path(args, tag: str) -> Path:
    """Where the tuned file goes (--out, else tuned/<tag>.yaml beside the config), refused before any run when it is
    a directory or sits under a file."""
    out = Path(args.out) if args.out else Path(args.config).parent / "tuned" / f"{tag}.yaml"
    if out.is_dir():
        raise SystemExit(f"tune: --out {out} is a directory: name the tuned file (e.g. {out / (tag + '.yaml')})")
    blocked = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
    if blocked:
        raise SystemExit(f"tune: --out {out}: {blocked} is a file, not a directory")
    return out


def _write_tuned(out: Path, text: str, config: str, stream) -> bool:
    """Writes the tuned file, then loads the config with it: a file that would break the config (a choice for a layer
    that another tuned file also chooses for, say) is put back as it was, with the errors printed, and False
    returned; a file the config does not include is kept, with a warning that nothing builds it."""
    old = out.read_text() if out.is_file() else None
    out.parent.mkdir(parents=True, exist_ok=True)

    def put_back() -> None:
        if old is None:
            out.unlink()
        else:
            _atomic_write(out, old)
    _atomic_write(out, text)
    # the repository's schedules.yaml too when the file lands in its tuned/ (ninja regenerates from that one)
    checked = [config] + ([str(ROOT / "schedules.yaml")] if out.resolve().parent == (ROOT / "tuned").resolve()
                          and Path(config).resolve() != (ROOT / "schedules.yaml").resolve() else [])
    try:
        docs = [models.load(c) for c in checked]
    except ConfigError as e:
        put_back()
        print("\n".join(e.errors) + f"\ntune: with the new {out}, the config has the errors above, so it was not "
              "written" + (" (the earlier one is back)" if old is not None else ""), file=stream)
        return False
    except BaseException:  # an interrupt or a fault of the check itself: the file it could not check goes too
        put_back()
        raise
    doc = docs[0]
    names = {k["name"] for k in yaml.safe_load(text)["kernels"]}
    if not any((t or {}).get("kernel") in names for t in doc.get("tuned") or []):
        print(f"tune: {config} does not include {out}: nothing builds these choices (add it to its include:)",
              file=stream)
    return True


def _update_tuned(out: Path, doc: dict, decided: set, provenance: list[str], gpu: str, config: str,
                  stream) -> bool | None:
    """Brings the tuned file up to date with this run: its choices (doc, for the layers decided) and the earlier
    file's for the layers this run has no new result for (_keep_earlier), written by _write_tuned (False: refused).
    Where nothing is decided, the earlier file stays as it is; where no choice is left (every layer keeps its
    default), it is removed. None: no file written."""
    if not decided:
        if out.exists():
            print(f"tune: no winner, so {out} (an earlier run's) still holds; delete it to go back to the default "
                  "configs", file=stream)
        return None
    doc, header = _keep_earlier(out, doc, decided, gpu, stream)
    if doc["tuned"]:  # an empty file would still be included by schedules.yaml and regenerate nothing useful
        return _write_tuned(out, tune.tuned_text(doc, provenance + header), config, stream)
    if out.exists():
        out.unlink()
        print(f"tune: no tuned choice is left (the defaults hold), so {out} (an earlier run's) is removed",
              file=stream)
    return None


def _keep_earlier(out: Path, doc: dict, decided: set, gpu: str, stream) -> tuple[dict, list[str]]:
    """(doc plus the earlier file's choices that this run has no new result for, tune.keep_earlier; the header line
    that says so), each kept or dropped choice named on stream. None is kept from a file of another GPU than this
    run's, or of one it does not name (written before the tuner named it): its timings say nothing about this one."""
    text = out.read_text() if out.is_file() else ""
    try:
        earlier = yaml.safe_load(text) or {}
        undecided = [t for t in earlier.get("tuned") or [] if models.tuned_key(t) not in decided]
    except (yaml.YAMLError, AttributeError, KeyError, TypeError):  # not a file the tuner wrote: replaced whole
        return doc, []
    was = tune.header_fields(text)
    if undecided and was.get("gpu") != gpu:
        print(f"tune: {out} had choices for {_labels(undecided)}, with no new result in this run: dropped, since "
              f"they were measured on {was.get('gpu') or 'a GPU the file does not name'}, not on {gpu}", file=stream)
        return doc, []
    merged, kept, clashing = tune.keep_earlier(doc, earlier, decided)
    if kept:
        print(f"tune: no new result for {_labels(kept)} in this run: the earlier {out}'s choices for them are kept",
              file=stream)
    if clashing:
        print(f"tune: the earlier choices for {_labels(clashing)} are dropped: another kernel has their kernel's name "
              "now", file=stream)
    # the timed: line above these is this run's; a kept choice was timed as the run that decided it said: the earlier
    # file's own lines, or its kept: line where that file had kept it in turn (unsaid before 2026-12-06)
    decided_by = f"sources {(was.get('sources') or 'unnamed').split()[0]}; timed {was.get('timed') or 'unsaid'}"
    kept_before = kept_provenance(text)
    header = [f"kept: {_labels([t])}, from an earlier run ({kept_before.get(_labels([t]), decided_by)}) with no "
              "result in this one" for t in kept]
    return merged, header


KEPT_LINE = re.compile(r"# kept: (.+), from an earlier run \((.+)\) with no result in this one$")


def kept_provenance(text: str) -> dict[str, str]:
    """label -> "sources ...; timed ..." of each choice a tuned file's kept: lines name (one a line since 2026-12-06;
    several labels to a line before): the run that decided a choice, not the one that kept it."""
    out = {}
    for line in text.splitlines():
        m = KEPT_LINE.match(line)
        for label in (m.group(1).split(", ") if m else ()):
            out[label] = m.group(2)
    return out


def _labels(choices: list[dict]) -> str:
    """Tuned choices as the messages name them: model layer at its M, or M x N x K."""
    return ", ".join(f"{t['model']} {t['layer']} at M = {t.get('tokens')}" if t.get("model") else
                     "x".join(str(t["shape"][f]) for f in "mnk") for t in choices)


def _no_choice(s: tune.Shape, dflt: tune.Candidate | None, state: dict, exe: Path, stream) -> str:
    """Says why layer s gets no tuned choice where its default is why, and returns the report's note: the default has
    no timing to weigh the candidates against, or - loudly - it failed its own check."""
    untimed = tune.default_untimed(s, dflt, state)
    if untimed:
        print(f"tune: {s.label}: no tuned choice: {untimed}", file=stream)
        return "default not timed"
    failed = tune.default_failed_check(s, dflt, state)
    if failed:
        print(f"tune: {s.label}: WARNING: THE DEFAULT {dflt.name} FAILED ITS CHECK ({tune.said(failed)}): the layer "
              "may compute wrong numbers untuned; no tuned choice is written for it (a slower candidate is no fix). "
              f"Again: {exe} --config {tune.config_name(s, dflt)}_tp{s.tp} --m {s.m} --n {s.n} --k {s.k} --check",
              file=stream)
        return "DEFAULT FAILED ITS CHECK"
    return ""


def _atomic_write(path: Path, text: str) -> None:
    """path's new text in one rename: a torn tuned file would stop every later ninja (schedules.yaml includes it)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _failures(shapes, cands, state) -> list[str]:
    """One line per phase and exit status the runs failed with: how many, and the first one's message."""
    by_rc: dict[tuple[str, int], list[dict]] = {}
    for phase in ("profile", "verify"):
        for sh in shapes:
            for c in cands:
                rec = state.get((tune.job_key(sh, c), phase))
                if rec and rec.get("exit_code") not in (0, None):
                    by_rc.setdefault((phase, rec["exit_code"]), []).append(rec)
    return [f"{len(recs)} {'timing' if phase == 'profile' else 'checked'} run(s) exit {rc}, e.g. "
            f"{recs[0]['candidate']}: {recs[0].get('error') or '-'}" for (phase, rc), recs in sorted(by_rc.items())]


def main(argv: list[str], runner=subprocess.run, stream=sys.stderr, clock=time.monotonic) -> int:
    args = _parser().parse_args(argv)
    if args.tokens is not None and args.tokens < 1:
        _parser().error(f"--tokens {args.tokens}: give a positive M")
    if args.jobs is not None and args.jobs < 1:  # ninja takes -j 0 as "no limit" and fails on a negative one
        _parser().error(f"-j {args.jobs}: give a positive number of parallel jobs, or leave -j out for ninja's")
    if args.iterations < 1 or args.warmup < 0 or not args.run_timeout_s > 0:
        _parser().error(f"--iterations {args.iterations} (>= 1), --warmup {args.warmup} (>= 0), --run-timeout-s "
                        f"{args.run_timeout_s:g} (> 0): one of them is out of range")
    try:
        doc = models.load(args.config)
    except ConfigError as e:
        print("\n".join(e.errors) + f"\ntune: {args.config}: {len(e.errors)} error(s)", file=stream)
        return 2
    shapes, tag = _shapes(args, doc)
    _check_shapes(shapes)
    must = [e for e in (_default_entry(doc, s) for s in shapes) if e]
    try:
        space = tune.restrict(tune.knob_space(), args.knob)
    except ValueError as e:
        raise SystemExit(f"tune: {e}")
    routes = {s: _default_route(doc, s) for s in shapes}
    base = _with_default_routes(routes, {f: space.pop(f) for f in ("tile", "stages", "consumers", "cluster")
                                         + tune.ROUTE_KNOBS}, stream)
    cands = tune.enumerate_candidates(shapes[0].dtype, tiles=base["tile"], stages=base["stages"], extra=space,
                                      must=must[:1] + [e for e in must[1:] if e != must[0]],
                                      consumers=base["consumers"], clusters=base["cluster"],
                                      pulls=base["pull_partials"], copy_engine=base["copy_engine_partials"])
    if args.knob and not tune.enumerate_candidates(shapes[0].dtype, tiles=base["tile"], stages=base["stages"],
                                                   extra=space, consumers=base["consumers"], clusters=base["cluster"]):
        # the shipped picks (must) would still run, timed against nothing the knobs asked for
        _parser().error(f"--knob {' --knob '.join(args.knob)}: no legal {shapes[0].dtype} kernel has these values "
                        "together (`python3 -m generator` names the rule a kernel of them breaks)")
    defaults = {s.key: tune.resolve(e)[0] for s, e in zip(shapes, [_default_entry(doc, s) for s in shapes]) if e}
    work, out = _work_dir(args, tag), _tuned_path(args, tag)
    if args.dry_run:
        return dry_run(work, shapes, cands)
    state_path = work / "state.jsonl"
    # the key of the state's records: results of other sources, another compiler, another GPU or timed over other
    # --iterations / --warmup are not reused (tune.state_key)
    smi = tune_env.smi_gpus(runner)
    need = max(s.tp for s in shapes)
    gpu, compiler = tune_env.gpu_identity(tune_env.driver_devices(), smi, need), tune_env.compiler_version(ROOT)
    code = tune.sources_fingerprint(ROOT, compiler)
    sources = tune.state_key(code, gpu, f"iterations {args.iterations} warmup {args.warmup}")
    provenance = [f"gpu: {gpu}", f"sources: {code} (kernels, runtime, generator and nvcc: tune.sources_fingerprint)",
                  f"nvcc: {tune_env.release_line(compiler)}",
                  f"timed: --iterations {args.iterations} --warmup {args.warmup}"]
    lines = state_path.read_text().splitlines() if state_path.exists() else []
    state, every = tune.load_state(lines, sources), tune.load_state(lines)
    if len(state) < len(every):
        others = sorted({r.get("gpu") for r in every.values() if r.get("sources") != sources} - {None, gpu})
        print(f"tune: {state_path} holds results of other kernel or runtime sources, another compiler, another GPU"
              + (f" ({'; '.join(others)}; this run: {gpu})" if others else "")
              + " or other --iterations / --warmup: profiling anew", file=stream)
    todo = tune.pending(shapes, cands, state)
    jobs = sum(tune.applies(s, c) for s in shapes for c in cands)
    print(f"tune: {len(shapes)} GEMMs x {len(cands)} candidates; {len(todo)} to profile "
          f"({jobs - len(todo)} done in {state_path}) on {gpu}", file=stream)
    gpus, who = tune_env.gpus_visible(smi) if todo else (None, "")
    if gpus is not None and gpus < need:
        print(f"tune: the candidates run on {need} GPU(s) and {who} {gpus}: nothing built (run the tuner on the GPU "
              "machine)", file=stream)
        return ENVIRONMENT_EXIT
    if todo and gpus is None:
        print("tune: neither nvidia-smi nor the CUDA driver can say how many GPUs there are: building anyway (the "
              "first run will tell)", file=stream)
    state_path.parent.mkdir(parents=True, exist_ok=True)  # not before: a run refused for want of GPUs makes nothing
    exe = build_tree(work, shapes, cands, runner, args.jobs)

    def record(rec: dict) -> None:
        rec = dict(rec, sources=sources, gpu=gpu)
        prev = state.get((rec["key"], rec["phase"]))
        if rec["exit_code"] == tune.RETRIED_EXIT:  # counted: a fault of the candidate's own stops retrying
            again = prev and prev.get("exit_code") == tune.RETRIED_EXIT
            rec["attempts"] = prev.get("attempts", 1) + 1 if again else 1
        with open(state_path, "a", encoding="utf-8") as fh:  # appended before use: a kill loses nothing
            fh.write(json.dumps(rec) + "\n")
        state[rec["key"], rec["phase"]] = rec

    for s, c, why in _spilling(work, shapes, todo):  # profiled as failed, never run: a spill makes a kernel slow
        record({"key": tune.job_key(s, c), "phase": "profile", "shape": s.key, "candidate": c.name,
                "exit_code": SPILL_EXIT, "avg_ms": None, "tflops_per_gpu": None, "check": None, "error": why})
    todo = tune.pending(shapes, cands, state)

    def machine_failed(rec: dict) -> bool:
        """True (and says so) when the run says nothing about the candidate: keep it pending."""
        if rec["exit_code"] != ENVIRONMENT_EXIT:
            return False
        print(f"\ntune: stopped, nothing recorded for this run: {rec['error'] or 'too few Hopper GPUs'}",
              file=stream)
        return True

    bar = Progress(len(todo), stream, clock)
    for s, c in todo:
        rec = profile(runner, exe, s, c, args, check=False)
        if machine_failed(rec):
            return ENVIRONMENT_EXIT
        record(rec)
        bar.step(f"{s.label} {c.name}")
    winners, kept_default, rows = {}, set(), []
    for s in shapes:
        by_kernel = {c.kernel: c for c in cands if c.route == routes[s]}  # the default's kernel on its route
        dflt = by_kernel.get(defaults.get(s.key))
        while True:
            win, verify = tune.pick_winner(s, cands, state, dflt)
            if not verify:
                break
            rec = profile(runner, exe, s, verify[0], args, check=True)
            if machine_failed(rec):
                return ENVIRONMENT_EXIT
            record(rec)
            if rec["exit_code"] == tune.RETRIED_EXIT:  # not the candidate's verdict, maybe: the next run checks again
                # and no more checks now (out of memory beside another process fails them all), but a candidate
                # that passed its check in an earlier run still stands, the best of them by merit
                win = tune.checked_winner(s, cands, state, dflt, frozenset([verify[0].name]))
                print(f"\ntune: {s.label}: checking {verify[0].name} failed ({rec['error'] or 'exit 5'}); the next "
                      "run checks it again; for now " + (f"{win.name}, checked before" if win else "no winner"),
                      file=stream)
                break
        if win is not None and win == dflt:  # no choice: pinning the default would change other Ms' picks
            kept_default.add(s.key)
        elif win:
            winners[s.key] = win
        note = "default kept" if s.key in kept_default else "" if win else _no_choice(s, dflt, state, exe, stream)
        ms = lambda c: (state.get((tune.job_key(s, c), "profile")) or {}).get("avg_ms") if c else None
        tf = (state.get((tune.job_key(s, win), "profile")) or {}).get("tflops_per_gpu") if win else None
        rows.append(tune_report.Row(s.label, f"{s.m} x {s.n} x {s.k}", s.schedule, dflt.name if dflt else "",
                                    ms(dflt), win.name if s.key in winners else "", ms(win), tf,
                                    len(tune.ranked(s, cands, state)), note))
    decided = {tune.choice_key(s) for s in shapes if s.key in winners or s.key in kept_default}
    written = _update_tuned(out, tune.tuned_doc(shapes, winners, re.sub(r"[^A-Za-z0-9_]", "_", tag)), decided,
                            provenance, gpu, args.config, stream)
    failures = _failures(shapes, cands, state)
    for line in failures:
        print(f"tune: {line}", file=stream)
    if failures:
        print(f"tune: failed runs count as done (exit {tune.RETRIED_EXIT}, a runtime failure, runs again in the next "
              f"{tune.RETRIES - 1} runs); all run again once the kernel or runtime sources change, or delete "
              f"{state_path}", file=stream)
    title = f"tune {tag} ({shapes[0].dtype})"
    (work / "report.md").write_text(tune_report.markdown(title, rows, failures))
    png = tune_report.plot(title, rows, work / "report.png")
    kept = f", {len(kept_default)} kept the default" if kept_default else ""
    print(f"tune: {len(winners)}/{len(shapes)} winners{kept} -> {out if written else '(no tuned file written)'}; "
          f"report {work / 'report.md'}"
          + (" and report.png" if png else " (no PNG: matplotlib is not installed)"), file=stream)
    settled = written is not False and len(winners) + len(kept_default) == len(shapes)
    return 0 if settled else 1
