"""Puts the repository root on sys.path so that tests import `generator` and `tests.simulator`; names the CLI the
tests run."""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# build/tpgemm, or the binary TPG_TEST_CLI names: tests/test_sanitizers.py runs the CLI's tests against a build under
# AddressSanitizer and UndefinedBehaviorSanitizer that way.
TPGEMM = Path(os.environ.get("TPG_TEST_CLI") or ROOT / "build" / "tpgemm")
