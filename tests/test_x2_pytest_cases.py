"""The 2-GPU session's GPU pytest selections (bench/x2/pytest_cases.sh), collected here on the CPU as call 1 passes
them: a -k expression pytest cannot parse (a newline in it, say) ends both steps of the call at once, before any
case runs, and nothing else would show it before the scarce 2-GPU call."""
import subprocess
import sys

from tests.conftest import ROOT

CASES = ROOT / "bench" / "x2" / "pytest_cases.sh"


def selections() -> dict:
    """ACROSS and TIMEOUT_CASES as bash leaves them after sourcing the file."""
    out = subprocess.run(["bash", "-c", f'source "{CASES}" && printf "%s\\n%s\\n" "$ACROSS" "$TIMEOUT_CASES"'],
                         capture_output=True, text=True, check=True)
    across, timeout_cases = out.stdout.rstrip("\n").split("\n")
    return {"ACROSS": across, "TIMEOUT_CASES": timeout_cases}


def collected(expression: str) -> list[str]:
    """The test ids `pytest -k expression tests/test_gpu.py` selects (fails on an expression pytest refuses)."""
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          "tests/test_gpu.py", "-k", expression], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    return [line for line in out.stdout.splitlines() if line.startswith("tests/test_gpu.py::")]


def test_call_one_selections_parse_and_split_the_across_gpu_cases():
    s = selections()
    assert "\n" not in s["ACROSS"] + s["TIMEOUT_CASES"]
    first = collected(f"({s['ACROSS']}) and ({s['TIMEOUT_CASES']})")  # call 1's first pytest step
    rest = collected(f"({s['ACROSS']}) and not ({s['TIMEOUT_CASES']})")  # its last
    across = collected(s["ACROSS"])
    assert sorted(first + rest) == sorted(across) and not set(first) & set(rest)
    assert not [t for t in across if "shared" in t]  # the one-GPU sessions run those
    # issue 4's timeout point and the call after a late peer, across GPUs, come first
    assert "tests/test_gpu.py::test_missing_peer_times_out_then_fresh_context_works" in first
    assert "tests/test_gpu.py::test_a_call_after_a_late_one_waits_for_its_own_copies[across-gpus]" in first
    assert len(rest) > len(first) > 3


def test_call_one_sources_the_selections():
    text = (ROOT / "bench" / "x2" / "call1_acceptance.sh").read_text()
    assert 'source "$(dirname "$0")/pytest_cases.sh"' in text
    assert text.count('-k "($ACROSS) and ($TIMEOUT_CASES)"') == 1
    assert text.count('-k "($ACROSS) and not ($TIMEOUT_CASES)"') == 1
    assert text.count("timeout -s INT") == 2  # a cut step still prints -rA's summary
