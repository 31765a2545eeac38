"""A `tune --shape` choice reaches build/tpgemm's --m/--n/--k (no GPU: --dry-run). Builds a CLI of its own (the
tuner's build_doc: the repository's runtime and CLI objects, a document of one kernel), so it needs ninja and nvcc
as tests/test_build.py does."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from generator import tune, tune_cli

AG = "AllGather1D_TilingCD_RotatingA"


@pytest.fixture(scope="module")
def tuned_cli(tmp_path_factory):
    nvcc = shutil.which("nvcc") or Path("/usr/local/cuda/bin/nvcc").exists()
    if shutil.which("ninja") is None or not nvcc:
        pytest.skip("ninja or nvcc not found: the CLI with a tuned shape is built (tests/test_build.py says more)")
    kernel = tune._entry("bf16", (128, 128, 64), 4, 2, (1, 1), ())
    doc = {"version": 1, "kernels": [kernel],
           "configs": [{"name": "ag", "schedule": AG, "tp": [2], "kernel": kernel["name"]}],
           "tuned": [{"shape": {"m": 4096, "n": 4096, "k": 4096}, "dtype": "bf16", "schedule": AG, "tp": 2,
                      "kernel": kernel["name"]}]}
    return tune_cli.build_doc(tmp_path_factory.mktemp("tuned_cli"), doc, subprocess.run, None)


@pytest.mark.parametrize("m, n, config", [
    (4096, 4096, "tuned_4096x4096x4096_ag_rota_bf16_tp2"),
    (8192, 4096, "tuned_4096x4096x4096_ag_rota_bf16_tp2"),  # within TPG_TUNED_M_REACH (2x) of the M tuned at
    (16384, 4096, "ag_tp2"),                                 # past it: the default pick
    (4096, 8192, "ag_tp2"),                                  # another N: not the shape tuned
])
def test_a_tuned_shape_is_what_m_n_k_run(tuned_cli, m, n, config):
    r = subprocess.run([str(tuned_cli), "--schedule", AG, "--tp", "2", "--m", str(m), "--n", str(n), "--k", "4096",
                        "--dry-run"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    assert r.returncode == 0 and r.stdout.splitlines()[0] == f"Plan: {config}", r.stdout + r.stderr
