"""bench/x2/adopt.sh, the step after each x2 call: run in a copy of the tree on a stand-in reply folder (records.tgz
with a provenance.txt as bench/x2/common.sh writes it, the files a call copies beside it)."""
import json
import shutil
import subprocess
import tarfile

from tests.conftest import ROOT
from tests.test_x2_calls import tree_copy

DATE = "Sun Dec  6 13:07:41 UTC 2026"  # `date -u` as the device prints it; the folder takes 1307Z


def tree_hash(repo):
    return subprocess.run(["bash", "bench/x2/tree_hash.sh"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.split()[1]


def reply(at, repo, script="bench/x2/call1_acceptance.sh", tree=None, tp2_speed=None, tp2_text=None, tier2=False):
    """A reply's folder: records.tgz (records/provenance.txt, a log), summary.txt, tp2.json (the committed one without
    its copy-engine twins, so that the rule reads "missing", every tpgemm figure set to tp2_speed where given; or
    tp2_text as it is), tp2.png, and a tier2.json where asked."""
    records = at / "stage" / "records"
    records.mkdir(parents=True)
    (records / "provenance.txt").write_text(f"{script}\n{DATE}\ntree {tree or tree_hash(repo)} (294 files)\n"
                                            "GPU 0: stand-in\nGPU 1: stand-in\n")
    (records / "tp.log").write_text("a log\n")
    at.mkdir(exist_ok=True)
    with tarfile.open(at / "records.tgz", "w:gz") as tar:
        tar.add(records, arcname="records")
    shutil.rmtree(at / "stage")
    (at / "summary.txt").write_text("build: exit 0, at 25 s\n")
    records_json = json.loads((ROOT / "bench/results/tp2.json").read_text())
    for r in records_json:
        r.pop("alt", None)
        if tp2_speed is not None:
            r["tpgemm_tflops"] = tp2_speed
    (at / "tp2.json").write_text(tp2_text if tp2_text is not None else json.dumps(records_json))
    shutil.copy2(ROOT / "bench/results/tp2.png", at / "tp2.png")
    if tier2:
        (at / "tier2.json").write_text('{"stand-in": "' + script + '"}')
    return at


def state(repo):
    """What adopting may change: the published files and the experiments' folders."""
    return ([(repo / f).read_bytes() for f in ("bench/results/tp2.json", "bench/results/tp2.png",
                                               "bench/results/tier2.json", "BENCHMARKS.md")],
            sorted(p.name for p in (repo / "bench/results/experiments").iterdir()))


def adopt(repo, *args):
    return subprocess.run(["bash", "bench/x2/adopt.sh", *map(str, args)], cwd=repo, capture_output=True, text=True,
                          timeout=120)


def test_a_call_is_adopted_and_published(tmp_path):
    repo = tree_copy(tmp_path / "repo")
    src = reply(tmp_path / "reply", repo, tp2_speed=777.0)
    run = adopt(repo, src, "--publish")
    assert run.returncode == 0, run.stderr
    dest = repo / "bench/results/experiments/x2_1307Z_call1_acceptance"
    assert sorted(p.name for p in dest.iterdir()) == ["records.tgz", "summary.txt", "tp2.json", "tp2.png",
                                                      "verdict.txt"]
    assert "rule: keep the push" in (dest / "verdict.txt").read_text()
    assert json.loads((repo / "bench/results/tp2.json").read_text())[0]["tpgemm_tflops"] == 777.0
    table = (repo / "BENCHMARKS.md").read_text().split("<!-- tp2:begin -->")[1].split("<!-- tp2:end -->")[0]
    assert "| 777 |" in table  # report_tp.py rewrote the table from the published file
    assert "hand-kept" in run.stdout


def test_without_publish_only_the_records_move(tmp_path):
    repo = tree_copy(tmp_path / "repo")
    before = (repo / "bench/results/tp2.json").read_bytes(), (repo / "BENCHMARKS.md").read_bytes()
    run = adopt(repo, reply(tmp_path / "reply", repo, tp2_speed=777.0))
    assert run.returncode == 0, run.stderr
    assert (repo / "bench/results/experiments/x2_1307Z_call1_acceptance/verdict.txt").is_file()
    assert ((repo / "bench/results/tp2.json").read_bytes(), (repo / "BENCHMARKS.md").read_bytes()) == before


def test_call_4_is_read_as_switched(tmp_path):
    repo = tree_copy(tmp_path / "repo")
    run = adopt(repo, reply(tmp_path / "reply", repo, script="bench/x2/call4_switch.sh"))
    assert run.returncode == 0, run.stderr
    verdict = (repo / "bench/results/experiments/x2_1307Z_call4_switch/verdict.txt").read_text()
    assert "rule: keep the switch" in verdict and "keep the push" not in verdict


def test_records_of_another_tree_are_refused_and_nothing_is_written(tmp_path):
    repo = tree_copy(tmp_path / "repo")
    before = state(repo)
    run = adopt(repo, reply(tmp_path / "reply", repo, tree="0123456789abcdef", tp2_speed=777.0), "--publish")
    assert run.returncode == 1
    assert "adopt from the commit that ran" in run.stderr
    assert state(repo) == before


def test_a_tp2_file_the_tools_cannot_read_is_refused_and_nothing_is_written(tmp_path):
    repo = tree_copy(tmp_path / "repo")
    before = state(repo)
    cut = (ROOT / "bench/results/tp2.json").read_text()[:300]  # a file cut short
    for text, why in ((cut, "verdict.py could not read"), ("[]", "verdict.py could not read")):
        src = reply(tmp_path / f"reply{len(text)}", repo, tp2_text=text)
        run = adopt(repo, src, "--publish")
        assert run.returncode == 1 and why in run.stderr, run.stderr
        assert state(repo) == before
    # a file both read, into a BENCHMARKS.md whose tp2 section lost its end marker (hand-edited)
    bench = repo / "BENCHMARKS.md"
    bench.write_text(bench.read_text().replace("<!-- tp2:end -->", ""))
    before = state(repo)
    run = adopt(repo, reply(tmp_path / "reply_markers", repo), "--publish")
    assert run.returncode == 1 and "report_tp.py could not render" in run.stderr, run.stderr
    assert state(repo) == before


def test_tier2_is_published_from_call_2_only_and_a_relative_folder_works(tmp_path):
    repo = tree_copy(tmp_path / "repo")
    call4 = reply(tmp_path / "reply4", repo, script="bench/x2/call4_switch.sh", tier2=True)
    run = adopt(repo, call4, "--publish")
    assert run.returncode == 0, run.stderr
    assert "stand-in" not in (repo / "bench/results/tier2.json").read_text()
    assert "not published: call4_switch's tier2.json" in run.stdout
    call2 = reply(tmp_path / "reply2", repo, script="bench/x2/call2_tier2.sh", tier2=True)
    (call2 / "tp2.json").unlink()
    (call2 / "tp2.png").unlink()
    run = subprocess.run(["bash", str(repo / "bench/x2/adopt.sh"), "reply2", "--publish"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "call2_tier2.sh" in (repo / "bench/results/tier2.json").read_text()
    dest = repo / "bench/results/experiments/x2_1307Z_call2_tier2"
    assert sorted(p.name for p in dest.iterdir()) == ["records.tgz", "summary.txt", "tier2.json"]


def test_a_second_adoption_of_the_same_call_is_refused(tmp_path):
    repo = tree_copy(tmp_path / "repo")
    src = reply(tmp_path / "reply", repo)
    assert adopt(repo, src).returncode == 0
    again = adopt(repo, src)
    assert again.returncode == 1 and "exists" in again.stderr


def test_a_folder_without_records_and_bad_usage(tmp_path):
    repo = tree_copy(tmp_path / "repo")
    (tmp_path / "empty").mkdir()
    missing = adopt(repo, tmp_path / "empty")
    assert missing.returncode == 1 and "records.tgz not found" in missing.stderr
    assert adopt(repo).returncode == 2
    assert adopt(repo, tmp_path / "empty", "--publsh").returncode == 2
