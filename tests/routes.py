"""How a reduce-scatter config moves its partials across GPUs, as the tests need it: the config of a family on a given
route, read from `build/tpgemm --list --json` with bench/tpgemm_lib.py's ROUTES, partial_route and twin_index. A test
of one route names its config this way, not by a shipped name, so that it holds whichever route the shipped defaults
take (schedules.yaml: a family and its by_name twins <family>_push / _pull / _ce)."""
import functools
import json
import os
import subprocess
import sys

from tests.conftest import ROOT, TPGEMM

sys.path.insert(0, str(ROOT / "bench"))
from tpgemm_lib import ROUTES, partial_route, twin_index  # noqa: E402,F401  (pure Python: no library is loaded)



@functools.lru_cache(maxsize=1)
def listed() -> tuple:
    """build/tpgemm --list --json's config rows, in table order."""
    out = subprocess.run([str(TPGEMM), "--list", "--json"], capture_output=True, text=True, timeout=60, check=True,
                         env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    return tuple(json.loads(out.stdout)["configs"])


def on_route(name: str, route: str) -> str:
    """The config that runs config `name`'s schedule, TP and kernel with its partials moved by `route` (a key of
    ROUTES): `name` itself where it takes that route, else its twin. ValueError where there is none."""
    rows = list(listed())
    i = next((i for i, c in enumerate(rows) if c["name"] == name), None)
    if i is None:
        raise ValueError(f"no config {name} in build/tpgemm --list")
    return name if partial_route(rows[i]) == route else rows[twin_index(rows, i, route)]["name"]
