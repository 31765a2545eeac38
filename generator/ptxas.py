"""ptxas -v reports (ninja writes one per kernel object: <obj>.ptxas.txt) read for the two things that make a kernel
instance slow however its knobs look: register spills and serialized wgmma. tests/test_build.py fails a shipped kernel
on either; the tuner drops a candidate with either before profiling it."""
import re

# ptxas -v lines look like: "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads".
SPILL = re.compile(r"(\d+) bytes spill (stores|loads)")
# C7511 / C7515 (wgmma serialized) and any other "serialized" performance warning.
SERIALIZED = re.compile(r"C7511|C7515|serialized", re.IGNORECASE)


def problems(text: str) -> list[str]:
    """The lines of a ptxas -v report that break the no-spill / no-serialization rule."""
    out = []
    for line in text.splitlines():
        if any(int(n) != 0 for n, _ in SPILL.findall(line)) or SERIALIZED.search(line):
            out.append(line.strip())
    return out
