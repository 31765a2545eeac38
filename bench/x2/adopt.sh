#!/usr/bin/env bash
# After an x2 call, here: its files into the repository as bench/x2/README.md ("After the calls") says, so that a
# session that gets the machine late loses no record to a hurried copy. Run it once per call, right after the call and
# before anything changes the tree:
#   bash bench/x2/adopt.sh FILES_AT [--publish]
# FILES_AT is the reply's folder (records.tgz, summary.txt, and what the call copied beside them). The script
#   - reads records/provenance.txt from records.tgz (the call's script, its date, the tree hash) and refuses where that
#     hash is not the working tree's (`bash bench/x2/tree_hash.sh`): adopt from the commit that ran;
#   - where the call left a tp2.json, reads it with verdict.py (--switched for call 4), and with --publish renders
#     BENCHMARKS.md's tp2 table from it (report_tp.py) - both into a scratch folder first;
#   - only when all of that worked: the reply's files and verdict.txt into bench/results/experiments/
#     x2_<HHMM>Z_<script>/ (refused if it exists), and with --publish (the call whose defaults the repository keeps:
#     call 4 after a switch, else call 1; call 2 for tier 2) tp2.json, tp2.png and the rendered BENCHMARKS.md, and
#     call 2's tier2.json (call 4's covers a few groups only), into place;
#   - prints what stays hand-kept.
# Exit status: 0 done, 1 refused (nothing written), 2 usage.
set -euo pipefail
usage() { echo "usage: bash bench/x2/adopt.sh FILES_AT [--publish]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
publish=0
[ $# -eq 2 ] && { [ "$2" = --publish ] || usage; publish=1; }
refuse() { echo "adopt: $*; nothing written" >&2; exit 1; }
src=$(realpath -- "$1") || refuse "$1 not found"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[ -f "$src/records.tgz" ] || refuse "$src/records.tgz not found (the reply's files_at folder?)"
tar -tzf "$src/records.tgz" >/dev/null 2>&1 || refuse "$src/records.tgz is not a readable tar.gz"

prov=$(tar -xzOf "$src/records.tgz" records/provenance.txt 2>/dev/null) || refuse "records.tgz holds no provenance.txt"
name=$(sed -n 1p <<<"$prov" | grep -o 'call[0-9]_[A-Za-z0-9_]*\.sh' | head -1 || true)
name=${name%.sh}
when=$(sed -n 2p <<<"$prov")
ran=$(grep -m1 '^tree ' <<<"$prov" | awk '{print $2}' || true)
[ -n "$name" ] && [ -n "$ran" ] || refuse "provenance.txt names no bench/x2/call*.sh script or no tree"
stamp=$(LC_ALL=C date -u -d "$when" +%H%MZ 2>/dev/null) || refuse "provenance.txt's date '$when' does not parse"
here=$(bash bench/x2/tree_hash.sh | awk '{print $2}')
[ "$ran" = "$here" ] || refuse "the call ran tree $ran, the working tree is $here: adopt from the commit that ran"
dest=bench/results/experiments/x2_${stamp}_$name
[ -e "$dest" ] && refuse "$dest exists"
others=$(find "$src" -mindepth 1 -maxdepth 1 ! -type f -printf '%f ')
[ -z "$others" ] || echo "adopt: not copied (not plain files): $others" >&2

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if [ -f "$src/tp2.json" ]; then
    switched=()
    [ "$name" = call4_switch ] && switched=(--switched)
    python3 bench/x2/verdict.py ${switched[@]+"${switched[@]}"} "$src/tp2.json" >"$scratch/verdict.txt" ||
        refuse "verdict.py could not read $src/tp2.json"
    if [ "$publish" = 1 ]; then
        cp BENCHMARKS.md "$scratch/BENCHMARKS.md"
        python3 bench/report_tp.py "$src/tp2.json" --benchmarks "$scratch/BENCHMARKS.md" --png "$scratch/tp2.png" ||
            refuse "report_tp.py could not render $src/tp2.json"
    fi
fi

# from here on only copies and renames: the records folder appears whole or not at all
rm -rf "$dest.part"; mkdir -p "$dest.part"  # a folder an interrupted run left
find "$src" -maxdepth 1 -type f -exec cp -t "$dest.part" {} +
[ -f "$scratch/verdict.txt" ] && cp "$scratch/verdict.txt" "$dest.part/"
mv "$dest.part" "$dest"
echo "records: $dest ($(find "$dest" -type f | wc -l) files; $name, $when, tree $ran)"
[ -f "$dest/verdict.txt" ] && cat "$dest/verdict.txt"

if [ "$publish" = 1 ]; then
    if [ -f "$src/tp2.json" ]; then
        cp "$src/tp2.json" bench/results/tp2.json
        # the device's plot (the same records); this machine's only where the reply holds none
        if [ -f "$src/tp2.png" ]; then cp "$src/tp2.png" bench/results/tp2.png
        elif [ -f "$scratch/tp2.png" ]; then cp "$scratch/tp2.png" bench/results/tp2.png; fi
        cp "$scratch/BENCHMARKS.md" BENCHMARKS.md
        echo "published: bench/results/tp2.json, tp2.png, BENCHMARKS.md's tp2 table"
    fi
    if [ -f "$src/tier2.json" ] && [ "$name" = call2_tier2 ]; then
        cp "$src/tier2.json" bench/results/tier2.json
        echo "published: bench/results/tier2.json"
    elif [ -f "$src/tier2.json" ]; then
        echo "not published: $name's tier2.json (call 2's covers tier 2 at TP = 2; this one is in $dest)"
    fi
fi
cat <<EOF
hand-kept, still to do: a row for $dest in bench/results/experiments/README.md; with --publish, the prose under
BENCHMARKS.md's tp2 table (the run's date, the target paragraph) or its Tier-2 section, and README's "Where it stands"
(the TP = 2 row, the points not yet met); the closing note (verdict.txt above; the timeout point is call 1's
gpu_pytest_timeout.log in records.tgz).
EOF
