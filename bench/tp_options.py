"""tp_bench.py's option checks that need no GPU and no process group: every rank runs them before
init_process_group, so a typo ends the run at once with a usage error instead of costing every shape its variants
after the GPUs have started (a config lookup that raises inside a shape's setup drops the whole shape).

Pure: the library's config lookup comes in as a function, so the tests run without the library or torch."""
import math
from typing import Callable

MAX_COPY_CHUNKS = 32  # TPG_MAX_COPY_CHUNKS (templates/kernels/copy_chunks.h)


def _families(text: str) -> list[str]:
    return [f for f in text.split(",") if f]


def option_errors(args, tp: int, has_config: Callable[[str], bool]) -> list[str]:
    """The problems with tp_bench's options at TP = tp (the world size); has_config(name) says whether the library
    has a config of that name for the run's dtype and TP. Empty when the options are usable."""
    errors = []
    if args.rounds < 1:
        errors.append(f"--rounds {args.rounds}: at least 1 (each round times every variant once)")
    if not (math.isfinite(args.window) and args.window > 0):
        errors.append(f"--window {args.window}: a positive number of seconds")
    if not (math.isfinite(args.burst_idle) and args.burst_idle >= 0):
        errors.append(f"--burst-idle {args.burst_idle}: zero or a positive number of seconds")
    for c in _families(args.alt_copy_chunks):
        if not c.isdigit() or not 1 <= int(c) <= MAX_COPY_CHUNKS:
            errors.append(f"--alt-copy-chunks: {c!r} is not a whole number in 1..{MAX_COPY_CHUNKS}")
    flags = [("--ag-config", args.ag_config), ("--rs-config", args.rs_config)]
    flags += [("--alt-config", fam) for fam in _families(args.alt_config)]
    for flag, fam in flags:
        if fam and not has_config(f"{fam}_tp{tp}"):
            errors.append(f"{flag} {fam}: the library has no config {fam}_tp{tp} of dtype {args.dtype} "
                          "(build/tpgemm --list lists them)")
    return errors
