"""`python3 -m generator vendor`: the vendored tree builds outside the repository with make, nvcc and cc
alone, and a C program links it (by hand and through pkg-config) and calls the public API."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator import models, plan, vendor

ROOT = Path(__file__).resolve().parents[1]
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)

PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include "tpgemm.h"

int main(void) {
    int n = tpg_config_count();
    tpg_config_info info;
    if (n <= 0 || tpg_config_get(0, &info) != TPG_OK) return 10;
    printf("configs: %d, first: %s\n", n, info.name);
    if (strcmp(tpg_status_string(TPG_ERR_NO_DEVICE), "") == 0) return 11;
    tpg_dispatch_entry e;
    if (tpg_dispatch_find("llama3-70b", "qkv", 16384, 0, 0, TPG_DTYPE_BF16, NULL, 4, &e) != TPG_OK) return 12;
    if (tpg_config_get(e.config, &info) != TPG_OK) return 13;
    printf("llama3-70b qkv tp4: %lld x %lld x %lld -> %s\n", (long long)e.m, (long long)e.n, (long long)e.k,
           info.name);
    int pick;
    if (tpg_config_pick("ReduceScatter1D_TilingA_RotatingC", 2, TPG_DTYPE_BF16, 16384, 8192, 28672, &pick) != TPG_OK ||
        tpg_config_get(pick, &info) != TPG_OK)
        return 15;
    printf("pick rs tp2 k 28672: %s\n", info.name);
    tpg_ctx_config cfg = TPG_CTX_CONFIG_INIT;
    cfg.tp = 2;
    tpg_ctx *ctx = (tpg_ctx *)&cfg; /* must come back NULL */
    tpg_status st = tpg_ctx_create(&cfg, &ctx);
    printf("tpg_ctx_create: %s (%s)\n", tpg_status_string(st), tpg_last_error(NULL));
    return st == TPG_ERR_NO_DEVICE && ctx == NULL ? 0 : 14;
}
"""


def test_tree_lists_what_build_ninja_compiles():
    p = plan.build(models.load(str(ROOT / "schedules.yaml")), "schedules.yaml")
    files = vendor.tree(p, ROOT, cli=False)
    srcs = vendor.runtime_sources(ROOT)
    assert "config.c" in srcs and "dispatch.c" in srcs and "barrier.cu" in srcs
    built = re.findall(r"^build build/runtime/\S+.*? runtime/src/(\S+)$", (ROOT / "build.ninja").read_text(), re.M)
    assert sorted(built) == srcs  # every runtime edge, also one that declares more outputs (ptxas's report)
    for s in srcs:
        assert f"src/{s}" in files and f"src/{s}" in files["Makefile"]
    assert "generated/build.ninja" not in files and "generated/dispatch.c" in files["Makefile"]
    assert not any(f.startswith("src/cli/") for f in files)
    assert "-gencode arch=compute_90a,code=sm_90a" in files["Makefile"]
    assert "prefix=${pcfiledir}" in files["tpgemm.pc"]
    assert "PKG_CONFIG_PATH=<dir> pkg-config --cflags --libs tpgemm" in files["Makefile"]
    assert "include(<dir>/tpgemm.cmake)" in files["Makefile"]
    assert "add_library(tpgemm::tpgemm STATIC IMPORTED)" in files["tpgemm.cmake"]
    for k in p.kernels:
        assert f"generated/kernels/{k.name}.cu" in files


def test_the_tree_carries_every_runtime_header_and_makes_the_cli_of_its_c_sources():
    """What the make tests below would find only with nvcc: a header (spin.cuh) left out, or CLI_SRCS naming the CLI's
    headers instead of its .c files."""
    p = plan.build(models.load(str(ROOT / "schedules.yaml")), "schedules.yaml")
    files = vendor.tree(p, ROOT, cli=True)
    headers = sorted(f.name for f in (ROOT / "runtime" / "src").iterdir() if f.suffix in (".h", ".cuh"))
    assert "spin.cuh" in headers and [h for h in headers if f"src/{h}" not in files] == []
    cli = files["Makefile"].split("CLI_SRCS := ", 1)[1].split("\nOBJS := ", 1)[0]
    assert cli.replace("\\", " ").split() == sorted(f"src/cli/{f.name}" for f in (ROOT / "runtime/src/cli").glob("*.c"))


@pytest.fixture(scope="module")
def vendored(tmp_path_factory):
    if NVCC is None:
        pytest.skip("nvcc not found (PATH or /usr/local/cuda/bin): the vendored tree needs the CUDA Toolkit")
    if shutil.which("make") is None:
        pytest.skip("make not found")
    out = tmp_path_factory.mktemp("vendored") / "tpgemm"  # outside the repository
    assert ROOT not in out.parents
    # the shipped schedules.yaml plus one tuned shape (on a shipped kernel: nothing more to compile), with the CLI
    cfg = tmp_path_factory.mktemp("config")
    shutil.copy(ROOT / "schedules.yaml", cfg / "schedules.yaml")
    (cfg / "tuned").mkdir()
    (cfg / "tuned" / "shape.yaml").write_text(TUNED_SHAPE)
    r = subprocess.run([sys.executable, "-m", "generator", "vendor", "--out", str(out), "--config",
                        str(cfg / "schedules.yaml"), "--cli"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cuda_home = str(Path(NVCC).resolve().parent.parent)
    env = dict(os.environ, PATH="/usr/bin:/bin")  # no Python tools needed: only make, nvcc (by path), cc
    for target in ("all", "cli"):
        r = subprocess.run(["make", "-j2", f"NVCC={NVCC}", f"CUDA_HOME={cuda_home}", target], cwd=out,
                           capture_output=True, text=True, env=env, timeout=1200)
        assert r.returncode == 0, f"make {target} failed:\n{r.stdout[-6000:]}\n{r.stderr[-6000:]}"
    assert (out / "lib" / "libtpgemm.a").is_file() and (out / "bin" / "tpgemm").is_file()
    return out, cuda_home


TUNED_SHAPE = """version: 1
tuned:
  - {shape: {m: 4096, n: 4096, k: 4096}, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2,
     kernel: bf16_128x128x64_pp}
"""


def test_list_names_a_tuned_choices_config_and_never_picks_it(vendored):
    """--list of a tree with a tuned shape: its config (a name longer than the shipped ones) lines up with the rest,
    says it is a tuned choice's, and --list --json says tuned, not a default pick (tpg_config_pick never takes it)."""
    out, _ = vendored
    exe, env = out / "bin" / "tpgemm", dict(os.environ, CUDA_VISIBLE_DEVICES="")
    text = subprocess.run([str(exe), "--list"], capture_output=True, text=True, env=env, timeout=60).stdout
    rows = text.splitlines()[:-1]
    tuned = [line for line in rows if line.startswith("tuned_")]
    assert len(tuned) == 1 and tuned[0].split()[0] == "tuned_4096x4096x4096_ag_rota_bf16_tp2", text
    assert tuned[0].rstrip().endswith("a tuned choice's")
    assert {line.index(" " + line.split()[1] + " ") for line in rows[1:]} == {rows[0].index(" schedule ")}
    listed = json.loads(subprocess.run([str(exe), "--list", "--json"], capture_output=True, text=True, env=env,
                                       timeout=60).stdout)["configs"]
    row = next(c for c in listed if c["name"].startswith("tuned_"))
    assert row["tuned"] == 1 and row["default_pick"] is False
    assert all(c["tuned"] == 0 for c in listed if c is not row)


def run_program(exe):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")  # GPU-less even on a GPU machine
    r = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, f"{exe} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    # the preset's untuned all-gather row: the wide config (prefer_from_local_k 1 in schedules.yaml)
    assert "llama3-70b qkv tp4: 16384 x 10240 x 8192 -> ag_rota_bf16_wide_tp4" in r.stdout
    assert "pick rs tp2 k 28672: rs_tila_bf16_wide_tp2" in r.stdout  # 14336 per stage: from 10240 up, wide
    assert "tpg_ctx_create: " in r.stdout and "fewer CUDA devices are visible" in r.stdout


def test_c_program_links_the_vendored_library(vendored, tmp_path):
    """By the link line the tree's Makefile gives (its header: the tree has no other instructions)."""
    out, cuda_home = vendored
    src = tmp_path / "app.c"
    src.write_text(PROGRAM)
    exe = tmp_path / "app"
    said = re.search(r"^#   (cc .*)$", (out / "Makefile").read_text(), re.M)
    assert said, "the vendored Makefile does not say how to link a program"
    line = said.group(1).replace("<dir>", str(out)).replace("<cuda>", cuda_home).replace("app.c", str(src))
    cmd = [*line.split(), "-std=c11", "-Wall", "-Werror", "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    run_program(exe)


def test_pkg_config_file_links_too(vendored, tmp_path):
    out, cuda_home = vendored
    if shutil.which("pkg-config") is None:
        pytest.skip("pkg-config not found")
    r = subprocess.run(["pkg-config", f"--define-variable=cuda_libdir={cuda_home}/lib64", "--cflags", "--libs",
                        "tpgemm"], capture_output=True, text=True, env=dict(os.environ, PKG_CONFIG_PATH=str(out)))
    assert r.returncode == 0, r.stderr
    src = tmp_path / "app.c"
    src.write_text(PROGRAM)
    r = subprocess.run(["cc", "-std=c11", str(src), "-o", str(tmp_path / "app"), *r.stdout.split()],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    run_program(tmp_path / "app")


def test_cmake_snippet_links_too(vendored, tmp_path):
    """A CMake project that include()s tpgemm.cmake and links tpgemm::tpgemm."""
    out, cuda_home = vendored
    if shutil.which("cmake") is None:
        pytest.skip("cmake not found")
    (tmp_path / "app.c").write_text(PROGRAM)
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(app C)\n"
        f'include("{out}/tpgemm.cmake")\n'
        "add_executable(app app.c)\ntarget_link_libraries(app PRIVATE tpgemm::tpgemm)\n")
    build = tmp_path / "build"
    r = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(build), f"-DCUDAToolkit_ROOT={cuda_home}"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"cmake configure failed:\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    r = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"cmake build failed:\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    run_program(build / "app")


def test_vendoring_never_replaces_a_users_files_unasked(tmp_path, capsys):
    out = tmp_path / "proj"
    out.mkdir()
    (out / "Makefile").write_text("all:\n\techo mine\n")
    assert vendor.main(["--out", str(out)]) == 2
    assert "Makefile" in capsys.readouterr().err and (out / "Makefile").read_text() == "all:\n\techo mine\n"
    assert vendor.main(["--out", str(out), "--force"]) == 0 and vendor.MARK in (out / "Makefile").read_text()
    assert vendor.main(["--out", str(out)]) == 0  # its own files are replaced freely from then on


def test_revendoring_removes_what_it_no_longer_writes_and_builds_position_independent(tmp_path):
    out = tmp_path / "v"
    assert vendor.main(["--out", str(out), "--cli"]) == 0 and (out / "src" / "cli").is_dir()
    (out / "notes.txt").write_text("the user's")
    assert vendor.main(["--out", str(out)]) == 0
    assert not (out / "src" / "cli").exists() and (out / "notes.txt").read_text() == "the user's"  # no empty folder
    assert (out / "src").is_dir()  # still holding the library's sources
    make = (out / "Makefile").read_text()
    assert "$(CC) -std=c11 -fPIC $(CFLAGS)" in make and "-Xcompiler -fPIC $(NVCCFLAGS)" in make


def test_a_manifest_never_reaches_outside_the_tree(tmp_path):
    out, victim = tmp_path / "v", tmp_path / "victim.txt"
    victim.write_text("keep")
    assert vendor.main(["--out", str(out)]) == 0
    with open(out / vendor.MANIFEST, "a") as fh:
        fh.write(f"../victim.txt\n{victim}\n")
    assert vendor.main(["--out", str(out)]) == 0 and victim.read_text() == "keep"


def test_a_tree_vendored_before_the_manifest_counts_as_vendored_but_loses_no_file(tmp_path, capsys):
    """Without a manifest nothing says which files under src/ or include/ a vendoring wrote: they are replaced where
    this vendoring writes them (no refusal), and every other one is left in place and named, never removed."""
    out = tmp_path / "old"
    assert vendor.main(["--out", str(out), "--cli"]) == 0
    (out / vendor.MANIFEST).unlink()  # as an older tpgemm left it
    mine = {"mine.txt": "the user's", "include/myapp.h": "int f(void);\n", "src/extra/my_patch.c": "int f(void);\n"}
    for rel, text in mine.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    capsys.readouterr()
    assert vendor.main(["--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert all((out / rel).read_text() == text for rel, text in mine.items())
    assert list((out / "src" / "cli").glob("*.c")) and "left in place" in err and "include/myapp.h" in err, err
    assert (out / vendor.MANIFEST).is_file() and vendor.main(["--out", str(out), "--cli"]) == 0


def test_a_projects_own_generated_files_are_not_taken_for_a_vendorings(tmp_path, capsys):
    """A project that ran `python3 -m generator --out <dir>/generated` (marked files, build.ninja among them) and then
    vendors into <dir>: nothing there was vendored, so nothing the generator marked is removed (it was: review)."""
    out = tmp_path / "proj"
    r = subprocess.run([sys.executable, "-m", "generator", "--out", str(out / "generated"), "-q"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0 and (out / "generated" / "build.ninja").is_file(), r.stderr
    assert vendor.main(["--out", str(out)]) == 0, capsys.readouterr().err
    assert (out / "generated" / "build.ninja").is_file() and (out / vendor.MANIFEST).is_file()
    # a second vendoring owns what the first wrote, not the project's build.ninja
    assert vendor.main(["--out", str(out)]) == 0 and (out / "generated" / "build.ninja").is_file()


def test_a_tree_vendored_before_the_manifest_keeps_a_projects_generated_files(tmp_path, capsys):
    """As above, in a tree vendored before the manifest existed: the project's build.ninja in generated/ was named
    "left in place" and then removed as a stale generated file (docs/TUNING.md: such a tree loses nothing)."""
    out = tmp_path / "proj"
    r = subprocess.run([sys.executable, "-m", "generator", "--out", str(out / "generated"), "-q"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert vendor.main(["--out", str(out)]) == 0
    (out / vendor.MANIFEST).unlink()  # as an older tpgemm left it
    capsys.readouterr()
    assert vendor.main(["--out", str(out)]) == 0
    assert "left in place" in capsys.readouterr().err and (out / "generated" / "build.ninja").is_file()


def test_vendoring_into_the_repository_is_refused(tmp_path):
    """In a copy of the tree, so that a broken guard cannot litter this checkout."""
    from tests.test_x2_calls import tree_copy
    repo = tree_copy(tmp_path / "repo")
    for out in (".", "generated", "vendor/tpgemm"):
        r = subprocess.run([sys.executable, "-m", "generator", "vendor", "--out", out], cwd=repo, capture_output=True,
                           text=True)
        assert r.returncode == 2 and "inside the tpgemm repository" in r.stderr, r.stderr
    assert not (repo / "Makefile").exists() and not (repo / "vendor").exists()
    assert (repo / "generated" / "build.ninja").is_file()
    # the rule itself: the repository and what is in it, but its build/ (outputs) and whatever lies outside it
    assert vendor.inside_repository(ROOT) and vendor.inside_repository(ROOT / "runtime" / "v")
    assert not vendor.inside_repository(ROOT / "build" / "v") and not vendor.inside_repository(ROOT.parent / "v")


def test_vendoring_into_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "f").write_text("")
    assert vendor.main(["--out", str(tmp_path / "f")]) == 2
    assert vendor.main(["--out", str(tmp_path / "f" / "sub")]) == 2
    assert "is a file, not a directory" in capsys.readouterr().err


def test_make_cli_in_a_tree_vendored_without_the_cli_says_so(tmp_path, capsys):
    """Without --cli there are no CLI sources: `make cli` says to vendor with --cli (exit 2), not a link error about
    main; with --cli the target builds bin/tpgemm (its rule is checked by name, the build by the make test above), and
    the vendoring's last line names it."""
    if shutil.which("make") is None:
        pytest.skip("make not found")
    out = tmp_path / "v"
    assert vendor.main(["--out", str(out)]) == 0 and "make cli" not in capsys.readouterr().out
    r = subprocess.run(["make", "cli"], cwd=out, capture_output=True, text=True)
    assert r.returncode == 2 and "vendored without --cli" in r.stderr and "undefined reference" not in r.stderr, r
    assert vendor.main(["--out", str(out), "--cli"]) == 0
    assert f"then `make -C {out} cli` for bin/tpgemm" in capsys.readouterr().out
    assert "cli: bin/tpgemm\nbin/tpgemm: $(CLI_SRCS:%.c=obj/%.o) lib/libtpgemm.a" in (out / "Makefile").read_text()


TUNED_70B_ATTN_OUT = """version: 1
tuned:
  - {model: llama3-70b, layer: attn_out, dtype: bf16, schedule: ReduceScatter1D_TilingA_RotatingC, tp: 2,
     kernel: bf16_128x256x64_rs}
"""


def test_a_config_elsewhere_that_leaves_out_the_repositorys_tuned_choices_says_so(tmp_path):
    """docs/TUNING.md's kernel set for one model: a copy of schedules.yaml kept outside the repository resolves its
    `include: ["tuned/*.yaml"]` beside itself, so the choices `tune` wrote into the repository's tuned/ were left out
    of the tree without a word (in a copy of the repository, whose tuned/ the test may write)."""
    from tests.test_x2_calls import tree_copy
    repo, mine = tree_copy(tmp_path / "repo"), tmp_path / "mine"
    (repo / "tuned" / "llama3-70b_tp2.yaml").write_text(TUNED_70B_ATTN_OUT)
    mine.mkdir()
    shutil.copy(repo / "schedules.yaml", mine / "schedules.yaml")
    vendor_it = lambda: subprocess.run([sys.executable, "-m", "generator", "vendor", "--config",
                                        str(mine / "schedules.yaml"), "--out", str(mine / "v")], cwd=repo,
                                       capture_output=True, text=True)
    r = vendor_it()
    assert r.returncode == 0, r.stderr
    assert f"{repo / 'tuned' / 'llama3-70b_tp2.yaml'} has tuned choices for llama3-70b" in r.stderr, r.stderr
    assert "tuned_llama3_70b_attn_out" not in (mine / "v" / "generated" / "registry.c").read_text()
    # included by path, the choice is vendored and nothing is said
    text = (mine / "schedules.yaml").read_text()
    (mine / "schedules.yaml").write_text(text.replace('include: ["tuned/*.yaml"]',
                                                      f'include: ["{repo}/tuned/llama3-70b_tp*.yaml"]'))
    r = vendor_it()
    assert r.returncode == 0 and "tuned choices" not in r.stderr, r.stderr
    assert "tuned_llama3_70b_attn_out" in (mine / "v" / "generated" / "registry.c").read_text()
    # the copy's own schedules.yaml, whose tuned/*.yaml is that tuned/ (the repository's tuned/ may hold no file)
    cfg = str(repo / "schedules.yaml")
    assert vendor.unvendored_tuned(models.load(cfg), repo) == []


def test_a_config_whose_own_tuned_files_decide_those_layers_is_not_told_to_add_the_repositorys(tmp_path):
    """A copy tuned where it lies (`tune --config` writes tuned/<tag>.yaml beside it) runs its own choices: the note
    said the tree ran the default picks, and its advice (include the repository's file too) would have been refused as
    a second tuned choice for each layer. A layer the copy leaves undecided is still noted."""
    repo, mine = tmp_path / "repo", tmp_path / "mine"
    (repo / "tuned").mkdir(parents=True)
    (repo / "tuned" / "llama3-70b_tp2.yaml").write_text(TUNED_70B_ATTN_OUT)
    (mine / "tuned").mkdir(parents=True)
    shutil.copy(ROOT / "schedules.yaml", mine / "schedules.yaml")
    mine_70b = TUNED_70B_ATTN_OUT.replace("attn_out, dtype", "attn_out, tokens: 16384, dtype")  # the preset's M
    (mine / "tuned" / "llama3-70b_tp2.yaml").write_text(mine_70b)
    cfg = str(mine / "schedules.yaml")
    assert vendor.unvendored_tuned(models.load(cfg), repo) == []
    (repo / "tuned" / "llama3-70b_tp2.yaml").write_text(TUNED_70B_ATTN_OUT + TUNED_70B_ATTN_OUT.split("tuned:\n")[1]
                                                        .replace("attn_out", "down"))
    assert vendor.unvendored_tuned(models.load(cfg), repo) == [(str(repo / "tuned" / "llama3-70b_tp2.yaml"),
                                                                      ["llama3-70b"])]


@pytest.mark.parametrize("text", ["tuned: 5\n", "tuned:\n  - {model: [a, b]}\n", "tuned: [{model: {a: 1}}]\n",
                                  "tuned: [{model: llama3-70b, layer: [x]}]\n"])
def test_a_broken_file_of_the_repositorys_tuned_is_no_note_and_no_traceback(tmp_path, text):
    """Vendoring another config reads the repository's tuned/ for its note only: a file there that is no tuned file
    is the repository's own build's to report."""
    (tmp_path / "tuned").mkdir()
    (tmp_path / "tuned" / "x.yaml").write_text(text)
    cfg = str(ROOT / "schedules.yaml")
    assert vendor.unvendored_tuned(models.load(cfg), tmp_path) == []
