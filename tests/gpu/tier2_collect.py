"""Helper of tests/gpu/run_tier2.sh and run_sanitizers.sh: appends one run's record to a JSON-lines file, and
writes the final tier2.json (sanitizers.json) plus a summary table.

    python3 tests/gpu/tier2_collect.py add RECORDS GROUP LABEL RC SECONDS STDOUT STDERR [SANITIZER_LOG]
                                           [--expect clean|reported|coverage] [--kind json|plain]
                                           [--stderr failed|always] -- CMD...
    python3 tests/gpu/tier2_collect.py finish RECORDS OUT_JSON

--kind json (default): build/tpgemm --json output, judged by exit status, reference check and determinism;
plain: the exit status alone. --expect (with a sanitizer log): clean (default) - the tool must find nothing;
reported - it must find something (a canary's broken form); coverage - recorded either way, as "coverage".
--stderr: the record keeps the tail of stderr for a failed run (default) or always (the trace group: its timeline
summary is on stderr).
"""
import datetime
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path


def tail(path, n=2000):
    try:
        return Path(path).read_text(errors="replace")[-n:]
    except OSError:
        return ""


def sanitizer_verdict(log):
    """(clean, what it found) from a compute-sanitizer log: racecheck ends with "RACECHECK SUMMARY: N hazards
    displayed (E errors, W warnings)" - judged by E and W, since --print-limit caps N -, memcheck / synccheck /
    initcheck with "ERROR SUMMARY: N errors"; no summary = not clean."""
    m = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", log)
    if m:
        return m.group(2) == "0" and m.group(3) == "0", m.group(0)
    m = re.search(r"ERROR SUMMARY: (\d+) errors?", log)
    if m:
        return m.group(1) == "0", m.group(0)
    return False, "no sanitizer summary (crash, timeout or tool failure)"


def json_result(out):
    """(result, why not) from a build/tpgemm --json stdout: its last line is one JSON object."""
    text = tail(out, 1 << 20).strip()
    if not text:
        return None, "no JSON on stdout (crash or early exit?)"
    try:
        return json.loads(text.splitlines()[-1]), None
    except json.JSONDecodeError as e:
        return None, f"stdout is not one JSON object: {e}"


def run_verdict(rc, result, parse_error, err):
    """(passed, reason) of a build/tpgemm --json run: exit 0, reference check passed, bitwise deterministic."""
    if rc == 0 and result is not None and result.get("check") == "passed" and result.get("deterministic") is True:
        return True, ""
    last_err = (tail(err, 600).strip().splitlines() or [""])[-1]
    if rc == 124:
        return False, "timed out (killed by `timeout`)"
    if rc != 0 and (result is None or "check" not in result or result.get("error") is None):
        return False, f"exit code {rc}: {last_err}"
    if result is None:
        return False, parse_error or "no result"
    if result.get("error"):
        return False, result["error"]
    if result.get("check") != "passed":
        return False, f"check {result.get('check')}: max_error {result.get('max_error')} > eps {result.get('eps')}, " \
                      f"nonfinite {result.get('nonfinite')}"
    if result.get("deterministic") is not True:
        return False, "not bitwise identical over 3 runs"
    return False, f"exit code {rc}"


def add(argv):
    sep = argv.index("--")
    head, cmd = argv[:sep], argv[sep + 1:]
    opts = {"--expect": "clean", "--kind": "json", "--stderr": "failed"}
    while len(head) >= 2 and head[-2] in opts:
        opts[head[-2]] = head[-1]
        head = head[:-2]
    expect, kind = opts["--expect"], opts["--kind"]
    if opts["--stderr"] not in ("failed", "always"):
        raise SystemExit(f"tier2_collect.py: --stderr failed|always, got {opts['--stderr']!r}")
    records, group, label, rc, seconds, out, err = head[:7]
    san_log = head[7] if len(head) > 7 else ""
    rc = int(rc)
    result, parse_error = json_result(out) if kind == "json" else (None, None)
    if kind == "json":
        passed, reason = run_verdict(rc, result, parse_error, err)
    else:  # plain: the program's exit status alone (99 is the sanitizer's own, judged below; it also stands for a
        # program that failed under the tool - acceptable where the tool must report something anyway)
        passed = rc in (0, 99) if san_log else rc == 0
        last_err = (tail(err, 600).strip().splitlines() or [""])[-1]
        reason = "" if passed else ("timed out (killed by `timeout`)" if rc == 124 else
                                    f"exit code {rc}" + (f": {last_err}" if last_err else ""))
    coverage = None
    if san_log:
        clean, found = sanitizer_verdict(tail(san_log, 20000))
        if expect == "clean" and not clean:
            passed, reason = False, f"compute-sanitizer: {found} (see sanitizer_log)"
        elif expect == "reported" and (clean or found.startswith("no sanitizer summary")):
            passed, reason = False, f"compute-sanitizer missed what this run must report: {found}"
        elif expect == "coverage":
            coverage = "not reported" if clean or found.startswith("no sanitizer summary") else "reported"
        elif expect == "clean" and passed and rc == 99:  # a clean summary, yet the sanitizer's error exit status
            passed, reason = False, "exit code 99 (the sanitizer's) with a clean summary"
    rec = {
        "group": group, "label": label, "command": shlex.join(cmd), "exit_code": rc,
        "seconds": round(float(seconds), 2), "passed": passed, "reason": reason or None,
        "result": result, "stderr_tail": tail(err, 1500) if not passed or opts["--stderr"] == "always" else "",
    }
    if san_log:
        rec["expect"] = expect
        rec["sanitizer_log"] = tail(san_log, 3000) if not passed or expect != "clean" else tail(san_log, 300)
    if coverage:
        rec["coverage"] = coverage
    with open(records, "a") as f:
        f.write(json.dumps(rec) + "\n")
    status = "PASS" if passed else "FAIL"
    r = result or {}
    print(f"{status} {group:8s} {label:48s} rc={rc} {float(seconds):6.1f}s "
          f"err={r.get('max_error')} det={r.get('deterministic')} tflops={r.get('tflops_per_gpu')}"
          + (f" coverage: {coverage}" if coverage else "") + (f"  <- {reason}" if reason else ""), flush=True)


def gpu_info():
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=20)
        return [line.strip() for line in q.stdout.splitlines() if line.strip()]
    except (OSError, subprocess.SubprocessError):
        return []


def finish(argv):
    records, out_json = argv[:2]
    recs = [json.loads(line) for line in Path(records).read_text().splitlines() if line.strip()]
    doc = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpus": gpu_info(),
        "passed": sum(r["passed"] for r in recs),
        "failed": sum(not r["passed"] for r in recs),
        "runs": recs,
    }
    Path(out_json).write_text(json.dumps(doc, indent=1) + "\n")
    groups = {}
    for r in recs:
        g = groups.setdefault(r["group"], [0, 0, 0.0])
        g[0 if r["passed"] else 1] += 1
        g[2] += r["seconds"]
    print()
    print(f"{'group':10s} {'passed':>7s} {'failed':>7s} {'seconds':>8s}")
    for name, (p, f, s) in groups.items():
        print(f"{name:10s} {p:7d} {f:7d} {s:8.1f}")
    print(f"{'total':10s} {doc['passed']:7d} {doc['failed']:7d} {sum(r['seconds'] for r in recs):8.1f}")
    for r in recs:
        if not r["passed"]:
            print(f"FAILED: {r['command']}\n        {r['reason']}")
    print(f"wrote {out_json}")
    return 1 if doc["failed"] or not recs else 0


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("add", "finish"):
        sys.exit(__doc__)
    if sys.argv[1] == "add":
        add(sys.argv[2:])
    else:
        sys.exit(finish(sys.argv[2:]))
