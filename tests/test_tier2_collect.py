"""tests/gpu/tier2_collect.py, the recorder of every GPU tier-2 and sanitizer run: how a run is judged from its exit
status, its build/tpgemm --json line and its compute-sanitizer log (the summaries of the four tools, as the device's
compute-sanitizer prints them: bench/results/experiments/sanitizers_0809Z/), and the canary's inverted verdicts."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLLECT = ROOT / "tests" / "gpu" / "tier2_collect.py"

GOOD = {"check": "passed", "deterministic": True, "max_error": 0.004}
RACE_CLEAN = "========= COMPUTE-SANITIZER\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
RACE_HAZARD = ("========= Error: Race reported between Write access at canary+0x90\n"
               "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n")
ERRORS_CLEAN = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"
RACE_UNPRINTED = "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 2 warnings)\n"  # --print-limit 0
ERRORS_FOUND = "========= Barrier error detected. Divergent thread(s) in block\n========= ERROR SUMMARY: 1 error\n"


def record(tmp_path, rc=0, stdout="", log=None, expect=None, kind=None):
    """Runs `add` on files holding stdout / the sanitizer log and returns the one record it appended."""
    out, err, san, recs = (tmp_path / n for n in ("run.out", "run.err", "run.san", "recs.jsonl"))
    out.write_text(stdout)
    err.write_text("")
    args = [sys.executable, str(COLLECT), "add", str(recs), "g", "label", str(rc), "1.5", str(out), str(err)]
    if log is not None:
        san.write_text(log)
        args.append(str(san))
    if expect:
        args += ["--expect", expect]
    if kind:
        args += ["--kind", kind]
    subprocess.run(args + ["--", "build/tpgemm", "--json"], check=True, capture_output=True, text=True)
    lines = recs.read_text().splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


def test_a_tpgemm_run_passes_on_a_passed_deterministic_check(tmp_path):
    assert record(tmp_path, stdout=json.dumps(GOOD))["passed"]
    (tmp_path / "b").mkdir()
    bad = record(tmp_path / "b", stdout=json.dumps(dict(GOOD, deterministic=False)))
    assert not bad["passed"] and "bitwise" in bad["reason"]


def test_a_failed_check_and_missing_json_are_failures(tmp_path):
    r = record(tmp_path, stdout=json.dumps(dict(GOOD, check="failed", max_error=3.0, eps=0.02)))
    assert not r["passed"] and "max_error 3.0" in r["reason"]
    (tmp_path / "b").mkdir()
    r = record(tmp_path / "b", rc=1, stdout="")
    assert not r["passed"] and "exit code 1" in r["reason"]


def test_each_tools_summary_is_read(tmp_path):
    for i, (log, clean) in enumerate([(RACE_CLEAN, True), (RACE_HAZARD, False), (RACE_UNPRINTED, False),
                                      (ERRORS_CLEAN, True),
                                      (ERRORS_FOUND, False), ("========= COMPUTE-SANITIZER\n", False)]):
        d = tmp_path / str(i)
        d.mkdir()
        r = record(d, rc=0 if clean else 99, stdout=json.dumps(GOOD), log=log)
        assert r["passed"] is clean, (log, r)
        if not clean:
            assert "compute-sanitizer" in r["reason"]


def test_a_canarys_broken_form_must_be_reported(tmp_path):
    dirs = [tmp_path / n for n in "abcde"]
    for d in dirs:
        d.mkdir()
    found = record(dirs[0], rc=99, log=RACE_HAZARD, expect="reported", kind="plain")
    assert found["passed"] and found["expect"] == "reported"
    missed = record(dirs[1], rc=0, log=RACE_CLEAN, expect="reported", kind="plain")
    assert not missed["passed"] and "missed" in missed["reason"]
    crashed = record(dirs[2], rc=1, log=RACE_HAZARD, expect="reported", kind="plain")
    assert not crashed["passed"] and "exit code 1" in crashed["reason"]
    ok_form = record(dirs[3], rc=0, log=RACE_CLEAN, expect="clean", kind="plain")
    assert ok_form["passed"]
    no_summary = record(dirs[4], rc=99, log="========= COMPUTE-SANITIZER\n", expect="reported", kind="plain")
    assert not no_summary["passed"] and "no sanitizer summary" in no_summary["reason"]


def test_coverage_is_recorded_never_failed(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    seen = record(tmp_path / "a", rc=99, log=RACE_HAZARD, expect="coverage", kind="plain")
    unseen = record(tmp_path / "b", rc=0, log=RACE_CLEAN, expect="coverage", kind="plain")
    assert seen["passed"] and seen["coverage"] == "reported"
    assert unseen["passed"] and unseen["coverage"] == "not reported"


def test_finish_counts_and_fails_on_any_failure(tmp_path):
    recs = tmp_path / "recs.jsonl"
    rows = [{"group": "tp1", "label": "a", "passed": True, "seconds": 1.0, "command": "x", "reason": None},
            {"group": "tp1", "label": "b", "passed": False, "seconds": 2.0, "command": "y", "reason": "why"}]
    recs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "s.json"
    p = subprocess.run([sys.executable, str(COLLECT), "finish", str(recs), str(out)], capture_output=True, text=True)
    doc = json.loads(out.read_text())
    assert p.returncode == 1 and doc["passed"] == 1 and doc["failed"] == 1
    assert "FAILED: y" in p.stdout
    recs.write_text(json.dumps(rows[0]) + "\n")
    assert subprocess.run([sys.executable, str(COLLECT), "finish", str(recs), str(out)],
                          capture_output=True).returncode == 0
    recs.write_text("\n")  # a run that recorded nothing (its script failed before the first run) is no pass
    assert subprocess.run([sys.executable, str(COLLECT), "finish", str(recs), str(out)],
                          capture_output=True).returncode == 1


def test_a_quick_tier2_run_keeps_off_the_full_runs_record_name(tmp_path):
    """run_tier2.sh --quick writes tier2_quick.json (what --commit-results copies to bench/results/), never the full
    run's tier2.json; a run without --quick keeps tier2.json. A fake CLI that prints a passing line stands in."""
    fake = tmp_path / "fake_tpgemm"
    fake.write_text("#!/bin/sh\necho '" + json.dumps(GOOD) + "'\n")
    fake.chmod(0o755)
    script = ROOT / "tests" / "gpu" / "run_tier2.sh"
    for quick, name in ((["--quick"], "tier2_quick.json"), ([], "tier2.json")):
        out = tmp_path / ("quick" if quick else "full")
        env = {"PATH": "/usr/bin:/bin", "OUT": str(out), "TPGEMM": str(fake), "TIER2_GROUPS": "gathered"}
        res = subprocess.run(["bash", str(script), *quick], env=env, capture_output=True, text=True, timeout=120)
        # exit status 1 here: the fake lists no configs and this machine has no compute-sanitizer
        assert res.returncode in (0, 1) and "wrote " + str(out / name) in res.stdout, res.stdout[-2000:]
        assert sorted(p.name for p in out.glob("tier2*.json")) == [name], list(out.iterdir())


def test_a_list_without_its_columns_is_a_failed_record(tmp_path):
    """Several groups read `--list` by column: a CLI whose --list fails or moved a column would leave them running
    nothing, which reads as no failure - run_tier2.sh records it as a failure. Fake CLIs stand in: one whose --list
    prints the real header, one whose --list prints something else."""
    header = "config                     schedule                             tp  dtype tile         stages kernel   x"
    script = ROOT / "tests" / "gpu" / "run_tier2.sh"
    groups = {}
    for name, listing in (("good", header), ("moved", "config tp schedule dtype tile stages kernel")):
        fake = tmp_path / f"fake_{name}"
        fake.write_text(f"#!/bin/sh\nif [ \"$1\" = --list ]; then echo '{listing}'; exit 0; fi\n"
                        f"echo '{json.dumps(GOOD)}'\n")
        fake.chmod(0o755)
        out = tmp_path / name
        env = {"PATH": "/usr/bin:/bin", "OUT": str(out), "TPGEMM": str(fake), "TIER2_GROUPS": "gathered"}
        subprocess.run(["bash", str(script), "--quick"], env=env, capture_output=True, text=True, timeout=120)
        recs = [json.loads(line) for line in (out / "tier2.records.jsonl").read_text().splitlines() if line.strip()]
        groups[name] = {r["group"]: r["passed"] for r in recs}
    assert "list" not in groups["good"] and groups["good"].get("gathered") is True, groups
    assert groups["moved"]["list"] is False, groups


def test_stderr_is_kept_for_a_failed_run_or_always_when_asked(tmp_path):
    """A passing run's stderr is dropped unless --stderr always (the trace group keeps its timeline summary)."""
    def run(d, *extra, stdout=json.dumps(GOOD)):
        d.mkdir()
        out, err, recs = d / "run.out", d / "run.err", d / "recs.jsonl"
        out.write_text(stdout)
        err.write_text("rank 0 (cuda 0): kernel 0.0 .. 10.0 us\ncheck: the timeline is whole\n")
        subprocess.run([sys.executable, str(COLLECT), "add", str(recs), "trace", "l", "0", "1.0", str(out), str(err),
                        *extra, "--", "tests/gpu/trace_case.sh"], check=True, capture_output=True, text=True)
        return json.loads(recs.read_text().splitlines()[0])
    assert run(tmp_path / "a")["stderr_tail"] == ""
    kept = run(tmp_path / "b", "--stderr", "always")
    assert kept["passed"] and "check: the timeline is whole" in kept["stderr_tail"]
    assert "check: the timeline is whole" in run(tmp_path / "c", stdout="")["stderr_tail"]  # failed: kept anyway
    bad = subprocess.run([sys.executable, str(COLLECT), "add", str(tmp_path / "r.jsonl"), "g", "l", "0", "1", "x", "y",
                          "--stderr", "sometimes", "--", "c"], capture_output=True, text=True)
    assert bad.returncode != 0 and "--stderr failed|always" in bad.stderr
