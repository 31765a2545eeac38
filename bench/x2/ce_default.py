"""Switches the bf16 reduce-scatter defaults between pushed partials and partials carried by the copy engine at
TP >= 2 (schedules.yaml, configs[].copy_engine_partials), for the x2 session that decides it (docs/PERF_NOTES.md,
"Device plan for the next x2 session"):

    python3 bench/x2/ce_default.py [--undo | --check] [schedules.yaml]

Forward: `copy_engine_partials: true` on the four families rs_til{a,b}_bf16{,_wide}, and their copy-engine twins
<family>_ce turned into push twins <family>_push (by_name, without the field); --undo the reverse. Every test names
a route's config through the routes, not by name (tests/routes.py, tests/gpu/route_config.h), so both states pass
them; `ninja` then regenerates (commit schedules.yaml with generated/). Exits 1, changing nothing, if the file is not
in the state the direction starts from. --check changes nothing: exit 0 if the file is in the switched state.
"""
import argparse
import re
import sys
from pathlib import Path

FAMILIES = [f"rs_til{s}_bf16{w}" for s in "ab" for w in ("", "_wide")]
FIELD = ", copy_engine_partials: true"


def line_of(text: str, name: str) -> str:
    """The config line `  - {name: NAME, ...}` of text; ValueError if there is not exactly one."""
    found = re.findall(rf"^  - \{{name: {re.escape(name)}, .*\}}$", text, re.M)
    if len(found) != 1:
        raise ValueError(f"{len(found)} config lines named {name}")
    return found[0]


def switch(text: str, undo: bool = False) -> str:
    """text with the defaults' route switched (undo: back to pushed partials)."""
    for fam in FAMILIES:
        twin_from, twin_to = (f"{fam}_push", f"{fam}_ce") if undo else (f"{fam}_ce", f"{fam}_push")
        own, twin = line_of(text, fam), line_of(text, twin_from)
        if (FIELD in own) != undo or (FIELD in twin) == undo or "by_name: true" not in twin:
            raise ValueError(f"{fam} and {twin_from} are not in the state {'--undo' if undo else 'the switch'} "
                             "starts from")
        new_own = own.replace(FIELD, "") if undo else own[:-1] + FIELD + "}"
        new_twin = twin.replace(f"name: {twin_from},", f"name: {twin_to},")
        new_twin = new_twin.replace(", by_name: true}", FIELD + ", by_name: true}") if undo else \
            new_twin.replace(FIELD, "")
        text = text.replace(own, new_own).replace(twin, new_twin)
    return text


def main(argv: list[str]) -> int:
    what, _usage, rest = __doc__.split("\n\n", 2)
    p = argparse.ArgumentParser(prog="ce_default.py", description=f"{what.rstrip(':')}.\n\n{rest}",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    how = p.add_mutually_exclusive_group()
    how.add_argument("--undo", action="store_true", help="back to pushed partials")
    how.add_argument("--check", action="store_true", help="change nothing: exit 0 if the file is switched, else 1")
    p.add_argument("schedules", nargs="?", default="schedules.yaml", help="default: schedules.yaml")
    a = p.parse_args(argv)
    path = Path(a.schedules)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:  # 2, not --check's 1: that one says "not switched"
        p.exit(2, f"ce_default.py: cannot read {path}: {e}\n")
    if a.check:  # switched: the switch back applies
        try:
            switch(text, undo=True)
        except ValueError as e:
            print(f"ce_default.py: {path}: not switched ({e})")
            return 1
        print(f"ce_default.py: {path}: switched (the copy engine carries the defaults' partials at TP >= 2)")
        return 0
    try:
        out = switch(text, a.undo)
    except ValueError as e:
        print(f"ce_default.py: {path}: {e}", file=sys.stderr)
        return 1
    path.write_text(out)
    print(f"ce_default.py: {path}: the bf16 reduce-scatter defaults now "
          f"{'push their partials' if a.undo else 'have the copy engine carry their partials'} at TP >= 2")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
