"""Helper of tests/gpu/run_tier2.sh: appends one run's record to a JSON-lines file, and writes the final
tier2.json plus a summary table.

    python3 tests/gpu/tier2_collect.py add RECORDS GROUP LABEL RC SECONDS STDOUT STDERR [SANITIZER_LOG] -- CMD...
    python3 tests/gpu/tier2_collect.py finish RECORDS OUT_JSON
"""
import datetime
import json
import shlex
import subprocess
import sys
from pathlib import Path


def tail(path, n=2000):
    try:
        return Path(path).read_text(errors="replace")[-n:]
    except OSError:
        return ""


def add(argv):
    sep = argv.index("--")
    head, cmd = argv[:sep], argv[sep + 1:]
    records, group, label, rc, seconds, out, err = head[:7]
    san_log = head[7] if len(head) > 7 else ""
    rc = int(rc)
    result, parse_error = None, None
    text = tail(out, 1 << 20).strip()
    if text:
        try:
            result = json.loads(text.splitlines()[-1])
        except json.JSONDecodeError as e:
            parse_error = f"stdout is not one JSON object: {e}"
    else:
        parse_error = "no JSON on stdout (crash or early exit?)"
    passed = rc == 0 and result is not None and result.get("check") == "passed" and result.get("deterministic") is True
    reason = ""
    if san_log:
        log = tail(san_log, 20000)
        clean = "ERROR SUMMARY: 0 errors" in log
        passed = passed and clean
        if not clean:
            reason = "compute-sanitizer reported errors (see sanitizer_log)"
    if not passed and not reason:
        last_err = (tail(err, 600).strip().splitlines() or [""])[-1]
        if rc == 124:
            reason = "timed out (killed by `timeout`)"
        elif rc != 0 and (result is None or "check" not in result or result.get("error") is None):
            reason = f"exit code {rc}: {last_err}"
        elif result is None:
            reason = parse_error or "no result"
        elif result.get("error"):
            reason = result["error"]
        elif result.get("check") != "passed":
            reason = f"check {result.get('check')}: max_error {result.get('max_error')} > eps {result.get('eps')}, " \
                     f"nonfinite {result.get('nonfinite')}"
        elif result.get("deterministic") is not True:
            reason = "not bitwise identical over 3 runs"
        else:
            reason = f"exit code {rc}"
    rec = {
        "group": group, "label": label, "command": shlex.join(cmd), "exit_code": rc,
        "seconds": round(float(seconds), 2), "passed": passed, "reason": reason or None,
        "result": result, "stderr_tail": tail(err, 1500) if not passed else "",
    }
    if san_log:
        rec["sanitizer_log"] = tail(san_log, 3000) if not passed else tail(san_log, 300)
    with open(records, "a") as f:
        f.write(json.dumps(rec) + "\n")
    status = "PASS" if passed else "FAIL"
    r = result or {}
    print(f"{status} {group:8s} {label:48s} rc={rc} {float(seconds):6.1f}s "
          f"err={r.get('max_error')} det={r.get('deterministic')} tflops={r.get('tflops_per_gpu')}"
          + (f"  <- {reason}" if reason else ""), flush=True)


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
