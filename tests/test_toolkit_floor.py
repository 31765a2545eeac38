"""The README's CUDA floor (12.4) holds: the C sources compile against its headers, every CUDA API the sources name
exists there, and every shipped kernel instance (library and trace builds) built by its NVRTC and ptxas keeps its
wgmmas in flight, spills nothing, keeps its accumulators out of local memory and takes no tensor map's address in a
way its ptxas would get wrong (tests/toolkit_floor.py; the
12.4-12.8 code paths are in templates/kernels/cuda12.h). The wheels (~50 MB, once, under build/toolkit-floor) come from
PyPI: where they cannot be fetched the tests skip and say why, unless TPG_REQUIRE_TOOLKIT_FLOOR=1 (.ci/run) makes that
a failure."""
import os
import shutil

import pytest

from tests import toolkit_floor as F
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def floor():
    if shutil.which("gcc") is None:
        pytest.skip("gcc not found: the C sources' check needs it")
    try:
        return F.fetch(F.FLOOR, ROOT / "build" / "toolkit-floor")
    except F.Unavailable as e:
        if os.environ.get("TPG_REQUIRE_TOOLKIT_FLOOR") == "1":
            pytest.fail(f"CUDA {F.FLOOR} wheels not fetched, and TPG_REQUIRE_TOOLKIT_FLOOR=1: {e}")
        pytest.skip(f"CUDA {F.FLOOR} wheels not fetched ({e}); the toolkit-floor checks need PyPI once")


def test_c_sources_compile_against_the_floor_headers(floor):
    assert F.c_syntax_errors(floor) == {}


def test_sources_name_only_apis_of_the_floor(floor):
    assert F.missing_apis(floor) == {}


def test_an_api_newer_than_the_floor_is_found_unless_guarded(floor, tmp_path):
    """cuStreamGetDevice came with 12.8: named in code it is reported, also under a guard the floor compiles (>= 12.0);
    in a comment, a string or the branch of a guard above the floor (nested #if included), it is not."""
    used = tmp_path / "used.c"
    used.write_text("void f(CUstream s, CUdevice *d) { cuStreamGetDevice(s, d); }\n"
                    "#if CUDART_VERSION >= 12000\nPFN_cuNotAThing g;\n#endif\n")
    guarded = tmp_path / "guarded.c"
    guarded.write_text('/* cuStreamGetDevice */\nconst char *w = "cuStreamGetDevice";\n#if CUDART_VERSION >= 12080\n'
                       "#if X\nint a;\n#endif\nx = cuStreamGetDevice(s, d);\n#else\nx = cuCtxGetDevice(d);\n#endif\n")
    assert F.missing_apis(floor, [used, guarded]) == {str(used): ["PFN_cuNotAThing", "cuStreamGetDevice"]}


def test_kernels_keep_their_wgmmas_in_flight_with_the_floor_toolkit(floor):
    reports = F.kernel_reports(floor)
    instances = len(list((ROOT / "generated" / "kernels").glob("*.cu")))
    assert len(reports) == len(F.BUILDS) * instances + len(F.RUNTIME_KERNELS) and instances > 0
    assert F.flagged(reports) == {}

